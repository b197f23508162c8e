//! Thin safe wrappers over the few Unix calls the local backend needs
//! (signals, signalfd, poll, waitpid) that std does not offer.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

/// The signals a supervisor receives through its signalfd. They are blocked
/// from the moment it is spawned (see [`Spawner::spawn`]) so that a
/// request sent before it is ready stays pending instead of killing it.
pub(crate) const SUPERVISOR_SIGNALS: [i32; 5] = [
    libc::SIGCHLD,
    libc::SIGUSR1,
    libc::SIGTERM,
    libc::SIGINT,
    libc::SIGHUP,
];

fn cvt(r: libc::c_int) -> io::Result<libc::c_int> {
    if r == -1 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r)
    }
}

fn sigset(signals: &[i32]) -> libc::sigset_t {
    // SAFETY: sigemptyset/sigaddset initialise and fill a plain sigset_t.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for &s in signals {
            libc::sigaddset(&mut set, s);
        }
        set
    }
}

/// A prepared `posix_spawn` of a supervisor: program, arguments and
/// environment as C strings (built once per backend, the job directory is
/// appended per spawn).
pub(crate) struct Spawner {
    program: std::ffi::CString,
    args: Vec<std::ffi::CString>,
    env: Vec<std::ffi::CString>,
}

fn c_string(s: &[u8]) -> io::Result<std::ffi::CString> {
    std::ffi::CString::new(s).map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            "NUL byte in a supervisor argument",
        )
    })
}

impl Spawner {
    /// `argv` is the supervisor command (program first); the environment is
    /// this process's, now.
    pub(crate) fn new(argv: &[String]) -> io::Result<Spawner> {
        use std::os::unix::ffi::OsStrExt;
        let program = argv
            .first()
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "no supervisor command"))?;
        let mut env = Vec::new();
        for (k, v) in std::env::vars_os() {
            let mut kv = k.as_bytes().to_vec();
            kv.push(b'=');
            kv.extend_from_slice(v.as_bytes());
            env.push(c_string(&kv)?);
        }
        Ok(Spawner {
            program: c_string(program.as_bytes())?,
            // argv[0] is not the daemon's name: `pkill moab` must not take
            // jobs down.
            args: std::iter::once(super::SUPERVISOR_NAME.as_bytes())
                .chain(argv[1..].iter().map(|a| a.as_bytes()))
                .map(c_string)
                .collect::<io::Result<_>>()?,
            env,
        })
    }

    /// Starts `<argv...> <last>` in a new session with the supervisor
    /// signals blocked (so a request sent before it is ready stays pending
    /// instead of killing it), SIGPIPE at its default, stdin/stdout/stderr
    /// on /dev/null, in the directory `last`. `posix_spawn` does not copy the daemon's address space
    /// (glibc uses `CLONE_VM|CLONE_VFORK`), so a start costs the same with
    /// 100,000 jobs in memory as with none. Returns the pid.
    pub(crate) fn spawn(&self, last: &std::path::Path) -> io::Result<i32> {
        use std::os::unix::ffi::OsStrExt;
        let last = c_string(last.as_os_str().as_bytes())?;
        let mut argv: Vec<*mut libc::c_char> =
            self.args.iter().map(|a| a.as_ptr().cast_mut()).collect();
        argv.push(last.as_ptr().cast_mut());
        argv.push(std::ptr::null_mut());
        let mut envp: Vec<*mut libc::c_char> =
            self.env.iter().map(|e| e.as_ptr().cast_mut()).collect();
        envp.push(std::ptr::null_mut());
        let check = |r: libc::c_int| {
            if r == 0 {
                Ok(())
            } else {
                Err(io::Error::from_raw_os_error(r))
            }
        };
        // SAFETY: the attribute and file-action objects are initialised
        // before use and destroyed once; every pointer handed to
        // posix_spawnp (program, argv, envp, the /dev/null path) outlives
        // the call, and both vectors end with a null pointer.
        unsafe {
            let mut attr: libc::posix_spawnattr_t = std::mem::zeroed();
            check(libc::posix_spawnattr_init(&mut attr))?;
            let mut actions: libc::posix_spawn_file_actions_t = std::mem::zeroed();
            if let Err(e) = check(libc::posix_spawn_file_actions_init(&mut actions)) {
                libc::posix_spawnattr_destroy(&mut attr);
                return Err(e);
            }
            let blocked = sigset(&SUPERVISOR_SIGNALS);
            let default = sigset(&[libc::SIGPIPE]);
            let flags = libc::c_int::from(libc::POSIX_SPAWN_SETSID)
                | libc::POSIX_SPAWN_SETSIGMASK
                | libc::POSIX_SPAWN_SETSIGDEF;
            let null = c"/dev/null";
            let mut pid: libc::pid_t = 0;
            let r = check(libc::posix_spawnattr_setflags(
                &mut attr,
                flags as libc::c_short,
            ))
            .and_then(|()| check(libc::posix_spawnattr_setsigmask(&mut attr, &blocked)))
            .and_then(|()| check(libc::posix_spawnattr_setsigdefault(&mut attr, &default)))
            .and_then(|()| {
                check(libc::posix_spawn_file_actions_addopen(
                    &mut actions,
                    0,
                    null.as_ptr(),
                    libc::O_RDONLY,
                    0,
                ))
            })
            .and_then(|()| {
                check(libc::posix_spawn_file_actions_addopen(
                    &mut actions,
                    1,
                    null.as_ptr(),
                    libc::O_WRONLY,
                    0,
                ))
            })
            .and_then(|()| check(libc::posix_spawn_file_actions_adddup2(&mut actions, 1, 2)))
            // It starts in its job directory: from its first instruction
            // it is recognisable as that directory's supervisor (a
            // re-adoption right after a start must not take a supervisor
            // that has not yet changed directory for one that ended).
            .and_then(|()| {
                check(libc::posix_spawn_file_actions_addchdir_np(
                    &mut actions,
                    last.as_ptr(),
                ))
            })
            .and_then(|()| {
                check(libc::posix_spawnp(
                    &mut pid,
                    self.program.as_ptr(),
                    &actions,
                    &attr,
                    argv.as_ptr(),
                    envp.as_ptr(),
                ))
            });
            libc::posix_spawn_file_actions_destroy(&mut actions);
            libc::posix_spawnattr_destroy(&mut attr);
            r.map(|()| pid)
        }
    }
}

/// A raw wait status in words: `exited with status N` or `was killed by
/// signal N`.
pub(crate) fn describe_exit(status: i32) -> String {
    if libc::WIFEXITED(status) {
        format!("exited with status {}", libc::WEXITSTATUS(status))
    } else if libc::WIFSIGNALED(status) {
        format!("was killed by signal {}", libc::WTERMSIG(status))
    } else {
        format!("ended (wait status {status})")
    }
}

/// Send `signal` to a process.
/// Sets the calling process's name (`/proc/self/comm`, what `ps -e`,
/// `pgrep` and `pkill` match), truncated to 15 bytes by the kernel.
pub(crate) fn set_process_name(name: &str) -> io::Result<()> {
    let c = std::ffi::CString::new(name).map_err(io::Error::other)?;
    // SAFETY: PR_SET_NAME reads a NUL-terminated string of at most 16 bytes
    // (longer ones are truncated by the kernel).
    let r = unsafe { libc::prctl(libc::PR_SET_NAME, c.as_ptr(), 0, 0, 0) };
    if r == -1 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

pub(crate) fn kill(pid: i32, signal: i32) -> io::Result<()> {
    if pid <= 0 {
        return Err(io::Error::from_raw_os_error(libc::ESRCH));
    }
    // SAFETY: kill has no memory-safety preconditions.
    cvt(unsafe { libc::kill(pid, signal) }).map(drop)
}

/// Send `signal` to every process of a process group.
pub(crate) fn kill_group(pgid: i32, signal: i32) -> io::Result<()> {
    if pgid <= 1 {
        return Err(io::Error::from_raw_os_error(libc::ESRCH));
    }
    // SAFETY: kill has no memory-safety preconditions.
    cvt(unsafe { libc::kill(-pgid, signal) }).map(drop)
}

/// Whether a read of `/proc/<pid>/...` failed because the process is gone
/// (rather than because the daemon could not read: out of descriptors...).
fn gone(e: &io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::ENOENT | libc::ESRCH))
}

/// Whether a process exists and is not a zombie. `Err` when that cannot be
/// told (`/proc` could not be read: out of descriptors, ...), never `false`.
pub(crate) fn alive(pid: i32) -> io::Result<bool> {
    if pid <= 0 {
        return Ok(false);
    }
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // The state is the first field after the parenthesised command name.
        Ok(stat) => Ok(stat
            .rfind(')')
            .and_then(|i| stat[i + 1..].split_whitespace().next())
            .is_some_and(|state| state != "Z" && state != "X")),
        Err(e) if gone(&e) => Ok(false),
        Err(e) => Err(e),
    }
}

/// The argument vector of a live process, from `/proc/<pid>/cmdline`
/// (`None`: no such process, or a kernel thread). `Err` when it cannot be read.
pub(crate) fn cmdline(pid: i32) -> io::Result<Option<Vec<String>>> {
    let raw = match std::fs::read(format!("/proc/{pid}/cmdline")) {
        Ok(raw) => raw,
        Err(e) if gone(&e) => return Ok(None),
        Err(e) => return Err(e),
    };
    if raw.is_empty() {
        return Ok(None);
    }
    Ok(Some(
        raw.split(|&b| b == 0)
            .filter(|a| !a.is_empty())
            .map(|a| String::from_utf8_lossy(a).into_owned())
            .collect(),
    ))
}

/// The working directory of a process (`None`: no such process). `Err`
/// when it cannot be read.
pub(crate) fn cwd(pid: i32) -> io::Result<Option<std::path::PathBuf>> {
    match std::fs::read_link(format!("/proc/{pid}/cwd")) {
        Ok(p) => Ok(Some(p)),
        Err(e) if gone(&e) => Ok(None),
        Err(e) => Err(e),
    }
}

/// A signalfd receiving a set of (blocked) signals.
pub(crate) struct SignalFd {
    fd: OwnedFd,
}

impl SignalFd {
    /// Block `signals` in this (single-threaded) process and receive them here.
    pub(crate) fn new(signals: &[i32]) -> io::Result<SignalFd> {
        let set = sigset(signals);
        // SAFETY: valid set pointer; signalfd returns a new descriptor we own.
        unsafe {
            cvt(libc::sigprocmask(
                libc::SIG_BLOCK,
                &set,
                std::ptr::null_mut(),
            ))?;
            let fd = cvt(libc::signalfd(
                -1,
                &set,
                libc::SFD_CLOEXEC | libc::SFD_NONBLOCK,
            ))?;
            Ok(SignalFd {
                fd: OwnedFd::from_raw_fd(fd),
            })
        }
    }

    /// Wait until a signal is pending or `timeout_ms` elapses (-1: forever).
    pub(crate) fn wait(&self, timeout_ms: i32) -> io::Result<()> {
        let mut pfd = libc::pollfd {
            fd: self.fd.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd.
        match cvt(unsafe { libc::poll(&mut pfd, 1, timeout_ms) }) {
            Ok(_) => Ok(()),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// The signals received since the last call (coalesced by the kernel).
    pub(crate) fn drain(&self) -> io::Result<Vec<i32>> {
        let mut out = Vec::new();
        loop {
            // SAFETY: signalfd_siginfo is plain data; read fills at most its size.
            let mut info: libc::signalfd_siginfo = unsafe { std::mem::zeroed() };
            let size = std::mem::size_of::<libc::signalfd_siginfo>();
            let n = unsafe {
                libc::read(
                    self.fd.as_raw_fd(),
                    (&mut info as *mut libc::signalfd_siginfo).cast(),
                    size,
                )
            };
            if n == -1 {
                let e = io::Error::last_os_error();
                return match e.kind() {
                    io::ErrorKind::WouldBlock => Ok(out),
                    io::ErrorKind::Interrupted => continue,
                    _ => Err(e),
                };
            }
            if n as usize != size {
                return Ok(out);
            }
            out.push(info.ssi_signo as i32);
        }
    }
}

/// Non-blocking `waitpid`: the raw wait status once `pid` has ended.
pub(crate) fn try_wait(pid: i32) -> io::Result<Option<i32>> {
    let mut status = 0;
    // SAFETY: valid out pointer.
    let r = cvt(unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) })?;
    Ok((r == pid).then_some(status))
}

/// Processor time (user + system, milliseconds) of every child of this
/// process that was waited for, and of their waited-for descendants
/// (`getrusage(RUSAGE_CHILDREN)`); `None` if the call fails.
pub(crate) fn children_cpu_ms() -> Option<u64> {
    // SAFETY: zeroed rusage is a valid out value; getrusage fills it.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: valid out pointer.
    if unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut ru) } != 0 {
        return None;
    }
    let ms = |t: libc::timeval| {
        u64::try_from(t.tv_sec).unwrap_or(0) * 1000 + u64::try_from(t.tv_usec).unwrap_or(0) / 1000
    };
    Some(ms(ru.ru_utime) + ms(ru.ru_stime))
}

/// Blocking `waitpid` on one child.
pub(crate) fn wait(pid: i32) -> io::Result<i32> {
    let mut status = 0;
    loop {
        // SAFETY: valid out pointer.
        match cvt(unsafe { libc::waitpid(pid, &mut status, 0) }) {
            Ok(_) => return Ok(status),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        }
    }
}

/// A wait status as a shell-style exit code: the code, or 128+signal.
pub(crate) fn exit_code(status: i32) -> i32 {
    if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else if libc::WIFSIGNALED(status) {
        128 + libc::WTERMSIG(status)
    } else {
        status
    }
}

/// The effective uid of this process.
pub(crate) fn euid() -> u32 {
    // SAFETY: geteuid cannot fail.
    unsafe { libc::geteuid() }
}

/// The process group of a live process, from `/proc/<pid>/stat` (`None`:
/// no such live process). `Err` when it cannot be read.
pub(crate) fn process_group(pid: i32) -> io::Result<Option<i32>> {
    if !alive(pid)? {
        return Ok(None);
    }
    let stat = match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(s) => s,
        Err(e) if gone(&e) => return Ok(None),
        Err(e) => return Err(e),
    };
    // After the command name: state, ppid, pgrp.
    Ok(stat
        .rfind(')')
        .and_then(|i| stat[i + 1..].split_whitespace().nth(2))
        .and_then(|g| g.parse().ok()))
}

/// Close every descriptor from 3 up, so that nothing the daemon leaked
/// without close-on-exec reaches the job. Call first thing, single-threaded.
pub(crate) fn close_inherited_fds() {
    // SAFETY: close_range only closes descriptors; nothing in this process
    // holds any above 2 yet.
    let r = unsafe { libc::syscall(libc::SYS_close_range, 3u32, u32::MAX, 0u32) };
    if r == -1 {
        // Older kernels: close what /proc lists (collected before closing).
        let fds: Vec<i32> = std::fs::read_dir("/proc/self/fd")
            .map(|dir| {
                dir.flatten()
                    .filter_map(|e| e.file_name().to_str()?.parse().ok())
                    .filter(|&fd| fd > 2)
                    .collect()
            })
            .unwrap_or_default();
        for fd in fds {
            // SAFETY: as above; the directory handle itself is already closed.
            unsafe { libc::close(fd) };
        }
    }
}
