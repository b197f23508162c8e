//! Compute nodes: configuration, administrative state and the state Moab
//! derives from allocations (Idle, Running, Busy, Down, Drained, Draining).

use std::fmt;

/// Index of a node in [`crate::State::nodes`]. Stable for the life of a state.
pub type NodeId = u32;

/// A node's administrative / resource-manager state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum NodeAdminState {
    /// Available for scheduling.
    #[default]
    Up,
    /// Not usable (failed or unreachable).
    Down,
    /// Administratively disabled; running jobs may finish.
    Drained,
}

/// A compute node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Node {
    pub name: String,
    pub procs: u32,
    pub mem_mb: u64,
    pub features: Vec<String>,
    pub partition: String,
    pub admin: NodeAdminState,
    /// `NODECFG[x] PRIORITY=`: preference under `NODEALLOCATIONPOLICY
    /// PRIORITY` (higher first).
    pub priority: i64,
    /// Generic resources the node has (`NODECFG[x] GRES=gpu:4`), by name.
    pub gres: Vec<(String, u32)>,
    /// `NODECFG[x] ACCESS=`: the node access policy of jobs that have none
    /// of their own (`None`: the global `NODEACCESSPOLICY`).
    pub access: Option<crate::access::NodeAccessPolicy>,
}

impl Node {
    /// A node in the default partition with no features.
    pub fn new(name: &str, procs: u32, mem_mb: u64) -> Self {
        Node {
            name: name.to_string(),
            procs,
            mem_mb,
            features: Vec::new(),
            partition: DEFAULT_PARTITION.to_string(),
            admin: NodeAdminState::Up,
            priority: 0,
            gres: Vec::new(),
            access: None,
        }
    }

    /// Whether the node has every feature in `required`.
    pub fn has_features(&self, required: &[String]) -> bool {
        required
            .iter()
            .all(|f| self.features.iter().any(|have| have == f))
    }
}

/// The partition nodes belong to unless configured otherwise.
pub const DEFAULT_PARTITION: &str = "DEFAULT";

/// Moab's node states (`MNodeState[]`) as printed by checknode and mdiag -n.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NodeState {
    /// All processors free.
    Idle,
    /// Some processors allocated.
    Running,
    /// All processors allocated.
    Busy,
    Down,
    /// Disabled and empty.
    Drained,
    /// Disabled with jobs still running.
    Draining,
}

impl NodeState {
    /// Derives the displayed state from the admin state and the allocation.
    pub fn derive(admin: NodeAdminState, used_procs: u32, total_procs: u32) -> Self {
        match admin {
            NodeAdminState::Down => NodeState::Down,
            NodeAdminState::Drained if used_procs > 0 => NodeState::Draining,
            NodeAdminState::Drained => NodeState::Drained,
            NodeAdminState::Up if used_procs == 0 => NodeState::Idle,
            NodeAdminState::Up if used_procs >= total_procs => NodeState::Busy,
            NodeAdminState::Up => NodeState::Running,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            NodeState::Idle => "Idle",
            NodeState::Running => "Running",
            NodeState::Busy => "Busy",
            NodeState::Down => "Down",
            NodeState::Drained => "Drained",
            NodeState::Draining => "Draining",
        }
    }
}

impl fmt::Display for NodeState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
