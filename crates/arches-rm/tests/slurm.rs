//! The Slurm backend against a real cluster (`scripts/slurm-cluster start 4`):
//! placement checked through `squeue` (an uneven layout per node through
//! `scontrol show job -d`), exit statuses, job environment, cancel,
//! suspend/resume (with a SUSPENDSIG), requeue, a start Slurm does not make,
//! recovery by tag (also while slurmctld is away, cancelling orphans), a
//! submit whose answer was lost. Skipped with a notice
//! when no cluster answers, unless `CI` is set (and `.ci/run` did not report
//! `ARCHES_SLURM_UNAVAILABLE`).

use std::path::PathBuf;
use std::process::Command;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use arches_rm::slurm::{SlurmConfig, SlurmRm};
use arches_rm::{ExecSpec, Launch, LaunchNode, Observation, ResourceManager};

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

/// The cluster's nodes are shared: one test at a time.
static CLUSTER: Mutex<()> = Mutex::new(());

/// `SLURM_CONF` of a running test cluster, or `None` (skip).
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
    // .ci/run sets ARCHES_SLURM_UNAVAILABLE (with a warning) when it could
    // not install or start the cluster.
    if std::env::var_os("CI").is_some() && std::env::var_os("ARCHES_SLURM_UNAVAILABLE").is_none() {
        panic!(
            "CI is set but no Slurm cluster answers (SLURM_CONF={})",
            conf.display()
        );
    }
    eprintln!("NOTICE: no Slurm cluster (scripts/slurm-cluster start 4); Slurm test skipped");
    None
}

struct Fixture {
    _guard: std::sync::MutexGuard<'static, ()>,
    _lock: ClusterLock,
    conf: PathBuf,
    dir: tempfile::TempDir,
    tag: String,
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

fn fixture(name: &str) -> Option<Fixture> {
    let conf = cluster()?;
    // The backend's log, shown with a failing test's output (the worker
    // thread inherits the test's capture).
    let _ = tracing_subscriber::fmt()
        .with_test_writer()
        .with_ansi(false)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| "arches_rm=debug".into()),
        )
        .try_init();
    let guard = CLUSTER.lock().unwrap_or_else(|e| e.into_inner());
    let lock = lock_cluster(&conf);
    record_ran();
    let dir = tempfile::Builder::new()
        .prefix("arches-slurm-rm")
        .tempdir()
        .unwrap();
    let tag = format!("{name}-{}", std::process::id());
    Some(Fixture {
        _guard: guard,
        _lock: lock,
        conf,
        dir,
        tag,
    })
}

impl Fixture {
    fn config(&self) -> SlurmConfig {
        let mut cfg = SlurmConfig::new("slurm", &self.tag, self.dir.path().join("spool"));
        cfg.slurm_conf = Some(self.conf.clone());
        cfg.poll_interval = Duration::from_millis(300);
        cfg
    }

    fn rm(&self) -> SlurmRm {
        SlurmRm::new(self.config()).unwrap()
    }

    /// `scripts/slurm-cluster` on this cluster.
    fn cluster_script(&self, args: &[&str]) {
        let dir = self
            .conf
            .parent()
            .and_then(std::path::Path::parent)
            .unwrap();
        let script =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/slurm-cluster");
        let st = Command::new(script)
            .args(args)
            .env("ARCHES_SLURM_DIR", dir)
            .env("SLURM_CONF", &self.conf)
            .status()
            .unwrap();
        assert!(st.success(), "slurm-cluster {args:?}");
    }

    /// A Slurm command on this cluster; its stdout.
    fn slurm(&self, program: &str, args: &[&str]) -> String {
        let out = Command::new(program)
            .args(args)
            .env("SLURM_CONF", &self.conf)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{program} {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// The Slurm job id of Arches job `job` (its newest Slurm job).
    fn slurm_id(&self, job: u64) -> String {
        let ids = self.squeue(job, "%i");
        ids.iter()
            .filter_map(|i| i.parse::<u64>().ok())
            .max()
            .unwrap_or_else(|| panic!("job {job} not in Slurm"))
            .to_string()
    }

    /// CPUs Slurm allocated to the newest Slurm job of `job`, per node
    /// (`scontrol show job -d`: `Nodes=n1 CPU_IDs=0-5`).
    fn cpus_per_node(&self, job: u64) -> Vec<(String, u32)> {
        let out = self.slurm("scontrol", &["show", "job", "-d", &self.slurm_id(job)]);
        let mut per_node = Vec::new();
        for line in out.lines().map(str::trim) {
            let (Some(nodes), Some(ids)) = (
                line.strip_prefix("Nodes=")
                    .and_then(|l| l.split_whitespace().next()),
                line.split_whitespace()
                    .find_map(|w| w.strip_prefix("CPU_IDs=")),
            ) else {
                continue;
            };
            let count: u32 = ids
                .split(',')
                .map(|r| match r.split_once('-') {
                    Some((a, b)) => b.parse::<u32>().unwrap() - a.parse::<u32>().unwrap() + 1,
                    None => 1,
                })
                .sum();
            per_node.push((nodes.to_string(), count));
        }
        per_node.sort();
        per_node
    }

    fn launch(&self, job: u64, nodes: &[(&str, u32)], script: &str) -> Launch {
        // SAFETY: plain getters.
        let (uid, gid) = unsafe { (libc::geteuid(), libc::getegid()) };
        let out = self.dir.path().join(format!("{job}.out"));
        Launch {
            job,
            name: format!("t{job}"),
            nodes: nodes
                .iter()
                .map(|&(n, p)| LaunchNode {
                    name: n.to_string(),
                    tasks: p,
                    procs: p,
                    gres: Vec::new(),
                })
                .collect(),
            exec: ExecSpec {
                script: script.to_string(),
                shell: None,
                workdir: self.dir.path().to_string_lossy().into_owned(),
                stdout: out.to_string_lossy().into_owned(),
                stderr: out.to_string_lossy().into_owned(),
                join: true,
                env: vec![
                    ("PATH".into(), "/usr/bin:/bin".into()),
                    ("PBS_JOBID".into(), format!("{job}")),
                    ("MY_VAR".into(), "hello".into()),
                ],
                user: "root".into(),
                uid,
                gid,
                groups: vec![],
                class: None,
                args: Vec::new(),
                umask: None,
                interactive: false,
            },
            walltime: Some(600),
            restarted: false,
        }
    }

    /// `squeue` field of the Slurm job whose comment names Arches job `job`.
    fn squeue(&self, job: u64, field: &str) -> Vec<String> {
        let out = Command::new("squeue")
            .args(["-h", "-t", "all", "-o", &format!("%k|{field}")])
            .env("SLURM_CONF", &self.conf)
            .output()
            .unwrap();
        let prefix = format!("arches:{}:{job}:", self.tag);
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter(|l| l.starts_with(&prefix))
            .map(|l| l.split_once('|').unwrap().1.trim().to_string())
            .collect()
    }

    /// Waits until the job's output contains `want`.
    fn wait_output(&self, job: u64, want: &str) {
        let path = self.dir.path().join(format!("{job}.out"));
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let out = std::fs::read_to_string(&path).unwrap_or_default();
            if out.contains(want) {
                return;
            }
            let state = self.squeue(job, "%T");
            assert!(
                Instant::now() < deadline,
                "job {job} ({state:?}): no {want:?} in {out:?}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    fn wait_squeue(&self, job: u64, field: &str, want: &str) {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let got = self.squeue(job, field);
            if got.iter().any(|g| g == want) {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "job {job}: {field} {got:?}, want {want}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

/// Restarts slurmctld when dropped (a test that stopped it and failed must
/// not leave the shared cluster without a controller).
struct CtldBack<'a>(&'a Fixture);

impl Drop for CtldBack<'_> {
    fn drop(&mut self) {
        self.0.cluster_script(&["start-ctld"]);
    }
}

fn wait_obs(rm: &mut SlurmRm, pred: impl Fn(&Observation) -> bool) -> Observation {
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut seen = Vec::new();
    loop {
        for o in rm.observe(0) {
            if pred(&o) {
                return o;
            }
            seen.push(o);
        }
        assert!(
            Instant::now() < deadline,
            "observation not seen in 60 s; seen instead: {seen:?}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn is_end(o: &Observation, job: u64) -> bool {
    matches!(o, Observation::Finished { job: j, .. } | Observation::WalltimeExceeded { job: j, .. } | Observation::NodeFailed { job: j, .. } | Observation::StartFailed { job: j, .. } | Observation::Vanished { job: j, .. } if *j == job)
}

#[test]
fn discovers_nodes_and_runs_on_exactly_the_chosen_nodes() {
    let Some(f) = fixture("place") else { return };
    let mut rm = f.rm();
    let nodes = rm.nodes().unwrap();
    let names: Vec<&str> = nodes.iter().map(|n| n.name.as_str()).collect();
    assert!(names.len() >= 4 && names.contains(&"n4"), "{names:?}");
    assert!(nodes.iter().all(|n| n.procs >= 2));
    let script = "#!/bin/sh\necho \"$MY_VAR $PBS_NP $PBS_NUM_NODES $MOAB_NODELIST $MOAB_JOBID\"\ncat \"$PBS_NODEFILE\" | tr '\\n' ' '\necho\nsleep 2\nexit 3\n";
    rm.start(&f.launch(1, &[("n2", 1), ("n4", 2)], script), 0)
        .unwrap();
    f.wait_squeue(1, "%T", "RUNNING");
    assert_eq!(
        f.squeue(1, "%N"),
        ["n[2,4]"],
        "Slurm runs it where the engine said"
    );
    let o = wait_obs(&mut rm, |o| is_end(o, 1));
    assert!(matches!(o, Observation::Finished { code: 3, .. }), "{o:?}");
    let out = std::fs::read_to_string(f.dir.path().join("1.out")).unwrap();
    assert!(out.contains("hello 3 2 n2,n4 1"), "{out}");
    assert!(out.contains("n2 n4 n4"), "{out}");
}

#[test]
fn cancel_suspend_resume_signal() {
    let Some(f) = fixture("ctl") else { return };
    let mut rm = f.rm();
    rm.nodes().unwrap();
    let script = "#!/bin/sh\ntrap 'echo got USR1' USR1\necho started\nfor i in $(seq 1 300); do sleep 0.2; done\n";
    rm.start(&f.launch(5, &[("n1", 2)], script), 0).unwrap();
    f.wait_output(5, "started");
    rm.suspend(5, None, 0).unwrap();
    f.wait_squeue(5, "%T", "SUSPENDED");
    rm.resume(5, 0).unwrap();
    f.wait_squeue(5, "%T", "RUNNING");
    rm.signal(5, libc::SIGUSR1, 0).unwrap();
    f.wait_output(5, "got USR1");
    rm.cancel(5, 0).unwrap();
    let o = wait_obs(&mut rm, |o| is_end(o, 5));
    assert!(
        matches!(o, Observation::Finished { code: 143, .. }),
        "{o:?}"
    );
    f.wait_squeue(5, "%T", "CANCELLED");
}

#[test]
fn requeue_then_start_elsewhere_and_recover_after_restart() {
    let Some(f) = fixture("requeue") else { return };
    let mut rm = f.rm();
    rm.nodes().unwrap();
    let script = "#!/bin/sh\nsleep 4\nexit 0\n";
    rm.start(&f.launch(9, &[("n3", 1)], script), 0).unwrap();
    f.wait_squeue(9, "%T", "RUNNING");
    rm.requeue(9, 0).unwrap();
    // Reported once Slurm has ended it, never as a completion.
    let o = wait_obs(&mut rm, |o| {
        matches!(o, Observation::Requeued { job: 9, .. }) || is_end(o, 9)
    });
    assert!(matches!(o, Observation::Requeued { job: 9, .. }), "{o:?}");
    f.wait_squeue(9, "%T", "CANCELLED");
    rm.start(&f.launch(9, &[("n1", 1)], script), 0).unwrap();
    f.wait_squeue(9, "%T|%N", "RUNNING|n1");
    // The daemon restarts: a new backend with the same tag adopts the job.
    drop(rm);
    let mut rm = f.rm();
    rm.recover(&[9, 10], 0).unwrap();
    let mut seen = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(60);
    while !seen.iter().any(|o| is_end(o, 9)) {
        seen.extend(rm.observe(0));
        assert!(Instant::now() < deadline, "{seen:?}");
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(
        seen.iter()
            .any(|o| matches!(o, Observation::Vanished { job: 10, .. })),
        "{seen:?}"
    );
    assert!(
        seen.iter()
            .any(|o| matches!(o, Observation::Running { job: 9, .. })),
        "{seen:?}"
    );
    assert!(
        seen.iter().any(|o| matches!(
            o,
            Observation::Finished {
                job: 9,
                code: 0,
                ..
            }
        )),
        "{seen:?}"
    );
    // The requeued launch was never reported.
    assert_eq!(seen.iter().filter(|o| is_end(o, 9)).count(), 1, "{seen:?}");
}

#[test]
fn checkpoint_signals_terminates_then_reports_requeued() {
    let Some(f) = fixture("ckpt") else { return };
    let mut rm = f.rm();
    rm.nodes().unwrap();
    let script = "#!/bin/sh\ntrap 'echo checkpoint' USR2\necho started\nfor i in $(seq 1 300); do sleep 0.2; done\n";
    rm.start(&f.launch(3, &[("n2", 1)], script), 0).unwrap();
    f.wait_output(3, "started");
    rm.checkpoint(3, libc::SIGUSR2, 2, 0).unwrap();
    f.wait_output(3, "checkpoint");
    // Terminated after the timeout: reported as requeued once Slurm shows
    // it ended, never as a completion; not startable again before.
    let o = wait_obs(&mut rm, |o| {
        matches!(o, Observation::Requeued { job: 3, .. }) || is_end(o, 3)
    });
    assert!(matches!(o, Observation::Requeued { job: 3, .. }), "{o:?}");
    let state = f.squeue(3, "%T");
    assert!(
        state.iter().all(|s| s == "CANCELLED" || s == "COMPLETED"),
        "reported while Slurm still runs it: {state:?}"
    );
    std::thread::sleep(Duration::from_millis(1000));
    let seen = rm.observe(0);
    assert!(!seen.iter().any(|o| is_end(o, 3)), "{seen:?}");
}

#[test]
fn an_uneven_layout_gets_exactly_the_engines_processors_per_node() {
    let Some(f) = fixture("uneven") else { return };
    let mut rm = f.rm();
    rm.nodes().unwrap();
    // 2 on n3 and 6 on n1, given in that order: Slurm alone makes it 7+1.
    let script = "#!/bin/sh\nsleep 30\n";
    rm.start(&f.launch(21, &[("n3", 2), ("n1", 6)], script), 0)
        .unwrap();
    let o = wait_obs(&mut rm, |o| {
        matches!(o, Observation::Running { job: 21, .. })
    });
    assert!(
        matches!(o, Observation::Running { at, .. } if at > 0),
        "{o:?}"
    );
    assert_eq!(
        f.cpus_per_node(21),
        [("n1".to_string(), 6), ("n3".to_string(), 2)]
    );
    // So the two processors the engine sees free on n1 are free in Slurm.
    rm.start(&f.launch(22, &[("n1", 2)], script), 0).unwrap();
    f.wait_squeue(22, "%T", "RUNNING");
    rm.cancel(21, 0).unwrap();
    rm.cancel(22, 0).unwrap();
    let mut seen = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(30);
    while !(seen.iter().any(|o| is_end(o, 21)) && seen.iter().any(|o| is_end(o, 22))) {
        seen.extend(rm.observe(0));
        assert!(Instant::now() < deadline, "{seen:?}");
        std::thread::sleep(Duration::from_millis(100));
    }
    // The reservation pinned the layout only: none of ours is left once
    // its job has ended (Slurm 22.05 keeps it while the job runs in it).
    let ours = || {
        let out = Command::new("scontrol")
            .args(["show", "reservation", "-o"])
            .env("SLURM_CONF", &f.conf)
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter(|l| l.contains(&format!("arches.{}.", f.tag)))
            .map(String::from)
            .collect::<Vec<_>>()
    };
    let deadline = Instant::now() + Duration::from_secs(30);
    while !ours().is_empty() {
        rm.observe(0);
        assert!(Instant::now() < deadline, "{:?}", ours());
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[test]
fn a_suspend_signal_other_than_stop_still_frees_the_cpus_in_slurm() {
    let Some(f) = fixture("tstp") else { return };
    let mut rm = f.rm();
    rm.nodes().unwrap();
    let script = "#!/bin/sh\ntrap 'echo got TSTP' TSTP\necho started\nfor i in $(seq 1 300); do sleep 0.2; done\n";
    rm.start(&f.launch(23, &[("n2", 8)], script), 0).unwrap();
    f.wait_output(23, "started");
    rm.suspend(23, Some(libc::SIGTSTP), 0).unwrap();
    f.wait_squeue(23, "%T", "SUSPENDED");
    // Slurm gave the CPUs back: another job starts on them.
    let other = f.slurm(
        "sbatch",
        &[
            "--parsable",
            "-N1",
            "-n8",
            "-w",
            "n2",
            "-o",
            "/dev/null",
            "--wrap",
            "sleep 1",
        ],
    );
    let other = other.trim().to_string();
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let st = f.slurm("squeue", &["-h", "-t", "all", "-j", &other, "-o", "%T"]);
        if st.trim() == "RUNNING" || st.trim() == "COMPLETED" {
            break;
        }
        assert!(Instant::now() < deadline, "other job: {st}");
        std::thread::sleep(Duration::from_millis(100));
    }
    f.wait_squeue(23, "%T", "SUSPENDED");
    rm.resume(23, 0).unwrap();
    f.wait_squeue(23, "%T", "RUNNING");
    f.wait_output(23, "got TSTP");
    rm.cancel(23, 0).unwrap();
    let o = wait_obs(&mut rm, |o| is_end(o, 23));
    assert!(
        matches!(o, Observation::Finished { code: 143, .. }),
        "{o:?}"
    );
}

#[test]
fn a_job_slurm_leaves_pending_is_reported_and_stays_starting_until_it_runs() {
    let Some(f) = fixture("stuck") else { return };
    let mut cfg = f.config();
    cfg.timeout = Duration::from_secs(2);
    let mut rm = SlurmRm::new(cfg).unwrap();
    rm.nodes().unwrap();
    // A Slurm job Arches does not know holds n4's CPUs.
    let blocker = f.slurm(
        "sbatch",
        &[
            "--parsable",
            "-N1",
            "-n8",
            "-w",
            "n4",
            "-o",
            "/dev/null",
            "--wrap",
            "sleep 60",
        ],
    );
    let blocker = blocker.trim().to_string();
    rm.start(&f.launch(24, &[("n4", 1)], "#!/bin/sh\nsleep 1\n"), 0)
        .unwrap();
    let o = wait_obs(&mut rm, |o| {
        matches!(
            o,
            Observation::Note { job: 24, .. } | Observation::Running { job: 24, .. }
        ) || is_end(o, 24)
    });
    match &o {
        Observation::Note { message, .. } => {
            assert!(message.contains("has not started"), "{message}");
            assert!(message.contains("pending"), "{message}");
        }
        other => panic!("{other:?}"),
    }
    // Not given up: it runs once Slurm frees the CPUs.
    assert_eq!(f.squeue(24, "%T"), ["PENDING"]);
    f.slurm("scancel", &[&blocker]);
    let o = wait_obs(&mut rm, |o| {
        matches!(o, Observation::Running { job: 24, .. }) || is_end(o, 24)
    });
    assert!(matches!(o, Observation::Running { job: 24, .. }), "{o:?}");
    let o = wait_obs(&mut rm, |o| is_end(o, 24));
    assert!(matches!(o, Observation::Finished { code: 0, .. }), "{o:?}");
}

#[test]
fn a_recovery_waits_for_slurmctld_and_cancels_orphaned_jobs() {
    let Some(f) = fixture("recov") else { return };
    let mut rm = f.rm();
    rm.nodes().unwrap();
    let script = "#!/bin/sh\nsleep 60\n";
    rm.start(&f.launch(25, &[("n1", 1)], script), 0).unwrap();
    rm.start(&f.launch(26, &[("n2", 1)], script), 0).unwrap();
    f.wait_squeue(25, "%T", "RUNNING");
    f.wait_squeue(26, "%T", "RUNNING");
    drop(rm);
    f.cluster_script(&["stop-ctld"]);
    let back = CtldBack(&f);
    // The restarted daemon knows only job 25; Slurm does not answer for
    // longer than the timeout: nothing is concluded, nothing given up.
    let mut cfg = f.config();
    cfg.timeout = Duration::from_secs(1);
    let mut rm = SlurmRm::new(cfg).unwrap();
    rm.recover(&[25], 0).unwrap();
    std::thread::sleep(Duration::from_secs(4));
    let seen = rm.observe(0);
    assert!(seen.is_empty(), "{seen:?}");
    drop(back);
    let o = wait_obs(&mut rm, |o| {
        matches!(
            o,
            Observation::Running { job: 25, .. } | Observation::Vanished { .. }
        )
    });
    assert!(matches!(o, Observation::Running { job: 25, .. }), "{o:?}");
    // Job 26's launch belongs to nobody now: cancelled, never reported.
    f.wait_squeue(26, "%T", "CANCELLED");
    rm.cancel(25, 0).unwrap();
    let o = wait_obs(&mut rm, |o| is_end(o, 25) || is_end(o, 26));
    assert!(
        matches!(
            o,
            Observation::Finished {
                job: 25,
                code: 143,
                ..
            }
        ),
        "{o:?}"
    );
}

#[test]
fn a_submit_whose_answer_was_lost_is_adopted_by_its_tag() {
    let Some(f) = fixture("lost") else { return };
    // sbatch submits, then "loses" its answer once (as when slurmctld goes
    // away after accepting the job): the worker must not submit twice.
    let bin = f.dir.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    for p in ["squeue", "sinfo", "scontrol", "scancel", "sacct"] {
        let real = Command::new("sh")
            .args(["-c", &format!("command -v {p}")])
            .output()
            .unwrap();
        let real = String::from_utf8_lossy(&real.stdout).trim().to_string();
        std::os::unix::fs::symlink(real, bin.join(p)).unwrap();
    }
    let marker = f.dir.path().join("lost-once");
    let sbatch = bin.join("sbatch");
    std::fs::write(
        &sbatch,
        format!(
            "#!/bin/sh\nout=$(/usr/bin/sbatch \"$@\") || exit $?\nif [ ! -e {m} ]; then : > {m}; \
             echo 'sbatch: error: Batch job submission failed: Unable to contact slurm controller (connect failure)' >&2; exit 1; fi\n\
             echo \"$out\"\n",
            m = marker.display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&sbatch, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut cfg = f.config();
    cfg.bin_dir = Some(bin);
    let mut rm = SlurmRm::new(cfg).unwrap();
    rm.nodes().unwrap();
    rm.start(
        &f.launch(27, &[("n3", 1)], "#!/bin/sh\nsleep 2\nexit 4\n"),
        0,
    )
    .unwrap();
    let o = wait_obs(&mut rm, |o| is_end(o, 27));
    assert!(matches!(o, Observation::Finished { code: 4, .. }), "{o:?}");
    assert!(marker.exists(), "the answer was lost once");
    assert_eq!(f.squeue(27, "%T"), ["FAILED"], "submitted once");
}

#[test]
fn walltime_changes_go_to_slurm_and_a_refusal_reports_the_limit_in_force() {
    let Some(f) = fixture("wall") else { return };
    let mut rm = f.rm();
    rm.nodes().unwrap();
    let script = "#!/bin/sh\necho started\nfor i in $(seq 1 600); do sleep 0.2; done\n";
    rm.start(&f.launch(11, &[("n1", 1)], script), 0).unwrap();
    f.wait_output(11, "started");
    f.wait_squeue(11, "%l", "10:00");
    // Whole minutes, rounded up.
    rm.set_walltime(11, Some(1500), 0).unwrap();
    f.wait_squeue(11, "%l", "25:00");
    rm.set_walltime(11, Some(61), 0).unwrap();
    f.wait_squeue(11, "%l", "2:00");
    assert!(rm.set_walltime(11, Some(0), 0).is_err(), "refused at once");
    rm.cancel(11, 0).unwrap();
    wait_obs(&mut rm, |o| is_end(o, 11));

    // Slurm refuses the update (the job ended behind the backend's back,
    // before its next poll): the limit still in force comes back.
    let mut cfg = SlurmConfig::new("slurm", &f.tag, f.dir.path().join("spool"));
    cfg.slurm_conf = Some(f.conf.clone());
    cfg.poll_interval = Duration::from_secs(3600);
    let mut rm = SlurmRm::new(cfg).unwrap();
    rm.nodes().unwrap();
    rm.start(&f.launch(12, &[("n2", 1)], script), 0).unwrap();
    f.wait_output(12, "started");
    let slurm_id = f.squeue(12, "%i").pop().expect("slurm job id");
    let st = Command::new("scancel")
        .arg(&slurm_id)
        .env("SLURM_CONF", &f.conf)
        .status()
        .unwrap();
    assert!(st.success());
    f.wait_squeue(12, "%T", "CANCELLED");
    rm.set_walltime(12, Some(1200), 0).unwrap();
    let o = wait_obs(&mut rm, |o| {
        matches!(o, Observation::WalltimeRefused { job: 12, .. })
    });
    match o {
        Observation::WalltimeRefused {
            walltime, message, ..
        } => {
            assert_eq!(walltime, Some(600), "the launch's limit stays");
            assert!(message.contains("scontrol"), "{message}");
        }
        other => panic!("{other:?}"),
    }
}
