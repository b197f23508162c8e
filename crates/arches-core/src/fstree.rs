//! Hierarchical fairshare: Moab's share tree (`FSTREE`).
//!
//! `FSTREE[<node>] SHARES=<N>[@<partition>][,...] MEMBERLIST=<member>[,...]`
//! declares a node, its shares and its members. A member is
//! `[<type>:]<name>`: typed (`user:`, `group:`, `acct:`, `class:`, `qos:`)
//! it stands for that credential, untyped it is an inner node (declared by
//! its own `FSTREE[...]` line). Every tree has the implicit node `root`;
//! a node no `MEMBERLIST` names hangs from `root`.
//!
//! **Usage.** A credential node's usage is its credential's decayed
//! fairshare usage ([`crate::fairshare::FsUsage`]); a node with members
//! uses the sum of its members' usage (Moab gathers a node's usage from
//! its children).
//!
//! **Factor.** For a node `c` below parent `p` (Moab's share-tree
//! arithmetic):
//!
//! ```text
//! child shares(p) = Σ SHARES of p's members (p's own SHARES when that is 0)
//! used shares(c)  = usage(c) / usage(p) × child shares(p)     (0 if p has no usage)
//! offset(c)       = (used shares(c) − SHARES(c)) × K,   K = 1 + Σ_{i=1..FSDEPTH} FSDECAY^i
//! factor(c)       = factor(p) − T(tier of c) × offset(c),   factor(root) = 0
//! ```
//!
//! so a node below its shares raises the factor of everything under it,
//! one above lowers it. `T` is `FSTREETIERMULTIPLIER` `M`: tier `t` (the
//! root's members are tier 1) is weighted `M^(t−1)` when `M > 0`,
//! `|M|^(L−t+1)` when `M < 0` (`L` = the tree's number of tiers) and 1
//! when `M = 0` (the default, 1.0, weights every tier 1). A node with no
//! shares takes its parent's factor (Arches' choice; Moab's source gives
//! such nodes a fixed +1).
//!
//! **Jobs.** A job is placed on one node: the first `user:<its user>`
//! node (depth first, in configuration order) below an `acct:<its
//! account>` node, else the first `user:<its user>` node anywhere, else
//! the deepest node naming one of its account, group, class or QoS. Its
//! tree factor is that node's factor; a job on no node gets none.
//!
//! **Partitions.** `SHARES=N@P` gives the node `N` shares in partition `P`'s
//! tree (same members); a job that requests partition `P` uses that tree
//! when one is configured, every other job the global one. A node without
//! a share for `P` keeps its global shares there.

use std::collections::BTreeMap;

use crate::accounting::CredKind;
use crate::fairshare::FsUsage;
use crate::job::Job;

/// One node of the tree.
#[derive(Debug, Clone, PartialEq)]
pub struct FsNode {
    pub name: String,
    /// The credential this node stands for (`None`: an inner node).
    pub cred: Option<CredKind>,
    /// `SHARES=N` (global tree).
    pub shares: f64,
    /// `SHARES=N@P`: shares in partition `P`'s tree.
    pub par_shares: BTreeMap<String, f64>,
    /// Indexes of the members, in configuration order.
    pub children: Vec<usize>,
    pub parent: Option<usize>,
    /// Whether a `MEMBERLIST` placed this node (else it hangs from root
    /// because only its own `FSTREE[...]` line named it).
    pub listed: bool,
}

impl FsNode {
    fn new(name: &str, cred: Option<CredKind>, parent: Option<usize>, listed: bool) -> FsNode {
        FsNode {
            name: name.to_string(),
            cred,
            shares: 0.0,
            par_shares: BTreeMap::new(),
            children: Vec::new(),
            parent,
            listed,
        }
    }

    /// The node type Moab prints (`node` for an inner node).
    pub fn type_name(&self) -> &'static str {
        match self.cred {
            None => "node",
            Some(CredKind::Account) => "acct",
            Some(k) => k.as_str(),
        }
    }

    /// Shares in `partition`'s tree (`None`: the global one).
    pub fn shares_in(&self, partition: Option<&str>) -> f64 {
        partition
            .and_then(|p| self.par_shares.get(p))
            .copied()
            .unwrap_or(self.shares)
    }
}

/// The share tree (`FSTREE`), node 0 being `root`.
#[derive(Debug, Clone, PartialEq)]
pub struct FsTree {
    pub nodes: Vec<FsNode>,
}

impl Default for FsTree {
    fn default() -> Self {
        FsTree {
            nodes: vec![FsNode::new("root", None, None, true)],
        }
    }
}

/// Parses a member or node name `[<type>:]<name>`.
pub fn parse_member(s: &str) -> Result<(Option<CredKind>, String), String> {
    let s = s.trim();
    let (kind, name) = match s.split_once(':') {
        Some((t, n)) => match t.to_ascii_lowercase().as_str() {
            "user" | "group" | "acct" | "account" | "class" | "qos" => {
                (CredKind::parse(t), n.to_string())
            }
            _ => {
                return Err(format!(
                    "invalid member type '{t}' in '{s}' (expected user, group, acct, class or qos)"
                ))
            }
        },
        None => (None, s.to_string()),
    };
    if name.is_empty() || name.contains(char::is_whitespace) {
        return Err(format!("invalid member name '{s}'"));
    }
    Ok((kind, name))
}

impl FsTree {
    /// Whether no node other than root was declared.
    pub fn is_empty(&self) -> bool {
        self.nodes.len() == 1
    }

    /// The first node (depth first) that is `(cred, name)`.
    pub fn find(&self, cred: Option<CredKind>, name: &str) -> Option<usize> {
        if cred.is_none() && name.eq_ignore_ascii_case("root") {
            return Some(0);
        }
        self.preorder()
            .into_iter()
            .find(|&i| self.nodes[i].cred == cred && self.nodes[i].name == name)
    }

    /// Node indexes depth first, members in configuration order.
    pub fn preorder(&self) -> Vec<usize> {
        let mut out = Vec::with_capacity(self.nodes.len());
        let mut stack = vec![0usize];
        while let Some(i) = stack.pop() {
            out.push(i);
            for &c in self.nodes[i].children.iter().rev() {
                stack.push(c);
            }
        }
        out
    }

    /// The depth of node `i` (root 0, its members 1, ...).
    pub fn depth(&self, mut i: usize) -> usize {
        let mut d = 0;
        while let Some(p) = self.nodes[i].parent {
            d += 1;
            i = p;
        }
        d
    }

    /// The number of tiers below root.
    pub fn tiers(&self) -> usize {
        (0..self.nodes.len())
            .map(|i| self.depth(i))
            .max()
            .unwrap_or(0)
    }

    /// The partitions with their own shares (`SHARES=N@P`).
    pub fn partitions(&self) -> Vec<String> {
        let mut v: Vec<String> = self
            .nodes
            .iter()
            .flat_map(|n| n.par_shares.keys().cloned())
            .collect();
        v.sort();
        v.dedup();
        v
    }

    /// The node `FSTREE[<index>]` configures: found, else created below root.
    pub fn node_for_index(&mut self, index: &str) -> Result<usize, String> {
        let (cred, name) = parse_member(index)?;
        if let Some(i) = self.find(cred, &name) {
            return Ok(i);
        }
        self.nodes.push(FsNode::new(&name, cred, Some(0), false));
        let i = self.nodes.len() - 1;
        self.nodes[0].children.push(i);
        Ok(i)
    }

    /// `SHARES=N[@P][,N@P]...` of node `i`.
    pub fn set_shares(&mut self, i: usize, value: &str) -> Result<(), String> {
        for part in value.split(',') {
            let (n, par) = match part.split_once('@') {
                Some((n, p)) if !p.trim().is_empty() => (n, Some(p.trim())),
                Some(_) => return Err(format!("missing partition after '@' in '{part}'")),
                None => (part, None),
            };
            let v: f64 = n
                .trim()
                .parse()
                .ok()
                .filter(|v: &f64| v.is_finite() && *v >= 0.0)
                .ok_or_else(|| {
                    format!(
                        "invalid share count '{}' (expected a number >= 0)",
                        n.trim()
                    )
                })?;
            match par {
                Some(p) => {
                    self.nodes[i].par_shares.insert(p.to_string(), v);
                }
                None => self.nodes[i].shares = v,
            }
        }
        Ok(())
    }

    /// Whether `a` is `b` or one of its ancestors.
    fn is_ancestor_or_self(&self, a: usize, mut b: usize) -> bool {
        loop {
            if a == b {
                return true;
            }
            match self.nodes[b].parent {
                Some(p) => b = p,
                None => return false,
            }
        }
    }

    /// `MEMBERLIST=m1,m2,...` of node `i`: each member becomes a child of
    /// `i`. An inner node declared earlier by its own `FSTREE[...]` line
    /// (so hanging from root) moves below `i`; an inner node already member
    /// of another node, or a member that would make a cycle, is an error.
    /// A credential may be a member of several nodes (a user in two
    /// accounts).
    pub fn add_members(&mut self, i: usize, value: &str) -> Result<(), String> {
        for m in value.split(',').filter(|m| !m.trim().is_empty()) {
            let (cred, name) = parse_member(m)?;
            if self.nodes[i]
                .children
                .iter()
                .any(|&c| self.nodes[c].cred == cred && self.nodes[c].name == name)
            {
                continue;
            }
            let existing = self.find(cred, &name);
            match existing {
                Some(e) if self.is_ancestor_or_self(e, i) => {
                    return Err(format!(
                        "member '{}' of '{}' would make the tree a cycle",
                        m.trim(),
                        self.nodes[i].name
                    ));
                }
                Some(e) if !self.nodes[e].listed => {
                    // Declared first, listed now: move it below `i`.
                    let old = self.nodes[e].parent.unwrap_or(0);
                    self.nodes[old].children.retain(|&c| c != e);
                    self.nodes[e].parent = Some(i);
                    self.nodes[e].listed = true;
                    self.nodes[i].children.push(e);
                }
                Some(e) if cred.is_none() => {
                    let p = self.nodes[e].parent.unwrap_or(0);
                    return Err(format!(
                        "node '{name}' is already a member of '{}'",
                        self.nodes[p].name
                    ));
                }
                _ => {
                    self.nodes.push(FsNode::new(&name, cred, Some(i), true));
                    let c = self.nodes.len() - 1;
                    self.nodes[i].children.push(c);
                }
            }
        }
        Ok(())
    }

    /// The node a job is placed on (see the module doc).
    pub fn job_node(&self, job: &Job) -> Option<usize> {
        let c = &job.cred;
        let order = self.preorder();
        let is_user =
            |i: usize| self.nodes[i].cred == Some(CredKind::User) && self.nodes[i].name == c.user;
        if let Some(acct) = &c.account {
            let under_acct = |mut i: usize| {
                while let Some(p) = self.nodes[i].parent {
                    if self.nodes[p].cred == Some(CredKind::Account) && self.nodes[p].name == *acct
                    {
                        return true;
                    }
                    i = p;
                }
                false
            };
            if let Some(&i) = order.iter().find(|&&i| is_user(i) && under_acct(i)) {
                return Some(i);
            }
        }
        if let Some(&i) = order.iter().find(|&&i| is_user(i)) {
            return Some(i);
        }
        let matches = |i: usize| {
            let n = &self.nodes[i];
            match n.cred {
                Some(CredKind::Account) => c.account.as_deref() == Some(n.name.as_str()),
                Some(CredKind::Group) => c.group == n.name,
                Some(CredKind::Class) => c.class.as_deref() == Some(n.name.as_str()),
                Some(CredKind::Qos) => c.qos.as_deref().unwrap_or("DEFAULT") == n.name,
                _ => false,
            }
        };
        let mut best: Option<(usize, usize)> = None;
        for &i in &order {
            if matches(i) {
                let d = self.depth(i);
                if best.is_none_or(|(bd, _)| d > bd) {
                    best = Some((d, i));
                }
            }
        }
        best.map(|(_, i)| i)
    }

    /// The tree's state for `partition` (`None`: global) under `usage`.
    /// `constant` is `K` of the module doc ([`tree_constant`]), `m` the
    /// `FSTREETIERMULTIPLIER`.
    pub fn evaluate(
        &self,
        usage: &FsUsage,
        partition: Option<&str>,
        constant: f64,
        m: f64,
    ) -> TreeState {
        let n = self.nodes.len();
        let mut used = vec![0.0f64; n];
        // Post-order: children before parents.
        let order = self.preorder();
        for &i in order.iter().rev() {
            let node = &self.nodes[i];
            used[i] = if node.children.is_empty() {
                match node.cred {
                    Some(k) => usage.of(k, &node.name),
                    None => 0.0,
                }
            } else {
                node.children.iter().map(|&c| used[c]).sum()
            };
        }
        let shares: Vec<f64> = self.nodes.iter().map(|x| x.shares_in(partition)).collect();
        let child_shares: Vec<f64> = (0..n)
            .map(|i| {
                let s: f64 = self.nodes[i].children.iter().map(|&c| shares[c]).sum();
                if s == 0.0 {
                    shares[i]
                } else {
                    s
                }
            })
            .collect();
        let tiers = self.tiers();
        let mut used_shares = vec![0.0f64; n];
        let mut factor = vec![0.0f64; n];
        used_shares[0] = shares[0];
        for &i in &order {
            let Some(p) = self.nodes[i].parent else {
                continue;
            };
            let us = if used[p] > 0.0 {
                used[i] / used[p] * child_shares[p]
            } else {
                0.0
            };
            used_shares[i] = us;
            let tier = self.depth(i); // root's members: tier 1
            let t = if m > 0.0 {
                m.powi(tier as i32 - 1)
            } else if m < 0.0 {
                (-m).powi((tiers + 1 - tier) as i32)
            } else {
                1.0
            };
            factor[i] = if shares[i] > 0.0 {
                factor[p] - t * (us - shares[i]) * constant
            } else {
                factor[p]
            };
        }
        TreeState {
            usage: used,
            shares,
            child_shares,
            used_shares,
            factor,
        }
    }
}

/// Moab's share-tree constant `K = 1 + Σ_{i=1..depth} decay^i`.
pub fn tree_constant(depth: u32, decay: f64) -> f64 {
    let mut k = 1.0;
    let mut f = decay;
    for _ in 0..depth {
        k += f;
        f *= decay;
    }
    k
}

/// Per-node values of one evaluation ([`FsTree::evaluate`]), indexed like
/// [`FsTree::nodes`].
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TreeState {
    /// Decayed usage (processor-seconds).
    pub usage: Vec<f64>,
    /// Shares in this tree.
    pub shares: Vec<f64>,
    /// Σ shares of the members (the node's own when none).
    pub child_shares: Vec<f64>,
    /// Shares the node's usage amounts to (Moab's `Usage` column).
    pub used_shares: Vec<f64>,
    /// The tree factor.
    pub factor: Vec<f64>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::job::Request;

    fn usage(v: &[(CredKind, &str, f64)]) -> FsUsage {
        FsUsage {
            total: v.iter().map(|x| x.2).sum(),
            creds: v
                .iter()
                .map(|(k, n, u)| ((*k, n.to_string()), *u))
                .collect(),
            ..FsUsage::default()
        }
    }

    /// root: eng (50) { user:a (1), user:b (1) }, sales (50) { user:c }.
    fn tree() -> FsTree {
        let mut t = FsTree::default();
        let r = t.node_for_index("root").unwrap();
        t.add_members(r, "eng,sales").unwrap();
        let e = t.node_for_index("eng").unwrap();
        t.set_shares(e, "50").unwrap();
        t.add_members(e, "user:a,user:b").unwrap();
        let s = t.node_for_index("sales").unwrap();
        t.set_shares(s, "50,80@p2").unwrap();
        t.add_members(s, "user:c").unwrap();
        for u in ["user:a", "user:b", "user:c"] {
            let i = t.node_for_index(u).unwrap();
            t.set_shares(i, "1").unwrap();
        }
        t
    }

    fn job(user: &str, account: Option<&str>) -> Job {
        let mut j = Job::new(1, user, Request::procs(1), Some(60), 0);
        j.cred.account = account.map(Into::into);
        j
    }

    #[test]
    fn structure_and_errors() {
        let t = tree();
        assert_eq!(t.nodes.len(), 6);
        assert_eq!(t.tiers(), 2);
        let names: Vec<&str> = t
            .preorder()
            .iter()
            .map(|&i| t.nodes[i].name.as_str())
            .collect();
        assert_eq!(names, ["root", "eng", "a", "b", "sales", "c"]);
        assert_eq!(t.partitions(), ["p2"]);
        let mut t = tree();
        let e = t.find(None, "eng").unwrap();
        let s = t.find(None, "sales").unwrap();
        assert_eq!(
            t.add_members(e, "sales").unwrap_err(),
            "node 'sales' is already a member of 'root'"
        );
        assert_eq!(
            t.add_members(e, "root").unwrap_err(),
            "member 'root' of 'eng' would make the tree a cycle"
        );
        assert!(t
            .add_members(s, "bogus:x")
            .unwrap_err()
            .contains("invalid member type 'bogus'"));
        assert!(t
            .set_shares(s, "-3")
            .unwrap_err()
            .contains("invalid share count '-3'"));
        assert!(t
            .set_shares(s, "3@")
            .unwrap_err()
            .contains("missing partition"));
        // A user may be a member of two nodes.
        t.add_members(s, "user:a").unwrap();
        assert_eq!(t.nodes.len(), 7);
    }

    #[test]
    fn declared_before_listed_moves_below_its_parent() {
        let mut t = FsTree::default();
        let x = t.node_for_index("x").unwrap();
        t.add_members(x, "user:u").unwrap();
        let top = t.node_for_index("top").unwrap();
        t.add_members(top, "x").unwrap();
        assert_eq!(t.nodes[x].parent, Some(top));
        assert_eq!(t.nodes[0].children, vec![top]);
        assert_eq!(t.tiers(), 3);
    }

    #[test]
    fn factors_follow_the_share_arithmetic() {
        let t = tree();
        // eng used 75 of 100 (a 60, b 15), sales 25 (c).
        let u = usage(&[
            (CredKind::User, "a", 60.0),
            (CredKind::User, "b", 15.0),
            (CredKind::User, "c", 25.0),
        ]);
        let k = tree_constant(2, 0.5); // 1 + 0.5 + 0.25
        assert!((k - 1.75).abs() < 1e-12);
        let s = t.evaluate(&u, None, k, 1.0);
        let eng = t.find(None, "eng").unwrap();
        let sales = t.find(None, "sales").unwrap();
        let a = t.find(Some(CredKind::User), "a").unwrap();
        let c = t.find(Some(CredKind::User), "c").unwrap();
        assert_eq!(s.usage[eng], 75.0);
        assert_eq!(s.child_shares[0], 100.0);
        assert!((s.used_shares[eng] - 75.0).abs() < 1e-9);
        // eng: 75 used of 50 → −25 × K; sales: +25 × K.
        assert!((s.factor[eng] + 25.0 * k).abs() < 1e-9);
        assert!((s.factor[sales] - 25.0 * k).abs() < 1e-9);
        // a: 60/75 of eng's 2 child shares = 1.6 used of 1 → eng − 0.6 K.
        assert!((s.used_shares[a] - 1.6).abs() < 1e-9);
        assert!((s.factor[a] - (s.factor[eng] - 0.6 * k)).abs() < 1e-9);
        // c: the only member of sales uses its 1 share exactly.
        assert!((s.factor[c] - s.factor[sales]).abs() < 1e-9);
        // Every user of sales ranks above every user of eng.
        let b = t.find(Some(CredKind::User), "b").unwrap();
        assert!(s.factor[c] > s.factor[b] && s.factor[b] > s.factor[a]);
        // Partition p2: sales has 80 shares (eng keeps 50): child shares 130.
        let s2 = t.evaluate(&u, Some("p2"), k, 1.0);
        assert_eq!(s2.child_shares[0], 130.0);
        assert!((s2.factor[sales] - (80.0 - 32.5) * k).abs() < 1e-9);
        // No usage: every factor is distance from 0 usage (all below target).
        let s0 = t.evaluate(&FsUsage::default(), None, k, 1.0);
        assert!((s0.factor[eng] - 50.0 * k).abs() < 1e-9);
    }

    #[test]
    fn tier_multiplier_weights_tiers() {
        let t = tree();
        let u = usage(&[
            (CredKind::User, "a", 60.0),
            (CredKind::User, "b", 15.0),
            (CredKind::User, "c", 25.0),
        ]);
        let a = t.find(Some(CredKind::User), "a").unwrap();
        let eng = t.find(None, "eng").unwrap();
        let s = t.evaluate(&u, None, 1.0, 0.1);
        // Tier 1 × 1, tier 2 × 0.1.
        assert!((s.factor[a] - (-25.0 - 0.1 * 0.6)).abs() < 1e-9);
        let s = t.evaluate(&u, None, 1.0, -10.0);
        // Two tiers: tier 1 × 10², tier 2 × 10.
        assert!((s.factor[eng] + 2500.0).abs() < 1e-9);
        assert!((s.factor[a] - (-2500.0 - 6.0)).abs() < 1e-9);
    }

    #[test]
    fn jobs_are_placed_by_user_under_their_account() {
        let mut t = FsTree::default();
        let r = t.node_for_index("root").unwrap();
        t.add_members(r, "acct:x,acct:y,group:g").unwrap();
        let x = t.node_for_index("acct:x").unwrap();
        t.add_members(x, "user:u").unwrap();
        let y = t.node_for_index("acct:y").unwrap();
        t.add_members(y, "user:u").unwrap();
        let ux = t.nodes[x].children[0];
        let uy = t.nodes[y].children[0];
        assert_eq!(t.job_node(&job("u", Some("y"))), Some(uy));
        assert_eq!(t.job_node(&job("u", Some("z"))), Some(ux));
        assert_eq!(t.job_node(&job("u", None)), Some(ux));
        // Not a user in the tree: the deepest credential node.
        let mut j = job("v", Some("x"));
        assert_eq!(t.job_node(&j), Some(x));
        j.cred.account = None;
        j.cred.group = "g".into();
        assert_eq!(t.job_node(&j), t.find(Some(CredKind::Group), "g"));
        j.cred.group = "h".into();
        assert_eq!(t.job_node(&j), None);
    }
}
