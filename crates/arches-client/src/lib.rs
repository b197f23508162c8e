//! Typed blocking client of the Arches daemon over its Unix socket.
//!
//! One method per route of [`arches_api::routes`]; requests and answers are
//! the serde types of `arches-api`. A non-2xx answer becomes
//! [`ClientError::Api`] carrying the daemon's [`arches_api::ApiError`]
//! message, which clients print verbatim.
//!
//! Connection failures are detected before any HTTP is attempted (a plain
//! `connect(2)` on the socket, which fails immediately when the socket file is
//! missing or nobody listens), so a client without a daemon reports within
//! milliseconds. The wording follows Moab's client messages:
//! `ERROR:    cannot connect to Moab server '<socket>' (<reason>)` (Moab 7's
//! clients print `ERROR:    cannot connect to ...`-style lines with four
//! blanks after the colon; the exact text for a missing server could not be
//! found in public material, so the socket path and the OS reason are given)
//! and, when a request exceeds `--timeout`,
//! `ERROR:  client timed out after N seconds (socket=<socket>)` (Moab prints
//! `(hostname:port=<host>:<port>)`; we have a socket path instead of a port).

use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::time::Duration;

use arches_api::{
    routes, ActionResponse, ApiError, BackfillQuery, BackfillView, ConfigView, CredentialsView,
    FairshareView, JobActionRequest, JobsRequest, JobsView, NodesView, PriorityView, QueueQuery,
    QueueView, ReservationRequest, ReservationsView, SchedulerControl, SchedulerView,
    StartEstimate, StartQuery, StatsView, SubmitRequest, SubmitResponse,
};
use serde::de::DeserializeOwned;
use serde::Serialize;

/// Decodes an answer with every string made safe to print
/// ([`arches_api::text::escape`]): names, messages and paths come from
/// users, and a job name must not drive the terminal of whoever runs
/// showq. Answers without any control character (the rule) are decoded
/// directly; the others go through a JSON value whose strings are escaped.
pub fn decode_safe<T: DeserializeOwned>(body: &[u8]) -> serde_json::Result<T> {
    if !may_hold_control(body) {
        return serde_json::from_slice(body);
    }
    let mut v: serde_json::Value = serde_json::from_slice(body)?;
    escape_strings(&mut v);
    serde_json::from_value(v)
}

/// Whether JSON text may hold a string with a character
/// [`arches_api::text::escape`] changes: an escape other than `\"`,
/// `\\` and `\/`, DEL, or a raw C1 or bidirectional control. False
/// positives only cost a slower decode.
fn may_hold_control(body: &[u8]) -> bool {
    let mut i = 0;
    while i < body.len() {
        match body[i] {
            b'\\' => {
                if !matches!(body.get(i + 1), Some(b'"' | b'\\' | b'/')) {
                    return true;
                }
                i += 2;
            }
            0x7f => return true,
            // U+0080..U+009F: C2 80..C2 9F.
            0xc2 if body.get(i + 1).is_some_and(|b| (0x80..=0x9f).contains(b)) => return true,
            // U+200E/F, U+202A..E: E2 80 xx; U+2066..9: E2 81 A6..A9.
            0xe2 if matches!(
                (body.get(i + 1), body.get(i + 2)),
                (Some(0x80), Some(0x8e | 0x8f | 0xaa..=0xae)) | (Some(0x81), Some(0xa6..=0xa9))
            ) =>
            {
                return true
            }
            _ => i += 1,
        }
    }
    false
}

fn escape_strings(v: &mut serde_json::Value) {
    use serde_json::Value;
    match v {
        Value::String(s) => {
            if let std::borrow::Cow::Owned(e) = arches_api::text::escape(s) {
                *s = e;
            }
        }
        Value::Array(a) => a.iter_mut().for_each(escape_strings),
        Value::Object(m) => {
            let old = std::mem::take(m);
            for (k, mut x) in old {
                escape_strings(&mut x);
                m.insert(arches_api::text::escape(&k).into_owned(), x);
            }
        }
        _ => {}
    }
}

/// Default request timeout (Moab's `CLIENTTIMEOUT`, 30 seconds).
pub const DEFAULT_TIMEOUT_SECS: u64 = 30;

/// Everything that can go wrong talking to the daemon.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// The socket could not be connected to.
    #[error("ERROR:    cannot connect to Moab server '{socket}' ({reason})")]
    Connect {
        /// The socket path tried.
        socket: String,
        /// The operating system's reason.
        reason: String,
    },
    /// The daemon did not answer within the timeout.
    #[error("ERROR:  client timed out after {secs} seconds (socket={socket})")]
    Timeout {
        /// The timeout in seconds.
        secs: u64,
        /// The socket path.
        socket: String,
    },
    /// The daemon answered with an error; the text is printed as is.
    #[error("{0}")]
    Api(String),
    /// Transport or decoding failure.
    #[error("ERROR:    communication error with Moab server '{socket}' ({reason})")]
    Protocol {
        /// The socket path.
        socket: String,
        /// What failed.
        reason: String,
    },
}

/// A connection to the daemon.
#[derive(Debug, Clone)]
pub struct Client {
    http: reqwest::blocking::Client,
    socket: PathBuf,
    timeout_secs: u64,
}

impl Client {
    /// Connects to the daemon's socket (`None`: resolved with
    /// [`arches_api::paths::client_socket`]) with the default timeout.
    pub fn connect(socket: Option<&Path>) -> Result<Client, ClientError> {
        Client::connect_with_timeout(socket, DEFAULT_TIMEOUT_SECS)
    }

    /// Connects with an explicit request timeout in seconds (`0` = Moab's
    /// default of 30 s).
    pub fn connect_with_timeout(
        socket: Option<&Path>,
        timeout_secs: u64,
    ) -> Result<Client, ClientError> {
        let socket = arches_api::paths::client_socket(socket);
        let timeout_secs = if timeout_secs == 0 {
            DEFAULT_TIMEOUT_SECS
        } else {
            timeout_secs
        };
        let shown = socket.display().to_string();
        // Probe first: a missing socket or a dead daemon fails here at once.
        UnixStream::connect(&socket).map_err(|e| ClientError::Connect {
            socket: shown.clone(),
            reason: io_reason(&e),
        })?;
        let http = reqwest::blocking::Client::builder()
            .unix_socket(socket.clone())
            .timeout(Duration::from_secs(timeout_secs))
            .connect_timeout(Duration::from_secs(1))
            .build()
            .map_err(|e| ClientError::Protocol {
                socket: shown,
                reason: e.to_string(),
            })?;
        Ok(Client {
            http,
            socket,
            timeout_secs,
        })
    }

    /// The socket this client talks to.
    pub fn socket(&self) -> &Path {
        &self.socket
    }

    /// `POST /v1/jobs/terminal`: where a running interactive job's
    /// terminal is (its owner only).
    pub fn terminal(
        &self,
        req: &arches_api::TerminalRequest,
    ) -> Result<arches_api::TerminalResponse, ClientError> {
        self.post(routes::TERMINAL, req)
    }

    /// `POST /v1/jobs`.
    pub fn submit(&self, req: &SubmitRequest) -> Result<SubmitResponse, ClientError> {
        self.post(routes::SUBMIT, req)
    }

    /// `GET /v1/queue`.
    pub fn queue(&self, q: &QueueQuery) -> Result<QueueView, ClientError> {
        let mut path = format!("{}?completed={}", routes::QUEUE, q.completed);
        if let Some(p) = &q.partition {
            path.push_str("&partition=");
            path.push_str(&percent_encode(p));
        }
        self.get(&path)
    }

    /// `POST /v1/jobs/detail`.
    pub fn jobs(&self, req: &JobsRequest) -> Result<JobsView, ClientError> {
        self.post(routes::JOBS_DETAIL, req)
    }

    /// `POST /v1/jobs/action`.
    pub fn job_action(&self, req: &JobActionRequest) -> Result<ActionResponse, ClientError> {
        self.post(routes::JOB_ACTION, req)
    }

    /// `GET /v1/nodes` (`name`: one node or `ALL`; `None`: every node).
    pub fn nodes(&self, name: Option<&str>) -> Result<NodesView, ClientError> {
        match name {
            Some(n) => self.get(&format!("{}?name={}", routes::NODES, encode(n))),
            None => self.get(routes::NODES),
        }
    }

    /// `GET /v1/scheduler`.
    pub fn scheduler(&self) -> Result<SchedulerView, ClientError> {
        self.get(routes::SCHEDULER)
    }

    /// `POST /v1/scheduler/control`.
    pub fn scheduler_control(&self, req: &SchedulerControl) -> Result<ActionResponse, ClientError> {
        self.post(routes::SCHEDULER_CONTROL, req)
    }

    /// `GET /v1/priority`.
    pub fn priority(&self) -> Result<PriorityView, ClientError> {
        self.get(routes::PRIORITY)
    }

    /// `POST /v1/backfill`.
    pub fn backfill(&self, q: &BackfillQuery) -> Result<BackfillView, ClientError> {
        self.post(routes::BACKFILL, q)
    }

    /// `POST /v1/starttime`.
    pub fn start_time(&self, q: &StartQuery) -> Result<StartEstimate, ClientError> {
        self.post(routes::STARTTIME, q)
    }

    /// `GET /v1/reservations`.
    pub fn reservations(&self) -> Result<ReservationsView, ClientError> {
        self.get(routes::RESERVATIONS)
    }

    /// `POST /v1/reservations/control`.
    pub fn reservation_control(
        &self,
        req: &ReservationRequest,
    ) -> Result<ActionResponse, ClientError> {
        self.post(routes::RESERVATION_CONTROL, req)
    }

    /// `GET /v1/config`.
    pub fn config(&self) -> Result<ConfigView, ClientError> {
        self.get(routes::CONFIG)
    }

    /// `GET /v1/credentials`.
    pub fn credentials(&self) -> Result<CredentialsView, ClientError> {
        self.get(routes::CREDENTIALS)
    }

    /// `GET /v1/reservations?select=EXPR`: the reservations an expression
    /// names (ids, `ALL`, regular expressions from the start of the id); a
    /// token that names none is an error.
    pub fn reservations_matching(&self, expr: &str) -> Result<ReservationsView, ClientError> {
        self.get(&format!(
            "{}?select={}",
            routes::RESERVATIONS,
            percent_encode(expr)
        ))
    }

    /// `GET /v1/stats`.
    pub fn stats(&self) -> Result<StatsView, ClientError> {
        self.get(routes::STATS)
    }

    /// `GET /v1/stats?window=...&nodes=...` (showstats -t, -n).
    pub fn stats_query(&self, q: &arches_api::StatsQuery) -> Result<StatsView, ClientError> {
        let mut path = format!("{}?nodes={}", routes::STATS, q.nodes);
        if let Some(w) = &q.window {
            path.push_str("&window=");
            path.push_str(&percent_encode(w));
        }
        self.get(&path)
    }

    /// `GET /v1/fairshare`.
    pub fn fairshare(&self) -> Result<FairshareView, ClientError> {
        self.get(routes::FAIRSHARE)
    }

    fn url(&self, path: &str) -> String {
        // The host part is ignored on a Unix socket; it only fills the Host header.
        format!("http://localhost{path}")
    }

    fn get<T: DeserializeOwned>(&self, path: &str) -> Result<T, ClientError> {
        // (Query values are percent-encoded by `percent_encode`.)
        let resp = self.http.get(self.url(path)).send();
        self.finish(resp)
    }

    fn post<B: Serialize, T: DeserializeOwned>(
        &self,
        path: &str,
        body: &B,
    ) -> Result<T, ClientError> {
        let resp = self.http.post(self.url(path)).json(body).send();
        self.finish(resp)
    }

    fn finish<T: DeserializeOwned>(
        &self,
        resp: Result<reqwest::blocking::Response, reqwest::Error>,
    ) -> Result<T, ClientError> {
        let resp = resp.map_err(|e| self.transport(e))?;
        let status = resp.status();
        let body = resp.bytes().map_err(|e| self.transport(e))?;
        if !status.is_success() {
            return Err(match serde_json::from_slice::<ApiError>(&body) {
                Ok(api) => ClientError::Api(
                    arches_api::text::escape_keep_newlines(&api.message).into_owned(),
                ),
                Err(_) => ClientError::Api(format!(
                    "ERROR:    server returned {} ({})",
                    status.as_u16(),
                    String::from_utf8_lossy(&body).trim()
                )),
            });
        }
        decode_safe(&body).map_err(|e| ClientError::Protocol {
            socket: self.socket.display().to_string(),
            reason: format!("cannot decode answer: {e}"),
        })
    }

    fn transport(&self, e: reqwest::Error) -> ClientError {
        let socket = self.socket.display().to_string();
        if e.is_timeout() {
            ClientError::Timeout {
                secs: self.timeout_secs,
                socket,
            }
        } else if e.is_connect() {
            ClientError::Connect {
                socket,
                reason: root_cause(&e),
            }
        } else {
            ClientError::Protocol {
                socket,
                reason: root_cause(&e),
            }
        }
    }
}

/// The innermost error message (reqwest wraps hyper wraps io).
fn root_cause(e: &(dyn std::error::Error + 'static)) -> String {
    let mut cur: &(dyn std::error::Error + 'static) = e;
    while let Some(next) = cur.source() {
        cur = next;
    }
    cur.to_string()
}

/// An io error's text without Rust's ` (os error N)` suffix.
fn io_reason(e: &std::io::Error) -> String {
    let s = e.to_string();
    match s.find(" (os error") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}

/// Percent-encodes a query value (node names are plain, but be safe).
fn encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Percent-encodes a query-string value (everything but unreserved bytes).
fn percent_encode(v: &str) -> String {
    let mut out = String::with_capacity(v.len());
    for b in v.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};
    use std::os::unix::net::UnixListener;
    use std::time::Instant;

    #[test]
    fn answers_are_decoded_with_control_characters_escaped() {
        let body = br#"{"now":1,"jobs":[],"unknown":["a\u001b[2Jb","ok\\n"]}"#;
        let v: JobsView = decode_safe(body).unwrap();
        assert_eq!(v.unknown, ["a\\x1b[2Jb", "ok\\n"]);
        assert!(!may_hold_control(
            br#"{"a":"plain \" \\ \/ text","b":[1,2]}"#
        ));
        assert!(may_hold_control("{\"a\":\"x\u{202e}y\"}".as_bytes()));
        assert!(may_hold_control("{\"a\":\"\u{85}\"}".as_bytes()));
        assert!(may_hold_control(b"{\"a\":\"\x7f\"}"));
        let v: ActionResponse =
            decode_safe("{\"stdout\":[\"x\u{9b}31m\"],\"stderr\":[],\"failed\":false}".as_bytes())
                .unwrap();
        assert_eq!(v.stdout, ["x\\u{009b}31m"]);
    }

    #[test]
    fn missing_socket_fails_fast_with_moab_wording() {
        let dir = tempfile::tempdir().unwrap();
        let sock = dir.path().join("none.sock");
        let t = Instant::now();
        let err = Client::connect(Some(&sock)).unwrap_err();
        assert!(t.elapsed() < Duration::from_secs(1));
        let msg = err.to_string();
        assert!(
            msg.starts_with("ERROR:    cannot connect to Moab server '"),
            "{msg}"
        );
        assert!(msg.contains("none.sock"), "{msg}");
        assert!(msg.ends_with("(No such file or directory)"), "{msg}");
    }

    /// A one-shot HTTP server on a Unix socket answering with `status` and `body`.
    fn serve_once(
        status: &'static str,
        body: &'static str,
    ) -> (tempfile::TempDir, PathBuf, std::thread::JoinHandle<String>) {
        let dir = tempfile::tempdir().unwrap();
        let sock = dir.path().join("moab.sock");
        let listener = UnixListener::bind(&sock).unwrap();
        let h = std::thread::spawn(move || {
            // The probe connection comes first and is closed at once.
            let (probe, _) = listener.accept().unwrap();
            drop(probe);
            let (mut s, _) = listener.accept().unwrap();
            let mut buf = Vec::new();
            let mut chunk = [0u8; 4096];
            loop {
                let n = s.read(&mut chunk).unwrap();
                buf.extend_from_slice(&chunk[..n]);
                let text = String::from_utf8_lossy(&buf).to_string();
                if let Some(i) = text.find("\r\n\r\n") {
                    let len = text
                        .lines()
                        .find_map(|l| {
                            l.to_ascii_lowercase()
                                .strip_prefix("content-length: ")
                                .map(|v| v.trim().parse::<usize>().unwrap())
                        })
                        .unwrap_or(0);
                    if buf.len() >= i + 4 + len || n == 0 {
                        break;
                    }
                }
                if n == 0 {
                    break;
                }
            }
            write!(
                s,
                "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            )
            .unwrap();
            String::from_utf8_lossy(&buf).to_string()
        });
        (dir, sock, h)
    }

    #[test]
    fn api_error_message_is_passed_through() {
        let (_d, sock, h) = serve_once(
            "404 Not Found",
            r#"{"message":"ERROR:  invalid job specified (17)"}"#,
        );
        let c = Client::connect(Some(&sock)).unwrap();
        let err = c
            .job_action(&JobActionRequest {
                jobs: vec!["17".into()],
                action: arches_api::JobAction::Cancel,
                select: Default::default(),
            })
            .unwrap_err();
        assert_eq!(err.to_string(), "ERROR:  invalid job specified (17)");
        let req = h.join().unwrap();
        assert!(req.starts_with("POST /v1/jobs/action HTTP/1.1"), "{req}");
        assert!(req.contains(r#""action":"cancel""#), "{req}");
    }

    #[test]
    fn success_is_decoded() {
        let (_d, sock, h) = serve_once("200 OK", r#"{"id":42}"#);
        let c = Client::connect(Some(&sock)).unwrap();
        let r = c.submit(&SubmitRequest::default()).unwrap();
        assert_eq!(r.id, 42);
        h.join().unwrap();
    }

    #[test]
    fn timeout_uses_moab_wording() {
        let dir = tempfile::tempdir().unwrap();
        let sock = dir.path().join("slow.sock");
        let listener = UnixListener::bind(&sock).unwrap();
        let h = std::thread::spawn(move || {
            let mut held = Vec::new();
            for _ in 0..2 {
                let (s, _) = listener.accept().unwrap();
                held.push(s);
            }
            std::thread::sleep(Duration::from_millis(2500));
        });
        let c = Client::connect_with_timeout(Some(&sock), 1).unwrap();
        let err = c.stats().unwrap_err();
        assert!(
            err.to_string()
                .starts_with("ERROR:  client timed out after 1 seconds (socket="),
            "{err}"
        );
        h.join().unwrap();
    }

    #[test]
    fn encode_escapes_reserved() {
        assert_eq!(encode("n01"), "n01");
        assert_eq!(encode("a b&c"), "a%20b%26c");
    }
}
