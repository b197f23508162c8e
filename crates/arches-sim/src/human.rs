//! Arches' own human-facing formats (never Moab's, which stay byte-exact in
//! arches-cli's renderers): tables drawn with comfy-table and durations
//! given the human way (humantime's `30d`, `2h 30m`) next to plain seconds
//! and Moab's `[[DD:]HH:]MM:SS`.
//!
//! - [`table`]: one look for every Arches table (the simulation summary,
//!   comparisons of runs; reusable by any other report such as a parameter
//!   sweep). Deterministic: the width never depends on the terminal.
//! - [`parse_secs`]: the value parser of every Arches duration option
//!   (`--until`, `--gantt-from`, `--gantt-to`).
//! - [`summary_table`] / [`comparison_table`]: `moab simulate
//!   --summary-format table` and `moab simulate --compare A.json B.json`.

use comfy_table::{presets, CellAlignment, ContentArrangement, Table};
use serde_json::Value;

/// A table with Arches' look: a header row, thin borders, numbers aligned
/// right (every column but the first), no terminal-dependent wrapping.
pub fn table<H, R, C>(header: H, rows: R) -> Table
where
    H: IntoIterator,
    H::Item: Into<comfy_table::Cell>,
    R: IntoIterator<Item = C>,
    C: IntoIterator,
    C::Item: Into<comfy_table::Cell>,
{
    let mut t = Table::new();
    t.load_preset(presets::UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Disabled)
        .set_header(header);
    for r in rows {
        t.add_row(r);
    }
    let columns = t.column_count();
    for i in 1..columns {
        if let Some(c) = t.column_mut(i) {
            c.set_cell_alignment(CellAlignment::Right);
        }
    }
    t
}

/// A duration option: plain seconds (`3600`), Moab's `[[DD:]HH:]MM:SS`
/// (`1:00:00`, `2:00:00:00`) or a human duration (`30d`, `2h 30m`, `90s`).
pub fn parse_secs(text: &str) -> Result<i64, String> {
    let s = text.trim();
    if let Ok(n) = s.parse::<i64>() {
        if n < 0 {
            return Err(format!("'{text}': a duration cannot be negative"));
        }
        return Ok(n);
    }
    if s.contains(':') {
        return arches_core::timespec::parse_duration(s).map_err(|e| e.to_string());
    }
    let d = humantime::parse_duration(s).map_err(|e| {
        format!("'{text}': {e} (give seconds, [[DD:]HH:]MM:SS or a duration such as 30d, 2h 30m)")
    })?;
    i64::try_from(d.as_secs()).map_err(|_| format!("'{text}': too large"))
}

/// A number of seconds the human way (`1h 30m`; `0s`).
pub fn format_secs(secs: f64) -> String {
    if !secs.is_finite() || secs < 0.0 {
        return "-".to_string();
    }
    humantime::format_duration(std::time::Duration::from_secs(secs.round() as u64)).to_string()
}

/// The rows of the human summary and of comparisons: label and how to read
/// the value from a summary JSON document.
const ROWS: &[(&str, &str, Kind)] = &[
    ("Processors", "/machine_procs", Kind::Count),
    ("Jobs finished", "/jobs", Kind::Count),
    ("Average wait", "/avg_wait_s", Kind::Secs),
    ("Maximum wait", "/max_wait_s", Kind::Secs),
    (
        "Average bounded slowdown (10 s)",
        "/avg_bsld10",
        Kind::Ratio,
    ),
    ("Utilisation", "/utilization", Kind::Percent),
    ("Makespan", "/makespan_s", Kind::Secs),
    ("Backfilled jobs", "/backfilled_jobs", Kind::Count),
    ("Preemptions", "/preemptions", Kind::Count),
    ("Jobs never started", "/never_started", Kind::Len),
    ("Scheduling iterations", "/iterations", Kind::Count),
    ("Replay wall time", "/sim_wall_s", Kind::Wall),
];

#[derive(Clone, Copy)]
enum Kind {
    Count,
    Secs,
    Ratio,
    Percent,
    Len,
    Wall,
}

fn cell(v: &Value, pointer: &str, kind: Kind) -> String {
    let Some(x) = v.pointer(pointer) else {
        return "-".to_string();
    };
    match kind {
        Kind::Len => x.as_array().map_or("-".into(), |a| a.len().to_string()),
        _ => {
            let Some(n) = x.as_f64() else {
                return "-".to_string();
            };
            match kind {
                Kind::Count => format!("{}", n as u64),
                Kind::Secs => format_secs(n),
                Kind::Ratio => format!("{n:.2}"),
                Kind::Percent => format!("{:.1} %", n * 100.0),
                Kind::Wall => format!("{n:.2} s"),
                Kind::Len => unreachable!("handled above"),
            }
        }
    }
}

/// `--summary-format table`: the summary as a two-column table.
pub fn summary_table(summary: &Value) -> Table {
    table(
        ["Metric", "Value"],
        ROWS.iter()
            .map(|(label, ptr, kind)| vec![label.to_string(), cell(summary, ptr, *kind)]),
    )
}

/// `--compare`: one column per summary (named by `names`), one row per
/// metric.
pub fn comparison_table(names: &[String], summaries: &[Value]) -> Table {
    let header = std::iter::once("Metric".to_string()).chain(names.iter().cloned());
    table(
        header,
        ROWS.iter().map(|(label, ptr, kind)| {
            std::iter::once(label.to_string())
                .chain(summaries.iter().map(|s| cell(s, ptr, *kind)))
                .collect::<Vec<_>>()
        }),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_in_every_form() {
        assert_eq!(parse_secs("3600"), Ok(3600));
        assert_eq!(parse_secs("1:00:00"), Ok(3600));
        assert_eq!(parse_secs("2:00:00:00"), Ok(172_800));
        assert_eq!(parse_secs("30d"), Ok(30 * 86_400));
        assert_eq!(parse_secs("2h 30m"), Ok(9_000));
        assert_eq!(parse_secs("90s"), Ok(90));
        assert!(parse_secs("-5").is_err());
        let e = parse_secs("soon").unwrap_err();
        assert!(e.contains("'soon'") && e.contains("30d"), "{e}");
    }

    #[test]
    fn summary_and_comparison_tables() {
        let a: Value = serde_json::json!({"machine_procs": 8, "jobs": 40, "avg_wait_s": 5400.0,
            "max_wait_s": 7200, "avg_bsld10": 3.25, "utilization": 0.5, "makespan_s": 86400,
            "backfilled_jobs": 7, "preemptions": 0, "never_started": [], "iterations": 99,
            "sim_wall_s": 0.5});
        let t = summary_table(&a).to_string();
        assert!(t.contains("│ Average wait"), "{t}");
        assert!(t.contains("1h 30m"), "{t}");
        assert!(t.contains("50.0 %"), "{t}");
        assert!(t.contains("1day"), "{t}");
        let mut b = a.clone();
        b["avg_wait_s"] = serde_json::json!(60.0);
        let t = comparison_table(&["easy".into(), "cons".into()], &[a, b]).to_string();
        let line = t.lines().find(|l| l.contains("Average wait")).unwrap();
        assert!(line.contains("1h 30m") && line.contains("1m"), "{line}");
        let head = t.lines().nth(1).unwrap();
        assert!(head.contains("easy") && head.contains("cons"), "{head}");
    }
}
