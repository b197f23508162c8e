//! Preemption live: a daemon with one 2-processor node and real jobs. A
//! high-QoS PREEMPTOR job really suspends a running low-QoS PREEMPTEE job
//! (its output stops progressing) which resumes when the preemptor ends;
//! requeue restarts a job with `MOAB_RESTARTED=1`; `mjobctl -C` delivers
//! `CHECKPOINTSIG`; owners may suspend their own jobs but not resume them,
//! nor touch other users' jobs.

mod common;

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use common::{text, Daemon};

const LONG: Duration = Duration::from_secs(30);

fn cfg(policy: &str) -> String {
    format!(
        "NODECFG[n1] PROCS=2\nRMCFG[local] TYPE=LOCAL CHECKPOINTSIG=SIGUSR2 CHECKPOINTTIMEOUT=5\n\
         QOSWEIGHT 1\nQOSCFG[high] QFLAGS=PREEMPTOR PRIORITY=1000\nQOSCFG[low] QFLAGS=PREEMPTEE\n\
         RESERVATIONPOLICY NEVER\nPREEMPTPOLICY {policy}\n"
    )
}

/// A job script that writes an increasing counter to `file` ten times a second.
fn counter(file: &Path) -> String {
    format!(
        "#!/bin/sh\ni=0\nwhile true; do i=$((i+1)); echo $i > {f}.tmp; mv {f}.tmp {f}; sleep 0.1; done\n",
        f = file.display()
    )
}

fn read_counter(file: &Path) -> u64 {
    std::fs::read_to_string(file)
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(0)
}

/// Polls until the counter exceeds `above`.
fn wait_progress(file: &Path, above: u64) -> u64 {
    let deadline = Instant::now() + LONG;
    loop {
        let v = read_counter(file);
        if v > above {
            return v;
        }
        assert!(Instant::now() < deadline, "no progress past {above}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn preemptor_suspends_a_running_preemptee_which_resumes_later() {
    let d = Daemon::start_with_config(Some(&cfg("SUSPEND")));
    let file = d.home.path().join("progress");
    let low = d.submit(
        &counter(&file),
        &["-l", "procs=2,walltime=120,qos=low,flags=suspendable"],
    );
    d.wait_state(low, "Running", LONG);
    wait_progress(&file, 3);
    let high = d.submit("sleep 3\n", &["-l", "procs=2,walltime=60,qos=high"]);
    d.wait_state(low, "Suspended", LONG);
    d.wait_state(high, "Running", LONG);
    // The suspended process tree makes no progress.
    std::thread::sleep(Duration::from_millis(300));
    let frozen = read_counter(&file);
    std::thread::sleep(Duration::from_millis(1200));
    assert_eq!(read_counter(&file), frozen, "suspended job kept running");
    let out = d.checkjob(low);
    assert!(out.contains(&format!("job {high}")), "{out}");
    // The preemptor ends; the preemptee resumes and progresses again.
    d.wait_state(high, "Completed", LONG);
    d.wait_state(low, "Running", LONG);
    wait_progress(&file, frozen);
    let out = d.run("mjobctl", &["-c", &low.to_string()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
}

#[test]
fn requeue_restarts_the_job_with_moab_restarted() {
    let d = Daemon::start_with_config(Some(&cfg("REQUEUE")));
    let log = d.home.path().join("restarts");
    let script = format!(
        "#!/bin/sh\necho \"start ${{MOAB_RESTARTED:-0}}\" >> {}\nsleep 60\n",
        log.display()
    );
    let low = d.submit(&script, &["-r", "y", "-l", "procs=2,walltime=120,qos=low"]);
    d.wait_state(low, "Running", LONG);
    let high = d.submit("sleep 2\n", &["-l", "procs=2,walltime=60,qos=high"]);
    d.wait_state(high, "Running", LONG);
    d.wait_state(high, "Completed", LONG);
    d.wait_state(low, "Running", LONG);
    let deadline = Instant::now() + LONG;
    loop {
        let t = std::fs::read_to_string(&log).unwrap_or_default();
        if t.lines().count() >= 2 {
            assert_eq!(
                t.lines().collect::<Vec<_>>(),
                vec!["start 0", "start 1"],
                "{t}"
            );
            break;
        }
        assert!(Instant::now() < deadline, "never restarted: {t}");
        std::thread::sleep(Duration::from_millis(100));
    }
    // Same id, started twice.
    let out = d.checkjob(low);
    assert!(out.contains("StartCount:     2"), "{out}");
    let _ = d.run("mjobctl", &["-c", &low.to_string()]);
}

#[test]
fn mjobctl_checkpoint_delivers_the_signal_and_escalation_notes() {
    let d = Daemon::start_with_config(Some(&cfg("SUSPEND")));
    let log = d.home.path().join("ckpt");
    let script = format!(
        "#!/bin/sh\ntrap 'echo got-usr2 >> {l}; exit 0' USR2\necho started >> {l}\nwhile true; do sleep 0.1; done\n",
        l = log.display()
    );
    let job = d.submit(
        &script,
        &["-r", "y", "-l", "procs=1,walltime=120,flags=checkpoint"],
    );
    d.wait_state(job, "Running", LONG);
    let deadline = Instant::now() + LONG;
    while !std::fs::read_to_string(&log)
        .unwrap_or_default()
        .contains("started")
    {
        assert!(Instant::now() < deadline, "job never started");
        std::thread::sleep(Duration::from_millis(100));
    }
    let out = d.run("mjobctl", &["-C", &job.to_string()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout).trim(),
        format!("job {job} successfully preempted")
    );
    let deadline = Instant::now() + LONG;
    while !std::fs::read_to_string(&log)
        .unwrap_or_default()
        .contains("got-usr2")
    {
        assert!(Instant::now() < deadline, "CHECKPOINTSIG not delivered");
        std::thread::sleep(Duration::from_millis(100));
    }
    // A job that may not be suspended is requeued instead, with Moab's note.
    let plain = d.submit("sleep 60\n", &["-r", "y", "-l", "procs=1,walltime=120"]);
    d.wait_state(plain, "Running", LONG);
    let out = d.run("mjobctl", &["-s", &plain.to_string()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout).trim(),
        format!(
            "job {plain} not suspendable, preempt policy temporarily changed to requeue\njob {plain} successfully preempted"
        )
    );
    let _ = d.run("mjobctl", &["-c", &format!("{job},{plain}")]);
}

#[test]
fn owners_may_suspend_their_jobs_but_not_resume_or_touch_others() {
    if !common::root_or_skip("owners_may_suspend_their_jobs_but_not_resume_or_touch_others") {
        return;
    }
    let d = Daemon::start_with_config(Some(&cfg("SUSPEND")));
    let user = common::ensure_user("archese2e");
    let as_user = |prog: &str, args: &[&str]| {
        let mut c = Command::new("setpriv");
        c.args(["--reuid", &user, "--regid", &user, "--init-groups", "--"])
            .arg(common::bin(prog))
            .args(args)
            .env_clear()
            .envs(common::base_env(d.home.path(), &d.socket))
            .current_dir("/tmp");
        c.output().expect("setpriv")
    };
    let script = d.home.path().join("user-job.sh");
    std::fs::write(&script, "#!/bin/sh\nsleep 60\n").expect("script");
    common::set_mode(&script, 0o755);
    let s = script.to_string_lossy().to_string();
    let out = as_user(
        "msub",
        &[
            "-l",
            "procs=1,walltime=120,flags=suspendable",
            "-o",
            "/dev/null",
            "-e",
            "/dev/null",
            &s,
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let mine = common::parse_id(&out);
    let root_job = d.submit(
        "sleep 60\n",
        &["-l", "procs=1,walltime=120,flags=suspendable"],
    );
    d.wait_state(mine, "Running", LONG);
    d.wait_state(root_job, "Running", LONG);
    // The owner suspends their own job...
    let out = as_user("mjobctl", &["-s", &mine.to_string()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout).trim(),
        format!("job {mine} successfully preempted")
    );
    d.wait_state(mine, "Suspended", LONG);
    // ...but may not resume it (administrators only)...
    let out = as_user("mjobctl", &["-r", &mine.to_string()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("not authorized"),
        "{}",
        text(&out.stderr)
    );
    // ...nor suspend someone else's job.
    let out = as_user("mjobctl", &["-s", &root_job.to_string()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("not authorized - not job owner"),
        "{}",
        text(&out.stderr)
    );
    d.wait_state(root_job, "Running", LONG);
    // An administrator's suspension is not undone by the scheduler; the
    // administrator resumes it.
    std::thread::sleep(Duration::from_millis(500));
    d.wait_state(mine, "Suspended", LONG);
    let out = d.run("mjobctl", &["-r", &mine.to_string()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        format!("job {mine} successfully resumed \n")
    );
    d.wait_state(mine, "Running", LONG);
    let _ = d.run("mjobctl", &["-c", &format!("{mine},{root_job}")]);
}

#[test]
fn checkjob_says_why_a_preemptor_did_not_preempt() {
    let d = Daemon::start_with_config(Some(&cfg("SUSPEND")));
    // Running, but without the PREEMPTEE attribute.
    let plain = d.submit("sleep 60\n", &["-l", "procs=2,walltime=120"]);
    d.wait_state(plain, "Running", LONG);
    let high = d.submit("sleep 1\n", &["-l", "procs=2,walltime=60,qos=high"]);
    let deadline = Instant::now() + LONG;
    loop {
        let out = d.checkjob(high);
        if out.contains("cannot preempt: no running job with the PREEMPTEE attribute") {
            break;
        }
        assert!(Instant::now() < deadline, "no preemption note:\n{out}");
        std::thread::sleep(Duration::from_millis(100));
    }
    let out = text(&d.run("checkjob", &["-v", &high.to_string()]).stdout);
    assert!(out.contains("cannot preempt"), "{out}");
    // A preemptee that is running: checkjob says whether it is preemptible.
    let _ = d.run("mjobctl", &["-c", &format!("{plain},{high}")]);
    let low = d.submit(
        "sleep 60\n",
        &["-l", "procs=1,walltime=120,qos=low,flags=suspendable"],
    );
    d.wait_state(low, "Running", LONG);
    let out = d.checkjob(low);
    assert!(
        out.contains("NOTE:  preemptible (no preemptor waiting)"),
        "{out}"
    );
    let _ = d.run("mjobctl", &["-c", &low.to_string()]);
}
