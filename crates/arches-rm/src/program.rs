//! Site programs: a program the administrator configured (a storage
//! interface script, `SUBMITFILTER`, the activation filter, `MAILPROGRAM`,
//! `NOTIFICATIONPROGRAM`) run to completion with a timeout, optionally as
//! a given user and with data on its standard input.
//!
//! The program runs in its own process group; at the timeout the whole
//! group is killed, so a program that hangs (or leaves children holding its
//! output open) never stalls the caller beyond the timeout. Its output is
//! read concurrently and capped: a program that prints without end is
//! drained and its excess dropped (and reported as truncated). When the
//! daemon runs as root and a [`Caller`] is given, the program runs as that
//! user with its supplementary groups (`initgroups`), `HOME`, `USER` and
//! `LOGNAME`.
//!
//! Callers never run this on the scheduling thread: the storage RM and the
//! activation filter use worker threads, the submit filter runs on the
//! daemon's blocking pool.

use std::io::{Read, Write};
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The user a program runs as (a job's owner or a submitting user): its
/// passwd entry and supplementary groups, as a login would set them up.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Caller {
    pub name: String,
    pub uid: u32,
    pub gid: u32,
    /// Home directory (`HOME`); empty when unknown.
    pub home: String,
    /// Supplementary groups (`initgroups`: the primary group included).
    pub groups: Vec<u32>,
}

/// What to run.
#[derive(Debug, Clone, Default)]
pub struct Invocation<'a> {
    pub program: &'a str,
    pub args: &'a [String],
    /// Written to the program's standard input, which is then closed
    /// (`None`: `/dev/null`). A program that does not read it is fine.
    pub stdin: Option<&'a [u8]>,
    /// Run as this user (when the daemon is root and it is not root).
    pub caller: Option<&'a Caller>,
    pub timeout: Duration,
    /// Extra environment (on top of the daemon's, then the caller's `HOME`,
    /// `USER`, `LOGNAME`).
    pub env: &'a [(String, String)],
    /// Most bytes kept of each of stdout and stderr.
    pub output_limit: usize,
}

/// Default cap of each output stream.
pub const DEFAULT_OUTPUT_LIMIT: usize = 1 << 20;

/// How a program ended (it did not time out).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    /// Exit status; `None` when a signal ended it.
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
    /// Some output went beyond [`Invocation::output_limit`] and was dropped.
    pub truncated: bool,
}

impl Outcome {
    pub fn success(&self) -> bool {
        self.code == Some(0)
    }

    /// `status N` or `a signal`, for messages.
    pub fn status_text(&self) -> String {
        self.code
            .map_or_else(|| "a signal".to_string(), |c| format!("status {c}"))
    }
}

/// Why a program did not run to completion.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RunError {
    #[error("cannot run '{program}': {why}")]
    Spawn { program: String, why: String },
    #[error("'{program}' timed out after {secs}s")]
    Timeout { program: String, secs: f64 },
    #[error("waiting for '{program}': {why}")]
    Wait { program: String, why: String },
}

/// Runs the program to completion (or kills it at the timeout).
pub fn run(inv: &Invocation<'_>) -> Result<Outcome, RunError> {
    let program = inv.program.to_string();
    let mut cmd = Command::new(inv.program);
    cmd.args(inv.args)
        .envs(inv.env.iter().map(|(k, v)| (k, v)))
        .stdin(if inv.stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    if let Some(c) = inv.caller.filter(|c| !c.name.is_empty()) {
        // The user's environment, as its login has it.
        cmd.env("USER", &c.name).env("LOGNAME", &c.name);
        if !c.home.is_empty() {
            cmd.env("HOME", &c.home);
        }
    }
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    if let Some(c) = inv.caller.filter(|c| root && c.uid != 0) {
        // Like initgroups(3) + setgid + setuid. `Command::uid` would drop
        // every supplementary group, so the switch happens here; the group
        // list was looked up before the fork (NSS is not fork-safe).
        let (uid, gid) = (c.uid, c.gid);
        let mut groups: Vec<libc::gid_t> = c.groups.clone();
        if !groups.contains(&gid) {
            groups.insert(0, gid);
        }
        // SAFETY: the closure runs in the forked child before exec and only
        // makes async-signal-safe system calls on memory prepared before
        // the fork.
        unsafe {
            cmd.pre_exec(move || {
                if libc::setgroups(groups.len(), groups.as_ptr()) != 0
                    || libc::setgid(gid) != 0
                    || libc::setuid(uid) != 0
                {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
    }
    let mut child = cmd.spawn().map_err(|e| RunError::Spawn {
        program: program.clone(),
        why: e.to_string(),
    })?;
    let pid = child.id() as i32;
    let limit = inv.output_limit.max(1);
    let mut stdout = child.stdout.take();
    let mut stderr = child.stderr.take();
    let out_reader = std::thread::spawn(move || read_capped(stdout.as_mut(), limit));
    let err_reader = std::thread::spawn(move || read_capped(stderr.as_mut(), limit));
    let writer = match (child.stdin.take(), inv.stdin) {
        (Some(mut pipe), Some(data)) => {
            let data = data.to_vec();
            // A program that exits without reading its input closes the
            // pipe: that is its business, not an error.
            Some(std::thread::spawn(move || {
                let _ = pipe.write_all(&data);
            }))
        }
        _ => None,
    };
    let deadline = Instant::now() + inv.timeout;
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break Some(s),
            Ok(None) if Instant::now() >= deadline => break None,
            Ok(None) => std::thread::sleep(Duration::from_millis(5)),
            Err(e) => {
                kill_group(pid);
                let _ = child.kill();
                let _ = child.wait();
                return Err(RunError::Wait {
                    program,
                    why: e.to_string(),
                });
            }
        }
    };
    let Some(status) = status else {
        kill_group(pid);
        let _ = child.kill();
        let _ = child.wait();
        return Err(RunError::Timeout {
            program,
            secs: inv.timeout.as_secs_f64(),
        });
    };
    // A program that left children holding its output open: after a short
    // grace they are killed (its group still exists while they live, so
    // the id cannot have been reused), and nobody waits beyond the deadline.
    let grace = (Instant::now() + Duration::from_millis(200)).min(deadline);
    while !(out_reader.is_finished() && err_reader.is_finished()) && Instant::now() < grace {
        std::thread::sleep(Duration::from_millis(2));
    }
    if !(out_reader.is_finished() && err_reader.is_finished()) {
        kill_group(pid);
    }
    let (stdout, t1) = join_until(out_reader, deadline);
    let (stderr, t2) = join_until(err_reader, deadline);
    if let Some(w) = writer {
        if w.is_finished() {
            let _ = w.join();
        }
    }
    Ok(Outcome {
        code: status.code(),
        stdout,
        stderr,
        truncated: t1 || t2,
    })
}

fn kill_group(pid: i32) {
    // SAFETY: kill has no memory-safety preconditions; the group is the
    // child's own (process_group(0)).
    unsafe {
        libc::kill(-pid, libc::SIGKILL);
    }
}

/// Reads everything, keeping at most `limit` bytes; whether some was dropped.
fn read_capped<R: Read>(r: Option<&mut R>, limit: usize) -> (String, bool) {
    let mut kept = Vec::new();
    let mut truncated = false;
    if let Some(r) = r {
        let mut buf = [0u8; 8192];
        loop {
            match r.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => {
                    let room = limit.saturating_sub(kept.len());
                    if n > room {
                        truncated = true;
                    }
                    kept.extend_from_slice(&buf[..n.min(room)]);
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => break,
            }
        }
    }
    (String::from_utf8_lossy(&kept).into_owned(), truncated)
}

fn join_until(h: std::thread::JoinHandle<(String, bool)>, deadline: Instant) -> (String, bool) {
    while !h.is_finished() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(2));
    }
    if h.is_finished() {
        h.join().unwrap_or_default()
    } else {
        (String::new(), false)
    }
}

/// The last non-empty line of a program's stderr, for one-line messages.
pub fn last_line(text: &str) -> &str {
    text.trim().lines().last().unwrap_or("").trim()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(
        script: &str,
        stdin: Option<&[u8]>,
        timeout_ms: u64,
        limit: usize,
    ) -> Result<Outcome, RunError> {
        let args = vec!["-c".to_string(), script.to_string()];
        run(&Invocation {
            program: "/bin/sh",
            args: &args,
            stdin,
            caller: None,
            timeout: Duration::from_millis(timeout_ms),
            env: &[],
            output_limit: limit,
        })
    }

    #[test]
    fn stdin_stdout_stderr_and_status() {
        let o = sh("cat; echo oops >&2; exit 3", Some(b"hello"), 5000, 1024).unwrap();
        assert_eq!(o.stdout, "hello");
        assert_eq!(o.stderr, "oops\n");
        assert_eq!(o.code, Some(3));
        assert!(!o.success());
        assert_eq!(o.status_text(), "status 3");
        assert!(!o.truncated);
    }

    #[test]
    fn a_program_that_ignores_its_input_is_fine() {
        let big = vec![b'x'; 4 << 20];
        let o = sh("echo done", Some(&big), 5000, 1024).unwrap();
        assert_eq!(o.stdout, "done\n");
        assert!(o.success());
    }

    #[test]
    fn hangs_are_killed_at_the_timeout() {
        let e = sh("sleep 30", None, 200, 1024).unwrap_err();
        assert!(matches!(e, RunError::Timeout { .. }), "{e}");
        assert!(e.to_string().contains("timed out after 0.2s"), "{e}");
        // A child holding the output open does not stall the caller either.
        let o = sh("(sleep 30 &) ; echo parent", None, 300, 1024);
        match o {
            Ok(o) => assert!(o.stdout.starts_with("parent") || o.stdout.is_empty()),
            Err(e) => assert!(matches!(e, RunError::Timeout { .. })),
        }
    }

    #[test]
    fn endless_output_is_capped() {
        let o = sh("yes | head -c 100000", None, 5000, 1000).unwrap();
        assert_eq!(o.stdout.len(), 1000);
        assert!(o.truncated);
    }

    #[test]
    fn missing_programs_are_spawn_errors() {
        let e = run(&Invocation {
            program: "/nonexistent/filter",
            timeout: Duration::from_secs(1),
            output_limit: 10,
            ..Invocation::default()
        })
        .unwrap_err();
        assert!(matches!(e, RunError::Spawn { .. }), "{e}");
        assert!(e
            .to_string()
            .starts_with("cannot run '/nonexistent/filter'"));
    }

    #[test]
    fn last_line_of_stderr() {
        assert_eq!(last_line("a\nb\n\n"), "b");
        assert_eq!(last_line(""), "");
    }
}
