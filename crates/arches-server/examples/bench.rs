//! Benchmark (documented in the crate README section of the report):
//!
//! `cargo run --release -p arches-server --example bench -- [SUBMISSIONS] [QUEUED]`
//!
//! 1. Durable submissions per second: 16 concurrent clients submit
//!    SUBMISSIONS jobs in total (default 4000) to a daemon with the fake
//!    backend; every acknowledged id is durable (WAL, synchronous=FULL).
//! 2. Read latency with a large queue: QUEUED jobs (default 100000) are
//!    written to a fresh store, the daemon recovers them, then `showq`
//!    (queue route) and `checkjob` (detail route) are timed; the process's
//!    resident memory is reported (the daemon runs in process).
//! 3. Trivial local jobs started per second: STARTS (default 1000) held
//!    `true` jobs are submitted to a daemon with the real local backend (one
//!    node of STARTS slots), released by one request, and the time until
//!    every one has been started (supervisor spawned) is measured.
//!
//! `bench starts N` runs only section 3 (in a fresh, small process; the
//! temporary home, and so the job spool, is under `TMPDIR`).
//! `bench fill HOME N` only writes N queued jobs to HOME's store (to measure
//! the real `moab` binary on it).
//! `bench submit SOCKET N` submits N typical jobs (a 4-line script that
//! sleeps 10 s, `procs=1`, one hour) through the API of a running daemon
//! with 16 concurrent connections and prints the rate (the jobs are
//! eligible: on the embedded default most of them stay queued).
//! `bench checkjob BIN_DIR CALLS MAX_ID` runs `BIN_DIR/checkjob <id>` (the
//! real client binary, against `$MOAB_SOCKET`/`$MOABHOMEDIR`) CALLS times
//! for random ids up to MAX_ID and prints the percentiles of the whole
//! process run time (start to exit).

use std::path::Path;
use std::time::{Duration, Instant};

use arches_api::{routes, JobsRequest, QueueView, SubmitRequest, SubmitResponse};
use arches_core::{Job, Request};
use arches_server::testing::FakeRm;
use arches_server::{config, serve, Locations};
use arches_store::{Batch, ExecRecord, JobRecord, Payload, Store};

fn client(socket: &Path) -> reqwest::blocking::Client {
    reqwest::blocking::Client::builder()
        .unix_socket(socket)
        .timeout(Duration::from_secs(600))
        .build()
        .expect("client")
}

fn start(
    home: &Path,
) -> (
    std::thread::JoinHandle<anyhow::Result<()>>,
    std::path::PathBuf,
) {
    let mut cfg = config::embedded_default(home);
    cfg.nodes = (0..16)
        .map(|i| arches_core::Node::new(&format!("n{i}"), 32, 128_000))
        .collect();
    let rm = FakeRm::new(home.join("fake-rm"), cfg.nodes.clone(), 3600).expect("rm");
    let loc = Locations {
        home: home.to_path_buf(),
        socket: home.join("moab.sock"),
    };
    let socket = loc.socket.clone();
    let t = std::thread::spawn(move || serve(loc, cfg, Box::new(rm)));
    let c = client(&socket);
    let deadline = Instant::now() + Duration::from_secs(600);
    while c
        .get(format!("http://localhost{}", routes::SCHEDULER))
        .send()
        .map(|r| !r.status().is_success())
        .unwrap_or(true)
    {
        assert!(Instant::now() < deadline, "daemon did not start");
        std::thread::sleep(Duration::from_millis(20));
    }
    (t, socket)
}

fn stop(socket: &Path, t: std::thread::JoinHandle<anyhow::Result<()>>) {
    let _ = client(socket)
        .post(format!("http://localhost{}", routes::SCHEDULER_CONTROL))
        .json(&arches_api::SchedulerControl::Kill)
        .send();
    t.join().expect("join").expect("clean stop");
}

/// Writes `queued` held-free queued jobs (typical records, too big for the
/// bench's 16 nodes so nothing starts) straight to the store in `home`.
fn fill(home: &Path, queued: u64) {
    let mut store = Store::open(&home.join("arches.db")).expect("store");
    let mut batch = Batch::default();
    for id in 1..=queued {
        let mut job = Job::new(id, "bench", Request::procs(600), Some(3600), 0);
        job.name = format!("job{id}").into();
        let (exec, payload) = typical_exec(id);
        batch
            .upserts
            .push(JobRecord::new(&job, exec, &Default::default()));
        batch.payloads.push((id, payload));
    }
    batch.next_id = Some(queued + 1);
    store.commit(&batch).expect("fill");
}

/// Starts a daemon with the real local backend: one node of `slots`
/// processors on this machine; the bench binary is the job supervisor.
fn start_local(
    home: &Path,
    slots: u32,
) -> (
    std::thread::JoinHandle<anyhow::Result<()>>,
    std::path::PathBuf,
) {
    let mut cfg = config::embedded_default(home);
    cfg.nodes = vec![arches_core::Node::new(
        &arches_server::ident::short_hostname(),
        slots,
        1_000_000_000,
    )];
    let rm = arches_server::rm::build_rm(&cfg).expect("local backend");
    let loc = Locations {
        home: home.to_path_buf(),
        socket: home.join("moab.sock"),
    };
    let socket = loc.socket.clone();
    let t = std::thread::spawn(move || serve(loc, cfg, rm));
    wait_ready(&socket);
    (t, socket)
}

fn wait_ready(socket: &Path) {
    let c = client(socket);
    let deadline = Instant::now() + Duration::from_secs(600);
    while c
        .get(format!("http://localhost{}", routes::SCHEDULER))
        .send()
        .map(|r| !r.status().is_success())
        .unwrap_or(true)
    {
        assert!(Instant::now() < deadline, "daemon did not start");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Section 3: trivial local jobs started per second.
fn local_starts(n: usize) {
    let home = tempfile::tempdir().expect("tempdir");
    let (t, socket) = start_local(home.path(), n as u32);
    let c = client(&socket);
    let dir = home.path().to_string_lossy().into_owned();
    let req = SubmitRequest {
        script: "true\n".into(),
        submit_dir: dir,
        resources: vec!["procs=1,walltime=60".into()],
        hold: true,
        ..SubmitRequest::default()
    };
    let mut ids = Vec::new();
    for _ in 0..n {
        let r = c
            .post(format!("http://localhost{}", routes::SUBMIT))
            .json(&req)
            .send()
            .expect("send");
        assert!(r.status().is_success());
        let s: SubmitResponse = r.json().expect("id");
        ids.push(s.id.to_string());
    }
    let t0 = Instant::now();
    let r = c
        .post(format!("http://localhost{}", routes::JOB_ACTION))
        .json(&arches_api::JobActionRequest {
            jobs: ids,
            action: arches_api::JobAction::Release {
                types: vec!["all".into()],
            },
            select: Default::default(),
        })
        .send()
        .expect("release");
    assert!(r.status().is_success());
    loop {
        let q: QueueView = c
            .get(format!("http://localhost{}", routes::QUEUE))
            .send()
            .expect("showq")
            .json()
            .expect("decode");
        let waiting = q
            .jobs
            .iter()
            .filter(|j| j.state == "Idle" || j.state.ends_with("Hold"))
            .count();
        if waiting == 0 {
            break;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(600),
            "jobs never started"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    let secs = t0.elapsed().as_secs_f64();
    println!(
        "local starts: {n} trivial jobs started in {secs:.2} s = {:.0}/s ({:.2} ms per start)",
        n as f64 / secs,
        secs * 1000.0 / n as f64
    );
    // Let them finish before stopping.
    std::thread::sleep(Duration::from_secs(2));
    stop(&socket, t);
}

fn main() -> std::process::ExitCode {
    let argv: Vec<String> = std::env::args().collect();
    if argv.get(1).map(String::as_str) == Some("__supervise") {
        // The local backend runs each job under `<this binary> __supervise`.
        return arches_rm::local::supervise_main(&argv[2..]);
    }
    run();
    std::process::ExitCode::SUCCESS
}

fn run() {
    let mut args = std::env::args().skip(1).peekable();
    if args.peek().map(String::as_str) == Some("starts") {
        // `bench starts N`: only section 3, in a fresh (small) process: a
        // start forks the daemon, so its size matters.
        local_starts(args.nth(1).and_then(|a| a.parse().ok()).unwrap_or(1000));
        return;
    }
    if args.peek().map(String::as_str) == Some("submit") {
        let socket = std::path::PathBuf::from(args.nth(1).expect("bench submit SOCKET N"));
        let n: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(100_000);
        api_submissions(&socket, n);
        return;
    }
    if args.peek().map(String::as_str) == Some("checkjob") {
        let bin =
            std::path::PathBuf::from(args.nth(1).expect("bench checkjob BIN_DIR CALLS MAX_ID"));
        let calls: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(500);
        let max_id: u64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(100_000);
        checkjob_binary(&bin, calls, max_id);
        return;
    }
    if args.peek().map(String::as_str) == Some("fill") {
        // `bench fill HOME N`: only write the store, for measuring the real
        // `moab` binary on it.
        let home = std::path::PathBuf::from(args.nth(1).expect("bench fill HOME N"));
        let n = args.next().and_then(|a| a.parse().ok()).unwrap_or(100_000);
        std::fs::create_dir_all(&home).expect("home");
        fill(&home, n);
        println!(
            "{n} queued jobs written to {}",
            home.join("arches.db").display()
        );
        return;
    }
    let total: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(4000);
    let queued: u64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(100_000);
    let starts: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(1000);

    // 1. Submissions.
    let home = tempfile::tempdir().expect("tempdir");
    let (t, socket) = start(home.path());
    let per = total / 16;
    let t0 = Instant::now();
    let workers: Vec<_> = (0..16)
        .map(|_| {
            let socket = socket.clone();
            let dir = home.path().to_string_lossy().into_owned();
            std::thread::spawn(move || {
                let c = client(&socket);
                let req = SubmitRequest {
                    script: "sleep 3600\n".into(),
                    submit_dir: dir,
                    resources: vec!["procs=1,walltime=1:00:00".into()],
                    ..SubmitRequest::default()
                };
                for _ in 0..per {
                    let r = c
                        .post(format!("http://localhost{}", routes::SUBMIT))
                        .json(&req)
                        .send()
                        .expect("send");
                    assert!(r.status().is_success());
                    let _: SubmitResponse = r.json().expect("id");
                }
            })
        })
        .collect();
    for w in workers {
        w.join().expect("worker");
    }
    let secs = t0.elapsed().as_secs_f64();
    println!(
        "submit: {} durable submissions by 16 clients in {secs:.2} s = {:.0}/s",
        per * 16,
        (per * 16) as f64 / secs
    );
    stop(&socket, t);

    // 2. Reads with a large queue (jobs written straight to the store).
    let home = tempfile::tempdir().expect("tempdir");
    fill(home.path(), queued);
    let t1 = Instant::now();
    let (t, socket) = start(home.path());
    println!(
        "startup with {queued} queued jobs: {:.2} s, {}",
        t1.elapsed().as_secs_f64(),
        memory()
    );
    let c = client(&socket);
    let mut times = Vec::new();
    for _ in 0..10 {
        let t = Instant::now();
        let q: QueueView = c
            .get(format!("http://localhost{}", routes::QUEUE))
            .send()
            .expect("showq")
            .json()
            .expect("decode");
        times.push(t.elapsed().as_secs_f64() * 1000.0);
        assert_eq!(q.jobs.len() as u64, queued);
    }
    report("showq (all jobs, decoded)", &mut times);
    let mut times = Vec::new();
    let mut size = 0;
    for _ in 0..10 {
        let t = Instant::now();
        let body = c
            .get(format!("http://localhost{}", routes::QUEUE))
            .send()
            .expect("showq")
            .bytes()
            .expect("body");
        times.push(t.elapsed().as_secs_f64() * 1000.0);
        size = body.len();
    }
    report(
        &format!("showq (all jobs, {size} bytes, not decoded)"),
        &mut times,
    );
    let mut times = Vec::new();
    for i in 0..200u64 {
        let req = JobsRequest {
            ids: vec![(1 + i * 97 % queued).to_string()],
            completed: false,
            ..Default::default()
        };
        let t = Instant::now();
        let r = c
            .post(format!("http://localhost{}", routes::JOBS_DETAIL))
            .json(&req)
            .send()
            .expect("checkjob");
        assert!(r.status().is_success());
        let _ = r.bytes();
        times.push(t.elapsed().as_secs_f64() * 1000.0);
    }
    report("checkjob (one job)", &mut times);
    println!("after showq and checkjob: {}", memory());
    let s: arches_api::SchedulerView = c
        .get(format!("http://localhost{}", routes::SCHEDULER))
        .send()
        .expect("mdiag")
        .json()
        .expect("decode");
    println!(
        "scheduler iterations: {} avg {:.1} ms max {:.1} ms",
        s.iterations, s.avg_iteration_ms, s.max_iteration_ms
    );
    stop(&socket, t);

    // 3. Local starts.
    local_starts(starts);
}

/// `bench submit`: N eligible jobs through the API, 16 connections.
fn api_submissions(socket: &Path, n: usize) {
    let per = n.div_ceil(16);
    let t0 = Instant::now();
    let workers: Vec<_> = (0..16)
        .map(|w| {
            let socket = socket.to_path_buf();
            let count = per.min(n.saturating_sub(w * per));
            std::thread::spawn(move || {
                let c = client(&socket);
                let dir = std::env::temp_dir().to_string_lossy().into_owned();
                let req = SubmitRequest {
                    script: "#!/bin/sh\n#PBS -l walltime=1:00:00\necho hello\nsleep 10\n".into(),
                    submit_dir: dir,
                    resources: vec!["walltime=1:00:00".into(), "procs=1".into()],
                    env: vec![
                        ("PATH".into(), "/usr/bin:/bin".into()),
                        ("HOME".into(), "/root".into()),
                    ],
                    submit_args: "-l procs=1".into(),
                    submit_host: "bench".into(),
                    ..SubmitRequest::default()
                };
                for _ in 0..count {
                    let r = c
                        .post(format!("http://localhost{}", routes::SUBMIT))
                        .json(&req)
                        .send()
                        .expect("send");
                    assert!(r.status().is_success(), "{:?}", r.text());
                    let _: SubmitResponse = r.json().expect("id");
                }
            })
        })
        .collect();
    for w in workers {
        w.join().expect("worker");
    }
    let secs = t0.elapsed().as_secs_f64();
    println!(
        "submit: {n} durable submissions by 16 connections in {secs:.1} s = {:.0}/s",
        n as f64 / secs
    );
}

/// `bench checkjob`: the real `checkjob` binary, start to exit.
fn checkjob_binary(bin: &Path, calls: usize, max_id: u64) {
    let exe = bin.join("checkjob");
    let mut times = Vec::with_capacity(calls);
    // A fixed pseudo-random sequence of ids (no dependency needed).
    let mut x: u64 = 0x2545_f491_4f6c_dd1d;
    for _ in 0..calls {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let id = 1 + x % max_id.max(1);
        let t = Instant::now();
        let out = std::process::Command::new(&exe)
            .arg(id.to_string())
            .output()
            .expect("run checkjob");
        times.push(t.elapsed().as_secs_f64() * 1000.0);
        assert!(
            out.status.success(),
            "checkjob {id}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    times.sort_by(|a, b| a.total_cmp(b));
    let q = |p: f64| times[((times.len() as f64 * p) as usize).min(times.len() - 1)];
    println!(
        "checkjob (real binary, start to exit), {calls} calls: p50 {:.1} ms, p90 {:.1} ms, p99 {:.1} ms, max {:.1} ms",
        q(0.5),
        q(0.9),
        q(0.99),
        times[times.len() - 1]
    );
}

/// What `msub` typically stores for a job: a short script and the
/// environment `jobspec` builds (no `-V`).
fn typical_exec(id: u64) -> (ExecRecord, Payload) {
    let mut env: Vec<(String, String)> = [
        ("HOME", "/home/bench"),
        ("USER", "bench"),
        ("LOGNAME", "bench"),
        ("SHELL", "/bin/bash"),
        ("PATH", "/usr/local/bin:/usr/bin:/bin"),
        ("PBS_O_WORKDIR", "/home/bench/work"),
        ("PBS_O_HOST", "login1"),
        ("PBS_QUEUE", "batch"),
        ("MOAB_CLASS", "batch"),
        ("MOAB_USER", "bench"),
        ("MOAB_GROUP", "bench"),
        ("MOAB_ACCOUNT", ""),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    for k in ["PBS_JOBID", "MOAB_JOBID"] {
        env.push((k.to_string(), id.to_string()));
    }
    for k in ["PBS_JOBNAME", "MOAB_JOBNAME"] {
        env.push((k.to_string(), format!("job{id}")));
    }
    let payload = Payload {
        script: "#!/bin/sh\n#PBS -l walltime=1:00:00\ncd $PBS_O_WORKDIR\n./simulate --steps 1000 input.dat\n".into(),
        env,
    };
    let exec = ExecRecord {
        executable: payload.executable(),
        workdir: "/home/bench/work".into(),
        stdout: format!("/home/bench/work/job{id}.o{id}"),
        stderr: format!("/home/bench/work/job{id}.e{id}"),
        submit_dir: "/home/bench/work".into(),
        submit_args: "-l walltime=1:00:00 job.sh".into(),
        submit_host: "login1".into(),
        ..ExecRecord::default()
    };
    (exec, payload)
}

/// This process's resident memory now and its peak (the daemon runs in
/// process; the clients' share is small).
fn memory() -> String {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse::<u64>().ok())
            .map_or("?".to_string(), |kb| format!("{} MB", kb / 1024))
    };
    format!("RSS {} (peak {})", field("VmRSS:"), field("VmHWM:"))
}

fn report(what: &str, times: &mut [f64]) {
    times.sort_by(|a, b| a.total_cmp(b));
    let med = times[times.len() / 2];
    let max = times[times.len() - 1];
    println!(
        "{what}: median {med:.1} ms, max {max:.1} ms over {} calls",
        times.len()
    );
}
