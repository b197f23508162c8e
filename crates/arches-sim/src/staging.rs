//! `moab simulate --staging`: the same workload under three ways of getting
//! each job's input data in place (Moab §17.12), to measure the compute that
//! waits for data.
//!
//! - `SELF`: no scheduler-controlled staging; the job stages its own data
//!   after it starts, holding its nodes idle meanwhile (its run time grows by
//!   its stage time — the waste §17.12 sets out to remove).
//! - `LOOSE` / `TIGHT`: the scheduler stages, driven by exactly the daemon's
//!   decisions, [`arches_core::staging::plan`], on a modelled storage
//!   manager: each operation moves data at `--stage-rate` KB/s, at most
//!   `--stage-maxdsop` at once, on a disk of `--stage-disk` MB of which
//!   staging may fill `--stage-target` percent (`TARGETUSAGE`); a job's data
//!   is removed when it ends. LOOSE initiates in priority order and the job
//!   is not eligible until its data is there; TIGHT times each transfer
//!   against the job's compute reservation and reserves compute from the
//!   data-ready time. As in the daemon, each iteration plans staging before
//!   the schedule (data waits) and after it (initiations against the new
//!   reservations); transfer completions and planned transfer starts are
//!   simulation events.
//!
//! What is measured, from the schedule: for every job with stage-in data,
//! its allocated nodes times the time they waited for that data after the
//! job started (SELF: its own stage time; LOOSE/TIGHT: how long its
//! transfers were still running after its start, which the data waits keep
//! at zero), and the time from submission until the data was ready.

use std::collections::{BTreeMap, BTreeSet};

use arches_core::staging::{
    self, DataWait, Phase, StageAction, StageFile, StageJob, StageModel, StageStatus, StorageView,
    MB,
};
use arches_core::state::JobChange;
use arches_core::{Event, EventError, JobId, Plan, Secs, State, Time};
use serde::Serialize;

use crate::workload::SimJob;

/// `--staging`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, Serialize)]
#[value(rename_all = "UPPER")]
pub enum StagingMode {
    /// The job stages its own data while holding its nodes.
    #[value(name = "SELF")]
    SelfStaged,
    /// Scheduler-initiated in priority order; no reservation until ready.
    Loose,
    /// Scheduler-initiated; compute reserved from the data-ready time.
    Tight,
}

impl std::fmt::Display for StagingMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            StagingMode::SelfStaged => "SELF",
            StagingMode::Loose => "LOOSE",
            StagingMode::Tight => "TIGHT",
        })
    }
}

/// The modelled storage manager.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StorageModel {
    /// KB/s of one operation.
    pub rate_kbps: f64,
    /// Simultaneous operations (`MAXDSOP`).
    pub max_dsop: u32,
    /// Size in MB of a job without its own (`--stage-size`).
    pub default_mb: Option<u64>,
    /// Configured disk (MB), if modelled.
    pub disk_mb: Option<u64>,
    /// `TARGETUSAGE` percent of the disk.
    pub target_usage: Option<f64>,
}

/// What the staging model did to the workload.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StagingSummary {
    pub mode: StagingMode,
    pub staged_jobs: usize,
    /// Node-hours of allocated compute idle while its job waited for its
    /// data, measured from the schedule.
    pub idle_node_hours_waiting_for_data: f64,
    /// Mean time from submission to data ready (s).
    pub mean_stage_wait_s: f64,
    /// Most data staged on the storage manager at once (MB).
    pub peak_staged_mb: u64,
    pub rate_kbps: f64,
    pub max_dsop: u32,
    pub disk_mb: Option<u64>,
    pub target_usage: Option<f64>,
}

/// The files a job stages in: its JSONL `stagein` files, else one file of
/// `stagein_size` (or `--stage-size`) MB, else one of `stagein` seconds at
/// the storage's rate.
pub fn stage_files(j: &SimJob, m: &StorageModel) -> Vec<(String, u64)> {
    if !j.stage_files.is_empty() {
        return j.stage_files.clone();
    }
    let src = format!("sim:///job{}/input", j.id);
    if let Some(mb) = j.stage_mb.or(m.default_mb) {
        return vec![(src, mb.saturating_mul(MB))];
    }
    match j.stage_secs {
        Some(s) if s > 0 => vec![(src, (s as f64 * m.rate_kbps * 1024.0) as u64)],
        _ => Vec::new(),
    }
}

/// Seconds one operation takes for `bytes`.
fn transfer_secs(bytes: u64, m: &StorageModel) -> Secs {
    ((bytes as f64 / 1024.0) / m.rate_kbps.max(1e-9)).ceil() as Secs
}

/// `SELF`: the workload as the jobs stage their own data (before the
/// simulation is built); returns each job's stage time.
pub fn apply_self(m: &StorageModel, jobs: &mut [SimJob]) -> BTreeMap<JobId, Secs> {
    let mut out = BTreeMap::new();
    for j in jobs.iter_mut() {
        // The `stagein` seconds are a stage time here, not a start date.
        j.eligible_at = None;
        let bytes: u64 = stage_files(j, m).iter().map(|(_, b)| *b).sum();
        let d = transfer_secs(bytes, m);
        if bytes == 0 || d <= 0 {
            continue;
        }
        // It runs its own transfer first, holding its nodes d more seconds.
        j.runtime += d;
        j.walltime += d;
        out.insert(j.id, d);
    }
    out
}

/// One job's staging in the simulation.
#[derive(Debug, Clone)]
struct Staged {
    files: Vec<StageFile>,
    submit: Time,
    /// When its data was all there.
    ready: Option<Time>,
    phase: SimPhase,
    /// Its held reservation start (TIGHT timing), from the plan.
    reservation: Option<Time>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SimPhase {
    Queued,
    Running,
    Ended,
}

/// The staging driver of the simulation.
#[derive(Debug, Clone)]
pub struct SimStaging {
    mode: StagingMode,
    storage: StorageModel,
    /// SELF: each job's own stage time.
    self_secs: BTreeMap<JobId, Secs>,
    jobs: BTreeMap<JobId, Staged>,
    /// Transfers in progress: (finish, job, file).
    transfers: BTreeSet<(Time, JobId, usize)>,
    /// The earliest planned transfer start (TIGHT), a wake-up.
    next_begin: Option<Time>,
    staged_jobs: usize,
    idle_node_secs: f64,
    wait_total: f64,
    peak_dedicated: u64,
}

impl SimStaging {
    /// A driver for `mode` over `jobs` (SELF's workload already adjusted,
    /// with `self_secs` its stage times).
    pub fn new(mode: StagingMode, storage: StorageModel, self_secs: BTreeMap<JobId, Secs>) -> Self {
        SimStaging {
            mode,
            storage,
            staged_jobs: self_secs.len(),
            self_secs,
            jobs: BTreeMap::new(),
            transfers: BTreeSet::new(),
            next_begin: None,
            idle_node_secs: 0.0,
            wait_total: 0.0,
            peak_dedicated: 0,
        }
    }

    fn model(&self) -> StageModel {
        match self.mode {
            StagingMode::Tight => StageModel::Tight,
            _ => StageModel::Loose,
        }
    }

    fn view(&self, dedicated: u64) -> StorageView {
        StorageView {
            max_dsop: Some(self.storage.max_dsop.max(1)),
            max_node_ops: None,
            target_usage: self.storage.target_usage,
            disk_mb: self.storage.disk_mb,
            disk_avail_mb: self
                .storage
                .disk_mb
                .map(|d| d.saturating_sub(dedicated.div_ceil(MB))),
            rate_kbps: Some(self.storage.rate_kbps),
            requery: 1,
            timeout: 0,
            cleanup: true,
        }
    }

    /// A job is submitted (its data waits are set by the next round).
    pub fn submitted(
        &mut self,
        j: &SimJob,
        state: &mut State,
        now: Time,
    ) -> Result<(), EventError> {
        if self.mode == StagingMode::SelfStaged {
            return Ok(());
        }
        let files: Vec<StageFile> = stage_files(j, &self.storage)
            .into_iter()
            .filter(|(_, b)| *b > 0)
            .enumerate()
            .map(|(i, (src, bytes))| StageFile {
                size: Some(bytes),
                ..StageFile::new(&src, &format!("sim:///scratch/job{}/{i}", j.id))
            })
            .collect();
        if files.is_empty() {
            return Ok(());
        }
        self.staged_jobs += 1;
        self.jobs.insert(
            j.id,
            Staged {
                files,
                submit: j.submit,
                ready: None,
                phase: SimPhase::Queued,
                reservation: None,
            },
        );
        // Not startable before the first round says how long to wait.
        state.apply(
            Event::Modify {
                job: j.id,
                change: JobChange::DataWait(Some(DataWait::Unknown)),
            },
            now,
        )
    }

    /// A job started on `nodes` nodes: the allocated compute that waits for
    /// its data from now on.
    pub fn started(&mut self, job: JobId, nodes: u32, now: Time) {
        if let Some(d) = self.self_secs.get(&job) {
            self.idle_node_secs += f64::from(nodes) * *d as f64;
            self.wait_total += *d as f64;
            return;
        }
        if let Some(s) = self.jobs.get_mut(&job) {
            s.phase = SimPhase::Running;
            // Its transfers still running (none when the data waits hold).
            let done = s
                .files
                .iter()
                .filter_map(|f| f.started.zip(f.estimate).map(|(a, e)| a + e.max(1)))
                .max()
                .unwrap_or(now);
            self.idle_node_secs += f64::from(nodes) * (done - now).max(0) as f64;
        }
    }

    /// A job ended: its staged data is removed.
    pub fn ended(&mut self, job: JobId) {
        if let Some(s) = self.jobs.get_mut(&job) {
            s.phase = SimPhase::Ended;
            for f in &mut s.files {
                if matches!(f.status, StageStatus::Active | StageStatus::Complete) {
                    f.status = StageStatus::Removed;
                }
            }
            self.transfers.retain(|(_, j, _)| *j != job);
        }
        self.jobs.remove(&job);
    }

    /// The next time a transfer ends or is due to begin.
    pub fn next_event(&self, now: Time) -> Option<Time> {
        let done = self.transfers.first().map(|(t, _, _)| *t);
        let begin = self.next_begin.filter(|t| *t > now);
        [done, begin].into_iter().flatten().min()
    }

    /// Whether something happens at `t` (an iteration is due).
    pub fn due(&self, t: Time) -> bool {
        self.transfers.first().is_some_and(|(f, _, _)| *f <= t)
            || self.next_begin.is_some_and(|b| b <= t)
    }

    fn round(&self, plan: Option<&Plan>, now: Time) -> (Vec<JobId>, staging::StagePlan) {
        // Queued jobs in the plan's priority order, then the others.
        let mut order: Vec<(u32, JobId)> = self
            .jobs
            .iter()
            .map(|(id, s)| {
                let rank = match s.phase {
                    SimPhase::Queued => plan
                        .and_then(|p| p.decisions.get(id))
                        .map_or(u32::MAX - 1, |d| d.rank),
                    _ => u32::MAX,
                };
                (rank, *id)
            })
            .collect();
        order.sort_unstable();
        let ids: Vec<JobId> = order.into_iter().map(|(_, id)| id).collect();
        let view: Vec<StageJob<'_>> = ids
            .iter()
            .map(|id| {
                let s = &self.jobs[id];
                StageJob {
                    job: *id,
                    files: &s.files,
                    reservation: s.reservation,
                    phase: match s.phase {
                        SimPhase::Queued => Phase::Queued,
                        SimPhase::Running => Phase::Running,
                        SimPhase::Ended => Phase::Ended,
                    },
                }
            })
            .collect();
        let dedicated = staging::usage(&view, true).dedicated;
        let p = staging::plan(self.model(), &self.view(dedicated), &view, now);
        (ids, p)
    }

    /// Before the schedule: transfers that ended, then every queued job's
    /// data wait.
    pub fn before(
        &mut self,
        state: &mut State,
        plan: Option<&Plan>,
        now: Time,
    ) -> Result<(), EventError> {
        while let Some(&(t, job, i)) = self.transfers.first().filter(|(t, _, _)| *t <= now) {
            self.transfers.pop_first();
            if let Some(s) = self.jobs.get_mut(&job) {
                let f = &mut s.files[i];
                f.status = StageStatus::Complete;
                f.transferred = f.size.unwrap_or(0);
                if s.files.iter().all(|f| f.status == StageStatus::Complete) {
                    s.ready = Some(t);
                    self.wait_total += (t - s.submit).max(0) as f64;
                }
            }
        }
        if self.next_begin.is_some_and(|b| b <= now) {
            self.next_begin = None;
        }
        let (_, p) = self.round(plan, now);
        for (job, wait) in p.waits {
            if state.job(job).is_some_and(|j| j.data_wait != wait) {
                state.apply(
                    Event::Modify {
                        job,
                        change: JobChange::DataWait(wait),
                    },
                    now,
                )?;
            }
        }
        Ok(())
    }

    /// After the schedule: the transfers to initiate against its
    /// reservations.
    pub fn after(&mut self, plan: &Plan, now: Time) {
        for (id, s) in self.jobs.iter_mut() {
            s.reservation = plan.reservation(*id).map(|r| r.start);
        }
        let (_, p) = self.round(Some(plan), now);
        for a in &p.actions {
            let StageAction::Stage { job, file } = *a else {
                continue;
            };
            let storage = self.storage;
            let Some(s) = self.jobs.get_mut(&job) else {
                continue;
            };
            let f = &mut s.files[file];
            let d = transfer_secs(f.size.unwrap_or(0), &storage).max(1);
            f.status = StageStatus::Active;
            f.started = Some(now);
            f.estimate = Some(d);
            self.transfers.insert((now + d, job, file));
        }
        self.next_begin = p
            .deferred
            .iter()
            .filter_map(|(_, d)| match d {
                staging::StageDeferral::NotYet(t) => Some(*t),
                _ => None,
            })
            .min();
        let files: Vec<StageJob<'_>> = self
            .jobs
            .iter()
            .map(|(id, s)| StageJob {
                job: *id,
                files: &s.files,
                reservation: None,
                phase: match s.phase {
                    SimPhase::Queued => Phase::Queued,
                    SimPhase::Running => Phase::Running,
                    SimPhase::Ended => Phase::Ended,
                },
            })
            .collect();
        let used = staging::usage(&files, true).dedicated;
        self.peak_dedicated = self.peak_dedicated.max(used);
    }

    /// What the staging model did.
    pub fn summary(&self) -> StagingSummary {
        StagingSummary {
            mode: self.mode,
            staged_jobs: self.staged_jobs,
            idle_node_hours_waiting_for_data: self.idle_node_secs / 3600.0,
            mean_stage_wait_s: if self.staged_jobs == 0 {
                0.0
            } else {
                self.wait_total / self.staged_jobs as f64
            },
            peak_staged_mb: self.peak_dedicated / MB,
            rate_kbps: self.storage.rate_kbps,
            max_dsop: self.storage.max_dsop,
            disk_mb: self.storage.disk_mb,
            target_usage: self.storage.target_usage,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::{machine, Simulation};
    use arches_core::Policy;

    const KB: f64 = 1024.0;

    fn storage(max_dsop: u32) -> StorageModel {
        StorageModel {
            rate_kbps: KB,
            max_dsop,
            default_mb: None,
            disk_mb: None,
            target_usage: None,
        }
    }

    /// Job 1 needs 100 MB of data (100 s at 1 MB/s) and the whole machine;
    /// job 2 (no data) could use the machine meanwhile.
    fn workload() -> Vec<SimJob> {
        let mut a = SimJob::new(1, 0, 4, 1000, 500);
        a.stage_files = vec![("hsm:///a".into(), 100 * MB)];
        a.priority = 10;
        let b = SimJob::new(2, 0, 4, 100, 100);
        vec![a, b]
    }

    fn run(
        mode: StagingMode,
        m: StorageModel,
        mut jobs: Vec<SimJob>,
    ) -> (StagingSummary, Simulation) {
        let self_secs = if mode == StagingMode::SelfStaged {
            apply_self(&m, &mut jobs)
        } else {
            BTreeMap::new()
        };
        // One node per processor: node-hours are processor-hours here.
        let mut sim = Simulation::new(machine(4, 1), Policy::default(), jobs);
        sim.set_staging(SimStaging::new(mode, m, self_secs));
        sim.run().unwrap();
        (sim.staging_summary().unwrap(), sim)
    }

    fn start(sim: &Simulation, id: u64) -> i64 {
        sim.records().iter().find(|r| r.id == id).unwrap().start
    }

    #[test]
    fn self_staging_idles_the_nodes_tight_keeps_them_busy() {
        let (s, sim) = run(StagingMode::SelfStaged, storage(1), workload());
        // 4 nodes held for the 100 s job 1 stages its own data.
        assert_eq!(s.idle_node_hours_waiting_for_data, 4.0 * 100.0 / 3600.0);
        assert_eq!(start(&sim, 1), 0);
        assert_eq!(start(&sim, 2), 600);
        let (s, sim) = run(StagingMode::Tight, storage(1), workload());
        assert_eq!(s.idle_node_hours_waiting_for_data, 0.0);
        assert_eq!(s.mean_stage_wait_s, 100.0);
        // Job 2 runs while job 1's data stages; job 1 starts when it is there.
        assert_eq!(start(&sim, 2), 0);
        assert_eq!(start(&sim, 1), 100);
        let (s, sim) = run(StagingMode::Loose, storage(1), workload());
        assert_eq!(s.idle_node_hours_waiting_for_data, 0.0);
        assert_eq!(start(&sim, 2), 0);
        assert_eq!(start(&sim, 1), 100);
    }

    #[test]
    fn tight_times_the_transfer_against_the_reservation() {
        // Job 3 (whole machine, 1000 s) runs first; job 1 needs the machine
        // after it and 100 s of data: TIGHT starts the transfer so it ends
        // when job 3 does (less the slack), LOOSE at once.
        let mut jobs = workload();
        jobs.truncate(1);
        jobs[0].submit = 1;
        jobs.push(SimJob::new(3, 0, 4, 1000, 1000));
        let (s, sim) = run(StagingMode::Tight, storage(1), jobs.clone());
        assert_eq!(start(&sim, 3), 0);
        assert_eq!(start(&sim, 1), 1000);
        // Started at 1000 - 100 - 60 (TIGHT_SLACK) = 840, ready at 940:
        // 939 s after submission, and the storage was free until then.
        assert_eq!(s.mean_stage_wait_s, 939.0);
        assert_eq!(s.idle_node_hours_waiting_for_data, 0.0);
        let (s, sim) = run(StagingMode::Loose, storage(1), jobs);
        assert_eq!(start(&sim, 1), 1000);
        assert_eq!(s.mean_stage_wait_s, 100.0);
    }

    #[test]
    fn maxdsop_queues_transfers() {
        let jobs: Vec<SimJob> = (1..=3)
            .map(|i| {
                let mut j = SimJob::new(i, 0, 1, 100, 10);
                j.stage_mb = Some(10);
                j
            })
            .collect();
        let (s, sim) = run(StagingMode::Loose, storage(2), jobs);
        // 10 s each, two at a time: ready at 10, 10, 20.
        let starts: Vec<i64> = (1..=3).map(|i| start(&sim, i)).collect();
        assert_eq!(starts, vec![10, 10, 20]);
        assert_eq!(s.mean_stage_wait_s, 40.0 / 3.0);
    }

    #[test]
    fn target_usage_waits_for_removal() {
        // 100 MB disk, 50% target: the second 40 MB transfer waits until the
        // first job ended and its data was removed.
        let jobs: Vec<SimJob> = (1..=2)
            .map(|i| {
                let mut j = SimJob::new(i, 0, 1, 100, 50);
                j.stage_mb = Some(40);
                j
            })
            .collect();
        let m = StorageModel {
            disk_mb: Some(100),
            target_usage: Some(50.0),
            ..storage(4)
        };
        let (s, sim) = run(StagingMode::Loose, m, jobs);
        assert_eq!(start(&sim, 1), 40);
        // Job 1 ends at 90; job 2's 40 s transfer then.
        assert_eq!(start(&sim, 2), 130);
        assert_eq!(s.peak_staged_mb, 40);
    }
}
