//! showq's server side beyond the plain queue view ([`crate::views::queue`]):
//! `-p PARTITION` (Moab's `MUIQueueShow`: active and completed jobs by the
//! partition they ran in, eligible and blocked jobs that may run there, and
//! the partition's own processor and node summary) and the notes Moab's
//! `MUIGetShowqNotes` attaches (scheduling paused or disabled, a system
//! reservation blocking every node).

use arches_api::{ClusterSummary, JobSummary, QueueView, Section};
use arches_core::{Job, NodeAdminState};

use crate::actor::Snapshot;

/// Moab's error for `-p`/`-w partition=` naming no partition.
pub const UNKNOWN_PARTITION: &str = "ERROR:    unknown partition specified";

/// showq's data without its jobs (streamed line by line, in
/// [`crate::views::queue_order`], with [`line`]): Moab's notes, and the
/// partition's own summary when one is given.
pub fn shell(s: &Snapshot, partition: Option<&str>) -> Result<QueueView, String> {
    let mut v = crate::views::queue_shell(s);
    v.notes = notes(s);
    if let Some(p) = one_partition(partition) {
        if !s.state.nodes().iter().any(|n| n.partition == p) {
            return Err(UNKNOWN_PARTITION.to_string());
        }
        v.cluster = partition_cluster(s, p);
    }
    Ok(v)
}

/// One line of showq ([`crate::views::queue_order`]), `None` when the job
/// is gone or is not of the partition asked for.
pub fn line(
    s: &Snapshot,
    it: crate::views::Item<JobSummary>,
    partition: Option<&str>,
) -> Option<JobSummary> {
    let j = crate::views::queue_item(s, it)?;
    let Some(p) = one_partition(partition) else {
        return Some(j);
    };
    let keep = match j.section {
        Section::Active | Section::Completed => j.partition.as_deref() == Some(p),
        Section::Eligible | Section::Blocked => {
            s.state.job(j.id).is_some_and(|job| may_run_in(s, job, p))
        }
    };
    keep.then_some(j)
}

/// The partition showq is restricted to (`ALL`: none).
fn one_partition(partition: Option<&str>) -> Option<&str> {
    partition.filter(|p| !p.eq_ignore_ascii_case("ALL"))
}

/// Whether a queued job may run in partition `p` (Moab's partition access
/// list): it asks for `p` or for no partition, and `p`'s up nodes with the
/// job's features hold its processors.
pub fn may_run_in(s: &Snapshot, j: &Job, p: &str) -> bool {
    if j.req.partition.as_deref().is_some_and(|want| want != p) {
        return false;
    }
    let procs: u32 = s
        .state
        .nodes()
        .iter()
        .filter(|n| n.partition == p && n.admin != NodeAdminState::Down)
        .filter(|n| j.req.features.iter().all(|f| n.features.contains(f)))
        .map(|n| n.procs)
        .sum();
    procs >= j.req.total_procs()
}

/// The cluster summary of one partition's nodes.
fn partition_cluster(s: &Snapshot, p: &str) -> ClusterSummary {
    let mut c = ClusterSummary::default();
    for (i, n) in s.state.nodes().iter().enumerate() {
        if n.partition != p {
            continue;
        }
        c.config_nodes += 1;
        if n.admin == NodeAdminState::Down {
            continue;
        }
        let u = s.state.usage(i as u32);
        c.up_nodes += 1;
        c.up_procs += n.procs;
        c.alloc_procs += u.procs;
        if u.jobs > 0 {
            c.active_nodes += 1;
        }
    }
    c.idle_nodes = c.up_nodes - c.active_nodes;
    c.idle_procs = c.up_procs.saturating_sub(c.alloc_procs);
    c
}

/// Moab's showq notes, in its order.
pub fn notes(s: &Snapshot) -> Vec<String> {
    use arches_config::enums::SchedMode;
    let mut out = Vec::new();
    match s.cfg.moab.sched.mode {
        SchedMode::Test | SchedMode::Monitor => out.push(format!(
            "NOTE:  scheduling is disabled ({} mode)",
            s.cfg.moab.sched.mode
        )),
        _ if s.stats.paused => out.push("NOTE:  scheduling is paused".to_string()),
        _ => {}
    }
    if system_reservation_blocks_all(s) {
        out.push("NOTE:  system reservation blocking all nodes".to_string());
    }
    out
}

/// An administrative reservation in force now holds every processor of
/// every node, with an empty access list.
fn system_reservation_blocks_all(s: &Snapshot) -> bool {
    let n = s.state.nodes().len();
    n > 0
        && crate::rsvctl::in_force(s).iter().any(|(r, nodes)| {
            r.standing.is_none()
                && r.start <= s.now
                && r.acl.is_empty()
                && nodes.len() == n
                && nodes
                    .iter()
                    .all(|(id, p)| s.state.node(*id).is_some_and(|node| *p >= node.procs))
        })
}

/// `(kind, name)` of the credentials of finished jobs and of the
/// statistics that `listed` does not have: what, with the configured and
/// queued ones, Moab calls its "historical data".
pub fn historical(s: &Snapshot, listed: &[arches_api::CredentialInfo]) -> Vec<(String, String)> {
    use std::collections::BTreeSet;
    let have: BTreeSet<(&str, &str)> = listed
        .iter()
        .map(|c| (c.kind.as_str(), c.name.as_str()))
        .collect();
    let mut out: BTreeSet<(String, String)> = BTreeSet::new();
    let mut add = |kind: &str, name: &str| {
        if !have.contains(&(kind, name)) {
            out.insert((kind.to_string(), name.to_string()));
        }
    };
    for j in s.state.jobs().filter(|j| j.state.is_finished()) {
        let c = &j.cred;
        add("user", &c.user);
        add("group", &c.group);
        for (k, v) in [
            ("account", &c.account),
            ("class", &c.class),
            ("qos", &c.qos),
        ] {
            if let Some(v) = v {
                add(k, v);
            }
        }
    }
    for (kind, name) in s.accounting.creds.keys() {
        // Statistics templates (showstats -j) are not credentials.
        if *kind != arches_core::accounting::CredKind::Template {
            add(kind.as_str(), name);
        }
    }
    out.into_iter().collect()
}

/// What the asking credentials may still use under their hard throttling
/// limits (showbf `-L`): processors, nodes, and whether one more job may
/// start. `None`: unlimited.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Headroom {
    pub procs: Option<u32>,
    pub nodes: Option<u32>,
    pub job: bool,
}

impl Headroom {
    /// Cuts a window to the headroom (its processors, then its nodes —
    /// keeping the nodes with the most processors); `false` when nothing is
    /// left of it.
    pub fn cut(&self, w: &mut arches_core::Window) -> bool {
        if !self.job {
            return false;
        }
        if let Some(n) = self.nodes {
            if (w.node_ids.len() as u32) > n {
                let mut idx: Vec<usize> = (0..w.node_ids.len()).collect();
                idx.sort_by_key(|&i| (std::cmp::Reverse(w.node_procs[i]), i));
                idx.truncate(n as usize);
                idx.sort_unstable();
                w.node_ids = idx.iter().map(|&i| w.node_ids[i]).collect();
                w.node_procs = idx.iter().map(|&i| w.node_procs[i]).collect();
                w.nodes = n;
                w.procs = w.node_procs.iter().sum();
            }
        }
        if let Some(p) = self.procs {
            w.procs = w.procs.min(p);
        }
        w.procs > 0 && w.nodes > 0
    }
}

/// The hard-limit headroom of `cred` now: for each of its user, group,
/// account, class and QoS that has `MAXPROC`, `MAXNODE` or `MAXJOB`, the
/// limit minus what that credential's active jobs use; the tightest wins.
pub fn headroom(s: &Snapshot, cred: &arches_core::Credentials) -> Headroom {
    use arches_core::accounting::CredKind;
    let p = &s.cfg.policy;
    let mut limits: Vec<(&arches_core::policy::Limits, CredKind, &str)> = Vec::new();
    if let Some(c) = p.users.get(cred.user.as_str()) {
        limits.push((&c.limits, CredKind::User, &cred.user));
    }
    if let Some(c) = p.groups.get(cred.group.as_str()) {
        limits.push((&c.limits, CredKind::Group, &cred.group));
    }
    if let Some(c) = cred
        .account
        .as_deref()
        .and_then(|a| p.accounts.get(a).map(|c| (c, a)))
    {
        limits.push((&c.0.limits, CredKind::Account, c.1));
    }
    if let Some(c) = cred
        .class
        .as_deref()
        .and_then(|a| p.classes.get(a).map(|c| (c, a)))
    {
        limits.push((&c.0.limits, CredKind::Class, c.1));
    }
    if let Some(c) = cred
        .qos
        .as_deref()
        .and_then(|a| p.qos.get(a).map(|c| (c, a)))
    {
        limits.push((&c.0.limits, CredKind::Qos, c.1));
    }
    let mine = |j: &Job, k: CredKind, n: &str| match k {
        CredKind::User => j.cred.user == n,
        CredKind::Group => j.cred.group == n,
        CredKind::Account => j.cred.account.as_deref() == Some(n),
        CredKind::Class => j.cred.class.as_deref() == Some(n),
        CredKind::Qos => j.cred.qos.as_deref() == Some(n),
        CredKind::Template => false,
    };
    let mut h = Headroom {
        procs: None,
        nodes: None,
        job: true,
    };
    let tighter = |cur: Option<u32>, v: u64| Some(cur.map_or(v as u32, |c| c.min(v as u32)));
    for (l, kind, name) in &limits {
        let (mut jobs, mut procs) = (0u64, 0u64);
        let mut nodes = std::collections::BTreeSet::new();
        for j in s.state.active().filter(|j| mine(j, *kind, name)) {
            jobs += 1;
            procs += u64::from(j.procs());
            if let Some(r) = &j.run {
                nodes.extend(r.alloc.iter().map(|a| a.node));
            }
        }
        if let Some(m) = l.max_job {
            h.job &= jobs < m.hard;
        }
        if let Some(m) = l.max_proc {
            h.procs = tighter(h.procs, m.hard.saturating_sub(procs));
        }
        if let Some(m) = l.max_node {
            h.nodes = tighter(h.nodes, m.hard.saturating_sub(nodes.len() as u64));
        }
    }
    h
}
