//! Missing or damaged state at start-up. The daemon does not start on a
//! guess; it says why and what to do:
//!
//! - a stored record that cannot be read (a job, a start intent, an
//!   administrative reservation) stops the start, naming the record, unless
//!   the daemon runs with `--salvage`: then the record is moved to the
//!   `set_aside` table of `arches.db` (kept as it was, never deleted, with
//!   the reason), reported in the log and by `mdiag -S`, and the daemon
//!   starts without it; an id set aside is never handed out again;
//! - jobs the resource manager runs that the state does not know (the state
//!   database was lost, or replaced by an older copy) stop the start too,
//!   unless `--salvage`: then they are left running (unmanaged) and
//!   reported. Either way no job id the backend has a trace of, live or
//!   ended, is handed out again.
//!
//! (A job whose stored script is missing is held when it would start, with
//! a message, never run with an empty script: `Actor::start_job`.)

use std::fmt::Display;
use std::path::Path;

use arches_core::{JobId, State, Time};
use arches_rm::ResourceManager;
use arches_store::{RecordKind, Store, StoreError};

/// The records that could not be read, in a salvage start.
pub(crate) struct Salvage {
    enabled: bool,
    db: String,
    aside: Vec<(RecordKind, String, String)>,
}

/// The id of the record a decoding error is about.
pub(crate) fn record_id(e: &StoreError) -> String {
    match e {
        StoreError::Corrupt { id, .. } | StoreError::Encode { id, .. } => id.to_string(),
        StoreError::CorruptReservation { id, .. } => id.clone(),
        StoreError::Sql(_) | StoreError::Io { .. } => String::new(),
    }
}

impl Salvage {
    pub(crate) fn new(enabled: bool, db: &Path) -> Salvage {
        Salvage {
            enabled,
            db: db.display().to_string(),
            aside: Vec::new(),
        }
    }

    /// Record `id` of `kind` cannot be read (`why`): set aside in a salvage
    /// start, else the reason the daemon does not start.
    pub(crate) fn unreadable(
        &mut self,
        kind: RecordKind,
        id: String,
        why: &dyn Display,
    ) -> anyhow::Result<()> {
        if !self.enabled {
            anyhow::bail!(
                "{why}: the daemon does not start on an unreadable {} record; `moab --salvage` starts without it (it is set aside, kept, in the set_aside table of {})",
                kind.as_str(),
                self.db
            );
        }
        tracing::warn!(
            kind = kind.as_str(),
            id,
            "unreadable record set aside: {why}"
        );
        self.aside.push((kind, id, why.to_string()));
        Ok(())
    }

    /// Moves the records set aside into the `set_aside` table; what to
    /// report (`mdiag -S`).
    pub(crate) fn finish(self, store: &mut Store, now: Time) -> anyhow::Result<Vec<String>> {
        let mut notices = Vec::new();
        for (kind, id, why) in self.aside {
            store.set_aside(kind, &id, &why, now).map_err(|e| {
                anyhow::anyhow!("cannot set aside {} record {id}: {e}", kind.as_str())
            })?;
            notices.push(format!(
                "salvage: {} record {id} could not be read and was set aside (kept in the set_aside table of {}): {why}",
                kind.as_str(),
                self.db
            ));
        }
        for n in &notices {
            eprintln!("moab: {n}");
        }
        Ok(notices)
    }
}

/// After the backend's recovery: refuses to start when it runs jobs the
/// state does not know (unless `salvage`, then they are reported), and
/// returns the lowest job id that may be handed out (above every id the
/// backend has a trace of) with the notices for `mdiag -S`.
pub(crate) fn check_backend(
    rm: &dyn ResourceManager,
    state: &State,
    salvage: bool,
    db: &Path,
) -> anyhow::Result<(u64, Vec<String>)> {
    let unknown: Vec<JobId> = rm
        .unknown_running()
        .into_iter()
        .filter(|j| state.job(*j).is_none())
        .collect();
    let ids = unknown
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ");
    let mut notices = Vec::new();
    if !unknown.is_empty() {
        if !salvage {
            anyhow::bail!(
                "the resource manager runs jobs {ids} that the state database {} does not know: it was lost or replaced by an older copy. The daemon does not start, so that no job id is handed out twice: put the database back, or start with `moab --salvage` (those jobs are then left running, unmanaged, and their ids are never reused)",
                db.display()
            );
        }
        let n = format!(
            "salvage: jobs {ids} run under the resource manager but are unknown to {} (lost or replaced): left running unmanaged; their ids are never reused",
            db.display()
        );
        tracing::warn!("{n}");
        eprintln!("moab: {n}");
        notices.push(n);
    }
    let floor = rm
        .highest_job_seen()
        .into_iter()
        .chain(unknown)
        .max()
        .map_or(1, |h| h + 1);
    Ok((floor, notices))
}

impl crate::actor::Actor {
    /// The stored script and environment (stored under `pid`: the job's
    /// own id, or its array's) of job `id` about to start. A job whose
    /// script is missing or unreadable is held (batch hold) with a message,
    /// never run with an empty script; a store that cannot be read now
    /// postpones the start. `None` in both cases.
    pub(crate) fn stored_payload(
        &mut self,
        id: JobId,
        pid: JobId,
        now: Time,
    ) -> Option<arches_store::Payload> {
        let damaged = match self.store.payload(pid) {
            Ok(Some(p)) => return Some(p),
            Ok(None) => "its stored script is missing from the state database".to_string(),
            Err(e @ StoreError::Corrupt { .. }) => {
                format!("its stored script cannot be read ({e})")
            }
            Err(e) => {
                let note = format!("start postponed: cannot read the job's script ({e})");
                tracing::warn!(job = id, "{note}");
                self.note(id, note);
                return None;
            }
        };
        tracing::error!(job = id, "job held: {damaged}");
        let queued = self.state.job(id).is_some_and(|j| !j.state.is_active());
        if queued {
            self.apply(
                arches_core::Event::SetHold {
                    job: id,
                    hold: arches_core::HoldType::Batch,
                },
                now,
            );
        }
        self.note(
            id,
            format!(
                "job {}: {damaged}; it is not run (resubmit it, or restore the script and release the hold)",
                if queued { "held" } else { "not launched" }
            ),
        );
        None
    }
}
