//! Placement: choosing concrete nodes for a job (`NODEALLOCATIONPOLICY`).
//!
//! Given, for each candidate node, how many processors and how much memory
//! are available (now, or over the job's future interval), [`place`] picks
//! nodes in the policy's order and fills them with tasks, honouring
//! `nodes=N:ppn=P`, `procs=`, processors and memory per task, features and
//! partition.
//!
//! - `FIRSTAVAILABLE`: lowest node index first.
//! - `LASTAVAILABLE` (Moab's default): highest node index first.
//! - `MINRESOURCE`: nodes with the fewest configured processors (then memory)
//!   first, so big nodes stay free for big jobs.
//! - `CONTIGUOUS`: the first run of consecutive usable node indexes that holds
//!   the whole job.
//! - `PRIORITY`: nodes with the highest `NODECFG[x] PRIORITY=` first (ties
//!   by index).
//! - `MAXBALANCE` and `CPULOAD` need node speeds and loads, which Arches does
//!   not track: they allocate as `FIRSTAVAILABLE`, and the configuration
//!   check warns when they are chosen.

use crate::job::{Alloc, Request};
use crate::node::{Node, NodeAdminState, NodeId};
use crate::policy::NodeAllocationPolicy;

/// Whether `job` could ever run on `state`'s up nodes under `policy`
/// (its shape, generic resources, host list, access policy, class limits
/// and reservation binding), with the reason when not: the engine's own
/// test, for a driver checking a submission.
pub fn feasible(
    state: &crate::state::State,
    policy: &crate::policy::Policy,
    job: &crate::job::Job,
    now: crate::Time,
) -> Result<(), String> {
    crate::context::Ctx::new(state, policy, now).ever_fits(job)
}

/// Whether a node can ever host tasks of this request (up, partition,
/// features; capacity not considered).
pub fn node_matches(node: &Node, req: &Request) -> bool {
    node.admin == NodeAdminState::Up
        && node.has_features(&req.features)
        && req.partition.as_ref().is_none_or(|p| *p == node.partition)
}

/// Whether the request needs per-node treatment: anything other than
/// single-processor tasks placeable on any node.
pub fn is_constrained(req: &Request) -> bool {
    req.layout.is_some()
        || req.nodes.is_some()
        || req.tasks_per_node.is_some()
        || req.mem_per_task_mb > 0
        || !req.features.is_empty()
        || req.partition.is_some()
        || req.procs_per_task > 1
}

/// How many tasks of `req` fit in `procs` free processors and `mem` free MB
/// on `node` (memory ignored when the node does not report any).
pub fn tasks_fitting(node: &Node, req: &Request, procs: u32, mem: u64) -> u32 {
    let mut fit = procs / req.procs_per_task.max(1);
    if req.mem_per_task_mb > 0 && node.mem_mb > 0 {
        fit = fit.min(u32::try_from(mem / req.mem_per_task_mb).unwrap_or(u32::MAX));
    }
    fit
}

/// Picks nodes for `req`. `candidates` are node ids in ascending order;
/// `avail(id)` gives the processors and memory usable on that node.
/// `None` when the job does not fit.
pub fn place(
    nodes: &[Node],
    req: &Request,
    policy: NodeAllocationPolicy,
    candidates: impl DoubleEndedIterator<Item = NodeId>,
    avail: impl Fn(NodeId) -> (u32, u64),
) -> Option<Vec<Alloc>> {
    let ppt = req.procs_per_task.max(1);
    // Tasks each chosen node must hold (exact node count), if any.
    let per_node = match (req.nodes, req.tasks_per_node) {
        (_, Some(tpn)) => Some(tpn.max(1)),
        (Some(n), None) if n > 0 => Some(req.tasks.div_ceil(n).max(1)),
        _ => None,
    };
    let usable = |id: NodeId| -> Option<u32> {
        let node = nodes.get(id as usize)?;
        if !node_matches(node, req) {
            return None;
        }
        let (p, m) = avail(id);
        let fit = tasks_fitting(node, req, p, m);
        match per_node {
            Some(t) if fit >= t => Some(t),
            Some(_) => None,
            None => (fit > 0).then_some(fit),
        }
    };
    let mut alloc = Vec::new();
    let mut remaining = req.tasks;
    let mut take = |id: NodeId, fit: u32, alloc: &mut Vec<Alloc>| {
        let tasks = fit.min(remaining);
        if tasks > 0 {
            remaining -= tasks;
            alloc.push(Alloc {
                node: id,
                tasks,
                procs: tasks * ppt,
                mem_mb: u64::from(tasks) * req.mem_per_task_mb,
                gres: Default::default(),
            });
        }
        remaining == 0
    };
    match policy {
        NodeAllocationPolicy::LastAvailable => {
            for id in candidates.rev() {
                if let Some(fit) = usable(id) {
                    if take(id, fit, &mut alloc) {
                        break;
                    }
                }
            }
        }
        NodeAllocationPolicy::Priority => {
            let mut cands: Vec<(NodeId, u32)> = candidates
                .filter_map(|id| usable(id).map(|f| (id, f)))
                .collect();
            cands.sort_by_key(|(id, _)| (std::cmp::Reverse(nodes[*id as usize].priority), *id));
            for (id, fit) in cands {
                if take(id, fit, &mut alloc) {
                    break;
                }
            }
        }
        NodeAllocationPolicy::MinResource => {
            let mut cands: Vec<(NodeId, u32)> = candidates
                .filter_map(|id| usable(id).map(|f| (id, f)))
                .collect();
            cands.sort_by_key(|(id, _)| {
                let n = &nodes[*id as usize];
                (n.procs, n.mem_mb, *id)
            });
            for (id, fit) in cands {
                if take(id, fit, &mut alloc) {
                    break;
                }
            }
        }
        NodeAllocationPolicy::Contiguous => {
            let mut run: Vec<(NodeId, u32)> = Vec::new();
            let mut total = 0u32;
            let mut found = None;
            for id in candidates {
                match usable(id) {
                    Some(fit) if run.last().is_none_or(|(last, _)| *last + 1 == id) => {
                        run.push((id, fit));
                        total = total.saturating_add(fit);
                    }
                    Some(fit) => {
                        run = vec![(id, fit)];
                        total = fit;
                    }
                    None => {
                        run.clear();
                        total = 0;
                    }
                }
                let nodes_ok = req.nodes.is_none_or(|n| run.len() as u32 >= n);
                if total >= req.tasks && nodes_ok {
                    found = Some(run.clone());
                    break;
                }
            }
            // The run ends at the first node where it became large enough,
            // so every node of it is needed.
            let run = found?;
            for (id, fit) in run {
                if take(id, fit, &mut alloc) {
                    break;
                }
            }
        }
        _ => {
            for id in candidates {
                if let Some(fit) = usable(id) {
                    if take(id, fit, &mut alloc) {
                        break;
                    }
                }
            }
        }
    }
    let nodes_ok = req.nodes.is_none_or(|n| alloc.len() as u32 == n);
    (remaining == 0 && nodes_ok).then(|| {
        alloc.sort_unstable_by_key(|a| a.node);
        alloc
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cluster() -> Vec<Node> {
        vec![
            Node::new("n0", 4, 1000),
            Node::new("n1", 2, 1000),
            Node::new("n2", 4, 1000),
            Node::new("n3", 8, 1000),
        ]
    }

    fn ids(a: &[Alloc]) -> Vec<NodeId> {
        a.iter().map(|a| a.node).collect()
    }

    fn all_free(nodes: &[Node]) -> impl Fn(NodeId) -> (u32, u64) + '_ {
        move |id| (nodes[id as usize].procs, nodes[id as usize].mem_mb)
    }

    #[test]
    fn first_and_last_available() {
        let n = cluster();
        let req = Request::procs(6);
        let f = place(
            &n,
            &req,
            NodeAllocationPolicy::FirstAvailable,
            0..4,
            all_free(&n),
        )
        .unwrap();
        assert_eq!(ids(&f), vec![0, 1]);
        let l = place(
            &n,
            &req,
            NodeAllocationPolicy::LastAvailable,
            0..4,
            all_free(&n),
        )
        .unwrap();
        assert_eq!(ids(&l), vec![3]);
    }

    #[test]
    fn min_resource_prefers_small_nodes() {
        let n = cluster();
        let req = Request::procs(3);
        let a = place(
            &n,
            &req,
            NodeAllocationPolicy::MinResource,
            0..4,
            all_free(&n),
        )
        .unwrap();
        // n1 (2 procs) then n0 (4 procs, lower index than n2).
        assert_eq!(ids(&a), vec![0, 1]);
        assert_eq!(a.iter().map(|x| x.tasks).sum::<u32>(), 3);
    }

    #[test]
    fn contiguous_needs_adjacent_nodes() {
        let n = cluster();
        let req = Request::procs(5);
        // Node 1 busy: nodes 2,3 form the first run that holds 5 tasks.
        let avail = |id: NodeId| {
            if id == 1 {
                (0, 0)
            } else {
                (n[id as usize].procs, 1000)
            }
        };
        let a = place(&n, &req, NodeAllocationPolicy::Contiguous, 0..4, avail).unwrap();
        assert_eq!(ids(&a), vec![2, 3]);
    }

    #[test]
    fn nodes_ppn_memory_and_features() {
        let mut n = cluster();
        n[2].features.push("gpu".into());
        let mut req = Request::procs(4);
        req.nodes = Some(2);
        req.tasks_per_node = Some(2);
        let a = place(
            &n,
            &req,
            NodeAllocationPolicy::FirstAvailable,
            0..4,
            all_free(&n),
        )
        .unwrap();
        assert_eq!(ids(&a), vec![0, 1]);
        req.mem_per_task_mb = 600;
        // 600 MB per task: each node holds one task only; ppn=2 cannot fit.
        assert!(place(
            &n,
            &req,
            NodeAllocationPolicy::FirstAvailable,
            0..4,
            all_free(&n)
        )
        .is_none());
        let mut g = Request::procs(2);
        g.features.push("gpu".into());
        let a = place(
            &n,
            &g,
            NodeAllocationPolicy::FirstAvailable,
            0..4,
            all_free(&n),
        )
        .unwrap();
        assert_eq!(ids(&a), vec![2]);
        assert!(is_constrained(&g));
        assert!(!is_constrained(&Request::procs(3)));
    }

    #[test]
    fn priority_prefers_high_priority_nodes() {
        let mut n = cluster();
        n[2].priority = 10;
        n[1].priority = 5;
        let req = Request::procs(6);
        let a = place(&n, &req, NodeAllocationPolicy::Priority, 0..4, all_free(&n)).unwrap();
        // n2 (4 procs, priority 10) then n1 (2 procs, priority 5).
        assert_eq!(ids(&a), vec![1, 2]);
    }
}
