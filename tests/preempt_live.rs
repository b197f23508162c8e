//! Preemption live: a daemon with one 2-processor node and real jobs. A
//! high-QoS PREEMPTOR job really suspends a running low-QoS PREEMPTEE job
//! (its output stops progressing) which resumes when the preemptor ends;
//! requeue restarts a job (without `MOAB_RESTARTED`), checkpoint restarts it
//! with `MOAB_RESTARTED=1`, each only once the previous run is gone, and the
//! preemptor waits for it; `mjobctl -C` delivers `CHECKPOINTSIG`, `SUSPENDSIG`
//! is the suspend signal; a refused resume leaves the job stopped; `mjobctl
//! -x` honours limits and reservations; Moab's messages; owners may suspend
//! their own jobs but not resume them, nor touch other users' jobs, nor make
//! a job a PREEMPTOR; checkjob, mdiag -j and mdiag -q say why a job did not
//! preempt.

mod common;

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use common::{text, Daemon};

const LONG: Duration = Duration::from_secs(30);

fn cfg(policy: &str) -> String {
    cfg_with(policy, "CHECKPOINTSIG=SIGUSR2 CHECKPOINTTIMEOUT=5", "")
}

/// The test configuration with extra `RMCFG[local]` attributes and lines.
fn cfg_with(policy: &str, rm: &str, extra: &str) -> String {
    format!(
        "NODECFG[n1] PROCS=2\nRMCFG[local] TYPE=LOCAL {rm}\n\
         QOSWEIGHT 1\nQOSCFG[high] QFLAGS=PREEMPTOR PRIORITY=1000\nQOSCFG[low] QFLAGS=PREEMPTEE\n\
         QOSCFG[med] PRIORITY=500\n\
         RESERVATIONPOLICY NEVER\nPREEMPTPOLICY {policy}\n{extra}"
    )
}

/// Polls until `file` has at least `n` lines; returns them.
fn wait_lines(file: &Path, n: usize) -> Vec<String> {
    let deadline = Instant::now() + LONG;
    loop {
        let t = std::fs::read_to_string(file).unwrap_or_default();
        let lines: Vec<String> = t.lines().map(String::from).collect();
        if lines.len() >= n {
            return lines;
        }
        assert!(Instant::now() < deadline, "only {lines:?}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Runs a client and asserts it failed with exactly this stderr.
fn refused(d: &Daemon, prog: &str, args: &[&str], stderr: &str) {
    let out = d.run(prog, args);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{args:?}: {}",
        text(&out.stdout)
    );
    assert_eq!(text(&out.stderr), format!("{stderr}\n"), "{args:?}");
}

/// Runs a client and asserts it succeeded with exactly this stdout.
fn answers(d: &Daemon, prog: &str, args: &[&str], stdout: &str) {
    let out = d.run(prog, args);
    assert!(out.status.success(), "{args:?}: {}", text(&out.stderr));
    assert_eq!(text(&out.stdout), format!("{stdout}\n"), "{args:?}");
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
fn requeue_restarts_the_job_without_moab_restarted() {
    let d = Daemon::start_with_config(Some(&cfg("REQUEUE")));
    let log = d.home.path().join("restarts");
    // A plain requeue starts over: the job is not told it restarts from a
    // checkpoint.
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
                vec!["start 0", "start 0"],
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
    // After the note Moab prints the success line without the id.
    assert_eq!(
        text(&out.stdout).trim(),
        format!(
            "job {plain} not suspendable, preempt policy temporarily changed to requeue\njob successfully preempted"
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
    // Preemption privileges come from a QoS or class: a user may not make
    // a job a PREEMPTOR...
    let out = as_user(
        "msub",
        &[
            "-l",
            "procs=1,walltime=60,flags=preemptor",
            "-o",
            "/dev/null",
            "-e",
            "/dev/null",
            &s,
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("job flag PREEMPTOR may only be set by an administrator"),
        "{}",
        text(&out.stderr)
    );
    let out = as_user("mjobctl", &["-m", "flags+=preemptor", &mine.to_string()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("request not authorized"),
        "{}",
        text(&out.stderr)
    );
    // ...an administrator may.
    let admins = d.submit(
        "sleep 1\n",
        &["-h", "-l", "procs=1,walltime=60,flags=preemptor"],
    );
    let _ = d.run("mjobctl", &["-c", &admins.to_string()]);
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
    let out = text(&d.run("mdiag", &["-j"]).stdout);
    assert!(
        out.contains(&format!(
            "  NOTE:  job {high}: cannot preempt: no running job with the PREEMPTEE attribute"
        )),
        "{out}"
    );
    let out = text(&d.run("mdiag", &["-q"]).stdout);
    assert!(
        out.contains("  Preemptors:  1 queued, 0 waiting for their victims, 1 cannot preempt (1 found no running PREEMPTEE job)"),
        "{out}"
    );
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
    // A higher-priority job without the PREEMPTOR attribute is told why it
    // does not preempt.
    let med = d.submit("sleep 1\n", &["-l", "procs=2,walltime=60,qos=med"]);
    let deadline = Instant::now() + LONG;
    loop {
        let out = text(&d.run("checkjob", &["-v", &med.to_string()]).stdout);
        if out.contains("NOTE:  cannot preempt: job does not have the PREEMPTOR attribute (1 running preemptee(s) of lower priority)") {
            break;
        }
        assert!(Instant::now() < deadline, "no note:\n{out}");
        std::thread::sleep(Duration::from_millis(100));
    }
    let _ = d.run("mjobctl", &["-c", &format!("{low},{med}")]);
}

#[test]
fn checkpointed_preemptee_restarts_only_after_its_old_run_is_gone() {
    let d = Daemon::start_with_config(Some(&cfg_with(
        "CHECKPOINT",
        "CHECKPOINTSIG=SIGUSR2 CHECKPOINTTIMEOUT=3",
        "",
    )));
    let log = d.home.path().join("events");
    // Notes the checkpoint signal and keeps running: it is terminated after
    // CHECKPOINTTIMEOUT.
    let low = d.submit(
        &format!(
            "#!/bin/sh\necho \"start $$ ${{MOAB_RESTARTED:-0}}\" >> {l}\n\
             trap 'echo \"usr2 $$\" >> {l}' USR2\n\
             trap 'echo \"term $$\" >> {l}; exit 0' TERM\n\
             while true; do sleep 0.1; done\n",
            l = log.display()
        ),
        &["-l", "procs=2,walltime=120,qos=low,flags=checkpoint"],
    );
    d.wait_state(low, "Running", LONG);
    wait_lines(&log, 1);
    let high = d.submit(
        &format!("#!/bin/sh\necho high >> {}\nsleep 1\n", log.display()),
        &["-l", "procs=2,walltime=60,qos=high"],
    );
    // While the victim checkpoints, the preemptor waits for it.
    let lines = wait_lines(&log, 2);
    assert!(lines[1].starts_with("usr2 "), "{lines:?}");
    let out = d.checkjob(high);
    if out.contains("State: Idle") {
        assert!(out.contains("waiting for preempted job(s)"), "{out}");
    }
    d.wait_state(high, "Completed", LONG);
    d.wait_state(low, "Running", LONG);
    let lines = wait_lines(&log, 5);
    let first = lines[0].split(' ').nth(1).unwrap().to_string();
    assert_eq!(lines[0], format!("start {first} 0"), "{lines:?}");
    assert_eq!(lines[1], format!("usr2 {first}"), "{lines:?}");
    assert_eq!(lines[2], format!("term {first}"), "{lines:?}");
    // The preemptor started only after the victim's run ended...
    assert_eq!(lines[3], "high", "{lines:?}");
    // ...and the victim restarted from its checkpoint after that, as a new
    // process that is told so.
    let second = lines[4].split(' ').nth(1).unwrap().to_string();
    assert_ne!(first, second);
    assert_eq!(lines[4], format!("start {second} 1"), "{lines:?}");
    let out = d.checkjob(low);
    assert!(out.contains("StartCount:     2"), "{out}");
    let _ = d.run("mjobctl", &["-c", &low.to_string()]);
}

#[test]
fn suspendsig_is_the_signal_that_suspends() {
    // SUSPENDSIG=SIGTSTP: a job that ignores SIGTSTP keeps running while
    // suspended (SIGSTOP could not be ignored): the configured signal is
    // the one sent.
    let d = Daemon::start_with_config(Some(&cfg_with("SUSPEND", "SUSPENDSIG=SIGTSTP", "")));
    let file = d.home.path().join("progress");
    let script = counter(&file).replacen("#!/bin/sh\n", "#!/bin/sh\ntrap '' TSTP\n", 1);
    let job = d.submit(&script, &["-l", "procs=1,walltime=120,flags=suspendable"]);
    d.wait_state(job, "Running", LONG);
    wait_progress(&file, 3);
    answers(
        &d,
        "mjobctl",
        &["-s", &job.to_string()],
        &format!("job {job} successfully preempted"),
    );
    d.wait_state(job, "Suspended", LONG);
    let at = read_counter(&file);
    wait_progress(&file, at + 5);
    answers(
        &d,
        "mjobctl",
        &["-r", &job.to_string()],
        &format!("job {job} successfully resumed "),
    );
    let _ = d.run("mjobctl", &["-c", &job.to_string()]);
}

#[test]
fn a_refused_resume_leaves_the_job_stopped() {
    let d = Daemon::start_with_config(Some(&cfg("SUSPEND")));
    let file = d.home.path().join("progress");
    let low = d.submit(
        &counter(&file),
        &["-l", "procs=2,walltime=120,flags=suspendable"],
    );
    d.wait_state(low, "Running", LONG);
    wait_progress(&file, 3);
    answers(
        &d,
        "mjobctl",
        &["-s", &low.to_string()],
        &format!("job {low} successfully preempted"),
    );
    d.wait_state(low, "Suspended", LONG);
    // Another job takes the processors the suspension freed.
    let other = d.submit("sleep 60\n", &["-l", "procs=2,walltime=120"]);
    d.wait_state(other, "Running", LONG);
    refused(
        &d,
        "mjobctl",
        &["-r", &low.to_string()],
        &format!("job {low} cannot be resumed (resources are in use)"),
    );
    // Not woken up: no progress, still suspended.
    std::thread::sleep(Duration::from_millis(300));
    let frozen = read_counter(&file);
    std::thread::sleep(Duration::from_millis(1200));
    assert_eq!(read_counter(&file), frozen, "a refused resume sent SIGCONT");
    d.wait_state(low, "Suspended", LONG);
    // Moab's message for resuming a running job (trailing space).
    refused(
        &d,
        "mjobctl",
        &["-r", &other.to_string()],
        &format!("cannot resume active job {other} "),
    );
    let _ = d.run("mjobctl", &["-c", &other.to_string()]);
    d.wait_state(other, "Removed", LONG);
    answers(
        &d,
        "mjobctl",
        &["-r", &low.to_string()],
        &format!("job {low} successfully resumed "),
    );
    wait_progress(&file, frozen);
    let _ = d.run("mjobctl", &["-c", &low.to_string()]);
}

#[test]
fn mjobctl_messages_are_moabs() {
    let d = Daemon::start_with_config(Some(&cfg("SUSPEND")));
    // Neither suspendable nor restartable: escalated twice, to cancel.
    let plain = d.submit("sleep 60\n", &["-l", "procs=1,walltime=120"]);
    d.wait_state(plain, "Running", LONG);
    answers(
        &d,
        "mjobctl",
        &["-s", &plain.to_string()],
        &format!(
            "job {plain} not suspendable or requeueable, preempt policy temporarily changed to cancel\njob successfully preempted"
        ),
    );
    d.wait_state(plain, "Removed", LONG);
    // A job that is not active cannot be preempted.
    let held = d.submit("sleep 1\n", &["-h", "-l", "procs=1,walltime=120"]);
    refused(
        &d,
        "mjobctl",
        &["-s", &held.to_string()],
        "cannot preempt non-active job",
    );
    // A completed job is requeued and runs again.
    let done = d.submit("exit 0\n", &["-l", "procs=1,walltime=120"]);
    d.wait_state(done, "Completed", LONG);
    answers(
        &d,
        "mjobctl",
        &["-R", &done.to_string()],
        &format!("requeued completed job '{done}'"),
    );
    let deadline = Instant::now() + LONG;
    loop {
        let out = d.checkjob(done);
        if out.contains("StartCount:     2") && out.contains("State: Completed") {
            break;
        }
        assert!(Instant::now() < deadline, "not run again:\n{out}");
        std::thread::sleep(Duration::from_millis(100));
    }
    let _ = d.run("mjobctl", &["-c", &held.to_string()]);
}

#[test]
fn mjobctl_execute_honours_limits_and_reservations() {
    let d = Daemon::start_with_config(Some(&cfg_with("SUSPEND", "", "USERCFG[root] MAXJOB=1\n")));
    let first = d.submit("sleep 60\n", &["-l", "procs=1,walltime=120"]);
    d.wait_state(first, "Running", LONG);
    let second = d.submit("sleep 60\n", &["-l", "procs=1,walltime=120"]);
    d.wait_considered(second, LONG);
    refused(
        &d,
        "mjobctl",
        &["-x", &second.to_string()],
        "ERROR: Job rejected by policy MAXJOB.  Use 'mjobctl -w flags=ignorepolicies <jobnum>'",
    );
    d.wait_state(second, "Idle", LONG);
    answers(
        &d,
        "mjobctl",
        &["-x", "-w", "flags=ignorepolicies", &second.to_string()],
        &format!("job {second} successfully started"),
    );
    d.wait_state(second, "Running", LONG);
    let _ = d.run("mjobctl", &["-c", &format!("{first},{second}")]);
    d.wait_state(first, "Removed", LONG);
    d.wait_state(second, "Removed", LONG);
    // The node is reserved for somebody else.
    let out = d.run(
        "mrsvctl",
        &["-c", "-h", "n1", "-a", "USER==nobody", "-d", "1:00:00"],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let third = d.submit("sleep 60\n", &["-l", "procs=1,walltime=120"]);
    d.wait_considered(third, LONG);
    refused(
        &d,
        "mjobctl",
        &["-x", &third.to_string()],
        "ERROR: job cannot run  (reservation conflict (resources reserved by system.1)).  Use 'mjobctl -w flags=ignorersv <jobnum>'",
    );
    answers(
        &d,
        "mjobctl",
        &["-x", "-w", "flags=ignorersv", &third.to_string()],
        &format!("job {third} successfully started"),
    );
    d.wait_state(third, "Running", LONG);
    let _ = d.run("mjobctl", &["-c", &third.to_string()]);
}

#[test]
fn class_qdef_makes_its_jobs_preemptors() {
    // The seed's example: CLASSCFG[special] QDEF=high& (QoS high is a
    // PREEMPTOR); a job of the class preempts a running PREEMPTEE job.
    let d = Daemon::start_with_config(Some(&cfg_with(
        "SUSPEND",
        "",
        "CLASSCFG[special] QDEF=high&\nCLASSCFG[batch] PRIORITY=0\n",
    )));
    let low = d.submit(
        "sleep 60\n",
        &[
            "-q",
            "batch",
            "-l",
            "procs=2,walltime=120,qos=low,flags=suspendable",
        ],
    );
    d.wait_state(low, "Running", LONG);
    let special = d.submit("sleep 1\n", &["-q", "special", "-l", "procs=2,walltime=60"]);
    d.wait_state(low, "Suspended", LONG);
    d.wait_state(special, "Completed", LONG);
    d.wait_state(low, "Running", LONG);
    let _ = d.run("mjobctl", &["-c", &low.to_string()]);
}

#[test]
fn a_checkpoint_in_progress_survives_a_daemon_restart() {
    let mut d = Daemon::start_with_config(Some(&cfg_with(
        "SUSPEND",
        "CHECKPOINTSIG=SIGUSR2 CHECKPOINTTIMEOUT=3",
        "",
    )));
    let log = d.home.path().join("events");
    let job = d.submit(
        &format!(
            "#!/bin/sh\necho \"start $$ ${{MOAB_RESTARTED:-0}}\" >> {l}\n\
             trap 'echo \"usr2 $$\" >> {l}' USR2\n\
             trap 'echo \"term $$\" >> {l}; exit 0' TERM\n\
             while true; do sleep 0.1; done\n",
            l = log.display()
        ),
        &["-l", "procs=2,walltime=120,flags=checkpoint"],
    );
    d.wait_state(job, "Running", LONG);
    wait_lines(&log, 1);
    answers(
        &d,
        "mjobctl",
        &["-C", &job.to_string()],
        &format!("job {job} successfully preempted"),
    );
    wait_lines(&log, 2);
    // The daemon dies while the job is still checkpointing, and comes back.
    d.kill9();
    d.spawn();
    // The old run ends at the timeout; only then does the job start again,
    // from its checkpoint.
    let lines = wait_lines(&log, 4);
    let first = lines[0].split(' ').nth(1).unwrap().to_string();
    assert_eq!(lines[1], format!("usr2 {first}"), "{lines:?}");
    assert_eq!(lines[2], format!("term {first}"), "{lines:?}");
    assert!(
        lines[3].starts_with("start ") && lines[3].ends_with(" 1"),
        "{lines:?}"
    );
    d.wait_state(job, "Running", LONG);
    let out = d.checkjob(job);
    assert!(out.contains("StartCount:     2"), "{out}");
    let _ = d.run("mjobctl", &["-c", &job.to_string()]);
}
