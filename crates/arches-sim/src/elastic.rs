//! Malleable jobs and resize requests in the simulator
//! ([`arches_core::malleable`]): the plan's grows are applied to the state
//! and the simulated backend (which conserves a job's work: a grown job
//! finishes sooner), the workload's resize requests (`resize` in JSONL) are
//! made when due, and what happened is counted ([`MalleableSummary`]).
//!
//! `--malleable SHARE[:FACTOR]` makes a share of any workload's jobs
//! malleable ([`make_malleable`]).

use std::collections::{BTreeMap, BTreeSet};

use arches_core::malleable::{self, Grow, GrowKind};
use arches_core::state::JobChange;
use arches_core::{Event, JobId, JobState, Secs, Time};
use arches_rm::{LaunchNode, ResourceManager};

use crate::metrics::MalleableSummary;
use crate::run::{SimError, Simulation};
use crate::workload::SimJob;

/// The simulator's malleable bookkeeping.
#[derive(Debug, Default)]
pub(crate) struct ElasticSim {
    /// Resize requests and releases due: (time, job, processors).
    pub(crate) due: BTreeSet<(Time, JobId, i64)>,
    /// The workload's resizes of jobs not started yet.
    pub(crate) planned: BTreeMap<JobId, Vec<(Secs, i64)>>,
    /// Pending requests and when they were made.
    pub(crate) asked: BTreeMap<JobId, Time>,
    /// Malleable jobs running now.
    pub(crate) running: usize,
    /// Per running malleable job: (processors now, since, processor-seconds so far).
    pub(crate) usage: BTreeMap<JobId, (u32, Time, i64)>,
    /// Jobs that grew at least once.
    pub(crate) grown: BTreeSet<JobId>,
    pub(crate) summary: MalleableSummary,
    wait_sum: f64,
    request_wait_sum: f64,
    /// The workload has malleable jobs (the summary is reported).
    pub(crate) seen: bool,
}

impl ElasticSim {
    /// A malleable job was submitted.
    pub(crate) fn submitted(&mut self, job: &SimJob) {
        if job.max_procs.is_some() {
            self.seen = true;
            self.planned.insert(job.id, job.resizes.clone());
        }
    }

    /// A malleable job started on `procs` processors at `at` after waiting
    /// `wait`: its resizes are scheduled.
    pub(crate) fn started(&mut self, job: JobId, procs: u32, at: Time, wait: Secs) {
        if self.usage.contains_key(&job) {
            return;
        }
        let Some(resizes) = self.planned.remove(&job) else {
            return;
        };
        self.running += 1;
        self.usage.insert(job, (procs, at, 0));
        self.wait_sum += wait as f64;
        for (after, n) in resizes {
            self.due.insert((at + after, job, n));
        }
    }

    /// The job runs on `procs` from `at` on.
    fn resized(&mut self, job: JobId, procs: u32, at: Time) {
        if let Some(u) = self.usage.get_mut(&job) {
            u.2 += (at - u.1).max(0) * i64::from(u.0);
            u.0 = procs;
            u.1 = at;
        }
    }

    /// A malleable job ended: its processor-seconds beyond `base` × `busy`.
    pub(crate) fn ended(&mut self, job: JobId, at: Time, base: u32, busy: Secs) -> i64 {
        let Some((procs, since, used)) = self.usage.remove(&job) else {
            return 0;
        };
        self.running = self.running.saturating_sub(1);
        self.summary.jobs += 1;
        self.asked.remove(&job);
        self.due.retain(|d| d.1 != job);
        let total = used + (at - since).max(0) * i64::from(procs);
        total - busy * i64::from(base)
    }

    /// The summary (`None` without malleable jobs).
    pub(crate) fn report(&self) -> Option<MalleableSummary> {
        if !self.seen {
            return None;
        }
        let mut s = self.summary.clone();
        s.grown_jobs = self.grown.len();
        s.avg_wait_s = if s.jobs > 0 {
            self.wait_sum / s.jobs as f64
        } else {
            0.0
        };
        s.resize_avg_wait_s = if s.resize_granted > 0 {
            self.request_wait_sum / s.resize_granted as f64
        } else {
            0.0
        };
        Some(s)
    }
}

/// Makes a deterministic share of the jobs malleable: a job is chosen when
/// its id hashes below `share` (0–1); it may then use up to `factor` times
/// its processors (at most `machine`). With `requests`, each chosen job
/// also asks for its extra processors a quarter into its run (a resize
/// request, LSF-style). Jobs with a node layout and job arrays stay rigid.
pub fn make_malleable(jobs: &mut [SimJob], share: f64, factor: f64, machine: u32, requests: bool) {
    for j in jobs
        .iter_mut()
        .filter(|j| j.layout.is_none() && j.array.is_none())
    {
        let h = j.id.wrapping_mul(2_654_435_761) % 10_000;
        if (h as f64) >= share * 10_000.0 {
            continue;
        }
        let max =
            ((f64::from(j.procs) * factor).round() as u32).clamp(j.procs, machine.max(j.procs));
        if max <= j.procs {
            continue;
        }
        j.max_procs = Some(max);
        if requests {
            j.resizes = vec![(j.runtime / 4, i64::from(max - j.procs))];
        }
    }
}

impl Simulation {
    /// The nodes of a job's allocation as the backend names them.
    fn alloc_nodes(&self, job: JobId) -> Vec<LaunchNode> {
        self.state
            .job(job)
            .and_then(|j| j.run.as_ref())
            .map(|r| arches_rm::launch_nodes(&self.state, &r.alloc, &r.gres_units))
            .unwrap_or_default()
    }

    /// Applies the plan's grows to the state and the backend.
    pub(crate) fn apply_grows(&mut self, grows: &[Grow]) -> Result<(), SimError> {
        let at = self.now;
        for g in grows {
            if !self.rm.has(g.job) {
                // It ended at this instant; its end is recorded next.
                continue;
            }
            self.state
                .apply(
                    Event::Grow {
                        job: g.job,
                        alloc: g.alloc.clone(),
                    },
                    at,
                )
                .map_err(|source| SimError::Core {
                    at,
                    job: g.job,
                    source,
                })?;
            let nodes = self.alloc_nodes(g.job);
            self.rm
                .resize(g.job, &nodes, None, at)
                .map_err(|source| SimError::Backend {
                    at,
                    job: g.job,
                    source,
                })?;
            let procs = nodes.iter().map(|n| n.procs).sum();
            let e = &mut self.elastic;
            e.resized(g.job, procs, at);
            e.grown.insert(g.job);
            e.summary.grows += 1;
            if let GrowKind::Request(_) = g.how {
                if let Some(since) = e.asked.remove(&g.job) {
                    e.summary.resize_granted += 1;
                    e.request_wait_sum += (at - since) as f64;
                    e.summary.resize_max_wait_s = e.summary.resize_max_wait_s.max(at - since);
                }
                if let Some(el) = self.state.job(g.job).and_then(|j| j.elastic) {
                    let change = JobChange::Elastic(Some(malleable::Elastic {
                        request: None,
                        ..el
                    }));
                    self.state
                        .apply(Event::Modify { job: g.job, change }, at)
                        .map_err(|source| SimError::Core {
                            at,
                            job: g.job,
                            source,
                        })?;
                }
            }
        }
        Ok(())
    }

    /// Makes the resize requests and releases due at `now`; whether any
    /// changed something (an iteration is due).
    pub(crate) fn resize_due(&mut self) -> Result<bool, SimError> {
        let at = self.now;
        let mut changed = false;
        while let Some(&(t, job, n)) = self.elastic.due.first() {
            if t > at {
                break;
            }
            self.elastic.due.pop_first();
            let Some(j) = self
                .state
                .job(job)
                .filter(|j| j.state == JobState::Running && self.rm.has(job))
            else {
                continue;
            };
            if n > 0 {
                // A refused request (beyond the maximum) changes nothing.
                if let Ok(e) = malleable::request(j, n as u32, at) {
                    let change = JobChange::Elastic(Some(e));
                    self.state
                        .apply(Event::Modify { job, change }, at)
                        .map_err(|source| SimError::Core { at, job, source })?;
                    self.elastic.asked.entry(job).or_insert(at);
                    self.elastic.summary.resize_requests += 1;
                    changed = true;
                }
            } else if let Ok((less, e)) = malleable::release(j, n.unsigned_abs() as u32) {
                self.state
                    .apply(Event::Shrink { job, alloc: less }, at)
                    .map_err(|source| SimError::Core { at, job, source })?;
                let change = JobChange::Elastic(Some(e));
                self.state
                    .apply(Event::Modify { job, change }, at)
                    .map_err(|source| SimError::Core { at, job, source })?;
                let nodes = self.alloc_nodes(job);
                self.rm
                    .resize(job, &nodes, None, at)
                    .map_err(|source| SimError::Backend { at, job, source })?;
                let procs = nodes.iter().map(|n| n.procs).sum();
                self.elastic.resized(job, procs, at);
                self.elastic.asked.remove(&job);
                self.elastic.summary.releases += 1;
                changed = true;
            }
        }
        Ok(changed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_deterministic_share_is_made_malleable() {
        let mut jobs: Vec<SimJob> = (1..=1000).map(|i| SimJob::new(i, 0, 4, 100, 80)).collect();
        make_malleable(&mut jobs, 0.25, 2.0, 64, true);
        let chosen: Vec<&SimJob> = jobs.iter().filter(|j| j.max_procs.is_some()).collect();
        assert!((200..=300).contains(&chosen.len()), "{}", chosen.len());
        assert!(chosen.iter().all(|j| j.max_procs == Some(8)));
        assert!(chosen.iter().all(|j| j.resizes == vec![(20, 4)]));
        let mut again: Vec<SimJob> = (1..=1000).map(|i| SimJob::new(i, 0, 4, 100, 80)).collect();
        make_malleable(&mut again, 0.25, 2.0, 64, true);
        assert_eq!(jobs, again);
        // Capped at the machine.
        let mut big = vec![SimJob::new(1, 0, 60, 100, 80)];
        make_malleable(&mut big, 1.0, 2.0, 64, false);
        assert_eq!(big[0].max_procs, Some(64));
        assert!(big[0].resizes.is_empty());
    }
}
