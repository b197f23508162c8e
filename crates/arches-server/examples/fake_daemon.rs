//! Test helper: the daemon with the file-backed fake backend
//! (`arches_server::testing::FakeRm`) instead of local execution, on the home
//! given as the only argument. Used by the kill -9 recovery test and the
//! benchmark; not an installed program.
//!
//! `cargo run --example fake_daemon -- /tmp/home [purge_secs]`

use std::path::PathBuf;
use std::process::ExitCode;

use arches_core::Node;
use arches_server::testing::FakeRm;
use arches_server::{config, serve, Locations};

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let Some(home) = args.next().map(PathBuf::from) else {
        eprintln!("usage: fake_daemon HOME [PURGE_SECS]");
        return ExitCode::from(2);
    };
    let mut cfg = config::embedded_default(&home);
    cfg.nodes = vec![Node::new("n1", 4, 8000), Node::new("n2", 4, 8000)];
    if let Some(p) = args.next().and_then(|p| p.parse().ok()) {
        cfg.purge_secs = p;
    }
    let rm = match FakeRm::new(home.join("fake-rm"), cfg.nodes.clone(), 0) {
        Ok(rm) => rm,
        Err(e) => {
            eprintln!("fake_daemon: {e}");
            return ExitCode::FAILURE;
        }
    };
    let loc = Locations {
        socket: home.join("moab.sock"),
        home,
    };
    match serve(loc, cfg, Box::new(rm)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("fake_daemon: {e:#}");
            ExitCode::FAILURE
        }
    }
}
