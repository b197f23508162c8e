//! Issue 16's remaining command surface end to end: measured efficiency
//! (showstats' Effic, showq -c's EFFIC), mcredctl's queries and changes.
//! Real binaries against a real daemon with the local resource manager.

mod common;

use std::time::Duration;

use common::{text, Daemon};

fn me() -> String {
    text(
        &std::process::Command::new("id")
            .arg("-un")
            .output()
            .unwrap()
            .stdout,
    )
    .trim()
    .to_string()
}

fn run(d: &Daemon, cmd: &str, args: &[&str]) -> (i32, String, String) {
    let o = d.run(cmd, args);
    (
        o.status.code().unwrap_or(-1),
        text(&o.stdout),
        text(&o.stderr),
    )
}

/// A number in `0..=100·cores` (an efficiency in percent), not dashes.
fn efficiency(cell: &str) -> f64 {
    let v: f64 = cell
        .parse()
        .unwrap_or_else(|_| panic!("not a measured efficiency: {cell:?}"));
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get()) as f64;
    assert!(v > 0.0 && v <= 100.0 * cores, "{v}");
    v
}

/// A job's processor use is measured when it ends: showq -c's EFFIC and
/// showstats -u's Effic come from it (used / dedicated processor time),
/// and it is kept across a restart; a job that never ran has none.
#[test]
fn efficiency_is_measured_and_kept() {
    let cfg = "NODECFG[n1] PROCS=2\nRMCFG[local] TYPE=LOCAL\nRMPOLLINTERVAL 1\n";
    let mut d = Daemon::start_with_config(Some(cfg));
    let busy = d.submit(
        "#!/bin/sh\ni=0; while [ $i -lt 200000 ]; do i=$((i+1)); done\n",
        &["-l", "walltime=5:00"],
    );
    d.wait_state(busy, "Completed", Duration::from_secs(60));
    let user = me();
    let check = |d: &Daemon| {
        let (c, o, e) = run(d, "showq", &["-c"]);
        assert_eq!(c, 0, "{e}");
        let row = o
            .lines()
            .find(|l| l.starts_with(&busy.to_string()))
            .unwrap_or_else(|| panic!("{o}"));
        // JOBID S CCODE PAR EFFIC ...
        let job_effic = efficiency(row.split_whitespace().nth(4).unwrap());
        let (c, o, e) = run(d, "showstats", &["-u"]);
        assert_eq!(c, 0, "{e}");
        let row = o
            .lines()
            .find(|l| l.split_whitespace().next() == Some(user.as_str()))
            .unwrap_or_else(|| panic!("{o}"));
        let cols: Vec<&str> = row.split_whitespace().collect();
        // ... AvgQH Effic WCAcc: the one job's efficiency.
        let user_effic = efficiency(cols[cols.len() - 2]);
        assert!(
            (job_effic - user_effic).abs() < 0.011,
            "{job_effic} {user_effic}"
        );
        let (_, o, _) = run(d, "showstats", &["-u", "--format=json"]);
        let v: serde_json::Value = serde_json::from_str(&o).unwrap();
        let mine = v["credentials"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["kind"] == "user" && c["name"] == user.as_str())
            .unwrap_or_else(|| panic!("{o}"));
        assert!(
            mine["completed"]["ps_utilized"].as_f64().unwrap() > 0.0,
            "{o}"
        );
        assert!(
            mine["completed"]["ps_measured"].as_f64().unwrap() > 0.0,
            "{o}"
        );
    };
    check(&d);
    d.stop();
    d.spawn();
    check(&d);
    // Cancelled before it ran: no measurement, dashes.
    let held = d.submit("#!/bin/sh\ntrue\n", &["-h"]);
    assert_eq!(run(&d, "canceljob", &[&held.to_string()]).0, 0);
    common::wait_until("the cancelled job in showq -c", || {
        run(&d, "showq", &["-c"])
            .1
            .lines()
            .any(|l| l.starts_with(&held.to_string()))
    });
    let (_, o, _) = run(&d, "showq", &["-c"]);
    let row = o
        .lines()
        .find(|l| l.starts_with(&held.to_string()))
        .unwrap_or_else(|| panic!("{o}"));
    assert_eq!(row.split_whitespace().nth(4), Some("------"), "{o}");
}
