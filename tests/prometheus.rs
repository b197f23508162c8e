//! A real Prometheus server scrapes the daemon's `/metrics` and its query
//! API shows the metrics, and shows them change as jobs run: jobs started,
//! iterations, store commits, resource-manager polls, queue waits, API
//! requests, and a job really backfilled.
//!
//! The Prometheus binary comes from `ARCHES_PROMETHEUS` (`.ci/run` installs
//! the Debian package `prometheus` and sets it to /usr/bin/prometheus).
//! Unset, the test fails when `CI` is set and is skipped with a note
//! otherwise (the pattern of `ARCHES_CLIENTS_VENV`).

mod common;
mod web_common;

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use web_common::{daemon_with_listener, try_get};

fn prometheus_binary() -> Option<PathBuf> {
    match std::env::var_os("ARCHES_PROMETHEUS") {
        Some(p) => {
            let p = PathBuf::from(p);
            assert!(
                p.is_file(),
                "ARCHES_PROMETHEUS={} is not a file (apt-get install prometheus)",
                p.display()
            );
            Some(p)
        }
        None if std::env::var_os("CI").is_some() => panic!(
            "CI is set but ARCHES_PROMETHEUS is not: install the Debian package prometheus and \
             export ARCHES_PROMETHEUS=/usr/bin/prometheus (as .ci/run does)"
        ),
        None => {
            eprintln!(
                "note: skipping the Prometheus scrape test: ARCHES_PROMETHEUS is unset \
                 (apt-get install prometheus; ARCHES_PROMETHEUS=/usr/bin/prometheus)"
            );
            None
        }
    }
}

/// The Prometheus server, stopped on drop.
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A free loopback port (bound and released).
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

/// The value of an instant query's first sample, if any.
fn query(prom: std::net::SocketAddr, q: &str) -> Option<f64> {
    let enc: String = q
        .bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'_' | b'.' | b'-' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect();
    let r = try_get(prom, &format!("/api/v1/query?query={enc}"))?;
    if r.status != 200 {
        return None;
    }
    let v: serde_json::Value = serde_json::from_str(&r.body).ok()?;
    assert_eq!(v["status"], "success", "{}", r.body);
    v["data"]["result"][0]["value"][1]
        .as_str()
        .and_then(|s| s.parse().ok())
}

/// Polls `q` until `ok(value)` (at most 90 s, the scrapes are 1 s apart).
fn wait_for(prom: std::net::SocketAddr, q: &str, ok: impl Fn(f64) -> bool) -> f64 {
    let deadline = Instant::now() + Duration::from_secs(90);
    loop {
        if let Some(v) = query(prom, q).filter(|v| ok(*v)) {
            return v;
        }
        assert!(
            Instant::now() < deadline,
            "Prometheus never gave a matching value for {q} (last: {:?})",
            query(prom, q)
        );
        std::thread::sleep(Duration::from_millis(250));
    }
}

#[test]
fn prometheus_scrapes_the_daemon_and_sees_jobs_run() {
    let Some(prometheus) = prometheus_binary() else {
        return;
    };
    // Two 2-processor nodes, so that a job can be backfilled below.
    let (d, target) = daemon_with_listener("NODECFG[n1] PROCS=2\nNODECFG[n2] PROCS=2\n");
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(
        dir.path().join("prometheus.yml"),
        format!(
            "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:\n  - job_name: arches\n    static_configs:\n      - targets: ['{target}']\n"
        ),
    )
    .expect("config");
    let port = free_port();
    let log = std::fs::File::create(dir.path().join("prometheus.log")).expect("log");
    let child = Command::new(&prometheus)
        .arg(format!(
            "--config.file={}",
            dir.path().join("prometheus.yml").display()
        ))
        .arg(format!(
            "--storage.tsdb.path={}",
            dir.path().join("data").display()
        ))
        .arg(format!("--web.listen-address=127.0.0.1:{port}"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .expect("start prometheus");
    let _server = Server(child);
    let prom: std::net::SocketAddr = format!("127.0.0.1:{port}").parse().expect("addr");
    let log = || std::fs::read_to_string(dir.path().join("prometheus.log")).unwrap_or_default();

    // The target is up and the metrics are there.
    let deadline = Instant::now() + Duration::from_secs(90);
    while query(prom, "up{job=\"arches\"}") != Some(1.0) {
        assert!(
            Instant::now() < deadline,
            "the target never came up:\n{}",
            log()
        );
        std::thread::sleep(Duration::from_millis(250));
    }
    for q in [
        "arches_jobs_started_total",
        "arches_iteration_duration_seconds_count",
        "arches_utilization_ratio",
        "arches_build_info",
        "sum(arches_api_requests_total{listener=\"socket\"})",
        "arches_store_commit_duration_seconds_count",
        "arches_store_commit_duration_seconds_sum",
        "arches_rm_poll_duration_seconds_count",
        "arches_rm_poll_duration_seconds_sum",
        "arches_jobs_backfilled_total",
    ] {
        wait_for(prom, q, |_| true);
    }
    let started = wait_for(prom, "arches_jobs_started_total", |_| true);
    let iterations = wait_for(prom, "arches_iteration_duration_seconds_count", |_| true);
    let commits = wait_for(prom, "arches_store_commit_duration_seconds_count", |_| true);
    let polls = wait_for(prom, "arches_rm_poll_duration_seconds_count", |_| true);
    wait_for(prom, "arches_jobs_backfilled_total", |v| v == 0.0);

    // Jobs run; Prometheus sees the counts move.
    let ids: Vec<u64> = (0..3)
        .map(|_| d.submit("#!/bin/sh\nsleep 1\n", &["-l", "walltime=60"]))
        .collect();
    for id in &ids {
        d.wait_state(*id, "Completed", Duration::from_secs(60));
    }
    wait_for(prom, "arches_jobs_started_total", |v| v >= started + 3.0);
    wait_for(prom, "arches_iteration_duration_seconds_count", |v| {
        v > iterations
    });
    wait_for(prom, "sum(arches_jobs{state=\"Completed\"})", |v| v >= 3.0);
    wait_for(prom, "arches_job_queue_wait_seconds_count", |v| v >= 3.0);
    wait_for(
        prom,
        "sum(arches_api_requests_total{listener=\"socket\",route=\"/v1/jobs\",status=\"200\"})",
        |v| v >= 3.0,
    );
    // Submissions and completions were committed; the backend was polled.
    wait_for(prom, "arches_store_commit_duration_seconds_count", |v| {
        v >= commits + 3.0
    });
    wait_for(prom, "arches_rm_poll_duration_seconds_count", |v| v > polls);
    // Their latency histograms have buckets Prometheus takes quantiles of.
    for h in [
        "arches_store_commit_duration_seconds_bucket",
        "arches_rm_poll_duration_seconds_bucket",
    ] {
        wait_for(prom, &format!("histogram_quantile(0.5, {h})"), |v| {
            v.is_finite() && v >= 0.0
        });
    }

    // A job backfilled: a fills n1 for a minute, b one processor of n2 for
    // two; the 4-processor job is reserved at b's end and a short job
    // backfills into the idle processor.
    let long = Duration::from_secs(30);
    let a = d.submit("sleep 300\n", &["-l", "nodes=1:ppn=2,walltime=00:01:00"]);
    let b = d.submit("sleep 300\n", &["-l", "nodes=1:ppn=1,walltime=00:02:00"]);
    d.wait_state(a, "Running", long);
    d.wait_state(b, "Running", long);
    let big = d.submit("sleep 1\n", &["-l", "procs=4,walltime=00:01:00"]);
    d.wait_checkjob(big, "a reservation", long, |o| o.contains("Reservation '"));
    let short = d.submit("sleep 300\n", &["-l", "nodes=1:ppn=1,walltime=00:00:30"]);
    d.wait_state(short, "Running", long);
    wait_for(prom, "arches_jobs_backfilled_total", |v| v == 1.0);
    for id in [a, b, big, short] {
        let _ = d.run("canceljob", &[&id.to_string()]);
    }
}
