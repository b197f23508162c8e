//! Iterations that can start nothing are skipped without changing the
//! replay: under the recommended prediction setting (BENCHMARKS.md) the
//! KTH-SP2 replay gives every job the same start with the skips (and the
//! fairshare usage left alone while one job is queued) as with a full plan
//! at every iteration; with stepwise corrections, which depend on when they
//! are made, nothing is skipped.

use std::path::PathBuf;

use arches_sim::cli::{prepare, SimulateArgs};
use arches_sim::JobRecord;
use clap::Parser;

#[derive(Parser)]
struct Cli {
    #[command(flatten)]
    args: SimulateArgs,
}

/// The trace (kept in the repository: a missing one is a failure).
fn kth() -> PathBuf {
    let d = match std::env::var_os("ARCHES_TRACES") {
        Some(d) => PathBuf::from(d),
        None => PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../data/traces")),
    };
    let p = d.join("KTH-SP2-1996-2.swf.gz");
    assert!(p.exists(), "{}: trace missing", p.display());
    p
}

/// The recommended setting with `PREDICTIONCORRECTION` `correction`.
fn config(correction: &str) -> String {
    format!(
        "RUNTIMEPREDICTION USERMEAN2\nBFORDER SHORTESTPREDICTEDFIRST\n\
         PREDICTIONCORRECTION {correction}\nPREDICTIONGUARD 12:00:00\nXFACTORWEIGHT 30\n\
         QUEUETIMEWEIGHT 1\nFSPOLICY DEDICATEDPS\nFSINTERVAL 24:00:00\nFSDEPTH 7\n\
         FSDECAY 0.8\nFSWEIGHT 1\nFSUSERWEIGHT 10\nUSERCFG[DEFAULT] FSTARGET=5\n"
    )
}

/// Replays KTH (jobs ≥ 15, 100 processors) under `cfg`; `full`: a full
/// plan at every iteration. The records by job id, the iterations and the
/// quiet ones.
fn replay(cfg: &str, full: bool) -> (Vec<JobRecord>, u64, u64) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("moab.cfg");
    std::fs::write(&path, cfg).unwrap();
    let trace = kth().display().to_string();
    let argv = [
        "simulate",
        "--trace",
        &trace,
        "--procs",
        "100",
        "--min-job-id",
        "15",
        "--config",
        &path.display().to_string(),
    ];
    let args = Cli::try_parse_from(argv).unwrap().args;
    let mut prepared = prepare(&args).unwrap();
    prepared.sim.set_full_plans(full);
    prepared.sim.run().unwrap();
    let mut r = prepared.sim.records().to_vec();
    r.sort_by_key(|r| r.id);
    (
        r,
        prepared.sim.iterations(),
        prepared.sim.quiet_iterations(),
    )
}

#[test]
fn skipping_what_cannot_start_changes_no_job() {
    let cfg = config("WALLTIME");
    let (quick, iterations, quiet) = replay(&cfg, false);
    let (full, full_iterations, none) = replay(&cfg, true);
    assert_eq!(quick.len(), 28_475);
    assert_eq!(quick, full, "every job starts and ends as with full plans");
    assert_eq!(none, 0);
    // A third of the iterations start nothing; the plans' wake-ups between
    // two events are not needed either.
    assert!(quiet * 4 > iterations, "{quiet} of {iterations}");
    assert!(
        iterations < full_iterations,
        "{iterations} {full_iterations}"
    );
}

#[test]
fn stepwise_corrections_skip_nothing() {
    let (_, iterations, quiet) = replay(&config("STEPWISE"), false);
    assert!(iterations > 50_000, "{iterations}");
    assert_eq!(quiet, 0);
}
