//! A real pseudo-terminal for the commands under test (`msub -I`): the
//! test holds the master side, the command runs on the slave as its
//! controlling terminal, in a session of its own, as a login would.

use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::{base_env, bin, wait_until, Daemon};

/// A command running on the slave side of a pty the test holds the master of.
pub struct Term {
    pub master: File,
    /// The test's own copy of the terminal (to read its modes).
    pub slave: OwnedFd,
    pub child: Child,
    out: Arc<Mutex<Vec<u8>>>,
}

/// The local modes of the terminal on `fd` (ICANON, ECHO...).
pub fn lflags(fd: libc::c_int) -> libc::tcflag_t {
    // SAFETY: termios is plain data filled by tcgetattr.
    let mut t: libc::termios = unsafe { std::mem::zeroed() };
    // SAFETY: fd is an open terminal; t is valid.
    assert_eq!(unsafe { libc::tcgetattr(fd, &mut t) }, 0);
    t.c_lflag
}

pub fn set_size(fd: libc::c_int, rows: u16, cols: u16) {
    let ws = libc::winsize {
        ws_row: rows,
        ws_col: cols,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    // SAFETY: fd is an open pty descriptor; ws is valid.
    assert_eq!(unsafe { libc::ioctl(fd, libc::TIOCSWINSZ, &ws) }, 0);
}

impl Term {
    /// Runs `prog args` in `cwd` on a new 24x80 terminal (its controlling
    /// terminal, in a session of its own, as a login would).
    pub fn spawn(d: &Daemon, prog: &str, args: &[&str], cwd: &Path) -> Term {
        Term::spawn_env(d, prog, args, cwd, &[])
    }

    /// [`Term::spawn`] with `env` over the clients' environment.
    pub fn spawn_env(
        d: &Daemon,
        prog: &str,
        args: &[&str],
        cwd: &Path,
        env: &[(&str, &str)],
    ) -> Term {
        let mut cmd = Command::new(bin(prog));
        cmd.args(args);
        Term::spawn_command(cmd, d, cwd, env)
    }

    /// [`Term::spawn`] as `user` (setpriv, with the user's groups).
    pub fn spawn_as(d: &Daemon, user: &str, prog: &str, args: &[&str], cwd: &Path) -> Term {
        let mut cmd = Command::new("setpriv");
        cmd.args(["--reuid", user, "--regid", user, "--init-groups", "--"])
            .arg(bin(prog))
            .args(args);
        Term::spawn_command(cmd, d, cwd, &[])
    }

    fn spawn_command(mut cmd: Command, d: &Daemon, cwd: &Path, env: &[(&str, &str)]) -> Term {
        let (mut m, mut s) = (-1, -1);
        // SAFETY: valid out-pointers; no name, termios or size.
        let rc = unsafe {
            libc::openpty(
                &mut m,
                &mut s,
                std::ptr::null_mut(),
                std::ptr::null(),
                std::ptr::null(),
            )
        };
        assert_eq!(rc, 0, "openpty: {}", std::io::Error::last_os_error());
        // SAFETY: fresh descriptors from openpty.
        let (master, slave) = unsafe { (OwnedFd::from_raw_fd(m), OwnedFd::from_raw_fd(s)) };
        set_size(m, 24, 80);
        let probe = slave.try_clone().expect("dup");
        let child = {
            cmd.env_clear()
                .envs(base_env(d.home.path(), &d.socket))
                .env("SHELL", "/bin/sh")
                .envs(env.iter().copied())
                .current_dir(cwd)
                .stdin(Stdio::from(slave.try_clone().expect("dup")))
                .stdout(Stdio::from(slave.try_clone().expect("dup")))
                .stderr(Stdio::from(slave));
            // SAFETY: only async-signal-safe calls between fork and exec.
            unsafe {
                cmd.pre_exec(|| {
                    libc::setsid();
                    libc::ioctl(0, libc::TIOCSCTTY, 0);
                    Ok(())
                });
            }
            let child = cmd.spawn().expect("spawn on pty");
            // The command (and its copies of the slave) is dropped here: the
            // master sees the end once the child and the job are gone.
            drop(cmd);
            child
        };
        let master = File::from(master);
        let out = Arc::new(Mutex::new(Vec::new()));
        let mut reader = master.try_clone().expect("clone master");
        let sink = Arc::clone(&out);
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = reader.read(&mut buf) {
                if n == 0 {
                    break;
                }
                sink.lock().unwrap().extend_from_slice(&buf[..n]);
            }
        });
        Term {
            master,
            slave: probe,
            child,
            out,
        }
    }

    pub fn output(&self) -> String {
        String::from_utf8_lossy(&self.out.lock().unwrap()).into_owned()
    }

    pub fn wait_for(&self, needle: &str) -> String {
        let deadline = std::time::Instant::now() + Duration::from_secs(40);
        while !self.output().contains(needle) {
            assert!(
                std::time::Instant::now() < deadline,
                "timed out waiting for {needle:?} on the terminal:\n{}",
                self.output()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        self.output()
    }

    pub fn type_line(&mut self, line: &str) {
        self.master.write_all(line.as_bytes()).expect("type");
    }

    /// msub's exit status once it is done.
    pub fn exit_code(&mut self) -> i32 {
        let mut status = None;
        wait_until("msub -I to exit", || {
            status = self.child.try_wait().expect("try_wait");
            status.is_some()
        });
        status.and_then(|s| s.code()).expect("exit code")
    }

    /// [`Term::exit_code`], waiting up to `timeout` (a job that ends at
    /// its wall-clock limit).
    pub fn exit_code_within(&mut self, timeout: Duration) -> i32 {
        let deadline = std::time::Instant::now() + timeout;
        loop {
            if let Some(s) = self.child.try_wait().expect("try_wait") {
                return s.code().expect("exit code");
            }
            assert!(
                std::time::Instant::now() < deadline,
                "timed out waiting for the command to exit:\n{}",
                self.output()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

/// The job id of `msub: waiting for job N to start`.
pub fn job_id(out: &str) -> u64 {
    let rest = out
        .split("msub: waiting for job ")
        .nth(1)
        .unwrap_or_else(|| panic!("no waiting line in {out:?}"));
    rest.split_whitespace()
        .next()
        .and_then(|w| w.parse().ok())
        .unwrap_or_else(|| panic!("no job id in {out:?}"))
}
