//! Preemption in the simulator: the plan's preemptions and resumes are
//! carried out on the simulated resource manager before its starts, exactly
//! as the daemon does with real processes, and counted for the summary
//! (preemptions, work lost, the preemptors' waits).

use arches_core::policy::PreemptPolicy;
use arches_core::preempt::active_secs;
use arches_core::{Event, Plan, Secs};
use arches_rm::ResourceManager;

use crate::metrics::Summary;
use crate::run::{SimError, Simulation};

/// What preemption did during a replay.
#[derive(Debug, Clone, Default)]
pub struct PreemptStats {
    pub preemptions: usize,
    pub cancelled: usize,
    pub lost_proc_s: f64,
    /// Wait of each job that started by preempting.
    pub preemptor_waits: Vec<Secs>,
    /// Jobs suspended now (the replay must keep iterating to resume them).
    pub suspended: usize,
}

impl PreemptStats {
    /// Copies the figures into a summary.
    pub fn fill(&self, s: &mut Summary) {
        s.preempted_jobs = self.preemptions;
        s.preempt_cancelled = self.cancelled;
        s.preempt_lost_proc_s = self.lost_proc_s;
        s.preemptor_jobs = self.preemptor_waits.len();
        if !self.preemptor_waits.is_empty() {
            let total: f64 = self.preemptor_waits.iter().map(|w| *w as f64).sum();
            s.preemptor_avg_wait_s = total / self.preemptor_waits.len() as f64;
        }
    }
}

impl Simulation {
    /// Preempts and resumes what the plan says (before its starts).
    pub(crate) fn apply_preemptions(&mut self, plan: &Plan) -> Result<(), SimError> {
        let at = self.now;
        for p in &plan.preemptions {
            let Some(job) = self.state.job(p.job) else {
                continue;
            };
            let lost = match p.method {
                PreemptPolicy::Suspend => 0.0,
                _ => active_secs(job, at) as f64 * f64::from(job.procs()),
            };
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
                    self.rm.requeue(p.job, at).map_err(backend)?;
                    if let Some(m) = self.meta.get_mut(&p.job) {
                        m.start = None;
                    }
                    Event::Requeue { job: p.job }
                }
                PreemptPolicy::Cancel => {
                    // Stopped without a completion report: the job is gone.
                    self.rm.requeue(p.job, at).map_err(backend)?;
                    self.rm.forget(p.job);
                    self.meta.remove(&p.job);
                    self.preempt.cancelled += 1;
                    Event::Cancel { job: p.job }
                }
            };
            self.state.apply(ev, at).map_err(|source| SimError::Core {
                at,
                job: p.job,
                source,
            })?;
            self.preempt.preemptions += 1;
            self.preempt.lost_proc_s += lost;
        }
        for &id in &plan.resumes {
            self.rm.resume(id, at).map_err(|source| SimError::Backend {
                at,
                job: id,
                source,
            })?;
            self.state
                .apply(Event::Resume { job: id }, at)
                .map_err(|source| SimError::Core {
                    at,
                    job: id,
                    source,
                })?;
            self.preempt.suspended = self.preempt.suspended.saturating_sub(1);
        }
        let mut by: Vec<_> = plan.preemptions.iter().map(|p| p.by).collect();
        by.dedup();
        for id in by {
            if let Some(m) = self.meta.get(&id) {
                self.preempt.preemptor_waits.push(at - m.submit);
            }
        }
        Ok(())
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
        assert_eq!(s.preempted_jobs, 1);
        assert_eq!(s.preempt_lost_proc_s, 0.0);
        assert_eq!((s.preemptor_jobs, s.preemptor_avg_wait_s), (1, 0.0));
        // Suspended 100 s: the low job ends at 1100.
        assert_eq!(s.makespan_s, 1100);
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
        assert_eq!(s.preempted_jobs, 1);
        assert_eq!(s.preempt_lost_proc_s, 400.0);
        // Restarted at 200 for its full 1000 s.
        assert_eq!(s.makespan_s, 1200);
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
        assert_eq!((s.jobs, s.preempted_jobs, s.preemptor_jobs), (2, 1, 1));
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
