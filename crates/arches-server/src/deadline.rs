//! Job deadlines in the daemon: what msub is told at submission, and
//! `DEADLINEPOLICY` applied to the deadlines a plan cannot meet. The
//! decisions are [`arches_core::deadline`]'s; this driver applies them and
//! records them (checkjob's `Deadline Failed:` line and notes).

use arches_core::deadline::{self, Action, Miss};
use arches_core::policy::Policy;
use arches_core::state::JobChange;
use arches_core::{Event, HoldType, Job, Time};

use crate::actor::Actor;

/// What msub prints on standard error about a job's deadline: Moab ignores
/// a deadline its QoS does not honour without a word; Arches keeps it (it
/// weighs in the priority through `DEADLINEWEIGHT`) and says it is not
/// guaranteed.
pub(crate) fn submit_warnings(job: &Job, policy: &Policy, now: Time) -> Vec<String> {
    let Some(d) = job.deadline else {
        return Vec::new();
    };
    if !deadline::qos_allows(job, policy) {
        let qos = arches_core::qos::effective(job, policy).unwrap_or(arches_core::qos::DEFAULT_QOS);
        return vec![format!(
            "deadline not guaranteed: QoS '{qos}' has no QFLAGS=DEADLINE (the deadline only raises the job's priority, DEADLINEWEIGHT)"
        )];
    }
    let wall = arches_core::effective_walltime(job, policy);
    match wall {
        Some(w) if now.saturating_add(w) > d => vec![format!(
            "deadline cannot be met: the job needs {} and the deadline is in {} (DEADLINEPOLICY {} applies)",
            arches_core::timespec::format_duration(w),
            arches_core::timespec::format_duration(d - now),
            policy.deadline_policy
        )],
        None => vec![
            "deadline without a wall-clock limit: no completion can be planned (DEADLINEPOLICY applies once it passes)"
                .to_string(),
        ],
        _ => Vec::new(),
    }
}

impl Actor {
    /// `DEADLINEPOLICY` on the guaranteed deadlines the plan cannot meet
    /// (after the plan's starts: a job started late is only recorded).
    pub(crate) fn apply_deadline_misses(&mut self, misses: &[Miss], now: Time) {
        let policy = &self.cfg.policy;
        let retry = deadline::retries(policy);
        let action = deadline::action(policy);
        let name = policy.deadline_policy;
        for m in misses {
            let Some(job) = self.state.job(m.job) else {
                continue;
            };
            if job.deadline_failed.is_some() {
                // Already recorded (a retried deadline): nothing changes, so
                // nothing wakes the scheduler again.
                continue;
            }
            let started = job.state.is_active();
            let expected = arches_core::timespec::format_duration((m.expected - m.deadline).max(0));
            self.apply(
                Event::Modify {
                    job: m.job,
                    change: JobChange::DeadlineFailed(Some(m.expected)),
                },
                now,
            );
            if started {
                self.note(
                    m.job,
                    format!("deadline cannot be met ({expected} late): the job started late"),
                );
                continue;
            }
            let what = match action {
                Action::Cancel => "job cancelled (DEADLINEPOLICY CANCEL)",
                Action::Hold => "job placed on system hold, deadline dropped (DEADLINEPOLICY HOLD)",
                Action::Drop => {
                    "deadline dropped, the job runs as any other (DEADLINEPOLICY IGNORE)"
                }
                Action::Escalate => {
                    "deadline kept and retried; administrators alerted (DEADLINEPOLICY ESCALATE)"
                }
                Action::Retry => "deadline kept and retried (DEADLINEPOLICY RETRY)",
            };
            self.note(
                m.job,
                format!("deadline cannot be met ({expected} late): {what}"),
            );
            match action {
                Action::Cancel => {
                    self.apply(Event::Cancel { job: m.job }, now);
                }
                Action::Hold => {
                    self.apply(
                        Event::SetHold {
                            job: m.job,
                            hold: HoldType::System,
                        },
                        now,
                    );
                }
                Action::Escalate => {
                    tracing::warn!(
                        job = m.job,
                        deadline = m.deadline,
                        expected = m.expected,
                        "job deadline cannot be met (DEADLINEPOLICY ESCALATE)"
                    );
                }
                Action::Drop | Action::Retry => {}
            }
            tracing::info!(job = m.job, policy = %name, "job deadline cannot be met");
        }
        if retry {
            // A retried deadline that the plan meets again is no longer failed.
            let met: Vec<_> = self
                .state
                .queued()
                .filter(|j| j.deadline_failed.is_some())
                .filter(|j| !misses.iter().any(|m| m.job == j.id))
                .map(|j| j.id)
                .collect();
            for job in met {
                self.apply(
                    Event::Modify {
                        job,
                        change: JobChange::DeadlineFailed(None),
                    },
                    now,
                );
            }
        }
    }
}
