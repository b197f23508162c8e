//! Forking the job: everything the child needs is prepared before `fork`
//! (C strings, argument and environment vectors), so the child only makes
//! async-signal-safe system calls: new process group, switch user, chdir,
//! open its output files as the user, reset signals, exec. A failure in the
//! child is reported to the supervisor through a close-on-exec pipe.

use std::ffi::{CString, NulError};
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

/// The job's credentials, applied in the child when the supervisor is root.
pub(crate) struct Credentials {
    pub uid: u32,
    pub gid: u32,
    pub groups: Vec<libc::gid_t>,
}

/// A fully prepared exec of the job leader.
pub(crate) struct Prepared {
    program: CString,
    argv: Vec<CString>,
    env: Vec<CString>,
    workdir: CString,
    stdout: CString,
    /// `None` when stderr is joined into stdout.
    stderr: Option<CString>,
    credentials: Option<Credentials>,
    umask: Option<u32>,
    /// An interactive job's terminal (the pty's slave side): the job runs
    /// in a new session with it as controlling terminal and standard
    /// streams, instead of the output files.
    tty: Option<libc::c_int>,
}

/// What the job should run and where its output goes.
pub(crate) struct ExecPlan<'a> {
    pub program: &'a str,
    pub argv: &'a [String],
    pub env: &'a [(String, String)],
    pub workdir: &'a str,
    pub stdout: &'a str,
    pub stderr: Option<&'a str>,
    pub credentials: Option<Credentials>,
    /// The job's own file-creation mask (`-W umask=`).
    pub umask: Option<u32>,
    /// The pty slave an interactive job runs on (see [`Prepared`]).
    pub tty: Option<libc::c_int>,
}

impl Prepared {
    pub(crate) fn new(plan: ExecPlan<'_>) -> Result<Prepared, String> {
        let c = |what: &str, s: &str| {
            CString::new(s).map_err(|_: NulError| format!("{what} contains a NUL byte: {s:?}"))
        };
        Ok(Prepared {
            program: c("interpreter", plan.program)?,
            argv: plan
                .argv
                .iter()
                .map(|a| c("argument", a))
                .collect::<Result<_, _>>()?,
            env: plan
                .env
                .iter()
                .map(|(k, v)| {
                    if k.is_empty() || k.contains('=') {
                        return Err(format!("bad environment variable name {k:?}"));
                    }
                    c("environment variable", &format!("{k}={v}"))
                })
                .collect::<Result<_, _>>()?,
            workdir: c("working directory", plan.workdir)?,
            stdout: c("stdout path", plan.stdout)?,
            stderr: plan.stderr.map(|s| c("stderr path", s)).transpose()?,
            credentials: plan.credentials,
            umask: plan.umask,
            tty: plan.tty,
        })
    }

    /// Fork and exec the job in its own process group; with `cgroup` (an
    /// open `cgroup.procs`), the child joins that cgroup first. Returns the
    /// leader's pid once the exec succeeded, or the reason it failed.
    pub(crate) fn spawn(&self, cgroup: Option<libc::c_int>) -> Result<i32, String> {
        let mut argv: Vec<*const libc::c_char> = self.argv.iter().map(|a| a.as_ptr()).collect();
        argv.push(std::ptr::null());
        let mut envp: Vec<*const libc::c_char> = self.env.iter().map(|e| e.as_ptr()).collect();
        envp.push(std::ptr::null());
        let mut fds = [0; 2];
        // SAFETY: valid two-int array.
        if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } == -1 {
            return Err(format!(
                "cannot create a pipe: {}",
                io::Error::last_os_error()
            ));
        }
        // SAFETY: pipe2 returned two fresh descriptors we now own.
        let (reader, writer) =
            unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
        // SAFETY: the supervisor is single-threaded; the child only calls
        // async-signal-safe functions on memory prepared before the fork.
        let pid = unsafe { libc::fork() };
        if pid == -1 {
            return Err(format!("cannot fork: {}", io::Error::last_os_error()));
        }
        if pid == 0 {
            // SAFETY: in the child; never returns.
            unsafe { self.child(&argv, &envp, writer.as_raw_fd(), cgroup) }
        }
        drop(writer);
        let mut report = [0u8; 8];
        let mut got = 0;
        while got < report.len() {
            // SAFETY: reading into the unfilled tail of a local buffer.
            let n = unsafe {
                libc::read(
                    reader.as_raw_fd(),
                    report[got..].as_mut_ptr().cast(),
                    report.len() - got,
                )
            };
            match n {
                0 => break,
                n if n > 0 => got += n as usize,
                _ if io::Error::last_os_error().kind() == io::ErrorKind::Interrupted => {}
                _ => break,
            }
        }
        if got == 0 {
            return Ok(pid);
        }
        // The child failed before exec and exits; reap it.
        let _ = super::sys::wait(pid);
        let stage = u32::from_ne_bytes([report[0], report[1], report[2], report[3]]);
        let errno = i32::from_ne_bytes([report[4], report[5], report[6], report[7]]);
        Err(format!(
            "{}: {}",
            self.describe(stage),
            io::Error::from_raw_os_error(errno)
        ))
    }

    fn describe(&self, stage: u32) -> String {
        let creds = self.credentials.as_ref();
        match stage {
            STAGE_PGRP if self.tty.is_some() => {
                "cannot create a session on the job's terminal".to_string()
            }
            STAGE_PGRP => "cannot create a process group".to_string(),
            STAGE_GROUPS => "cannot set supplementary groups".to_string(),
            STAGE_GID => format!("cannot set gid {}", creds.map_or(0, |c| c.gid)),
            STAGE_UID => format!("cannot set uid {}", creds.map_or(0, |c| c.uid)),
            STAGE_CHDIR => format!(
                "cannot change to working directory {}",
                self.workdir.to_string_lossy()
            ),
            STAGE_STDIN => "cannot open /dev/null".to_string(),
            STAGE_STDOUT => format!("cannot open stdout {}", self.stdout.to_string_lossy()),
            STAGE_STDERR => format!(
                "cannot open stderr {}",
                self.stderr
                    .as_ref()
                    .map_or(String::new(), |s| s.to_string_lossy().into_owned())
            ),
            _ => format!("cannot execute {}", self.program.to_string_lossy()),
        }
    }

    /// The child side of the fork.
    ///
    /// # Safety
    /// Only call in a freshly forked child of a single-threaded process.
    unsafe fn child(
        &self,
        argv: &[*const libc::c_char],
        envp: &[*const libc::c_char],
        report: libc::c_int,
        cgroup: Option<libc::c_int>,
    ) -> ! {
        // SAFETY (whole body): async-signal-safe calls on prepared memory.
        unsafe {
            let fail = |stage: u32| -> ! {
                let errno = *libc::__errno_location();
                let mut msg = [0u8; 8];
                msg[..4].copy_from_slice(&stage.to_ne_bytes());
                msg[4..].copy_from_slice(&errno.to_ne_bytes());
                libc::write(report, msg.as_ptr().cast(), msg.len());
                libc::_exit(127)
            };
            match self.tty {
                // A session of its own (also its process group) whose
                // controlling terminal is the job's pty.
                Some(tty) => {
                    if libc::setsid() == -1 || libc::ioctl(tty, libc::TIOCSCTTY, 0) == -1 {
                        fail(STAGE_PGRP);
                    }
                }
                None => {
                    if libc::setpgid(0, 0) == -1 {
                        fail(STAGE_PGRP);
                    }
                }
            }
            if let Some(fd) = cgroup {
                // Join the job's cgroup while still privileged ("0": the
                // writer). Best effort: the supervisor checks membership.
                libc::write(fd, c"0".as_ptr().cast(), 1);
            }
            if let Some(c) = &self.credentials {
                if libc::setgroups(c.groups.len(), c.groups.as_ptr()) == -1 {
                    fail(STAGE_GROUPS);
                }
                if libc::setgid(c.gid) == -1 {
                    fail(STAGE_GID);
                }
                if libc::setuid(c.uid) == -1 {
                    fail(STAGE_UID);
                }
            }
            if libc::chdir(self.workdir.as_ptr()) == -1 {
                fail(STAGE_CHDIR);
            }
            // The job's own mask (`-W umask=`) if it gave one; else the
            // daemon's, but never one that lets other users write its
            // files (a daemon started under umask 000 must not hand that
            // to jobs).
            match self.umask {
                Some(m) => {
                    libc::umask(m as libc::mode_t);
                }
                None => {
                    let inherited = libc::umask(0o022);
                    libc::umask(inherited | 0o022);
                }
            }
            if let Some(tty) = self.tty {
                for fd in 0..3 {
                    libc::dup2(tty, fd);
                }
                if tty > 2 {
                    libc::close(tty);
                }
            } else {
                let null = libc::open(c"/dev/null".as_ptr(), libc::O_RDONLY);
                if null == -1 {
                    fail(STAGE_STDIN);
                }
                redirect(null, 0);
                let flags = libc::O_WRONLY | libc::O_CREAT | libc::O_TRUNC;
                let out = libc::open(self.stdout.as_ptr(), flags, 0o644);
                if out == -1 {
                    fail(STAGE_STDOUT);
                }
                redirect(out, 1);
                match &self.stderr {
                    None => {
                        libc::dup2(1, 2);
                    }
                    Some(path) => {
                        let err = libc::open(path.as_ptr(), flags, 0o644);
                        if err == -1 {
                            fail(STAGE_STDERR);
                        }
                        redirect(err, 2);
                    }
                }
            }
            // Back to a clean signal state: default dispositions (std ignores
            // SIGPIPE) and an empty mask (the supervisor blocks its signals).
            for sig in 1..32 {
                if sig != libc::SIGKILL && sig != libc::SIGSTOP {
                    libc::signal(sig, libc::SIG_DFL);
                }
            }
            let mut empty: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut empty);
            libc::sigprocmask(libc::SIG_SETMASK, &empty, std::ptr::null_mut());
            libc::execve(self.program.as_ptr(), argv.as_ptr(), envp.as_ptr());
            fail(STAGE_EXEC)
        }
    }
}

/// Move `fd` onto `target` (no-op when it already is `target`).
///
/// # Safety
/// `fd` must be an open descriptor owned by the caller.
unsafe fn redirect(fd: libc::c_int, target: libc::c_int) {
    if fd != target {
        // SAFETY: both descriptors are valid in the caller.
        unsafe {
            libc::dup2(fd, target);
            libc::close(fd);
        }
    }
}

const STAGE_PGRP: u32 = 1;
const STAGE_GROUPS: u32 = 2;
const STAGE_GID: u32 = 3;
const STAGE_UID: u32 = 4;
const STAGE_CHDIR: u32 = 5;
const STAGE_STDIN: u32 = 6;
const STAGE_STDOUT: u32 = 7;
const STAGE_STDERR: u32 = 8;
const STAGE_EXEC: u32 = 9;
