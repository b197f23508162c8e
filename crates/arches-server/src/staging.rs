//! The daemon's data-staging driver (Moab §17.12): the job's `STAGEIN` /
//! `STAGEOUT` records, the storage resource manager's scripts, and the
//! decisions of [`arches_core::staging::plan`].
//!
//! Each scheduling iteration, before the plan, [`Actor::staging_round`] asks
//! the core what to query or stage for the queued jobs (priority order,
//! `MAXDSOP`, `TARGETUSAGE`, TIGHT timing), hands those calls to the storage
//! RM's worker threads and sets every job's [`DataWait`]. Every turn,
//! [`Actor::staging_poll`] collects finished calls and records them on the
//! jobs (size, estimate, active, complete, failed). A failure puts the
//! `DATASTAGEHOLDTYPE` hold on the job with a message; releasing the hold
//! retries. Nothing here blocks the actor: scripts run on the RM's threads
//! with a timeout.

use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;
use std::time::Duration;

use arches_api::{StageLine, StorageInfo, StorageOp};
use arches_core::staging::{
    self, DataWait, StageAction, StageFile, StageJob, StageModel, StageStatus, StorageView,
};
use arches_core::state::JobChange;
use arches_core::{Event, JobId, Time};
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

/// The staging part of a published snapshot.
#[derive(Debug, Clone)]
pub struct StagingSnapshot {
    pub info: StorageInfo,
    /// Why a job's stage-in was not initiated yet.
    pub deferred: BTreeMap<JobId, String>,
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
    Cluster,
}

/// The driver: the storage RM and what the daemon remembers between turns.
pub struct Driver {
    pub(crate) model: StageModel,
    rm: StorageRm,
    rm_name: String,
    max_dsop: Option<u32>,
    target_usage: Option<f64>,
    bandwidth_kbps: Option<f64>,
    urls: [Option<String>; 3],
    requery: i64,
    cluster: Option<ClusterInfo>,
    cluster_at: Option<Time>,
    cluster_in_flight: bool,
    next_token: u64,
    pending: BTreeMap<u64, Pending>,
    last_query: BTreeMap<(JobId, Dir, usize), Time>,
    /// Why a job's stage-in was not initiated yet.
    deferred: BTreeMap<JobId, String>,
    failures: VecDeque<String>,
    last_round: Option<Time>,
    /// Finished jobs whose implicit stdout/stderr stage-out was considered.
    implicit_done: std::collections::BTreeSet<JobId>,
    /// The last round left work that needs time to pass (queries, transfers).
    busy: bool,
}

impl Driver {
    /// The driver of the compute RM's `DATARM` (else the first storage RM),
    /// or `None` when no storage RM is configured.
    pub fn from_config(cfg: &DaemonConfig) -> Option<Driver> {
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
        let tools = tools_dir(&cfg.home, &moab.tools_dir);
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
        Some(Driver {
            model,
            rm,
            rm_name: data.name.clone(),
            max_dsop: data.max_dsop.filter(|m| *m > 0),
            target_usage: data.target_usage,
            bandwidth_kbps: data.bandwidth_kbps.map(|b| b as f64),
            urls: [
                data.url("CLUSTERQUERYURL").map(str::to_string),
                data.url("SYSTEMQUERYURL").map(str::to_string),
                data.url("SYSTEMMODIFYURL").map(str::to_string),
            ],
            requery: data.poll_interval.unwrap_or(2).clamp(1, 60),
            cluster: None,
            cluster_at: None,
            cluster_in_flight: false,
            next_token: 1,
            pending: BTreeMap::new(),
            last_query: BTreeMap::new(),
            deferred: BTreeMap::new(),
            failures: VecDeque::new(),
            last_round: None,
            implicit_done: std::collections::BTreeSet::new(),
            busy: false,
        })
    }

    fn view(&self) -> StorageView {
        StorageView {
            max_dsop: self.max_dsop,
            target_usage: self.target_usage,
            disk_mb: self.cluster.as_ref().and_then(|c| c.disk_mb),
            disk_avail_mb: self.cluster.as_ref().and_then(|c| c.disk_avail_mb),
            rate_kbps: self
                .cluster
                .as_ref()
                .and_then(|c| c.rate_kbps)
                .or(self.bandwidth_kbps),
            requery: self.requery,
        }
    }

    fn in_flight(&self, job: JobId, dir: Dir, file: usize) -> bool {
        self.pending
            .values()
            .any(|p| p.job == job && p.dir == dir && p.file == file)
    }

    fn staging_now(&self, job: JobId, dir: Dir, file: usize) -> bool {
        self.pending
            .values()
            .any(|p| p.job == job && p.dir == dir && p.file == file && p.kind == Kind::Stage)
    }

    fn fail(&mut self, now: Time, msg: String) {
        tracing::warn!(rm = %self.rm_name, "{msg}");
        self.failures.push_back(format!("[{now}] {msg}"));
        while self.failures.len() > 20 {
            self.failures.pop_front();
        }
    }

    fn submit(&mut self, p: Pending, call: StorageCall) {
        let token = self.next_token;
        self.next_token += 1;
        self.pending.insert(token, p);
        self.rm.submit(token, call);
    }

    /// Why the job's stage-in waits (checkjob).
    pub fn deferral(&self, job: JobId) -> Option<&str> {
        self.deferred.get(&job).map(String::as_str)
    }

    /// What readers see.
    pub fn snapshot(&self, exec: &crate::actor::ExecMap, now: Time) -> StagingSnapshot {
        StagingSnapshot {
            info: self.info(exec, now),
            deferred: self.deferred.clone(),
        }
    }

    /// checknode / mdiag -R.
    pub fn info(&self, exec: &crate::actor::ExecMap, now: Time) -> StorageInfo {
        let mut ops = Vec::new();
        let mut active = 0;
        let mut dedicated = 0u64;
        for (id, rec) in exec {
            for f in &rec.stage_in {
                if f.status == "active" {
                    active += 1;
                }
                if matches!(f.status.as_str(), "active" | "complete") {
                    dedicated += f.size.unwrap_or(f.transferred);
                }
                ops.push(StorageOp {
                    job: id.to_string(),
                    status: f.status.clone(),
                    transferred: f.transferred,
                    size: f.size,
                    dest: f.dest.clone(),
                });
            }
        }
        let c = self.cluster.clone().unwrap_or_default();
        StorageInfo {
            rm: self.rm_name.clone(),
            node: if c.name.is_empty() {
                self.rm_name.clone()
            } else {
                c.name.clone()
            },
            model: format!("{:?}", self.model).to_ascii_uppercase(),
            max_dsop: self.max_dsop,
            target_usage: self.target_usage,
            disk_mb: c.disk_mb,
            disk_avail_mb: c.disk_avail_mb,
            rate_kbps: c.rate_kbps.or(self.bandwidth_kbps),
            dedicated_mb: staging::mb(dedicated),
            active_ops: active,
            cluster_query_url: self.urls[0].clone(),
            system_query_url: self.urls[1].clone(),
            system_modify_url: self.urls[2].clone(),
            operations: ops,
            failures: self.failures.iter().cloned().collect(),
            last_update: self.cluster_at.unwrap_or(0).min(now),
            in_flight: self.rm.in_flight() as u32,
        }
    }
}

/// `$TOOLSDIR`: `TOOLSDIR` (relative to the home), else the `tools`
/// directory shipped next to the binaries (`<bin>/../share/arches/tools`,
/// `<bin>/tools`, or the source tree's for a development build).
fn tools_dir(home: &std::path::Path, configured: &str) -> String {
    let p = std::path::Path::new(configured);
    let p = if p.is_absolute() {
        p.to_path_buf()
    } else {
        home.join(p)
    };
    if p.is_dir() || std::path::Path::new(configured).is_absolute() {
        return p.display().to_string();
    }
    let exe_dir = std::env::current_exe()
        .ok()
        .and_then(|e| e.parent().map(std::path::Path::to_path_buf));
    let mut candidates = Vec::new();
    if let Some(d) = &exe_dir {
        candidates.push(d.join("../share/arches/tools"));
        candidates.push(d.join("tools"));
    }
    candidates.push(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tools"));
    candidates
        .into_iter()
        .find(|c| c.join("dstage.query").exists())
        .map(|c| c.canonicalize().unwrap_or(c).display().to_string())
        .unwrap_or_else(|| p.display().to_string())
}

/// `$HOME` in a staging URL is the job owner's home directory.
fn expand_home(url: &str, home: Option<&str>) -> String {
    match home {
        Some(h) => url.replace("$HOME", h.trim_end_matches('/')),
        None => url.to_string(),
    }
}

impl Actor {
    /// Collects finished storage calls; asks for the cluster state when due.
    pub(crate) fn staging_poll(&mut self, now: Time) {
        let Some(mut d) = self.staging.take() else {
            return;
        };
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
                    }
                    Ok(_) => {}
                    Err(e) => d.fail(now, format!("cluster query failed: {e}")),
                }
                continue;
            }
            d.last_query.insert((p.job, p.dir, p.file), now);
            self.wake = true;
            self.record_result(&mut d, p, r.outcome, now);
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
                f.status = StageStatus::Active.as_str().to_string();
                f.started = Some(now);
                f.estimate = secs.or(f.estimate);
                f.size = size.or(f.size);
                None
            }
            (_, Ok(other)) => Some(format!("unexpected answer {other:?}")),
        };
        self.dirty.insert(p.job);
        if let Some(e) = failure {
            let msg = format!("{what} of {} failed: {e}", f.dest);
            f.status = StageStatus::Failed.as_str().to_string();
            f.error = Some(e);
            d.fail(now, format!("job {}: {msg}", p.job));
            self.note(p.job, msg);
            if p.dir == Dir::In {
                let hold = self.cfg.moab.data_stage_hold;
                self.apply(Event::SetHold { job: p.job, hold }, now);
            }
        }
    }

    /// One round of staging decisions, before the scheduling plan.
    pub(crate) fn staging_round(&mut self, now: Time) {
        let Some(mut d) = self.staging.take() else {
            return;
        };
        d.last_round = Some(now);
        // Queued jobs with stage-in, in the last plan's priority order.
        let mut queued: Vec<(u32, JobId)> = self
            .state
            .queued()
            .filter(|j| self.exec.get(&j.id).is_some_and(|r| !r.stage_in.is_empty()))
            .map(|j| {
                let rank = self.plan.decisions.get(&j.id).map_or(u32::MAX, |x| x.rank);
                (rank, j.id)
            })
            .collect();
        queued.sort();
        // A released job whose staging had failed: try again.
        for &(_, id) in &queued {
            let held = self.state.job(id).is_some_and(|j| !j.holds.is_empty());
            let rec = &self.exec[&id];
            if !held && rec.stage_in.iter().any(|f| f.status == "failed") {
                let rec = Arc::make_mut(self.exec.get_mut(&id).expect("job has a record"));
                for f in rec.stage_in.iter_mut().filter(|f| f.status == "failed") {
                    f.status = StageStatus::Pending.as_str().to_string();
                    f.error = None;
                }
                self.dirty.insert(id);
            }
        }
        let files: Vec<(JobId, Vec<StageFile>)> = queued
            .iter()
            .map(|&(_, id)| {
                let v = self.exec[&id]
                    .stage_in
                    .iter()
                    .enumerate()
                    .map(|(i, r)| {
                        let mut f = r.to_core();
                        f.in_flight = d.in_flight(id, Dir::In, i);
                        // A stage request on its way counts as an operation.
                        if d.staging_now(id, Dir::In, i) {
                            f.status = StageStatus::Active;
                            f.started = f.started.or(Some(now));
                        }
                        f.last_query = d.last_query.get(&(id, Dir::In, i)).copied();
                        f
                    })
                    .collect();
                (id, v)
            })
            .collect();
        let jobs: Vec<StageJob<'_>> = files
            .iter()
            .map(|(id, f)| StageJob {
                job: *id,
                files: f,
                reservation: self.plan.reservation(*id).map(|r| r.start),
                queued: true,
            })
            .collect();
        let plan = staging::plan(d.model, &d.view(), &jobs, now);
        let rate = d.view().rate_kbps.unwrap_or(0.0);
        for a in &plan.actions {
            let (job, i) = (a.job(), a.file());
            let Some(rec) = self.exec.get(&job) else {
                continue;
            };
            let Some(f) = rec.stage_in.get(i) else {
                continue;
            };
            let home = crate::ident::user_by_uid(rec.uid).map(|u| u.home);
            let src = expand_home(&f.src, home.as_deref());
            let dest = expand_home(&f.dest, home.as_deref());
            let user = Caller {
                name: self
                    .state
                    .job(job)
                    .map(|j| j.cred.user.clone())
                    .unwrap_or_default(),
                uid: rec.uid,
                gid: rec.gid,
            };
            let (kind, call) = match a {
                StageAction::QuerySize { .. } => {
                    (Kind::Size, StorageCall::FileSize { user, url: src })
                }
                StageAction::QueryStageTime { .. } => (
                    Kind::StageTime,
                    StorageCall::StageTime {
                        user,
                        src,
                        dest,
                        rate_kbps: rate,
                    },
                ),
                StageAction::Verify { .. } => {
                    (Kind::Verify, StorageCall::FileSize { user, url: dest })
                }
                StageAction::Stage { .. } => (Kind::Stage, StorageCall::Stage { user, src, dest }),
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
        d.deferred = plan
            .deferred
            .iter()
            .map(|(j, why)| (*j, why.to_string()))
            .collect();
        d.busy = plan.waits.iter().any(|(_, w)| w.is_some());
        for (job, wait) in plan.waits {
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
            .filter(|j| j.data_wait.is_some() && (j.state.is_active() || j.state.is_finished()))
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

    /// Stage-out of finished jobs: initiate, then verify.
    fn stage_out(&mut self, d: &mut Driver, now: Time) {
        if d.urls[2].is_none() {
            return;
        }
        self.implicit_stage_out(d, now);
        let jobs: Vec<JobId> = self
            .exec
            .iter()
            .filter(|(_, r)| {
                r.stage_out
                    .iter()
                    .any(|f| matches!(f.status.as_str(), "pending" | "active"))
            })
            .map(|(id, _)| *id)
            .filter(|id| self.state.job(*id).is_some_and(|j| j.state.is_finished()))
            .collect();
        for job in jobs {
            let rec = &self.exec[&job];
            let home = crate::ident::user_by_uid(rec.uid).map(|u| u.home);
            let user = Caller {
                name: self
                    .state
                    .job(job)
                    .map(|j| j.cred.user.clone())
                    .unwrap_or_default(),
                uid: rec.uid,
                gid: rec.gid,
            };
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
}

impl Actor {
    /// Moab §17.12.7: when a job completes successfully, its standard output
    /// and error are staged back to the user's home directory (unless they
    /// are already there). Recorded once, as STAGEOUT entries.
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
            let Some(home) = crate::ident::user_by_uid(rec.uid).map(|u| u.home) else {
                continue;
            };
            let mut files = vec![rec.stdout.clone()];
            if !rec.join {
                files.push(rec.stderr.clone());
            }
            let home_dir = format!("{}/", home.trim_end_matches('/'));
            let new: Vec<StageRecord> = files
                .into_iter()
                .filter(|f| f.starts_with('/') && !f.starts_with(&home_dir))
                .filter(|f| !rec.stage_out.iter().any(|o| o.src == format!("file://{f}")))
                .filter_map(|f| {
                    let name = f.rsplit('/').next()?.to_string();
                    Some(StageRecord {
                        src: format!("file://{f}"),
                        dest: format!("file://$HOME/{name}"),
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
        }
    }
}

/// checkjob's staging lines of a job.
pub fn stage_lines(rec: &ExecRecord, wait: Option<DataWait>) -> Vec<StageLine> {
    let line = |dir: &str, f: &StageRecord| StageLine {
        direction: dir.to_string(),
        src: f.src.clone(),
        dest: f.dest.clone(),
        size: f.size,
        transferred: f.transferred,
        status: f.status.clone(),
        ready: wait.and_then(DataWait::ready_at).filter(|_| dir == "in"),
        error: f.error.clone(),
    };
    rec.stage_in
        .iter()
        .map(|f| line("in", f))
        .chain(rec.stage_out.iter().map(|f| line("out", f)))
        .collect()
}

/// checkjob notes about a job's staging: why a stage-in waits, and Moab's
/// warning when no storage RM stages the job's data.
pub fn job_notes(
    s: &crate::actor::Snapshot,
    j: &arches_core::Job,
    rec: &ExecRecord,
) -> Vec<String> {
    let mut out = Vec::new();
    if rec.stage_in.is_empty() && rec.stage_out.is_empty() {
        return out;
    }
    match &s.staging {
        None if !rec.stage_in.is_empty() => out.push(format!(
            "  WARNING:  job has required stage-in data, but RM '{0}' has no associated data RM configured for data staging (assuming RM '{0}' will handle data staging)",
            s.rm_name
        )),
        None => {}
        Some(st) => {
            if let Some(why) = st.deferred.get(&j.id).filter(|_| !(j.state.is_active() || j.state.is_finished())) {
                out.push(format!("NOTE:  stage-in not started: {why}"));
            }
        }
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
