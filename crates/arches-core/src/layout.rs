//! Requests beyond `N tasks` / `nodes=N:ppn=P`: Torque's node
//! specifications and Moab's placement extensions, and where such jobs go.
//!
//! What a [`Layout`] adds to a [`Request`]:
//!
//! - node groups, each `count` distinct nodes with `tasks_per_node` tasks
//!   (`nodes=2:ppn=8+1:ppn=4`), optionally one named host (`nodes=n1+n2`,
//!   `nodes=n3:ppn=4`), features and generic resources per node
//!   (`nodes=1:ppn=4:gpus=2:bigmem`). No node serves two groups of a job;
//! - a host list (`hostlist=`, `-W x=HOSTLIST:`): the job may only use these
//!   nodes (Moab's default `Required HostList` mode: a subset of them);
//! - generic resources per task (`gres=gpu:2`, [`crate::gres`]);
//! - a node access policy of its own (`naccesspolicy=`, [`crate::access`]);
//! - a reservation to run in (`ADVRES:name`, or any it may use);
//! - a task request list (`trl=1@3600:2@1800:4@900`, `trl=2-8`): alternative
//!   task counts with their own wall-clock limits; the engine picks the one
//!   that completes first ([`crate::schedule`]). A range holds every count
//!   in it (malleable jobs).
//!
//! Placement ([`place`]) first keeps the nodes a job may use at all (up,
//! partition, features, host list, access policy, the caller's own
//! exclusions), orders them by `NODEALLOCATIONPOLICY`, then fills the
//! groups: named hosts first, then the groups with the most tasks per node
//! (greedy: a group takes the first nodes of the order that hold it).

use crate::access::{self, NodeAccessPolicy};
use crate::gres::Gres;
use crate::job::{Alloc, Request};
use crate::node::{Node, NodeAdminState, NodeId};
use crate::policy::NodeAllocationPolicy;
use crate::state::State;
use crate::Secs;

/// The rarer parts of a request (boxed in [`Request::layout`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Layout {
    /// Node groups (mixed layouts, named hosts, per-node generic
    /// resources). Empty: the request's own `nodes`/`tasks_per_node`.
    pub groups: Vec<NodeGroup>,
    /// Required host list: only these nodes may be used.
    pub hosts: Vec<String>,
    /// Generic resources per task, by name.
    pub gres: Vec<(String, u32)>,
    /// The job's own node access policy.
    pub access: Option<NodeAccessPolicy>,
    /// Run inside this reservation (`Some("")`: inside any it may use).
    pub advres: Option<String>,
    /// Task request list (alternatives), in the order given.
    pub trl: Vec<TaskOption>,
}

/// One part of a Torque node specification.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeGroup {
    /// How many nodes (1 for a named host).
    pub count: u32,
    /// A named host (`nodes=n1:ppn=2`).
    pub host: Option<String>,
    pub tasks_per_node: u32,
    /// Features each node of the group must have (besides the request's).
    pub features: Vec<String>,
    /// Generic resources per node (`gpus=G`), by name.
    pub gres: Vec<(String, u32)>,
}

impl NodeGroup {
    pub fn tasks(&self) -> u32 {
        self.count.saturating_mul(self.tasks_per_node)
    }
}

/// One alternative of a task request list: `min..=max` tasks (one count
/// unless a range), with its own wall-clock limit if given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TaskOption {
    pub min_tasks: u32,
    pub max_tasks: u32,
    pub walltime: Option<Secs>,
}

impl TaskOption {
    /// Moab's notation: `N[@T]` or `A-B`.
    pub fn describe(&self) -> String {
        let tasks = if self.min_tasks == self.max_tasks {
            self.min_tasks.to_string()
        } else {
            format!("{}-{}", self.min_tasks, self.max_tasks)
        };
        match self.walltime {
            Some(w) => format!("{tasks}@{w}"),
            None => tasks,
        }
    }
}

/// Moab's `trl=` text: `1@3600:2@1800:4@900`, `2,4,8`, `2-8`.
pub fn parse_trl(text: &str) -> Result<Vec<TaskOption>, String> {
    let bad = |why: &str| format!("invalid task request list '{text}' ({why})");
    let mut out = Vec::new();
    for part in text.split([':', ',']).map(str::trim) {
        if part.is_empty() {
            return Err(bad("empty entry"));
        }
        let (tasks, wall) = match part.split_once('@') {
            Some((t, w)) => (t, Some(w)),
            None => (part, None),
        };
        let walltime = match wall {
            Some(w) => Some(
                crate::timespec::parse_duration(w)
                    .ok()
                    .filter(|w| *w > 0)
                    .ok_or_else(|| bad(&format!("walltime '{w}'")))?,
            ),
            None => None,
        };
        let count = |s: &str| -> Result<u32, String> {
            s.trim()
                .parse::<u32>()
                .ok()
                .filter(|n| *n > 0)
                .ok_or_else(|| bad(&format!("task count '{s}'")))
        };
        let (min_tasks, max_tasks) = match tasks.split_once('-') {
            Some((a, b)) => {
                let (a, b) = (count(a)?, count(b)?);
                if a > b {
                    return Err(bad(&format!("range {a}-{b} is reversed")));
                }
                (a, b)
            }
            None => {
                let n = count(tasks)?;
                (n, n)
            }
        };
        out.push(TaskOption {
            min_tasks,
            max_tasks,
            walltime,
        });
    }
    Ok(out)
}

/// What is free on one node for a placement.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Free {
    pub procs: u32,
    pub mem: u64,
    pub gres: Gres,
}

/// A request resolved against the state (generic-resource ids, host ids)
/// for placement.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Demand {
    pub per_task: Gres,
    pub groups: Vec<GroupDemand>,
    /// Allowed nodes (ascending); `None`: any.
    pub hosts: Option<Vec<NodeId>>,
    pub access: Option<NodeAccessPolicy>,
}

/// A [`NodeGroup`] resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupDemand {
    pub count: u32,
    pub host: Option<NodeId>,
    pub tasks_per_node: u32,
    pub features: Vec<String>,
    pub per_node: Gres,
}

impl Demand {
    /// Resolves `req`'s layout; `Err` when it names a host or a generic
    /// resource the state does not know.
    pub fn resolve(state: &State, req: &Request) -> Result<Demand, String> {
        let Some(l) = req.layout.as_deref() else {
            return Ok(Demand::default());
        };
        let table = state.gres_table();
        let per_task = table.resolve(&l.gres)?;
        let host = |h: &str| {
            state
                .node_id(h)
                .ok_or_else(|| format!("no node is named '{h}'"))
        };
        let mut groups = Vec::with_capacity(l.groups.len());
        for g in &l.groups {
            groups.push(GroupDemand {
                count: g.count,
                host: g.host.as_deref().map(host).transpose()?,
                tasks_per_node: g.tasks_per_node,
                features: g.features.clone(),
                per_node: table.resolve(&g.gres)?,
            });
        }
        let hosts = if l.hosts.is_empty() {
            None
        } else {
            let mut v = l
                .hosts
                .iter()
                .map(|h| host(h))
                .collect::<Result<Vec<_>, _>>()?;
            v.sort_unstable();
            v.dedup();
            Some(v)
        };
        Ok(Demand {
            per_task,
            groups,
            hosts,
            access: l.access,
        })
    }

    /// Generic resources the whole job needs (tasks × per task + groups).
    pub fn total_gres(&self, req: &Request) -> Gres {
        let mut g = self.per_task.times(req.tasks);
        for grp in &self.groups {
            g = g.plus(&grp.per_node.times(grp.count));
        }
        g
    }

    /// Whether the job uses generic resources.
    pub fn uses_gres(&self) -> bool {
        !self.per_task.is_empty() || self.groups.iter().any(|g| !g.per_node.is_empty())
    }
}

/// Whether `node` can ever host tasks of `req` (up, partition, features,
/// host list, access policy; capacity not considered).
pub fn node_usable(
    node: &Node,
    id: NodeId,
    req: &Request,
    dem: &Demand,
    default: NodeAccessPolicy,
) -> bool {
    node.admin == NodeAdminState::Up
        && node.has_features(&req.features)
        && req.partition.as_ref().is_none_or(|p| *p == node.partition)
        && dem
            .hosts
            .as_ref()
            .is_none_or(|h| h.binary_search(&id).is_ok())
        && access::node_admits(dem.access, node, default)
}

/// How many tasks of `req` fit on `node` given what is `free` there,
/// under access `policy`, with `per_node` generic resources on top of the
/// per-task ones (0: none). A dedicating policy needs the whole node free.
#[allow(clippy::too_many_arguments)]
fn node_fit(
    node: &Node,
    cap: &Gres,
    req: &Request,
    dem: &Demand,
    free: &Free,
    policy: NodeAccessPolicy,
    per_node: &Gres,
) -> u32 {
    if policy.dedicates()
        && (free.procs < node.procs
            || (node.mem_mb > 0 && free.mem < node.mem_mb)
            || !free.gres.covers(cap))
    {
        return 0;
    }
    if !free.gres.covers(per_node) {
        return 0;
    }
    let mut fit = free.procs / req.procs_per_task.max(1);
    if req.mem_per_task_mb > 0 && node.mem_mb > 0 {
        fit = fit.min(u32::try_from(free.mem / req.mem_per_task_mb).unwrap_or(u32::MAX));
    }
    fit = fit.min(free.gres.minus(per_node).fits(&dem.per_task));
    if policy == NodeAccessPolicy::SingleTask {
        fit = fit.min(1);
    }
    fit
}

/// The allocation of `tasks` tasks on `node`: the whole node under a
/// dedicating policy.
#[allow(clippy::too_many_arguments)]
fn make_alloc(
    node: &Node,
    cap: &Gres,
    id: NodeId,
    req: &Request,
    dem: &Demand,
    policy: NodeAccessPolicy,
    per_node: &Gres,
    tasks: u32,
) -> Alloc {
    if policy.dedicates() {
        Alloc {
            node: id,
            tasks,
            procs: node.procs,
            mem_mb: node.mem_mb,
            gres: *cap,
        }
    } else {
        Alloc {
            node: id,
            tasks,
            procs: tasks * req.procs_per_task.max(1),
            mem_mb: u64::from(tasks) * req.mem_per_task_mb,
            gres: dem.per_task.times(tasks).plus(per_node),
        }
    }
}

/// Candidate nodes in `NODEALLOCATIONPOLICY` order (those that need
/// sorting).
fn order(state: &State, pol: NodeAllocationPolicy, ids: &mut [NodeId]) {
    let nodes = state.nodes();
    match pol {
        NodeAllocationPolicy::Priority => {
            ids.sort_by_key(|id| (std::cmp::Reverse(nodes[*id as usize].priority), *id))
        }
        NodeAllocationPolicy::MinResource => ids.sort_by_key(|id| {
            let n = &nodes[*id as usize];
            (n.procs, n.mem_mb, *id)
        }),
        _ => ids.sort_unstable(),
    }
}

/// Places `req` (resolved as `dem`) on `candidates` (ascending) given what
/// `avail` says is free on each (`None`: the node may not be used, e.g. a
/// tenant or a reservation keeps the job off it). `default` is the global
/// node access policy. `None` when it does not fit.
///
/// Lazy: candidates are read and `avail` asked only until the job is
/// placed (in the default node order the candidates are not even
/// collected), so a small job on a large machine costs a few nodes.
pub fn place(
    state: &State,
    req: &Request,
    dem: &Demand,
    default: NodeAccessPolicy,
    pol: NodeAllocationPolicy,
    candidates: impl DoubleEndedIterator<Item = NodeId>,
    avail: impl Fn(NodeId) -> Option<Free>,
) -> Option<Vec<Alloc>> {
    let nodes = state.nodes();
    let usable = candidates.filter(|&id| {
        nodes
            .get(id as usize)
            .is_some_and(|node| node_usable(node, id, req, dem, default))
    });
    // Candidates arrive ascending: only orders other than by index need
    // collecting.
    let mut ordered: Box<dyn Iterator<Item = NodeId>> = match pol {
        NodeAllocationPolicy::LastAvailable => Box::new(usable.rev()),
        NodeAllocationPolicy::Priority | NodeAllocationPolicy::MinResource => {
            let mut v: Vec<NodeId> = usable.collect();
            order(state, pol, &mut v);
            Box::new(v.into_iter())
        }
        _ => Box::new(usable),
    };
    let policy_of = |id: NodeId| access::effective(dem.access, &nodes[id as usize], default);
    let fit_with = |id: NodeId, f: &Free, per_node: &Gres| -> u32 {
        node_fit(
            &nodes[id as usize],
            &state.node_gres(id),
            req,
            dem,
            f,
            policy_of(id),
            per_node,
        )
    };
    let alloc_of = |id: NodeId, per_node: &Gres, tasks: u32| {
        make_alloc(
            &nodes[id as usize],
            &state.node_gres(id),
            id,
            req,
            dem,
            policy_of(id),
            per_node,
            tasks,
        )
    };
    let mut out: Vec<Alloc> = Vec::new();
    if dem.groups.is_empty() {
        // The request's own shape: exactly `nodes` nodes with tasks per
        // node fixed, or tasks anywhere.
        let per_node = match (req.nodes, req.tasks_per_node) {
            (_, Some(tpn)) => Some(tpn.max(1)),
            (Some(n), None) if n > 0 => Some(req.tasks.div_ceil(n).max(1)),
            _ => None,
        };
        let contiguous = pol == NodeAllocationPolicy::Contiguous;
        // (node, tasks it can take) of the current run.
        let mut run: Vec<(NodeId, u32)> = Vec::new();
        let mut total = 0u32;
        let mut done = false;
        for id in ordered {
            let fit = avail(id).map_or(0, |f| fit_with(id, &f, &Gres::NONE));
            let fit = match per_node {
                Some(t) if fit >= t => t,
                Some(_) => 0,
                None => fit,
            };
            if fit == 0 {
                if contiguous {
                    run.clear();
                    total = 0;
                }
                continue;
            }
            if contiguous && run.last().is_some_and(|(l, _)| *l + 1 != id) {
                run.clear();
                total = 0;
            }
            run.push((id, fit));
            total = total.saturating_add(fit);
            if total >= req.tasks && req.nodes.is_none_or(|n| run.len() as u32 >= n) {
                done = true;
                break;
            }
        }
        if !done {
            return None;
        }
        let mut remaining = req.tasks;
        for (id, fit) in run {
            let tasks = fit.min(remaining);
            if tasks == 0 {
                break;
            }
            remaining -= tasks;
            out.push(alloc_of(id, &Gres::NONE, tasks));
        }
        if req.nodes.is_some_and(|n| out.len() as u32 != n) {
            return None;
        }
    } else {
        // Several passes (one per group): the nodes read so far and what
        // is free on them, in order, read further only when needed.
        let mut seen: Vec<(NodeId, Option<Free>)> = Vec::new();
        let mut exhausted = false;
        let mut taken: std::collections::BTreeSet<NodeId> = std::collections::BTreeSet::new();
        let mut groups: Vec<&GroupDemand> = dem.groups.iter().collect();
        groups.sort_by_key(|g| (g.host.is_none(), std::cmp::Reverse(g.tasks_per_node)));
        for g in groups {
            let mut left = g.count;
            let mut i = 0;
            while left > 0 {
                if i == seen.len() {
                    if exhausted {
                        break;
                    }
                    match ordered.next() {
                        Some(id) => seen.push((id, avail(id))),
                        None => {
                            exhausted = true;
                            break;
                        }
                    }
                }
                let (id, f) = &seen[i];
                let id = *id;
                i += 1;
                let Some(f) = f else { continue };
                if g.host.is_some_and(|h| h != id)
                    || taken.contains(&id)
                    || !nodes[id as usize].has_features(&g.features)
                {
                    continue;
                }
                if fit_with(id, f, &g.per_node) >= g.tasks_per_node {
                    taken.insert(id);
                    out.push(alloc_of(id, &g.per_node, g.tasks_per_node));
                    left -= 1;
                }
            }
            if left > 0 {
                return None;
            }
        }
    }
    out.sort_unstable_by_key(|a| a.node);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn task_request_lists() {
        let t = parse_trl("1@3600:2@1800:4@900").unwrap();
        assert_eq!(t.len(), 3);
        assert_eq!(
            t[1],
            TaskOption {
                min_tasks: 2,
                max_tasks: 2,
                walltime: Some(1800)
            }
        );
        let r = parse_trl("2-8").unwrap();
        assert_eq!(
            (r[0].min_tasks, r[0].max_tasks, r[0].walltime),
            (2, 8, None)
        );
        assert_eq!(r[0].describe(), "2-8");
        assert_eq!(parse_trl("2,4").unwrap().len(), 2);
        for bad in ["", "0", "8-2", "2@x", "2@0", "a", "1::2"] {
            assert!(parse_trl(bad).is_err(), "{bad}");
        }
    }
}
