//! Interactive jobs (`msub -I`) on the local backend.
//!
//! The supervisor of an interactive job opens a pseudo-terminal, runs the
//! job's script (the user's shell, or the `-x` script) in a new session
//! whose controlling terminal and standard streams are the pty's slave side,
//! and listens on [`TTY_SOCKET`](super::spool::TTY_SOCKET) in the job
//! directory. That socket is created by the supervisor, then given to the
//! job's owner with mode 0600; the relay also checks the peer's credentials
//! (`SO_PEERCRED`) and closes any connection from another uid, so only the
//! owner's processes can ever reach the terminal (the job directory itself
//! is 0711: it can be traversed, not listed).
//!
//! One client attaches, once ([`arches_api::tty`] frames): what it sends is
//! typed on the terminal, a window size sets the pty's (the job gets
//! `SIGWINCH`), and everything the job writes goes back. Output written
//! before the client attaches waits in the pty. When the client goes away
//! the job's terminal is hung up (`SIGHUP` to the job), which ends the
//! allocation as a closed login session ends; when the job's leader exits,
//! the relay sends what is left of the output and the exit status, and the
//! supervisor records the status as for a batch job.

use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::Path;
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::Duration;

use arches_api::tty;

use super::sys;

/// The two sides of the job's pseudo-terminal.
pub(crate) struct Pty {
    pub master: OwnedFd,
    pub slave: OwnedFd,
}

/// Opens a pty whose slave belongs to `owner` (uid, when the supervisor is
/// root), both sides close-on-exec (the job gets the slave through `dup2`).
pub(crate) fn open_pty(owner: Option<u32>) -> Result<Pty, String> {
    let mut master: libc::c_int = -1;
    let mut slave: libc::c_int = -1;
    // SAFETY: two valid out-pointers; no name, termios or size requested.
    let rc = unsafe {
        libc::openpty(
            &mut master,
            &mut slave,
            std::ptr::null_mut(),
            std::ptr::null(),
            std::ptr::null(),
        )
    };
    if rc == -1 {
        return Err(format!(
            "cannot open a terminal for the interactive job: {}",
            io::Error::last_os_error()
        ));
    }
    // SAFETY: openpty returned two fresh descriptors we now own.
    let pty = unsafe {
        Pty {
            master: OwnedFd::from_raw_fd(master),
            slave: OwnedFd::from_raw_fd(slave),
        }
    };
    for fd in [master, slave] {
        // SAFETY: fd is open (owned above).
        unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) };
    }
    if let Some(uid) = owner {
        // SAFETY: slave is open; -1 keeps the group (tty).
        if unsafe { libc::fchown(slave, uid, u32::MAX) } == -1 {
            return Err(format!(
                "cannot give the job's terminal to uid {uid}: {}",
                io::Error::last_os_error()
            ));
        }
    }
    Ok(pty)
}

/// Creates the job's terminal socket in the current directory (the job
/// directory), the owner's with mode 0600.
pub(crate) fn listen(owner: Option<(u32, u32)>) -> Result<UnixListener, String> {
    let path = Path::new(super::spool::TTY_SOCKET);
    let fail = |e: io::Error| format!("cannot create the terminal socket: {e}");
    let _ = std::fs::remove_file(path);
    let listener = UnixListener::bind(path).map_err(fail)?;
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)).map_err(fail)?;
    if let Some((uid, gid)) = owner {
        std::os::unix::fs::chown(path, Some(uid), Some(gid)).map_err(fail)?;
    }
    listener.set_nonblocking(true).map_err(fail)?;
    Ok(listener)
}

/// The relay thread of a running interactive job.
pub(crate) struct Relay {
    exit: File,
    done: mpsc::Receiver<()>,
    thread: Option<JoinHandle<()>>,
}

impl Relay {
    /// Starts relaying between the terminal socket and the pty's master for
    /// the job whose leader is `pgid`; only `uid` may attach.
    pub(crate) fn start(
        listener: UnixListener,
        master: OwnedFd,
        uid: u32,
        pgid: i32,
    ) -> Result<Relay, String> {
        let mut fds = [0; 2];
        // SAFETY: valid two-int array.
        if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } == -1 {
            return Err(format!(
                "cannot create the terminal relay's pipe: {}",
                io::Error::last_os_error()
            ));
        }
        // SAFETY: pipe2 returned two fresh descriptors we now own.
        let (reader, writer) =
            unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
        let (tx, done) = mpsc::channel();
        let thread = std::thread::Builder::new()
            .name("tty-relay".into())
            .spawn(move || {
                let mut relay = Session {
                    master: File::from(master),
                    exit: File::from(reader),
                    uid,
                    pgid,
                };
                relay.run(&listener);
                let _ = std::fs::remove_file(super::spool::TTY_SOCKET);
                let _ = tx.send(());
            })
            .map_err(|e| format!("cannot start the terminal relay: {e}"))?;
        Ok(Relay {
            exit: File::from(writer),
            done,
            thread: Some(thread),
        })
    }

    /// The job's leader exited with `code`: the client gets the rest of the
    /// output and the status (waiting at most a few seconds for it).
    pub(crate) fn finish(mut self, code: i32) {
        let _ = self.exit.write_all(&code.to_be_bytes());
        if self.done.recv_timeout(Duration::from_secs(5)).is_ok() {
            if let Some(t) = self.thread.take() {
                let _ = t.join();
            }
        }
    }
}

struct Session {
    master: File,
    exit: File,
    uid: u32,
    pgid: i32,
}

fn poll(fds: &mut [libc::pollfd]) -> io::Result<()> {
    loop {
        // SAFETY: a valid array of pollfd of this length.
        let rc = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, -1) };
        if rc >= 0 {
            return Ok(());
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

fn pollfd(fd: RawFd, on: bool) -> libc::pollfd {
    libc::pollfd {
        fd: if on { fd } else { -1 },
        events: libc::POLLIN,
        revents: 0,
    }
}

const READY: libc::c_short = libc::POLLIN | libc::POLLHUP | libc::POLLERR;

impl Session {
    fn run(&mut self, listener: &UnixListener) {
        let Some(mut conn) = self.attach(listener) else {
            return;
        };
        let _ = std::fs::remove_file(super::spool::TTY_SOCKET);
        let mut decoder = tty::Decoder::default();
        let mut client = true;
        let mut output = true;
        let mut buf = vec![0u8; 16 * 1024];
        loop {
            let mut fds = [
                pollfd(conn.as_raw_fd(), client),
                pollfd(self.master.as_raw_fd(), output),
                pollfd(self.exit.as_raw_fd(), true),
            ];
            if poll(&mut fds).is_err() {
                std::thread::sleep(Duration::from_millis(100));
                continue;
            }
            if fds[2].revents & READY != 0 {
                let code = self.exit_code();
                if client {
                    self.drain(&mut conn, &mut buf);
                    let _ = conn.write_all(&tty::encode(tty::EXIT, &code.to_be_bytes()));
                }
                return;
            }
            if fds[0].revents & READY != 0 {
                let more = match conn.read(&mut buf) {
                    Ok(0) | Err(_) => false,
                    Ok(n) => {
                        decoder.push(&buf[..n]);
                        self.typed(&mut decoder)
                    }
                };
                if !more {
                    // The user is gone: hang up, as a closed login does.
                    client = false;
                    let _ = sys::kill_group(self.pgid, libc::SIGHUP);
                    let _ = sys::kill_group(self.pgid, libc::SIGCONT);
                }
            }
            if fds[1].revents & READY != 0 {
                match self.master.read(&mut buf) {
                    Ok(n) if n > 0 => {
                        if client && conn.write_all(&tty::encode(tty::DATA, &buf[..n])).is_err() {
                            client = false;
                            let _ = sys::kill_group(self.pgid, libc::SIGHUP);
                        }
                    }
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    // EIO: every slave descriptor is closed.
                    _ => output = false,
                }
            }
        }
    }

    /// Waits for the owner to connect; `None` if the job ended first.
    fn attach(&mut self, listener: &UnixListener) -> Option<UnixStream> {
        loop {
            let mut fds = [
                pollfd(listener.as_raw_fd(), true),
                pollfd(self.exit.as_raw_fd(), true),
            ];
            if poll(&mut fds).is_err() {
                std::thread::sleep(Duration::from_millis(100));
                continue;
            }
            if fds[1].revents & READY != 0 {
                return None;
            }
            let Ok((conn, _)) = listener.accept() else {
                // Nothing after all, or out of descriptors: not a busy loop.
                std::thread::sleep(Duration::from_millis(50));
                continue;
            };
            match peer_uid(&conn) {
                Some(uid) if uid == self.uid => {
                    let _ = conn.set_nonblocking(false);
                    return Some(conn);
                }
                // Not the owner (the socket's mode keeps others out; this
                // is the second lock): closed without a byte.
                _ => drop(conn),
            }
        }
    }

    /// Applies the client's frames; `false` when the stream is not ours.
    fn typed(&mut self, decoder: &mut tty::Decoder) -> bool {
        loop {
            match decoder.next_frame() {
                Ok(Some((tty::DATA, bytes))) => {
                    if self.master.write_all(&bytes).is_err() {
                        return true;
                    }
                }
                Ok(Some((tty::WINSIZE, p))) => {
                    if let Some((rows, cols)) = tty::parse_winsize(&p) {
                        let ws = libc::winsize {
                            ws_row: rows,
                            ws_col: cols,
                            ws_xpixel: 0,
                            ws_ypixel: 0,
                        };
                        // SAFETY: master is open; ws is a valid winsize.
                        unsafe { libc::ioctl(self.master.as_raw_fd(), libc::TIOCSWINSZ, &ws) };
                    }
                }
                Ok(Some(_)) => {}
                Ok(None) => return true,
                Err(_) => return false,
            }
        }
    }

    fn exit_code(&mut self) -> i32 {
        let mut code = [0u8; 4];
        match self.exit.read_exact(&mut code) {
            Ok(()) => i32::from_be_bytes(code),
            Err(_) => 255,
        }
    }

    /// Sends what the job wrote and nobody read yet.
    fn drain(&mut self, conn: &mut UnixStream, buf: &mut [u8]) {
        let fd = self.master.as_raw_fd();
        // SAFETY: fd is open.
        unsafe {
            let flags = libc::fcntl(fd, libc::F_GETFL);
            libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK);
        }
        while let Ok(n) = self.master.read(buf) {
            if n == 0 || conn.write_all(&tty::encode(tty::DATA, &buf[..n])).is_err() {
                break;
            }
        }
    }
}

/// The uid of the process at the other end of `conn`.
fn peer_uid(conn: &UnixStream) -> Option<u32> {
    let mut cred = libc::ucred {
        pid: 0,
        uid: 0,
        gid: 0,
    };
    let mut len = std::mem::size_of::<libc::ucred>() as libc::socklen_t;
    // SAFETY: cred and len are valid for getsockopt(SO_PEERCRED).
    let rc = unsafe {
        libc::getsockopt(
            conn.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_PEERCRED,
            (&mut cred as *mut libc::ucred).cast(),
            &mut len,
        )
    };
    (rc == 0).then_some(cred.uid)
}
