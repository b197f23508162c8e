//! Task request lists (`trl=1@3600:2@1800:4@900`, `trl=2-8`): jobs that
//! may run in one of several shapes (Moab's malleable jobs, §21.5). Moab
//! "selects a start time and resource footprint to minimize job completion
//! time"; so does the engine, each time it considers such a job:
//!
//! - each alternative is a *variant* of the job (its task count, and its
//!   own wall-clock limit when the list gives one), built once per
//!   iteration ([`variants`]);
//! - [`choose`] asks the planning context when each variant could start
//!   (now, or its earliest start) and keeps the one that completes first;
//!   ties go to the variant with more tasks. A range `A-B` is tried from
//!   `B` down: the largest count that starts now, else `A`'s earliest start;
//! - the chosen variant then goes through the walk like any job; when it
//!   starts, the state records the shape it started with ([`apply_start`]).
//!
//! The representation holds ranges ([`crate::layout::TaskOption`]), so that
//! malleable jobs that grow or shrink later can build on it.

use crate::context::Ctx;
use crate::eligibility::planning_duration;
use crate::job::Job;
use crate::layout::TaskOption;
use crate::Time;

/// The job in each shape its task request list allows, in the list's order
/// (a range gives its largest and smallest counts). Empty without a list.
pub fn variants(job: &Job) -> Vec<Job> {
    let trl = job.req.trl();
    let mut out = Vec::new();
    for o in trl {
        let counts: Vec<u32> = if o.min_tasks == o.max_tasks {
            vec![o.min_tasks]
        } else {
            vec![o.max_tasks, o.min_tasks]
        };
        for t in counts {
            out.push(variant(job, *o, t));
        }
    }
    out
}

/// One shape of `job`: `tasks` tasks anywhere, under the option's limit.
fn variant(job: &Job, o: TaskOption, tasks: u32) -> Job {
    let mut v = job.clone();
    v.req.tasks = tasks;
    v.req.nodes = None;
    v.req.tasks_per_node = None;
    if let Some(l) = v.req.layout.as_deref_mut() {
        l.trl.clear();
        l.groups.clear();
    }
    if v.req.layout.as_deref() == Some(&crate::layout::Layout::default()) {
        v.req.layout = None;
    }
    if o.walltime.is_some() {
        v.walltime = o.walltime;
        v.estimate = None;
    }
    v
}

/// The variant that completes first given the context (index into
/// `vars`); `None` when no variant can ever start.
pub(crate) fn choose(ctx: &mut Ctx<'_>, vars: &[Job]) -> Option<usize> {
    let now = ctx.now;
    let mut best: Option<(Time, std::cmp::Reverse<u32>, usize)> = None;
    for (i, v) in vars.iter().enumerate() {
        let dur = planning_duration(v, ctx.policy);
        let start = if ctx.fit_now(v, dur).is_some() {
            Some(now)
        } else {
            ctx.earliest(v, dur).map(|(t, _)| t)
        };
        let Some(start) = start else { continue };
        let end = dur.map_or(Time::MAX, |d| start.saturating_add(d.max(1)));
        let key = (end, std::cmp::Reverse(v.req.tasks), i);
        if best.is_none_or(|b| key < b) {
            best = Some(key);
        }
    }
    best.map(|b| b.2)
}

/// At its start, a job with a task request list takes the shape it was
/// started with: `tasks` tasks, and the wall-clock limit of the option
/// holding that count (if it gives one).
pub fn apply_start(job: &mut Job, tasks: u32) {
    let Some(o) = job
        .req
        .trl()
        .iter()
        .find(|o| (o.min_tasks..=o.max_tasks).contains(&tasks))
        .copied()
    else {
        return;
    };
    job.req.tasks = tasks;
    job.req.nodes = None;
    job.req.tasks_per_node = None;
    if o.walltime.is_some() {
        job.walltime = o.walltime;
        job.estimate = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::job::Request;

    #[test]
    fn variants_and_start_shape() {
        let mut j = Job::new(1, "u", Request::procs(1), Some(100), 0);
        j.req.layout_mut().trl = crate::layout::parse_trl("1@3600:2@1800:4-8").unwrap();
        let v = variants(&j);
        let shapes: Vec<(u32, Option<i64>)> = v.iter().map(|v| (v.req.tasks, v.walltime)).collect();
        assert_eq!(
            shapes,
            vec![
                (1, Some(3600)),
                (2, Some(1800)),
                (8, Some(100)),
                (4, Some(100))
            ]
        );
        assert!(v[0].req.layout.is_none(), "a variant is a plain request");
        apply_start(&mut j, 2);
        assert_eq!((j.req.tasks, j.walltime), (2, Some(1800)));
        apply_start(&mut j, 6);
        assert_eq!((j.req.tasks, j.walltime), (6, Some(1800)));
    }
}
