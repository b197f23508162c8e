//! Maui's and Moab's older single-purpose commands, kept for the scripts
//! that still call them: setspri (`mjobctl -p`), releaseres (`mrsvctl -r`),
//! setres (`mrsvctl -c`), resetstats (`mschedctl -f`) and showconfig
//! (`mschedctl -l config`). Each sends the request its modern equivalent
//! sends and prints the answer in the layout the command's own Moab page
//! documents (data/moab-golden/setspri-1, releaseres-1, setres-1..3,
//! resetstats-1, showconfig-1).

use arches_api::{
    ActionResponse, ConfigView, JobAction, JobActionRequest, JobSelect, ReservationRequest,
    ReservationsView, SchedulerControl,
};
use clap::Parser;

use crate::common::{print, print_action, Connection};
use crate::{fmt, EXIT_ERROR, EXIT_OK};

/// Prints the daemon's error lines and returns 1, or `None` when it succeeded.
fn failed(r: &ActionResponse) -> Option<u8> {
    if r.failed {
        let quiet = ActionResponse {
            stdout: Vec::new(),
            stderr: r.stderr.clone(),
            failed: true,
        };
        Some(print_action(&quiet))
    } else {
        None
    }
}

// ---------------------------------------------------------------------------
// setspri
// ---------------------------------------------------------------------------

/// Set or clear a job's system priority (deprecated: mjobctl -p).
#[derive(Debug, Parser)]
#[command(
    name = "setspri",
    about = "Set or clear a job's system priority (deprecated: use mjobctl -p)",
    long_about = "Set the system priority of one job: a job with a system priority ranks above every \
job without one, higher values first. PRIORITY is 1 (lowest) to 1000 (highest); 0 clears it so the \
job's policy-computed priority counts again. With -r the value (+/- up to 1,000,000,000) is added to \
the job's current system priority instead. For administrators. Prints `job system priority adjusted`."
)]
pub struct Setspri {
    /// Relative: add PRIORITY (may be negative) to the job's current system priority.
    #[arg(short = 'r')]
    pub relative: bool,
    /// System priority: 0 clears, 1 (lowest) to 1000 (highest); with -r a signed change.
    #[arg(value_name = "PRIORITY", allow_hyphen_values = true)]
    pub priority: String,
    /// The job.
    #[arg(value_name = "JOBID")]
    pub job: String,
    #[command(flatten)]
    pub conn: Connection,
}

/// The `JobAction` setspri sends (`0`, absolute, clears the system priority).
pub fn setspri_action(a: &Setspri) -> Result<JobAction, String> {
    let p = a.priority.trim();
    let digits = p.strip_prefix(['+', '-']).unwrap_or(p);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("ERROR:    invalid priority '{}'", a.priority));
    }
    if !a.relative && p.starts_with(['+', '-']) {
        return Err(format!(
            "ERROR:    invalid priority '{}' (a signed change needs -r)",
            a.priority
        ));
    }
    Ok(JobAction::SystemPriority {
        value: p.to_string(),
        relative: a.relative,
    })
}

/// Runs setspri.
pub fn setspri(a: Setspri) -> Result<u8, String> {
    let action = setspri_action(&a)?;
    let client = a.conn.client().map_err(|e| e.to_string())?;
    let r = client
        .job_action(&JobActionRequest {
            jobs: vec![a.job.clone()],
            action,
            select: JobSelect::default(),
        })
        .map_err(|e| e.to_string())?;
    if let Some(code) = failed(&r) {
        return Ok(code);
    }
    print("job system priority adjusted\n");
    Ok(EXIT_OK)
}

// ---------------------------------------------------------------------------
// releaseres
// ---------------------------------------------------------------------------

/// Release reservations (deprecated: mrsvctl -r).
#[derive(Debug, Parser)]
#[command(
    name = "releaseres",
    about = "Release reservations (deprecated: use mrsvctl -r)",
    long_about = "Release (delete) each reservation named, printing `released User reservation \
'<id>'` for each. Every id is acted on or reported: an unknown id prints `ERROR:  cannot locate \
reservation '<id>'` and the command exits 1 (the others are still released). Standing reservations \
(SRCFG) are changed in moab.cfg, not released. For administrators."
)]
pub struct Releaseres {
    /// Reservation ids.
    #[arg(value_name = "RSVID", required = true)]
    pub ids: Vec<String>,
    #[command(flatten)]
    pub conn: Connection,
}

/// Moab's releaseres lines for the daemon's `reservation <id> released`.
pub fn releaseres_lines(r: &ActionResponse) -> Vec<String> {
    r.stdout
        .iter()
        .map(|l| {
            match l
                .strip_prefix("reservation ")
                .and_then(|s| s.strip_suffix(" released"))
            {
                Some(id) => format!("released User reservation '{id}'"),
                None => l.clone(),
            }
        })
        .collect()
}

/// `^(?:ID$)` as the daemon reads it: `ID`'s regular-expression characters
/// escaped and anchored, so that releasing `system.1` can never take
/// `system.10` (the daemon tries exact ids first and then expressions).
pub fn exact_id_expr(id: &str) -> String {
    let mut o = String::with_capacity(id.len() + 4);
    for c in id.chars() {
        if "\\.+*?()|[]{}^$#&-~".contains(c) {
            o.push('\\');
        }
        o.push(c);
    }
    o.push('$');
    o
}

/// Runs releaseres.
pub fn releaseres(a: Releaseres) -> Result<u8, String> {
    let client = a.conn.client().map_err(|e| e.to_string())?;
    let known = client.reservations().map_err(|e| e.to_string())?;
    let mut code = EXIT_OK;
    for id in &a.ids {
        // A name is a name (Moab's releaseres takes no expressions): an id
        // no reservation has is an error, never widened to a pattern.
        if !known.reservations.iter().any(|r| &r.id == id) {
            eprintln!("ERROR:  cannot locate reservation '{id}'");
            code = EXIT_ERROR;
            continue;
        }
        let r = client
            .reservation_control(&ReservationRequest::Release {
                id: exact_id_expr(id),
                group: None,
            })
            .map_err(|e| e.to_string())?;
        let shown = ActionResponse {
            stdout: releaseres_lines(&r),
            stderr: r.stderr.clone(),
            failed: r.failed,
        };
        if print_action(&shown) != EXIT_OK {
            code = EXIT_ERROR;
        }
    }
    Ok(code)
}

// ---------------------------------------------------------------------------
// setres
// ---------------------------------------------------------------------------

/// Reserve resources (deprecated: mrsvctl -c).
#[derive(Debug, Parser)]
#[command(
    name = "setres",
    about = "Reserve resources (deprecated: use mrsvctl -c)",
    long_about = "Create an administrative reservation on RESOURCE_EXPRESSION: ALL (every node), \
TASKS==N or TASKS>=N (N processors wherever they are free), or a host regular expression \
('node00[3-6]'). Access lists are colon separated: -u users, -g groups, -a accounts, -q classes, \
-Q QoS. The reservation is named after the first user, group, account, class or QoS of its access \
list (john.1, staff.1), system.N without one, or -n NAME. Without -d or -e it has no end. Prints \
`reservation '<id>' created on N nodes (T tasks)` and the reserved nodes as NODE:TASKS. For \
administrators."
)]
pub struct Setres {
    /// Accounts allowed to use the reservation (colon separated).
    #[arg(short = 'a', value_name = "ACCOUNT_LIST")]
    pub accounts: Option<String>,
    /// Reservation subtype: not supported by Arches.
    #[arg(short = 'b', value_name = "SUBTYPE")]
    pub subtype: Option<String>,
    /// Charge credentials (ACCOUNT[,GROUP[,USER]]): not supported by Arches.
    #[arg(short = 'c', value_name = "CHARGE_SPEC")]
    pub charge: Option<String>,
    /// Duration `[[[DD:]HH:]MM:]SS` or INFINITY.
    #[arg(short = 'd', value_name = "DURATION")]
    pub duration: Option<String>,
    /// End time `[HH[:MM[:SS]]][_MO[/DD[/YY]]]`, `+[[[DD:]HH:]MM:]SS` or INFINITY.
    #[arg(short = 'e', value_name = "ENDTIME")]
    pub end: Option<String>,
    /// Exclusive: only where no other reservation holds the same nodes at the same time.
    #[arg(short = 'E')]
    pub exclusive: bool,
    /// Only nodes with these features (colon separated).
    #[arg(short = 'f', value_name = "FEATURE_LIST")]
    pub features: Option<String>,
    /// Groups allowed to use the reservation (colon separated).
    #[arg(short = 'g', value_name = "GROUP_LIST")]
    pub groups: Option<String>,
    /// Reservation name (id).
    #[arg(short = 'n', value_name = "NAME")]
    pub name: Option<String>,
    /// Owner credential: not supported by Arches.
    #[arg(short = 'o', value_name = "OWNER")]
    pub owner: Option<String>,
    /// Only nodes of this partition.
    #[arg(short = 'p', value_name = "PARTITION")]
    pub partition: Option<String>,
    /// Classes (queues) allowed to use the reservation (colon separated).
    #[arg(short = 'q', value_name = "QUEUE_LIST")]
    pub classes: Option<String>,
    /// QoS allowed to use the reservation (colon separated).
    #[arg(short = 'Q', value_name = "QOSLIST")]
    pub qos: Option<String>,
    /// Per-task resources (PROCS=, MEM=...): not supported by Arches (whole processors are reserved).
    #[arg(short = 'r', value_name = "RESOURCE_DESCRIPTION")]
    pub resources: Option<String>,
    /// Reservation profile: not supported by Arches.
    #[arg(short = 'R', value_name = "RESERVATION_PROFILE")]
    pub profile: Option<String>,
    /// Start time `[HH[:MM[:SS]]][_MO[/DD[/YY]]]` or `+[[[DD:]HH:]MM:]SS` (default now).
    #[arg(short = 's', value_name = "STARTTIME")]
    pub start: Option<String>,
    /// Reservation trigger: not supported by Arches.
    #[arg(short = 'T', value_name = "TRIGGER")]
    pub trigger: Option<String>,
    /// Users allowed to use the reservation (colon separated).
    #[arg(short = 'u', value_name = "USER_LIST")]
    pub users: Option<String>,
    /// Reservation flags (colon separated).
    #[arg(short = 'x', value_name = "FLAGS")]
    pub flags: Option<String>,
    /// ALL, TASKS==N, TASKS>=N or a host regular expression.
    #[arg(value_name = "RESOURCE_EXPRESSION")]
    pub resources_expr: String,
    #[command(flatten)]
    pub conn: Connection,
}

/// The base of the reservation's name: the first credential of its access
/// list (users, groups, accounts, classes, QoS), or `None` (system.N).
pub fn setres_name_base(a: &Setres) -> Option<String> {
    [&a.users, &a.groups, &a.accounts, &a.classes, &a.qos]
        .into_iter()
        .flatten()
        .find_map(|l| {
            l.split([':', ','])
                .map(str::trim)
                .find(|s| !s.is_empty())
                .map(str::to_string)
        })
}

/// mrsvctl's `ATTR=VALUE` specs for a setres command line (without the name).
pub fn setres_specs(a: &Setres) -> Result<Vec<String>, String> {
    for (given, what) in [
        (a.subtype.is_some(), "reservation subtypes (-b)"),
        (a.charge.is_some(), "reservation charge credentials (-c)"),
        (a.owner.is_some(), "reservation owners (-o)"),
        (
            a.resources.is_some(),
            "per-task resources (-r): a reservation holds whole processors",
        ),
        (a.profile.is_some(), "reservation profiles (-R, RSVPROFILE)"),
        (a.trigger.is_some(), "reservation triggers (-T)"),
    ] {
        if given {
            return Err(format!("ERROR:    {what} not supported by Arches"));
        }
    }
    let mut specs = Vec::new();
    let expr = a.resources_expr.trim();
    let upper = expr.to_ascii_uppercase();
    if let Some(n) = upper
        .strip_prefix("TASKS==")
        .or_else(|| upper.strip_prefix("TASKS>="))
    {
        if n.is_empty() || !n.bytes().all(|b| b.is_ascii_digit()) || n.parse::<u64>() == Ok(0) {
            return Err(format!(
                "ERROR:    invalid resource expression '{expr}' (TASKS==N needs a positive count)"
            ));
        }
        specs.push(format!("procs={n}"));
    } else if upper.starts_with("TASKS") {
        return Err(format!(
            "ERROR:    invalid resource expression '{expr}' (expected ALL, TASKS==N, TASKS>=N or a host expression)"
        ));
    } else if expr.is_empty() {
        return Err("ERROR:    no resource expression specified".into());
    } else {
        specs.push(format!("hostlist={expr}"));
    }
    if let Some(s) = &a.start {
        specs.push(format!("starttime={s}"));
    }
    if let Some(d) = &a.duration {
        specs.push(format!("duration={d}"));
    }
    if let Some(e) = &a.end {
        specs.push(format!("endtime={e}"));
    }
    for (key, list) in [
        ("users", &a.users),
        ("groups", &a.groups),
        ("accounts", &a.accounts),
        ("classes", &a.classes),
        ("qos", &a.qos),
    ] {
        if let Some(l) = list {
            specs.push(format!("{key}={l}"));
        }
    }
    if let Some(f) = &a.flags {
        specs.push(format!("flags={f}"));
    }
    if a.exclusive {
        specs.push("exclusive=true".into());
    }
    if let Some(f) = &a.features {
        specs.push(format!("features={f}"));
    }
    if let Some(p) = &a.partition {
        specs.push(format!("partition={p}"));
    }
    Ok(specs)
}

/// Maui's setres answer: `reservation 'ID' created on N nodes (T tasks)`, an
/// empty line, then `NODE:TASKS` per reserved node.
pub fn render_setres(v: &ReservationsView, id: &str) -> String {
    let Some(r) = v.reservations.iter().find(|r| r.id == id) else {
        return format!("reservation '{id}' created\n");
    };
    let tasks: u32 = r.nodes.iter().map(|n| n.tasks).sum();
    let mut o = format!(
        "reservation '{id}' created on {} node{} ({tasks} task{})\n\n",
        r.nodes.len(),
        fmt::plural(r.nodes.len()),
        fmt::plural(tasks as usize)
    );
    for n in &r.nodes {
        o.push_str(&format!("{}:{}\n", n.node, n.tasks));
    }
    o
}

/// The smallest `BASE.K` (K ≥ 1) no reservation has.
pub fn next_name(base: &str, v: &ReservationsView) -> String {
    (1u64..)
        .map(|k| format!("{base}.{k}"))
        .find(|n| !v.reservations.iter().any(|r| &r.id == n))
        .unwrap_or_else(|| base.to_string())
}

/// Runs setres.
pub fn setres(a: Setres) -> Result<u8, String> {
    let mut specs = setres_specs(&a)?;
    let client = a.conn.client().map_err(|e| e.to_string())?;
    if let Some(n) = &a.name {
        specs.push(format!("name={n}"));
    } else if let Some(base) = setres_name_base(&a) {
        let all = client.reservations().map_err(|e| e.to_string())?;
        specs.push(format!("name={}", next_name(&base, &all)));
    }
    let r = client
        .reservation_control(&ReservationRequest::Create { specs })
        .map_err(|e| e.to_string())?;
    if let Some(code) = failed(&r) {
        return Ok(code);
    }
    // The daemon answers `NOTE:  reservation <id> created`.
    let Some(id) = r.stdout.iter().find_map(|l| {
        l.strip_prefix("NOTE:  reservation ")
            .and_then(|s| s.strip_suffix(" created"))
    }) else {
        return Ok(print_action(&r));
    };
    let v = client
        .reservations_matching(id)
        .map_err(|e| e.to_string())?;
    print(&render_setres(&v, id));
    Ok(EXIT_OK)
}

// ---------------------------------------------------------------------------
// resetstats
// ---------------------------------------------------------------------------

/// Reset the scheduler's statistics (deprecated: mschedctl -f).
#[derive(Debug, Parser)]
#[command(
    name = "resetstats",
    about = "Reset the scheduler statistics (deprecated: use mschedctl -f)",
    long_about = "Reset every statistic the scheduler keeps (showstats, mdiag -f usage) to the \
state of a fresh start, as `mschedctl -f all` does, and print `Statistics Reset at time <date>` \
with the daemon's time. For level 1 administrators."
)]
pub struct Resetstats {
    #[command(flatten)]
    pub conn: Connection,
}

/// `Statistics Reset at time Wed Feb 25 23:24:55 2004`.
pub fn render_resetstats(now: i64) -> String {
    format!("Statistics Reset at time {}\n", fmt::date_with_year(now))
}

/// Runs resetstats.
pub fn resetstats(a: Resetstats) -> Result<u8, String> {
    let client = a.conn.client().map_err(|e| e.to_string())?;
    let r = client
        .scheduler_control(&SchedulerControl::Flush { what: "all".into() })
        .map_err(|e| e.to_string())?;
    if let Some(code) = failed(&r) {
        return Ok(code);
    }
    let now = client.scheduler().map_err(|e| e.to_string())?.now;
    print(&render_resetstats(now));
    Ok(EXIT_OK)
}

// ---------------------------------------------------------------------------
// showconfig
// ---------------------------------------------------------------------------

/// Show the scheduler's configuration (deprecated: mschedctl -l config).
#[derive(Debug, Parser)]
#[command(
    name = "showconfig",
    about = "Show the scheduler configuration (deprecated: use mschedctl -l config)",
    long_about = "Print the parameters in effect (moab.cfg, defaults and mschedctl -m changes) as \
moab.cfg lines, after a `# moab scheduler version V (PID: P)` comment: the output can be saved as \
a moab.cfg. Without -v only the major parameters and those set to a value other than their \
default; -v prints every parameter. For administrators of levels 1-3 (the configuration names \
the administrators)."
)]
pub struct Showconfig {
    /// Verbose: every parameter, also those at their default value.
    #[arg(short = 'v')]
    pub verbose: bool,
    #[command(flatten)]
    pub conn: Connection,
}

/// The parameters showconfig prints without -v even at their default value.
pub const SHOWCONFIG_MAJOR: &[&str] = &[
    "BACKFILLPOLICY",
    "BACKFILLMETRIC",
    "NODEALLOCATIONPOLICY",
    "RESERVATIONPOLICY",
    "RESERVATIONDEPTH",
    "RMPOLLINTERVAL",
];

/// showconfig's text: the version comment, an empty line, `PARAMETER VALUE`
/// lines (name left-aligned in 31 columns and a space). Without `verbose`,
/// only the [`SHOWCONFIG_MAJOR`] parameters and those whose value is not
/// their value in `defaults`.
pub fn render_showconfig(
    c: &ConfigView,
    defaults: &[(String, String)],
    version: &str,
    pid: u32,
    verbose: bool,
) -> String {
    let mut o = format!("# moab scheduler version {version} (PID: {pid})\n\n");
    for (k, v) in &c.parameters {
        let default = defaults.iter().find(|(dk, _)| dk == k).map(|(_, dv)| dv);
        let shown = verbose || SHOWCONFIG_MAJOR.contains(&k.as_str()) || default != Some(v);
        if shown {
            o.push_str(&format!("{k:<31} {v}\n"));
        }
    }
    o
}

/// Runs showconfig.
pub fn showconfig(a: Showconfig) -> Result<u8, String> {
    let client = a.conn.client().map_err(|e| e.to_string())?;
    let c = client.config().map_err(|e| e.to_string())?;
    let s = client.scheduler().map_err(|e| e.to_string())?;
    let defaults = arches_config::Config::default().effective();
    print(&render_showconfig(
        &c,
        &defaults,
        env!("CARGO_PKG_VERSION"),
        s.pid,
        a.verbose,
    ));
    Ok(EXIT_OK)
}

// ---------------------------------------------------------------------------
// showstate
// ---------------------------------------------------------------------------

/// Summary of the cluster's state (active jobs and a node map).
#[derive(Debug, Parser)]
#[command(
    name = "showstate",
    about = "Show the active jobs and a map of the nodes and the jobs they run",
    long_about = "Print every active job with a letter (A, B, ...), its state, owner, processors, \
remaining time and start, then a map of the nodes: frames (racks) of 16 slots, nodes placed in \
name order (Arches keeps no rack/slot locations, so nodes are assigned as Moab assigns nodes without \
one). A node shows the letter of the job it runs ([A]), a lower-case letter when it is idle with a \
job ([a]), [ ] idle, [#] down, [*] down with a job, [!] drained, [@] busy with no job, [?] unknown; \
XXX is an empty slot. Problems found (down nodes with jobs, busy nodes without) are listed last."
)]
pub struct Showstate {
    #[command(flatten)]
    pub conn: Connection,
}

/// Slots per frame of the node map (the doc sample's width; Moab's
/// `DEFAULTRACKSIZE` for nodes without a rack/slot location).
pub const SHOWSTATE_SLOTS: usize = 16;

/// `MULToTString`: `H:MM:SS`, `D:HH:MM:SS` from one day, `-` when negative.
fn remaining(t: i64) -> String {
    let sign = if t < 0 { "-" } else { "" };
    let a = t.unsigned_abs();
    let (d, h, m, s) = (a / 86_400, (a % 86_400) / 3600, (a % 3600) / 60, a % 60);
    if d > 0 {
        format!("{sign}{d}:{h:02}:{m:02}:{s:02}")
    } else {
        format!("{sign}{h}:{m:02}:{s:02}")
    }
}

/// The letter of the `i`-th active job: A..Z, then a..z, then again.
fn job_letter(i: usize) -> char {
    let i = i % 52;
    if i < 26 {
        (b'A' + i as u8) as char
    } else {
        (b'a' + (i - 26) as u8) as char
    }
}

/// showstate's text (the layout of Moab's showstate page: job table, usage
/// summary, node map, key, warnings).
pub fn render_showstate(q: &arches_api::QueueView, n: &arches_api::NodesView) -> String {
    use arches_api::Section;
    let now = q.now;
    let jobs: Vec<&arches_api::JobSummary> = q
        .jobs
        .iter()
        .filter(|j| j.section == Section::Active)
        .collect();
    let mut o = format!("cluster state summary for {}\n\n", fmt::date(now));
    o.push_str(&format!(
        "    {:<18} {:1} {:>9} {:>8} {:>5} {:>11}  {:>19}\n",
        "JobID", "S", "User", "Group", "Procs", "Remaining", "StartTime"
    ));
    o.push_str(&format!(
        "    {} {} {} {} {} {}  {}\n\n",
        "-".repeat(18),
        "-",
        "-".repeat(9),
        "-".repeat(8),
        "-".repeat(5),
        "-".repeat(11),
        "-".repeat(19)
    ));
    let mut active_nodes = 0usize;
    for (i, j) in jobs.iter().enumerate() {
        let start = j.start_time.unwrap_or(now);
        let left = j
            .walltime
            .map(|w| remaining(start + w - now))
            .unwrap_or_else(|| "INFINITY".into());
        // The doc sample's start dates have no week day.
        let date = fmt::date(start);
        o.push_str(&format!(
            "({}) {:>18} {} {:>9} {:>8} {:>5} {:>11}  {:>19}\n",
            job_letter(i),
            j.id,
            j.state.chars().next().unwrap_or('?'),
            j.user,
            j.group,
            j.procs,
            left,
            date.get(4..).unwrap_or(&date)
        ));
        active_nodes += n.nodes.iter().filter(|x| x.jobs.contains(&j.id)).count();
    }
    o.push_str(&format!(
        "\nUsage Summary:  {} Active Jobs  {} Active Nodes\n\n",
        jobs.len(),
        active_nodes
    ));
    let tens: String = (1..=SHOWSTATE_SLOTS)
        .map(|i| format!("[{}]", (i / 10) % 10))
        .collect();
    let ones: String = (1..=SHOWSTATE_SLOTS)
        .map(|i| format!("[{}]", i % 10))
        .collect();
    o.push_str(&format!("{:14}{tens}\n{:14}{ones}\n\n", "", ""));
    let mut nodes: Vec<&arches_api::NodeInfo> = n.nodes.iter().collect();
    nodes.sort_by(|a, b| a.name.cmp(&b.name));
    let mut warnings = Vec::new();
    for (f, frame) in nodes.chunks(SHOWSTATE_SLOTS).enumerate() {
        o.push_str(&format!("Frame {:>6}: ", f + 1));
        for slot in 0..SHOWSTATE_SLOTS {
            let Some(node) = frame.get(slot) else {
                o.push_str("XXX");
                continue;
            };
            let job = jobs.iter().position(|j| node.jobs.contains(&j.id));
            let c = match (job, node.state.as_str()) {
                (Some(_), "Down") => {
                    warnings.push(format!(
                        "job {} requires node {} (node is down)",
                        jobs[job.unwrap_or(0)].id,
                        node.name
                    ));
                    '*'
                }
                (Some(i), "Idle" | "Drained") => job_letter(i).to_ascii_lowercase(),
                (Some(_), "Unknown") | (None, "Unknown") => '?',
                (Some(i), _) => job_letter(i),
                (None, "Down") => {
                    warnings.push(format!("node {} is down", node.name));
                    '#'
                }
                (None, "Drained" | "Draining" | "Reserved") => '!',
                (None, "Idle") => ' ',
                (None, _) => {
                    warnings.push(format!(
                        "node {} has no job scheduled (node is {})",
                        node.name,
                        node.state.to_ascii_lowercase()
                    ));
                    '@'
                }
            };
            o.push_str(&format!("[{c}]"));
        }
        o.push('\n');
    }
    o.push_str("\nKey:  XXX:Unknown [*]:Down w/Job [#]:Down [']:Idle w/Job [ ]:Idle [@]:Busy w/No Job [!]:Drained\n");
    o.push_str(
        "Key:  [a]:(Any lower case letter indicates an idle node that is assigned to a job)\n",
    );
    if !warnings.is_empty() {
        o.push_str(" \n");
        for w in warnings {
            o.push_str(&w);
            o.push('\n');
        }
    }
    o
}

/// Runs showstate.
pub fn showstate(a: Showstate) -> Result<u8, String> {
    let client = a.conn.client().map_err(|e| e.to_string())?;
    let q = client
        .queue(&arches_api::QueueQuery::default())
        .map_err(|e| e.to_string())?;
    let n = client.nodes(None).map_err(|e| e.to_string())?;
    print(&render_showstate(&q, &n));
    Ok(EXIT_OK)
}

// ---------------------------------------------------------------------------
// showhist.moab.pl
// ---------------------------------------------------------------------------

/// A completed job's record (Moab's showhist.moab.pl tool).
#[derive(Debug, Parser)]
#[command(
    name = "showhist",
    about = "Show the record of completed jobs (Moab's showhist.moab.pl tool)",
    long_about = "Moab's showhist.moab.pl tool, installed under both names. Print the record of each completed job named: executable, credentials, queue, \
node and processor counts, wall-clock duration, submit/start/end times, exit code and the nodes it \
ran on, one `Field : value` line each (records separated by an empty line). The daemon holds a \
completed job for JOBCPURGETIME (default one day); then its record moves to the job history in the \
daemon's database, kept as long as the statistics profile reaches (PROFILEDURATION × PROFILECOUNT, \
12.5 days by default). Jobs in neither, and jobs that have not completed, are reported as not found \
(exit 1). -n DAYS searches only jobs that ended in the last DAYS days."
)]
pub struct Showhist {
    /// Only jobs that ended in the last DAYS days.
    #[arg(short = 'n', value_name = "DAYS")]
    pub days: Option<u32>,
    /// Job ids.
    #[arg(value_name = "JOBID", required = true)]
    pub jobs: Vec<String>,
    #[command(flatten)]
    pub conn: Connection,
}

/// `HH:MM:SS` with the hours not wrapped at a day (`00:01:11`).
fn hms(t: i64) -> String {
    let t = t.max(0);
    format!("{:02}:{:02}:{:02}", t / 3600, (t % 3600) / 60, t % 60)
}

/// One job's record in showhist.moab.pl's layout (the tool's documented
/// sample: `Job Id : 180500`, ..., `Allocated Nodelist: n0893:n0894`).
pub fn render_showhist(j: &arches_api::JobDetail) -> String {
    let s = &j.summary;
    let start = s.start_time.unwrap_or(s.submit_time);
    let end = s.completion_time.unwrap_or(start);
    let hosts = if j.ran_on.is_empty() {
        &j.allocated
    } else {
        &j.ran_on
    };
    let nodes: Vec<&str> = hosts.iter().map(|n| n.node.as_str()).collect();
    let mut o = String::new();
    let mut line = |k: &str, v: String| {
        o.push_str(k);
        o.push_str(&v);
        o.push('\n');
    };
    line("Job Id : ", s.id.to_string());
    line("Executable : ", j.executable.clone());
    line("User Name : ", s.user.clone());
    line("Group Name : ", s.group.clone());
    line("Account Name : ", s.account.clone().unwrap_or_default());
    line("Queue Name : ", s.class.clone().unwrap_or_default());
    line(
        "Node Count : ",
        s.nodes
            .unwrap_or(nodes.len() as u32)
            .max(nodes.len() as u32)
            .to_string(),
    );
    line("Processor Count : ", s.procs.to_string());
    line(
        "Wallclock Duration: ",
        hms(if s.start_time.is_some() {
            end - start
        } else {
            0
        }),
    );
    line("Submit Time : ", fmt::date_with_year(s.submit_time));
    line(
        "Start Time : ",
        s.start_time.map(fmt::date_with_year).unwrap_or_default(),
    );
    line("End Time : ", fmt::date_with_year(end));
    line(
        "Exit Code : ",
        s.exit_code.map(|c| c.to_string()).unwrap_or_default(),
    );
    line("Allocated Nodelist: ", nodes.join(":"));
    o
}

/// A job id as showhist.moab.pl takes it: digits, optionally after a
/// `NAME.` prefix (`Moab.17`); never an expression.
fn is_job_id(t: &str) -> bool {
    let digits = t.rsplit_once('.').map_or(t, |(p, d)| {
        if p.is_empty()
            || !p
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        {
            ""
        } else {
            d
        }
    });
    !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
}

/// Runs showhist (showhist.moab.pl).
pub fn showhist(a: Showhist) -> Result<u8, String> {
    if let Some(bad) = a.jobs.iter().find(|j| !is_job_id(j)) {
        return Err(format!("ERROR:  invalid job id '{bad}'"));
    }
    let client = a.conn.client().map_err(|e| e.to_string())?;
    let view = client
        .jobs(&arches_api::JobsRequest {
            ids: a.jobs.clone(),
            completed: true,
            select: JobSelect::default(),
            history: true,
        })
        .map_err(|e| e.to_string())?;
    let since = a.days.map(|d| view.now - i64::from(d) * 86_400);
    let mut code = EXIT_OK;
    let mut out = Vec::new();
    for id in &a.jobs {
        let found = view.jobs.iter().find(|j| {
            let s = &j.summary;
            id.rsplit('.').next() == Some(s.id.to_string().as_str())
                && s.section == arches_api::Section::Completed
                && since.is_none_or(|t| s.completion_time.is_some_and(|c| c >= t))
        });
        match found {
            Some(j) => out.push(render_showhist(j)),
            None => {
                eprintln!("ERROR:  job '{id}' not found in the job history");
                code = EXIT_ERROR;
            }
        }
    }
    print(&out.join("\n"));
    Ok(code)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn setspri_of(args: &[&str]) -> Result<JobAction, String> {
        let mut v = vec!["setspri"];
        v.extend(args);
        setspri_action(&Setspri::try_parse_from(v).unwrap())
    }

    #[test]
    fn setspri_forms() {
        // 0 is sent as 0: the daemon clears the system priority.
        assert_eq!(
            setspri_of(&["0", "7"]),
            Ok(JobAction::SystemPriority {
                value: "0".into(),
                relative: false
            })
        );
        assert_eq!(
            setspri_of(&["10", "7"]),
            Ok(JobAction::SystemPriority {
                value: "10".into(),
                relative: false
            })
        );
        assert_eq!(
            setspri_of(&["-r", "-5", "7"]),
            Ok(JobAction::SystemPriority {
                value: "-5".into(),
                relative: true
            })
        );
        assert!(setspri_of(&["-5", "7"]).unwrap_err().contains("needs -r"));
        assert!(setspri_of(&["ten", "7"])
            .unwrap_err()
            .contains("invalid priority"));
    }

    fn setres_of(args: &[&str]) -> Setres {
        let mut v = vec!["setres"];
        v.extend(args);
        Setres::try_parse_from(v).unwrap()
    }

    #[test]
    fn setres_specs_and_names() {
        let a = setres_of(&[
            "-u",
            "john:mary",
            "-s",
            "+24:00:00",
            "-d",
            "8:00:00",
            "TASKS==2",
        ]);
        assert_eq!(
            setres_specs(&a).unwrap(),
            [
                "procs=2",
                "starttime=+24:00:00",
                "duration=8:00:00",
                "users=john:mary"
            ]
        );
        assert_eq!(setres_name_base(&a).as_deref(), Some("john"));
        let a = setres_of(&["-g", "staff", "-q", "interactive", "node00[3-6]"]);
        assert_eq!(
            setres_specs(&a).unwrap(),
            [
                "hostlist=node00[3-6]",
                "groups=staff",
                "classes=interactive"
            ]
        );
        assert_eq!(setres_name_base(&a).as_deref(), Some("staff"));
        let a = setres_of(&["-s", "8:00:00_06/20", "-e", "17:00:00_06/22", "ALL"]);
        assert_eq!(setres_name_base(&a), None);
        assert_eq!(setres_specs(&a).unwrap()[0], "hostlist=ALL".to_string());
        assert!(setres_specs(&setres_of(&["TASKS==0"])).is_err());
        assert!(setres_specs(&setres_of(&["TASKS<2"])).is_err());
        assert!(setres_specs(&setres_of(&["-T", "x", "ALL"]))
            .unwrap_err()
            .contains("not supported"));
        assert!(Setres::try_parse_from(["setres", "-l", "x", "ALL"]).is_err());
    }

    #[test]
    fn exact_ids_are_escaped_and_anchored() {
        assert_eq!(exact_id_expr("system.1"), "system\\.1$");
        assert_eq!(exact_id_expr("a-b_c"), "a\\-b_c$");
    }

    #[test]
    fn showstate_times_and_letters() {
        assert_eq!(remaining(3 * 3600 + 5 * 60 + 17), "3:05:17");
        assert_eq!(remaining(54 * 60 + 38), "0:54:38");
        assert_eq!(remaining(86_400 + 61), "1:00:01:01");
        assert_eq!(remaining(-5), "-0:00:05");
        assert_eq!(
            (job_letter(0), job_letter(25), job_letter(26)),
            ('A', 'Z', 'a')
        );
    }

    #[test]
    fn showhist_ids_and_durations() {
        assert!(is_job_id("180500") && is_job_id("Moab.17"));
        assert!(!is_job_id("80.*") && !is_job_id("ALL") && !is_job_id(".5") && !is_job_id("7["));
        assert_eq!(hms(71), "00:01:11");
        assert_eq!(hms(90_000), "25:00:00");
    }

    #[test]
    fn next_free_name() {
        let mut v = ReservationsView {
            now: 0,
            reservations: Vec::new(),
        };
        assert_eq!(next_name("john", &v), "john.1");
        v.reservations.push(arches_api::ReservationInfo {
            id: "john.1".into(),
            kind: "User".into(),
            job_state: None,
            start: 0,
            end: None,
            nodes: Vec::new(),
            procs: 0,
            owner: None,
            flags: Vec::new(),
            acl: Vec::new(),
            group: None,
        });
        assert_eq!(next_name("john", &v), "john.2");
    }
}
