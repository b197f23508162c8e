//! showstats: the scheduler summary (`-s`, the default), per-credential
//! tables (`-u -g -a -c -q`), the `-f` matrix and `--xml`. Layouts are the
//! Moab admin guide's showstats / showstats -f samples (docs/formats.md
//! records them and what Arches leaves out).

use arches_api::{CredStats, StatTotals, StatsView};

use super::xml::Element;
use crate::fmt::{date, duration};

fn pct(a: f64, b: f64) -> f64 {
    if b > 0.0 {
        a * 100.0 / b
    } else {
        0.0
    }
}

fn avg(a: f64, n: u64) -> f64 {
    if n > 0 {
        a / n as f64
    } else {
        0.0
    }
}

/// Moab's compact number: `845.77`, `2.47K`, `12.30M`.
pub fn compact(v: f64) -> String {
    let a = v.abs();
    if a >= 1e9 {
        format!("{:.2}G", v / 1e9)
    } else if a >= 1e6 {
        format!("{:.2}M", v / 1e6)
    } else if a >= 1e3 {
        format!("{:.2}K", v / 1e3)
    } else {
        format!("{v:.2}")
    }
}

/// `showstats` / `showstats -s` (`-v` adds the scheduler time line).
pub fn render_summary(s: &StatsView, verbose: bool) -> String {
    let t = &s.completed;
    let h = |ps: f64| ps / 3600.0;
    let mut o = String::new();
    if verbose {
        o.push_str(&format!(
            "current scheduler time: {}\n\n",
            crate::fmt::date_with_year(s.now)
        ));
    }
    o.push_str(&format!(
        "moab active for {:>13}   started on {}\n",
        duration(s.now - s.started),
        date(s.started)
    ));
    o.push_str(&format!(
        "statistics for iteration {:>5}  initialized on {}\n\n",
        s.iterations,
        date(s.since)
    ));
    let row =
        |label: &str, a: String, b: String, p: String| format!("{label:<30}{a:>7}/{b:<6} ({p}%)\n");
    o.push_str(&row(
        "Eligible/Idle Jobs:",
        s.eligible_jobs.to_string(),
        s.idle_jobs.to_string(),
        format!(
            "{:.3}",
            pct(f64::from(s.eligible_jobs), f64::from(s.idle_jobs))
        ),
    ));
    o.push_str(&format!("{:<30}{:>7}\n", "Active Jobs:", s.active_jobs));
    o.push_str(&row(
        "Successful/Completed Jobs:",
        t.successful.to_string(),
        t.jobs.to_string(),
        format!("{:.3}", pct(t.successful as f64, t.jobs as f64)),
    ));
    o.push_str(&format!("{:<30}{:>7}\n", "Preempt Jobs:", s.preempted_jobs));
    // Backfill share: completed and running jobs started by backfill.
    o.push_str(&format!(
        "{:<30}{:>7}\n",
        "Backfill Jobs:",
        t.backfilled + u64::from(s.active_backfilled)
    ));
    o.push_str(&format!(
        "{:<30}{:>7.2}/{:.2}\n",
        "Avg/Max QTime (Hours):",
        h(avg(t.qtime_sum, t.jobs)),
        h(t.qtime_max)
    ));
    o.push_str(&format!(
        "{:<30}{:>7.2}/{:.2}\n",
        "Avg/Max XFactor:",
        avg(t.xf_sum, t.jobs),
        t.xf_max
    ));
    o.push_str(&format!(
        "{:<30}{:>7.2}/{:.2}\n\n",
        "Avg/Max Bypass:",
        avg(t.bypass_sum as f64, t.jobs),
        f64::from(t.bypass_max)
    ));
    o.push_str(&row(
        "Dedicated/Total ProcHours:",
        compact(h(s.proc_seconds_used)),
        compact(h(s.proc_seconds_available)),
        format!("{:.3}", pct(s.proc_seconds_used, s.proc_seconds_available)),
    ));
    let bf = t.ps_backfilled + s.active_ps_backfilled;
    o.push_str(&row(
        "Backfill/Dedicated ProcHours:",
        compact(h(bf)),
        compact(h(s.proc_seconds_used)),
        format!("{:.3}", pct(bf, s.proc_seconds_used)),
    ));
    o.push('\n');
    o.push_str(&row(
        "Current Active/Total Procs:",
        s.active_procs.to_string(),
        s.up_procs.to_string(),
        format!(
            "{:.1}",
            pct(f64::from(s.active_procs), f64::from(s.up_procs))
        ),
    ));
    o.push_str(&row(
        "Current Active/Total Nodes:",
        s.active_nodes.to_string(),
        s.up_nodes.to_string(),
        format!(
            "{:.1}",
            pct(f64::from(s.active_nodes), f64::from(s.up_nodes))
        ),
    ));
    o.push('\n');
    o.push_str(&format!(
        "{:<30}{:>9.3}%\n",
        "Avg WallClock Accuracy:",
        avg(t.wcacc_sum, t.wcacc_jobs) * 100.0
    ));
    // Only when some completed job's processor use was measured.
    if t.ps_measured > 0.0 {
        o.push_str(&format!(
            "{:<30}{:>9.3}%\n",
            "Avg Job Proc Efficiency:",
            100.0 * t.ps_utilized / t.ps_measured
        ));
    }
    if verbose {
        if let (Some(u), Some(it)) = (s.min_utilization, s.min_utilization_iteration) {
            o.push_str(&format!(
                "{:<30}{:>9.3}% (on iteration {it})\n",
                "Min System Utilization:",
                u * 100.0
            ));
        }
    }
    let hms = |secs: f64| {
        let b = secs.max(0.0) as i64;
        format!("{:02}:{:02}:{:02}", b / 3600, b / 60 % 60, b % 60)
    };
    match s.avg_backlog_secs {
        Some(a) => o.push_str(&format!(
            "{:<30}{:>10}/{}\n",
            "Est/Avg Backlog:",
            hms(s.backlog_secs),
            hms(a)
        )),
        // No iteration sampled the backlog yet (a served simulation).
        None => o.push_str(&format!(
            "{:<30}{:>10}\n",
            "Est Backlog:",
            hms(s.backlog_secs)
        )),
    }
    o
}

/// `showstats -n`: each node's configured, minimum, maximum and average
/// memory in use and its processors and load over the time frame.
pub fn render_nodes(s: &StatsView, only: Option<&str>) -> String {
    let (from, to) = s.window.unwrap_or((s.since, s.now));
    let mut o = format!("node stats from {} to {}\n\n", date(from), date(to));
    o.push_str(&format!(
        "{:<9} {:>6} {:>6} {:>6} {:>6} | {:>8} {:>7} {:>7} {:>7}\n",
        "node", "CfgMem", "MinMem", "MaxMem", "AvgMem", "CfgProcs", "MinLoad", "MaxLoad", "AvgLoad"
    ));
    for n in s.nodes.iter().filter(|n| only.is_none_or(|w| w == n.node)) {
        o.push_str(&format!(
            "{:<9} {:>6} {:>6} {:>6} {:>6} {:>8} {:>7.2} {:>7.2} {:>7.2}\n",
            n.node,
            n.cfg_mem,
            n.min_mem,
            n.max_mem,
            n.avg_mem,
            n.cfg_procs,
            n.min_load,
            n.max_load,
            n.avg_load
        ));
    }
    o
}

/// Title word and name-column header of a credential kind.
fn kind_titles(kind: &str) -> (&'static str, &'static str) {
    match kind {
        "user" => ("User", " UserName  UID"),
        "group" => ("Group", "GroupName  GID"),
        "account" => ("Account", "  Account     "),
        "class" => ("Class", "    Class     "),
        // showstats -j: Arches' choice, no Moab sample shows it (docs/formats.md).
        "template" => ("Template", "   Template   "),
        _ => ("QOS", "      QOS     "),
    }
}

const BANNER: &str = "              |----- Running ------|--------------------------------- Completed ----------------------------------|";
const COLUMNS: &str =
    "Jobs Procs ProcHours Jobs    %   PHReq    %    PHDed    %   FSTgt  AvgXF  MaxXF  AvgQH  Effic  WCAcc";

/// `showstats -u|-g|-a|-c|-q [NAME]`: one row per credential with running
/// or completed jobs in the period, most dedicated proc-hours first.
pub fn render_creds(s: &StatsView, kind: &str, name: Option<&str>) -> String {
    render_creds_v(s, kind, name, false)
}

/// [`render_creds`]; `verbose` (`-v`) keeps the credentials with nothing
/// running or completed in the time frame too (Moab skips them otherwise).
pub fn render_creds_v(s: &StatsView, kind: &str, name: Option<&str>, verbose: bool) -> String {
    let (title, head) = kind_titles(kind);
    let mut rows: Vec<&CredStats> = s
        .credentials
        .iter()
        .filter(|c| c.kind == kind && name.is_none_or(|n| n == c.name))
        .filter(|c| verbose || c.active_jobs > 0 || c.completed.jobs > 0)
        .collect();
    let ded = |c: &CredStats| c.completed.ps_dedicated + c.active_ps_dedicated;
    rows.sort_by(|a, b| ded(b).total_cmp(&ded(a)).then(a.name.cmp(&b.name)));
    let total = &s.completed;
    // Users and groups have an id column: " UserName  UID" + " Jobs...".
    let sep = if head.ends_with("ID") { " " } else { "" };
    let mut o = format!(
        "{title} Statistics Initialized {}\n\n{BANNER}\n{head}{sep}{COLUMNS}\n",
        date(s.since)
    );
    for c in rows {
        let t = &c.completed;
        let mut line = if head.ends_with("ID") {
            format!(
                "{:>9} {:>4} {:>4}",
                c.name,
                c.id.map_or("-".to_string(), |i| i.to_string()),
                c.active_jobs
            )
        } else {
            format!("{:>9}{:>9}", c.name, c.active_jobs)
        };
        line.push_str(&format!(
            " {:>5} {:>9.2}",
            c.active_procs,
            c.active_ps_remaining / 3600.0
        ));
        if t.jobs > 0 {
            line.push_str(&format!(
                " {:>4} {:>6.2} {:>5.0} {:>6.2}",
                t.jobs,
                pct(t.jobs as f64, total.jobs as f64),
                t.ps_requested / 3600.0,
                pct(t.ps_requested, total.ps_requested)
            ));
        } else {
            line.push_str(" ---- ------ ----- ------");
        }
        line.push_str(&format!(
            " {:>6.1} {:>6.2}",
            ded(c) / 3600.0,
            pct(ded(c), s.proc_seconds_used)
        ));
        match c.fs_target {
            Some(f) => line.push_str(&format!(" {f:>5.1}")),
            None => line.push_str(" -----"),
        }
        if t.jobs > 0 {
            line.push_str(&format!(
                " {:>6.2} {:>6.2} {:>6.2} {}",
                avg(t.xf_sum, t.jobs),
                t.xf_max,
                avg(t.qtime_sum, t.jobs) / 3600.0,
                effic(t)
            ));
            if t.wcacc_jobs > 0 {
                line.push_str(&format!(" {:>6.2}", avg(t.wcacc_sum, t.wcacc_jobs) * 100.0));
            } else {
                line.push_str(" ------");
            }
        } else {
            line.push_str(" ------ ------ ------ ------ ------");
        }
        o.push_str(&line);
        o.push('\n');
    }
    o
}

/// The Effic column: processor-seconds used over dedicated, in percent,
/// for the completed jobs whose use was measured; `------` when none was.
fn effic(t: &StatTotals) -> String {
    if t.ps_measured > 0.0 {
        format!("{:>6.2}", 100.0 * t.ps_utilized / t.ps_measured)
    } else {
        "------".to_string()
    }
}

/// The statistics `showstats -f` can tabulate (Moab's names).
pub const MATRIX_TYPES: &[&str] = &[
    "AVGBYPASS",
    "AVGQTIME",
    "AVGXFACTOR",
    "BFCOUNT",
    "BFPHRUN",
    "JOBCOUNT",
    "MAXBYPASS",
    "MAXXFACTOR",
    "PHREQUEST",
    "PHRUN",
    "WCACCURACY",
];

/// A grid cell's value: `(value, samples)` for averages, `(value, None)`
/// for plain sums; `None` when no job fell in the cell.
fn cell(t: &StatTotals, kind: &str) -> Option<(f64, Option<u64>)> {
    if t.jobs == 0 {
        return None;
    }
    let n = Some(t.jobs);
    Some(match kind {
        "AVGBYPASS" => (avg(t.bypass_sum as f64, t.jobs), n),
        "AVGQTIME" => (avg(t.qtime_sum, t.jobs) / 3600.0, n),
        "AVGXFACTOR" => (avg(t.xf_sum, t.jobs), n),
        "BFCOUNT" => (t.backfilled as f64, None),
        "BFPHRUN" => (t.ps_backfilled / 3600.0, None),
        "JOBCOUNT" => (t.jobs as f64, None),
        "MAXBYPASS" => (f64::from(t.bypass_max), n),
        "MAXXFACTOR" => (t.xf_max, n),
        "PHREQUEST" => (t.ps_requested / 3600.0, None),
        "PHRUN" => (t.ps_dedicated / 3600.0, None),
        "WCACCURACY" => {
            if t.wcacc_jobs == 0 {
                return None;
            }
            (avg(t.wcacc_sum, t.wcacc_jobs) * 100.0, Some(t.wcacc_jobs))
        }
        _ => return None,
    })
}

fn merge(a: &mut StatTotals, b: &StatTotals) {
    a.jobs += b.jobs;
    a.successful += b.successful;
    a.ps_requested += b.ps_requested;
    a.ps_dedicated += b.ps_dedicated;
    a.xf_sum += b.xf_sum;
    a.xf_max = a.xf_max.max(b.xf_max);
    a.qtime_sum += b.qtime_sum;
    a.qtime_max = a.qtime_max.max(b.qtime_max);
    a.wcacc_sum += b.wcacc_sum;
    a.wcacc_jobs += b.wcacc_jobs;
    a.bypass_sum += b.bypass_sum;
    a.bypass_max = a.bypass_max.max(b.bypass_max);
    a.backfilled += b.backfilled;
    a.ps_backfilled += b.ps_backfilled;
    a.ps_utilized += b.ps_utilized;
    a.ps_measured += b.ps_measured;
}

fn fmt_cell(c: Option<(f64, Option<u64>)>) -> String {
    match c {
        None => "[ -------- ]".to_string(),
        Some((v, Some(n))) => format!("[{v:>6.2}{n:>4}]"),
        Some((v, None)) if v.fract() == 0.0 => format!("[ {:>8} ]", v as i64),
        Some((v, None)) => format!("[ {:>8} ]", compact(v)),
    }
}

fn grid_title(kind: &str) -> &'static str {
    match kind {
        "AVGBYPASS" => "Average Bypass Grid",
        "AVGQTIME" => "Average QueueTime Grid",
        "AVGXFACTOR" => "Average XFactor Grid",
        "BFCOUNT" => "Backfill Count Grid",
        "BFPHRUN" => "Backfill ProcHour Grid",
        "JOBCOUNT" => "Job Count Grid",
        "MAXBYPASS" => "Maximum Bypass Grid",
        "MAXXFACTOR" => "Maximum XFactor Grid",
        "PHREQUEST" => "ProcHour Request Grid",
        "PHRUN" => "ProcHour Run Grid",
        _ => "WallClock Accuracy Grid",
    }
}

/// `showstats -f TYPE`: rows by processors, columns by requested wall
/// time, a TOTAL column per row and a `T TOT` row per column, then a
/// summary.
pub fn render_matrix(s: &StatsView, kind: &str) -> Result<String, String> {
    let kind = kind.to_ascii_uppercase();
    if !MATRIX_TYPES.contains(&kind.as_str()) {
        return Err(format!(
            "ERROR:    invalid statistics type '{kind}' (one of {}; JOBEFFICIENCY, QOSDELIVERED and ESTSTARTTIME are not tracked by Arches)",
            MATRIX_TYPES.join(", ")
        ));
    }
    let cols = s.grid_times.len();
    let rows = s.grid_procs.len();
    if cols == 0 || s.grid.len() != rows * cols {
        return Err("ERROR:    the daemon sent no statistics matrix".to_string());
    }
    let mut o = format!("{}\n\n[ NODES ]", grid_title(&kind));
    for t in &s.grid_times {
        o.push_str(&format!(
            "[ {:02}:{:02}:{:02} ]",
            t / 3600,
            t / 60 % 60,
            t % 60
        ));
    }
    o.push_str("[   TOTAL  ]\n");
    let mut col_tot = vec![StatTotals::default(); cols];
    for (r, procs) in s.grid_procs.iter().enumerate() {
        o.push_str(&format!("[ {procs:>4}  ]"));
        let mut row_tot = StatTotals::default();
        for (t, tot) in s.grid[r * cols..(r + 1) * cols].iter().zip(&mut col_tot) {
            o.push_str(&fmt_cell(cell(t, &kind)));
            merge(&mut row_tot, t);
            merge(tot, t);
        }
        o.push_str(&fmt_cell(cell(&row_tot, &kind)));
        o.push('\n');
    }
    o.push_str("[ T TOT ]");
    for t in &col_tot {
        o.push_str(&fmt_cell(cell(t, &kind)));
    }
    o.push('\n');
    let all = &s.completed;
    // Processor- and proc-hour-weighted averages over the grid cells.
    let (mut pw, mut pn, mut sw, mut sn) = (0.0, 0.0, 0.0, 0.0);
    for (r, procs) in s.grid_procs.iter().enumerate() {
        for c in 0..cols {
            let t = &s.grid[r * cols + c];
            if let Some((v, _)) = cell(t, &kind) {
                pw += v * f64::from(*procs) * t.jobs as f64;
                pn += f64::from(*procs) * t.jobs as f64;
                sw += v * t.ps_dedicated;
                sn += t.ps_dedicated;
            }
        }
    }
    let label = match kind.as_str() {
        "AVGXFACTOR" | "MAXXFACTOR" => "X Factor",
        "AVGQTIME" => "QueueTime",
        "AVGBYPASS" | "MAXBYPASS" => "Bypass",
        "WCACCURACY" => "WC Accuracy",
        _ => "",
    };
    // The sample's summary values end at column 33, the sample count at 31.
    let line = |label: &str, value: String, end: usize| {
        let pad = end.saturating_sub(label.len() + value.len()).max(1);
        format!("{label}{}{value}\n", " ".repeat(pad))
    };
    if label.is_empty() {
        let total = cell(all, &kind).map_or(0.0, |c| c.0);
        o.push_str(&line("Total:", compact(total), 33));
    } else {
        let job = cell(all, &kind).map_or(0.0, |c| c.0);
        let node = if pn > 0.0 { pw / pn } else { 0.0 };
        let ns = if sn > 0.0 { sw / sn } else { 0.0 };
        o.push_str(&line(
            &format!("Job Weighted {label}:"),
            format!("{job:.4}"),
            33,
        ));
        o.push_str(&line(
            &format!("Node Weighted {label}:"),
            format!("{node:.4}"),
            33,
        ));
        o.push_str(&line(
            &format!("NS Weighted {label}:"),
            format!("{ns:.4}"),
            33,
        ));
    }
    o.push_str(&line("Total Samples:", all.jobs.to_string(), 31));
    Ok(o)
}

/// `showstats --xml`: `<Data><stats .../><sys .../></Data>` with the
/// attribute names of Moab's statistics XML (golden showstats-xml-1) that
/// Arches can fill; explicit end tags as in the golden.
pub fn render_xml(s: &StatsView) -> String {
    let t = &s.completed;
    let stats = Element::new("stats")
        .attr("ABP", format!("{:.2}", avg(t.bypass_sum as f64, t.jobs)))
        .attr("AQT", format!("{:.2}", avg(t.qtime_sum, t.jobs)))
        .attr("AXF", format!("{:.2}", avg(t.xf_sum, t.jobs)))
        .attr("Duration", (s.now - s.since).max(0))
        .attr("GCAJobs", s.active_jobs)
        .attr("GCEJobs", s.eligible_jobs)
        .attr("GCIJobs", s.idle_jobs)
        .attr(
            "GPHAvl",
            format!("{:.2}", s.proc_seconds_available / 3600.0),
        )
        .attr("GPHDed", format!("{:.2}", s.proc_seconds_used / 3600.0))
        .attr(
            "JSuccessRate",
            format!("{:.6}", avg(t.successful as f64, t.jobs)),
        )
        .attr("MBP", t.bypass_max)
        .attr("MQT", t.qtime_max as i64)
        .attr("MXF", format!("{:.2}", t.xf_max))
        .attr("StartTime", s.since)
        .attr("TBFJC", t.backfilled)
        .attr("TBFPSD", format!("{:.2}", t.ps_backfilled))
        .attr("TJC", t.jobs)
        .attr("TPSD", format!("{:.2}", s.proc_seconds_used))
        .attr("TPSR", format!("{:.2}", t.ps_requested))
        .attr("TWCAcc", format!("{:.6}", avg(t.wcacc_sum, t.wcacc_jobs)))
        .explicit_close();
    let sys = Element::new("sys")
        .attr("IC", s.iterations)
        .attr("SCJC", t.jobs)
        .attr("UPN", s.up_nodes)
        .attr("UPP", s.up_procs)
        .attr("statInitTime", s.since)
        .attr("time", s.now)
        .explicit_close();
    Element::new("Data").child(stats).child(sys).render()
}
