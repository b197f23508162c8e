//! Data staging (Moab §17.12): per-job stage-in/stage-out records and the
//! decisions of the four `DATASTAGEMODEL`s, as data.
//!
//! The drivers (daemon, simulator) own the transfers: they run the storage
//! resource manager's scripts and report back. This module only decides, from
//! the jobs in priority order and the storage's limits, *what* to query or
//! stage next and how long each job must wait for its data:
//!
//! - `EXTERNAL` (verified): something else stages; every pending file is
//!   queried (`SYSTEMQUERYURL filesize` of the destination) until it is there;
//!   the job waits with [`DataWait::Unknown`] (no reservation) until then.
//! - `LOOSE` (prioritized): stage-ins are initiated (`SYSTEMMODIFYURL stage`)
//!   in priority order while fewer than `MAXDSOP` operations are active and
//!   the staged data stays within `TARGETUSAGE` of the storage disk; the job
//!   waits with [`DataWait::Unknown`].
//! - `TIGHT` (fully scheduled): each file's stage time is known or estimated
//!   (size / rate); the job waits with [`DataWait::Until`] the data-ready
//!   time, so compute is reserved only from then on and other jobs use the
//!   nodes meanwhile. A transfer is initiated when its job's compute
//!   reservation is close enough that the data is ready for it (or at once
//!   when nothing is known of the reservation), within the same throttles.
//! - `LOCAL`: like `TIGHT`, the destination being the job's nodes.
//!
//! [`DataWait`] on a [`crate::Job`] is what the scheduler sees
//! ([`crate::BlockReason::DataStaging`]).

use std::fmt;

use crate::job::JobId;
use crate::{Secs, Time};

/// How long a queued job must wait for its input data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DataWait {
    /// Until the storage manager confirms the data: not startable, no
    /// reservation (EXTERNAL, LOOSE, or a failed estimate).
    Unknown,
    /// The data is expected to be ready at this time: the job may be reserved
    /// from then on but not started before (TIGHT).
    Until(Time),
}

impl DataWait {
    /// The time before which the job must not start, if one is known.
    pub fn ready_at(self) -> Option<Time> {
        match self {
            DataWait::Unknown => None,
            DataWait::Until(t) => Some(t),
        }
    }
}

/// `DATASTAGEMODEL`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum StageModel {
    #[default]
    External,
    Loose,
    Tight,
    Local,
}

/// Stage-in or stage-out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StageDir {
    In,
    Out,
}

/// The state of one file's staging (checkjob prints `pending`, `active`,
/// `complete`; `MDataStageState[]` adds `FAILED` and `REMOVED`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum StageStatus {
    #[default]
    Pending,
    Active,
    Complete,
    Failed,
    Removed,
}

impl StageStatus {
    /// The word checkjob and checknode print.
    pub fn as_str(self) -> &'static str {
        match self {
            StageStatus::Pending => "pending",
            StageStatus::Active => "active",
            StageStatus::Complete => "complete",
            StageStatus::Failed => "failed",
            StageStatus::Removed => "removed",
        }
    }

    /// Parses [`StageStatus::as_str`] (any case).
    pub fn parse(s: &str) -> Option<Self> {
        [
            StageStatus::Pending,
            StageStatus::Active,
            StageStatus::Complete,
            StageStatus::Failed,
            StageStatus::Removed,
        ]
        .into_iter()
        .find(|x| x.as_str().eq_ignore_ascii_case(s))
    }
}

impl fmt::Display for StageStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One file (or directory) to stage for a job.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct StageFile {
    /// Source URL (`file:///...`, `scp://host/path`, `http://...`).
    pub src: String,
    /// Destination URL.
    pub dest: String,
    /// Size in bytes, once known.
    pub size: Option<u64>,
    /// Bytes already at the destination.
    pub transferred: u64,
    pub status: StageStatus,
    /// Estimated stage time, once known (TIGHT).
    pub estimate: Option<Secs>,
    /// When the transfer was initiated.
    pub started: Option<Time>,
    /// When the storage manager was last asked about this file.
    pub last_query: Option<Time>,
    /// A script for this file is running now (the driver sets and clears it).
    pub in_flight: bool,
    /// Why it failed.
    pub error: Option<String>,
}

impl StageFile {
    pub fn new(src: &str, dest: &str) -> Self {
        StageFile {
            src: src.to_string(),
            dest: dest.to_string(),
            ..StageFile::default()
        }
    }
}

/// A malformed `STAGEIN`/`STAGEOUT` value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StageSpecError(pub String);

impl fmt::Display for StageSpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for StageSpecError {}

/// Parses the value of `STAGEIN:`/`STAGEOUT:` — `src[|src2...][,dest]`
/// (Moab §17.12 examples): several sources separated by `|`, an optional
/// destination after the last `,`. A destination ending in `/` is a
/// directory each source is staged into (under its own file name); without
/// a destination, a file is staged to `default_dir` (the job's working
/// directory for stage-in). Every URL must be `scheme://...` or an absolute
/// path (taken as `file://`).
pub fn parse_stage_spec(
    spec: &str,
    default_dir: &str,
) -> Result<Vec<(String, String)>, StageSpecError> {
    let spec = spec.trim().trim_matches('"');
    if spec.is_empty() {
        return Err(StageSpecError("empty staging request".into()));
    }
    if spec.ends_with(',') {
        return Err(StageSpecError("empty destination after ','".into()));
    }
    let (srcs, dest) = match split_dest(spec) {
        Some((s, d)) => (s, Some(d.trim())),
        None => (spec, None),
    };
    let mut out = Vec::new();
    for src in srcs.split('|') {
        let src = normalize_url(src.trim())
            .map_err(|e| StageSpecError(format!("invalid source '{}': {e}", src.trim())))?;
        let name = file_name(&src).ok_or_else(|| {
            StageSpecError(format!("invalid source '{src}': no file name in the path"))
        })?;
        let dest = match dest {
            Some("") => return Err(StageSpecError("empty destination after ','".into())),
            Some(d) => {
                let d = normalize_url(d)
                    .map_err(|e| StageSpecError(format!("invalid destination '{d}': {e}")))?;
                if d.ends_with('/') {
                    format!("{d}{name}")
                } else if srcs.contains('|') {
                    return Err(StageSpecError(format!(
                        "several sources need a directory destination ending in '/', got '{d}'"
                    )));
                } else {
                    d
                }
            }
            None => format!("file://{}/{name}", default_dir.trim_end_matches('/')),
        };
        out.push((src, dest));
    }
    Ok(out)
}

/// Splits `srcs,dest` at the comma that starts the destination URL (a comma
/// followed by a scheme or an absolute path or `$`), so commas inside URLs
/// are left alone.
fn split_dest(spec: &str) -> Option<(&str, &str)> {
    spec.rmatch_indices(',').map(|(i, _)| i).find_map(|i| {
        let rest = spec[i + 1..].trim_start();
        let looks = rest.starts_with('/') || rest.starts_with('$') || rest.contains("://");
        looks.then(|| (&spec[..i], &spec[i + 1..]))
    })
}

/// `scheme://rest` as is; `/abs/path` and `$VAR/path` as `file://`.
fn normalize_url(u: &str) -> Result<String, &'static str> {
    if u.is_empty() {
        return Err("empty URL");
    }
    if u.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err("URLs may not contain white space");
    }
    if let Some((scheme, rest)) = u.split_once("://") {
        let scheme_ok = !scheme.is_empty()
            && scheme
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '+' || c == '-' || c == '.');
        if !scheme_ok {
            return Err("bad URL scheme");
        }
        if rest.is_empty() {
            return Err("no path after '://'");
        }
        let known = ["file", "scp", "ssh", "http", "https", "gsiftp", "ftp"];
        if !known.contains(&scheme.to_ascii_lowercase().as_str()) {
            return Err("unsupported scheme (file, scp, ssh, http, https, ftp, gsiftp)");
        }
        return Ok(u.to_string());
    }
    if u.starts_with('/') || u.starts_with('$') {
        return Ok(format!("file://{u}"));
    }
    Err("expected a URL (scheme://...) or an absolute path")
}

/// The last path component of a URL (`None` for `.../`).
pub fn file_name(url: &str) -> Option<&str> {
    let path = url.split_once("://").map_or(url, |(_, r)| r);
    let path = path.split(['?', '#']).next().unwrap_or(path);
    let name = path.rsplit('/').next()?;
    (!name.is_empty() && name != "." && name != "..").then_some(name)
}

/// What the storage manager offers (`RMCFG[data]` and its cluster query).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct StorageView {
    /// `MAXDSOP`: simultaneous staging operations (`None` = unlimited).
    pub max_dsop: Option<u32>,
    /// `TARGETUSAGE` as a percentage of the configured disk.
    pub target_usage: Option<f64>,
    /// Configured disk (MB), from the cluster query.
    pub disk_mb: Option<u64>,
    /// Available disk (MB), from the cluster query.
    pub disk_avail_mb: Option<u64>,
    /// Transfer rate in KB/s (cluster query or `BANDWIDTH`).
    pub rate_kbps: Option<f64>,
    /// How often a pending file is queried again.
    pub requery: Secs,
}

impl StorageView {
    /// `TARGETUSAGE` of the configured disk, in MB.
    pub fn target_mb(&self) -> Option<u64> {
        let (pct, disk) = (self.target_usage?, self.disk_mb?);
        Some((disk as f64 * pct / 100.0).floor() as u64)
    }
}

/// A job's staging as the decisions see it.
#[derive(Debug, Clone)]
pub struct StageJob<'a> {
    pub job: JobId,
    pub files: &'a [StageFile],
    /// Start of the job's compute reservation in the last plan.
    pub reservation: Option<Time>,
    /// The job is queued (stage-in matters) rather than running or done.
    pub queued: bool,
}

/// What the storage manager should be asked to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StageAction {
    /// `SYSTEMQUERYURL filesize <user> <source>`: learn the size (LOOSE with
    /// a target, TIGHT).
    QuerySize { job: JobId, file: usize },
    /// `SYSTEMQUERYURL stagetime <user> <source> <dest> <rate>` (TIGHT when
    /// no rate is known).
    QueryStageTime { job: JobId, file: usize },
    /// `SYSTEMQUERYURL filesize <user> <dest>`: is the file there yet
    /// (EXTERNAL, and an initiated transfer that is still active)?
    Verify { job: JobId, file: usize },
    /// `SYSTEMMODIFYURL stage <user> <source> <dest>`.
    Stage { job: JobId, file: usize },
}

impl StageAction {
    pub fn job(&self) -> JobId {
        match *self {
            StageAction::QuerySize { job, .. }
            | StageAction::QueryStageTime { job, .. }
            | StageAction::Verify { job, .. }
            | StageAction::Stage { job, .. } => job,
        }
    }
    pub fn file(&self) -> usize {
        match *self {
            StageAction::QuerySize { file, .. }
            | StageAction::QueryStageTime { file, .. }
            | StageAction::Verify { file, .. }
            | StageAction::Stage { file, .. } => file,
        }
    }
}

/// Why a stage-in was not initiated yet (shown by checkjob).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StageDeferral {
    /// `MAXDSOP` operations are active.
    MaxDsop(u32),
    /// Staging it would exceed `TARGETUSAGE` (dedicated, size, target MB).
    TargetUsage {
        dedicated_mb: u64,
        size_mb: u64,
        target_mb: u64,
    },
    /// Not enough free disk at the destination now.
    DiskFull { avail_mb: u64, size_mb: u64 },
    /// TIGHT: the compute reservation is far enough away (initiate at).
    NotYet(Time),
}

impl fmt::Display for StageDeferral {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StageDeferral::MaxDsop(n) => {
                write!(f, "data staging operation limit reached (MAXDSOP={n})")
            }
            StageDeferral::TargetUsage { dedicated_mb, size_mb, target_mb } => write!(
                f,
                "staging {size_mb} MB would exceed the target storage usage ({dedicated_mb} of {target_mb} MB dedicated)"
            ),
            StageDeferral::DiskFull { avail_mb, size_mb } => write!(
                f,
                "insufficient disk at the storage manager ({avail_mb} MB available, {size_mb} MB needed)"
            ),
            StageDeferral::NotYet(t) => write!(f, "stage-in scheduled to begin at {t}"),
        }
    }
}

/// One round of staging decisions.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StagePlan {
    pub actions: Vec<StageAction>,
    /// The data wait of every queued job with stage-in requirements
    /// (`None` = its data is there).
    pub waits: Vec<(JobId, Option<DataWait>)>,
    /// Jobs whose stage-in could not be initiated, with the first reason.
    pub deferred: Vec<(JobId, StageDeferral)>,
    /// Jobs with a failed file (the driver holds or defers them).
    pub failed: Vec<(JobId, String)>,
}

/// Bytes to whole MB, rounded up.
pub fn mb(bytes: u64) -> u64 {
    bytes.div_ceil(1024 * 1024)
}

/// Estimated stage time of a file: its own estimate, else size / rate.
pub fn estimate(file: &StageFile, rate_kbps: Option<f64>) -> Option<Secs> {
    if let Some(e) = file.estimate {
        return Some(e.max(0));
    }
    let size = file.size?;
    let rate = rate_kbps.filter(|r| *r > 0.0)?;
    Some(((size as f64 / 1024.0) / rate).ceil() as Secs)
}

/// Operations counted against `MAXDSOP` and disk counted against
/// `TARGETUSAGE` right now.
pub fn usage(jobs: &[StageJob<'_>]) -> (u32, u64) {
    let mut ops = 0;
    let mut bytes = 0u64;
    for j in jobs {
        for f in j.files {
            if f.status == StageStatus::Active {
                ops += 1;
            }
            if matches!(f.status, StageStatus::Active | StageStatus::Complete) && j.queued {
                bytes = bytes.saturating_add(f.size.unwrap_or(f.transferred));
            }
        }
    }
    (ops, mb(bytes))
}

/// How long before a TIGHT transfer must complete it is started anyway.
const TIGHT_SLACK: Secs = 60;
/// How far ahead an over-running TIGHT transfer is expected to finish.
const OVERRUN_STEP: Secs = 30;

/// The decisions of one round. `jobs` are the jobs with staging records, the
/// queued ones in priority order (highest first).
pub fn plan(
    model: StageModel,
    storage: &StorageView,
    jobs: &[StageJob<'_>],
    now: Time,
) -> StagePlan {
    let mut out = StagePlan::default();
    let (mut ops, mut dedicated) = usage(jobs);
    let due = |f: &StageFile| {
        f.last_query
            .is_none_or(|t| now - t >= storage.requery.max(1))
    };
    for j in jobs.iter().filter(|j| j.queued) {
        if let Some(f) = j.files.iter().find(|f| f.status == StageStatus::Failed) {
            let why = f
                .error
                .clone()
                .unwrap_or_else(|| format!("stage-in of {} failed", f.src));
            out.failed.push((j.job, why));
            out.waits.push((j.job, Some(DataWait::Unknown)));
            continue;
        }
        let mut ready: Option<Time> = Some(now);
        let mut unknown = false;
        let mut deferred = None;
        for (i, f) in j.files.iter().enumerate() {
            let act = |a: fn(JobId, usize) -> StageAction| a(j.job, i);
            match f.status {
                StageStatus::Complete | StageStatus::Removed | StageStatus::Failed => continue,
                StageStatus::Active => {
                    if !f.in_flight && due(f) {
                        out.actions
                            .push(act(|job, file| StageAction::Verify { job, file }));
                    }
                    match (model, f.started, estimate(f, storage.rate_kbps)) {
                        (StageModel::Tight | StageModel::Local, Some(s), Some(e)) => {
                            let t = (s + e).max(now + OVERRUN_STEP.min(e.max(1)));
                            ready = ready.map(|r| r.max(t));
                        }
                        _ => unknown = true,
                    }
                    continue;
                }
                StageStatus::Pending => {}
            }
            if model == StageModel::External {
                unknown = true;
                if !f.in_flight && due(f) {
                    out.actions
                        .push(act(|job, file| StageAction::Verify { job, file }));
                }
                continue;
            }
            let tight = matches!(model, StageModel::Tight | StageModel::Local);
            let need_size = f.size.is_none() && (tight || storage.target_mb().is_some());
            if need_size && f.last_query.is_none() {
                unknown = true;
                if !f.in_flight {
                    let a = if tight && storage.rate_kbps.is_none() {
                        StageAction::QueryStageTime {
                            job: j.job,
                            file: i,
                        }
                    } else {
                        StageAction::QuerySize {
                            job: j.job,
                            file: i,
                        }
                    };
                    out.actions.push(a);
                }
                continue;
            }
            if f.in_flight {
                unknown = true;
                continue;
            }
            let est = estimate(f, storage.rate_kbps);
            if tight {
                match est {
                    Some(e) => ready = ready.map(|r| r.max(now + e.max(1))),
                    None => unknown = true,
                }
                if let (Some(r), Some(e)) = (j.reservation, est) {
                    let begin = r - e - TIGHT_SLACK;
                    if begin > now {
                        deferred.get_or_insert(StageDeferral::NotYet(begin));
                        continue;
                    }
                }
            } else {
                unknown = true;
            }
            // Throttles.
            if let Some(max) = storage.max_dsop.filter(|m| ops >= *m) {
                deferred.get_or_insert(StageDeferral::MaxDsop(max));
                continue;
            }
            let size_mb = f.size.map(mb).unwrap_or(0);
            if let Some(target) = storage.target_mb() {
                // A file larger than the whole target still goes when nothing
                // else is dedicated, or it would wait for ever.
                if dedicated + size_mb > target && dedicated > 0 {
                    deferred.get_or_insert(StageDeferral::TargetUsage {
                        dedicated_mb: dedicated,
                        size_mb,
                        target_mb: target,
                    });
                    continue;
                }
            }
            if let Some(avail) = storage.disk_avail_mb.filter(|a| size_mb > *a) {
                deferred.get_or_insert(StageDeferral::DiskFull {
                    avail_mb: avail,
                    size_mb,
                });
                continue;
            }
            ops += 1;
            dedicated += size_mb;
            out.actions.push(StageAction::Stage {
                job: j.job,
                file: i,
            });
        }
        let all_done = j
            .files
            .iter()
            .all(|f| matches!(f.status, StageStatus::Complete | StageStatus::Removed));
        let wait = if all_done {
            None
        } else if unknown {
            Some(DataWait::Unknown)
        } else {
            ready.map(DataWait::Until)
        };
        out.waits.push((j.job, wait));
        if let Some(d) = deferred {
            out.deferred.push((j.job, d));
        }
    }
    out
}

#[cfg(test)]
mod tests;
