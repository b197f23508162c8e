//! End-to-end tests of the local resource manager: real supervisors (the
//! `supervisor` example binary), real job processes, real signals.

use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::thread::sleep;
use std::time::{Duration, Instant};

use arches_core::{JobId, Node};
use arches_rm::local::{LocalConfig, LocalRm};
use arches_rm::{ExecSpec, Launch, LaunchNode, Observation, ResourceManager};
use tempfile::TempDir;

/// An example binary of this crate (`cargo test -p arches-rm` builds them).
fn example(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("current_exe");
    let debug = exe.parent().and_then(Path::parent).expect("target dir");
    let path = debug.join("examples").join(name);
    assert!(
        path.exists(),
        "{} missing: build it with `cargo build -p arches-rm --examples`",
        path.display()
    );
    path
}

/// The example supervisor binary.
fn supervisor() -> Vec<String> {
    vec![example("supervisor").to_string_lossy().into_owned()]
}

struct Fixture {
    tmp: TempDir,
    rm: LocalRm,
}

impl Fixture {
    fn new() -> Fixture {
        Fixture::with_grace(1)
    }

    /// [`Fixture::new`] for a test of the jobs' cgroups, which need root.
    fn with_cgroups() -> Fixture {
        // SAFETY: plain getter.
        let root = unsafe { libc::geteuid() } == 0;
        assert!(root, "this test needs root for cgroups (CI runs as root)");
        Fixture::new()
    }

    fn with_grace(kill_grace_secs: u64) -> Fixture {
        let tmp = tempfile::tempdir().expect("tempdir");
        let rm = LocalRm::new(Fixture::config(tmp.path(), kill_grace_secs)).expect("LocalRm");
        Fixture { tmp, rm }
    }

    fn config(tmp: &Path, kill_grace_secs: u64) -> LocalConfig {
        let nodes = vec![Node::new("n1", 2, 1024), Node::new("n2", 1, 1024)];
        let mut config = LocalConfig::new("local", tmp.join("spool"), supervisor(), nodes);
        config.kill_grace_secs = kill_grace_secs;
        config
    }

    /// Reopen the spool with a fresh LocalRm (a daemon restart).
    fn restart(&mut self) {
        self.rm = LocalRm::new(Fixture::config(self.tmp.path(), 1)).expect("LocalRm");
    }

    fn path(&self, name: &str) -> PathBuf {
        self.tmp.path().join(name)
    }

    fn launch(&self, job: JobId, script: &str) -> Launch {
        // SAFETY: plain getters.
        let (uid, gid) = unsafe { (libc::geteuid(), libc::getegid()) };
        Launch {
            job,
            name: format!("job{job}"),
            nodes: vec![
                LaunchNode {
                    name: "n1".into(),
                    tasks: 2,
                    procs: 2,
                    gres: Vec::new(),
                },
                LaunchNode {
                    name: "n2".into(),
                    tasks: 1,
                    procs: 1,
                    gres: Vec::new(),
                },
            ],
            exec: ExecSpec {
                script: script.to_string(),
                shell: None,
                workdir: self.tmp.path().to_string_lossy().into_owned(),
                stdout: self
                    .path(&format!("{job}.out"))
                    .to_string_lossy()
                    .into_owned(),
                stderr: self
                    .path(&format!("{job}.err"))
                    .to_string_lossy()
                    .into_owned(),
                join: false,
                env: vec![
                    ("PATH".into(), "/usr/local/bin:/usr/bin:/bin".into()),
                    ("PBS_JOBID".into(), format!("{job}.test")),
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
            walltime: None,
            restarted: false,
        }
    }

    fn start(&mut self, launch: &Launch) {
        self.rm.start(launch, 0).expect("start");
    }

    /// Observe until something is reported for `job`.
    fn wait_for(&mut self, job: JobId, limit: Duration) -> Observation {
        let deadline = Instant::now() + limit;
        loop {
            let found = self
                .rm
                .observe(0)
                .into_iter()
                .find(|o| observed_job(o) == Some(job));
            if let Some(o) = found {
                return o;
            }
            assert!(Instant::now() < deadline, "nothing observed for job {job}");
            sleep(Duration::from_millis(20));
        }
    }

    fn output(&self, job: JobId) -> String {
        fs::read_to_string(self.path(&format!("{job}.out"))).expect("stdout file")
    }
}

fn observed_job(o: &Observation) -> Option<JobId> {
    match o {
        Observation::Running { job, .. }
        | Observation::Finished { job, .. }
        | Observation::WalltimeExceeded { job, .. }
        | Observation::StartFailed { job, .. }
        | Observation::NodeFailed { job, .. }
        | Observation::Vanished { job, .. }
        | Observation::Note { job, .. }
        | Observation::Requeued { job, .. }
        | Observation::WalltimeRefused { job, .. }
        | Observation::OperationFailed { job, .. } => Some(*job),
        // What a job used comes with its end: tests wait for the end.
        Observation::NodeChanged { .. } | Observation::CpuUsed { .. } => None,
    }
}

fn finished(job: JobId, code: i32) -> Observation {
    Observation::Finished { job, at: 0, code }
}

/// Wait until `path` exists (written by a job).
fn wait_file(path: &Path, limit: Duration) -> String {
    let deadline = Instant::now() + limit;
    loop {
        if let Ok(text) = fs::read_to_string(path) {
            if text.ends_with('\n') {
                return text;
            }
        }
        assert!(
            Instant::now() < deadline,
            "{} never appeared",
            path.display()
        );
        sleep(Duration::from_millis(20));
    }
}

const LONG: Duration = Duration::from_secs(20);

#[test]
fn job_runs_with_its_environment() {
    let mut f = Fixture::new();
    let l = f.launch(
        1,
        "echo id=$PBS_JOBID np=$PBS_NP nodes=$PBS_NUM_NODES\n\
         echo list=$MOAB_NODELIST tasks=$MOAB_TASKMAP procs=$MOAB_PROCCOUNT\n\
         echo pwd=$(pwd) restarted=${MOAB_RESTARTED:-no}\n\
         cat \"$PBS_NODEFILE\"\n",
    );
    f.start(&l);
    assert_eq!(f.wait_for(1, LONG), finished(1, 0));
    assert_eq!(
        f.output(1),
        format!(
            "id=1.test np=3 nodes=2\nlist=n1,n2 tasks=n1,n1,n2 procs=3\npwd={} restarted=no\nn1\nn1\nn2\n",
            f.tmp.path().display()
        )
    );
    assert_eq!(fs::read_to_string(f.path("1.err")).unwrap(), "");
}

#[test]
fn exit_status_propagates() {
    let mut f = Fixture::new();
    f.start(&f.launch(2, "exit 3\n"));
    assert_eq!(f.wait_for(2, LONG), finished(2, 3));
}

/// The job's processor time comes with its end (`FSPOLICY UTILIZEDPS`):
/// what its processes computed (a child that burns half a second of its
/// own processor time, as the child itself counts it), not the time it
/// held its processors.
#[test]
fn processor_time_used_is_reported_with_the_end() {
    let mut f = Fixture::new();
    f.start(&f.launch(
        30,
        "python3 -c 'import time\nwhile time.process_time() < 0.5: pass'\nsleep 1\n",
    ));
    f.start(&f.launch(31, "sleep 1\n"));
    let deadline = Instant::now() + LONG;
    let (mut used, mut ended) = (Vec::new(), Vec::new());
    while ended.len() < 2 {
        for o in f.rm.observe(0) {
            match o {
                Observation::CpuUsed { job, cpu_ms } => used.push((job, cpu_ms)),
                Observation::Finished { job, .. } => {
                    // Reported before the end, in the same observation.
                    assert!(used.iter().any(|(j, _)| *j == job), "{used:?}");
                    ended.push(job);
                }
                _ => {}
            }
        }
        assert!(Instant::now() < deadline, "ended {ended:?}, used {used:?}");
        sleep(Duration::from_millis(20));
    }
    used.sort();
    assert_eq!(used.len(), 2, "{used:?}");
    assert!(used[0].1 >= 500, "{used:?}");
    assert!(used[1].1 < 500, "{used:?}");
}

#[test]
fn shebang_interpreter_is_used() {
    let mut f = Fixture::new();
    f.start(&f.launch(
        3,
        "#!/usr/bin/env python3\nimport os, sys\nprint('py', os.environ['PBS_JOBID'])\nsys.exit(4)\n",
    ));
    assert_eq!(f.wait_for(3, LONG), finished(3, 4));
    assert_eq!(f.output(3), "py 3.test\n");
}

#[test]
fn shell_override_wins_over_shebang() {
    let mut f = Fixture::new();
    let mut l = f.launch(4, "#!/bin/false\necho overridden by $0\n");
    l.exec.shell = Some("/bin/sh".into());
    f.start(&l);
    assert_eq!(f.wait_for(4, LONG), finished(4, 0));
    assert!(f.output(4).starts_with("overridden by "), "{}", f.output(4));
}

#[test]
fn join_merges_stderr_into_stdout() {
    let mut f = Fixture::new();
    let mut l = f.launch(5, "echo out\necho err >&2\n");
    l.exec.join = true;
    f.start(&l);
    assert_eq!(f.wait_for(5, LONG), finished(5, 0));
    assert_eq!(f.output(5), "out\nerr\n");
    assert!(!f.path("5.err").exists());

    let l = f.launch(6, "echo out\necho err >&2\n");
    f.start(&l);
    assert_eq!(f.wait_for(6, LONG), finished(6, 0));
    assert_eq!(f.output(6), "out\n");
    assert_eq!(fs::read_to_string(f.path("6.err")).unwrap(), "err\n");

    // Both to the same file without join: nothing is lost either.
    let mut l = f.launch(30, "echo out\necho err >&2\necho out2\n");
    l.exec.stderr = l.exec.stdout.clone();
    f.start(&l);
    assert_eq!(f.wait_for(30, LONG), finished(30, 0));
    assert_eq!(f.output(30), "out\nerr\nout2\n");
}

#[test]
fn spool_that_is_not_a_directory_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("file");
    fs::write(&file, "").unwrap();
    let config = LocalConfig::new("local", &file, supervisor(), vec![]);
    assert!(LocalRm::new(config).is_err());
    let config = LocalConfig::new("local", tmp.path().join("spool"), vec![], vec![]);
    assert!(LocalRm::new(config).is_err(), "no supervisor command");
}

#[test]
fn walltime_limit_kills_the_job() {
    let mut f = Fixture::new();
    let mut l = f.launch(7, "sleep 30\n");
    l.walltime = Some(1);
    let t0 = Instant::now();
    f.start(&l);
    let o = f.wait_for(7, LONG);
    assert_eq!(
        o,
        Observation::WalltimeExceeded {
            job: 7,
            at: 0,
            code: 128 + libc::SIGTERM
        }
    );
    let took = t0.elapsed();
    assert!(
        took >= Duration::from_millis(950) && took < Duration::from_secs(5),
        "{took:?}"
    );
}

#[test]
fn walltime_ignores_sigterm_then_sigkill() {
    let mut f = Fixture::new();
    let mut l = f.launch(8, "trap '' TERM\nsleep 30 &\nwait\nwait\nwait\n");
    l.walltime = Some(1);
    f.start(&l);
    let o = f.wait_for(8, LONG);
    assert_eq!(
        o,
        Observation::WalltimeExceeded {
            job: 8,
            at: 0,
            code: 128 + libc::SIGKILL
        }
    );
}

#[test]
fn cancel_terminates_the_job() {
    let mut f = Fixture::new();
    f.start(&f.launch(9, "echo $$ > pid9\nsleep 30\n"));
    let pid: i32 = wait_file(&f.path("pid9"), LONG).trim().parse().unwrap();
    f.rm.cancel(9, 0).unwrap();
    // What the daemon writes is for the supervisor only.
    let dir = f.rm.job_dir(9);
    for private in ["launch.json", "ctl"] {
        let mode = fs::metadata(dir.join(private)).unwrap().mode() & 0o777;
        assert_eq!(mode, 0o600, "{private}");
    }
    assert_eq!(f.wait_for(9, LONG), finished(9, 128 + libc::SIGTERM));
    // SAFETY: probing a pid.
    assert_eq!(unsafe { libc::kill(pid, 0) }, -1, "job process survived");
    assert!(f.rm.cancel(9, 0).is_err(), "unknown after it was reported");
}

#[test]
fn cancel_right_after_start_is_not_lost() {
    let mut f = Fixture::new();
    f.start(&f.launch(10, "sleep 30\n"));
    f.rm.cancel(10, 0).unwrap();
    assert_eq!(f.wait_for(10, LONG), finished(10, 128 + libc::SIGTERM));
}

#[test]
fn suspend_stops_progress_and_resume_continues() {
    let mut f = Fixture::new();
    f.start(&f.launch(
        11,
        "i=0\nwhile true; do i=$((i+1)); echo $i > counter.tmp; mv counter.tmp counter; sleep 0.05; done\n",
    ));
    let counter = f.path("counter");
    let read =
        || -> u64 { fs::read_to_string(&counter).map_or(0, |s| s.trim().parse().unwrap_or(0)) };
    let deadline = Instant::now() + LONG;
    while read() < 3 {
        assert!(Instant::now() < deadline, "counter never advanced");
        sleep(Duration::from_millis(20));
    }
    f.rm.suspend(11, None, 0).unwrap();
    sleep(Duration::from_millis(300));
    let stopped = read();
    sleep(Duration::from_millis(600));
    assert_eq!(read(), stopped, "progress while suspended");
    f.rm.resume(11, 0).unwrap();
    sleep(Duration::from_millis(600));
    assert!(read() > stopped + 2, "no progress after resume");
    f.rm.cancel(11, 0).unwrap();
    assert_eq!(f.wait_for(11, LONG), finished(11, 128 + libc::SIGTERM));
}

#[test]
fn suspension_and_the_end_reach_processes_that_left_the_process_group() {
    let mut f = Fixture::with_cgroups();
    // A helper that leaves the job's process group and session (as daemons
    // do), counting; the job itself just waits.
    f.start(&f.launch(
        17,
        "setsid sh -c 'echo $$ > escpid; i=0; while true; do i=$((i+1)); echo $i > esc.tmp; mv esc.tmp esc; sleep 0.05; done' &\n\
         sleep 30\n",
    ));
    let record = wait_file(&f.rm.job_dir(17).join("cgroup"), LONG);
    assert!(record.contains("arches-job17-"), "{record}");
    let esc = f.path("esc");
    let read = || -> u64 { fs::read_to_string(&esc).map_or(0, |s| s.trim().parse().unwrap_or(0)) };
    let deadline = Instant::now() + LONG;
    while read() < 3 {
        assert!(Instant::now() < deadline, "helper never advanced");
        sleep(Duration::from_millis(20));
    }
    let helper: i32 = wait_file(&f.path("escpid"), LONG).trim().parse().unwrap();
    f.rm.suspend(17, None, 0).unwrap();
    sleep(Duration::from_millis(300));
    let stopped = read();
    sleep(Duration::from_millis(600));
    assert_eq!(
        read(),
        stopped,
        "the helper ran on while its job was suspended"
    );
    f.rm.resume(17, 0).unwrap();
    let deadline = Instant::now() + LONG;
    while read() <= stopped + 2 {
        assert!(Instant::now() < deadline, "no progress after resume");
        sleep(Duration::from_millis(20));
    }
    // The job's end takes the helper with it, and its cgroup goes.
    f.rm.cancel(17, 0).unwrap();
    assert_eq!(f.wait_for(17, LONG), finished(17, 128 + libc::SIGTERM));
    let deadline = Instant::now() + LONG;
    while alive(helper) {
        assert!(Instant::now() < deadline, "the helper outlived its job");
        sleep(Duration::from_millis(20));
    }
    let dir = record.trim().split_once(' ').unwrap().1.to_string();
    let deadline = Instant::now() + LONG;
    while Path::new(&dir).exists() {
        assert!(Instant::now() < deadline, "cgroup {dir} left behind");
        sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_cancelled_job_is_sent_sigterm_once() {
    let mut f = Fixture::with_cgroups();
    // The job's leader is in its process group and in its cgroup: the
    // cgroup's stragglers are signalled one by one, the group's members are
    // not. The leader spins on a processor, so each SIGTERM is delivered as
    // it is sent, and counts the deliveries (one wake-up byte each: a shell
    // trap would miss a second one that comes while the first is pending).
    f.start(&f.launch(
        18,
        r#"cat > count.py <<'EOF'
import os, signal, time
r, w = os.pipe()
os.set_blocking(r, False)
os.set_blocking(w, False)
signal.set_wakeup_fd(w)
signal.signal(signal.SIGTERM, lambda *a: None)
open("up", "w").write("up\n")
n, end = 0, None
while end is None or time.monotonic() < end:
    try:
        n += len(os.read(r, 64))
        end = end or time.monotonic() + 0.5
    except BlockingIOError:
        pass
open("terms", "w").write(str(n))
EOF
exec python3 count.py
"#,
    ));
    wait_file(&f.rm.job_dir(18).join("cgroup"), LONG);
    wait_file(&f.path("up"), LONG);
    f.rm.cancel(18, 0).unwrap();
    f.wait_for(18, LONG);
    let terms = fs::read_to_string(f.path("terms")).unwrap();
    assert_eq!(terms, "1", "SIGTERM delivered more than once");
}

#[test]
fn time_suspended_does_not_count_against_walltime() {
    let mut f = Fixture::new();
    let mut l = f.launch(12, "sleep 1.5\n");
    l.walltime = Some(2);
    f.start(&l);
    sleep(Duration::from_millis(300));
    f.rm.suspend(12, None, 0).unwrap();
    sleep(Duration::from_millis(2000));
    f.rm.resume(12, 0).unwrap();
    assert_eq!(f.wait_for(12, LONG), finished(12, 0));
}

#[test]
fn signal_reaches_the_job() {
    let mut f = Fixture::new();
    f.start(&f.launch(
        13,
        "trap 'echo got usr1; exit 0' USR1\necho ready > ready13\nwhile true; do sleep 0.05; done\n",
    ));
    wait_file(&f.path("ready13"), LONG);
    f.rm.signal(13, libc::SIGUSR1, 0).unwrap();
    assert_eq!(f.wait_for(13, LONG), finished(13, 0));
    assert_eq!(f.output(13), "got usr1\n");
    assert!(f.rm.signal(13, 99, 0).is_err());
}

/// Whether a process is alive.
fn alive(pid: i32) -> bool {
    // SAFETY: probing a pid.
    unsafe { libc::kill(pid, 0) == 0 }
}

#[test]
fn checkpoint_signals_then_reports_requeued_once_the_job_is_gone() {
    let mut f = Fixture::new();
    let script = "trap 'echo saved > ckpt$PBS_JOBID' USR2\n\
                  echo restarted=${MOAB_RESTARTED:-no} >> runs\n\
                  echo $$ > pid14\n\
                  while true; do sleep 0.05; done\n";
    let l = f.launch(14, script);
    f.start(&l);
    let pid: i32 = wait_file(&f.path("pid14"), LONG).trim().parse().unwrap();
    f.rm.checkpoint(14, libc::SIGUSR2, 1, 0).unwrap();
    assert_eq!(wait_file(&f.path("ckpt14.test"), LONG), "saved\n");
    // Terminated after the timeout: nothing is reported while it is alive,
    // and it may not be started again meanwhile.
    assert!(f.rm.start(&f.launch(14, script), 0).is_err());
    let deadline = Instant::now() + LONG;
    loop {
        let seen = f.rm.observe(0);
        if !seen.is_empty() {
            assert_eq!(seen, vec![Observation::Requeued { job: 14, at: 0 }]);
            assert!(!alive(pid), "reported requeued while still running");
            break;
        }
        assert!(Instant::now() < deadline, "checkpointed job never ended");
        sleep(Duration::from_millis(20));
    }
    // Started again from the checkpoint.
    fs::remove_file(f.path("pid14")).unwrap();
    let mut again = f.launch(14, script);
    again.restarted = true;
    f.start(&again);
    wait_file(&f.path("pid14"), LONG);
    f.rm.cancel(14, 0).unwrap();
    assert_eq!(f.wait_for(14, LONG), finished(14, 128 + libc::SIGTERM));
    assert_eq!(
        fs::read_to_string(f.path("runs")).unwrap(),
        "restarted=no\nrestarted=1\n"
    );
}

#[test]
fn requeue_reports_requeued_after_the_job_ends_and_restarts_cleanly() {
    let mut f = Fixture::new();
    // Ignores SIGTERM: it ends only at the SIGKILL after the grace.
    let script = "trap '' TERM\necho $$ > pid15\nwhile true; do sleep 0.05; done\n";
    f.start(&f.launch(15, script));
    let pid: i32 = wait_file(&f.path("pid15"), LONG).trim().parse().unwrap();
    f.rm.requeue(15, 0).unwrap();
    // Not startable again while the first launch winds down.
    assert!(f.rm.start(&f.launch(15, "exit 6\n"), 0).is_err());
    assert_eq!(
        f.wait_for(15, LONG),
        Observation::Requeued { job: 15, at: 0 }
    );
    assert!(!alive(pid), "reported requeued while still running");
    fs::remove_file(f.path("pid15")).unwrap();
    f.start(&f.launch(15, "exit 6\n"));
    assert_eq!(f.wait_for(15, LONG), finished(15, 6));
    // Every directory is cleaned up once reported.
    let deadline = Instant::now() + LONG;
    loop {
        assert_eq!(f.rm.observe(0), vec![]);
        let left: Vec<_> = fs::read_dir(f.rm.spool_dir()).unwrap().flatten().collect();
        if left.is_empty() {
            break;
        }
        assert!(Instant::now() < deadline, "spool not cleaned: {left:?}");
        sleep(Duration::from_millis(50));
    }
}

#[test]
fn supervisor_is_not_named_like_the_daemon() {
    let mut f = Fixture::new();
    f.start(&f.launch(16, "sleep 30\n"));
    let sup = supervisor_pid(&f.rm.job_dir(16));
    let deadline = Instant::now() + LONG;
    let comm = loop {
        let c = fs::read_to_string(format!("/proc/{sup}/comm")).unwrap_or_default();
        if c.trim() == "arches-supervis" {
            break c;
        }
        assert!(Instant::now() < deadline, "supervisor named {c:?}");
        sleep(Duration::from_millis(20));
    };
    assert_eq!(comm.trim(), "arches-supervis");
    let cmdline = fs::read(format!("/proc/{sup}/cmdline")).unwrap();
    let argv0 = cmdline.split(|b| *b == 0).next().unwrap();
    assert_eq!(argv0, b"arches-supervisor");
    f.rm.cancel(16, 0).unwrap();
    assert_eq!(f.wait_for(16, LONG), finished(16, 128 + libc::SIGTERM));
}

#[test]
fn recovery_readopts_running_jobs_and_reports_ended_ones() {
    let mut f = Fixture::new();
    f.start(&f.launch(16, "echo up > up16\nsleep 1.5\nexit 7\n"));
    f.start(&f.launch(17, "exit 5\n"));
    wait_file(&f.path("up16"), LONG);
    let status17 = f.rm.job_dir(17).join("status");
    let deadline = Instant::now() + LONG;
    while !status17.exists() {
        assert!(Instant::now() < deadline, "job 17 never ended");
        sleep(Duration::from_millis(20));
    }
    // The daemon goes away; its supervisors do not.
    f.restart();
    f.rm.recover(&[16, 17, 18], 0).unwrap();
    let mut seen = f.rm.observe(0);
    // The ended job's processor time comes with its end, as for a job
    // that ends while the daemon watches.
    let used = seen
        .iter()
        .position(|o| matches!(o, Observation::CpuUsed { job: 17, .. }))
        .expect("job 17's processor time");
    let end = seen.iter().position(|o| *o == finished(17, 5)).unwrap();
    assert_eq!(used + 1, end, "{seen:?}");
    seen.remove(used);
    seen.sort_by_key(observed_job);
    assert_eq!(
        seen,
        vec![
            Observation::Running { job: 16, at: 0 },
            finished(17, 5),
            Observation::Vanished { job: 18, at: 0 },
        ]
    );
    assert_eq!(f.wait_for(16, LONG), finished(16, 7));
}

#[test]
fn recovery_can_cancel_a_readopted_job() {
    let mut f = Fixture::new();
    f.start(&f.launch(19, "echo up > up19\nsleep 30\n"));
    wait_file(&f.path("up19"), LONG);
    f.restart();
    f.rm.recover(&[19], 0).unwrap();
    assert_eq!(
        f.rm.observe(0),
        vec![Observation::Running { job: 19, at: 0 }]
    );
    f.rm.cancel(19, 0).unwrap();
    assert_eq!(f.wait_for(19, LONG), finished(19, 128 + libc::SIGTERM));
}

#[test]
fn missing_workdir_is_a_start_failure() {
    let mut f = Fixture::new();
    let mut l = f.launch(20, "echo never\n");
    l.exec.workdir = "/nonexistent/arches-workdir".into();
    f.start(&l);
    match f.wait_for(20, LONG) {
        Observation::StartFailed {
            job: 20, message, ..
        } => {
            assert!(
                message.contains("working directory /nonexistent/arches-workdir"),
                "{message}"
            );
            assert!(message.contains("No such file"), "{message}");
        }
        other => panic!("expected StartFailed, got {other:?}"),
    }
}

#[test]
fn missing_interpreter_is_a_start_failure() {
    let mut f = Fixture::new();
    let mut l = f.launch(21, "echo never\n");
    l.exec.shell = Some("/nonexistent/shell".into());
    f.start(&l);
    match f.wait_for(21, LONG) {
        Observation::StartFailed { message, .. } => {
            assert!(
                message.contains("cannot execute /nonexistent/shell"),
                "{message}"
            )
        }
        other => panic!("expected StartFailed, got {other:?}"),
    }
}

#[test]
fn unusable_supervisor_is_refused_at_start() {
    let tmp = tempfile::tempdir().unwrap();
    let config = LocalConfig::new(
        "local",
        tmp.path().join("spool"),
        vec!["/nonexistent/supervisor".into()],
        vec![],
    );
    let mut rm = LocalRm::new(config).unwrap();
    let f = Fixture::new();
    assert!(rm.start(&f.launch(22, "exit 0\n"), 0).is_err());
    assert!(!rm.job_dir(22).exists());
    assert!(rm.cancel(22, 0).is_err());
}

const TEST_USER: &str = "archestest";

/// The uid and gid of the test user, created if missing.
fn test_user() -> (u32, u32) {
    let id = |flag: &str| {
        Command::new("id")
            .args([flag, TEST_USER])
            .output()
            .ok()
            .filter(|o| o.status.success())
            .and_then(|o| {
                String::from_utf8_lossy(&o.stdout)
                    .trim()
                    .parse::<u32>()
                    .ok()
            })
    };
    if id("-u").is_none() {
        let status = Command::new("useradd")
            .args(["--no-create-home", "--shell", "/bin/sh", TEST_USER])
            .status()
            .expect("useradd");
        assert!(
            status.success() || id("-u").is_some(),
            "useradd {TEST_USER} failed"
        );
    }
    (
        id("-u").expect("test user uid"),
        id("-g").expect("test user gid"),
    )
}

#[test]
fn job_runs_as_its_user_when_root() {
    if !root_or_skip("job_runs_as_its_user_when_root") {
        return;
    }
    let (uid, gid) = test_user();
    let mut f = Fixture::new();
    fs::set_permissions(f.tmp.path(), fs::Permissions::from_mode(0o755)).unwrap();
    let work = f.path("work");
    fs::create_dir(&work).unwrap();
    std::os::unix::fs::chown(&work, Some(uid), Some(gid)).unwrap();
    let mut l = f.launch(
        23,
        "id -u\nid -g\ncat \"$PBS_NODEFILE\" | wc -l\ntouch mine\n",
    );
    l.exec.user = TEST_USER.into();
    l.exec.uid = uid;
    l.exec.gid = gid;
    l.exec.groups = vec![gid];
    l.exec.workdir = work.to_string_lossy().into_owned();
    l.exec.stdout = work.join("out").to_string_lossy().into_owned();
    l.exec.stderr = work.join("err").to_string_lossy().into_owned();
    f.start(&l);
    assert_eq!(f.wait_for(23, LONG), finished(23, 0));
    let out = fs::read_to_string(work.join("out")).unwrap();
    assert_eq!(out, format!("{uid}\n{gid}\n3\n"));
    for file in ["out", "err", "mine"] {
        assert_eq!(fs::metadata(work.join(file)).unwrap().uid(), uid, "{file}");
    }

    // Output files are opened as the user: a root-only directory is refused.
    let mut l = f.launch(24, "echo never\n");
    l.exec.uid = uid;
    l.exec.gid = gid;
    l.exec.workdir = work.to_string_lossy().into_owned();
    l.exec.stdout = f.path("rootonly/out").to_string_lossy().into_owned();
    fs::create_dir(f.path("rootonly")).unwrap();
    fs::set_permissions(f.path("rootonly"), fs::Permissions::from_mode(0o700)).unwrap();
    f.start(&l);
    match f.wait_for(24, LONG) {
        Observation::StartFailed { message, .. } => {
            assert!(message.contains("cannot open stdout"), "{message}");
            assert!(message.contains("Permission denied"), "{message}");
        }
        other => panic!("expected StartFailed, got {other:?}"),
    }
}

/// The supervisor pid from a job directory's `pid` file.
fn supervisor_pid(dir: &Path) -> i32 {
    let text = wait_file(&dir.join("pid"), LONG);
    text.lines()
        .find_map(|l| l.strip_prefix("supervisor "))
        .and_then(|p| p.trim().parse().ok())
        .expect("supervisor pid")
}

#[test]
fn a_killed_supervisor_takes_its_job_along() {
    let mut f = Fixture::new();
    f.start(&f.launch(25, "echo $$ > pid25\nsleep 30\n"));
    let job: i32 = wait_file(&f.path("pid25"), LONG).trim().parse().unwrap();
    let sup = supervisor_pid(&f.rm.job_dir(25));
    // SAFETY: killing the supervisor we just started.
    assert_eq!(unsafe { libc::kill(sup, libc::SIGKILL) }, 0);
    assert_eq!(
        f.wait_for(25, LONG),
        Observation::Vanished { job: 25, at: 0 }
    );
    let deadline = Instant::now() + LONG;
    // SAFETY: probing a pid.
    while unsafe { libc::kill(job, 0) } == 0 {
        assert!(Instant::now() < deadline, "orphaned job still running");
        sleep(Duration::from_millis(50));
    }
}

#[test]
fn recovery_cleans_up_stale_directories() {
    let mut f = Fixture::new();
    f.start(&f.launch(26, "exit 0\n"));
    assert_eq!(f.wait_for(26, LONG), finished(26, 0));
    // A job the daemon forgot while it was down, and one it never knew.
    f.start(&f.launch(27, "exit 0\n"));
    let stray = f.rm.spool_dir().join("99");
    fs::create_dir(&stray).unwrap();
    let status27 = f.rm.job_dir(27).join("status");
    let deadline = Instant::now() + LONG;
    while !status27.exists() {
        assert!(Instant::now() < deadline, "job 27 never ended");
        sleep(Duration::from_millis(20));
    }
    f.restart();
    f.rm.recover(&[], 0).unwrap();
    let deadline = Instant::now() + LONG;
    loop {
        assert_eq!(f.rm.observe(0), vec![]);
        let left: Vec<_> = fs::read_dir(f.rm.spool_dir()).unwrap().flatten().collect();
        if left.is_empty() {
            break;
        }
        assert!(Instant::now() < deadline, "spool not cleaned: {left:?}");
        sleep(Duration::from_millis(50));
    }
}

/// A LocalRm whose supervisors run as the test user (as a daemon not
/// running as root would), through `setpriv`.
fn unprivileged_fixture(uid: u32, gid: u32) -> Fixture {
    let mut f = Fixture::new();
    fs::set_permissions(f.tmp.path(), fs::Permissions::from_mode(0o777)).unwrap();
    let wrapper = format!(
        "chown -R {uid}:{gid} \"$1\" && exec setpriv --reuid {uid} --regid {gid} --clear-groups {} \"$1\"",
        supervisor()[0]
    );
    let mut config = Fixture::config(f.tmp.path(), 1);
    config.supervisor = vec!["/bin/sh".into(), "-c".into(), wrapper, "sh".into()];
    f.rm = LocalRm::new(config).expect("LocalRm");
    f
}

#[test]
fn unprivileged_supervisor_runs_its_own_jobs_and_refuses_others() {
    if !root_or_skip("unprivileged_supervisor_runs_its_own_jobs_and_refuses_others") {
        return;
    }
    let (uid, gid) = test_user();
    let mut f = unprivileged_fixture(uid, gid);
    let mut l = f.launch(28, "id -u\n");
    l.exec.uid = uid;
    l.exec.gid = gid;
    f.start(&l);
    assert_eq!(f.wait_for(28, LONG), finished(28, 0));
    assert_eq!(f.output(28), format!("{uid}\n"));

    // SAFETY: plain getter.
    let root = unsafe { libc::geteuid() };
    assert_ne!(root, uid);
    f.start(&f.launch(29, "echo never\n"));
    match f.wait_for(29, LONG) {
        Observation::StartFailed { message, .. } => {
            assert!(message.contains("not root"), "{message}");
            assert!(message.contains(&format!("uid {root}")), "{message}");
        }
        other => panic!("expected StartFailed, got {other:?}"),
    }
    assert!(!f.path("29.out").exists());
}

#[test]
fn job_survives_the_death_of_the_daemon_process() {
    let mut f = Fixture::new();
    let status = Command::new(example("start_detached"))
        .arg(f.rm.spool_dir())
        .arg("31")
        .arg(f.tmp.path())
        .arg("echo $$ > pid31\nsleep 1.5\necho done\nexit 9\n")
        .status()
        .expect("start_detached");
    assert!(status.success());
    // The "daemon" is gone; its job is not.
    let job: i32 = wait_file(&f.path("pid31"), LONG).trim().parse().unwrap();
    // SAFETY: probing a pid.
    assert_eq!(unsafe { libc::kill(job, 0) }, 0, "job died with its daemon");
    f.restart();
    f.rm.recover(&[31], 0).unwrap();
    assert_eq!(
        f.rm.observe(0),
        vec![Observation::Running { job: 31, at: 0 }]
    );
    assert_eq!(f.wait_for(31, LONG), finished(31, 9));
    assert_eq!(f.output(31), "done\n");
}

#[test]
fn descriptors_leaked_by_the_daemon_do_not_reach_the_job() {
    use std::os::fd::AsRawFd;
    const LEAKED: i32 = 57;
    let mut f = Fixture::new();
    let null = fs::File::open("/dev/null").unwrap();
    // SAFETY: dup2 onto a free descriptor number; it has no close-on-exec.
    assert_eq!(unsafe { libc::dup2(null.as_raw_fd(), LEAKED) }, LEAKED);
    f.start(&f.launch(
        32,
        &format!("test -e /proc/$$/fd/{LEAKED} && echo leaked || echo clean\n"),
    ));
    let seen = f.wait_for(32, LONG);
    // SAFETY: closing the descriptor made above.
    unsafe { libc::close(LEAKED) };
    assert_eq!(seen, finished(32, 0));
    assert_eq!(f.output(32), "clean\n");
}

/// Whether a test that needs root (it creates users and switches to them)
/// may run. As root: yes. Otherwise it is skipped with a loud NOTICE on
/// stderr, unless `ARCHES_REQUIRE_ROOT_TESTS` is set (`.ci/run` sets it: CI
/// runs as root, so there a missing root is a failure, never a skip).
pub fn root_or_skip(test: &str) -> bool {
    // SAFETY: geteuid(2) has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        return true;
    }
    assert!(
        std::env::var_os("ARCHES_REQUIRE_ROOT_TESTS").is_none(),
        "{test} needs root (ARCHES_REQUIRE_ROOT_TESTS is set)"
    );
    eprintln!(
        "NOTICE: {test} SKIPPED: it creates users and switches to them, which needs root (CI runs it as root)"
    );
    false
}
