//! Live golden tests: the real client binaries against a real server, whole
//! outputs compared byte for byte with the files in `tests/live_golden/`.
//!
//! The server is `moab simulate --serve` stopped at a fixed virtual time, so
//! ids, times, dates (epoch 0 = Thu Jan 1 1970, TZ=UTC), users and node names
//! are deterministic and nothing needs normalising: the views, the HTTP API
//! and every renderer are the daemon's own. (What only the daemon's actor
//! does — real processes, durability, cancellation — is covered by
//! `live_daemon.rs` with normalised ids and times.)
//!
//! The expected files were produced by these binaries and then checked line
//! by line against moab-formats.md and the goldens (docs/formats.md says how
//! each report was verified). `ARCHES_BLESS=1 cargo test --test live_golden`
//! rewrites them after a deliberate format change; review the diff.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::{base_env, bin, text};

/// Two 4-processor nodes. At t=700: job 1 (alice, 4 procs, chem/batch) runs
/// 0..1800; job 2 (bob, 2 procs) ran 10..610; job 3 (carol, 8 procs) waits
/// for everything with a reservation; job 4 (alice, 1 proc) backfilled at 30
/// and ended at 230; job 5 (dave, 2 procs, 100 s limit) ended after 50 s;
/// job 6 (erin, 2 procs, 10 minutes) backfilled at 600 into the 2 free
/// processors (it ends before carol's reservation at 1800).
const WORKLOAD: &str = concat!(
    "{\"id\": 1, \"submit\": 0, \"procs\": 4, \"walltime\": 3600, \"runtime\": 1800, \"user\": \"alice\", \"account\": \"chem\", \"class\": \"batch\"}\n",
    "{\"id\": 2, \"submit\": 10, \"procs\": 2, \"walltime\": 600, \"runtime\": 600, \"user\": \"bob\", \"account\": \"phys\"}\n",
    "{\"id\": 3, \"submit\": 20, \"procs\": 8, \"walltime\": 7200, \"runtime\": 100, \"user\": \"carol\", \"account\": \"chem\"}\n",
    "{\"id\": 4, \"submit\": 30, \"procs\": 1, \"walltime\": 300, \"runtime\": 200, \"user\": \"alice\", \"account\": \"chem\"}\n",
    "{\"id\": 5, \"submit\": 40, \"procs\": 2, \"walltime\": 100, \"runtime\": 50, \"user\": \"dave\"}\n",
    "{\"id\": 6, \"submit\": 600, \"procs\": 2, \"walltime\": 600, \"runtime\": 600, \"user\": \"erin\", \"qos\": \"high\"}\n",
);

const CONFIG: &str =
    "FSPOLICY DEDICATEDPS\nFSINTERVAL 00:10:00\nFSDEPTH 3\nFSDECAY 0.5\nPROFILEDURATION 00:05:00\n\
ACCOUNTCFG[chem] FSTARGET=50\nACCOUNTCFG[phys] FSTARGET=20\nQOSCFG[high] PRIORITY=100\n";

/// The reports snapshotted, as (file name, command, arguments).
const REPORTS: &[(&str, &str, &[&str])] = &[
    ("showq", "showq", &[]),
    ("showq-r", "showq", &["-r"]),
    ("showq-i", "showq", &["-i"]),
    ("showq-b", "showq", &["-b"]),
    ("showq-c", "showq", &["-c"]),
    ("showq-xml", "showq", &["--xml"]),
    ("showq-c-xml", "showq", &["-c", "--xml"]),
    ("checkjob-1", "checkjob", &["1"]),
    ("checkjob-3", "checkjob", &["3"]),
    ("checkjob-xml-1", "checkjob", &["--xml", "1"]),
    ("checknode", "checknode", &["node0001"]),
    ("mdiag-n", "mdiag", &["-n"]),
    ("mdiag-j", "mdiag", &["-j"]),
    ("mdiag-b", "mdiag", &["-b"]),
    ("mdiag-f", "mdiag", &["-f"]),
    ("mdiag-r", "mdiag", &["-r"]),
    ("showres", "showres", &[]),
    ("showres-n", "showres", &["-n"]),
    ("showstats", "showstats", &[]),
    ("showstats-u", "showstats", &["-u"]),
    ("showstats-a", "showstats", &["-a"]),
    ("showstats-q", "showstats", &["-q"]),
    ("showstats-f", "showstats", &["-f"]),
    ("showstats-f-phrun", "showstats", &["-f", "PHRUN"]),
    ("showstats-xml", "showstats", &["--xml"]),
    ("showq-p", "showq", &["-p", "DEFAULT"]),
    ("showq-u", "showq", &["-u", "alice"]),
    ("showq-w", "showq", &["-w", "acct=chem"]),
    ("checkjob-v-1", "checkjob", &["-v", "1"]),
    ("checkjob-vv-3", "checkjob", &["-v", "-v", "3"]),
    ("checkjob-many", "checkjob", &["1", "6"]),
    ("checknode-v", "checknode", &["-v", "node0001"]),
    ("checknode-all", "checknode", &["ALL"]),
    ("showres-v", "showres", &["-v"]),
    ("mdiag-a", "mdiag", &["-a"]),
    ("mdiag-g", "mdiag", &["-g"]),
    ("mdiag-u", "mdiag", &["-u"]),
    ("mdiag-c", "mdiag", &["-c"]),
    ("mdiag-q", "mdiag", &["-q"]),
    ("mdiag-t", "mdiag", &["-t"]),
    ("mdiag-R", "mdiag", &["-R"]),
    ("mdiag-j-v", "mdiag", &["-j", "-v"]),
    ("mdiag-f-json", "mdiag", &["-f", "--format=json"]),
    ("showq-v", "showq", &["-v"]),
    ("showq-n", "showq", &["-n"]),
    ("showq-o", "showq", &["-o"]),
    ("showq-i-v", "showq", &["-i", "-v"]),
    ("showq-r-v", "showq", &["-r", "-v"]),
    ("showq-c-n", "showq", &["-c", "-n"]),
    ("showq-xml-v", "showq", &["--xml", "-v"]),
    (
        "showq-w-user",
        "showq",
        &["-w", "user=alice", "-w", "acct=chem"],
    ),
    ("showq-blocking", "showq", &["--blocking"]),
    ("checkjob-A-3", "checkjob", &["-A", "3"]),
    ("checkjob-A-1", "checkjob", &["-A", "1"]),
    ("showstart-3", "showstart", &["3"]),
    ("showstart-f-3", "showstart", &["-f", "3"]),
    ("showbf-D", "showbf", &["-D"]),
    ("mdiag-n-v", "mdiag", &["-n", "-v"]),
    ("mdiag-n-t", "mdiag", &["-n", "-t", "DEFAULT"]),
    ("mdiag-j-t", "mdiag", &["-j", "-t", "DEFAULT"]),
    ("mdiag-p-t", "mdiag", &["-p", "-t", "DEFAULT"]),
    ("mdiag-b-t", "mdiag", &["-b", "-t", "DEFAULT"]),
    ("mdiag-t-DEFAULT", "mdiag", &["-t", "DEFAULT"]),
    ("mdiag-u-bob", "mdiag", &["-u", "bob"]),
    ("showstats-v", "showstats", &["-v"]),
    ("showstats-n", "showstats", &["-n"]),
    ("showstats-n-node0001", "showstats", &["-n", "node0001"]),
    (
        "showstats-u-t",
        "showstats",
        &["-u", "-t", "-0:11:40,-0:01:40"],
    ),
    (
        "showstats-a-t-v",
        "showstats",
        &["-a", "-t", "-0:05:00", "-v"],
    ),
    ("mrsvctl-l", "mrsvctl", &["-l"]),
    ("mrsvctl-q-3", "mrsvctl", &["-q", "3"]),
    (
        "mjobctl-q-wiki",
        "mjobctl",
        &["-q", "wiki", "ALL", "--flags=completed"],
    ),
];

struct Served {
    dir: tempfile::TempDir,
    socket: PathBuf,
    child: Option<Child>,
}

impl Served {
    fn start(until: &str) -> Served {
        let dir = tempfile::tempdir().expect("tempdir");
        let wl = dir.path().join("golden.jsonl");
        std::fs::write(&wl, WORKLOAD).expect("workload");
        let cfg = dir.path().join("golden.cfg");
        std::fs::write(&cfg, CONFIG).expect("config");
        let socket = dir.path().join("sim.sock");
        let log = std::fs::File::create(dir.path().join("sim.stderr")).expect("log");
        let child = Command::new(bin("moab"))
            .args(["simulate", "--workload"])
            .arg(&wl)
            .arg("--config")
            .arg(&cfg)
            .args(["--procs", "8", "--procs-per-node", "4", "--until", until])
            .args(["--serve", "--socket"])
            .arg(&socket)
            .env_clear()
            .envs(base_env(dir.path(), &socket))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("spawn moab simulate");
        let s = Served {
            dir,
            socket,
            child: Some(child),
        };
        let deadline = Instant::now() + Duration::from_secs(20);
        while !s.run("showq", &[]).status.success() {
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
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.run("mschedctl", &["-k"]);
        if let Some(mut c) = self.child.take() {
            let deadline = Instant::now() + Duration::from_secs(10);
            while Instant::now() < deadline {
                if let Ok(Some(_)) = c.try_wait() {
                    return;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

fn golden_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/live_golden")
}

#[test]
fn every_report_matches_its_live_golden_file() {
    let s = Served::start("700");
    let bless = std::env::var_os("ARCHES_BLESS").is_some();
    let mut failures = Vec::new();
    for (file, cmd, args) in REPORTS {
        let out = s.run(cmd, args);
        assert!(
            out.status.success(),
            "{cmd} {args:?} failed: {}",
            text(&out.stderr)
        );
        let got = text(&out.stdout);
        let path = golden_dir().join(format!("{file}.txt"));
        if bless {
            std::fs::create_dir_all(golden_dir()).expect("mkdir");
            std::fs::write(&path, &got).expect("bless");
            continue;
        }
        let want = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("{}: {e} (ARCHES_BLESS=1 creates it)", path.display()));
        if got != want {
            failures.push(format!(
                "--- {cmd} {args:?} differs from {}:\n{got}\n--- expected:\n{want}",
                path.display()
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The numbers of the scripted workload, computed by hand from its known
/// run times (not from the server): at t=700 jobs 2, 4 and 5 completed.
#[test]
fn showstats_numbers_follow_from_the_known_run_times() {
    let s = Served::start("700");
    let out = text(&s.run("showstats", &["--format=json"]).stdout);
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    let c = &v["completed"];
    assert_eq!(c["jobs"], 3, "{out}");
    assert_eq!(c["successful"], 3);
    // dedicated proc-seconds of the completed jobs: 2*600 + 1*200 + 2*50
    assert_eq!(c["ps_dedicated"].as_f64(), Some(1500.0));
    // requested: 2*600 + 1*300 + 2*100
    assert_eq!(c["ps_requested"].as_f64(), Some(1700.0));
    // accuracy: 600/600, 200/300, 50/100 -> mean 0.7222
    let acc = v["wallclock_accuracy"].as_f64().unwrap();
    assert!((acc - (1.0 + 2.0 / 3.0 + 0.5) / 3.0).abs() < 1e-9, "{acc}");
    // running at 700: job 1 (4 procs since 0) and job 6 (2 procs since 600)
    assert_eq!(
        v["proc_seconds_used"].as_f64(),
        Some(1500.0 + 4.0 * 700.0 + 2.0 * 100.0)
    );
    assert_eq!(v["proc_seconds_available"].as_f64(), Some(8.0 * 700.0));
    // jobs 4 (at 30) and 5 (at 230, when job 4 freed its processor) were
    // backfilled around carol's reservation: 1*200 + 2*50 proc-seconds
    assert_eq!(c["backfilled"], 2);
    assert_eq!(c["ps_backfilled"].as_f64(), Some(300.0));
    // dave queued 40..230: max queue time 190 s; xfactor (190+50)/100
    assert_eq!(c["qtime_max"].as_f64(), Some(190.0));
    assert!((c["xf_max"].as_f64().unwrap() - 2.4).abs() < 1e-9);
    // per credential: account chem has job 4 completed and job 1 running
    let chem = v["credentials"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["kind"] == "account" && c["name"] == "chem")
        .expect("chem");
    assert_eq!(chem["completed"]["jobs"], 1);
    assert_eq!(chem["active_jobs"], 1);
    assert_eq!(chem["active_procs"], 4);
    assert_eq!(chem["fs_target"].as_f64(), Some(50.0));
}

/// The JSON reports (`--format=json`) and the committed list of their keys
/// (`tests/json_schema/<name>.keys`: one `path: type` per line, arrays as
/// `[]`), so that a schema change is deliberate; docs/json.md describes the
/// fields. `ARCHES_BLESS=1` rewrites the lists.
const JSON_REPORTS: &[(&str, &str, &[&str])] = &[
    ("showq", "showq", &[]),
    ("showq-c", "showq", &["-c"]),
    ("checkjob", "checkjob", &["1", "3"]),
    ("checknode", "checknode", &["ALL"]),
    ("showres", "showres", &[]),
    ("showbf", "showbf", &[]),
    ("showstart", "showstart", &["3"]),
    ("showstats", "showstats", &[]),
    ("mdiag-f", "mdiag", &["-f"]),
    ("mdiag-p", "mdiag", &["-p"]),
    ("mdiag-u", "mdiag", &["-u"]),
    ("mdiag-S", "mdiag", &["-S"]),
    ("mschedctl-l", "mschedctl", &["-l"]),
];

fn json_keys(v: &serde_json::Value, path: &str, out: &mut std::collections::BTreeSet<String>) {
    use serde_json::Value;
    let ty = match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(n) if n.is_f64() => "number",
        Value::Number(_) => "integer",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    };
    if !path.is_empty() {
        out.insert(format!("{path}: {ty}"));
    }
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                let p = if path.is_empty() {
                    k.clone()
                } else {
                    format!("{path}.{k}")
                };
                json_keys(x, &p, out);
            }
        }
        Value::Array(a) => {
            for x in a {
                json_keys(x, &format!("{path}[]"), out);
            }
        }
        _ => {}
    }
}

#[test]
fn json_reports_keep_their_committed_schema() {
    let s = Served::start("700");
    let bless = std::env::var_os("ARCHES_BLESS").is_some();
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/json_schema");
    let mut failures = Vec::new();
    for (file, cmd, args) in JSON_REPORTS {
        let mut all = args.to_vec();
        all.push("--format=json");
        let out = s.run(cmd, &all);
        assert!(out.status.success(), "{cmd} {all:?}: {}", text(&out.stderr));
        let v: serde_json::Value =
            serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{cmd} {all:?}: {e}"));
        let mut keys = std::collections::BTreeSet::new();
        json_keys(&v, "", &mut keys);
        // Null and non-null samples of one field are one key.
        let keys: Vec<String> = keys
            .iter()
            .filter(|k| {
                !(k.ends_with(": null")
                    && keys.iter().any(|o| {
                        o != *k
                            && o.rsplit_once(": ").map(|x| x.0) == k.rsplit_once(": ").map(|x| x.0)
                    }))
            })
            .cloned()
            .collect();
        let got = keys.join("\n") + "\n";
        let path = dir.join(format!("{file}.keys"));
        if bless {
            std::fs::create_dir_all(&dir).expect("mkdir");
            std::fs::write(&path, &got).expect("bless");
            continue;
        }
        let want = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("{}: {e} (ARCHES_BLESS=1 creates it)", path.display()));
        if got != want {
            failures.push(format!(
                "{cmd} {all:?}: keys differ from {}:\n{got}",
                path.display()
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// `--format=json` honours the showq mode: -r active only, -i eligible
/// only, -b blocked only, -c completed only.
#[test]
fn showq_json_keeps_only_the_sections_of_the_mode() {
    let s = Served::start("700");
    let sections = |args: &[&str]| -> Vec<String> {
        let mut all = args.to_vec();
        all.push("--format=json");
        let v: serde_json::Value =
            serde_json::from_slice(&s.run("showq", &all).stdout).expect("json");
        v["jobs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|j| j["section"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(sections(&[]), ["active", "active", "eligible"]);
    assert_eq!(sections(&["-r"]), ["active", "active"]);
    assert_eq!(sections(&["-i"]), ["eligible"]);
    assert!(sections(&["-b"]).is_empty());
    assert!(sections(&["-c"]).iter().all(|s| s == "completed"));
}
