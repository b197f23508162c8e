//! Node access policies (Moab §5.3): who may share a node with a job.
//!
//! A job's policy is its own (`-l naccesspolicy=`, `-W x=NACCESSPOLICY:`),
//! else the node's (`NODECFG[n] ACCESS=`), else the global
//! `NODEACCESSPOLICY` ([`effective`]). Jobs already on a node bind later
//! ones: a job may go on a node only if its policy admits every job
//! overlapping it there and each of theirs admits it ([`compatible`]).
//!
//! Why a room of its own, and how the planner uses it:
//!
//! - `SINGLEJOB` and `SINGLETASK` are *dedicating* policies: as in Moab
//!   (`MCResAdd(&N->DRes, &N->CRes, &N->CRes)`), the job is given the whole
//!   node — every processor, its memory and its generic resources — so the
//!   availability profiles keep everybody else off it for as long as it
//!   holds it, now and in reservations, with no extra bookkeeping.
//!   `SINGLETASK` also places one task per node;
//! - `SINGLEUSER`, `UNIQUEUSER`, `SINGLEGROUP` and `SINGLEACCOUNT` depend on
//!   who the other jobs are, which no capacity expresses. The planner keeps
//!   a [`Tenancy`]: per node, the jobs on it over time (running jobs until
//!   their planned end, and this iteration's starts and reservations). It is
//!   built only in iterations where such a policy is in play
//!   ([`Tenancy::needed`]); placement then skips the nodes whose tenants
//!   and the job do not admit each other over the job's interval;
//! - `SHAREDONLY` on a node admits only jobs that share (`SHARED` or no
//!   policy of their own).

use crate::job::{Credentials, JobId};
use crate::node::{Node, NodeId};
use crate::Time;

crate::moab_enum! {
    /// `NODEACCESSPOLICY`, `NODECFG[n] ACCESS=`, a job's `NACCESSPOLICY`.
    NodeAccessPolicy {
        Shared => "SHARED",
        SharedOnly => "SHAREDONLY",
        SingleJob => "SINGLEJOB",
        SingleTask => "SINGLETASK",
        SingleUser => "SINGLEUSER",
        UniqueUser => "UNIQUEUSER",
        SingleGroup => "SINGLEGROUP",
        SingleAccount => "SINGLEACCOUNT",
    }
}

impl NodeAccessPolicy {
    /// The job is given the whole node.
    pub fn dedicates(self) -> bool {
        matches!(
            self,
            NodeAccessPolicy::SingleJob | NodeAccessPolicy::SingleTask
        )
    }

    /// Admission depends on who the other jobs on the node are.
    pub fn depends_on_tenants(self) -> bool {
        matches!(
            self,
            NodeAccessPolicy::SingleUser
                | NodeAccessPolicy::UniqueUser
                | NodeAccessPolicy::SingleGroup
                | NodeAccessPolicy::SingleAccount
        )
    }

    /// Lets any other job share the node.
    pub fn shares(self) -> bool {
        matches!(
            self,
            NodeAccessPolicy::Shared | NodeAccessPolicy::SharedOnly
        )
    }
}

/// The policy a job (explicit policy `job`, `None` if it has none) runs
/// under on `node`, given the global default.
pub fn effective(
    job: Option<NodeAccessPolicy>,
    node: &Node,
    default: NodeAccessPolicy,
) -> NodeAccessPolicy {
    job.or(node.access).unwrap_or(default)
}

/// Whether a job with its own policy `job` may use `node` at all: a
/// `SHAREDONLY` node admits only jobs that share.
pub fn node_admits(job: Option<NodeAccessPolicy>, node: &Node, default: NodeAccessPolicy) -> bool {
    let node_policy = node.access.unwrap_or(default);
    node_policy != NodeAccessPolicy::SharedOnly || job.is_none_or(NodeAccessPolicy::shares)
}

/// Whether a job under policy `a` with credentials `ca` lets a job with
/// credentials `cb` share its node.
fn admits(a: NodeAccessPolicy, ca: &Credentials, cb: &Credentials) -> bool {
    match a {
        NodeAccessPolicy::Shared | NodeAccessPolicy::SharedOnly => true,
        NodeAccessPolicy::SingleJob | NodeAccessPolicy::SingleTask => false,
        NodeAccessPolicy::SingleUser => ca.user == cb.user,
        NodeAccessPolicy::UniqueUser => ca.user != cb.user,
        NodeAccessPolicy::SingleGroup => ca.group == cb.group,
        NodeAccessPolicy::SingleAccount => ca.account.is_some() && ca.account == cb.account,
    }
}

/// Whether two different jobs may be on one node at the same time: each
/// one's (effective) policy admits the other.
pub fn compatible(
    a: NodeAccessPolicy,
    ca: &Credentials,
    b: NodeAccessPolicy,
    cb: &Credentials,
) -> bool {
    admits(a, ca, cb) && admits(b, cb, ca)
}

/// One job on a node for a while.
#[derive(Debug, Clone)]
struct Tenant {
    job: JobId,
    start: Time,
    end: Option<Time>,
    policy: NodeAccessPolicy,
    cred: Credentials,
}

/// Who is on each node over time, for the tenant-dependent policies (see
/// the module doc).
#[derive(Debug, Clone, Default)]
pub(crate) struct Tenancy {
    nodes: Vec<Vec<Tenant>>,
    /// Whether some tenant's policy depends on the others.
    scoped: bool,
}

impl Tenancy {
    /// Whether placement must look at tenants: some node's or the global
    /// policy, or some job's own, depends on them.
    pub fn needed(default: NodeAccessPolicy, nodes: &[Node], scoped_jobs: bool) -> bool {
        scoped_jobs
            || default.depends_on_tenants()
            || nodes
                .iter()
                .any(|n| n.access.is_some_and(NodeAccessPolicy::depends_on_tenants))
    }

    pub fn new(nodes: usize) -> Self {
        Tenancy {
            nodes: vec![Vec::new(); nodes],
            scoped: false,
        }
    }

    /// Records `job` on `node` over `[start, end)` under `policy`.
    pub fn add(
        &mut self,
        node: NodeId,
        job: JobId,
        cred: &Credentials,
        policy: NodeAccessPolicy,
        start: Time,
        end: Option<Time>,
    ) {
        if let Some(v) = self.nodes.get_mut(node as usize) {
            self.scoped |= policy.depends_on_tenants();
            v.push(Tenant {
                job,
                start,
                end,
                policy,
                cred: cred.clone(),
            });
        }
    }

    /// Takes `job` off `node` from `from` on (a preemption trial).
    pub fn remove(&mut self, node: NodeId, job: JobId) {
        if let Some(v) = self.nodes.get_mut(node as usize) {
            v.retain(|t| t.job != job);
        }
    }

    /// Whether `job` (policy `policy` on this node) may be on `node` over
    /// `[start, end)` with the tenants there.
    pub fn admits(
        &self,
        node: NodeId,
        job: JobId,
        cred: &Credentials,
        policy: NodeAccessPolicy,
        start: Time,
        end: Option<Time>,
    ) -> bool {
        if !self.scoped && !policy.depends_on_tenants() {
            return true;
        }
        let Some(v) = self.nodes.get(node as usize) else {
            return true;
        };
        v.iter()
            .filter(|t| t.job != job || job == 0)
            .filter(|t| t.start < end.unwrap_or(Time::MAX) && t.end.is_none_or(|e| e > start))
            .all(|t| compatible(policy, cred, t.policy, &t.cred))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(user: &str, group: &str) -> Credentials {
        Credentials {
            user: user.into(),
            group: group.into(),
            ..Credentials::default()
        }
    }

    #[test]
    fn compatibility_is_symmetric_and_follows_moab() {
        use NodeAccessPolicy::*;
        let (a, b, a2) = (c("a", "g"), c("b", "g"), c("a", "h"));
        assert!(compatible(Shared, &a, Shared, &b));
        assert!(!compatible(SingleJob, &a, Shared, &a2));
        assert!(!compatible(Shared, &b, SingleTask, &a));
        assert!(compatible(SingleUser, &a, Shared, &a2));
        assert!(!compatible(SingleUser, &a, Shared, &b));
        assert!(!compatible(Shared, &b, SingleUser, &a));
        assert!(compatible(UniqueUser, &a, Shared, &b));
        assert!(!compatible(UniqueUser, &a, Shared, &a2));
        assert!(compatible(SingleGroup, &a, SingleGroup, &b));
        assert!(!compatible(SingleGroup, &a, Shared, &a2));
        assert!(!compatible(SingleAccount, &a, Shared, &a2), "no account");
    }

    #[test]
    fn effective_policy_and_sharedonly_nodes() {
        let mut n = Node::new("n", 4, 0);
        assert_eq!(
            effective(None, &n, NodeAccessPolicy::Shared),
            NodeAccessPolicy::Shared
        );
        n.access = Some(NodeAccessPolicy::SingleUser);
        assert_eq!(
            effective(None, &n, NodeAccessPolicy::Shared),
            NodeAccessPolicy::SingleUser
        );
        assert_eq!(
            effective(
                Some(NodeAccessPolicy::SingleJob),
                &n,
                NodeAccessPolicy::Shared
            ),
            NodeAccessPolicy::SingleJob
        );
        n.access = Some(NodeAccessPolicy::SharedOnly);
        assert!(node_admits(None, &n, NodeAccessPolicy::Shared));
        assert!(!node_admits(
            Some(NodeAccessPolicy::SingleJob),
            &n,
            NodeAccessPolicy::Shared
        ));
    }

    #[test]
    fn tenancy_checks_overlapping_tenants_only() {
        use NodeAccessPolicy::*;
        let mut t = Tenancy::new(1);
        t.add(0, 1, &c("a", "g"), SingleUser, 0, Some(100));
        assert!(t.admits(0, 2, &c("a", "g"), Shared, 0, Some(50)));
        assert!(!t.admits(0, 2, &c("b", "g"), Shared, 50, Some(150)));
        assert!(t.admits(0, 2, &c("b", "g"), Shared, 100, Some(150)));
        assert!(
            t.admits(0, 1, &c("a", "g"), SingleUser, 0, Some(10)),
            "itself"
        );
    }
}
