//! The `--report` HTML renders in a real browser: `moab simulate --report`
//! writes the page, headless Chromium screenshots it, and the PNG must be a
//! real picture (not blank). Runs when `/usr/bin/chromium` exists; in CI
//! (`CI=true`) a missing Chromium is a failure, elsewhere the test is skipped
//! with a message.

mod common;

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use common::{bin, text};

const CHROMIUM: &str = "/usr/bin/chromium";

/// A small workload with waits, backfill and several users.
fn workload() -> String {
    let mut out = String::new();
    for i in 1..=40u32 {
        let procs = 1 + (i * 7) % 8;
        let runtime = 60 + (i * 37) % 600;
        out.push_str(&format!(
            "{{\"id\": {i}, \"submit\": {}, \"procs\": {procs}, \"walltime\": {}, \"runtime\": {runtime}, \"user\": \"user{}\"}}\n",
            i * 20,
            runtime * 2,
            i % 4
        ));
    }
    out
}

#[test]
fn html_report_renders_in_headless_chromium() {
    if !Path::new(CHROMIUM).exists() {
        let in_ci = std::env::var("CI").is_ok_and(|v| v.eq_ignore_ascii_case("true"));
        assert!(
            !in_ci,
            "{CHROMIUM} is missing: CI must install it (apt-get install -y chromium) \
             for the report render check"
        );
        eprintln!("skipped: {CHROMIUM} not installed (not in CI)");
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let wl = dir.path().join("w.jsonl");
    std::fs::write(&wl, workload()).expect("write workload");
    let html = dir.path().join("report.html");
    let out = Command::new(bin("moab"))
        .args(["simulate", "--procs", "8", "--summary", "-", "--workload"])
        .arg(&wl)
        .arg("--report")
        .arg(&html)
        .args(["--gantt-from", "100", "--gantt-to", "600"])
        .env_clear()
        .output()
        .expect("run moab simulate");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let png = dir.path().join("shot.png");
    let profile = dir.path().join("profile");
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
            "--window-size=1200,900",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg(format!("--screenshot={}", png.display()))
        .arg(format!("file://{}", html.display()))
        .env("HOME", dir.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("start chromium");
    let deadline = std::time::Instant::now() + Duration::from_secs(90);
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait chromium") {
            break s;
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("chromium did not finish within 90 s");
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let bytes = std::fs::read(&png).unwrap_or_else(|e| {
        let mut err = String::new();
        if let Some(mut s) = child.stderr.take() {
            let _ = std::io::Read::read_to_string(&mut s, &mut err);
        }
        panic!("no screenshot ({status}): {e}\n{err}")
    });
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "not a PNG");
    let width = u32::from_be_bytes(bytes[16..20].try_into().expect("width"));
    let height = u32::from_be_bytes(bytes[20..24].try_into().expect("height"));
    assert!(width >= 800 && height >= 600, "{width}x{height}");
    // A blank page compresses to a few kB; charts and tables do not.
    assert!(
        bytes.len() > 20_000,
        "screenshot looks blank ({} bytes)",
        bytes.len()
    );
}
