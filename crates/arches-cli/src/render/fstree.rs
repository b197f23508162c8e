//! `showstats -T`: statistics per node of the fairshare share tree
//! (`FSTREE`). Moab builds them by merging the statistics of each node's
//! credential with its members' (an inner node has only its members');
//! the admin guide shows no sample of the layout, so Arches prints one row
//! per node, depth first and indented like `mdiag -f`'s tree, with the
//! running and completed columns of `showstats -a`.

use arches_api::{CredStats, FairshareTree, StatsView};

use crate::fmt::date;

/// The statistics kind of a tree node type (`acct` → `account`).
fn stats_kind(node_type: &str) -> Option<&'static str> {
    Some(match node_type {
        "user" => "user",
        "group" => "group",
        "acct" => "account",
        "class" => "class",
        "qos" => "qos",
        _ => return None,
    })
}

/// Running and completed totals of one node (its own credential's plus
/// its members').
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct NodeStats {
    pub active_jobs: u32,
    pub active_procs: u32,
    pub active_ps_remaining: f64,
    pub jobs: u64,
    pub ps_requested: f64,
    pub ps_dedicated: f64,
    pub xf_sum: f64,
    pub qtime_sum: f64,
}

impl NodeStats {
    fn add_cred(&mut self, c: &CredStats) {
        self.active_jobs += c.active_jobs;
        self.active_procs += c.active_procs;
        self.active_ps_remaining += c.active_ps_remaining;
        self.jobs += c.completed.jobs;
        self.ps_requested += c.completed.ps_requested;
        self.ps_dedicated += c.completed.ps_dedicated + c.active_ps_dedicated;
        self.xf_sum += c.completed.xf_sum;
        self.qtime_sum += c.completed.qtime_sum;
    }

    fn add(&mut self, o: &NodeStats) {
        self.active_jobs += o.active_jobs;
        self.active_procs += o.active_procs;
        self.active_ps_remaining += o.active_ps_remaining;
        self.jobs += o.jobs;
        self.ps_requested += o.ps_requested;
        self.ps_dedicated += o.ps_dedicated;
        self.xf_sum += o.xf_sum;
        self.qtime_sum += o.qtime_sum;
    }
}

/// Each node's statistics, in the tree's (depth-first) order: a credential
/// node's own credential's, plus its members'.
pub fn node_stats(t: &FairshareTree, s: &StatsView) -> Vec<NodeStats> {
    let n = t.nodes.len();
    let mut out = vec![NodeStats::default(); n];
    for (i, node) in t.nodes.iter().enumerate() {
        if let Some(kind) = stats_kind(&node.node_type) {
            if let Some(c) = s
                .credentials
                .iter()
                .find(|c| c.kind == kind && c.name == node.name)
            {
                out[i].add_cred(c);
            }
        }
    }
    // Depth first: a node's members follow it until the depth drops back.
    for i in (0..n).rev() {
        let d = t.nodes[i].depth;
        let mut j = i + 1;
        let mut sum = NodeStats::default();
        while j < n && t.nodes[j].depth > d {
            if t.nodes[j].depth == d + 1 {
                sum.add(&out[j]);
            }
            j += 1;
        }
        out[i].add(&sum);
    }
    out
}

/// `showstats -T [NODE|DEPTH]`: the whole tree, one node's subtree, or the
/// nodes down to a depth (root 0). `Err` names an unknown node.
pub fn render_tree_stats(
    t: &FairshareTree,
    s: &StatsView,
    only: Option<&str>,
) -> Result<String, String> {
    let stats = node_stats(t, s);
    let mut keep = vec![true; t.nodes.len()];
    match only.filter(|o| !o.is_empty()) {
        None => {}
        Some(o) if o.chars().all(|c| c.is_ascii_digit()) => {
            let max: u32 = o.parse().map_err(|_| format!("invalid depth '{o}'"))?;
            for (k, n) in keep.iter_mut().zip(&t.nodes) {
                *k = n.depth <= max;
            }
        }
        Some(o) => {
            let (ty, name) = match o.split_once(':') {
                Some((ty, name)) => (Some(ty), name),
                None => (None, o),
            };
            let start = t
                .nodes
                .iter()
                .position(|n| n.name == name && ty.is_none_or(|ty| ty == n.node_type))
                .ok_or_else(|| format!("ERROR:    cannot locate fairshare tree node '{o}'"))?;
            let d = t.nodes[start].depth;
            for (i, k) in keep.iter_mut().enumerate() {
                *k = i >= start
                    && (i == start || (t.nodes[start + 1..=i].iter().all(|n| n.depth > d)));
            }
        }
    }
    let w = (t.tiers as usize + 1) * 4;
    let mut o = format!(
        "FairShare Tree Statistics (partition {}) Initialized {}\n\n",
        t.partition,
        date(s.since)
    );
    o.push_str(&format!(
        "{:<w$}|----- Running ------|---------------- Completed ----------------|\n",
        ""
    ));
    o.push_str(&format!(
        "{:<w$}Jobs Procs ProcHours  Jobs   PHReq    PHDed  AvgXF  AvgQH Shares\n",
        "Name"
    ));
    for ((n, st), k) in t.nodes.iter().zip(&stats).zip(&keep) {
        if !k {
            continue;
        }
        let name = if n.depth > 0 {
            format!("{}- {}", " ".repeat((n.depth as usize - 1) * 2), n.name)
        } else {
            n.name.clone()
        };
        let mut line = format!(
            "{name:<w$.w$}{:>4} {:>5} {:>9.2}",
            st.active_jobs,
            st.active_procs,
            st.active_ps_remaining / 3600.0
        );
        if st.jobs > 0 {
            line.push_str(&format!(
                " {:>5} {:>7.1}",
                st.jobs,
                st.ps_requested / 3600.0
            ));
        } else {
            line.push_str(" ----- -------");
        }
        line.push_str(&format!(" {:>8.1}", st.ps_dedicated / 3600.0));
        if st.jobs > 0 {
            line.push_str(&format!(
                " {:>6.2} {:>6.2}",
                st.xf_sum / st.jobs as f64,
                st.qtime_sum / st.jobs as f64 / 3600.0
            ));
        } else {
            line.push_str(" ------ ------");
        }
        line.push_str(&format!(" {:>6.2}\n", n.shares));
        o.push_str(&line);
    }
    Ok(o)
}

#[cfg(test)]
mod tests {
    use super::*;
    use arches_api::{FairshareTreeNode, StatTotals};

    fn node(depth: u32, name: &str, ty: &str, shares: f64) -> FairshareTreeNode {
        FairshareTreeNode {
            depth,
            name: name.into(),
            node_type: ty.into(),
            shares,
            ..FairshareTreeNode::default()
        }
    }

    fn cred(kind: &str, name: &str, jobs: u64, ded: f64, active: u32) -> CredStats {
        CredStats {
            kind: kind.into(),
            name: name.into(),
            active_jobs: active,
            active_procs: active * 2,
            active_ps_remaining: f64::from(active) * 7200.0,
            completed: StatTotals {
                jobs,
                ps_requested: ded * 2.0,
                ps_dedicated: ded,
                xf_sum: jobs as f64 * 1.5,
                qtime_sum: jobs as f64 * 1800.0,
                ..StatTotals::default()
            },
            ..CredStats::default()
        }
    }

    fn tree() -> FairshareTree {
        FairshareTree {
            partition: "ALL".into(),
            tiers: 2,
            nodes: vec![
                node(0, "root", "node", 100.0),
                node(1, "eng", "acct", 60.0),
                node(2, "ann", "user", 1.0),
                node(2, "bob", "user", 1.0),
                node(1, "sales", "node", 40.0),
                node(2, "bob", "user", 1.0),
            ],
        }
    }

    #[test]
    fn inner_nodes_merge_their_members() {
        let s = StatsView {
            credentials: vec![
                cred("account", "eng", 1, 3600.0, 0),
                cred("user", "ann", 2, 7200.0, 1),
                cred("user", "bob", 1, 3600.0, 0),
            ],
            ..StatsView::default()
        };
        let st = node_stats(&tree(), &s);
        // eng: its own 1 job + ann's 2 + bob's 1.
        assert_eq!(st[1].jobs, 4);
        assert_eq!(st[4].jobs, 1);
        assert_eq!(st[0].jobs, 5);
        assert_eq!(st[0].active_jobs, 1);
        assert_eq!(
            render_tree_stats(&tree(), &s, None).unwrap(),
            "FairShare Tree Statistics (partition ALL) Initialized Thu Jan  1 00:00:00\n\n\
            \x20           |----- Running ------|---------------- Completed ----------------|\n\
            Name        Jobs Procs ProcHours  Jobs   PHReq    PHDed  AvgXF  AvgQH Shares\n\
            root           1     2      2.00     5    10.0      5.0   1.50   0.50 100.00\n\
            - eng          1     2      2.00     4     8.0      4.0   1.50   0.50  60.00\n\
            \x20 - ann        1     2      2.00     2     4.0      2.0   1.50   0.50   1.00\n\
            \x20 - bob        0     0      0.00     1     2.0      1.0   1.50   0.50   1.00\n\
            - sales        0     0      0.00     1     2.0      1.0   1.50   0.50  40.00\n\
            \x20 - bob        0     0      0.00     1     2.0      1.0   1.50   0.50   1.00\n"
        );
        // One subtree; a depth; an unknown node.
        let sub = render_tree_stats(&tree(), &s, Some("sales")).unwrap();
        assert_eq!(sub.lines().count(), 6, "{sub}");
        assert!(sub.contains("- sales") && !sub.contains("ann"));
        let top = render_tree_stats(&tree(), &s, Some("1")).unwrap();
        assert_eq!(top.lines().count(), 7, "{top}");
        assert_eq!(
            render_tree_stats(&tree(), &s, Some("nobody")).unwrap_err(),
            "ERROR:    cannot locate fairshare tree node 'nobody'"
        );
    }
}
