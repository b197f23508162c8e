//! Jobs as the scheduler sees them: what they request, who owns them, their
//! holds, dependencies, flags and lifecycle state.
//!
//! Execution details (script, environment, output paths) are not here: they
//! belong to the daemon's job record. The core keeps only what scheduling
//! decisions depend on.

use std::collections::BTreeSet;
use std::fmt;
use std::str::FromStr;

use crate::node::NodeId;
use crate::{Secs, Time};

/// Numeric job id. Ids are never reused.
pub type JobId = u64;

/// A job's name and credential names: a string kept inline up to 24 bytes
/// (`user12`, `job4711`), so that making, copying and dropping a job's
/// names allocates nothing in the common case (a trace replay makes one job
/// per line).
pub type Name = compact_str::CompactString;

/// The credentials a job runs under (Moab's user, group, account, class, QoS).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Credentials {
    pub user: Name,
    pub group: Name,
    pub account: Option<Name>,
    /// Class (queue).
    pub class: Option<Name>,
    /// Quality of service.
    pub qos: Option<Name>,
}

/// What a job asks for. Moab's model: `tasks` tasks of `procs_per_task`
/// processors each, optionally spread as exactly `nodes` nodes with
/// `tasks_per_node` tasks each (`nodes=N:ppn=P`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    /// Total task count (`procs=N`, or `N*P` for `nodes=N:ppn=P`).
    pub tasks: u32,
    /// Processors per task (normally 1).
    pub procs_per_task: u32,
    /// Exact node count (`nodes=N`), if requested.
    pub nodes: Option<u32>,
    /// Tasks per node (`ppn=P`), if requested.
    pub tasks_per_node: Option<u32>,
    /// Memory per task in MB (0 = no memory requirement).
    pub mem_per_task_mb: u64,
    /// Required node features (all must be present).
    pub features: Vec<String>,
    /// Required partition.
    pub partition: Option<String>,
    /// Node groups, host list, generic resources, node access policy,
    /// reservation binding, task request list ([`crate::layout`]); `None`
    /// for the usual request that has none of them.
    pub layout: Option<Box<crate::layout::Layout>>,
}

impl Request {
    /// A request for `procs` single-processor tasks anywhere.
    pub fn procs(procs: u32) -> Self {
        Request {
            tasks: procs,
            procs_per_task: 1,
            nodes: None,
            tasks_per_node: None,
            mem_per_task_mb: 0,
            features: Vec::new(),
            partition: None,
            layout: None,
        }
    }

    /// The layout, created empty if absent (for building a request).
    pub fn layout_mut(&mut self) -> &mut crate::layout::Layout {
        self.layout.get_or_insert_with(Default::default)
    }

    /// Generic resources per task, by name.
    pub fn gres(&self) -> &[(String, u32)] {
        self.layout.as_deref().map_or(&[], |l| &l.gres)
    }

    /// The node groups (empty: the request's own shape).
    pub fn groups(&self) -> &[crate::layout::NodeGroup] {
        self.layout.as_deref().map_or(&[], |l| &l.groups)
    }

    /// The required host list (empty: any node).
    pub fn hosts(&self) -> &[String] {
        self.layout.as_deref().map_or(&[], |l| &l.hosts)
    }

    /// The job's own node access policy.
    pub fn access(&self) -> Option<crate::access::NodeAccessPolicy> {
        self.layout.as_deref().and_then(|l| l.access)
    }

    /// The reservation the job must run in (`Some("")`: any it may use).
    pub fn advres(&self) -> Option<&str> {
        self.layout.as_deref().and_then(|l| l.advres.as_deref())
    }

    /// The task request list (empty: none).
    pub fn trl(&self) -> &[crate::layout::TaskOption] {
        self.layout.as_deref().map_or(&[], |l| &l.trl)
    }

    /// Total processors requested.
    pub fn total_procs(&self) -> u32 {
        self.tasks.saturating_mul(self.procs_per_task)
    }

    /// Total memory requested in MB.
    pub fn total_mem_mb(&self) -> u64 {
        self.mem_per_task_mb.saturating_mul(u64::from(self.tasks))
    }
}

/// Moab's job states (`MJobState[]`), printed verbatim by showq and checkjob.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum JobState {
    Idle,
    Starting,
    Running,
    Removed,
    Completed,
    Hold,
    Deferred,
    Vacated,
    NotQueued,
    BatchHold,
    UserHold,
    SystemHold,
    Staging,
    Staged,
    Suspended,
    Blocked,
}

impl JobState {
    /// Moab's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            JobState::Idle => "Idle",
            JobState::Starting => "Starting",
            JobState::Running => "Running",
            JobState::Removed => "Removed",
            JobState::Completed => "Completed",
            JobState::Hold => "Hold",
            JobState::Deferred => "Deferred",
            JobState::Vacated => "Vacated",
            JobState::NotQueued => "NotQueued",
            JobState::BatchHold => "BatchHold",
            JobState::UserHold => "UserHold",
            JobState::SystemHold => "SystemHold",
            JobState::Staging => "Staging",
            JobState::Staged => "Staged",
            JobState::Suspended => "Suspended",
            JobState::Blocked => "Blocked",
        }
    }

    /// Running, starting, suspended, or (LOCAL data staging) staging its
    /// input to its allocated nodes: the job holds an allocation.
    pub fn is_active(self) -> bool {
        matches!(
            self,
            JobState::Running
                | JobState::Starting
                | JobState::Suspended
                | JobState::Staging
                | JobState::Staged
        )
    }

    /// Finished for good (completed, removed or vacated).
    pub fn is_finished(self) -> bool {
        matches!(
            self,
            JobState::Completed | JobState::Removed | JobState::Vacated
        )
    }
}

impl fmt::Display for JobState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Hold types (`MHoldType[]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum HoldType {
    User,
    System,
    Batch,
    Defer,
}

impl HoldType {
    pub const ALL: [HoldType; 4] = [
        HoldType::User,
        HoldType::System,
        HoldType::Batch,
        HoldType::Defer,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            HoldType::User => "User",
            HoldType::System => "System",
            HoldType::Batch => "Batch",
            HoldType::Defer => "Defer",
        }
    }
}

impl fmt::Display for HoldType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for HoldType {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.to_ascii_lowercase().as_str() {
            "user" | "u" => Ok(HoldType::User),
            "system" | "s" => Ok(HoldType::System),
            "batch" | "b" => Ok(HoldType::Batch),
            "defer" | "d" => Ok(HoldType::Defer),
            _ => Err(format!("invalid hold type '{s}'")),
        }
    }
}

/// The set of holds in place on a job.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Holds(BTreeSet<HoldType>);

impl Holds {
    pub fn none() -> Self {
        Holds::default()
    }
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
    pub fn contains(&self, h: HoldType) -> bool {
        self.0.contains(&h)
    }
    /// Adds a hold; returns whether the set changed.
    pub fn insert(&mut self, h: HoldType) -> bool {
        self.0.insert(h)
    }
    /// Removes a hold; returns whether the set changed.
    pub fn remove(&mut self, h: HoldType) -> bool {
        self.0.remove(&h)
    }
    pub fn iter(&self) -> impl Iterator<Item = HoldType> + '_ {
        self.0.iter().copied()
    }
    /// The state Moab shows for a held job: the strongest hold wins.
    pub fn state(&self) -> Option<JobState> {
        if self.contains(HoldType::Batch) {
            Some(JobState::BatchHold)
        } else if self.contains(HoldType::System) {
            Some(JobState::SystemHold)
        } else if self.contains(HoldType::User) {
            Some(JobState::UserHold)
        } else if self.contains(HoldType::Defer) {
            Some(JobState::Deferred)
        } else {
            None
        }
    }
}

/// Dependency kinds (`-W depend=TYPE:id[:id]`, Moab's "Job Dependencies"
/// and Torque's array forms). The `before` kinds are the other job's
/// `after` kinds, given from the job it waits for ([`DependencyKind::reverse`]);
/// the `...array` kinds wait for every sub-job of an array
/// ([`crate::array::array_dependency`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DependencyKind {
    /// Start after the job started (`after`).
    After,
    /// Start after the job completed successfully (`afterok`).
    AfterOk,
    /// Start after the job failed (`afternotok`).
    AfterNotOk,
    /// Start after the job ended, whatever its status (`afterany`).
    AfterAny,
    /// The other job may start once this one started (`before`).
    Before,
    /// ... once this one completed successfully (`beforeok`).
    BeforeOk,
    /// ... once this one failed (`beforenotok`).
    BeforeNotOk,
    /// ... once this one ended (`beforeany`).
    BeforeAny,
    /// After some sub-job of the array started (`afterstartarray`).
    AfterStartArray,
    /// After every sub-job of the array completed successfully (`afterokarray`).
    AfterOkArray,
    /// After every sub-job ended, one at least unsuccessfully (`afternotokarray`).
    AfterNotOkArray,
    /// After every sub-job ended (`afteranyarray`).
    AfterAnyArray,
}

impl DependencyKind {
    pub const ALL: [DependencyKind; 12] = [
        DependencyKind::After,
        DependencyKind::AfterOk,
        DependencyKind::AfterNotOk,
        DependencyKind::AfterAny,
        DependencyKind::Before,
        DependencyKind::BeforeOk,
        DependencyKind::BeforeNotOk,
        DependencyKind::BeforeAny,
        DependencyKind::AfterStartArray,
        DependencyKind::AfterOkArray,
        DependencyKind::AfterNotOkArray,
        DependencyKind::AfterAnyArray,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            DependencyKind::After => "after",
            DependencyKind::AfterOk => "afterok",
            DependencyKind::AfterNotOk => "afternotok",
            DependencyKind::AfterAny => "afterany",
            DependencyKind::Before => "before",
            DependencyKind::BeforeOk => "beforeok",
            DependencyKind::BeforeNotOk => "beforenotok",
            DependencyKind::BeforeAny => "beforeany",
            DependencyKind::AfterStartArray => "afterstartarray",
            DependencyKind::AfterOkArray => "afterokarray",
            DependencyKind::AfterNotOkArray => "afternotokarray",
            DependencyKind::AfterAnyArray => "afteranyarray",
        }
    }

    /// For a `before` kind, the `after` kind the other job gets.
    pub fn reverse(self) -> Option<DependencyKind> {
        match self {
            DependencyKind::Before => Some(DependencyKind::After),
            DependencyKind::BeforeOk => Some(DependencyKind::AfterOk),
            DependencyKind::BeforeNotOk => Some(DependencyKind::AfterNotOk),
            DependencyKind::BeforeAny => Some(DependencyKind::AfterAny),
            _ => None,
        }
    }

    /// Whether the kind waits for a whole array.
    pub fn is_array(self) -> bool {
        matches!(
            self,
            DependencyKind::AfterStartArray
                | DependencyKind::AfterOkArray
                | DependencyKind::AfterNotOkArray
                | DependencyKind::AfterAnyArray
        )
    }
}

impl FromStr for DependencyKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let low = s.to_ascii_lowercase();
        DependencyKind::ALL
            .into_iter()
            .find(|k| k.as_str() == low)
            .ok_or_else(|| format!("unknown dependency type '{s}'"))
    }
}

/// One dependency of a job on another.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Dependency {
    pub kind: DependencyKind,
    pub job: JobId,
}

/// Moab job flags (`MJobFlags[]`) that matter to scheduling.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum JobFlag {
    Backfill,
    Restartable,
    Suspendable,
    Preemptee,
    Preemptor,
    IgnPolicies,
    IgnNodeState,
    IgnRsv,
    Checkpointable,
    Interactive,
}

impl JobFlag {
    pub const ALL: [JobFlag; 10] = [
        JobFlag::Backfill,
        JobFlag::Restartable,
        JobFlag::Suspendable,
        JobFlag::Preemptee,
        JobFlag::Preemptor,
        JobFlag::IgnPolicies,
        JobFlag::IgnNodeState,
        JobFlag::IgnRsv,
        JobFlag::Checkpointable,
        JobFlag::Interactive,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            JobFlag::Backfill => "BACKFILL",
            JobFlag::Restartable => "RESTARTABLE",
            JobFlag::Suspendable => "SUSPENDABLE",
            JobFlag::Preemptee => "PREEMPTEE",
            JobFlag::Preemptor => "PREEMPTOR",
            JobFlag::IgnPolicies => "IGNPOLICIES",
            JobFlag::IgnNodeState => "IGNNODESTATE",
            JobFlag::IgnRsv => "IGNRSV",
            JobFlag::Checkpointable => "CHECKPOINT",
            JobFlag::Interactive => "INTERACTIVE",
        }
    }
}

impl fmt::Display for JobFlag {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for JobFlag {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let up = s.trim().to_ascii_uppercase();
        JobFlag::ALL
            .into_iter()
            .find(|f| f.as_str() == up)
            .or(match up.as_str() {
                "IGNOREPOLICIES" => Some(JobFlag::IgnPolicies),
                "IGNORENODESTATE" => Some(JobFlag::IgnNodeState),
                "IGNORERSV" | "IGNRSV" => Some(JobFlag::IgnRsv),
                "CHECKPOINTABLE" => Some(JobFlag::Checkpointable),
                _ => None,
            })
            .ok_or_else(|| format!("unknown flag '{s}'"))
    }
}

/// A set of job flags.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct JobFlags(BTreeSet<JobFlag>);

impl JobFlags {
    pub fn contains(&self, f: JobFlag) -> bool {
        self.0.contains(&f)
    }
    pub fn insert(&mut self, f: JobFlag) -> bool {
        self.0.insert(f)
    }
    pub fn remove(&mut self, f: JobFlag) -> bool {
        self.0.remove(&f)
    }
    pub fn iter(&self) -> impl Iterator<Item = JobFlag> + '_ {
        self.0.iter().copied()
    }
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl FromIterator<JobFlag> for JobFlags {
    fn from_iter<I: IntoIterator<Item = JobFlag>>(iter: I) -> Self {
        JobFlags(iter.into_iter().collect())
    }
}

/// Processors (and memory, generic resources) of one node given to a job.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Alloc {
    pub node: NodeId,
    /// Tasks placed on this node.
    pub tasks: u32,
    /// Processors dedicated on this node.
    pub procs: u32,
    /// Memory dedicated on this node (MB).
    pub mem_mb: u64,
    /// Generic resources dedicated on this node ([`crate::gres`]).
    pub gres: crate::gres::Gres,
}

/// How a job came to start (shown by checkjob, counted by the simulator).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StartKind {
    /// Started in priority order.
    Priority,
    /// Started at its reservation.
    Reserved,
    /// Started out of order by backfill.
    Backfill,
    /// Forced by an administrator (`mjobctl -x`).
    Forced,
}

/// An active job's allocation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunInfo {
    pub start_time: Time,
    pub alloc: Vec<Alloc>,
    pub how: StartKind,
    /// Total time spent suspended so far.
    pub suspended_secs: Secs,
    /// When the current suspension began.
    pub suspended_at: Option<Time>,
    /// When the job was last resumed (`JOBPREEMPTMINACTIVETIME` protects a
    /// newly resumed job as it does a newly started one).
    pub resumed_at: Option<Time>,
    /// Being terminated to go back to the queue (checkpoint or requeue): the
    /// job keeps its allocation until the resource manager reports its end.
    pub terminating: Option<Termination>,
    /// `BFVIRTUALWALLTIMESCALINGFACTOR`: the scaled (virtual) wall-clock
    /// limit the job was backfilled with. Until it expires the engine plans
    /// the job to end then; afterwards with its real limit, and the drivers
    /// clear it ([`crate::Plan::restore_walltime`]). The real `walltime`
    /// stays the kill limit.
    pub virtual_walltime: Option<Secs>,
    /// The generic-resource units (device indices) the job holds, given
    /// out by the state at its start ([`crate::gres`]).
    pub gres_units: Vec<crate::gres::GresUnits>,
}

/// Why a job went back to the queue after it had started.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RequeueCause {
    /// Checkpointed (`mjobctl -C`, `PREEMPTPOLICY CHECKPOINT`): it restarts
    /// from its checkpoint.
    Checkpoint,
    /// Requeued (`mjobctl -R`, `PREEMPTPOLICY REQUEUE`, PREEMPT backfill):
    /// it starts over.
    Requeue,
    /// Its start failed, its node failed or it vanished: it starts over.
    Failure,
}

impl RequeueCause {
    pub fn as_str(self) -> &'static str {
        match self {
            RequeueCause::Checkpoint => "checkpoint",
            RequeueCause::Requeue => "requeue",
            RequeueCause::Failure => "failure",
        }
    }
}

impl FromStr for RequeueCause {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "checkpoint" => Ok(RequeueCause::Checkpoint),
            "requeue" => Ok(RequeueCause::Requeue),
            "failure" => Ok(RequeueCause::Failure),
            _ => Err(format!("unknown requeue cause '{s}'")),
        }
    }
}

/// An active job on its way back to the queue (see [`RunInfo::terminating`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Termination {
    /// Checkpoint or requeue (never [`RequeueCause::Failure`]).
    pub cause: RequeueCause,
    /// The preemptor it makes room for (`None`: an administrator's
    /// `mjobctl -C/-R`).
    pub by: Option<JobId>,
    /// When the termination was requested.
    pub since: Time,
    /// When the job will have ended at the latest (the checkpoint timeout
    /// plus the kill grace): planning releases its resources then.
    pub until: Time,
}

impl RunInfo {
    pub fn procs(&self) -> u32 {
        self.alloc.iter().map(|a| a.procs).sum()
    }
    pub fn nodes(&self) -> u32 {
        self.alloc.len() as u32
    }

    /// When the job last began executing: its start, or its last resume.
    pub fn active_since(&self) -> Time {
        self.resumed_at.unwrap_or(self.start_time)
    }

    /// When the virtual wall-clock limit expires (suspensions included).
    pub fn virtual_end(&self) -> Option<Time> {
        self.virtual_walltime
            .map(|v| self.start_time + self.suspended_secs + v)
    }
}

/// How a job ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompletionCode {
    /// The job's exit status (a signal death is 128 + signal, as shells report it).
    Exit(i32),
    /// Cancelled (`CNCLD` in Moab's output).
    Cancelled,
}

/// A finished job's end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Completion {
    pub time: Time,
    pub code: CompletionCode,
}

/// A job as the scheduler sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Job {
    pub id: JobId,
    pub name: Name,
    pub cred: Credentials,
    pub req: Request,
    /// Requested wall-clock limit; `None` means none was given (and no class
    /// default applied): such a job can never backfill.
    pub walltime: Option<Secs>,
    /// Run-time estimate used for planning (reservations, backfill) instead of
    /// `walltime` when set — e.g. a prediction from the user's recent jobs.
    /// `walltime` stays the kill limit.
    pub estimate: Option<Secs>,
    pub submit_time: Time,
    /// Not eligible before this time (`msub -a`).
    pub start_after: Option<Time>,
    pub holds: Holds,
    pub depend: Vec<Dependency>,
    /// User priority (`msub -p`, -1024..1023).
    pub user_prio: i64,
    /// Administrator system priority (`mjobctl -p`), if set.
    pub sys_prio: Option<i64>,
    pub flags: JobFlags,
    /// Lifecycle state. Held jobs are `Idle` here with holds set; use
    /// [`Job::display_state`] for what Moab prints.
    pub state: JobState,
    pub run: Option<RunInfo>,
    pub completion: Option<Completion>,
    /// How many times the job was started.
    pub start_count: u32,
    /// How many times a lower-priority job was backfilled ahead of it.
    pub bypass_count: u32,
    /// Suspended by an administrator or its owner (`mjobctl -s`): not
    /// resumed automatically.
    pub admin_suspended: bool,
    /// Waiting for stage-in data (`None`: no staging or the data is there).
    /// Set by the staging driver from [`crate::staging::plan`].
    pub data_wait: Option<crate::staging::DataWait>,
    /// Why the job last went back to the queue after starting (`None`: it
    /// never did). A job restarted after a checkpoint is told so.
    pub requeued: Option<RequeueCause>,
    /// Since when the job counts as queued for its priority (queue time and
    /// expansion factor), when an administrator set its effective queue
    /// duration (`mjobctl -m eeduration=`); `None`: since its submission.
    pub eligible_since: Option<Time>,
    /// A processor range (malleable, resizable job): `None` for a rigid job.
    pub elastic: Option<crate::malleable::Elastic>,
    /// Processor time (user + system, milliseconds) the job's processes
    /// used in its last run, as its backend measured it when it ended
    /// (`None`: not measured). Efficiency = this / dedicated processor time.
    pub cpu_ms: Option<u64>,
    /// The completion deadline the job requested (`msub -l deadline=`,
    /// `mjobctl -m deadline=`): guaranteed with a reservation when its QoS
    /// has `QFLAGS=DEADLINE`, otherwise only its priority's `DEADLINE`
    /// subcomponent ([`crate::deadline`]).
    pub deadline: Option<Time>,
    /// When the scheduler found the guaranteed deadline could not be met,
    /// the completion it expected then (`DEADLINEPOLICY` acted on it; the
    /// deadline is no longer guaranteed). Cleared by a new deadline.
    pub deadline_failed: Option<Time>,
}

/// `job<id>`, the name of a job given none (inline: the simulator names
/// every trace job so).
fn default_name(id: JobId) -> Name {
    // "job" and at most 20 digits: written backwards into one buffer,
    // made a name once (inline: at most 23 bytes).
    let mut buf = [0u8; 23];
    let mut i = buf.len();
    let mut n = id;
    loop {
        i -= 1;
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    i -= 3;
    buf[i..i + 3].copy_from_slice(b"job");
    Name::from(std::str::from_utf8(&buf[i..]).unwrap_or("job"))
}

impl Job {
    /// A new idle job with the given basics; the rest defaults.
    pub fn new(
        id: JobId,
        user: &str,
        req: Request,
        walltime: Option<Secs>,
        submit_time: Time,
    ) -> Self {
        Job {
            id,
            name: default_name(id),
            cred: Credentials {
                user: Name::from(user),
                group: Name::from(user),
                ..Credentials::default()
            },
            req,
            walltime,
            estimate: None,
            submit_time,
            start_after: None,
            holds: Holds::none(),
            depend: Vec::new(),
            user_prio: 0,
            sys_prio: None,
            flags: JobFlags::default(),
            state: JobState::Idle,
            run: None,
            completion: None,
            start_count: 0,
            bypass_count: 0,
            admin_suspended: false,
            data_wait: None,
            requeued: None,
            eligible_since: None,
            elastic: None,
            cpu_ms: None,
            deadline: None,
            deadline_failed: None,
        }
    }

    /// The state Moab prints: holds override `Idle`.
    pub fn display_state(&self) -> JobState {
        if self.state == JobState::Idle {
            self.holds.state().unwrap_or(JobState::Idle)
        } else {
            self.state
        }
    }

    /// Processors the job uses (allocated when active, requested otherwise).
    pub fn procs(&self) -> u32 {
        match &self.run {
            Some(r) if self.state.is_active() => r.procs(),
            _ => self.req.total_procs(),
        }
    }

    /// Since when the job counts as queued for its priority: its effective
    /// queue start (`mjobctl -m eeduration`), else its submission.
    pub fn queued_since(&self) -> Time {
        self.eligible_since.unwrap_or(self.submit_time)
    }

    /// The duration planning assumes: the estimate if set, else the walltime.
    pub fn planning_walltime(&self) -> Option<Secs> {
        self.estimate.or(self.walltime)
    }

    /// When an active job must end by its wall-clock limit.
    pub fn expected_end(&self) -> Option<Time> {
        let run = self.run.as_ref()?;
        let limit = self.walltime?;
        Some(run.start_time + run.suspended_secs + limit)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_name_is_job_and_the_id() {
        for id in [0, 7, 15, 100, 28_489, u64::MAX] {
            assert_eq!(default_name(id), format!("job{id}"));
        }
        let j = Job::new(42, "u", Request::procs(1), None, 0);
        assert_eq!(j.name, "job42");
    }
}
