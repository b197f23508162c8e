//! Helpers of the metrics and dashboard tests: a daemon with the TCP
//! listener on a free loopback port (`METRICSPORT 0`; the address is read
//! from its log) and a minimal HTTP/1.1 GET over std's TcpStream.

#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use crate::common::Daemon;

/// A daemon with `METRICSPORT 0` (plus `extra` moab.cfg lines) and the
/// address its listener bound.
pub fn daemon_with_listener(extra: &str) -> (Daemon, SocketAddr) {
    let d = Daemon::start_with_config(Some(&format!(
        "RMCFG[local] TYPE=LOCAL\nMETRICSPORT 0\n{extra}"
    )));
    let addr = listener_addr(&d);
    (d, addr)
}

/// The address in the daemon's "listening on http://ADDR/" log line.
pub fn listener_addr(d: &Daemon) -> SocketAddr {
    listener_addr_in(&d.home.path().join("daemon.stderr"))
}

/// The address in the "listening on http://ADDR/" line of the log at `path`.
pub fn listener_addr_in(path: &std::path::Path) -> SocketAddr {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let log = std::fs::read_to_string(path).unwrap_or_default();
        if let Some(rest) = log
            .lines()
            .find_map(|l| l.split("metrics and dashboard listening on http://").nth(1))
        {
            let addr = rest.trim_end().trim_end_matches('/');
            return addr
                .parse()
                .unwrap_or_else(|e| panic!("bad address {addr}: {e}"));
        }
        assert!(Instant::now() < deadline, "no listener in the log:\n{log}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A response: status, headers (lower-case names), body.
#[derive(Debug)]
pub struct Resp {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Resp {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// GET `path` from `addr` (HTTP/1.1, Connection: close).
pub fn get(addr: SocketAddr, path: &str) -> Resp {
    try_get(addr, path).unwrap_or_else(|| panic!("GET {path} from {addr} failed"))
}

/// Like [`get`]; `None` when nothing listens (yet) on `addr`.
pub fn try_get(addr: SocketAddr, path: &str) -> Option<Resp> {
    let mut s = TcpStream::connect_timeout(&addr, Duration::from_secs(10)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(60))).ok()?;
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .ok()?;
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).ok()?;
    let text = String::from_utf8_lossy(&raw).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").expect("a header");
    let mut lines = head.lines();
    let status: u16 = lines
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .and_then(|c| c.parse().ok())
        .expect("status line");
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    let chunked = headers
        .iter()
        .any(|(n, v)| n == "transfer-encoding" && v.contains("chunked"));
    let body = if chunked {
        dechunk(body)
    } else {
        body.to_string()
    };
    Some(Resp {
        status,
        headers,
        body,
    })
}

fn dechunk(mut s: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = s.split_once("\r\n") {
        let n = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
        if n == 0 {
            break;
        }
        out.push_str(&rest[..n.min(rest.len())]);
        s = rest.get(n + 2..).unwrap_or("");
    }
    out
}

/// The value of the sample `name{labels}` (labels as written, e.g.
/// `listener="socket"`; every one must appear) in a /metrics document.
pub fn sample(doc: &str, name: &str, labels: &[&str]) -> Option<f64> {
    doc.lines()
        .filter(|l| !l.starts_with('#'))
        .filter(|l| {
            l.strip_prefix(name)
                .is_some_and(|r| r.starts_with(' ') || r.starts_with('{'))
        })
        .find(|l| labels.iter().all(|want| l.contains(want)))
        .and_then(|l| l.rsplit(' ').next())
        .and_then(|v| v.parse().ok())
}
