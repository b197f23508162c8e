//! Real third-party clients end to end (real-clients.md §5): dask-jobqueue's
//! `MoabCluster` and FireWorks' `qlaunch`/`rlaunch` with a `MOAB` queue
//! adapter, installed from PyPI by `scripts/clients-venv`, drive our real
//! `msub`/`showq`/`canceljob` against a real daemon, and the jobs really run
//! on this machine through the local backend. vsc-tools-lib (a parse-only
//! library) parses our plain `showq` and `checkjob` text.
//!
//! The venv comes from `ARCHES_CLIENTS_VENV`. When it is unset these tests
//! fail with a clear message if `CI` is set, and are skipped with a note
//! otherwise.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{base_env, bin, text, Daemon};

/// Upper bound for one client script (its own waits are shorter).
const SCRIPT_TIMEOUT: Duration = Duration::from_secs(300);

#[test]
fn dask_jobqueue_moab_cluster_computes_on_two_worker_jobs_and_cancels_them() {
    // dask-jobqueue's default resource line is PBS-Pro `select=` syntax.
    dask_round_trip(None, "#PBS -l select=1:ncpus=1:mem=");
}

#[test]
fn dask_jobqueue_with_a_moab_site_resource_spec() {
    // What users on real Moab sites configure (real-clients.md §2.1).
    let spec = "nodes=1:ppn=1,mem=1gb";
    dask_round_trip(Some(spec), &format!("#PBS -l {spec}\n"));
}

/// One MoabCluster round trip: scale to 2 worker jobs, compute, close; checks
/// the result, the 2 submitted jobs and their cancellation.
fn dask_round_trip(resource_spec: Option<&str>, expected_line: &str) {
    let Some(venv) = clients_venv() else { return };
    let d = Daemon::start();
    let logs = d.home.path().join("dask-logs");
    std::fs::create_dir_all(&logs).expect("log dir");
    let mut args = vec![logs.to_str().expect("utf-8 path")];
    args.extend(resource_spec);
    let out = run_client(&d, &venv, "dask_e2e.py", &args);

    // sum(x*x for x in 0..10), computed on the workers.
    assert_eq!(out["result"], 285, "{out}");
    assert_eq!(out["workers"], 2, "{out}");
    let script = out["job_script"].as_str().expect("job_script");
    assert!(script.contains(expected_line), "{script}");

    // Exactly two jobs were submitted through our msub: the ids dask parsed.
    let ids: Vec<u64> = out["job_ids"]
        .as_array()
        .expect("job_ids")
        .iter()
        .map(|v| v.as_str().and_then(|s| s.parse().ok()).expect("numeric id"))
        .collect();
    assert_eq!(ids.len(), 2, "{out}");

    // cluster.close() cancelled both (canceljob), after they had started.
    for id in &ids {
        let cj = d.wait_state(*id, "Removed", Duration::from_secs(30));
        assert!(cj.contains("AName: dask-e2e"), "{cj}");
    }
    let completed = text(&d.run("showq", &["-c"]).stdout);
    assert_eq!(job_rows(&completed), ids, "{completed}");
    for id in &ids {
        let row = completed
            .lines()
            .find(|l| l.starts_with(&format!("{id} ")))
            .unwrap_or_else(|| panic!("{completed}"));
        assert!(row.contains(" CNCLD "), "{completed}");
        // The worker really ran here and registered with the scheduler.
        let err = std::fs::read_to_string(logs.join(format!("dask-e2e.e{id}")))
            .expect("worker stderr file");
        assert!(err.contains("Registered to:"), "{err}");
    }
    assert_eq!(active_count(&d), 0);
}

#[test]
fn fireworks_qlaunch_submits_through_msub_and_fireworks_complete() {
    let Some(venv) = clients_venv() else { return };
    let d = Daemon::start();
    // Two held jobs of the same user: FireWorks must count exactly these.
    let held: Vec<u64> = (0..2)
        .map(|_| d.submit("sleep 300\n", &["-h", "-N", "held"]))
        .collect();
    let work = d.home.path().join("fw");
    let out = run_client(
        &d,
        &venv,
        "fireworks_e2e.py",
        &[work.to_str().expect("utf-8 path")],
    );

    assert_eq!(out["states"], serde_json::json!(["COMPLETED", "COMPLETED"]));
    assert_eq!(
        out["outputs"],
        serde_json::json!(["again-from-fw", "hello-from-fw"])
    );

    // FireWorks' `showq -w user=<login>` line count = that user's jobs.
    let user = out["user"].as_str().expect("user");
    let xml = text(
        &d.run("showq", &["--xml", "-w", &format!("user={user}")])
            .stdout,
    );
    let doc = roxmltree::Document::parse(&xml).expect("showq --xml parses");
    let users_jobs = doc
        .descendants()
        .filter(|n| n.has_tag_name("job") && n.attribute("User") == Some(user))
        .count();
    assert_eq!(users_jobs, held.len(), "{xml}");
    assert_eq!(out["njobs_before"], held.len(), "{out}");
    assert_eq!(out["njobs_after"], held.len(), "{out}");

    // Both submissions went through our msub, ran rlaunch, and exited 0.
    let completed = text(&d.run("showq", &["-c"]).stdout);
    let fw_jobs = job_rows(&completed);
    assert_eq!(fw_jobs.len(), 2, "{completed}");
    for id in fw_jobs {
        assert!(!held.contains(&id));
        let cj = d.wait_state(id, "Completed", Duration::from_secs(30));
        assert!(cj.contains("AName: fw_e2e"), "{cj}");
        assert!(cj.contains("Completion Code: 0"), "{cj}");
    }
}

#[test]
fn vsc_tools_lib_parses_our_showq_and_checkjob_text() {
    let Some(venv) = clients_venv() else { return };
    let d = Daemon::start();
    let held = d.submit("sleep 300\n", &["-h", "-A", "proj1", "-N", "heldjob"]);
    // The running job takes every processor of the local node, so the next one waits.
    let running = d.submit("sleep 300\n", &["-l", "nodes=1:ppn=2", "-N", "runner"]);
    d.wait_state(running, "Running", Duration::from_secs(30));
    let idle = d.submit("sleep 300\n", &["-N", "waiter"]);
    d.wait_considered(idle, Duration::from_secs(30));
    let showq = text(&d.run("showq", &[]).stdout);
    let checkjob = d.checkjob(held);
    let dir = d.home.path().join("vsc");
    std::fs::create_dir_all(&dir).expect("dir");
    std::fs::write(dir.join("showq.txt"), &showq).expect("write");
    std::fs::write(dir.join("checkjob.txt"), &checkjob).expect("write");
    let out = run_client(
        &d,
        &venv,
        "vsc_parse.py",
        &[
            dir.join("showq.txt").to_str().expect("utf-8"),
            dir.join("checkjob.txt").to_str().expect("utf-8"),
        ],
    );
    let ids = |state: &str| -> Vec<String> {
        out["showq"][state]
            .as_array()
            .unwrap_or_else(|| panic!("no {state} section: {out}"))
            .iter()
            .map(|j| j["id"].as_str().expect("id").to_string())
            .collect()
    };
    assert_eq!(ids("active"), vec![running.to_string()], "{out}\n{showq}");
    assert_eq!(ids("eligible"), vec![idle.to_string()], "{out}\n{showq}");
    assert_eq!(ids("blocked"), vec![held.to_string()], "{out}\n{showq}");
    let job = |state: &str| &out["showq"][state][0];
    assert_eq!(job("active")["state"], "Running", "{out}");
    assert_eq!(job("active")["procs"], "2", "{out}");
    assert_eq!(job("eligible")["state"], "Idle", "{out}");
    assert_eq!(job("blocked")["state"], "UserHold", "{out}");
    let user = job("active")["username"].as_str().expect("username");
    assert!(!user.is_empty() && user.chars().all(|c| !c.is_whitespace()));
    assert_eq!(job("blocked")["username"], user, "{out}");
    assert_eq!(out["checkjob"]["account"], "proj1", "{out}\n{checkjob}");
    assert_eq!(
        out["checkjob"]["holds"],
        serde_json::json!(["User"]),
        "{out}\n{checkjob}"
    );
}

/// The venv from `ARCHES_CLIENTS_VENV`; None (skip) when unset outside CI.
fn clients_venv() -> Option<PathBuf> {
    match std::env::var_os("ARCHES_CLIENTS_VENV") {
        Some(v) => {
            let venv = PathBuf::from(v);
            assert!(
                venv.join("bin/python").exists(),
                "ARCHES_CLIENTS_VENV={} has no bin/python; run scripts/clients-venv",
                venv.display()
            );
            Some(venv)
        }
        None if std::env::var_os("CI").is_some() => panic!(
            "CI is set but ARCHES_CLIENTS_VENV is not: run scripts/clients-venv and export \
             ARCHES_CLIENTS_VENV=<its output> (as .ci/run does)"
        ),
        None => {
            eprintln!(
                "note: skipping real-client test: ARCHES_CLIENTS_VENV is unset \
                 (create the venv with scripts/clients-venv)"
            );
            None
        }
    }
}

/// Runs `tests/clients/<script>` with the venv's python, our binaries first on
/// PATH and the daemon's MOABHOMEDIR/MOAB_SOCKET; returns its last stdout line
/// parsed as JSON. Panics with the script's output if it fails or hangs.
fn run_client(d: &Daemon, venv: &Path, script: &str, args: &[&str]) -> serde_json::Value {
    let script_path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/clients")
        .join(script);
    let our_bin = bin("moab").parent().expect("bin dir").to_path_buf();
    let mut env = base_env(d.home.path(), &d.socket);
    for (k, v) in env.iter_mut() {
        if k == "PATH" {
            *v = format!("{}:{}:{v}", our_bin.display(), venv.join("bin").display());
        }
    }
    let stdout_path = d.home.path().join(format!("{script}.stdout"));
    let stderr_path = d.home.path().join(format!("{script}.stderr"));
    let mut child = Command::new(venv.join("bin/python"))
        .arg(&script_path)
        .args(args)
        .env_clear()
        .envs(env)
        .current_dir(d.home.path())
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&stdout_path).expect("stdout file"))
        .stderr(std::fs::File::create(&stderr_path).expect("stderr file"))
        .spawn()
        .expect("spawn the venv's python");
    let deadline = Instant::now() + SCRIPT_TIMEOUT;
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait python") {
            break Some(s);
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let stdout = std::fs::read_to_string(&stdout_path).unwrap_or_default();
    let stderr = std::fs::read_to_string(&stderr_path).unwrap_or_default();
    let report = || {
        format!(
            "{script}: status {status:?}\n--- stdout\n{stdout}\n--- stderr\n{stderr}\n--- showq -c\n{}\n--- daemon\n{}",
            text(&d.run("showq", &["-c"]).stdout),
            d.daemon_log()
        )
    };
    assert!(status.is_some_and(|s| s.success()), "{}", report());
    let last = stdout.lines().last().unwrap_or_default();
    serde_json::from_str(last).unwrap_or_else(|e| panic!("{e}: {}", report()))
}

/// Job ids of the job rows of a plain showq listing (lines starting with a
/// number that are not a section summary such as `2 completed jobs`).
fn job_rows(showq: &str) -> Vec<u64> {
    const SUMMARIES: [&str; 4] = ["active", "eligible", "blocked", "completed"];
    let mut ids: Vec<u64> = showq
        .lines()
        .filter_map(|l| {
            let mut words = l.split_whitespace();
            let id = words.next()?.parse().ok()?;
            (!SUMMARIES.contains(&words.next()?)).then_some(id)
        })
        .collect();
    ids.sort_unstable();
    ids
}

/// Number of active jobs according to `showq --xml`.
fn active_count(d: &Daemon) -> usize {
    let xml = text(&d.run("showq", &["--xml"]).stdout);
    let doc = roxmltree::Document::parse(&xml).expect("showq --xml parses");
    doc.descendants()
        .filter(|n| n.has_tag_name("queue") && n.attribute("option") == Some("active"))
        .map(|n| n.children().filter(|c| c.has_tag_name("job")).count())
        .sum()
}
