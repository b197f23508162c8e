//! The simulated backend: jobs "run" for a run time the driver tells it in
//! advance (the true run time from a trace), and `observe(now)` reports the
//! completions that are due by `now`.
//!
//! Nothing here reads a clock or sleeps: time is the `now` argument. A job
//! with a wall-clock limit shorter than its true run time is cut at the limit
//! and reported as [`Observation::WalltimeExceeded`]. Completions due at the
//! same instant are reported in the order the jobs were started, which is the
//! order a trace simulator such as pyss handles its termination events.

use std::collections::{BTreeMap, BTreeSet};

use arches_core::{JobId, Node, Secs, Time};

use crate::{Launch, Observation, ResourceManager, RmError};

/// Exit status reported for a job the simulation terminated (SIGTERM).
pub const CANCELLED_EXIT: i32 = 128 + 15;
/// Exit status reported for a job killed at its wall-clock limit (SIGKILL).
pub const WALLTIME_EXIT: i32 = 128 + 9;
/// SIGKILL, SIGTERM: signals that end a simulated job.
const TERMINATING_SIGNALS: [i32; 2] = [9, 15];

/// A simulated resource manager.
#[derive(Debug, Clone)]
pub struct SimRm {
    name: String,
    nodes: Vec<Node>,
    /// True run time of every job the driver announced.
    runtimes: BTreeMap<JobId, Secs>,
    /// Running jobs.
    running: BTreeMap<JobId, Running>,
    /// Suspended jobs with the run time they still need.
    suspended: BTreeMap<JobId, Secs>,
    /// Pending completions ordered by (end time, start sequence).
    due: BTreeSet<(Time, u64, JobId)>,
    /// Observations produced outside the completion queue (cancellations...).
    pending: Vec<Observation>,
    next_seq: u64,
}

#[derive(Debug, Clone, Copy)]
struct Running {
    end: Time,
    seq: u64,
    /// The job is cut at its wall-clock limit.
    killed: bool,
    /// Run time it would still need after `end` (when cut).
    beyond: Secs,
}

impl SimRm {
    /// A backend named `name` managing `nodes`.
    pub fn new(name: &str, nodes: Vec<Node>) -> Self {
        SimRm {
            name: name.to_string(),
            nodes,
            runtimes: BTreeMap::new(),
            running: BTreeMap::new(),
            suspended: BTreeMap::new(),
            due: BTreeSet::new(),
            pending: Vec::new(),
            next_seq: 0,
        }
    }

    /// Announces a job's true run time (before it starts).
    pub fn set_runtime(&mut self, job: JobId, runtime: Secs) {
        self.runtimes.insert(job, runtime.max(0));
    }

    /// Forgets a finished job's run time (keeps the table small).
    pub fn forget(&mut self, job: JobId) {
        self.runtimes.remove(&job);
    }

    /// When the next completion is due, if any job is running.
    pub fn next_completion(&self) -> Option<Time> {
        self.due.first().map(|(t, _, _)| *t)
    }

    /// Whether anything is still to be reported.
    pub fn is_idle(&self) -> bool {
        self.due.is_empty() && self.pending.is_empty()
    }

    /// Running jobs and when each will end.
    pub fn running(&self) -> impl Iterator<Item = (JobId, Time)> + '_ {
        self.running.iter().map(|(j, r)| (*j, r.end))
    }

    /// Observations waiting outside the completion queue (cancellations,
    /// requeues), taken now without touching due completions.
    pub fn take_pending(&mut self) -> Vec<Observation> {
        std::mem::take(&mut self.pending)
    }

    /// Stops a job without any report and forgets it (a job the driver
    /// removes itself).
    pub fn discard(&mut self, job: JobId) {
        if self.suspended.remove(&job).is_none() {
            let _ = self.stop(job);
        }
        self.runtimes.remove(&job);
    }

    fn stop(&mut self, job: JobId) -> Result<Running, RmError> {
        let r = self.running.remove(&job).ok_or(RmError::UnknownJob(job))?;
        self.due.remove(&(r.end, r.seq, job));
        Ok(r)
    }

    fn launch(&mut self, job: JobId, runtime: Secs, limit: Option<Secs>, now: Time) {
        let (length, killed) = match limit {
            Some(l) if runtime > l => (l.max(0), true),
            _ => (runtime, false),
        };
        let seq = self.next_seq;
        self.next_seq += 1;
        let end = now + length;
        let beyond = (runtime - length).max(0);
        self.running.insert(
            job,
            Running {
                end,
                seq,
                killed,
                beyond,
            },
        );
        self.due.insert((end, seq, job));
    }
}

impl ResourceManager for SimRm {
    fn name(&self) -> &str {
        &self.name
    }

    fn kind(&self) -> &'static str {
        "SIM"
    }

    fn nodes(&mut self) -> Result<Vec<Node>, RmError> {
        Ok(self.nodes.clone())
    }

    fn start(&mut self, launch: &Launch, now: Time) -> Result<(), RmError> {
        if self.running.contains_key(&launch.job) || self.suspended.contains_key(&launch.job) {
            return Err(RmError::Refused(format!(
                "job {} is already running",
                launch.job
            )));
        }
        let runtime = *self
            .runtimes
            .get(&launch.job)
            .ok_or(RmError::UnknownJob(launch.job))?;
        self.launch(launch.job, runtime, launch.walltime, now);
        Ok(())
    }

    fn cancel(&mut self, job: JobId, now: Time) -> Result<(), RmError> {
        if self.suspended.remove(&job).is_none() {
            self.stop(job)?;
        }
        self.pending.push(Observation::Finished {
            job,
            at: now,
            code: CANCELLED_EXIT,
        });
        Ok(())
    }

    fn signal(&mut self, job: JobId, signal: i32, now: Time) -> Result<(), RmError> {
        if !self.running.contains_key(&job) && !self.suspended.contains_key(&job) {
            return Err(RmError::UnknownJob(job));
        }
        if TERMINATING_SIGNALS.contains(&signal) {
            self.cancel(job, now)?;
        }
        Ok(())
    }

    fn suspend(&mut self, job: JobId, _signal: Option<i32>, now: Time) -> Result<(), RmError> {
        let r = self.stop(job)?;
        self.suspended.insert(job, (r.end - now).max(0));
        Ok(())
    }

    fn resume(&mut self, job: JobId, now: Time) -> Result<(), RmError> {
        let left = self
            .suspended
            .remove(&job)
            .ok_or(RmError::UnknownJob(job))?;
        // The remaining time already accounts for the wall-clock cut.
        self.launch(job, left, None, now);
        Ok(())
    }

    /// Ends the job at once (reported as `Requeued`); it starts over.
    fn requeue(&mut self, job: JobId, now: Time) -> Result<(), RmError> {
        if self.suspended.remove(&job).is_none() {
            self.stop(job)?;
        }
        self.pending.push(Observation::Requeued { job, at: now });
        Ok(())
    }

    /// Ends the job at once (reported as `Requeued`) with its progress
    /// saved: started again, it runs only what was left.
    fn checkpoint(
        &mut self,
        job: JobId,
        _signal: i32,
        _timeout: Secs,
        now: Time,
    ) -> Result<(), RmError> {
        let left = match self.suspended.remove(&job) {
            Some(left) => left,
            None => {
                // What is left of the true run (the wall-clock limit applies
                // afresh to the restart).
                let r = self.stop(job)?;
                (r.end - now).max(0) + r.beyond
            }
        };
        self.runtimes.insert(job, left);
        self.pending.push(Observation::Requeued { job, at: now });
        Ok(())
    }

    fn observe(&mut self, now: Time) -> Vec<Observation> {
        let mut out = std::mem::take(&mut self.pending);
        while let Some(&(end, seq, job)) = self.due.first() {
            if end > now {
                break;
            }
            self.due.remove(&(end, seq, job));
            let killed = self.running.remove(&job).is_some_and(|r| r.killed);
            out.push(if killed {
                Observation::WalltimeExceeded {
                    job,
                    at: end,
                    code: WALLTIME_EXIT,
                }
            } else {
                Observation::Finished {
                    job,
                    at: end,
                    code: 0,
                }
            });
        }
        out
    }

    fn recover(&mut self, active: &[JobId], now: Time) -> Result<(), RmError> {
        for &job in active {
            if !self.running.contains_key(&job) && !self.suspended.contains_key(&job) {
                self.pending.push(Observation::Vanished { job, at: now });
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ExecSpec, LaunchNode};

    fn launch(job: JobId, walltime: Option<Secs>) -> Launch {
        Launch {
            job,
            name: format!("job{job}"),
            nodes: vec![LaunchNode {
                name: "n1".into(),
                tasks: 1,
                procs: 1,
            }],
            exec: ExecSpec::default(),
            walltime,
            restarted: false,
        }
    }

    fn rm() -> SimRm {
        SimRm::new("sim", vec![Node::new("n1", 4, 0)])
    }

    #[test]
    fn completions_come_due_in_time_then_start_order() {
        let mut rm = rm();
        for (job, rt) in [(1, 100), (2, 50), (3, 100)] {
            rm.set_runtime(job, rt);
        }
        rm.start(&launch(3, Some(500)), 0).unwrap();
        rm.start(&launch(1, Some(500)), 0).unwrap();
        rm.start(&launch(2, Some(500)), 0).unwrap();
        assert_eq!(rm.next_completion(), Some(50));
        assert!(rm.observe(49).is_empty());
        let at_100 = rm.observe(100);
        let jobs: Vec<JobId> = at_100
            .iter()
            .map(|o| match o {
                Observation::Finished { job, .. } => *job,
                other => panic!("unexpected {other:?}"),
            })
            .collect();
        assert_eq!(jobs, vec![2, 3, 1]);
        assert!(rm.is_idle());
    }

    #[test]
    fn walltime_cuts_the_run() {
        let mut rm = rm();
        rm.set_runtime(1, 1000);
        rm.start(&launch(1, Some(300)), 10).unwrap();
        assert_eq!(
            rm.observe(310),
            vec![Observation::WalltimeExceeded {
                job: 1,
                at: 310,
                code: WALLTIME_EXIT
            }]
        );
    }

    #[test]
    fn unknown_runtime_and_double_start_are_refused() {
        let mut rm = rm();
        assert_eq!(rm.start(&launch(7, None), 0), Err(RmError::UnknownJob(7)));
        rm.set_runtime(7, 10);
        rm.start(&launch(7, None), 0).unwrap();
        assert!(matches!(
            rm.start(&launch(7, None), 0),
            Err(RmError::Refused(_))
        ));
    }

    #[test]
    fn suspend_resume_shifts_the_end_and_cancel_reports() {
        let mut rm = rm();
        rm.set_runtime(1, 100);
        rm.start(&launch(1, None), 0).unwrap();
        rm.suspend(1, None, 40).unwrap();
        assert_eq!(rm.next_completion(), None);
        rm.resume(1, 100).unwrap();
        assert_eq!(rm.next_completion(), Some(160));
        rm.cancel(1, 120).unwrap();
        assert_eq!(
            rm.observe(120),
            vec![Observation::Finished {
                job: 1,
                at: 120,
                code: CANCELLED_EXIT
            }]
        );
        assert!(rm.observe(1000).is_empty());
    }

    #[test]
    fn recover_reports_unknown_jobs_vanished() {
        let mut rm = rm();
        rm.recover(&[5], 9).unwrap();
        assert_eq!(rm.observe(9), vec![Observation::Vanished { job: 5, at: 9 }]);
    }
}
