//! Job-centred mdiag reports: `-S` scheduler, `-p` priority (§8.6), `-b`
//! blocked jobs (§8.5), `-j` jobs (§8.4) and the running configuration. Cluster-wide reports are in [`super::cluster`].

use arches_api::{
    ConfigView, FairshareCred, FairshareView, JobsView, PriorityView, QueueView, SchedulerView,
    Section,
};

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

fn component_abbrev(c: &str) -> String {
    match c.to_ascii_uppercase().as_str() {
        "CRED" | "CREDENTIAL" => "Cred".into(),
        "FS" | "FAIRSHARE" => "FS".into(),
        "SERV" | "SERVICE" => "Serv".into(),
        "TARG" | "TARGET" => "Targ".into(),
        "RES" | "RESOURCE" => "Res".into(),
        "ATTR" | "ATTRIBUTE" => "Attr".into(),
        "USAGE" => "Usage".into(),
        _ => c.chars().take(5).collect(),
    }
}

fn sub_abbrev(s: &str) -> String {
    match s.to_ascii_uppercase().as_str() {
        "QOS" => "QOS".into(),
        "ACCOUNT" | "ACCT" | "ACCNT" => "Accnt".into(),
        "QUEUETIME" | "QTIME" => "QTime".into(),
        "XFACTOR" | "XF" => "XFctr".into(),
        "BYPASS" | "BYP" => "Byp".into(),
        "USER" => "User".into(),
        "GROUP" => "Group".into(),
        "CLASS" => "Class".into(),
        "USERPRIO" | "UPRIO" => "UPrio".into(),
        "PROC" | "PROCS" => "Proc".into(),
        "NODE" | "NODES" => "Node".into(),
        "MEM" => "Mem".into(),
        "WALLTIME" => "WTime".into(),
        _ => s.chars().take(5).collect(),
    }
}

/// A raw value squeezed into five characters (`1218.`, `100.0`, `  2.7`).
fn squeeze(v: f64) -> String {
    let s = format!("{v:5.1}");
    s.chars().take(5).collect()
}

/// `mdiag -p`: one column per weighted component.
pub fn render_priority(p: &PriorityView) -> String {
    let cols: Vec<&(String, String, i64, i64)> =
        p.weights.iter().filter(|w| w.2 != 0 && w.3 != 0).collect();
    let mut o = String::from("diagnosing job priority information (partition: ALL)\n\n");
    let mut head = format!("{:<22} {:>8}*", "Job", "PRIORITY");
    let mut weights = format!("{:>20}   {:>8}  ", "Weights", "--------");
    for (i, (c, s, cw, sw)) in cols.iter().map(|w| (&w.0, &w.1, w.2, w.3)).enumerate() {
        let sep = if i == 0 { " " } else { "" };
        head.push_str(&format!(
            "{sep}{:>6}({:>5})",
            component_abbrev(c),
            sub_abbrev(s)
        ));
        weights.push_str(&format!("{cw:>6}({sw:>5})"));
    }
    o.push_str(&head);
    o.push('\n');
    o.push_str(&weights);
    o.push_str("\n\n");
    let mut totals = vec![0.0f64; cols.len()];
    let mut prio_total = 0.0f64;
    for j in &p.jobs {
        let star = if j.system { "*" } else { " " };
        let mut line = format!("{:<22} {:>8}{star}", j.id, j.priority);
        prio_total += j.priority as f64;
        for (i, w) in cols.iter().enumerate() {
            let comp = j
                .components
                .iter()
                .find(|c| c.component == w.0 && c.sub == w.1);
            let (value, contrib) = comp.map_or((0.0, 0.0), |c| (c.value, c.contribution));
            totals[i] += contrib;
            let pct = if j.priority != 0 {
                contrib * 100.0 / j.priority as f64
            } else {
                0.0
            };
            let sep = if i == 0 { " " } else { "" };
            line.push_str(&format!("{sep}{pct:>6.1}({})", squeeze(value)));
        }
        o.push_str(&line);
        o.push('\n');
    }
    let mut pc = format!("\n{:<20}   {:>8}  ", "Percent Contribution", "--------");
    for t in &totals {
        let pct = if prio_total != 0.0 {
            t * 100.0 / prio_total
        } else {
            0.0
        };
        pc.push_str(&format!("{pct:>6.1}({})", squeeze(pct)));
    }
    o.push_str(&pc);
    o.push_str("\n\n* indicates system prio set on job\n");
    o
}

/// `mdiag -b`: why blocked jobs are blocked.
pub fn render_blocked(q: &QueueView) -> String {
    render_blocked_at(q, "SOFT")
}

/// `mdiag -b -l LEVEL`: the header names the policy level asked for; the
/// reasons are the scheduler's own (Arches applies soft and hard limits in
/// one pass, docs/formats.md).
pub fn render_blocked_at(q: &QueueView, level: &str) -> String {
    let mut o = format!("Diagnosing blocked jobs (policylevel {level}  partition ALL)\n\n");
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
        let id = j.id.to_string();
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
        // A hold already explains the block; otherwise give the daemon's reason.
        if let Some(r) = j.block_reason.as_ref().filter(|_| hold.is_none()) {
            if r.starts_with(&format!("job {id} ")) {
                o.push_str(&format!("{r}\n"));
            } else {
                o.push_str(&format!("job {id:<20} {r}\n"));
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
                s.id,
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
                s.id,
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
                s.id
            ));
        }
        if d.start_count >= 4 {
            o.push_str(&format!(
                "  WARNING:  job {} has failed to start {} times\n",
                s.id, d.start_count
            ));
        }
        // Preemption (seed §8.4.3): why a queued job did not preempt or what
        // it waits for; with -v also what running jobs are preemptible by.
        let show = verbose || s.section != Section::Active;
        for p in d.preemption.iter().filter(|_| show) {
            o.push_str(&format!("  NOTE:  job {}: {p}\n", s.id));
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
            let star = if fs_violates(c.percent, c.target) {
                "*"
            } else {
                ""
            };
            let target = match c.target {
                Some(t) => format!("{t:>6.2} "),
                None => "-------".to_string(),
            };
            o.push_str(&format!(
                "{:<15}{:>7.2} {target}",
                format!("{}{star}", c.name),
                c.percent
            ));
            for i in 0..depth {
                match c.intervals.get(i).copied().flatten() {
                    Some(v) => o.push_str(&format!("{v:>8.2}")),
                    None => o.push_str(" -------"),
                }
            }
            o.push('\n');
        }
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
            ],
            purge_secs: 0,
            scheduler: "Moab".into(),
        };
        let s = render_blocked(&q);
        assert_eq!(
            s,
            "Diagnosing blocked jobs (policylevel SOFT  partition ALL)\n\n\
job 2                    has the following hold(s) in place:  User\n\
job 5                    violates active HARD MAXJOB limit of 2 for user u\n\
job 6 violates idle HARD MAXIPROC limit\n"
        );
        let empty = QueueView { jobs: vec![], ..q };
        assert!(render_blocked(&empty).ends_with("no blocked jobs found\n"));
    }
}
