//! Reservations: showres and mrsvctl.

use arches_api::ReservationRequest;
use clap::{ArgAction, ArgGroup, Parser};

use crate::common::{print, print_action, print_json, Connection, Format, Output};
use crate::render::showbf;
use crate::EXIT_OK;

/// Show reservations.
#[derive(Debug, Parser)]
#[command(
    name = "showres",
    about = "Show reservations",
    long_about = "List reservations (job, user, system, standing) with start, end, duration, \
node and processor counts; -n lists the reserved nodes instead."
)]
pub struct Showres {
    /// Per-node view of reserved nodes.
    #[arg(short = 'n')]
    pub nodes: bool,
    /// Show free (unreserved) processors per node instead of reservations.
    #[arg(short = 'f', conflicts_with_all = ["nodes", "overlap"])]
    pub free: bool,
    /// With -n: grep-able output (the node name is on every line, which Arches always does).
    #[arg(short = 'g', requires = "nodes")]
    pub grep: bool,
    /// Reservations that overlap RSVID in time and nodes.
    #[arg(short = 'o', requires = "id", conflicts_with = "nodes")]
    pub overlap: bool,
    /// Relative time mode (Start/End are already relative to now; accepted).
    #[arg(short = 'r')]
    pub relative: bool,
    /// Verbose: start dates with the year; with -n and RSVID, every reservation on RSVID's nodes.
    #[arg(short = 'v')]
    pub verbose: bool,
    /// Only this reservation.
    #[arg(value_name = "RSVID")]
    pub id: Option<String>,
    #[command(flatten)]
    pub output: Output,
    #[command(flatten)]
    pub conn: Connection,
}

/// Runs showres.
pub fn showres(a: Showres) -> Result<u8, String> {
    let client = a.conn.client().map_err(|e| e.to_string())?;
    if a.free {
        let n = client.nodes(None).map_err(|e| e.to_string())?;
        let v = client.reservations().map_err(|e| e.to_string())?;
        match a.output.format() {
            Format::Json => print_json(&n)?,
            Format::Xml => print(&format!("{}\n", showbf::render_free_xml(&n, &v))),
            Format::Text => print(&showbf::render_free(&n, &v)),
        }
        return Ok(EXIT_OK);
    }
    let mut v = client.reservations().map_err(|e| e.to_string())?;
    if let Some(id) = &a.id {
        let Some(target) = v.reservations.iter().find(|r| &r.id == id).cloned() else {
            return Err(format!("ERROR:  cannot locate reservation '{id}'"));
        };
        let shares_node = |r: &arches_api::ReservationInfo| {
            r.nodes
                .iter()
                .any(|n| target.nodes.iter().any(|t| t.node == n.node))
        };
        let overlaps_time = |r: &arches_api::ReservationInfo| {
            r.start < target.end.unwrap_or(i64::MAX) && target.start < r.end.unwrap_or(i64::MAX)
        };
        if a.overlap {
            v.reservations
                .retain(|r| r.id != target.id && shares_node(r) && overlaps_time(r));
        } else if a.nodes && a.verbose {
            v.reservations.retain(shares_node);
        } else {
            v.reservations.retain(|r| &r.id == id);
        }
    }
    match (a.output.format(), a.nodes) {
        (Format::Json, _) => print_json(&v)?,
        (Format::Xml, _) => print(&format!(
            "{}\n",
            crate::render::cluster::render_reservations_xml(&v)
        )),
        (_, true) => print(&showbf::render_reserved_nodes(&v)),
        (_, false) => print(&showbf::render_reservations(&v, a.verbose)),
    }
    Ok(EXIT_OK)
}

/// Create, modify, list, query or release reservations.
#[derive(Debug, Parser)]
#[command(
    disable_help_flag = true,
    name = "mrsvctl",
    about = "Create, modify, list, query or release reservations",
    long_about = "Create an administrative reservation (-c) on hosts (-h: ALL, names, regular \
expressions matched anywhere in node names as Moab does, class:CLASS (the nodes of its CLASSCFG HOSTLIST and PARTITION, else all), feature:FEATURE; -f features, \
-p partition and -x jobs whose nodes are left out restrict them) or on a processor count (-t N or \
-t ALL; with -R PROCS=P, N tasks of P processors each), from a start time for a duration or to an end time (INFINITY: no end), with an access list \
(-a USER==a:b,GROUP==g,ACCT==x,CLASS==c,QOS==q), flags (-F), a reservation group (-g) and a name \
(-n); -c -R TID reserves the window an `mshow -a --flags=tid` row offered. Reservations may overlap (a job then needs access to each); -E creates one only where no other \
reservation holds the same nodes at the same time. -m modifies one: duration, endtime and \
starttime with =, += or -= (also -d, -e, -s), hostexp (also -h), reqtaskcount, flags (also -F), \
rsvgroup and the access list (-a USER+=x,GROUP-=y); all changes or none. -l lists and -q shows in \
detail the reservations an expression names (ALL, ids, regular expressions from the start of the \
id); -r releases them (or every reservation of -g RSVGROUP). Creating, modifying and releasing are \
for administrators.",
    group(ArgGroup::new("op").required(true).args(["create", "release", "query", "list", "modify", "clear"]))
)]
pub struct Mrsvctl {
    /// Print help.
    #[arg(long, action = ArgAction::Help)]
    pub help: Option<bool>,
    /// Create a reservation.
    #[arg(short = 'c')]
    pub create: bool,
    /// Release (delete) the reservations RSVID names (ids, ALL, regular expressions), or with
    /// -g every reservation of that group.
    #[arg(short = 'r', value_name = "RSVID", num_args = 0..=1, default_missing_value = "")]
    pub release: Option<String>,
    /// Show reservations (an id, a regular expression or ALL) in detail, as mdiag -r.
    #[arg(short = 'q', value_name = "RSVID")]
    pub query: Option<String>,
    /// List reservations (an id, a regular expression or ALL; default ALL), as showres.
    #[arg(short = 'l', value_name = "RSVID", num_args = 0..=1, default_missing_value = "ALL")]
    pub list: Option<String>,
    /// Modify a reservation: ATTR=VALUE, ATTR+=VALUE or ATTR-=VALUE (repeatable; duration,
    /// endtime, starttime, hostexp, reqtaskcount, flags, rsvgroup); the reservation id follows.
    #[arg(short = 'm', value_name = "ATTR=VALUE", num_args = 0..=1, default_missing_value = "", action = ArgAction::Append)]
    pub modify: Vec<String>,
    /// Clear disabled time slots of standing reservations: Arches disables none, so this reports that.
    #[arg(short = 'C')]
    pub clear: bool,
    /// End time (same forms as -s; INFINITY); with -m: endtime=VALUE (`+=T`, `-=T` relative).
    #[arg(short = 'e', value_name = "ENDTIME", allow_hyphen_values = true)]
    pub end: Option<String>,
    /// Reservation name (id) instead of system.N.
    #[arg(short = 'n', value_name = "NAME")]
    pub name: Option<String>,
    /// Access list: TYPE==NAME[:NAME],... (USER, GROUP, ACCT, CLASS, QOS); with -m also TYPE+=
    /// and TYPE-=.
    #[arg(short = 'a', value_name = "ACL")]
    pub acl: Option<String>,
    /// Duration `[[[DD:]HH:]MM:]SS` or INFINITY; with -m `+=T`/`-=T` change it.
    #[arg(short = 'd', value_name = "DURATION", allow_hyphen_values = true)]
    pub duration: Option<String>,
    /// Host expression: ALL, names, regular expressions, class:CLASS, feature:FEATURE.
    #[arg(short = 'h', value_name = "HOSTEXP")]
    pub hosts: Option<String>,
    /// Start time (`[HH[:MM[:SS]]][_MO[/DD[/YY]]]`, +offset, epoch); with -m `+=T`/`-=T` move it.
    #[arg(short = 's', value_name = "STARTTIME", allow_hyphen_values = true)]
    pub start: Option<String>,
    /// Processor count, or ALL (every processor of every node).
    #[arg(short = 't', value_name = "TASKS")]
    pub procs: Option<String>,
    /// Exclusive: create only where no other reservation holds the same nodes at the same time.
    #[arg(short = 'E')]
    pub exclusive: bool,
    /// Only nodes with these features (colon separated).
    #[arg(short = 'f', value_name = "FEATURES")]
    pub features: Option<String>,
    /// Reservation flags (comma separated); with -m they replace the flags.
    #[arg(short = 'F', value_name = "FLAGS")]
    pub flags: Option<String>,
    /// Reservation group: with -c the group to create in; with -r every reservation of it.
    #[arg(short = 'g', value_name = "RSVGROUP")]
    pub group: Option<String>,
    /// Only nodes of this partition.
    #[arg(short = 'p', value_name = "PARTITION")]
    pub partition: Option<String>,
    /// Leave out the nodes of these running jobs (comma separated).
    #[arg(short = 'x', value_name = "JOBLIST")]
    pub exclude: Option<String>,
    /// Moab options Arches has no model for (-b subtype, -D description, -I signal, -P profile,
    /// -S set attribute, -T trigger, -V variable, -i index): each reports that.
    #[arg(short = 'b', value_name = "SUBTYPE")]
    pub subtype: Option<String>,
    #[arg(short = 'D', value_name = "DESCRIPTION", hide = true)]
    pub description: Option<String>,
    #[arg(short = 'I', value_name = "SIGNAL", hide = true)]
    pub signal: Option<String>,
    #[arg(short = 'P', value_name = "PROFILE", hide = true)]
    pub profile: Option<String>,
    /// Resources per task (with -c and a numeric -t): PROCS=N[;PROCS=N]... (separators ; , +);
    /// the reservation holds -t × PROCS processors. MEM, DISK, SWAP and GRES are refused:
    /// a reservation holds processors only. With -c alone, a number is the transaction id of
    /// an `mshow -a --flags=tid` row: that window is reserved.
    #[arg(short = 'R', value_name = "RESOURCES")]
    pub resources: Option<String>,
    #[arg(short = 'S', value_name = "SETVALUE", hide = true)]
    pub set: Option<String>,
    #[arg(short = 'T', value_name = "TRIGGER", hide = true)]
    pub trigger: Option<String>,
    #[arg(short = 'V', value_name = "VARIABLE", hide = true)]
    pub variable: Option<String>,
    #[arg(short = 'i', value_name = "INDEX", hide = true)]
    pub index: Option<String>,
    /// With -q ALL: completed (Arches keeps no completed reservations: reports that).
    #[arg(long = "flags", value_name = "FLAGS")]
    pub flags_long: Option<String>,
    /// The reservation (with -m), or further ATTR=VALUE specifications (with -c).
    #[arg(value_name = "RSVID|ATTR=VALUE")]
    pub specs: Vec<String>,
    #[command(flatten)]
    pub output: Output,
    #[command(flatten)]
    pub conn: Connection,
}

/// `-a USER==a,USER==b` → `users=a,b`; anything else passes as `acl=...`.
fn acl_spec(acl: &str) -> String {
    let users: Option<Vec<&str>> = acl
        .split(',')
        .map(|p| {
            p.strip_prefix("USER==")
                .or_else(|| p.strip_prefix("user=="))
        })
        .collect();
    match users {
        Some(u) => format!("users={}", u.join(",")),
        None if acl.contains('=') && !acl.contains("==") => acl.to_string(),
        None => format!("acl={acl}"),
    }
}

/// Runs mrsvctl.
pub fn mrsvctl(a: Mrsvctl) -> Result<u8, String> {
    for (given, what) in [
        (a.subtype.is_some(), "reservation subtypes (-b)"),
        (a.description.is_some(), "reservation descriptions (-D)"),
        (a.signal.is_some(), "reservation signals (-I)"),
        (a.profile.is_some(), "reservation profiles (-P, RSVPROFILE)"),
        (a.set.is_some(), "reservation attributes (-S)"),
        (a.trigger.is_some(), "reservation triggers (-T)"),
        (a.variable.is_some(), "reservation variables (-V)"),
        (
            a.index.is_some(),
            "reservation indexes (-i): name reservations by id",
        ),
    ] {
        if given {
            return Err(format!("ERROR:    {what} not supported by Arches"));
        }
    }
    if a.clear {
        return Err(
            "ERROR:    nothing to clear: Arches never disables standing reservation time slots"
                .into(),
        );
    }
    if let Some(expr) = a.query.clone().or_else(|| a.list.clone()) {
        if a.flags_long
            .as_deref()
            .is_some_and(|f| f.eq_ignore_ascii_case("completed"))
        {
            return Err(
                "ERROR:    Arches keeps no completed reservations (--flags=completed)".into(),
            );
        }
        let client = a.conn.client().map_err(|e| e.to_string())?;
        // `-q diag RSVID` is accepted as `-q RSVID`.
        let expr = if expr == "diag" {
            a.specs.first().cloned().unwrap_or_else(|| "ALL".into())
        } else {
            expr
        };
        // The daemon resolves the expression (the one place it is done).
        let mut v = client
            .reservations_matching(&expr)
            .map_err(|e| e.to_string())?;
        if let Some(g) = &a.group {
            v.reservations
                .retain(|r| r.group.as_deref() == Some(g.as_str()));
        }
        match (a.output.format(), a.query.is_some()) {
            (Format::Json, _) => print_json(&v)?,
            (Format::Xml, _) => print(&format!(
                "{}\n",
                crate::render::cluster::render_reservations_xml(&v)
            )),
            (Format::Text, true) => print(&crate::render::cluster::render_reservations(&v)),
            (Format::Text, false) => print(&showbf::render_reservations(&v, false)),
        }
        return Ok(EXIT_OK);
    }
    let req = if let Some(id) = &a.release {
        if id.is_empty() && a.group.is_none() {
            return Err("ERROR:    -r needs a reservation id, expression or -g RSVGROUP".into());
        }
        ReservationRequest::Release {
            id: id.clone(),
            group: a.group.clone(),
        }
    } else if !a.modify.is_empty() {
        let Some(id) = a.specs.last().cloned() else {
            return Err("ERROR:    -m needs the reservation id".into());
        };
        let mut changes: Vec<String> = a.modify.iter().filter(|m| !m.is_empty()).cloned().collect();
        // -d/-e/-s VALUE: `+=T`/`-=T` change the current value, else set it.
        let time = |attr: &str, v: &str| -> String {
            if v.starts_with("+=") || v.starts_with("-=") {
                format!("{attr}{v}")
            } else {
                format!("{attr}={v}")
            }
        };
        if let Some(d) = &a.duration {
            changes.push(time("duration", d));
        }
        if let Some(e) = &a.end {
            changes.push(time("endtime", e));
        }
        if let Some(s) = &a.start {
            changes.push(time("starttime", s));
        }
        if let Some(h) = &a.hosts {
            changes.push(format!("hostexp={h}"));
        }
        if let Some(f) = &a.flags {
            changes.push(format!("flags={f}"));
        }
        if let Some(acl) = &a.acl {
            changes.push(format!("acl={acl}"));
        }
        if let Some(g) = &a.group {
            changes.push(format!("rsvgroup={g}"));
        }
        if changes.is_empty() {
            return Err("ERROR:    -m needs at least one change".into());
        }
        ReservationRequest::Modify { id, changes }
    } else if let Some(tid) = a.resources.as_deref().and_then(transaction_id) {
        // `-c -R TID`: the reservation an `mshow -a --flags=tid` row offered.
        let others = a.start.is_some()
            || a.duration.is_some()
            || a.end.is_some()
            || a.name.is_some()
            || a.hosts.is_some()
            || a.procs.is_some()
            || a.acl.is_some()
            || a.flags.is_some()
            || a.exclusive
            || a.features.is_some()
            || a.partition.is_some()
            || a.exclude.is_some()
            || a.group.is_some()
            || !a.specs.is_empty();
        if others {
            return Err(format!(
                "ERROR:    -R {tid} commits a transaction as mshow offered it: no other reservation attributes may be given with it"
            ));
        }
        ReservationRequest::Commit { tid }
    } else {
        let mut specs = Vec::new();
        if let Some(s) = &a.start {
            specs.push(format!("starttime={s}"));
        }
        if let Some(d) = &a.duration {
            specs.push(format!("duration={d}"));
        }
        if let Some(e) = &a.end {
            specs.push(format!("endtime={e}"));
        }
        if let Some(n) = &a.name {
            specs.push(format!("name={n}"));
        }
        if let Some(h) = &a.hosts {
            specs.push(format!("hostlist={h}"));
        }
        match (&a.procs, &a.resources) {
            (Some(t), Some(r)) => specs.push(format!("procs={}", per_task(t, r)?)),
            (None, Some(_)) => {
                return Err("ERROR:    -R needs the task count (-t TASKS)".into());
            }
            (Some(t), None) => specs.push(format!("procs={t}")),
            (None, None) => {}
        }
        if let Some(acl) = &a.acl {
            specs.push(acl_spec(acl));
        }
        if let Some(f) = &a.flags {
            specs.push(format!("flags={f}"));
        }
        if a.exclusive {
            specs.push("exclusive=true".to_string());
        }
        if let Some(f) = &a.features {
            specs.push(format!("features={f}"));
        }
        if let Some(p) = &a.partition {
            specs.push(format!("partition={p}"));
        }
        if let Some(x) = &a.exclude {
            specs.push(format!("excludejobs={x}"));
        }
        if let Some(g) = &a.group {
            specs.push(format!("rsvgroup={g}"));
        }
        specs.extend(a.specs.iter().cloned());
        ReservationRequest::Create { specs }
    };
    let client = a.conn.client().map_err(|e| e.to_string())?;
    let r = client
        .reservation_control(&req)
        .map_err(|e| e.to_string())?;
    Ok(print_action(&r))
}

/// `-R TID`: a transaction id of `mshow -a --flags=tid` (digits only; per-task
/// resources are `RES=VALUE`).
fn transaction_id(r: &str) -> Option<u64> {
    let r = r.trim();
    (!r.is_empty() && r.bytes().all(|b| b.is_ascii_digit()))
        .then(|| r.parse().ok())
        .flatten()
}

/// `-t TASKS -R RESOURCES`: the processors to reserve, TASKS × the
/// processors per task (`PROCS=N`, default 1). Moab's other per-task
/// resources are refused: an Arches reservation holds processors only.
pub fn per_task(tasks: &str, resources: &str) -> Result<u64, String> {
    let n: u64 = tasks
        .trim()
        .parse()
        .ok()
        .filter(|n| *n > 0)
        .ok_or_else(|| {
            format!("ERROR:    -R needs a positive task count (-t {tasks}): ALL already takes every processor")
        })?;
    let mut procs: Option<u64> = None;
    for part in resources
        .split([';', ',', '+'])
        .map(str::trim)
        .filter(|p| !p.is_empty())
    {
        let (k, v) = part.split_once('=').ok_or_else(|| {
            format!("ERROR:    invalid resource '{part}' in -R (expected RES=VALUE, e.g. PROCS=2)")
        })?;
        match k.trim().to_ascii_uppercase().as_str() {
            "PROCS" => {
                let p: u64 = v.trim().parse().ok().filter(|p| *p > 0).ok_or_else(|| {
                    format!("ERROR:    invalid PROCS value '{v}' in -R (a positive count)")
                })?;
                procs = Some(p);
            }
            "MEM" | "DISK" | "SWAP" | "GRES" => {
                return Err(format!(
                    "ERROR:    per-task {} (-R) not supported by Arches: a reservation holds processors only",
                    k.trim().to_ascii_uppercase()
                ))
            }
            other => {
                return Err(format!(
                    "ERROR:    invalid resource '{other}' in -R (PROCS, MEM, DISK, SWAP or GRES)"
                ))
            }
        }
    }
    let per = procs
        .ok_or_else(|| format!("ERROR:    no resources in -R '{resources}' (expected PROCS=N)"))?;
    n.checked_mul(per)
        .filter(|t| *t <= u64::from(u32::MAX))
        .ok_or_else(|| format!("ERROR:    -t {tasks} × PROCS={per} is too many processors"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn per_task_resources() {
        assert_eq!(per_task("2", "PROCS=2"), Ok(4));
        assert_eq!(per_task("3", "procs=1;"), Ok(3));
        assert!(per_task("2", "MEM=100;PROCS=2")
            .unwrap_err()
            .contains("MEM (-R) not supported"));
        for (t, r) in [
            ("ALL", "PROCS=2"),
            ("0", "PROCS=2"),
            ("2", "PROCS=0"),
            ("2", "FOO=1"),
            ("2", "PROCS"),
            ("2", ""),
            ("4294967295", "PROCS=2"),
        ] {
            assert!(per_task(t, r).is_err(), "{t} {r}");
        }
    }

    #[test]
    fn acl_specs() {
        assert_eq!(acl_spec("USER==john"), "users=john");
        assert_eq!(acl_spec("USER==a,USER==b"), "users=a,b");
        assert_eq!(acl_spec("users=x"), "users=x");
        assert_eq!(acl_spec("GROUP==staff"), "acl=GROUP==staff");
    }
}
