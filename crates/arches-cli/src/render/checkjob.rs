//! checkjob: the Moab 7 `MUICheckJob` line order (moab-formats.md §3.3) as far
//! as the API carries the data, `-v` additions, and the job XML shared with
//! `mjobctl -q diag` and `mdiag -j --xml` (§3.5).

use arches_api::{JobDetail, JobsView, NodeShare, Section};

use super::xml::Element;
use crate::fmt::{date, duration, limit};

/// Separator Moab prints between several jobs (`MUICheckJobWrapper`).
pub const SEPARATOR: &str = "\n\n============================\n\n";

/// Scheduler name shown as `SystemID:` (Moab's default `SCHEDCFG` name).
pub const SYSTEM_ID: &str = "Moab";

/// checkjob's message for an id the daemon does not know.
pub fn unknown_job(id: &str) -> String {
    format!("ERROR:  invalid job specified: {id}")
}

/// `checkjob --xml` of an unknown job: Moab's error element (code 700).
pub fn unknown_job_xml(id: &str) -> String {
    super::xml::Element::new("Error")
        .attr("code", 700)
        .text(&format!(
            "server rejected request - invalid job specified: {id}"
        ))
        .render()
}

/// Moab's refusal of another user's job (only its owner and administrators
/// see a job in detail).
pub fn not_authorized(d: &arches_api::Denied) -> String {
    format!(
        "user {} is not authorized to check status of job '{}'",
        d.user, d.job
    )
}

/// Renders every found job, joined by [`SEPARATOR`].
pub fn render(view: &JobsView, verbose: u8) -> String {
    view.jobs
        .iter()
        .map(|j| render_one(j, view.now, verbose))
        .collect::<Vec<_>>()
        .join(SEPARATOR)
}

/// Moab's `Job Array Info` block: the array's name (the job's id), slot
/// limit, with -v every sub-job, then the sub-jobs by state.
fn array_info(name: &str, a: &arches_api::ArrayInfo, verbose: bool) -> String {
    let mut o = format!("Job Array Info:\n  Name: {name}\n");
    if let Some(l) = a.slot_limit {
        o.push_str(&format!("  Slot Limit: {l}\n\n"));
    }
    if verbose {
        for (i, n, st) in &a.members {
            o.push_str(&format!("  {i} : {n} : {st}\n"));
        }
    }
    let pct = |n: u32| {
        if a.count == 0 {
            0.0
        } else {
            f64::from(n) * 100.0 / f64::from(a.count)
        }
    };
    o.push_str(&format!("\n  Sub-jobs:    {:>8}\n", a.count));
    for (label, n) in [
        ("Active:   ", a.active),
        ("Eligible: ", a.eligible),
        ("Blocked:  ", a.blocked),
        ("Completed:", a.completed),
    ] {
        o.push_str(&format!("    {label} {n:>8} ( {:03.1}% )\n", pct(n)));
    }
    o.push('\n');
    o
}

/// One job's report.
pub fn render_one(d: &JobDetail, now: i64, verbose: u8) -> String {
    let s = &d.summary;
    let v = verbose >= 1;
    let mut o = String::new();
    o.push_str(&format!("job {}\n\n", s.jobid()));
    o.push_str(&format!("AName: {}\n", s.name));
    if let Some(info) = d.array_info.as_ref().filter(|_| s.array.is_none() || v) {
        o.push_str(&array_info(&s.jobid(), info, v));
    }
    o.push_str(&format!("State: {} \n", s.state));
    if !d.holds.is_empty() {
        o.push_str(&format!("Holds:    {}\n", d.holds.join(",")));
    }
    if s.section == Section::Completed {
        o.push_str(&format!(
            "Completion Code: {}  Time: {}\n",
            s.exit_code.map_or("-".to_string(), |c| c.to_string()),
            date(s.completion_time.unwrap_or(now))
        ));
    }
    let mut creds = format!("Creds:  user:{}", s.user);
    if s.group != "DEFAULT" {
        creds.push_str(&format!("  group:{}", s.group));
    }
    for (k, val) in [
        ("account", &s.account),
        ("class", &s.class),
        ("qos", &s.qos),
    ] {
        if let Some(x) = val {
            creds.push_str(&format!("  {k}:{x}"));
        }
    }
    o.push_str(&creds);
    o.push('\n');
    let used = match s.start_time {
        Some(st) => (s.completion_time.unwrap_or(now) - st - s.suspended_secs).max(0),
        None => 0,
    };
    o.push_str(&format!(
        "WallTime:   {} of {}\n",
        duration(used),
        limit(d.virtual_walltime.or(s.walltime))
    ));
    if d.virtual_walltime.is_some() {
        // Moab's line for a job backfilled on its scaled limit.
        o.push_str(&format!(
            "Original (Non-Virtual) WCLimit: {}\n",
            limit(s.walltime)
        ));
    }
    if s.suspended_secs > 0 {
        o.push_str(&format!(
            "Suspended Wall Time: {}\n",
            duration(s.suspended_secs)
        ));
    }
    let queued = s.start_time.unwrap_or(now) - s.submit_time;
    o.push_str(&format!("SubmitTime: {}\n", date(s.submit_time)));
    o.push_str(&format!(
        "  (Time Queued  Total: {}  Eligible: {})\n\n",
        duration(queued.max(0)),
        duration(s.eligible_secs)
    ));
    o.push_str(&super::staging::checkjob_lines(d, v));
    if let Some(st) = s.start_time {
        o.push_str(&format!("StartTime: {}\n", date(st)));
    }
    if let Some(sa) = d.start_after.filter(|sa| *sa > now) {
        o.push_str(&format!(
            "StartDate: {}  ({})\n",
            duration(sa - now),
            date(sa)
        ));
    }
    if let Some(dl) = d.deadline.filter(|_| s.section != Section::Completed) {
        o.push_str(&format!(
            "Deadline:  {}  ({})\n",
            duration(dl - now),
            date(dl)
        ));
        if let Some(e) = d.deadline_failed {
            o.push_str(&format!(
                "Deadline Failed:  Expected at '{}' ({})\n",
                date(e),
                duration(e - now)
            ));
        }
    }
    o.push_str(&format!("TemplateSets:  {}\n", template_sets(d)));
    // Moab's MUICheckJob: the statistics templates after the sets.
    if !d.stat_templates.is_empty() {
        o.push_str(&format!("TemplateStats: {}\n", d.stat_templates.join(",")));
    }
    o.push_str(&format!("Total Requested Tasks: {}\n", d.tasks));
    o.push_str(&elastic_lines(s, now));
    if v {
        if let Some(n) = s.nodes {
            o.push_str(&format!("Total Requested Nodes: {n}\n"));
        }
        if !d.depend.is_empty() {
            o.push_str(&format!("Depend:    {}\n", d.depend.join(",")));
        }
    }
    let layout = d.layout.clone().unwrap_or_default();
    if !layout.groups.is_empty() {
        // One req per part of the node specification (Moab's multi-req job).
        for (i, g) in layout.groups.iter().enumerate() {
            o.push_str(&format!(
                "\nReq[{i}]  TaskCount: {}  Partition: {}\n",
                g.count * g.tasks_per_node,
                s.partition.as_deref().unwrap_or("ALL")
            ));
            let mut feats = d.features.clone();
            feats.extend(g.features.iter().cloned());
            if !feats.is_empty() {
                o.push_str(&format!(
                    "Opsys: {}  Arch: {}  Features: {}\n",
                    d.opsys.as_deref().unwrap_or("---"),
                    d.arch.as_deref().unwrap_or("---"),
                    feats.join(",")
                ));
            }
            if !g.gres.is_empty() {
                o.push_str(&format!("GRes: {} (per node)\n", g.gres.join(",")));
            }
            o.push_str(&format!("TasksPerNode: {}  \n", g.tasks_per_node));
            o.push_str(&format!("NodeCount:  {}\n", g.count));
            if let Some(h) = &g.host {
                o.push_str(&format!("Required HostList: [{h}:{}]\n", g.tasks_per_node));
            }
        }
    } else {
        o.push_str(&format!(
            "\nReq[0]  TaskCount: {}  Partition: {}\n",
            d.tasks,
            s.partition.as_deref().unwrap_or("ALL")
        ));
    }
    if !layout.groups.is_empty() {
        // Printed per req above.
    } else if !d.features.is_empty() || d.opsys.is_some() || d.arch.is_some() {
        o.push_str(&format!(
            "Opsys: {}  Arch: {}  Features: {}\n",
            d.opsys.as_deref().unwrap_or("---"),
            d.arch.as_deref().unwrap_or("---"),
            if d.features.is_empty() {
                "---".to_string()
            } else {
                d.features.join(",")
            }
        ));
    }
    if !layout.gres.is_empty() {
        o.push_str(&format!("GRes: {}\n", layout.gres.join(",")));
    }
    let procs_per_task = s.procs.checked_div(d.tasks).unwrap_or(1);
    if d.mem_per_task_mb > 0 || procs_per_task != 1 || verbose >= 2 || !layout.gres.is_empty() {
        let mut line = format!("Dedicated Resources Per Task: PROCS: {procs_per_task}");
        if d.mem_per_task_mb > 0 {
            line.push_str(&format!("  MEM: {}M", d.mem_per_task_mb));
        }
        for g in &layout.gres {
            if let Some((name, n)) = g.split_once(':') {
                line.push_str(&format!("  {name}: {n}"));
            }
        }
        o.push_str(&line);
        o.push('\n');
    }
    if !layout.task_request_list.is_empty() {
        o.push_str(&format!(
            "TaskRequestList: {}\n",
            layout.task_request_list.join(",")
        ));
    }
    if v {
        if let Some(p) = &layout.node_access {
            o.push_str(&format!("NodeAccess: {p}\n"));
        }
        if let Some(tpn) = d.tasks_per_node.filter(|_| layout.groups.is_empty()) {
            o.push_str(&format!("TasksPerNode: {tpn}  \n"));
        }
    }
    if !layout.hosts.is_empty() {
        o.push_str(&format!(
            "Required HostList: {}\n",
            layout
                .hosts
                .iter()
                .map(|h| format!("[{h}]"))
                .collect::<String>()
        ));
    }
    if !d.allocated.is_empty() {
        let per_line = match s.section {
            Section::Completed => 6,
            _ if d.allocated[0].node.len() <= 6 => 8,
            _ => 4,
        };
        o.push_str("\nAllocated Nodes:\n");
        o.push_str(&share_list(&d.allocated, per_line));
        o.push('\n');
    } else if let Some(r) = d.reservation.as_ref().filter(|r| !r.nodes.is_empty()) {
        o.push_str(&format!(
            "\nReserved Nodes:  ({} -> {}  Duration: {})\n",
            duration(r.start - now),
            r.end.map_or("INFINITY".to_string(), |e| duration(e - now)),
            r.end
                .map_or("INFINITY".to_string(), |e| duration(e - r.start)),
        ));
        o.push_str(&share_list(&r.nodes, 6));
    }
    o.push_str("\n\n");
    if let (Some(m), Some(info)) = (&s.array, &d.array_info) {
        o.push_str(&format!("Job Group:        {}\n", m.array));
        o.push_str(&format!("Parent Array ID:  {}\n", m.array));
        o.push_str(&format!("Array Range:      {}\n", info.count));
    }
    o.push_str(&format!("SystemID:   {SYSTEM_ID}\n"));
    o.push_str(&format!("SystemJID:  {}\n", s.jobid()));
    if let Some(ev) = notification_events(d.mail_options.as_deref()) {
        o.push_str(&format!("Notification Events: {ev}\n"));
    }
    if v {
        let nodes: Vec<&str> = if !d.allocated.is_empty() {
            d.allocated.iter().map(|n| n.node.as_str()).collect()
        } else {
            d.reservation
                .iter()
                .flat_map(|r| r.nodes.iter().map(|n| n.node.as_str()))
                .collect()
        };
        if !nodes.is_empty() {
            let mut list = nodes.iter().take(11).copied().collect::<Vec<_>>().join(",");
            if nodes.len() > 11 {
                list.push_str(",...");
            }
            o.push_str(&format!("Task Distribution: {list}\n"));
        }
    }
    o.push('\n');
    if v {
        if let Some(sh) = &d.shell {
            o.push_str(&format!("Shell:          {sh}\n"));
        }
    }
    if !d.iwd.is_empty() {
        o.push_str(&format!("IWD:            {}\n", d.iwd));
    }
    if !d.submit_dir.is_empty() {
        o.push_str(&format!("SubmitDir:      {}\n", d.submit_dir));
    }
    if let Some(m) = d.umask.filter(|_| v) {
        o.push_str(&format!("UMask:          {m:04o} \n"));
    }
    // One line only: for scripts read from stdin the daemon may send the text.
    if let Some(exe) = d.executable.lines().find(|l| !l.trim().is_empty()) {
        o.push_str(&format!("Executable:     {exe}\n"));
        if !d.args.is_empty() {
            o.push_str(&format!("Arguments:    {}\n", d.args.join(" ")));
        }
        o.push('\n');
    }
    if v {
        o.push_str(&format!("OutputFile:     {}\n", d.output_file));
        if !d.join {
            o.push_str(&format!("ErrorFile:      {}\n", d.error_file));
        } else {
            o.push_str("NOTE:  stdout/stderr will be merged\n");
        }
    }
    if d.start_count != 0 {
        o.push_str(&format!("StartCount:     {}\n", d.start_count));
    }
    if d.bypass_count != 0 {
        o.push_str(&format!("BypassCount:    {}\n", d.bypass_count));
    }
    if s.section == Section::Completed {
        if let Some(p) = &s.partition {
            o.push_str(&format!("Execution Partition:  {p}\n"));
        }
    } else if let Some(p) = s.partition.as_ref().filter(|p| v || p.as_str() != "ALL") {
        o.push_str(&format!("Partition List: {p}\n"));
    }
    if v && !d.submit_args.is_empty() {
        o.push_str(&format!("Submit Args:    {}\n", d.submit_args));
    }
    if !d.flags.is_empty() {
        o.push_str(&format!("Flags:          {}\n", d.flags.join(",")));
    }
    if !d.class_limits.is_empty() {
        o.push_str(&format!(
            "NOTE:  class '{}' limits: {}\n",
            s.class.as_deref().unwrap_or(""),
            d.class_limits.join("  ")
        ));
    }
    o.push_str(&format!("StartPriority:  {}\n", s.priority));
    if let Some(r) = s.rank {
        o.push_str(&format!("IterationJobRank: {r}\n"));
    }
    if verbose >= 2 && !d.priority_weights.is_empty() {
        // Moab (VV): the mdiag -p table for this job.
        o.push_str("Priority Analysis:\n");
        let row = arches_api::JobPriority {
            id: s.id,
            priority: s.priority,
            system: s.system_priority,
            state: s.state.clone(),
            section: s.section,
            components: d.priority_components.clone(),
        };
        o.push_str(&super::mdiag::priority_analysis(&d.priority_weights, &row));
    }
    if v {
        o.push_str(&format!("PE:             {:.2}\n", s.procs as f64));
    }
    if let Some(r) = &d.reservation {
        o.push_str(&format!(
            "Reservation '{}' ({} -> {}  Duration: {})\n",
            s.jobid(),
            duration(r.start - now),
            r.end.map_or("INFINITY".to_string(), |e| duration(e - now)),
            r.end
                .map_or("INFINITY".to_string(), |e| duration(e - r.start)),
        ));
    }
    if let Some(b) = &s.block_reason {
        match s.section {
            // Eligibility diagnosis of an idle job (MJobDiagnoseState).
            Section::Eligible => {
                let p = s.partition.as_deref().unwrap_or("ALL");
                o.push_str(&format!("NOTE:  job cannot run in partition {p} ({b})\n"));
            }
            Section::Blocked if s.state != "Deferred" => o.push_str(&format!(
                "BLOCK MSG: {b} (recorded at last scheduling iteration)\n"
            )),
            _ => {}
        }
    }
    if let Some(size) = d.chunk_size.filter(|_| v) {
        o.push_str(&format!(
            "\n  WARNING: job may be blocked by backfill chunking ({} < {size} )\n",
            s.procs
        ));
    }
    for m in &d.messages {
        o.push_str(m);
        o.push('\n');
    }
    for p in &d.preemption {
        o.push_str(&format!("NOTE:  {p}\n"));
    }
    o.push('\n');
    o
}

/// A malleable or resizable job's range, pending resize request and why
/// it did not grow (Arches lines; none for a rigid job).
pub fn elastic_lines(s: &arches_api::JobSummary, now: i64) -> String {
    let Some(e) = &s.elastic else {
        return String::new();
    };
    let mut o = format!(
        "Processor Range: {}-{}  (current: {}  growth ceiling: {})\n",
        e.min, e.max, s.procs, e.cap
    );
    if let Some(n) = e.request {
        o.push_str(&format!(
            "Resize Request:  +{n} procs pending for {}",
            duration((now - e.request_since.unwrap_or(now)).max(0))
        ));
        match &e.waits {
            Some(w) => o.push_str(&format!("  (waits: {w})\n")),
            None => o.push('\n'),
        }
    }
    if let Some(g) = &e.growth {
        o.push_str(&format!("NOTE:  job did not grow: {g}\n"));
    }
    o
}

/// The job templates that applied (`DEFAULT` when none did).
pub fn template_sets(d: &JobDetail) -> String {
    if d.templates.is_empty() {
        "DEFAULT".to_string()
    } else {
        d.templates.join(",")
    }
}

fn share_list(nodes: &[NodeShare], per_line: usize) -> String {
    nodes
        .chunks(per_line)
        .map(|c| {
            c.iter()
                .map(|n| format!("[{}:{}]", n.node, n.tasks))
                .collect::<String>()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// `-m` letters as Moab's notification event names (`a` JobFail, `b`
/// JobStart, `e` JobEnd); Moab's default is `JobFail`; `n` means none.
fn notification_events(opts: Option<&str>) -> Option<String> {
    let opts = opts.unwrap_or("a");
    if opts == "n" {
        return None;
    }
    let mut ev = Vec::new();
    for (c, name) in [('b', "JobStart"), ('e', "JobEnd"), ('a', "JobFail")] {
        if opts.contains(c) {
            ev.push(name);
        }
    }
    if ev.is_empty() {
        None
    } else {
        Some(ev.join(","))
    }
}

/// The `<job>` element of `checkjob --xml`, `mjobctl -q diag --xml` and
/// `mdiag -j --xml`.
pub fn job_element(d: &JobDetail, now: i64, verbose: bool) -> Element {
    let s = &d.summary;
    let queue_status = match s.section {
        Section::Active => "active",
        Section::Eligible => "eligible",
        Section::Blocked => "blocked",
        Section::Completed => "completed",
    };
    let end = s.completion_time.unwrap_or(now);
    let aw = s.start_time.map(|st| (end - st - s.suspended_secs).max(0));
    let mut e = Element::new("job")
        .attr_opt("Account", s.account.as_ref())
        .attr_opt("AWDuration", aw)
        .attr_opt("BlockReason", s.block_reason.as_ref())
        .attr("Bypass", d.bypass_count)
        .attr_opt("Class", s.class.as_ref())
        .attr_opt(
            "CmdFile",
            (!d.executable.is_empty()).then_some(&d.executable),
        )
        .attr("DRMJID", s.jobid())
        .attr("EEDuration", s.eligible_secs)
        .attr("EFile", &d.error_file)
        .attr("EState", &s.state)
        .attr_opt("Flags", (!d.flags.is_empty()).then(|| d.flags.join(",")))
        .attr("GJID", s.jobid())
        .attr("Group", &s.group)
        .attr_opt("Hold", (!d.holds.is_empty()).then(|| d.holds.join(",")))
        .attr("IWD", &d.iwd)
        .attr("JobID", s.jobid())
        .attr("JobName", &s.name)
        .attr("OFile", &d.output_file)
        .attr_opt("PAL", s.partition.as_ref())
        .attr_opt("QOS", s.qos.as_ref())
        .attr("QueueStatus", queue_status)
        .attr_opt("ReqAWDuration", s.walltime)
        .attr_opt("ReqNodes", s.nodes)
        .attr("ReqProcs", s.procs)
        .attr("RM", "local")
        .attr("SRMJID", s.jobid())
        .attr("StartCount", d.start_count)
        .attr("StartPriority", s.priority)
        .attr("StartTime", s.start_time.unwrap_or(0))
        .attr("State", &s.state)
        .attr("SubmissionTime", s.submit_time)
        .attr("SuspendDuration", s.suspended_secs)
        .attr("TemplateSetList", template_sets(d))
        .attr("User", &s.user)
        .attr("UserPrio", d.user_priority);
    if let Some(r) = s.rank {
        e = e.attr("JobRank", r);
    }
    if let Some(l) = &d.layout {
        if !l.hosts.is_empty() {
            e = e.attr("HostList", l.hosts.join(","));
        }
        if let Some(r) = l.advres.as_ref().filter(|r| !r.is_empty()) {
            e = e.attr("ReqReservation", r);
        }
    }
    if let Some(a) = aw {
        e = e.attr("StatPSDed", format!("{:.3}", a as f64 * s.procs as f64));
    }
    if s.section == Section::Completed {
        e = e
            .attr("CompletionCode", super::showq::completion_code(s, false))
            .attr("CompletionTime", end);
    }
    if verbose {
        e = e
            .attr_opt("Depend", (!d.depend.is_empty()).then(|| d.depend.join(",")))
            .attr_opt("Shell", d.shell.as_ref())
            .attr("SubmitArgs", &d.submit_args)
            .attr("SubmitHost", &d.submit_host);
    }
    let procs_per_task = s.procs.checked_div(d.tasks).unwrap_or(1);
    let mut req = Element::new("req")
        .attr("NCReqMin", s.nodes.unwrap_or(1))
        .attr_opt("ReqArch", d.arch.as_ref())
        .attr_opt("ReqOpsys", d.opsys.as_ref())
        .attr("ReqNodeMem", ">=0")
        .attr("ReqNodeProc", ">=0")
        .attr("ReqNodeSwap", ">=0")
        .attr("ReqPartition", s.partition.as_deref().unwrap_or("ALL"))
        .attr("ReqProcPerTask", procs_per_task)
        .attr("TCReqMin", d.tasks);
    if d.mem_per_task_mb > 0 {
        req = req.attr("ReqMemPerTask", d.mem_per_task_mb);
    }
    if !d.features.is_empty() {
        req = req.attr("ReqNodeFeature", format!("[{}]", d.features.join("][")));
    }
    if let Some(t) = d.tasks_per_node {
        req = req.attr("TPN", t);
    }
    if let Some(l) = &d.layout {
        if !l.gres.is_empty() {
            req = req.attr("GRes", l.gres.join(","));
        }
        if let Some(p) = &l.node_access {
            req = req.attr("NodeAccess", p);
        }
    }
    if !d.allocated.is_empty() {
        req = req.attr(
            "AllocNodeList",
            d.allocated
                .iter()
                .map(|n| n.node.as_str())
                .collect::<Vec<_>>()
                .join(","),
        );
        if let Some(p) = &s.partition {
            req = req.attr("AllocPartition", p);
        }
    }
    e.child(req).child(Element::new("tx"))
}

/// `<Data>` with one `<job>` per found job.
pub fn render_xml(view: &JobsView, verbose: bool) -> String {
    let mut data = Element::new("Data");
    for j in &view.jobs {
        data.push(job_element(j, view.now, verbose));
    }
    data.render()
}
