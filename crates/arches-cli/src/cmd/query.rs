//! Query commands: showq, checkjob, checknode, showbf, showstart, showstats.

use arches_api::{BackfillQuery, JobsRequest, QueueQuery, StartQuery};
use clap::{ArgAction, ArgGroup, Parser};

use crate::common::{print, print_json, Connection, Format, Output};
use crate::render::{arrays, checkjob, checknode, showbf, showq};
use crate::{EXIT_ERROR, EXIT_OK};

/// Display the job queue: active, eligible and blocked jobs.
#[derive(Debug, Parser)]
#[command(
    name = "showq",
    about = "Display the job queue: active, eligible and blocked jobs",
    long_about = "Display the job queue in Moab's format: active jobs (earliest completion first), \
eligible jobs (priority order) and blocked jobs, with the cluster's processor and node usage. \
-r, -i, -c and -b select a single detailed section. -w and -u name credentials that must be known \
(configured, or seen in a job or the statistics): otherwise Moab's `ERROR:    cannot locate user X in \
Moab's historical data` and exit 1. -p PARTITION shows the active and completed jobs that ran in it, \
the eligible and blocked jobs that may run there, and the partition's own usage. Moab's notes \
(scheduling paused, a system reservation blocking every node) follow the report.",
    group(ArgGroup::new("mode").args(["running", "idle", "completed", "blocked"]))
)]
pub struct Showq {
    /// Show only blocked jobs.
    #[arg(short = 'b')]
    pub blocked: bool,
    /// Show recently completed jobs (kept for JOBCPURGETIME).
    #[arg(short = 'c')]
    pub completed: bool,
    /// Show eligible jobs in detail (priority, xfactor, class, queue time).
    #[arg(short = 'i')]
    pub idle: bool,
    /// Show active jobs in detail (partition, xfactor, group, master host).
    #[arg(short = 'r')]
    pub running: bool,
    /// Verbose: local and full job ids (<id>/<scheduler>.<id>) and partitions; with -i the
    /// reservation start time; in XML the DRMJID of every job.
    #[arg(short = 'v')]
    pub verbose: bool,
    /// Show job names under JOBID instead of job ids.
    #[arg(short = 'n')]
    pub names: bool,
    /// Order active jobs by start time (earliest started first) instead of earliest completion.
    #[arg(short = 'o')]
    pub order: bool,
    /// Only jobs matching <attr>=<value>: user, group, acct, class, qos, partition, rsv; repeatable.
    #[arg(short = 'w', value_name = "CONSTRAINT", action = ArgAction::Append)]
    pub constraints: Vec<String>,
    /// Only jobs of this user.
    #[arg(short = 'u', value_name = "USER")]
    pub user: Option<String>,
    /// Only jobs of this partition: active and completed ones that ran there, eligible and
    /// blocked ones that may run there; the summary lines are the partition's.
    #[arg(short = 'p', value_name = "PARTITION")]
    pub partition: Option<String>,
    /// Accepted for compatibility with third-party tools (abipy passes `-s`); no effect.
    #[arg(short = 's')]
    pub summary: bool,
    /// Grid job and system ids: Arches has no grid, so the ids shown are already the system ids.
    #[arg(short = 'g')]
    pub grid: bool,
    /// Local/remote view (grid): every Arches job is local; the report is unchanged.
    #[arg(short = 'l')]
    pub local: bool,
    /// Only jobs that overlap this reservation in time and nodes (a job reservation: that job).
    #[arg(short = 'R', value_name = "RSVID")]
    pub reservation: Option<String>,
    /// Answer without the client-side cache: Arches always answers from the scheduler's last
    /// published state (there is no cache), so the report is the same.
    #[arg(long, conflicts_with = "noblock")]
    pub blocking: bool,
    /// Accepted for compatibility (Rocoto); the daemon always answers without blocking.
    #[arg(long)]
    pub noblock: bool,
    /// Every sub-job of a job array on its own line (`ID[INDEX]`, as Torque's qstat -t); by
    /// default the queued sub-jobs of an array in the same state share one line `ID[INDEXES]`.
    #[arg(short = 't', long = "expand-arrays")]
    pub expand_arrays: bool,
    #[command(flatten)]
    pub output: Output,
    #[command(flatten)]
    pub conn: Connection,
}

/// Runs showq.
pub fn showq(a: Showq) -> Result<u8, String> {
    let mut filter = showq::Filter::default();
    let mut rsv = a.reservation.clone();
    for c in &a.constraints {
        if let Some(r) = filter.add_constraint(c)? {
            rsv = Some(r);
        }
    }
    if let Some(u) = &a.user {
        filter.user = Some(u.clone());
    }
    let partition = a.partition.clone().or_else(|| filter.partition.take());
    let mode = if a.running {
        showq::Mode::Running
    } else if a.idle {
        showq::Mode::Idle
    } else if a.completed {
        showq::Mode::Completed
    } else if a.blocked {
        showq::Mode::Blocked
    } else {
        showq::Mode::Default
    };
    let display = showq::Display {
        names: a.names,
        verbose: a.verbose,
        start_order: a.order,
    };
    let client = a.conn.client().map_err(|e| e.to_string())?;
    let creds = filter.credentials();
    if !creds.is_empty() {
        let known = client.credentials().map_err(|e| e.to_string())?;
        for (kind, obj, name) in creds {
            let found = known
                .credentials
                .iter()
                .any(|c| c.kind == kind && c.name == name)
                || known.historical.iter().any(|(k, n)| k == kind && n == name);
            if !found {
                return Err(format!(
                    "ERROR:    cannot locate {obj} {name} in Moab's historical data"
                ));
            }
        }
    }
    let mut view = client
        .queue(&QueueQuery {
            completed: a.completed,
            partition,
        })
        .map_err(|e| e.to_string())?;
    if let Some(rid) = &rsv {
        let rsv = client.reservations().map_err(|e| e.to_string())?;
        let target = rsv
            .reservations
            .iter()
            .find(|r| &r.id == rid)
            .ok_or_else(|| format!("ERROR:  cannot locate reservation '{rid}'"))?;
        let overlapping: Vec<u64> = rsv
            .reservations
            .iter()
            .filter(|r| r.kind == "Job")
            .filter(|r| {
                r.id == target.id
                    || (r
                        .nodes
                        .iter()
                        .any(|n| target.nodes.iter().any(|t| t.node == n.node))
                        && r.start < target.end.unwrap_or(i64::MAX)
                        && target.start < r.end.unwrap_or(i64::MAX))
            })
            .filter_map(|r| r.id.parse().ok())
            .collect();
        view.jobs.retain(|j| overlapping.contains(&j.id));
    }
    match a.output.format() {
        Format::Text => {
            let arrange = if a.expand_arrays {
                arrays::expand
            } else {
                arrays::collapse
            };
            view.jobs = arrange(std::mem::take(&mut view.jobs));
            print(&showq::render_with(&view, &filter, mode, display))
        }
        Format::Xml => {
            // One <job> per sub-job: what XML clients count and look up.
            view.jobs = arrays::expand(std::mem::take(&mut view.jobs));
            print(&format!(
                "{}\n",
                showq::render_xml_with(&view, &filter, mode, display)
            ))
        }
        Format::Json => {
            // The jobs of the sections this mode shows, filtered as the text is.
            let mut v = view;
            v.jobs
                .retain(|j| mode.shows(j.section) && filter.matches(j));
            print_json(&v)?
        }
    }
    Ok(EXIT_OK)
}

/// Display detailed information about jobs.
#[derive(Debug, Parser)]
#[command(
    name = "checkjob",
    about = "Display detailed status of one or more jobs",
    long_about = "Display a job's state, credentials, wall time, requested and allocated resources, \
reservation and priority in Moab's format. Several ids print several reports separated by a line of \
'=' characters; ALL selects every job. A job named more than once (`5 5`, `5 Moab.5`) is shown once."
)]
pub struct Checkjob {
    /// Verbose; give twice (-v -v or -vv) for more detail.
    #[arg(short = 'v', action = ArgAction::Count)]
    pub verbose: u8,
    /// Parsable output: one line of ATTRIBUTE=VALUE; pairs per job (Moab's names: NAME, STATE,
    /// UNAME, GNAME, ACCOUNT, RCLASS, WCLIMIT, QUEUETIME, STARTTIME, TASKS, NODES, then Arches'
    /// JOBNAME, QOS, PROCS, PRIORITY, ...). STARTTIME of a queued job is its estimated start (0: none).
    #[arg(short = 'A')]
    pub avp: bool,
    /// Policy level of the eligibility evaluation (HARD, SOFT or OFF; Arches evaluates soft and hard limits in one pass and reports that).
    #[arg(short = 'l', value_name = "POLICYLEVEL")]
    pub policy_level: Option<String>,
    /// Check whether the job could use this node, and the preemption status of the jobs on it.
    #[arg(short = 'n', value_name = "NODE")]
    pub node: Option<String>,
    /// Check access to these QoS (comma list).
    #[arg(short = 'q', value_name = "QOS[,QOS]")]
    pub qos: Option<String>,
    /// Check access to these reservations (comma list).
    #[arg(short = 'r', value_name = "RSVID[,RSVID]")]
    pub reservations: Option<String>,
    /// future: accepted (the report is the scheduler's own evaluation, which already plans ahead).
    #[arg(long, value_name = "FLAGS")]
    pub flags: Option<String>,
    /// Job ids (`17`, `Moab.17`) or ALL.
    #[arg(value_name = "JOBID", required = true)]
    pub jobs: Vec<String>,
    #[command(flatten)]
    pub output: Output,
    #[command(flatten)]
    pub conn: Connection,
}

/// Runs checkjob.
pub fn checkjob(a: Checkjob) -> Result<u8, String> {
    let client = a.conn.client().map_err(|e| e.to_string())?;
    let view = client
        .jobs(&JobsRequest {
            ids: a.jobs.clone(),
            completed: true,
            ..Default::default()
        })
        .map_err(|e| e.to_string())?;
    if let Some(l) = &a.policy_level {
        if !["HARD", "SOFT", "OFF"].contains(&l.to_ascii_uppercase().as_str()) {
            return Err(format!(
                "ERROR:    invalid policy level '{l}' (HARD, SOFT or OFF)"
            ));
        }
    }
    if let Some(f) = &a.flags {
        if !f.split(',').all(|f| f.eq_ignore_ascii_case("future")) {
            return Err(format!("ERROR:    invalid flags '{f}' (future)"));
        }
    }
    match a.output.format() {
        Format::Text if a.avp => {
            for d in &view.jobs {
                print(&crate::render::access::avp(d));
            }
        }
        Format::Text => {
            if !view.jobs.is_empty() {
                let checks = access_checks(&a, &client, &view)?;
                let parts: Vec<String> = view
                    .jobs
                    .iter()
                    .zip(checks)
                    .map(|(d, extra)| {
                        let mut r = checkjob::render_one(d, view.now, a.verbose);
                        r.push_str(&extra);
                        r
                    })
                    .collect();
                print(&parts.join(checkjob::SEPARATOR));
            }
        }
        Format::Xml => {
            // Moab answers an unknown job with its XML error (code 700)
            // instead of a document.
            if !view.jobs.is_empty() || view.unknown.is_empty() {
                print(&format!("{}\n", checkjob::render_xml(&view, a.verbose > 0)));
            }
            for id in &view.unknown {
                print(&format!("{}\n", checkjob::unknown_job_xml(id)));
            }
        }
        Format::Json => print_json(&view)?,
    }
    if a.output.format() != Format::Xml {
        for id in &view.unknown {
            eprintln!("{}", checkjob::unknown_job(id));
        }
    }
    for e in &view.errors {
        eprintln!("{e}");
    }
    for d in &view.denied {
        eprintln!("{}", checkjob::not_authorized(d));
    }
    Ok(
        if view.unknown.is_empty() && view.errors.is_empty() && view.denied.is_empty() {
            EXIT_OK
        } else {
            EXIT_ERROR
        },
    )
}

/// The NOTE lines of `checkjob -n/-q/-r` for each job (empty without them).
fn access_checks(
    a: &Checkjob,
    client: &arches_client::Client,
    view: &arches_api::JobsView,
) -> Result<Vec<String>, String> {
    use crate::render::access;
    let mut out = vec![String::new(); view.jobs.len()];
    if let Some(name) = &a.node {
        let nodes = client.nodes(Some(name)).map_err(|e| e.to_string())?;
        let n = nodes
            .nodes
            .first()
            .ok_or_else(|| format!("ERROR:    cannot locate node '{name}'"))?;
        let q = client
            .queue(&arches_api::QueueQuery::default())
            .map_err(|e| e.to_string())?;
        let on: Vec<(u64, bool)> = n
            .jobs
            .iter()
            .map(|id| {
                let p = q
                    .jobs
                    .iter()
                    .find(|j| j.id == *id)
                    .is_some_and(|j| j.preemptible);
                (*id, p)
            })
            .collect();
        for (o, d) in out.iter_mut().zip(&view.jobs) {
            o.push_str(&access::node_access(d, n, &on));
        }
    }
    if let Some(list) = &a.qos {
        let creds = client.credentials().map_err(|e| e.to_string())?;
        for (o, d) in out.iter_mut().zip(&view.jobs) {
            for q in list.split(',').filter(|q| !q.is_empty()) {
                o.push_str(&access::qos_access(d, q, &creds.credentials));
            }
        }
    }
    if let Some(list) = &a.reservations {
        let rsv = client.reservations().map_err(|e| e.to_string())?;
        for (o, d) in out.iter_mut().zip(&view.jobs) {
            for id in list.split(',').filter(|r| !r.is_empty()) {
                match rsv.reservations.iter().find(|r| r.id == id) {
                    Some(r) => o.push_str(&access::rsv_access(d, r)),
                    None => o.push_str(&format!("NOTE:  cannot locate reservation '{id}'\n")),
                }
            }
        }
    }
    Ok(out)
}

/// Display detailed information about nodes.
#[derive(Debug, Parser)]
#[command(
    name = "checknode",
    about = "Display detailed status of a node",
    long_about = "Display a node's state, configured, utilized and dedicated resources, statistics \
and reservations in Moab's format. ALL shows every node."
)]
pub struct Checknode {
    /// Verbose; give twice for more detail.
    #[arg(short = 'v', action = ArgAction::Count)]
    pub verbose: u8,
    /// Node name or ALL.
    #[arg(value_name = "NODE", required = true)]
    pub node: String,
    #[command(flatten)]
    pub output: Output,
    #[command(flatten)]
    pub conn: Connection,
}

/// Runs checknode.
pub fn checknode(a: Checknode) -> Result<u8, String> {
    let client = a.conn.client().map_err(|e| e.to_string())?;
    let view = client.nodes(Some(&a.node)).map_err(|e| e.to_string())?;
    if view.nodes.is_empty() && view.storage.is_empty() {
        return Err(format!("ERROR:    cannot locate node '{}'", a.node));
    }
    match a.output.format() {
        Format::Text => {
            let mut parts = vec![checknode::render(&view, a.verbose)];
            parts.extend(
                view.storage
                    .iter()
                    .map(|s| crate::render::staging::storage_node(s, view.now, a.verbose)),
            );
            parts.retain(|p| !p.is_empty());
            print(&parts.join("\n"))
        }
        Format::Xml => print(&format!("{}\n", checknode::render_xml(&view))),
        Format::Json => print_json(&view)?,
    }
    Ok(EXIT_OK)
}

/// Show resources available for immediate use (backfill windows).
#[derive(Debug, Parser)]
#[command(
    name = "showbf",
    about = "Show resources available now for backfill",
    long_about = "Show the processors and nodes that a job could use right now without delaying any \
reserved job, with how long they stay free: the global partition ALL first, then each partition \
(-p: one of them; -p ALL: the global rows only). Administrative and standing reservations count as \
free for the credentials asking (-u -g -a -c -q, else the caller's user and group; -A: anyone's). \
Credential-based throttling policies are not taken into account unless -L. -D adds the windows that \
open later. --xml gives Moab's mshow -a shape."
)]
pub struct Showbf {
    /// Show availability for all users, groups and accounts (every reservation counts as free).
    #[arg(short = 'A')]
    pub all: bool,
    /// Only for this account.
    #[arg(short = 'a', value_name = "ACCOUNT")]
    pub account: Option<String>,
    /// Class (queue) the job would use.
    #[arg(short = 'c', value_name = "CLASS")]
    pub class: Option<String>,
    /// Minimum duration the resources must stay free (`[[[DD:]HH:]MM:]SS`).
    #[arg(short = 'd', value_name = "DURATION")]
    pub duration: Option<String>,
    /// Required node features (colon separated).
    #[arg(short = 'f', value_name = "FEATURES")]
    pub features: Option<String>,
    /// Only for this group.
    #[arg(short = 'g', value_name = "GROUP")]
    pub group: Option<String>,
    /// Node memory comparison, e.g. '>=256' (MB).
    #[arg(short = 'm', value_name = "[CMP]MEMORY")]
    pub memory: Option<String>,
    /// Only windows with at least this many nodes.
    #[arg(short = 'n', value_name = "NODECOUNT")]
    pub nodes: Option<u32>,
    /// Only this partition.
    #[arg(short = 'p', value_name = "PARTITION")]
    pub partition: Option<String>,
    /// QOS the job would run under.
    #[arg(short = 'q', value_name = "QOS")]
    pub qos: Option<String>,
    /// Only for this user.
    #[arg(short = 'u', value_name = "USER")]
    pub user: Option<String>,
    /// Windows of this generic resource instead of processors (Arches):
    /// Tasks counts free units (e.g. GPUs) of nodes with a free processor.
    #[arg(long = "gres", value_name = "NAME")]
    pub gres: Option<String>,
    /// Verbose: each window's nodes and processors (HostList=node:procs,...).
    #[arg(short = 'v')]
    pub verbose: bool,
    /// Current and future availability: also the windows that open later (when running jobs end
    /// or reservations expire), with their start offset and date.
    #[arg(short = 'D')]
    pub future: bool,
    /// Enforce hard limits: cut windows to what the credentials' hard MAXPROC/MAXNODE/MAXJOB
    /// (USERCFG, GROUPCFG, ACCOUNTCFG, CLASSCFG, QOSCFG) still allow.
    #[arg(short = 'L')]
    pub hard_limits: bool,
    #[command(flatten)]
    pub output: Output,
    #[command(flatten)]
    pub conn: Connection,
}

/// Runs showbf.
pub fn showbf(a: Showbf) -> Result<u8, String> {
    let q = BackfillQuery {
        user: a.user.clone(),
        group: a.group.clone(),
        account: a.account.clone(),
        class: a.class.clone(),
        qos: a.qos.clone(),
        partition: a.partition.clone(),
        duration: a.duration.clone(),
        nodes: a.nodes,
        features: a
            .features
            .as_deref()
            .map(|f| {
                f.split([':', ','])
                    .filter(|s| !s.is_empty())
                    .map(String::from)
                    .collect()
            })
            .unwrap_or_default(),
        memory: a.memory.clone(),
        all: a.all,
        gres: a.gres.clone(),
        future: a.future,
        hard_limits: a.hard_limits,
    };
    let client = a.conn.client().map_err(|e| e.to_string())?;
    let view = client.backfill(&q).map_err(|e| e.to_string())?;
    match a.output.format() {
        Format::Json => print_json(&view)?,
        Format::Xml => print(&format!("{}\n", showbf::render_backfill_xml(&view))),
        Format::Text => print(&showbf::render_backfill(&view, a.verbose)),
    }
    Ok(EXIT_OK)
}

/// Estimate when a job (or a hypothetical job) will start.
#[derive(Debug, Parser)]
#[command(
    name = "showstart",
    about = "Estimate when a job will start",
    long_about = "Estimate the start and completion of a queued job, or of a hypothetical job given \
as PROCS[@DURATION] (duration `[[[DD:]HH:]MM:]SS`, default 1 second)."
)]
pub struct Showstart {
    /// Job id, or PROCS[@DURATION] for a hypothetical job.
    #[arg(value_name = "JOBID|PROCS[@DURATION]")]
    pub target: String,
    /// Estimation method: rsv (default), prio, hist or all.
    #[arg(short = 'e', value_name = "METHOD", value_parser = ["all", "hist", "prio", "rsv"])]
    pub method: Option<String>,
    /// Extra limits of a hypothetical job: qos=<QOS>.
    #[arg(short = 'l', value_name = "qos=QOS")]
    pub limits: Option<String>,
    /// Use feedback: scale the wait until the reservation-based start by the average wall-clock
    /// accuracy (run time / limit) of the statistics period's completed jobs.
    #[arg(short = 'f')]
    pub feedback: bool,
    #[command(flatten)]
    pub output: Output,
    #[command(flatten)]
    pub conn: Connection,
}

/// Parses `PROCS[@DURATION]` (`None` when the target is a job id).
pub fn parse_hypothetical(t: &str) -> Option<(u32, String)> {
    let (p, d) = t.split_once('@')?;
    p.parse().ok().map(|n| (n, d.to_string()))
}

/// Runs showstart.
pub fn showstart(a: Showstart) -> Result<u8, String> {
    let q = match parse_hypothetical(&a.target) {
        Some((procs, duration)) => {
            let qos = match &a.limits {
                Some(l) => Some(
                    l.strip_prefix("qos=")
                        .ok_or_else(|| {
                            format!("ERROR:    invalid limit '{l}' (expected qos=<QOS>)")
                        })?
                        .to_string(),
                ),
                None => None,
            };
            StartQuery::Hypothetical {
                procs,
                duration,
                qos,
                feedback: a.feedback,
            }
        }
        None => StartQuery::Job {
            id: a.target.clone(),
            feedback: a.feedback,
        },
    };
    let which = match a.method.as_deref() {
        Some("all") => showbf::Estimates::All,
        Some("hist") => showbf::Estimates::Hist,
        Some("prio") => showbf::Estimates::Prio,
        _ => showbf::Estimates::Rsv,
    };
    let client = a.conn.client().map_err(|e| e.to_string())?;
    let est = client.start_time(&q).map_err(|e| e.to_string())?;
    match a.output.format() {
        Format::Text => print(&showbf::render_start(&est, which)),
        Format::Xml => print(&format!("{}\n", showbf::render_start_xml(&est))),
        Format::Json => print_json(&est)?,
    }
    Ok(if est.start.is_some() {
        EXIT_OK
    } else {
        EXIT_ERROR
    })
}

/// Show scheduler statistics.
#[derive(Debug, Parser)]
#[command(
    name = "showstats",
    about = "Show scheduler, credential and matrix statistics",
    long_about = "Show accounting statistics of the current statistics period (since the daemon \
first started, or since the last 'mschedctl -f'; kept across restarts): -s (the default) the \
scheduler summary — jobs, queue time, expansion factor, dedicated versus available processor hours, \
backfill share, utilization and wall-clock accuracy (run time / wall-clock limit, capped at 100%); \
-u, -g, -a, -c, -q one row per user, group, account, class or QoS with running and completed work; \
-f TYPE the processors × wall-clock matrix of one statistic; -j the job template statistics, one row \
per statistics template (JOBMATCHCFG[...] JSTAT=NAME) with the running and completed work of the jobs \
its rules matched, in the columns of -u; -T the fairshare share tree \
(FSTREE), one row per node with its credential's and its members' work. Running jobs count up to now.",
    group(ArgGroup::new("view").args(["summary", "users", "groups", "accounts", "classes", "qos", "matrix", "nodes", "templates", "tree"]))
)]
pub struct Showstats {
    /// General scheduler statistics (the default).
    #[arg(short = 's')]
    pub summary: bool,
    /// Per-user statistics (optionally one user).
    #[arg(short = 'u', value_name = "USER", num_args = 0..=1, default_missing_value = "")]
    pub users: Option<String>,
    /// Per-group statistics (optionally one group).
    #[arg(short = 'g', value_name = "GROUP", num_args = 0..=1, default_missing_value = "")]
    pub groups: Option<String>,
    /// Per-account statistics (optionally one account).
    #[arg(short = 'a', value_name = "ACCOUNT", num_args = 0..=1, default_missing_value = "")]
    pub accounts: Option<String>,
    /// Per-class statistics (optionally one class).
    #[arg(short = 'c', value_name = "CLASS", num_args = 0..=1, default_missing_value = "")]
    pub classes: Option<String>,
    /// Per-QoS statistics (optionally one QoS).
    #[arg(short = 'q', value_name = "QOS", num_args = 0..=1, default_missing_value = "")]
    pub qos: Option<String>,
    /// Matrix of one statistic by processors and requested wall time:
    /// AVGXFACTOR (default), MAXXFACTOR, AVGQTIME, AVGBYPASS, MAXBYPASS,
    /// JOBCOUNT, PHREQUEST, PHRUN, BFCOUNT, BFPHRUN, WCACCURACY.
    #[arg(short = 'f', value_name = "STATISTICTYPE", num_args = 0..=1, default_missing_value = "AVGXFACTOR")]
    pub matrix: Option<String>,
    /// Node statistics (optionally one node): configured, minimum, maximum and average memory in
    /// use, processors and load, from the statistics profile (PROFILEDURATION intervals).
    #[arg(short = 'n', value_name = "NODE", num_args = 0..=1, default_missing_value = "")]
    pub nodes: Option<String>,
    /// Time frame of the kept profile history, with -u/-g/-a/-c/-q/-n: <TIME>[,<TIME>]
    /// (HH[:MM[:SS]][_MO[/DD[/YY]]], +DURATION or -DURATION = that long ago, epoch seconds;
    /// one time = from then until now).
    #[arg(short = 't', value_name = "TIMESPEC", allow_hyphen_values = true)]
    pub timeframe: Option<String>,
    /// Job template statistics (optionally one template): the running and completed work of the
    /// jobs each statistics template (JOBMATCHCFG[...] JSTAT=NAME) counted, as -u shows users.
    #[arg(short = 'j', value_name = "JOBTEMPLATE", num_args = 0..=1, default_missing_value = "")]
    pub templates: Option<String>,
    /// Fairshare tree statistics (FSTREE): per tree node the running and completed work of its
    /// credential and its members; optionally one node's subtree (NODE or TYPE:NODE) or the nodes
    /// down to a depth (root 0).
    #[arg(short = 'T', value_name = "NODE|DEPTH", num_args = 0..=1, default_missing_value = "")]
    pub tree: Option<String>,
    /// Verbose: the scheduler's current time and minimum system utilization; every credential,
    /// even those with no running or completed job.
    #[arg(short = 'v')]
    pub verbose: bool,
    #[command(flatten)]
    pub output: Output,
    #[command(flatten)]
    pub conn: Connection,
}

/// Runs showstats.
pub fn showstats(a: Showstats) -> Result<u8, String> {
    use crate::render::stats;
    let cred_view = [
        &a.users,
        &a.groups,
        &a.accounts,
        &a.classes,
        &a.qos,
        &a.templates,
    ]
    .iter()
    .any(|o| o.is_some());
    if a.timeframe.is_some() && !cred_view && a.nodes.is_none() {
        let mut cmd = <Showstats as clap::CommandFactory>::command();
        let _ = cmd
            .error(
                clap::error::ErrorKind::MissingRequiredArgument,
                "-t is not a stand-alone option: use it with -a, -c, -g, -j, -n, -q or -u",
            )
            .print();
        return Ok(EXIT_ERROR);
    }
    let client = a.conn.client().map_err(|e| e.to_string())?;
    if let Some(only) = &a.tree {
        let f = client.fairshare().map_err(|e| e.to_string())?;
        let Some(t) = f.trees.first() else {
            return Err(
                "ERROR:    fairshare tree statistics (-T) are not available: no fairshare tree (FSTREE) is configured"
                    .into(),
            );
        };
        let s = client
            .stats_query(&arches_api::StatsQuery {
                window: None,
                nodes: false,
            })
            .map_err(|e| e.to_string())?;
        match a.output.format() {
            Format::Json => print_json(&f.trees)?,
            Format::Xml => return Err("ERROR:    showstats -T has no XML form".into()),
            Format::Text => print(&crate::render::fstree::render_tree_stats(
                t,
                &s,
                Some(only.as_str()),
            )?),
        }
        return Ok(EXIT_OK);
    }
    let mut s = client
        .stats_query(&arches_api::StatsQuery {
            window: a.timeframe.clone(),
            nodes: a.nodes.is_some(),
        })
        .map_err(|e| e.to_string())?;
    let some = |o: &Option<String>| o.clone().filter(|x| !x.is_empty());
    let cred = [
        ("user", &a.users),
        ("group", &a.groups),
        ("account", &a.accounts),
        ("class", &a.classes),
        ("qos", &a.qos),
        ("template", &a.templates),
    ]
    .into_iter()
    .find(|(_, o)| o.is_some())
    .map(|(k, o)| (k, some(o)));
    // Moab's answers (MUIShowStats): no template at all, or an unknown one.
    if let Some(("template", name)) = &cred {
        if s.job_templates.is_empty() {
            return Err("ERROR:    no job templates defined".into());
        }
        if let Some(n) = name.as_ref().filter(|n| !s.job_templates.contains(n)) {
            return Err(format!(
                "ERROR:    cannot locate specified job template '{n}'"
            ));
        }
    }
    if let Some((kind, Some(name))) = cred.as_ref().filter(|(k, _)| *k != "template") {
        let obj = if *kind == "account" { "acct" } else { kind };
        let known = client.credentials().map_err(|e| e.to_string())?;
        let found = s
            .credentials
            .iter()
            .any(|c| c.kind == *kind && c.name == *name)
            || known
                .credentials
                .iter()
                .any(|c| c.kind == *kind && c.name == *name)
            || known.historical.iter().any(|(k, n)| k == kind && n == name);
        if !found {
            return Err(format!(
                "ERROR:    cannot locate {obj} '{name}' in Moab's historical data"
            ));
        }
    }
    let node = a.nodes.clone().filter(|n| !n.is_empty());
    if let Some(n) = &node {
        if !s.nodes.iter().any(|x| x.node == *n) {
            return Err(format!("ERROR:    cannot locate node '{n}'"));
        }
    }
    match a.output.format() {
        Format::Text => {
            if a.nodes.is_some() {
                print(&stats::render_nodes(&s, node.as_deref()));
            } else if let Some(kind) = &a.matrix {
                print(&stats::render_matrix(&s, kind)?);
            } else if let Some((kind, name)) = &cred {
                print(&stats::render_creds_v(&s, kind, name.as_deref(), a.verbose));
            } else {
                print(&stats::render_summary(&s, a.verbose));
            }
        }
        Format::Xml => print(&format!("{}\n", stats::render_xml(&s))),
        Format::Json => {
            if let Some((kind, name)) = &cred {
                s.credentials
                    .retain(|c| c.kind == *kind && name.as_ref().is_none_or(|n| *n == c.name));
            }
            if let Some(n) = &node {
                s.nodes.retain(|x| x.node == *n);
            }
            print_json(&s)?
        }
    }
    Ok(EXIT_OK)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hypothetical_targets() {
        assert_eq!(parse_hypothetical("12@3600"), Some((12, "3600".into())));
        assert_eq!(parse_hypothetical("4@1:00:00"), Some((4, "1:00:00".into())));
        assert_eq!(parse_hypothetical("4761849"), None);
        assert_eq!(parse_hypothetical("Moab.17"), None);
    }
}
