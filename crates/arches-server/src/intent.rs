//! Start intents: a start decided but not confirmed survives a crash.
//!
//! Before jobs go to the backend, the record each will have once started is
//! committed to the store's `starts` table (one commit for all the starts of
//! an iteration). The turn's normal commit then writes the started jobs and
//! settles their intents. If the daemon dies in between, the job may be
//! running although its record says queued: recovery takes the intent's
//! record instead, so the backend re-adopts the job if it runs (or records
//! its end), and a job the backend never received goes back to the queue
//! instead of being lost or started twice.
//!
//! `ARCHES_FAILPOINT` makes the daemon kill itself (SIGKILL, like `kill -9`)
//! at a chosen point, for the crash tests: `start-intent` (intents durable,
//! nothing started) or `start-launched` (jobs started, not recorded).

use std::collections::{BTreeMap, BTreeSet};

use arches_core::{Event, Job, JobId, JobState, RunInfo, Start, Time};
use arches_store::JobRecord;

use crate::actor::Actor;

/// The environment variable naming a failpoint.
pub const FAILPOINT_ENV: &str = "ARCHES_FAILPOINT";

/// Kills the process (no cleanup, like `kill -9`) when `ARCHES_FAILPOINT`
/// names this point.
pub fn failpoint(name: &str) {
    if std::env::var(FAILPOINT_ENV).is_ok_and(|v| v == name) {
        tracing::warn!(failpoint = name, "failpoint reached: killing the daemon");
        // SAFETY: kill(2) on our own pid.
        unsafe {
            libc::kill(libc::getpid(), libc::SIGKILL);
        }
    }
}

/// The job as it will be once started as `s` says at `now`, in `state`
/// (`Starting` when the backend confirms starts later).
fn started(job: &Job, s: &Start, now: Time, state: JobState) -> Job {
    let mut j = job.clone();
    j.state = state;
    j.start_count += 1;
    j.run = Some(RunInfo {
        start_time: now,
        alloc: s.alloc.clone(),
        how: s.kind,
        suspended_secs: 0,
        suspended_at: None,
        resumed_at: None,
        terminating: None,
        virtual_walltime: s.virtual_walltime,
        gres_units: Vec::new(),
    });
    j
}

impl Actor {
    /// Starts these jobs: records the intents durably, then hands each job
    /// to the backend ([`Actor::start_job`]). Returns each job's outcome;
    /// when the intents cannot be written nothing is started.
    pub(crate) fn start_jobs(
        &mut self,
        starts: Vec<Start>,
        now: Time,
    ) -> Vec<(JobId, Result<(), String>)> {
        if starts.is_empty() {
            return Vec::new();
        }
        let state = if self.rm.confirms_starts() {
            JobState::Starting
        } else {
            JobState::Running
        };
        let intents: Vec<JobRecord> = starts
            .iter()
            .filter_map(|s| {
                let job = self.state.job(s.job)?;
                let rec = self.exec.get(&s.job)?;
                Some(JobRecord::new(
                    &started(job, s, now, state),
                    (**rec).clone(),
                    self.state.gres_table(),
                ))
            })
            .collect();
        if let Err(e) = self.store.record_starts(&intents) {
            tracing::error!(error = %e, "cannot record start intents: nothing started");
            let why = format!("cannot record the start durably: {}", e.reason());
            self.store_failed(&e);
            for s in &starts {
                self.note(s.job, format!("cannot start job: {why}"));
            }
            return starts
                .into_iter()
                .map(|s| (s.job, Err(why.clone())))
                .collect();
        }
        failpoint("start-intent");
        let out = starts
            .into_iter()
            .map(|s| (s.job, self.start_job(s, now)))
            .collect();
        failpoint("start-launched");
        out
    }

    /// After recovery: a job whose start was never confirmed and that the
    /// backend does not know was never started: back to the queue.
    /// Returns whether `job` was such a job.
    pub(crate) fn requeue_unconfirmed(&mut self, job: JobId, now: Time) -> bool {
        if !self.unconfirmed.remove(&job) {
            return false;
        }
        self.note(
            job,
            "start not confirmed before the server stopped: requeued".to_string(),
        );
        self.apply(Event::Requeue { job }, now);
        tracing::info!(job, "unconfirmed start requeued");
        true
    }
}

/// A stored record, or its start intent (the job may be running) when the
/// record still says queued; such jobs are added to `unconfirmed`.
pub(crate) fn prefer_intent(
    rec: JobRecord,
    intents: &mut BTreeMap<JobId, JobRecord>,
    unconfirmed: &mut BTreeSet<JobId>,
) -> JobRecord {
    let id = rec.job.id;
    match intents.remove(&id) {
        // Queued, or (LOCAL) allocated while staging: launched or not?
        Some(intent)
            if [JobState::Idle, JobState::Staging, JobState::Staged]
                .iter()
                .any(|s| rec.job.state == s.as_str()) =>
        {
            unconfirmed.insert(id);
            intent
        }
        _ => rec,
    }
}
