//! Data staging (Moab §17.12): per-job stage-in/stage-out records and the
//! decisions of the four `DATASTAGEMODEL`s, as data.
//!
//! The drivers (daemon, simulator) own the transfers: they run the storage
//! resource manager's scripts (or model them) and report back. This module
//! only decides, from the jobs in priority order and the storage's limits,
//! *what* to query, stage or remove next and how long each job must wait for
//! its data:
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
//!   time, so compute is reserved only from then on (within
//!   `RESERVATIONDEPTH`) and other jobs use the nodes meanwhile. A transfer
//!   is initiated when its job's compute reservation is close enough that the
//!   data is ready for it ([`TIGHT_SLACK`]), or at once for a job without a
//!   reservation (beyond the reservation depth), within the same throttles.
//! - `LOCAL` (to the allocated nodes): files whose destination is `$LOCAL`
//!   ([`is_local`]) go to the local disk of the job's master node, so they
//!   can only be staged once the job holds its allocation: the job is started
//!   in state `Staging` ([`Phase::Allocated`]), its `$LOCAL` files are staged
//!   at most `MAXDSOPPERNODE` at a time per node (and `MAXDSOP` overall) so
//!   the transfers do not disturb the jobs already running there, and the job
//!   is launched once they are all there ([`StagePlan::ready`]). Its other
//!   files are staged as under `TIGHT` before it starts.
//!
//! Every round is planned twice by the drivers: before the scheduling
//! iteration (data waits, queries, verifications, removals, launches) and
//! after it, with the reservations just planned (the `Stage` initiations), so
//! that a new job's transfer is timed against its first reservation.
//!
//! [`DataWait`] on a [`crate::Job`] is what the scheduler sees
//! ([`crate::BlockReason::DataStaging`]).

use std::collections::BTreeMap;
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

impl StageModel {
    /// The models where each file's stage time is estimated and compute is
    /// reserved from the data-ready time.
    pub fn is_scheduled(self) -> bool {
        matches!(self, StageModel::Tight | StageModel::Local)
    }
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
    /// Destination URL as requested (`$LOCAL` and `$HOME` unresolved).
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
    /// LOCAL: the compute node a `$LOCAL` file was staged to.
    pub node: Option<String>,
}

impl StageFile {
    pub fn new(src: &str, dest: &str) -> Self {
        StageFile {
            src: src.to_string(),
            dest: dest.to_string(),
            ..StageFile::default()
        }
    }

    /// Whether the destination is the job's node-local directory.
    pub fn is_local(&self) -> bool {
        is_local(&self.dest)
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

/// The token that stands for the job's node-local directory (Moab §17.12.5).
pub const LOCAL_TOKEN: &str = "$LOCAL";

/// Where a `$LOCAL` destination points on the job's master node: under its
/// local directory (`$LOCAL/rel/path`, `file://$LOCAL/rel/path`), or at an
/// absolute path of that node (`scp://$LOCAL/abs/path`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LocalDest<'a> {
    /// Relative to the job's local directory (may be empty: the directory).
    Under(&'a str),
    /// An absolute path on the master node.
    Absolute(&'a str),
}

/// Parses a `$LOCAL` destination; `None` when the URL is not one.
pub fn local_dest(url: &str) -> Option<LocalDest<'_>> {
    let rest = url.strip_prefix("file://").unwrap_or(url);
    if let Some(r) = rest.strip_prefix(LOCAL_TOKEN) {
        if r.is_empty() || r.starts_with('/') {
            return Some(LocalDest::Under(r.trim_start_matches('/')));
        }
        return None;
    }
    let (scheme, rest) = url.split_once("://")?;
    if !matches!(scheme, "scp" | "ssh") {
        return None;
    }
    let path = rest.strip_prefix(LOCAL_TOKEN)?;
    path.starts_with('/').then_some(LocalDest::Absolute(path))
}

/// Whether a destination URL is on the job's master node (`$LOCAL`).
pub fn is_local(url: &str) -> bool {
    local_dest(url).is_some()
}

/// Parses the value of `STAGEIN:`/`STAGEOUT:` — `src[|src2...][,dest]`
/// (Moab §17.12 examples): several sources separated by `|`, an optional
/// destination after the last `,`. A destination ending in `/` is a
/// directory each source is staged into (under its own file name); without
/// a destination, a file is staged to `default_dir` (the job's working
/// directory for stage-in). Every URL must be `scheme://...` or an absolute
/// path (taken as `file://`). `$LOCAL` (the job's node-local directory) may
/// begin a destination (`$LOCAL/x`, `file://$LOCAL/x`, `scp://$LOCAL/abs`),
/// never a source.
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
    if let Some((_, rest)) = split_dest(srcs) {
        return Err(StageSpecError(format!(
            "several sources are separated by '|', not ',' (found another URL '{}' before the destination)",
            rest.trim()
        )));
    }
    let mut out = Vec::new();
    for src in srcs.split('|') {
        let src = normalize_url(src.trim())
            .map_err(|e| StageSpecError(format!("invalid source '{}': {e}", src.trim())))?;
        if src.contains(LOCAL_TOKEN) {
            return Err(StageSpecError(format!(
                "invalid source '{src}': $LOCAL may only begin a destination"
            )));
        }
        let name = file_name(&src).ok_or_else(|| {
            StageSpecError(format!("invalid source '{src}': no file name in the path"))
        })?;
        let dest = match dest {
            Some("") => return Err(StageSpecError("empty destination after ','".into())),
            Some(d) => {
                let mut d = normalize_url(d)
                    .map_err(|e| StageSpecError(format!("invalid destination '{d}': {e}")))?;
                if d.contains(LOCAL_TOKEN) {
                    match local_dest(&d) {
                        Some(LocalDest::Under("")) if !d.ends_with('/') => d.push('/'),
                        Some(_) => {}
                        None => {
                            return Err(StageSpecError(format!(
                                "invalid destination '{d}': $LOCAL must begin it ($LOCAL/path, file://$LOCAL/path or scp://$LOCAL/path)"
                            )))
                        }
                    }
                }
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

/// One MB (2^20 bytes), the unit of disk figures.
pub const MB: u64 = 1024 * 1024;

/// What the storage manager offers (`RMCFG[data]` and its cluster query),
/// and the staging parameters.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct StorageView {
    /// `MAXDSOP`: simultaneous staging operations (`None` = unlimited).
    pub max_dsop: Option<u32>,
    /// `MAXDSOPPERNODE`: simultaneous `$LOCAL` stage-ins to one compute node.
    pub max_node_ops: Option<u32>,
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
    /// `DATASTAGETIMEOUT`: an initiated transfer fails when it has not
    /// completed after this long, or [`OVERRUN_FACTOR`] times its estimated
    /// stage time if that is longer (0 = never).
    pub timeout: Secs,
    /// `DATASTAGECLEANUP`: remove the staged-in files of ended jobs.
    pub cleanup: bool,
}

impl StorageView {
    /// `TARGETUSAGE` of the configured disk, in bytes.
    pub fn target_bytes(&self) -> Option<u64> {
        let (pct, disk) = (self.target_usage?, self.disk_mb?);
        Some(((disk as f64 * pct / 100.0).floor() as u64).saturating_mul(MB))
    }

    /// `TARGETUSAGE` of the configured disk in whole MB (checknode's
    /// `Target=`).
    pub fn target_mb(&self) -> Option<u64> {
        let (pct, disk) = (self.target_usage?, self.disk_mb?);
        Some((disk as f64 * pct / 100.0).floor() as u64)
    }

    /// When an initiated transfer of `file` has overrun for good.
    pub fn deadline(&self, file: &StageFile) -> Option<Time> {
        let started = file.started?;
        if self.timeout <= 0 {
            return None;
        }
        let by_estimate = estimate(file, self.rate_kbps).map_or(0, |e| e * OVERRUN_FACTOR);
        Some(started + self.timeout.max(by_estimate))
    }
}

/// Where a job is, as staging sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase<'a> {
    /// Queued: its stage-in decides when it may start.
    Queued,
    /// LOCAL: the job holds its allocation (state `Staging`); its `$LOCAL`
    /// files go to this, its master, node.
    Allocated { node: &'a str },
    /// Running: its data is in use.
    Running,
    /// Ended (completed, cancelled...): its staged data is removed.
    Ended,
}

/// A job's staging as the decisions see it.
#[derive(Debug, Clone)]
pub struct StageJob<'a> {
    pub job: JobId,
    pub files: &'a [StageFile],
    /// Start of the job's compute reservation in the plan.
    pub reservation: Option<Time>,
    pub phase: Phase<'a>,
}

/// What the storage manager should be asked to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StageAction {
    /// `SYSTEMQUERYURL filesize <user> <source>`: learn the size.
    QuerySize { job: JobId, file: usize },
    /// `SYSTEMQUERYURL stagetime <user> <source> <dest> <rate>` (TIGHT when
    /// no rate is known).
    QueryStageTime { job: JobId, file: usize },
    /// `SYSTEMQUERYURL filesize <user> <dest>`: is the file there yet
    /// (EXTERNAL, and an initiated transfer that is still active)?
    Verify { job: JobId, file: usize },
    /// `SYSTEMMODIFYURL stage <user> <source> <dest>`.
    Stage { job: JobId, file: usize },
    /// `SYSTEMMODIFYURL remove <user> <dest>`: an ended job's staged data
    /// (or what an overrun transfer left).
    Remove { job: JobId, file: usize },
}

impl StageAction {
    pub fn job(&self) -> JobId {
        match *self {
            StageAction::QuerySize { job, .. }
            | StageAction::QueryStageTime { job, .. }
            | StageAction::Verify { job, .. }
            | StageAction::Stage { job, .. }
            | StageAction::Remove { job, .. } => job,
        }
    }
    pub fn file(&self) -> usize {
        match *self {
            StageAction::QuerySize { file, .. }
            | StageAction::QueryStageTime { file, .. }
            | StageAction::Verify { file, .. }
            | StageAction::Stage { file, .. }
            | StageAction::Remove { file, .. } => file,
        }
    }
}

/// Why a stage-in was not initiated yet (checkjob shows it). Sizes are
/// bytes; the renderers turn them into text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StageDeferral {
    /// `MAXDSOP` operations are active.
    MaxDsop(u32),
    /// LOCAL: `MAXDSOPPERNODE` stage-ins to this node are active.
    NodeBusy { node: String, limit: u32 },
    /// Staging it would exceed `TARGETUSAGE`.
    TargetUsage {
        dedicated: u64,
        size: u64,
        target: u64,
    },
    /// Not enough free disk at the storage manager now.
    DiskFull { avail: u64, size: u64 },
    /// TIGHT: the compute reservation is far enough away (initiate at).
    NotYet(Time),
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
    /// Jobs with a failed file, and why (the driver holds or requeues them).
    pub failed: Vec<(JobId, String)>,
    /// Initiated transfers past their deadline ([`StorageView::deadline`]):
    /// the driver fails them (and removes what they left).
    pub expired: Vec<(JobId, usize)>,
    /// LOCAL: allocated jobs whose `$LOCAL` data is all there (launch them).
    pub ready: Vec<JobId>,
}

/// How long before a TIGHT transfer must complete it is started anyway.
pub const TIGHT_SLACK: Secs = 60;
/// How far ahead an over-running TIGHT transfer is expected to finish.
pub const OVERRUN_STEP: Secs = 30;
/// A transfer may take this many times its estimated stage time before it
/// fails (when that is longer than `DATASTAGETIMEOUT`).
pub const OVERRUN_FACTOR: Secs = 3;

/// Estimated stage time of a file: its own estimate, else size / rate.
pub fn estimate(file: &StageFile, rate_kbps: Option<f64>) -> Option<Secs> {
    if let Some(e) = file.estimate {
        return Some(e.max(0));
    }
    let size = file.size?;
    let rate = rate_kbps.filter(|r| *r > 0.0)?;
    Some(((size as f64 / 1024.0) / rate).ceil() as Secs)
}

/// When an active transfer started at `started` with estimate `e` is
/// expected to be done: `started + e`, or a step ahead of `now` once that
/// has passed (the transfer over-runs its estimate).
pub fn expected_ready(started: Time, e: Secs, now: Time) -> Time {
    if started + e > now {
        started + e
    } else {
        now + OVERRUN_STEP
    }
}

/// What staging holds now: the one accounting behind `MAXDSOP`,
/// `MAXDSOPPERNODE`, `TARGETUSAGE` and what checknode and mdiag -R show.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Usage {
    /// Active stage-in operations.
    pub ops: u32,
    /// Active `$LOCAL` stage-ins per compute node.
    pub node_ops: BTreeMap<String, u32>,
    /// Bytes of staged (or being staged) data on the storage manager: the
    /// files of queued and running jobs, and those of ended jobs until they
    /// are removed (`DATASTAGECLEANUP`). `$LOCAL` files are on compute
    /// nodes, not the storage manager, and do not count.
    pub dedicated: u64,
}

impl Usage {
    /// [`Usage::dedicated`] in whole MB (rounded down, like every size shown).
    pub fn dedicated_mb(&self) -> u64 {
        self.dedicated / MB
    }
}

/// The bytes a file holds or will hold at its destination.
fn file_bytes(f: &StageFile) -> u64 {
    f.size.unwrap_or(f.transferred).max(f.transferred)
}

/// [`Usage`] of these jobs' stage-in files.
pub fn usage(jobs: &[StageJob<'_>], cleanup: bool) -> Usage {
    let mut u = Usage::default();
    for j in jobs {
        for f in j.files {
            let local = f.is_local();
            if f.status == StageStatus::Active {
                u.ops += 1;
                if let (true, Some(n)) = (local, f.node.as_deref()) {
                    *u.node_ops.entry(n.to_string()).or_default() += 1;
                }
            }
            let held = matches!(f.status, StageStatus::Active | StageStatus::Complete)
                && (j.phase != Phase::Ended || (cleanup && f.started.is_some()));
            if held && !local {
                u.dedicated = u.dedicated.saturating_add(file_bytes(f));
            }
        }
    }
    u
}

/// The decisions of one round. `jobs` are the jobs with stage-in records:
/// the queued ones in priority order (highest first), then the others.
pub fn plan(
    model: StageModel,
    storage: &StorageView,
    jobs: &[StageJob<'_>],
    now: Time,
) -> StagePlan {
    let mut out = StagePlan::default();
    let mut used = usage(jobs, storage.cleanup);
    let due = |f: &StageFile| {
        f.last_query
            .is_none_or(|t| now - t >= storage.requery.max(1))
    };
    let target = storage.target_bytes();
    for j in jobs {
        match j.phase {
            Phase::Ended => {
                if storage.cleanup {
                    remove_staged(j, &mut out);
                }
                continue;
            }
            Phase::Running => continue,
            Phase::Allocated { node } => {
                allocated(j, node, storage, now, &due, &mut used, &mut out);
                continue;
            }
            Phase::Queued => {}
        }
        if let Some(f) = j
            .files
            .iter()
            .find(|f| f.status == StageStatus::Failed && !f.in_flight)
        {
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
            if f.is_local() {
                if model != StageModel::Local {
                    // Accepted under another model (or the model changed).
                    unknown = true;
                    if !f.in_flight {
                        out.failed.push((
                            j.job,
                            format!(
                                "stage-in to {} needs DATASTAGEMODEL LOCAL (the model is {model:?})",
                                f.dest
                            ),
                        ));
                    }
                }
                // Staged once the job holds its nodes.
                continue;
            }
            match f.status {
                StageStatus::Complete | StageStatus::Removed | StageStatus::Failed => continue,
                StageStatus::Active => {
                    if storage.deadline(f).is_some_and(|d| now >= d) && !f.in_flight {
                        out.expired.push((j.job, i));
                        unknown = true;
                        continue;
                    }
                    if !f.in_flight && due(f) {
                        out.actions
                            .push(act(|job, file| StageAction::Verify { job, file }));
                    }
                    match (
                        model.is_scheduled(),
                        f.started,
                        estimate(f, storage.rate_kbps),
                    ) {
                        (true, Some(s), Some(e)) => {
                            let t = expected_ready(s, e, now);
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
            let tight = model.is_scheduled();
            // The size first: disk accounting (TARGETUSAGE, free disk),
            // progress, and TIGHT estimates all need it.
            if f.size.is_none() && f.estimate.is_none() && f.last_query.is_none() {
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
            if let Some(max) = storage.max_dsop.filter(|m| used.ops >= *m) {
                deferred.get_or_insert(StageDeferral::MaxDsop(max));
                continue;
            }
            let size = f.size.unwrap_or(0);
            if let Some(target) = target {
                // A file larger than the whole target still goes when nothing
                // else is dedicated, or it would wait for ever.
                if used.dedicated.saturating_add(size) > target && used.dedicated > 0 {
                    deferred.get_or_insert(StageDeferral::TargetUsage {
                        dedicated: used.dedicated,
                        size,
                        target,
                    });
                    continue;
                }
            }
            if let Some(avail) = storage
                .disk_avail_mb
                .map(|a| a.saturating_mul(MB))
                .filter(|a| size > *a)
            {
                deferred.get_or_insert(StageDeferral::DiskFull { avail, size });
                continue;
            }
            used.ops += 1;
            used.dedicated = used.dedicated.saturating_add(size);
            out.actions.push(StageAction::Stage {
                job: j.job,
                file: i,
            });
        }
        let all_done = j.files.iter().all(|f| {
            matches!(f.status, StageStatus::Complete | StageStatus::Removed)
                || (f.is_local() && model == StageModel::Local)
        });
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

/// LOCAL: an allocated job's `$LOCAL` files, throttled per node.
fn allocated(
    j: &StageJob<'_>,
    node: &str,
    storage: &StorageView,
    now: Time,
    due: &dyn Fn(&StageFile) -> bool,
    used: &mut Usage,
    out: &mut StagePlan,
) {
    if let Some(f) = j
        .files
        .iter()
        .find(|f| f.status == StageStatus::Failed && !f.in_flight)
    {
        let why = f
            .error
            .clone()
            .unwrap_or_else(|| format!("stage-in of {} failed", f.src));
        out.failed.push((j.job, why));
        return;
    }
    let mut done = true;
    let mut deferred = None;
    for (i, f) in j.files.iter().enumerate() {
        if !f.is_local() {
            // Staged before the job started.
            continue;
        }
        match f.status {
            StageStatus::Complete | StageStatus::Removed | StageStatus::Failed => continue,
            StageStatus::Active => {
                done = false;
                if storage.deadline(f).is_some_and(|d| now >= d) && !f.in_flight {
                    out.expired.push((j.job, i));
                } else if !f.in_flight && due(f) {
                    out.actions.push(StageAction::Verify {
                        job: j.job,
                        file: i,
                    });
                }
                continue;
            }
            StageStatus::Pending => done = false,
        }
        if f.in_flight {
            continue;
        }
        if let Some(max) = storage.max_dsop.filter(|m| used.ops >= *m) {
            deferred.get_or_insert(StageDeferral::MaxDsop(max));
            continue;
        }
        let on_node = used.node_ops.get(node).copied().unwrap_or(0);
        if let Some(limit) = storage.max_node_ops.filter(|m| on_node >= *m) {
            deferred.get_or_insert(StageDeferral::NodeBusy {
                node: node.to_string(),
                limit,
            });
            continue;
        }
        used.ops += 1;
        *used.node_ops.entry(node.to_string()).or_default() += 1;
        out.actions.push(StageAction::Stage {
            job: j.job,
            file: i,
        });
    }
    if done {
        out.ready.push(j.job);
    }
    if let Some(d) = deferred {
        out.deferred.push((j.job, d));
    }
}

/// An ended job's files that staging put somewhere: remove them.
fn remove_staged(j: &StageJob<'_>, out: &mut StagePlan) {
    for (i, f) in j.files.iter().enumerate() {
        let staged = f.started.is_some()
            && matches!(
                f.status,
                StageStatus::Active | StageStatus::Complete | StageStatus::Failed
            );
        if staged && !f.in_flight {
            out.actions.push(StageAction::Remove {
                job: j.job,
                file: i,
            });
        }
    }
}

#[cfg(test)]
mod tests;
