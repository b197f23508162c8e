//! The Slurm backend against a real cluster (`scripts/slurm-cluster start 4`):
//! placement checked through `squeue`, exit statuses, job environment,
//! cancel, suspend/resume, requeue, recovery by tag. Skipped with a notice
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

fn fixture(name: &str) -> Option<Fixture> {
    let conf = cluster()?;
    let guard = CLUSTER.lock().unwrap_or_else(|e| e.into_inner());
    let lock = lock_cluster(&conf);
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
    fn rm(&self) -> SlurmRm {
        let mut cfg = SlurmConfig::new("slurm", &self.tag, self.dir.path().join("spool"));
        cfg.slurm_conf = Some(self.conf.clone());
        cfg.poll_interval = Duration::from_millis(300);
        SlurmRm::new(cfg).unwrap()
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

fn wait_obs(rm: &mut SlurmRm, pred: impl Fn(&Observation) -> bool) -> Observation {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        for o in rm.observe(0) {
            if pred(&o) {
                return o;
            }
        }
        assert!(Instant::now() < deadline, "observation not seen");
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
