//! Inline SVG charts of the dashboard: line charts of the history and the
//! Gantt chart of the plan. Plain strings, no scripts.

use std::fmt::Write;

use arches_core::Time;

use super::pages::{date, esc};

const W: f64 = 1100.0;
const LEFT: f64 = 60.0;
const RIGHT: f64 = 20.0;

/// One line of a chart: name, colour, `(time, value)` points.
pub type Series<'a> = (&'a str, &'a str, Vec<(Time, f64)>);

/// A line chart of `series` over time; the y axis from 0 to `ymax` (else
/// the largest value).
pub fn line_chart(series: &[Series<'_>], ymax: Option<f64>) -> String {
    let h = 220.0;
    let (top, bottom) = (20.0, 30.0);
    let all = series.iter().flat_map(|s| s.2.iter());
    let (mut t0, mut t1, mut vmax) = (i64::MAX, i64::MIN, 0.0f64);
    for &(t, v) in all {
        t0 = t0.min(t);
        t1 = t1.max(t);
        vmax = vmax.max(v);
    }
    let mut o = format!("<svg width=\"{W}\" height=\"{h}\" viewBox=\"0 0 {W} {h}\" role=\"img\">");
    if t0 > t1 {
        o.push_str("<text x=\"20\" y=\"40\">no samples yet</text></svg>");
        return o;
    }
    let ymax = ymax.unwrap_or(vmax).max(1.0);
    let span = ((t1 - t0) as f64).max(1.0);
    let x = |t: Time| LEFT + (t - t0) as f64 / span * (W - LEFT - RIGHT);
    let y = |v: f64| top + (1.0 - v / ymax) * (h - top - bottom);
    // Axes and grid.
    for i in 0..=4 {
        let v = ymax * f64::from(i) / 4.0;
        let _ = write!(
            o,
            "<line x1=\"{LEFT}\" x2=\"{}\" y1=\"{y:.1}\" y2=\"{y:.1}\" stroke=\"#e3e6ec\"/>\
<text x=\"{}\" y=\"{:.1}\" font-size=\"11\" text-anchor=\"end\">{}</text>",
            W - RIGHT,
            LEFT - 6.0,
            y(v) + 4.0,
            trim(v),
            y = y(v)
        );
    }
    let _ = write!(
        o,
        "<text x=\"{LEFT}\" y=\"{}\" font-size=\"11\">{}</text>\
<text x=\"{}\" y=\"{}\" font-size=\"11\" text-anchor=\"end\">{}</text>",
        h - 8.0,
        date(t0),
        W - RIGHT,
        h - 8.0,
        date(t1)
    );
    for (i, (name, colour, pts)) in series.iter().enumerate() {
        let path: Vec<String> = pts
            .iter()
            .map(|&(t, v)| format!("{:.1},{:.1}", x(t), y(v)))
            .collect();
        if pts.len() == 1 {
            let _ = write!(
                o,
                "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"3\" fill=\"{colour}\"/>",
                x(pts[0].0),
                y(pts[0].1)
            );
        } else {
            let _ = write!(
                o,
                "<polyline fill=\"none\" stroke=\"{colour}\" stroke-width=\"2\" points=\"{}\"/>",
                path.join(" ")
            );
        }
        let lx = LEFT + 10.0 + 160.0 * i as f64;
        let _ = write!(
            o,
            "<rect x=\"{lx}\" y=\"6\" width=\"10\" height=\"10\" fill=\"{colour}\"/>\
<text x=\"{}\" y=\"15\" font-size=\"12\">{}</text>",
            lx + 14.0,
            esc(name)
        );
    }
    o.push_str("</svg>");
    o
}

fn trim(v: f64) -> String {
    if v.fract() == 0.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

/// What a bar of the Gantt chart is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BarKind {
    Running,
    Reserved,
    Window,
}

/// One bar: from `start` to `end` (`None`: no end known).
#[derive(Debug, Clone)]
pub struct Bar {
    pub label: String,
    pub start: Time,
    pub end: Option<Time>,
    pub kind: BarKind,
}

/// The Gantt chart from `now` to the last known end (a running job's past
/// is cut at `now`; an open end runs to the right edge).
pub fn gantt(bars: &[Bar], now: Time) -> String {
    let row = 18.0;
    let label_w = 230.0;
    let top = 28.0;
    let h = top + row * bars.len().max(1) as f64 + 26.0;
    let horizon = bars
        .iter()
        .filter_map(|b| b.end)
        .chain(bars.iter().map(|b| b.start))
        .max()
        .unwrap_or(now)
        .max(now + 60);
    let span = (horizon - now) as f64 * 1.05;
    let x = |t: Time| label_w + ((t - now).max(0) as f64 / span) * (W - label_w - RIGHT);
    let mut o = format!("<svg width=\"{W}\" height=\"{h}\" viewBox=\"0 0 {W} {h}\" role=\"img\">");
    for (i, (name, colour)) in [
        ("running", "#3a9e5a"),
        ("reserved (planned start)", "#e0a030"),
        ("backfill window", "#9fc3ee"),
    ]
    .iter()
    .enumerate()
    {
        let lx = label_w + 200.0 * i as f64;
        let _ = write!(
            o,
            "<rect x=\"{lx}\" y=\"6\" width=\"10\" height=\"10\" fill=\"{colour}\"/>\
<text x=\"{}\" y=\"15\" font-size=\"12\">{name}</text>",
            lx + 14.0
        );
    }
    if bars.is_empty() {
        o.push_str("<text x=\"20\" y=\"46\">nothing running, reserved or idle</text>");
    }
    for (i, b) in bars.iter().enumerate() {
        let y = top + row * i as f64;
        let (colour, stroke) = match b.kind {
            BarKind::Running => ("#3a9e5a", "none"),
            BarKind::Reserved => ("#e0a030", "none"),
            BarKind::Window => ("#9fc3ee", "#5b8fd0"),
        };
        let x0 = x(b.start);
        let x1 = b.end.map_or(W - RIGHT, x).max(x0 + 2.0);
        let _ = write!(
            o,
            "<text x=\"4\" y=\"{:.1}\" font-size=\"11\">{}</text>\
<rect x=\"{x0:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"{colour}\" stroke=\"{stroke}\">\
<title>{}: {} to {}</title></rect>",
            y + 12.0,
            esc(&b.label),
            y + 2.0,
            x1 - x0,
            row - 4.0,
            esc(&b.label),
            date(b.start.max(now)),
            b.end.map_or_else(|| "no limit".to_string(), date)
        );
    }
    let _ = write!(
        o,
        "<line x1=\"{label_w}\" x2=\"{label_w}\" y1=\"{top}\" y2=\"{:.1}\" stroke=\"#1d2330\"/>\
<text x=\"{label_w}\" y=\"{:.1}\" font-size=\"11\">now {}</text>\
<text x=\"{}\" y=\"{:.1}\" font-size=\"11\" text-anchor=\"end\">{}</text></svg>",
        h - 22.0,
        h - 8.0,
        date(now),
        W - RIGHT,
        h - 8.0,
        date(horizon)
    );
    o
}
