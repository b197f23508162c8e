//! The API socket's accept loop: who may hold a connection, and for how
//! long. Any local user can open connections as fast as the kernel allows,
//! and each costs the daemon a file descriptor, which it also needs for its
//! store, its spool, the supervisors it starts and the Slurm commands it
//! runs. So:
//!
//! - at start the daemon raises its soft `RLIMIT_NOFILE` to the hard limit
//!   ([`raise_nofile`]);
//! - connections are capped in total (`CLIENTMAXCONNECTIONS`, and never
//!   more than three quarters of the open-file limit: the rest is the
//!   scheduler's own) and per user (`CLIENTMAXCONNECTIONSPERUSER`). Root and
//!   the daemon's own user are not capped per user and have a small reserve
//!   above the total, so an administrator is served during a flood. A
//!   connection over a cap is answered at once (`503` and a message naming
//!   the limit) and closed;
//! - a connection that sends nothing, sends a request only in part, or does
//!   not read its answer for `CLIENTTIMEOUT` is closed ([`Activity`]); the
//!   time a request spends being processed (waiting for a commit, building
//!   a view) never counts against it;
//! - an accept that fails (out of descriptors after all) never stops the
//!   loop: it waits for a connection to close, or a moment.
//!
//! Answers are bounded in memory by [`crate::stream`] and by hyper's write
//! buffer ([`MAX_BUF`]), so a client that does not read holds at most a few
//! tens of kilobytes of the daemon's memory until it is closed.

use std::collections::{HashMap, VecDeque};
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use axum::extract::connect_info::ConnectInfo;
use axum::Router;
use hyper::body::Incoming;
use hyper::Request;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::UnixStream;
use tokio::sync::{watch, Notify};

use crate::http::PeerInfo;
use crate::ident::Peer;

/// Connections root and the daemon's user may open above the total cap.
pub const ADMIN_RESERVE: usize = 16;

/// hyper's buffer per connection (headers read, answer bytes queued): an
/// answer is written through it in [`crate::stream::CHUNK`] pieces.
pub const MAX_BUF: usize = 64 * 1024;

/// Refused connections kept at once (until their client sent its request
/// and got the answer); a newer refusal closes the oldest one.
const REFUSALS_AT_ONCE: usize = 64;

/// How long a refused connection is kept to let its client send its request
/// and read the refusal.
const REFUSAL_LINGER: Duration = Duration::from_secs(1);

/// How long the daemon waits for open connections to finish at shutdown.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(3);

/// The limits of the API socket.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Connections served at once (root and the daemon's user: up to
    /// [`ADMIN_RESERVE`] more).
    pub total: usize,
    /// Connections one user may hold.
    pub per_user: usize,
    /// `CLIENTTIMEOUT`: no progress for this long closes a connection.
    pub timeout: Duration,
}

impl Limits {
    /// The limits of `moab.cfg`, kept within the open-file limit `nofile`
    /// (a quarter of it, at least 32 and at most 4,096 descriptors, stays
    /// for the scheduler's own use).
    pub fn new(moab: &arches_config::Config, nofile: u64) -> Limits {
        let reserve = (nofile / 4).clamp(32, 4096);
        let budget = usize::try_from(nofile.saturating_sub(reserve)).unwrap_or(usize::MAX);
        let total = (moab.client_max_connections as usize)
            .min(budget.saturating_sub(ADMIN_RESERVE))
            .max(1);
        Limits {
            total,
            per_user: (moab.client_max_connections_per_user as usize).clamp(1, total),
            timeout: Duration::from_secs(moab.client_timeout.max(1) as u64),
        }
    }
}

/// The soft and hard `RLIMIT_NOFILE` of this process.
pub fn nofile() -> (u64, u64) {
    let mut r = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit fills a valid struct.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut r) } != 0 {
        return (1024, 1024);
    }
    (r.rlim_cur, r.rlim_max)
}

/// Raises the soft open-file limit to the hard one (a daemon serving many
/// clients must not run out of descriptors at the default of 1,024).
/// Returns the limit in force afterwards.
pub fn raise_nofile() -> u64 {
    let (soft, hard) = nofile();
    if soft >= hard {
        return soft;
    }
    let r = libc::rlimit {
        rlim_cur: hard,
        rlim_max: hard,
    };
    // SAFETY: setrlimit with a valid struct; raising the soft limit up to
    // the hard one needs no privilege.
    if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &r) } == 0 {
        tracing::info!(from = soft, to = hard, "open-file limit raised");
        hard
    } else {
        let e = io::Error::last_os_error();
        tracing::warn!(soft, hard, "cannot raise the open-file limit: {e}");
        soft
    }
}

/// Milliseconds since the first call (a monotonic clock for [`Activity`]).
fn clock_ms() -> u64 {
    static START: OnceLock<Instant> = OnceLock::new();
    let start = *START.get_or_init(Instant::now);
    u64::try_from(start.elapsed().as_millis()).unwrap_or(u64::MAX)
}

/// When a connection last made progress, and whether a request of it is
/// being processed (which never counts as a stall).
#[derive(Debug, Default)]
pub(crate) struct Activity {
    last_ms: AtomicU64,
    busy: AtomicUsize,
    /// The request being processed waits for more of its body.
    awaiting_body: AtomicBool,
}

impl Activity {
    fn new() -> Activity {
        Activity {
            last_ms: AtomicU64::new(clock_ms()),
            busy: AtomicUsize::new(0),
            awaiting_body: AtomicBool::new(false),
        }
    }

    fn progress(&self) {
        self.last_ms.store(clock_ms(), Ordering::Relaxed);
    }

    /// How long until the connection has stalled for `timeout` (zero: it
    /// has). A request being processed is not a stall, unless it is
    /// waiting for the client to send the rest of its body.
    fn remaining(&self, timeout: Duration) -> Duration {
        if self.busy.load(Ordering::Relaxed) > 0 && !self.awaiting_body.load(Ordering::Relaxed) {
            return timeout;
        }
        let idle = clock_ms().saturating_sub(self.last_ms.load(Ordering::Relaxed));
        timeout.saturating_sub(Duration::from_millis(idle))
    }
}

/// A request being processed: the connection is not stalled meanwhile.
struct Busy(Arc<Activity>);

impl Busy {
    fn new(a: &Arc<Activity>) -> Busy {
        a.busy.fetch_add(1, Ordering::Relaxed);
        Busy(Arc::clone(a))
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        self.0.progress();
        self.0.awaiting_body.store(false, Ordering::Relaxed);
        self.0.busy.fetch_sub(1, Ordering::Relaxed);
    }
}

/// A request body, noting when its handler waits for the client to send
/// more of it (that wait counts as a stall).
struct WatchedBody {
    inner: Incoming,
    activity: Arc<Activity>,
}

impl hyper::body::Body for WatchedBody {
    type Data = axum::body::Bytes;
    type Error = hyper::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<hyper::body::Frame<Self::Data>, Self::Error>>> {
        let r = Pin::new(&mut self.inner).poll_frame(cx);
        self.activity
            .awaiting_body
            .store(r.is_pending(), Ordering::Relaxed);
        r
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> hyper::body::SizeHint {
        self.inner.size_hint()
    }
}

/// The socket, noting every byte that moves in either direction.
struct Watched {
    inner: UnixStream,
    activity: Arc<Activity>,
}

impl AsyncRead for Watched {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let r = Pin::new(&mut self.inner).poll_read(cx, buf);
        if buf.filled().len() > before {
            self.activity.progress();
        }
        r
    }
}

impl AsyncWrite for Watched {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<io::Result<usize>> {
        let r = Pin::new(&mut self.inner).poll_write(cx, data);
        if matches!(r, Poll::Ready(Ok(n)) if n > 0) {
            self.activity.progress();
        }
        r
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let r = Pin::new(&mut self.inner).poll_write_vectored(cx, bufs);
        if matches!(r, Poll::Ready(Ok(n)) if n > 0) {
            self.activity.progress();
        }
        r
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

/// Open connections, in total and by uid.
struct Admission {
    limits: Limits,
    daemon_uid: u32,
    by_uid: Mutex<HashMap<u32, usize>>,
    total: AtomicUsize,
    /// Signalled whenever a connection closes.
    closed: Notify,
}

/// Why a connection is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Refusal {
    Busy { open: usize },
    PerUser { uid: u32, open: usize },
}

impl Refusal {
    fn message(&self, limits: &Limits) -> String {
        match self {
            Refusal::Busy { open } => format!(
                "ERROR:    server busy: {open} client connections open (the limit is {}, CLIENTMAXCONNECTIONS or the open-file limit); try again later",
                limits.total
            ),
            Refusal::PerUser { uid, open } => format!(
                "ERROR:    too many connections from uid {uid}: {open} open (the limit is {}, CLIENTMAXCONNECTIONSPERUSER); close some and try again",
                limits.per_user
            ),
        }
    }
}

/// An admitted connection; dropping it frees its place.
struct Ticket {
    admission: Arc<Admission>,
    uid: u32,
}

impl Drop for Ticket {
    fn drop(&mut self) {
        {
            let mut by_uid = self
                .admission
                .by_uid
                .lock()
                .unwrap_or_else(|p| p.into_inner());
            if let Some(n) = by_uid.get_mut(&self.uid) {
                *n -= 1;
                if *n == 0 {
                    by_uid.remove(&self.uid);
                }
            }
        }
        self.admission.total.fetch_sub(1, Ordering::AcqRel);
        self.admission.closed.notify_waiters();
    }
}

impl Admission {
    /// Admits a connection of `uid` (`None`: unknown credentials, counted
    /// as one unprivileged user) or says why not.
    fn admit(self: &Arc<Self>, uid: Option<u32>) -> Result<Ticket, Refusal> {
        let privileged = uid.is_some_and(|u| u == 0 || u == self.daemon_uid);
        let uid = uid.unwrap_or(u32::MAX);
        let mut by_uid = self.by_uid.lock().unwrap_or_else(|p| p.into_inner());
        let open = self.total.load(Ordering::Acquire);
        let cap = if privileged {
            self.limits.total + ADMIN_RESERVE
        } else {
            self.limits.total
        };
        if open >= cap {
            return Err(Refusal::Busy { open });
        }
        let mine = by_uid.entry(uid).or_insert(0);
        if !privileged && *mine >= self.limits.per_user {
            return Err(Refusal::PerUser { uid, open: *mine });
        }
        *mine += 1;
        self.total.fetch_add(1, Ordering::AcqRel);
        Ok(Ticket {
            admission: Arc::clone(self),
            uid,
        })
    }
}

/// Serves `router` on `listener` with `limits` until `stop` completes; then
/// lets open connections finish (for a few seconds at most).
pub(crate) async fn serve(
    listener: tokio::net::UnixListener,
    router: Router,
    limits: Limits,
    daemon_uid: u32,
    stop: impl Future<Output = ()>,
) {
    tracing::info!(
        connections = limits.total,
        per_user = limits.per_user,
        timeout_secs = limits.timeout.as_secs(),
        "client connection limits"
    );
    let admission = Arc::new(Admission {
        limits,
        daemon_uid,
        by_uid: Mutex::new(HashMap::new()),
        total: AtomicUsize::new(0),
        closed: Notify::new(),
    });
    let refusals: Mutex<VecDeque<tokio::task::AbortHandle>> = Mutex::new(VecDeque::new());
    let (stop_tx, stop_rx) = watch::channel(false);
    let mut last_accept_warning: Option<Instant> = None;
    tokio::pin!(stop);
    loop {
        let accepted = tokio::select! {
            () = &mut stop => break,
            r = listener.accept() => r,
        };
        let stream = match accepted {
            Ok((stream, _)) => stream,
            Err(e) => {
                // Out of descriptors (or memory): wait for a connection to
                // close, or a moment; never give up serving.
                if last_accept_warning.is_none_or(|t| t.elapsed() >= Duration::from_secs(10)) {
                    tracing::warn!(
                        open = admission.total.load(Ordering::Relaxed),
                        "cannot accept a client connection: {e}"
                    );
                    last_accept_warning = Some(Instant::now());
                }
                let closed = admission.closed.notified();
                tokio::select! {
                    () = closed => {}
                    () = tokio::time::sleep(Duration::from_millis(100)) => {}
                }
                continue;
            }
        };
        let peer = PeerInfo(stream.peer_cred().ok().map(|c| Peer {
            uid: c.uid(),
            gid: c.gid(),
        }));
        match admission.admit(peer.0.map(|p| p.uid)) {
            Ok(ticket) => {
                let router = router.clone();
                let stop = stop_rx.clone();
                tokio::spawn(async move {
                    connection(stream, peer, router, limits.timeout, stop).await;
                    drop(ticket);
                });
            }
            Err(refusal) => {
                tracing::debug!(?refusal, "client connection refused");
                let answer = refusal_answer(&refusal.message(&limits));
                let task = tokio::spawn(refuse(stream, answer)).abort_handle();
                let mut refused = refusals.lock().unwrap_or_else(|p| p.into_inner());
                refused.retain(|t| !t.is_finished());
                refused.push_back(task);
                // The newest refusals are the ones worth answering: a flood
                // of connections that send nothing only shortens its own.
                while refused.len() > REFUSALS_AT_ONCE {
                    if let Some(oldest) = refused.pop_front() {
                        oldest.abort();
                    }
                }
            }
        }
    }
    drop(listener);
    let _ = stop_tx.send(true);
    let deadline = tokio::time::Instant::now() + SHUTDOWN_GRACE;
    while admission.total.load(Ordering::Acquire) > 0 {
        let closed = admission.closed.notified();
        if tokio::time::timeout_at(deadline, closed).await.is_err() {
            break;
        }
    }
}

/// Serves one admitted connection until it closes, stalls for `timeout`,
/// or the daemon stops (then the request in progress is finished first).
async fn connection(
    stream: UnixStream,
    peer: PeerInfo,
    router: Router,
    timeout: Duration,
    mut stop: watch::Receiver<bool>,
) {
    use tower::ServiceExt;
    let activity = Arc::new(Activity::new());
    let io = TokioIo::new(Watched {
        inner: stream,
        activity: Arc::clone(&activity),
    });
    let watched = Arc::clone(&activity);
    let service = hyper::service::service_fn(move |req: Request<Incoming>| {
        let activity = Arc::clone(&watched);
        let mut req = req.map(|inner| axum::body::Body::new(WatchedBody { inner, activity }));
        req.extensions_mut().insert(ConnectInfo(peer));
        let busy = Busy::new(&watched);
        let answer = router.clone().oneshot(req);
        async move {
            let r = answer.await;
            drop(busy);
            r
        }
    });
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(timeout)
        .max_buf_size(MAX_BUF);
    let conn = builder.serve_connection(io, service);
    tokio::pin!(conn);
    let mut stopping = *stop.borrow();
    if stopping {
        conn.as_mut().graceful_shutdown();
    }
    loop {
        let wait = activity.remaining(timeout);
        tokio::select! {
            r = conn.as_mut() => {
                if let Err(e) = r {
                    tracing::debug!("client connection ended: {e}");
                }
                return;
            }
            () = tokio::time::sleep(wait) => {
                if activity.remaining(timeout).is_zero() {
                    tracing::debug!(
                        timeout_secs = timeout.as_secs(),
                        "client connection closed: no progress within CLIENTTIMEOUT"
                    );
                    return;
                }
            }
            changed = stop.changed(), if !stopping => {
                stopping = true;
                if changed.is_ok() {
                    conn.as_mut().graceful_shutdown();
                }
            }
        }
    }
}

/// The whole answer to a refused connection: `503` and `message`.
fn refusal_answer(message: &str) -> Vec<u8> {
    let body = serde_json::to_string(&arches_api::ApiError {
        message: message.to_string(),
    })
    .unwrap_or_default();
    format!(
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// Answers a refused connection once its client has sent its request (an
/// answer that comes first is an error to an HTTP client), then closes it
/// once that client had a moment to read it: all within a few
/// [`REFUSAL_LINGER`]s at most.
async fn refuse(mut stream: UnixStream, answer: Vec<u8>) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut sink = [0u8; 4096];
    match tokio::time::timeout(REFUSAL_LINGER, stream.read(&mut sink)).await {
        // Closed without a request (a client probing the socket).
        Ok(Ok(0)) | Ok(Err(_)) => return,
        // Sent something, or nothing in time: answer either way.
        Ok(Ok(_)) | Err(_) => {}
    }
    let write = async {
        stream.write_all(&answer).await?;
        stream.shutdown().await
    };
    if !matches!(
        tokio::time::timeout(REFUSAL_LINGER, write).await,
        Ok(Ok(()))
    ) {
        return;
    }
    // Closing with the request unread could make the client's last write
    // fail before it reads the answer: read until it closes.
    let drain = async {
        while let Ok(n) = stream.read(&mut sink).await {
            if n == 0 {
                break;
            }
        }
    };
    let _ = tokio::time::timeout(REFUSAL_LINGER, drain).await;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn admission(total: usize, per_user: usize) -> Arc<Admission> {
        Arc::new(Admission {
            limits: Limits {
                total,
                per_user,
                timeout: Duration::from_secs(30),
            },
            daemon_uid: 500,
            by_uid: Mutex::new(HashMap::new()),
            total: AtomicUsize::new(0),
            closed: Notify::new(),
        })
    }

    #[test]
    fn a_user_over_the_cap_is_refused_others_are_not() {
        let a = admission(10, 3);
        let mine: Vec<Ticket> = (0..3).map(|_| a.admit(Some(1000)).unwrap()).collect();
        assert!(matches!(
            a.admit(Some(1000)),
            Err(Refusal::PerUser { uid: 1000, open: 3 })
        ));
        let other = a.admit(Some(1001)).expect("another user is served");
        drop(mine);
        assert_eq!(a.total.load(Ordering::Relaxed), 1);
        assert!(a.admit(Some(1000)).is_ok(), "places come back when closed");
        drop(other);
    }

    #[test]
    fn the_total_cap_leaves_a_reserve_for_root_and_the_daemon_user() {
        let a = admission(4, 4);
        let held: Vec<Ticket> = (0..4).map(|u| a.admit(Some(1000 + u)).unwrap()).collect();
        assert!(matches!(
            a.admit(Some(2000)),
            Err(Refusal::Busy { open: 4 })
        ));
        assert!(matches!(a.admit(None), Err(Refusal::Busy { .. })));
        let root: Vec<Ticket> = (0..ADMIN_RESERVE)
            .map(|_| a.admit(Some(0)).expect("root within the reserve"))
            .collect();
        assert!(a.admit(Some(500)).is_err(), "the reserve is bounded too");
        drop(root);
        assert!(a.admit(Some(500)).is_ok(), "the daemon's user");
        drop(held);
    }

    #[test]
    fn limits_stay_within_the_open_file_limit() {
        let cfg = arches_config::Config::default();
        let l = Limits::new(&cfg, 256);
        assert_eq!(l.total, 256 - 64 - ADMIN_RESERVE);
        assert_eq!(l.per_user, 128);
        assert_eq!(l.timeout, Duration::from_secs(30));
        let l = Limits::new(&cfg, 1 << 20);
        assert_eq!((l.total, l.per_user), (1024, 128));
        let tiny = Limits::new(&cfg, 16);
        assert!(tiny.total >= 1 && tiny.per_user <= tiny.total);
    }

    #[test]
    fn stalls_count_only_while_no_request_is_processed() {
        let a = Arc::new(Activity::new());
        a.last_ms.store(0, Ordering::Relaxed);
        std::thread::sleep(Duration::from_millis(5));
        assert!(a.remaining(Duration::from_millis(1)).is_zero());
        let busy = Busy::new(&a);
        assert_eq!(
            a.remaining(Duration::from_millis(1)),
            Duration::from_millis(1)
        );
        drop(busy);
        assert!(!a.remaining(Duration::from_secs(10)).is_zero());
    }
}
