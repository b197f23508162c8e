//! The storage resource manager of Moab §17.12.6: `RMCFG[x] TYPE=NATIVE
//! RESOURCETYPE=STORAGE` driven through three `exec://` interfaces.
//!
//! - `CLUSTERQUERYURL` — no arguments; prints one WIKI resource line with the
//!   configured and available disk (`CDISK=`/`ADISK=`, MB) and optionally a
//!   default transfer rate (`RATE=` KB/s, also `BANDWIDTH=`/`DATARATE=`) and
//!   the operation limit (`CRES=dsop:N`).
//! - `SYSTEMQUERYURL filesize <user> <url>` prints `<FILESIZE>` (bytes, or
//!   nothing when unknown); `SYSTEMQUERYURL stagetime <user> <src> <dest>
//!   <rate>` prints `<STAGETIME>[,<FILESIZE>]` (`-1` when unknown).
//! - `SYSTEMMODIFYURL stage <user> <src> <dest>` / `remove <user> <url>`;
//!   the output is that of the system query.
//!
//! Every call runs on a worker thread (never on the scheduling iteration),
//! with a timeout that kills the script's whole process group, as the job's
//! user when the daemon runs as root. [`StorageRm::submit`] queues a call and
//! returns at once; [`StorageRm::poll`] collects the finished ones.

use std::collections::VecDeque;
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

#[cfg(test)]
mod tests;

/// One call of a storage interface.
#[derive(Debug, Clone, PartialEq)]
pub enum StorageCall {
    /// `CLUSTERQUERYURL`.
    Cluster,
    /// `SYSTEMQUERYURL filesize <user> <url>`.
    FileSize { user: Caller, url: String },
    /// `SYSTEMQUERYURL stagetime <user> <src> <dest> <rate>`.
    StageTime {
        user: Caller,
        src: String,
        dest: String,
        rate_kbps: f64,
    },
    /// `SYSTEMMODIFYURL stage <user> <src> <dest>`.
    Stage {
        user: Caller,
        src: String,
        dest: String,
    },
    /// `SYSTEMMODIFYURL remove <user> <url>`.
    Remove { user: Caller, url: String },
}

/// The user a script runs as (the job's owner).
pub use crate::program::Caller;

impl StorageCall {
    /// Which interface (`RMCFG` attribute) serves the call.
    pub fn interface(&self) -> &'static str {
        match self {
            StorageCall::Cluster => "CLUSTERQUERYURL",
            StorageCall::FileSize { .. } | StorageCall::StageTime { .. } => "SYSTEMQUERYURL",
            StorageCall::Stage { .. } | StorageCall::Remove { .. } => "SYSTEMMODIFYURL",
        }
    }

    /// The script's arguments, exactly as Moab passes them.
    pub fn args(&self) -> Vec<String> {
        match self {
            StorageCall::Cluster => Vec::new(),
            StorageCall::FileSize { user, url } => {
                vec!["filesize".into(), user.name.clone(), url.clone()]
            }
            StorageCall::StageTime {
                user,
                src,
                dest,
                rate_kbps,
            } => vec![
                "stagetime".into(),
                user.name.clone(),
                src.clone(),
                dest.clone(),
                format!("{rate_kbps:.1}"),
            ],
            StorageCall::Stage { user, src, dest } => {
                vec!["stage".into(), user.name.clone(), src.clone(), dest.clone()]
            }
            StorageCall::Remove { user, url } => {
                vec!["remove".into(), user.name.clone(), url.clone()]
            }
        }
    }

    fn caller(&self) -> Option<&Caller> {
        match self {
            StorageCall::Cluster => None,
            StorageCall::FileSize { user, .. }
            | StorageCall::StageTime { user, .. }
            | StorageCall::Stage { user, .. }
            | StorageCall::Remove { user, .. } => Some(user),
        }
    }
}

/// What a call's output said.
#[derive(Debug, Clone, PartialEq)]
pub enum StorageReply {
    Cluster(ClusterInfo),
    /// `filesize`: bytes, `None` when the script reported nothing (unknown or
    /// not there yet).
    FileSize(Option<u64>),
    /// `stagetime`, `stage`, `remove`: `<STAGETIME>[,<FILESIZE>]`.
    StageTime {
        secs: Option<i64>,
        size: Option<u64>,
    },
}

/// The cluster query's WIKI resource line.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ClusterInfo {
    /// The resource's name (first word).
    pub name: String,
    /// Configured disk, MB (`CDISK=`).
    pub disk_mb: Option<u64>,
    /// Available disk, MB (`ADISK=`).
    pub disk_avail_mb: Option<u64>,
    /// Default transfer rate, KB/s.
    pub rate_kbps: Option<f64>,
    /// `CRES=dsop:N`.
    pub dsop: Option<u32>,
    /// `STATE=`.
    pub state: Option<String>,
}

/// A finished call: the caller's token, the call, and its outcome.
#[derive(Debug, Clone, PartialEq)]
pub struct StorageResult {
    pub token: u64,
    pub call: StorageCall,
    pub outcome: Result<StorageReply, String>,
}

/// The storage RM's configuration, as the driver resolved it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct StorageConfig {
    pub name: String,
    pub system_query: Option<String>,
    pub cluster_query: Option<String>,
    pub system_modify: Option<String>,
    /// `$TOOLSDIR`.
    pub tools_dir: String,
    /// `$HOME` (Moab's home directory).
    pub home: String,
    pub timeout: Duration,
    /// Worker threads (simultaneous script runs).
    pub workers: usize,
    /// Extra environment of every script (`MOABHOMEDIR`, `TOOLSDIR`).
    pub env: Vec<(String, String)>,
}

/// A queued call: token, call, script path.
type Queued = (u64, StorageCall, String);

struct Shared {
    /// The queue and whether the RM is shutting down.
    queue: Mutex<(VecDeque<Queued>, bool)>,
    ready: Condvar,
}

/// The storage RM: a queue of calls, a few worker threads, a result channel.
pub struct StorageRm {
    config: StorageConfig,
    shared: Arc<Shared>,
    results: Receiver<StorageResult>,
    workers: Vec<std::thread::JoinHandle<()>>,
    in_flight: usize,
    local_errors: Vec<StorageResult>,
}

impl StorageRm {
    pub fn new(config: StorageConfig) -> Self {
        let shared = Arc::new(Shared {
            queue: Mutex::new((VecDeque::new(), false)),
            ready: Condvar::new(),
        });
        let (tx, results) = mpsc::channel();
        let workers = (0..config.workers.max(1))
            .map(|i| {
                let shared = Arc::clone(&shared);
                let tx: Sender<StorageResult> = tx.clone();
                let (timeout, env) = (config.timeout, config.env.clone());
                std::thread::Builder::new()
                    .name(format!("storage-{i}"))
                    .spawn(move || worker(&shared, &tx, timeout, &env))
                    .expect("spawning a storage worker thread")
            })
            .collect();
        StorageRm {
            config,
            shared,
            results,
            workers,
            in_flight: 0,
            local_errors: Vec::new(),
        }
    }

    pub fn config(&self) -> &StorageConfig {
        &self.config
    }

    /// The script of an interface with `$TOOLSDIR` and `$HOME` expanded
    /// (`exec://` stripped), or why there is none.
    pub fn script(&self, interface: &str) -> Result<String, String> {
        let url = match interface {
            "SYSTEMQUERYURL" => &self.config.system_query,
            "CLUSTERQUERYURL" => &self.config.cluster_query,
            _ => &self.config.system_modify,
        };
        let url = url.as_deref().ok_or_else(|| {
            format!(
                "storage resource manager '{}' has no {interface}",
                self.config.name
            )
        })?;
        expand_exec_url(url, &self.config.tools_dir, &self.config.home)
    }

    /// Queues a call; the result comes from [`StorageRm::poll`] with `token`.
    /// A call whose interface is not configured fails at once (also through
    /// `poll`).
    pub fn submit(&mut self, token: u64, call: StorageCall) {
        self.in_flight += 1;
        match self.script(call.interface()) {
            Ok(script) => {
                let mut q = self.shared.queue.lock().unwrap_or_else(|e| e.into_inner());
                q.0.push_back((token, call, script));
                self.shared.ready.notify_one();
            }
            // Delivered by the next poll, like a script failure.
            Err(e) => self.local_errors.push(StorageResult {
                token,
                call,
                outcome: Err(e),
            }),
        }
    }

    /// Calls queued or running.
    pub fn in_flight(&self) -> usize {
        self.in_flight
    }

    /// The calls that finished since the last poll (never blocks).
    pub fn poll(&mut self) -> Vec<StorageResult> {
        let mut out: Vec<StorageResult> = std::mem::take(&mut self.local_errors);
        out.extend(self.results.try_iter());
        self.in_flight = self.in_flight.saturating_sub(out.len());
        out
    }

    /// Waits up to `timeout` for at least one result (tests and the simulator).
    pub fn wait(&mut self, timeout: Duration) -> Vec<StorageResult> {
        let mut out = self.poll();
        if out.is_empty() {
            if let Ok(r) = self.results.recv_timeout(timeout) {
                self.in_flight = self.in_flight.saturating_sub(1);
                out.push(r);
                out.extend(self.poll());
            }
        }
        out
    }
}

impl Drop for StorageRm {
    fn drop(&mut self) {
        {
            let mut q = self.shared.queue.lock().unwrap_or_else(|e| e.into_inner());
            q.1 = true;
            q.0.clear();
        }
        self.shared.ready.notify_all();
        // Workers finish their current script (bounded by the timeout); do
        // not wait for them.
        self.workers.clear();
    }
}

fn worker(
    shared: &Shared,
    tx: &Sender<StorageResult>,
    timeout: Duration,
    env: &[(String, String)],
) {
    loop {
        let (token, call, script) = {
            let mut q = shared.queue.lock().unwrap_or_else(|e| e.into_inner());
            loop {
                if q.1 {
                    return;
                }
                if let Some(item) = q.0.pop_front() {
                    break item;
                }
                q = shared.ready.wait(q).unwrap_or_else(|e| e.into_inner());
            }
        };
        let outcome = run_script(&script, &call.args(), call.caller(), timeout, env)
            .and_then(|out| parse_reply(&call, &out));
        if tx
            .send(StorageResult {
                token,
                call,
                outcome,
            })
            .is_err()
        {
            return;
        }
    }
}

/// `exec://$TOOLSDIR/x` → `<tools>/x`; `$HOME` → Moab's home. Only
/// `exec://` URLs are supported.
pub fn expand_exec_url(url: &str, tools_dir: &str, home: &str) -> Result<String, String> {
    let path = url.strip_prefix("exec://").ok_or_else(|| {
        format!("unsupported storage interface URL '{url}' (only exec:// is supported)")
    })?;
    let path = path
        .replace("$TOOLSDIR", tools_dir.trim_end_matches('/'))
        .replace("$HOME", home.trim_end_matches('/'));
    // `exec:///$HOME/x` has a leading '/' before the expanded absolute path.
    let path = if path.starts_with("//") {
        path.trim_start_matches('/').to_string()
    } else {
        path
    };
    let path = if path.starts_with('/') {
        path
    } else {
        format!("/{path}")
    };
    Ok(path)
}

/// Runs `script args...` with a timeout; its stdout, or why it failed.
pub fn run_script(
    script: &str,
    args: &[String],
    caller: Option<&Caller>,
    timeout: Duration,
    env: &[(String, String)],
) -> Result<String, String> {
    let out = crate::program::run(&crate::program::Invocation {
        program: script,
        args,
        stdin: None,
        caller,
        timeout,
        env,
        output_limit: crate::program::DEFAULT_OUTPUT_LIMIT,
    })
    .map_err(|e| e.to_string())?;
    if !out.success() {
        let why = crate::program::last_line(&out.stderr);
        let code = out.status_text();
        return Err(if why.is_empty() {
            format!("'{script}' exited with {code}")
        } else {
            format!("'{script}' exited with {code}: {why}")
        });
    }
    Ok(out.stdout)
}

/// Parses a script's output for its call.
pub fn parse_reply(call: &StorageCall, out: &str) -> Result<StorageReply, String> {
    let line = out
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("");
    match call {
        StorageCall::Cluster => parse_cluster(line).map(StorageReply::Cluster),
        StorageCall::FileSize { .. } => {
            if line.is_empty() {
                return Ok(StorageReply::FileSize(None));
            }
            // `-1` also means unknown.
            match line.parse::<i64>() {
                Ok(n) if n < 0 => Ok(StorageReply::FileSize(None)),
                Ok(n) => Ok(StorageReply::FileSize(Some(n as u64))),
                Err(_) => Err(format!(
                    "invalid filesize output '{}' (expected <FILESIZE> in bytes)",
                    clip(line)
                )),
            }
        }
        _ => {
            if line.is_empty() {
                return Ok(StorageReply::StageTime {
                    secs: None,
                    size: None,
                });
            }
            parse_stagetime(line).ok_or_else(|| {
                format!(
                    "invalid stagetime output '{}' (expected <STAGETIME>[,<FILESIZE>])",
                    clip(line)
                )
            })
        }
    }
}

fn clip(s: &str) -> String {
    s.chars().take(80).collect()
}

fn parse_stagetime(line: &str) -> Option<StorageReply> {
    let (t, size) = match line.split_once(',') {
        Some((t, s)) => (t.trim(), Some(s.trim())),
        None => (line, None),
    };
    let t: f64 = t.parse().ok()?;
    let secs = (t >= 0.0).then(|| t.ceil() as i64);
    let size = match size {
        None | Some("") => None,
        Some(s) => {
            let n: i64 = s.parse().ok()?;
            (n >= 0).then_some(n as u64)
        }
    };
    Some(StorageReply::StageTime { secs, size })
}

/// `name ATTR=VALUE ...` (WIKI): `CDISK`, `ADISK` (MB), `RATE`/`BANDWIDTH`/
/// `DATARATE` (KB/s), `CRES=dsop:N`, `STATE`.
pub fn parse_cluster(line: &str) -> Result<ClusterInfo, String> {
    let mut words = line.split_whitespace();
    let name = words.next().filter(|w| !w.contains('=')).ok_or_else(|| {
        format!(
            "invalid cluster query output '{}' (expected a WIKI resource line)",
            clip(line)
        )
    })?;
    let mut info = ClusterInfo {
        name: name.to_string(),
        ..ClusterInfo::default()
    };
    let bad = |k: &str, v: &str| format!("invalid cluster query value {k}={}", clip(v));
    for w in words {
        let Some((k, v)) = w.split_once('=') else {
            return Err(format!(
                "invalid cluster query word '{}' (expected ATTR=VALUE)",
                clip(w)
            ));
        };
        match k.to_ascii_uppercase().as_str() {
            "CDISK" => info.disk_mb = Some(v.parse().map_err(|_| bad(k, v))?),
            "ADISK" => info.disk_avail_mb = Some(v.parse().map_err(|_| bad(k, v))?),
            "RATE" | "BANDWIDTH" | "DATARATE" => {
                let r: f64 = v.parse().map_err(|_| bad(k, v))?;
                info.rate_kbps = (r > 0.0).then_some(r);
            }
            "STATE" => info.state = Some(v.to_string()),
            "CRES" => {
                for part in v.split([',', ';']) {
                    if let Some(n) = part.strip_prefix("dsop:") {
                        info.dsop = Some(n.parse().map_err(|_| bad(k, v))?);
                    }
                }
            }
            _ => {}
        }
    }
    Ok(info)
}
