//! The dashboard's pages: plain HTML with inline CSS and SVG, rendered from
//! one snapshot. Every value from users (names, classes, reservation ids) is
//! escaped. What a page shows is what showq, showres and showbf show every
//! user; job names, scripts, environments and submit arguments never appear.

use std::fmt::Write;

use arches_api::Section;
use arches_core::{Job, Time};

use super::svg;
use super::{Sample, PAGE_ROWS, REFRESH_SECS};
use crate::actor::Snapshot;

/// The pages of the dashboard.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Page {
    Overview,
    Queue,
    Nodes,
    Reservations,
    Plan,
}

impl Page {
    const ALL: [Page; 5] = [
        Page::Overview,
        Page::Queue,
        Page::Nodes,
        Page::Reservations,
        Page::Plan,
    ];

    fn path(self) -> &'static str {
        match self {
            Page::Overview => "/",
            Page::Queue => "/queue",
            Page::Nodes => "/nodes",
            Page::Reservations => "/reservations",
            Page::Plan => "/plan",
        }
    }

    fn title(self) -> &'static str {
        match self {
            Page::Overview => "Overview",
            Page::Queue => "Queue",
            Page::Nodes => "Nodes",
            Page::Reservations => "Reservations",
            Page::Plan => "Plan",
        }
    }
}

/// HTML-escapes text.
pub fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            c => o.push(c),
        }
    }
    o
}

/// `YYYY-MM-DD HH:MM:SS` (UTC) of an epoch time.
pub fn date(t: Time) -> String {
    let days = t.div_euclid(86_400);
    let secs = t.rem_euclid(86_400);
    // Civil from days (H. Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02}",
        secs / 3600,
        secs / 60 % 60,
        secs % 60
    )
}

/// `[[DD:]HH:]MM:SS`, as showq prints durations.
fn dur(secs: i64) -> String {
    arches_config::value::format_duration(secs)
}

/// Renders `which`; `partial`: only the content (the live refresh swaps it).
pub fn render(which: Page, s: &Snapshot, page: usize, partial: bool) -> String {
    let mut main = String::with_capacity(32 * 1024);
    match which {
        Page::Overview => overview(&mut main, s),
        Page::Queue => queue(&mut main, s, page),
        Page::Nodes => nodes(&mut main, s, page),
        Page::Reservations => reservations(&mut main, s, page),
        Page::Plan => plan(&mut main, s),
    }
    let _ = write!(
        main,
        "<p class=\"foot\">As of {} UTC &middot; Arches {} &middot; refreshed every {REFRESH_SECS} s</p>",
        date(s.now),
        env!("CARGO_PKG_VERSION")
    );
    if partial {
        return main;
    }
    let mut nav = String::new();
    for p in Page::ALL {
        let _ = write!(
            nav,
            "<a href=\"{}\"{}>{}</a>",
            p.path(),
            if p == which { " class=\"on\"" } else { "" },
            p.title()
        );
    }
    nav.push_str("<a href=\"/metrics\">Metrics</a>");
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
<title>{title} &middot; {sched} &middot; Arches</title><style>{CSS}</style>\
<noscript><meta http-equiv=\"refresh\" content=\"{REFRESH_SECS}\"></noscript></head>\
<body><header><b>{sched}</b> <span>Arches dashboard</span><nav>{nav}</nav></header>\
<main id=\"main\">{main}</main><script>{SCRIPT}</script></body></html>\n",
        title = which.title(),
        sched = esc(&s.cfg.scheduler_name),
    )
}

const CSS: &str = "body{font:14px/1.4 system-ui,sans-serif;margin:0;color:#1d2330;background:#f5f6f8}\
header{background:#1d2330;color:#fff;padding:8px 16px;display:flex;gap:16px;align-items:center}\
header span{color:#9aa3b5}nav{margin-left:auto;display:flex;gap:4px}\
nav a{color:#cfd6e4;text-decoration:none;padding:4px 10px;border-radius:4px}\
nav a.on,nav a:hover{background:#3b4660;color:#fff}main{padding:16px;max-width:1400px}\
h1{font-size:20px;margin:4px 0 12px}h2{font-size:16px;margin:20px 0 8px}\
.cards{display:flex;flex-wrap:wrap;gap:12px}.card{background:#fff;border:1px solid #dde1e8;\
border-radius:6px;padding:10px 14px;min-width:150px}.card b{display:block;font-size:24px}\
.card small{color:#5c6678}table{border-collapse:collapse;background:#fff;width:100%;font-size:13px}\
th,td{border-bottom:1px solid #e3e6ec;padding:4px 8px;text-align:left;white-space:nowrap}\
th{background:#eef0f4}td.n,th.n{text-align:right}.pager{margin:8px 0;display:flex;gap:8px;\
align-items:center}.pager a{padding:2px 8px;border:1px solid #c7ccd6;border-radius:4px;\
background:#fff;text-decoration:none;color:#1d2330}.foot,.note{color:#6b7486;font-size:12px;margin-top:16px}\
svg{background:#fff;border:1px solid #dde1e8;border-radius:6px}.sec{font-weight:600;\
background:#f7f8fa}.empty{color:#6b7486;font-style:italic}";

/// Replaces the content with the page's `?partial=1` every few seconds
/// (keeping the page number); nothing else, nothing loaded from elsewhere.
const SCRIPT: &str = "(function(){var m=document.getElementById('main');\
setInterval(function(){var u=new URL(location.href);u.searchParams.set('partial','1');\
fetch(u,{cache:'no-store'}).then(function(r){return r.ok?r.text():null})\
.then(function(t){if(t!==null){m.innerHTML=t;}}).catch(function(){});},5000);})();";

fn card(o: &mut String, label: &str, value: &str, note: &str) {
    let _ = write!(
        o,
        "<div class=\"card\"><small>{label}</small><b>{value}</b><small>{note}</small></div>"
    );
}

fn pct(x: f64) -> String {
    format!("{:.1} %", x * 100.0)
}

/// Rows of the overview's table of recent intervals.
const INTERVAL_ROWS: usize = 48;

/// showq's summary, the scheduler, and the charts of the kept statistics.
fn overview(o: &mut String, s: &Snapshot) {
    let c = crate::views::cluster(s);
    let (mut active, mut eligible, mut blocked) = (0u64, 0u64, 0u64);
    for j in s.state.jobs() {
        match crate::views::section(s, j) {
            Section::Active => active += 1,
            Section::Eligible => eligible += 1,
            Section::Blocked => blocked += 1,
            Section::Completed => {}
        }
    }
    let util = if c.up_procs == 0 {
        0.0
    } else {
        f64::from(c.alloc_procs) / f64::from(c.up_procs)
    };
    o.push_str("<h1>Cluster overview</h1><div class=\"cards\">");
    card(
        o,
        "Active jobs",
        &active.to_string(),
        "running, starting, suspended",
    );
    card(
        o,
        "Eligible jobs",
        &eligible.to_string(),
        "waiting to start",
    );
    card(
        o,
        "Blocked jobs",
        &blocked.to_string(),
        "held or blocked by policy",
    );
    card(
        o,
        "Processors in use",
        &format!("{} / {}", c.alloc_procs, c.up_procs),
        &pct(util),
    );
    card(
        o,
        "Nodes active",
        &format!("{} / {}", c.active_nodes, c.up_nodes),
        &format!("{} configured", c.config_nodes),
    );
    let st = &s.stats;
    card(
        o,
        "Scheduler",
        if st.paused { "paused" } else { "running" },
        &format!("{} iterations, last {:.1} ms", st.iterations, st.last_ms),
    );
    card(
        o,
        "Since start",
        &st.jobs_started.to_string(),
        &format!(
            "jobs started, {} backfilled, {} preempted",
            st.jobs_backfilled, st.jobs_preempted
        ),
    );
    o.push_str("</div>");
    // The kept intervals of the statistics profile, with the interval in
    // progress (or the live value) as the last point.
    let pts: Vec<Sample> = super::samples(s);
    let prof = &s.accounting.profile;
    let _ = write!(
        o,
        "<h2>Utilisation over time</h2><p class=\"note\">Average per {} interval \
(PROFILEDURATION), the last {} kept (PROFILECOUNT); the last point is the interval in progress.</p>",
        dur(prof.duration),
        prof.count
    );
    o.push_str(&svg::line_chart(
        &[(
            "utilisation %",
            "#2f7ed8",
            pts.iter()
                .map(|p| (p.time, p.utilization * 100.0))
                .collect(),
        )],
        Some(100.0),
    ));
    o.push_str("<h2>Queue length over time</h2>");
    o.push_str(&svg::line_chart(
        &[
            (
                "queued jobs",
                "#d8572f",
                pts.iter().map(|p| (p.time, p.queued)).collect(),
            ),
            (
                "running jobs",
                "#3a9e5a",
                pts.iter().map(|p| (p.time, p.running)).collect(),
            ),
        ],
        None,
    ));
    // The most recent intervals as numbers, newest first.
    let _ = write!(
        o,
        "<details><summary>Recent intervals</summary><table class=\"intervals\"><tr><th>START</th>\
<th class=\"n\">AVG UTIL</th><th class=\"n\">MAX UTIL</th><th class=\"n\">AVG RUNNING</th>\
<th class=\"n\">AVG QUEUED</th><th class=\"n\">MAX QUEUED</th></tr>"
    );
    for p in pts.iter().rev().take(INTERVAL_ROWS) {
        let _ = write!(
            o,
            "<tr data-start=\"{}\"{}><td>{}{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td>\
<td class=\"n\">{:.1}</td><td class=\"n\">{:.1}</td><td class=\"n\">{}</td></tr>",
            p.time,
            if p.current { " class=\"current\"" } else { "" },
            date(p.time),
            if p.current { " (in progress)" } else { "" },
            pct(p.utilization),
            pct(p.util_max),
            p.running,
            p.queued,
            p.queued_max
        );
    }
    o.push_str("</table></details>");
}

/// Page links: `page` of `pages` (1-based) at `path`.
fn pager(o: &mut String, path: &str, page: usize, pages: usize, total: usize, what: &str) {
    let _ = write!(o, "<div class=\"pager\">");
    if page > 1 {
        let _ = write!(o, "<a href=\"{path}?page=1\">&laquo; first</a>");
        let _ = write!(
            o,
            "<a href=\"{path}?page={}\">&lsaquo; previous</a>",
            page - 1
        );
    }
    let _ = write!(
        o,
        "<span>page {page} of {pages} &middot; {total} {what}</span>"
    );
    if page < pages {
        let _ = write!(o, "<a href=\"{path}?page={}\">next &rsaquo;</a>", page + 1);
        let _ = write!(o, "<a href=\"{path}?page={pages}\">last &raquo;</a>");
    }
    o.push_str("</div>");
}

/// Clamps a 1-based page to `1..=pages` and returns `(page, pages, range)`.
fn slice(page: usize, total: usize) -> (usize, usize, std::ops::Range<usize>) {
    let pages = total.div_ceil(PAGE_ROWS).max(1);
    let page = page.clamp(1, pages);
    let from = (page - 1) * PAGE_ROWS;
    (page, pages, from..(from + PAGE_ROWS).min(total))
}

/// showq's rows in showq's order (active by end, eligible and blocked by
/// priority rank), paged; only the page's rows are built.
fn queue(o: &mut String, s: &Snapshot, page: usize) {
    let mut keyed: Vec<(u8, i64, u64, &Job)> = Vec::new();
    let mut counts = [0usize; 3];
    for j in s.state.jobs() {
        let (sec, key) = match crate::views::section(s, j) {
            Section::Active => (0u8, j.expected_end().unwrap_or(i64::MAX)),
            Section::Eligible => (1, rank(s, j)),
            Section::Blocked => (2, rank(s, j)),
            Section::Completed => continue,
        };
        counts[usize::from(sec)] += 1;
        keyed.push((sec, key, j.id, j));
    }
    let total = keyed.len();
    let (page, pages, range) = slice(page, total);
    // Only the page's rows need the full order up to them.
    let end = range.end;
    if end < total {
        keyed.select_nth_unstable_by_key(end, |(sec, key, id, _)| (*sec, *key, *id));
        keyed.truncate(end);
    }
    keyed.sort_unstable_by_key(|(sec, key, id, _)| (*sec, *key, *id));
    let _ = write!(o, "<h1>Queue</h1><div class=\"cards\">");
    card(o, "Active", &counts[0].to_string(), "");
    card(o, "Eligible", &counts[1].to_string(), "");
    card(o, "Blocked", &counts[2].to_string(), "");
    o.push_str("</div><h2>Jobs (as showq shows them)</h2>");
    pager(o, "/queue", page, pages, total, "jobs");
    o.push_str(
        "<table><tr><th>JOBID</th><th>USERNAME</th><th>STATE</th><th class=\"n\">PROCS</th>\
<th class=\"n\">REMAINING / WCLIMIT</th><th>STARTTIME / QUEUETIME</th></tr>",
    );
    let mut last = None;
    for &(sec, _, _, j) in keyed.get(range.start..range.end).unwrap_or(&[]) {
        if last != Some(sec) {
            let title = ["active jobs", "eligible jobs", "blocked jobs"][usize::from(sec)];
            let _ = write!(o, "<tr><td class=\"sec\" colspan=\"6\">{title}</td></tr>");
            last = Some(sec);
        }
        let (time, when) = if sec == 0 {
            let start = j.run.as_ref().map_or(s.now, |r| r.start_time);
            let remaining = j
                .expected_end()
                .map_or(String::from("-"), |e| dur(e - s.now));
            (remaining, date(start))
        } else {
            (
                j.walltime.map_or(String::from("-"), dur),
                date(j.submit_time),
            )
        };
        let _ = write!(
            o,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td>{}</td></tr>",
            j.id,
            esc(&j.cred.user),
            esc(j.display_state().as_str()),
            j.procs(),
            time,
            when
        );
    }
    if total == 0 {
        o.push_str("<tr><td class=\"empty\" colspan=\"6\">no jobs</td></tr>");
    }
    o.push_str("</table>");
}

fn rank(s: &Snapshot, j: &Job) -> i64 {
    s.plan
        .decisions
        .get(&j.id)
        .map_or(i64::from(u32::MAX), |d| i64::from(d.rank))
}

/// The nodes (what checknode shows of each: state, processors, memory,
/// features, the jobs on it).
fn nodes(o: &mut String, s: &Snapshot, page: usize) {
    let view = crate::views::nodes(s, None);
    let total = view.nodes.len();
    let (page, pages, range) = slice(page, total);
    o.push_str("<h1>Nodes</h1>");
    pager(o, "/nodes", page, pages, total, "nodes");
    o.push_str(
        "<table><tr><th>NODE</th><th>STATE</th><th class=\"n\">PROCS USED / TOTAL</th>\
<th class=\"n\">MEMORY USED / TOTAL (MB)</th><th>PARTITION</th><th>FEATURES</th><th>JOBS</th></tr>",
    );
    for n in view.nodes.get(range).unwrap_or(&[]) {
        let jobs: Vec<String> = n.jobs.iter().map(u64::to_string).collect();
        let _ = write!(
            o,
            "<tr><td>{}</td><td>{}</td><td class=\"n\">{} / {}</td><td class=\"n\">{} / {}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(&n.name),
            esc(&n.state),
            n.procs_used,
            n.procs,
            n.mem_used_mb,
            n.mem_mb,
            esc(&n.partition),
            esc(&n.features.join(",")),
            esc(&jobs.join(" "))
        );
    }
    if total == 0 {
        o.push_str("<tr><td class=\"empty\" colspan=\"7\">no nodes</td></tr>");
    }
    o.push_str("</table>");
}

/// showres's reservations (jobs, administrative and standing).
fn reservations(o: &mut String, s: &Snapshot, page: usize) {
    let view = crate::views::reservations(s);
    let total = view.reservations.len();
    let (page, pages, range) = slice(page, total);
    o.push_str("<h1>Reservations</h1>");
    pager(o, "/reservations", page, pages, total, "reservations");
    o.push_str(
        "<table><tr><th>RESERVATIONID</th><th>TYPE</th><th>STATE</th><th>START</th><th>END</th>\
<th class=\"n\">DURATION</th><th class=\"n\">PROCS</th><th class=\"n\">NODES</th></tr>",
    );
    for r in view.reservations.get(range).unwrap_or(&[]) {
        let _ = write!(
            o,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr>",
            esc(&r.id),
            esc(&r.kind),
            esc(r.job_state.as_deref().unwrap_or("-")),
            date(r.start),
            r.end.map_or(String::from("-"), date),
            r.end.map_or(String::from("INFINITY"), |e| dur(e - r.start)),
            r.procs,
            r.nodes.len()
        );
    }
    if total == 0 {
        o.push_str("<tr><td class=\"empty\" colspan=\"8\">no reservations</td></tr>");
    }
    o.push_str("</table>");
}

/// Most bars the Gantt chart draws (the rest are counted).
const GANTT_ROWS: usize = 60;

/// The plan: running jobs until their expected end, the reserved jobs'
/// planned starts, and the backfill windows (showbf's rectangles of idle
/// processors from now).
fn plan(o: &mut String, s: &Snapshot) {
    let mut bars: Vec<svg::Bar> = Vec::new();
    let mut running: Vec<&Job> = s.state.active().collect();
    running.sort_by_key(|j| (j.expected_end().unwrap_or(i64::MAX), j.id));
    let (shown_running, more_running) = (
        running.len().min(GANTT_ROWS),
        running.len().saturating_sub(GANTT_ROWS),
    );
    for j in running.iter().take(shown_running) {
        let start = j.run.as_ref().map_or(s.now, |r| r.start_time);
        bars.push(svg::Bar {
            label: format!("{} {} ({}p)", j.id, j.cred.user, j.procs()),
            start,
            end: j.expected_end(),
            kind: svg::BarKind::Running,
        });
    }
    let mut reserved = s.plan.reservations.clone();
    reserved.sort_by_key(|r| (r.start, r.job));
    let more_reserved = reserved.len().saturating_sub(GANTT_ROWS);
    for r in reserved.iter().take(GANTT_ROWS) {
        let Some(j) = s.state.job(r.job) else {
            continue;
        };
        bars.push(svg::Bar {
            label: format!("{} {} ({}p)", j.id, j.cred.user, j.procs()),
            start: r.start,
            end: r.end,
            kind: svg::BarKind::Reserved,
        });
    }
    let windows = arches_core::windows_in_plan(
        &s.state,
        &s.cfg.policy,
        &s.plan,
        s.now,
        &arches_core::windows::WindowQuery::default(),
    );
    for w in windows.iter().take(GANTT_ROWS / 2) {
        bars.push(svg::Bar {
            label: format!("window: {} procs on {} nodes", w.procs, w.nodes),
            start: w.start,
            end: w.duration.map(|d| w.start + d),
            kind: svg::BarKind::Window,
        });
    }
    o.push_str("<h1>Plan</h1>");
    let _ = write!(o, "<div class=\"cards\">");
    card(
        o,
        "Running",
        &running.len().to_string(),
        "until their expected end",
    );
    card(
        o,
        "Reserved",
        &reserved.len().to_string(),
        "planned starts (RESERVATIONDEPTH)",
    );
    card(
        o,
        "Backfill windows",
        &windows.len().to_string(),
        "idle processors from now",
    );
    o.push_str("</div><h2>Gantt chart</h2>");
    o.push_str(&svg::gantt(&bars, s.now));
    if more_running + more_reserved > 0 {
        let _ = write!(
            o,
            "<p class=\"empty\">and {more_running} more running, {more_reserved} more reserved jobs</p>"
        );
    }
    o.push_str(
        "<h2>Backfill windows</h2><table><tr><th class=\"n\">PROCS</th><th class=\"n\">NODES</th>\
<th class=\"n\">DURATION</th><th>START</th></tr>",
    );
    for w in &windows {
        let _ = write!(
            o,
            "<tr><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td>{}</td></tr>",
            w.procs,
            w.nodes,
            w.duration.map_or(String::from("INFINITY"), dur),
            date(w.start)
        );
    }
    if windows.is_empty() {
        o.push_str("<tr><td class=\"empty\" colspan=\"4\">no idle processors</td></tr>");
    }
    o.push_str("</table>");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_are_utc() {
        assert_eq!(date(0), "1970-01-01 00:00:00");
        assert_eq!(date(951_782_400), "2000-02-29 00:00:00");
        assert_eq!(date(1_700_000_000), "2023-11-14 22:13:20");
    }

    #[test]
    fn text_is_escaped() {
        assert_eq!(
            esc("<a href='x'>&\"</a>"),
            "&lt;a href=&#39;x&#39;&gt;&amp;&quot;&lt;/a&gt;"
        );
    }

    #[test]
    fn pages_are_clamped() {
        assert_eq!(slice(0, 0), (1, 1, 0..0));
        assert_eq!(slice(3, 250), (3, 3, 200..250));
        assert_eq!(slice(9, 250), (3, 3, 200..250));
        assert_eq!(slice(1, 100), (1, 1, 0..100));
    }
}
