//! showbf (Moab table form, moab-formats.md §5.3), showstart (§6.3) and
//! showres (§7.3).

use arches_api::{BackfillView, ReservationsView, StartEstimate};

use super::xml::Element;
use crate::fmt::{date, date_with_year, duration, limit, plural, short_date};

/// `showbf`: one row per window plus `ReqID=0` (with `-v`, the window's
/// nodes: `ReqID=0  HostList=n1:2,n2:1`).
pub fn render_backfill(view: &BackfillView, verbose: bool) -> String {
    let mut o = format!(
        "{:<12} {:>6} {:>6}  {:>12}  {:>12}  {:>14}\n",
        "Partition", "Tasks", "Nodes", "StartOffset", "Duration", "StartDate"
    );
    o.push_str(&format!(
        "{:<12} {:>6} {:>6}  {:>12}  {:>12}  {:>14}\n",
        "---------", "-----", "-----", "------------", "------------", "--------------"
    ));
    for w in &view.windows {
        o.push_str(&format!(
            "{:<12} {:>6} {:>6}  {:>12}  {:>12}  {:>14}\n",
            w.partition,
            w.procs,
            w.nodes,
            duration((w.start - view.now).max(0)),
            limit(w.duration),
            short_date(w.start)
        ));
        if verbose && !w.hosts.is_empty() {
            o.push_str(&format!("ReqID=0  HostList={}\n", hostlist(&w.hosts)));
        } else {
            o.push_str("ReqID=0\n");
        }
    }
    o
}

fn hostlist(hosts: &[arches_api::NodeShare]) -> String {
    hosts
        .iter()
        .map(|h| format!("{}:{}", h.node, h.tasks))
        .collect::<Vec<_>>()
        .join(",")
}

/// `showbf --xml`: Moab's `mshow -a --format=xml` shape (showbf is its
/// front end): `<Data><Object>cluster</Object><job User= time=/>`, a
/// `template` partition naming the range attributes, then per partition
/// `<par Name= feasibleNodeCount= feasibleTaskCount=>` with one `<range
/// duration= hostlist= index= nodecount= proccount= reqid= starttime=>` per
/// window (`duration="INFINITY"` when unbounded).
pub fn render_backfill_xml(view: &BackfillView) -> String {
    let mut data = Element::new("Data")
        .child(Element::new("Object").text("cluster"))
        .child(
            Element::new("job")
                .attr("User", &view.user)
                .attr("time", view.now)
                .explicit_close(),
        )
        .child(
            Element::new("par").attr("Name", "template").child(
                Element::new("range")
                    .attr("duration", "Duration")
                    .attr("nodecount", "Nodes")
                    .attr("proccount", "Procs")
                    .attr("starttime", "StartTime")
                    .explicit_close(),
            ),
        );
    for (name, nodes, procs) in &view.partitions {
        let mut par = Element::new("par")
            .attr("Name", name)
            .attr("feasibleNodeCount", nodes)
            .attr("feasibleTaskCount", procs)
            .explicit_close();
        for w in view.windows.iter().filter(|w| &w.partition == name) {
            par.push(
                Element::new("range")
                    .attr(
                        "duration",
                        w.duration
                            .map_or_else(|| "INFINITY".to_string(), |d| d.to_string()),
                    )
                    .attr("hostlist", hostlist(&w.hosts))
                    .attr("index", 0)
                    .attr("nodecount", w.nodes)
                    .attr("proccount", w.procs)
                    .attr("reqid", 0)
                    .attr("starttime", w.start)
                    .explicit_close(),
            );
        }
        data.push(par);
    }
    data.render()
}

/// Which estimate blocks `showstart -e` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Estimates {
    /// Reservation based (the default).
    Rsv,
    /// Priority based.
    Prio,
    /// Historical.
    Hist,
    /// All three.
    All,
}

/// `showstart` text (moab-formats.md §6.3): per method a start line and a
/// completion line (`%-40s %11s on <date>`), or why that method has no
/// estimate; a running job's estimates are its real start (offset
/// `00:00:00`, completion = start + wall-clock limit). Without a wall-clock
/// limit the completion is `INFINITY`.
pub fn render_start(e: &StartEstimate, which: Estimates) -> String {
    let mut o = format!(
        "job {} requires {} proc{} for {}\n\n",
        e.job,
        e.procs,
        plural(e.procs as usize),
        limit(e.walltime)
    );
    let methods: &[&str] = match which {
        Estimates::Rsv => &["Rsv"],
        Estimates::Prio => &["Priority"],
        Estimates::Hist => &["Historical"],
        Estimates::All => &["Rsv", "Priority", "Historical"],
    };
    for m in methods {
        let (start, note) = match *m {
            "Rsv" => (e.start, e.note.as_deref()),
            "Priority" => (e.priority_start, e.priority_note.as_deref()),
            _ => (e.historical_start, e.historical_note.as_deref()),
        };
        let Some(s) = start else {
            o.push_str(&format!(
                "Estimated {m} based start cannot be determined: {}\n\n",
                note.unwrap_or("no estimate")
            ));
            continue;
        };
        o.push_str(&format!(
            "{:<40} {:>11} on {}\n",
            format!("Estimated {m} based start in"),
            duration((s - e.now).max(0)),
            date(s)
        ));
        let label = format!("Estimated {m} based completion in");
        match e.walltime {
            Some(w) => o.push_str(&format!(
                "{label:<40} {:>11} on {}\n\n",
                duration((s + w - e.now).max(0)),
                date(s + w)
            )),
            None => o.push_str(&format!("{label:<40} {:>11}\n\n", "INFINITY")),
        }
    }
    o.push_str(&format!("Best Partition: {}\n", e.partition));
    if e.running {
        o.push_str("\n\nNOTE:  job is running\n");
    } else if let Some(n) = e.note.as_ref().filter(|_| e.start.is_some()) {
        o.push_str(&format!("\n{n}\n"));
    }
    o
}

/// `showstart --format=xml`.
pub fn render_start_xml(e: &StartEstimate) -> String {
    let mut job = Element::new("job")
        .attr("JobID", &e.job)
        .attr("ReqProcs", e.procs)
        .attr("now", e.now)
        .attr("StartTime", e.start.unwrap_or(0))
        .attr("Partition", &e.partition);
    if let Some(w) = e.walltime {
        job = job.attr("ReqAWDuration", w);
        if let Some(s) = e.start {
            job = job.attr("CompletionTime", s + w);
        }
    }
    Element::new("Data").child(job).render()
}

/// `showres` (plain): one row per reservation.
pub fn render_reservations(view: &ReservationsView, verbose: bool) -> String {
    let mut o = format!(
        "{:<18} {:>5} {:>1} {:>11} {:>11} {:>11} {:>9} {}\n\n",
        "ReservationID", "Type", "S", "Start", "End", "Duration", "   N/P   ", "StartTime"
    );
    for r in &view.reservations {
        let state = match (&r.job_state, r.kind.as_str()) {
            (Some(s), "Job") => s.chars().next().unwrap_or('-'),
            _ => '-',
        };
        let when = if verbose {
            date_with_year(r.start)
        } else {
            date(r.start)
        };
        o.push_str(&format!(
            "{:<18} {:>5} {} {:>11} {:>11} {:>11} {:>4}/{:<4} {}\n",
            r.id,
            r.kind,
            state,
            duration(r.start - view.now),
            r.end
                .map_or("INFINITY".to_string(), |e| duration(e - view.now)),
            r.end
                .map_or("INFINITY".to_string(), |e| duration(e - r.start)),
            r.nodes.len(),
            r.procs,
            when
        ));
    }
    let n = view.reservations.len();
    o.push_str(&format!("\n{n} reservation{} located\n", plural(n)));
    o
}

/// `showres -n`: one row per (node, reservation).
pub fn render_reserved_nodes(view: &ReservationsView) -> String {
    let mut o = format!("reservations on {}\n\n", date(view.now));
    o.push_str(&format!(
        "{:<16}{:>4} {:>18} {:>10} {:>4} {:>11} {:>11}  {}\n\n",
        "NodeName", "Type", "ReservationID", "JobState", "Task", "Start", "Duration", "StartTime"
    ));
    let mut rows: Vec<(&str, &arches_api::ReservationInfo, u32)> = Vec::new();
    for r in &view.reservations {
        for n in &r.nodes {
            rows.push((n.node.as_str(), r, n.tasks));
        }
    }
    rows.sort_by(|a, b| a.0.cmp(b.0).then(a.1.start.cmp(&b.1.start)));
    let mut nodes: Vec<&str> = rows.iter().map(|r| r.0).collect();
    nodes.dedup();
    for (node, r, tasks) in &rows {
        o.push_str(&format!(
            "{:<16}{:>4} {:>18} {:>10} {:>4} {:>11} {:>11}  {}\n",
            node,
            r.kind,
            r.id,
            r.job_state.as_deref().unwrap_or("-"),
            tasks,
            duration(r.start - view.now),
            r.end
                .map_or("INFINITY".to_string(), |e| duration(e - r.start)),
            date(r.start)
        ));
    }
    o.push_str(&format!(
        "\n{} node{} reserved\n",
        nodes.len(),
        plural(nodes.len())
    ));
    o
}

/// Processors of each node not dedicated to a job nor reserved now.
fn free_rows(n: &arches_api::NodesView, v: &ReservationsView) -> Vec<(String, u32, u32, u64)> {
    n.nodes
        .iter()
        .map(|node| {
            let reserved: u32 = v
                .reservations
                .iter()
                .filter(|r| r.kind != "Job" && r.start <= v.now && r.end.is_none_or(|e| e > v.now))
                .flat_map(|r| r.nodes.iter().filter(|s| s.node == node.name))
                .map(|s| s.tasks)
                .sum();
            let free = node
                .procs
                .saturating_sub(node.procs_used)
                .saturating_sub(reserved);
            (
                node.name.clone(),
                free,
                node.procs,
                node.mem_mb.saturating_sub(node.mem_used_mb),
            )
        })
        .collect()
}

/// `showres -f`: free (unreserved, undedicated) resources per node now.
pub fn render_free(n: &arches_api::NodesView, v: &ReservationsView) -> String {
    let mut o = format!("free resources on {}\n\n", date(v.now));
    o.push_str(&format!(
        "{:<16} {:>9} {:>9} {:>10}\n\n",
        "NodeName", "FreeProcs", "Procs", "FreeMem"
    ));
    let rows = free_rows(n, v);
    let mut total = 0;
    for (name, free, procs, mem) in &rows {
        total += free;
        o.push_str(&format!("{name:<16} {free:>9} {procs:>9} {mem:>9}M\n"));
    }
    o.push_str(&format!(
        "\n{total} proc{} free on {} node{}\n",
        if total == 1 { "" } else { "s" },
        rows.len(),
        if rows.len() == 1 { "" } else { "s" }
    ));
    o
}

/// `showres -f --xml`: `<Data><node NODEID= FREEPROCS= RCPROC= FREEMEM=></node>...</Data>`.
pub fn render_free_xml(n: &arches_api::NodesView, v: &ReservationsView) -> String {
    let mut d = super::xml::Element::new("Data");
    for (name, free, procs, mem) in free_rows(n, v) {
        d.push(
            super::xml::Element::new("node")
                .attr("NODEID", name)
                .attr("FREEPROCS", free)
                .attr("RCPROC", procs)
                .attr("FREEMEM", mem)
                .explicit_close(),
        );
    }
    d.render()
}
