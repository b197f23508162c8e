//! `moab simulate --staging`: the same workload under three ways of getting
//! each job's input data in place (Moab §17.12), to measure the compute that
//! waits for data.
//!
//! - `SELF`: no scheduler-controlled staging; the job stages its own data
//!   after it starts, holding its processors idle meanwhile (its run time
//!   grows by its stage time — the waste §17.12 sets out to remove).
//! - `LOOSE`: the scheduler initiates the stage-ins at submission in priority
//!   (submission) order, at most `MAXDSOP` at once; the job is not eligible
//!   (no reservation) until its data is there.
//! - `TIGHT`: the same transfers, but the data-ready time is known, so the
//!   job is reserved compute from that time on ([`arches_core::DataWait`])
//!   and other jobs use the nodes until then.
//!
//! The storage is modelled by a per-operation rate and `MAXDSOP`: a job's
//! stage time is its `stagein` seconds, else `stagein_size` (or
//! `--stage-size`) MB at `--stage-rate`. Transfers are queued FIFO over the
//! `MAXDSOP` slots — what [`arches_core::staging::plan`] initiates for equal
//! priorities; TARGETUSAGE is not modelled.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use arches_core::{Secs, Time};
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

/// The modelled storage.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StorageModel {
    /// KB/s of one operation.
    pub rate_kbps: f64,
    /// Simultaneous operations (`MAXDSOP`).
    pub max_dsop: u32,
    /// Size in MB of a job without its own (`--stage-size`).
    pub default_mb: Option<u64>,
}

/// What the staging model did to the workload.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StagingSummary {
    pub mode: StagingMode,
    pub staged_jobs: usize,
    /// Processor-hours of allocated compute idle while a job waited for its
    /// data (SELF: procs × stage time; LOOSE and TIGHT: none).
    pub idle_proc_hours_waiting_for_data: f64,
    /// Mean time from submission to data ready (s).
    pub mean_stage_wait_s: f64,
    pub rate_kbps: f64,
    pub max_dsop: u32,
}

/// A job's stage time at full rate.
fn stage_time(j: &SimJob, m: &StorageModel) -> Option<Secs> {
    if let Some(s) = j.stage_secs {
        return Some(s);
    }
    let mb = j.stage_mb.or(m.default_mb)?;
    Some(((mb as f64 * 1024.0) / m.rate_kbps.max(1e-9)).ceil() as Secs)
}

/// Applies `mode` to the workload (before the simulation is built).
pub fn apply(mode: StagingMode, m: &StorageModel, jobs: &mut [SimJob]) -> StagingSummary {
    jobs.sort_by_key(|j| (j.submit, j.id));
    let mut slots: BinaryHeap<Reverse<Time>> =
        (0..m.max_dsop.max(1)).map(|_| Reverse(Time::MIN)).collect();
    let mut staged = 0;
    let mut idle_proc_secs = 0.0;
    let mut wait_total = 0.0;
    for j in jobs.iter_mut() {
        // The `stagein` seconds are a stage time here, not a start date.
        j.eligible_at = None;
        let Some(d) = stage_time(j, m).filter(|d| *d > 0) else {
            continue;
        };
        staged += 1;
        match mode {
            StagingMode::SelfStaged => {
                // Runs its own transfer first: it holds its processors for
                // d more seconds (at most its limit plus d).
                j.runtime += d;
                j.walltime += d;
                idle_proc_secs += f64::from(j.procs) * d as f64;
                wait_total += d as f64;
            }
            StagingMode::Loose | StagingMode::Tight => {
                let Reverse(free) = slots.pop().unwrap_or(Reverse(Time::MIN));
                let start = free.max(j.submit);
                let ready = start + d;
                slots.push(Reverse(ready));
                wait_total += (ready - j.submit) as f64;
                if mode == StagingMode::Loose {
                    j.eligible_at = Some(ready);
                } else {
                    j.data_ready = Some(ready);
                }
            }
        }
    }
    StagingSummary {
        mode,
        staged_jobs: staged,
        idle_proc_hours_waiting_for_data: idle_proc_secs / 3600.0,
        mean_stage_wait_s: if staged == 0 {
            0.0
        } else {
            wait_total / staged as f64
        },
        rate_kbps: m.rate_kbps,
        max_dsop: m.max_dsop,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::{machine, Simulation};
    use arches_core::Policy;

    fn workload() -> Vec<SimJob> {
        // Job 1 needs 100 s of staging; job 2 (no data) could use the
        // machine meanwhile.
        let mut a = SimJob::new(1, 0, 4, 1000, 500);
        a.stage_secs = Some(100);
        let b = SimJob::new(2, 0, 4, 100, 100);
        vec![a, b]
    }

    fn run(mode: StagingMode) -> (StagingSummary, Simulation) {
        let mut jobs = workload();
        let m = StorageModel {
            rate_kbps: 1024.0,
            max_dsop: 1,
            default_mb: None,
        };
        let s = apply(mode, &m, &mut jobs);
        let mut sim = Simulation::new(machine(4, 4), Policy::default(), jobs);
        sim.run().unwrap();
        (s, sim)
    }

    fn start(sim: &Simulation, id: u64) -> i64 {
        sim.records().iter().find(|r| r.id == id).unwrap().start
    }

    #[test]
    fn self_staging_idles_the_nodes_tight_keeps_them_busy() {
        let (s, sim) = run(StagingMode::SelfStaged);
        assert_eq!(s.idle_proc_hours_waiting_for_data, 4.0 * 100.0 / 3600.0);
        // Job 1 starts at once and holds the machine while it stages.
        assert_eq!(start(&sim, 1), 0);
        assert_eq!(start(&sim, 2), 600);
        let (s, sim) = run(StagingMode::Tight);
        assert_eq!(s.idle_proc_hours_waiting_for_data, 0.0);
        // Job 2 runs while job 1's data stages; job 1 starts when it is there.
        assert_eq!(start(&sim, 2), 0);
        assert_eq!(start(&sim, 1), 100);
        let (_, sim) = run(StagingMode::Loose);
        assert_eq!(start(&sim, 2), 0);
        assert_eq!(start(&sim, 1), 100);
    }

    #[test]
    fn maxdsop_queues_transfers() {
        let mut jobs: Vec<SimJob> = (1..=3)
            .map(|i| {
                let mut j = SimJob::new(i, 0, 1, 100, 10);
                j.stage_mb = Some(10);
                j
            })
            .collect();
        let m = StorageModel {
            rate_kbps: 1024.0,
            max_dsop: 2,
            default_mb: None,
        };
        let s = apply(StagingMode::Tight, &m, &mut jobs);
        let ready: Vec<_> = jobs.iter().map(|j| j.data_ready).collect();
        assert_eq!(ready, vec![Some(10), Some(10), Some(20)]);
        assert_eq!(s.mean_stage_wait_s, 40.0 / 3.0);
    }
}
