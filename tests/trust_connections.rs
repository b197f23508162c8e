//! Connection exhaustion (issue 14, point 1): a user who opens many idle
//! connections, more than the daemon has descriptors, neither keeps others
//! from being served nor corrupts job accounting; connections that send
//! nothing, send half a request or never read their answer are closed
//! after `CLIENTTIMEOUT`.

mod common;

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use common::raw::{self, read_response};
use common::{text, Daemon, Spawn};

const LONG: Duration = Duration::from_secs(60);

/// A child process of another uid holding idle connections to a socket.
struct Flood {
    pid: libc::pid_t,
    release: libc::c_int,
    /// Connections it opened.
    opened: usize,
}

impl Flood {
    /// Forks a child that becomes `uid`/`gid`, connects `n` times to
    /// `socket` (sending nothing) and holds every connection until
    /// released. Only async-signal-safe calls run in the child.
    fn start(socket: &Path, uid: u32, gid: u32, n: usize) -> Flood {
        use std::os::unix::ffi::OsStrExt;
        // SAFETY: a zeroed sockaddr_un is valid; the path fits (checked).
        let mut addr: libc::sockaddr_un = unsafe { std::mem::zeroed() };
        addr.sun_family = libc::AF_UNIX as libc::sa_family_t;
        let path = socket.as_os_str().as_bytes();
        assert!(path.len() < addr.sun_path.len(), "socket path too long");
        for (d, s) in addr.sun_path.iter_mut().zip(path) {
            *d = *s as libc::c_char;
        }
        let mut ready = [0; 2];
        let mut hold = [0; 2];
        // SAFETY: pipe(2) fills two descriptors.
        unsafe {
            assert_eq!(libc::pipe(ready.as_mut_ptr()), 0);
            assert_eq!(libc::pipe(hold.as_mut_ptr()), 0);
        }
        // SAFETY: the child only makes raw system calls (no allocation, no
        // locks) and leaves with _exit.
        let pid = unsafe { libc::fork() };
        assert!(pid >= 0, "fork failed");
        if pid == 0 {
            unsafe {
                libc::close(ready[0]);
                libc::close(hold[1]);
                let mut lim = libc::rlimit {
                    rlim_cur: 0,
                    rlim_max: 0,
                };
                libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim);
                lim.rlim_cur = lim.rlim_max;
                libc::setrlimit(libc::RLIMIT_NOFILE, &lim);
                if libc::setgroups(0, std::ptr::null()) != 0
                    || libc::setgid(gid) != 0
                    || libc::setuid(uid) != 0
                {
                    libc::_exit(2);
                }
                let mut opened: u32 = 0;
                for _ in 0..n {
                    let fd = libc::socket(libc::AF_UNIX, libc::SOCK_STREAM, 0);
                    if fd < 0 {
                        break;
                    }
                    let len = std::mem::size_of::<libc::sockaddr_un>() as libc::socklen_t;
                    if libc::connect(fd, (&raw const addr).cast(), len) == 0 {
                        opened += 1;
                    } else {
                        libc::close(fd);
                    }
                }
                let bytes = opened.to_ne_bytes();
                libc::write(ready[1], bytes.as_ptr().cast(), bytes.len());
                let mut b = 0u8;
                libc::read(hold[0], (&raw mut b).cast(), 1);
                libc::_exit(0);
            }
        }
        // SAFETY: closing our copies of the child's ends; reading 4 bytes.
        let opened = unsafe {
            libc::close(ready[1]);
            libc::close(hold[0]);
            let mut bytes = [0u8; 4];
            let n = libc::read(ready[0], bytes.as_mut_ptr().cast(), 4);
            libc::close(ready[0]);
            assert_eq!(n, 4, "the flooding child did not report");
            u32::from_ne_bytes(bytes) as usize
        };
        Flood {
            pid,
            release: hold[1],
            opened,
        }
    }
}

impl Drop for Flood {
    fn drop(&mut self) {
        // SAFETY: closing the hold pipe releases the child; then reap it.
        unsafe {
            libc::close(self.release);
            let mut status = 0;
            libc::waitpid(self.pid, &mut status, 0);
        }
    }
}

fn id_of(user: &str, flag: &str) -> u32 {
    let out = Command::new("id").args([flag, user]).output().expect("id");
    text(&out.stdout).trim().parse().expect("numeric id")
}

fn as_user(d: &Daemon, user: &str, prog: &str, args: &[&str]) -> std::process::Output {
    Command::new("setpriv")
        .args(["--reuid", user, "--regid", user, "--init-groups", "--"])
        .arg(common::bin(prog))
        .args(args)
        .env_clear()
        .envs(common::base_env(d.home.path(), &d.socket))
        .current_dir("/")
        .output()
        .expect("setpriv")
}

#[test]
fn a_flood_of_idle_connections_neither_blocks_others_nor_runs_a_job_twice() {
    if !common::root_or_skip(
        "a_flood_of_idle_connections_neither_blocks_others_nor_runs_a_job_twice",
    ) {
        return;
    }
    let user = common::ensure_user("archese2e");
    let (uid, gid) = (id_of(&user, "-u"), id_of(&user, "-g"));
    // 256 descriptors, soft and hard: the flood (400) is more than the
    // daemon could ever accept.
    let mut d = Daemon::unstarted(None);
    d.spawn_with(&Spawn {
        nofile: Some(256),
        ..Spawn::default()
    });
    let go = d.home.path().join("go");
    let runs = d.home.path().join("runs");
    let script = format!(
        "#!/bin/sh\nwhile [ ! -e {go} ]; do sleep 0.05; done\necho ran >> {runs}\nexit 3\n",
        go = go.display(),
        runs = runs.display()
    );
    let id = d.submit(&script, &["-l", "walltime=100"]);
    d.wait_state(id, "Running", LONG);

    let flood = Flood::start(&d.socket, uid, gid, 400);
    assert_eq!(
        flood.opened, 400,
        "every connect reached the daemon's queue"
    );
    // The flooding user's own requests are refused, clearly.
    let refused = as_user(&d, &user, "showq", &[]);
    assert!(!refused.status.success(), "{}", text(&refused.stdout));
    let why = text(&refused.stderr);
    assert!(
        why.contains(&format!("too many connections from uid {uid}"))
            && why.contains("CLIENTMAXCONNECTIONSPERUSER"),
        "{why}"
    );
    // Everybody else is served: queries, a submission, and the running
    // job's end is recorded once, with its exit status.
    let q = d.run("showq", &[]);
    assert!(q.status.success(), "{}", text(&q.stderr));
    let second = d.submit("#!/bin/sh\nexit 4\n", &[]);
    std::fs::write(&go, "").expect("go");
    let out = d.wait_state(id, "Completed", LONG);
    assert!(out.contains("Completion Code: 3"), "{out}");
    let other = d.wait_state(second, "Completed", LONG);
    assert!(other.contains("Completion Code: 4"), "{other}");
    let ran = std::fs::read_to_string(&runs).unwrap_or_default();
    assert_eq!(ran, "ran\n", "the job ran exactly once");
    assert!(
        out.lines().any(|l| l.trim_end() == "StartCount:     1"),
        "started once: {out}"
    );

    // Once the flood is gone, its user is served again.
    drop(flood);
    let deadline = Instant::now() + LONG;
    loop {
        let again = as_user(&d, &user, "showq", &[]);
        if again.status.success() {
            break;
        }
        assert!(Instant::now() < deadline, "{}", text(&again.stderr));
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn idle_half_sent_and_unread_connections_are_closed_after_clienttimeout() {
    let d = Daemon::start_with_config(Some("CLIENTTIMEOUT 00:00:01\n"));
    // Enough held jobs that checkjob ALL is far larger than what the
    // socket and the daemon's buffers hold.
    raw::submit_held(&d.socket, d.home.path(), 300);
    let idle = raw::send(&d.socket, b"");
    let half_head = raw::send(&d.socket, b"GET /v1/queue HTTP/1.1\r\nhost: x\r\n");
    let half_body = raw::send(
        &d.socket,
        b"POST /v1/jobs/detail HTTP/1.1\r\nhost: x\r\ncontent-length: 100\r\n\r\n{\"ids\":",
    );
    let mut unread = raw::send(
        &d.socket,
        &raw::request("POST", "/v1/jobs/detail", Some(r#"{"ids":["ALL"]}"#)),
    );
    // The answer has started: then the client stops reading.
    let mut first = [0u8; 12];
    std::io::Read::read_exact(&mut unread, &mut first).expect("answer started");
    assert_eq!(&first, b"HTTP/1.1 200");
    for (what, s) in [
        ("idle", &idle),
        ("half a request head", &half_head),
        ("half a request body", &half_body),
        ("an unread answer", &unread),
    ] {
        assert!(
            raw::wait_closed(s, LONG),
            "a connection with {what} was not closed"
        );
    }
    // A client that reads gets the whole answer, however large.
    let mut reader = raw::send(
        &d.socket,
        &raw::request("POST", "/v1/jobs/detail", Some(r#"{"ids":["ALL"]}"#)),
    );
    let (status, body) = read_response(&mut reader);
    assert_eq!(status, 200);
    let v: serde_json::Value = serde_json::from_str(&body).expect("whole JSON");
    assert_eq!(v["jobs"].as_array().map(Vec::len), Some(300));
    assert!(body.len() > 256 * 1024, "answer of {} bytes", body.len());
}

/// Point 4: clients that ask for a large answer and never read it do not
/// make the daemon hold that answer per connection. 150 of them each start
/// `checkjob ALL` over 1,500 jobs (about N MB each, printed); if the daemon
/// built or buffered each answer whole, its memory would grow by their sum.
/// Growth stays below a quarter of that sum, others are served meanwhile,
/// `CLIENTTIMEOUT` closes them, and the memory comes back afterwards.
#[test]
fn never_reading_clients_do_not_make_the_daemon_hold_their_answers() {
    const CLIENTS: usize = 150;
    let d = Daemon::start_with_config(Some("CLIENTTIMEOUT 00:00:05\n"));
    raw::submit_held(&d.socket, d.home.path(), 1500);
    let detail = || raw::request("POST", "/v1/jobs/detail", Some(r#"{"ids":["ALL"]}"#));
    // One whole answer read first: the size, and a warm baseline.
    let mut reader = raw::send(&d.socket, &detail());
    let (status, body) = read_response(&mut reader);
    assert_eq!(status, 200);
    drop(reader);
    let answer = body.len() as u64;
    let pid = d.pid().expect("daemon pid");
    let base = raw::rss_kb(pid);
    let mut unread = Vec::new();
    for _ in 0..CLIENTS {
        let mut s = raw::send(&d.socket, &detail());
        let mut first = [0u8; 12];
        std::io::Read::read_exact(&mut s, &mut first).expect("answer started");
        assert_eq!(&first, b"HTTP/1.1 200");
        unread.push(s);
    }
    // Everyone else is still served, in full, while they hang on.
    let mut peak = raw::rss_kb(pid);
    let out = d.run("showq", &[]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("1500 blocked jobs"),
        "{}",
        text(&out.stdout)
    );
    peak = peak.max(raw::rss_kb(pid));
    for s in &unread {
        assert!(
            raw::wait_closed(s, LONG),
            "an unread answer was never closed"
        );
        peak = peak.max(raw::rss_kb(pid));
    }
    let held_if_buffered = CLIENTS as u64 * answer / 1024;
    eprintln!(
        "answer {answer} bytes; RSS base {base} kB, peak {peak} kB; {CLIENTS} answers whole: {held_if_buffered} kB"
    );
    assert!(
        peak.saturating_sub(base) < held_if_buffered / 4,
        "the daemon grew by {} kB for {CLIENTS} unread answers of {answer} bytes",
        peak - base
    );
    drop(unread);
    // The memory comes back (the target: within 20 % of the baseline).
    common::wait_until("the daemon's memory to come back", || {
        raw::rss_kb(pid) <= base + base / 5
    });
}
