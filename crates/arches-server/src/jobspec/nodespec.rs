//! Torque node specifications and Moab's placement extensions: `nodes=`
//! with named hosts, mixed layouts, features and `gpus=` per part;
//! `tpn=`, `trl=`, `hostlist=`/`host=`, `naccesspolicy=`, `gres=`,
//! `advres=`; PBS Pro `select=` chunks. What the request holds afterwards
//! is [`arches_core::layout::Layout`]; every part not understood is a
//! refusal naming it (never ignored).

use arches_core::access::NodeAccessPolicy;
use arches_core::layout::{Layout, NodeGroup, TaskOption};
use arches_core::Request;

use super::{err, SubmitError};

/// The placement part of a submission, gathered from `-l` and `-W x=`.
#[derive(Debug, Default)]
pub(super) struct Place {
    /// Node groups of a `nodes=` or `select=` that is more than
    /// `N[:ppn=P][:feature]` (named hosts, several parts, GPUs per node).
    pub groups: Option<Vec<NodeGroup>>,
    pub hosts: Vec<String>,
    pub access: Option<NodeAccessPolicy>,
    /// Generic resources per task.
    pub gres: Vec<(String, u32)>,
    pub advres: Option<String>,
    pub trl: Vec<TaskOption>,
    pub tpn: Option<u32>,
}

/// What `nodes=` says.
pub(super) enum NodeSpec {
    /// `N[:ppn=P][:feature...]`.
    Simple {
        nodes: u32,
        ppn: Option<u32>,
        features: Vec<String>,
    },
    /// Anything richer: groups of distinct nodes.
    Groups(Vec<NodeGroup>),
}

fn positive(what: &str, v: &str, spec: &str) -> Result<u32, SubmitError> {
    match v.trim().parse::<u32>() {
        Ok(n) if n > 0 => Ok(n),
        _ => err(format!(
            "invalid {what} '{v}' in node specification '{spec}' (expected a positive integer)"
        )),
    }
}

/// Whether `s` can be a node or reservation name.
fn is_name(s: &str) -> bool {
    !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
        && s.chars().next().is_some_and(|c| c.is_ascii_alphanumeric())
}

/// Parses Torque's `nodes=` value: `+`-separated parts, each a count or
/// a host name, then `ppn=P`, `gpus=G` and features, `:`-separated.
pub(super) fn parse_nodes(value: &str) -> Result<NodeSpec, SubmitError> {
    let mut groups: Vec<NodeGroup> = Vec::new();
    let mut rich = false;
    for part in value.split('+') {
        let mut tokens = part.split(':');
        let first = tokens.next().unwrap_or("").trim();
        if first.is_empty() {
            return err(format!(
                "malformed node specification '{value}' (empty part)"
            ));
        }
        let (count, host) = if first.bytes().all(|b| b.is_ascii_digit()) {
            (positive("node count", first, value)?, None)
        } else if is_name(first) && !first.contains('=') {
            rich = true;
            (1, Some(first.to_string()))
        } else {
            return err(format!(
                "malformed node specification '{value}' ('{first}' is neither a node count nor a host name)"
            ));
        };
        let mut g = NodeGroup {
            count,
            host,
            tasks_per_node: 1,
            features: Vec::new(),
            gres: Vec::new(),
        };
        let mut ppn_given = false;
        for t in tokens {
            let t = t.trim();
            match t.split_once('=') {
                Some((k, v)) => match k.to_ascii_lowercase().as_str() {
                    "ppn" => {
                        if ppn_given {
                            return err(format!("node specification '{value}' gives ppn twice"));
                        }
                        ppn_given = true;
                        g.tasks_per_node = positive("ppn", v, value)?;
                    }
                    "gpus" => {
                        rich = true;
                        g.gres.push(("gpu".to_string(), positive("gpus", v, value)?));
                    }
                    other => {
                        return err(format!(
                            "unsupported node property '{other}' in node specification '{value}' (supported: ppn, gpus, features)"
                        ))
                    }
                },
                None if is_name(t) => g.features.push(t.to_string()),
                None => {
                    return err(format!(
                        "malformed node specification '{value}' (invalid feature '{t}')"
                    ))
                }
            }
        }
        if !ppn_given {
            g.tasks_per_node = 1;
        }
        groups.push(g);
    }
    let mut named: Vec<&str> = groups.iter().filter_map(|g| g.host.as_deref()).collect();
    named.sort_unstable();
    if let Some(w) = named.windows(2).find(|w| w[0] == w[1]) {
        return err(format!(
            "node specification '{value}' names host '{}' twice",
            w[0]
        ));
    }
    if groups.len() == 1 && !rich {
        let g = groups.remove(0);
        return Ok(NodeSpec::Simple {
            nodes: g.count,
            ppn: Some(g.tasks_per_node).filter(|_| value.to_ascii_lowercase().contains("ppn=")),
            features: g.features,
        });
    }
    Ok(NodeSpec::Groups(groups))
}

/// PBS Pro `select=N:ncpus=C:mem=M:ngpus=G:host=H[+...]` as node groups,
/// with the memory per chunk (MB) of each.
pub(super) fn parse_select(value: &str) -> Result<(Vec<NodeGroup>, Vec<Option<u64>>), SubmitError> {
    let mut groups = Vec::new();
    let mut mems = Vec::new();
    for chunk in value.split('+') {
        let mut parts = chunk.split(':');
        let first = parts.next().unwrap_or("").trim();
        let (count, rest_first) = match first.parse::<u32>() {
            Ok(n) if n > 0 => (n, None),
            Ok(_) => return err(format!("invalid chunk count '{first}' in select '{value}'")),
            Err(_) if first.contains('=') => (1, Some(first)),
            Err(_) => return err(format!("malformed select specification '{value}'")),
        };
        let mut g = NodeGroup {
            count,
            host: None,
            tasks_per_node: 1,
            features: Vec::new(),
            gres: Vec::new(),
        };
        let mut mem = None;
        for p in rest_first.into_iter().chain(parts) {
            let Some((k, v)) = p.split_once('=') else {
                return err(format!("malformed select specification '{value}' ('{p}')"));
            };
            match k.trim().to_ascii_lowercase().as_str() {
                "ncpus" | "mpiprocs" => g.tasks_per_node = positive(k, v, value)?,
                "mem" => mem = Some(super::parse_mem(v)?),
                "ngpus" => g.gres.push(("gpu".to_string(), positive(k, v, value)?)),
                "host" | "vnode" if is_name(v.trim()) => {
                    if count != 1 {
                        return err(format!(
                            "select chunk '{chunk}' names host '{v}' for {count} chunks"
                        ));
                    }
                    g.host = Some(v.trim().to_string());
                }
                other => {
                    return err(format!(
                        "unsupported select resource '{other}' in '{value}' (supported: ncpus, mpiprocs, mem, ngpus, host)"
                    ))
                }
            }
        }
        groups.push(g);
        mems.push(mem);
    }
    Ok((groups, mems))
}

/// `n1+n2`, `n1:n2` or `n1,n2` as a host list.
fn host_list(value: &str) -> Result<Vec<String>, SubmitError> {
    let mut out = Vec::new();
    for h in value.split(['+', ':', ',']).map(str::trim) {
        if !is_name(h) {
            return err(format!("invalid host list '{value}' (bad host name '{h}')"));
        }
        if !out.iter().any(|x: &String| x == h) {
            out.push(h.to_string());
        }
    }
    Ok(out)
}

impl Place {
    /// One placement resource of `-l` or `-W x=` (lower-case key). `Ok(false)`:
    /// not a placement key.
    pub fn apply(&mut self, key: &str, value: &str) -> Result<bool, SubmitError> {
        let v = value.trim();
        match key {
            "naccesspolicy" | "nodeaccesspolicy" => {
                let p: NodeAccessPolicy = v.parse().map_err(|e: String| {
                    SubmitError(format!("invalid node access policy: {e}"))
                })?;
                self.access = Some(p);
            }
            "hostlist" | "host" => {
                for h in host_list(v)? {
                    if !self.hosts.contains(&h) {
                        self.hosts.push(h);
                    }
                }
            }
            "tpn" => {
                self.tpn = Some(match v.parse::<u32>() {
                    Ok(n) if n > 0 => n,
                    _ => return err(format!("invalid value '{v}' for resource 'tpn'")),
                })
            }
            "trl" => self.trl = arches_core::layout::parse_trl(v).map_err(SubmitError)?,
            "gres" => {
                for (n, c) in arches_core::gres::parse_list(v).map_err(SubmitError)? {
                    match self.gres.iter_mut().find(|(x, _)| *x == n) {
                        Some(e) => e.1 = e.1.saturating_add(c),
                        None => self.gres.push((n, c)),
                    }
                }
            }
            "advres" => {
                if !v.is_empty() && !is_name(v) {
                    return err(format!("invalid reservation name '{v}' for ADVRES"));
                }
                self.advres = Some(v.to_string());
            }
            "gpus" => {
                return err(format!(
                    "resource 'gpus={v}' must be part of a node specification (nodes=N:ppn=P:gpus=G) or given as gres=gpu:N"
                ))
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// Completes `req` (built from the shape resources) with the placement.
    pub fn finish(&self, req: &mut Request) -> Result<(), SubmitError> {
        if let Some(groups) = &self.groups {
            req.tasks = groups.iter().map(NodeGroup::tasks).sum();
            req.nodes = Some(groups.iter().map(|g| g.count).sum());
            let tpn = groups[0].tasks_per_node;
            req.tasks_per_node = groups
                .iter()
                .all(|g| g.tasks_per_node == tpn)
                .then_some(tpn);
            if self.tpn.is_some() {
                return err("tpn cannot be combined with a node specification of named hosts, several parts or GPUs".to_string());
            }
        }
        if let Some(tpn) = self.tpn {
            req.tasks_per_node = Some(tpn);
            req.nodes = Some(req.tasks.div_ceil(tpn));
        }
        let layout = Layout {
            groups: self.groups.clone().unwrap_or_default(),
            hosts: self.hosts.clone(),
            gres: self.gres.clone(),
            access: self.access,
            advres: self.advres.clone(),
            trl: self.trl.clone(),
        };
        if layout != Layout::default() {
            req.layout = Some(Box::new(layout));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn torque_node_specs() {
        match parse_nodes("2:ppn=4:bigmem").unwrap() {
            NodeSpec::Simple {
                nodes,
                ppn,
                features,
            } => {
                assert_eq!((nodes, ppn), (2, Some(4)));
                assert_eq!(features, vec!["bigmem".to_string()]);
            }
            NodeSpec::Groups(_) => panic!("simple"),
        }
        let NodeSpec::Groups(g) = parse_nodes("2:ppn=8+1:ppn=4").unwrap() else {
            panic!("groups")
        };
        assert_eq!(
            g.iter()
                .map(|g| (g.count, g.tasks_per_node))
                .collect::<Vec<_>>(),
            vec![(2, 8), (1, 4)]
        );
        let NodeSpec::Groups(g) = parse_nodes("n1+n2:ppn=2").unwrap() else {
            panic!("hosts")
        };
        assert_eq!(g[0].host.as_deref(), Some("n1"));
        assert_eq!((g[1].host.as_deref(), g[1].tasks_per_node), (Some("n2"), 2));
        let NodeSpec::Groups(g) = parse_nodes("1:ppn=4:gpus=2").unwrap() else {
            panic!("gpus")
        };
        assert_eq!(g[0].gres, vec![("gpu".to_string(), 2)]);
        for bad in [
            "",
            "2:ppn=",
            "2:ppn=0",
            "2:mics=1",
            "n1+n1",
            "2:ppn=2:ppn=3",
            "2::x",
            "+",
            "a b",
        ] {
            assert!(parse_nodes(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn select_chunks() {
        let (g, m) = parse_select("2:ncpus=4:mem=2gb:ngpus=1+1:ncpus=8:host=n3").unwrap();
        assert_eq!((g[0].count, g[0].tasks_per_node), (2, 4));
        assert_eq!(m, vec![Some(2048), None]);
        assert_eq!(g[1].host.as_deref(), Some("n3"));
        assert!(parse_select("1:ncpus=2:arch=x86").is_err());
        assert!(parse_select("2:host=n1").is_err());
    }

    #[test]
    fn placement_keys() {
        let mut p = Place::default();
        assert!(p.apply("naccesspolicy", "singlejob").unwrap());
        assert_eq!(p.access, Some(NodeAccessPolicy::SingleJob));
        assert!(p.apply("naccesspolicy", "alone").is_err());
        assert!(p.apply("hostlist", "n1+n2").unwrap());
        assert!(p.apply("host", "n3").unwrap());
        assert_eq!(p.hosts, vec!["n1", "n2", "n3"]);
        assert!(p.apply("gres", "gpu:2+matlab").unwrap());
        assert_eq!(p.gres.len(), 2);
        assert!(p.apply("gpus", "2").is_err());
        assert!(p.apply("trl", "1@10:2@5").unwrap());
        assert!(!p.apply("walltime", "1").unwrap());
        let mut r = Request::procs(10);
        p.tpn = Some(4);
        p.finish(&mut r).unwrap();
        assert_eq!((r.nodes, r.tasks_per_node), (Some(3), Some(4)));
        assert_eq!(r.access(), Some(NodeAccessPolicy::SingleJob));
    }
}
