//! A start decided but not confirmed is recovered after a crash: the daemon
//! is killed (`ARCHES_FAILPOINT`, SIGKILL) right after it recorded the start
//! intent, or right after the backend started the job but before the start
//! was recorded. After a restart the job runs exactly once and completes.

mod common;

use std::time::Duration;

use common::Daemon;

const LONG: Duration = Duration::from_secs(60);

fn crash_at(point: &str) {
    let mut d = Daemon::start();
    let runs = d.home.path().join("runs.txt");
    let script = format!(
        "#!/bin/sh\necho ran >> {}\nsleep 1\nexit 3\n",
        runs.display()
    );
    // Submitted held to a daemon without the failpoint, so the reply to msub
    // cannot race the kill; the daemon is then restarted with the failpoint
    // armed and the release lets the next iteration start the job. The
    // release is durable before that iteration, but its reply may be cut off
    // by the kill, so its outcome is not asserted.
    let id = d.submit(&script, &["-h", "-N", "once"]);
    d.kill9();
    d.spawn_env(&[("ARCHES_FAILPOINT", point)]);
    let _ = d.run("releasehold", &[&id.to_string()]);
    let status = d.wait_exit(LONG).expect("the failpoint kills the daemon");
    assert!(!status.success(), "{point}: killed, not a clean stop");
    d.spawn();
    let out = d.wait_state(id, "Completed", LONG);
    assert!(out.contains("Completion Code: 3"), "{point}: {out}");
    let ran = std::fs::read_to_string(&runs).unwrap_or_default();
    assert_eq!(ran.lines().count(), 1, "{point}: the job ran once: {ran:?}");
}

#[test]
fn crash_after_the_intent_requeues_and_runs_the_job_once() {
    crash_at("start-intent");
}

#[test]
fn crash_after_the_backend_start_adopts_the_running_job() {
    crash_at("start-launched");
}
