//! checknode (Moab 7 `MCheckNode` order, moab-formats.md §4.3), the
//! `mdiag -n` summary table (§8.2) and the shared node XML (§8.3).

use arches_api::{NodeInfo, NodesView};

use super::xml::Element;
use crate::fmt::duration;

/// Memory in Moab's resource-string form: `G` when a whole number of GiB.
fn mem(mb: u64) -> String {
    if mb >= 1024 && mb % 1024 == 0 {
        format!("{}G", mb / 1024)
    } else {
        format!("{mb}M")
    }
}

/// `PROCS: n  MEM: xG`, or `---` when empty.
fn resources(procs: u32, mem_mb: u64) -> String {
    resources_with(procs, mem_mb, &[])
}

/// [`resources`] followed by generic resources (`gpu: 4`, Moab's
/// `MCResToString` form).
fn resources_with(procs: u32, mem_mb: u64, gres: &[(&str, u32)]) -> String {
    let mut parts = Vec::new();
    if procs > 0 {
        parts.push(format!("PROCS: {procs}"));
    }
    if mem_mb > 0 {
        parts.push(format!("MEM: {}", mem(mem_mb)));
    }
    for (name, n) in gres.iter().filter(|g| g.1 > 0) {
        parts.push(format!("{name}: {n}"));
    }
    if parts.is_empty() {
        "---".to_string()
    } else {
        parts.join("  ")
    }
}

fn pct(part: i64, whole: i64) -> f64 {
    if whole <= 0 {
        0.0
    } else {
        part as f64 * 100.0 / whole as f64
    }
}

/// One node's report.
pub fn render_one(n: &NodeInfo, now: i64, verbose: u8) -> String {
    let v = verbose >= 1;
    let mut o = format!("node {}\n\n", n.name);
    o.push_str(&format!(
        "State:  {:>8}  (in current state for {})\n",
        n.state,
        duration(n.state_secs)
    ));
    let cfg: Vec<(&str, u32)> = n
        .gres
        .iter()
        .map(|g| (g.name.as_str(), g.configured))
        .collect();
    let ded: Vec<(&str, u32)> = n.gres.iter().map(|g| (g.name.as_str(), g.used)).collect();
    o.push_str(&format!(
        "Configured Resources: {}\n",
        resources_with(n.procs, n.mem_mb, &cfg)
    ));
    let utilized = if n.load > 0.0 {
        resources(n.load.round() as u32, 0)
    } else {
        "---".to_string()
    };
    o.push_str(&format!("Utilized   Resources: {utilized}\n"));
    o.push_str(&format!(
        "Dedicated  Resources: {}\n",
        resources_with(n.procs_used, n.mem_used_mb, &ded)
    ));
    if verbose >= 2 {
        let free: Vec<(&str, u32)> = n
            .gres
            .iter()
            .map(|g| (g.name.as_str(), g.configured.saturating_sub(g.used)))
            .collect();
        o.push_str(&format!(
            "Not dedicated to jobs: {}\n",
            resources_with(
                n.procs.saturating_sub(n.procs_used),
                n.mem_mb.saturating_sub(n.mem_used_mb),
                &free
            )
        ));
    }
    o.push_str(&format!(
        "Opsys:      {:<8}  Arch:      {:<6}\n",
        n.opsys.as_deref().unwrap_or("---"),
        n.arch.as_deref().unwrap_or("---")
    ));
    o.push_str(&format!(
        "Speed:      {:<6.2}    CPULoad:  {:>6.3}\n",
        1.0, n.load
    ));
    if v {
        o.push_str(&format!("Partition:  {}  Rack/Slot:  ---\n", n.partition));
    }
    if !n.features.is_empty() {
        o.push_str(&format!("Features:   {}\n", n.features.join(",")));
    }
    if v && !n.classes.is_empty() {
        o.push_str(&format!(
            "Classes:    {}\n",
            n.classes
                .iter()
                .map(|c| format!("[{c}]"))
                .collect::<String>()
        ));
    }
    o.push_str(&format!(
        "{:<11.11} TYPE={}\n",
        format!("RM[{}]*:", n.rm),
        n.rm_type
    ));
    if let Some(p) = &n.access_policy {
        o.push_str(&format!("NodeAccessPolicy: {p}\n"));
    }
    if let Some(p) = &n.effective_access_policy {
        o.push_str(&format!("EffNodeAccessPolicy: {p}\n"));
    }
    o.push_str(&format!(
        "\nTotal Time: {}  Up: {} ({:.2}%)  Active: {} ({:.2}%)\n",
        duration(n.total_secs),
        duration(n.up_secs),
        pct(n.up_secs, n.total_secs),
        duration(n.active_secs),
        pct(n.active_secs, n.total_secs)
    ));
    o.push_str("\nReservations:\n");
    if n.reservations.is_empty() {
        o.push_str("  ---\n");
    }
    for r in &n.reservations {
        let kind = match &r.job_state {
            Some(js) if r.kind == "Job" => format!("Job:{js:<7}"),
            _ => r.kind.clone(),
        };
        o.push_str(&format!(
            "  {}x{}  {}  {} -> {} ({})\n",
            r.id,
            r.tasks,
            kind,
            duration(r.start - now),
            r.end.map_or("INFINITY".to_string(), |e| duration(e - now)),
            r.end
                .map_or("INFINITY".to_string(), |e| duration(e - r.start)),
        ));
    }
    if v && !n.jobs.is_empty() {
        o.push_str(&format!(
            "Jobs:        {}\n",
            n.jobs
                .iter()
                .map(|j| j.to_string())
                .collect::<Vec<_>>()
                .join(",")
        ));
    }
    o
}

/// Every node's report, separated by a blank line.
pub fn render(view: &NodesView, verbose: u8) -> String {
    view.nodes
        .iter()
        .map(|n| render_one(n, view.now, verbose))
        .collect::<Vec<_>>()
        .join("\n")
}

/// `AVAIL:CONFIG` of every generic resource (`gpu:2:4`), `-` for none.
fn gres_column(n: &NodeInfo) -> String {
    if n.gres.is_empty() {
        return "-".to_string();
    }
    n.gres
        .iter()
        .map(|g| {
            format!(
                "{}:{}:{}",
                g.name,
                g.configured.saturating_sub(g.used),
                g.configured
            )
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// `mdiag -n`: the compute node summary table (a `GRes` column,
/// `name:AVAIL:CONFIG`, when some node has generic resources).
pub fn render_summary(view: &NodesView) -> String {
    let with_gres = view.nodes.iter().any(|n| !n.gres.is_empty());
    let mut o = String::from("compute node summary\n");
    o.push_str(&format!(
        "{:<20} {:>8} {:>7} {:>11} {:>13}{}\n\n",
        "Name",
        "State",
        "Procs",
        "Memory",
        "Opsys",
        if with_gres { "  GRes" } else { "" }
    ));
    let mut t = Totals::default();
    for n in &view.nodes {
        let (avail_p, avail_m) = t.add(n);
        o.push_str(&format!(
            "{:<20} {:>8} {:>4}:{:<4} {:>6}:{:<6} {:>9}",
            n.name,
            n.state,
            avail_p,
            n.procs,
            avail_m,
            n.mem_mb,
            n.opsys.as_deref().unwrap_or("-")
        ));
        if with_gres {
            o.push_str(&format!("  {}", gres_column(n)));
        }
        o.push('\n');
    }
    o.push_str(&format!(
        "{:<20} {:>8} {:>4}:{:<4} {:>6}:{:<6} {:>9}\n",
        "-----", "---", t.pa, t.pc, t.ma, t.mc, "-----"
    ));
    o.push_str(&t.footer(view.nodes.len()));
    o
}

/// `mdiag -n -v`: the summary with Moab's extra columns, nothing truncated:
/// Name, State, Procs, Memory, Disk, Swap (each `<available>:<configured>`;
/// Arches tracks no disk or swap, so `0:0`), Speed, Opsys, Arch, Par, Load,
/// Rsv (reservations on the node), Classes (`[<class> <avail>:<cfg>]`),
/// Network and Features (`-` when none).
pub fn render_summary_verbose(view: &NodesView) -> String {
    let mut o = String::from("compute node summary\n");
    let header =
        format!(
        "{:<20} {:>8} {:>7} {:>11} {:>13} {:>13} {:>6} {:>8} {:>6} {:>8} {:>6} {:>4} {} {} {}\n\n",
        "Name", "State", "Procs", "Memory", "Disk", "Swap", "Speed", "Opsys", "Arch", "Par", "Load",
        "Rsv", "Classes", "Network", "Features"
    );
    o.push_str(&header);
    let mut t = Totals::default();
    for n in &view.nodes {
        let (avail_p, avail_m) = t.add(n);
        let classes = if n.classes.is_empty() {
            "-".to_string()
        } else {
            n.classes
                .iter()
                .map(|c| format!("[{c} {avail_p}:{}]", n.procs))
                .collect()
        };
        let features = if n.features.is_empty() {
            "-".to_string()
        } else {
            n.features.join(",")
        };
        o.push_str(&format!(
            "{:<20} {:>8} {:>4}:{:<4} {:>6}:{:<6} {:>6}:{:<6} {:>6}:{:<6} {:>6.2} {:>8} {:>6} {:>8} {:>6.2} {:>4} {} {} {}\n",
            n.name,
            n.state,
            avail_p,
            n.procs,
            avail_m,
            n.mem_mb,
            0,
            0,
            0,
            0,
            1.0,
            n.opsys.as_deref().unwrap_or("-"),
            n.arch.as_deref().unwrap_or("-"),
            n.partition,
            n.load,
            n.reservations.len(),
            classes,
            "-",
            features
        ));
    }
    let total = format!(
        "{:<20} {:>8} {:>4}:{:<4} {:>6}:{:<6} {:>6}:{:<6} {:>6}:{:<6}",
        "-----", "---", t.pa, t.pc, t.ma, t.mc, 0, 0, 0, 0
    );
    o.push_str(total.trim_end());
    o.push('\n');
    o.push_str(&t.footer(view.nodes.len()));
    o
}

/// The totals line and node counts of `mdiag -n` (plain and `-v`).
#[derive(Default)]
struct Totals {
    /// Processors available / configured, memory available / configured.
    pa: u64,
    pc: u64,
    ma: u64,
    mc: u64,
    active: usize,
    idle: usize,
    down: usize,
}

impl Totals {
    /// Counts one node; its available processors and memory.
    fn add(&mut self, n: &NodeInfo) -> (u32, u64) {
        let avail_p = n.procs.saturating_sub(n.procs_used);
        let avail_m = n.mem_mb.saturating_sub(n.mem_used_mb);
        self.pa += avail_p as u64;
        self.pc += n.procs as u64;
        self.ma += avail_m;
        self.mc += n.mem_mb;
        match n.state.as_str() {
            "Idle" => self.idle += 1,
            "Down" | "Drained" => self.down += 1,
            _ => self.active += 1,
        }
        (avail_p, avail_m)
    }

    fn footer(&self, nodes: usize) -> String {
        format!(
            "\nTotal Nodes: {nodes}  (Active: {}  Idle: {}  Down: {})\n",
            self.active, self.idle, self.down
        )
    }
}

/// `<node ...></node>` as in `mdiag -n --xml` / `checknode --xml`.
pub fn node_element(n: &NodeInfo) -> Element {
    let classes: String = n.classes.iter().map(|c| format!("[{c}]")).collect();
    let mut e = Element::new("node")
        .attr("AVLCLASS", &classes)
        .attr("CFGCLASS", &classes)
        .attr("LASTUPDATETIME", n.last_update)
        .attr("LOAD", format!("{:.6}", n.load))
        .attr("NODEID", &n.name)
        .attr("NODESTATE", &n.state)
        .attr("PARTITION", &n.partition)
        .attr("RAMEM", n.mem_mb.saturating_sub(n.mem_used_mb))
        .attr("RAPROC", n.procs.saturating_sub(n.procs_used))
        .attr("RCMEM", n.mem_mb)
        .attr("RCPROC", n.procs)
        .attr("RMACCESSLIST", &n.rm)
        .attr("SPEED", format!("{:.6}", 1.0))
        .attr("STATACTIVETIME", n.active_secs)
        .attr("STATMODIFYTIME", n.last_update)
        .attr("STATTOTALTIME", n.total_secs)
        .attr("STATUPTIME", n.up_secs)
        .explicit_close();
    if !n.features.is_empty() {
        e = e.attr("FEATURES", n.features.join(","));
    }
    if let Some(os) = &n.opsys {
        e = e.attr("OS", os).attr("OSLIST", os);
    }
    if let Some(a) = &n.arch {
        e = e.attr("ARCH", a);
    }
    if !n.gres.is_empty() {
        // Configured and available generic resources (`name:count,...`).
        let list = |f: &dyn Fn(&arches_api::NodeGres) -> u32| {
            n.gres
                .iter()
                .map(|g| format!("{}:{}", g.name, f(g)))
                .collect::<Vec<_>>()
                .join(",")
        };
        e = e
            .attr("GRES", list(&|g| g.configured))
            .attr("AGRES", list(&|g| g.configured.saturating_sub(g.used)));
    }
    if let Some(p) = &n.effective_access_policy {
        e = e.attr("NODEACCESSPOLICY", p);
    }
    if !n.jobs.is_empty() {
        e = e.attr(
            "JOBLIST",
            n.jobs
                .iter()
                .map(|j| j.to_string())
                .collect::<Vec<_>>()
                .join(","),
        );
    }
    if !n.reservations.is_empty() {
        e = e.attr("RESCOUNT", n.reservations.len()).attr(
            "RSVLIST",
            n.reservations
                .iter()
                .map(|r| r.id.as_str())
                .collect::<Vec<_>>()
                .join(","),
        );
    }
    e
}

/// `<Data>` with every node.
pub fn render_xml(view: &NodesView) -> String {
    let mut d = Element::new("Data");
    for n in &view.nodes {
        d.push(node_element(n));
    }
    d.render()
}
