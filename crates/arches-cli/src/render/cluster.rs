//! Cluster-wide mdiag reports: reservations (`-r`), credentials
//! (`-u -g -a -c -q`), partitions (`-t`) and resource managers (`-R`).

use arches_api::ReservationsView;

use crate::fmt::duration;

/// `showres --xml` / `mdiag -r --xml` / `mrsvctl -q --xml`: one `<rsv>`
/// per reservation with the attribute names of Moab's reservation XML
/// (`Name`, `Type`, `StartTime`, `EndTime` in epoch seconds, `Duration`,
/// `AllocNodeCount`, `AllocNodeList`, `AllocProcCount`, `Owner`, `Flags`,
/// `ACL`, `JobState`); explicit end tags like `<node>` (docs/formats.md).
pub fn render_reservations_xml(v: &ReservationsView) -> String {
    let mut d = super::xml::Element::new("Data");
    for r in &v.reservations {
        let nodes: Vec<&str> = r.nodes.iter().map(|n| n.node.as_str()).collect();
        let e = super::xml::Element::new("rsv")
            .attr("Name", &r.id)
            .attr("Type", &r.kind)
            .attr("StartTime", r.start)
            .attr(
                "EndTime",
                r.end.map_or("INFINITY".to_string(), |e| e.to_string()),
            )
            .attr(
                "Duration",
                r.end
                    .map_or("INFINITY".to_string(), |e| (e - r.start).to_string()),
            )
            .attr("AllocNodeCount", r.nodes.len())
            .attr("AllocProcCount", r.procs)
            .attr_opt(
                "AllocNodeList",
                (!nodes.is_empty()).then(|| nodes.join(",")),
            )
            .attr_opt("Owner", r.owner.as_ref())
            .attr_opt("Flags", (!r.flags.is_empty()).then(|| r.flags.join(",")))
            .attr_opt("ACL", (!r.acl.is_empty()).then(|| r.acl.join(" ")))
            .attr_opt("JobState", r.job_state.as_ref())
            .attr_opt("RsvGroup", r.group.as_ref())
            .explicit_close();
        d.push(e);
    }
    d.render()
}

/// `mdiag -r`.
pub fn render_reservations(v: &ReservationsView) -> String {
    let row = |a: &str, b: &str, c: &str, d: &str, e: &str, f: &str, g: &str, h: &str, i: &str| {
        format!("{a:<26} {b:>4} {c:>3} {d:>11} {e:>11} {f:>12} {g:>4} {h:>4} {i:>4}\n")
    };
    let mut o = String::from("Diagnosing Reservations\n");
    o.push_str(&row(
        "RsvID",
        "Type",
        "Par",
        "StartTime",
        "EndTime",
        "Duration",
        "Node",
        "Task",
        "Proc",
    ));
    o.push_str(&row(
        "-----",
        "----",
        "---",
        "---------",
        "-------",
        "--------",
        "----",
        "----",
        "----",
    ));
    for r in &v.reservations {
        let tasks: u32 = r.nodes.iter().map(|n| n.tasks).sum();
        o.push_str(&row(
            &r.id,
            &r.kind,
            "-",
            &duration(r.start - v.now),
            &r.end
                .map_or("INFINITY".to_string(), |e| duration(e - v.now)),
            &r.end
                .map_or("INFINITY".to_string(), |e| duration(e - r.start)),
            &r.nodes.len().to_string(),
            &tasks.to_string(),
            &r.procs.to_string(),
        ));
        if !r.flags.is_empty() {
            o.push_str(&format!("    Flags: {}\n", r.flags.join(" ")));
        }
        if !r.acl.is_empty() {
            o.push_str(&format!("    ACL:   {}\n", r.acl.join(" ")));
        }
        if let Some(owner) = &r.owner {
            o.push_str(&format!("    Owner: {owner}\n"));
        }
        if let Some(g) = &r.group {
            o.push_str(&format!("    RsvGroup: {g}\n"));
        }
        if !r.nodes.is_empty() {
            o.push_str(&format!(
                "    Attributes (HostExp='{}')\n",
                r.nodes
                    .iter()
                    .map(|n| n.node.as_str())
                    .collect::<Vec<_>>()
                    .join(" ")
            ));
        }
        o.push('\n');
    }
    o
}

/// Per-partition totals for `mdiag -t`.
#[derive(Default)]
struct ParTotals {
    procs: u64,
    nodes: [u64; 4],
    proc_stats: [u64; 4],
    mem: [u64; 4],
}

/// `mdiag -t`: partitions with configured, up, dedicated and active nodes,
/// processors and memory (Moab 7 `MParShow` layout, §8.7).
pub fn render_partitions(v: &arches_api::NodesView) -> String {
    use std::collections::BTreeMap;
    let mut pars: BTreeMap<String, ParTotals> = BTreeMap::new();
    for n in &v.nodes {
        let up = !matches!(n.state.as_str(), "Down" | "Drained");
        let active = n.procs_used > 0 || !n.jobs.is_empty();
        for key in [n.partition.clone(), "ALL".to_string()] {
            let t = pars.entry(key).or_default();
            t.procs += n.procs as u64;
            let cfg = [
                1,
                u64::from(up),
                u64::from(n.procs_used > 0),
                u64::from(active),
            ];
            for (n, c) in t.nodes.iter_mut().zip(cfg) {
                *n += c;
            }
            let procs = n.procs as u64;
            let used = n.procs_used as u64;
            t.proc_stats[0] += procs;
            t.proc_stats[1] += if up { procs } else { 0 };
            t.proc_stats[2] += used;
            t.proc_stats[3] += if active { used } else { 0 };
            t.mem[0] += n.mem_mb;
            t.mem[1] += if up { n.mem_mb } else { 0 };
            t.mem[2] += n.mem_used_mb;
            t.mem[3] += if active { n.mem_used_mb } else { 0 };
        }
    }
    let real: Vec<&String> = pars.keys().filter(|k| k.as_str() != "ALL").collect();
    let show_all = real.len() > 1;
    let names: Vec<String> = pars
        .keys()
        .filter(|k| show_all || k.as_str() != "ALL")
        .cloned()
        .collect();
    let mut o = String::from("Partition Status\n\n");
    o.push_str(&format!(
        "System Partition Settings:  PList: {}\n\n",
        real.iter()
            .map(|s| s.as_str())
            .collect::<Vec<_>>()
            .join(",")
    ));
    o.push_str(&format!(
        "{:<20} {:>8}        {:>16.16} {:>18.18}\n\n",
        "Name", "Procs", "NodeAccessPolicy", "JobNodeMatchPolicy"
    ));
    for name in &names {
        o.push_str(&format!(
            "{:<20} {:>8}        {:>16.16} {:>18.18}\n",
            name, pars[name].procs, "---", "---"
        ));
    }
    o.push_str(&format!(
        "\n{:<14} {:>10} {:>10} {:>7} {:>10} {:>7} {:>10} {:>7}\n\n",
        "Partition", "Configured", "Up", "U/C", "Dedicated", "D/U", "Active", "A/U"
    ));
    let pct = |a: u64, b: u64| {
        if b == 0 {
            0.0
        } else {
            a as f64 * 100.0 / b as f64
        }
    };
    let section = |o: &mut String, title: &str, get: &dyn Fn(&ParTotals) -> [u64; 4]| {
        o.push_str(&format!("{title} {}\n", "-".repeat(79 - title.len())));
        for name in &names {
            let s = get(&pars[name]);
            o.push_str(&format!(
                "{:<14.14} {:>10} {:>10} {:>6.2}% {:>10} {:>6.2}% {:>10} {:>6.2}%\n",
                name,
                s[0],
                s[1],
                pct(s[1], s[0]),
                s[2],
                pct(s[2], s[1]),
                s[3],
                pct(s[3], s[1])
            ));
        }
        o.push('\n');
    };
    section(&mut o, "Nodes", &|t| t.nodes);
    section(&mut o, "Processors", &|t| t.proc_stats);
    section(&mut o, "Memory (in MB)", &|t| t.mem);
    o
}

#[cfg(test)]
mod tests {
    use super::*;
    use arches_api::{NodeInfo, NodesView};

    fn node(name: &str, par: &str, state: &str, procs: u32, used: u32) -> NodeInfo {
        NodeInfo {
            name: name.into(),
            state: state.into(),
            state_secs: 0,
            procs,
            procs_used: used,
            mem_mb: 1024,
            mem_used_mb: 0,
            features: vec![],
            partition: par.into(),
            classes: vec![],
            jobs: if used > 0 { vec![1] } else { vec![] },
            load: 0.0,
            total_secs: 0,
            up_secs: 0,
            active_secs: 0,
            reservations: vec![],
            rm: "local".into(),
            rm_type: "LOCAL".into(),
            opsys: None,
            arch: None,
            last_update: 0,
            gres: vec![],
            access_policy: None,
            effective_access_policy: None,
        }
    }

    #[test]
    fn partitions_table() {
        let v = NodesView {
            now: 0,
            nodes: vec![
                node("a", "p1", "Busy", 4, 4),
                node("b", "p1", "Down", 4, 0),
                node("c", "p2", "Idle", 8, 0),
            ],
            storage: vec![],
        };
        let s = render_partitions(&v);
        assert!(
            s.contains("System Partition Settings:  PList: p1,p2\n"),
            "{s}"
        );
        assert!(s.contains(&format!("{:<20} {:>8}", "ALL", 16)), "{s}");
        assert!(s.contains(&format!("Nodes {}\n", "-".repeat(74))), "{s}");
        let p1 = s
            .lines()
            .skip_while(|l| !l.starts_with("Processors"))
            .find(|l| l.starts_with("p1"))
            .unwrap();
        assert_eq!(
            p1,
            "p1                      8          4  50.00%          4 100.00%          4 100.00%"
        );
        // One partition only: no ALL row.
        let one = render_partitions(&NodesView {
            now: 0,
            nodes: vec![node("a", "p1", "Idle", 2, 0)],
            storage: vec![],
        });
        assert!(!one.contains("\nALL "), "{one}");
    }
}

/// `mdiag -R`: resource managers as seen through the nodes they report.
pub fn render_rms(v: &arches_api::NodesView, name: Option<&str>) -> String {
    use std::collections::BTreeMap;
    let mut rms: BTreeMap<&str, (&str, Vec<&arches_api::NodeInfo>)> = BTreeMap::new();
    for n in &v.nodes {
        rms.entry(n.rm.as_str())
            .or_insert((n.rm_type.as_str(), Vec::new()))
            .1
            .push(n);
    }
    let mut o = String::new();
    for (rm, (kind, nodes)) in rms.iter().filter(|(r, _)| name.is_none_or(|n| n == **r)) {
        let up = nodes.iter().any(|n| n.state != "Down");
        let procs: u32 = nodes.iter().map(|n| n.procs).sum();
        let jobs: usize = nodes.iter().map(|n| n.jobs.len()).sum();
        let last = nodes.iter().map(|n| n.last_update).max().unwrap_or(0);
        o.push_str(&format!(
            "RM[{rm}]  Type: {kind}  State: {}  ResourceType: COMPUTE\n",
            if up { "Active" } else { "Down" }
        ));
        o.push_str(&format!("  {:<20}{}\n", "Nodes Reported:", nodes.len()));
        o.push_str(&format!(
            "  {:<20}Nodes={} ({} procs)  Jobs={}\n",
            "Objects Reported:",
            nodes.len(),
            procs,
            jobs
        ));
        if last > 0 {
            o.push_str(&format!(
                "  {:<20}{} ago\n",
                "Last Update:",
                duration((v.now - last).max(0))
            ));
        }
        o.push('\n');
    }
    o
}

#[cfg(test)]
mod rm_tests {
    use super::*;

    #[test]
    fn rm_summary() {
        let mut n = super::tests_support::node("n1");
        n.last_update = 90;
        let v = arches_api::NodesView {
            now: 100,
            nodes: vec![n],
            storage: vec![],
        };
        assert_eq!(
            render_rms(&v, None),
            "RM[local]  Type: LOCAL  State: Active  ResourceType: COMPUTE\n  Nodes Reported:     1\n  Objects Reported:   Nodes=1 (4 procs)  Jobs=0\n  Last Update:        00:00:10 ago\n\n"
        );
        assert_eq!(render_rms(&v, Some("other")), "");
    }
}

#[cfg(test)]
mod tests_support {
    /// A minimal idle node for tests.
    pub fn node(name: &str) -> arches_api::NodeInfo {
        arches_api::NodeInfo {
            name: name.into(),
            state: "Idle".into(),
            state_secs: 0,
            procs: 4,
            procs_used: 0,
            mem_mb: 1024,
            mem_used_mb: 0,
            features: vec![],
            partition: "DEFAULT".into(),
            classes: vec![],
            jobs: vec![],
            load: 0.0,
            total_secs: 0,
            up_secs: 0,
            active_secs: 0,
            reservations: vec![],
            rm: "local".into(),
            rm_type: "LOCAL".into(),
            opsys: None,
            arch: None,
            last_update: 0,
            gres: vec![],
            access_policy: None,
            effective_access_policy: None,
        }
    }
}
