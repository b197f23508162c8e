//! Raw HTTP/1.1 over the daemon's socket, for clients that misbehave on
//! purpose (send nothing, send half a request, never read the answer) and
//! for fast bulk submissions.

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::Duration;

/// A connection that sent `request` (a whole request, or a part of one) and
/// has read nothing.
pub fn send(socket: &Path, request: &[u8]) -> UnixStream {
    let mut s = UnixStream::connect(socket).expect("connect");
    s.write_all(request).expect("write request");
    s
}

/// A complete request with a JSON body (`None`: no body).
pub fn request(method: &str, route: &str, body: Option<&str>) -> Vec<u8> {
    let body = body.unwrap_or("");
    format!(
        "{method} {route} HTTP/1.1\r\nhost: localhost\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// Reads one response, with a `content-length` or chunked (status, body).
pub fn read_response(s: &mut UnixStream) -> (u16, String) {
    let head = read_line_until(s, b"\r\n\r\n");
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let header = |name: &str| {
        head.lines().find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.trim()
                .eq_ignore_ascii_case(name)
                .then(|| v.trim().to_string())
        })
    };
    let mut body = Vec::new();
    if let Some(len) = header("content-length") {
        body.resize(len.parse().expect("content-length"), 0);
        s.read_exact(&mut body).expect("read body");
    } else {
        assert_eq!(
            header("transfer-encoding").as_deref(),
            Some("chunked"),
            "{head}"
        );
        loop {
            let size = read_line_until(s, b"\r\n");
            let size = usize::from_str_radix(size.trim(), 16).expect("chunk size");
            let mut chunk = vec![0u8; size + 2];
            s.read_exact(&mut chunk).expect("read chunk");
            if size == 0 {
                break;
            }
            body.extend_from_slice(&chunk[..size]);
        }
    }
    (status, String::from_utf8_lossy(&body).into_owned())
}

fn read_line_until(s: &mut UnixStream, end: &[u8]) -> String {
    let mut buf = Vec::new();
    let mut byte = [0u8; 1];
    while !buf.ends_with(end) {
        let n = s.read(&mut byte).expect("read");
        assert!(
            n == 1,
            "connection closed: {:?}",
            String::from_utf8_lossy(&buf)
        );
        buf.push(byte[0]);
    }
    String::from_utf8_lossy(&buf).into_owned()
}

/// Submits held jobs over one connection (fast: no client process per
/// job); returns their ids.
pub fn submit_held(socket: &Path, dir: &Path, count: usize) -> Vec<u64> {
    let mut s = UnixStream::connect(socket).expect("connect");
    (0..count)
        .map(|i| {
            let req = arches_api::SubmitRequest {
                script: format!("#!/bin/sh\necho job {i}\n"),
                name: Some(format!("bulk{i}")),
                hold: true,
                submit_dir: dir.to_string_lossy().into_owned(),
                ..Default::default()
            };
            let body = serde_json::to_string(&req).expect("encode");
            s.write_all(&request("POST", "/v1/jobs", Some(&body)))
                .expect("write");
            let (status, text) = read_response(&mut s);
            assert_eq!(status, 200, "submission refused: {text}");
            let v: serde_json::Value = serde_json::from_str(&text).expect("json");
            v["id"].as_u64().expect("id")
        })
        .collect()
}

/// Waits until the daemon closes `s` (its end hung up), without reading;
/// `false` if it is still open after `limit` (a safety net, not a measure).
pub fn wait_closed(s: &UnixStream, limit: Duration) -> bool {
    use std::os::fd::AsRawFd;
    let mut pfd = libc::pollfd {
        fd: s.as_raw_fd(),
        events: libc::POLLRDHUP,
        revents: 0,
    };
    let ms = i32::try_from(limit.as_millis()).unwrap_or(i32::MAX);
    // SAFETY: one valid pollfd.
    let n = unsafe { libc::poll(&mut pfd, 1, ms) };
    n == 1 && pfd.revents & (libc::POLLRDHUP | libc::POLLHUP) != 0
}

/// Resident memory of a process in kB (`VmRSS`).
pub fn rss_kb(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("status");
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .expect("VmRSS")
}
