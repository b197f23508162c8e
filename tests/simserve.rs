//! `moab simulate --until T --serve` end to end: the replay stops at T, the
//! real clients read the simulated cluster through the socket, `mschedctl -S`
//! advances the virtual clock and `mschedctl -k` stops the server.

mod common;

use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::{base_env, bin, text};

/// 4 processors: job 1 (alice, 3 procs) runs 0..100; job 2 (4 procs) waits
/// for it with a reservation at 100; job 3 (1 proc, 50 s) backfills at 2.
const WORKLOAD: &str = concat!(
    "{\"id\": 1, \"submit\": 0, \"procs\": 3, \"walltime\": 100, \"runtime\": 100, \"user\": \"alice\"}\n",
    "{\"id\": 2, \"submit\": 1, \"procs\": 4, \"walltime\": 100, \"runtime\": 100, \"user\": \"bob\"}\n",
    "{\"id\": 3, \"submit\": 2, \"procs\": 1, \"walltime\": 50, \"runtime\": 50}\n",
);

struct Served {
    dir: tempfile::TempDir,
    socket: std::path::PathBuf,
    child: Option<Child>,
}

/// The same workload as an SWF trace starting on Tuesday 2026-01-06 00:00 UTC.
const TRACE: &str = concat!(
    "; UnixStartTime: 1767657600\n",
    "; MaxProcs: 4\n",
    "1 0 -1 100 3 -1 -1 3 100 -1 1 1 1 -1 1 -1 -1 -1\n",
    "2 1 -1 100 4 -1 -1 4 100 -1 1 2 1 -1 1 -1 -1 -1\n",
    "3 2 -1 50 1 -1 -1 1 50 -1 1 3 1 -1 1 -1 -1 -1\n",
);

impl Served {
    fn start(until: &str) -> Served {
        Served::start_with("small.jsonl", WORKLOAD, &["--procs", "4", "--until", until])
    }

    /// Serves `content` (written to `file`, given as --workload or --trace
    /// by its extension) with these extra arguments.
    fn start_with(file: &str, content: &str, extra: &[&str]) -> Served {
        let dir = tempfile::tempdir().expect("tempdir");
        let wl = dir.path().join(file);
        std::fs::write(&wl, content).expect("write workload");
        let input = if file.ends_with(".swf") {
            "--trace"
        } else {
            "--workload"
        };
        let socket = dir.path().join("sim.sock");
        let log = std::fs::File::create(dir.path().join("sim.stderr")).expect("log");
        let child = Command::new(bin("moab"))
            .args(["simulate", input])
            .arg(&wl)
            .args(extra)
            .args(["--serve", "--socket"])
            .arg(&socket)
            .current_dir(dir.path())
            .env_clear()
            .envs(base_env(dir.path(), &socket))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("spawn moab simulate");
        let mut s = Served {
            dir,
            socket,
            child: Some(child),
        };
        let deadline = Instant::now() + Duration::from_secs(20);
        while !s.run("showq", &[]).status.success() {
            if let Some(status) = s.child.as_mut().and_then(|c| c.try_wait().ok().flatten()) {
                panic!("moab simulate exited early ({status}): {}", s.log());
            }
            assert!(Instant::now() < deadline, "never served: {}", s.log());
            std::thread::sleep(Duration::from_millis(50));
        }
        s
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("sim.stderr")).unwrap_or_default()
    }

    fn run(&self, name: &str, args: &[&str]) -> Output {
        Command::new(bin(name))
            .args(args)
            .env_clear()
            .envs(base_env(self.dir.path(), &self.socket))
            .current_dir(self.dir.path())
            .stdin(Stdio::null())
            .output()
            .expect("run client")
    }

    fn stdout(&self, name: &str, args: &[&str]) -> String {
        let out = self.run(name, args);
        assert!(
            out.status.success(),
            "{name} {args:?} failed: {}",
            text(&out.stderr)
        );
        text(&out.stdout)
    }

    fn wait_exit(&mut self, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        while Instant::now() < deadline {
            if let Some(c) = self.child.as_mut() {
                if c.try_wait().ok().flatten().is_some() {
                    self.child = None;
                    return true;
                }
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        false
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

fn row<'a>(showq: &'a str, id: &str) -> Option<&'a str> {
    showq.lines().find(|l| {
        let f: Vec<&str> = l.split_whitespace().collect();
        // A job row: JOBID USERNAME STATE PROCS ... (STATE is capitalised).
        f.first() == Some(&id) && f.get(2).is_some_and(|s| s.starts_with(char::is_uppercase))
    })
}

#[test]
fn served_simulation_shows_the_cluster_at_t_then_steps_and_stops() {
    let mut s = Served::start("10");
    let q = s.stdout("showq", &[]);
    let one = row(&q, "1").unwrap_or_else(|| panic!("job 1 missing:\n{q}"));
    assert!(one.contains("alice") && one.contains("Running"), "{one}");
    // Remaining time is measured against the virtual clock (t=10): 90 s.
    assert!(one.contains("00:01:30"), "{one}");
    let three = row(&q, "3+").unwrap_or_else(|| panic!("backfilled job 3 missing:\n{q}"));
    assert!(
        three.contains("Running") && three.contains("00:00:42"),
        "{three}"
    );
    let two = row(&q, "2").unwrap_or_else(|| panic!("job 2 missing:\n{q}"));
    assert!(two.contains("bob") && two.contains("Idle"), "{two}");
    assert!(q.contains("4 of 4 processors in use"), "{q}");

    let cj = s.stdout("checkjob", &["2"]);
    assert!(cj.contains("AName: job2"), "{cj}");
    assert!(cj.contains("State: Idle"), "{cj}");
    assert!(cj.contains("Creds:  user:bob"), "{cj}");
    assert!(
        cj.contains("Time Queued  Total: 00:00:09"),
        "queued time against the virtual clock:\n{cj}"
    );
    assert!(cj.contains("Reservation '2' (00:01:30 -> 00:03:10"), "{cj}");

    let start = s.stdout("showstart", &["2"]);
    assert!(
        start.contains("Estimated Rsv based start in                00:01:30"),
        "{start}"
    );
    let node = s.stdout("checknode", &["node0001"]);
    assert!(node.contains("in current state for 00:00:10"), "{node}");
    let diag = s.stdout("mdiag", &["-S"]);
    assert!(diag.contains("(Mode: SIMULATION)"), "{diag}");
    assert!(diag.contains("Uptime: 00:00:10"), "{diag}");
    let diag = s.stdout("mdiag", &["-j"]);
    let two = diag
        .lines()
        .find(|l| l.starts_with("2 "))
        .unwrap_or_else(|| panic!("mdiag -j: no job 2\n{diag}"));
    assert!(two.contains("Idle") && two.contains("bob"), "{two}");

    // showres: the two running jobs and job 2's reservation from t=100.
    let res = s.stdout("showres", &[]);
    let rsv: Vec<Vec<&str>> = res
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .filter(|f| f.get(1) == Some(&"Job"))
        .collect();
    let rows: Vec<(&str, &str, &str, &str)> =
        rsv.iter().map(|f| (f[0], f[2], f[3], f[4])).collect();
    assert_eq!(
        rows,
        vec![
            ("1", "R", "-00:00:10", "00:01:30"),
            ("3", "R", "-00:00:08", "00:00:42"),
            ("2", "I", "00:01:30", "00:03:10"),
        ],
        "{res}"
    );
    // showbf: every processor is busy at t=10.
    let bf = s.stdout("showbf", &[]);
    assert!(!bf.lines().any(|l| l.starts_with("ALL")), "{bf}");

    // One step: job 3 ends at t=52.
    let step = s.stdout("mschedctl", &["-S", "1"]);
    assert!(
        step.starts_with("scheduling will stop in 00:00:42 at iteration"),
        "{step}"
    );
    let q = s.stdout("showq", &[]);
    assert!(row(&q, "3+").is_none(), "job 3 should have finished:\n{q}");
    assert!(row(&q, "1").is_some_and(|l| l.contains("00:00:48")), "{q}");
    // showbf: job 3's processor is free until job 2's reservation (t=100).
    let bf = s.stdout("showbf", &[]);
    let all = bf
        .lines()
        .find(|l| l.starts_with("ALL"))
        .unwrap_or_else(|| panic!("no window\n{bf}"));
    let f: Vec<&str> = all.split_whitespace().collect();
    assert_eq!(
        (f[1], f[2], f[3], f[4]),
        ("1", "1", "00:00:00", "00:00:48"),
        "{bf}"
    );

    // The next step reaches t=100: job 1 ends, job 2 starts.
    s.stdout("mschedctl", &["-S"]);
    let q = s.stdout("showq", &[]);
    assert!(row(&q, "1").is_none(), "{q}");
    assert!(row(&q, "2").is_some_and(|l| l.contains("Running")), "{q}");

    // Writes are refused, the server keeps answering.
    let cancel = s.run("canceljob", &["2"]);
    assert!(!cancel.status.success());
    assert!(
        text(&cancel.stderr).contains("served simulation"),
        "{}",
        text(&cancel.stderr)
    );

    let kill = s.stdout("mschedctl", &["-k"]);
    assert!(kill.contains("will be shutdown immediately"), "{kill}");
    assert!(
        s.wait_exit(Duration::from_secs(10)),
        "did not stop: {}",
        s.log()
    );
    assert!(!Path::new(&s.socket).exists(), "socket left behind");
}

#[test]
fn served_trace_shows_real_dates_steps_iterations_and_writes_outputs_at_stop() {
    let mut s = Served::start_with(
        "small.swf",
        TRACE,
        &[
            "--until",
            "10",
            "--summary",
            "summary.json",
            "--jobs-csv",
            "jobs.csv",
        ],
    );
    // Dates come from the trace's UnixStartTime (TZ=UTC in the harness).
    let q = s.stdout("showq", &[]);
    let one = row(&q, "1").unwrap_or_else(|| panic!("job 1 missing:\n{q}"));
    assert!(one.ends_with("Tue Jan  6 00:00:00"), "{one}");
    let res = s.stdout("showres", &["-v"]);
    assert!(res.contains("Tue Jan  6 00:01:40 2026"), "{res}");
    let cj = s.stdout("checkjob", &["2"]);
    assert!(cj.contains("SubmitTime: Tue Jan  6 00:00:01"), "{cj}");

    // -S 1: one iteration (t=52, job 3 ends). -S 5: the iteration at t=100
    // (job 1 ends, job 2 starts); job 2's end at 200 needs no iteration (the
    // queue is empty) and nothing follows: 1 of 5.
    let step = s.stdout("mschedctl", &["-S", "1"]);
    assert!(step.contains("at iteration 4"), "{step}");
    let step = s.stdout("mschedctl", &["-S", "5"]);
    assert!(
        step.contains("at iteration 5") && step.contains("ran 1 of 5 iterations"),
        "{step}"
    );
    let q = s.stdout("showq", &[]);
    assert!(q.contains("0 active jobs"), "everything ran:\n{q}");

    s.stdout("mschedctl", &["-k"]);
    assert!(
        s.wait_exit(Duration::from_secs(10)),
        "did not stop: {}",
        s.log()
    );
    // The outputs describe the replay where it stopped, in trace time.
    let summary: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(s.dir.path().join("summary.json")).expect("summary written"),
    )
    .expect("summary JSON");
    assert_eq!(summary["jobs"], 3, "{summary}");
    assert_eq!(summary["max_wait_s"], 99, "{summary}");
    let csv = std::fs::read_to_string(s.dir.path().join("jobs.csv")).expect("csv written");
    assert_eq!(
        csv.lines().collect::<Vec<_>>(),
        vec![
            "job_id,submit,start,end,procs,walltime,runtime,wait,backfilled",
            "1,0,0,100,3,100,100,0,0",
            "2,1,100,200,4,100,100,99,0",
            "3,2,2,52,1,50,50,0,1",
        ]
    );
}

#[test]
fn serve_without_until_is_a_usage_error() {
    let out = Command::new(bin("moab"))
        .args(["simulate", "--workload", "w.jsonl", "--serve"])
        .env_clear()
        .output()
        .expect("run moab simulate");
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("--until"),
        "{}",
        text(&out.stderr)
    );
}
