//! The read-only web dashboard on the daemon's TCP listener: every page
//! renders what every user may see (and never a script, an environment, a
//! job name or a submit argument), is self-contained (nothing loaded from
//! elsewhere), refreshes its content (`?partial=1`), pages long lists, and
//! renders in headless Chromium (a screenshot of each page, content asserted
//! on the DOM after the page's script ran).
//!
//! Chromium is /usr/bin/chromium (`.ci/run` installs it); without it the
//! Chromium part fails when `CI` is set and is skipped with a note
//! otherwise. Screenshots are kept in `<target>/tmp/dashboard/`.

mod common;
mod web_common;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{bin, text};
use web_common::{daemon_with_listener, get, listener_addr, listener_addr_in};

const CHROMIUM: &str = "/usr/bin/chromium";
const PAGES: [&str; 5] = ["/", "/queue", "/nodes", "/reservations", "/plan"];

/// The page at `path`, checked to be a whole self-contained document.
fn page(addr: SocketAddr, path: &str) -> String {
    let r = get(addr, path);
    assert_eq!(r.status, 200, "{path}: {r:?}");
    assert!(
        r.header("content-type")
            .is_some_and(|c| c.starts_with("text/html")),
        "{path}: {:?}",
        r.headers
    );
    let html = r.body;
    assert!(html.starts_with("<!DOCTYPE html>"), "{path}: {html}");
    for external in ["http://", "https://", "src=", "@import", "url("] {
        assert!(
            !html.contains(external),
            "{path} refers to something else ({external}):\n{html}"
        );
    }
    html
}

fn chromium_available() -> bool {
    if Path::new(CHROMIUM).exists() {
        return true;
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "{CHROMIUM} is missing: CI must install it (apt-get install -y chromium) for the dashboard check"
    );
    eprintln!("note: dashboard Chromium check skipped: {CHROMIUM} not installed (not in CI)");
    false
}

/// Runs headless Chromium on `url` with `args`; returns stdout.
fn chromium(dir: &Path, url: &str, args: &[String]) -> String {
    let profile = tempfile::tempdir_in(dir).expect("profile");
    let mut child = Command::new(CHROMIUM)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
            "--window-size=1280,1000",
            // Let the page's refresh script run once before the capture.
            "--virtual-time-budget=7000",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .args(args)
        .arg(url)
        .env("HOME", dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start chromium");
    let deadline = Instant::now() + Duration::from_secs(90);
    loop {
        if child.try_wait().expect("wait chromium").is_some() {
            break;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("chromium did not finish within 90 s on {url}");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let out = child.wait_with_output().expect("chromium output");
    text(&out.stdout)
}

#[test]
fn dashboard_shows_what_everyone_may_see_and_renders_in_chromium() {
    let (d, addr) = daemon_with_listener("");
    let host = {
        let n = d.run("checknode", &["ALL"]);
        text(&n.stdout)
            .lines()
            .find_map(|l| l.strip_prefix("node ").map(|s| s.trim().to_string()))
            .expect("a node")
    };
    // A running job, a held one; the name, the script and the variables are
    // private to their owner.
    let secret = "SECRET_MARKER_4711";
    let running = d.submit(
        &format!("#!/bin/sh\n# {secret}\nsleep 300\n"),
        &[
            "-N",
            "privname",
            "-v",
            &format!("MYVAR={secret}"),
            "-l",
            "walltime=10:00",
        ],
    );
    let held = d.submit(
        &format!("#!/bin/sh\necho {secret}\n"),
        &["-h", "-N", "privname2", "-l", "walltime=5:00"],
    );
    d.wait_state(running, "Running", Duration::from_secs(30));

    let mut htmls = Vec::new();
    for p in PAGES {
        let html = page(addr, p);
        for private in [secret, "privname", "MYVAR"] {
            assert!(!html.contains(private), "{p} shows {private}:\n{html}");
        }
        assert!(html.contains("<script>"), "{p}: no refresh");
        htmls.push(html);
    }
    let [overview, queue, nodes, resv, plan] = [0, 1, 2, 3, 4].map(|i| htmls[i].clone());
    assert!(
        overview.contains("Cluster overview") && overview.contains("<svg"),
        "{overview}"
    );
    assert!(
        overview.contains("Utilisation over time") && overview.contains("Queue length over time")
    );
    assert!(queue.contains(&format!("<td>{running}</td>")), "{queue}");
    assert!(queue.contains(&format!("<td>{held}</td>")), "{queue}");
    assert!(
        queue.contains("Running") && queue.contains("Hold"),
        "{queue}"
    );
    assert!(nodes.contains(&format!("<td>{host}</td>")), "{nodes}");
    assert!(resv.contains(&format!("<td>{running}</td>")), "{resv}");
    assert!(
        plan.contains("Gantt chart") && plan.contains("<rect"),
        "{plan}"
    );
    assert!(plan.contains("Backfill windows"), "{plan}");
    // The live refresh fetches the content alone.
    let partial = get(addr, "/queue?partial=1").body;
    assert!(!partial.contains("<html") && partial.contains(&format!("<td>{running}</td>")));

    if !chromium_available() {
        return;
    }
    let shots = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("dashboard");
    std::fs::create_dir_all(&shots).expect("screenshot dir");
    let work = tempfile::tempdir().expect("tempdir");
    for p in PAGES {
        let url = format!("http://{addr}{p}");
        let name = if p == "/" { "overview" } else { &p[1..] };
        let png = shots.join(format!("{name}.png"));
        let _ = std::fs::remove_file(&png);
        chromium(
            work.path(),
            &url,
            &[format!("--screenshot={}", png.display())],
        );
        let bytes = std::fs::read(&png).unwrap_or_else(|e| panic!("no screenshot of {p}: {e}"));
        assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "{p}: not a PNG");
        let width = u32::from_be_bytes(bytes[16..20].try_into().expect("width"));
        assert!(width >= 1000, "{p}: {width} px wide");
        assert!(
            bytes.len() > 15_000,
            "{p}: the screenshot looks blank ({} bytes)",
            bytes.len()
        );
        // The DOM after the refresh script ran still has the content.
        let dom = chromium(work.path(), &url, &["--dump-dom".to_string()]);
        assert!(dom.contains("Arches dashboard"), "{p}: {dom}");
        match p {
            "/" => assert!(
                dom.contains("Cluster overview") && dom.contains("<svg"),
                "{dom}"
            ),
            "/queue" => assert!(dom.contains(&format!("<td>{running}</td>")), "{dom}"),
            "/nodes" => assert!(dom.contains(&format!("<td>{host}</td>")), "{dom}"),
            "/reservations" => assert!(dom.contains(&format!("<td>{running}</td>")), "{dom}"),
            _ => assert!(dom.contains("Gantt chart"), "{dom}"),
        }
        assert!(!dom.contains(secret), "{p}: {dom}");
    }
    let _ = d.run("canceljob", &[&running.to_string()]);
}

/// The rows of the overview's table of recent intervals: (interval start,
/// in progress, the row's cells).
fn interval_rows(html: &str) -> Vec<(i64, bool, String)> {
    html.split("<tr data-start=\"")
        .skip(1)
        .map(|r| {
            let (start, rest) = r.split_once('"').expect("data-start");
            let row = rest.split("</tr>").next().unwrap_or("").to_string();
            let current = row.starts_with(" class=\"current\"");
            (start.parse().expect("epoch"), current, row)
        })
        .collect()
}

/// The average running jobs of a row (the fourth number).
fn avg_running(row: &str) -> f64 {
    row.split("<td class=\"n\">")
        .nth(3)
        .and_then(|c| c.split('<').next())
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no AVG RUNNING in {row}"))
}

/// The utilisation and queue-length charts plot the statistics profile's
/// kept intervals (PROFILEDURATION), stored with the accounting: after a
/// restart the overview still shows the intervals from before it.
#[test]
fn charts_plot_the_kept_intervals_and_survive_a_restart() {
    let (mut d, addr) = daemon_with_listener("PROFILEDURATION 00:00:02\nRMPOLLINTERVAL 00:00:01\n");
    let job = d.submit("#!/bin/sh\nsleep 300\n", &["-l", "walltime=10:00"]);
    d.wait_state(job, "Running", Duration::from_secs(30));
    // Closed intervals in which the job ran.
    let mut before = Vec::new();
    common::wait_until("two closed intervals with the job running", || {
        let html = page(addr, "/");
        before = interval_rows(&html)
            .into_iter()
            .filter(|(_, current, row)| !current && avg_running(row) > 0.0)
            .collect();
        before.len() >= 2
    });
    let overview = page(addr, "/");
    assert!(
        overview.contains("Average per 00:00:02 interval (PROFILEDURATION)"),
        "{overview}"
    );
    assert!(overview.contains("<polyline"), "{overview}");
    let rows = interval_rows(&overview);
    assert!(
        rows.first().is_some_and(|r| r.1),
        "the newest row is the interval in progress: {overview}"
    );
    assert!(rows.iter().filter(|r| r.1).count() == 1, "{overview}");

    d.stop().expect("stopped");
    d.spawn();
    let addr = listener_addr(&d);
    let after = interval_rows(&page(addr, "/"));
    for (start, _, row) in &before {
        assert!(
            after.iter().any(|(s, c, r)| s == start && !c && r == row),
            "interval {start} ({row}) lost by the restart: {after:?}"
        );
    }
    // And new intervals keep being added after it.
    let last_before = before.iter().map(|r| r.0).max().expect("an interval");
    common::wait_until("a closed interval after the restart", || {
        interval_rows(&page(addr, "/"))
            .iter()
            .any(|(s, c, _)| !c && *s > last_before + 2)
    });
    let _ = d.run("canceljob", &[&job.to_string()]);
}

/// A served simulation with thousands of queued jobs: the queue is paged
/// (100 rows a page, showq's order), and a page past the end shows the last.
#[test]
fn a_long_queue_is_paged() {
    let dir = tempfile::tempdir().expect("tempdir");
    let jobs: usize = 2_450;
    let mut w = String::new();
    for i in 1..=jobs {
        w.push_str(&format!(
            "{{\"id\": {i}, \"submit\": {}, \"procs\": 4, \"walltime\": 3600, \"runtime\": 1800, \"user\": \"u{}\"}}\n",
            i % 7,
            i % 13
        ));
    }
    std::fs::write(dir.path().join("w.jsonl"), w).expect("workload");
    std::fs::write(dir.path().join("moab.cfg"), "METRICSPORT 0\n").expect("cfg");
    let socket = dir.path().join("sim.sock");
    let log = std::fs::File::create(dir.path().join("daemon.stderr")).expect("log");
    let mut child = Command::new(bin("moab"))
        .args([
            "simulate",
            "--procs",
            "8",
            "--until",
            "60",
            "--serve",
            "--summary",
        ])
        .arg(dir.path().join("s.json"))
        .arg("--workload")
        .arg(dir.path().join("w.jsonl"))
        .arg("--config")
        .arg(dir.path().join("moab.cfg"))
        .arg("--socket")
        .arg(&socket)
        .env_clear()
        .envs(common::base_env(dir.path(), &socket))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .expect("moab simulate --serve");
    struct Kill<'a>(&'a mut std::process::Child);
    impl Drop for Kill<'_> {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let guard = Kill(&mut child);
    let addr = listener_addr_in(&dir.path().join("daemon.stderr"));
    let first = page(addr, "/queue");
    let pages = jobs.div_ceil(100);
    assert!(
        first.contains(&format!("page 1 of {pages} &middot; {jobs} jobs")),
        "{first}"
    );
    // showq's order: the 2 running jobs (8 procs / 4), then the queue by priority.
    assert_eq!(first.matches("<tr><td>").count(), 100, "{first}");
    let last = page(addr, &format!("/queue?page={}", pages + 5));
    assert!(last.contains(&format!("page {pages} of {pages}")), "{last}");
    assert_eq!(last.matches("<tr><td>").count(), jobs % 100, "{last}");
    drop(guard);
}
