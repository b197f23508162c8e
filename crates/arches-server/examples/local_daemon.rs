//! Test helper: the daemon exactly as `moab` runs it (embedded default
//! configuration, local execution backend) on the home given as the only
//! argument. Like `moab`, it is also the per-job supervisor
//! (`local_daemon __supervise <job dir>`).
//!
//! `cargo run --example local_daemon -- /tmp/home`

use std::path::PathBuf;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("__supervise") {
        return arches_rm::local::supervise_main(&args[2..]);
    }
    let Some(home) = args.get(1).map(PathBuf::from) else {
        eprintln!("usage: local_daemon HOME");
        return ExitCode::from(2);
    };
    let opts = arches_server::Options {
        command: None,
        config: None,
        socket: Some(home.join("moab.sock")),
        home: Some(home),
        salvage: false,
    };
    match arches_server::run(&opts) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("local_daemon: {e:#}");
            ExitCode::FAILURE
        }
    }
}
