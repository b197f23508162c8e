//! `moab simulate` end to end through the real binary: a JSONL workload and a
//! slice of a real trace, with the summary and per-job CSV checked.

mod common;

use std::process::Command;

use common::{bin, text};

fn simulate(args: &[&str]) -> (String, String, bool) {
    let out = Command::new(bin("moab"))
        .arg("simulate")
        .args(args)
        .env_clear()
        .output()
        .expect("run moab simulate");
    (text(&out.stdout), text(&out.stderr), out.status.success())
}

#[test]
fn jsonl_workload_replays_with_backfill_and_reservation() {
    let dir = tempfile::tempdir().expect("tempdir");
    let wl = dir.path().join("w.jsonl");
    // 4 processors: job 1 holds 3 until t=100; job 2 (4 procs) must wait and
    // gets the reservation at 100; job 3 (1 proc, 50 s) backfills at t=2.
    std::fs::write(
        &wl,
        concat!(
            "{\"id\": 1, \"submit\": 0, \"procs\": 3, \"walltime\": 100, \"runtime\": 100}\n",
            "{\"id\": 2, \"submit\": 1, \"procs\": 4, \"walltime\": 100, \"runtime\": 100}\n",
            "{\"id\": 3, \"submit\": 2, \"procs\": 1, \"walltime\": 50, \"runtime\": 50}\n",
        ),
    )
    .expect("write workload");
    let csv = dir.path().join("jobs.csv");
    let (out, err, ok) = simulate(&[
        "--workload",
        wl.to_str().unwrap(),
        "--procs",
        "4",
        "--summary",
        "-",
        "--jobs-csv",
        csv.to_str().unwrap(),
    ]);
    assert!(ok, "{err}");
    let summary: serde_json::Value =
        serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    assert_eq!(summary["jobs"], 3);
    assert_eq!(summary["backfilled_jobs"], 1);
    assert_eq!(summary["max_wait_s"], 99);
    let rows = std::fs::read_to_string(&csv).expect("csv");
    let mut lines = rows.lines();
    assert!(lines
        .next()
        .unwrap()
        .starts_with("job_id,submit,start,end,procs,walltime,runtime,wait,backfilled"));
    let starts: Vec<(String, String)> = lines
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (f[0].to_string(), f[2].to_string())
        })
        .collect();
    assert!(starts.contains(&("2".into(), "100".into())), "{rows}");
    assert!(starts.contains(&("3".into(), "2".into())), "{rows}");
}

#[test]
fn real_trace_replay_is_deterministic() {
    let trace = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/data/traces/KTH-SP2-1996-2.swf.gz"
    );
    let run = || {
        simulate(&[
            "--trace",
            trace,
            "--min-job-id",
            "15",
            "--until",
            "2000000",
            "--summary",
            "-",
        ])
    };
    let (a, err, ok) = run();
    assert!(ok, "{err}");
    let (b, _, _) = run();
    let strip = |s: &str| {
        let mut v: serde_json::Value = serde_json::from_str(s).expect("json");
        v.as_object_mut().expect("object").remove("sim_wall_s");
        v
    };
    assert_eq!(strip(&a), strip(&b), "same trace, same schedule");
    assert!(strip(&a)["jobs"].as_u64().unwrap() > 100);
}

#[test]
fn bad_input_is_a_clear_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    let wl = dir.path().join("bad.jsonl");
    std::fs::write(
        &wl,
        "{\"id\": 1, \"submit\": 0, \"procs\": 1, \"walltime\": 10, \"runtime\": 5}\nnot json\n",
    )
    .unwrap();
    let (_, err, ok) = simulate(&["--workload", wl.to_str().unwrap(), "--procs", "2"]);
    assert!(!ok);
    assert!(err.contains("bad.jsonl:2"), "{err}");
}

#[test]
fn capped_jobs_and_skipped_lines_are_reported() {
    let dir = tempfile::tempdir().expect("tempdir");
    let swf = dir.path().join("t.swf");
    std::fs::write(
        &swf,
        "1 0 -1 100 16 -1 -1 16 200 -1 1 1 1 -1 1 -1 -1 -1\n\
         2 5 -1 100 4 -1 -1 4 200 -1 1 1 1 -1 1 -1 -1 -1\n\
         this line is not SWF\n",
    )
    .expect("write trace");
    let (out, err, ok) = simulate(&[
        "--trace",
        swf.to_str().unwrap(),
        "--procs",
        "8",
        "--skip-malformed",
    ]);
    assert!(ok, "{err}");
    let summary: serde_json::Value =
        serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    assert_eq!(summary["jobs"], 2);
    assert_eq!(summary["capped_jobs"], 1);
    assert_eq!(summary["malformed_lines"], 1);
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(
        lines,
        vec![
            "moab simulate: skipped 1 malformed input lines",
            "moab simulate: 1 job(s) asked for more than the machine's 8 processors and were capped at 8",
        ],
        "{err}"
    );
    // An empty trace with no header and no --procs: the empty summary.
    std::fs::write(&swf, "").expect("truncate");
    let (out, err, ok) = simulate(&["--trace", swf.to_str().unwrap()]);
    assert!(ok, "{err}");
    let summary: serde_json::Value = serde_json::from_str(&out).expect("json");
    assert_eq!(summary["jobs"], 0);
}

/// Runs `moab simulate ARGS` with stderr on a terminal (util-linux
/// `script` allocates the pseudo-terminal) and returns what the terminal
/// showed; `None` when `script` is missing outside CI.
fn simulate_on_a_terminal(dir: &std::path::Path, args: &str) -> Option<String> {
    let script = std::path::Path::new("/usr/bin/script");
    if !script.exists() {
        let in_ci = std::env::var("CI").is_ok_and(|v| v.eq_ignore_ascii_case("true"));
        assert!(!in_ci, "/usr/bin/script (util-linux) is missing");
        eprintln!("skipped: /usr/bin/script not installed");
        return None;
    }
    let command = format!("{} simulate {args}", bin("moab").display());
    let out = Command::new(script)
        .args(["-qec", &command, "/dev/null"])
        .current_dir(dir)
        .env_clear()
        .env("HOME", dir)
        .env("PATH", "/usr/bin:/bin")
        .output()
        .expect("run script");
    assert!(out.status.success(), "{}", text(&out.stderr));
    Some(text(&out.stdout))
}

#[test]
fn progress_bar_shows_on_a_terminal_also_with_until() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut wl = String::new();
    for i in 1..=20 {
        wl.push_str(&format!(
            "{{\"id\": {i}, \"submit\": {}, \"procs\": 2, \"walltime\": 100, \"runtime\": 50}}\n",
            i * 10
        ));
    }
    std::fs::write(dir.path().join("w.jsonl"), wl).expect("write workload");
    let Some(shown) =
        simulate_on_a_terminal(dir.path(), "--workload w.jsonl --procs 4 --summary s.json")
    else {
        return;
    };
    assert!(
        shown.contains("100.00%  20 / 20 jobs submitted  t="),
        "{shown:?}"
    );
    let shown = simulate_on_a_terminal(
        dir.path(),
        "--workload w.jsonl --procs 4 --until 95 --summary s.json",
    )
    .expect("script");
    assert!(
        shown.contains(" 45.00%  9 / 20 jobs submitted  t=95"),
        "{shown:?}"
    );
    // Without a terminal nothing is shown (the other tests' stderr).
    let (_, err, ok) = simulate(&[
        "--workload",
        dir.path().join("w.jsonl").to_str().unwrap(),
        "--procs",
        "4",
        "--until",
        "95",
        "--summary",
        dir.path().join("s.json").to_str().unwrap(),
    ]);
    assert!(ok && err.is_empty(), "{err}");
}
