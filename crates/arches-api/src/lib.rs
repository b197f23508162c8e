//! Wire types of the Arches HTTP/1.1 + JSON API, shared by the `moab` daemon
//! and every client command. Serde only: no logic, no I/O.
//!
//! Routes (all under [`API_PREFIX`]) are listed in [`routes`]. Times are epoch
//! seconds (`i64`); durations are seconds; `None` means "not set". The
//! caller's identity is never a field: the daemon takes it from the socket's
//! peer credentials.
//!
//! Text rendering (Moab's exact formats) is the clients' business; the daemon
//! sends data.

use serde::{Deserialize, Serialize};

pub mod text;
pub mod tty;

/// Version prefix of every route.
pub const API_PREFIX: &str = "/v1";

/// Route paths (relative to the socket; every one starts with [`API_PREFIX`]).
pub mod routes {
    /// `POST` [`crate::SubmitRequest`] → [`crate::SubmitResponse`].
    pub const SUBMIT: &str = "/v1/jobs";
    /// `GET` with [`crate::QueueQuery`] as query string → [`crate::QueueView`].
    pub const QUEUE: &str = "/v1/queue";
    /// `POST` [`crate::JobsRequest`] → [`crate::JobsView`] (checkjob, mdiag -j, mjobctl -q diag).
    pub const JOBS_DETAIL: &str = "/v1/jobs/detail";
    /// `POST` [`crate::JobActionRequest`] → [`crate::ActionResponse`] (mjobctl, canceljob, holds...).
    pub const JOB_ACTION: &str = "/v1/jobs/action";
    /// `GET` → [`crate::NodesView`]; `?name=` restricts to one node (or `ALL`).
    pub const NODES: &str = "/v1/nodes";
    /// `GET` → [`crate::SchedulerView`] (mdiag -S).
    pub const SCHEDULER: &str = "/v1/scheduler";
    /// `POST` [`crate::SchedulerControl`] → [`crate::ActionResponse`] (mschedctl).
    pub const SCHEDULER_CONTROL: &str = "/v1/scheduler/control";
    /// `GET` → [`crate::PriorityView`] (mdiag -p).
    pub const PRIORITY: &str = "/v1/priority";
    /// `POST` [`crate::BackfillQuery`] → [`crate::BackfillView`] (showbf).
    pub const BACKFILL: &str = "/v1/backfill";
    /// `POST` [`crate::StartQuery`] → [`crate::StartEstimate`] (showstart).
    pub const STARTTIME: &str = "/v1/starttime";
    /// `GET` → [`crate::ReservationsView`] (showres, mdiag -r).
    pub const RESERVATIONS: &str = "/v1/reservations";
    /// `POST` [`crate::ReservationRequest`] → [`crate::ActionResponse`] (mrsvctl).
    pub const RESERVATION_CONTROL: &str = "/v1/reservations/control";
    /// `GET` → [`crate::ConfigView`] (mdiag -C of the running configuration).
    pub const CONFIG: &str = "/v1/config";
    /// `GET` → [`crate::CredentialsView`] (mdiag -u -g -a -c -q).
    pub const CREDENTIALS: &str = "/v1/credentials";
    /// `GET` → [`crate::StatsView`] (showstats).
    pub const STATS: &str = "/v1/stats";
    /// `GET` → [`crate::FairshareView`] (mdiag -f).
    pub const FAIRSHARE: &str = "/v1/fairshare";
    /// `POST` [`crate::TerminalRequest`] → [`crate::TerminalResponse`]
    /// (`msub -I`: the running interactive job's terminal socket; its
    /// owner only).
    pub const TERMINAL: &str = "/v1/jobs/terminal";
}

/// Error body of every non-2xx answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApiError {
    /// The complete message a client prints (Moab's wording, e.g.
    /// `ERROR:  invalid job specified (17)`), without trailing newline.
    pub message: String,
}

// ---------------------------------------------------------------------------
// Submission
// ---------------------------------------------------------------------------

/// A job submission as `msub` assembled it: command-line options merged over
/// script directives (command line wins). Resource lists and extensions are
/// passed as written; the daemon parses and validates them so that every
/// rejection has one wording.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct SubmitRequest {
    /// The script text, copied at submit time.
    pub script: String,
    /// Absolute path of the script file msub read (`None`: standard input);
    /// checkjob's `Executable:` and the XML `CmdFile`.
    #[serde(default)]
    pub script_path: Option<String>,
    /// Job name (`-N`); default: script file name or `STDIN`.
    pub name: Option<String>,
    /// `-l` resource lists, each as written (`nodes=2:ppn=4,walltime=1:00:00`).
    pub resources: Vec<String>,
    /// `-W` attributes as written (`x=FLAGS:RESTARTABLE`, `depend=afterok:12`).
    pub extensions: Vec<String>,
    /// `-q` class.
    pub class: Option<String>,
    /// `-A` account.
    pub account: Option<String>,
    /// `-a` eligible date as written (`[[[[CC]YY]MM]DD]hhmm[.SS]`).
    pub start_after: Option<String>,
    /// `-h`: submit with a user hold.
    pub hold: bool,
    /// `-r y|n`.
    pub rerunable: Option<bool>,
    /// `-p` user priority.
    pub priority: Option<i64>,
    /// `-d` working directory (absolute); default: `submit_dir`.
    pub workdir: Option<String>,
    /// The directory msub ran in (absolute).
    pub submit_dir: String,
    /// `-o` as written (file or directory, may contain `$MOAB_JOBID`).
    pub output: Option<String>,
    /// `-e` as written.
    pub error: Option<String>,
    /// `-j oe` or `-j eo`: both streams go to one file.
    pub join: bool,
    /// `-j eo`: the joined streams go to the error path (`-e`, default
    /// `<name>.e<id>`) instead of the output path, as in Torque.
    #[serde(default)]
    pub join_to_error: bool,
    /// `-S` shell.
    pub shell: Option<String>,
    /// Environment exported to the job (`-V` whole environment, `-v` list),
    /// already resolved by the client.
    pub env: Vec<(String, String)>,
    /// `-E`: add the `MOAB_*` variables. Recorded only: Arches always
    /// exports them (a superset of what `-E` adds is harmless to jobs).
    pub moab_env: bool,
    /// `-m` mail options and `-M` list (recorded, shown by checkjob).
    pub mail_options: Option<String>,
    pub mail_list: Option<String>,
    /// The msub command line, for `checkjob -v` `Submit Args:`.
    pub submit_args: String,
    /// Host the client ran on.
    pub submit_host: String,
    /// A Moab job XML (`<job>...</job>`) msub read as its input instead of
    /// a script: the job is what it says, with the fields above that msub's
    /// command line set explicitly laid over it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job_xml: Option<String>,
    /// `-t`: a job array, as written (`1-100`, `name[1-9:2]%5`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub array: Option<String>,
    /// Arguments the script runs with (`msub -F "a b" script`, `msub script a b`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    /// `-I`: an interactive job. Its script runs on a terminal (a pty) that
    /// msub attaches to through [`routes::TERMINAL`] once it runs.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub interactive: bool,
}

/// `POST` body of [`routes::TERMINAL`]: the interactive job to attach to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TerminalRequest {
    pub id: u64,
}

/// Where an interactive job's terminal is. LOCAL backend: `socket`, a Unix
/// socket on this machine that only the job's owner may connect to,
/// speaking [`tty`]'s frames. SLURM backend: `slurm`, what msub needs to
/// run the session as a step of the job's allocation itself
/// (`srun --jobid --overlap --pty`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TerminalResponse {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub socket: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slurm: Option<SlurmSession>,
}

/// An interactive job started by the Slurm backend: its batch script only
/// keeps the allocation until the session's status appears in `dir`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SlurmSession {
    /// Slurm's id of the job's allocation (`srun --jobid=`).
    pub job_id: u64,
    /// The session directory (the job's owner's, mode 0700): `env` (the
    /// batch job's environment, NUL-separated, written once it runs),
    /// `args` (the script's arguments, NUL-separated), `script` (what the
    /// session runs) and `status.<job_id>` (written by msub when the
    /// session ends: the batch script exits with it).
    pub dir: String,
    /// The `slurm.conf` the daemon uses (`SLURM_CONF` for srun), if set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slurm_conf: Option<String>,
}

/// Answer to a successful submission.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SubmitResponse {
    /// Numeric job id.
    pub id: u64,
    /// What the daemon accepted but wants the submitter told (msub prints
    /// each on standard error), e.g. a deadline its QoS does not guarantee.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

// ---------------------------------------------------------------------------
// Jobs as clients see them
// ---------------------------------------------------------------------------

/// Which showq section a job belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Section {
    Active,
    #[default]
    Eligible,
    Blocked,
    Completed,
}

/// A job's one-line summary (showq, mdiag -j, XML).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JobSummary {
    pub id: u64,
    pub name: String,
    pub user: String,
    pub group: String,
    pub account: Option<String>,
    pub class: Option<String>,
    pub qos: Option<String>,
    /// Moab state word (`Running`, `Idle`, `UserHold`, ...).
    pub state: String,
    pub section: Section,
    /// Processors requested (or allocated when active).
    pub procs: u32,
    /// Nodes requested (`nodes=N`) or allocated.
    pub nodes: Option<u32>,
    /// Wall-clock limit in seconds (`None`: none).
    pub walltime: Option<i64>,
    pub submit_time: i64,
    pub start_time: Option<i64>,
    pub completion_time: Option<i64>,
    /// Exit status, when completed.
    pub exit_code: Option<i32>,
    /// True when the job was cancelled (`CNCLD`).
    pub cancelled: bool,
    /// Current start priority.
    pub priority: i64,
    /// Admin system priority is set (`*` in mdiag -p).
    pub system_priority: bool,
    /// Rank in the priority-ordered queue (Moab's IterationJobRank).
    pub rank: Option<u32>,
    /// First allocated node.
    pub master_host: Option<String>,
    pub partition: Option<String>,
    /// Seconds spent suspended.
    pub suspended_secs: i64,
    /// Start of its reservation, if it has one.
    pub reservation_start: Option<i64>,
    /// Started by backfill.
    pub backfilled: bool,
    /// Preemptible (PREEMPTEE).
    pub preemptible: bool,
    /// Why it is blocked or did not start, in Moab's words.
    pub block_reason: Option<String>,
    /// Effective eligible queue time in seconds.
    pub eligible_secs: i64,
    /// Rerunable (`-r y` / RESTARTABLE).
    pub restartable: bool,
    /// A malleable or resizable job's range (`msub -l procs=MIN-MAX`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elastic: Option<ElasticInfo>,
    /// A sub-job of a job array, or the line that stands for an array's
    /// pending sub-jobs (`id` is then the array's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub array: Option<ArrayMember>,
    /// Processor time (user + system, milliseconds) its processes used in
    /// its last run, measured when it ended (local resource manager).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_ms: Option<u64>,
}

/// A malleable or resizable job's processor range and pending resize.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct ElasticInfo {
    /// Processors it starts with.
    pub min: u32,
    /// The most it may use.
    pub max: u32,
    /// The ceiling of automatic growth (the maximum, lowered by a release).
    pub cap: u32,
    /// Processors asked for by a pending resize request (`mjobctl -m
    /// proccount+=N`), and since when (epoch seconds).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_since: Option<i64>,
    /// Why the pending request was not granted at the last iteration.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waits: Option<String>,
    /// Why the job did not grow at the last iteration (below its ceiling).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub growth: Option<String>,
}

/// A job's place in a job array.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ArrayMember {
    /// The array's id.
    pub array: u64,
    /// The sub-job's index (`None`: the line stands for `pending`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index: Option<u32>,
    /// Pending sub-jobs this line stands for, as an index list (`5-100`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pending: Option<String>,
    /// How many sub-jobs `pending` lists.
    #[serde(default)]
    pub pending_count: u32,
}

impl ArrayMember {
    /// The indices `pending` lists, in order (empty if malformed).
    pub fn pending_indices(&self) -> Vec<u32> {
        let mut out = Vec::new();
        for part in self.pending.as_deref().unwrap_or("").split(',') {
            let (span, step) = match part.split_once(':') {
                Some((s, st)) => (s, st.parse::<u32>().unwrap_or(1).max(1)),
                None => (part, 1),
            };
            let (a, b) = span.split_once('-').unwrap_or((span, span));
            let (Ok(a), Ok(b)) = (a.parse::<u32>(), b.parse::<u32>()) else {
                return Vec::new();
            };
            out.extend((a..=b).step_by(step as usize));
        }
        out
    }
}

/// The compact notation of indices given in increasing order
/// (`1-3,7-13:2`), as `ArrayMember::pending` carries them.
pub fn index_list(indices: &[u32]) -> String {
    let mut runs: Vec<(u32, u32, u32)> = Vec::new();
    for &i in indices {
        match runs.last_mut() {
            Some(r) if r.0 == r.1 && i > r.1 => {
                r.2 = i - r.1;
                r.1 = i;
            }
            Some(r) if i == r.1 + r.2 => r.1 = i,
            _ => runs.push((i, i, 1)),
        }
    }
    let parts: Vec<String> = runs
        .iter()
        .map(|&(a, b, s)| match (a == b, s) {
            (true, _) => a.to_string(),
            (false, 1) => format!("{a}-{b}"),
            (false, s) if b - a == s => format!("{a},{b}"),
            (false, s) => format!("{a}-{b}:{s}"),
        })
        .collect();
    parts.join(",")
}

impl JobSummary {
    /// The id Moab prints: `17`, a sub-job `17[3]`, pending sub-jobs
    /// `17[4-100]`.
    pub fn jobid(&self) -> String {
        match &self.array {
            Some(ArrayMember {
                array,
                index: Some(i),
                ..
            }) => format!("{array}[{i}]"),
            Some(ArrayMember {
                array,
                pending: Some(p),
                ..
            }) => format!("{array}[{p}]"),
            _ => self.id.to_string(),
        }
    }
}

/// checkjob's `Job Array Info` of an array (or of a sub-job's array).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct ArrayInfo {
    /// The array's id.
    pub array: u64,
    /// The index list (`1-100:2`).
    pub indices: String,
    pub slot_limit: Option<u32>,
    pub count: u32,
    pub active: u32,
    pub eligible: u32,
    pub blocked: u32,
    pub completed: u32,
    /// `(index, name, state)` of every sub-job (checkjob -v).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub members: Vec<(u32, String, String)>,
}

/// Query of the showq route.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct QueueQuery {
    /// Include completed jobs (showq -c).
    #[serde(default)]
    pub completed: bool,
    /// `showq -p PARTITION`: active and completed jobs that ran there,
    /// eligible and blocked jobs that may run there, and the partition's
    /// own summary (an unknown partition is an error).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partition: Option<String>,
}

/// Cluster summary line data (showq summaries and `<cluster>` XML).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct ClusterSummary {
    pub config_nodes: u32,
    pub up_nodes: u32,
    pub active_nodes: u32,
    pub idle_nodes: u32,
    pub up_procs: u32,
    pub alloc_procs: u32,
    pub idle_procs: u32,
}

/// showq's data: every job in section order (active by earliest completion,
/// eligible and blocked by priority, completed by completion time).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QueueView {
    pub now: i64,
    pub cluster: ClusterSummary,
    pub jobs: Vec<JobSummary>,
    /// `JOBCPURGETIME` in seconds (showq -c's `purgetime`).
    pub purge_secs: i64,
    /// Scheduler name for messages.
    pub scheduler: String,
    /// Moab's showq notes (`NOTE:  scheduling is paused`, `NOTE:  system
    /// reservation blocking all nodes`, ...).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// Which jobs a detail query wants.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct JobsRequest {
    /// Job expressions as typed (`17`, `Moab.17`, `ALL`, a regular
    /// expression such as `80.*`); see [`JobSelect`].
    pub ids: Vec<String>,
    /// Include completed jobs for `ALL`.
    #[serde(default)]
    pub completed: bool,
    /// `-n NAME` / `-w ATTR=VALUE` selection.
    #[serde(default)]
    pub select: JobSelect,
    /// Also look up job ids the daemon no longer holds in its job history
    /// (showhist.moab.pl): completed jobs purged after `JOBCPURGETIME`,
    /// kept for `PROFILEDURATION` × `PROFILECOUNT`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub history: bool,
}

/// Job selection beyond the job expressions (Moab's `-n` and `-w`): the
/// jobs named by the expressions (every visible job when there is none)
/// that also have this name and satisfy every constraint. The daemon
/// resolves expressions and selections in one place; a token that matches
/// no job, and a selection that leaves none, are errors.
///
/// Constraints: `user=`, `group=`, `account=` (`acct=`), `class=`
/// (`queue=`), `qos=`, `state=`, `partition=`, `jobname=`, and
/// `CompletionTime`, `StartTime`, `SubmitTime`
/// compared with `<`, `<=`, `=`, `>=`, `>` to epoch seconds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct JobSelect {
    /// `-n JOBNAME`.
    #[serde(default)]
    pub name: Option<String>,
    /// `-w` constraints as written.
    #[serde(default)]
    pub constraints: Vec<String>,
}

/// One node's share of a job.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodeShare {
    pub node: String,
    pub tasks: u32,
}

/// One priority component (mdiag -p, checkjob -v).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PriorityComponent {
    pub component: String,
    pub sub: String,
    pub value: f64,
    pub contribution: f64,
}

/// Everything checkjob shows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JobDetail {
    pub summary: JobSummary,
    pub holds: Vec<String>,
    pub tasks: u32,
    pub tasks_per_node: Option<u32>,
    pub mem_per_task_mb: u64,
    pub features: Vec<String>,
    /// Requested operating system and architecture (`-l os=`, `-l arch=`).
    #[serde(default)]
    pub opsys: Option<String>,
    #[serde(default)]
    pub arch: Option<String>,
    pub flags: Vec<String>,
    pub depend: Vec<String>,
    pub start_after: Option<i64>,
    /// The job's completion deadline (requested, or its DEADLINE QoS's
    /// QTTARGET-relative one): checkjob's `Deadline:` line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deadline: Option<i64>,
    /// When the deadline cannot be met: the completion expected (checkjob's
    /// `Deadline Failed:` line).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deadline_failed: Option<i64>,
    /// Whether the scheduler guarantees the deadline (its QoS has
    /// QFLAGS=DEADLINE and it did not fail); false: it only weighs in the
    /// priority (DEADLINEWEIGHT).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub deadline_guaranteed: bool,
    pub start_count: u32,
    pub bypass_count: u32,
    pub user_priority: i64,
    pub allocated: Vec<NodeShare>,
    /// The nodes a finished job ran on (showhist's `Allocated Nodelist`);
    /// empty for jobs that are not finished or never ran.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ran_on: Vec<NodeShare>,
    /// Reservation: start, end (None = no limit), nodes.
    pub reservation: Option<ReservationSpan>,
    pub priority_components: Vec<PriorityComponent>,
    /// `BFCHUNKSIZE` when backfill chunking kept the job from starting
    /// (checkjob -v's warning).
    #[serde(default)]
    pub chunk_size: Option<u32>,
    /// The priority weights `(component, sub, component weight, sub
    /// weight)` in Moab's order (checkjob -v -v's priority analysis).
    #[serde(default)]
    pub priority_weights: Vec<(String, String, i64, i64)>,
    pub iwd: String,
    pub submit_dir: String,
    /// The script file as submitted (its absolute path), or the spool copy
    /// the job runs for standard-input submissions.
    pub executable: String,
    pub shell: Option<String>,
    /// `-W umask=`: the job's file-creation mask (absent when not given).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub umask: Option<u32>,
    pub output_file: String,
    pub error_file: String,
    pub join: bool,
    pub submit_args: String,
    pub submit_host: String,
    pub mail_options: Option<String>,
    /// Where notifications go (`msub -M`, `mjobctl -m notificationaddress=`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notification_address: Option<String>,
    /// Job variables (`mjobctl -m var=NAME:VALUE`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub variables: Vec<(String, String)>,
    /// Notes and warnings (`NOTE:  ...`) the daemon wants shown.
    pub messages: Vec<String>,
    /// How the job started (`Priority`, `Reserved`, `Backfill`, `Forced`).
    pub start_kind: Option<String>,
    /// The virtual wall-clock limit of a job backfilled on its scaled limit
    /// (`BFVIRTUALWALLTIMESCALINGFACTOR`): checkjob shows it as the limit,
    /// with the real one as `Original (Non-Virtual) WCLimit:`.
    #[serde(default)]
    pub virtual_walltime: Option<i64>,
    /// Data staging (`StageIn:`/`StageOut:` lines).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub staging: Vec<StageLine>,
    /// Preemption diagnostics (seed §8.4.3), one condition per line: why a
    /// queued job did not preempt (a count per failed condition) or what it
    /// waits for; whether a running job is preemptible, by whom, or why not.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub preemption: Vec<String>,
    /// Job templates that applied at submission, in order (checkjob's
    /// `TemplateSets:`; empty: `DEFAULT`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub templates: Vec<String>,
    /// Statistics templates (`JOBMATCHCFG[...] JSTAT=`) the job is counted
    /// in (checkjob's `TemplateStats:`, showstats -j).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stat_templates: Vec<String>,
    /// The job array this job is, or belongs to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub array_info: Option<ArrayInfo>,
    /// Arguments the script runs with.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    /// Node groups, host list, generic resources, node access policy,
    /// reservation binding and task request list, when the job has any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub layout: Option<JobLayout>,
    /// The generic-resource units (device indices) an active job holds.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gres_units: Vec<GresUnitsInfo>,
    /// The per-job limits of the job's class, as enforced (`MAX.WCLIMIT=1:00:00`,
    /// `MAX.PROC=8`...).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub class_limits: Vec<String>,
}

/// The placement parts of a job's request beyond tasks and features.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct JobLayout {
    /// Generic resources per task, `name:count`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gres: Vec<String>,
    /// Node groups (`nodes=2:ppn=8+n3:ppn=4:gpus=1`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub groups: Vec<NodeGroupInfo>,
    /// Required host list (the job uses only these nodes).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hosts: Vec<String>,
    /// The job's own node access policy (`SINGLEJOB`...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_access: Option<String>,
    /// The reservation it must run in (`""`: any it may use).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub advres: Option<String>,
    /// Task request list alternatives, `N[@SECONDS]` or `A-B`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub task_request_list: Vec<String>,
}

/// One part of a node specification.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodeGroupInfo {
    pub count: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    pub tasks_per_node: u32,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub features: Vec<String>,
    /// Generic resources per node, `name:count`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gres: Vec<String>,
}

/// Units of one generic resource a job holds on one node.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GresUnitsInfo {
    pub node: String,
    pub name: String,
    /// Unit (device) indices.
    pub units: Vec<u32>,
}

/// One generic resource of a node.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodeGres {
    pub name: String,
    /// Units the node has.
    pub configured: u32,
    /// Units dedicated to active jobs.
    pub used: u32,
}

/// One file of a job's data staging.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StageLine {
    /// `in` or `out`.
    pub direction: String,
    pub src: String,
    /// Destination as requested (checkjob shows only this).
    pub dest: String,
    pub size: Option<u64>,
    pub transferred: u64,
    /// `pending`, `active`, `complete`, `failed`, `removed`.
    pub status: String,
    /// Expected data-ready time (TIGHT).
    pub ready: Option<i64>,
    pub error: Option<String>,
    /// Why the job's stage-in has not begun (on its first pending file).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wait: Option<StageWait>,
    /// LOCAL: the compute node a `$LOCAL` file goes to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
}

/// Why a stage-in was not initiated yet (sizes in bytes).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum StageWait {
    /// `MAXDSOP` operations are active.
    MaxDsop { limit: u32 },
    /// LOCAL: `MAXDSOPPERNODE` stage-ins to the job's node are active.
    NodeBusy { node: String, limit: u32 },
    /// Staging it would exceed `TARGETUSAGE`.
    TargetUsage {
        dedicated: u64,
        size: u64,
        target: u64,
    },
    /// Not enough free disk at the storage manager.
    DiskFull { avail: u64, size: u64 },
    /// TIGHT: the transfer is timed to end when the compute reservation
    /// begins; it starts at this time.
    Begin { at: i64 },
}

/// A size as checkjob and checknode print it: whole MB (2^20 bytes, rounded
/// down) from 1 MB on, else bytes (`91 MB`, `3091 bytes`). The one rule for
/// every size shown.
pub fn size_text(bytes: u64) -> String {
    if bytes >= 1024 * 1024 {
        format!("{} MB", bytes / (1024 * 1024))
    } else {
        format!("{bytes} bytes")
    }
}

/// A storage resource manager (`RESOURCETYPE=STORAGE`) as checknode and
/// mdiag -R show it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct StorageInfo {
    /// The RM's name (`RMCFG[name]`).
    pub rm: String,
    /// `TYPE=` (`NATIVE`, or `NATIVE:<subtype>`).
    #[serde(default)]
    pub rm_type: String,
    /// The storage node's name (cluster query), else the RM's.
    pub node: String,
    /// The node's state (cluster query `STATE=`; `Down` when it fails),
    /// and since when.
    #[serde(default)]
    pub state: String,
    #[serde(default)]
    pub state_since: i64,
    pub model: String,
    pub max_dsop: Option<u32>,
    pub target_usage: Option<f64>,
    pub disk_mb: Option<u64>,
    pub disk_avail_mb: Option<u64>,
    pub rate_kbps: Option<f64>,
    /// MB dedicated to staged data (files of queued and running jobs, and
    /// of ended ones until removed).
    pub dedicated_mb: u64,
    /// Active operations now.
    pub active_ops: u32,
    pub cluster_query_url: Option<String>,
    pub system_query_url: Option<String>,
    pub system_modify_url: Option<String>,
    /// Every staging operation known: (job, status, bytes done, size, dest).
    pub operations: Vec<StorageOp>,
    /// Recent failures, oldest first.
    pub failures: Vec<StorageFailure>,
    pub last_update: i64,
    /// Interface calls queued or running now.
    pub in_flight: u32,
    /// Since when the storage RM is known (checknode `Total Time:`), and
    /// the seconds with at least one active operation (`Active:`).
    #[serde(default)]
    pub since: i64,
    #[serde(default)]
    pub active_secs: i64,
}

/// A failed storage interface call (mdiag -R `RM[name] Failures:`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StorageFailure {
    pub time: i64,
    /// `clusterquery`, `systemquery` or `systemmodify`.
    pub op: String,
    pub message: String,
}

/// One staging operation on a storage RM.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StorageOp {
    pub job: String,
    pub status: String,
    pub transferred: u64,
    pub size: Option<u64>,
    pub dest: String,
}

/// A reservation's time span and nodes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReservationSpan {
    pub start: i64,
    pub end: Option<i64>,
    pub nodes: Vec<NodeShare>,
}

/// Answer to a detail query: found jobs in the order asked, plus the ids that
/// matched nothing and those the caller may not see in detail.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JobsView {
    pub now: i64,
    pub jobs: Vec<JobDetail>,
    /// Tokens of the expression that named no job.
    pub unknown: Vec<String>,
    /// Other errors of the expression (a bad regular expression or `-w`
    /// constraint, a selection that left no job), as complete lines.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<String>,
    /// Jobs named that exist but belong to another user (only their owner
    /// and administrators see a job in detail; docs/security.md).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub denied: Vec<Denied>,
}

/// A job the caller named but may not see in detail.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Denied {
    /// The job as named in the request.
    pub job: String,
    /// The caller (Moab's refusal names them).
    pub user: String,
}

// ---------------------------------------------------------------------------
// Job actions
// ---------------------------------------------------------------------------

/// One job-control action (mjobctl and the deprecated wrappers).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum JobAction {
    Cancel,
    /// Set holds of these types (`user`, `system`, `batch`, `defer`).
    Hold {
        types: Vec<String>,
    },
    /// Release holds of these types (`all` = every type).
    Release {
        types: Vec<String>,
    },
    /// `-m attr=value` / `attr+=value` / `attr-=value`, as written.
    Modify {
        changes: Vec<String>,
    },
    /// `-p PRIORITY [--flags=relative]`.
    SystemPriority {
        value: String,
        relative: bool,
    },
    Suspend,
    Resume,
    Requeue,
    Checkpoint,
    /// `-N [signal=]SIG`.
    Signal {
        signal: String,
    },
    /// `-x`: start now (admin), `flags` from `-w flags=`.
    Execute {
        flags: Vec<String>,
    },
}

/// A job action on a job expression (`17`, `17,18`, `Moab.17`, `ALL`, a regex).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobActionRequest {
    pub jobs: Vec<String>,
    pub action: JobAction,
    /// `-n` / `-w` selection (see [`JobSelect`]).
    #[serde(default)]
    pub select: JobSelect,
}

/// Result of an action: lines for stdout and for stderr, in order, and
/// whether any part failed (clients exit 1 then).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct ActionResponse {
    pub stdout: Vec<String>,
    pub stderr: Vec<String>,
    pub failed: bool,
}

// ---------------------------------------------------------------------------
// Nodes
// ---------------------------------------------------------------------------

/// A node as checknode and mdiag -n show it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NodeInfo {
    pub name: String,
    /// Moab node state (`Idle`, `Running`, `Busy`, `Down`, `Drained`, `Draining`).
    pub state: String,
    /// Seconds in the current state.
    pub state_secs: i64,
    pub procs: u32,
    pub procs_used: u32,
    pub mem_mb: u64,
    pub mem_used_mb: u64,
    pub features: Vec<String>,
    pub partition: String,
    pub classes: Vec<String>,
    pub jobs: Vec<u64>,
    pub load: f64,
    /// Statistics since the daemon started tracking the node (seconds).
    pub total_secs: i64,
    pub up_secs: i64,
    pub active_secs: i64,
    pub reservations: Vec<NodeReservation>,
    /// Resource manager name and type (`RM[local]*:  TYPE=LOCAL`).
    pub rm: String,
    pub rm_type: String,
    pub opsys: Option<String>,
    pub arch: Option<String>,
    pub last_update: i64,
    /// Generic resources of the node (empty: none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gres: Vec<NodeGres>,
    /// `NODECFG[n] ACCESS=` (`None`: the global `NODEACCESSPOLICY`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub access_policy: Option<String>,
    /// The policy in force on the node now: the jobs on it bind later ones
    /// (`None`: SHARED).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub effective_access_policy: Option<String>,
}

/// A reservation touching a node.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodeReservation {
    pub id: String,
    /// `Job`, `User`, `System`, `Standing`.
    pub kind: String,
    /// Job state for job reservations.
    pub job_state: Option<String>,
    pub tasks: u32,
    pub start: i64,
    pub end: Option<i64>,
}

/// Answer of the nodes route.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NodesView {
    pub now: i64,
    pub nodes: Vec<NodeInfo>,
    /// Storage resource managers (data staging).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub storage: Vec<StorageInfo>,
}

// ---------------------------------------------------------------------------
// Scheduler
// ---------------------------------------------------------------------------

/// mdiag -S data.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SchedulerView {
    pub now: i64,
    pub host: String,
    pub socket: String,
    pub mode: String,
    pub started: i64,
    pub iterations: u64,
    pub last_iteration_ms: f64,
    pub avg_iteration_ms: f64,
    pub max_iteration_ms: f64,
    pub paused: bool,
    pub messages: Vec<String>,
    /// Process id of the daemon (showconfig's header).
    #[serde(default)]
    pub pid: u32,
}

/// mschedctl operations.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum SchedulerControl {
    /// `-k`: stop the daemon.
    Kill,
    /// `-p`: pause scheduling.
    Pause,
    /// `-r [secs]`: resume scheduling.
    Resume { after_secs: Option<i64> },
    /// `-S [N]`: step N iterations (simulation stepping).
    Step { iterations: u64 },
    /// `-s [N]`: stop at iteration N.
    Stop { iteration: Option<u64> },
    /// `-m config "PARAM VALUE"`.
    ModifyConfig { line: String, evaluate_only: bool },
    /// `mcredctl -m config="ATTR=VALUE ..." TYPE:NAME`: the credential's
    /// configuration line (`USERCFG[NAME] ATTR=VALUE ...`, `GROUPCFG`,
    /// `ACCOUNTCFG`, `CLASSCFG`, `QOSCFG`) applied to the running daemon as
    /// `ModifyConfig` does (not written to moab.cfg). `kind`: `user`,
    /// `group`, `account`, `class` or `qos`.
    CredentialConfig {
        kind: String,
        name: String,
        attributes: String,
    },
    /// `-f all|usage|fairshare|estimates`: reset statistics.
    Flush { what: String },
    /// `mcredctl -r stats|fairshare|all TYPE[:NAME]`: reset the statistics
    /// and/or the fairshare usage of one credential, or of every one of a
    /// type (`name` absent or `ALL`).
    CredentialReset {
        what: String,
        kind: String,
        name: Option<String>,
    },
    /// `-A MESSAGE` (alone): annotate the event log.
    Annotate { message: String },
    /// `-L [LEVEL]`: change the log level at run time (Arches keeps one log).
    LogLevel { level: Option<u32> },
}

// ---------------------------------------------------------------------------
// Priority, backfill, start estimates, reservations
// ---------------------------------------------------------------------------

/// mdiag -p data: weights and each job's breakdown.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PriorityView {
    pub now: i64,
    /// Weights as `(component, sub, component weight, sub weight)`, in
    /// Moab's column order, with Moab's labels (`Cred`/`QOS`,
    /// `Serv`/`QTime`, ...): the core's one table.
    pub weights: Vec<(String, String, i64, i64)>,
    /// Eligible jobs in priority order, then blocked ones, then active ones
    /// (highest priority first); the client shows the first kind by
    /// default, `-v` adds active jobs and `-v -v` all.
    pub jobs: Vec<JobPriority>,
}

/// One job's priority breakdown.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JobPriority {
    pub id: u64,
    pub priority: i64,
    pub system: bool,
    pub state: String,
    /// Eligible, blocked (holds, policies, dependencies) or active.
    #[serde(default)]
    pub section: Section,
    pub components: Vec<PriorityComponent>,
}

/// showbf's request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct BackfillQuery {
    pub user: Option<String>,
    pub group: Option<String>,
    pub account: Option<String>,
    pub class: Option<String>,
    pub qos: Option<String>,
    pub partition: Option<String>,
    /// Required duration as written (`-d`).
    pub duration: Option<String>,
    /// Minimum node count (`-n`).
    pub nodes: Option<u32>,
    /// Required features (`-f`, colon separated).
    pub features: Vec<String>,
    /// Memory comparison (`-m '>=256'`).
    pub memory: Option<String>,
    /// `-A`: availability for all users, groups and accounts (every
    /// reservation counts as available), not only the caller's.
    #[serde(default)]
    pub all: bool,
    /// `--gres NAME` (Arches): windows of this generic resource (a
    /// window's `procs` are its free units).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gres: Option<String>,
    /// `-D`: current and future availability (windows that open later, when
    /// running jobs end or reservations expire).
    #[serde(default)]
    pub future: bool,
    /// `-L`: enforce the asking credentials' hard throttling limits
    /// (`MAXPROC`, `MAXNODE`, `MAXJOB` of USERCFG/GROUPCFG/ACCOUNTCFG/CLASSCFG/
    /// QOSCFG): windows are cut to what they may still use.
    #[serde(default)]
    pub hard_limits: bool,
}

/// A backfill window: `procs` processors on `nodes` nodes free from `start`
/// for `duration` seconds (`None` = no limit).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BackfillWindow {
    pub partition: String,
    pub procs: u32,
    pub nodes: u32,
    pub start: i64,
    pub duration: Option<i64>,
    /// The window's nodes and processors on each (`showbf -v`, XML).
    #[serde(default)]
    pub hosts: Vec<NodeShare>,
    /// `mshow -a --flags=tid`: the transaction that reserves this window
    /// (`mrsvctl -c -R TID`); set by mshow, never by the daemon's view.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tid: Option<u64>,
}

/// showbf's answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BackfillView {
    pub now: i64,
    pub user: String,
    pub group: String,
    /// `ALL`'s windows first, then each partition's (widest first within).
    pub windows: Vec<BackfillWindow>,
    /// Per shown partition: `(name, nodes, processors)` that could ever
    /// hold the request (XML `feasibleNodeCount`/`feasibleTaskCount`).
    #[serde(default)]
    pub partitions: Vec<(String, u32, u32)>,
}

/// showstart's request: a job id or a hypothetical `procs@duration`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum StartQuery {
    Job {
        id: String,
        /// `showstart -f`: correct the reservation-based estimate with the
        /// observed wall-clock accuracy of completed jobs.
        #[serde(default)]
        feedback: bool,
    },
    Hypothetical {
        procs: u32,
        duration: String,
        qos: Option<String>,
        /// As for `Job`.
        #[serde(default)]
        feedback: bool,
    },
}

/// showstart's answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StartEstimate {
    pub now: i64,
    /// Job id, or `procs@duration` for hypothetical jobs.
    pub job: String,
    pub procs: u32,
    pub walltime: Option<i64>,
    /// Estimated start; `None` when it cannot be computed.
    pub start: Option<i64>,
    pub partition: String,
    pub running: bool,
    /// Why no estimate exists, or other notes.
    pub note: Option<String>,
    /// Priority-based estimate (when it would start given the jobs ahead of
    /// it), or why there is none.
    #[serde(default)]
    pub priority_start: Option<i64>,
    #[serde(default)]
    pub priority_note: Option<String>,
    /// Historical estimate (queue times of similar jobs), or why there is
    /// none.
    #[serde(default)]
    pub historical_start: Option<i64>,
    #[serde(default)]
    pub historical_note: Option<String>,
    /// `showstart -f`: the factor the wait until the reservation-based
    /// start was scaled by (the average wall-clock accuracy of the period's
    /// completed jobs: jobs ending before their limits bring reservations
    /// forward); `None` without `-f` or without completed jobs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub feedback: Option<f64>,
}

/// One reservation (showres).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReservationInfo {
    pub id: String,
    /// `Job`, `User`, `System`, `Standing`.
    pub kind: String,
    /// Job state letter source for job reservations (`Running`, `Idle`, ...).
    pub job_state: Option<String>,
    pub start: i64,
    pub end: Option<i64>,
    pub nodes: Vec<NodeShare>,
    pub procs: u32,
    pub owner: Option<String>,
    pub flags: Vec<String>,
    pub acl: Vec<String>,
    /// Reservation group (`mrsvctl -c -g`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
}

/// showres data.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReservationsView {
    pub now: i64,
    pub reservations: Vec<ReservationInfo>,
}

/// mrsvctl operations.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum ReservationRequest {
    /// `-c`: create from `ATTR=VALUE` specs (`starttime=`, `duration=`, `hostlist=`, `procs=`, `users=`...).
    Create { specs: Vec<String> },
    /// `-r`: release (delete) the reservations `id` names: an id, `ALL`,
    /// a comma list or regular expressions (matched from the start of the
    /// id); or every reservation of `group` (`-r -g RSVGROUP`).
    Release {
        id: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        group: Option<String>,
    },
    /// `-m`: modify one reservation: `duration`, `endtime`, `starttime`
    /// (`=`, `+=`, `-=`), `hostexp`, `reqtaskcount`, `flags`, `rsvgroup`,
    /// `acl=USER+=x,GROUP-=y` — all or none.
    Modify { id: String, changes: Vec<String> },
    /// `mshow -a --flags=tid`: remembers each window's reservation (its
    /// `ATTR=VALUE` create specs) under a new transaction id, for any user;
    /// the answer's `stdout` holds the ids, one per window, in order.
    /// Transactions live in the daemon's memory (a restart forgets them);
    /// the oldest are dropped beyond 1,024.
    Transactions { windows: Vec<Vec<String>> },
    /// `mrsvctl -c -R TID`: creates the reservation transaction `tid`
    /// remembered (once: the transaction is then spent).
    Commit { tid: u64 },
}

// ---------------------------------------------------------------------------
// Configuration, credentials, statistics
// ---------------------------------------------------------------------------

/// A config diagnostic line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConfigDiagnostic {
    pub file: String,
    pub line: u32,
    /// `WARNING` or `ERROR`.
    pub severity: String,
    pub message: String,
}

/// The running configuration (mdiag -C against a daemon, mschedctl -l).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConfigView {
    pub file: Option<String>,
    /// Effective `(PARAMETER, value)` pairs.
    pub parameters: Vec<(String, String)>,
    pub diagnostics: Vec<ConfigDiagnostic>,
}

/// A credential's configuration and usage (mdiag -u/-g/-a/-c/-q).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct CredentialInfo {
    /// `user`, `group`, `account`, `class`, `qos`.
    pub kind: String,
    pub name: String,
    pub priority: i64,
    pub flags: Vec<String>,
    /// `(LIMIT, soft, hard)`.
    pub limits: Vec<(String, u64, u64)>,
    pub attributes: Vec<(String, String)>,
    pub active_jobs: u32,
    pub active_procs: u32,
    /// Nodes allocated to the credential's active jobs (Moab's active
    /// MAXNODE usage, `mcredctl -q limit`'s `UNodes`).
    #[serde(default)]
    pub active_nodes: u32,
    /// Outstanding processor-seconds of the credential's active jobs
    /// (processors × remaining wall-clock limit: Moab's MAXPS usage, `UPS`).
    #[serde(default)]
    pub active_ps: u64,
    /// Outstanding wall-clock seconds of the credential's active jobs, as
    /// MAXWC counts them (`mcredctl -q policies`' MAXWC usage).
    #[serde(default)]
    pub active_wc: u64,
    /// Class only: the per-job limits Moab keeps as job maxima/minima
    /// (`MAX.NODE`, `MAX.PROC`, `MAX.WCLIMIT` in seconds, `MIN.PROC`), set ones.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub job_limits: Vec<(String, u64)>,
    /// Default QoS (`QDEF=`).
    #[serde(default)]
    pub qdef: Option<String>,
    /// QoS access list (`QLIST=`); empty = any.
    #[serde(default)]
    pub qlist: Vec<String>,
    /// Partition access list (`PLIST=`); empty = any.
    #[serde(default)]
    pub partitions: Vec<String>,
    /// Fairshare target (`FSTARGET=`), percent.
    #[serde(default)]
    pub fs_target: f64,
    /// `JOBFLAGS=` given to every job of the class or QoS.
    #[serde(default)]
    pub job_flags: Vec<String>,
    /// mdiag -q: preemption among the QoS's jobs (preemptors waiting or
    /// failing, with counts per failed condition; preemptees' states).
    #[serde(default)]
    pub preemption: Vec<String>,
    /// The marker of the credential's QoS list: `""` (OR), `"&"` (AND) or
    /// `"^"` (ONLY), as mdiag -q prints after a member's name.
    #[serde(default)]
    pub qlist_marker: String,
    /// QoS only (mdiag -q): `QTWEIGHT`, `QTTARGET` (seconds), `XFWEIGHT`,
    /// `XFTARGET`.
    #[serde(default)]
    pub qt_weight: i64,
    #[serde(default)]
    pub qt_target: i64,
    #[serde(default)]
    pub xf_weight: i64,
    #[serde(default)]
    pub xf_target: f64,
    /// Users only: the user's Unix groups (primary and supplementary, from
    /// the group database), who `mcredctl -q accessto group:NAME` lists.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unix_groups: Vec<String>,
}

/// Answer of the credentials route.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CredentialsView {
    pub credentials: Vec<CredentialInfo>,
    /// `(kind, name)` of credentials known only from finished jobs and the
    /// statistics (Moab's "historical data"): not configured, no queued or
    /// active job.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub historical: Vec<(String, String)>,
    /// The user names of `ADMINCFG[1]`..`ADMINCFG[4]` (`USERS=`; `ALL`
    /// stands for everybody), level 1 with root and the daemon's user, as
    /// Moab's `MSysGetAuth` reads them for `mcredctl -q role`. Only
    /// administrators (levels 1–3) get the lists whole; anyone else gets,
    /// per level, only their own name and `ALL` when listed (their own
    /// roles, nothing about other users).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub admin_users: Vec<Vec<String>>,
    /// Set when `admin_users` was narrowed to the caller: the caller's user
    /// name (a role query about anyone else is refused, as Moab refuses it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub viewer: Option<String>,
}

/// Totals over the jobs completed in the statistics period (one
/// credential, one `showstats -f` cell, or the whole system). Sums are kept
/// raw so that averages can be recomputed; proc-seconds, seconds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct StatTotals {
    /// Jobs that ran and reached a final state (completed or cancelled while running).
    pub jobs: u64,
    /// Of those, jobs that exited with status 0.
    pub successful: u64,
    /// Processors × wall-clock limit, summed (proc-seconds).
    pub ps_requested: f64,
    /// Dedicated processor-seconds inside the period.
    pub ps_dedicated: f64,
    /// Sum and maximum of the expansion factor (queue + run) / limit.
    pub xf_sum: f64,
    pub xf_max: f64,
    /// Sum and maximum of the queue time (seconds).
    pub qtime_sum: f64,
    pub qtime_max: f64,
    /// Sum of run/limit capped at 1, and how many jobs had a limit.
    pub wcacc_sum: f64,
    pub wcacc_jobs: u64,
    /// Sum and maximum of bypass counts.
    pub bypass_sum: u64,
    pub bypass_max: u32,
    /// Jobs started by backfill and their dedicated proc-seconds.
    pub backfilled: u64,
    pub ps_backfilled: f64,
    /// Processor-seconds the jobs' processes used (user + system, measured
    /// by the local resource manager when each job ended) and the dedicated
    /// processor-seconds of those same jobs' runs: Effic = used / measured.
    #[serde(default)]
    pub ps_utilized: f64,
    #[serde(default)]
    pub ps_measured: f64,
}

/// One credential's statistics (showstats -u/-g/-a/-c/-q), or one statistics job
/// template's (showstats -j).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct CredStats {
    /// `user`, `group`, `account`, `class`, `qos`, or `template` (a
    /// `JSTAT` statistics template).
    pub kind: String,
    pub name: String,
    /// uid or gid for users and groups (`None`: no passwd/group entry).
    pub id: Option<u32>,
    /// Running jobs now, their processors, and the proc-seconds still to
    /// run up to their limits.
    pub active_jobs: u32,
    pub active_procs: u32,
    pub active_ps_remaining: f64,
    /// Dedicated proc-seconds of its running jobs inside the period (so far).
    pub active_ps_dedicated: f64,
    /// Fairshare target (`FSTARGET=`), percent.
    pub fs_target: Option<f64>,
    pub completed: StatTotals,
}

/// showstats data: the statistics period (since the daemon first started,
/// or the last `mschedctl -f`), durable across restarts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct StatsView {
    pub now: i64,
    /// Start of the statistics period.
    pub since: i64,
    /// When this daemon process started.
    #[serde(default)]
    pub started: i64,
    #[serde(default)]
    pub iterations: u64,
    /// Jobs completed in the period (= `completed.jobs`).
    pub jobs_completed: u64,
    /// Jobs of the period started by backfill (completed ones).
    pub jobs_backfilled: u64,
    /// Dedicated proc-seconds in the period: completed jobs plus running
    /// jobs up to now.
    pub proc_seconds_used: f64,
    /// Up processors × period length.
    pub proc_seconds_available: f64,
    /// Average wall-clock accuracy of the period's completed jobs (0..=1).
    pub wallclock_accuracy: f64,
    /// Average queue time of the period's completed jobs (seconds).
    pub avg_wait_secs: f64,
    /// Queue now: eligible jobs, idle jobs (eligible + blocked idle), active jobs.
    #[serde(default)]
    pub eligible_jobs: u32,
    #[serde(default)]
    pub idle_jobs: u32,
    #[serde(default)]
    pub active_jobs: u32,
    /// Jobs preempted by this daemon process.
    #[serde(default)]
    pub preempted_jobs: u64,
    /// Processors and nodes now: up and in use.
    #[serde(default)]
    pub up_procs: u32,
    #[serde(default)]
    pub active_procs: u32,
    #[serde(default)]
    pub up_nodes: u32,
    #[serde(default)]
    pub active_nodes: u32,
    /// Estimated backlog: requested proc-seconds of queued jobs divided by
    /// up processors (seconds).
    #[serde(default)]
    pub backlog_secs: f64,
    /// Running jobs started by backfill, and their dedicated proc-seconds
    /// inside the period so far.
    #[serde(default)]
    pub active_backfilled: u32,
    #[serde(default)]
    pub active_ps_backfilled: f64,
    /// Totals over the period's completed jobs.
    #[serde(default)]
    pub completed: StatTotals,
    /// Per credential.
    #[serde(default)]
    pub credentials: Vec<CredStats>,
    /// The `showstats -f` matrix: row limits (processors), column limits
    /// (wall-clock seconds) and `rows × columns` cells, row-major.
    #[serde(default)]
    pub grid_procs: Vec<u32>,
    #[serde(default)]
    pub grid_times: Vec<i64>,
    #[serde(default)]
    pub grid: Vec<StatTotals>,
    /// Lowest system utilization (dedicated / up processors, 0..=1) seen by
    /// this daemon process and the iteration it happened on (showstats -v).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_utilization: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_utilization_iteration: Option<u64>,
    /// Average of the backlog samples taken each iteration (seconds).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub avg_backlog_secs: Option<f64>,
    /// `showstats -t`: the time frame the credential totals cover (from,
    /// to); `None`: the whole statistics period.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window: Option<(i64, i64)>,
    /// `showstats -n`: each node's memory and load over the time frame.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub nodes: Vec<NodeStats>,
    /// Every job template the configuration defines (`JOBCFG` names and the
    /// statistics templates `JSTAT` names), sorted: what `showstats -j NAME`
    /// may name. The statistics templates' rows are the credentials of kind
    /// `template`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub job_templates: Vec<String>,
}

/// Query of the statistics route (`showstats -t`, `-n`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct StatsQuery {
    /// `-t <TIME>[,<TIME>]`: a time frame of the kept profile history
    /// (`HH[:MM[:SS]][_MO[/DD[/YY]]]`, `+DURATION`/`-DURATION` = that long
    /// ago, epoch seconds; one time = from then to now).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window: Option<String>,
    /// `-n`: add per-node statistics.
    #[serde(default)]
    pub nodes: bool,
}

/// One node's samples over a time frame (showstats -n), memory in MB.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct NodeStats {
    pub node: String,
    pub samples: u64,
    pub cfg_mem: u64,
    pub min_mem: u64,
    pub max_mem: u64,
    pub avg_mem: u64,
    pub cfg_procs: u32,
    pub min_load: f64,
    pub max_load: f64,
    pub avg_load: f64,
}

/// One credential's fairshare usage (mdiag -f).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct FairshareCred {
    /// `user`, `group`, `account`, `class` or `qos`.
    pub kind: String,
    pub name: String,
    /// `FSTARGET=` in percent (processor-seconds for an absolute cap).
    pub target: Option<f64>,
    /// The target's kind as its `FSTARGET` suffix: empty (a target), `+`
    /// (floor), `-` (ceiling), `%` (relative cap), `^` (absolute cap).
    #[serde(default)]
    pub target_kind: String,
    /// Decayed share of the total usage, percent.
    pub percent: f64,
    /// Share of each interval's total usage, percent (index 0 = current;
    /// `None` when the credential used nothing in that interval).
    pub intervals: Vec<Option<f64>>,
}

/// mdiag -f data.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct FairshareView {
    pub now: i64,
    /// `FSPOLICY` (`None`: fairshare off).
    pub policy: Option<String>,
    pub depth: u32,
    /// `FSINTERVAL` in seconds.
    pub interval: i64,
    pub decay: f64,
    /// Total usage per interval in proc-hours (index 0 = current).
    pub total: Vec<f64>,
    pub credentials: Vec<FairshareCred>,
    /// The share trees (`FSTREE`): the global one (partition `ALL`) and
    /// each partition's with shares of its own; empty without a tree.
    #[serde(default)]
    pub trees: Vec<FairshareTree>,
    /// Each account's users (`mdiag -f -o acct`), in account then user
    /// order: their share of the account's usage.
    #[serde(default)]
    pub members: Vec<FairshareMember>,
}

/// A user's fairshare usage within an account (mdiag -f -o acct).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct FairshareMember {
    pub account: String,
    pub user: String,
    /// Decayed share of the account's usage, percent (`--flags=relative`).
    pub percent: f64,
    /// Share of each interval's account usage, percent (`None`: none).
    pub intervals: Vec<Option<f64>>,
    /// The same of the total usage (without `--flags=relative`).
    #[serde(default)]
    pub total_percent: f64,
    #[serde(default)]
    pub total_intervals: Vec<Option<f64>>,
}

/// One share tree of mdiag -f.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct FairshareTree {
    /// `ALL` (the global tree) or a partition.
    pub partition: String,
    /// Tiers below `root`.
    pub tiers: u32,
    /// The nodes depth first (members in configuration order).
    pub nodes: Vec<FairshareTreeNode>,
}

/// One node of a share tree (mdiag -f, showstats -T).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct FairshareTreeNode {
    /// 0 for `root`, 1 for its members, ...
    pub depth: u32,
    pub name: String,
    /// `node` (an inner node), `user`, `group`, `acct`, `class` or `qos`.
    pub node_type: String,
    /// The shares the node's usage amounts to (of its parent's member shares).
    pub usage_shares: f64,
    /// `SHARES=` in this tree.
    pub shares: f64,
    /// The parent's member shares (Σ SHARES of its members; root: its own).
    pub total_shares: f64,
    /// Decayed usage, processor-hours.
    pub usage: f64,
    /// The tree factor (0 for an inner node, as Moab prints it).
    pub factor: f64,
}

// ---------------------------------------------------------------------------
// Where the daemon lives
// ---------------------------------------------------------------------------

/// The home directory and socket that the daemon and every client agree on.
///
/// Resolution order (the same in `moab` and in every client):
/// 1. the socket: `--socket` option, else `MOAB_SOCKET`, else `<home>/moab.sock`;
/// 2. the home: `MOABHOMEDIR`, else the per-user default `$HOME/.arches`
///    (or `/tmp/arches-<uid>` when `HOME` is unset).
///
/// A site that wants one daemon for all users sets `MOABHOMEDIR` (for example
/// `/opt/moab`) system-wide.
pub mod paths {
    use std::path::PathBuf;

    /// Name of the socket file inside the home directory.
    pub const SOCKET_NAME: &str = "moab.sock";
    /// Name of the configuration file inside the home directory.
    pub const CONFIG_NAME: &str = "moab.cfg";

    /// The home directory (`MOABHOMEDIR` or the per-user default).
    pub fn home() -> PathBuf {
        if let Some(h) = std::env::var_os("MOABHOMEDIR").filter(|h| !h.is_empty()) {
            return PathBuf::from(h);
        }
        match std::env::var_os("HOME").filter(|h| !h.is_empty()) {
            Some(h) => PathBuf::from(h).join(".arches"),
            None => PathBuf::from(format!("/tmp/arches-{}", current_uid())),
        }
    }

    /// The system service's socket (`moab.service`, docs/install.md).
    pub const SYSTEM_SOCKET: &str = "/run/arches/moab.sock";
    /// The system service's configuration file.
    pub const SYSTEM_CONFIG: &str = "/etc/arches/moab.cfg";

    /// The socket a client connects to: as [`socket`]; but when neither
    /// `MOAB_SOCKET` nor `MOABHOMEDIR` is set and the per-user
    /// `~/.arches/moab.sock` does not exist, the system service's
    /// [`SYSTEM_SOCKET`] if it exists (so the users of a system-wide
    /// install need no environment).
    pub fn client_socket(explicit: Option<&std::path::Path>) -> PathBuf {
        let chosen = socket(explicit);
        let unset = |v: &str| std::env::var_os(v).is_none_or(|s| s.is_empty());
        if explicit.is_none()
            && unset("MOAB_SOCKET")
            && unset("MOABHOMEDIR")
            && std::fs::symlink_metadata(&chosen).is_err()
            && std::fs::symlink_metadata(SYSTEM_SOCKET).is_ok()
        {
            return PathBuf::from(SYSTEM_SOCKET);
        }
        chosen
    }

    /// The configuration file `mdiag -C` checks by default: `moab.cfg` in
    /// the home; without `MOABHOMEDIR`, the system service's
    /// [`SYSTEM_CONFIG`] when the per-user one does not exist and it does.
    pub fn client_config() -> PathBuf {
        let personal = home().join(CONFIG_NAME);
        let unset = std::env::var_os("MOABHOMEDIR").is_none_or(|s| s.is_empty());
        if unset && !personal.exists() && std::path::Path::new(SYSTEM_CONFIG).exists() {
            return PathBuf::from(SYSTEM_CONFIG);
        }
        personal
    }

    /// The socket path, given an optional explicit `--socket`.
    pub fn socket(explicit: Option<&std::path::Path>) -> PathBuf {
        if let Some(p) = explicit {
            return p.to_path_buf();
        }
        if let Some(s) = std::env::var_os("MOAB_SOCKET").filter(|s| !s.is_empty()) {
            return PathBuf::from(s);
        }
        home().join(SOCKET_NAME)
    }

    fn current_uid() -> u32 {
        // /proc/self is owned by the process's real uid; no libc needed.
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata("/proc/self")
            .map(|m| m.uid())
            .unwrap_or(0)
    }
}

#[cfg(test)]
mod array_tests {
    use super::*;

    #[test]
    fn index_lists_round_trip() {
        assert_eq!(index_list(&[1, 2, 3, 7, 9, 11, 13]), "1-3,7-13:2");
        assert_eq!(index_list(&[4]), "4");
        assert_eq!(index_list(&[4, 10]), "4,10");
        assert_eq!(index_list(&[]), "");
        let m = ArrayMember {
            array: 5,
            index: None,
            pending: Some("1-3,7-13:2".to_string()),
            pending_count: 7,
        };
        assert_eq!(m.pending_indices(), [1, 2, 3, 7, 9, 11, 13]);
    }
}
