//! systemd readiness (`Type=notify`, sd_notify(3)) without libsystemd.
//!
//! The protocol is one datagram of `KEY=VALUE` lines to the Unix socket named
//! by `$NOTIFY_SOCKET` (a path, or an abstract name written `@name`). It is
//! implemented here with std's `UnixDatagram` rather than with a crate:
//! about thirty lines, no unsafe code, no C library, and it is exercised by a
//! unit test against a real datagram socket (the small `sd-notify` crate does
//! the same thing; a dependency would not save code worth a review).
//!
//! The daemon reports `READY=1` only once its API answers: a thread sends a
//! real HTTP request over the socket ([`socket_answers`]) until it gets
//! `200 OK`, so a unit ordered `After=moab.service` starts when client
//! commands work, not merely when the process exists. `STOPPING=1` is sent
//! when a shutdown begins. `$NOTIFY_SOCKET` is taken out of the environment
//! at start-up ([`take_socket`]), so job supervisors and jobs never inherit
//! it.

use std::io::{Read, Write};
use std::os::unix::net::{UnixDatagram, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// `$NOTIFY_SOCKET` as it was at start-up (None: not started by systemd
/// with `Type=notify`).
static SOCKET: OnceLock<Option<String>> = OnceLock::new();

/// Reads `$NOTIFY_SOCKET` and removes it from the environment. Call once,
/// first thing in `main`, before any thread starts.
pub fn take_socket() {
    let value = std::env::var("NOTIFY_SOCKET")
        .ok()
        .filter(|s| !s.is_empty());
    if value.is_some() {
        std::env::remove_var("NOTIFY_SOCKET");
    }
    let _ = SOCKET.set(value);
}

/// Whether systemd asked to be notified.
pub fn wanted() -> bool {
    SOCKET.get().is_some_and(Option::is_some)
}

/// Sends `state` (newline-separated `KEY=VALUE` assignments) to the socket
/// taken at start-up; `Ok(false)` when there is none.
pub fn notify(state: &str) -> std::io::Result<bool> {
    match SOCKET.get().and_then(Option::as_deref) {
        Some(path) => send(path, state).map(|()| true),
        None => Ok(false),
    }
}

/// Sends one notification datagram to `socket` (`/path` or `@abstract`).
pub fn send(socket: &str, state: &str) -> std::io::Result<()> {
    let sock = UnixDatagram::unbound()?;
    if let Some(name) = socket.strip_prefix('@') {
        use std::os::linux::net::SocketAddrExt;
        let addr = std::os::unix::net::SocketAddr::from_abstract_name(name.as_bytes())?;
        sock.send_to_addr(state.as_bytes(), &addr)?;
    } else {
        sock.send_to(state.as_bytes(), socket)?;
    }
    Ok(())
}

/// Whether the API on `socket` answers `GET route` with `200 OK` within
/// `timeout` (one real HTTP/1.1 request, as a client would make).
pub fn socket_answers(socket: &Path, route: &str, timeout: Duration) -> bool {
    let Ok(mut s) = UnixStream::connect(socket) else {
        return false;
    };
    let _ = s.set_read_timeout(Some(timeout));
    let _ = s.set_write_timeout(Some(timeout));
    let req = format!("GET {route} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
    if s.write_all(req.as_bytes()).is_err() {
        return false;
    }
    let mut head = [0u8; 16];
    let mut got = 0;
    while got < head.len() {
        match s.read(&mut head[got..]) {
            Ok(0) | Err(_) => break,
            Ok(n) => got += n,
        }
    }
    head[..got].starts_with(b"HTTP/1.1 200 ")
}

/// When systemd asked for it, starts a thread that sends `READY=1` (with a
/// `STATUS=` line and `MAINPID=`) once the API on `socket` answers; it gives
/// up after `limit` (systemd's `TimeoutStartSec` then fails the start).
pub(crate) fn spawn_ready_probe(socket: PathBuf, route: &'static str, limit: Duration) {
    if !wanted() {
        return;
    }
    let spawned = std::thread::Builder::new()
        .name("sd-notify".into())
        .spawn(move || {
            let deadline = Instant::now() + limit;
            while Instant::now() < deadline {
                if socket_answers(&socket, route, Duration::from_secs(5)) {
                    let msg = format!(
                        "READY=1\nSTATUS=Scheduling; clients served on {}\nMAINPID={}",
                        socket.display(),
                        std::process::id()
                    );
                    match notify(&msg) {
                        Ok(_) => tracing::info!("readiness reported to systemd"),
                        Err(e) => tracing::warn!("cannot notify systemd: {e}"),
                    }
                    return;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            tracing::error!(
                "the API on {} did not answer within {limit:?}: readiness not reported",
                socket.display()
            );
        });
    if let Err(e) = spawned {
        tracing::warn!("cannot start the readiness probe: {e}");
    }
}

/// Tells systemd a shutdown has begun (no-op without `$NOTIFY_SOCKET`).
pub(crate) fn stopping() {
    if let Err(e) = notify("STOPPING=1\nSTATUS=Shutting down") {
        tracing::warn!("cannot notify systemd: {e}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_notification_reaches_a_path_socket_and_an_abstract_one() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("notify");
        let rx = UnixDatagram::bind(&path).unwrap();
        send(path.to_str().unwrap(), "READY=1\nSTATUS=x").unwrap();
        let mut buf = [0u8; 64];
        let n = rx.recv(&mut buf).unwrap();
        assert_eq!(&buf[..n], b"READY=1\nSTATUS=x");

        use std::os::linux::net::SocketAddrExt;
        let name = format!("arches-notify-test-{}", std::process::id());
        let addr = std::os::unix::net::SocketAddr::from_abstract_name(name.as_bytes()).unwrap();
        let rx = UnixDatagram::bind_addr(&addr).unwrap();
        send(&format!("@{name}"), "STOPPING=1").unwrap();
        let n = rx.recv(&mut buf).unwrap();
        assert_eq!(&buf[..n], b"STOPPING=1");
    }

    #[test]
    fn a_missing_socket_is_an_error_not_a_panic() {
        assert!(send("/nonexistent/notify", "READY=1").is_err());
        assert!(!socket_answers(
            Path::new("/nonexistent/moab.sock"),
            "/",
            Duration::from_millis(100)
        ));
    }
}
