//! Run-time prediction in the daemon (`RUNTIMEPREDICTION USERMEAN2`): the
//! user's history survives a restart, a running job is planned with its
//! predicted run time (extended stepwise when it outlives it) while its
//! walltime stays the kill limit, and a waiting job's reservation follows
//! the prediction.

mod common;

use std::time::{Duration, Instant};

use common::{text, Daemon};

const CFG: &str = "NODECFG[n1] PROCS=2\nRMCFG[local] TYPE=LOCAL\nRUNTIMEPREDICTION USERMEAN2\n";

/// Seconds of `HH:MM:SS` (or `MM:SS`).
fn secs(t: &str) -> Option<i64> {
    let parts: Vec<i64> = t
        .split(':')
        .map(|p| p.parse().ok())
        .collect::<Option<_>>()?;
    Some(parts.iter().fold(0, |acc, p| acc * 60 + p))
}

/// The `showstart` estimate for `job` in seconds, once there is one.
fn showstart(d: &Daemon, job: u64) -> i64 {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let out = text(&d.run("showstart", &[&job.to_string()]).stdout);
        let est = out
            .lines()
            .find_map(|l| l.strip_prefix("Estimated Rsv based start in"))
            .and_then(|r| r.split_whitespace().next())
            .and_then(secs);
        if let Some(e) = est {
            return e;
        }
        assert!(Instant::now() < deadline, "no estimate for {job}\n{out}");
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[test]
fn predictions_plan_the_daemon_and_the_history_survives_a_restart() {
    let mut d = Daemon::start_with_config(Some(CFG));
    // The user's history: two jobs that end at once (run times of 0-1 s).
    for _ in 0..2 {
        let id = d.submit("true\n", &["-l", "procs=1,walltime=01:00:00"]);
        d.wait_state(id, "Completed", Duration::from_secs(20));
    }
    d.stop();
    d.spawn();
    assert!(
        d.daemon_log()
            .contains("run-time prediction history restored"),
        "{}",
        d.daemon_log()
    );

    // A whole-machine job asking for an hour: planned to end within seconds
    // (predicted 1 s, then extended by 1 minute past its elapsed time).
    let long = d.submit("sleep 300\n", &["-l", "procs=2,walltime=01:00:00"]);
    d.wait_state(long, "Running", Duration::from_secs(20));
    let waiting = d.submit("true\n", &["-l", "procs=2,walltime=00:10:00"]);
    let est = showstart(&d, waiting);
    assert!(
        (0..=120).contains(&est),
        "the waiting job's reservation follows the prediction (about a minute), \
         not the hour requested: {est} s"
    );
    // The walltime is still the kill limit.
    let cj = d.checkjob(long);
    assert!(cj.contains(" of 1:00:00"), "{cj}");

    // Without prediction (or with the history lost) the same plan waits for
    // the hour: a control run on a daemon without the parameter.
    let control = Daemon::start_with_config(Some("NODECFG[n1] PROCS=2\nRMCFG[local] TYPE=LOCAL\n"));
    let busy = control.submit("sleep 300\n", &["-l", "procs=2,walltime=01:00:00"]);
    control.wait_state(busy, "Running", Duration::from_secs(20));
    let queued = control.submit("true\n", &["-l", "procs=2,walltime=00:10:00"]);
    let est = showstart(&control, queued);
    assert!(est > 3000, "planned with the walltime: {est} s");

    for (daemon, id) in [
        (&d, long),
        (&d, waiting),
        (&control, busy),
        (&control, queued),
    ] {
        daemon.run("canceljob", &[&id.to_string()]);
    }
}

#[test]
fn walltime_correction_replans_an_outlived_prediction_with_the_walltime() {
    let cfg = format!("{CFG}PREDICTIONCORRECTION WALLTIME\nRMPOLLINTERVAL 1\n");
    let d = Daemon::start_with_config(Some(&cfg));
    for _ in 0..2 {
        let id = d.submit("true\n", &["-l", "procs=1,walltime=01:00:00"]);
        d.wait_state(id, "Completed", Duration::from_secs(20));
    }
    let long = d.submit("sleep 300\n", &["-l", "procs=2,walltime=01:00:00"]);
    d.wait_state(long, "Running", Duration::from_secs(20));
    let waiting = d.submit("true\n", &["-l", "procs=2,walltime=00:10:00"]);
    // Predicted to end within a second or two; once it has outlived that,
    // the running job is planned with its hour and so is the reservation.
    // (With the default STEPWISE correction it stays about a minute away:
    // the test above.)
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let est = showstart(&d, waiting);
        if est > 3000 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "never replanned with the walltime: {est} s"
        );
        std::thread::sleep(Duration::from_millis(300));
    }
    for id in [long, waiting] {
        d.run("canceljob", &[&id.to_string()]);
    }
}

#[test]
fn prediction_guard_replans_a_job_that_waited_it_with_walltimes() {
    // Under the default STEPWISE correction the waiting job's reservation
    // stays about a minute away (the first test); once it has waited the
    // 2 s guard the daemon plans the iteration with walltimes, and the
    // reservation moves to the running job's hour.
    let cfg = format!("{CFG}PREDICTIONGUARD 00:00:02\nRMPOLLINTERVAL 1\n");
    let d = Daemon::start_with_config(Some(&cfg));
    for _ in 0..2 {
        let id = d.submit("true\n", &["-l", "procs=1,walltime=01:00:00"]);
        d.wait_state(id, "Completed", Duration::from_secs(20));
    }
    let long = d.submit("sleep 300\n", &["-l", "procs=2,walltime=01:00:00"]);
    d.wait_state(long, "Running", Duration::from_secs(20));
    let waiting = d.submit("true\n", &["-l", "procs=2,walltime=00:10:00"]);
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let est = showstart(&d, waiting);
        if est > 3000 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "never replanned with the walltimes: {est} s"
        );
        std::thread::sleep(Duration::from_millis(300));
    }
    for id in [long, waiting] {
        d.run("canceljob", &[&id.to_string()]);
    }
}
