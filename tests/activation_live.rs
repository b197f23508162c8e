//! The activation filter live (issue 19 part 5, Windows HPC): a site
//! program called just before a job starts lets it start (exit 0), defers
//! it (1) or holds it (2); failures and timeouts defer it; checkjob shows
//! each decision; a filter that takes its time never holds up the other
//! jobs (it runs off the scheduling thread).

mod common;

use std::path::Path;
use std::time::{Duration, Instant};

use common::{set_mode, text, Daemon};

const FILTER: &str = r#"#!/bin/sh
echo "$1 $2 $3 $4 $MOAB_JOBNAME $MOAB_PROCCOUNT" >> "$(dirname "$0")/calls.log"
case "$MOAB_JOBNAME" in
  ok*) echo "licence available"; exit 0 ;;
  later) echo "no licence free"; exit 1 ;;
  hold) echo "project quota exhausted"; exit 2 ;;
  crash) echo "segfault" >&2; exit 9 ;;
  slow) sleep 30 ;;
  gated) while [ ! -e "$(dirname "$0")/open" ]; do sleep 0.1; done; exit 0 ;;
esac
exit 0
"#;

fn setup() -> (tempfile::TempDir, Daemon) {
    let dir = tempfile::Builder::new()
        .prefix("arches-activation")
        .tempdir()
        .unwrap();
    let filter = dir.path().join("filter.sh");
    std::fs::write(&filter, FILTER).unwrap();
    set_mode(&filter, 0o755);
    let d = Daemon::start_with_config(Some(&format!(
        "NODECFG[n1] PROCS=2\nRMCFG[local] TYPE=LOCAL\nRMPOLLINTERVAL 00:00:01\n\
         DEFERTIME 1:00:00\nACTIVATIONFILTER {}\nACTIVATIONFILTERTIMEOUT 00:00:01\n",
        filter.display()
    )));
    (dir, d)
}

fn wait_for(d: &Daemon, id: u64, what: &str, pred: impl Fn(&str) -> bool) -> String {
    d.wait_checkjob(id, what, Duration::from_secs(30), pred)
}

fn calls(dir: &Path) -> String {
    std::fs::read_to_string(dir.join("calls.log")).unwrap_or_default()
}

#[test]
fn the_filter_lets_jobs_start_defers_them_or_holds_them() {
    let (dir, d) = setup();
    let ok = d.submit("sleep 300\n", &["-N", "ok", "-l", "walltime=10:00"]);
    let cj = d.wait_state(ok, "Running", Duration::from_secs(30));
    assert!(
        cj.contains("activation filter: start allowed (licence available)\n"),
        "{cj}"
    );
    assert!(
        calls(dir.path()).contains(&format!("{ok} root 1 600 ok 1\n")),
        "{}",
        calls(dir.path())
    );
    let later = d.submit("true\n", &["-N", "later", "-l", "walltime=10:00"]);
    let cj = wait_for(&d, later, "deferred", |o| o.contains("State: Deferred"));
    assert!(
        cj.contains("activation filter: job deferred (no licence free) until 1:00:00\n"),
        "{cj}"
    );
    let hold = d.submit("true\n", &["-N", "hold"]);
    let cj = wait_for(&d, hold, "batch hold", |o| o.contains("State: BatchHold"));
    assert!(
        cj.contains("activation filter: job held (batch hold) (project quota exhausted)\n"),
        "{cj}"
    );
    let crash = d.submit("true\n", &["-N", "crash"]);
    let cj = wait_for(&d, crash, "deferred", |o| o.contains("State: Deferred"));
    assert!(
        cj.contains("activation filter failed: exited with status 9: segfault; job deferred"),
        "{cj}"
    );
    let slow = d.submit("true\n", &["-N", "slow"]);
    let cj = wait_for(&d, slow, "deferred", |o| o.contains("State: Deferred"));
    assert!(cj.contains("timed out after 1s; job deferred"), "{cj}");
    // The administrator releases the hold: the filter is asked again (a
    // second call for the job in its log), says the same, and the job is
    // held again.
    let held_calls = |c: &str| c.lines().filter(|l| l.contains(" hold ")).count();
    assert_eq!(held_calls(&calls(dir.path())), 1, "{}", calls(dir.path()));
    let out = d.run("releasehold", &["-a", &hold.to_string()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    common::wait_until("the filter's second call for the released job", || {
        held_calls(&calls(dir.path())) == 2
    });
    let cj = wait_for(&d, hold, "held again", |o| o.contains("State: BatchHold"));
    assert!(
        cj.contains("activation filter: job held (batch hold) (project quota exhausted)\n"),
        "{cj}"
    );
    assert!(d.checkjob(ok).contains("State: Running"));
}

#[test]
fn a_slow_filter_does_not_hold_up_other_jobs() {
    let (dir, d) = setup();
    // The gated job's filter waits for a file; meanwhile another job is
    // filtered and started, and the scheduler keeps iterating.
    let gated = d.submit("sleep 300\n", &["-N", "gated", "-l", "walltime=10:00"]);
    let deadline = Instant::now() + Duration::from_secs(30);
    while !calls(dir.path()).contains(" gated ") {
        assert!(Instant::now() < deadline, "the filter was never called");
        std::thread::sleep(Duration::from_millis(50));
    }
    let other = d.submit("sleep 300\n", &["-N", "ok2", "-l", "walltime=10:00"]);
    d.wait_state(other, "Running", Duration::from_secs(30));
    let cj = d.checkjob(gated);
    assert!(cj.contains("State: Idle"), "{cj}");
    // Its verdict arrives: it starts.
    std::fs::write(dir.path().join("open"), "").unwrap();
    let cj = d.wait_state(gated, "Running", Duration::from_secs(30));
    assert!(cj.contains("activation filter: start allowed\n"), "{cj}");
    // One call per decision: the job was not re-filtered while it waited.
    assert_eq!(
        calls(dir.path()).matches(" gated ").count(),
        1,
        "{}",
        calls(dir.path())
    );
}
