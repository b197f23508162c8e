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
-C the configuration. Options taking a name restrict the report to that object. -t PARTITION with \
-n, -j, -p or -b restricts those reports to a partition (its nodes; the jobs that ran or may run \
there); alone, -t [PARTITION] is the partition report. -w constrains -j only. A credential named \
with -u/-g/-a/-c/-q must be known (configured, or seen in a job or the statistics).",
    group(ArgGroup::new("report").args([
        "accounts", "blocked", "classes", "config", "groups", "jobs", "nodes", "priority",
        "qos", "reservations", "rms", "scheduler", "users", "fairshare",
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
    /// Fairshare usage per credential and interval (FSPOLICY, FSDEPTH, FSINTERVAL, FSDECAY, FSTARGET),
    /// then the share tree (FSTREE) when one is configured.
    #[arg(short = 'f')]
    pub fairshare: bool,
    /// With -f: organise by object type: `acct` nests each account's users under it (their share of
    /// the total usage, or with --flags=relative of the account's); `user` is the flat report.
    #[arg(short = 'o', value_name = "OTYPE", requires = "fairshare")]
    pub organize: Option<String>,
    /// With -f -o acct: `relative` shows each user's share of its account's usage.
    #[arg(long = "flags", value_name = "FLAGS", requires = "organize")]
    pub fs_flags: Option<String>,
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
    /// Check a configuration file (default $MOABHOMEDIR/moab.cfg, else ~/.arches/moab.cfg, else the service's /etc/arches/moab.cfg) without a daemon; exit 1 on errors.
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
    /// Partitions: nodes, processors and memory configured, up, dedicated and active; with -n,
    /// -j, -p or -b, restrict that report to this partition.
    #[arg(short = 't', value_name = "PARTITION", num_args = 0..=1, default_missing_value = "")]
    pub partitions: Option<String>,
    /// Users (optionally one).
    #[arg(short = 'u', value_name = "USER", num_args = 0..=1, default_missing_value = "")]
    pub users: Option<String>,
    /// Verbose; repeat for more.
    #[arg(short = 'v', action = ArgAction::Count)]
    pub verbose: u8,
    /// With -j: completed=true (completed jobs only), ALL=true (completed ones too), system=true,
    /// and mjobctl's job constraints (user=, group=, account=, class=, qos=, state=, partition=...).
    #[arg(short = 'w', value_name = "ATTR=VALUE", action = ArgAction::Append, requires = "jobs")]
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
        None => arches_api::paths::client_config(),
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
    let reports = [
        a.accounts.is_some(),
        a.blocked,
        a.classes.is_some(),
        a.groups.is_some(),
        a.jobs.is_some(),
        a.nodes.is_some(),
        a.priority,
        a.qos.is_some(),
        a.reservations.is_some(),
        a.rms.is_some(),
        a.scheduler,
        a.users.is_some(),
        a.fairshare,
        a.green.is_some(),
        a.triggers.is_some(),
        a.limits,
        a.standing.is_some(),
        a.overall,
    ];
    let partition = some(&a.partitions).map(str::to_string);
    let usage = |kind: clap::error::ErrorKind, msg: &str| -> Result<u8, String> {
        let mut cmd = <Mdiag as clap::CommandFactory>::command();
        let _ = cmd.error(kind, msg).print();
        Ok(crate::EXIT_ERROR)
    };
    use clap::error::ErrorKind;
    if !reports.iter().any(|r| *r) && a.partitions.is_none() {
        return usage(
            ErrorKind::MissingRequiredArgument,
            "a report is required: one of -a -b -c -C -f -g -G -j -L -n -p -q -r -R -s -S -t -T -u -x",
        );
    }
    for (given, needs, what) in [
        (
            !a.constraints.is_empty(),
            a.jobs.is_some(),
            "-w is only valid with -j",
        ),
        (
            a.policy_level.is_some(),
            a.blocked,
            "-l is only valid with -b",
        ),
        (
            a.organize.is_some(),
            a.fairshare,
            "-o is only valid with -f",
        ),
    ] {
        if given && !needs {
            return usage(ErrorKind::ArgumentConflict, what);
        }
    }
    let filtered = a.nodes.is_some() || a.jobs.is_some() || a.priority || a.blocked;
    if partition.is_some() && reports.iter().any(|r| *r) && !filtered {
        return Err(
            "ERROR:    -t PARTITION restricts only -n, -j, -p and -b (alone it is the partition report)"
                .into(),
        );
    }
    let client = a.conn.client().map_err(|e| e.to_string())?;
    let err = |e: arches_client::ClientError| e.to_string();
    // The ids of the jobs of the partition (ran or may run there), as showq -p.
    let partition_jobs =
        |completed: bool| -> Result<Option<std::collections::BTreeSet<u64>>, String> {
            match &partition {
                Some(p) => Ok(Some(
                    client
                        .queue(&QueueQuery {
                            completed,
                            partition: Some(p.clone()),
                        })
                        .map_err(err)?
                        .jobs
                        .iter()
                        .map(|j| j.id)
                        .collect(),
                )),
                None => Ok(None),
            }
        };
    for (kind, obj, name) in [
        ("user", "user", some(&a.users)),
        ("group", "group", some(&a.groups)),
        ("account", "acct", some(&a.accounts)),
        ("class", "class", some(&a.classes)),
        ("qos", "qos", some(&a.qos)),
    ] {
        if let Some(n) = name {
            let v = client.credentials().map_err(err)?;
            let known = v.credentials.iter().any(|c| c.kind == kind && c.name == n)
                || v.historical.iter().any(|(k, x)| k == kind && x == n);
            if !known {
                return Err(format!(
                    "ERROR:    cannot locate {obj} {n} in Moab's historical data"
                ));
            }
        }
    }
    if a.fairshare {
        let by_account = match a.organize.as_deref() {
            None => false,
            Some(o) if o.eq_ignore_ascii_case("user") => false,
            Some(o) if o.eq_ignore_ascii_case("acct") || o.eq_ignore_ascii_case("account") => true,
            Some(o) => {
                return Err(format!(
                    "ERROR:    'mdiag -f -o {o}' is not supported: Arches nests users under accounts only (-o acct); mdiag -f lists every credential kind (and the FSTREE share tree when one is configured)"
                ))
            }
        };
        let relative = match a.fs_flags.as_deref() {
            None => false,
            Some(f) if f.eq_ignore_ascii_case("relative") => true,
            Some(f) => {
                return Err(format!(
                    "ERROR:    invalid flag '{f}' for mdiag -f (expected relative)"
                ))
            }
        };
        let f = client.fairshare().map_err(err)?;
        match fmt {
            Format::Json => print_json(&f)?,
            Format::Xml => return Err(no_xml("mdiag -f")),
            Format::Text if by_account => print(&mdiag::render_fairshare_by_account(&f, relative)),
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
        let mut p = client.priority().map_err(err)?;
        if let Some(ids) = partition_jobs(false)? {
            p.jobs.retain(|j| ids.contains(&j.id));
        }
        let par = partition.as_deref().unwrap_or("ALL");
        match fmt {
            Format::Json => print_json(&p)?,
            Format::Xml => print(&format!("{}\n", mdiag::render_priority_xml(&p, a.verbose))),
            Format::Text => print(&mdiag::render_priority_in(&p, a.verbose, par)),
        }
    } else if a.blocked {
        let q = client
            .queue(&QueueQuery {
                completed: false,
                partition: partition.clone(),
            })
            .map_err(err)?;
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
                print(&mdiag::render_blocked_in(
                    &q,
                    &level,
                    partition.as_deref().unwrap_or("ALL"),
                ))
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
                history: false,
            })
            .map_err(err)?;
        if let Some(ids) = partition_jobs(completed || all)? {
            v.jobs.retain(|d| ids.contains(&d.summary.id));
        }
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
        for d in &v.denied {
            eprintln!("{}", checkjob::not_authorized(d));
        }
        if !v.unknown.is_empty() || !v.errors.is_empty() || !v.denied.is_empty() {
            return Ok(crate::EXIT_ERROR);
        }
    } else if a.nodes.is_some() {
        let mut v = client.nodes(some(&a.nodes)).map_err(err)?;
        if let Some(p) = &partition {
            if !v.nodes.iter().any(|n| &n.partition == p) && some(&a.nodes).is_none() {
                return Err(crate::render::showq::UNKNOWN_PARTITION.to_string());
            }
            v.nodes.retain(|n| &n.partition == p);
        }
        match fmt {
            Format::Json => print_json(&v)?,
            Format::Xml => print(&format!("{}\n", checknode::render_xml(&v))),
            Format::Text if a.verbose > 0 => print(&checknode::render_summary_verbose(&v)),
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
    } else if a.partitions.is_some() {
        let mut v = client.nodes(None).map_err(err)?;
        if let Some(p) = &partition {
            if !v.nodes.iter().any(|n| &n.partition == p) {
                return Err(crate::render::showq::UNKNOWN_PARTITION.to_string());
            }
            v.nodes.retain(|n| &n.partition == p);
        }
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
        let mut v = client.credentials().map_err(err)?;
        if let Some(n) = name {
            // Known only from finished jobs or the statistics: a row of
            // defaults (nothing configured, nothing active).
            if !v.credentials.iter().any(|c| c.kind == kind && c.name == n) {
                v.credentials.push(arches_api::CredentialInfo {
                    kind: kind.to_string(),
                    name: n.to_string(),
                    ..Default::default()
                });
            }
        }
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
