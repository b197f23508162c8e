//! Every Arches client command: clap definitions, execution against the
//! daemon through `arches-client`, and Moab-exact renderers.
//!
//! The binaries are thin: `src/bin/<cmd>.rs` calls [`run`] with its name.
//! [`commands`] exposes every clap `Command` for man pages and completions.
//!
//! Output formats: plain text (Moab's byte-exact shapes), `--xml` /
//! `--format=xml` (Moab's one-line `<Data>` documents) and `--format=json`,
//! which prints the `arches-api` type the daemon answered, serialised with
//! serde — that JSON is the stable machine-readable schema (see
//! `docs/commands.md`).

use std::ffi::OsString;
use std::io::Write;
use std::process::ExitCode;

pub mod cmd;
pub mod common;
pub mod docs;
pub mod fmt;
pub mod render;

/// Exit status of a successful command.
pub const EXIT_OK: u8 = 0;
/// Exit status of any failure (Moab clients only ever use 1).
pub const EXIT_ERROR: u8 = 1;

/// Names of every client command, in documentation order.
pub const COMMANDS: &[&str] = &[
    "msub",
    "showq",
    "checkjob",
    "checknode",
    "canceljob",
    "mdel",
    "mjobctl",
    "releasehold",
    "sethold",
    "mdiag",
    "mschedctl",
    "showbf",
    "showstart",
    "showres",
    "runjob",
    "showstats",
    "mrsvctl",
];

/// Every client command's clap definition (for man pages and completions).
pub fn commands() -> Vec<clap::Command> {
    COMMANDS.iter().filter_map(|n| cmd::command(n)).collect()
}

/// Entry point shared by every client binary; `name` is the command.
pub fn run(name: &str) -> ExitCode {
    let args: Vec<OsString> = std::env::args_os().collect();
    run_with(name, args)
}

/// Runs `name` with an explicit argv (argv\[0\] included).
pub fn run_with(name: &str, args: Vec<OsString>) -> ExitCode {
    let args = if name == "msub" {
        args
    } else {
        common::split_compound_flags(args)
    };
    let code = match cmd::dispatch(name, args) {
        Ok(code) => code,
        Err(e) => {
            let _ = std::io::stdout().flush();
            eprintln!("{e}");
            EXIT_ERROR
        }
    };
    ExitCode::from(code)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_command_definition_is_valid() {
        let cmds = commands();
        assert_eq!(cmds.len(), COMMANDS.len());
        for c in cmds {
            c.debug_assert();
        }
    }

    #[test]
    fn unknown_command_is_an_error() {
        assert!(cmd::command("nosuch").is_none());
        assert!(cmd::dispatch("nosuch", vec![]).is_err());
    }
}
