//! Which nodes a reservation takes: Moab's host expressions (`mrsvctl -h`:
//! `ALL`, a comma list of names, regular expressions — "the HOSTLIST is
//! always treated as a regular expression" —, `class:<CLASS>`,
//! `feature:<FEATURE>`) and the filters `-f` features, `-p` partition and
//! `-x` jobs whose nodes are left out; and reservation ids as `mrsvctl -l/-q
//! /-r` take them (`ALL`, comma lists, regular expressions).

use std::collections::BTreeMap;

use arches_core::policy::ClassConfig;
use arches_core::{Reservation, State};

/// The configured classes (`CLASSCFG`), for `class:` host selectors.
pub type Classes = BTreeMap<String, ClassConfig>;

/// The nodes of a host expression, in node order. A name that is a node
/// is that node (Moab would also match `node10` against `node101`: Arches
/// keeps exact names exact); any other item is a regular expression
/// matched anywhere in the node names, as Moab matches it (anchor with `^`
/// and `$`).
pub fn host_expr(expr: &str, state: &State, classes: &Classes) -> Result<Vec<String>, String> {
    let nodes = state.nodes();
    if expr.trim().eq_ignore_ascii_case("ALL") {
        return Ok(nodes.iter().map(|n| n.name.clone()).collect());
    }
    let mut out: Vec<String> = Vec::new();
    for item in crate::jobexpr::split_tokens(expr) {
        let matched: Vec<String> = if let Some(c) = item.strip_prefix("class:") {
            let Some(class) = classes.get(c) else {
                return Err(format!("class '{c}' is not configured"));
            };
            // The nodes the class's jobs may use: its HOSTLIST and
            // PARTITION (`CLASSCFG[c] HOSTLIST= PARTITION=`), else all.
            let limits = &class.job;
            nodes
                .iter()
                .filter(|n| limits.hosts.is_empty() || limits.hosts.contains(&n.name))
                .filter(|n| limits.partition.as_ref().is_none_or(|p| *p == n.partition))
                .map(|n| n.name.clone())
                .collect()
        } else if let Some(f) = item
            .strip_prefix("feature:")
            .or_else(|| item.strip_prefix("features:"))
        {
            nodes
                .iter()
                .filter(|n| n.features.iter().any(|x| x == f))
                .map(|n| n.name.clone())
                .collect()
        } else if nodes.iter().any(|n| n.name == item) {
            vec![item.to_string()]
        } else {
            let re = regex::RegexBuilder::new(item)
                .size_limit(1 << 20)
                .build()
                .map_err(|_| format!("invalid host expression '{item}'"))?;
            nodes
                .iter()
                .filter(|n| re.is_match(&n.name))
                .map(|n| n.name.clone())
                .collect()
        };
        if matched.is_empty() {
            return Err(format!("host expression '{item}' matches no node"));
        }
        for m in matched {
            if !out.contains(&m) {
                out.push(m);
            }
        }
    }
    out.sort_by_key(|h| state.node_id(h));
    Ok(out)
}

/// `-f`, `-p` and `-x` of `mrsvctl -c`.
#[derive(Debug, Clone, Default)]
pub struct HostFilter {
    pub features: Vec<String>,
    pub partition: Option<String>,
    /// Jobs whose nodes the reservation must not take.
    pub exclude_jobs: Vec<String>,
}

impl HostFilter {
    fn is_empty(&self) -> bool {
        self.features.is_empty() && self.partition.is_none() && self.exclude_jobs.is_empty()
    }

    /// Restricts the reservation's nodes: a host list keeps the nodes that
    /// pass; a processor count is taken from the nodes that pass.
    pub fn apply(&self, r: &mut Reservation, state: &State) -> Result<(), String> {
        if self.is_empty() {
            return Ok(());
        }
        if let Some(p) = &self.partition {
            if !state.nodes().iter().any(|n| &n.partition == p) {
                return Err(format!("partition '{p}' does not exist"));
            }
        }
        let mut excluded: Vec<u32> = Vec::new();
        for j in &self.exclude_jobs {
            let id = crate::jobexpr::exact_id(j).ok_or_else(|| format!("invalid job '{j}'"))?;
            let job = state
                .job(id)
                .ok_or_else(|| format!("cannot locate job '{j}'"))?;
            if let Some(run) = job.run.as_ref().filter(|_| job.state.is_active()) {
                excluded.extend(run.alloc.iter().map(|a| a.node));
            }
        }
        let passes = |name: &str| -> bool {
            let Some(id) = state.node_id(name) else {
                return false;
            };
            let Some(n) = state.node(id) else {
                return false;
            };
            n.has_features(&self.features)
                && self.partition.as_ref().is_none_or(|p| *p == n.partition)
                && !excluded.contains(&id)
        };
        if r.hosts.is_empty() {
            r.hosts = state
                .nodes()
                .iter()
                .map(|n| n.name.clone())
                .filter(|n| passes(n))
                .collect();
        } else {
            r.hosts.retain(|h| passes(h));
        }
        if r.hosts.is_empty() {
            return Err(
                "no node matches the host expression, features, partition and excluded jobs"
                    .to_string(),
            );
        }
        Ok(())
    }
}

/// Reservation ids as mrsvctl takes them: `ALL`, comma lists, exact ids,
/// or regular expressions matched from the start of the id (`system*`,
/// `system\.[1-3]`). Every token must match something: `Err` names the
/// first that does not.
pub fn select_ids<'a>(
    expr: &str,
    ids: impl Iterator<Item = &'a str> + Clone,
) -> Result<Vec<String>, String> {
    let mut out: Vec<String> = Vec::new();
    for tok in crate::jobexpr::split_tokens(expr) {
        let found: Vec<String> = if tok.eq_ignore_ascii_case("ALL") {
            ids.clone().map(String::from).collect()
        } else if ids.clone().any(|i| i == tok) {
            vec![tok.to_string()]
        } else {
            match regex::RegexBuilder::new(&format!("^(?:{tok})"))
                .size_limit(1 << 20)
                .build()
            {
                Ok(re) => ids
                    .clone()
                    .filter(|i| re.is_match(i))
                    .map(String::from)
                    .collect(),
                Err(_) => Vec::new(),
            }
        };
        if found.is_empty() && !tok.eq_ignore_ascii_case("ALL") {
            return Err(tok.to_string());
        }
        for f in found {
            if !out.contains(&f) {
                out.push(f);
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use arches_core::Node;

    fn state() -> State {
        let mut a = Node::new("node01", 2, 0);
        a.features = vec!["fast".into()];
        let b = Node::new("node02", 2, 0);
        let mut c = Node::new("node10", 2, 0);
        c.partition = "blue".into();
        State::new(vec![a, b, c])
    }

    #[test]
    fn host_expressions() {
        let s = state();
        let mut c = Classes::new();
        c.insert("batch".to_string(), ClassConfig::default());
        let mut short = ClassConfig::default();
        short.job.hosts = vec!["node02".to_string(), "node10".to_string()];
        c.insert("short".to_string(), short);
        let h = |e: &str| host_expr(e, &s, &c);
        assert_eq!(h("ALL").unwrap().len(), 3);
        assert_eq!(h("node01").unwrap(), ["node01"]);
        assert_eq!(h("node0[1-2]").unwrap(), ["node01", "node02"]);
        assert_eq!(h("node1,node02").unwrap(), ["node02", "node10"]);
        assert_eq!(h("feature:fast").unwrap(), ["node01"]);
        assert!(h("nosuch").is_err());
        assert!(h("node[").is_err());
        assert_eq!(h("class:batch").unwrap().len(), 3);
        assert_eq!(h("class:short").unwrap(), ["node02", "node10"]);
        assert!(h("class:other").is_err());
    }

    #[test]
    fn reservation_ids() {
        let ids = ["system.1", "system.2", "maint"];
        let it = ids.iter().copied();
        assert_eq!(select_ids("ALL", it.clone()).unwrap().len(), 3);
        assert_eq!(
            select_ids("system*", it.clone()).unwrap(),
            ["system.1", "system.2"]
        );
        assert_eq!(
            select_ids("maint,system.2", it.clone()).unwrap(),
            ["maint", "system.2"]
        );
        assert_eq!(
            select_ids("nope,maint", it.clone()),
            Err("nope".to_string())
        );
    }
}
