//! Data staging (Moab §17.12): checkjob's `StageIn:`/`StageOut:` lines, the
//! storage node of checknode (the seed's `checknode -v storage.koa` example,
//! moab-formats.md §4.4) and the storage RMs of `mdiag -R` (with the
//! `RM[name] Failures:` list of the Maui/Moab `mdiag -R` sample).
//!
//! Every size follows one rule, [`arches_api::size_text`]: whole MB
//! (rounded down) from 1 MB on, else bytes. Times are Moab's: durations as
//! `MULToTString`, dates as the ctime-style DString.

use arches_api::{size_text, JobDetail, StageWait, StorageInfo};

use crate::fmt::{date, duration};

/// `91 MB` from 1 MB on, else `3091 bytes`.
pub fn size(bytes: u64) -> String {
    size_text(bytes)
}

/// Whole MB of a byte count (rounded down, as every size shown).
fn mb(bytes: u64) -> u64 {
    bytes / (1024 * 1024)
}

/// A destination as Moab shows it: the path of a `file://` URL.
pub fn shown(url: &str) -> &str {
    url.strip_prefix("file://").unwrap_or(url)
}

/// `37 of 83 MB` (unit of the total).
fn progress(done: u64, total: u64) -> String {
    if total >= 1024 * 1024 {
        format!("{} of {} MB", mb(done), mb(total))
    } else {
        format!("{done} of {total} bytes")
    }
}

/// checkjob's note on why a job's stage-in has not begun.
pub fn wait_note(w: &StageWait) -> String {
    match w {
        StageWait::MaxDsop { limit } => format!(
            "NOTE:  stage-in not started: data staging operation limit reached (MAXDSOP={limit})"
        ),
        StageWait::NodeBusy { node, limit } => format!(
            "NOTE:  stage-in not started: {limit} stage-in{} to node {node} active (MAXDSOPPERNODE={limit})",
            if *limit == 1 { "" } else { "s" }
        ),
        StageWait::TargetUsage {
            dedicated,
            size: s,
            target,
        } => format!(
            "NOTE:  stage-in not started: staging {} would exceed the target storage usage ({} of {} MB dedicated)",
            size(*s),
            mb(*dedicated),
            mb(*target)
        ),
        StageWait::DiskFull { avail, size: s } => format!(
            "NOTE:  stage-in not started: insufficient disk at the storage manager ({} MB available, {} needed)",
            mb(*avail),
            size(*s)
        ),
        StageWait::Begin { at } => {
            format!("NOTE:  stage-in scheduled to begin at {}", date(*at))
        }
    }
}

/// `StageIn:  File=$HOME/data14.txt  Size=91 MB  Status=complete`, one per
/// file (destination only), the reason a stage-in waits, then a blank line;
/// nothing without staging.
pub fn checkjob_lines(d: &JobDetail, verbose: bool) -> String {
    let mut o = String::new();
    let mut notes = Vec::new();
    for l in &d.staging {
        let kind = if l.direction == "out" {
            "StageOut:"
        } else {
            "StageIn: "
        };
        let sz = l.size.map_or_else(|| "unknown".to_string(), size);
        o.push_str(&format!(
            "{kind} File={}  Size={sz}  Status={}",
            shown(&l.dest),
            l.status
        ));
        if l.status == "active" {
            match l.size {
                Some(total) => {
                    o.push_str(&format!("  Transferred={}", progress(l.transferred, total)))
                }
                None => o.push_str(&format!("  Transferred={}", size(l.transferred))),
            }
        }
        if let Some(t) = l.ready.filter(|_| l.status != "complete") {
            o.push_str(&format!("  DataReady={}", date(t)));
        }
        o.push('\n');
        if verbose {
            o.push_str(&format!("  Transfer URL: {},{}\n", l.src, l.dest));
            if let Some(n) = &l.node {
                o.push_str(&format!("  Node: {n}\n"));
            }
            if let Some(e) = &l.error {
                o.push_str(&format!("  Errors: \"{e}\"\n"));
            }
        }
        if let Some(w) = &l.wait {
            notes.push(wait_note(w));
        }
    }
    for n in notes {
        o.push_str(&n);
        o.push('\n');
    }
    if !o.is_empty() {
        o.push('\n');
    }
    o
}

/// Whole GB as Moab prints configured disk (`71G`).
fn gb(mb: u64) -> String {
    format!("{}G", mb / 1024)
}

/// `100.00` percent of `part` in `total` (0 for an empty total).
fn pct(part: i64, total: i64) -> f64 {
    if total <= 0 {
        0.0
    } else {
        100.0 * part as f64 / total as f64
    }
}

/// checknode of a storage node (the seed's `checknode -v storage.koa`).
pub fn storage_node(s: &StorageInfo, now: i64, verbose: u8) -> String {
    let mut o = format!("node {}\n\n", s.node);
    let state = if s.state.is_empty() { "Idle" } else { &s.state };
    o.push_str(&format!(
        "State:  {state:>8}  (in current state for {})\n",
        duration((now - s.state_since).max(0))
    ));
    let mut cfg = Vec::new();
    if let Some(d) = s.disk_mb {
        cfg.push(format!("DISK: {}", gb(d)));
    }
    if let Some(m) = s.max_dsop {
        cfg.push(format!("dsop: {m}"));
    }
    o.push_str(&format!(
        "Configured Resources: {}\n",
        if cfg.is_empty() {
            "---".to_string()
        } else {
            cfg.join("  ")
        }
    ));
    match (s.disk_mb, s.disk_avail_mb) {
        (Some(c), Some(a)) => o.push_str(&format!(
            "Utilized   Resources: DISK: {}\n",
            gb(c.saturating_sub(a))
        )),
        _ => o.push_str("Utilized   Resources: ---\n"),
    }
    // No job runs on a storage node: nothing is dedicated (the seed prints
    // `---` with an operation active).
    o.push_str("Dedicated  Resources: ---\n");
    if s.max_dsop.is_some() || verbose > 0 {
        o.push_str(&format!(
            "Active Data Staging Operations:  {}",
            s.active_ops
        ));
        if let Some(m) = s.max_dsop {
            o.push_str(&format!(" (limit: {m})"));
        }
        o.push('\n');
        for op in s
            .operations
            .iter()
            .filter(|op| op.status == "active" || (verbose > 0 && op.status != "pending"))
        {
            let amount = match (op.status.as_str(), op.size) {
                ("active", Some(total)) => progress(op.transferred, total),
                (_, Some(total)) => size(total),
                (_, None) => size(op.transferred),
            };
            o.push_str(&format!(
                "  job {:>16}  {:>8} ({amount})  ({})\n",
                op.job,
                op.status,
                shown(&op.dest)
            ));
        }
        o.push('\n');
    }
    if let Some(c) = s.disk_mb {
        o.push_str(&format!(
            "Dedicated Storage Manager Disk Usage:  {} of {c} MB",
            s.dedicated_mb
        ));
        if let Some(t) = s.target_usage {
            o.push_str(&format!(
                " (Target={} MB)",
                (c as f64 * t / 100.0).floor() as u64
            ));
        }
        o.push('\n');
    }
    if let Some(u) = &s.cluster_query_url {
        o.push_str(&format!("Cluster Query URL:  {u}\n"));
    }
    o.push_str("Partition:  ALL  Rack/Slot:  ---\n");
    o.push_str("Flags:      rmdetected\n");
    let rm_type = if s.rm_type.is_empty() {
        "NATIVE"
    } else {
        &s.rm_type
    };
    o.push_str(&format!("RM[{}]:    TYPE={rm_type}\n", s.rm));
    if verbose > 0 {
        for f in &s.failures {
            o.push_str(&format!(
                "  WARNING:  {} {}: {}\n",
                date(f.time),
                f.op,
                f.message
            ));
        }
    }
    let total = (now - s.since).max(0);
    let active = s.active_secs.clamp(0, total);
    o.push_str(&format!(
        "\nTotal Time: {}  Up: {} ({:.2}%)  Active: {} ({:.2}%)\n",
        duration(total),
        duration(total),
        if total > 0 { 100.0 } else { 0.0 },
        duration(active),
        pct(active, total)
    ));
    o.push_str("\nReservations:  ---\n");
    o
}

/// `mdiag -R`: one block per storage RM, then its failures as Moab lists
/// an RM's (`RM[name] Failures:` / `  <date>  <function>  '<message>'`).
pub fn rm_block(s: &StorageInfo, now: i64) -> String {
    let state = if s.state == "Down" {
        "Corrupt"
    } else {
        "Active"
    };
    let mut o = format!(
        "RM[{}]  Type: {}  State: {state}  ResourceType: STORAGE\n",
        s.rm,
        if s.rm_type.is_empty() {
            "NATIVE"
        } else {
            &s.rm_type
        }
    );
    o.push_str(&format!("  {:<20}{}\n", "Data Stage Model:", s.model));
    for (label, url) in [
        ("Cluster Query URL:", &s.cluster_query_url),
        ("System Query URL:", &s.system_query_url),
        ("System Modify URL:", &s.system_modify_url),
    ] {
        if let Some(u) = url {
            o.push_str(&format!("  {label:<20}{u}\n"));
        }
    }
    if let Some(c) = s.disk_mb {
        o.push_str(&format!(
            "  {:<20}{} of {c} MB dedicated, {} MB available\n",
            "Disk:",
            s.dedicated_mb,
            s.disk_avail_mb.unwrap_or(0)
        ));
    }
    if let Some(r) = s.rate_kbps {
        o.push_str(&format!("  {:<20}{r:.1} KB/s\n", "Transfer Rate:"));
    }
    o.push_str(&format!(
        "  {:<20}{} active{}  ({} interface calls in progress)\n",
        "Stage Operations:",
        s.active_ops,
        s.max_dsop
            .map_or(String::new(), |m| format!(" (limit: {m})")),
        s.in_flight
    ));
    if s.last_update > 0 {
        o.push_str(&format!(
            "  {:<20}{} ago\n",
            "Last Update:",
            duration((now - s.last_update).max(0))
        ));
    }
    if !s.failures.is_empty() {
        o.push_str(&format!("\nRM[{}] Failures:\n", s.rm));
        for f in &s.failures {
            o.push_str(&format!(
                "  {}  {:<16} '{}'\n",
                date(f.time),
                f.op,
                f.message
            ));
        }
    }
    o.push('\n');
    o
}
