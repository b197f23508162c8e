//! Job-centred mdiag reports: `-S` scheduler, `-p` priority (§8.6), `-b`
//! blocked jobs (§8.5), `-j` jobs (§8.4) and the running configuration. Cluster-wide reports are in [`super::cluster`].

use arches_api::{
    ConfigView, FairshareCred, FairshareView, JobPriority, JobsView, PriorityView, QueueView,
    SchedulerView, Section,
};

use super::xml::Element;
use crate::fmt::{date, duration, limit};

/// `mdiag -S`.
pub fn render_scheduler(s: &SchedulerView) -> String {
    let mut o = format!(
        "Moab Server running on {}:{}  (Mode: {})\n",
        s.host, s.socket, s.mode
    );
    o.push_str(&format!(
        "  Started: {}  Uptime: {}  Iterations: {}\n",
        date(s.started),
        duration(s.now - s.started),
        s.iterations
    ));
    o.push_str(&format!(
        "  Iteration Time  Last: {:.2} ms  Avg: {:.2} ms  Max: {:.2} ms\n",
        s.last_iteration_ms, s.avg_iteration_ms, s.max_iteration_ms
    ));
    if s.paused {
        o.push_str("\n  Note:  scheduling is paused (use 'mschedctl -r' to resume)\n");
    }
    for m in &s.messages {
        o.push_str(&format!("\n  Message:  {m}\n"));
    }
    o
}

/// Moab's priority components in display order (`MJobCalcStartPriority`):
/// a column per component with a non-zero weight.
const COMPONENT_ORDER: [&str; 7] = ["Cred", "FS", "Attr", "Serv", "Targ", "Res", "Usage"];

/// `%3.1f` squeezed into five characters (`%5.5s` of it): `100.0`, `  2.7`,
/// `1218.` (large values lose their decimals).
fn squeeze(v: f64) -> String {
    let s = format!("{v:.1}");
    format!("{:>5}", s.chars().take(5).collect::<String>())
}

/// One component column: its label and its weighted subcomponents
/// `(label, component weight, sub weight)`, in the daemon's order.
struct Column<'a> {
    name: &'a str,
    weight: i64,
    subs: Vec<(&'a str, i64)>,
}

/// The columns of the priority table: components with a non-zero weight and
/// at least one non-zero subcomponent weight, in Moab's order.
fn columns(weights: &[(String, String, i64, i64)]) -> Vec<Column<'_>> {
    let mut names: Vec<&str> = weights.iter().map(|w| w.0.as_str()).collect();
    names.dedup();
    names.sort_by_key(|n| {
        COMPONENT_ORDER
            .iter()
            .position(|c| c == n)
            .unwrap_or(COMPONENT_ORDER.len())
    });
    names.dedup();
    names
        .into_iter()
        .filter_map(|name| {
            let of: Vec<&(String, String, i64, i64)> =
                weights.iter().filter(|w| w.0 == name).collect();
            let weight = of.first().map_or(0, |w| w.2);
            let subs: Vec<(&str, i64)> = of
                .iter()
                .filter(|w| w.3 != 0)
                .map(|w| (w.1.as_str(), w.3))
                .collect();
            (weight != 0 && !subs.is_empty()).then_some(Column { name, weight, subs })
        })
        .collect()
}

/// The raw value of a subcomponent of a job (0 when not weighted).
fn raw(j: &JobPriority, comp: &str, sub: &str) -> f64 {
    j.components
        .iter()
        .find(|c| c.component == comp && c.sub == sub)
        .map_or(0.0, |c| c.value)
}

/// What `FSCAP` left of the fairshare component: the ratio of the job's
/// fairshare contributions (capped by the engine, `FSWEIGHT ×
/// clamp(Σ FS<sub>WEIGHT × factor, ±FSCAP)`) to the uncapped weighted
/// factors; 1 for the other components and without a cap, so that the
/// row's percentages add up to the priority the job really has.
fn cap_scale(j: &JobPriority, c: &Column<'_>) -> f64 {
    if c.name != "FS" || c.weight == 0 {
        return 1.0;
    }
    let uncapped: f64 = c
        .subs
        .iter()
        .map(|(s, sw)| c.weight as f64 * *sw as f64 * raw(j, c.name, s))
        .sum();
    let capped: f64 = j
        .components
        .iter()
        .filter(|x| x.component == "FS")
        .map(|x| x.contribution)
        .sum();
    if uncapped == 0.0 {
        1.0
    } else {
        capped / uncapped
    }
}

/// Moab's header and weights lines of the priority table.
fn priority_header(cols: &[Column<'_>]) -> String {
    let mut head = String::new();
    let mut wline = String::new();
    for c in cols {
        let subs: Vec<String> = c.subs.iter().map(|s| format!("{:>5}", s.0)).collect();
        let ws: Vec<String> = c.subs.iter().map(|s| format!("{:>5}", s.1)).collect();
        head.push_str(&format!("{:>6}({})", c.name, subs.join(":")));
        wline.push_str(&format!(" {:>5}({})", c.weight, ws.join(":")));
    }
    format!(
        "{:<20} {:>10}* {head}\n{:>20} {:>10}  {wline}\n\n",
        "Job", "PRIORITY", "Weights", "--------"
    )
}

/// A job's row: each component's share of the job's (absolute) priority,
/// with its subcomponents' raw values. Also returns the job's absolute
/// component factors for the footer.
fn priority_row(cols: &[Column<'_>], j: &JobPriority) -> (String, Vec<f64>, f64) {
    let factors: Vec<f64> = cols
        .iter()
        .map(|c| {
            c.subs
                .iter()
                .map(|(s, sw)| *sw as f64 * raw(j, c.name, s))
                .sum::<f64>()
                * cap_scale(j, c)
        })
        .collect();
    let abs_prio: f64 = cols
        .iter()
        .zip(&factors)
        .map(|(c, f)| (c.weight as f64 * f).abs())
        .sum();
    let mut line = format!(
        "{:<20} {:>10}{} ",
        j.id,
        j.priority,
        if j.system { '*' } else { ' ' }
    );
    for (c, f) in cols.iter().zip(&factors) {
        let pct = if abs_prio != 0.0 {
            (c.weight as f64 * f).abs() / abs_prio * 100.0
        } else {
            0.0
        };
        // Moab prints the fairshare subcomponents weighted (component ×
        // subcomponent weight × factor, signed: a credential over its
        // target shows negative), the others raw.
        let subs: Vec<String> = c
            .subs
            .iter()
            .map(|(s, sw)| {
                let v = raw(j, c.name, s);
                squeeze(if c.name == "FS" {
                    c.weight as f64 * *sw as f64 * v
                } else {
                    v
                })
            })
            .collect();
        line.push_str(&format!(" {}({})", squeeze(pct), subs.join(":")));
    }
    line.push('\n');
    (line, factors, abs_prio)
}

/// The jobs `mdiag -p` shows at a verbosity: eligible jobs; `-v` adds the
/// active ones, `-v -v` shows every job.
fn shown(p: &PriorityView, verbose: u8) -> Vec<&JobPriority> {
    p.jobs
        .iter()
        .filter(|j| match j.section {
            Section::Eligible => true,
            Section::Active => verbose >= 1,
            _ => verbose >= 2,
        })
        .collect()
}

/// `mdiag -p` (Moab's `MUIPrioDiagnose`, moab-formats.md §8.6): one column
/// per weighted component, `<share of the priority>(<raw values>)`.
pub fn render_priority(p: &PriorityView, verbose: u8) -> String {
    render_priority_in(p, verbose, "ALL")
}

/// [`render_priority`] for one partition (`mdiag -p -t PAR`: `p` holds the
/// jobs that may run there).
pub fn render_priority_in(p: &PriorityView, verbose: u8, partition: &str) -> String {
    let jobs = shown(p, verbose);
    if jobs.is_empty() {
        return "no eligible jobs in queue\n".to_string();
    }
    let cols = columns(&p.weights);
    let mut o = format!("diagnosing job priority information (partition: {partition})\n\n");
    o.push_str(&priority_header(&cols));
    let mut comp_total = vec![0.0f64; cols.len()];
    let mut sub_total: Vec<Vec<f64>> = cols.iter().map(|c| vec![0.0; c.subs.len()]).collect();
    let mut prio_total = 0.0f64;
    let mut active_started = false;
    for j in jobs {
        if verbose == 1 && j.section == Section::Active && !active_started {
            o.push_str("---Active Jobs---\n");
            active_started = true;
        }
        let (line, factors, abs_prio) = priority_row(&cols, j);
        o.push_str(&line);
        prio_total += abs_prio;
        for (i, c) in cols.iter().enumerate() {
            comp_total[i] += factors[i].abs();
            let scale = cap_scale(j, c);
            for (k, (s, _)) in c.subs.iter().enumerate() {
                sub_total[i][k] += (raw(j, c.name, s) * scale).abs();
            }
        }
    }
    let pct = |v: f64| {
        if prio_total != 0.0 {
            v * 100.0 / prio_total
        } else {
            0.0
        }
    };
    let mut foot = format!("\n{:<20} {:>10}  ", "Percent Contribution", "--------");
    for (i, c) in cols.iter().enumerate() {
        let subs: Vec<String> = c
            .subs
            .iter()
            .enumerate()
            .map(|(k, (_, sw))| squeeze(pct(sub_total[i][k] * *sw as f64 * c.weight as f64).abs()))
            .collect();
        foot.push_str(&format!(
            " {}({})",
            squeeze(pct(comp_total[i] * c.weight as f64).abs()),
            subs.join(":")
        ));
    }
    o.push_str(&foot);
    o.push_str("\n\n* indicates system prio set on job\n");
    o
}

/// checkjob `-v -v`'s `Priority Analysis:`: the mdiag -p table for one job.
pub fn priority_analysis(weights: &[(String, String, i64, i64)], j: &JobPriority) -> String {
    let cols = columns(weights);
    let mut o = priority_header(&cols);
    o.push_str(&priority_row(&cols, j).0);
    o
}

/// `mdiag -p --xml` (`MJobCalcStartPriority`'s XML): `<Data>`, a
/// `<job name="template">` with each component's weight (`<pc name=
/// value=>`) and its subcomponents' (`<psc name= value=>`), then one `<job
/// name= priority=>` per job with the subcomponents' raw values.
pub fn render_priority_xml(p: &PriorityView, verbose: u8) -> String {
    let mut comps: Vec<&str> = p.weights.iter().map(|w| w.0.as_str()).collect();
    comps.dedup();
    let mut data = Element::new("Data");
    let mut template = Element::new("job").attr("name", "template");
    for c in &comps {
        let of: Vec<_> = p.weights.iter().filter(|w| w.0 == *c).collect();
        let mut pc = Element::new("pc")
            .attr("name", c)
            .attr("value", of.first().map_or(0, |w| w.2));
        for w in of {
            pc.push(Element::new("psc").attr("name", &w.1).attr("value", w.3));
        }
        template.push(pc);
    }
    data.push(template);
    for j in shown(p, verbose) {
        let mut je = Element::new("job")
            .attr("name", j.id)
            .attr("priority", format!("{:.6}", j.priority as f64));
        if j.system {
            je = je.attr("systemPriority", j.priority);
        }
        for c in &comps {
            let mut pc = Element::new("pc").attr("name", c);
            for w in p.weights.iter().filter(|w| w.0 == *c) {
                pc.push(
                    Element::new("psc")
                        .attr("name", &w.1)
                        .attr("value", format!("{:.6}", raw(j, c, &w.1))),
                );
            }
            je.push(pc);
        }
        data.push(je);
    }
    data.render()
}

/// `mdiag -b`: why blocked jobs are blocked.
pub fn render_blocked(q: &QueueView) -> String {
    render_blocked_at(q, "SOFT")
}

/// `mdiag -b -l LEVEL`: the header names the policy level asked for; the
/// reasons are the scheduler's own (Arches applies soft and hard limits in
/// one pass, docs/formats.md).
pub fn render_blocked_at(q: &QueueView, level: &str) -> String {
    render_blocked_in(q, level, "ALL")
}

/// [`render_blocked_at`] for one partition (`mdiag -b -t PAR`: the queue
/// asked for holds that partition's jobs).
pub fn render_blocked_in(q: &QueueView, level: &str, partition: &str) -> String {
    let mut o = format!("Diagnosing blocked jobs (policylevel {level}  partition {partition})\n\n");
    let blocked: Vec<_> = q
        .jobs
        .iter()
        .filter(|j| j.section == Section::Blocked)
        .collect();
    if blocked.is_empty() {
        o.push_str("no blocked jobs found\n");
        return o;
    }
    for j in blocked {
        let id = j.jobid();
        let hold = match j.state.as_str() {
            "UserHold" | "Hold" => Some("User"),
            "SystemHold" => Some("System"),
            "BatchHold" => Some("Batch"),
            "Deferred" => Some("Defer"),
            _ => None,
        };
        if let Some(h) = hold {
            o.push_str(&format!(
                "job {id:<20} has the following hold(s) in place:  {h}\n"
            ));
            if h == "Defer" {
                o.push_str(&format!(
                    "job {id:<20} has non-idle expected state (expected state: Deferred)\n"
                ));
            }
        } else if j.state != "Idle" {
            o.push_str(&format!(
                "job {id:<20} has non-idle state (state: '{}')\n",
                j.state
            ));
        }
        // A hold already explains the block; otherwise give the daemon's
        // reason: a message naming the job as is (Moab's policy messages),
        // else after the padded id (`job 5    has not reached its start
        // date (1:00:00 to startdate)`).
        if let Some(r) = j.block_reason.as_ref().filter(|_| hold.is_none()) {
            if r.starts_with(&format!("job {id} ")) {
                o.push_str(&format!("{r}\n"));
            } else {
                let text = r.strip_prefix("job ").unwrap_or(r);
                o.push_str(&format!("job {id:<20} {text}\n"));
            }
        }
    }
    o
}

/// `mdiag -j` (plain and `-v`).
pub fn render_jobs(v: &JobsView, verbose: bool) -> String {
    let mut o = String::new();
    if verbose {
        o.push_str(&format!(
            "{:<18} {:>8.8} {:>8.8} {:>4.4} {:>8} {:>11} {:>1.1} {:>4} {:>8} {:>8} {:>8} {:>11} {:>6} {:>6} {:>6} {:>6} {:>6} {:>11} {}\n\n",
            "JobID", "State", "Par", "Proc", "QOS", "WCLimit", "R", "Min", "User", "Group", "Account",
            "QueuedTime", "Opsys", "Arch", "Mem", "Disk", "Procs", "Class", "Features"
        ));
    } else {
        o.push_str(&format!(
            "{:<18} {:>8.8} {:>4.4} {:>11} {:>8} {:>6} {:>6} {}\n\n",
            "JobID", "State", "Proc", "WCLimit", "User", "Opsys", "Class", "Features"
        ));
    }
    for d in &v.jobs {
        let s = &d.summary;
        let features = if d.features.is_empty() {
            "-".to_string()
        } else {
            d.features.join(",")
        };
        if verbose {
            let mem = if d.mem_per_task_mb > 0 {
                format!(">={}", d.mem_per_task_mb)
            } else {
                "-".to_string()
            };
            o.push_str(&format!(
                "{:<18} {:>8.8} {:>8} {:>4} {:>8} {:>11} {:>1} {:>4} {:>8} {:>8} {:>8.8} {:>11} {:>6} {:>6} {:>6} {:>6} {:>6} {:>11} {:<10}\n",
                s.jobid(),
                s.state,
                s.partition.as_deref().unwrap_or("-"),
                s.procs,
                s.qos.as_deref().unwrap_or("-"),
                limit(s.walltime),
                u8::from(d.reservation.is_some()),
                d.tasks,
                s.user,
                s.group,
                s.account.as_deref().unwrap_or("-"),
                duration((s.start_time.unwrap_or(v.now) - s.submit_time).max(0)),
                d.opsys.as_deref().unwrap_or("-"),
                d.arch.as_deref().unwrap_or("-"),
                mem,
                "-",
                "-",
                s.class.as_deref().unwrap_or("-"),
                features
            ));
        } else {
            o.push_str(&format!(
                "{:<18} {:>8.8} {:>4} {:>11} {:>8.8} {:>6.6} {:>6.6} {}\n",
                s.jobid(),
                s.state,
                s.procs,
                limit(s.walltime),
                s.user,
                d.opsys.as_deref().unwrap_or("-"),
                s.class.as_deref().unwrap_or("-"),
                features
            ));
        }
        if s.section == Section::Active && d.reservation.is_none() {
            o.push_str(&format!(
                "  WARNING:  active job '{}' has no reservation\n",
                s.jobid()
            ));
        }
        if d.start_count >= 4 {
            o.push_str(&format!(
                "  WARNING:  job {} has failed to start {} times\n",
                s.jobid(),
                d.start_count
            ));
        }
        if !d.templates.is_empty() {
            o.push_str(&format!(
                "  NOTE:  job {}: job templates {}\n",
                s.id,
                d.templates.join(",")
            ));
        }
        // Preemption (seed §8.4.3): why a queued job did not preempt or what
        // it waits for; with -v also what running jobs are preemptible by.
        let show = verbose || s.section != Section::Active;
        for p in d.preemption.iter().filter(|_| show) {
            o.push_str(&format!("  NOTE:  job {}: {p}\n", s.jobid()));
        }
    }
    o
}

/// The running configuration (`mschedctl -l config`, `mdiag -C` against the daemon).
pub fn render_config(c: &ConfigView) -> String {
    let mut o = String::new();
    if let Some(f) = &c.file {
        o.push_str(&format!("# configuration file: {f}\n"));
    }
    let width = c.parameters.iter().map(|(k, _)| k.len()).max().unwrap_or(0);
    for (k, v) in &c.parameters {
        o.push_str(&format!("{k:<width$} {v}\n"));
    }
    for d in &c.diagnostics {
        o.push_str(&format!(
            "{}:  {}:{}: {}\n",
            d.severity, d.file, d.line, d.message
        ));
    }
    o
}

/// `mdiag -T` header (Arches has no triggers, so the table stays empty).
pub const TRIGGER_HEADER: &str = "TrigID    Event  MFire   Offset Thresh  AType           ActionDate       State  Launchtime\n------ -------- ------ -------- ------ ------ -------------------- ----------- -----------\n";

/// `mdiag -G`: Arches manages no node power; every node is On.
pub fn render_green(v: &arches_api::NodesView) -> String {
    let mut o = String::from(
        "NOTE:  power management is not enabled (Arches does not manage node power)\n",
    );
    for n in &v.nodes {
        o.push_str(&format!(
            "  node {} is in state {}, power state On\n",
            n.name, n.state
        ));
    }
    o
}

/// `mdiag -L`: every configured credential limit with the usage now.
pub fn render_limits(v: &arches_api::CredentialsView) -> String {
    let mut o = String::from("evaluating limits\n\n");
    o.push_str(&format!(
        "{:<8} {:<16} {:<8} {:>8} {:>8} {:>8}\n\n",
        "Type", "Name", "Limit", "InUse", "Soft", "Hard"
    ));
    let mut any = false;
    for c in &v.credentials {
        for (name, soft, hard) in &c.limits {
            let used = match name.as_str() {
                "MAXJOB" => c.active_jobs.to_string(),
                "MAXPROC" => c.active_procs.to_string(),
                _ => "-".to_string(),
            };
            o.push_str(&format!(
                "{:<8} {:<16} {:<8} {:>8} {:>8} {:>8}\n",
                c.kind, c.name, name, used, soft, hard
            ));
            any = true;
        }
    }
    if !any {
        o.push_str("no limits configured\n");
    }
    o
}

/// `mdiag -x`: the scheduler's messages and every job warning of mdiag -j.
pub fn render_overall(s: &SchedulerView, v: &JobsView) -> String {
    let mut o = String::new();
    for m in &s.messages {
        o.push_str(&format!("WARNING:  {m}\n"));
    }
    for l in render_jobs(v, false)
        .lines()
        .filter(|l| l.contains("WARNING"))
    {
        o.push_str(l.trim_start());
        o.push('\n');
    }
    if o.is_empty() {
        o.push_str("no system problems detected\n");
    }
    o
}

/// Whether a credential's usage is far enough from its fairshare target to
/// be flagged with `*` (more than 5 percentage points either way — the rule
/// every row of golden mdiag-f-1 follows).
pub fn fs_violates(percent: f64, target: Option<f64>) -> bool {
    target.is_some_and(|t| (percent - t).abs() > 5.0)
}

/// The start of a credential's `mdiag -f` row: its name (starred when its
/// share is off its target), its share and its target.
fn fs_cred_head(c: &FairshareCred) -> String {
    // An absolute cap (`^`) is in processor-seconds, not percent.
    let star = if c.target_kind != "^" && fs_violates(c.percent, c.target) {
        "*"
    } else {
        ""
    };
    // Maui's `MFSTargetToString`: the value and its kind's suffix (a space
    // for a plain target).
    let target = match c.target {
        Some(t) => format!(
            "{:>6}{}",
            format!("{t:.2}"),
            c.target_kind.chars().next().unwrap_or(' ')
        ),
        None => "-------".to_string(),
    };
    format!(
        "{:<15}{:>7.2} {target}",
        format!("{}{star}", c.name),
        c.percent
    )
}

/// `mdiag -f`: fairshare usage per credential and interval (Moab's
/// `FairShare Information` report, golden mdiag-f-1).
pub fn render_fairshare(f: &FairshareView) -> String {
    let mut o = String::from("FairShare Information\n\n");
    o.push_str(&format!(
        "Depth: {} intervals   Interval Length: {}   Decay Rate: {:.2}\n\n",
        f.depth,
        duration(f.interval),
        f.decay
    ));
    o.push_str(&format!(
        "FS Policy: {}\n",
        f.policy.as_deref().unwrap_or("[NONE]")
    ));
    o.push_str("System FS Settings:  Target Usage: 0.00    Flags: 0\n\n");
    let depth = f.depth as usize;
    o.push_str(&format!("{:<15}   %     Target", "FSInterval"));
    for i in 0..depth {
        o.push_str(&format!("{i:>8}"));
    }
    o.push('\n');
    o.push_str(&format!("{:<15}{:>7} -------", "FSWeight", "-------"));
    let mut w = 1.0f64;
    for _ in 0..depth {
        o.push_str(&format!("{w:>8.4}"));
        w *= f.decay;
    }
    o.push('\n');
    o.push_str(&format!("{:<15}{:>7.2} -------", "TotalUsage", 100.0));
    for i in 0..depth {
        o.push_str(&format!("{:>8.1}", f.total.get(i).copied().unwrap_or(0.0)));
    }
    o.push('\n');
    for (kind, title) in [
        ("user", "USER"),
        ("group", "GROUP"),
        ("account", "ACCT"),
        ("qos", "QOS"),
        ("class", "CLASS"),
    ] {
        // In the daemon's order (by name; configured targets last).
        let rows: Vec<&FairshareCred> = f.credentials.iter().filter(|c| c.kind == kind).collect();
        if rows.is_empty() {
            continue;
        }
        o.push_str(&format!("\n{title}\n-------------\n"));
        for c in rows {
            o.push_str(&fs_cred_head(c));
            for i in 0..depth {
                match c.intervals.get(i).copied().flatten() {
                    Some(v) => o.push_str(&format!("{v:>8.2}")),
                    None => o.push_str(" -------"),
                }
            }
            o.push('\n');
        }
    }
    for t in &f.trees {
        o.push_str(&render_fairshare_tree(t));
    }
    o
}

/// `mdiag -f -o acct` (golden mdiag-f-2): the header of `mdiag -f`, then
/// one `ACCOUNT` block: each account's row (as in the `ACCT` block) and
/// its users indented two spaces, their share of the total usage — or of
/// the account's with `--flags=relative` — per interval.
pub fn render_fairshare_by_account(f: &FairshareView, relative: bool) -> String {
    let head = FairshareView {
        credentials: Vec::new(),
        trees: Vec::new(),
        members: Vec::new(),
        ..f.clone()
    };
    let mut o = render_fairshare(&head);
    let depth = f.depth as usize;
    let accounts: Vec<&FairshareCred> = f
        .credentials
        .iter()
        .filter(|c| c.kind == "account")
        .collect();
    if accounts.is_empty() {
        return o;
    }
    let intervals = |o: &mut String, v: &[Option<f64>]| {
        for i in 0..depth {
            match v.get(i).copied().flatten() {
                Some(x) => o.push_str(&format!("{x:>8.2}")),
                None => o.push_str(" -------"),
            }
        }
        o.push('\n');
    };
    o.push_str("\nACCOUNT\n-------------\n");
    for c in accounts {
        o.push_str(&fs_cred_head(c));
        intervals(&mut o, &c.intervals);
        for m in f.members.iter().filter(|m| m.account == c.name) {
            let (pct, iv) = if relative {
                (m.percent, &m.intervals)
            } else {
                (m.total_percent, &m.total_intervals)
            };
            o.push_str(&format!(
                "{:<15}{pct:>7.2} -------",
                format!("  {}", m.user)
            ));
            intervals(&mut o, iv);
        }
    }
    o
}

/// The share-tree block of `mdiag -f` (Moab's `MFSShowTreeWithFlags`):
/// per node its name (indented two spaces per tier below the first, after
/// `- `), the shares its usage amounts to, its `SHARES` `of` its parent's
/// member shares, `(<type>: <decayed usage>)` and `(<tree factor>)` (0.00
/// for an inner node). The name column is 4 × the tree's levels wide.
pub fn render_fairshare_tree(t: &arches_api::FairshareTree) -> String {
    let w = (t.tiers as usize + 1) * 4;
    let mut o = format!("\nShare Tree Overview for partition '{}'\n", t.partition);
    o.push_str(&format!(
        "{:<w$.w$}      Usage    Target                (FSFACTOR)\n",
        "Name"
    ));
    o.push_str(&format!(
        "{:<w$.w$}      -----    ------              ------------\n",
        "----"
    ));
    for n in &t.nodes {
        let name = if n.depth > 0 {
            format!("{}- {}", " ".repeat((n.depth as usize - 1) * 2), n.name)
        } else {
            n.name.chars().take(16).collect()
        };
        o.push_str(&format!(
            "{name:<w$.w$}  {:>8.2}  {:>8.2}  of {:>8.2} ({}: {:.2}) ({:.2})\n",
            n.usage_shares, n.shares, n.total_shares, n.node_type, n.usage, n.factor
        ));
    }
    o
}

#[cfg(test)]
mod blocked_tests {
    use super::*;
    use arches_api::{ClusterSummary, JobSummary};

    fn blocked(id: u64, state: &str, reason: Option<&str>) -> JobSummary {
        JobSummary {
            id,
            name: "j".into(),
            user: "u".into(),
            group: "g".into(),
            account: None,
            class: None,
            qos: None,
            state: state.into(),
            section: Section::Blocked,
            procs: 1,
            nodes: None,
            walltime: None,
            submit_time: 0,
            start_time: None,
            completion_time: None,
            exit_code: None,
            cancelled: false,
            priority: 0,
            system_priority: false,
            rank: None,
            master_host: None,
            partition: None,
            suspended_secs: 0,
            reservation_start: None,
            backfilled: false,
            preemptible: false,
            block_reason: reason.map(String::from),
            eligible_secs: 0,
            restartable: false,
            elastic: None,
            array: None,
            cpu_ms: None,
        }
    }

    #[test]
    fn holds_and_policy_reasons() {
        let q = QueueView {
            now: 0,
            cluster: ClusterSummary::default(),
            jobs: vec![
                blocked(2, "UserHold", Some("job has hold in place (User)")),
                blocked(
                    5,
                    "Idle",
                    Some("violates active HARD MAXJOB limit of 2 for user u"),
                ),
                blocked(6, "Idle", Some("job 6 violates idle HARD MAXIPROC limit")),
                blocked(
                    7,
                    "Idle",
                    Some("job has not reached its start date (1:00:00 to startdate)"),
                ),
            ],
            purge_secs: 0,
            scheduler: "Moab".into(),
            notes: vec![],
        };
        let s = render_blocked(&q);
        assert_eq!(
            s,
            "Diagnosing blocked jobs (policylevel SOFT  partition ALL)\n\n\
job 2                    has the following hold(s) in place:  User\n\
job 5                    violates active HARD MAXJOB limit of 2 for user u\n\
job 6 violates idle HARD MAXIPROC limit\n\
job 7                    has not reached its start date (1:00:00 to startdate)\n"
        );
        let empty = QueueView { jobs: vec![], ..q };
        assert!(render_blocked(&empty).ends_with("no blocked jobs found\n"));
    }
}
