//! Preemption in the daemon: carries out the plan's preemptions and resumes
//! through the resource manager before the plan's starts, and implements
//! the preemption side of `mjobctl -s/-R/-C` with Moab's escalation
//! (moab-formats §9.3). Signals come from the compute `RMCFG`
//! (`SUSPENDSIG`, `CHECKPOINTSIG`, `CHECKPOINTTIMEOUT`).

use arches_core::policy::PreemptPolicy;
use arches_core::preempt::{escalation_note, method_for};
use arches_core::state::JobChange;
use arches_core::{Event, JobId, JobState, Plan, Secs, Time};

use crate::actor::Actor;

/// `CHECKPOINTTIMEOUT` when the RM configures none.
pub const DEFAULT_CHECKPOINT_TIMEOUT: Secs = 300;

impl Actor {
    /// `(SUSPENDSIG, CHECKPOINTSIG, CHECKPOINTTIMEOUT)` of the compute RM.
    fn preempt_signals(&self) -> (Option<i32>, i32, Secs) {
        let rm = self
            .cfg
            .moab
            .rms
            .iter()
            .find(|r| r.name == self.cfg.compute_rm.0);
        (
            rm.and_then(|r| r.suspend_sig),
            rm.and_then(|r| r.checkpoint_sig).unwrap_or(libc::SIGUSR1),
            rm.and_then(|r| r.checkpoint_timeout)
                .unwrap_or(DEFAULT_CHECKPOINT_TIMEOUT),
        )
    }

    /// Preempts an active job by exactly `method` (backend first, then the
    /// state). Checkpoint signals the job, which the backend terminates after
    /// `CHECKPOINTTIMEOUT`, and requeues it at once.
    pub(crate) fn preempt_by(
        &mut self,
        id: JobId,
        method: PreemptPolicy,
        now: Time,
    ) -> Result<(), String> {
        let (ssig, csig, ctimeout) = self.preempt_signals();
        let r = match method {
            PreemptPolicy::Suspend => self.rm.suspend(id, ssig, now),
            PreemptPolicy::Checkpoint => self.rm.checkpoint(id, csig, ctimeout, now),
            PreemptPolicy::Requeue => self.rm.requeue(id, now),
            PreemptPolicy::Cancel => self.rm.cancel(id, now),
        };
        r.map_err(|e| e.to_string())?;
        let ev = match method {
            PreemptPolicy::Suspend => Event::Suspend { job: id },
            PreemptPolicy::Checkpoint | PreemptPolicy::Requeue => Event::Requeue { job: id },
            PreemptPolicy::Cancel => Event::Cancel { job: id },
        };
        if self.apply(ev, now) {
            Ok(())
        } else {
            Err("the job changed state".to_string())
        }
    }

    /// `mjobctl -s/-R/-C`: preempts with `requested`, escalated by what the
    /// job allows; returns the lines to print (the escalation note, then
    /// the success line).
    pub(crate) fn manual_preempt(
        &mut self,
        id: JobId,
        requested: PreemptPolicy,
        now: Time,
    ) -> Result<Vec<String>, String> {
        let job = self
            .state
            .job(id)
            .ok_or_else(|| format!("ERROR:  invalid job specified ({id})"))?;
        let preemptible = match job.state {
            JobState::Running | JobState::Starting => true,
            // A suspended job may still be requeued, checkpointed or cancelled.
            JobState::Suspended => requested != PreemptPolicy::Suspend,
            _ => false,
        };
        if !preemptible {
            return Err(format!(
                "job {id} cannot be preempted (cannot preempt non-active job)"
            ));
        }
        let method = method_for(job, &self.cfg.policy, requested, false);
        let mut lines = Vec::new();
        if let Some(note) = escalation_note(id, requested, method) {
            lines.push(note);
        }
        self.preempt_by(id, method, now)
            .map_err(|e| format!("job {id} cannot be preempted ({e})"))?;
        if method == PreemptPolicy::Suspend {
            // An administrator's suspension is not resumed automatically.
            self.apply(
                Event::Modify {
                    job: id,
                    change: JobChange::AdminSuspended(true),
                },
                now,
            );
        }
        self.note(
            id,
            format!("job preempted by mjobctl ({})", method.as_str()),
        );
        lines.push(format!("job {id} successfully preempted"));
        Ok(lines)
    }

    /// Carries out a plan's preemptions and resumes (before its starts).
    pub(crate) fn apply_preemptions(&mut self, plan: &Plan, now: Time) {
        for p in &plan.preemptions {
            match self.preempt_by(p.job, p.method, now) {
                Ok(()) => {
                    tracing::info!(
                        job = p.job,
                        by = p.by,
                        method = p.method.as_str(),
                        "job preempted"
                    );
                    self.stats.jobs_preempted += 1;
                    if let Some(n) = p.note() {
                        self.note(p.job, n);
                    }
                    self.note(p.job, format!("{} ({})", p.reason, p.method.as_str()));
                    self.note(
                        p.by,
                        format!("preempted job {} ({})", p.job, p.method.as_str()),
                    );
                }
                Err(e) => {
                    tracing::warn!(job = p.job, error = %e, "preemption failed");
                    self.note(p.job, format!("preemption failed: {e}"));
                }
            }
        }
        // Why blocked preemptors did not preempt (checkjob), once per change.
        for n in &plan.preempt_notes {
            let last = self
                .exec
                .get(&n.job)
                .and_then(|r| r.messages.last().cloned());
            if last.as_deref() != Some(n.text.as_str()) {
                self.note(n.job, n.text.clone());
            }
        }
        for &id in &plan.resumes {
            if let Err(e) = self.rm.resume(id, now) {
                tracing::warn!(job = id, error = %e, "resume failed");
                continue;
            }
            if self.apply(Event::Resume { job: id }, now) {
                tracing::info!(job = id, "job resumed");
                self.note(id, "job resumed (resources available)".to_string());
            }
        }
    }
}

/// Whether a job shows as preemptible (showq's `-` marker): the PREEMPTEE
/// attribute (job flag, class or QoS) or an optimistic PREEMPT backfill start.
pub fn shows_preemptible(s: &crate::actor::Snapshot, j: &arches_core::Job) -> bool {
    arches_core::preempt::is_preemptee(j, &s.cfg.policy)
        || (j.state.is_active() && arches_core::preempt::is_optimistic_backfill(j, &s.cfg.policy))
}

/// The block reason with the preemption attempt appended (checkjob,
/// mdiag -j): why a blocked preemptor did not preempt.
pub fn block_reason(
    s: &crate::actor::Snapshot,
    j: &arches_core::Job,
    reason: Option<String>,
) -> Option<String> {
    match (reason, s.plan.preempt_note(j.id)) {
        (Some(r), Some(n)) => Some(format!("{r}; {n}")),
        (r, _) => r,
    }
}

/// checkjob notes on preemption (seed §8.4.3's checklist): for a running
/// job, whether and why not it can be preempted by the best waiting
/// preemptor; for a suspended one, why it is not resumed yet.
pub fn job_notes(s: &crate::actor::Snapshot, j: &arches_core::Job) -> Vec<String> {
    use arches_core::preempt::{is_preemptee, is_preemptor, why_not_preemptible};
    let policy = &s.cfg.policy;
    let mut out = Vec::new();
    match j.state {
        JobState::Running | JobState::Starting => {
            let optimistic = arches_core::preempt::is_optimistic_backfill(j, policy);
            if !is_preemptee(j, policy) && !optimistic {
                return out;
            }
            // The best queued preemptor, if any.
            let best = s
                .plan
                .decisions
                .iter()
                .filter_map(|(id, d)| s.state.job(*id).map(|q| (q, d)))
                .filter(|(q, d)| d.eligible && is_preemptor(q, policy))
                .max_by_key(|(_, d)| (d.priority.system, d.priority.total));
            match best {
                Some((q, d)) => {
                    let p = Some((d.priority.system, d.priority.total));
                    match why_not_preemptible(j, policy, s.now, true, p) {
                        Some(why) => {
                            out.push(format!("NOTE:  not preemptible by job {}: {why}", q.id))
                        }
                        None => out.push(format!("NOTE:  preemptible by job {}", q.id)),
                    }
                }
                None => out.push(match why_not_preemptible(j, policy, s.now, true, None) {
                    Some(why) => format!("NOTE:  not preemptible: {why}"),
                    None => "NOTE:  preemptible (no preemptor waiting)".to_string(),
                }),
            }
        }
        JobState::Suspended if j.admin_suspended => {
            out.push("NOTE:  suspended by mjobctl -s: resumed only by mjobctl -r".to_string());
        }
        JobState::Suspended => {
            out.push(
                "NOTE:  suspended by preemption: resumed when its processors are free".to_string(),
            );
        }
        _ => {}
    }
    out
}
