//! Job control: mjobctl and the deprecated wrappers canceljob (mdel),
//! releasehold, sethold and runjob. The daemon words every confirmation; we
//! print its lines (stdout to stdout, stderr to stderr) and exit 1 on failure.

use arches_api::{JobAction, JobActionRequest, JobSelect, JobsRequest, StartQuery};
use clap::{ArgAction, ArgGroup, Parser};

use crate::common::{print, print_action, print_json, Connection, Format, Output};
use crate::render::{checkjob, showbf};
use crate::EXIT_OK;

/// Sends one action and prints the answer.
fn act(conn: &Connection, jobs: Vec<String>, action: JobAction) -> Result<u8, String> {
    act_on(conn, jobs, JobSelect::default(), action)
}

/// Sends one action on job expressions plus a `-n`/`-w` selection (the
/// daemon resolves both, in one place) and prints the answer.
fn act_on(
    conn: &Connection,
    jobs: Vec<String>,
    select: JobSelect,
    action: JobAction,
) -> Result<u8, String> {
    let client = conn.client().map_err(|e| e.to_string())?;
    let cancel = action == JobAction::Cancel;
    let mut r = client
        .job_action(&JobActionRequest {
            jobs,
            action,
            select,
        })
        .map_err(|e| e.to_string())?;
    if cancel && !r.stdout.is_empty() {
        // Moab's canceljob / mjobctl -c surround the confirmations with
        // empty lines: "\njob '4761849' cancelled\n\n" (golden mjobctl-c-1).
        r.stdout.insert(0, String::new());
        r.stdout.push(String::new());
    }
    Ok(print_action(&r))
}

/// Cancel jobs.
#[derive(Debug, Parser)]
#[command(
    name = "canceljob",
    about = "Cancel jobs",
    long_about = "Cancel one or more jobs (ids, job expressions or ALL; a quoted regular expression \
such as \"80.*\" must match whole job ids). Prints `job '<id>' cancelled` per job (once for a job \
named twice); an expression that matches no job prints `ERROR:  invalid job specified (<expr>)` on \
stderr and exits 1. Equivalent to `mjobctl -c`."
)]
pub struct Canceljob {
    /// Job ids, comma lists, expressions or ALL.
    #[arg(value_name = "JOBID", required = true)]
    pub jobs: Vec<String>,
    #[command(flatten)]
    pub conn: Connection,
}

/// Runs canceljob / mdel.
pub fn canceljob(a: Canceljob) -> Result<u8, String> {
    act(&a.conn, a.jobs.clone(), JobAction::Cancel)
}

const HOLD_TYPES: &[&str] = &["user", "system", "batch", "defer", "all"];

fn is_hold_list(s: &str) -> bool {
    !s.is_empty()
        && s.split(',')
            .all(|t| HOLD_TYPES.contains(&t.to_ascii_lowercase().as_str()))
}

/// Control jobs: cancel, hold, release, modify, suspend, resume, requeue, signal, query.
#[derive(Debug, Parser)]
#[command(
    disable_help_flag = true,
    name = "mjobctl",
    about = "Control and modify jobs",
    long_about = "Cancel, hold, release, modify, suspend, resume, requeue, checkpoint, signal, \
prioritise, force-start or query jobs. JOBEXP is a job id (`17`, `Moab.17`), a comma list, \
`jobname:NAME`, ALL, or a regular expression (quote it: \"80.*\", \"74[3-5]\"), which must match \
a job's whole id — it never stands for a single other job. -n NAME and -w ATTR=VALUE (user, group, \
account, class, qos, state, partition, jobname; CompletionTime, StartTime or SubmitTime with \
<, <=, =, >=, > and epoch seconds; repeatable, all must hold) select among the jobs named, or among \
every job when no JOBEXP is given. A token that matches no job is an error \
(`ERROR:  invalid job specified (<token>)`), and so is a selection that leaves none \
(`ERROR:    no jobs selected`); either way exit 1. Non-administrators' ALL, regexes and selections \
reach only their own jobs. The daemon prints Moab's confirmation per job, in job order; a job named \
more than once (`3 3`, `3,ALL`) is acted on once.\n\n\
-s, -C and -R preempt with Moab's escalation by what the job allows (suspend: SUSPENDABLE, \
checkpoint: CHECKPOINT, requeue: RESTARTABLE, else cancel), printing e.g. `job 7 not suspendable, \
preempt policy temporarily changed to requeue` then `job successfully preempted`. A checkpointed \
(CHECKPOINTSIG, then terminated after CHECKPOINTTIMEOUT) or requeued job keeps its resources until \
its processes are gone, then goes back to the queue; restarted after a checkpoint it sees \
MOAB_RESTARTED=1. Owners may suspend, requeue, checkpoint or cancel their jobs; only administrators \
resume (-r) or force-start (-x). -R on a completed job queues it again. -x respects credential \
limits and reservations unless -w flags=ignorepolicies or flags=ignorersv. \
-m ATTR=VALUE (also += and -=) modifies: walltime/wclimit/reqawduration, class/queue, jobname, \
account, qos, userprio, sysprio/priority, flags, hold, and for a queued job nodecount, proccount, \
features, partition, jobmem, hostlist (+= and -= add and remove hosts, NONE clears), reqreservation \
(the reservation it must run in, as -W x=FLAGS:ADVRES:NAME; NONE clears) (checked as msub checks them: \
the request must still fit some node), \
minstarttime, deadline (as msub -l deadline=: HH:MM[:SS][_MO/DD[/YY]] or +DURATION from now; NONE \
clears; guaranteed only in a QFLAGS=DEADLINE QoS, a new deadline is judged afresh), eeduration \
(administrators: the queue time its priority counts), group, \
notificationaddress, var (NAME:VALUE; var-=NAME unsets), messages, state=removed. Attributes Moab \
lists that Arches has no model for (jobdisk, jobswap, loglevel, \
rmxstring, trig, trigvar, awduration, env) are refused with the reason; depend= and gres= are the \
job-dependency and generic-resource features'. \
-m walltime= on a running or suspended job changes the limit its resource manager enforces \
(administrators may raise or lower it; owners may not): if the resource manager refuses, nothing \
changes and the error is printed. With Slurm the change is applied by `scontrol update` in the \
background; a later refusal restores the old limit and is shown by checkjob. \
-m proccount+=N on a running job submitted with a processor range (msub -l procs=MIN-MAX) is a \
resize request by its owner: it is planned like a queued job with the job's priority and its \
remaining run time, granted in priority order or as backfill, never delaying a reservation \
(checkjob shows it pending and why it waits); -m proccount-=N releases processors at once (not \
below the minimum) and lowers the ceiling of automatic growth; -m proccount=N does either. The job \
learns its new allocation from its rewritten PBS_NODEFILE and MOAB_RESIZEFILE and RESIZESIGNAL.",
    group(ArgGroup::new("op").required(true).args([
        "cancel", "checkpoint", "hold", "modify", "signal", "priority", "query",
        "resume", "requeue", "suspend", "release", "execute", "force_cancel", "submit"
    ]))
)]
pub struct Mjobctl {
    /// Print help.
    #[arg(long, action = ArgAction::Help)]
    pub help: Option<bool>,
    /// Cancel the jobs.
    #[arg(short = 'c')]
    pub cancel: bool,
    /// Force-cancel the jobs (Arches' cancel already kills the job's processes: same as -c).
    #[arg(short = 'F')]
    pub force_cancel: bool,
    /// Submit a job held in an internal queue: Arches has none (every job is queued by msub), so this reports that.
    #[arg(short = 'S')]
    pub submit: bool,
    /// Select the jobs named JOBNAME (with any operation; adds to JOBEXP).
    #[arg(short = 'n', value_name = "JOBNAME")]
    pub name: Option<String>,
    /// Checkpoint the jobs.
    #[arg(short = 'C')]
    pub checkpoint: bool,
    /// Set a hold: user (default), system, batch or defer.
    #[arg(short = 'h', value_name = "TYPE", num_args = 0..=1, default_missing_value = "user")]
    pub hold: Option<String>,
    /// Modify an attribute: ATTR=VAL, ATTR+=VAL or ATTR-=VAL (repeatable).
    #[arg(short = 'm', value_name = "ATTR=VALUE", action = ArgAction::Append)]
    pub modify: Vec<String>,
    /// Send a signal: [signal=]SIGNO|SIGNAME.
    #[arg(short = 'N', value_name = "SIGNAL")]
    pub signal: Option<String>,
    /// Set the system priority (0 clears it; +N adds to the maximum; with --flags=relative adds to the computed priority).
    #[arg(short = 'p', value_name = "PRIORITY", allow_hyphen_values = true)]
    pub priority: Option<String>,
    /// Query: diag (job details), starttime (start estimate), hostlist (allocated hosts) or wiki
    /// (each job as one line of Moab's WIKI protocol: <id> ATTR=VALUE;...).
    #[arg(short = 'q', value_name = "QUERY", value_parser = ["diag", "starttime", "hostlist", "wiki"])]
    pub query: Option<String>,
    /// Resume suspended jobs.
    #[arg(short = 'r')]
    pub resume: bool,
    /// Requeue active jobs (or queue completed ones again).
    #[arg(short = 'R')]
    pub requeue: bool,
    /// Suspend active jobs.
    #[arg(short = 's')]
    pub suspend: bool,
    /// Release holds: all (default), user, system, batch or defer (comma list).
    #[arg(short = 'u', value_name = "TYPE", num_args = 0..=1, default_missing_value = "all")]
    pub release: Option<String>,
    /// Force the jobs to start now (admin).
    #[arg(short = 'x')]
    pub execute: bool,
    /// Select jobs where ATTR=VALUE (user, group, account, class, qos, state, partition, jobname;
    /// CompletionTime/StartTime/SubmitTime{<,<=,=,>=,>}EPOCH); with -x also flags=ignorepolicies or
    /// flags=ignorersv. Repeatable; every constraint must hold.
    #[arg(short = 'w', value_name = "ATTR=VALUE", action = ArgAction::Append)]
    pub constraints: Vec<String>,
    /// Flags: relative (with -p), completed (with -q diag).
    #[arg(long, value_name = "FLAGS")]
    pub flags: Option<String>,
    /// Job expressions.
    #[arg(value_name = "JOBEXP")]
    pub jobs: Vec<String>,
    #[command(flatten)]
    pub output: Output,
    #[command(flatten)]
    pub conn: Connection,
}

/// Runs mjobctl.
pub fn mjobctl(mut a: Mjobctl) -> Result<u8, String> {
    // `-h 17` / `-u 17`: the optional type was really the job; use the default type.
    for (v, default) in [(&mut a.hold, "user"), (&mut a.release, "all")] {
        if let Some(t) = v.as_ref().filter(|t| !is_hold_list(t)).cloned() {
            a.jobs.insert(0, t);
            *v = Some(default.to_string());
        }
    }
    let jobs = a.jobs.clone();
    // `-w flags=...` are -x's flags; every other `-w` is a where-constraint
    // that, with `-n NAME`, selects among the jobs named (or all jobs).
    let (flag_w, where_w): (Vec<&String>, Vec<&String>) = a
        .constraints
        .iter()
        .partition(|c| c.to_ascii_lowercase().starts_with("flags="));
    if !flag_w.is_empty() && !a.execute {
        return Err(format!(
            "ERROR:    '-w {}' is only valid with -x",
            flag_w[0]
        ));
    }
    let select = JobSelect {
        name: a.name.clone(),
        constraints: where_w.into_iter().cloned().collect(),
    };
    if jobs.is_empty() && select == JobSelect::default() {
        return Err("ERROR:    no job expression specified".into());
    }
    if a.submit {
        for j in &jobs {
            eprintln!("ERROR:    cannot submit job '{j}' (Arches has no internal queue: every job is queued when msub accepts it)");
        }
        return Ok(crate::EXIT_ERROR);
    }
    let flags: Vec<String> = a
        .flags
        .as_deref()
        .map(|f| f.split(',').map(|s| s.to_ascii_lowercase()).collect())
        .unwrap_or_default();
    let types = |s: &str| -> Vec<String> { s.split(',').map(|t| t.to_ascii_lowercase()).collect() };
    if let Some(q) = &a.query {
        return query(&a, q, jobs, select, flags.iter().any(|f| f == "completed"));
    }
    let action = if a.cancel || a.force_cancel {
        JobAction::Cancel
    } else if a.checkpoint {
        JobAction::Checkpoint
    } else if let Some(h) = &a.hold {
        JobAction::Hold { types: types(h) }
    } else if let Some(r) = &a.release {
        JobAction::Release { types: types(r) }
    } else if !a.modify.is_empty() {
        JobAction::Modify {
            changes: a.modify.clone(),
        }
    } else if let Some(s) = &a.signal {
        JobAction::Signal {
            signal: s.strip_prefix("signal=").unwrap_or(s).to_string(),
        }
    } else if let Some(p) = &a.priority {
        JobAction::SystemPriority {
            value: p.clone(),
            relative: flags.iter().any(|f| f == "relative"),
        }
    } else if a.resume {
        JobAction::Resume
    } else if a.requeue {
        JobAction::Requeue
    } else if a.suspend {
        JobAction::Suspend
    } else if a.execute {
        let fl = flag_w
            .iter()
            .flat_map(|c| c[6..].split([',', ':']).map(|s| s.to_ascii_lowercase()))
            .filter(|s| !s.is_empty())
            .collect();
        JobAction::Execute { flags: fl }
    } else {
        return Err("ERROR:    no operation specified".into());
    };
    act_on(&a.conn, jobs, select, action)
}

fn query(
    a: &Mjobctl,
    q: &str,
    jobs: Vec<String>,
    select: JobSelect,
    completed: bool,
) -> Result<u8, String> {
    let client = a.conn.client().map_err(|e| e.to_string())?;
    match q {
        "starttime" => {
            // The expression is resolved by the daemon (a regex or ALL may
            // name several jobs), then each job's estimate is asked for.
            let view = client
                .jobs(&JobsRequest {
                    ids: jobs,
                    completed: false,
                    select,
                    history: false,
                })
                .map_err(|e| e.to_string())?;
            let mut code = EXIT_OK;
            for id in &view.unknown {
                eprintln!("ERROR:  invalid job specified ({id})");
                code = crate::EXIT_ERROR;
            }
            for e in &view.errors {
                eprintln!("{e}");
                code = crate::EXIT_ERROR;
            }
            for id in view.jobs.iter().map(|j| j.summary.id.to_string()) {
                let e = client
                    .start_time(&StartQuery::Job {
                        id,
                        feedback: false,
                    })
                    .map_err(|e| e.to_string())?;
                match a.output.format() {
                    Format::Text => print(&showbf::render_start(&e, showbf::Estimates::Rsv)),
                    Format::Xml => print(&format!("{}\n", showbf::render_start_xml(&e))),
                    Format::Json => print_json(&e)?,
                }
                if e.start.is_none() {
                    code = crate::EXIT_ERROR;
                }
            }
            Ok(code)
        }
        _ => {
            let view = client
                .jobs(&JobsRequest {
                    ids: jobs,
                    completed,
                    select,
                    history: false,
                })
                .map_err(|e| e.to_string())?;
            match (q, a.output.format()) {
                (_, Format::Json) => print_json(&view)?,
                ("wiki", _) => print(&crate::render::access::wiki(&view)),
                ("hostlist", _) => {
                    for j in &view.jobs {
                        let hosts: Vec<&str> =
                            j.allocated.iter().map(|n| n.node.as_str()).collect();
                        print(&format!("{}\n", hosts.join(",")));
                    }
                }
                (_, Format::Xml) => print(&format!("{}\n", checkjob::render_xml(&view, false))),
                (_, Format::Text) => print(&checkjob::render(&view, 0)),
            }
            for id in &view.unknown {
                eprintln!("ERROR:  invalid job specified ({id})");
            }
            for e in &view.errors {
                eprintln!("{e}");
            }
            for d in &view.denied {
                eprintln!("{}", crate::render::checkjob::not_authorized(d));
            }
            Ok(
                if view.unknown.is_empty() && view.errors.is_empty() && view.denied.is_empty() {
                    EXIT_OK
                } else {
                    crate::EXIT_ERROR
                },
            )
        }
    }
}

/// Release job holds.
#[derive(Debug, Parser)]
#[command(
    name = "releasehold",
    about = "Release job holds",
    long_about = "Release holds on jobs: the user hold by default, -b the batch hold, -a every hold \
(user, system, batch). Equivalent to `mjobctl -u`.",
    group(ArgGroup::new("kind").args(["all", "batch"]))
)]
pub struct Releasehold {
    /// Release all holds (user, system, batch).
    #[arg(short = 'a')]
    pub all: bool,
    /// Release the batch hold.
    #[arg(short = 'b')]
    pub batch: bool,
    /// Job expressions.
    #[arg(value_name = "JOBEXP", required = true)]
    pub jobs: Vec<String>,
    #[command(flatten)]
    pub conn: Connection,
}

/// Runs releasehold.
pub fn releasehold(a: Releasehold) -> Result<u8, String> {
    let t = if a.all {
        "all"
    } else if a.batch {
        "batch"
    } else {
        "user"
    };
    act(
        &a.conn,
        a.jobs.clone(),
        JobAction::Release {
            types: vec![t.into()],
        },
    )
}

/// Set job holds.
#[derive(Debug, Parser)]
#[command(
    name = "sethold",
    about = "Set job holds",
    long_about = "Place a hold on jobs: the user hold by default, -b the batch hold. \
Equivalent to `mjobctl -h`."
)]
pub struct Sethold {
    /// Set the batch hold instead of the user hold.
    #[arg(short = 'b')]
    pub batch: bool,
    /// Job ids.
    #[arg(value_name = "JOBID", required = true)]
    pub jobs: Vec<String>,
    #[command(flatten)]
    pub conn: Connection,
}

/// Runs sethold.
pub fn sethold(a: Sethold) -> Result<u8, String> {
    let t = if a.batch { "batch" } else { "user" };
    act(
        &a.conn,
        a.jobs.clone(),
        JobAction::Hold {
            types: vec![t.into()],
        },
    )
}

/// Start a job now.
#[derive(Debug, Parser)]
#[command(
    name = "runjob",
    about = "Start a job immediately (administrators)",
    long_about = "Force a job to start now. Credential limits and reservations apply: -f ignores \
throttling policies; -x also ignores reservations. Equivalent to `mjobctl -x`."
)]
pub struct Runjob {
    /// Clear job parameters left by previous runs.
    #[arg(short = 'c')]
    pub clear: bool,
    /// Force: ignore throttling policies.
    #[arg(short = 'f')]
    pub force: bool,
    /// Run on these nodes (comma or colon separated).
    #[arg(short = 'n', value_name = "NODELIST")]
    pub nodes: Option<String>,
    /// Run in this partition.
    #[arg(short = 'p', value_name = "PARTITION")]
    pub partition: Option<String>,
    /// Force: ignore policies, reservations and node state.
    #[arg(short = 'x')]
    pub force_all: bool,
    /// Job id.
    #[arg(value_name = "JOBID")]
    pub job: String,
    #[command(flatten)]
    pub conn: Connection,
}

/// Runs runjob.
pub fn runjob(a: Runjob) -> Result<u8, String> {
    let mut flags = Vec::new();
    if a.clear {
        flags.push("clear".to_string());
    }
    if a.force || a.force_all {
        flags.push("ignorepolicies".to_string());
    }
    if a.force_all {
        flags.push("ignorersv".to_string());
        flags.push("ignorenodestate".to_string());
    }
    if let Some(n) = &a.nodes {
        flags.push(format!("hostlist={}", n.replace(':', ",")));
    }
    if let Some(p) = &a.partition {
        flags.push(format!("partition={p}"));
    }
    act(&a.conn, vec![a.job.clone()], JobAction::Execute { flags })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hold_types_recognised() {
        assert!(is_hold_list("user"));
        assert!(is_hold_list("Batch,System"));
        assert!(!is_hold_list("17"));
    }
}
