//! What happens to a job whose start failed (Moab's deferral): the
//! resource manager could not start it (a missing working directory, an
//! output file that cannot be opened, a refused launch...).
//!
//! Moab does not retry such a job at once, forever: after `DEFERSTARTCOUNT`
//! failed starts it *defers* the job — a `Defer` hold, state `Deferred`,
//! released after `DEFERTIME` — and after `DEFERCOUNT` deferrals it places a
//! `Batch` hold that only an administrator releases (moab-formats §1.3:
//! "Deferred (held 1 h, retried 24 times then BatchHold)").
//!
//! The decision is pure: the driver keeps a [`DeferState`] per job, calls
//! [`start_failed`] on every failed start and applies the answer (a hold, and
//! a timed release of the `Defer` hold).

use crate::{Secs, Time};

/// `DEFERSTARTCOUNT`, `DEFERTIME`, `DEFERCOUNT`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeferPolicy {
    /// Failed starts before a deferral (`DEFERSTARTCOUNT`, at least 1).
    pub start_count: u32,
    /// How long a deferral lasts (`DEFERTIME`).
    pub time: Secs,
    /// Deferrals before a batch hold (`DEFERCOUNT`, at least 1): the
    /// `DEFERCOUNT`-th deferral is a batch hold instead.
    pub count: u32,
}

impl Default for DeferPolicy {
    /// Moab's defaults: 1, one hour, 24.
    fn default() -> Self {
        DeferPolicy {
            start_count: 1,
            time: 3600,
            count: 24,
        }
    }
}

/// A job's failed-start history.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DeferState {
    /// Failed starts since the last deferral.
    pub failures: u32,
    /// Deferrals so far (the batch hold included).
    pub defers: u32,
    /// When the current deferral ends (`None`: not deferred).
    pub until: Option<Time>,
}

/// What to do with a job whose start just failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StartFailure {
    /// Back to the queue, eligible again (fewer than `DEFERSTARTCOUNT`
    /// failures since the last deferral).
    Retry,
    /// A `Defer` hold until this time.
    Defer { until: Time },
    /// A `Batch` hold: the job failed to start `DEFERCOUNT` times over.
    BatchHold,
}

/// Records a failed start at `now` and decides what happens to the job.
pub fn start_failed(state: &mut DeferState, policy: &DeferPolicy, now: Time) -> StartFailure {
    state.failures = state.failures.saturating_add(1);
    if state.failures < policy.start_count.max(1) {
        return StartFailure::Retry;
    }
    state.failures = 0;
    state.defers = state.defers.saturating_add(1);
    if state.defers >= policy.count.max(1) {
        state.until = None;
        return StartFailure::BatchHold;
    }
    let until = now.saturating_add(policy.time.max(0));
    state.until = Some(until);
    StartFailure::Defer { until }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_failure_defers_by_default_and_the_24th_is_a_batch_hold() {
        let p = DeferPolicy::default();
        let mut s = DeferState::default();
        for n in 1..24 {
            let now = 1000 * i64::from(n);
            assert_eq!(
                start_failed(&mut s, &p, now),
                StartFailure::Defer { until: now + 3600 },
                "failure {n}"
            );
            assert_eq!(s.until, Some(now + 3600));
            assert_eq!(s.defers, n);
        }
        assert_eq!(start_failed(&mut s, &p, 99_000), StartFailure::BatchHold);
        assert_eq!(s.until, None);
        // Released by an administrator and failing again: held again at once.
        assert_eq!(start_failed(&mut s, &p, 99_100), StartFailure::BatchHold);
    }

    #[test]
    fn defer_start_count_allows_retries_before_deferring() {
        let p = DeferPolicy {
            start_count: 3,
            time: 60,
            count: 2,
        };
        let mut s = DeferState::default();
        assert_eq!(start_failed(&mut s, &p, 10), StartFailure::Retry);
        assert_eq!(start_failed(&mut s, &p, 20), StartFailure::Retry);
        assert_eq!(
            start_failed(&mut s, &p, 30),
            StartFailure::Defer { until: 90 }
        );
        assert_eq!(s.failures, 0, "counting starts again after a deferral");
        assert_eq!(start_failed(&mut s, &p, 100), StartFailure::Retry);
        assert_eq!(start_failed(&mut s, &p, 110), StartFailure::Retry);
        assert_eq!(start_failed(&mut s, &p, 120), StartFailure::BatchHold);
    }

    #[test]
    fn zero_counts_mean_one() {
        let p = DeferPolicy {
            start_count: 0,
            time: 0,
            count: 0,
        };
        let mut s = DeferState::default();
        assert_eq!(start_failed(&mut s, &p, 5), StartFailure::BatchHold);
        let p = DeferPolicy { count: 2, ..p };
        let mut s = DeferState::default();
        assert_eq!(
            start_failed(&mut s, &p, 5),
            StartFailure::Defer { until: 5 }
        );
    }
}
