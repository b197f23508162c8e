//! One scheduling iteration: `schedule(&State, &Policy, now) -> Plan`.
//!
//! Order of work (after Maui's `MSched.c`): eligibility, priority, start jobs
//! in priority order while they fit, reservations, backfill. This module is the
//! entry point; each stage lives in its own module.

use crate::job::{Alloc, Job, JobState, StartKind};
use crate::node::NodeAdminState;
use crate::plan::{BlockReason, Decision, Plan, PriorityBreakdown, Start};
use crate::policy::Policy;
use crate::state::State;
use crate::Time;

/// Runs one iteration. Pure: equal inputs give equal plans.
pub fn schedule(state: &State, policy: &Policy, now: Time) -> Plan {
    let _ = policy;
    let mut free: Vec<(u32, u64)> = (0..state.nodes().len() as u32)
        .map(|n| (state.free_procs(n), state.free_mem_mb(n)))
        .collect();
    let mut queue: Vec<&Job> = state
        .queued()
        .filter(|j| j.state == JobState::Idle)
        .collect();
    queue.sort_by_key(|j| (j.submit_time, j.id));
    let mut plan = Plan {
        now,
        ..Plan::default()
    };
    let mut blocked_head = false;
    for (rank, job) in queue.iter().enumerate() {
        let mut decision = Decision {
            priority: PriorityBreakdown::default(),
            rank: rank as u32 + 1,
            reason: None,
            eligible: true,
        };
        if !job.holds.is_empty() {
            decision.eligible = false;
            decision.reason = Some(BlockReason::Hold(job.holds.iter().collect()));
        } else if job.start_after.is_some_and(|t| t > now) {
            decision.eligible = false;
            decision.reason = Some(BlockReason::StartDate(job.start_after.unwrap_or(now)));
        } else if blocked_head {
            decision.reason = Some(BlockReason::Resources {
                idle_procs: free.iter().map(|f| f.0).sum(),
                needed_procs: job.req.total_procs(),
            });
        } else if let Some(alloc) = place_first_available(state, job, &free) {
            for a in &alloc {
                let f = &mut free[a.node as usize];
                f.0 -= a.procs;
                f.1 = f.1.saturating_sub(a.mem_mb);
            }
            plan.starts.push(Start {
                job: job.id,
                alloc,
                kind: StartKind::Priority,
            });
        } else {
            blocked_head = true;
            decision.reason = Some(BlockReason::Resources {
                idle_procs: free.iter().map(|f| f.0).sum(),
                needed_procs: job.req.total_procs(),
            });
        }
        plan.decisions.insert(job.id, decision);
    }
    plan.next_wakeup = state.next_wakeup(now);
    plan
}

/// Places a job's tasks on the first nodes with room, honouring features,
/// partition, tasks-per-node and memory. `None` when it does not fit now.
fn place_first_available(state: &State, job: &Job, free: &[(u32, u64)]) -> Option<Vec<Alloc>> {
    let req = &job.req;
    let ppt = req.procs_per_task.max(1);
    let mut remaining = req.tasks;
    let mut alloc = Vec::new();
    for (i, node) in state.nodes().iter().enumerate() {
        if remaining == 0 {
            break;
        }
        if node.admin != NodeAdminState::Up || !node.has_features(&req.features) {
            continue;
        }
        if req.partition.as_ref().is_some_and(|p| *p != node.partition) {
            continue;
        }
        let (fp, fm) = free[i];
        let mut fit = fp / ppt;
        if req.mem_per_task_mb > 0 && node.mem_mb > 0 {
            fit = fit.min((fm / req.mem_per_task_mb) as u32);
        }
        if let Some(tpn) = req.tasks_per_node {
            if fit < tpn {
                continue;
            }
            fit = tpn;
        }
        let tasks = fit.min(remaining);
        if tasks == 0 {
            continue;
        }
        remaining -= tasks;
        alloc.push(Alloc {
            node: i as u32,
            tasks,
            procs: tasks * ppt,
            mem_mb: u64::from(tasks) * req.mem_per_task_mb,
        });
    }
    let nodes_ok = req.nodes.is_none_or(|n| alloc.len() as u32 == n);
    (remaining == 0 && nodes_ok).then_some(alloc)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::job::Request;
    use crate::node::Node;
    use crate::state::Event;

    #[test]
    fn fifo_starts_what_fits_in_order() {
        let mut s = State::new(vec![Node::new("n1", 4, 0)]);
        for (id, procs) in [(1, 2), (2, 4), (3, 1)] {
            s.apply(
                Event::Submit(Box::new(Job::new(
                    id,
                    "u",
                    Request::procs(procs),
                    Some(60),
                    id as i64,
                ))),
                0,
            )
            .unwrap();
        }
        let plan = schedule(&s, &Policy::default(), 10);
        let started: Vec<u64> = plan.starts.iter().map(|s| s.job).collect();
        assert_eq!(started, vec![1]);
        assert!(matches!(
            plan.decisions[&2].reason,
            Some(BlockReason::Resources { .. })
        ));
    }
}
