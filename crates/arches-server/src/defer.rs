//! Failed starts: a job the backend could not start goes back to the queue
//! and, by `DEFERSTARTCOUNT`/`DEFERTIME`/`DEFERCOUNT`, is deferred (a `Defer`
//! hold released after `DEFERTIME`) or, after `DEFERCOUNT` deferrals, held
//! with a batch hold. The decision is [`arches_core::defer::start_failed`];
//! this driver applies it, records the history in the job's execution record
//! (so it survives restarts) and releases expired deferrals on its timer.

use std::sync::Arc;

use arches_core::defer::{self, DeferPolicy, StartFailure};
use arches_core::{Event, HoldType, JobId, Time};
use arches_store::DeferRecord;

use crate::actor::Actor;

impl Actor {
    /// The deferral policy from `moab.cfg`.
    fn defer_policy(&self) -> DeferPolicy {
        let m = &self.cfg.moab;
        DeferPolicy {
            start_count: m.defer_start_count,
            time: m.defer_time,
            count: m.defer_count,
        }
    }

    /// A start of `job` failed (the backend refused it, or reported that it
    /// could not start it): the job is put back in the queue if the backend
    /// had it, then retried, deferred or batch-held. Never left `Running`.
    pub(crate) fn start_failed(&mut self, job: JobId, message: &str, now: Time) {
        let Some(j) = self.state.job(job) else { return };
        if j.state.is_finished() {
            return;
        }
        let active = j.state.is_active();
        self.note(job, format!("job start failed: {message}"));
        if active {
            self.apply(Event::Requeue { job }, now);
        }
        let policy = self.defer_policy();
        let Some(rec) = self.exec.get_mut(&job) else {
            return;
        };
        let rec = Arc::make_mut(rec);
        let mut st = rec.defer.as_deref().copied().unwrap_or_default().to_core();
        let decision = defer::start_failed(&mut st, &policy, now);
        rec.defer = Some(Box::new(DeferRecord::from_core(st)));
        self.dirty.insert(job);
        match decision {
            StartFailure::Retry => {
                tracing::info!(job, failures = st.failures, "start failed: job requeued");
            }
            StartFailure::Defer { until } => {
                self.hold_deferred(job, until, now);
                self.note(
                    job,
                    format!(
                        "job deferred for {} (DEFERTIME; deferral {} of {} before a batch hold)",
                        hms(until - now),
                        st.defers,
                        policy.count.max(1)
                    ),
                );
                tracing::warn!(job, until, defers = st.defers, "start failed: job deferred");
            }
            StartFailure::BatchHold => {
                self.deferred.remove(&job);
                if self
                    .state
                    .job(job)
                    .is_some_and(|j| j.holds.contains(HoldType::Defer))
                {
                    self.apply(
                        Event::ReleaseHold {
                            job,
                            hold: HoldType::Defer,
                        },
                        now,
                    );
                }
                self.apply(
                    Event::SetHold {
                        job,
                        hold: HoldType::Batch,
                    },
                    now,
                );
                self.note(
                    job,
                    format!(
                        "job placed on batch hold: failed starts reached DEFERCOUNT ({})",
                        policy.count.max(1)
                    ),
                );
                tracing::warn!(job, defers = st.defers, "start failed: batch hold");
            }
        }
    }

    /// Puts a `Defer` hold on `job` until `until` (released by
    /// [`Actor::release_deferred`]).
    pub(crate) fn hold_deferred(&mut self, job: JobId, until: Time, now: Time) {
        self.apply(
            Event::SetHold {
                job,
                hold: HoldType::Defer,
            },
            now,
        );
        self.deferred.insert(job, until);
    }

    /// Releases the `Defer` holds whose `DEFERTIME` is over.
    pub(crate) fn release_deferred(&mut self, now: Time) {
        let due: Vec<JobId> = self
            .deferred
            .iter()
            .filter(|(_, until)| **until <= now)
            .map(|(job, _)| *job)
            .collect();
        for job in due {
            self.deferred.remove(&job);
            if let Some(rec) = self.exec.get_mut(&job) {
                let rec = Arc::make_mut(rec);
                if let Some(d) = rec.defer.as_mut() {
                    d.until = None;
                }
                self.dirty.insert(job);
            }
            let held = self
                .state
                .job(job)
                .is_some_and(|j| j.holds.contains(HoldType::Defer));
            if held {
                self.apply(
                    Event::ReleaseHold {
                        job,
                        hold: HoldType::Defer,
                    },
                    now,
                );
                tracing::info!(job, "deferral over: job eligible again");
            }
        }
    }

    /// The earliest end of a deferral, for the actor's timer.
    pub(crate) fn next_deferral_end(&self) -> Option<Time> {
        self.deferred.values().min().copied()
    }
}

/// `[D:]HH:MM:SS`.
fn hms(secs: i64) -> String {
    let s = secs.max(0);
    let (d, h, m, s) = (s / 86400, s / 3600 % 24, s / 60 % 60, s % 60);
    if d > 0 {
        format!("{d}:{h:02}:{m:02}:{s:02}")
    } else {
        format!("{h:02}:{m:02}:{s:02}")
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn durations() {
        assert_eq!(super::hms(3600), "01:00:00");
        assert_eq!(super::hms(90061), "1:01:01:01");
        assert_eq!(super::hms(-5), "00:00:00");
    }
}
