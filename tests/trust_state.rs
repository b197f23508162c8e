//! Missing or damaged state (issue 14, point 6): a job whose stored script
//! is missing is held, never run empty; one unreadable record stops the
//! start with a message naming it, and `moab --salvage` starts without it
//! (set aside, kept); a lost state database with jobs still running stops
//! the start, and `--salvage` never hands out a running job's id again.

mod common;

use std::path::Path;
use std::time::{Duration, Instant};

use common::{text, Daemon, Spawn};

const LONG: Duration = Duration::from_secs(60);

fn db(d: &Daemon) -> rusqlite::Connection {
    rusqlite::Connection::open(d.home.path().join("arches.db")).expect("open arches.db")
}

/// Runs `moab` in the foreground on `d`'s home (it is expected to refuse
/// to start): its exit status and stderr.
fn refused_start(d: &Daemon) -> String {
    let out = d
        .daemon_command(&Spawn::default())
        .output()
        .expect("run moab");
    assert!(!out.status.success(), "moab started: {}", text(&out.stderr));
    text(&out.stderr)
}

/// Polls checkjob until `done` holds.
fn wait_checkjob(d: &Daemon, id: u64, done: impl Fn(&str) -> bool) -> String {
    let deadline = Instant::now() + LONG;
    loop {
        let out = d.checkjob(id);
        if done(&out) {
            return out;
        }
        assert!(Instant::now() < deadline, "{out}\n{}", d.daemon_log());
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn wait_file(path: &Path) {
    let deadline = Instant::now() + LONG;
    while !path.exists() {
        assert!(
            Instant::now() < deadline,
            "{} never appeared",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_job_whose_stored_script_is_missing_is_held_not_run_empty() {
    let mut d = Daemon::start();
    let marker = d.home.path().join("ran");
    let id = d.submit(
        &format!("#!/bin/sh\necho ran > {}\n", marker.display()),
        &["-h"],
    );
    d.stop();
    let gone = db(&d)
        .execute("DELETE FROM payloads WHERE id = ?1", [id as i64])
        .expect("delete the script");
    assert_eq!(gone, 1);
    d.spawn();
    let out = d.run("releasehold", &[&id.to_string()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let held = wait_checkjob(&d, id, |o| o.contains("stored script is missing"));
    assert!(held.contains("State: BatchHold"), "{held}");
    assert!(!marker.exists(), "the job ran");
}

#[test]
fn an_unreadable_record_stops_the_start_and_salvage_sets_it_aside() {
    let mut d = Daemon::start();
    let first = d.submit("#!/bin/sh\ntrue\n", &["-h"]);
    let bad = d.submit("#!/bin/sh\ntrue\n", &["-h"]);
    d.stop();
    db(&d)
        .execute(
            "UPDATE jobs SET record = '{\"job\": damaged' WHERE id = ?1",
            [bad as i64],
        )
        .expect("damage a record");

    let why = refused_start(&d);
    assert!(
        why.contains(&format!("corrupt job record {bad}")) && why.contains("moab --salvage"),
        "{why}"
    );

    d.spawn_with(&Spawn {
        args: &["--salvage"],
        ..Spawn::default()
    });
    assert!(
        d.daemon_log().contains(&format!(
            "job record {bad} could not be read and was set aside"
        )),
        "{}",
        d.daemon_log()
    );
    let s = text(&d.run("mdiag", &["-S"]).stdout);
    assert!(s.contains(&format!("salvage: job record {bad}")), "{s}");
    assert!(d.checkjob(first).contains("State: UserHold"));
    let gone = d.run("checkjob", &[&bad.to_string()]);
    assert!(!gone.status.success());
    let next = d.submit("#!/bin/sh\ntrue\n", &["-h"]);
    assert!(next > bad, "id {next} after {bad}: never reused");
    d.stop();
    // Kept as it was, with the reason.
    let (record, reason): (String, String) = db(&d)
        .query_row(
            "SELECT record, why FROM set_aside WHERE kind = 'job' AND id = ?1",
            [bad.to_string()],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .expect("set aside");
    assert_eq!(record, "{\"job\": damaged");
    assert!(reason.contains("corrupt job record"), "{reason}");
    // Set aside once: the next start needs no salvage.
    d.spawn();
    assert!(d.checkjob(next).contains("State: UserHold"));
}

#[test]
fn a_lost_store_with_running_jobs_stops_the_start_and_salvage_never_reuses_their_ids() {
    let mut d = Daemon::start();
    let go = d.home.path().join("go");
    let started = d.home.path().join("started");
    let id = d.submit(
        &format!(
            "#!/bin/sh\ntouch {}\nwhile [ ! -e {} ]; do sleep 0.05; done\n",
            started.display(),
            go.display()
        ),
        &[],
    );
    wait_file(&started);
    // The daemon dies and its database is lost; the job runs on.
    d.kill9();
    for f in ["arches.db", "arches.db-wal", "arches.db-shm"] {
        let _ = std::fs::remove_file(d.home.path().join(f));
    }

    let why = refused_start(&d);
    assert!(
        why.contains(&format!("runs jobs {id} that the state database"))
            && why.contains("moab --salvage"),
        "{why}"
    );

    d.spawn_with(&Spawn {
        args: &["--salvage"],
        ..Spawn::default()
    });
    let s = text(&d.run("mdiag", &["-S"]).stdout);
    assert!(s.contains(&format!("salvage: jobs {id} run under")), "{s}");
    let next = d.submit("#!/bin/sh\nexit 0\n", &[]);
    assert!(next > id, "id {next} handed out while job {id} runs");
    let done = d.wait_state(next, "Completed", LONG);
    assert!(done.contains("Completion Code: 0"), "{done}");
    std::fs::write(&go, "").expect("go");
}
