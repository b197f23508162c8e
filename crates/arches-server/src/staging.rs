//! The daemon's data-staging driver (Moab §17.12): the job's `STAGEIN` /
//! `STAGEOUT` records, the storage resource manager's scripts, and the
//! decisions of [`arches_core::staging::plan`].
//!
//! Each scheduling iteration runs two staging rounds around the plan:
//! [`Actor::staging_before`] sets every queued job's [`DataWait`] and asks
//! what to query, verify or remove (priority order, ended jobs' data, LOCAL
//! jobs whose data is all there are launched); [`Actor::staging_after`]
//! initiates the transfers (`MAXDSOP`, `MAXDSOPPERNODE`, `TARGETUSAGE`, TIGHT
//! timing) against the reservations just planned, so a new job's transfer is
//! timed against its first reservation. Every turn, [`Actor::staging_poll`]
//! collects finished calls and records them on the jobs (size, estimate,
//! progress, complete, failed, removed). A failure puts the
//! `DATASTAGEHOLDTYPE` hold on the job with a message (a LOCAL job holding
//! its allocation is requeued first); releasing the hold retries. Nothing
//! here blocks the actor: scripts run on the RM's threads with a timeout.
//!
//! `DATASTAGEMODEL LOCAL`: a job whose `STAGEIN` destination is `$LOCAL` is
//! started like any other but not launched: it holds its allocation in state
//! `Staging` while its `$LOCAL` files go to `DATASTAGELOCALDIR/<jobid>` on its
//! master node (the first node of its allocation), `Staged` once they are
//! there, and `Running` when it is launched with `$LOCAL` in its
//! environment; its wall-clock limit counts from the launch.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::sync::Arc;
use std::time::Duration;

use arches_api::{StageLine, StageWait, StorageFailure, StorageInfo, StorageOp};
use arches_core::staging::{
    self, local_dest, DataWait, LocalDest, Phase, StageAction, StageDeferral, StageFile, StageJob,
    StageModel, StageStatus, StorageView,
};
use arches_core::state::JobChange;
use arches_core::{Event, JobId, JobState, Time};
use arches_rm::storage::{
    Caller, ClusterInfo, StorageCall, StorageConfig, StorageReply, StorageRm,
};
use arches_store::{ExecRecord, StageRecord};

use crate::actor::Actor;
use crate::config::DaemonConfig;
use crate::jobspec::SubmitError;

/// Parses the `STAGEIN`/`STAGEOUT` values of a submission (clear errors,
/// nothing recorded when one is malformed).
pub fn parse_specs(
    kind: &str,
    specs: &[String],
    default_dir: &str,
) -> Result<Vec<StageRecord>, SubmitError> {
    let mut out = Vec::new();
    for spec in specs {
        let pairs = staging::parse_stage_spec(spec, default_dir)
            .map_err(|e| SubmitError(format!("invalid {kind} '{spec}': {e}")))?;
        for (src, dest) in pairs {
            if kind == "STAGEOUT" && staging::is_local(&dest) {
                return Err(SubmitError(format!(
                    "invalid {kind} '{spec}': $LOCAL is a stage-in destination (the job's node-local directory is removed with the job)"
                )));
            }
            out.push(StageRecord {
                src,
                dest,
                status: StageStatus::Pending.as_str().to_string(),
                ..StageRecord::default()
            });
        }
    }
    Ok(out)
}

/// Refuses what the configuration cannot stage: a `$LOCAL` destination
/// needs `DATASTAGEMODEL LOCAL` (and a storage resource manager).
pub fn check_submission(model: Option<StageModel>, exec: &ExecRecord) -> Result<(), SubmitError> {
    if model == Some(StageModel::Local) {
        return Ok(());
    }
    match exec.stage_in.iter().find(|f| staging::is_local(&f.dest)) {
        None => Ok(()),
        Some(f) => Err(SubmitError(format!(
            "invalid STAGEIN destination '{}': $LOCAL (the allocated node's local disk) needs DATASTAGEMODEL LOCAL{}",
            f.dest.strip_prefix("file://").unwrap_or(&f.dest),
            if model.is_none() {
                " and a storage resource manager (RMCFG[...] RESOURCETYPE=STORAGE)"
            } else {
                ""
            }
        ))),
    }
}

/// The staging part of a published snapshot.
#[derive(Debug, Clone)]
pub struct StagingSnapshot {
    pub info: StorageInfo,
    /// Why a job's stage-in was not initiated yet.
    pub deferred: BTreeMap<JobId, StageWait>,
}

/// Which list of a job a file is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Dir {
    In,
    Out,
}

/// A call in flight: whose file, and what was asked.
#[derive(Debug, Clone, Copy)]
struct Pending {
    job: JobId,
    dir: Dir,
    file: usize,
    kind: Kind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Size,
    StageTime,
    Verify,
    Stage,
    /// An ended job's data.
    Remove,
    /// What a failed or re-placed transfer left (the file keeps its status).
    Cleanup,
    Cluster,
}

impl Kind {
    /// The RM function, as `mdiag -R` names failures.
    fn op(self) -> &'static str {
        match self {
            Kind::Cluster => "clusterquery",
            Kind::Size | Kind::StageTime | Kind::Verify => "systemquery",
            Kind::Stage | Kind::Remove | Kind::Cleanup => "systemmodify",
        }
    }
}

/// How many failures `mdiag -R` keeps.
const MAX_FAILURES: usize = 20;

/// The driver: the storage RM and what the daemon remembers between turns.
pub struct Driver {
    pub(crate) model: StageModel,
    rm: StorageRm,
    rm_name: String,
    rm_type: String,
    max_dsop: Option<u32>,
    max_node_ops: u32,
    target_usage: Option<f64>,
    bandwidth_kbps: Option<f64>,
    urls: [Option<String>; 3],
    requery: i64,
    timeout: i64,
    cleanup: bool,
    /// `DATASTAGELOCALDIR`.
    local_dir: String,
    /// The compute nodes are this machine (a `LOCAL` compute RM): `$LOCAL`
    /// is `file://`, else `scp://<node>/`.
    local_host: bool,
    /// `ENABLEIMPLICITSTAGEOUT` and `IMPLICITSTAGEOUTURL`.
    implicit: bool,
    implicit_url: String,
    cluster: Option<ClusterInfo>,
    cluster_at: Option<Time>,
    cluster_in_flight: bool,
    cluster_failed: bool,
    next_token: u64,
    pending: BTreeMap<u64, Pending>,
    last_query: BTreeMap<(JobId, Dir, usize), Time>,
    /// Why a job's stage-in was not initiated yet.
    deferred: BTreeMap<JobId, StageDeferral>,
    failures: VecDeque<StorageFailure>,
    last_round: Option<Time>,
    /// Finished jobs whose implicit stdout/stderr stage-out was considered.
    implicit_done: BTreeSet<JobId>,
    /// The last round left work that needs time to pass (queries, transfers).
    busy: bool,
    /// Jobs with staging records (until they are purged).
    tracked: BTreeSet<JobId>,
    /// checknode's `Total Time:` and `Active:`: since when, seconds with an
    /// active operation, and the last poll.
    since: Time,
    active_secs: i64,
    last_tick: Option<(Time, bool)>,
    /// The storage node's state (checknode) and since when.
    node_state: (String, Time),
}

impl Driver {
    /// The driver of the compute RM's `DATARM` (else the first storage RM,
    /// which `mdiag -C` warns about), or `None` when no storage RM is
    /// configured.
    pub fn from_config(cfg: &DaemonConfig, now: Time) -> Option<Driver> {
        let moab = &cfg.moab;
        let data = moab
            .rm(&cfg.compute_rm.0)
            .and_then(|c| c.data_rm.as_deref())
            .and_then(|d| moab.rm(d))
            .or_else(|| moab.rms.iter().find(|r| r.is_storage()))?;
        let model = match moab
            .data_stage_model
            .to_string()
            .to_ascii_uppercase()
            .as_str()
        {
            "LOOSE" => StageModel::Loose,
            "TIGHT" => StageModel::Tight,
            "LOCAL" => StageModel::Local,
            _ => StageModel::External,
        };
        let home = cfg.home.display().to_string();
        let tools = tools_dir(&cfg.home, moab.tools_dir.as_deref());
        let workers = data.max_dsop.unwrap_or(4).clamp(2, 8) as usize;
        let rm = StorageRm::new(StorageConfig {
            name: data.name.clone(),
            system_query: data.url("SYSTEMQUERYURL").map(str::to_string),
            cluster_query: data.url("CLUSTERQUERYURL").map(str::to_string),
            system_modify: data.url("SYSTEMMODIFYURL").map(str::to_string),
            tools_dir: tools.clone(),
            home: home.clone(),
            timeout: Duration::from_secs(data.timeout.max(1) as u64),
            workers,
            env: vec![
                ("MOABHOMEDIR".to_string(), home),
                ("TOOLSDIR".to_string(), tools),
            ],
        });
        let mut implicit_url = moab.implicit_stage_out_url.clone();
        if !implicit_url.ends_with('/') {
            implicit_url.push('/');
        }
        Some(Driver {
            model,
            rm,
            rm_name: data.name.clone(),
            rm_type: match &data.subtype {
                Some(s) => format!("{}:{s}", data.rm_type),
                None => data.rm_type.to_string(),
            },
            max_dsop: data.max_dsop.filter(|m| *m > 0),
            max_node_ops: data.max_dsop_per_node.max(1),
            target_usage: data.target_usage,
            bandwidth_kbps: data.bandwidth_kbps.map(|b| b as f64),
            urls: [
                data.url("CLUSTERQUERYURL").map(str::to_string),
                data.url("SYSTEMQUERYURL").map(str::to_string),
                data.url("SYSTEMMODIFYURL").map(str::to_string),
            ],
            requery: data.poll_interval.unwrap_or(2).clamp(1, 60),
            timeout: moab.data_stage_timeout.max(0),
            cleanup: moab.data_stage_cleanup,
            local_dir: moab.data_stage_local_dir.trim_end_matches('/').to_string(),
            local_host: cfg.compute_rm.1.eq_ignore_ascii_case("LOCAL"),
            implicit: moab.implicit_stage_out,
            implicit_url,
            cluster: None,
            cluster_at: None,
            cluster_in_flight: false,
            cluster_failed: false,
            next_token: 1,
            pending: BTreeMap::new(),
            last_query: BTreeMap::new(),
            deferred: BTreeMap::new(),
            failures: VecDeque::new(),
            last_round: None,
            implicit_done: BTreeSet::new(),
            busy: false,
            tracked: BTreeSet::new(),
            since: now,
            active_secs: 0,
            last_tick: None,
            node_state: ("Idle".to_string(), now),
        })
    }

    /// Starts tracking the jobs of a recovered state that have staging.
    pub fn track_all(&mut self, exec: &crate::actor::ExecMap) {
        for (id, rec) in exec {
            if !rec.stage_in.is_empty() || !rec.stage_out.is_empty() {
                self.tracked.insert(*id);
            }
        }
    }

    /// A new job with staging records.
    pub fn track(&mut self, job: JobId) {
        self.tracked.insert(job);
    }

    fn view(&self) -> StorageView {
        StorageView {
            max_dsop: self.max_dsop,
            max_node_ops: Some(self.max_node_ops),
            target_usage: self.target_usage,
            disk_mb: self.cluster.as_ref().and_then(|c| c.disk_mb),
            disk_avail_mb: self.cluster.as_ref().and_then(|c| c.disk_avail_mb),
            rate_kbps: self
                .cluster
                .as_ref()
                .and_then(|c| c.rate_kbps)
                .or(self.bandwidth_kbps),
            requery: self.requery,
            timeout: self.timeout,
            cleanup: self.cleanup,
        }
    }

    fn in_flight(&self, job: JobId, dir: Dir, file: usize) -> bool {
        self.pending
            .values()
            .any(|p| p.job == job && p.dir == dir && p.file == file)
    }

    /// A clean-up of the job's data is on its way: its `$LOCAL` files wait
    /// for it (on a LOCAL resource manager every node's `$LOCAL` is the
    /// same directory, which the clean-up deletes).
    fn cleaning(&self, job: JobId) -> bool {
        self.pending
            .values()
            .any(|p| p.job == job && p.kind == Kind::Cleanup)
    }

    fn staging_now(&self, job: JobId, dir: Dir, file: usize) -> bool {
        self.pending
            .values()
            .any(|p| p.job == job && p.dir == dir && p.file == file && p.kind == Kind::Stage)
    }

    fn fail(&mut self, now: Time, op: &str, msg: String) {
        tracing::warn!(rm = %self.rm_name, "{msg}");
        self.failures.push_back(StorageFailure {
            time: now,
            op: op.to_string(),
            message: msg,
        });
        while self.failures.len() > MAX_FAILURES {
            self.failures.pop_front();
        }
    }

    fn submit(&mut self, p: Pending, call: StorageCall) {
        let token = self.next_token;
        self.next_token += 1;
        self.pending.insert(token, p);
        self.rm.submit(token, call);
    }

    /// `$LOCAL` of a job: its directory under `DATASTAGELOCALDIR`.
    pub fn local_path(&self, job: JobId) -> String {
        format!("{}/{job}", self.local_dir)
    }

    /// A path on a compute node as a URL the scripts understand.
    fn node_url(&self, node: &str, path: &str) -> String {
        if self.local_host {
            format!("file://{path}")
        } else {
            format!("scp://{node}{path}")
        }
    }

    /// Where a stage-in file goes, as the scripts get it: `$HOME` expanded,
    /// `$LOCAL` resolved on `node` (`None` when it cannot be yet).
    fn dest_url(
        &self,
        job: JobId,
        f: &StageRecord,
        node: Option<&str>,
        home: Option<&str>,
    ) -> Option<String> {
        match local_dest(&f.dest) {
            None => Some(expand_home(&f.dest, home)),
            Some(LocalDest::Under(rel)) => {
                let base = self.local_path(job);
                let path = if rel.is_empty() {
                    base
                } else {
                    format!("{base}/{rel}")
                };
                Some(self.node_url(node?, &path))
            }
            Some(LocalDest::Absolute(p)) => Some(self.node_url(node?, p)),
        }
    }

    /// What `remove` deletes for a staged file: the file, or the job's whole
    /// `$LOCAL` directory (the job's node-local scratch goes with it).
    fn remove_url(
        &self,
        job: JobId,
        f: &StageRecord,
        node: Option<&str>,
        home: Option<&str>,
    ) -> Option<String> {
        match local_dest(&f.dest) {
            Some(LocalDest::Under(_)) => Some(self.node_url(node?, &self.local_path(job))),
            _ => self.dest_url(job, f, node, home),
        }
    }

    /// What readers see.
    pub fn snapshot(
        &self,
        exec: &crate::actor::ExecMap,
        state: &arches_core::State,
        now: Time,
    ) -> StagingSnapshot {
        StagingSnapshot {
            info: self.info(exec, state, now),
            deferred: self
                .deferred
                .iter()
                .map(|(j, d)| (*j, wait_info(d)))
                .collect(),
        }
    }

    /// checknode / mdiag -R.
    pub fn info(
        &self,
        exec: &crate::actor::ExecMap,
        state: &arches_core::State,
        now: Time,
    ) -> StorageInfo {
        let mut ops = Vec::new();
        let mut files: Vec<(JobId, OwnedPhase, Vec<StageFile>)> = Vec::new();
        for id in &self.tracked {
            let Some(rec) = exec.get(id) else { continue };
            if rec.stage_in.is_empty() {
                continue;
            }
            for f in &rec.stage_in {
                if f.status == "removed" {
                    continue;
                }
                ops.push(StorageOp {
                    job: id.to_string(),
                    status: f.status.clone(),
                    transferred: f.transferred,
                    size: f.size,
                    dest: f.dest.clone(),
                });
            }
            files.push((
                *id,
                phase_of(state, *id),
                rec.stage_in.iter().map(StageRecord::to_core).collect(),
            ));
        }
        let jobs: Vec<StageJob<'_>> = files
            .iter()
            .map(|(id, p, f)| StageJob {
                job: *id,
                files: f,
                reservation: None,
                phase: p.as_phase(),
            })
            .collect();
        let used = staging::usage(&jobs, self.cleanup);
        let c = self.cluster.clone().unwrap_or_default();
        StorageInfo {
            rm: self.rm_name.clone(),
            rm_type: self.rm_type.clone(),
            node: if c.name.is_empty() {
                self.rm_name.clone()
            } else {
                c.name.clone()
            },
            state: self.node_state.0.clone(),
            state_since: self.node_state.1,
            model: format!("{:?}", self.model).to_ascii_uppercase(),
            max_dsop: self.max_dsop,
            target_usage: self.target_usage,
            disk_mb: c.disk_mb,
            disk_avail_mb: c.disk_avail_mb,
            rate_kbps: c.rate_kbps.or(self.bandwidth_kbps),
            dedicated_mb: used.dedicated_mb(),
            active_ops: used.ops,
            cluster_query_url: self.urls[0].clone(),
            system_query_url: self.urls[1].clone(),
            system_modify_url: self.urls[2].clone(),
            operations: ops,
            failures: self.failures.iter().cloned().collect(),
            last_update: self.cluster_at.unwrap_or(self.since).min(now),
            in_flight: self.rm.in_flight() as u32,
            since: self.since,
            active_secs: self.active_secs,
        }
    }
}

/// A job's phase with owned data (the node name).
#[derive(Debug, Clone, PartialEq, Eq)]
enum OwnedPhase {
    Queued,
    Allocated(String),
    Running,
    Ended,
}

impl OwnedPhase {
    fn as_phase(&self) -> Phase<'_> {
        match self {
            OwnedPhase::Queued => Phase::Queued,
            OwnedPhase::Allocated(n) => Phase::Allocated { node: n },
            OwnedPhase::Running => Phase::Running,
            OwnedPhase::Ended => Phase::Ended,
        }
    }
}

/// Where a job is, for staging. A job the state no longer has is ended.
fn phase_of(state: &arches_core::State, id: JobId) -> OwnedPhase {
    let Some(j) = state.job(id) else {
        return OwnedPhase::Ended;
    };
    match j.state {
        JobState::Idle => OwnedPhase::Queued,
        JobState::Staging | JobState::Staged => {
            let node = j
                .run
                .as_ref()
                .and_then(|r| r.alloc.first())
                .and_then(|a| state.node(a.node))
                .map(|n| n.name.clone())
                .unwrap_or_default();
            OwnedPhase::Allocated(node)
        }
        s if s.is_finished() => OwnedPhase::Ended,
        _ => OwnedPhase::Running,
    }
}

/// The API form of a deferral.
fn wait_info(d: &StageDeferral) -> StageWait {
    match d {
        StageDeferral::MaxDsop(limit) => StageWait::MaxDsop { limit: *limit },
        StageDeferral::NodeBusy { node, limit } => StageWait::NodeBusy {
            node: node.clone(),
            limit: *limit,
        },
        StageDeferral::TargetUsage {
            dedicated,
            size,
            target,
        } => StageWait::TargetUsage {
            dedicated: *dedicated,
            size: *size,
            target: *target,
        },
        StageDeferral::DiskFull { avail, size } => StageWait::DiskFull {
            avail: *avail,
            size: *size,
        },
        StageDeferral::NotYet(t) => StageWait::Begin { at: *t },
    }
}

/// `$TOOLSDIR`: `TOOLSDIR` when set (relative to the home); otherwise the
/// tools installed next to the binaries (`<bin>/../share/arches/tools`,
/// `<bin>/tools`), then `$MOABHOMEDIR/tools`, and for a binary built in the
/// source tree (`target/...`), the tree's `tools/`.
pub fn tools_dir(home: &std::path::Path, configured: Option<&str>) -> String {
    let exe = std::env::current_exe().ok();
    tools_dir_for(exe.as_deref(), home, configured)
}

/// [`tools_dir`] for the binary at `exe`.
fn tools_dir_for(
    exe: Option<&std::path::Path>,
    home: &std::path::Path,
    configured: Option<&str>,
) -> String {
    if let Some(c) = configured {
        let p = std::path::Path::new(c);
        let p = if p.is_absolute() {
            p.to_path_buf()
        } else {
            home.join(p)
        };
        return p.display().to_string();
    }
    let exe_dir = exe.and_then(|e| e.parent().map(std::path::Path::to_path_buf));
    let mut candidates = Vec::new();
    if let Some(d) = &exe_dir {
        candidates.push(d.join("../share/arches/tools"));
        candidates.push(d.join("tools"));
    }
    candidates.push(home.join("tools"));
    let source = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let in_tree = exe
        .zip(source.canonicalize().ok())
        .is_some_and(|(e, s)| e.starts_with(s.join("target")));
    if in_tree {
        candidates.push(source.join("tools"));
    }
    candidates
        .into_iter()
        .find(|c| c.join("dstage.query").exists())
        .map(|c| c.canonicalize().unwrap_or(c).display().to_string())
        .unwrap_or_else(|| home.join("tools").display().to_string())
}

/// `$HOME` in a staging URL is the job owner's home directory.
fn expand_home(url: &str, home: Option<&str>) -> String {
    match home {
        Some(h) => url.replace("$HOME", h.trim_end_matches('/')),
        None => url.to_string(),
    }
}

/// `1:02:03` for an error message.
fn hms(secs: i64) -> String {
    let s = secs.max(0);
    format!("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
}

/// A round's inputs: every tracked job's phase, files and reservation.
struct RoundJob {
    id: JobId,
    phase: OwnedPhase,
    files: Vec<StageFile>,
    reservation: Option<Time>,
    held: bool,
}

impl Actor {
    /// The script user of a job: its owner, with home and groups.
    fn caller(&self, job: JobId, rec: &ExecRecord) -> Caller {
        let info = crate::ident::user_by_uid(rec.uid);
        Caller {
            name: self
                .state
                .job(job)
                .map(|j| j.cred.user.to_string())
                .or_else(|| info.as_ref().map(|u| u.name.clone()))
                .unwrap_or_default(),
            uid: rec.uid,
            gid: rec.gid,
            home: info.map(|u| u.home).unwrap_or_default(),
            groups: rec.groups.clone(),
        }
    }

    /// Collects finished storage calls; asks for the cluster state when due.
    pub(crate) fn staging_poll(&mut self, now: Time) {
        let Some(mut d) = self.staging.take() else {
            return;
        };
        if let Some((t, active)) = d.last_tick {
            if active {
                d.active_secs += (now - t).max(0);
            }
        }
        let active = d.tracked.iter().any(|id| {
            self.exec
                .get(id)
                .is_some_and(|r| r.stage_in.iter().any(|f| f.status == "active"))
        });
        d.last_tick = Some((now, active));
        let cluster_due = d.urls[0].is_some()
            && !d.cluster_in_flight
            && d.cluster_at
                .is_none_or(|t| now - t >= self.cfg.policy.rm_poll_interval.max(1));
        if cluster_due {
            d.cluster_in_flight = true;
            d.cluster_at = Some(now);
            d.submit(
                Pending {
                    job: 0,
                    dir: Dir::In,
                    file: 0,
                    kind: Kind::Cluster,
                },
                StorageCall::Cluster,
            );
        }
        for r in d.rm.poll() {
            let Some(p) = d.pending.remove(&r.token) else {
                continue;
            };
            if p.kind == Kind::Cluster {
                d.cluster_in_flight = false;
                match r.outcome {
                    Ok(StorageReply::Cluster(info)) => {
                        if d.cluster.as_ref() != Some(&info) {
                            self.wake = true;
                        }
                        d.cluster = Some(info);
                        d.cluster_failed = false;
                    }
                    Ok(_) => {}
                    Err(e) => {
                        d.cluster_failed = true;
                        d.fail(
                            now,
                            Kind::Cluster.op(),
                            format!("cluster query failed: {e}"),
                        );
                    }
                }
                continue;
            }
            if p.kind != Kind::Cleanup {
                d.last_query.insert((p.job, p.dir, p.file), now);
            }
            self.wake = true;
            self.record_result(&mut d, p, r.outcome, now);
        }
        let state = if d.cluster_failed {
            "Down".to_string()
        } else {
            d.cluster
                .as_ref()
                .and_then(|c| c.state.clone())
                .unwrap_or_else(|| "Idle".to_string())
        };
        if state != d.node_state.0 {
            d.node_state = (state, now);
        }
        if d.busy && d.last_round.is_none_or(|t| now - t >= d.requery) {
            self.wake = true;
        }
        self.staging = Some(d);
    }

    fn record_result(
        &mut self,
        d: &mut Driver,
        p: Pending,
        outcome: Result<StorageReply, String>,
        now: Time,
    ) {
        let ended = self.state.job(p.job).is_none_or(|j| j.state.is_finished());
        let Some(rec) = self.exec.get_mut(&p.job) else {
            return;
        };
        let rec = Arc::make_mut(rec);
        let list = match p.dir {
            Dir::In => &mut rec.stage_in,
            Dir::Out => &mut rec.stage_out,
        };
        let Some(f) = list.get_mut(p.file) else {
            return;
        };
        let what = if p.dir == Dir::In {
            "stage-in"
        } else {
            "stage-out"
        };
        self.dirty.insert(p.job);
        match p.kind {
            Kind::Cleanup => {
                if let Err(e) = outcome {
                    d.fail(
                        now,
                        p.kind.op(),
                        format!(
                            "job {}: cannot remove what the {what} to {} left: {e}",
                            p.job, f.dest
                        ),
                    );
                }
                return;
            }
            Kind::Remove => {
                if let Err(e) = outcome {
                    d.fail(
                        now,
                        p.kind.op(),
                        format!("job {}: cannot remove {}: {e}", p.job, f.dest),
                    );
                    f.error = Some(format!("not removed: {e}"));
                }
                // Removed (or given up on): it no longer counts as staging's.
                f.status = StageStatus::Removed.as_str().to_string();
                tracing::info!(job = p.job, dest = %f.dest, "staged data removed");
                return;
            }
            _ => {}
        }
        let failure = match (p.kind, outcome) {
            (_, Err(e)) => Some(e),
            (Kind::Size, Ok(StorageReply::FileSize(s))) => {
                f.size = s.or(f.size);
                None
            }
            (Kind::StageTime, Ok(StorageReply::StageTime { secs, size })) => {
                f.estimate = secs;
                f.size = size.or(f.size);
                None
            }
            (Kind::Verify, Ok(StorageReply::FileSize(Some(n)))) => {
                if f.size.is_none_or(|s| n >= s) {
                    f.size = Some(f.size.unwrap_or(n));
                    f.transferred = n;
                    f.status = StageStatus::Complete.as_str().to_string();
                    tracing::info!(job = p.job, dest = %f.dest, "{what} complete");
                } else {
                    f.transferred = n;
                }
                None
            }
            (Kind::Verify, Ok(StorageReply::FileSize(None))) => None,
            (Kind::Stage, Ok(StorageReply::StageTime { secs, size })) => {
                if ended && p.dir == Dir::In {
                    // Cancelled while the request was on its way: the
                    // transfer is removed with the job's other data.
                    f.started = Some(now);
                    f.status = StageStatus::Active.as_str().to_string();
                    return;
                }
                f.status = StageStatus::Active.as_str().to_string();
                f.started = Some(now);
                f.estimate = secs.or(f.estimate);
                f.size = size.or(f.size);
                None
            }
            (_, Ok(other)) => Some(format!("unexpected answer {other:?}")),
        };
        if let Some(e) = failure {
            let msg = format!("{what} of {} failed: {e}", f.dest);
            f.status = StageStatus::Failed.as_str().to_string();
            f.error = Some(e);
            d.fail(now, p.kind.op(), format!("job {}: {msg}", p.job));
            if p.dir == Dir::In {
                self.stage_failed(p.job, msg, now);
            } else {
                self.note(p.job, msg);
            }
        }
    }

    /// A job's stage-in failed: a LOCAL job holding its allocation gives it
    /// back; the job gets the `DATASTAGEHOLDTYPE` hold and the reason.
    fn stage_failed(&mut self, job: JobId, msg: String, now: Time) {
        let Some(j) = self.state.job(job) else { return };
        let hold = self.cfg.moab.data_stage_hold;
        let allocated = matches!(j.state, JobState::Staging | JobState::Staged);
        let queued = j.state == JobState::Idle;
        let already = j.holds.contains(hold);
        if allocated {
            self.apply(Event::Requeue { job }, now);
        } else if !queued || already {
            return;
        }
        self.note(job, msg);
        self.apply(Event::SetHold { job, hold }, now);
    }

    /// Every tracked job for a round: the queued ones in `plan`'s priority
    /// order, then the others; files as the core sees them.
    fn round_jobs(&self, d: &Driver, plan: &arches_core::Plan, now: Time) -> Vec<RoundJob> {
        let mut out: Vec<(u32, RoundJob)> = Vec::new();
        for &id in &d.tracked {
            let Some(rec) = self.exec.get(&id) else {
                continue;
            };
            if rec.stage_in.is_empty() {
                continue;
            }
            let phase = phase_of(&self.state, id);
            let files = rec
                .stage_in
                .iter()
                .enumerate()
                .map(|(i, r)| {
                    let mut f = r.to_core();
                    f.in_flight = d.in_flight(id, Dir::In, i) || (f.is_local() && d.cleaning(id));
                    // A stage request on its way counts as an operation.
                    if d.staging_now(id, Dir::In, i) {
                        f.status = StageStatus::Active;
                        f.started = f.started.or(Some(now));
                    }
                    f.last_query = d.last_query.get(&(id, Dir::In, i)).copied();
                    f
                })
                .collect();
            let rank = match phase {
                OwnedPhase::Queued => plan.decisions.get(&id).map_or(u32::MAX - 1, |x| x.rank),
                _ => u32::MAX,
            };
            let held = self.state.job(id).is_some_and(|j| !j.holds.is_empty());
            out.push((
                rank,
                RoundJob {
                    id,
                    phase,
                    files,
                    reservation: plan.reservation(id).map(|r| r.start),
                    held,
                },
            ));
        }
        out.sort_by_key(|(rank, j)| (*rank, j.id));
        out.into_iter().map(|(_, j)| j).collect()
    }

    /// Before the scheduling plan: data waits, queries, verifications,
    /// removals, failures, overruns, and the launch of LOCAL jobs whose data
    /// is there.
    pub(crate) fn staging_before(&mut self, now: Time) {
        let Some(mut d) = self.staging.take() else {
            return;
        };
        d.last_round = Some(now);
        d.tracked.retain(|id| self.exec.contains_key(id));
        self.retry_released(&d);
        self.reset_requeued_local(&mut d);
        let plan = Arc::clone(&self.plan);
        let jobs = self.round_jobs(&d, &plan, now);
        let view: Vec<StageJob<'_>> = jobs
            .iter()
            .map(|j| StageJob {
                job: j.id,
                files: &j.files,
                reservation: j.reservation,
                phase: j.phase.as_phase(),
            })
            .collect();
        let sp = staging::plan(d.model, &d.view(), &view, now);
        let rate = d.view().rate_kbps.unwrap_or(0.0);
        let nodes: BTreeMap<JobId, String> = jobs
            .iter()
            .filter_map(|j| match &j.phase {
                OwnedPhase::Allocated(n) => Some((j.id, n.clone())),
                _ => None,
            })
            .collect();
        drop(view);
        drop(jobs);
        for a in &sp.actions {
            if matches!(a, StageAction::Stage { .. }) {
                continue;
            }
            self.submit_action(&mut d, a, nodes.get(&a.job()).map(String::as_str), rate);
        }
        for &(job, i) in &sp.expired {
            self.expire(&mut d, job, i, now);
        }
        for (job, why) in &sp.failed {
            self.stage_failed(*job, why.clone(), now);
        }
        for &job in &sp.ready {
            let local = ("LOCAL".to_string(), d.local_path(job));
            self.launch_staged(job, local, now);
        }
        d.busy = sp.waits.iter().any(|(_, w)| w.is_some()) || !d.pending.is_empty();
        for (job, wait) in sp.waits {
            if self.state.job(job).is_some_and(|j| j.data_wait != wait) {
                self.apply(
                    Event::Modify {
                        job,
                        change: JobChange::DataWait(wait),
                    },
                    now,
                );
            }
        }
        // A job that left the queue no longer waits for data.
        let stale: Vec<JobId> = self
            .state
            .jobs()
            .filter(|j| j.data_wait.is_some() && j.state != JobState::Idle)
            .map(|j| j.id)
            .collect();
        for job in stale {
            self.apply(
                Event::Modify {
                    job,
                    change: JobChange::DataWait(None),
                },
                now,
            );
        }
        self.stage_out(&mut d, now);
        self.staging = Some(d);
    }

    /// After the scheduling plan: initiates the transfers its reservations
    /// call for (never for a held job), and records why others wait.
    pub(crate) fn staging_after(&mut self, now: Time) {
        let Some(mut d) = self.staging.take() else {
            return;
        };
        let plan = Arc::clone(&self.plan);
        let jobs = self.round_jobs(&d, &plan, now);
        let view: Vec<StageJob<'_>> = jobs
            .iter()
            .map(|j| StageJob {
                job: j.id,
                files: &j.files,
                reservation: j.reservation,
                phase: j.phase.as_phase(),
            })
            .collect();
        let sp = staging::plan(d.model, &d.view(), &view, now);
        let held: BTreeSet<JobId> = jobs.iter().filter(|j| j.held).map(|j| j.id).collect();
        let nodes: BTreeMap<JobId, String> = jobs
            .iter()
            .filter_map(|j| match &j.phase {
                OwnedPhase::Allocated(n) => Some((j.id, n.clone())),
                _ => None,
            })
            .collect();
        drop(view);
        drop(jobs);
        for a in &sp.actions {
            if matches!(a, StageAction::Stage { .. }) && !held.contains(&a.job()) {
                self.submit_action(&mut d, a, nodes.get(&a.job()).map(String::as_str), 0.0);
                d.busy = true;
            }
        }
        d.deferred = sp
            .deferred
            .into_iter()
            .filter(|(j, _)| !held.contains(j))
            .collect();
        self.staging = Some(d);
    }

    /// Hands one decision to the storage RM.
    fn submit_action(&mut self, d: &mut Driver, a: &StageAction, node: Option<&str>, rate: f64) {
        let (job, i) = (a.job(), a.file());
        let Some(rec) = self.exec.get(&job).cloned() else {
            return;
        };
        let Some(f) = rec.stage_in.get(i) else {
            return;
        };
        let user = self.caller(job, &rec);
        let home = (!user.home.is_empty()).then(|| user.home.clone());
        let home = home.as_deref();
        let src = expand_home(&f.src, home);
        let node = f.node.as_deref().or(node);
        let (kind, call) = match a {
            StageAction::QuerySize { .. } => (Kind::Size, StorageCall::FileSize { user, url: src }),
            StageAction::QueryStageTime { .. } => {
                // A $LOCAL destination is not known before the job has
                // nodes: the estimate does not depend on it.
                let dest = d
                    .dest_url(job, f, node, home)
                    .unwrap_or_else(|| f.dest.clone());
                (
                    Kind::StageTime,
                    StorageCall::StageTime {
                        user,
                        src,
                        dest,
                        rate_kbps: rate,
                    },
                )
            }
            StageAction::Verify { .. } => {
                let Some(dest) = d.dest_url(job, f, node, home) else {
                    return;
                };
                (Kind::Verify, StorageCall::FileSize { user, url: dest })
            }
            StageAction::Stage { .. } => {
                let Some(dest) = d.dest_url(job, f, node, home) else {
                    return;
                };
                if staging::is_local(&f.dest) {
                    // Remember where it goes: verification, removal.
                    let r = Arc::make_mut(self.exec.get_mut(&job).expect("job has a record"));
                    r.stage_in[i].node = node.map(str::to_string);
                    self.dirty.insert(job);
                }
                (Kind::Stage, StorageCall::Stage { user, src, dest })
            }
            StageAction::Remove { .. } => {
                let Some(url) = d.remove_url(job, f, node, home) else {
                    // A $LOCAL file whose node is unknown was never staged.
                    let r = Arc::make_mut(self.exec.get_mut(&job).expect("job has a record"));
                    r.stage_in[i].status = StageStatus::Removed.as_str().to_string();
                    self.dirty.insert(job);
                    return;
                };
                (Kind::Remove, StorageCall::Remove { user, url })
            }
        };
        d.submit(
            Pending {
                job,
                dir: Dir::In,
                file: i,
                kind,
            },
            call,
        );
    }

    /// A transfer past its deadline: failed, what it left removed.
    fn expire(&mut self, d: &mut Driver, job: JobId, i: usize, now: Time) {
        let Some(rec) = self.exec.get(&job).cloned() else {
            return;
        };
        let Some(f) = rec.stage_in.get(i) else { return };
        let limit = f
            .started
            .zip(d.view().deadline(&f.to_core()))
            .map_or(0, |(s, dl)| dl - s);
        let msg = format!(
            "stage-in of {} did not complete within {} (DATASTAGETIMEOUT, or 3 times its estimated stage time)",
            f.dest,
            hms(limit)
        );
        let user = self.caller(job, &rec);
        let home = (!user.home.is_empty()).then(|| user.home.clone());
        if let Some(url) = d.remove_url(job, f, f.node.as_deref(), home.as_deref()) {
            d.submit(
                Pending {
                    job,
                    dir: Dir::In,
                    file: i,
                    kind: Kind::Cleanup,
                },
                StorageCall::Remove { user, url },
            );
        }
        let r = Arc::make_mut(self.exec.get_mut(&job).expect("job has a record"));
        let f = &mut r.stage_in[i];
        f.status = StageStatus::Failed.as_str().to_string();
        f.error = Some(msg.clone());
        self.dirty.insert(job);
        d.fail(now, Kind::Stage.op(), format!("job {job}: {msg}"));
        self.stage_failed(job, msg, now);
    }

    /// A released job whose staging had failed: try again.
    fn retry_released(&mut self, d: &Driver) {
        let retry: Vec<JobId> = d
            .tracked
            .iter()
            .copied()
            .filter(|id| {
                self.state
                    .job(*id)
                    .is_some_and(|j| j.state == JobState::Idle && j.holds.is_empty())
                    && self.exec[id].stage_in.iter().any(|f| f.status == "failed")
            })
            .collect();
        for id in retry {
            let rec = Arc::make_mut(self.exec.get_mut(&id).expect("job has a record"));
            for f in rec.stage_in.iter_mut().filter(|f| f.status == "failed") {
                f.status = StageStatus::Pending.as_str().to_string();
                f.error = None;
                f.started = None;
                f.transferred = 0;
                f.node = None;
            }
            self.dirty.insert(id);
        }
    }

    /// A LOCAL job back in the queue (requeued, its start lost, its staging
    /// failed): the data it had on its old node is removed, and staged again
    /// to its next allocation.
    fn reset_requeued_local(&mut self, d: &mut Driver) {
        let stale: Vec<JobId> = d
            .tracked
            .iter()
            .copied()
            .filter(|id| {
                self.state
                    .job(*id)
                    .is_some_and(|j| j.state == JobState::Idle)
            })
            .filter(|id| {
                self.exec[id].stage_in.iter().any(|f| {
                    staging::is_local(&f.dest)
                        && (f.node.is_some() || matches!(f.status.as_str(), "active" | "complete"))
                })
            })
            .collect();
        for id in stale {
            let rec = self.exec[&id].clone();
            let user = self.caller(id, &rec);
            let mut removed = BTreeSet::new();
            for (i, f) in rec.stage_in.iter().enumerate() {
                if !staging::is_local(&f.dest) {
                    continue;
                }
                if let Some(url) = d.remove_url(id, f, f.node.as_deref(), None) {
                    if f.started.is_some() && removed.insert(url.clone()) {
                        d.submit(
                            Pending {
                                job: id,
                                dir: Dir::In,
                                file: i,
                                kind: Kind::Cleanup,
                            },
                            StorageCall::Remove {
                                user: user.clone(),
                                url,
                            },
                        );
                    }
                }
            }
            let r = Arc::make_mut(self.exec.get_mut(&id).expect("job has a record"));
            for f in r.stage_in.iter_mut().filter(|f| staging::is_local(&f.dest)) {
                f.node = None;
                f.started = None;
                f.transferred = 0;
                if f.status != "failed" {
                    f.status = StageStatus::Pending.as_str().to_string();
                }
            }
            self.dirty.insert(id);
        }
    }

    /// Whether a job about to start must first stage its `$LOCAL` files
    /// (it is then allocated in state `Staging`, not launched).
    pub(crate) fn needs_local_staging(&self, job: JobId) -> bool {
        self.staging
            .as_ref()
            .is_some_and(|d| d.model == StageModel::Local)
            && self.exec.get(&job).is_some_and(|r| {
                r.stage_in
                    .iter()
                    .any(|f| staging::is_local(&f.dest) && f.status != "complete")
            })
    }

    /// `$LOCAL` of a job that has `$LOCAL` files (its environment).
    pub(crate) fn local_env(&self, job: JobId) -> Option<(String, String)> {
        let d = self
            .staging
            .as_ref()
            .filter(|d| d.model == StageModel::Local)?;
        let rec = self.exec.get(&job)?;
        rec.stage_in
            .iter()
            .any(|f| staging::is_local(&f.dest))
            .then(|| ("LOCAL".to_string(), d.local_path(job)))
    }

    /// A LOCAL job whose `$LOCAL` data is all there: `Staged`, then launched
    /// (durably, as a start intent first) and `Running` from now.
    fn launch_staged(&mut self, id: JobId, local: (String, String), now: Time) {
        let Some(job) = self.state.job(id) else {
            return;
        };
        if !matches!(job.state, JobState::Staging | JobState::Staged) {
            return;
        }
        if job.state == JobState::Staging {
            self.apply(
                Event::Modify {
                    job: id,
                    change: JobChange::Phase(JobState::Staged),
                },
                now,
            );
        }
        if let Err(e) = self.launch(id, Some(local), now) {
            tracing::warn!(job = id, error = %e, "launch after staging failed");
            self.note(id, format!("cannot start job: {e}"));
            self.apply(Event::Requeue { job: id }, now);
        }
    }

    /// Stage-out of finished jobs: initiate, then verify.
    fn stage_out(&mut self, d: &mut Driver, now: Time) {
        if d.urls[2].is_none() {
            return;
        }
        if d.implicit {
            self.implicit_stage_out(d, now);
        }
        let jobs: Vec<JobId> = d
            .tracked
            .iter()
            .copied()
            .filter(|id| {
                self.exec.get(id).is_some_and(|r| {
                    r.stage_out
                        .iter()
                        .any(|f| matches!(f.status.as_str(), "pending" | "active"))
                })
            })
            .filter(|id| self.state.job(*id).is_some_and(|j| j.state.is_finished()))
            .collect();
        for job in jobs {
            let rec = self.exec[&job].clone();
            let user = self.caller(job, &rec);
            let home = (!user.home.is_empty()).then(|| user.home.clone());
            let mut calls = Vec::new();
            for (i, f) in rec.stage_out.iter().enumerate() {
                if d.in_flight(job, Dir::Out, i) {
                    continue;
                }
                let due = d
                    .last_query
                    .get(&(job, Dir::Out, i))
                    .is_none_or(|t| now - t >= d.requery);
                let src = expand_home(&f.src, home.as_deref());
                let dest = expand_home(&f.dest, home.as_deref());
                match f.status.as_str() {
                    "pending" => calls.push((
                        i,
                        Kind::Stage,
                        StorageCall::Stage {
                            user: user.clone(),
                            src,
                            dest,
                        },
                    )),
                    "active" if due => calls.push((
                        i,
                        Kind::Verify,
                        StorageCall::FileSize {
                            user: user.clone(),
                            url: dest,
                        },
                    )),
                    _ => {}
                }
            }
            for (file, kind, call) in calls {
                d.busy = true;
                d.submit(
                    Pending {
                        job,
                        dir: Dir::Out,
                        file,
                        kind,
                    },
                    call,
                );
            }
        }
    }

    /// Moab §17.12.7: when a job completes successfully, its standard output
    /// and error are staged to `IMPLICITSTAGEOUTURL` (the user's home
    /// directory), unless they are already there. Recorded once, as STAGEOUT
    /// entries.
    fn implicit_stage_out(&mut self, d: &mut Driver, now: Time) {
        let done: Vec<JobId> = self
            .state
            .jobs()
            .filter(|j| {
                j.completion.is_some_and(|c| {
                    c.code == arches_core::CompletionCode::Exit(0) && now - c.time < 3600
                })
            })
            .map(|j| j.id)
            .filter(|id| !d.implicit_done.contains(id))
            .collect();
        if d.implicit_done.len() > 10_000 {
            d.implicit_done.retain(|id| self.state.job(*id).is_some());
        }
        for id in done {
            d.implicit_done.insert(id);
            let Some(rec) = self.exec.get(&id) else {
                continue;
            };
            let home = crate::ident::user_by_uid(rec.uid).map(|u| u.home);
            let dir = expand_home(&d.implicit_url, home.as_deref());
            if dir.contains("$HOME") {
                continue;
            }
            let dir_path = dir.strip_prefix("file://").map(str::to_string);
            let mut files = vec![rec.stdout.clone()];
            if !rec.join {
                files.push(rec.stderr.clone());
            }
            let new: Vec<StageRecord> = files
                .into_iter()
                .filter(|f| f.starts_with('/'))
                .filter(|f| {
                    dir_path
                        .as_deref()
                        .is_none_or(|p| !f.starts_with(p) || f[p.len()..].contains('/'))
                })
                .filter(|f| !rec.stage_out.iter().any(|o| o.src == format!("file://{f}")))
                .filter_map(|f| {
                    let name = f.rsplit('/').next()?.to_string();
                    Some(StageRecord {
                        src: format!("file://{f}"),
                        dest: format!("{}{name}", d.implicit_url),
                        status: StageStatus::Pending.as_str().to_string(),
                        ..StageRecord::default()
                    })
                })
                .collect();
            if new.is_empty() {
                continue;
            }
            let rec = Arc::make_mut(self.exec.get_mut(&id).expect("job has a record"));
            rec.stage_out.extend(new);
            self.dirty.insert(id);
            d.tracked.insert(id);
        }
    }
}

/// checkjob's staging lines of a job; the reason its stage-in waits goes on
/// its first pending file.
pub fn stage_lines(
    rec: &ExecRecord,
    wait: Option<DataWait>,
    deferral: Option<&StageWait>,
) -> Vec<StageLine> {
    let mut deferral = deferral.cloned();
    let line = |dir: &str, f: &StageRecord, deferral: &mut Option<StageWait>| StageLine {
        direction: dir.to_string(),
        src: f.src.clone(),
        dest: f.dest.clone(),
        size: f.size,
        transferred: f.transferred,
        status: f.status.clone(),
        ready: wait.and_then(DataWait::ready_at).filter(|_| dir == "in"),
        error: f.error.clone(),
        wait: if dir == "in" && f.status == "pending" {
            deferral.take()
        } else {
            None
        },
        node: f.node.clone(),
    };
    let mut out: Vec<StageLine> = rec
        .stage_in
        .iter()
        .map(|f| line("in", f, &mut deferral))
        .collect();
    out.extend(rec.stage_out.iter().map(|f| line("out", f, &mut deferral)));
    out
}

/// checkjob notes about a job's staging: Moab's warning when no storage RM
/// stages the job's data.
pub fn job_notes(s: &crate::actor::Snapshot, rec: &ExecRecord) -> Vec<String> {
    let mut out = Vec::new();
    if s.staging.is_none() && !rec.stage_in.is_empty() {
        out.push(format!(
            "  WARNING:  job has required stage-in data, but RM '{0}' has no associated data RM configured for data staging (assuming RM '{0}' will handle data staging)",
            s.rm_name
        ));
    }
    out
}

/// The storage RMs matching a checknode/mdiag name (all for `None`/`ALL`).
pub fn storage_view(s: &crate::actor::Snapshot, name: Option<&str>) -> Vec<StorageInfo> {
    s.staging
        .iter()
        .map(|st| st.info.clone())
        .filter(|i| name.is_none_or(|n| n.eq_ignore_ascii_case("ALL") || n == i.node || n == i.rm))
        .collect()
}

/// The reason a job's stage-in waits, for its checkjob lines.
pub fn deferral(s: &crate::actor::Snapshot, job: JobId) -> Option<&StageWait> {
    s.staging.as_ref()?.deferred.get(&job)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tools_in(dir: &std::path::Path) {
        std::fs::create_dir_all(dir).unwrap();
        std::fs::write(dir.join("dstage.query"), "#!/bin/sh\n").unwrap();
    }

    #[test]
    fn installed_tools_next_to_the_binary_come_first() {
        let t = tempfile::tempdir().unwrap();
        let prefix = t.path().join("prefix");
        let home = t.path().join("home");
        let installed = prefix.join("share/arches/tools");
        tools_in(&installed);
        tools_in(&home.join("tools"));
        let exe = prefix.join("bin/moab");
        std::fs::create_dir_all(prefix.join("bin")).unwrap();
        let canon = |p: &std::path::Path| p.canonicalize().unwrap().display().to_string();
        assert_eq!(tools_dir_for(Some(&exe), &home, None), canon(&installed));
        // TOOLSDIR wins when set (relative to the home directory).
        assert_eq!(
            tools_dir_for(Some(&exe), &home, Some("mytools")),
            home.join("mytools").display().to_string()
        );
        assert_eq!(tools_dir_for(Some(&exe), &home, Some("/opt/t")), "/opt/t");
        // Not installed: $MOABHOMEDIR/tools.
        let elsewhere = t.path().join("elsewhere/bin/moab");
        std::fs::create_dir_all(t.path().join("elsewhere/bin")).unwrap();
        assert_eq!(
            tools_dir_for(Some(&elsewhere), &home, None),
            canon(&home.join("tools"))
        );
        // A binary outside the source tree never falls back to it.
        let bare = t.path().join("bare");
        assert_eq!(
            tools_dir_for(Some(&elsewhere), &bare, None),
            bare.join("tools").display().to_string()
        );
    }
}
