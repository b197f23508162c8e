//! When the store cannot commit (the disk is full, an I/O error): the
//! daemon stays up, keeps serving reads, and owes what it could not write.
//!
//! - A turn's submissions are committed apart from the other requests: when
//!   that commit fails they are taken back (nothing acknowledged is ever
//!   lost, nothing refused stays) and each client gets
//!   `ERROR:    cannot submit job - no space left on the scheduler's disk`.
//! - Every other change (a job's end observed, a hold, a cancel) is in
//!   effect in the running scheduler and stays owed: retried every
//!   [`RETRY`] until a commit succeeds; the clients of requests whose
//!   change is not recorded yet are told so.
//! - While the store fails no job is started (a start needs its intent
//!   recorded first, `crate::intent`), so scheduling waits; `mdiag -S`
//!   says why. The first commit that succeeds ends all this by itself.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use arches_core::{JobId, State, Time};
use arches_store::StoreError;

use crate::actor::{Actor, ExecMap, Input};

/// How often owed changes are retried while the store fails.
pub const RETRY: Duration = Duration::from_secs(1);

/// The store's last failure.
#[derive(Debug, Clone)]
pub struct StoreFault {
    /// For users: `no space left on the scheduler's disk`, ...
    pub reason: String,
    /// When the last commit was tried.
    pub tried: Instant,
}

/// What the actor was before a turn's submissions (they are taken back
/// when their commit fails).
struct Mark {
    state: State,
    exec: ExecMap,
    next_id: u64,
    payloads: usize,
    dirty: BTreeSet<JobId>,
    arrays_dirty: BTreeSet<JobId>,
}

/// A reply to send once the turn is durable and published.
pub(crate) type Reply = Box<dyn FnOnce()>;

impl Actor {
    /// Handles a turn's inputs: submissions first (taken back and refused
    /// if their commit fails), then the other requests. Returns the replies.
    pub(crate) fn turn(&mut self, inputs: Vec<Input>, now: Time) -> Vec<Reply> {
        let (subs, others): (Vec<Input>, Vec<Input>) = inputs
            .into_iter()
            .partition(|i| matches!(i, Input::Submit { .. }));
        let mut replies: Vec<Reply> = Vec::new();
        if !subs.is_empty() {
            let mark = Mark {
                state: self.state.clone(),
                exec: self.exec.clone(),
                next_id: self.next_id,
                payloads: self.payloads.len(),
                dirty: self.dirty.clone(),
                arrays_dirty: self.arrays.dirty.clone(),
            };
            let mut answers = Vec::new();
            for input in subs {
                if let Input::Submit { sub, reply } = input {
                    answers.push((reply, self.submit(*sub, now)));
                }
            }
            let accepted = answers.iter().any(|(_, r)| r.is_ok());
            if accepted {
                if let Err(e) = self.commit() {
                    // Never acknowledged, never kept: as if never submitted.
                    self.state = mark.state;
                    self.exec = mark.exec;
                    self.next_id = mark.next_id;
                    self.payloads.truncate(mark.payloads);
                    self.dirty = mark.dirty;
                    // Arrays submitted this turn (ids from the mark on).
                    self.arrays.records.retain(|id, _| *id < mark.next_id);
                    self.arrays.dirty = mark.arrays_dirty;
                    let why = e.reason();
                    tracing::error!(error = %e, "submissions refused: the store cannot commit");
                    for (_, r) in answers.iter_mut() {
                        if r.is_ok() {
                            *r = Err(crate::jobspec::SubmitError(why.clone()));
                        }
                    }
                }
            }
            for (reply, result) in answers {
                replies.push(Box::new(move || {
                    let _ = reply.send(result);
                }));
            }
        }
        if others.is_empty() {
            return replies;
        }
        let mut answers = Vec::new();
        for input in others {
            match input {
                Input::Action { caller, req, reply } => {
                    answers.push((reply, self.job_action(&caller, &req, now)));
                }
                Input::Control { caller, req, reply } => {
                    answers.push((reply, self.control(&caller, &req, now)));
                }
                Input::Reservation { caller, req, reply } => {
                    answers.push((reply, self.reservation_control(&caller, &req, now)));
                }
                Input::Shutdown => self.stop = true,
                Input::Activation { job, verdict } => self.activation_result(job, verdict, now),
                Input::Submit { .. } => {}
            }
        }
        let failed = self.commit().err();
        for (reply, mut resp) in answers {
            if let Some(e) = failed.as_ref().filter(|_| !resp.failed) {
                // In effect (a signal may have been sent), not yet durable.
                resp.stderr.push(format!(
                    "WARNING:  the change is in effect but not recorded yet: {} (retried until it is)",
                    e.reason()
                ));
            }
            replies.push(Box::new(move || {
                let _ = reply.send(resp);
            }));
        }
        replies
    }

    /// Commits what is owed; on failure it stays owed and the fault is
    /// remembered (and logged once).
    pub(crate) fn commit(&mut self) -> Result<(), StoreError> {
        let r = self.persist();
        match &r {
            Ok(()) => {
                if let Some(f) = self.store_fault.take() {
                    tracing::warn!(was = f.reason, "the store commits again");
                    self.stats.store_fault = None;
                    self.wake = true;
                }
            }
            Err(e) => self.store_failed(e),
        }
        r
    }

    /// Remembers that the store failed (`e`).
    pub(crate) fn store_failed(&mut self, e: &StoreError) {
        let reason = e.reason();
        if self.store_fault.as_ref().is_none_or(|f| f.reason != reason) {
            tracing::error!(error = %e, "the store cannot commit: changes are kept and retried");
        }
        self.stats.store_fault = Some(format!(
            "cannot record changes: {reason}; new jobs are refused and none is started until it can (retried every {} s)",
            RETRY.as_secs()
        ));
        self.store_fault = Some(StoreFault {
            reason,
            tried: Instant::now(),
        });
    }

    /// Whether a commit may be tried now (at once normally, every
    /// [`RETRY`] while the store fails).
    pub(crate) fn commit_due(&self) -> bool {
        self.store_fault
            .as_ref()
            .is_none_or(|f| f.tried.elapsed() >= RETRY)
    }
}
