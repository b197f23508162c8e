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

/// `(job, start)` of the per-job CSV.
fn csv_starts(rows: &str) -> Vec<(String, String)> {
    rows.lines()
        .skip(1)
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (f[0].to_string(), f[2].to_string())
        })
        .collect()
}

#[test]
fn a_deadline_qos_job_is_replayed_ahead_of_higher_priority_jobs() {
    let dir = tempfile::tempdir().expect("tempdir");
    let wl = dir.path().join("w.jsonl");
    // 4 processors held by job 1 until 100; job 2 (first in FIFO order)
    // would run 100-300 and job 3 after it, past its deadline (200): its
    // DEADLINE QoS plans it first (100-150). Job 4, the same without the
    // QoS, waits its turn. The relative-deadline QoS gives job 5 the
    // deadline 4 + 60 + 50 = 114: planned before job 3 (deadline 200).
    std::fs::write(
        &wl,
        concat!(
            "{\"id\": 1, \"submit\": 0, \"procs\": 4, \"walltime\": 100, \"runtime\": 100}\n",
            "{\"id\": 2, \"submit\": 1, \"procs\": 4, \"walltime\": 200, \"runtime\": 200}\n",
            "{\"id\": 3, \"submit\": 2, \"procs\": 4, \"walltime\": 50, \"runtime\": 50, \"qos\": \"dl\", \"deadline\": 198}\n",
            "{\"id\": 4, \"submit\": 3, \"procs\": 4, \"walltime\": 50, \"runtime\": 50, \"deadline\": 197}\n",
            "{\"id\": 5, \"submit\": 4, \"procs\": 4, \"walltime\": 50, \"runtime\": 50, \"qos\": \"rel\"}\n",
        ),
    )
    .expect("write workload");
    let cfg = dir.path().join("moab.cfg");
    std::fs::write(
        &cfg,
        "QOSCFG[dl] QFLAGS=DEADLINE\nQOSCFG[rel] QFLAGS=DEADLINE QTTARGET=60\n",
    )
    .expect("write cfg");
    let csv = dir.path().join("jobs.csv");
    let (_, err, ok) = simulate(&[
        "--workload",
        wl.to_str().unwrap(),
        "--procs",
        "4",
        "--config",
        cfg.to_str().unwrap(),
        "--jobs-csv",
        csv.to_str().unwrap(),
    ]);
    assert!(ok, "{err}");
    let rows = std::fs::read_to_string(&csv).expect("csv");
    let starts = csv_starts(&rows);
    for (job, at) in [("5", "100"), ("3", "150"), ("2", "200"), ("4", "400")] {
        assert!(
            starts.contains(&(job.into(), at.into())),
            "job {job} at {at}: {rows}"
        );
    }
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

/// A temporary directory holding `t.swf`, [`synthetic_swf`] of `n` jobs.
fn synthetic_trace(n: u64) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().expect("tempdir");
    let swf = dir.path().join("t.swf");
    std::fs::write(&swf, synthetic_swf(n)).unwrap();
    (dir, swf)
}

/// A small deterministic SWF trace: `n` jobs on a 64-processor machine,
/// busy enough that reservation depth and backfill policy matter.
fn synthetic_swf(n: u64) -> String {
    let mut s = String::from("; MaxProcs: 64\n");
    let mut x: u64 = 12345;
    let mut next = || {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        x >> 33
    };
    let mut submit = 0;
    for id in 1..=n {
        submit += next() % 120;
        let procs = 1 << (next() % 7);
        let req = 60 * (1 + next() % 120);
        let run = 1 + next() % req;
        s.push_str(&format!(
            "{id} {submit} -1 {run} {procs} -1 -1 {procs} {req} -1 1 {} 1 -1 1 -1 -1 -1\n",
            1 + next() % 8
        ));
    }
    s
}

/// The summary without its wall-clock time.
fn figures(mut v: serde_json::Value) -> serde_json::Value {
    v.as_object_mut()
        .expect("summary object")
        .remove("sim_wall_s");
    v
}

/// A single replay's summary under a moab.cfg.
fn single(trace: &str, cfg: &std::path::Path) -> serde_json::Value {
    let (out, err, ok) = simulate(&[
        "--trace",
        trace,
        "--config",
        cfg.to_str().unwrap(),
        "--summary",
        "-",
    ]);
    assert!(ok, "{err}");
    figures(serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}")))
}

/// A sweep's JSON report (`--sweep-json -` added to `args`) and its table
/// (standard error).
fn sweep_report(args: &[&str]) -> (serde_json::Value, String) {
    let mut all = args.to_vec();
    all.extend(["--sweep-json", "-"]);
    let (out, err, ok) = simulate(&all);
    assert!(ok, "{err}");
    let report = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    (report, err)
}

/// Asserts that sweep configuration `c` has the summary of a single replay
/// of `trace` under a moab.cfg of `lines` (written into `dir`); returns it.
fn assert_single_replay(
    dir: &std::path::Path,
    trace: &str,
    c: &serde_json::Value,
    lines: &str,
) -> serde_json::Value {
    // A new name each time: the count of what `dir` holds.
    let cfg = dir.join(format!("single-{}.cfg", dir_entries(dir)));
    std::fs::write(&cfg, lines).unwrap();
    let summary = figures(c["summary"].clone());
    assert_eq!(summary, single(trace, &cfg), "{}", c["name"]);
    summary
}

fn dir_entries(dir: &std::path::Path) -> usize {
    std::fs::read_dir(dir).map_or(0, |d| d.count())
}

#[test]
fn sweep_configurations_equal_their_single_replays() {
    let (dir, swf) = synthetic_trace(400);
    let trace = swf.to_str().unwrap();
    let csv = dir.path().join("sweep.csv");
    // A grid: 3 x 2 configurations, the first parameter varying slowest.
    let (report, err) = sweep_report(&[
        "--trace",
        trace,
        "--sweep",
        "RESERVATIONDEPTH=1,2,4",
        "BACKFILLPOLICY=FIRSTFIT,BESTFIT",
        "--sweep-csv",
        csv.to_str().unwrap(),
    ]);
    assert!(
        err.contains("RESERVATIONDEPTH=4 BACKFILLPOLICY=BESTFIT"),
        "table: {err}"
    );
    let configs = report["configurations"].as_array().expect("configurations");
    assert_eq!(configs.len(), 6);
    assert_eq!(report["input_jobs"], 400);
    let mut distinct = std::collections::BTreeSet::new();
    for (i, c) in configs.iter().enumerate() {
        let (depth, bf) = (["1", "2", "4"][i / 2], ["FIRSTFIT", "BESTFIT"][i % 2]);
        assert_eq!(
            c["name"],
            format!("RESERVATIONDEPTH={depth} BACKFILLPOLICY={bf}")
        );
        let lines = format!("RESERVATIONDEPTH {depth}\nBACKFILLPOLICY {bf}\n");
        let summary = assert_single_replay(dir.path(), trace, c, &lines);
        distinct.insert(summary["avg_bsld10"].to_string());
    }
    assert!(
        distinct.len() > 2,
        "the policies make a difference: {distinct:?}"
    );
    let rows = std::fs::read_to_string(&csv).unwrap();
    assert!(
        rows.starts_with("configuration,jobs,avg_wait_s,avg_bsld10,"),
        "{rows}"
    );
    assert_eq!(rows.lines().count(), 7, "{rows}");

    // A directory of moab.cfg files, by file name.
    let cfgs = dir.path().join("cfgs");
    std::fs::create_dir(&cfgs).unwrap();
    std::fs::write(cfgs.join("a-easy.cfg"), "RESERVATIONDEPTH 1\n").unwrap();
    std::fs::write(
        cfgs.join("b-conservative.cfg"),
        "RESERVATIONDEPTH 1000000\nRESERVATIONPOLICY HIGHEST\n",
    )
    .unwrap();
    std::fs::write(cfgs.join("notes.txt"), "not a configuration\n").unwrap();
    let (report, _) = sweep_report(&["--trace", trace, "--sweep", cfgs.to_str().unwrap()]);
    let configs = report["configurations"].as_array().expect("configurations");
    assert_eq!(configs.len(), 2);
    for (c, file) in configs.iter().zip(["a-easy.cfg", "b-conservative.cfg"]) {
        assert_eq!(c["name"], file);
        assert_eq!(
            figures(c["summary"].clone()),
            single(trace, &cfgs.join(file)),
            "{file}"
        );
    }
}

/// Under BACKFILLPOLICY NONE with CURRENTHIGHEST the reservation depth
/// (at least 1) decides nothing a replay reports: a grid replays such
/// configurations once and says so, and each still equals its own single
/// replay. When the replay cannot prove it (here a priority weight the lean
/// iteration does not take makes every iteration a full one), each is
/// replayed.
#[test]
fn sweep_replays_twins_under_none_once() {
    let (dir, swf) = synthetic_trace(300);
    let trace = swf.to_str().unwrap();
    let csv = dir.path().join("sweep.csv");
    let (report, err) = sweep_report(&[
        "--trace",
        trace,
        "--sweep",
        "RESERVATIONDEPTH=0,1,3,6 BACKFILLPOLICY=NONE,FIRSTFIT",
        "--sweep-csv",
        csv.to_str().unwrap(),
    ]);
    let configs = report["configurations"].as_array().expect("configurations");
    assert_eq!(configs.len(), 8);
    let mut twins = Vec::new();
    for (i, c) in configs.iter().enumerate() {
        let (depth, bf) = (["0", "1", "3", "6"][i / 2], ["NONE", "FIRSTFIT"][i % 2]);
        let lines = format!("RESERVATIONDEPTH {depth}\nBACKFILLPOLICY {bf}\n");
        assert_single_replay(dir.path(), trace, c, &lines);
        if let Some(same) = c.get("same_as") {
            twins.push((c["name"].clone(), same.clone()));
            assert_eq!(c["summary"]["sim_wall_s"], 0.0);
        }
    }
    let rep = serde_json::json!("RESERVATIONDEPTH=1 BACKFILLPOLICY=NONE");
    assert_eq!(
        twins,
        vec![
            (
                serde_json::json!("RESERVATIONDEPTH=3 BACKFILLPOLICY=NONE"),
                rep.clone()
            ),
            (
                serde_json::json!("RESERVATIONDEPTH=6 BACKFILLPOLICY=NONE"),
                rep
            ),
        ]
    );
    // The table shows which replay a twin shares; the CSV names it.
    let row = err
        .lines()
        .find(|l| l.contains("RESERVATIONDEPTH=6 BACKFILLPOLICY=NONE"))
        .expect("table row");
    assert!(row.contains("= #3"), "{row}");
    let rows = std::fs::read_to_string(&csv).unwrap();
    assert!(rows.lines().next().unwrap().ends_with(",same_as"), "{rows}");
    assert!(
        rows.lines()
            .any(|l| l.starts_with("RESERVATIONDEPTH=3 BACKFILLPOLICY=NONE,")
                && l.ends_with(",RESERVATIONDEPTH=1 BACKFILLPOLICY=NONE")),
        "{rows}"
    );

    // Not provable: every configuration replayed.
    let base = dir.path().join("base.cfg");
    std::fs::write(&base, "XFACTORWEIGHT 5\n").unwrap();
    let (report, _) = sweep_report(&[
        "--trace",
        trace,
        "--config",
        base.to_str().unwrap(),
        "--sweep",
        "RESERVATIONDEPTH=1,4 BACKFILLPOLICY=NONE",
    ]);
    let configs = report["configurations"].as_array().expect("configurations");
    assert_eq!(configs.len(), 2);
    for (c, depth) in configs.iter().zip(["1", "4"]) {
        assert!(c.get("same_as").is_none(), "{c}");
        let lines = format!("XFACTORWEIGHT 5\nRESERVATIONDEPTH {depth}\nBACKFILLPOLICY NONE\n");
        assert_single_replay(dir.path(), trace, c, &lines);
    }
}

#[test]
fn sweep_refuses_what_it_cannot_do() {
    let (_dir, swf) = synthetic_trace(10);
    let trace = swf.to_str().unwrap();
    for (args, want) in [
        (
            vec!["--sweep", "RESERVATIONDEPHT=1,2"],
            "unknown moab.cfg parameter",
        ),
        (
            vec![
                "--sweep",
                "RESERVATIONDEPTH=1,2",
                "--reservation-depth",
                "3",
            ],
            "--reservation-depth fixes RESERVATIONDEPTH",
        ),
        (
            vec!["--sweep", "RESERVATIONDEPTH=1,2", "--report", "r.html"],
            "single replays",
        ),
        (vec!["--sweep", "/nonexistent-dir"], "/nonexistent-dir"),
    ] {
        let mut all = vec!["--trace", trace];
        all.extend(args.iter().copied());
        let (_, err, ok) = simulate(&all);
        assert!(!ok, "{args:?} should fail");
        assert!(err.contains(want), "{args:?}: {err}");
    }
}
