//! Malleable and resizable jobs live (issue 19 parts 1 and 2): a job with a
//! processor range (`msub -l procs=MIN-MAX`) starts with what fits and
//! grows when processors free up, and learns it (its `PBS_NODEFILE` and
//! `MOAB_RESIZEFILE` rewritten, `RESIZESIGNAL`); its owner asks for more or
//! releases some (`mjobctl -m proccount+=N`, `-=N`); showq and checkjob
//! show the range and a pending request with why it waits; bad requests
//! are refused and change nothing.

mod common;

use std::path::Path;
use std::time::Duration;

use common::{set_mode, text, wait_until, Daemon};

fn scratch() -> tempfile::TempDir {
    let d = tempfile::Builder::new()
        .prefix("arches-malleable")
        .tempdir()
        .unwrap();
    set_mode(d.path(), 0o777);
    d
}

/// A malleable job: records its start size, and on each SIGWINCH its node
/// file's size and what `MOAB_RESIZEFILE` says.
fn malleable_script(out: &Path) -> String {
    format!(
        "#!/bin/sh\nOUT={}\necho \"start $PBS_NP $(wc -l < $PBS_NODEFILE)\" >> $OUT\n\
         trap 'echo \"resized $(wc -l < $PBS_NODEFILE) $(grep MOAB_PROCCOUNT $MOAB_RESIZEFILE)\" >> $OUT' 28\n\
         while :; do sleep 1; done\n",
        out.display()
    )
}

fn line<'a>(out: &'a str, prefix: &str) -> &'a str {
    out.lines()
        .find(|l| l.starts_with(prefix))
        .unwrap_or_else(|| panic!("no '{prefix}' line:\n{out}"))
}

#[test]
fn a_malleable_job_grows_when_processors_free_up_and_is_told() {
    let d = Daemon::start_with_config(Some(
        "NODECFG[n1] PROCS=4\nRMCFG[local] TYPE=LOCAL\nRMPOLLINTERVAL 00:00:01\n",
    ));
    let dir = scratch();
    let out = dir.path().join("m.out");
    // Three processors busy for a moment; the malleable job starts on one.
    let busy = d.submit("sleep 3\n", &["-l", "procs=3,walltime=1:00"]);
    d.wait_state(busy, "Running", Duration::from_secs(20));
    let m = d.submit(&malleable_script(&out), &["-l", "procs=1-4,walltime=10:00"]);
    let cj = d.wait_state(m, "Running", Duration::from_secs(20));
    assert_eq!(
        line(&cj, "Processor Range:"),
        "Processor Range: 1-4  (current: 1  growth ceiling: 4)"
    );
    assert!(
        cj.contains("NOTE:  job did not grow: no processor is idle"),
        "{cj}"
    );
    let q = text(&d.run("showq", &[]).stdout);
    assert!(
        q.lines()
            .any(|l| l.starts_with(&format!("{m} ")) && l.contains(" 1/4 ")),
        "{q}"
    );
    // The busy job ends: the malleable job grows to four and is told.
    wait_until("the resize signal", || {
        std::fs::read_to_string(&out).is_ok_and(|s| s.contains("resized"))
    });
    let log = std::fs::read_to_string(&out).unwrap();
    assert_eq!(log, "start 1 1\nresized 4 MOAB_PROCCOUNT=4\n");
    let cj = d.checkjob(m);
    assert!(cj.contains("Processor Range: 1-4  (current: 4"), "{cj}");
    assert!(
        cj.contains("grew by 3 to 4 processors (automatic growth)"),
        "{cj}"
    );
    // Its owner gives two back: at once; it is not grown back.
    let r = d.run("mjobctl", &["-m", "proccount-=2", &m.to_string()]);
    assert!(r.status.success(), "{}", text(&r.stderr));
    assert_eq!(
        text(&r.stdout).trim(),
        format!("job {m} released 2 processors (now 2)")
    );
    wait_until("the second resize signal", || {
        std::fs::read_to_string(&out).is_ok_and(|s| s.matches("resized").count() == 2)
    });
    assert!(std::fs::read_to_string(&out)
        .unwrap()
        .ends_with("resized 2 MOAB_PROCCOUNT=2\n"));
    let cj = d.checkjob(m);
    assert!(
        cj.contains("Processor Range: 1-4  (current: 2  growth ceiling: 2)"),
        "{cj}"
    );
    // Another job takes the two freed processors.
    let other = d.submit("sleep 300\n", &["-l", "procs=2,walltime=10:00"]);
    d.wait_state(other, "Running", Duration::from_secs(20));
}

#[test]
fn resize_requests_wait_say_why_and_are_granted() {
    let d = Daemon::start_with_config(Some(
        "NODECFG[n1] PROCS=4\nRMCFG[local] TYPE=LOCAL\nRMPOLLINTERVAL 00:00:01\nMALLEABLEGROWTH NONE\n",
    ));
    let m = d.submit("sleep 300\n", &["-l", "procs=2-4,walltime=10:00"]);
    let cj = d.wait_state(m, "Running", Duration::from_secs(20));
    assert!(cj.contains("Processor Range: 2-4  (current: 2"), "{cj}");
    let filler = d.submit("sleep 3\n", &["-l", "procs=2,walltime=1:00"]);
    d.wait_state(filler, "Running", Duration::from_secs(20));
    // Growth is off: the owner asks for two more; they are busy.
    let r = d.run("mjobctl", &["-m", "proccount+=2", &m.to_string()]);
    assert!(r.status.success(), "{}", text(&r.stderr));
    assert!(
        text(&r.stdout).contains(&format!(
            "job {m} resize request: 2 more processors pending"
        )),
        "{}",
        text(&r.stdout)
    );
    wait_until("the request's reason", || {
        d.checkjob(m).contains("Resize Request:  +2 procs pending")
            && d.checkjob(m).contains("(waits: ")
    });
    // The filler ends: the request is granted.
    wait_until("the grow", || {
        d.checkjob(m).contains("Processor Range: 2-4  (current: 4")
    });
    let cj = d.checkjob(m);
    assert!(
        cj.contains("grew by 2 to 4 processors (resize request granted, in priority order)"),
        "{cj}"
    );
    assert!(!cj.contains("Resize Request:"), "{cj}");
    // Bad requests: beyond the maximum, below the minimum, garbage.
    // Nothing changes.
    for (args, why) in [
        (
            vec!["-m", "proccount+=1"],
            format!("ERROR:  cannot resize job {m}: job {m} would have 5 processors, more than its maximum of 4"),
        ),
        (
            vec!["-m", "proccount-=3"],
            format!("ERROR:  cannot resize job {m}: job {m} would have 1 processors, fewer than its minimum of 2"),
        ),
        (
            vec!["-m", "proccount+=x"],
            "ERROR:  invalid processor count 'x'".to_string(),
        ),
    ] {
        let mut a = args.clone();
        let id = m.to_string();
        a.push(&id);
        let r = d.run("mjobctl", &a);
        assert_eq!(r.status.code(), Some(1), "{a:?}");
        assert_eq!(text(&r.stderr).trim(), why, "{a:?}");
    }
    assert!(d.checkjob(m).contains("(current: 4"));
    // Only its owner (or an administrator) may resize it.
    if common::root_or_skip("resize_requests_wait_say_why_and_are_granted (other user)") {
        let user = common::ensure_user("archese2e");
        let r = common::run_as_user(
            &d,
            &user,
            "mjobctl",
            &["-m", "proccount-=2", &m.to_string()],
            "",
            Path::new("/"),
        );
        assert_eq!(r.status.code(), Some(1));
        assert!(
            text(&r.stderr).contains("not job owner"),
            "{}",
            text(&r.stderr)
        );
        assert!(d.checkjob(m).contains("(current: 4"));
    }
}

#[test]
fn bad_ranges_are_refused_at_submission() {
    let d = Daemon::start_with_config(Some("NODECFG[n1] PROCS=4\nRMCFG[local] TYPE=LOCAL\n"));
    for (range, why) in [
        (
            "procs=4-2",
            "invalid processor range 4-2 (the minimum must be at least 1 and at most the maximum)",
        ),
        ("procs=0-2", "invalid value '0' for resource 'procs'"),
        ("procs=2-x", "invalid value 'x' for resource 'procs'"),
        (
            "nodes=1,procs=1-4",
            "a processor range (procs=MIN-MAX) cannot be combined with nodes=, ppn= or ncpus=",
        ),
        // A minimum the cluster (4 processors) can never give.
        (
            "procs=8-16",
            "job requests 8 procs but the cluster has only 4",
        ),
    ] {
        let out = d.run_stdin("msub", &["-l", range], "true\n");
        assert_eq!(out.status.code(), Some(1), "{range}");
        assert_eq!(
            text(&out.stderr),
            format!("ERROR:    cannot submit job - {why}\n"),
            "{range}"
        );
    }
    let q = text(&d.run("showq", &[]).stdout);
    assert!(q.contains("Total jobs:  0"), "{q}");
    // A queued malleable job shows its range MIN-MAX in showq (a maximum
    // above the cluster's size is only a ceiling: accepted).
    let queued = d.submit("true\n", &["-h", "-l", "procs=2-8,walltime=1:00"]);
    let q = text(&d.run("showq", &[]).stdout);
    let row: Vec<&str> = q
        .lines()
        .find(|l| l.starts_with(&format!("{queued} ")))
        .unwrap_or_else(|| panic!("no row for {queued}:\n{q}"))
        .split_whitespace()
        .collect();
    assert_eq!(&row[2..4], ["UserHold", "2-8"], "{q}");
    let cj = d.checkjob(queued);
    assert!(cj.contains("Processor Range: 2-8"), "{cj}");
    let out = d.run("canceljob", &[&queued.to_string()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    // A running job without a range is not resizable.
    let rigid = d.submit("sleep 300\n", &["-l", "procs=1,walltime=1:00"]);
    d.wait_state(rigid, "Running", Duration::from_secs(20));
    let r = d.run("mjobctl", &["-m", "proccount+=1", &rigid.to_string()]);
    assert_eq!(r.status.code(), Some(1));
    assert_eq!(
        text(&r.stderr).trim(),
        format!("ERROR:  cannot resize job {rigid}: job {rigid} is not resizable (it was not submitted with a processor range, msub -l procs=MIN-MAX)")
    );
}
