//! showq: default three-section report, `-r`, `-i`, `-c`, `-b` and `--xml`
//! (Moab 6–9 shapes, moab-formats.md §2).

use arches_api::{JobSummary, QueueView, Section};

use super::xml::Element;
use crate::fmt::{date, duration, limit, plural};

/// Which report to print.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Active, eligible and blocked sections.
    Default,
    /// `-r`: active jobs in detail.
    Running,
    /// `-i`: eligible jobs in detail.
    Idle,
    /// `-c`: completed jobs.
    Completed,
    /// `-b`: blocked jobs only.
    Blocked,
}

impl Mode {
    /// Whether a job of `section` belongs to this view (the sections its
    /// text shows; `--format=json` keeps the same jobs).
    pub fn shows(self, section: Section) -> bool {
        match self {
            Mode::Default => section != Section::Completed,
            Mode::Running => section == Section::Active,
            Mode::Idle => section == Section::Eligible,
            Mode::Completed => section == Section::Completed,
            Mode::Blocked => section == Section::Blocked,
        }
    }
}

/// Job filters (`-w`, `-u`); every set field must match. (`-p` and
/// `-w partition=` are the daemon's: it knows which partitions a queued job
/// may run in; `partition` here is only the `-w` value passed on.)
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Filter {
    pub user: Option<String>,
    pub group: Option<String>,
    pub account: Option<String>,
    pub class: Option<String>,
    pub qos: Option<String>,
    pub partition: Option<String>,
}

impl Filter {
    /// Adds one `-w` constraint (`user=x`, `acct=y`, also `class:z`);
    /// `rsv=ID` is returned for the caller (it needs the reservations).
    /// Moab's `MUIQueueShow` takes user, group, acct, class, qos, rsv and
    /// partition; anything else is `invalid object type`.
    pub fn add_constraint(&mut self, c: &str) -> Result<Option<String>, String> {
        let (k, v) = c
            .split_once('=')
            .or_else(|| c.split_once(':'))
            .ok_or_else(|| {
                format!("ERROR:    invalid constraint '{c}' (expected <attr>=<value>)")
            })?;
        let val = Some(v.to_string());
        match k.to_ascii_lowercase().as_str() {
            "user" => self.user = val,
            "group" => self.group = val,
            "acct" | "account" => self.account = val,
            "class" | "queue" => self.class = val,
            "qos" => self.qos = val,
            "partition" | "par" => self.partition = val,
            "rsv" => return Ok(Some(v.trim_end_matches('=').to_string())),
            _ => return Err(format!("ERROR:    invalid object type {k} specified")),
        }
        Ok(None)
    }

    /// The credentials the filter names, as `(kind, Moab object name,
    /// value)`: each must exist (Moab: `cannot locate <obj> <name> in
    /// Moab's historical data`).
    pub fn credentials(&self) -> Vec<(&'static str, &'static str, &str)> {
        [
            ("user", "user", &self.user),
            ("group", "group", &self.group),
            ("account", "acct", &self.account),
            ("class", "class", &self.class),
            ("qos", "qos", &self.qos),
        ]
        .into_iter()
        .filter_map(|(k, o, v)| v.as_deref().map(|v| (k, o, v)))
        .collect()
    }

    /// Whether a job passes every constraint.
    pub fn matches(&self, j: &JobSummary) -> bool {
        fn eq(want: &Option<String>, have: Option<&str>) -> bool {
            want.as_deref().is_none_or(|w| Some(w) == have)
        }
        eq(&self.user, Some(&j.user))
            && eq(&self.group, Some(&j.group))
            && eq(&self.account, j.account.as_deref())
            && eq(&self.class, j.class.as_deref())
            && eq(&self.qos, j.qos.as_deref())
    }
}

/// How rows are shown (`-n`, `-v`, `-o`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Display {
    /// `-n`: job names under JOBID.
    pub names: bool,
    /// `-v`: `<id>/<full id>` under JOBID, a PAR column in the three-section
    /// report, the reservation start with `-i`, DRMJID on every XML job.
    pub verbose: bool,
    /// `-o`: active jobs in the order they started (earliest first)
    /// instead of earliest completion first.
    pub start_order: bool,
}

/// Moab's error for a partition that does not exist.
pub const UNKNOWN_PARTITION: &str = "ERROR:    unknown partition specified";

const ACTIVE_BANNER: &str = "active jobs------------------------";
const ELIGIBLE_BANNER: &str = "eligible jobs----------------------";
const BLOCKED_BANNER: &str = "blocked jobs-----------------------";
const COMPLETED_BANNER: &str = "completed jobs---------------------";

/// Renders the text report.
pub fn render(view: &QueueView, filter: &Filter, mode: Mode) -> String {
    render_with(view, filter, mode, Display::default())
}

/// Renders the text report with `-n`/`-v`/`-o`; Moab's notes follow it.
pub fn render_with(view: &QueueView, filter: &Filter, mode: Mode, d: Display) -> String {
    let jobs: Vec<&JobSummary> = view.jobs.iter().filter(|j| filter.matches(j)).collect();
    let of = |s: Section| -> Vec<&JobSummary> {
        let mut v: Vec<&JobSummary> = jobs.iter().copied().filter(|j| j.section == s).collect();
        if s == Section::Active && d.start_order {
            v.sort_by_key(|j| (j.start_time, j.id));
        }
        v
    };
    let ids = Ids {
        d,
        scheduler: &view.scheduler,
    };
    let mut out = String::from("\n");
    match mode {
        Mode::Default => {
            let (a, e, b) = (
                of(Section::Active),
                of(Section::Eligible),
                of(Section::Blocked),
            );
            active_plain(&mut out, view, &a, &ids);
            out.push('\n');
            queued_plain(&mut out, ELIGIBLE_BANNER, "eligible", &e, &ids);
            out.push('\n');
            queued_plain(&mut out, BLOCKED_BANNER, "blocked", &b, &ids);
            out.push('\n');
            total(
                &mut out,
                a.len() + super::arrays::total(&e) + super::arrays::total(&b),
            );
        }
        Mode::Blocked => {
            let b = of(Section::Blocked);
            queued_plain(&mut out, BLOCKED_BANNER, "blocked", &b, &ids);
            out.push('\n');
            total(&mut out, super::arrays::total(&b));
        }
        Mode::Running => {
            let a = of(Section::Active);
            out.push_str(ACTIVE_BANNER);
            out.push('\n');
            out.push_str("JOBID               S  PAR  EFFIC  XFACTOR  Q  USERNAME    GROUP            MHOST PROCS   REMAINING            STARTTIME\n\n");
            for j in &a {
                let start = j.start_time.unwrap_or(view.now);
                out.push_str(&format!(
                    "{:<19} {} {:>4} {:>6} {:>8.1} {:>2} {:>9} {:>8} {:>16} {:>5} {:>11}  {:>19}\n",
                    ids.marked(j),
                    state_letter(j),
                    par3(j),
                    "------",
                    xfactor(j, start),
                    q2(j),
                    j.user,
                    j.group,
                    j.master_host.as_deref().unwrap_or("-"),
                    procs_text(j),
                    remaining(j, view.now),
                    date(start)
                ));
            }
            out.push('\n');
            summary(&mut out, view, a.len());
            out.push('\n');
            total(&mut out, a.len());
        }
        Mode::Idle => {
            let e = of(Section::Eligible);
            out.push_str(ELIGIBLE_BANNER);
            out.push('\n');
            out.push_str("JOBID                 PRIORITY  XFACTOR  Q  USERNAME    GROUP  PROCS     WCLIMIT     CLASS      SYSTEMQUEUETIME");
            if d.verbose {
                out.push_str("         RSVSTARTTIME");
            }
            out.push_str("\n\n");
            for j in &e {
                let id = if j.reservation_start.is_some() {
                    format!("{}*", ids.id(j))
                } else {
                    ids.id(j)
                };
                out.push_str(&format!(
                    "{:<19} {:>10} {:>8.1} {:>2} {:>9} {:>8} {:>6} {:>11} {:>9}  {:>20}",
                    id,
                    j.priority,
                    xfactor(j, view.now),
                    q2(j),
                    j.user,
                    j.group,
                    procs_text(j),
                    limit(j.walltime),
                    j.class.as_deref().unwrap_or("-"),
                    date(view.now - j.eligible_secs)
                ));
                if d.verbose {
                    let rsv = j.reservation_start.map_or("-".to_string(), date);
                    out.push_str(&format!("  {rsv:>19}"));
                }
                out.push('\n');
            }
            out.push('\n');
            let n = super::arrays::total(&e);
            out.push_str(&format!("{n} eligible job{}   \n", plural(n)));
            out.push('\n');
            total(&mut out, n);
        }
        Mode::Completed => {
            let c = of(Section::Completed);
            out.push_str(COMPLETED_BANNER);
            out.push('\n');
            out.push_str("JOBID               S CCODE         PAR  EFFIC  XFACTOR  Q  USERNAME    GROUP            MHOST PROCS    WALLTIME        COMPLETIONTIME\n\n");
            for j in &c {
                let end = j.completion_time.unwrap_or(view.now);
                let (wall, xf) = match j.start_time {
                    Some(s) => ((end - s).max(0), xfactor(j, s)),
                    None => (0, 0.0),
                };
                out.push_str(&format!(
                    "{:<19} {} {:<11} {:>5} {:>6} {:>8.1} {:>2} {:>9} {:>8} {:>16} {:>5} {:>11}  {:>20}\n",
                    ids.id(j),
                    state_letter(j),
                    completion_code(j, true),
                    if j.start_time.is_some() { par3(j) } else { "-".to_string() },
                    effic(j, wall),
                    xf,
                    q2(j),
                    j.user,
                    j.group,
                    j.master_host.as_deref().unwrap_or("-"),
                    j.procs,
                    duration(wall),
                    date(end)
                ));
            }
            out.push('\n');
            out.push_str(&format!(
                "{} completed job{}   (purgetime: {})\n",
                c.len(),
                plural(c.len()),
                duration(view.purge_secs)
            ));
            out.push('\n');
            total(&mut out, c.len());
        }
    }
    for n in &view.notes {
        out.push('\n');
        out.push_str(n);
        out.push('\n');
    }
    out
}

/// A completed job's EFFIC: processor time its processes used over the
/// processor time dedicated to it (processors × run time, suspension
/// excluded), in percent; `------` when its use was not measured.
fn effic(j: &JobSummary, wall: i64) -> String {
    let dedicated = f64::from(j.procs) * (wall - j.suspended_secs).max(0) as f64;
    match j.cpu_ms {
        Some(ms) if dedicated > 0.0 => format!("{:.2}", 100.0 * ms as f64 / 1000.0 / dedicated),
        _ => "------".to_string(),
    }
}

/// What the JOBID column shows.
struct Ids<'a> {
    d: Display,
    scheduler: &'a str,
}

impl Ids<'_> {
    /// `-n`: the name; `-v`: `<id>/<scheduler>.<id>` (local and full id:
    /// Arches' resource managers run jobs under their Arches ids); else the id.
    fn id(&self, j: &JobSummary) -> String {
        if self.d.names {
            j.name.clone()
        } else if self.d.verbose {
            format!("{}/{}.{}", j.jobid(), self.scheduler, j.jobid())
        } else {
            j.jobid()
        }
    }

    /// [`Ids::id`] plus the active-section marker.
    fn marked(&self, j: &JobSummary) -> String {
        format!("{}{}", self.id(j), marker(j))
    }
}

fn active_plain(out: &mut String, view: &QueueView, a: &[&JobSummary], ids: &Ids) {
    out.push_str(ACTIVE_BANNER);
    out.push('\n');
    header(out, ids.d.verbose, "REMAINING", "STARTTIME");
    for j in a {
        out.push_str(&row(
            &ids.marked(j),
            j,
            &remaining(j, view.now),
            j.start_time.unwrap_or(view.now),
            ids.d.verbose,
        ));
    }
    out.push('\n');
    summary(out, view, a.len());
}

fn header(out: &mut String, verbose: bool, time: &str, when: &str) {
    if verbose {
        out.push_str(&format!(
            "{:<18} {:>8} {:>10} {:>5} {:>5} {:>11} {:>20}\n\n",
            "JOBID", "USERNAME", "STATE", "PAR", "PROCS", time, when
        ));
    } else {
        out.push_str(&format!(
            "{:<18} {:>8} {:>10} {:>5} {:>11} {:>20}\n\n",
            "JOBID", "USERNAME", "STATE", "PROCS", time, when
        ));
    }
}

fn queued_plain(out: &mut String, banner: &str, word: &str, jobs: &[&JobSummary], ids: &Ids) {
    out.push_str(banner);
    out.push('\n');
    header(out, ids.d.verbose, "WCLIMIT", "QUEUETIME");
    for j in jobs {
        out.push_str(&row(
            &ids.id(j),
            j,
            &limit(j.walltime),
            j.submit_time,
            ids.d.verbose,
        ));
    }
    out.push('\n');
    let n = super::arrays::total(jobs);
    out.push_str(&format!("{n} {word} job{}   \n", plural(n)));
}

/// The PROCS column: a malleable job's range (`2-8` queued, `4/8` running:
/// its current processors of its maximum), else the processor count.
pub fn procs_text(j: &JobSummary) -> String {
    match &j.elastic {
        Some(e) if j.section == Section::Active => format!("{}/{}", j.procs, e.max),
        Some(e) if j.section != Section::Completed => format!("{}-{}", e.min, e.max),
        _ => j.procs.to_string(),
    }
}

fn row(id: &str, j: &JobSummary, time: &str, when: i64, verbose: bool) -> String {
    if verbose {
        return format!(
            "{:<18} {:>8} {:>10} {:>5} {:>5} {:>11}  {:>19}\n",
            id,
            j.user,
            j.state,
            j.partition.as_deref().unwrap_or("-"),
            procs_text(j),
            time,
            date(when)
        );
    }
    format!(
        "{:<18} {:>8} {:>10} {:>5} {:>11}  {:>19}\n",
        id,
        j.user,
        j.state,
        procs_text(j),
        time,
        date(when)
    )
}

fn summary(out: &mut String, view: &QueueView, n: usize) {
    let c = &view.cluster;
    out.push_str(&format!(
        "{:<21} {:>12} processors in use by local jobs ({:.2}%)\n",
        format!("{n} active job{}", plural(n)),
        format!("{} of {}", c.alloc_procs, c.up_procs),
        percent(c.alloc_procs, c.up_procs)
    ));
    out.push_str(&format!(
        "{:>21} {:>12} nodes active      ({:.2}%)\n",
        "",
        format!("{} of {}", c.active_nodes, c.up_nodes),
        percent(c.active_nodes, c.up_nodes)
    ));
}

fn total(out: &mut String, n: usize) {
    if n == 1 {
        out.push_str("Total job:  1\n");
    } else {
        out.push_str(&format!("Total jobs:  {n}\n"));
    }
}

fn percent(part: u32, whole: u32) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 * 100.0 / whole as f64
    }
}

/// The active-section marker: `*` backfilled and preemptible, `+`
/// backfilled, `-` preemptible.
fn marker(j: &JobSummary) -> &'static str {
    match (j.backfilled, j.preemptible) {
        (true, true) => "*",
        (true, false) => "+",
        (false, true) => "-",
        (false, false) => "",
    }
}

/// Wall-clock time left: limit minus the time actually run.
pub fn remaining(j: &JobSummary, now: i64) -> String {
    match (j.walltime, j.start_time) {
        (Some(w), Some(s)) => duration(w - ((now - s) - j.suspended_secs).max(0)),
        (Some(w), None) => duration(w),
        (None, _) => "INFINITY".to_string(),
    }
}

/// `(queue time + limit) / limit`, queue time measured up to `until`.
fn xfactor(j: &JobSummary, until: i64) -> f64 {
    let queued = (until - j.submit_time).max(0) as f64;
    match j.walltime {
        Some(w) if w > 0 => (queued + w as f64) / w as f64,
        _ => 1.0,
    }
}

fn state_letter(j: &JobSummary) -> char {
    j.state.chars().next().unwrap_or('-')
}

fn par3(j: &JobSummary) -> String {
    match &j.partition {
        Some(p) => p.chars().take(3).collect(),
        None => "-".to_string(),
    }
}

fn q2(j: &JobSummary) -> String {
    match &j.qos {
        Some(q) if !q.is_empty() && q != "DEFAULT" => q.chars().take(2).collect(),
        _ => "-".to_string(),
    }
}

/// `0`, `1`, `CNCLD` (XML) or `CNCLD(<code>)` (text) for completed jobs.
pub fn completion_code(j: &JobSummary, with_code: bool) -> String {
    if j.cancelled {
        match (with_code, j.exit_code) {
            (true, Some(c)) => format!("CNCLD({c})"),
            _ => "CNCLD".to_string(),
        }
    } else {
        j.exit_code.map_or("-".to_string(), |c| c.to_string())
    }
}

/// Renders `showq --xml` (or `showq -c --xml`): one line, counts equal to
/// the number of `<job>` children.
pub fn render_xml(view: &QueueView, filter: &Filter, mode: Mode) -> String {
    render_xml_with(view, filter, mode, Display::default())
}

/// [`render_xml`] with `-v` (DRMJID on eligible and blocked jobs too, as
/// Moab's `MUIQueueShow` adds it) and `-o`; Moab's notes are `<comment
/// note="..."/>` children of `<cluster>`.
pub fn render_xml_with(view: &QueueView, filter: &Filter, mode: Mode, d: Display) -> String {
    let c = &view.cluster;
    let cluster = Element::new("cluster")
        .attr("LocalActiveNodes", c.active_nodes)
        .attr("LocalAllocProcs", c.alloc_procs)
        .attr("LocalConfigNodes", c.config_nodes)
        .attr("LocalIdleNodes", c.idle_nodes)
        .attr("LocalIdleProcs", c.idle_procs)
        .attr("LocalUpNodes", c.up_nodes)
        .attr("LocalUpProcs", c.up_procs)
        .attr("RemoteActiveNodes", 0)
        .attr("RemoteAllocProcs", 0)
        .attr("RemoteConfigNodes", 0)
        .attr("RemoteIdleNodes", 0)
        .attr("RemoteIdleProcs", 0)
        .attr("RemoteUpNodes", 0)
        .attr("RemoteUpProcs", 0)
        .attr("time", view.now);
    let mut cluster = cluster;
    for n in &view.notes {
        cluster.push(Element::new("comment").attr("note", n));
    }
    let mut data = Element::new("Data")
        .child(Element::new("Object").text("queue"))
        .child(cluster);
    let sections: &[(Section, &str)] = match mode {
        Mode::Completed => &[(Section::Completed, "completed")],
        Mode::Running => &[(Section::Active, "active")],
        Mode::Idle => &[(Section::Eligible, "eligible")],
        Mode::Blocked => &[(Section::Blocked, "blocked")],
        Mode::Default => &[
            (Section::Active, "active"),
            (Section::Eligible, "eligible"),
            (Section::Blocked, "blocked"),
        ],
    };
    for (s, name) in sections {
        let mut jobs: Vec<&JobSummary> = view
            .jobs
            .iter()
            .filter(|j| j.section == *s && filter.matches(j))
            .collect();
        if *s == Section::Active && d.start_order {
            jobs.sort_by_key(|j| (j.start_time, j.id));
        }
        let mut q = Element::new("queue")
            .attr("count", jobs.len())
            .attr("option", name);
        if *s == Section::Completed {
            q = q.attr("purgetime", view.purge_secs);
        }
        for j in jobs {
            let mut e = job_xml(j, view.now);
            if d.verbose && matches!(j.section, Section::Eligible | Section::Blocked) {
                e = e.attr("DRMJID", j.id);
            }
            q.push(e);
        }
        data.push(q);
    }
    data.render()
}

fn job_xml(j: &JobSummary, now: i64) -> Element {
    let mut e = Element::new("job")
        .attr_opt("Account", j.account.as_ref())
        .attr_opt("Class", j.class.as_ref())
        .attr("EEDuration", j.eligible_secs)
        .attr("GJID", j.jobid())
        .attr("Group", &j.group)
        .attr("JobID", j.jobid())
        .attr("JobName", &j.name)
        .attr_opt("QOS", j.qos.as_ref())
        .attr_opt("ReqAWDuration", j.walltime)
        .attr_opt("ReqNodes", j.nodes)
        .attr("ReqProcs", j.procs)
        .attr("StartPriority", j.priority)
        .attr("StartTime", j.start_time.unwrap_or(0))
        .attr("State", &j.state)
        .attr("SubmissionTime", j.submit_time)
        .attr("SuspendDuration", j.suspended_secs)
        .attr("User", &j.user);
    let ran = |end: i64| -> i64 {
        j.start_time
            .map_or(0, |s| ((end - s) - j.suspended_secs).max(0))
    };
    match j.section {
        Section::Active => {
            let aw = ran(now);
            e = e
                .attr("AWDuration", aw)
                .attr("DRMJID", j.jobid())
                .attr_opt("MasterHost", j.master_host.as_ref())
                .attr_opt("PAL", j.partition.as_ref())
                .attr(
                    "RsvStartTime",
                    j.reservation_start.or(j.start_time).unwrap_or(0),
                )
                .attr("RunPriority", j.priority)
                .attr("StatPSDed", format!("{:.6}", aw as f64 * j.procs as f64));
        }
        Section::Eligible => {}
        Section::Blocked => {
            if let Some(r) = &j.block_reason {
                e = e.attr("BlockReason", r).attr("Description", r);
            }
        }
        Section::Completed => {
            let end = j.completion_time.unwrap_or(now);
            let aw = ran(end);
            e = e
                .attr("CompletionCode", completion_code(j, false))
                .attr("CompletionTime", end)
                .attr("StatPSDed", format!("{:.6}", aw as f64 * j.procs as f64));
            if j.start_time.is_some() {
                e = e
                    .attr("AWDuration", aw)
                    .attr("DRMJID", j.jobid())
                    .attr_opt("MasterHost", j.master_host.as_ref())
                    .attr_opt("PAL", j.partition.as_ref());
            }
        }
    }
    e
}
