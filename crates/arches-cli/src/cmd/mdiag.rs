//! mdiag: diagnostics of the scheduler, jobs, nodes, priorities, blocked
//! jobs, reservations, credentials and configuration.

use arches_api::{JobsRequest, QueueQuery};
use clap::{ArgAction, ArgGroup, Parser};

use crate::common::{no_xml, print, print_json, Connection, Format, Output};
use crate::render::{checkjob, checknode, cluster, creds, mdiag};
use crate::EXIT_OK;

/// Diagnose the scheduler's objects.
#[derive(Debug, Parser)]
#[command(
    name = "mdiag",
    about = "Diagnose jobs, nodes, priorities, reservations, credentials and the scheduler",
    long_about = "Print diagnostic reports: -S the scheduler, -j jobs, -n nodes, -p job priorities, \
-b blocked jobs, -t partitions, -R resource managers, -r reservations, -u/-g/-a/-c/-q users, groups, accounts, classes and QOS, \
-C the configuration. Options taking a name restrict the report to that object.",
    group(ArgGroup::new("report").required(true).args([
        "accounts", "blocked", "classes", "config", "groups", "jobs", "nodes", "priority",
        "qos", "reservations", "rms", "scheduler", "partitions", "users", "fairshare",
        "green", "triggers", "limits", "standing", "overall"
    ]))
)]
pub struct Mdiag {
    /// Accounts (optionally one).
    #[arg(short = 'a', value_name = "ACCOUNT", num_args = 0..=1, default_missing_value = "")]
    pub accounts: Option<String>,
    /// Jobs blocked by holds, policies or dependencies.
    #[arg(short = 'b')]
    pub blocked: bool,
    /// With -b: the policy level shown in the header (HARD, SOFT or OFF).
    #[arg(short = 'l', value_name = "POLICYLEVEL", requires = "blocked")]
    pub policy_level: Option<String>,
    /// Fairshare usage per credential and interval (FSPOLICY, FSDEPTH, FSINTERVAL, FSDECAY, FSTARGET).
    #[arg(short = 'f')]
    pub fairshare: bool,
    /// With -f: organise by object type (accepted for compatibility; Arches prints every kind flat).
    #[arg(short = 'o', value_name = "OTYPE", requires = "fairshare")]
    pub organize: Option<String>,
    /// Power management (Arches manages no node power: says so).
    #[arg(short = 'G', value_name = "GREEN", num_args = 0..=1, default_missing_value = "")]
    pub green: Option<String>,
    /// Triggers (Arches has no triggers: prints an empty table).
    #[arg(short = 'T', value_name = "TRIGGERID", num_args = 0..=1, default_missing_value = "")]
    pub triggers: Option<String>,
    /// Usage limits: every credential limit with its current usage.
    #[arg(short = 'L')]
    pub limits: bool,
    /// Standing reservations (SRCFG), optionally one.
    #[arg(short = 's', value_name = "SRSVID", num_args = 0..=1, default_missing_value = "")]
    pub standing: Option<String>,
    /// Overall consistency check: job and configuration warnings.
    #[arg(short = 'x')]
    pub overall: bool,
    /// Classes/queues (optionally one).
    #[arg(short = 'c', value_name = "CLASS", num_args = 0..=1, default_missing_value = "")]
    pub classes: Option<String>,
    /// Check a configuration file (default $MOABHOMEDIR/moab.cfg) without a daemon; exit 1 on errors.
    #[arg(short = 'C', value_name = "CONFIGFILE", num_args = 0..=1, default_missing_value = "")]
    pub config: Option<String>,
    /// Groups (optionally one).
    #[arg(short = 'g', value_name = "GROUP", num_args = 0..=1, default_missing_value = "")]
    pub groups: Option<String>,
    /// Jobs (optionally one); --xml gives the checkjob job XML.
    #[arg(short = 'j', value_name = "JOBID", num_args = 0..=1, default_missing_value = "")]
    pub jobs: Option<String>,
    /// Nodes (optionally one); --xml gives <node> elements.
    #[arg(short = 'n', value_name = "NODE", num_args = 0..=1, default_missing_value = "")]
    pub nodes: Option<String>,
    /// Job priority breakdown per component of the eligible jobs (-v adds running jobs, -v -v every job; --xml).
    #[arg(short = 'p')]
    pub priority: bool,
    /// Quality of service (optionally one).
    #[arg(short = 'q', value_name = "QOS", num_args = 0..=1, default_missing_value = "")]
    pub qos: Option<String>,
    /// Reservations (optionally one).
    #[arg(short = 'r', value_name = "RSVID", num_args = 0..=1, default_missing_value = "")]
    pub reservations: Option<String>,
    /// Resource managers (optionally one): type, state, nodes reported.
    #[arg(short = 'R', value_name = "RM", num_args = 0..=1, default_missing_value = "")]
    pub rms: Option<String>,
    /// The scheduler: host, mode, iterations, messages.
    #[arg(short = 'S')]
    pub scheduler: bool,
    /// Partitions: nodes, processors and memory configured, up, dedicated and active.
    #[arg(short = 't')]
    pub partitions: bool,
    /// Users (optionally one).
    #[arg(short = 'u', value_name = "USER", num_args = 0..=1, default_missing_value = "")]
    pub users: Option<String>,
    /// Verbose; repeat for more.
    #[arg(short = 'v', action = ArgAction::Count)]
    pub verbose: u8,
    /// With -j --xml: completed=true includes completed jobs.
    #[arg(short = 'w', value_name = "ATTR=VALUE", action = ArgAction::Append)]
    pub constraints: Vec<String>,
    #[command(flatten)]
    pub output: Output,
    #[command(flatten)]
    pub conn: Connection,
}

fn some(s: &Option<String>) -> Option<&str> {
    s.as_deref().filter(|s| !s.is_empty())
}

/// `mdiag -C [FILE]`: checks a configuration file (default
/// `$MOABHOMEDIR/moab.cfg`) with `arches-config`; exit 1 on any ERROR.
fn check_config(file: Option<&str>, verbose: u8, fmt: Format) -> Result<u8, String> {
    let path = match file {
        Some(f) => std::path::PathBuf::from(f),
        None => arches_api::paths::home().join(arches_api::paths::CONFIG_NAME),
    };
    let shown = path.display().to_string();
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if file.is_none() && e.kind() == std::io::ErrorKind::NotFound => {
            match fmt {
                Format::Json => print_json(&serde_json::json!({
                    "file": shown,
                    "exists": false,
                    "lines": 0,
                    "errors": [],
                    "warnings": [],
                }))?,
                Format::Xml => return Err(no_xml("mdiag -C")),
                Format::Text => print(&format!(
                    "{shown}: no configuration file; the embedded default configuration applies\n"
                )),
            }
            return Ok(EXIT_OK);
        }
        Err(e) => {
            let reason = e.to_string();
            let reason = reason.split(" (os error").next().unwrap_or(&reason);
            return Err(format!(
                "ERROR:    cannot read configuration file '{shown}' ({reason})"
            ));
        }
    };
    let verbosity = if verbose > 0 {
        arches_config::Verbosity::Verbose
    } else {
        arches_config::Verbosity::Normal
    };
    let report = arches_config::check(&text, &shown, verbosity);
    match fmt {
        Format::Json => print_json(&serde_json::json!({
            "file": shown,
            "exists": true,
            "lines": report.lines,
            "errors": report.errors,
            "warnings": report.warnings,
        }))?,
        Format::Xml => return Err(no_xml("mdiag -C")),
        Format::Text => print(&report.render()),
    }
    Ok(if report.ok() {
        EXIT_OK
    } else {
        crate::EXIT_ERROR
    })
}

/// Runs mdiag.
pub fn exec(a: Mdiag) -> Result<u8, String> {
    let fmt = a.output.format();
    if let Some(file) = &a.config {
        // Works without a daemon: the file is checked here.
        return check_config(some(&Some(file.clone())), a.verbose, fmt);
    }
    let client = a.conn.client().map_err(|e| e.to_string())?;
    let err = |e: arches_client::ClientError| e.to_string();
    if a.fairshare {
        if let Some(o) = &a.organize {
            if !o.eq_ignore_ascii_case("user") {
                return Err(format!(
                    "ERROR:    'mdiag -f -o {o}' (a fairshare tree) is not supported: Arches has no FSTREE; mdiag -f lists every credential kind"
                ));
            }
        }
        let f = client.fairshare().map_err(err)?;
        match fmt {
            Format::Json => print_json(&f)?,
            Format::Xml => return Err(no_xml("mdiag -f")),
            Format::Text => print(&mdiag::render_fairshare(&f)),
        }
        return Ok(EXIT_OK);
    }
    if a.green.is_some() {
        let v = client.nodes(None).map_err(err)?;
        match fmt {
            Format::Json => print_json(&serde_json::json!({ "power_management": false }))?,
            Format::Xml => return Err(no_xml("mdiag -G")),
            Format::Text => print(&mdiag::render_green(&v)),
        }
        return Ok(EXIT_OK);
    }
    if a.triggers.is_some() {
        match fmt {
            Format::Json => print_json(&serde_json::json!({ "triggers": [] }))?,
            Format::Xml => print("<Data></Data>\n"),
            Format::Text => print(mdiag::TRIGGER_HEADER),
        }
        return Ok(EXIT_OK);
    }
    if a.limits {
        let v = client.credentials().map_err(err)?;
        match fmt {
            Format::Json => print_json(&v)?,
            Format::Xml => return Err(no_xml("mdiag -L")),
            Format::Text => print(&mdiag::render_limits(&v)),
        }
        return Ok(EXIT_OK);
    }
    if let Some(id) = &a.standing {
        let mut v = client.reservations().map_err(err)?;
        v.reservations.retain(|r| {
            r.flags.iter().any(|f| f == "STANDINGRSV")
                && (id.is_empty() || r.id == *id || r.id.starts_with(&format!("{id}.")))
        });
        match fmt {
            Format::Json => print_json(&v)?,
            Format::Xml => print(&format!("{}\n", cluster::render_reservations_xml(&v))),
            Format::Text => print(&cluster::render_reservations(&v)),
        }
        return Ok(EXIT_OK);
    }
    if a.overall {
        let s = client.scheduler().map_err(err)?;
        let v = client
            .jobs(&JobsRequest {
                ids: vec!["ALL".into()],
                completed: false,
                ..Default::default()
            })
            .map_err(err)?;
        let o = mdiag::render_overall(&s, &v);
        match fmt {
            Format::Json => print_json(
                &serde_json::json!({ "warnings": o.lines().filter(|l| l.contains("WARNING")).collect::<Vec<_>>() }),
            )?,
            Format::Xml => return Err(no_xml("mdiag -x")),
            Format::Text => print(&o),
        }
        return Ok(EXIT_OK);
    }
    if a.scheduler {
        let s = client.scheduler().map_err(err)?;
        match fmt {
            Format::Json => print_json(&s)?,
            Format::Xml => return Err(no_xml("mdiag")),
            Format::Text => print(&mdiag::render_scheduler(&s)),
        }
    } else if a.priority {
        let p = client.priority().map_err(err)?;
        match fmt {
            Format::Json => print_json(&p)?,
            Format::Xml => print(&format!("{}\n", mdiag::render_priority_xml(&p, a.verbose))),
            Format::Text => print(&mdiag::render_priority(&p, a.verbose)),
        }
    } else if a.blocked {
        let q = client.queue(&QueueQuery::default()).map_err(err)?;
        match fmt {
            Format::Json => {
                let mut q = q;
                q.jobs.retain(|j| j.section == arches_api::Section::Blocked);
                print_json(&q)?
            }
            Format::Xml => return Err(no_xml("mdiag")),
            Format::Text => {
                let level = match a.policy_level.as_deref().map(str::to_ascii_uppercase) {
                    None => "SOFT".to_string(),
                    Some(l) if ["HARD", "SOFT", "OFF"].contains(&l.as_str()) => l,
                    Some(l) => {
                        return Err(format!(
                            "ERROR:    invalid policy level '{l}' (HARD, SOFT or OFF)"
                        ))
                    }
                };
                print(&mdiag::render_blocked_at(&q, &level))
            }
        }
    } else if a.jobs.is_some() {
        // `completed=true` (completed jobs only), `ALL=true` (every job,
        // completed ones too) and `system=true` (Arches has no system jobs:
        // nothing to add) are mdiag's own; every other `-w` selects jobs as
        // mjobctl's does.
        let is = |c: &String, k: &str| c.eq_ignore_ascii_case(&format!("{k}=true"));
        let completed = a.constraints.iter().any(|c| is(c, "completed"));
        let all = a.constraints.iter().any(|c| is(c, "ALL"));
        let constraints = a
            .constraints
            .iter()
            .filter(|c| !is(c, "completed") && !is(c, "ALL") && !is(c, "system"))
            .cloned()
            .collect();
        let ids = vec![some(&a.jobs).unwrap_or("ALL").to_string()];
        let mut v = client
            .jobs(&JobsRequest {
                ids,
                completed: completed || all,
                select: arches_api::JobSelect {
                    name: None,
                    constraints,
                },
            })
            .map_err(err)?;
        if completed && some(&a.jobs).is_none() {
            // Moab: `-w completed=true` lists completed jobs only, earliest completion first.
            v.jobs
                .retain(|d| d.summary.section == arches_api::Section::Completed);
            v.jobs
                .sort_by_key(|d| (d.summary.completion_time, d.summary.id));
        }
        match fmt {
            Format::Json => print_json(&v)?,
            Format::Xml => print(&format!("{}\n", checkjob::render_xml(&v, a.verbose > 0))),
            Format::Text => print(&mdiag::render_jobs(&v, a.verbose > 0)),
        }
        for id in &v.unknown {
            eprintln!("ERROR:  invalid job specified: {id}");
        }
        for e in &v.errors {
            eprintln!("{e}");
        }
        if !v.unknown.is_empty() || !v.errors.is_empty() {
            return Ok(crate::EXIT_ERROR);
        }
    } else if a.nodes.is_some() {
        let v = client.nodes(some(&a.nodes)).map_err(err)?;
        match fmt {
            Format::Json => print_json(&v)?,
            Format::Xml => print(&format!("{}\n", checknode::render_xml(&v))),
            Format::Text => print(&checknode::render_summary(&v)),
        }
    } else if a.rms.is_some() {
        let v = client.nodes(None).map_err(err)?;
        match fmt {
            Format::Json => print_json(&v)?,
            Format::Xml => return Err(no_xml("mdiag -R")),
            Format::Text => {
                let mut o = cluster::render_rms(&v, some(&a.rms));
                for st in v
                    .storage
                    .iter()
                    .filter(|st| some(&a.rms).is_none_or(|n| n == st.rm))
                {
                    o.push_str(&crate::render::staging::rm_block(st, v.now));
                }
                print(&o)
            }
        }
    } else if a.partitions {
        let v = client.nodes(None).map_err(err)?;
        match fmt {
            Format::Json => print_json(&v)?,
            Format::Xml => return Err(no_xml("mdiag -t")),
            Format::Text => print(&cluster::render_partitions(&v)),
        }
    } else if a.reservations.is_some() {
        let mut v = client.reservations().map_err(err)?;
        if let Some(id) = some(&a.reservations) {
            v.reservations.retain(|r| r.id == id);
        }
        match fmt {
            Format::Json => print_json(&v)?,
            Format::Xml => print(&format!("{}\n", cluster::render_reservations_xml(&v))),
            Format::Text => print(&cluster::render_reservations(&v)),
        }
    } else {
        let (kind, name) = if a.users.is_some() {
            ("user", some(&a.users))
        } else if a.groups.is_some() {
            ("group", some(&a.groups))
        } else if a.accounts.is_some() {
            ("account", some(&a.accounts))
        } else if a.classes.is_some() {
            ("class", some(&a.classes))
        } else {
            ("qos", some(&a.qos))
        };
        let v = client.credentials().map_err(err)?;
        match fmt {
            Format::Json => {
                let mut v = v;
                v.credentials
                    .retain(|c| c.kind == kind && name.is_none_or(|n| n == c.name));
                print_json(&v)?
            }
            Format::Xml => print(&format!(
                "{}\n",
                creds::render_xml(&v.credentials, kind, name)
            )),
            Format::Text => print(&creds::render_credentials(&v.credentials, kind, name)),
        }
    }
    Ok(EXIT_OK)
}
