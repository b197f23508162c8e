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
    "setspri",
    "releaseres",
    "setres",
    "resetstats",
    "showconfig",
    "showstate",
    "mshow",
    "showhist",
    "mcredctl",
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

/// What `<cmd> --complete KIND` lists for the shell completion scripts.
pub const COMPLETION_KINDS: &[&str] = &["jobs", "nodes", "reservations"];

/// The hidden `--complete jobs|nodes|reservations` query used by the
/// generated bash/zsh/fish completions: the daemon's job ids (not
/// completed), node names or reservation ids, one per line. Errors print
/// nothing (a completion must never spill messages into the prompt).
pub fn complete(kind: &str) -> Vec<String> {
    let Ok(client) = arches_client::Client::connect_with_timeout(None, 2) else {
        return Vec::new();
    };
    match kind {
        "jobs" => client
            .queue(&arches_api::QueueQuery::default())
            .map(|q| q.jobs.iter().map(|j| j.id.to_string()).collect())
            .unwrap_or_default(),
        "nodes" => client
            .nodes(None)
            .map(|n| n.nodes.into_iter().map(|n| n.name).collect())
            .unwrap_or_default(),
        "reservations" => client
            .reservations()
            .map(|r| r.reservations.into_iter().map(|r| r.id).collect())
            .unwrap_or_default(),
        _ => Vec::new(),
    }
}

/// Runs `name` with an explicit argv (argv\[0\] included).
pub fn run_with(name: &str, args: Vec<OsString>) -> ExitCode {
    if args.get(1).and_then(|a| a.to_str()) == Some("--complete") {
        let kind = args.get(2).and_then(|a| a.to_str()).unwrap_or("");
        let mut out = String::new();
        for l in complete(kind) {
            out.push_str(&l);
            out.push('\n');
        }
        common::print(&out);
        return ExitCode::from(EXIT_OK);
    }
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
