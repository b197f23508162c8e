//! `msub -I`: wait for an interactive job to start, then be its terminal.
//!
//! Torque's lines: `msub: waiting for job N to start`, `msub: job N ready`,
//! and `msub: job N completed` at the end. Once the job runs, the daemon
//! says where its terminal socket is (`/v1/jobs/terminal`, the owner only);
//! msub connects, puts the user's terminal in raw mode (restored on every
//! way out), and relays [`arches_api::tty`] frames: what is typed (Ctrl-C
//! included: it reaches the job's foreground processes as on a login),
//! the window size (again whenever it changes), and the job's output. msub
//! exits with the shell's exit status. Ctrl-C while still waiting cancels
//! the job.
//!
//! On the SLURM backend the daemon answers with the job's Slurm allocation
//! instead of a socket, and msub runs the session itself as a step of it
//! (`msub_slurm`).

use std::io::{Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use arches_api::{tty, JobAction, JobActionRequest, Section, SlurmSession, TerminalRequest};
use arches_client::Client;

/// How often the job's state is asked while waiting for it to start.
const POLL: Duration = Duration::from_millis(500);
/// How long a running job's terminal socket may take to appear.
const ATTACH_WITHIN: Duration = Duration::from_secs(30);

/// The script of an interactive job without `-x`: the user's shell.
pub fn shell_script(shell: &str) -> String {
    format!("#!/bin/sh\nexec '{}'\n", shell.replace('\'', r"'\''"))
}

pub(super) static INTERRUPTED: AtomicBool = AtomicBool::new(false);
/// SIGTERM, SIGHUP or SIGQUIT while attached: detach, restoring the terminal.
pub(super) static ENDED: AtomicBool = AtomicBool::new(false);

pub(super) extern "C" fn on_sigint(_: libc::c_int) {
    INTERRUPTED.store(true, Ordering::SeqCst);
}

pub(super) extern "C" fn on_end(_: libc::c_int) {
    ENDED.store(true, Ordering::SeqCst);
}

pub(super) fn say(line: &str) {
    let mut out = std::io::stdout();
    let _ = writeln!(out, "{line}");
    let _ = out.flush();
}

/// Waits for job `id`, attaches to it and relays until it ends; msub's
/// exit status (the shell's).
pub fn run(client: &Client, id: u64) -> Result<u8, String> {
    say(&format!("msub: waiting for job {id} to start"));
    // SAFETY: the handler only stores to an atomic.
    let previous =
        unsafe { libc::signal(libc::SIGINT, on_sigint as *const () as libc::sighandler_t) };
    let waited = wait_running(client, id);
    // SAFETY: restores the disposition saved above.
    unsafe { libc::signal(libc::SIGINT, previous) };
    let conn = match waited? {
        Waited::Attached(conn) => conn,
        Waited::Slurm(session) => return super::msub_slurm::run(client, id, &session),
        Waited::Ended(code) => {
            say(&format!("msub: job {id} completed"));
            return Ok(status_byte(code));
        }
        Waited::Interrupted => {
            let _ = client.job_action(&JobActionRequest {
                jobs: vec![id.to_string()],
                action: JobAction::Cancel,
                select: Default::default(),
            });
            return Err(format!(
                "msub: job {id} canceled (interrupted while waiting)"
            ));
        }
    };
    say(&format!("msub: job {id} ready\n"));
    let code = relay(conn);
    match code {
        Some(code) => {
            say(&format!("\nmsub: job {id} completed"));
            Ok(status_byte(code))
        }
        None if ENDED.load(Ordering::SeqCst) => Err(format!(
            "\nmsub: detached from job {id} by a signal: its terminal is hung up (checkjob {id} shows how it ended)"
        )),
        None => Err(format!(
            "\nmsub: lost the connection to job {id}'s terminal (checkjob {id} shows how it ended)"
        )),
    }
}

pub(super) fn status_byte(code: i32) -> u8 {
    u8::try_from(code.clamp(0, 255)).unwrap_or(255)
}

enum Waited {
    Attached(UnixStream),
    /// The job runs in Slurm: msub runs the session itself.
    Slurm(SlurmSession),
    Ended(i32),
    Interrupted,
}

fn wait_running(client: &Client, id: u64) -> Result<Waited, String> {
    let mut running_since: Option<Instant> = None;
    loop {
        if INTERRUPTED.load(Ordering::SeqCst) {
            return Ok(Waited::Interrupted);
        }
        let v = super::msub::one_job(client, id)?;
        let Some(job) = v.jobs.first() else {
            return Err(format!("msub: job {id} is gone"));
        };
        match job.summary.section {
            Section::Completed => return Ok(Waited::Ended(job.summary.exit_code.unwrap_or(1))),
            Section::Active if job.summary.state == "Running" => {
                let since = *running_since.get_or_insert_with(Instant::now);
                let at = client
                    .terminal(&TerminalRequest { id })
                    .map_err(|e| e.to_string())?;
                if let Some(session) = at.slurm {
                    return Ok(Waited::Slurm(session));
                }
                match UnixStream::connect(&at.socket) {
                    Ok(conn) => return Ok(Waited::Attached(conn)),
                    // The supervisor is still setting the terminal up.
                    Err(e) if since.elapsed() < ATTACH_WITHIN => {
                        let _ = e;
                    }
                    Err(e) => {
                        return Err(format!(
                            "msub: cannot attach to job {id}'s terminal {}: {e}",
                            at.socket
                        ))
                    }
                }
            }
            _ => {}
        }
        std::thread::sleep(POLL);
    }
}

/// The user's terminal in raw mode while it lives; restored when dropped.
struct RawMode {
    fd: libc::c_int,
    saved: libc::termios,
}

impl RawMode {
    fn enter(fd: libc::c_int) -> Option<RawMode> {
        // SAFETY: termios is plain data; tcgetattr fills it or fails.
        let mut saved: libc::termios = unsafe { std::mem::zeroed() };
        // SAFETY: fd is a descriptor of this process; saved is valid.
        if unsafe { libc::isatty(fd) } != 1 || unsafe { libc::tcgetattr(fd, &mut saved) } != 0 {
            return None;
        }
        let mut raw = saved;
        // SAFETY: raw is a valid termios copy.
        unsafe { libc::cfmakeraw(&mut raw) };
        // SAFETY: fd is a terminal; raw is valid.
        if unsafe { libc::tcsetattr(fd, libc::TCSADRAIN, &raw) } != 0 {
            return None;
        }
        Some(RawMode { fd, saved })
    }
}

impl Drop for RawMode {
    fn drop(&mut self) {
        // SAFETY: restores the attributes read in `enter`.
        unsafe { libc::tcsetattr(self.fd, libc::TCSADRAIN, &self.saved) };
    }
}

/// The size of the terminal on `fd`, if it is one.
fn window(fd: libc::c_int) -> Option<(u16, u16)> {
    // SAFETY: winsize is plain data filled by the ioctl.
    let mut ws: libc::winsize = unsafe { std::mem::zeroed() };
    // SAFETY: a valid out-pointer for TIOCGWINSZ.
    let rc = unsafe { libc::ioctl(fd, libc::TIOCGWINSZ, &mut ws) };
    (rc == 0 && ws.ws_row > 0).then_some((ws.ws_row, ws.ws_col))
}

/// Relays until the job's exit frame (its status) or a lost connection.
fn relay(conn: UnixStream) -> Option<i32> {
    let stdin = std::io::stdin();
    let fd = stdin.as_raw_fd();
    let _raw = RawMode::enter(fd);
    let stop = Arc::new(AtomicBool::new(false));
    let mut writer = conn.try_clone().ok()?;
    let typing = {
        let stop = Arc::clone(&stop);
        std::thread::spawn(move || {
            let mut size = window(fd).or_else(|| window(1));
            if let Some((r, c)) = size {
                let _ = writer.write_all(&tty::winsize(r, c));
            }
            let mut buf = [0u8; 4096];
            let mut input = true;
            while !stop.load(Ordering::SeqCst) {
                let mut p = libc::pollfd {
                    fd: if input { fd } else { -1 },
                    events: libc::POLLIN,
                    revents: 0,
                };
                // SAFETY: one valid pollfd; 200 ms so a resize is seen.
                let n = unsafe { libc::poll(&mut p, 1, 200) };
                let now = window(fd).or_else(|| window(1));
                if now.is_some() && now != size {
                    size = now;
                    if let Some((r, c)) = size {
                        if writer.write_all(&tty::winsize(r, c)).is_err() {
                            return;
                        }
                    }
                }
                if n <= 0 || p.revents == 0 {
                    continue;
                }
                // SAFETY: reading into a local buffer from our stdin.
                let got = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
                if got <= 0 {
                    // End of input (not a terminal): nothing more to type.
                    input = false;
                    continue;
                }
                let got = got as usize;
                if writer
                    .write_all(&tty::encode(tty::DATA, &buf[..got]))
                    .is_err()
                {
                    return;
                }
            }
        })
    };
    let mut reader = conn;
    // Seen between reads: a signal that ends msub (the terminal is restored
    // on the way out; the job's terminal is hung up when the socket closes).
    let _ = reader.set_read_timeout(Some(Duration::from_millis(200)));
    let mut previous = Vec::new();
    for sig in [libc::SIGTERM, libc::SIGHUP, libc::SIGQUIT] {
        // SAFETY: the handler only stores to an atomic.
        previous.push((sig, unsafe {
            libc::signal(sig, on_end as *const () as libc::sighandler_t)
        }));
    }
    let mut decoder = tty::Decoder::default();
    let mut out = std::io::stdout();
    let mut buf = vec![0u8; 16 * 1024];
    let code = 'read: loop {
        if ENDED.load(Ordering::SeqCst) {
            break None;
        }
        let n = match reader.read(&mut buf) {
            Ok(0) => break None,
            Ok(n) => n,
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock
                        | std::io::ErrorKind::TimedOut
                        | std::io::ErrorKind::Interrupted
                ) =>
            {
                continue
            }
            Err(_) => break None,
        };
        decoder.push(&buf[..n]);
        loop {
            match decoder.next_frame() {
                Ok(Some((tty::DATA, bytes))) => {
                    let _ = out.write_all(&bytes);
                    let _ = out.flush();
                }
                Ok(Some((tty::EXIT, p))) => break 'read tty::parse_exit(&p),
                Ok(Some(_)) => {}
                Ok(None) => break,
                Err(_) => break 'read None,
            }
        }
    };
    stop.store(true, Ordering::SeqCst);
    let _ = reader.shutdown(std::net::Shutdown::Both);
    let _ = typing.join();
    for (sig, handler) in previous {
        // SAFETY: restores the dispositions saved above.
        unsafe { libc::signal(sig, handler) };
    }
    code
}
