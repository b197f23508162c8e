//! The local backend out of file descriptors: an observation it cannot make
//! (a status or pid file it cannot open, `/proc` it cannot read) is
//! "unknown, retry", never "the job ended" or "the start failed". Before
//! this was fixed, a job that completed while the daemon had no descriptor
//! left was reported as a failed start (the status file could not be
//! opened) and so was run a second time.
//!
//! The descriptors are exhausted in this test process (its own file: the
//! limit is per process), under a lowered `RLIMIT_NOFILE`.

use std::fs::{self, File};
use std::path::{Path, PathBuf};
use std::thread::sleep;
use std::time::{Duration, Instant};

use arches_core::{JobId, Node};
use arches_rm::local::{LocalConfig, LocalRm};
use arches_rm::{ExecSpec, Launch, LaunchNode, Observation, ResourceManager};

const LONG: Duration = Duration::from_secs(20);

fn supervisor() -> Vec<String> {
    let exe = std::env::current_exe().expect("current_exe");
    let debug = exe.parent().and_then(Path::parent).expect("target dir");
    let path = debug.join("examples").join("supervisor");
    assert!(path.exists(), "{} missing", path.display());
    vec![path.to_string_lossy().into_owned()]
}

fn config(tmp: &Path) -> LocalConfig {
    LocalConfig::new(
        "local",
        tmp.join("spool"),
        supervisor(),
        vec![Node::new("n1", 2, 1024)],
    )
}

fn launch(tmp: &Path, job: JobId, script: &str) -> Launch {
    // SAFETY: plain getters.
    let (uid, gid) = unsafe { (libc::geteuid(), libc::getegid()) };
    let out = |ext: &str| {
        tmp.join(format!("{job}.{ext}"))
            .to_string_lossy()
            .into_owned()
    };
    Launch {
        job,
        name: format!("job{job}"),
        nodes: vec![LaunchNode {
            name: "n1".into(),
            tasks: 1,
            procs: 1,
            gres: Vec::new(),
        }],
        exec: ExecSpec {
            script: script.to_string(),
            shell: None,
            workdir: tmp.to_string_lossy().into_owned(),
            stdout: out("out"),
            stderr: out("err"),
            join: false,
            env: vec![("PATH".into(), "/usr/local/bin:/usr/bin:/bin".into())],
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

/// Holds every free descriptor of this process until dropped.
struct Exhausted {
    _files: Vec<File>,
}

impl Exhausted {
    fn now() -> Exhausted {
        let mut held = Vec::new();
        loop {
            match File::open("/dev/null") {
                Ok(f) => held.push(f),
                Err(e) => {
                    assert_eq!(e.raw_os_error(), Some(libc::EMFILE), "{e}");
                    return Exhausted { _files: held };
                }
            }
        }
    }
}

fn lower_nofile(limit: u64) {
    let r = libc::rlimit {
        rlim_cur: limit,
        rlim_max: limit.max(current_hard()),
    };
    // SAFETY: setrlimit with a valid struct.
    assert_eq!(unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &r) }, 0);
}

fn current_hard() -> u64 {
    let mut r = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit fills a valid struct.
    unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut r) };
    r.rlim_max
}

/// Waits until the job's supervisor has recorded the outcome and exited.
fn wait_supervisor_done(dir: &Path) {
    let deadline = Instant::now() + LONG;
    let pid = loop {
        let pid = fs::read_to_string(dir.join("pid")).ok().and_then(|t| {
            t.lines()
                .find_map(|l| l.strip_prefix("supervisor ")?.trim().parse::<i32>().ok())
        });
        if let (Some(pid), true) = (pid, dir.join("status").exists()) {
            break pid;
        }
        assert!(Instant::now() < deadline, "the job never ended");
        sleep(Duration::from_millis(20));
    };
    // Exited: a zombie (our child) or gone (re-adopted).
    loop {
        let stat = fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let state = stat
            .rfind(')')
            .and_then(|i| stat[i + 1..].split_whitespace().next().map(str::to_string));
        if state.is_none_or(|s| s == "Z") {
            return;
        }
        assert!(Instant::now() < deadline, "the supervisor never exited");
        sleep(Duration::from_millis(20));
    }
}

fn about(job: JobId, obs: &[Observation]) -> Vec<Observation> {
    obs.iter()
        .filter(|o| match o {
            Observation::Finished { job: j, .. }
            | Observation::StartFailed { job: j, .. }
            | Observation::Vanished { job: j, .. }
            | Observation::Running { job: j, .. }
            | Observation::WalltimeExceeded { job: j, .. }
            | Observation::Requeued { job: j, .. } => *j == job,
            _ => false,
        })
        .cloned()
        .collect()
}

/// Observes until something is said about `job`; returns it.
fn observe_until(rm: &mut LocalRm, job: JobId) -> Vec<Observation> {
    let deadline = Instant::now() + LONG;
    loop {
        let seen = about(job, &rm.observe(0));
        if !seen.is_empty() {
            return seen;
        }
        assert!(Instant::now() < deadline, "nothing observed for job {job}");
        sleep(Duration::from_millis(20));
    }
}

/// With every descriptor taken, a few observations say nothing about `job`.
fn nothing_misread(rm: &mut LocalRm, job: JobId, when: &str) {
    let held = Exhausted::now();
    for _ in 0..3 {
        let seen = about(job, &rm.observe(0));
        assert!(seen.is_empty(), "misread {when}: {seen:?}");
    }
    drop(held);
}

/// Waits until a process whose last argument is `dir` shows in `/proc`.
fn wait_supervisor_visible(dir: &Path) {
    let want = dir.to_string_lossy().into_owned();
    let deadline = Instant::now() + LONG;
    loop {
        let found = fs::read_dir("/proc").expect("/proc").flatten().any(|e| {
            fs::read(e.path().join("cmdline")).is_ok_and(|raw| {
                raw.split(|&b| b == 0)
                    .rfind(|a| !a.is_empty())
                    .is_some_and(|last| last == want.as_bytes())
            })
        });
        if found {
            return;
        }
        assert!(Instant::now() < deadline, "no supervisor for {want}");
        sleep(Duration::from_millis(5));
    }
}

fn finished(job: JobId, code: i32) -> Vec<Observation> {
    vec![Observation::Finished { job, at: 0, code }]
}

fn spool(tmp: &Path, job: JobId) -> PathBuf {
    tmp.join("spool").join(job.to_string())
}

#[test]
fn a_job_that_ends_while_descriptors_are_exhausted_keeps_its_exit_status() {
    lower_nofile(256);
    let tmp = tempfile::tempdir().expect("tempdir");
    let mut rm = LocalRm::new(config(tmp.path())).expect("LocalRm");

    // Our own child supervisor, reaped by `observe`.
    rm.start(&launch(tmp.path(), 1, "exit 7\n"), 0)
        .expect("start");
    wait_supervisor_done(&spool(tmp.path(), 1));
    nothing_misread(&mut rm, 1, "without descriptors");
    assert_eq!(observe_until(&mut rm, 1), finished(1, 7));

    // A re-adopted supervisor (after a daemon restart), found through
    // `/proc` and its pid file.
    let go = tmp.path().join("go");
    let script = format!(
        "while [ ! -e {} ]; do sleep 0.05; done\nexit 5\n",
        go.display()
    );
    rm.start(&launch(tmp.path(), 2, &script), 0).expect("start");
    // A daemon restarts in milliseconds; this one in microseconds: wait
    // until the new supervisor's image is in place (posix_spawn returns
    // when the exec has begun, before /proc shows its arguments).
    wait_supervisor_visible(&spool(tmp.path(), 2));
    let mut rm = LocalRm::new(config(tmp.path())).expect("LocalRm");
    rm.recover(&[2], 0).expect("recover");
    let seen = observe_until(&mut rm, 2);
    assert!(
        matches!(seen.as_slice(), [Observation::Running { job: 2, .. }]),
        "{seen:?}"
    );
    nothing_misread(&mut rm, 2, "while running");
    fs::write(&go, "").expect("go");
    wait_supervisor_done(&spool(tmp.path(), 2));
    nothing_misread(&mut rm, 2, "after its end");
    assert_eq!(observe_until(&mut rm, 2), finished(2, 5));
}
