//! `--report FILE.html`: a self-contained page (inline SVG, no scripts, no
//! external resources) with the summary table and four charts — utilization
//! and queue length over time, average wait by job size, and a Gantt chart of
//! a window of the schedule (each job one row: its wait in grey, its run in
//! blue, backfilled runs in orange). The window is chosen with
//! `--gantt-from T --gantt-to T` (seconds after the trace start: every job
//! waiting or running in it, bars clipped to it, at most [`GANTT_MAX_ROWS`]
//! rows); by default it shows [`GANTT_JOBS`] jobs around the middle of the
//! replay.

use std::fmt::Write as _;

use crate::metrics::{JobRecord, Summary};

/// Time bins of the utilization and queue-length charts.
pub const TIME_BINS: usize = 200;
/// Jobs shown in the default Gantt window.
pub const GANTT_JOBS: usize = 80;
/// Most rows of a chosen Gantt window (the first jobs by start time).
pub const GANTT_MAX_ROWS: usize = 500;

/// The Gantt chart's window (seconds after the trace start); both `None`:
/// [`GANTT_JOBS`] jobs around the middle of the replay.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct GanttWindow {
    pub from: Option<i64>,
    pub to: Option<i64>,
}

const WIDTH: f64 = 900.0;
const HEIGHT: f64 = 220.0;
const MARGIN: f64 = 50.0;

/// Renders the report page from records with times relative to the trace
/// start.
pub fn render(
    title: &str,
    summary: &Summary,
    records: &[JobRecord],
    window: GanttWindow,
) -> String {
    let mut html = String::new();
    let _ = write!(
        html,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <title>{t}</title><style>body{{font-family:sans-serif;margin:2em;max-width:1000px}}\
         table{{border-collapse:collapse}}td,th{{border:1px solid #ccc;padding:2px 8px;text-align:right}}\
         svg{{background:#fafafa;border:1px solid #ddd}}</style></head><body>\n<h1>{t}</h1>\n",
        t = escape(title)
    );
    summary_table(&mut html, summary);
    if records.is_empty() {
        html.push_str("<p>No job finished: nothing to chart.</p>\n</body></html>\n");
        return html;
    }
    let (util, queue, t0, t1) = time_series(records, summary.machine_procs);
    html.push_str("<h2>Utilization over time</h2>\n");
    line_chart(&mut html, &util, t0, t1, 1.0, "fraction of processors busy");
    html.push_str("<h2>Queue length over time</h2>\n");
    let qmax = queue.iter().copied().fold(1.0, f64::max);
    line_chart(&mut html, &queue, t0, t1, qmax, "jobs waiting (average)");
    html.push_str("<h2>Average wait by job size (processors)</h2>\n");
    let bars: Vec<(String, f64)> = summary
        .breakdown
        .by_size
        .iter()
        .map(|b| (b.label.clone(), b.stats.avg_wait_s))
        .collect();
    bar_chart(&mut html, &bars, "average wait (s)");
    gantt(&mut html, records, window);
    html.push_str("</body></html>\n");
    html
}

fn summary_table(html: &mut String, s: &Summary) {
    let rows: [(&str, String); 11] = [
        ("machine processors", s.machine_procs.to_string()),
        ("jobs", s.jobs.to_string()),
        ("average wait (s)", format!("{:.0}", s.avg_wait_s)),
        (
            "average bounded slowdown (10 s)",
            format!("{:.2}", s.avg_bsld10),
        ),
        ("maximum wait (s)", s.max_wait_s.to_string()),
        ("utilization", format!("{:.4}", s.utilization)),
        ("makespan (s)", s.makespan_s.to_string()),
        ("backfilled jobs", s.backfilled_jobs.to_string()),
        (
            "preemptions / jobs preempted / lost work (proc-s) / preemptors' wait (s)",
            format!(
                "{} / {} / {:.0} / {:.0}",
                s.preemptions, s.preempted_jobs, s.preempt_lost_proc_s, s.preemptor_avg_wait_s
            ),
        ),
        (
            "pyss-style wait (min) / bsld",
            format!("{:.2} / {:.2}", s.pyss.avg_wait_min, s.pyss.avg_bsld10),
        ),
        ("scheduling iterations", s.iterations.to_string()),
    ];
    html.push_str("<table>\n");
    for (k, v) in rows {
        let _ = writeln!(html, "<tr><th>{k}</th><td>{v}</td></tr>");
    }
    html.push_str("</table>\n");
}

/// Per-bin average utilization and queue length over [first submit, last end].
fn time_series(records: &[JobRecord], procs: u32) -> (Vec<f64>, Vec<f64>, f64, f64) {
    let t0 = records.iter().map(|r| r.submit).min().unwrap_or(0) as f64;
    let t1 = records.iter().map(|r| r.end).max().unwrap_or(0) as f64;
    let width = ((t1 - t0) / TIME_BINS as f64).max(1.0);
    let mut busy = vec![0f64; TIME_BINS];
    let mut queued = vec![0f64; TIME_BINS];
    for r in records {
        spread(
            &mut busy,
            t0,
            width,
            r.start as f64,
            r.end as f64,
            f64::from(r.procs),
        );
        spread(&mut queued, t0, width, r.submit as f64, r.start as f64, 1.0);
    }
    let cap = f64::from(procs.max(1)) * width;
    let util = busy.iter().map(|b| b / cap).collect();
    let queue = queued.iter().map(|q| q / width).collect();
    (util, queue, t0, t1)
}

/// Adds `weight` × overlap of [a, b) with each bin.
fn spread(bins: &mut [f64], t0: f64, width: f64, a: f64, b: f64, weight: f64) {
    if b <= a {
        return;
    }
    let last = bins.len() - 1;
    let first_bin = (((a - t0) / width) as usize).min(last);
    let last_bin = (((b - t0) / width) as usize).min(last);
    for (i, bin) in bins
        .iter_mut()
        .enumerate()
        .take(last_bin + 1)
        .skip(first_bin)
    {
        let lo = t0 + i as f64 * width;
        let overlap = b.min(lo + width) - a.max(lo);
        if overlap > 0.0 {
            *bin += weight * overlap;
        }
    }
}

fn svg_open(html: &mut String, height: f64) {
    let _ = writeln!(
        html,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\">",
        WIDTH + 2.0 * MARGIN,
        height + 2.0 * MARGIN,
        WIDTH + 2.0 * MARGIN,
        height + 2.0 * MARGIN
    );
}

fn axes(html: &mut String, height: f64, y_label: &str, y_max: &str, x_lo: &str, x_hi: &str) {
    let (x0, y0) = (MARGIN, MARGIN + height);
    let _ = writeln!(
        html,
        "<line x1=\"{x0}\" y1=\"{MARGIN}\" x2=\"{x0}\" y2=\"{y0}\" stroke=\"#333\"/>\
         <line x1=\"{x0}\" y1=\"{y0}\" x2=\"{}\" y2=\"{y0}\" stroke=\"#333\"/>\
         <text x=\"{}\" y=\"{}\" font-size=\"11\" text-anchor=\"end\">{}</text>\
         <text x=\"{}\" y=\"{}\" font-size=\"11\" text-anchor=\"end\">0</text>\
         <text x=\"{x0}\" y=\"{}\" font-size=\"11\">{}</text>\
         <text x=\"{}\" y=\"{}\" font-size=\"11\" text-anchor=\"end\">{}</text>\
         <text x=\"{}\" y=\"{}\" font-size=\"11\">{}</text>",
        MARGIN + WIDTH,
        x0 - 4.0,
        MARGIN + 4.0,
        escape(y_max),
        x0 - 4.0,
        y0,
        y0 + 16.0,
        escape(x_lo),
        MARGIN + WIDTH,
        y0 + 16.0,
        escape(x_hi),
        x0 + 6.0,
        MARGIN - 8.0,
        escape(y_label)
    );
}

fn line_chart(html: &mut String, values: &[f64], t0: f64, t1: f64, y_max: f64, label: &str) {
    svg_open(html, HEIGHT);
    axes(
        html,
        HEIGHT,
        label,
        &format!("{y_max:.2}"),
        &format!("t={t0:.0} s"),
        &format!("t={t1:.0} s"),
    );
    let n = values.len().max(1) as f64;
    let points: Vec<String> = values
        .iter()
        .enumerate()
        .map(|(i, v)| {
            let x = MARGIN + (i as f64 + 0.5) / n * WIDTH;
            let y = MARGIN + HEIGHT - (v / y_max).min(1.0) * HEIGHT;
            format!("{x:.1},{y:.1}")
        })
        .collect();
    let _ = writeln!(
        html,
        "<polyline fill=\"none\" stroke=\"#1f77b4\" stroke-width=\"1.5\" points=\"{}\"/>\n</svg>",
        points.join(" ")
    );
}

fn bar_chart(html: &mut String, bars: &[(String, f64)], label: &str) {
    let y_max = bars.iter().map(|b| b.1).fold(1.0, f64::max);
    svg_open(html, HEIGHT);
    axes(html, HEIGHT, label, &format!("{y_max:.0}"), "", "");
    let slot = WIDTH / bars.len().max(1) as f64;
    for (i, (name, v)) in bars.iter().enumerate() {
        let h = v / y_max * HEIGHT;
        let x = MARGIN + i as f64 * slot + slot * 0.15;
        let _ = writeln!(
            html,
            "<rect x=\"{x:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{h:.1}\" fill=\"#1f77b4\">\
             <title>{}: {v:.0} s</title></rect>\
             <text x=\"{:.1}\" y=\"{:.1}\" font-size=\"11\" text-anchor=\"middle\">{}</text>",
            MARGIN + HEIGHT - h,
            slot * 0.7,
            escape(name),
            x + slot * 0.35,
            MARGIN + HEIGHT + 16.0,
            escape(name)
        );
    }
    html.push_str("</svg>\n");
}

/// The Gantt chart: the chosen window, or the jobs that started around the
/// middle of the run.
fn gantt(html: &mut String, records: &[JobRecord], window: GanttWindow) {
    let mut by_start: Vec<&JobRecord> = records.iter().collect();
    by_start.sort_by_key(|r| (r.start, r.id));
    let (rows, t0, t1, note) = if window == GanttWindow::default() {
        let mid = by_start.len() / 2;
        let lo = mid.saturating_sub(GANTT_JOBS / 2);
        let rows: Vec<&JobRecord> = by_start.iter().skip(lo).take(GANTT_JOBS).copied().collect();
        let t0 = rows.iter().map(|r| r.submit).min().unwrap_or(0);
        let t1 = rows.iter().map(|r| r.end).max().unwrap_or(1);
        (
            rows,
            t0,
            t1,
            format!("{} jobs around the middle of the replay", GANTT_JOBS),
        )
    } else {
        let t0 = window
            .from
            .unwrap_or_else(|| records.iter().map(|r| r.submit).min().unwrap_or(0));
        let t1 = window
            .to
            .unwrap_or_else(|| records.iter().map(|r| r.end).max().unwrap_or(0));
        let inside: Vec<&JobRecord> = by_start
            .iter()
            .filter(|r| r.submit < t1 && r.end > t0)
            .copied()
            .collect();
        let note = if inside.len() > GANTT_MAX_ROWS {
            format!(
                "the first {GANTT_MAX_ROWS} of the {} jobs waiting or running in the window, by start time",
                inside.len()
            )
        } else {
            format!("{} jobs waiting or running in the window", inside.len())
        };
        let rows = inside.into_iter().take(GANTT_MAX_ROWS).collect();
        (rows, t0, t1, note)
    };
    let _ = writeln!(
        html,
        "<h2>Gantt chart: t={t0} s to t={t1} s</h2>\n<p>{}</p>",
        escape(&note)
    );
    if rows.is_empty() {
        html.push_str("<p>No job in this window.</p>\n");
        return;
    }
    let (lo, hi) = (t0 as f64, t1 as f64);
    let span = (hi - lo).max(1.0);
    let row = 8.0;
    let height = row * rows.len() as f64;
    svg_open(html, height);
    axes(
        html,
        height,
        "jobs by start time (grey: waiting, blue: running, orange: backfilled)",
        "",
        &format!("t={t0} s"),
        &format!("t={t1} s"),
    );
    // Bars are clipped to the window.
    let x = |t: i64| MARGIN + ((t as f64).clamp(lo, hi) - lo) / span * WIDTH;
    for (i, r) in rows.iter().enumerate() {
        let y = MARGIN + i as f64 * row + 1.0;
        let colour = if r.backfilled { "#ff7f0e" } else { "#1f77b4" };
        let _ = writeln!(
            html,
            "<rect x=\"{:.1}\" y=\"{y:.1}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"#ccc\"/>\
             <rect x=\"{:.1}\" y=\"{y:.1}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"{colour}\">\
             <title>job {}: {} procs, wait {} s, run {} s</title></rect>",
            x(r.submit),
            (x(r.start) - x(r.submit)).max(0.0),
            row - 2.0,
            x(r.start),
            if r.end > t0 && r.start < t1 {
                (x(r.end) - x(r.start)).max(1.0)
            } else {
                0.0
            },
            row - 2.0,
            r.id,
            r.procs,
            r.wait(),
            r.run()
        );
    }
    html.push_str("</svg>\n");
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::summarize;

    fn rec(id: u64, submit: i64, start: i64, end: i64, procs: u32) -> JobRecord {
        JobRecord {
            id,
            submit,
            start,
            end,
            procs,
            walltime: end - start,
            runtime: end - start,
            backfilled: id % 2 == 0,
            suspended: 0,
            elastic_proc_s: 0,
        }
    }

    #[test]
    fn series_integrate_busy_time_and_queue() {
        // 4 procs; one 2-proc job runs the whole span, another waits half of it.
        let rs = [rec(1, 0, 0, 200, 2), rec(2, 0, 100, 200, 2)];
        let (util, queue, t0, t1) = time_series(&rs, 4);
        assert_eq!((t0, t1), (0.0, 200.0));
        assert!((util[0] - 0.5).abs() < 1e-9 && (util[TIME_BINS - 1] - 1.0).abs() < 1e-9);
        assert!((queue[0] - 1.0).abs() < 1e-9 && queue[TIME_BINS - 1].abs() < 1e-9);
        let total: f64 = util.iter().sum::<f64>() / TIME_BINS as f64;
        assert!((total - 0.75).abs() < 1e-9);
    }

    #[test]
    fn page_is_self_contained_with_four_charts() {
        let rs: Vec<JobRecord> = (1..=100)
            .map(|i| {
                rec(
                    i,
                    i as i64,
                    i as i64 * 2,
                    i as i64 * 2 + 50,
                    1 + (i % 4) as u32,
                )
            })
            .collect();
        let html = render(
            "KTH <EASY>",
            &summarize(&rs, 8),
            &rs,
            GanttWindow::default(),
        );
        assert_eq!(html.matches("<svg").count(), 4);
        assert!(html.contains("KTH &lt;EASY&gt;"));
        assert!(!html.contains("<script") && !html.contains("src=") && !html.contains("href="));
        assert!(html.contains("#ff7f0e"), "backfilled jobs are marked");
        let empty = render("none", &summarize(&[], 8), &[], GanttWindow::default());
        assert_eq!(empty.matches("<svg").count(), 0);
    }

    /// The `<title>`s of the Gantt bars: the jobs in the chart.
    fn gantt_jobs(html: &str) -> Vec<u64> {
        let gantt = &html[html.find("<h2>Gantt").expect("gantt")..];
        gantt
            .split("<title>job ")
            .skip(1)
            .map(|t| t.split(':').next().unwrap().parse().unwrap())
            .collect()
    }

    #[test]
    fn gantt_window_shows_the_jobs_waiting_or_running_in_it() {
        // Job i waits from 10i to 10i + 5 and runs until 10i + 20.
        let rs: Vec<JobRecord> = (1..=300)
            .map(|i| rec(i, 10 * i as i64, 10 * i as i64 + 5, 10 * i as i64 + 20, 1))
            .collect();
        let s = summarize(&rs, 8);
        let default = render("t", &s, &rs, GanttWindow::default());
        assert_eq!(gantt_jobs(&default).len(), GANTT_JOBS);
        assert_eq!(gantt_jobs(&default)[0], 111, "around the middle");
        let w = GanttWindow {
            from: Some(1000),
            to: Some(1100),
        };
        let html = render("t", &s, &rs, w);
        // Job 99 (990..1010) overlaps the window, job 98 (980..1000) not;
        // job 109 (1090..1110) does, job 110 (1100..) not.
        assert_eq!(gantt_jobs(&html), (99..=109).collect::<Vec<u64>>());
        assert!(html.contains("Gantt chart: t=1000 s to t=1100 s"), "{html}");
        assert!(html.contains("11 jobs waiting or running in the window"));
        // Bars stay inside the plot: nothing left of the axis or beyond it.
        for x in html.split("<rect x=\"").skip(1) {
            let v: f64 = x.split('"').next().unwrap().parse().unwrap();
            assert!((MARGIN..=MARGIN + WIDTH).contains(&v), "{v}");
        }
        // Only a start: to the end of the replay, rows capped.
        let open = render(
            "t",
            &s,
            &rs,
            GanttWindow {
                from: Some(0),
                to: None,
            },
        );
        assert_eq!(gantt_jobs(&open).len(), 300.min(GANTT_MAX_ROWS));
        let empty = render(
            "t",
            &s,
            &rs,
            GanttWindow {
                from: Some(99_000),
                to: Some(99_999),
            },
        );
        assert!(empty.contains("No job in this window."));
    }
}
