//! The daemon on a real Slurm cluster (`RMCFG[slurm] TYPE=SLURM`, the 4-node
//! `scripts/slurm-cluster` cluster, 8 CPUs per node): Arches decides, Slurm
//! runs. Every placement is checked through Slurm (`squeue`), not through
//! Arches. Skipped with a notice when no cluster answers, unless `CI` is set
//! (and `.ci/run` did not report `ARCHES_SLURM_UNAVAILABLE`).

mod common;

use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use common::term::{job_id, lflags, Term};
use common::{text, Daemon};

/// Holds `flock` on `<cluster dir>/.tests.lock` while alive: test runs of
/// other processes (another checkout's `cargo test`) wait instead of
/// sharing the nodes.
struct ClusterLock(#[allow(dead_code)] std::fs::File);

fn lock_cluster(conf: &std::path::Path) -> ClusterLock {
    use std::os::fd::AsRawFd;
    let dir = conf
        .parent()
        .and_then(std::path::Path::parent)
        .unwrap_or(std::path::Path::new("/tmp"));
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(dir.join(".tests.lock"))
        .expect("cluster lock file");
    // SAFETY: flock(2) on a descriptor we own; blocks until granted.
    let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) };
    assert_eq!(rc, 0, "flock: {}", std::io::Error::last_os_error());
    ClusterLock(file)
}

/// The cluster's nodes are shared: one daemon at a time.
static CLUSTER: Mutex<()> = Mutex::new(());

fn cluster() -> Option<PathBuf> {
    let conf = std::env::var_os("SLURM_CONF")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/tmp/arches-slurm-test/etc/slurm.conf"));
    let up = conf.exists()
        && Command::new("scontrol")
            .arg("ping")
            .env("SLURM_CONF", &conf)
            .output()
            .is_ok_and(|o| o.status.success());
    if up {
        return Some(conf);
    }
    if std::env::var_os("CI").is_some() && std::env::var_os("ARCHES_SLURM_UNAVAILABLE").is_none() {
        panic!(
            "CI is set but no Slurm cluster answers (SLURM_CONF={})",
            conf.display()
        );
    }
    eprintln!("NOTICE: no Slurm cluster (scripts/slurm-cluster start 4); Slurm test skipped");
    None
}

struct Fx {
    d: Daemon,
    conf: PathBuf,
    /// Prefix of this test's job names (Slurm job names are Arches job names).
    prefix: String,
    _guard: std::sync::MutexGuard<'static, ()>,
    _lock: ClusterLock,
}

fn fixture(label: &str) -> Option<Fx> {
    fixture_with(label, "")
}

/// Tells `.ci/run` that this test runs against the cluster (it checks
/// that every Slurm test did): appends `<package>:<test>` to the file
/// `ARCHES_SLURM_RAN_LOG` names.
fn record_ran() {
    use std::io::Write;
    let Some(path) = std::env::var_os("ARCHES_SLURM_RAN_LOG") else {
        return;
    };
    let name = std::thread::current().name().unwrap_or("?").to_string();
    if let Ok(mut f) = std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .open(path)
    {
        let _ = writeln!(f, "{}:{name}", env!("CARGO_PKG_NAME"));
    }
}

/// A fixture whose `moab.cfg` also has `extra`.
fn fixture_with(label: &str, extra: &str) -> Option<Fx> {
    let conf = cluster()?;
    let guard = CLUSTER.lock().unwrap_or_else(|e| e.into_inner());
    let lock = lock_cluster(&conf);
    reset(&conf);
    record_ran();
    let cfg = format!(
        "RMCFG[slurm] TYPE=SLURM SERVER={} POLLINTERVAL=1\nRESERVATIONDEPTH 1\n{extra}",
        conf.display()
    );
    let d = Daemon::start_with_config(Some(&cfg));
    let prefix = format!("{label}{}x", std::process::id());
    let fx = Fx {
        d,
        conf,
        prefix,
        _guard: guard,
        _lock: lock,
    };
    // Nodes just restarted by an earlier test may still be coming back.
    for n in ["n1", "n2", "n3", "n4"] {
        let deadline = Instant::now() + Duration::from_secs(60);
        while fx.checknode_state(n) == "Down" {
            assert!(Instant::now() < deadline, "{n} stays down");
            std::thread::sleep(Duration::from_millis(200));
        }
    }
    Some(fx)
}

/// A clean cluster: no job left by an earlier (failed) test, no drained node.
fn reset(conf: &Path) {
    let run = |args: &[&str]| {
        Command::new(args[0])
            .args(&args[1..])
            .env("SLURM_CONF", conf)
            .output()
            .map(|o| text(&o.stdout))
            .unwrap_or_default()
    };
    let live = || {
        run(&[
            "squeue",
            "-h",
            "-t",
            "PENDING,RUNNING,SUSPENDED,COMPLETING",
            "-o",
            "%i",
        ])
    };
    let ids: Vec<String> = live().split_whitespace().map(String::from).collect();
    if !ids.is_empty() {
        let mut args = vec!["scancel"];
        args.extend(ids.iter().map(String::as_str));
        run(&args);
    }
    let nodes = run(&["sinfo", "-h", "-N", "-o", "%N %T %f"]);
    for line in nodes.lines() {
        let mut f = line.split_whitespace();
        if let (Some(n), Some(st), Some(features)) = (f.next(), f.next(), f.next()) {
            if st.starts_with("drain") {
                run(&[
                    "scontrol",
                    "update",
                    &format!("NodeName={n}"),
                    "State=RESUME",
                ]);
            }
            if features != "(null)" {
                run(&[
                    "scontrol",
                    "update",
                    &format!("NodeName={n}"),
                    "AvailableFeatures=",
                    "ActiveFeatures=",
                ]);
            }
        }
    }
    let deadline = Instant::now() + Duration::from_secs(30);
    while !live().trim().is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(200));
    }
}

impl Drop for Fx {
    fn drop(&mut self) {
        // Cancel through Arches first (a dead daemon's jobs would keep running).
        let _ = self.d.run("canceljob", &["ALL"]);
        reset(&self.conf);
    }
}

impl Fx {
    fn slurm(&self, program: &str, args: &[&str]) -> String {
        let out = Command::new(program)
            .args(args)
            .env("SLURM_CONF", &self.conf)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{program} {args:?}: {}",
            text(&out.stderr)
        );
        text(&out.stdout)
    }

    /// `scripts/slurm-cluster` on this cluster.
    fn cluster_script(&self, args: &[&str]) {
        let dir = self.conf.parent().and_then(Path::parent).unwrap();
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/slurm-cluster");
        let st = Command::new(script)
            .args(args)
            .env("ARCHES_SLURM_DIR", dir)
            .env("SLURM_CONF", &self.conf)
            .status()
            .unwrap();
        assert!(st.success(), "slurm-cluster {args:?}");
    }

    fn submit(&self, name: &str, resources: &str, script: &str, extra: &[&str]) -> u64 {
        let name = format!("{}{name}", self.prefix);
        let mut args = vec!["-N", &name, "-l", resources];
        args.extend_from_slice(extra);
        self.d.submit(&format!("#!/bin/sh\n{script}\n"), &args)
    }

    /// Slurm's view of this test's job `name`: `(state, nodes)` of each of
    /// its Slurm jobs, oldest first.
    fn squeue(&self, name: &str) -> Vec<(String, Vec<String>)> {
        let name = format!("{}{name}", self.prefix);
        let out = self.slurm("squeue", &["-h", "-t", "all", "-o", "%i|%j|%T|%N"]);
        let mut rows: Vec<(u64, String, Vec<String>)> = out
            .lines()
            .filter_map(|l| {
                let f: Vec<&str> = l.split('|').collect();
                (f.len() == 4 && f[1] == name).then(|| {
                    (
                        f[0].trim().parse().unwrap_or(0),
                        f[2].to_string(),
                        expand(f[3].trim()),
                    )
                })
            })
            .collect();
        rows.sort();
        rows.into_iter().map(|(_, s, n)| (s, n)).collect()
    }

    /// Waits until the newest Slurm job of `name` is in `state`; its nodes.
    fn wait_slurm(&self, name: &str, state: &str, timeout: u64) -> Vec<String> {
        let deadline = Instant::now() + Duration::from_secs(timeout);
        loop {
            let rows = self.squeue(name);
            if let Some((s, nodes)) = rows.last() {
                if s == state {
                    return nodes.clone();
                }
            }
            assert!(
                Instant::now() < deadline,
                "{name}: Slurm shows {rows:?}, expected {state}\n{}",
                self.d.daemon_log()
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// The nodes checkjob lists under `Allocated Nodes:`.
    fn arches_nodes(&self, id: u64) -> Vec<String> {
        let out = self.d.checkjob(id);
        let line = out
            .lines()
            .skip_while(|l| !l.starts_with("Allocated Nodes:"))
            .nth(1)
            .unwrap_or_else(|| panic!("no allocation:\n{out}"));
        let mut names: Vec<String> = line
            .split(['[', ']'])
            .filter(|s| !s.is_empty())
            .map(|s| s.split(':').next().unwrap().to_string())
            .collect();
        names.sort();
        names
    }

    /// Slurm's start time of the newest Slurm job of `name` (epoch).
    fn slurm_start(&self, name: &str) -> i64 {
        let name = format!("{}{name}", self.prefix);
        let out = Command::new("squeue")
            .args(["-h", "-t", "all", "-n", &name, "-o", "%i %S"])
            .env("SLURM_CONF", &self.conf)
            .env("SLURM_TIME_FORMAT", "%s")
            .output()
            .unwrap();
        text(&out.stdout)
            .lines()
            .filter_map(|l| {
                let (id, t) = l.split_once(' ')?;
                Some((id.parse::<u64>().ok()?, t.trim().parse::<i64>().ok()?))
            })
            .max()
            .map(|(_, t)| t)
            .unwrap_or_else(|| panic!("{name}: no start time in Slurm"))
    }

    /// Arches' start time of a job (checkjob's XML `StartTime`).
    fn arches_start(&self, id: u64) -> i64 {
        let out = text(
            &self
                .d
                .run("checkjob", &["--format=xml", &id.to_string()])
                .stdout,
        );
        let at = out.find("StartTime=\"").expect(&out) + "StartTime=\"".len();
        out[at..].split('"').next().unwrap().parse().expect(&out)
    }

    fn checknode_state(&self, node: &str) -> String {
        let out = text(&self.d.run("checknode", &[node]).stdout);
        out.lines()
            .find_map(|l| l.strip_prefix("State:"))
            .and_then(|s| s.split_whitespace().next())
            .unwrap_or("")
            .to_string()
    }

    fn wait_node(&self, node: &str, state: &str, timeout: u64) {
        let deadline = Instant::now() + Duration::from_secs(timeout);
        loop {
            let got = self.checknode_state(node);
            if got == state {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "checknode {node}: {got}, expected {state}"
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }
}

/// Starts slurmctld again when dropped: a test that stopped it and failed
/// must not leave the shared cluster without a controller.
struct CtldBack<'a>(&'a Fx);

impl Drop for CtldBack<'_> {
    fn drop(&mut self) {
        self.0.cluster_script(&["start-ctld"]);
    }
}

/// `MinJobAge=2` while alive (`scontrol reconfigure`): Slurm forgets ended
/// jobs within seconds, as a production cluster does after `MinJobAge`.
/// The configuration is put back when dropped.
struct ShortJobAge<'a> {
    fx: &'a Fx,
    original: String,
}

impl<'a> ShortJobAge<'a> {
    fn new(fx: &'a Fx) -> ShortJobAge<'a> {
        let original = std::fs::read_to_string(&fx.conf).unwrap();
        assert!(original.contains("\nMinJobAge="), "{original}");
        let short: String = original
            .lines()
            .map(|l| {
                if l.starts_with("MinJobAge=") {
                    "MinJobAge=2\n".to_string()
                } else {
                    format!("{l}\n")
                }
            })
            .collect();
        std::fs::write(&fx.conf, short).unwrap();
        fx.slurm("scontrol", &["reconfigure"]);
        ShortJobAge { fx, original }
    }
}

impl Drop for ShortJobAge<'_> {
    fn drop(&mut self) {
        let _ = std::fs::write(&self.fx.conf, &self.original);
        let _ = Command::new("scontrol")
            .arg("reconfigure")
            .env("SLURM_CONF", &self.fx.conf)
            .status();
    }
}

/// `n[1-3,7]` → names (enough for the test cluster's node names).
fn expand(list: &str) -> Vec<String> {
    let mut out = Vec::new();
    if list.is_empty() || list == "(null)" {
        return out;
    }
    if let Some((prefix, rest)) = list.split_once('[') {
        for part in rest.trim_end_matches(']').split(',') {
            let (a, b) = part.split_once('-').unwrap_or((part, part));
            let (a, b): (u32, u32) = (a.parse().unwrap(), b.parse().unwrap());
            out.extend((a..=b).map(|i| format!("{prefix}{i}")));
        }
    } else {
        out.extend(list.split(',').map(String::from));
    }
    out.sort();
    out
}

#[test]
fn multi_node_jobs_run_on_the_nodes_the_engine_chose_and_nodes_reflect_slurm() {
    // NODECFG does not turn discovery off: its features are laid on top of
    // Slurm's nodes, its PROCS= is ignored with a warning.
    let Some(fx) = fixture_with("place", "NODECFG[n1] FEATURES=gpu PROCS=2\n") else {
        return;
    };
    let showq = text(&fx.d.run("showq", &[]).stdout);
    assert!(showq.contains("of 32 processors"), "{showq}");
    assert!(showq.contains("of 4 nodes"), "{showq}");
    let n1 = text(&fx.d.run("checknode", &["n1"]).stdout);
    assert!(n1.contains("Configured Resources: PROCS: 8"), "{n1}");
    assert!(n1.contains("Features:   gpu"), "{n1}");
    let check = fx.d.run("mdiag", &["-C"]);
    let check = text(&check.stdout) + &text(&check.stderr);
    assert!(
        check.contains("NODECFG[n1] PROCS: ignored with RMCFG[slurm] TYPE=SLURM"),
        "{check}"
    );
    // A feature added in Slurm is followed; a job asking for it lands there.
    fx.slurm(
        "scontrol",
        &[
            "update",
            "NodeName=n3",
            "AvailableFeatures=big",
            "ActiveFeatures=big",
        ],
    );
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let n3 = text(&fx.d.run("checknode", &["n3"]).stdout);
        if n3.contains("Features:   big") {
            break;
        }
        assert!(Instant::now() < deadline, "{n3}");
        std::thread::sleep(Duration::from_millis(200));
    }
    let g = fx.submit("g", "nodes=1:ppn=1,walltime=60,feature=gpu", "sleep 1", &[]);
    let f = fx.submit("f", "nodes=1:ppn=1,walltime=60,feature=big", "sleep 1", &[]);
    assert_eq!(fx.wait_slurm("g", "COMPLETED", 20), ["n1"]);
    assert_eq!(fx.wait_slurm("f", "COMPLETED", 20), ["n3"]);
    fx.d.wait_state(g, "Completed", Duration::from_secs(20));
    fx.d.wait_state(f, "Completed", Duration::from_secs(20));
    let a = fx.submit("a", "nodes=1:ppn=6,walltime=60", "sleep 30", &[]);
    let b = fx.submit("b", "nodes=3:ppn=5,walltime=60", "sleep 30", &[]);
    let sa = fx.wait_slurm("a", "RUNNING", 20);
    let sb = fx.wait_slurm("b", "RUNNING", 20);
    assert_eq!(sa, fx.arches_nodes(a), "job a: Slurm vs engine");
    assert_eq!(sb, fx.arches_nodes(b), "job b: Slurm vs engine");
    assert_eq!(sb.len(), 3);
    let showq = text(&fx.d.run("showq", &[]).stdout);
    assert!(showq.contains("21 of 32 processors"), "{showq}");
    // A drained Slurm node is Drained for Arches, and comes back.
    let free = ["n1", "n2", "n3", "n4"]
        .into_iter()
        .find(|n| !sa.iter().chain(&sb).any(|x| x == n));
    let node = free.unwrap_or("n4");
    fx.slurm(
        "scontrol",
        &[
            "update",
            &format!("NodeName={node}"),
            "State=DRAIN",
            "Reason=arches-test",
        ],
    );
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        // Draining while a job still runs on it.
        let st = fx.checknode_state(node);
        if st == "Drained" || st == "Draining" {
            break;
        }
        assert!(Instant::now() < deadline, "checknode {node}: {st}");
        std::thread::sleep(Duration::from_millis(200));
    }
    fx.slurm(
        "scontrol",
        &["update", &format!("NodeName={node}"), "State=RESUME"],
    );
    let deadline = Instant::now() + Duration::from_secs(20);
    while ["Drained", "Draining"].contains(&fx.checknode_state(node).as_str()) {
        assert!(Instant::now() < deadline, "{node} stays drained");
        std::thread::sleep(Duration::from_millis(200));
    }
    for id in [a, b] {
        fx.d.run("canceljob", &[&id.to_string()]);
    }
    fx.wait_slurm("a", "CANCELLED", 20);
    fx.wait_slurm("b", "CANCELLED", 20);
}

#[test]
fn backfill_around_a_reservation_then_cancel() {
    let Some(fx) = fixture("bf") else { return };
    // A holds 3 of the 4 nodes; B needs all 4 and waits with a reservation
    // at A's end; C is short enough to run on the free node meanwhile.
    let a = fx.submit("a", "nodes=3:ppn=8,walltime=300", "sleep 300", &[]);
    fx.wait_slurm("a", "RUNNING", 20);
    let b = fx.submit("b", "nodes=4:ppn=8,walltime=60", "sleep 60", &[]);
    let c = fx.submit("c", "nodes=1:ppn=8,walltime=30", "sleep 3", &[]);
    let nodes_c = fx.wait_slurm("c", "RUNNING", 20);
    assert_eq!(nodes_c, fx.arches_nodes(c));
    assert!(!fx.arches_nodes(a).contains(&nodes_c[0]));
    assert!(
        fx.squeue("b").is_empty(),
        "B is not in Slurm while it waits"
    );
    let out = fx.d.checkjob(b);
    assert!(out.contains("State: Idle"), "{out}");
    fx.wait_slurm("c", "COMPLETED", 30);
    fx.d.wait_state(c, "Completed", Duration::from_secs(20));
    // A ends early: B starts on all four nodes.
    fx.d.run("canceljob", &[&a.to_string()]);
    fx.wait_slurm("a", "CANCELLED", 20);
    let nodes_b = fx.wait_slurm("b", "RUNNING", 30);
    assert_eq!(nodes_b, ["n1", "n2", "n3", "n4"]);
    fx.d.run("canceljob", &[&b.to_string()]);
    fx.wait_slurm("b", "CANCELLED", 20);
    fx.d.wait_state(b, "Removed", Duration::from_secs(20));
}

#[test]
fn requeue_starts_a_new_slurm_job_and_exit_codes_come_back() {
    let Some(fx) = fixture("rq") else { return };
    let r = fx.submit("r", "nodes=1:ppn=2,walltime=120", "sleep 120", &["-r", "y"]);
    fx.wait_slurm("r", "RUNNING", 20);
    let out = fx.d.run("mjobctl", &["-R", &r.to_string()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let rows = fx.squeue("r");
        if rows.len() == 2 && rows[0].0 == "CANCELLED" && rows[1].0 == "RUNNING" {
            break;
        }
        assert!(Instant::now() < deadline, "after requeue: {rows:?}");
        std::thread::sleep(Duration::from_millis(200));
    }
    fx.d.run("canceljob", &[&r.to_string()]);
    fx.wait_slurm("r", "CANCELLED", 20);
    let e = fx.submit("e", "nodes=1:ppn=1,walltime=60", "exit 7", &[]);
    // Killed by a signal: 128 + 9.
    let k = fx.submit("k", "nodes=1:ppn=1,walltime=60", "kill -9 $$", &[]);
    fx.wait_slurm("e", "FAILED", 20);
    let out = fx.d.wait_state(e, "Completed", Duration::from_secs(20));
    assert!(out.contains("Completion Code: 7"), "{out}");
    fx.wait_slurm("k", "FAILED", 20);
    let out = fx.d.wait_state(k, "Completed", Duration::from_secs(20));
    assert!(out.contains("Completion Code: 137"), "{out}");
    // mjobctl -N reaches the job's processes through Slurm.
    let log = fx.d.home.path().join("sig.out");
    let script =
        "trap 'echo got USR1' USR1\necho started\nfor i in $(seq 1 300); do sleep 0.2; done";
    let s = fx.submit(
        "s",
        "nodes=1:ppn=1,walltime=120",
        script,
        &["-o", &log.to_string_lossy(), "-j", "oe"],
    );
    let wait_log = |want: &str| {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let got = std::fs::read_to_string(&log).unwrap_or_default();
            if got.contains(want) {
                return;
            }
            assert!(Instant::now() < deadline, "no {want:?} in {got:?}");
            std::thread::sleep(Duration::from_millis(200));
        }
    };
    wait_log("started");
    let out = fx.d.run("mjobctl", &["-N", "USR1", &s.to_string()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    wait_log("got USR1");
    fx.d.run("canceljob", &[&s.to_string()]);
    fx.wait_slurm("s", "CANCELLED", 20);
}

#[test]
fn slurmd_killed_mid_job_requeues_restartable_jobs_and_fails_the_others() {
    let Some(fx) = fixture("nf") else { return };
    let r = fx.submit("r", "nodes=1:ppn=8,walltime=300", "sleep 300", &["-r", "y"]);
    let f = fx.submit("f", "nodes=1:ppn=8,walltime=300", "sleep 300", &["-r", "n"]);
    let nodes_r = fx.wait_slurm("r", "RUNNING", 20);
    let nodes_f = fx.wait_slurm("f", "RUNNING", 20);
    let (dead_r, dead_f) = (nodes_r[0].clone(), nodes_f[0].clone());
    fx.cluster_script(&["kill-node", &dead_r]);
    fx.cluster_script(&["kill-node", &dead_f]);
    // Slurm notices (SlurmdTimeout), ends both with NODE_FAIL; Arches stops
    // using the nodes, requeues r elsewhere and fails f.
    fx.wait_slurm("f", "NODE_FAIL", 120);
    fx.wait_node(&dead_f, "Down", 30);
    let out = fx.d.wait_state(f, "Completed", Duration::from_secs(30));
    assert!(!out.contains("Completion Code: 0 "), "{out}");
    let now_r = fx.wait_slurm("r", "RUNNING", 60);
    assert!(
        now_r != [dead_r.clone()] && now_r != [dead_f.clone()],
        "requeued onto a dead node: {now_r:?}"
    );
    assert_eq!(fx.squeue("r").len(), 2, "{:?}", fx.squeue("r"));
    assert_eq!(now_r, fx.arches_nodes(r));
    let out = fx.d.checkjob(r);
    assert!(out.contains("node") && out.contains("failed"), "{out}");
    // The nodes come back.
    fx.cluster_script(&["start-node", &dead_r]);
    if dead_f != dead_r {
        fx.cluster_script(&["start-node", &dead_f]);
    }
    fx.wait_node(&dead_r, "Idle", 60);
    fx.d.run("canceljob", &[&r.to_string()]);
    fx.wait_slurm("r", "CANCELLED", 20);
}

#[test]
fn a_restarted_daemon_finds_its_slurm_jobs_again() {
    let Some(mut fx) = fixture("rs") else { return };
    let e = fx.submit("e", "nodes=1:ppn=1,walltime=60", "sleep 3; exit 3", &[]);
    let l = fx.submit("l", "nodes=2:ppn=2,walltime=300", "sleep 300", &[]);
    fx.wait_slurm("e", "RUNNING", 20);
    let nodes_l = fx.wait_slurm("l", "RUNNING", 20);
    fx.d.wait_state(e, "Running", Duration::from_secs(10));
    fx.d.kill9();
    // e ends while Arches is down, and Slurm forgets it (MinJobAge): only
    // the completion log still knows how it ended.
    fx.wait_slurm("e", "FAILED", 30);
    {
        let _age = ShortJobAge::new(&fx);
        let deadline = Instant::now() + Duration::from_secs(90);
        while !fx.squeue("e").is_empty() {
            assert!(
                Instant::now() < deadline,
                "Slurm keeps {:?}",
                fx.squeue("e")
            );
            std::thread::sleep(Duration::from_millis(500));
        }
    }
    fx.d.spawn();
    let out = fx.d.wait_state(e, "Completed", Duration::from_secs(20));
    assert!(out.contains("Completion Code: 3"), "{out}");
    assert!(!out.contains("vanished"), "{out}");
    let out = fx.d.checkjob(l);
    assert!(out.contains("State: Running"), "{out}");
    assert_eq!(fx.arches_nodes(l), nodes_l);
    // Adopted: a cancel reaches the same Slurm job, and nothing was started twice.
    fx.d.run("canceljob", &[&l.to_string()]);
    fx.wait_slurm("l", "CANCELLED", 20);
    assert_eq!(fx.squeue("l").len(), 1, "{:?}", fx.squeue("l"));
}

#[test]
fn a_slurmctld_restart_is_waited_out() {
    let Some(fx) = fixture("ctld") else { return };
    let a = fx.submit("a", "nodes=1:ppn=1,walltime=60", "sleep 6", &[]);
    let k = fx.submit("k", "nodes=1:ppn=1,walltime=120", "sleep 120", &[]);
    fx.wait_slurm("a", "RUNNING", 20);
    fx.wait_slurm("k", "RUNNING", 20);
    fx.d.wait_state(a, "Running", Duration::from_secs(10));
    // Arches counts a's time from Slurm's start, not from its decision.
    assert_eq!(fx.arches_start(a), fx.slurm_start("a"));
    fx.cluster_script(&["stop-ctld"]);
    let back = CtldBack(&fx);
    let b = fx.submit("b", "nodes=1:ppn=1,walltime=60", "sleep 2; exit 5", &[]);
    // Decided, not running: Starting (never Running) while Slurm is away.
    fx.d.wait_state(b, "Starting", Duration::from_secs(10));
    // A cancel during the outage is not lost.
    fx.d.run("canceljob", &[&k.to_string()]);
    std::thread::sleep(Duration::from_secs(3));
    let out = fx.d.checkjob(b);
    assert!(out.contains("State: Starting"), "{out}");
    let out = fx.d.checkjob(a);
    assert!(out.contains("State: Running"), "{out}");
    drop(back);
    fx.wait_slurm("b", "FAILED", 60);
    let out = fx.d.wait_state(b, "Completed", Duration::from_secs(30));
    assert!(out.contains("Completion Code: 5"), "{out}");
    assert_eq!(fx.arches_start(b), fx.slurm_start("b"));
    let out = fx.d.wait_state(a, "Completed", Duration::from_secs(30));
    assert!(out.contains("Completion Code: 0"), "{out}");
    fx.wait_slurm("k", "CANCELLED", 30);
    assert_eq!(
        fx.squeue("b").len(),
        1,
        "started once: {:?}",
        fx.squeue("b")
    );
}

#[test]
fn jobs_run_as_their_user_and_admin_suspend_resume_go_through_slurm() {
    let Some(fx) = fixture("usr") else { return };
    if !common::is_root() {
        eprintln!("NOTICE: not root; the run-as-user part is skipped");
        return;
    }
    let user = common::ensure_user("archese2e");
    let outdir = tempfile::Builder::new()
        .prefix("arches-slurm-user")
        .tempdir()
        .unwrap();
    common::set_mode(outdir.path(), 0o1777);
    let out = outdir.path().join("u.out");
    let script = fx.d.home.path().join("user-job.sh");
    std::fs::write(
        &script,
        "#!/bin/sh\nid -un\ncat \"$PBS_NODEFILE\" | wc -l\necho \"$MOAB_NODELIST\"\ntouch \"$PBS_O_WORKDIR/u.created\"\nfor i in $(seq 1 100); do sleep 0.2; done\n",
    )
    .unwrap();
    common::set_mode(&script, 0o644);
    let name = format!("{}u", fx.prefix);
    let o = Command::new("setpriv")
        .args(["--reuid", &user, "--regid", &user, "--init-groups", "--"])
        .arg(common::bin("msub"))
        .args([
            "-N",
            &name,
            "-l",
            "nodes=1:ppn=3,walltime=60,flags=suspendable",
            "-W",
            "umask=077",
            "-o",
        ])
        .arg(&out)
        .arg("-j")
        .arg("oe")
        .arg(&script)
        .current_dir(outdir.path())
        .env_clear()
        .envs(common::base_env(fx.d.home.path(), &fx.d.socket))
        .output()
        .unwrap();
    assert!(o.status.success(), "msub as {user}: {}", text(&o.stderr));
    let id = common::parse_id(&o);
    let nodes = fx.wait_slurm("u", "RUNNING", 20);
    let owner = fx.slurm("squeue", &["-h", "-t", "all", "-n", &name, "-o", "%u"]);
    assert_eq!(owner.trim(), user, "the Slurm job belongs to the user");
    // Admin suspend/resume reach Slurm.
    let s = fx.d.run("mjobctl", &["-s", &id.to_string()]);
    assert!(s.status.success(), "{}", text(&s.stderr));
    fx.wait_slurm("u", "SUSPENDED", 20);
    let r = fx.d.run("mjobctl", &["-r", &id.to_string()]);
    assert!(r.status.success(), "{}", text(&r.stderr));
    fx.wait_slurm("u", "RUNNING", 20);
    fx.d.run("canceljob", &[&id.to_string()]);
    fx.wait_slurm("u", "CANCELLED", 20);
    let text_out = std::fs::read_to_string(&out).unwrap_or_default();
    let lines: Vec<&str> = text_out.lines().collect();
    assert!(
        lines.len() >= 3 && lines[0] == user && lines[1].trim() == "3" && lines[2] == nodes[0],
        "job output: {text_out:?}"
    );
    // `-W umask=077` reached the job through sbatch (SLURM_UMASK).
    use std::os::unix::fs::MetadataExt;
    let created = outdir.path().join("u.created");
    let mode = std::fs::metadata(&created).map(|m| m.mode() & 0o777);
    assert_eq!(mode.ok(), Some(0o600), "{}", created.display());
}

#[test]
fn a_high_qos_job_suspends_a_low_qos_one_in_slurm_which_resumes_later() {
    // SUSPENDSIG other than STOP: the job gets it, and Slurm still suspends
    // the job (so the preemptor's CPUs are free in Slurm, not only in Arches).
    let extra =
        "QOSWEIGHT 1\nQOSCFG[high] QFLAGS=PREEMPTOR PRIORITY=1000\nQOSCFG[low] QFLAGS=PREEMPTEE\n\
                 RESERVATIONPOLICY NEVER\nPREEMPTPOLICY SUSPEND\nRMCFG[slurm] SUSPENDSIG=SIGTSTP\n";
    let Some(mut fx) = fixture_with("pre", extra) else {
        return;
    };
    let log = fx.d.home.path().join("low.out");
    let low = fx.submit(
        "low",
        "procs=32,walltime=300,qos=low,flags=suspendable",
        "trap 'echo got TSTP' TSTP\nfor i in $(seq 1 1500); do sleep 0.2; done",
        &["-o", &log.to_string_lossy(), "-j", "oe"],
    );
    let nodes_low = fx.wait_slurm("low", "RUNNING", 20);
    assert_eq!(nodes_low.len(), 4);
    fx.d.wait_state(low, "Running", Duration::from_secs(10));
    let high = fx.submit("high", "procs=8,walltime=60,qos=high", "sleep 8", &[]);
    // Slurm suspends low (its CPUs are free) and runs high on one of its nodes.
    fx.wait_slurm("low", "SUSPENDED", 30);
    let nodes_high = fx.wait_slurm("high", "RUNNING", 30);
    assert_eq!(nodes_high, fx.arches_nodes(high));
    fx.d.wait_state(high, "Running", Duration::from_secs(10));
    assert_eq!(fx.arches_start(high), fx.slurm_start("high"));
    fx.d.wait_state(low, "Suspended", Duration::from_secs(10));
    // The suspended job's other processors are free for other jobs, in
    // Arches as in Slurm (docs/slurm.md §3).
    let mid = fx.submit("mid", "procs=8,walltime=60", "sleep 16", &[]);
    let nodes_mid = fx.wait_slurm("mid", "RUNNING", 30);
    assert!(nodes_low.contains(&nodes_mid[0]), "{nodes_mid:?}");
    assert_eq!(nodes_mid, fx.arches_nodes(mid));
    // The daemon restarts while low is suspended (by a signal): nothing
    // about that suspension is lost.
    fx.d.kill9();
    fx.d.spawn();
    fx.wait_slurm("high", "COMPLETED", 30);
    fx.d.wait_state(high, "Completed", Duration::from_secs(20));
    // high is done, mid still runs on low's processors: low stays suspended.
    assert_eq!(
        fx.squeue("mid").last().map(|r| r.0.as_str()),
        Some("RUNNING")
    );
    assert_eq!(
        fx.squeue("low").last().map(|r| r.0.as_str()),
        Some("SUSPENDED")
    );
    let out = fx.d.checkjob(low);
    assert!(out.contains("State: Suspended"), "{out}");
    // mid ends; Arches resumes low in Slurm.
    fx.wait_slurm("mid", "COMPLETED", 30);
    fx.wait_slurm("low", "RUNNING", 30);
    fx.d.wait_state(low, "Running", Duration::from_secs(10));
    assert_eq!(fx.squeue("low").len(), 1, "resumed, not restarted");
    let deadline = Instant::now() + Duration::from_secs(20);
    while !std::fs::read_to_string(&log)
        .unwrap_or_default()
        .contains("got TSTP")
    {
        assert!(Instant::now() < deadline, "low never saw SIGTSTP");
        std::thread::sleep(Duration::from_millis(200));
    }
    fx.d.run("canceljob", &[&low.to_string()]);
    fx.wait_slurm("low", "CANCELLED", 20);
}

#[test]
fn checkpoint_and_requeue_preemption_restart_the_jobs_as_new_slurm_jobs() {
    let extra =
        "QOSWEIGHT 1\nQOSCFG[high] QFLAGS=PREEMPTOR PRIORITY=1000\nQOSCFG[low] QFLAGS=PREEMPTEE\n\
                 RESERVATIONPOLICY NEVER\nPREEMPTPOLICY CHECKPOINT\n\
                 RMCFG[slurm] CHECKPOINTSIG=SIGUSR2 CHECKPOINTTIMEOUT=2\n";
    let Some(fx) = fixture_with("ck", extra) else {
        return;
    };
    let log = fx.d.home.path().join("ckpt.out");
    // c can checkpoint (it gets CHECKPOINTSIG, then is requeued after the
    // timeout); r cannot but is restartable (requeued at once).
    let c = fx.submit(
        "c",
        "nodes=2:ppn=8,walltime=300,qos=low,flags=checkpoint:suspendable",
        "trap 'echo checkpoint' USR2\nfor i in $(seq 1 1500); do sleep 0.2; done",
        &["-o", &log.to_string_lossy(), "-j", "oe"],
    );
    let r = fx.submit(
        "r",
        "nodes=2:ppn=8,walltime=300,qos=low,flags=restartable:suspendable",
        "sleep 300",
        &[],
    );
    fx.wait_slurm("c", "RUNNING", 20);
    fx.wait_slurm("r", "RUNNING", 20);
    fx.d.wait_state(c, "Running", Duration::from_secs(10));
    fx.d.wait_state(r, "Running", Duration::from_secs(10));
    let high = fx.submit("high", "procs=32,walltime=60,qos=high", "sleep 3", &[]);
    fx.wait_slurm("high", "RUNNING", 40);
    // c wrote its checkpoint line before it was requeued; read it while
    // high runs (c's next Slurm job, after high, truncates its output).
    let ckpt = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(ckpt.contains("checkpoint"), "{ckpt:?}");
    fx.wait_slurm("high", "COMPLETED", 30);
    fx.d.wait_state(high, "Completed", Duration::from_secs(20));
    assert_eq!(fx.squeue("c")[0].0, "CANCELLED");
    assert_eq!(fx.squeue("r")[0].0, "CANCELLED");
    // Both start again, each as a new Slurm job.
    fx.wait_slurm("c", "RUNNING", 30);
    fx.wait_slurm("r", "RUNNING", 30);
    assert_eq!(fx.squeue("c").len(), 2, "{:?}", fx.squeue("c"));
    assert_eq!(fx.squeue("r").len(), 2, "{:?}", fx.squeue("r"));
    fx.d.wait_state(c, "Running", Duration::from_secs(10));
    for id in [c, r] {
        fx.d.run("canceljob", &[&id.to_string()]);
    }
    fx.wait_slurm("c", "CANCELLED", 20);
    fx.wait_slurm("r", "CANCELLED", 20);
}

/// Issue 15 on Slurm: GPUs that only `NODECFG` declares are given out by
/// Arches (two jobs, two distinct devices on the one GPU node, a third
/// waits), named hosts and host lists land where asked, and an exclusive
/// job gets a whole node (`--exclusive`: all its CPUs in Slurm).
#[test]
fn gpus_host_lists_and_exclusive_nodes_through_slurm() {
    let Some(fx) = fixture_with("gres", "NODECFG[n2] GRES=gpu:2\n") else {
        return;
    };
    let n2 = text(&fx.d.run("checknode", &["n2"]).stdout);
    assert!(
        n2.contains("Configured Resources: PROCS: 8") && n2.contains("gpu: 2"),
        "{n2}"
    );
    let home = fx.d.home.path().to_path_buf();
    let gpu_script = |n: u32| {
        format!(
            "echo \"$CUDA_VISIBLE_DEVICES\" > {}/dev{n}.txt\nsleep 60",
            home.display()
        )
    };
    let g1 = fx.submit("g1", "gres=gpu:1,walltime=120", &gpu_script(1), &[]);
    let g2 = fx.submit(
        "g2",
        "nodes=1:ppn=1:gpus=1,walltime=120",
        &gpu_script(2),
        &[],
    );
    assert_eq!(fx.wait_slurm("g1", "RUNNING", 30), ["n2"]);
    assert_eq!(fx.wait_slurm("g2", "RUNNING", 30), ["n2"]);
    let read = |n: u32| {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Ok(s) = std::fs::read_to_string(home.join(format!("dev{n}.txt"))) {
                if !s.trim().is_empty() {
                    return s.trim().to_string();
                }
            }
            assert!(Instant::now() < deadline, "dev{n}.txt never written");
            std::thread::sleep(Duration::from_millis(200));
        }
    };
    let mut devs = [read(1), read(2)];
    devs.sort();
    assert_eq!(devs, ["0".to_string(), "1".to_string()], "distinct devices");
    let g3 = fx.submit("g3", "gres=gpu:1,walltime=120", "sleep 1", &[]);
    fx.d.wait_considered(g3, Duration::from_secs(20));
    assert!(
        fx.squeue("g3").is_empty(),
        "a third GPU job waits in Arches"
    );
    // Named hosts and host lists.
    let h = fx.submit("h", "nodes=n3:ppn=2,walltime=60", "sleep 1", &[]);
    assert_eq!(fx.wait_slurm("h", "COMPLETED", 30), ["n3"]);
    let l = fx.submit("l", "walltime=60", "sleep 1", &["-W", "x=HOSTLIST:n4"]);
    assert_eq!(fx.wait_slurm("l", "COMPLETED", 30), ["n4"]);
    fx.d.wait_state(h, "Completed", Duration::from_secs(20));
    fx.d.wait_state(l, "Completed", Duration::from_secs(20));
    // An exclusive one-processor job takes a whole node in Slurm too.
    let x = fx.submit(
        "x",
        "procs=1,naccesspolicy=singlejob,walltime=60",
        "sleep 30",
        &[],
    );
    let nodes = fx.wait_slurm("x", "RUNNING", 30);
    assert_eq!(nodes, fx.arches_nodes(x));
    let name = format!("{}x", fx.prefix);
    let id = fx.slurm("squeue", &["-h", "-n", &name, "-o", "%i"]);
    let info = fx.slurm("scontrol", &["show", "job", id.trim()]);
    assert!(info.contains("NumCPUs=8"), "{info}");
    assert!(info.contains("OverSubscribe=NO"), "{info}");
    for id in [g1, g2, g3, x] {
        fx.d.run("canceljob", &[&id.to_string()]);
    }
    fx.wait_slurm("x", "CANCELLED", 20);
}

#[test]
fn templates_filters_and_notifications_with_slurm_and_ranges_refused() {
    let dir = tempfile::Builder::new()
        .prefix("arches-slurm-seeds")
        .tempdir()
        .unwrap();
    common::set_mode(dir.path(), 0o777);
    let write = |name: &str, body: &str| {
        let p = dir.path().join(name);
        std::fs::write(&p, body).unwrap();
        common::set_mode(&p, 0o755);
        p.display().to_string()
    };
    let filter = write(
        "filter",
        "#!/bin/sh\nsed 's#</job>#<Extension>x=FLAGS:RESTARTABLE</Extension></job>#'\n",
    );
    let activation = write(
        "activation",
        "#!/bin/sh\necho \"$1\" >> \"$(dirname \"$0\")/activated\"\necho ok\n",
    );
    let sendmail = write("sendmail", "#!/bin/sh\ncat >> \"$(dirname \"$0\")/mail\"\n");
    let extra = format!(
        "JOBCFG[runtime] WALLTIME=00:02:00\nJOBMATCHCFG[default] JDEF=runtime\n\
         SUBMITFILTER {filter}\nACTIVATIONFILTER {activation}\nMAILPROGRAM {sendmail}\n"
    );
    let Some(fx) = fixture_with("seeds", &extra) else {
        return;
    };
    // No walltime: the template's; the filter's flag; the activation
    // filter's approval; mail when Slurm reports it running and done.
    let a = fx.submit("a", "nodes=1:ppn=8", "sleep 2", &["-m", "be"]);
    fx.wait_slurm("a", "RUNNING", 30);
    let cj = fx.d.checkjob(a);
    assert!(cj.contains("of 00:02:00"), "{cj}");
    assert!(cj.contains("TemplateSets:  default"), "{cj}");
    assert!(cj.contains("Flags:          RESTARTABLE"), "{cj}");
    assert!(cj.contains("activation filter: start allowed (ok)"), "{cj}");
    let activated = std::fs::read_to_string(dir.path().join("activated")).unwrap_or_default();
    assert_eq!(activated, format!("{a}\n"));
    fx.d.wait_state(a, "Completed", Duration::from_secs(40));
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let mail = std::fs::read_to_string(dir.path().join("mail")).unwrap_or_default();
        if mail.contains("Execution terminated") {
            assert!(mail.contains("Begun execution"), "{mail}");
            assert!(mail.contains("Exit_status=0"), "{mail}");
            break;
        }
        assert!(Instant::now() < deadline, "no end mail: {mail:?}");
        std::thread::sleep(Duration::from_millis(200));
    }
    // Slurm cannot grow a running job: processor ranges are refused.
    let out =
        fx.d.run_stdin("msub", &["-l", "procs=8-16,walltime=60"], "true\n");
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        text(&out.stderr),
        "ERROR:    cannot submit job - the SLURM resource manager cannot resize running jobs: processor ranges (procs=MIN-MAX) are not supported\n"
    );
}

#[test]
fn array_sub_jobs_with_their_environment_and_arguments_run_in_slurm() {
    let Some(fx) = fixture("arr") else { return };
    let id = fx.submit(
        "arr",
        "nodes=1:ppn=1,walltime=60",
        "echo \"$PBS_JOBID|$PBS_ARRAYID|$MOAB_JOBARRAYRANGE|$PBS_ENVIRONMENT|$PBS_WALLTIME|$PBS_NUM_NODES|$PBS_NP|$MOAB_MACHINE|$#|$1|$2\"",
        &["-t", "1-3%2", "-F", "one 'two words'"],
    );
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let out = fx.d.checkjob(id);
        if out.contains("    Completed:        3 ( 100.0% )") {
            break;
        }
        assert!(Instant::now() < deadline, "array never completed:\n{out}");
        std::thread::sleep(Duration::from_millis(200));
    }
    for i in 1..=3 {
        let path = fx.d.home.path().join(format!("{}arr.o{id}-{i}", fx.prefix));
        let out = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
        assert_eq!(
            out,
            format!("{id}[{i}]|{i}|3|PBS_BATCH|60|1|1|slurm|2|one|two words\n"),
            "sub-job {i}"
        );
    }
}

impl Fx {
    /// Slurm's job id of the newest Slurm job of `name`.
    fn slurm_id(&self, name: &str) -> u64 {
        let name = format!("{}{name}", self.prefix);
        let out = self.slurm("squeue", &["-h", "-t", "all", "-n", &name, "-o", "%i"]);
        out.split_whitespace()
            .filter_map(|w| w.parse().ok())
            .max()
            .unwrap_or_else(|| panic!("{name}: no Slurm job"))
    }

    /// `msub -I -N <prefix><name> args...` on a terminal of its own.
    fn msub_interactive(&self, name: &str, args: &[&str], cwd: &Path) -> (Term, u64) {
        self.msub_interactive_env(name, args, cwd, &[])
    }

    fn msub_interactive_env(
        &self,
        name: &str,
        args: &[&str],
        cwd: &Path,
        env: &[(&str, &str)],
    ) -> (Term, u64) {
        let name = format!("{}{name}", self.prefix);
        let mut all = vec!["-I", "-N", &name];
        all.extend_from_slice(args);
        let t = Term::spawn_env(&self.d, "msub", &all, cwd, env);
        let out = t.wait_for("msub: waiting for job ");
        let id = job_id(&out);
        (t, id)
    }
}

#[test]
fn interactive_sessions_are_steps_of_their_slurm_job() {
    let Some(fx) = fixture("it") else { return };
    let cwd = tempfile::tempdir().expect("tempdir");
    let cwd_path = cwd.path().canonicalize().expect("canonical");
    let (mut t, id) = fx.msub_interactive("i", &["-l", "nodes=2:ppn=2,walltime=600"], &cwd_path);
    t.wait_for(&format!("msub: job {id} ready"));
    // Slurm runs the job, on the nodes Arches chose...
    let nodes = fx.wait_slurm("i", "RUNNING", 20);
    assert_eq!(nodes, fx.arches_nodes(id));
    let slurm = fx.slurm_id("i");
    // ...and the session is a step of it, on a terminal, in the job's
    // directory, with the job's environment.
    t.type_line("echo \"id=${PBS_JOBID} wd=$(pwd) env=${PBS_ENVIRONMENT} np=${PBS_NP} nodes=$(sort -u $PBS_NODEFILE | wc -l) step=${SLURM_JOB_ID}.${SLURM_STEP_ID} cpus=${SLURM_CPUS_PER_TASK}\"\n");
    // (All the job's CPUs on its first node are the session's.)
    t.wait_for(&format!(
        "id={id} wd={} env=PBS_INTERACTIVE np=4 nodes=2 step={slurm}.0 cpus=2",
        cwd_path.display()
    ));
    t.type_line("test -t 0 && echo \"tty\"\"=yes\"\n");
    t.wait_for("tty=yes");
    // No output files: the session's output is the terminal.
    t.type_line("exit 3\n");
    assert_eq!(
        t.exit_code(),
        3,
        "msub exits with the shell's status:\n{}",
        t.output()
    );
    let shown = t.wait_for(&format!("msub: job {id} completed"));
    // The same lines as on the LOCAL backend: srun's report of the exit
    // status is msub's own exit status.
    assert!(!shown.contains("Exited with exit code"), "{shown}");
    let cj = fx.d.wait_state(id, "Completed", Duration::from_secs(30));
    assert!(cj.contains("Completion Code: 3"), "{cj}");
    fx.wait_slurm("i", "FAILED", 20);
    let left: Vec<_> = std::fs::read_dir(&cwd_path).unwrap().collect();
    assert!(left.is_empty(), "no output files: {left:?}");

    // Without srun on this host: a clear error, and the job is canceled.
    let (mut t, id) = fx.msub_interactive_env(
        "n",
        &["-l", "nodes=1:ppn=1,walltime=600"],
        &cwd_path,
        &[("PATH", "/nonexistent")],
    );
    assert_eq!(t.exit_code(), 1, "{}", t.output());
    t.wait_for(&format!(
        "msub: srun not found in PATH: job {id} runs on a Slurm cluster"
    ));
    t.wait_for(&format!("job {id} canceled"));
    fx.d.wait_state(id, "Removed", Duration::from_secs(30));
    fx.wait_slurm("n", "CANCELLED", 20);
}

#[test]
fn an_interactive_job_of_a_user_runs_its_session_as_that_user_in_slurm() {
    let Some(fx) = fixture("itu") else { return };
    if !common::is_root() {
        eprintln!("NOTICE: not root; the run-as-user part is skipped");
        return;
    }
    let user = common::ensure_user("archese2e");
    let cwd = tempfile::Builder::new()
        .prefix("arches-slurm-itu")
        .tempdir()
        .unwrap();
    common::set_mode(cwd.path(), 0o1777);
    let name = format!("{}u", fx.prefix);
    let mut t = Term::spawn_as(
        &fx.d,
        &user,
        "msub",
        &["-I", "-N", &name, "-l", "nodes=1:ppn=1,walltime=600"],
        cwd.path(),
    );
    let id = job_id(&t.wait_for("msub: waiting for job "));
    t.wait_for(&format!("msub: job {id} ready"));
    let owner = fx.slurm("squeue", &["-h", "-t", "all", "-n", &name, "-o", "%u"]);
    assert_eq!(owner.trim(), user, "the Slurm job belongs to the user");
    // The session directory is the user's alone.
    let session =
        fx.d.home
            .path()
            .join("slurm-spool")
            .join(id.to_string())
            .join("session");
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata(&session).expect("session directory");
    assert_eq!(meta.mode() & 0o777, 0o700, "{}", session.display());
    let uid = text(
        &Command::new("id")
            .args(["-u", &user])
            .output()
            .unwrap()
            .stdout,
    );
    assert_eq!(meta.uid().to_string(), uid.trim());
    t.type_line("echo \"who=$(id -un) env=${PBS_ENVIRONMENT} jid=${PBS_JOBID}\"\n");
    t.wait_for(&format!("who={user} env=PBS_INTERACTIVE jid={id}"));
    // Nobody else runs a step in the job (Slurm refuses), nor reads or
    // writes its session.
    let other = common::ensure_user("archesitty");
    let slurm_id = fx.slurm_id("u");
    let o = Command::new("setpriv")
        .args(["--reuid", &other, "--regid", &other, "--init-groups", "--"])
        .arg("srun")
        .arg(format!("--jobid={slurm_id}"))
        .args(["--overlap", "-N1", "-n1", "true"])
        .env("SLURM_CONF", &fx.conf)
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .output()
        .unwrap();
    assert!(!o.status.success(), "srun as another user ran");
    assert!(
        text(&o.stderr).contains("Access/permission denied"),
        "{}",
        text(&o.stderr)
    );
    let o = Command::new("setpriv")
        .args(["--reuid", &other, "--regid", &other, "--init-groups", "--"])
        .args(["sh", "-c", "echo 0 > \"$1/status\" || ls \"$1\"", "-"])
        .arg(&session)
        .output()
        .unwrap();
    assert!(!o.status.success(), "{}", text(&o.stdout));
    t.type_line("exit 5\n");
    assert_eq!(t.exit_code(), 5, "{}", t.output());
    t.wait_for(&format!("msub: job {id} completed"));
    let cj = fx.d.wait_state(id, "Completed", Duration::from_secs(30));
    assert!(cj.contains("Completion Code: 5"), "{cj}");
}

#[test]
fn canceljob_ends_an_interactive_session_in_slurm() {
    let Some(fx) = fixture("itc") else { return };
    let cwd = tempfile::tempdir().expect("tempdir");
    let (mut t, id) = fx.msub_interactive("c", &["-l", "nodes=1:ppn=1,walltime=600"], cwd.path());
    t.wait_for(&format!("msub: job {id} ready"));
    t.type_line("echo \"sl\"\"eeping\"; sleep 1000\n");
    t.wait_for("sleeping\r\n");
    let out = fx.d.run("canceljob", &[&id.to_string()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let code = t.exit_code();
    t.wait_for(&format!("msub: job {id} completed"));
    // The session was killed with its job: msub exits with its status.
    assert!(
        code >= 128,
        "killed by a signal, got {code}: {}",
        t.output()
    );
    fx.d.wait_state(id, "Removed", Duration::from_secs(30));
    fx.wait_slurm("c", "CANCELLED", 20);
}

#[test]
fn an_interactive_session_in_slurm_ends_with_msub_or_its_walltime() {
    let Some(fx) = fixture("itw") else { return };
    let cwd = tempfile::tempdir().expect("tempdir");
    // msub ended by a signal: the session is hung up, the allocation ends
    // (status 129), and the user's terminal is restored.
    let (mut t, id) = fx.msub_interactive("h", &["-l", "nodes=1:ppn=1,walltime=600"], cwd.path());
    t.wait_for(&format!("msub: job {id} ready"));
    t.type_line("echo \"at\"\"tached\"\n");
    t.wait_for("attached\r\n");
    let cooked = libc::ICANON | libc::ECHO;
    assert_eq!(
        lflags(t.slave.as_raw_fd()) & cooked,
        0,
        "raw while attached"
    );
    // SAFETY: signals our own child.
    unsafe { libc::kill(t.child.id() as i32, libc::SIGTERM) };
    assert_eq!(t.exit_code(), 1, "{}", t.output());
    t.wait_for(&format!("detached from job {id}"));
    assert_eq!(
        lflags(t.slave.as_raw_fd()) & cooked,
        cooked,
        "the user's terminal is restored"
    );
    let cj = fx.d.wait_state(id, "Completed", Duration::from_secs(30));
    assert!(cj.contains("Completion Code: 129"), "{cj}");
    fx.wait_slurm("h", "FAILED", 20);
    // The wall-clock limit (Slurm's, in whole minutes) ends the session.
    let (mut t, id) = fx.msub_interactive("w", &["-l", "nodes=1:ppn=1,walltime=60"], cwd.path());
    t.wait_for(&format!("msub: job {id} ready"));
    let code = t.exit_code_within(Duration::from_secs(240));
    assert!(
        code >= 128,
        "killed by a signal, got {code}: {}",
        t.output()
    );
    t.wait_for(&format!("msub: job {id} completed"));
    let cj = fx.d.wait_state(id, "Completed", Duration::from_secs(30));
    assert!(
        cj.contains(&format!("Completion Code: {code}")),
        "msub exits with the job's status ({code}):\n{cj}"
    );
    fx.wait_slurm("w", "TIMEOUT", 20);
}
