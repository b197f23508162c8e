//! End-to-end test harness: starts the real `moab` daemon on a temporary home
//! and socket and runs the real client binaries against it with a scrubbed
//! environment (only PATH, HOME, TZ and the Moab variables are passed).

#![allow(dead_code)]

pub mod raw;
pub mod term;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Path of one of our binaries, built by cargo for these tests.
pub fn bin(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_BIN_EXE_moab"));
    dir.parent().expect("target dir").join(name)
}

/// A running daemon with its own home directory.
pub struct Daemon {
    pub home: tempfile::TempDir,
    pub socket: PathBuf,
    child: Option<Child>,
}

impl Daemon {
    /// Starts a daemon on the embedded default configuration.
    pub fn start() -> Daemon {
        Daemon::start_with_config(None)
    }

    /// Starts a daemon with this `moab.cfg` content (None: no file).
    pub fn start_with_config(cfg: Option<&str>) -> Daemon {
        let mut d = Daemon::unstarted(cfg);
        d.spawn();
        d
    }

    /// A home (mode 0755) with this `moab.cfg` content, no daemon yet.
    pub fn unstarted(cfg: Option<&str>) -> Daemon {
        let home = tempfile::Builder::new()
            .prefix("arches-e2e")
            .tempdir()
            .expect("tempdir");
        // Other users (permission tests) must reach the socket and job files.
        set_mode(home.path(), 0o755);
        if let Some(c) = cfg {
            std::fs::write(home.path().join("moab.cfg"), c).expect("write cfg");
        }
        let socket = home.path().join("moab.sock");
        Daemon {
            home,
            socket,
            child: None,
        }
    }

    /// Starts (or restarts) the daemon process and waits until it answers.
    pub fn spawn(&mut self) {
        self.spawn_env(&[]);
    }

    /// Like [`Daemon::spawn`] with extra environment variables for the daemon.
    pub fn spawn_env(&mut self, extra: &[(&str, &str)]) {
        self.spawn_with(&Spawn {
            env: extra,
            ..Spawn::default()
        });
    }

    /// The `moab` command of this home with these options (not started).
    pub fn daemon_command(&self, opts: &Spawn) -> Command {
        let mut cmd = Command::new(bin("moab"));
        cmd.args(opts.args)
            .env_clear()
            .envs(base_env(self.home.path(), &self.socket))
            .envs(opts.env.iter().copied())
            .stdin(Stdio::null());
        if let Some(limit) = opts.nofile {
            use std::os::unix::process::CommandExt;
            // SAFETY: only setrlimit(2) between fork and exec.
            unsafe {
                cmd.pre_exec(move || {
                    let r = libc::rlimit {
                        rlim_cur: limit,
                        rlim_max: limit,
                    };
                    if libc::setrlimit(libc::RLIMIT_NOFILE, &r) == 0 {
                        Ok(())
                    } else {
                        Err(std::io::Error::last_os_error())
                    }
                });
            }
        }
        cmd
    }

    /// Starts the daemon with these options and waits until it answers.
    pub fn spawn_with(&mut self, opts: &Spawn) {
        let log = std::fs::File::create(self.home.path().join("daemon.stderr")).expect("log");
        let child = self
            .daemon_command(opts)
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("spawn moab");
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let out = self.run("showq", &[]);
            if out.status.success() {
                return;
            }
            if let Some(status) = self
                .child
                .as_mut()
                .and_then(|c| c.try_wait().ok().flatten())
            {
                panic!("moab exited early ({status}): {}", self.daemon_log());
            }
            assert!(
                Instant::now() < deadline,
                "daemon did not answer: {}",
                self.daemon_log()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The daemon's process id, while it runs.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// What the daemon wrote to stderr.
    pub fn daemon_log(&self) -> String {
        std::fs::read_to_string(self.home.path().join("daemon.stderr")).unwrap_or_default()
    }

    /// kill -9 the daemon (no cleanup at all).
    pub fn kill9(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// SIGTERM the daemon and wait for it to exit.
    pub fn stop(&mut self) -> Option<std::process::ExitStatus> {
        let mut c = self.child.take()?;
        // SAFETY: plain kill(2) on our own child's pid.
        unsafe { libc::kill(c.id() as i32, libc::SIGTERM) };
        c.wait().ok()
    }

    /// Waits for the daemon process to exit on its own (after `mschedctl -k`).
    pub fn wait_exit(&mut self, timeout: Duration) -> Option<std::process::ExitStatus> {
        let deadline = Instant::now() + timeout;
        loop {
            let c = self.child.as_mut()?;
            if let Ok(Some(s)) = c.try_wait() {
                self.child = None;
                return Some(s);
            }
            if Instant::now() > deadline {
                return None;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// A command for one of our client binaries, environment scrubbed, run in the home dir.
    pub fn cmd(&self, name: &str) -> Command {
        let mut c = Command::new(bin(name));
        c.env_clear()
            .envs(base_env(self.home.path(), &self.socket))
            .current_dir(self.home.path());
        c
    }

    /// Runs a client command to completion.
    pub fn run(&self, name: &str, args: &[&str]) -> Output {
        self.cmd(name)
            .args(args)
            .stdin(Stdio::null())
            .output()
            .expect("run client")
    }

    /// Runs a client command with `input` on stdin.
    pub fn run_stdin(&self, name: &str, args: &[&str], input: &str) -> Output {
        let mut child = self
            .cmd(name)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn client");
        let written = child
            .stdin
            .take()
            .expect("stdin")
            .write_all(input.as_bytes());
        // A client that fails before reading its input closes the pipe.
        if let Err(e) = written {
            assert_eq!(e.kind(), std::io::ErrorKind::BrokenPipe, "write stdin: {e}");
        }
        child.wait_with_output().expect("wait client")
    }

    /// Submits a script file with extra msub arguments; returns the job id.
    pub fn submit(&self, script: &str, args: &[&str]) -> u64 {
        let path = self.home.path().join(format!("job-{}.sh", unique()));
        std::fs::write(&path, script).expect("write script");
        set_mode(&path, 0o644);
        let mut all: Vec<&str> = args.to_vec();
        let p = path.to_string_lossy().to_string();
        all.push(&p);
        let out = self.run("msub", &all);
        assert!(out.status.success(), "msub failed: {}", text(&out.stderr));
        parse_id(&out)
    }

    /// checkjob output for a job.
    pub fn checkjob(&self, id: u64) -> String {
        text(&self.run("checkjob", &[&id.to_string()]).stdout)
    }

    /// Polls checkjob until the job shows `state` (e.g. "Completed").
    pub fn wait_state(&self, id: u64, state: &str, timeout: Duration) -> String {
        let line = format!("State: {state}");
        self.wait_checkjob(id, &format!("reached {state}"), timeout, |out| {
            out.lines().any(|l| l.trim_end() == line)
        })
    }

    /// Waits until the job is Idle *and* a scheduling iteration has ranked
    /// it (checkjob shows `IterationJobRank`), so the job's block reason is
    /// the scheduler's verdict, not the moment before it looked.
    pub fn wait_considered(&self, id: u64, timeout: Duration) -> String {
        self.wait_checkjob(id, "considered while Idle", timeout, |out| {
            out.lines().any(|l| l.trim_end() == "State: Idle")
                && out.lines().any(|l| l.starts_with("IterationJobRank: "))
        })
    }

    /// Polls checkjob until `done` holds for its output (which it returns);
    /// fails with the output and the daemon's log after `timeout`.
    pub fn wait_checkjob(
        &self,
        id: u64,
        what: &str,
        timeout: Duration,
        done: impl Fn(&str) -> bool,
    ) -> String {
        let deadline = Instant::now() + timeout;
        loop {
            let out = self.checkjob(id);
            if done(&out) {
                return out;
            }
            assert!(
                Instant::now() < deadline,
                "job {id} never {what}:\n{out}\n{}",
                self.daemon_log()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        self.stop();
        // Leave no job processes behind: their supervisors are in their own sessions.
        let _ = Command::new("pkill")
            .args(["-f", &self.home.path().to_string_lossy()])
            .status();
    }
}

/// How to start a daemon ([`Daemon::spawn_with`]).
#[derive(Default)]
pub struct Spawn<'a> {
    /// Extra environment variables.
    pub env: &'a [(&'a str, &'a str)],
    /// Arguments of `moab` (e.g. `--salvage`).
    pub args: &'a [&'a str],
    /// Its open-file limit, soft and hard (so it cannot raise it).
    pub nofile: Option<u64>,
}

/// The only environment the daemon and clients get.
pub fn base_env(home: &Path, socket: &Path) -> Vec<(String, String)> {
    vec![
        (
            "PATH".into(),
            "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin".into(),
        ),
        ("HOME".into(), home.to_string_lossy().into()),
        ("TZ".into(), "UTC".into()),
        ("MOABHOMEDIR".into(), home.to_string_lossy().into()),
        ("MOAB_SOCKET".into(), socket.to_string_lossy().into()),
        // msub's site defaults: the test's own (absent unless it writes it),
        // never the machine's /etc/msubrc.
        (
            "MSUBRC".into(),
            home.join("msubrc").to_string_lossy().into(),
        ),
    ]
}

/// Lossy UTF-8.
pub fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Runs client `cmd` against `d`: `(exit code, stdout, stderr)`, -1 for a
/// signal death.
pub fn run(d: &Daemon, cmd: &str, args: &[&str]) -> (i32, String, String) {
    let o = d.run(cmd, args);
    (
        o.status.code().unwrap_or(-1),
        text(&o.stdout),
        text(&o.stderr),
    )
}

/// The name of the user running the tests (`id -un`).
pub fn me() -> String {
    text(
        &std::process::Command::new("id")
            .arg("-un")
            .output()
            .unwrap()
            .stdout,
    )
    .trim()
    .to_string()
}

/// The job id msub printed (`\n<id>\n`).
pub fn parse_id(out: &Output) -> u64 {
    let s = text(&out.stdout);
    assert!(
        s.starts_with('\n'),
        "msub output must start with an empty line: {s:?}"
    );
    s.trim()
        .parse()
        .unwrap_or_else(|_| panic!("msub did not print an id: {s:?}"))
}

pub fn set_mode(p: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    let _ = std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode));
}

fn unique() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    N.fetch_add(1, Ordering::Relaxed)
}

/// Whether we run as root (CI does).
pub fn is_root() -> bool {
    // SAFETY: getuid(2) has no preconditions.
    unsafe { libc::getuid() == 0 }
}

/// Whether a test that needs root (it creates users and switches to them)
/// may run. As root: yes. Otherwise it is skipped with a loud NOTICE on
/// stderr, unless `ARCHES_REQUIRE_ROOT_TESTS` is set (`.ci/run` sets it: CI
/// runs as root, so there a missing root is a failure, never a skip).
pub fn root_or_skip(test: &str) -> bool {
    if is_root() {
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

/// Ensures a local test user exists (root only); returns its name.
pub fn ensure_user(name: &str) -> String {
    let exists = Command::new("id")
        .arg(name)
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    if !exists {
        let st = Command::new("useradd")
            .args(["-M", "-s", "/bin/sh", name])
            .status()
            .expect("useradd");
        assert!(st.success(), "useradd {name} failed");
    }
    name.to_string()
}

/// Runs one of our commands as `user` (setpriv, with the user's groups)
/// against `d` in `cwd`, with `input` on its standard input.
pub fn run_as_user(
    d: &Daemon,
    user: &str,
    prog: &str,
    args: &[&str],
    input: &str,
    cwd: &Path,
) -> Output {
    let mut child = Command::new("setpriv")
        .args(["--reuid", user, "--regid", user, "--init-groups", "--"])
        .arg(bin(prog))
        .args(args)
        .env_clear()
        .envs(base_env(d.home.path(), &d.socket))
        .current_dir(cwd)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("setpriv");
    let _ = child
        .stdin
        .take()
        .expect("stdin")
        .write_all(input.as_bytes());
    child.wait_with_output().expect("wait setpriv")
}

/// Polls `f` until it holds (at most 40 s; then the test fails naming `what`).
pub fn wait_until(what: &str, mut f: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(40);
    while !f() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(100));
    }
}
