//! Malleable and resizable jobs in the daemon ([`arches_core::malleable`]):
//! the plan's grows applied (the state, then the resource manager, which
//! tells the job: node file, environment file, `RESIZESIGNAL`), and the
//! owner's resize requests (`mjobctl -m proccount+=N`, `-=N`, `=N` on a
//! running job): a grow request is recorded and planned by the next
//! iterations; a release takes effect at once.

use arches_core::malleable::{self, Grow, GrowKind};
use arches_core::state::JobChange;
use arches_core::{Event, JobId, StartKind, Time};
use arches_rm::LaunchNode;

use crate::actor::Actor;

/// A job that starts and grows in the same iteration starts with its grown
/// allocation (nothing to tell it afterwards): its grows are merged into
/// its start.
pub(crate) fn merge_into_starts(
    mut starts: Vec<arches_core::Start>,
    grows: &[Grow],
) -> (Vec<arches_core::Start>, Vec<Grow>) {
    let mut rest = Vec::new();
    for g in grows {
        let Some(s) = starts.iter_mut().find(|s| s.job == g.job) else {
            rest.push(g.clone());
            continue;
        };
        for a in &g.alloc {
            match s.alloc.iter_mut().find(|b| b.node == a.node) {
                Some(b) => {
                    b.tasks += a.tasks;
                    b.procs += a.procs;
                    b.mem_mb += a.mem_mb;
                }
                None => s.alloc.push(*a),
            }
        }
    }
    (starts, rest)
}

impl Actor {
    /// The nodes of a job's allocation as the backend names them.
    fn launch_nodes(&self, id: JobId) -> Vec<LaunchNode> {
        self.state
            .job(id)
            .and_then(|j| j.run.as_ref())
            .map(|r| arches_rm::launch_nodes(&self.state, &r.alloc, &r.gres_units))
            .unwrap_or_default()
    }

    /// Applies the plan's grows: the state first, then the backend; a grow
    /// the backend refuses is undone.
    pub(crate) fn apply_grows(&mut self, grows: &[Grow], now: Time) {
        for g in grows {
            let event = Event::Grow {
                job: g.job,
                alloc: g.alloc.clone(),
            };
            if !self.apply(event, now) {
                continue;
            }
            let nodes = self.launch_nodes(g.job);
            let signal = self.cfg.moab.hooks.resize_signal;
            if let Err(e) = self.rm.resize(g.job, &nodes, signal, now) {
                self.apply(
                    Event::Shrink {
                        job: g.job,
                        alloc: g.alloc.clone(),
                    },
                    now,
                );
                self.note(g.job, format!("cannot grow job: {e}"));
                tracing::warn!(job = g.job, error = %e, "grow refused by the resource manager");
                continue;
            }
            let total = self.state.job(g.job).map_or(0, |j| j.procs());
            let how = match g.how {
                GrowKind::Auto => "automatic growth".to_string(),
                GrowKind::Request(kind) => {
                    // The request is granted: it is no longer pending.
                    if let Some(e) = self.state.job(g.job).and_then(|j| j.elastic) {
                        let change =
                            JobChange::Elastic(Some(malleable::Elastic { request: None, ..e }));
                        self.apply(Event::Modify { job: g.job, change }, now);
                    }
                    match kind {
                        StartKind::Backfill => "resize request granted, as backfill".to_string(),
                        _ => "resize request granted, in priority order".to_string(),
                    }
                }
            };
            self.note(
                g.job,
                format!("grew by {} to {total} processors ({how})", g.procs()),
            );
            tracing::info!(job = g.job, procs = total, "job grew");
        }
    }

    /// `mjobctl -m proccount+=N|-=N|=N` on a running job (its owner or an
    /// administrator; the caller was checked).
    pub(crate) fn resize_request(
        &mut self,
        id: JobId,
        op: char,
        value: &str,
        now: Time,
    ) -> Result<Option<String>, String> {
        let job = self.known_job(id)?;
        let n: u32 = value
            .trim()
            .parse()
            .map_err(|_| format!("ERROR:  invalid processor count '{value}'"))?;
        let have = job.procs();
        let delta: i64 = match op {
            '+' => i64::from(n),
            '-' => -i64::from(n),
            _ => i64::from(n) - i64::from(have),
        };
        let refuse = |why: String| format!("ERROR:  cannot resize job {id}: {why}");
        if delta == 0 {
            return Ok(Some(format!("job {id} already has {have} processors")));
        }
        if !self.rm.supports_resize() {
            return Err(refuse(format!(
                "the {} resource manager cannot resize running jobs",
                self.rm.kind()
            )));
        }
        if delta > 0 {
            let e = malleable::request(job, delta as u32, now).map_err(refuse)?;
            let pending = e.request.map_or(0, |r| r.procs);
            let change = JobChange::Elastic(Some(e));
            self.apply(Event::Modify { job: id, change }, now);
            self.note(
                id,
                format!("resize request: {pending} more processors pending"),
            );
            return Ok(Some(format!(
                "job {id} resize request: {pending} more processors pending (granted when they fit; checkjob shows why it waits)"
            )));
        }
        let (less, e) = malleable::release(job, delta.unsigned_abs() as u32).map_err(refuse)?;
        if !self.apply(
            Event::Shrink {
                job: id,
                alloc: less.clone(),
            },
            now,
        ) {
            return Err(refuse("the allocation changed meanwhile".to_string()));
        }
        let nodes = self.launch_nodes(id);
        let signal = self.cfg.moab.hooks.resize_signal;
        if let Err(err) = self.rm.resize(id, &nodes, signal, now) {
            self.apply(
                Event::Grow {
                    job: id,
                    alloc: less,
                },
                now,
            );
            return Err(refuse(err.to_string()));
        }
        self.apply(
            Event::Modify {
                job: id,
                change: JobChange::Elastic(Some(e)),
            },
            now,
        );
        let total = self.state.job(id).map_or(0, |j| j.procs());
        self.note(
            id,
            format!("released {} processors, now {total}", delta.unsigned_abs()),
        );
        Ok(Some(format!(
            "job {id} released {} processors (now {total})",
            delta.unsigned_abs()
        )))
    }
}
