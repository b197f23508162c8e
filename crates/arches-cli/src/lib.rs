//! Client commands.
use std::process::ExitCode;

/// Entry point shared by every client binary; `name` is the command.
pub fn run(name: &str) -> ExitCode {
    let _ = name;
    ExitCode::FAILURE
}
