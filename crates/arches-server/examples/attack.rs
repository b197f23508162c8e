//! Load generator for BENCHMARKS.md "Under load and attack" (issue 14): run
//! against a real `moab` daemon (its socket, and its pid where memory is
//! measured). Every connection is a raw HTTP/1.1 client on the Unix socket.
//!
//! - `attack hold SOCKET N SECS`: opens N connections that send nothing and
//!   holds them SECS seconds; prints how many the daemon kept, refused
//!   (answered `503`) or closed meanwhile (`CLIENTTIMEOUT`).
//! - `attack latency SOCKET SECS [ROUTE]`: for SECS seconds, one request
//!   after the other (a new connection each, answer read whole) on ROUTE
//!   (default `/v1/queue`, showq's); prints the latency percentiles and
//!   the answers that were not `200`.
//! - `attack unread SOCKET N PID [SECS]`: N clients ask for showq, read the
//!   first bytes of the answer and then nothing; prints the daemon's
//!   resident memory each second while they hang on (SECS, default 35,
//!   past `CLIENTTIMEOUT`), then each second for 30 s after they are gone.
//! - `attack burst SOCKET N PID`: N clients ask for showq at once and read
//!   the answers whole; prints the time, the daemon's peak resident memory
//!   (sampled every 20 ms) and its memory each second for 30 s after.
//!
//! `cargo run --release -p arches-server --example attack -- hold /tmp/h/moab.sock 1000 20`

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

fn main() -> std::process::ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let arg = |i: usize| args.get(i).cloned().unwrap_or_default();
    let num = |i: usize, default: u64| args.get(i).and_then(|v| v.parse().ok()).unwrap_or(default);
    let socket = PathBuf::from(arg(1));
    match arg(0).as_str() {
        "hold" => hold(&socket, num(2, 1000) as usize, num(3, 20)),
        "latency" => {
            let route = args.get(3).cloned().unwrap_or_else(|| "/v1/queue".into());
            latency(&socket, num(2, 10), &route)
        }
        "unread" => unread(&socket, num(2, 300) as usize, num(3, 0) as u32, num(4, 35)),
        "burst" => burst(&socket, num(2, 1000) as usize, num(3, 0) as u32),
        _ => {
            eprintln!("usage: attack hold|latency|unread|burst SOCKET ... (see the source)");
            return std::process::ExitCode::from(2);
        }
    }
    std::process::ExitCode::SUCCESS
}

fn get(route: &str) -> Vec<u8> {
    format!("GET {route} HTTP/1.1\r\nhost: localhost\r\n\r\n").into_bytes()
}

/// Reads a whole response (content-length or chunked); its status.
fn read_whole(s: &mut UnixStream) -> std::io::Result<(u16, usize)> {
    let mut head = Vec::new();
    let mut b = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        if s.read(&mut b)? == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        head.push(b[0]);
    }
    let head = String::from_utf8_lossy(&head).to_lowercase();
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    if let Some(len) = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse::<usize>().ok())
    {
        let mut body = vec![0u8; len];
        s.read_exact(&mut body)?;
        return Ok((status, len));
    }
    let mut total = 0;
    let mut reader = std::io::BufReader::new(s);
    loop {
        let mut line = String::new();
        std::io::BufRead::read_line(&mut reader, &mut line)?;
        let size = usize::from_str_radix(line.trim(), 16)
            .map_err(|_| std::io::Error::other("bad chunk size"))?;
        let mut chunk = vec![0u8; size + 2];
        reader.read_exact(&mut chunk)?;
        total += size;
        if size == 0 {
            return Ok((status, total));
        }
    }
}

fn rss_mb(pid: u32) -> f64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmRSS:"))
                .and_then(|v| v.split_whitespace().next()?.parse::<f64>().ok())
        })
        .map_or(0.0, |kb| kb / 1024.0)
}

fn hold(socket: &Path, n: usize, secs: u64) {
    let t0 = Instant::now();
    let mut conns: Vec<UnixStream> = (0..n)
        .filter_map(|_| UnixStream::connect(socket).ok())
        .collect();
    println!(
        "opened {} of {n} connections in {:.2} s",
        conns.len(),
        t0.elapsed().as_secs_f64()
    );
    std::thread::sleep(Duration::from_secs(2));
    let state = |conns: &mut Vec<UnixStream>| {
        let (mut kept, mut refused, mut closed) = (0, 0, 0);
        for c in conns.iter_mut() {
            c.set_nonblocking(true).ok();
            let mut b = [0u8; 64];
            match c.read(&mut b) {
                Ok(0) => closed += 1,
                Ok(_) => refused += 1,
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => kept += 1,
                Err(_) => closed += 1,
            }
        }
        (kept, refused, closed)
    };
    let (kept, refused, closed) = state(&mut conns);
    println!("after 2 s: {kept} held by the daemon, {refused} refused (503), {closed} closed");
    std::thread::sleep(Duration::from_secs(secs.saturating_sub(2)));
    let (kept, _, closed) = state(&mut conns);
    println!("after {secs} s: {kept} still held, {closed} closed by the daemon");
}

fn latency(socket: &Path, secs: u64, route: &str) {
    let until = Instant::now() + Duration::from_secs(secs);
    let mut times = Vec::new();
    let mut failed = Vec::new();
    while Instant::now() < until {
        let t = Instant::now();
        let r = UnixStream::connect(socket).and_then(|mut s| {
            s.set_read_timeout(Some(Duration::from_secs(60)))?;
            s.write_all(&get(route))?;
            read_whole(&mut s)
        });
        match r {
            Ok((200, _)) => times.push(t.elapsed().as_secs_f64() * 1000.0),
            Ok((status, _)) => failed.push(format!("status {status}")),
            Err(e) => failed.push(e.to_string()),
        }
    }
    times.sort_by(|a, b| a.total_cmp(b));
    let pct = |p: f64| times[((times.len() as f64 - 1.0) * p) as usize];
    if times.is_empty() {
        println!("no request answered; failures: {failed:?}");
        return;
    }
    println!(
        "{} requests of {route}: median {:.1} ms, p90 {:.1} ms, p99 {:.1} ms, max {:.1} ms; {} not answered {:?}",
        times.len(),
        pct(0.5),
        pct(0.9),
        pct(0.99),
        pct(1.0),
        failed.len(),
        failed.iter().take(3).collect::<Vec<_>>()
    );
}

fn unread(socket: &Path, n: usize, pid: u32, secs: u64) {
    let base = rss_mb(pid);
    println!("daemon RSS before: {base:.0} MB");
    let mut conns = Vec::new();
    for _ in 0..n {
        let Ok(mut s) = UnixStream::connect(socket) else {
            continue;
        };
        if s.write_all(&get("/v1/queue")).is_err() {
            continue;
        }
        // The answer has started; from now on nothing is read.
        let mut first = [0u8; 12];
        if s.read_exact(&mut first).is_ok() {
            conns.push(s);
        }
    }
    println!("{} never-reading clients hold a started showq", conns.len());
    let mut peak: f64 = 0.0;
    for t in 1..=secs {
        std::thread::sleep(Duration::from_secs(1));
        let rss = rss_mb(pid);
        peak = peak.max(rss);
        if t <= 5 || t % 5 == 0 {
            println!("  {t:>3} s: RSS {rss:.0} MB");
        }
    }
    println!("peak RSS while they hang on: {peak:.0} MB");
    drop(conns);
    trail(pid, base);
}

/// The daemon's memory each second for 30 s, against `base`.
fn trail(pid: u32, base: f64) {
    for t in 1..=30 {
        std::thread::sleep(Duration::from_secs(1));
        let rss = rss_mb(pid);
        if t <= 5 || t % 5 == 0 {
            println!(
                "  after {t:>2} s: RSS {rss:.0} MB ({:+.0}% of the baseline)",
                (rss / base - 1.0) * 100.0
            );
        }
    }
}

fn burst(socket: &Path, n: usize, pid: u32) {
    let base = rss_mb(pid);
    println!("daemon RSS before: {base:.0} MB");
    let stop = Arc::new(AtomicBool::new(false));
    let peak = Arc::new(AtomicU64::new(0));
    let sampler = {
        let (stop, peak) = (Arc::clone(&stop), Arc::clone(&peak));
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                peak.fetch_max((rss_mb(pid) * 1024.0) as u64, Ordering::Relaxed);
                std::thread::sleep(Duration::from_millis(20));
            }
        })
    };
    let barrier = Arc::new(std::sync::Barrier::new(n));
    let t0 = Instant::now();
    let clients: Vec<_> = (0..n)
        .map(|_| {
            let socket = socket.to_path_buf();
            let barrier = Arc::clone(&barrier);
            std::thread::Builder::new()
                .stack_size(256 * 1024)
                .spawn(move || {
                    barrier.wait();
                    UnixStream::connect(&socket).and_then(|mut s| {
                        s.write_all(&get("/v1/queue"))?;
                        read_whole(&mut s)
                    })
                })
                .expect("thread")
        })
        .collect();
    let results: Vec<_> = clients
        .into_iter()
        .map(|c| c.join().expect("join"))
        .collect();
    let took = t0.elapsed().as_secs_f64();
    stop.store(true, Ordering::Relaxed);
    sampler.join().expect("sampler");
    let ok = results.iter().filter(|r| matches!(r, Ok((200, _)))).count();
    let bytes = results
        .iter()
        .find_map(|r| r.as_ref().ok().map(|x| x.1))
        .unwrap_or(0);
    println!(
        "{ok} of {n} showq answered ({:.1} MB each) in {took:.1} s; peak RSS {:.0} MB",
        bytes as f64 / 1e6,
        peak.load(Ordering::Relaxed) as f64 / 1024.0
    );
    trail(pid, base);
}
