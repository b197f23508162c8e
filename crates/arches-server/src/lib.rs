//! The `moab` daemon.
use std::process::ExitCode;

/// Entry point of the `moab` binary.
pub fn main() -> ExitCode {
    ExitCode::FAILURE
}
