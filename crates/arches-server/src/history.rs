//! showhist.moab.pl's job history: the ids a detail query with `history`
//! set names that the daemon no longer holds (purged after `JOBCPURGETIME`)
//! are looked up in the store's history (`arches_store` keeps a purged
//! job's record for `PROFILEDURATION` × `PROFILECOUNT`), through a
//! read-only connection of the request's own, and shown as completed jobs.
//! The same authorization holds as for held jobs ([`crate::authz`]).

use std::sync::Arc;

use arches_api::{Denied, JobDetail, JobsView};

use crate::actor::Snapshot;
use crate::authz::Caller;
use crate::views::Item;

/// Moves the unknown ids of `view` that the history holds into `items`
/// (or into `denied` when the caller may not see them in detail).
pub(crate) fn add(
    s: &Snapshot,
    caller: &Caller,
    items: &mut Vec<Item<JobDetail>>,
    view: &mut JobsView,
) {
    if view.unknown.is_empty() {
        return;
    }
    let path = s.cfg.home.join(crate::STORE_FILE);
    // A served simulation has no store; a daemon's always exists.
    let Ok(store) = arches_store::Store::open_read_only(&path) else {
        return;
    };
    let mut still = Vec::new();
    for token in std::mem::take(&mut view.unknown) {
        let id = token.rsplit('.').next().and_then(|d| d.parse::<u64>().ok());
        let rec = match id.map(|id| store.history_record(id)) {
            Some(Ok(Some(rec))) => rec,
            Some(Err(e)) => {
                tracing::warn!(job = %token, "cannot read the job history: {e}");
                still.push(token);
                continue;
            }
            _ => {
                still.push(token);
                continue;
            }
        };
        let Ok(job) = rec.to_job(s.state.gres_table()) else {
            still.push(token);
            continue;
        };
        if !caller.may_see_detail(&job) {
            view.denied.push(Denied {
                job: token,
                user: caller.user.clone(),
            });
            continue;
        }
        // The views read a job's execution record from the snapshot's map.
        let mut with = s.clone();
        let mut exec = (*with.exec).clone();
        exec.insert(job.id, Arc::new(rec.exec));
        with.exec = Arc::new(exec);
        let pv = crate::preempt::PreemptView::default();
        items.push(Item::Made(Box::new(crate::views::detail_with(
            &with, &job, &pv,
        ))));
    }
    view.unknown = still;
}
