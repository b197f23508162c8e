//! Job deadlines end to end (Moab "Job Deadlines"; issue 16 part 3's
//! `mjobctl -m deadline=`): `msub -l deadline=` honoured with a
//! `QFLAGS=DEADLINE` QoS and reported without one, the QoS's
//! `QTTARGET`-relative deadline, `mjobctl -m deadline=`, the reservation
//! that meets a deadline a higher-priority job would otherwise make missed,
//! `DEADLINEPOLICY` on a deadline that cannot be met, checkjob's lines and
//! mdiag -p's `Deadl` column.

mod common;

use std::time::Duration;

use common::{run, Daemon};

const WAIT: Duration = Duration::from_secs(30);

/// One node of 2 processors; a deadline QoS, a relative-deadline QoS and a
/// plain one; the user priority and the deadline weigh in the priority.
fn cfg(policy: &str) -> String {
    format!(
        "NODECFG[n1] PROCS=2\nRMCFG[local] TYPE=LOCAL\n\
         QOSCFG[special] QFLAGS=DEADLINE\n\
         QOSCFG[rel] QFLAGS=DEADLINE QTTARGET=1:00:00\n\
         QOSCFG[plain] PRIORITY=0\n\
         USERPRIOWEIGHT 1000\nDEADLINEWEIGHT 10\nDEADLINEPOLICY {policy}\n"
    )
}

fn detail(d: &Daemon, id: u64) -> serde_json::Value {
    let (_, o, _) = run(d, "checkjob", &["--format=json", &id.to_string()]);
    let v: serde_json::Value = serde_json::from_str(&o).unwrap();
    v["jobs"][0].clone()
}

/// `msub ARGS script`: (exit code, stdout, stderr).
fn msub(d: &Daemon, args: &[&str]) -> (i32, String, String) {
    let path = d
        .home
        .path()
        .join(format!("dl-{}.sh", args.join("_").len()));
    std::fs::write(&path, "#!/bin/sh\nsleep 600\n").unwrap();
    let p = path.to_string_lossy().to_string();
    let mut all = args.to_vec();
    all.push(&p);
    run(d, "msub", &all)
}

fn id_of(out: &str) -> u64 {
    out.trim()
        .parse()
        .unwrap_or_else(|_| panic!("no job id in {out:?}"))
}

/// A job holding the whole node for an hour (it runs until the test ends).
fn blocker(d: &Daemon) -> u64 {
    let id = d.submit(
        "#!/bin/sh\nsleep 600\n",
        &["-l", "procs=2,walltime=1:00:00,qos=plain"],
    );
    d.wait_state(id, "Running", WAIT);
    id
}

#[test]
fn deadlines_are_accepted_reported_modified_and_shown() {
    let d = Daemon::start_with_config(Some(&cfg("IGNORE")));
    // With a DEADLINE QoS: accepted silently, guaranteed.
    let (c, o, e) = msub(
        &d,
        &["-h", "-l", "qos=special,walltime=10:00,deadline=+2:00:00"],
    );
    assert_eq!(c, 0, "{e}");
    assert!(e.is_empty(), "no warning: {e}");
    let a = id_of(&o);
    let j = detail(&d, a);
    assert_eq!(j["deadline_guaranteed"], true);
    let submitted = j["summary"]["submit_time"].as_i64().unwrap();
    let dl = j["deadline"].as_i64().unwrap();
    assert!((7199..=7201).contains(&(dl - submitted)), "{j}");
    let out = d.checkjob(a);
    assert!(
        out.lines()
            .any(|l| l.starts_with("Deadline:  1:59:") || l.starts_with("Deadline:  2:00:00  (")),
        "{out}"
    );
    assert!(!out.contains("Deadline Failed:"), "{out}");
    // Without one: accepted, kept for the priority, and said.
    let (c, o, e) = msub(
        &d,
        &["-h", "-l", "qos=plain,walltime=10:00,deadline=+2:00:00"],
    );
    assert_eq!(c, 0, "{e}");
    assert!(
        e.contains("WARNING:  deadline not guaranteed: QoS 'plain' has no QFLAGS=DEADLINE"),
        "{e}"
    );
    let b = id_of(&o);
    let j = detail(&d, b);
    assert!(j["deadline"].is_i64(), "{j}");
    assert!(
        j.get("deadline_guaranteed").is_none_or(|g| g == false),
        "{j}"
    );
    let out = d.checkjob(b);
    assert!(out.contains("Deadline:  "), "{out}");
    assert!(
        out.contains("deadline not guaranteed: QoS 'plain'"),
        "{out}"
    );
    // Bad and past deadlines are refused.
    let (c, _, e) = msub(&d, &["-l", "qos=special,deadline=tomorrow"]);
    assert_eq!(c, 1, "{e}");
    assert!(e.contains("invalid deadline 'tomorrow'"), "{e}");
    let (c, _, e) = msub(&d, &["-l", "qos=special,deadline=08:00:00_03/01/08"]);
    assert_eq!(c, 1, "{e}");
    assert!(
        e.contains("deadline '08:00:00_03/01/08' has already passed"),
        "{e}"
    );
    // The QoS's relative deadline: submission + QTTARGET + walltime.
    let (c, o, e) = msub(&d, &["-h", "-l", "qos=rel,walltime=2:00:00"]);
    assert_eq!(c, 0, "{e}");
    let r = id_of(&o);
    let j = detail(&d, r);
    assert_eq!(
        j["deadline"].as_i64().unwrap() - j["summary"]["submit_time"].as_i64().unwrap(),
        3 * 3600,
        "{j}"
    );
    assert_eq!(j["deadline_guaranteed"], true);
    // mjobctl -m deadline=: set, checked as msub checks it, cleared.
    let (c, o, e) = run(&d, "mjobctl", &["-m", "deadline=+5:00:00", &a.to_string()]);
    assert_eq!(
        (c, o.trim()),
        (0, format!("deadline modified for job {a}").as_str()),
        "{e}"
    );
    let j = detail(&d, a);
    let now = j["summary"]["submit_time"].as_i64().unwrap();
    assert!(
        j["deadline"].as_i64().unwrap() - now >= 5 * 3600 - 60,
        "{j}"
    );
    // Another user may not move it.
    if common::root_or_skip("deadlines_are_accepted_reported_modified_and_shown (second uid)") {
        let other = common::ensure_user("archesdl");
        let cwd = tempfile::tempdir().unwrap();
        common::set_mode(cwd.path(), 0o755);
        let o = common::run_as_user(
            &d,
            &other,
            "mjobctl",
            &["-m", "deadline=+1:00:00", &a.to_string()],
            "",
            cwd.path(),
        );
        assert_eq!(o.status.code(), Some(1), "{}", common::text(&o.stdout));
        assert!(
            common::text(&o.stderr).contains("not authorized"),
            "{}",
            common::text(&o.stderr)
        );
        assert!(
            detail(&d, a)["deadline"].as_i64().unwrap() - now >= 5 * 3600 - 60,
            "unchanged"
        );
    }
    let (c, _, e) = run(&d, "mjobctl", &["-m", "deadline=nonsense", &a.to_string()]);
    assert_eq!(c, 1);
    assert!(e.contains("invalid deadline 'nonsense'"), "{e}");
    let (c, o, _) = run(&d, "mjobctl", &["-m", "deadline=NONE", &a.to_string()]);
    assert_eq!(
        (c, o.trim()),
        (0, format!("deadline removed for job {a}").as_str())
    );
    assert!(detail(&d, a).get("deadline").is_none_or(|v| v.is_null()));
    assert!(!d.checkjob(a).contains("Deadline:"));
    let (c, o, _) = run(&d, "mjobctl", &["-m", "deadline=+1:00:00", &b.to_string()]);
    assert_eq!(c, 0);
    assert!(o.contains("WARNING:  deadline not guaranteed"), "{o}");
    // mdiag -p: the DEADLINE service subcomponent has its column.
    run(&d, "releasehold", &[&b.to_string()]);
    d.wait_state(b, "Running", WAIT);
    let x = d.submit(
        "#!/bin/sh\ntrue\n",
        &["-l", "procs=2,qos=plain,walltime=10:00,deadline=+1:00:00"],
    );
    d.wait_considered(x, WAIT);
    let (_, p, _) = run(&d, "mdiag", &["-p"]);
    assert!(p.contains("Deadl"), "{p}");
}

#[test]
fn a_deadline_job_is_reserved_ahead_so_it_meets_its_deadline() {
    let d = Daemon::start_with_config(Some(&cfg("IGNORE")));
    blocker(&d);
    // A high-priority two-hour job would take the node when the blocker
    // ends (in an hour)...
    let big = d.submit(
        "#!/bin/sh\nsleep 600\n",
        &["-p", "1000", "-l", "procs=2,walltime=2:00:00,qos=plain"],
    );
    // ...and a 30-minute job behind it would end after 3.5 hours: its
    // 2-hour deadline is met only because its reservation comes first.
    let dl = d.submit(
        "#!/bin/sh\nsleep 600\n",
        &["-l", "procs=2,walltime=30:00,qos=special,deadline=+2:00:00"],
    );
    let plain = d.submit(
        "#!/bin/sh\nsleep 600\n",
        &["-l", "procs=2,walltime=30:00,qos=plain,deadline=+2:00:00"],
    );
    d.wait_considered(plain, WAIT);
    let jd = detail(&d, dl);
    let jb = detail(&d, big);
    let r_dl = &jd["reservation"];
    let r_big = &jb["reservation"];
    assert!(r_dl.is_object(), "deadline job reserved: {jd}");
    let end_dl = r_dl["end"].as_i64().unwrap();
    assert!(end_dl <= jd["deadline"].as_i64().unwrap(), "{jd}");
    assert!(r_big["start"].as_i64().unwrap() >= end_dl, "{jb}");
    assert!(!d.checkjob(dl).contains("Deadline Failed:"));
    // The same job without the DEADLINE QoS waits behind the big one:
    // nothing reserves it (the depth is taken) and its deadline is only
    // a priority.
    let jp = detail(&d, plain);
    assert!(jp["reservation"].is_null(), "{jp}");
}

#[test]
fn deadlinepolicy_acts_on_a_deadline_that_cannot_be_met() {
    for (policy, state) in [
        ("HOLD", "SystemHold"),
        ("IGNORE", "Idle"),
        ("CANCEL", "Removed"),
        ("RETRY", "Idle"),
        ("ESCALATE", "Idle"),
    ] {
        let d = Daemon::start_with_config(Some(&cfg(policy)));
        blocker(&d);
        // Needs 30 minutes from the blocker's end (an hour away): it cannot
        // complete within 40 minutes.
        let (c, o, e) = msub(
            &d,
            &["-l", "procs=2,walltime=30:00,qos=special,deadline=+0:40:00"],
        );
        assert_eq!(c, 0, "{e}");
        assert!(
            e.is_empty(),
            "meetable at submission as far as msub knows: {e}"
        );
        let id = id_of(&o);
        d.wait_checkjob(id, "had its deadline judged", WAIT, |out| {
            out.contains("deadline cannot be met")
        });
        match policy {
            "CANCEL" => {
                let out = d.wait_state(id, state, WAIT);
                assert!(out.contains("(DEADLINEPOLICY CANCEL)"), "{out}");
            }
            "RETRY" | "ESCALATE" => {
                let out = d.wait_state(id, state, WAIT);
                assert!(
                    out.lines()
                        .any(|l| l.starts_with("Deadline Failed:  Expected at '")),
                    "{policy}: {out}"
                );
                assert!(out.contains(&format!("(DEADLINEPOLICY {policy})")), "{out}");
                let j = detail(&d, id);
                assert_eq!(j["deadline_guaranteed"], true, "kept: {j}");
                assert!(j["reservation"].is_object(), "still reserved: {j}");
                if policy == "ESCALATE" {
                    assert!(
                        d.daemon_log().contains("DEADLINEPOLICY ESCALATE"),
                        "administrators told in the log"
                    );
                }
                // A deadline the plan can meet is no longer failed.
                let (c, _, e) = run(&d, "mjobctl", &["-m", "deadline=+3:00:00", &id.to_string()]);
                assert_eq!(c, 0, "{e}");
                d.wait_checkjob(id, "met its new deadline", WAIT, |out| {
                    out.contains("Deadline:  2:59:") && !out.contains("Deadline Failed:")
                });
            }
            _ => {
                let out = d.wait_state(id, state, WAIT);
                assert!(
                    out.lines()
                        .any(|l| l.starts_with("Deadline Failed:  Expected at '")),
                    "{policy}: {out}"
                );
                assert!(out.contains(&format!("(DEADLINEPOLICY {policy})")), "{out}");
                assert!(
                    !detail(&d, id)["deadline_guaranteed"]
                        .as_bool()
                        .unwrap_or(false),
                    "a failed deadline is no longer guaranteed"
                );
            }
        }
    }
}
