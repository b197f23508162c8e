//! `mshow -a`: Moab's resource-availability query ("when and where could
//! this request run"), answered from the same backfill windows as showbf
//! (the scheduler's plan, never a recomputation of its own).

use arches_api::{BackfillQuery, BackfillView, BackfillWindow, ReservationRequest};
use clap::{ArgAction, Parser};

use crate::common::{print, print_json, Connection, Format, Output};
use crate::fmt::{duration, limit, short_date};
use crate::render::showbf;
use crate::EXIT_OK;

/// Show available resources.
#[derive(Debug, Parser)]
#[command(
    name = "mshow",
    about = "Show available resources (mshow -a)",
    long_about = "With -a, answer a resource-availability query: when and where a request described \
by -w ATTR=VALUE[,ATTR=VALUE]... could run. Supported attributes: duration=[[[DD:]HH:]MM:]SS, \
minprocs=N (or mintasks=N), minnodes=N, gres=NAME (windows of a generic resource, tasks are its \
units), nodefeature=F[:F], nodemem=MB, partition=P, user=, group=, account=, class=, qos= (whose \
access counts) and displaymode=future. Each row is a window of free resources: partition, tasks, \
nodes, the requested duration (the window's own length when none is requested), the offset from \
now and the start date; --flags=future also lists windows that open later (running jobs ending, \
reservations expiring). --format=xml prints Moab's <Data><par><range .../></par></Data> document. \
--flags=tid gives each row a transaction id (`  TID=N  ReqID=0`): `mrsvctl -c -R N` (an \
administrator) then reserves that window, minprocs/mintasks processors (default 1) on the row's \
nodes, from its start for the requested duration, for the asking user (or the -w user=, group=, \
account=, class=, qos=); transactions live in the daemon's memory until committed (a restart \
forgets them), and a reservation holds processors only, so tid is refused with gres= and \
minnodes=. One -w requirement per query: co-allocation of several (-w more than once, -i, -o, -x, \
-T as combinators of several) is not supported and refused; so are attributes Arches has no data \
for (os, arch, hostlist, jobfeature, ...)."
)]
pub struct Mshow {
    /// Show available resources.
    #[arg(short = 'a', required = true)]
    pub available: bool,
    /// Intersection of several requirements (with one requirement there is nothing to intersect).
    #[arg(short = 'i')]
    pub intersection: bool,
    /// Do not aggregate the results of several requirements (one requirement: nothing to aggregate).
    #[arg(short = 'o')]
    pub no_aggregate: bool,
    /// Several requirements on distinct nodes (one requirement: nothing to keep apart).
    #[arg(short = 'x')]
    pub exclusive: bool,
    /// Time-lock several requirements: not supported (one requirement per query).
    #[arg(short = 'T')]
    pub timelock: bool,
    /// VPC profile: not supported (Arches has no VPCs).
    #[arg(short = 'p', value_name = "PROFILE")]
    pub profile: Option<String>,
    /// Show the job queue: not supported (use showq).
    #[arg(short = 'q', value_name = "QUEUE", num_args = 0..=1, default_missing_value = "")]
    pub queue: Option<String>,
    /// A requirement: ATTR=VALUE[,ATTR=VALUE]...
    #[arg(short = 'w', value_name = "ATTR=VALUE", action = ArgAction::Append)]
    pub wheres: Vec<String>,
    /// Flags: future (also later windows), tid (a transaction id per row, for mrsvctl -c -R);
    /// policy, summary, timeflex and verbose are not supported.
    #[arg(long = "flags", value_name = "FLAGS")]
    pub flags: Option<String>,
    #[command(flatten)]
    pub output: Output,
    #[command(flatten)]
    pub conn: Connection,
}

/// What one `-w` requirement asks.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Request {
    pub query: BackfillQuery,
    /// `minprocs`/`mintasks`: windows with at least this many tasks.
    pub min_tasks: Option<u32>,
    /// `duration`, seconds (shown in the Duration column).
    pub duration: Option<i64>,
    /// `--flags=tid`: a transaction per window.
    pub tid: bool,
}

/// Moab's `-w` attributes Arches has no data or model for.
const UNSUPPORTED_ATTRS: &[&str] = &[
    "acl",
    "arch",
    "cal",
    "coalloc",
    "count",
    "excludehostlist",
    "hostlist",
    "job",
    "jobfeature",
    "jobflags",
    "label",
    "nodedisk",
    "offset",
    "os",
    "policylevel",
    "rsvprofile",
    "starttime",
    "taskmem",
    "tpn",
    "var",
    "variables",
];

fn count(attr: &str, v: &str) -> Result<u32, String> {
    v.trim()
        .parse::<u32>()
        .ok()
        .filter(|n| *n > 0)
        .ok_or_else(|| format!("ERROR:    invalid {attr} '{v}' (a positive count)"))
}

/// Parses the `-w` requirement and `--flags` into a query.
pub fn parse_request(wheres: &[String], flags: Option<&str>) -> Result<Request, String> {
    if wheres.len() > 1 {
        return Err("ERROR:    several -w requirements (co-allocation) are not supported by Arches: ask one requirement per mshow -a".into());
    }
    let mut r = Request::default();
    let mut size_attr: Option<&str> = None;
    for clause in wheres.iter().flat_map(|w| w.split(',')) {
        let clause = clause.trim();
        if clause.is_empty() {
            continue;
        }
        let Some((k, v)) = clause.split_once('=') else {
            return Err(format!(
                "ERROR:    invalid where clause '{clause}' (expected ATTR=VALUE)"
            ));
        };
        let key = k.trim().to_ascii_lowercase();
        let v = v.trim();
        if v.is_empty() {
            return Err(format!("ERROR:    no value for '{key}'"));
        }
        if matches!(key.as_str(), "minprocs" | "mintasks" | "minnodes" | "gres") {
            if let Some(prev) = size_attr {
                return Err(format!(
                    "ERROR:    '{prev}' and '{key}' cannot be used in the same requirement"
                ));
            }
            size_attr = Some(match key.as_str() {
                "minprocs" => "minprocs",
                "mintasks" => "mintasks",
                "minnodes" => "minnodes",
                _ => "gres",
            });
        }
        match key.as_str() {
            "duration" => {
                let secs =
                    parse_secs(v).ok_or_else(|| format!("ERROR:    invalid duration '{v}'"))?;
                r.duration = Some(secs);
                r.query.duration = Some(v.to_string());
            }
            "minprocs" => r.min_tasks = Some(count("minprocs", v)?),
            "mintasks" => {
                if v.contains('@') {
                    return Err(format!("ERROR:    per-task resources in mintasks '{v}' are not supported by Arches (tasks are processors)"));
                }
                r.min_tasks = Some(count("mintasks", v)?);
            }
            "minnodes" => r.query.nodes = Some(count("minnodes", v)?),
            "gres" => {
                let (name, n) = v.split_once(':').unwrap_or((v, "1"));
                r.query.gres = Some(name.to_string());
                r.min_tasks = Some(count("gres count", n)?);
            }
            "nodefeature" => {
                r.query.features = v
                    .split([':', '|'])
                    .filter(|s| !s.is_empty())
                    .map(String::from)
                    .collect()
            }
            "nodemem" => {
                count("nodemem", v)?;
                r.query.memory = Some(format!(">={v}"));
            }
            "partition" => r.query.partition = Some(v.to_string()),
            "user" => r.query.user = Some(v.to_string()),
            "group" => r.query.group = Some(v.to_string()),
            "account" => r.query.account = Some(v.to_string()),
            "class" => r.query.class = Some(v.to_string()),
            "qos" => r.query.qos = Some(v.to_string()),
            "displaymode" if v.eq_ignore_ascii_case("future") => r.query.future = true,
            "displaymode" => {
                return Err(format!(
                    "ERROR:    invalid displaymode '{v}' (only 'future')"
                ))
            }
            k if UNSUPPORTED_ATTRS.contains(&k) => {
                return Err(format!(
                    "ERROR:    where attribute '{k}' is not supported by Arches"
                ))
            }
            k => return Err(format!("ERROR:    unknown where attribute '{k}'")),
        }
    }
    for f in flags
        .unwrap_or("")
        .split([',', ':'])
        .map(|f| f.trim().to_ascii_lowercase())
        .filter(|f| !f.is_empty())
    {
        match f.as_str() {
            "future" => r.query.future = true,
            "tid" => r.tid = true,
            "policy" | "summary" | "timeflex" | "verbose" => {
                return Err(format!("ERROR:    --flags={f} is not supported by Arches"))
            }
            other => return Err(format!("ERROR:    unknown flag '{other}'")),
        }
    }
    if r.tid && r.query.gres.is_some() {
        return Err("ERROR:    --flags=tid with gres= is not supported by Arches: a reservation holds processors only, not generic resources".into());
    }
    if r.tid && r.query.nodes.is_some() {
        return Err("ERROR:    --flags=tid with minnodes= is not supported by Arches: a reservation holds processors, not a node count (ask minprocs=)".into());
    }
    Ok(r)
}

/// The `mrsvctl -c` specs of the reservation a window's transaction makes:
/// the request's processors (default 1) on the window's nodes, from its
/// start for the requested duration (else the window's), for the asking
/// credentials.
pub fn transaction_specs(view: &BackfillView, w: &BackfillWindow, r: &Request) -> Vec<String> {
    let hosts: Vec<&str> = w.hosts.iter().map(|h| h.node.as_str()).collect();
    let mut specs = vec![
        format!("starttime={}", w.start.max(view.now)),
        match r.duration.or(w.duration) {
            Some(d) => format!("duration={d}"),
            None => "duration=INFINITY".to_string(),
        },
        format!("hostlist={}", hosts.join(",")),
        format!("procs={}", r.min_tasks.unwrap_or(1)),
        format!("users={}", r.query.user.as_deref().unwrap_or(&view.user)),
    ];
    for (k, v) in [
        ("groups", &r.query.group),
        ("accounts", &r.query.account),
        ("classes", &r.query.class),
        ("qos", &r.query.qos),
    ] {
        if let Some(v) = v {
            specs.push(format!("{k}={v}"));
        }
    }
    specs
}

/// `[[[DD:]HH:]MM:]SS` → seconds (the CLI's own check; the daemon parses
/// the text again for the query).
fn parse_secs(v: &str) -> Option<i64> {
    let parts: Vec<&str> = v.split(':').collect();
    if parts.is_empty() || parts.len() > 4 {
        return None;
    }
    let mut secs: i64 = 0;
    let mul = [1i64, 60, 3600, 86_400];
    for (i, p) in parts.iter().rev().enumerate() {
        if p.is_empty() || !p.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        secs = secs.checked_add(p.parse::<i64>().ok()?.checked_mul(mul[i])?)?;
    }
    Some(secs)
}

/// The windows one requirement is answered with: those of its partition
/// (`ALL` without one) with at least its tasks.
pub fn select(view: &BackfillView, r: &Request) -> BackfillView {
    let par = r.query.partition.as_deref().unwrap_or("ALL");
    let mut v = view.clone();
    v.windows
        .retain(|w| w.partition == par && r.min_tasks.is_none_or(|m| w.procs >= m));
    v.partitions.retain(|p| p.0 == par);
    v
}

/// mshow -a's table: `Partition Tasks Nodes StartOffset Duration StartDate`
/// (the layout of showbf and of the consistent doc sample, mshow-a-1).
pub fn render(view: &BackfillView, requested: Option<i64>) -> String {
    let row = |a: &str, b: &str, c: &str, d: &str, e: &str, f: &str| {
        format!("{a:<12} {b:>6} {c:>6}  {d:>12}  {e:>12}  {f:>14}\n")
    };
    let mut o = row(
        "Partition",
        "Tasks",
        "Nodes",
        "StartOffset",
        "Duration",
        "StartDate",
    );
    o.push_str(&row(
        "---------",
        "-----",
        "-----",
        "------------",
        "------------",
        "--------------",
    ));
    for w in &view.windows {
        o.push_str(&row(
            &w.partition,
            &w.procs.to_string(),
            &w.nodes.to_string(),
            &duration((w.start - view.now).max(0)),
            &requested.map_or_else(|| limit(w.duration), duration),
            &short_date(w.start),
        ));
        if let Some(t) = w.tid {
            o.pop();
            o.push_str(&format!("  TID={t}  ReqID=0\n"));
        }
    }
    o
}

/// Runs mshow.
pub fn exec(a: Mshow) -> Result<u8, String> {
    if a.queue.is_some() {
        return Err(
            "ERROR:    'mshow -q' is not supported by Arches: showq shows the job queue".into(),
        );
    }
    if a.profile.is_some() {
        return Err("ERROR:    VPC profiles (-p) are not supported by Arches".into());
    }
    if a.timelock {
        return Err("ERROR:    time-locked requirements (-T) are not supported by Arches (one requirement per query)".into());
    }
    let r = parse_request(&a.wheres, a.flags.as_deref())?;
    let client = a.conn.client().map_err(|e| e.to_string())?;
    let mut view = select(&client.backfill(&r.query).map_err(|e| e.to_string())?, &r);
    if r.tid && !view.windows.is_empty() {
        let windows = view
            .windows
            .iter()
            .map(|w| transaction_specs(&view, w, &r))
            .collect();
        let resp = client
            .reservation_control(&ReservationRequest::Transactions { windows })
            .map_err(|e| e.to_string())?;
        if resp.failed {
            return Err(resp.stderr.join("\n"));
        }
        if resp.stdout.len() != view.windows.len() {
            return Err(format!(
                "ERROR:    the daemon answered {} transaction ids for {} windows",
                resp.stdout.len(),
                view.windows.len()
            ));
        }
        for (w, t) in view.windows.iter_mut().zip(&resp.stdout) {
            w.tid = Some(t.parse::<u64>().map_err(|_| {
                format!("ERROR:    the daemon answered an invalid transaction id '{t}'")
            })?);
        }
    }
    match a.output.format() {
        Format::Json => print_json(&view)?,
        Format::Xml => print(&format!("{}\n", showbf::render_backfill_xml(&view))),
        Format::Text => print(&render(&view, r.duration)),
    }
    Ok(EXIT_OK)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(w: &str, flags: Option<&str>) -> Result<Request, String> {
        parse_request(&[w.to_string()], flags)
    }

    #[test]
    fn where_clauses() {
        let r = req(
            "duration=10:00,minprocs=2,user=john,nodefeature=a:b",
            Some("future"),
        )
        .unwrap();
        assert_eq!(r.duration, Some(600));
        assert_eq!(r.min_tasks, Some(2));
        assert_eq!(r.query.user.as_deref(), Some("john"));
        assert_eq!(r.query.features, ["a", "b"]);
        assert!(r.query.future);
        let r = req("gres=dvd,duration=10:00", None).unwrap();
        assert_eq!(
            (r.query.gres.as_deref(), r.min_tasks),
            (Some("dvd"), Some(1))
        );
        assert!(req("os=AIX53", None).unwrap_err().contains("not supported"));
        assert!(req("bogus=1", None)
            .unwrap_err()
            .contains("unknown where attribute"));
        assert!(req("minprocs=1,minnodes=1", None)
            .unwrap_err()
            .contains("same requirement"));
        assert!(req("minprocs=0", None).is_err());
        assert!(req("duration=1:xx", None).is_err());
        let t = req("minprocs=2", Some("tid,future")).unwrap();
        assert!(t.tid && t.query.future);
        assert!(req("gres=dvd", Some("tid"))
            .unwrap_err()
            .contains("holds processors only"));
        assert!(req("minnodes=2", Some("tid"))
            .unwrap_err()
            .contains("node count"));
        assert!(
            parse_request(&["minprocs=1".into(), "minprocs=2".into()], None)
                .unwrap_err()
                .contains("co-allocation")
        );
        assert_eq!(parse_secs("1:00:00:00"), Some(86_400));
    }
}
