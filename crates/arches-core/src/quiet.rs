//! Iterations that cannot start anything: a cheap test a driver that acts
//! only on starts may ask before planning.
//!
//! A scheduling iteration plans the whole queue: priorities, the
//! availability profile, reservations, backfill. On a loaded machine many
//! iterations follow a submission while every processor is busy, and the
//! plan they make starts nothing: no queued job needs as few processors as
//! the up nodes have free. [`nothing_can_start`] answers that from the
//! nodes' free processors and the queued jobs' requests alone, and only
//! when no other part of a plan could change the state either (no
//! preemptor and no `BACKFILLPOLICY PREEMPT` requeue that could make
//! room, no suspended job to resume, no
//! malleable job to grow, no virtual wall-clock limit to restore, no
//! guaranteed deadline to report).
//!
//! It is conservative: it may answer `false` when the plan would start
//! nothing after all (a job blocked by a limit, a reservation or memory),
//! never `true` when the plan would start something. The property tests
//! (`tests/lean.rs`, `tests/invariants.rs`, `tests/preempt_props.rs`) check
//! it against [`crate::schedule()`] at every iteration of their replays.
//!
//! The reservations of such a plan are not computed. A driver that keeps
//! them (`RESERVATIONPOLICY HIGHEST` remembers them in the state), shows
//! them (`showres`, `checkjob` of a served simulation) or wakes at their
//! start times for a reason of its own must plan as usual.

use crate::job::{Job, JobFlag, JobState};
use crate::node::NodeId;
use crate::policy::{BackfillPolicy, Policy};
use crate::state::State;

/// Whether a scheduling iteration now would start nothing and change
/// nothing but reservations and wake-ups: see the module doc.
pub fn nothing_can_start(state: &State, policy: &Policy) -> bool {
    if crate::deadline::any_guaranteed(policy)
        || crate::preempt::preemptor_configured(policy)
        || policy.backfill == BackfillPolicy::Preempt
        || policy.bf_virtual_walltime_factor.is_some_and(|f| f > 0.0)
    {
        return false;
    }
    let running_only = state
        .active()
        .all(|j| j.state == JobState::Running && j.elastic.is_none());
    if !running_only {
        return false;
    }
    let free: u64 = (0..state.nodes().len())
        .map(|i| u64::from(state.free_procs(i as NodeId)))
        .sum();
    state
        .queued()
        .all(|j| least_procs(j) > free && !j.flags.contains(JobFlag::Preemptor))
}

/// The fewest processors `job` can start with: its request, or nothing
/// known (0) when it may start smaller (a task request list, a malleable
/// job).
fn least_procs(job: &Job) -> u64 {
    if !job.req.trl().is_empty() || job.elastic.is_some() {
        return 0;
    }
    u64::from(job.req.total_procs())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::job::{Alloc, Request, StartKind};
    use crate::node::Node;
    use crate::policy::{QosConfig, QosFlag};
    use crate::state::Event;

    /// Two 4-processor nodes, a 6-processor job running on them (1 + 1
    /// free), and queued jobs of these sizes.
    fn state(queued: &[u32]) -> State {
        let mut s = State::new(vec![Node::new("n0", 4, 0), Node::new("n1", 4, 0)]);
        let run = crate::job::Job::new(1, "u", Request::procs(6), Some(100), 0);
        s.apply(Event::submit(run), 0).unwrap();
        let alloc = |node, procs| Alloc {
            node,
            tasks: procs,
            procs,
            ..Alloc::default()
        };
        s.apply(
            Event::start(
                1,
                vec![alloc(0, 3), alloc(1, 3)],
                StartKind::Priority,
                false,
            ),
            0,
        )
        .unwrap();
        for (i, p) in queued.iter().enumerate() {
            let j = crate::job::Job::new(i as u64 + 2, "u", Request::procs(*p), Some(100), 1);
            s.apply(Event::submit(j), 1).unwrap();
        }
        s
    }

    #[test]
    fn nothing_starts_when_every_queued_job_needs_more_than_is_free() {
        let p = Policy::default();
        assert!(nothing_can_start(&state(&[3, 8]), &p));
        assert!(nothing_can_start(&state(&[]), &p));
        // Two free processors on two nodes: a 2-processor job may fit.
        assert!(!nothing_can_start(&state(&[3, 2]), &p));
        assert!(crate::schedule(&state(&[3, 2]), &p, 1).starts.len() == 1);
        assert!(crate::schedule(&state(&[3, 8]), &p, 1).starts.is_empty());
    }

    #[test]
    fn a_preemptor_or_a_suspended_job_may_change_the_state() {
        let mut p = Policy::default();
        p.qos.insert(
            "hi".into(),
            QosConfig {
                flags: vec![QosFlag::Preemptor],
                ..QosConfig::default()
            },
        );
        assert!(!nothing_can_start(&state(&[3]), &p));
        let mut s = state(&[3]);
        s.apply(Event::Suspend { job: 1 }, 2).unwrap();
        assert!(!nothing_can_start(&s, &Policy::default()));
        // A job that is a preemptor by its own flag.
        let mut s = state(&[]);
        let mut j = crate::job::Job::new(9, "u", Request::procs(3), Some(100), 1);
        j.flags.insert(JobFlag::Preemptor);
        s.apply(Event::submit(j), 1).unwrap();
        assert!(!nothing_can_start(&s, &Policy::default()));
    }
}
