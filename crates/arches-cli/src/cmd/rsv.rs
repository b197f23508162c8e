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

/// Create or release reservations.
#[derive(Debug, Parser)]
#[command(
    disable_help_flag = true,
    name = "mrsvctl",
    about = "Create or release reservations",
    long_about = "Create an administrative reservation (-c) from a host list, start time, duration \
or end time, processor count and access list, release one (-r RSVID), or show reservations in \
detail (-q RSVID|ALL). Creating and releasing are for administrators.",
    group(ArgGroup::new("op").required(true).args(["create", "release", "query"]))
)]
pub struct Mrsvctl {
    /// Print help.
    #[arg(long, action = ArgAction::Help)]
    pub help: Option<bool>,
    /// Create a reservation.
    #[arg(short = 'c')]
    pub create: bool,
    /// Release (delete) a reservation.
    #[arg(short = 'r', value_name = "RSVID")]
    pub release: Option<String>,
    /// Show a reservation (or ALL) in detail, as mdiag -r.
    #[arg(short = 'q', value_name = "RSVID")]
    pub query: Option<String>,
    /// With -c: end time (same forms as -s).
    #[arg(short = 'e', value_name = "ENDTIME")]
    pub end: Option<String>,
    /// With -c: reservation name (id) instead of system.N.
    #[arg(short = 'n', value_name = "NAME")]
    pub name: Option<String>,
    /// With -c: access list, e.g. USER==john (users=john also accepted).
    #[arg(short = 'a', value_name = "ACL")]
    pub acl: Option<String>,
    /// With -c: duration `[[[DD:]HH:]MM:]SS`.
    #[arg(short = 'd', value_name = "DURATION")]
    pub duration: Option<String>,
    /// With -c: host list (comma separated).
    #[arg(short = 'h', value_name = "HOSTLIST")]
    pub hosts: Option<String>,
    /// With -c: start time (`[HH[:MM[:SS]]][_MO[/DD[/YY]]]` or +offset).
    #[arg(short = 's', value_name = "STARTTIME")]
    pub start: Option<String>,
    /// With -c: processor count.
    #[arg(short = 't', value_name = "PROCS")]
    pub procs: Option<String>,
    /// With -c: further ATTR=VALUE specifications, passed as written.
    #[arg(value_name = "ATTR=VALUE")]
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
    if let Some(q) = &a.query {
        let client = a.conn.client().map_err(|e| e.to_string())?;
        let mut v = client.reservations().map_err(|e| e.to_string())?;
        // `-q diag RSVID` is accepted as `-q RSVID`.
        let id = a.specs.first().filter(|_| q == "diag").unwrap_or(q);
        if !id.eq_ignore_ascii_case("ALL") && id != "diag" {
            v.reservations.retain(|r| &r.id == id);
            if v.reservations.is_empty() {
                eprintln!("ERROR:  cannot locate reservation '{id}'");
                return Ok(crate::EXIT_ERROR);
            }
        }
        match a.output.format() {
            Format::Json => print_json(&v)?,
            Format::Xml => print(&format!(
                "{}\n",
                crate::render::cluster::render_reservations_xml(&v)
            )),
            Format::Text => print(&crate::render::cluster::render_reservations(&v)),
        }
        return Ok(EXIT_OK);
    }
    let req = if let Some(id) = &a.release {
        ReservationRequest::Release { id: id.clone() }
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
        if let Some(t) = &a.procs {
            specs.push(format!("procs={t}"));
        }
        if let Some(acl) = &a.acl {
            specs.push(acl_spec(acl));
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn acl_specs() {
        assert_eq!(acl_spec("USER==john"), "users=john");
        assert_eq!(acl_spec("USER==a,USER==b"), "users=a,b");
        assert_eq!(acl_spec("users=x"), "users=x");
        assert_eq!(acl_spec("GROUP==staff"), "acl=GROUP==staff");
    }
}
