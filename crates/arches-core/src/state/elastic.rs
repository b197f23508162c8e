//! [`Event::Grow`](super::Event::Grow) and
//! [`Event::Shrink`](super::Event::Shrink): a running malleable or
//! resizable job takes more processors, or gives some back
//! ([`crate::malleable`]).

use std::sync::Arc;

use super::{wrong, EventError, State};
use crate::job::{Alloc, JobId, JobState};

impl State {
    /// Adds `extra` to a running job's allocation (merged per node).
    pub(super) fn grow(&mut self, job: JobId, extra: Vec<Alloc>) -> Result<(), EventError> {
        let j = self.get(job)?;
        if j.state != JobState::Running {
            return Err(wrong(j, "Running"));
        }
        let Some(run) = j.run.as_ref() else {
            return Err(wrong(j, "Running"));
        };
        let mut fresh = Vec::new();
        for a in &extra {
            let n = self.node(a.node).ok_or(EventError::UnknownNode(a.node))?;
            let u = self.usage(a.node);
            if u.procs + a.procs > n.procs || (n.mem_mb > 0 && u.mem_mb + a.mem_mb > n.mem_mb) {
                return Err(EventError::Overallocated { job, node: a.node });
            }
            if !run.alloc.iter().any(|b| b.node == a.node) && !fresh.contains(&a.node) {
                fresh.push(a.node);
            }
        }
        for a in &extra {
            let u = &mut self.usage[a.node as usize];
            u.procs += a.procs;
            u.mem_mb += a.mem_mb;
        }
        for n in &fresh {
            self.usage[*n as usize].jobs += 1;
        }
        let j = self
            .jobs
            .get_mut(&job)
            .map(Arc::make_mut)
            .expect("checked above");
        let run = j.run.as_mut().expect("checked above");
        for a in extra {
            match run.alloc.iter_mut().find(|b| b.node == a.node) {
                Some(b) => {
                    b.tasks += a.tasks;
                    b.procs += a.procs;
                    b.mem_mb += a.mem_mb;
                }
                None => run.alloc.push(a),
            }
        }
        Ok(())
    }

    /// Takes `less` out of a running job's allocation: each entry must be
    /// part of it; a node left with nothing leaves the allocation.
    pub(super) fn shrink(
        &mut self,
        job: JobId,
        less: Vec<Alloc>,
        now: crate::Time,
    ) -> Result<(), EventError> {
        let j = self.get(job)?;
        if j.state != JobState::Running {
            return Err(wrong(j, "Running"));
        }
        let Some(run) = j.run.as_ref() else {
            return Err(wrong(j, "Running"));
        };
        let mut left = run.alloc.clone();
        for a in &less {
            let Some(b) = left.iter_mut().find(|b| b.node == a.node) else {
                return Err(EventError::Overallocated { job, node: a.node });
            };
            if b.procs < a.procs || b.tasks < a.tasks || b.mem_mb < a.mem_mb {
                return Err(EventError::Overallocated { job, node: a.node });
            }
            b.procs -= a.procs;
            b.tasks -= a.tasks;
            b.mem_mb -= a.mem_mb;
        }
        if left.iter().all(|b| b.procs == 0) {
            return Err(wrong(j, "left with processors"));
        }
        for a in &less {
            let u = &mut self.usage[a.node as usize];
            u.procs = u.procs.saturating_sub(a.procs);
            u.mem_mb = u.mem_mb.saturating_sub(a.mem_mb);
        }
        for b in left.iter().filter(|b| b.procs == 0) {
            let u = &mut self.usage[b.node as usize];
            u.jobs = u.jobs.saturating_sub(1);
            u.mem_mb = u.mem_mb.saturating_sub(b.mem_mb);
        }
        left.retain(|b| b.procs > 0);
        let j = self
            .jobs
            .get_mut(&job)
            .map(Arc::make_mut)
            .expect("checked above");
        if let Some(r) = j.run.as_mut() {
            r.alloc = left;
        }
        self.last_freed = Some(now);
        Ok(())
    }
}
