//! Preemption in the daemon: carries out the plan's preemptions and resumes
//! through the resource manager before the plan's starts, and implements
//! the preemption side of `mjobctl -s/-R/-C` with Moab's escalation
//! (moab-formats §9.3). Signals come from the compute `RMCFG`
//! (`SUSPENDSIG`, `CHECKPOINTSIG`, `CHECKPOINTTIMEOUT`).

use arches_core::policy::PreemptPolicy;
use arches_core::preempt::{escalation_note, method_for};
use arches_core::state::JobChange;
use arches_core::{Event, JobId, JobState, Plan, RequeueCause, Secs, Time};

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
    /// state), for the preemptor `by` (`None`: mjobctl). Suspension and
    /// cancellation take effect at once. A checkpoint (the signal, then
    /// termination after `CHECKPOINTTIMEOUT`) or a requeue only starts the
    /// termination: the job keeps its resources, terminating, until the
    /// backend reports it gone (`Observation::Requeued`), and goes back to
    /// the queue then.
    pub(crate) fn preempt_by(
        &mut self,
        id: JobId,
        method: PreemptPolicy,
        by: Option<JobId>,
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
        let grace = arches_rm::local::DEFAULT_KILL_GRACE_SECS as Secs;
        let ev = match method {
            PreemptPolicy::Suspend => Event::Suspend { job: id },
            PreemptPolicy::Checkpoint => Event::Terminate {
                job: id,
                cause: RequeueCause::Checkpoint,
                by,
                until: now + ctimeout.max(0) + grace,
            },
            PreemptPolicy::Requeue => Event::Terminate {
                job: id,
                cause: RequeueCause::Requeue,
                by,
                until: now + grace,
            },
            PreemptPolicy::Cancel => Event::Cancel { job: id },
        };
        if self.apply(ev, now) {
            Ok(())
        } else {
            Err("the job changed state".to_string())
        }
    }

    /// `mjobctl -s/-R/-C`: preempts with `requested`, escalated by what the
    /// job allows; returns the lines to print: the escalation note and
    /// `job successfully preempted`, or `job <id> successfully preempted`
    /// (Moab 7 `MUIJobCtl`).
    pub(crate) fn manual_preempt(
        &mut self,
        id: JobId,
        requested: PreemptPolicy,
        now: Time,
    ) -> Result<Vec<String>, String> {
        let job = self.known_job(id)?;
        if !job.state.is_active() {
            return Err("cannot preempt non-active job".to_string());
        }
        if job.run.as_ref().is_some_and(|r| r.terminating.is_some()) {
            return Err(format!(
                "job {id} cannot be preempted (job is already being requeued)"
            ));
        }
        if job.state == JobState::Suspended && requested == PreemptPolicy::Suspend {
            return Err(format!(
                "job {id} cannot be preempted (job is already suspended)"
            ));
        }
        let method = method_for(job, &self.cfg.policy, requested, false);
        let mut lines = Vec::new();
        let note = escalation_note(id, requested, method);
        self.preempt_by(id, method, None, now)
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
        match note {
            Some(n) => {
                self.note(id, n.clone());
                lines.push(n);
                lines.push("job successfully preempted".to_string());
            }
            None => lines.push(format!("job {id} successfully preempted")),
        }
        Ok(lines)
    }

    /// Carries out a plan's preemptions, locks and resumes (before its
    /// starts). Why blocked preemptors did not preempt is read from the
    /// current plan by checkjob and mdiag, never stored: it goes away when
    /// the preemption happens.
    pub(crate) fn apply_preemptions(&mut self, plan: &Plan, now: Time) {
        for p in &plan.preemptions {
            match self.preempt_by(p.job, p.method, Some(p.by), now) {
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
        for l in &plan.locks {
            let ev = Event::Lock {
                job: l.job,
                alloc: l.alloc.clone(),
                retry: l.retry,
            };
            if !self.apply(ev, now) {
                tracing::warn!(job = l.job, "preemptor lock refused");
            }
        }
        for &id in &plan.resumes {
            if let Err(e) = self.resume_job(id, now) {
                tracing::warn!(job = id, error = %e, "resume failed");
                continue;
            }
            tracing::info!(job = id, "job resumed");
            self.note(id, "job resumed (resources available)".to_string());
        }
    }

    /// Resumes a suspended job: the state is checked first, so a job whose
    /// processors are taken is never woken up (no SIGCONT on a refusal).
    pub(crate) fn resume_job(&mut self, id: JobId, now: Time) -> Result<(), String> {
        self.state.check_resume(id).map_err(|e| match e {
            arches_core::EventError::Overallocated { .. } => "resources are in use".to_string(),
            other => other.to_string(),
        })?;
        self.rm.resume(id, now).map_err(|e| e.to_string())?;
        if self.apply(Event::Resume { job: id }, now) {
            Ok(())
        } else {
            Err("the job changed state".to_string())
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

/// What the preemption diagnostics of many jobs share, computed once per
/// request (mdiag -j ALL looks at every job) and only when a job needs it
/// (a checkjob of one queued job must not scan a queue of 100,000).
#[derive(Default)]
pub struct PreemptView {
    /// The best eligible queued preemptor: (job, priority).
    best: std::cell::OnceCell<Option<(JobId, (bool, i64))>>,
    /// Start priorities of running jobs with the PREEMPTEE attribute, sorted.
    preemptees: std::cell::OnceCell<Vec<(bool, i64)>>,
}

impl PreemptView {
    fn best(&self, s: &crate::actor::Snapshot) -> Option<(JobId, (bool, i64))> {
        use arches_core::preempt::is_preemptor;
        *self.best.get_or_init(|| {
            let policy = &s.cfg.policy;
            s.plan
                .decisions
                .iter()
                .filter(|(_, d)| d.eligible)
                .filter(|(id, _)| s.state.job(**id).is_some_and(|q| is_preemptor(q, policy)))
                .map(|(id, d)| (*id, (d.priority.system, d.priority.total)))
                .max_by_key(|(id, p)| (*p, std::cmp::Reverse(*id)))
        })
    }

    fn preemptees(&self, s: &crate::actor::Snapshot) -> &[(bool, i64)] {
        use arches_core::preempt::{is_preemptee, run_priority};
        self.preemptees.get_or_init(|| {
            let policy = &s.cfg.policy;
            let mut p: Vec<(bool, i64)> = s
                .state
                .active()
                .filter(|j| matches!(j.state, JobState::Running | JobState::Starting))
                .filter(|j| is_preemptee(j, policy))
                .map(|j| run_priority(j, policy))
                .collect();
            p.sort_unstable();
            p
        })
    }

    /// Preemption diagnostics of one job (seed §8.4.3's checklist), one
    /// condition per line, for checkjob and mdiag -j: why a queued job did
    /// not preempt (with a count per failed condition) or what it waits for;
    /// whether a running job is preemptible and by whom, or which condition
    /// fails; how a terminating job leaves; why a suspended job waits.
    pub fn lines(&self, s: &crate::actor::Snapshot, j: &arches_core::Job) -> Vec<String> {
        use arches_core::preempt::why_not_preemptible;
        use arches_core::preempt::{is_optimistic_backfill, is_preemptee, is_preemptor};
        let policy = &s.cfg.policy;
        let mut out = Vec::new();
        match j.state {
            JobState::Idle => {
                let decision = s.plan.decisions.get(&j.id);
                let reason = decision.and_then(|d| d.reason.as_ref());
                if let Some(r @ arches_core::BlockReason::Preempting(_)) = reason {
                    out.push(r.to_string());
                } else if let Some(n) = s.plan.preempt_note(j.id) {
                    out.push(n.to_string());
                } else if let Some(d) = decision.filter(|d| d.reason.is_some() && d.eligible) {
                    let mine = (d.priority.system, d.priority.total);
                    let lower = self.preemptees(s).partition_point(|p| *p < mine);
                    if !is_preemptor(j, policy) && lower > 0 {
                        out.push(format!(
                            "cannot preempt: job does not have the PREEMPTOR attribute ({lower} running preemptee(s) of lower priority)"
                        ));
                    }
                }
                if let Some(l) = s.state.lock_in_force(j.id, s.now) {
                    let procs: u32 = l.alloc.iter().map(|a| a.procs).sum();
                    out.push(match l.until {
                        Some(u) => format!(
                            "{procs} procs locked for this preemptor until {} (GUARANTEEDPREEMPTION/JOBRETRYTIME)",
                            arches_config::value::format_duration((u - s.now).max(0))
                        ),
                        None => format!(
                            "{procs} procs locked for this preemptor while its victims terminate"
                        ),
                    });
                }
            }
            JobState::Running | JobState::Starting => {
                if let Some(t) = j.run.as_ref().and_then(|r| r.terminating) {
                    let how = match t.cause {
                        arches_core::RequeueCause::Checkpoint => "checkpointed",
                        _ => "requeued",
                    };
                    let by =
                        t.by.map_or("by mjobctl".to_string(), |p| format!("for job {p}"));
                    out.push(format!(
                        "being {how} {by}: keeps its resources until it has ended (expected within {})",
                        arches_config::value::format_duration((t.until - s.now).max(0))
                    ));
                    return out;
                }
                if !is_preemptee(j, policy) && !is_optimistic_backfill(j, policy) {
                    return out;
                }
                match self.best(s) {
                    Some((q, p)) => match why_not_preemptible(j, policy, s.now, true, Some(p)) {
                        Some(why) => out.push(format!("not preemptible by job {q}: {why}")),
                        None => out.push(format!("preemptible by job {q}")),
                    },
                    None => out.push(match why_not_preemptible(j, policy, s.now, true, None) {
                        Some(why) => format!("not preemptible: {why}"),
                        None => "preemptible (no preemptor waiting)".to_string(),
                    }),
                }
            }
            JobState::Suspended if j.admin_suspended => {
                out.push("suspended by mjobctl -s: resumed only by mjobctl -r".to_string());
            }
            JobState::Suspended => {
                out.push(
                    "suspended by preemption: resumed when its processors are free".to_string(),
                );
            }
            _ => {}
        }
        out
    }

    /// mdiag -q: what preemption looks like for one QoS's jobs.
    pub fn qos_lines(&self, s: &crate::actor::Snapshot, qos: &str) -> Vec<String> {
        use arches_core::preempt::{effective_qos, is_preemptee, is_preemptor};
        let policy = &s.cfg.policy;
        let mine = |j: &&arches_core::Job| effective_qos(j, policy).is_some_and(|q| q == qos);
        let mut out = Vec::new();
        let queued: Vec<&arches_core::Job> = s
            .state
            .queued()
            .filter(mine)
            .filter(|j| is_preemptor(j, policy))
            .collect();
        if !queued.is_empty() {
            let waiting = queued
                .iter()
                .filter(|j| {
                    matches!(
                        s.plan.decisions.get(&j.id).and_then(|d| d.reason.as_ref()),
                        Some(arches_core::BlockReason::Preempting(_))
                    )
                })
                .count();
            let notes: Vec<&arches_core::preempt::PreemptNote> = queued
                .iter()
                .filter_map(|j| s.plan.preempt_note(j.id))
                .collect();
            let mut line = format!(
                "Preemptors:  {} queued, {waiting} waiting for their victims, {} cannot preempt",
                queued.len(),
                notes.len()
            );
            let mut total = arches_core::preempt::Excluded::default();
            for n in &notes {
                let x = n.excluded;
                total.priority += x.priority;
                total.min_active += x.min_active;
                total.max_active += x.max_active;
                total.busy += x.busy;
                total.unusable += x.unusable;
            }
            let none = notes
                .iter()
                .filter(|n| n.outcome == arches_core::preempt::NoteOutcome::NoPreemptee)
                .count();
            let mut why: Vec<String> = total
                .reasons()
                .iter()
                .map(|(k, r)| format!("{k} preemptee(s) {r}"))
                .collect();
            if none > 0 {
                why.insert(0, format!("{none} found no running PREEMPTEE job"));
            }
            if !why.is_empty() {
                line.push_str(&format!(" ({})", why.join(", ")));
            }
            out.push(line);
        }
        let active: Vec<&arches_core::Job> = s
            .state
            .active()
            .filter(mine)
            .filter(|j| is_preemptee(j, policy))
            .collect();
        if !active.is_empty() {
            let suspended = active
                .iter()
                .filter(|j| j.state == JobState::Suspended)
                .count();
            let terminating = active
                .iter()
                .filter(|j| j.run.as_ref().is_some_and(|r| r.terminating.is_some()))
                .count();
            let preemptible = active
                .iter()
                .filter(|j| {
                    arches_core::preempt::why_not_preemptible(j, policy, s.now, true, None)
                        .is_none()
                })
                .count();
            out.push(format!(
                "Preemptees:  {} active, {preemptible} preemptible now, {suspended} suspended, {terminating} terminating",
                active.len()
            ));
        }
        out
    }
}
