//! Preemption in the simulator: the plan's preemptions, locks and resumes
//! are carried out on the simulated resource manager before its starts,
//! exactly as the daemon does with real processes, and counted for the
//! summary (preemptions, jobs preempted, work lost, the preemptors' waits).
//!
//! The model: a suspended job keeps what it has done and resumes later; a
//! checkpointed job is requeued and, restarted, runs only what was left at
//! the checkpoint (the checkpoint saves all progress; its cost is not
//! modelled); a requeued job starts over (its work is lost); a cancelled job
//! never finishes (its work is lost). The simulated backend terminates jobs
//! at once, so a preemptor that waits for its checkpointed or requeued
//! victims starts in a second iteration at the same instant. Every run that
//! a preemption interrupts counts as busy time in the utilization, and time
//! spent suspended does not.

use std::collections::BTreeSet;

use arches_core::policy::PreemptPolicy;
use arches_core::preempt::active_secs;
use arches_core::{Event, JobId, Plan, RequeueCause, Secs};
use arches_rm::{Observation, ResourceManager};

use crate::metrics::Summary;
use crate::run::{SimError, Simulation};

/// What preemption did during a replay.
#[derive(Debug, Clone, Default)]
pub struct PreemptStats {
    /// Preemptions carried out (events).
    pub preemptions: usize,
    /// Distinct jobs preempted.
    pub preempted: BTreeSet<JobId>,
    pub cancelled: usize,
    /// Work lost by requeues and cancellations (proc-s).
    pub lost_proc_s: f64,
    /// Work done by runs a preemption interrupted (proc-s): busy time the
    /// finished jobs' records do not show.
    pub interrupted_proc_s: f64,
    /// Wait of every finished job with the PREEMPTOR attribute.
    pub preemptor_waits: Vec<Secs>,
    /// Preemptors that preempted.
    pub preempting: BTreeSet<JobId>,
    /// Jobs suspended now (the replay must keep iterating to resume them).
    pub suspended: usize,
}

impl PreemptStats {
    /// Copies the figures into a summary (after `summarize`).
    pub fn fill(&self, s: &mut Summary) {
        s.preemptions = self.preemptions;
        s.preempted_jobs = self.preempted.len();
        s.preempt_cancelled = self.cancelled;
        s.preempt_lost_proc_s = self.lost_proc_s;
        s.preemptor_jobs = self.preemptor_waits.len();
        s.preemptors_preempting = self.preempting.len();
        if !self.preemptor_waits.is_empty() {
            let total: f64 = self.preemptor_waits.iter().map(|w| *w as f64).sum();
            s.preemptor_avg_wait_s = total / self.preemptor_waits.len() as f64;
        }
        if s.makespan_s > 0 && s.machine_procs > 0 {
            let capacity = f64::from(s.machine_procs) * s.makespan_s as f64;
            s.utilization += self.interrupted_proc_s / capacity;
        }
    }
}

impl Simulation {
    /// Preempts, locks and resumes what the plan says (before its starts);
    /// returns whether jobs were requeued that a preemptor waits for (the
    /// caller iterates again at once).
    pub(crate) fn apply_preemptions(&mut self, plan: &Plan) -> Result<bool, SimError> {
        let at = self.now;
        let mut requeued = false;
        for p in &plan.preemptions {
            let Some(job) = self.state.job(p.job) else {
                continue;
            };
            let done = active_secs(job, at) as f64 * f64::from(job.procs());
            let backend = |source| SimError::Backend {
                at,
                job: p.job,
                source,
            };
            let ev = match p.method {
                PreemptPolicy::Suspend => {
                    self.rm.suspend(p.job, None, at).map_err(backend)?;
                    self.preempt.suspended += 1;
                    Event::Suspend { job: p.job }
                }
                PreemptPolicy::Checkpoint | PreemptPolicy::Requeue => {
                    let cause = if p.method == PreemptPolicy::Checkpoint {
                        self.rm.checkpoint(p.job, 0, 0, at).map_err(backend)?;
                        RequeueCause::Checkpoint
                    } else {
                        self.rm.requeue(p.job, at).map_err(backend)?;
                        self.preempt.lost_proc_s += done;
                        RequeueCause::Requeue
                    };
                    self.preempt.interrupted_proc_s += done;
                    if let Some(m) = self.meta.get_mut(&p.job) {
                        m.start = None;
                    }
                    requeued = true;
                    Event::Terminate {
                        job: p.job,
                        cause,
                        by: Some(p.by),
                        until: at,
                    }
                }
                PreemptPolicy::Cancel => {
                    // Stopped without a completion report: the job is gone.
                    self.rm.discard(p.job);
                    self.meta.remove(&p.job);
                    self.preempt.cancelled += 1;
                    self.preempt.lost_proc_s += done;
                    self.preempt.interrupted_proc_s += done;
                    Event::Cancel { job: p.job }
                }
            };
            self.apply_event(ev, p.job)?;
            self.preempt.preemptions += 1;
            self.preempt.preempted.insert(p.job);
            self.preempt.preempting.insert(p.by);
        }
        for l in &plan.locks {
            let ev = Event::Lock {
                job: l.job,
                alloc: l.alloc.clone(),
                retry: l.retry,
            };
            self.apply_event(ev, l.job)?;
        }
        self.take_requeues()?;
        for &id in &plan.resumes {
            self.rm.resume(id, at).map_err(|source| SimError::Backend {
                at,
                job: id,
                source,
            })?;
            self.apply_event(Event::Resume { job: id }, id)?;
            self.preempt.suspended = self.preempt.suspended.saturating_sub(1);
        }
        Ok(requeued)
    }

    /// The simulated backend ends terminated jobs at once: their requeues
    /// (the backend's other pending reports are not the simulator's).
    pub(crate) fn take_requeues(&mut self) -> Result<(), SimError> {
        for o in self.rm.take_pending() {
            if let Observation::Requeued { job, .. } = o {
                self.apply_event(Event::Requeue { job }, job)?;
            }
        }
        Ok(())
    }

    fn apply_event(&mut self, ev: Event, job: JobId) -> Result<(), SimError> {
        let at = self.now;
        self.state
            .apply(ev, at)
            .map_err(|source| SimError::Core { at, job, source })
    }
}

#[cfg(test)]
mod tests {
    use arches_core::policy::{QosConfig, QosFlag, ReservationPolicy};
    use arches_core::{JobFlag, Policy};

    use crate::run::{machine, Simulation};
    use crate::workload::SimJob;

    fn policy(pp: PreemptPolicy) -> Policy {
        let mut p = Policy {
            preempt_policy: pp,
            reservation_policy: ReservationPolicy::Never,
            ..Policy::default()
        };
        p.weights.qos = 1;
        p.qos.insert(
            "high".into(),
            QosConfig {
                priority: 100,
                flags: vec![QosFlag::Preemptor],
                ..QosConfig::default()
            },
        );
        p.qos.insert(
            "low".into(),
            QosConfig {
                flags: vec![QosFlag::Preemptee],
                ..QosConfig::default()
            },
        );
        p
    }

    fn jobs(flag: JobFlag) -> Vec<SimJob> {
        let mut low = SimJob::new(1, 0, 4, 1000, 1000);
        low.qos = Some("low".into());
        low.flags = vec![flag];
        let mut high = SimJob::new(2, 100, 4, 100, 100);
        high.qos = Some("high".into());
        vec![low, high]
    }

    use super::*;

    #[test]
    fn workload_qos_and_flags_drive_suspension() {
        let mut sim = Simulation::new(
            machine(4, 4),
            policy(PreemptPolicy::Suspend),
            jobs(JobFlag::Suspendable),
        );
        sim.run().unwrap();
        let s = sim.summary();
        assert_eq!(s.jobs, 2, "both jobs finish");
        assert_eq!((s.preemptions, s.preempted_jobs), (1, 1));
        assert_eq!(s.preempt_lost_proc_s, 0.0);
        assert_eq!((s.preemptor_jobs, s.preemptor_avg_wait_s), (1, 0.0));
        // Suspended 100 s: the low job ends at 1100.
        assert_eq!(s.makespan_s, 1100);
        // Busy: 4 procs for 1000 s (low) + 4 for 100 s (high) over 4 × 1100;
        // the suspension is not busy time (no more than 1).
        let busy = 4.0 * 1000.0 + 4.0 * 100.0;
        assert!(
            (s.utilization - busy / (4.0 * 1100.0)).abs() < 1e-9,
            "{}",
            s.utilization
        );
        assert!(s.utilization <= 1.0);
    }

    #[test]
    fn requeue_loses_the_work_done_and_restarts() {
        let mut sim = Simulation::new(
            machine(4, 4),
            policy(PreemptPolicy::Requeue),
            jobs(JobFlag::Restartable),
        );
        sim.run().unwrap();
        let s = sim.summary();
        assert_eq!(s.jobs, 2);
        assert_eq!((s.preemptions, s.preempted_jobs), (1, 1));
        assert_eq!(s.preempt_lost_proc_s, 400.0);
        // Restarted at 200 for its full 1000 s.
        assert_eq!(s.makespan_s, 1200);
        // The interrupted 100 s were busy too: 400 + 400 + 4000 over 4 × 1200.
        assert!(
            (s.utilization - 4800.0 / 4800.0).abs() < 1e-9,
            "{}",
            s.utilization
        );
    }

    #[test]
    fn checkpoint_resumes_from_the_checkpoint() {
        let mut sim = Simulation::new(
            machine(4, 4),
            policy(PreemptPolicy::Checkpoint),
            jobs(JobFlag::Checkpointable),
        );
        sim.run().unwrap();
        let s = sim.summary();
        assert_eq!(s.jobs, 2);
        assert_eq!((s.preemptions, s.preempted_jobs), (1, 1));
        assert_eq!(s.preempt_lost_proc_s, 0.0, "a checkpoint loses nothing");
        // Checkpointed at 100 after 100 s, restarted at 200 for the 900 s left.
        assert_eq!(s.makespan_s, 1100);
        let busy = 4.0 * (100.0 + 900.0 + 100.0);
        assert!(
            (s.utilization - busy / (4.0 * 1100.0)).abs() < 1e-9,
            "{}",
            s.utilization
        );
    }

    #[test]
    fn counts_jobs_and_events_and_every_preemptor_wait() {
        // One low job preempted twice (by two high jobs in turn), and a
        // third high job that never needs to preempt (wait 0 too).
        let mut low = SimJob::new(1, 0, 4, 1000, 1000);
        low.qos = Some("low".into());
        low.flags = vec![JobFlag::Suspendable];
        let mut jobs = vec![low];
        for (id, submit) in [(2, 100), (3, 300)] {
            let mut h = SimJob::new(id, submit, 4, 50, 50);
            h.qos = Some("high".into());
            jobs.push(h);
        }
        let mut late = SimJob::new(4, 5000, 1, 10, 10);
        late.qos = Some("high".into());
        jobs.push(late);
        let mut sim = Simulation::new(machine(4, 4), policy(PreemptPolicy::Suspend), jobs);
        sim.run().unwrap();
        let s = sim.summary();
        assert_eq!((s.preemptions, s.preempted_jobs), (2, 1));
        assert_eq!((s.preemptor_jobs, s.preemptors_preempting), (3, 2));
        assert_eq!(s.preemptor_avg_wait_s, 0.0);
    }

    #[test]
    fn jsonl_class_with_qdef_and_flags_drives_preemption() {
        // CLASSCFG[special] QDEF=high; the low job's class gives PREEMPTEE
        // through JOBFLAGS, its own flags make it suspendable.
        let text = concat!(
            r#"{"id":1,"submit":0,"procs":4,"walltime":1000,"runtime":1000,"class":"batch","flags":["SUSPENDABLE"]}"#,
            "\n",
            r#"{"id":2,"submit":100,"procs":2,"walltime":100,"runtime":100,"class":"special"}"#,
            "\n"
        );
        let jobs = crate::workload::parse_jsonl(text.as_bytes(), "w.jsonl").unwrap();
        let mut p = policy(PreemptPolicy::Suspend);
        p.classes.entry("special".into()).or_default().qdef = Some("high".into());
        p.classes.entry("batch".into()).or_default().job_flags = vec![JobFlag::Preemptee];
        let mut sim = Simulation::new(machine(4, 4), p, jobs);
        sim.run().unwrap();
        let s = sim.summary();
        assert_eq!(
            (s.jobs, s.preempted_jobs, s.preemptors_preempting),
            (2, 1, 1)
        );
        assert_eq!(s.makespan_s, 1100);
    }

    #[test]
    fn a_job_that_allows_nothing_is_cancelled() {
        let mut sim = Simulation::new(
            machine(4, 4),
            policy(PreemptPolicy::Suspend),
            jobs(JobFlag::Interactive),
        );
        sim.run().unwrap();
        let s = sim.summary();
        assert_eq!((s.jobs, s.preempt_cancelled), (1, 1));
        assert_eq!(s.preempt_lost_proc_s, 400.0);
    }
}
