//! Foundation end to end: submit, run, watch, hold, modify, cancel, XML,
//! permissions, bad input and crash recovery — real binaries, real daemon.

mod common;

use std::process::Command;
use std::time::Duration;

use common::{is_root, parse_id, text, Daemon};

const LONG: Duration = Duration::from_secs(30);

#[test]
fn submitted_file_job_runs_writes_output_and_records_exit_code() {
    let d = Daemon::start();
    let script = "#!/bin/sh\n#PBS -N e2ejob\n#PBS -l walltime=00:05:00\necho out-$PBS_JOBID-$MOAB_JOBNAME\necho err >&2\nexit 3\n";
    let id = d.submit(script, &[]);
    let out = d.wait_state(id, "Completed", LONG);
    assert!(out.contains("Completion Code: 3"), "{out}");
    assert!(out.contains("AName: e2ejob"), "{out}");
    let o =
        std::fs::read_to_string(d.home.path().join(format!("e2ejob.o{id}"))).expect("stdout file");
    assert_eq!(o.trim(), format!("out-{id}-e2ejob"));
    let e =
        std::fs::read_to_string(d.home.path().join(format!("e2ejob.e{id}"))).expect("stderr file");
    assert_eq!(e.trim(), "err");
    // Completed jobs stay visible in showq -c with their exit code.
    let c = text(&d.run("showq", &["-c"]).stdout);
    assert!(
        c.lines()
            .any(|l| l.starts_with(&id.to_string()) && l.contains(" C 3 ")),
        "{c}"
    );
}

#[test]
fn stdin_submission_prints_blank_line_then_id_and_nothing_on_stderr() {
    let d = Daemon::start();
    let out = d.run_stdin("msub", &[], "echo from-stdin\n");
    assert!(out.status.success());
    assert!(out.stderr.is_empty(), "stderr: {}", text(&out.stderr));
    let id = parse_id(&out);
    assert_eq!(text(&out.stdout), format!("\n{id}\n"));
    d.wait_state(id, "Completed", LONG);
    let o =
        std::fs::read_to_string(d.home.path().join(format!("STDIN.o{id}"))).expect("STDIN.o file");
    assert_eq!(o.trim(), "from-stdin");
}

#[test]
fn job_environment_and_node_file() {
    let d = Daemon::start();
    let script = "#!/bin/bash\n#MSUB -l nodes=1:ppn=1\necho \"np=$PBS_NP nodes=$PBS_NUM_NODES user=$MOAB_USER\"\nwc -l < \"$PBS_NODEFILE\"\n";
    let id = d.submit(script, &["-N", "envjob", "-j", "oe"]);
    d.wait_state(id, "Completed", LONG);
    let o = std::fs::read_to_string(d.home.path().join(format!("envjob.o{id}"))).expect("output");
    let mut lines = o.lines();
    let first = lines.next().unwrap_or_default();
    assert!(first.starts_with("np=1 nodes=1 user="), "{o}");
    assert_eq!(lines.next().map(str::trim), Some("1"), "{o}");
}

#[test]
fn hold_release_modify_cancel() {
    let d = Daemon::start();
    let id = d.submit("sleep 30\n", &["-h", "-l", "walltime=100"]);
    let q = text(&d.run("showq", &[]).stdout);
    let row = q
        .lines()
        .find(|l| l.starts_with(&id.to_string()))
        .unwrap_or_else(|| panic!("{q}"));
    assert!(row.contains("UserHold"), "{q}");
    assert!(q.contains("1 blocked job"), "{q}");

    let m = d.run("mjobctl", &["-m", "walltime=200", &id.to_string()]);
    assert!(m.status.success(), "{}", text(&m.stderr));
    assert!(
        d.checkjob(id).contains("WallTime:   00:00:00 of 00:03:20"),
        "{}",
        d.checkjob(id)
    );

    let r = d.run("releasehold", &[&id.to_string()]);
    assert!(r.status.success(), "{}", text(&r.stderr));
    d.wait_state(id, "Running", LONG);

    let c = d.run("canceljob", &[&id.to_string()]);
    assert!(c.status.success(), "{}", text(&c.stderr));
    assert!(
        text(&c.stdout).contains(&format!("job '{id}' cancelled")),
        "{}",
        text(&c.stdout)
    );
    d.wait_state(id, "Removed", LONG);

    let again = d.run("canceljob", &[&id.to_string()]);
    assert_eq!(again.status.code(), Some(1));
    assert!(
        text(&again.stderr).contains(&format!("ERROR:  invalid job specified ({id})")),
        "{}",
        text(&again.stderr)
    );
}

#[test]
fn xml_outputs_parse_and_counts_match() {
    let d = Daemon::start();
    let held = d.submit("sleep 30\n", &["-h"]);
    let out = d.run("msub", &["--xml", "/dev/null"]);
    let x = text(&out.stdout);
    let doc = roxmltree::Document::parse(x.trim()).unwrap_or_else(|e| panic!("{e}: {x}"));
    assert_eq!(doc.root_element().tag_name().name(), "Data");
    let q = text(&d.run("showq", &["--xml"]).stdout);
    assert!(!q.trim().contains('\n'), "showq --xml must be one line");
    let doc = roxmltree::Document::parse(q.trim()).unwrap_or_else(|e| panic!("{e}: {q}"));
    let mut total = 0;
    for queue in doc
        .root_element()
        .children()
        .filter(|n| n.has_tag_name("queue"))
    {
        let count: usize = queue
            .attribute("count")
            .expect("count")
            .parse()
            .expect("number");
        assert_eq!(
            count,
            queue.children().filter(|n| n.has_tag_name("job")).count(),
            "{q}"
        );
        total += count;
    }
    assert!(total >= 1, "{q}");
    let c = text(&d.run("checkjob", &["--xml", &held.to_string()]).stdout);
    let doc = roxmltree::Document::parse(c.trim()).unwrap_or_else(|e| panic!("{e}: {c}"));
    let job = doc
        .root_element()
        .children()
        .find(|n| n.has_tag_name("job"))
        .expect("job");
    assert_eq!(job.attribute("JobID"), Some(held.to_string().as_str()));
}

#[test]
fn bad_submissions_are_rejected_and_queue_nothing() {
    let d = Daemon::start();
    for args in [
        vec!["-l", "walltime=0"],
        vec!["-l", "walltime=-5"],
        vec!["-l", "nodes=1:ppn=100000"],
        vec!["-l", "procs=abc"],
        vec!["-l", "mem=999999tb"],
        vec!["-W", "depend=afterok:987654"],
    ] {
        let out = d.run_stdin("msub", &args, "true\n");
        assert_eq!(out.status.code(), Some(1), "{args:?} must fail");
        let err = text(&out.stderr);
        assert!(
            err.starts_with("ERROR:    cannot submit job - "),
            "{args:?}: {err}"
        );
        assert!(
            out.stdout.iter().all(|b| b.is_ascii_whitespace()),
            "{args:?}: stdout {:?}",
            text(&out.stdout)
        );
    }
    let missing = d.run("msub", &["/nonexistent/script.sh"]);
    assert_eq!(missing.status.code(), Some(1));
    // Unknown or valueless options: the same one-line rejection, not clap's.
    for (args, reason) in [
        (vec!["-Z"], "unknown option '-Z'"),
        (vec!["--bogus"], "unknown option '--bogus'"),
        (vec!["-N"], "option '-N' requires a value"),
        (vec!["-l"], "option '-l' requires a value"),
    ] {
        let out = d.run_stdin("msub", &args, "true\n");
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        assert_eq!(
            text(&out.stderr),
            format!("ERROR:    cannot submit job - {reason}\n"),
            "{args:?}"
        );
        assert!(out.stdout.is_empty(), "{args:?}");
    }
    let q = text(&d.run("showq", &[]).stdout);
    assert!(q.contains("Total jobs:  0"), "{q}");
}

#[test]
fn unreadable_script_is_rejected_with_the_reason() {
    let d = Daemon::start();
    let script = d.home.path().join("secret.sh");
    std::fs::write(&script, "true\n").unwrap();
    common::set_mode(&script, 0o000);
    let path = script.to_string_lossy().to_string();
    // Root reads anything: the unreadable file is someone else's.
    let out = if is_root() {
        let user = common::ensure_user("archese2e");
        Command::new("setpriv")
            .args(["--reuid", &user, "--regid", &user, "--init-groups", "--"])
            .arg(common::bin("msub"))
            .arg(&path)
            .env_clear()
            .envs(common::base_env(d.home.path(), &d.socket))
            .current_dir("/")
            .output()
            .expect("setpriv")
    } else {
        d.run("msub", &[&path])
    };
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(
        err.starts_with("ERROR:    cannot submit job - ") && err.contains("Permission denied"),
        "{err}"
    );
    assert!(err.contains(&path), "{err}");
    let q = text(&d.run("showq", &[]).stdout);
    assert!(q.contains("Total jobs:  0"), "{q}");
}

#[test]
fn a_bad_configuration_value_stops_the_daemon_with_file_and_line() {
    let home = tempfile::Builder::new()
        .prefix("arches-badcfg")
        .tempdir()
        .unwrap();
    std::fs::write(
        home.path().join("moab.cfg"),
        "# site config\nRMPOLLINTERVAL 30\nDEFERTIME soon\n",
    )
    .unwrap();
    let socket = home.path().join("moab.sock");
    let out = Command::new(common::bin("moab"))
        .env_clear()
        .envs(common::base_env(home.path(), &socket))
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run moab");
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let err = text(&out.stderr);
    let cfg = home.path().join("moab.cfg");
    assert!(
        err.contains(&format!(
            "{}:3: DEFERTIME: invalid time specification 'soon'",
            cfg.display()
        )),
        "{err}"
    );
    assert!(!socket.exists(), "nothing served");
}

#[test]
fn a_job_named_twice_is_acted_on_and_shown_once() {
    let d = Daemon::start();
    let a = d.submit("sleep 30\n", &["-h"]);
    let b = d.submit("sleep 30\n", &["-h"]);
    let (sa, sb) = (a.to_string(), b.to_string());
    let c = text(&d.run("checkjob", &[&sa, &sa, &format!("Moab.{a}")]).stdout);
    assert_eq!(c.matches(&format!("job {a}\n")).count(), 1, "{c}");
    let out = d.run("canceljob", &[&sa, &sa, &format!("{b},{a}")]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(out.stderr.is_empty(), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout)
            .lines()
            .filter(|l| !l.is_empty())
            .collect::<Vec<_>>(),
        [
            format!("job '{a}' cancelled"),
            format!("job '{b}' cancelled")
        ]
    );
    // Named again once finished: an unknown job.
    let again = d.run("canceljob", &[&sb]);
    assert_eq!(again.status.code(), Some(1));
    assert!(text(&again.stderr).contains(&format!("ERROR:  invalid job specified ({b})")));
}

#[test]
fn unknown_job_and_no_daemon_errors() {
    let d = Daemon::start();
    let out = d.run("checkjob", &["424242"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stdout).contains("invalid job specified")
            || text(&out.stderr).contains("invalid job specified")
    );
    // A client with no daemon behind its socket says so quickly and exits 1.
    let start = std::time::Instant::now();
    let out = d
        .cmd("showq")
        .env("MOAB_SOCKET", d.home.path().join("nothing.sock"))
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).starts_with("ERROR:"),
        "{}",
        text(&out.stderr)
    );
    assert!(start.elapsed() < Duration::from_secs(2));
}

#[test]
fn mschedctl_k_stops_the_daemon_and_mdiag_s_reports_it_alive() {
    let mut d = Daemon::start();
    let s = text(&d.run("mdiag", &["-S"]).stdout);
    assert!(s.contains("Moab Server running on"), "{s}");
    let k = d.run("mschedctl", &["-k"]);
    assert!(k.status.success(), "{}", text(&k.stderr));
    assert!(
        text(&k.stdout).contains("will be shutdown immediately"),
        "{}",
        text(&k.stdout)
    );
    let status = d
        .wait_exit(Duration::from_secs(10))
        .expect("daemon exits after mschedctl -k");
    assert!(status.success(), "{status}");
    assert!(!d.socket.exists(), "socket removed on clean shutdown");
    // A log that is not a terminal gets no colour codes (stderr here is a
    // file), and the log file never does.
    let stderr = d.daemon_log();
    assert!(stderr.contains("moab server stopped"), "{stderr}");
    assert!(!stderr.contains('\x1b'), "ANSI codes in stderr: {stderr:?}");
    let file = std::fs::read_to_string(d.home.path().join("log").join("moab.log")).unwrap();
    assert!(file.contains("moab server stopped"), "{file}");
    assert!(!file.contains('\x1b'), "ANSI codes in moab.log: {file:?}");
}

/// Runs one of our commands as `user` (setpriv) against `d`, in `cwd`.
fn as_user(
    d: &Daemon,
    user: &str,
    prog: &str,
    args: &[&str],
    cwd: &std::path::Path,
) -> std::process::Output {
    Command::new("setpriv")
        .args(["--reuid", user, "--regid", user, "--init-groups", "--"])
        .arg(common::bin(prog))
        .args(args)
        .env_clear()
        .envs(common::base_env(d.home.path(), &d.socket))
        .current_dir(cwd)
        .output()
        .expect("setpriv")
}

#[test]
fn permission_refusal_between_two_real_users() {
    if !common::root_or_skip("permission_refusal_between_two_real_users") {
        return;
    }
    let d = Daemon::start();
    let user = common::ensure_user("archese2e");
    let other =
        |prog: &str, args: &[&str]| as_user(&d, &user, prog, args, std::path::Path::new("/"));
    let held = d.submit("sleep 30\n", &["-h", "-l", "walltime=100"]);
    let running = d.submit("sleep 30\n", &["-l", "walltime=100"]);
    d.wait_state(running, "Running", LONG);
    // Everybody may list jobs.
    let q = other("showq", &[]);
    assert!(q.status.success(), "{}", text(&q.stderr));
    assert!(text(&q.stdout).contains(&held.to_string()));
    // Only the owner (or an administrator) may act on a job; only
    // administrators control the scheduler.
    let (h, r) = (held.to_string(), running.to_string());
    let refused: Vec<(&str, Vec<&str>)> = vec![
        ("canceljob", vec![&h]),
        ("releasehold", vec![&h]),
        ("sethold", vec![&h]),
        ("sethold", vec!["-b", &h]),
        ("mjobctl", vec!["-c", &h]),
        ("mjobctl", vec!["-h", "user", &h]),
        ("mjobctl", vec!["-u", "user", &h]),
        ("mjobctl", vec!["-m", "walltime=200", &h]),
        ("mjobctl", vec!["-m", "walltime=200", &r]),
        ("mjobctl", vec!["-s", &r]),
        ("mjobctl", vec!["-R", &r]),
        ("mjobctl", vec!["-c", &r]),
        ("runjob", vec![&h]),
        ("mschedctl", vec!["-k"]),
    ];
    for (prog, args) in &refused {
        let out = other(prog, args);
        assert_eq!(
            out.status.code(),
            Some(1),
            "{prog} {args:?} by another user must fail: {}",
            text(&out.stdout)
        );
        assert!(
            text(&out.stderr).contains("not authorized"),
            "{prog} {args:?}: {}",
            text(&out.stderr)
        );
    }
    // Every refusal changed nothing.
    let c = d.checkjob(held);
    assert!(c.contains("State: UserHold"), "{c}");
    assert!(c.contains("Holds:    User\n"), "{c}");
    assert!(c.contains("of 00:01:40"), "{c}");
    let c = d.checkjob(running);
    assert!(c.contains("State: Running"), "{c}");
    assert!(c.contains("of 00:01:40"), "{c}");
    assert!(d.run("mdiag", &["-S"]).status.success(), "daemon still up");

    // The owner of a running job may not change its limit either (Moab's
    // messages); an administrator may.
    let wd = tempfile::Builder::new()
        .prefix("arches-owner")
        .tempdir()
        .unwrap();
    common::set_mode(wd.path(), 0o777);
    let script = wd.path().join("own.sh");
    std::fs::write(&script, "sleep 30\n").unwrap();
    common::set_mode(&script, 0o644);
    let sub = as_user(
        &d,
        &user,
        "msub",
        &[
            "-l",
            "walltime=100",
            "-o",
            "/dev/null",
            "-e",
            "/dev/null",
            &script.to_string_lossy(),
        ],
        wd.path(),
    );
    assert!(sub.status.success(), "{}", text(&sub.stderr));
    let own = parse_id(&sub);
    d.wait_state(own, "Running", LONG);
    let o = own.to_string();
    let lower = as_user(&d, &user, "mjobctl", &["-m", "walltime=50", &o], wd.path());
    assert_eq!(lower.status.code(), Some(1));
    assert_eq!(
        text(&lower.stderr).trim(),
        format!("cannot reduce walltime for active job {own} from 100 to 50 (cancel job instead?)")
    );
    let raise = as_user(&d, &user, "mjobctl", &["-m", "walltime=200", &o], wd.path());
    assert_eq!(raise.status.code(), Some(1));
    assert_eq!(
        text(&raise.stderr).trim(),
        format!(
            "not authorized to increase walltime attribute for job {own} to '200' (job is active)"
        )
    );
    let by_root = d.run("mjobctl", &["-m", "walltime=200", &o]);
    assert!(by_root.status.success(), "{}", text(&by_root.stderr));
    assert!(
        d.checkjob(own).contains("of 00:03:20"),
        "{}",
        d.checkjob(own)
    );
    // Owners may cancel their own jobs.
    let mine = as_user(&d, &user, "canceljob", &[&o], wd.path());
    assert!(mine.status.success(), "{}", text(&mine.stderr));
    let _ = d.run("mjobctl", &["-c", &format!("{held},{running}")]);
}

#[test]
fn an_admincfg_user_may_act_on_other_users_jobs() {
    if !common::root_or_skip("an_admincfg_user_may_act_on_other_users_jobs") {
        return;
    }
    let admin = common::ensure_user("archesadm");
    let user = common::ensure_user("archese2e");
    let d = Daemon::start_with_config(Some(&format!("ADMINCFG[1] USERS={admin}\n")));
    let job = d.submit("sleep 30\n", &["-h", "-l", "walltime=100"]);
    let j = job.to_string();
    let root = std::path::Path::new("/");
    for (prog, args, want) in [
        (
            "mjobctl",
            vec!["-m", "walltime=300", &j],
            format!("set walltime attribute for job {job} to '300'"),
        ),
        (
            "sethold",
            vec!["-b", &j],
            format!("holds modified for job {job}  (User,Batch holds still in place)"),
        ),
        (
            "mjobctl",
            vec!["-h", "system", &j],
            format!("holds modified for job {job}  (User,System,Batch holds still in place)"),
        ),
        // (Never all holds at once: released, the job would start.)
        (
            "mjobctl",
            vec!["-u", "user", &j],
            format!("holds modified for job {job}  (System,Batch holds still in place)"),
        ),
        (
            "releasehold",
            vec!["-b", &j],
            format!("holds modified for job {job}  (System hold still in place)"),
        ),
    ] {
        let out = as_user(&d, &admin, prog, &args, root);
        assert!(
            out.status.success(),
            "{prog} {args:?}: {}",
            text(&out.stderr)
        );
        assert_eq!(text(&out.stdout).trim(), want, "{prog} {args:?}");
    }
    let c = d.checkjob(job);
    assert!(
        c.contains("State: SystemHold") && c.contains("of 00:05:00"),
        "{c}"
    );
    // A plain user may not release what the administrator set.
    let out = as_user(&d, &user, "releasehold", &["-a", &j], root);
    assert_eq!(out.status.code(), Some(1));
    let out = as_user(&d, &admin, "canceljob", &[&j], root);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout).trim(), format!("job '{job}' cancelled"));
    d.wait_state(job, "Removed", LONG);
}

#[test]
fn kill9_restart_loses_nothing_and_running_jobs_finish() {
    let mut d = Daemon::start();
    let running = d.submit(
        "#!/bin/sh\nsleep 3\necho done\nexit 7\n",
        &["-N", "survivor"],
    );
    d.wait_state(running, "Running", LONG);
    let held = d.submit("true\n", &["-h"]);
    d.kill9();
    d.spawn();
    assert!(
        d.checkjob(held).contains("State: UserHold"),
        "{}",
        d.checkjob(held)
    );
    let out = d.wait_state(running, "Completed", LONG);
    assert!(out.contains("Completion Code: 7"), "{out}");
    let o = std::fs::read_to_string(d.home.path().join(format!("survivor.o{running}")))
        .expect("output");
    assert_eq!(o.trim(), "done");
    // Ids are never reused after a restart.
    let next = d.submit("true\n", &[]);
    assert!(next > held, "{next} <= {held}");
}

/// Polls `checkjob` until `done` says so; the last output.
fn wait_checkjob(d: &Daemon, id: u64, what: &str, done: impl Fn(&str) -> bool) -> String {
    let deadline = std::time::Instant::now() + Duration::from_secs(90);
    loop {
        let out = text(&d.run("checkjob", &["-v", &id.to_string()]).stdout);
        if done(&out) {
            return out;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "job {id} never {what}:\n{out}\n{}",
            d.daemon_log()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn a_job_that_cannot_start_is_deferred_then_batch_held_never_restarted_forever() {
    let mut d = Daemon::start_with_config(Some("DEFERTIME 2\nDEFERCOUNT 3\n"));
    let bad_out = d.run_stdin("msub", &["-o", "/nonexistent/dir/x.out"], "true\n");
    assert!(bad_out.status.success(), "{}", text(&bad_out.stderr));
    let bad_out = parse_id(&bad_out);
    let bad_dir = d.run_stdin("msub", &["-d", "/nonexistent/wd"], "true\n");
    assert!(bad_dir.status.success(), "{}", text(&bad_dir.stderr));
    let bad_dir = parse_id(&bad_dir);

    // First failure: a Defer hold (state Deferred) with the reason, not Running.
    let out = wait_checkjob(&d, bad_out, "deferred", |o| o.contains("State: Deferred"));
    assert!(
        out.contains("job start failed: cannot open stdout /nonexistent/dir/x.out"),
        "{out}"
    );
    assert!(
        out.contains("job deferred for 00:00:02 (DEFERTIME; deferral 1 of 3 before a batch hold)"),
        "{out}"
    );
    assert!(out.contains("Holds:    Defer"), "{out}");
    let q = text(&d.run("showq", &["-b"]).stdout);
    assert!(
        q.lines()
            .any(|l| l.starts_with(&bad_out.to_string()) && l.contains("Deferred")),
        "{q}"
    );

    // A deferral survives a restart (and still ends).
    d.kill9();
    d.spawn();
    // DEFERCOUNT failures later: a batch hold with the message; three starts only.
    for (id, why) in [
        (bad_out, "cannot open stdout /nonexistent/dir/x.out"),
        (
            bad_dir,
            "cannot change to working directory /nonexistent/wd",
        ),
    ] {
        let out = wait_checkjob(&d, id, "batch-held", |o| o.contains("State: BatchHold"));
        assert!(out.contains("Holds:    Batch"), "{out}");
        assert!(out.contains(&format!("job start failed: {why}")), "{out}");
        assert!(
            out.contains("job placed on batch hold: failed starts reached DEFERCOUNT (3)"),
            "{out}"
        );
        assert!(out.contains("StartCount:     3\n"), "{out}");
    }
    let q = text(&d.run("showq", &["-b"]).stdout);
    for id in [bad_out, bad_dir] {
        assert!(
            q.lines()
                .any(|l| l.starts_with(&id.to_string()) && l.contains("BatchHold")),
            "{q}"
        );
    }
    let b = text(&d.run("mdiag", &["-b"]).stdout);
    assert!(
        b.contains(&format!(
            "job {bad_out:<20} has the following hold(s) in place:  Batch"
        )),
        "{b}"
    );
    // Held for good: nothing restarts it.
    std::thread::sleep(Duration::from_secs(3));
    let out = d.checkjob(bad_out);
    assert!(out.contains("State: BatchHold"), "{out}");
    assert!(out.contains("StartCount:     3\n"), "{out}");
    // An administrator's release gives it another try (and another hold).
    let r = d.run("releasehold", &["-a", &bad_dir.to_string()]);
    assert!(r.status.success(), "{}", text(&r.stderr));
    wait_checkjob(&d, bad_dir, "retried", |o| {
        o.contains("StartCount:     4\n")
    });
    wait_checkjob(&d, bad_dir, "held again", |o| {
        o.contains("State: BatchHold")
    });
}

#[test]
fn walltime_changes_of_running_jobs_are_enforced() {
    let d = Daemon::start();
    // Extended: survives its old limit and ends by itself.
    let longer = d.submit(
        "#!/bin/sh\nsleep 8\necho finished\n",
        &["-l", "walltime=5", "-N", "longer"],
    );
    // Shortened: killed at the new limit, long before the old one.
    let shorter = d.submit(
        "#!/bin/sh\nsleep 60\n",
        &["-l", "walltime=100", "-N", "shorter"],
    );
    d.wait_state(longer, "Running", LONG);
    d.wait_state(shorter, "Running", LONG);
    let m = d.run("mjobctl", &["-m", "walltime=30", &longer.to_string()]);
    assert!(
        m.status.success(),
        "the change must reach the job before its old 5 s limit: {}",
        text(&m.stderr)
    );
    assert_eq!(
        text(&m.stdout).trim(),
        format!("set walltime attribute for job {longer} to '30'")
    );
    let m = d.run("mjobctl", &["-m", "walltime=2", &shorter.to_string()]);
    assert!(m.status.success(), "{}", text(&m.stderr));
    assert!(
        d.checkjob(longer).contains(" of 00:00:30"),
        "{}",
        d.checkjob(longer)
    );

    let out = d.wait_state(shorter, "Completed", LONG);
    assert!(out.contains("Completion Code: 143"), "{out}");
    let v = text(&d.run("checkjob", &["-v", &shorter.to_string()]).stdout);
    assert!(v.contains("job exceeded its wallclock limit"), "{v}");

    let out = d.wait_state(longer, "Completed", LONG);
    assert!(out.contains("Completion Code: 0"), "{out}");
    let o =
        std::fs::read_to_string(d.home.path().join(format!("longer.o{longer}"))).expect("output");
    assert_eq!(o.trim(), "finished");
    // The job ran past its old limit: its run time shows in showq -c.
    let json = text(
        &d.run("checkjob", &["--format=json", &longer.to_string()])
            .stdout,
    );
    let v: serde_json::Value =
        serde_json::from_str(&json).unwrap_or_else(|e| panic!("{e}: {json}"));
    let s = &v["jobs"][0]["summary"];
    let ran = s["completion_time"].as_i64().unwrap() - s["start_time"].as_i64().unwrap();
    assert!(ran >= 7, "ran {ran} s: {json}");
}

fn epoch_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64
}

#[test]
fn a_job_that_ends_while_the_daemon_is_down_keeps_its_real_end_time() {
    let mut d = Daemon::start();
    let id = d.submit("#!/bin/sh\nsleep 2\nexit 4\n", &["-N", "whiledown"]);
    d.wait_state(id, "Running", LONG);
    d.kill9();
    // The supervisor records the outcome; nobody is there to hear it.
    let status = d
        .home
        .path()
        .join("spool")
        .join(id.to_string())
        .join("status");
    let deadline = std::time::Instant::now() + LONG;
    while !status.exists() {
        assert!(std::time::Instant::now() < deadline, "no {status:?}");
        std::thread::sleep(Duration::from_millis(50));
    }
    let recorded_by = epoch_now();
    // The daemon comes back clearly later than the job ended.
    std::thread::sleep(Duration::from_secs(3));
    let restarted_at = epoch_now();
    d.spawn();
    let out = d.wait_state(id, "Completed", LONG);
    assert!(out.contains("Completion Code: 4"), "{out}");
    let json = text(
        &d.run("checkjob", &["--format=json", &id.to_string()])
            .stdout,
    );
    let v: serde_json::Value =
        serde_json::from_str(&json).unwrap_or_else(|e| panic!("{e}: {json}"));
    let s = &v["jobs"][0]["summary"];
    let (start, end) = (
        s["start_time"].as_i64().unwrap(),
        s["completion_time"].as_i64().unwrap(),
    );
    assert!(
        end <= recorded_by && end < restarted_at,
        "completion {end}: the restart time ({restarted_at}), not the end (by {recorded_by})"
    );
    assert!(end - start >= 1, "ran {} s: {json}", end - start);
}
