//! The scheduler's state: nodes and jobs, changed only through [`State::apply`].
//!
//! `apply` validates every event against the current state and either applies
//! it whole or returns an error and changes nothing. Per-node usage is
//! maintained incrementally so an iteration never recomputes it.

use std::collections::BTreeMap;
use std::sync::Arc;

use imbl::OrdSet;

use crate::idmap::{IdMap, IdSet};

mod elastic;

use crate::job::{
    Alloc, Completion, CompletionCode, HoldType, Job, JobFlag, JobId, JobState, RequeueCause,
    RunInfo, StartKind, Termination,
};
use crate::node::{Node, NodeAdminState, NodeId, NodeState};
use crate::{Secs, Time};

/// Something that happened, fed to [`State::apply`].
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// A new job was accepted: shared as it is kept (the state's job map
    /// holds this `Arc`; [`Event::submit`] makes one).
    Submit(Arc<Job>),
    /// A new job array was accepted ([`crate::array`]): its sub-jobs become
    /// jobs a window at a time ([`State::expand_arrays`]).
    SubmitArray(Box<crate::array::ArrayJob>),
    /// A whole-array operation on the array's record.
    Array {
        array: JobId,
        op: crate::array::ArrayOp,
    },
    /// A job started on these resources (the backend confirmed the start).
    Start {
        job: JobId,
        alloc: Vec<Alloc>,
        kind: StartKind,
    },
    /// A job was handed to a backend that confirms starts later (Slurm
    /// starts it at its next scheduling pass): it holds these resources like
    /// a started job, in state `Starting`, until [`Event::Started`] (or it
    /// ends, is requeued or cancelled first).
    Launch {
        job: JobId,
        alloc: Vec<Alloc>,
        kind: StartKind,
    },
    /// The backend reports a `Starting` job running since `at`: it becomes
    /// `Running` and its start time (which its wall-clock limit counts from)
    /// is `at`, kept between the launch and the event's time.
    Started {
        job: JobId,
        at: Time,
    },
    /// An active job ended with this exit status.
    Finish {
        job: JobId,
        code: CompletionCode,
    },
    /// A job was cancelled (idle: removed from the queue; active: the backend
    /// already killed it).
    Cancel {
        job: JobId,
    },
    SetHold {
        job: JobId,
        hold: HoldType,
    },
    ReleaseHold {
        job: JobId,
        hold: HoldType,
    },
    /// Change a queued (or, where allowed, active) job.
    Modify {
        job: JobId,
        change: JobChange,
    },
    /// An active job was suspended: its processors are free for scheduling,
    /// its memory stays held.
    Suspend {
        job: JobId,
    },
    Resume {
        job: JobId,
    },
    /// An active job is being terminated to go back to the queue (checkpoint
    /// or requeue, by `mjobctl` or for the preemptor `by`). It keeps its
    /// allocation until the resource manager reports its end ([`Event::Requeue`]);
    /// planning expects that by `until`.
    Terminate {
        job: JobId,
        cause: RequeueCause,
        by: Option<JobId>,
        until: Time,
    },
    /// An active job has stopped and goes back to the queue, keeping its id
    /// (the cause is its termination's, or a failure when it was not being
    /// terminated: a failed start, a failed node).
    Requeue {
        job: JobId,
    },
    /// A finished (completed or removed) job goes back to the queue as it
    /// was submitted (`mjobctl -R` on a completed job).
    Resubmit {
        job: JobId,
    },
    /// Locks resources for a queued preemptor ([`Lock`]): what its victims
    /// free is kept for it. `retry` is how long the lock outlives the
    /// victims' release (`JOBRETRYTIME` under `GUARANTEEDPREEMPTION`, else 0).
    Lock {
        job: JobId,
        alloc: Vec<Alloc>,
        retry: Secs,
    },
    /// A node's administrative state changed.
    NodeState {
        node: NodeId,
        state: NodeAdminState,
    },
    /// A node joined the cluster.
    AddNode(Node),
    /// A node's resources or attributes changed (processors, memory,
    /// features, partition, administrative state; the name is kept). Jobs
    /// already on it keep their allocations, even if it shrank below them.
    UpdateNode {
        node: NodeId,
        attrs: Node,
    },
    /// Forget a finished job (after `JOBCPURGETIME`).
    Purge {
        job: JobId,
    },
    /// A running malleable or resizable job takes these processors too
    /// ([`crate::malleable`]).
    Grow {
        job: JobId,
        alloc: Vec<Alloc>,
    },
    /// A running resizable job gives these processors back
    /// (`mjobctl -m proccount-=N`).
    Shrink {
        job: JobId,
        alloc: Vec<Alloc>,
    },
}

/// A modification of a job (`mjobctl -m`).
#[derive(Debug, Clone, PartialEq)]
pub enum JobChange {
    /// The processor time the backend measured for the job's run
    /// ([`Job::cpu_ms`]); recorded before the job's end is applied.
    CpuUsed(u64),
    Walltime(Option<Secs>),
    Name(String),
    Class(Option<String>),
    Account(Option<String>),
    Qos(Option<String>),
    UserPrio(i64),
    SysPrio(Option<i64>),
    StartAfter(Option<Time>),
    Flags(Vec<JobFlag>),
    /// The planning run-time estimate (`Job::estimate`; run-time prediction
    /// sets and extends it, also while the job runs). The walltime is
    /// unchanged and stays the kill limit.
    Estimate(Option<Secs>),
    /// Marks a suspension as an administrator's (`mjobctl -s`): such a job
    /// is not resumed automatically.
    AdminSuspended(bool),
    /// Waiting for stage-in data ([`crate::staging`]).
    DataWait(Option<crate::staging::DataWait>),
    /// LOCAL data staging: `Staging`, `Staged` or (launched) `Running` for
    /// an allocated job ([`State::apply`] checks the transition).
    Phase(JobState),
    /// The job's dependencies (`mjobctl -m depend=`); queued jobs only.
    Depend(Vec<crate::job::Dependency>),
    /// An active job's virtual wall-clock limit (`RunInfo::virtual_walltime`):
    /// set right after a start the plan scaled, cleared when the real limit
    /// is restored.
    VirtualWalltime(Option<Secs>),
    /// The generic resources per task of a queued job (`mjobctl -m gres=`).
    Gres(Vec<(String, u32)>),
    /// The generic-resource units an active job holds, as its backend runs
    /// it (a restarted daemon restoring a running job): they replace the
    /// ones given out at its start, which must be free.
    GresUnits(Vec<crate::gres::GresUnits>),
    /// What a queued job requests (`mjobctl -m nodecount/proccount/
    /// features/partition/jobmem`); refused for an active job.
    Request(crate::job::Request),
    /// A queued job's group (`mjobctl -m group`).
    Group(String),
    /// Since when a queued job counts as queued for its priority
    /// (`mjobctl -m eeduration`; `None`: its submission).
    EligibleSince(Option<Time>),
    /// A malleable or resizable job's range, growth ceiling and pending
    /// resize request ([`crate::malleable::Elastic`]).
    Elastic(Option<crate::malleable::Elastic>),
    /// The requested completion deadline (`mjobctl -m deadline=`); clears
    /// a failed deadline ([`crate::deadline`]).
    Deadline(Option<Time>),
    /// The guaranteed deadline was found unmeetable, the completion then
    /// expected (`None`: clears it) ([`Job::deadline_failed`]).
    DeadlineFailed(Option<Time>),
}

impl Event {
    /// The submission of a new job.
    pub fn submit(job: Job) -> Event {
        Event::Submit(Arc::new(job))
    }

    /// The start of `job` on `alloc`: [`Event::Launch`] when its backend
    /// confirms starts later (`Starting` until then), else [`Event::Start`].
    pub fn start(job: JobId, alloc: Vec<Alloc>, kind: StartKind, confirmed_later: bool) -> Event {
        if confirmed_later {
            Event::Launch { job, alloc, kind }
        } else {
            Event::Start { job, alloc, kind }
        }
    }
}

/// Why an event was refused. The state is unchanged.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EventError {
    #[error("unknown job {0}")]
    UnknownJob(JobId),
    #[error("job {0} already exists")]
    DuplicateJob(JobId),
    #[error("unknown node {0}")]
    UnknownNode(NodeId),
    #[error("job {job} is {state}, not {expected}")]
    WrongState {
        job: JobId,
        state: &'static str,
        expected: &'static str,
    },
    #[error("allocation for job {job} does not fit on node {node}")]
    Overallocated { job: JobId, node: NodeId },
    #[error("cannot modify {what} of active job {job}")]
    ActiveJob { job: JobId, what: &'static str },
    #[error("reservation {0} already exists")]
    DuplicateReservation(String),
    #[error("invalid reservation: {0}")]
    BadReservation(String),
}

/// Resources locked for a preemptor (`GUARANTEEDPREEMPTION`, and always
/// while its victims are terminating): no other job is planned on them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lock {
    pub job: JobId,
    /// Where the preemptor was planned when it preempted.
    pub alloc: Vec<Alloc>,
    /// How long the lock outlives the release of the victims' resources.
    pub retry: Secs,
    /// Set once no victim is terminating any more: the lock holds until then
    /// (inclusive), or until the preemptor starts.
    pub until: Option<Time>,
}

/// Resources in use on one node.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NodeUsage {
    /// Processors dedicated to running jobs (suspended jobs excluded).
    pub procs: u32,
    /// Memory dedicated to active jobs, suspended ones included (MB).
    pub mem_mb: u64,
    /// Active jobs on the node (suspended ones included).
    pub jobs: u32,
    /// Generic resources dedicated to active jobs, suspended ones included.
    pub gres: crate::gres::Gres,
}

/// Nodes and jobs.
///
/// The job containers are persistent (structurally shared) maps: cloning a
/// `State` is O(1) and a clone shares every job with the original until one
/// of them changes it (a changed job is copied once, `Arc::make_mut`). The
/// daemon publishes a clone after every turn for its readers. With the lean
/// indexes on ([`State::set_lean_indexes`], the simulator) they are sorted
/// vectors in blocks instead (`idmap.rs`): cheaper to change, O(n)
/// to clone (the jobs themselves are still shared).
#[derive(Debug, Clone, Default)]
pub struct State {
    nodes: Vec<Node>,
    usage: Vec<NodeUsage>,
    pub(crate) jobs: IdMap<Arc<Job>>,
    /// Queued jobs (state Idle, held or not).
    pub(crate) queued: IdSet,
    /// Job arrays ([`crate::array`]).
    pub(crate) arrays: crate::array::Arrays,
    /// Running, starting or suspended jobs, sharing the jobs' `Arc`s with
    /// `jobs`: the drivers walk them several times per iteration, without
    /// a look-up each. An event takes its job out of this map before it
    /// changes it (so that `Arc::make_mut` does not copy it) and puts the
    /// changed job back while it is active.
    active: IdMap<Arc<Job>>,
    /// The same jobs in a slice, made at the first walk after the map
    /// changed (a map cursor step costs about ten slice steps, and an
    /// iteration walks the active jobs several times); dropped before an
    /// event changes an active job, so that it does not share it.
    active_list: std::sync::OnceLock<Arc<[Arc<Job>]>>,
    /// Reservation starts remembered from the last plan (queued jobs only).
    remembered: crate::kept::Kept,
    /// A job ended (or the machine or a job changed) since reservations were
    /// last remembered: they may compress.
    released_early: bool,
    /// Administrative reservations (`mrsvctl -c`), by id.
    reservations: BTreeMap<String, crate::resv::Reservation>,
    /// Indexes for the lean path ([`crate::lean`]), maintained by `apply`
    /// once a driver enabled them ([`State::set_lean_indexes`]; the daemon
    /// does not, so its clones stay O(1)).
    idx: Option<Box<crate::index::Indexes>>,
    /// Nodes whose administrative state is not `Up`.
    nodes_not_up: usize,
    /// Resource locks of preemptors, by preemptor.
    locks: BTreeMap<JobId, Lock>,
    /// Victims still terminating, by the preemptor they make room for.
    pending_for: BTreeMap<JobId, u32>,
    /// Active jobs being terminated ([`Event::Terminate`]).
    terminating: usize,
    /// When a running job last gave processors back (ended, was requeued
    /// or suspended): backfill chunking is timed from it.
    last_freed: Option<Time>,
    /// Queued jobs that wait for a date (`start_after`) or for stage-in
    /// data with a ready time: what [`State::next_wakeup`] looks at, so
    /// that it does not scan the whole queue (the daemon asks 4 times a
    /// second).
    timed: OrdSet<JobId>,
    /// Generic-resource kinds by name ([`crate::gres`]).
    gres: crate::gres::GresTable,
    /// Generic resources each node has.
    node_gres: Vec<crate::gres::Gres>,
    /// Per node and kind: the units in use (empty while no node has any).
    gres_used_units: Vec<[u64; crate::gres::MAX_GRES]>,
    /// Kinds nodes declared beyond [`crate::gres::MAX_GRES`] (ignored).
    gres_dropped: Vec<String>,
    /// Jobs not finished whose own node access policy depends on the other
    /// jobs on their nodes ([`crate::access`]).
    scoped_jobs: usize,
}

impl State {
    /// A state with these nodes and no jobs.
    pub fn new(nodes: Vec<Node>) -> Self {
        let usage = vec![NodeUsage::default(); nodes.len()];
        let nodes_not_up = nodes
            .iter()
            .filter(|n| n.admin != NodeAdminState::Up)
            .count();
        let mut s = State {
            nodes,
            usage,
            nodes_not_up,
            ..State::default()
        };
        s.node_gres = vec![crate::gres::Gres::NONE; s.nodes.len()];
        for i in 0..s.nodes.len() {
            s.refresh_node_gres(i);
        }
        s
    }

    /// Resolves node `i`'s generic resources against the table (adding
    /// kinds it declares).
    fn refresh_node_gres(&mut self, i: usize) {
        let mut g = crate::gres::Gres::NONE;
        for (name, n) in &self.nodes[i].gres {
            match self.gres.intern(name) {
                Some(id) => g.set(id, g.get(id).saturating_add(*n)),
                None => {
                    if !self.gres_dropped.contains(name) {
                        self.gres_dropped.push(name.clone());
                    }
                }
            }
        }
        if self.node_gres.len() <= i {
            self.node_gres.resize(i + 1, crate::gres::Gres::NONE);
        }
        self.node_gres[i] = g;
        if !self.gres.is_empty() && self.gres_used_units.len() < self.nodes.len() {
            self.gres_used_units
                .resize(self.nodes.len(), [0; crate::gres::MAX_GRES]);
        }
    }

    /// The generic-resource kinds known, by name.
    pub fn gres_table(&self) -> &crate::gres::GresTable {
        &self.gres
    }

    /// Kinds some node declared beyond the table's capacity (not counted).
    pub fn dropped_gres(&self) -> &[String] {
        &self.gres_dropped
    }

    /// The generic resources node `id` has.
    pub fn node_gres(&self, id: NodeId) -> crate::gres::Gres {
        self.node_gres.get(id as usize).copied().unwrap_or_default()
    }

    /// Free generic resources on a usable node (none on down or drained
    /// nodes).
    pub fn free_gres(&self, id: NodeId) -> crate::gres::Gres {
        match self.node(id) {
            Some(n) if n.admin == NodeAdminState::Up => {
                self.node_gres(id).minus(&self.usage(id).gres)
            }
            _ => crate::gres::Gres::NONE,
        }
    }

    /// Whether any job not finished has a node access policy of its own
    /// that depends on the other jobs on its nodes.
    pub fn scoped_jobs(&self) -> bool {
        self.scoped_jobs > 0
    }

    pub fn nodes(&self) -> &[Node] {
        &self.nodes
    }

    pub fn node(&self, id: NodeId) -> Option<&Node> {
        self.nodes.get(id as usize)
    }

    pub fn node_id(&self, name: &str) -> Option<NodeId> {
        self.nodes
            .iter()
            .position(|n| n.name == name)
            .map(|i| i as NodeId)
    }

    pub fn usage(&self, id: NodeId) -> NodeUsage {
        self.usage.get(id as usize).copied().unwrap_or_default()
    }

    /// The state Moab prints for a node.
    pub fn node_state(&self, id: NodeId) -> Option<NodeState> {
        let n = self.node(id)?;
        let u = self.usage(id);
        // A node with only suspended jobs still counts as in use for display.
        let used = if u.jobs > 0 && u.procs == 0 {
            1
        } else {
            u.procs
        };
        Some(NodeState::derive(n.admin, used, n.procs))
    }

    pub fn job(&self, id: JobId) -> Option<&Job> {
        self.jobs.get(&id).map(|j| &**j)
    }

    /// Every job still remembered (queued, active and finished), by id.
    pub fn jobs(&self) -> impl Iterator<Item = &Job> {
        self.jobs.values().map(|j| &**j)
    }

    /// Queued jobs by id (submission order for equal priority).
    pub fn queued(&self) -> impl Iterator<Item = &Job> {
        // A queue that is most of the jobs (the usual case) is read in one
        // pass over the job map instead of one map lookup per queued id
        // (O(n) instead of O(n log n) for 100,000 queued jobs). Both give
        // the same jobs (queued = state Idle) in the same (id) order.
        let dense = self.queued.len().saturating_mul(4) >= self.jobs.len();
        let scan = dense.then(|| {
            self.jobs
                .values()
                .filter(|j| j.state == JobState::Idle)
                .map(|j| &**j)
        });
        let lookups = (!dense).then(|| self.queued.keys().filter_map(|id| self.job(*id)));
        scan.into_iter()
            .flatten()
            .chain(lookups.into_iter().flatten())
    }

    /// Active jobs by id.
    pub fn active(&self) -> impl Iterator<Item = &Job> {
        self.active_shared().map(|j| &**j)
    }

    /// The same jobs, as the shared references the state holds: the same
    /// `Arc` from one call to the next means the job has not changed.
    pub fn active_shared(&self) -> impl Iterator<Item = &Arc<Job>> {
        self.active_list
            .get_or_init(|| self.active.values().cloned().collect())
            .iter()
    }

    /// Remembers the priority reservations of the last plan (`(job, start)`),
    /// replacing any remembered before. Only `RESERVATIONPOLICY HIGHEST` uses
    /// them: a remembered reservation is never moved later, only compressed
    /// earlier (pyss's conservative backfill). Drivers pass
    /// `plan.reservations` back after applying the plan's starts. This is
    /// planning memory, not an [`Event`]: losing it (e.g. on restart) only
    /// means the next iteration recomputes reservations from scratch. Every
    /// job must be queued (`Idle`); on error nothing changes.
    pub fn remember_reservations(&mut self, list: Vec<(JobId, Time)>) -> Result<(), EventError> {
        // A job remembered now is queued (a start or a cancel forgets it):
        // only the others are looked up.
        #[cfg(debug_assertions)]
        for (id, _) in &list {
            if self.remembered.get(*id).is_some() {
                debug_assert!(self.job(*id).is_some_and(|j| j.state == JobState::Idle));
            }
        }
        for id in self.remembered.not_kept(&list) {
            let j = self.get(id)?;
            if j.state != JobState::Idle {
                return Err(wrong(j, "Idle"));
            }
        }
        self.remembered.replace(list);
        self.released_early = false;
        // Only walks under HIGHEST read remembered reservations: counted
        // apart from the other changes (a HIGHEST walk is resumed only
        // after the remembering of its own reservations, `crate::lean`).
        if let Some(idx) = self.idx.as_deref_mut() {
            idx.stamp.remembers += 1;
        }
        Ok(())
    }

    /// Something other than an event changed what a lean walk reads.
    fn renew_lean(&mut self) {
        if let Some(idx) = self.idx.as_deref_mut() {
            idx.renew();
        }
    }

    /// Whether remembered reservations may move: since they were remembered
    /// a job ended, was cancelled, suspended or requeued, or a node or job
    /// changed. When not (only submissions and starts happened),
    /// `RESERVATIONPOLICY HIGHEST` keeps every remembered reservation exactly
    /// where it is, as pyss does between terminations.
    pub fn reservations_may_compress(&self) -> bool {
        self.released_early
    }

    /// The remembered reservation start of a queued job, if any
    /// (see [`State::remember_reservations`]).
    pub fn remembered_reservation(&self, job: JobId) -> Option<Time> {
        self.remembered.get(job)
    }

    /// Every remembered reservation `(job, start)`, by job id
    /// (see [`State::remember_reservations`]).
    pub fn remembered_reservations(&self) -> impl Iterator<Item = (JobId, Time)> + '_ {
        self.remembered.iter()
    }

    /// The remembered reservations in the order they were given (a plan's
    /// order; see [`State::remember_reservations`]).
    pub fn remembered_in_plan_order(&self) -> &[(JobId, Time)] {
        self.remembered.in_given_order()
    }

    /// The administrative reservations, by id.
    pub fn reservations(&self) -> impl Iterator<Item = &crate::resv::Reservation> {
        self.reservations.values()
    }

    pub fn reservation(&self, id: &str) -> Option<&crate::resv::Reservation> {
        self.reservations.get(id)
    }

    /// Adds an administrative reservation. Refused (nothing changes) when
    /// the id is taken, a host is unknown, nothing is reserved or the
    /// window is empty.
    pub fn add_reservation(&mut self, r: crate::resv::Reservation) -> Result<(), EventError> {
        self.renew_lean();
        if self.reservations.contains_key(&r.id) {
            return Err(EventError::DuplicateReservation(r.id));
        }
        if let Some(h) = r.hosts.iter().find(|h| self.node_id(h).is_none()) {
            return Err(EventError::BadReservation(format!("unknown host '{h}'")));
        }
        if r.hosts.is_empty() && r.procs == 0 {
            return Err(EventError::BadReservation(
                "no hosts and no task count".to_string(),
            ));
        }
        if r.end.is_some_and(|e| e <= r.start) {
            return Err(EventError::BadReservation(
                "end is not after start".to_string(),
            ));
        }
        // Reservations may overlap (Moab: not exclusive by default; a job
        // then needs access to each); an EXCLUSIVE one (`mrsvctl -E`) is
        // created only where no other reservation holds the same nodes at
        // the same time.
        if r.flags.iter().any(|f| f.eq_ignore_ascii_case("EXCLUSIVE")) {
            let mine: Vec<NodeId> = r.resolve(self).into_iter().map(|x| x.0).collect();
            for other in self.reservations.values() {
                if !other.overlaps(r.start, r.end) {
                    continue;
                }
                let shared = other
                    .resolve(self)
                    .into_iter()
                    .find(|(n, _)| mine.contains(n))
                    .and_then(|(n, _)| self.node(n).map(|x| x.name.clone()));
                if let Some(h) = shared {
                    return Err(EventError::BadReservation(format!(
                        "exclusive reservation conflicts with {} on host '{h}'",
                        other.id
                    )));
                }
            }
        }
        self.reservations.insert(r.id.clone(), r);
        self.released_early = true;
        Ok(())
    }

    /// Removes an administrative reservation (`mrsvctl -r`).
    pub fn remove_reservation(&mut self, id: &str) -> Option<crate::resv::Reservation> {
        let r = self.reservations.remove(id);
        if r.is_some() {
            self.released_early = true;
            self.renew_lean();
        }
        r
    }

    pub fn queued_count(&self) -> usize {
        self.queued.len()
    }

    pub fn active_count(&self) -> usize {
        self.active.len()
    }

    /// Active jobs being terminated on their way back to the queue.
    pub fn terminating_count(&self) -> usize {
        self.terminating
    }

    /// Whether [`Event::Resume`] of `job` would be accepted now: it is
    /// suspended and its processors are free (a driver checks this before
    /// waking the job's processes).
    pub fn check_resume(&self, job: JobId) -> Result<(), EventError> {
        let j = self.get(job)?;
        if j.state != JobState::Suspended {
            return Err(wrong(j, "Suspended"));
        }
        for a in j.run.iter().flat_map(|r| r.alloc.iter()) {
            let n = self.node(a.node).ok_or(EventError::UnknownNode(a.node))?;
            if self.usage(a.node).procs + a.procs > n.procs {
                return Err(EventError::Overallocated { job, node: a.node });
            }
        }
        Ok(())
    }

    /// Every preemptor's lock (in force or not), by preemptor.
    pub fn locks(&self) -> impl Iterator<Item = &Lock> {
        self.locks.values()
    }

    /// A queued preemptor's lock if it is in force at `now`: while one of
    /// its victims is still terminating, then until `until` (inclusive).
    pub fn lock_in_force(&self, job: JobId, now: Time) -> Option<&Lock> {
        let l = self.locks.get(&job)?;
        let queued = self.job(job).is_some_and(|j| j.state == JobState::Idle);
        let held = self.pending_for.contains_key(&job) || l.until.is_some_and(|u| now <= u);
        (queued && held).then_some(l)
    }

    /// How many victims are still terminating for `job`.
    pub fn victims_terminating(&self, job: JobId) -> u32 {
        self.pending_for.get(&job).copied().unwrap_or(0)
    }

    /// Free processors on a usable node (0 for down or drained nodes).
    pub fn free_procs(&self, id: NodeId) -> u32 {
        match self.node(id) {
            Some(n) if n.admin == NodeAdminState::Up => {
                n.procs.saturating_sub(self.usage(id).procs)
            }
            _ => 0,
        }
    }

    /// Free memory on a usable node (MB).
    pub fn free_mem_mb(&self, id: NodeId) -> u64 {
        match self.node(id) {
            Some(n) if n.admin == NodeAdminState::Up => {
                n.mem_mb.saturating_sub(self.usage(id).mem_mb)
            }
            _ => 0,
        }
    }

    /// When a running job last gave its processors back (it ended, was
    /// requeued or suspended); `None` if none has since the state was built.
    pub fn resources_freed_at(&self) -> Option<Time> {
        self.last_freed
    }

    /// When time alone changes something: the earliest wall-clock expiry of
    /// an active job or start date of a queued one.
    pub fn next_wakeup(&self, now: Time) -> Option<Time> {
        let ends = self.active().filter_map(|j| j.expected_end());
        let dates = self
            .timed
            .iter()
            .filter_map(|id| self.job(*id))
            .filter_map(wakeup_date);
        ends.chain(dates).filter(|t| *t > now).min()
    }

    /// Applies an event at time `now`. On error nothing changed.
    pub fn apply(&mut self, event: Event, now: Time) -> Result<(), EventError> {
        if let Some(idx) = self.idx.as_deref_mut() {
            // What a lean walk resumed later must know (crate::lean).
            match &event {
                Event::Start { .. } => idx.stamp.starts += 1,
                Event::Submit(j)
                    if j.state == JobState::Idle && idx.at_tail((j.submit_time, j.id)) => {}
                _ => idx.renew(),
            }
        }
        let frees = !matches!(
            event,
            Event::Submit(_)
                | Event::Start { .. }
                | Event::Launch { .. }
                | Event::Started { .. }
                | Event::Purge { .. }
                | Event::Grow { .. }
        );
        // The one job the event is about (every event changes that job
        // alone), if any.
        let event_id = event_job(&event);
        // The events of every job's life (submit, start, end, purge) keep
        // the lean indexes and the timed set themselves, with the one
        // look-up of the job they make anyway. For any other event about a
        // job: take the job out of the indexes as it is, put it back as it
        // is after the event (also when the event is refused and nothing
        // changed).
        let job_id = event_id.filter(|_| !keeps_indexes(&event));
        if let Some(idx) = self.idx.as_deref_mut() {
            if let Some(j) = job_id.and_then(|id| self.jobs.get(&id)) {
                idx.remove(j);
            }
        }
        // The job's copy in the active map leaves it for the event (only
        // starts make a job active, and they put it there themselves).
        let active_id = event_id
            .filter(|_| !starts_or_purges(&event))
            .filter(|id| self.active.remove(id).is_some());
        if active_id.is_some() {
            self.active_list = Default::default();
        }
        // A job these events accept is no longer active (no look-up needed).
        let ends = matches!(
            event,
            Event::Finish { .. } | Event::Cancel { .. } | Event::Requeue { .. }
        );
        let res = self.apply_inner(event, now);
        if let Some(id) = active_id.filter(|_| !(ends && res.is_ok())) {
            if let Some(j) = self.jobs.get(&id).filter(|j| j.state.is_active()) {
                self.active.insert(id, Arc::clone(j));
            }
            self.active_list = Default::default();
        }
        #[cfg(debug_assertions)]
        if let Some(id) = event_id {
            if let Some(a) = self.active.get(&id) {
                debug_assert!(a.state.is_active());
                debug_assert!(self.jobs.get(&id).is_some_and(|j| Arc::ptr_eq(a, j)));
            }
        }
        if let Some(id) = job_id {
            // One look-up of the job after the event for both the timed set
            // and the indexes (queued jobs are the Idle ones).
            let job = self.jobs.get(&id);
            if job.is_some_and(|j| j.state == JobState::Idle && wakeup_date(j).is_some()) {
                self.timed.insert(id);
            } else if !self.timed.is_empty() {
                self.timed.remove(&id);
            }
            if let (Some(idx), Some(j)) = (self.idx.as_deref_mut(), job) {
                idx.add(j);
            }
        }
        if event_id.is_none() {
            self.nodes_not_up = self
                .nodes
                .iter()
                .filter(|n| n.admin != NodeAdminState::Up)
                .count();
        }
        res?;
        if frees {
            self.released_early = true;
        }
        Ok(())
    }

    /// The lean path's indexes, if enabled.
    pub(crate) fn indexes(&self) -> Option<&crate::index::Indexes> {
        self.idx.as_deref()
    }

    /// Enables (building them from the current jobs) or drops the
    /// incremental indexes that [`crate::schedule_lean`] needs; without them
    /// it always declines. Off by default: they cost memory and make clones
    /// O(queue). The simulator enables them.
    pub fn set_lean_indexes(&mut self, on: bool) {
        // The job containers are flat while the indexes are on
        // ([`crate::idmap`]): clones are O(queue) then anyway.
        self.jobs.set_flat(on);
        self.queued.set_flat(on);
        self.active.set_flat(on);
        if !on {
            self.idx = None;
            return;
        }
        if self.idx.is_some() {
            return;
        }
        let mut idx = crate::index::Indexes::default();
        idx.renew();
        for j in self.jobs.values() {
            debug_assert_eq!(j.state == JobState::Idle, self.queued.contains_key(&j.id));
            idx.add(j);
        }
        self.idx = Some(Box::new(idx));
    }

    /// Whether every node is administratively up.
    pub(crate) fn all_nodes_up(&self) -> bool {
        self.nodes_not_up == 0
    }

    fn apply_inner(&mut self, event: Event, now: Time) -> Result<(), EventError> {
        match event {
            Event::Submit(job) => {
                if self.jobs.contains_key(&job.id) || self.arrays.map.contains_key(&job.id) {
                    return Err(EventError::DuplicateJob(job.id));
                }
                // An array's ids are its sub-jobs' (made by State::materialize).
                if let Some((a, m)) = self.array_of(job.id) {
                    if !a.materialized(m.position) {
                        return Err(EventError::DuplicateJob(a.id));
                    }
                }
                let id = job.id;
                if job.state == JobState::Idle {
                    self.queued.insert(id, ());
                    if wakeup_date(&job).is_some() {
                        self.timed.insert(id);
                    }
                }
                if !job.state.is_finished() && scoped(&job) {
                    self.scoped_jobs += 1;
                }
                if let Some(idx) = self.idx.as_deref_mut() {
                    idx.add(&job);
                }
                self.jobs.insert(id, job);
                Ok(())
            }
            Event::SubmitArray(a) => self.submit_array(*a),
            Event::Array { array, op } => self.array_op(array, op, now),
            Event::Start { job, alloc, kind } => {
                self.start(job, alloc, kind, JobState::Running, now)
            }
            Event::Launch { job, alloc, kind } => {
                self.start(job, alloc, kind, JobState::Starting, now)
            }
            Event::Started { job, at } => {
                let j = self.get(job)?;
                if j.state != JobState::Starting {
                    return Err(wrong(j, "Starting"));
                }
                let j = self
                    .jobs
                    .get_mut(&job)
                    .map(Arc::make_mut)
                    .expect("checked above");
                j.state = JobState::Running;
                if let Some(r) = j.run.as_mut() {
                    r.start_time = at.clamp(r.start_time, now.max(r.start_time));
                }
                Ok(())
            }
            Event::Finish { job, code } => {
                self.end_active(job, now, code, JobState::Completed)?;
                self.locks.remove(&job);
                Ok(())
            }
            Event::Cancel { job } => {
                let j = self.get(job)?;
                if j.state.is_finished() {
                    return Err(wrong(j, "queued or active"));
                }
                let active = j.state.is_active();
                self.locks.remove(&job);
                if active {
                    self.end_active(job, now, CompletionCode::Cancelled, JobState::Removed)?;
                } else {
                    self.queued.remove(&job);
                    self.remembered.remove(job);
                    if !self.timed.is_empty() {
                        self.timed.remove(&job);
                    }
                    let j = self
                        .jobs
                        .get_mut(&job)
                        .map(Arc::make_mut)
                        .expect("checked above");
                    if let Some(idx) = self.idx.as_deref_mut() {
                        idx.remove(j);
                    }
                    if scoped(j) {
                        self.scoped_jobs = self.scoped_jobs.saturating_sub(1);
                    }
                    j.state = JobState::Removed;
                    j.completion = Some(Completion {
                        time: now,
                        code: CompletionCode::Cancelled,
                    });
                }
                Ok(())
            }
            Event::SetHold { job, hold } => {
                let j = self.get_mut(job)?;
                if j.state.is_finished() {
                    return Err(wrong(j, "queued"));
                }
                j.holds.insert(hold);
                Ok(())
            }
            Event::ReleaseHold { job, hold } => {
                let j = self.get_mut(job)?;
                j.holds.remove(hold);
                Ok(())
            }
            Event::Modify { job, change } => self.modify(job, change, now),
            Event::Suspend { job } => {
                let j = self.get(job)?;
                if !matches!(j.state, JobState::Running | JobState::Starting) {
                    return Err(wrong(j, "Running"));
                }
                let alloc = j.run.as_ref().map(|r| r.alloc.clone()).unwrap_or_default();
                remove_usage(&mut self.usage, &alloc, true, false);
                self.last_freed = Some(now);
                let j = self
                    .jobs
                    .get_mut(&job)
                    .map(Arc::make_mut)
                    .expect("checked above");
                j.state = JobState::Suspended;
                if let Some(r) = j.run.as_mut() {
                    r.suspended_at = Some(now);
                }
                Ok(())
            }
            Event::Resume { job } => {
                self.check_resume(job)?;
                let alloc = self
                    .get(job)?
                    .run
                    .as_ref()
                    .map(|r| r.alloc.clone())
                    .unwrap_or_default();
                add_usage(&mut self.usage, &alloc, true, false);
                let j = self
                    .jobs
                    .get_mut(&job)
                    .map(Arc::make_mut)
                    .expect("checked above");
                j.state = JobState::Running;
                j.admin_suspended = false;
                if let Some(r) = j.run.as_mut() {
                    if let Some(at) = r.suspended_at.take() {
                        r.suspended_secs += (now - at).max(0);
                    }
                    r.resumed_at = Some(now);
                }
                Ok(())
            }
            Event::Terminate {
                job,
                cause,
                by,
                until,
            } => {
                let j = self.get(job)?;
                if !j.state.is_active() {
                    return Err(wrong(j, "active"));
                }
                if j.run.as_ref().is_some_and(|r| r.terminating.is_some()) {
                    return Err(wrong(j, "not already terminating"));
                }
                let j = self
                    .jobs
                    .get_mut(&job)
                    .map(Arc::make_mut)
                    .expect("checked above");
                if let Some(r) = j.run.as_mut() {
                    r.terminating = Some(Termination {
                        cause,
                        by,
                        since: now,
                        until: until.max(now),
                    });
                }
                self.terminating += 1;
                if let Some(p) = by {
                    *self.pending_for.entry(p).or_default() += 1;
                }
                Ok(())
            }
            Event::Requeue { job } => {
                let j = self.get(job)?;
                if !j.state.is_active() {
                    return Err(wrong(j, "active"));
                }
                let suspended = j.state == JobState::Suspended;
                let alloc = j.run.as_ref().map(|r| r.alloc.clone()).unwrap_or_default();
                remove_usage(&mut self.usage, &alloc, !suspended, true);
                if !suspended {
                    self.last_freed = Some(now);
                }
                let j = self
                    .jobs
                    .get_mut(&job)
                    .map(Arc::make_mut)
                    .expect("checked above");
                let term = j.run.as_ref().and_then(|r| r.terminating);
                let units = j
                    .run
                    .as_ref()
                    .map(|r| r.gres_units.clone())
                    .unwrap_or_default();
                j.state = JobState::Idle;
                j.run = None;
                j.admin_suspended = false;
                j.requeued = Some(term.map_or(RequeueCause::Failure, |t| t.cause));
                self.give_units(&units);
                // Out of the active map already (State::apply).
                self.queued.insert(job, ());
                self.termination_over(term, now);
                Ok(())
            }
            Event::Resubmit { job } => {
                let j = self.get(job)?;
                if !j.state.is_finished() {
                    return Err(wrong(j, "completed"));
                }
                let j = self
                    .jobs
                    .get_mut(&job)
                    .map(Arc::make_mut)
                    .expect("checked above");
                j.state = JobState::Idle;
                j.run = None;
                j.completion = None;
                j.admin_suspended = false;
                j.requeued = Some(RequeueCause::Requeue);
                if scoped(j) {
                    self.scoped_jobs += 1;
                }
                self.queued.insert(job, ());
                Ok(())
            }
            Event::Lock { job, alloc, retry } => {
                let j = self.get(job)?;
                if j.state.is_finished() {
                    return Err(wrong(j, "queued"));
                }
                for a in &alloc {
                    self.node(a.node).ok_or(EventError::UnknownNode(a.node))?;
                }
                let until = (!self.pending_for.contains_key(&job)).then_some(now + retry.max(0));
                self.locks.insert(
                    job,
                    Lock {
                        job,
                        alloc,
                        retry: retry.max(0),
                        until,
                    },
                );
                Ok(())
            }
            Event::NodeState { node, state } => {
                let n = self
                    .nodes
                    .get_mut(node as usize)
                    .ok_or(EventError::UnknownNode(node))?;
                n.admin = state;
                Ok(())
            }
            Event::AddNode(node) => {
                self.nodes.push(node);
                self.usage.push(NodeUsage::default());
                self.refresh_node_gres(self.nodes.len() - 1);
                Ok(())
            }
            Event::UpdateNode { node, attrs } => {
                let n = self
                    .nodes
                    .get_mut(node as usize)
                    .ok_or(EventError::UnknownNode(node))?;
                let name = std::mem::take(&mut n.name);
                *n = Node { name, ..attrs };
                self.refresh_node_gres(node as usize);
                Ok(())
            }
            Event::Purge { job } => self.purge_inner(job).map(drop),
            Event::Grow { job, alloc } => self.grow(job, alloc),
            Event::Shrink { job, alloc } => self.shrink(job, alloc, now),
        }
    }

    /// [`Event::Purge`], handing the purged job back: a driver reads what
    /// it records of the job's end from it, without another look-up.
    pub fn purge(&mut self, job: JobId) -> Result<Arc<Job>, EventError> {
        if let Some(idx) = self.idx.as_deref_mut() {
            idx.renew();
        }
        self.purge_inner(job)
    }

    /// The job leaves the map as it is (no copy of it is made); refused
    /// (and put back) unless it is finished. A finished job has no place in
    /// the indexes or the timed set.
    fn purge_inner(&mut self, job: JobId) -> Result<Arc<Job>, EventError> {
        let j = self.jobs.remove(&job).ok_or(EventError::UnknownJob(job))?;
        if !j.state.is_finished() {
            let err = wrong(&j, "finished");
            self.jobs.insert(job, j);
            return Err(err);
        }
        self.note_purged(&j);
        Ok(j)
    }

    /// `Start`/`Launch`: the job takes its allocation, in `state`.
    fn start(
        &mut self,
        job: JobId,
        alloc: Vec<Alloc>,
        kind: StartKind,
        state: JobState,
        now: Time,
    ) -> Result<(), EventError> {
        // One look-up of the job (the nodes are read through their fields
        // meanwhile); it is changed (copied if shared) once the start is
        // accepted.
        let slot = self.jobs.get_mut(&job).ok_or(EventError::UnknownJob(job))?;
        if slot.state != JobState::Idle {
            return Err(wrong(slot, "Idle"));
        }
        for a in &alloc {
            let n = self
                .nodes
                .get(a.node as usize)
                .ok_or(EventError::UnknownNode(a.node))?;
            let u = self.usage.get(a.node as usize).copied().unwrap_or_default();
            let cap = self.node_gres.get(a.node as usize).copied();
            if u.procs + a.procs > n.procs
                || (n.mem_mb > 0 && u.mem_mb + a.mem_mb > n.mem_mb)
                || !cap.unwrap_or_default().covers(&u.gres.plus(&a.gres))
            {
                return Err(EventError::Overallocated { job, node: a.node });
            }
        }
        let units = units_for(&self.node_gres, &self.gres_used_units, &alloc);
        take_units(&mut self.gres_used_units, &units);
        add_usage(&mut self.usage, &alloc, true, true);
        let j = Arc::make_mut(slot);
        if let Some(idx) = self.idx.as_deref_mut() {
            idx.remove(j);
        }
        if !j.req.trl().is_empty() {
            // The shape it starts in (crate::trl).
            crate::trl::apply_start(j, alloc.iter().map(|a| a.tasks).sum());
        }
        j.state = state;
        j.start_count += 1;
        j.run = Some(RunInfo {
            start_time: now,
            alloc,
            how: kind,
            suspended_secs: 0,
            suspended_at: None,
            resumed_at: None,
            terminating: None,
            virtual_walltime: None,
            gres_units: units,
        });
        if let Some(idx) = self.idx.as_deref_mut() {
            idx.add(j);
        }
        self.queued.remove(&job);
        if !self.timed.is_empty() {
            self.timed.remove(&job);
        }
        self.remembered.remove(job);
        self.active.insert(job, Arc::clone(slot));
        self.active_list = Default::default();
        // A GUARANTEEDPREEMPTION lock outlives a start that may still fail;
        // any other lock has done its work.
        if self.locks.get(&job).is_some_and(|l| l.retry == 0) {
            self.locks.remove(&job);
        }
        Ok(())
    }

    fn modify(&mut self, job: JobId, change: JobChange, now: Time) -> Result<(), EventError> {
        if let JobChange::Phase(p) = change {
            return self.phase(job, p, now);
        }
        if let JobChange::GresUnits(u) = change {
            return self.pin_units(job, u);
        }
        let j = self.get_mut(job)?;
        if j.state.is_finished() {
            return Err(wrong(j, "queued or active"));
        }
        let active = j.state.is_active();
        match change {
            JobChange::Walltime(w) => j.walltime = w,
            JobChange::Name(n) => j.name = n.into(),
            JobChange::Class(c) if !active => j.cred.class = c.map(Into::into),
            JobChange::Account(a) if !active => j.cred.account = a.map(Into::into),
            JobChange::Qos(q) if !active => j.cred.qos = q.map(Into::into),
            JobChange::Class(_) => return Err(EventError::ActiveJob { job, what: "class" }),
            JobChange::Account(_) => {
                return Err(EventError::ActiveJob {
                    job,
                    what: "account",
                })
            }
            JobChange::Qos(_) => return Err(EventError::ActiveJob { job, what: "QOS" }),
            JobChange::UserPrio(p) => j.user_prio = p,
            JobChange::SysPrio(p) => j.sys_prio = p,
            JobChange::StartAfter(t) => j.start_after = t,
            JobChange::Deadline(t) => {
                j.deadline = t;
                j.deadline_failed = None;
            }
            JobChange::DeadlineFailed(t) => j.deadline_failed = t,
            JobChange::Flags(f) => j.flags = f.into_iter().collect(),
            JobChange::Estimate(e) => j.estimate = e,
            JobChange::Depend(d) if !active => j.depend = d,
            JobChange::Depend(_) => {
                return Err(EventError::ActiveJob {
                    job,
                    what: "dependencies",
                })
            }
            JobChange::AdminSuspended(b) => j.admin_suspended = b,
            JobChange::DataWait(w) => j.data_wait = w,
            JobChange::Phase(_) => unreachable!("handled above"),
            JobChange::Elastic(e) => j.elastic = e,
            JobChange::VirtualWalltime(v) => match j.run.as_mut() {
                Some(r) if active => r.virtual_walltime = v,
                _ => return Err(wrong(j, "active")),
            },
            JobChange::Request(r) if !active => j.req = r,
            JobChange::Request(_) => {
                return Err(EventError::ActiveJob {
                    job,
                    what: "request",
                })
            }
            JobChange::Group(g) if !active => j.cred.group = g.into(),
            JobChange::Group(_) => return Err(EventError::ActiveJob { job, what: "group" }),
            JobChange::EligibleSince(t) => j.eligible_since = t,
            JobChange::CpuUsed(ms) => j.cpu_ms = Some(ms),
            JobChange::Gres(g) if !active => {
                j.req.layout_mut().gres = g;
                if j.req.layout.as_deref() == Some(&crate::layout::Layout::default()) {
                    j.req.layout = None;
                }
            }
            JobChange::Gres(_) => {
                return Err(EventError::ActiveJob {
                    job,
                    what: "generic resources",
                })
            }
            JobChange::GresUnits(_) => unreachable!("handled above"),
        }
        Ok(())
    }

    /// Re-pins an active job's generic-resource units ([`JobChange::GresUnits`]).
    fn pin_units(
        &mut self,
        job: JobId,
        units: Vec<crate::gres::GresUnits>,
    ) -> Result<(), EventError> {
        let j = self.get(job)?;
        if !j.state.is_active() {
            return Err(wrong(j, "active"));
        }
        let old = j
            .run
            .as_ref()
            .map(|r| r.gres_units.clone())
            .unwrap_or_default();
        self.give_units(&old);
        let free = |s: &State, u: &crate::gres::GresUnits| {
            let cap = s.node_gres(u.node).get(u.kind);
            let mask = if cap >= 64 {
                u64::MAX
            } else {
                (1u64 << cap) - 1
            };
            u.units & !mask == 0 && s.gres_units_used(u.node)[usize::from(u.kind)] & u.units == 0
        };
        if let Some(bad) = units.iter().find(|u| !free(self, u)) {
            let node = bad.node;
            for u in &old {
                if let Some(x) = self
                    .gres_used_units
                    .get_mut(u.node as usize)
                    .and_then(|x| x.get_mut(usize::from(u.kind)))
                {
                    *x |= u.units;
                }
            }
            return Err(EventError::Overallocated { job, node });
        }
        for u in &units {
            if let Some(x) = self
                .gres_used_units
                .get_mut(u.node as usize)
                .and_then(|x| x.get_mut(usize::from(u.kind)))
            {
                *x |= u.units;
            }
        }
        let j = self.get_mut(job)?;
        if let Some(r) = j.run.as_mut() {
            r.gres_units = units;
        }
        Ok(())
    }

    /// LOCAL data staging: an allocated job moves between `Running` (just
    /// started), `Staging` (its input goes to its nodes), `Staged` (the data
    /// is there) and `Running` again when it is launched — which restarts its
    /// clock, so its wall-clock limit counts from the launch.
    fn phase(&mut self, job: JobId, to: JobState, now: Time) -> Result<(), EventError> {
        let j = self.get_mut(job)?;
        let from = j.state;
        match (from, to) {
            (JobState::Running | JobState::Staging | JobState::Staged, JobState::Staging)
            | (JobState::Staging | JobState::Staged, JobState::Staged) => j.state = to,
            (JobState::Staging | JobState::Staged, JobState::Running) => {
                j.state = JobState::Running;
                if let Some(r) = j.run.as_mut() {
                    r.start_time = now;
                }
            }
            _ => {
                return Err(EventError::WrongState {
                    job,
                    state: from.as_str(),
                    expected: match to {
                        JobState::Running => "Staging or Staged",
                        _ => "Running, Staging or Staged",
                    },
                })
            }
        }
        Ok(())
    }

    /// A terminating victim has left: once none is left for its preemptor,
    /// the preemptor's lock holds for its `retry` more.
    fn termination_over(&mut self, term: Option<Termination>, now: Time) {
        let Some(t) = term else { return };
        self.terminating = self.terminating.saturating_sub(1);
        let Some(p) = t.by else { return };
        let left = self.pending_for.get(&p).copied().unwrap_or(0);
        if left > 1 {
            self.pending_for.insert(p, left - 1);
            return;
        }
        self.pending_for.remove(&p);
        if let Some(l) = self.locks.get_mut(&p) {
            l.until = Some(now + l.retry);
        }
    }

    /// An active job ends (finished or cancelled), in `state`; keeps the
    /// indexes (a finished job has no place in them). Refused for a job
    /// not active.
    fn end_active(
        &mut self,
        job: JobId,
        now: Time,
        code: CompletionCode,
        state: JobState,
    ) -> Result<(), EventError> {
        let slot = self.jobs.get_mut(&job).ok_or(EventError::UnknownJob(job))?;
        if !slot.state.is_active() {
            return Err(wrong(slot, "active"));
        }
        let j = Arc::make_mut(slot);
        if let Some(idx) = self.idx.as_deref_mut() {
            idx.remove(j);
        }
        let suspended = j.state == JobState::Suspended;
        j.state = state;
        j.completion = Some(Completion { time: now, code });
        let mut term = None;
        if let Some(r) = j.run.as_mut() {
            term = r.terminating;
            if let Some(at) = r.suspended_at.take() {
                r.suspended_secs += (now - at).max(0);
            }
            remove_usage(&mut self.usage, &r.alloc, !suspended, true);
            give_units(&mut self.gres_used_units, &r.gres_units);
        }
        let scoped = scoped(j);
        // Out of the active map already (State::apply).
        if scoped {
            self.scoped_jobs = self.scoped_jobs.saturating_sub(1);
        }
        self.termination_over(term, now);
        if !suspended {
            self.last_freed = Some(now);
        }
        Ok(())
    }

    /// The generic-resource units a start on `alloc` would be given now
    /// (what [`Event::Start`] assigns, lowest free first): a driver tells
    /// its backend which devices a job gets before it applies the start.
    pub fn units_for(&self, alloc: &[Alloc]) -> Vec<crate::gres::GresUnits> {
        units_for(&self.node_gres, &self.gres_used_units, alloc)
    }

    /// Takes back units given out by a start ([`State::units_for`]).
    fn give_units(&mut self, units: &[crate::gres::GresUnits]) {
        give_units(&mut self.gres_used_units, units);
    }

    /// The units of generic resources in use on a node, per kind.
    pub fn gres_units_used(&self, id: NodeId) -> [u64; crate::gres::MAX_GRES] {
        self.gres_used_units
            .get(id as usize)
            .copied()
            .unwrap_or([0; crate::gres::MAX_GRES])
    }

    fn get(&self, job: JobId) -> Result<&Job, EventError> {
        self.job(job).ok_or(EventError::UnknownJob(job))
    }

    fn get_mut(&mut self, job: JobId) -> Result<&mut Job, EventError> {
        self.jobs
            .get_mut(&job)
            .map(Arc::make_mut)
            .ok_or(EventError::UnknownJob(job))
    }
}

/// [`State::units_for`] on the state's fields: `cap` the generic resources
/// of each node, `used` the units in use per node and kind. The units of
/// every kind each allocation takes (lowest free first); kinds with more
/// than [`crate::gres::MAX_UNITS`] units on a node are counted only.
fn units_for(
    cap: &[crate::gres::Gres],
    used: &[[u64; crate::gres::MAX_GRES]],
    alloc: &[Alloc],
) -> Vec<crate::gres::GresUnits> {
    let mut out = Vec::new();
    let mut taken: Vec<(NodeId, crate::gres::GresId, u64)> = Vec::new();
    for a in alloc {
        let cap = cap.get(a.node as usize).copied().unwrap_or_default();
        for (kind, n) in a.gres.iter() {
            let c = cap.get(kind);
            if c > crate::gres::MAX_UNITS {
                continue;
            }
            let Some(used) = used
                .get(a.node as usize)
                .and_then(|u| u.get(usize::from(kind)))
            else {
                continue;
            };
            let mut used = *used;
            for t in taken.iter().filter(|t| t.0 == a.node && t.1 == kind) {
                used |= t.2;
            }
            if let Some(units) = crate::gres::pick_units(used, c, n) {
                taken.push((a.node, kind, units));
                out.push(crate::gres::GresUnits {
                    node: a.node,
                    kind,
                    units,
                });
            }
        }
    }
    out
}

/// Marks generic-resource units given out (what [`units_for`] picked) as
/// in use.
fn take_units(used: &mut [[u64; crate::gres::MAX_GRES]], units: &[crate::gres::GresUnits]) {
    for u in units {
        if let Some(x) = used
            .get_mut(u.node as usize)
            .and_then(|x| x.get_mut(usize::from(u.kind)))
        {
            *x |= u.units;
        }
    }
}

/// Takes back generic-resource units (per node and kind, in `used`).
fn give_units(used: &mut [[u64; crate::gres::MAX_GRES]], units: &[crate::gres::GresUnits]) {
    for u in units {
        if let Some(x) = used
            .get_mut(u.node as usize)
            .and_then(|x| x.get_mut(usize::from(u.kind)))
        {
            *x &= !u.units;
        }
    }
}

/// Counts `alloc` in the per-node usage: its processors (`procs`), its
/// memory, generic resources and one more job (`mem_and_jobs`).
fn add_usage(usage: &mut [NodeUsage], alloc: &[Alloc], procs: bool, mem_and_jobs: bool) {
    for a in alloc {
        let u = &mut usage[a.node as usize];
        if procs {
            u.procs += a.procs;
        }
        if mem_and_jobs {
            u.mem_mb += a.mem_mb;
            u.jobs += 1;
            u.gres = u.gres.plus(&a.gres);
        }
    }
}

/// The inverse of [`add_usage`].
fn remove_usage(usage: &mut [NodeUsage], alloc: &[Alloc], procs: bool, mem_and_jobs: bool) {
    for a in alloc {
        let u = &mut usage[a.node as usize];
        if procs {
            u.procs = u.procs.saturating_sub(a.procs);
        }
        if mem_and_jobs {
            u.mem_mb = u.mem_mb.saturating_sub(a.mem_mb);
            u.jobs = u.jobs.saturating_sub(1);
            u.gres = u.gres.minus(&a.gres);
        }
    }
}

/// Whether `apply_inner` keeps the lean indexes and the timed set itself
/// for this event (the events every job goes through).
fn starts_or_purges(e: &Event) -> bool {
    matches!(
        e,
        Event::Submit(_) | Event::Start { .. } | Event::Launch { .. } | Event::Purge { .. }
    )
}

fn keeps_indexes(e: &Event) -> bool {
    matches!(
        e,
        Event::Submit(_)
            | Event::Start { .. }
            | Event::Launch { .. }
            | Event::Finish { .. }
            | Event::Cancel { .. }
            | Event::Purge { .. }
    )
}

/// When time alone makes a queued job eligible: its start date or its
/// data-ready time, whichever is earlier.
fn wakeup_date(j: &Job) -> Option<Time> {
    let data = j.data_wait.and_then(|w| w.ready_at());
    j.start_after.into_iter().chain(data).min()
}

/// The job an event changes, if any.
fn event_job(e: &Event) -> Option<JobId> {
    match e {
        Event::Submit(j) => Some(j.id),
        Event::Start { job, .. }
        | Event::Launch { job, .. }
        | Event::Started { job, .. }
        | Event::Finish { job, .. }
        | Event::Cancel { job }
        | Event::SetHold { job, .. }
        | Event::ReleaseHold { job, .. }
        | Event::Modify { job, .. }
        | Event::Suspend { job }
        | Event::Resume { job }
        | Event::Requeue { job }
        | Event::Terminate { job, .. }
        | Event::Resubmit { job }
        | Event::Lock { job, .. }
        | Event::Grow { job, .. }
        | Event::Shrink { job, .. }
        | Event::Purge { job } => Some(*job),
        Event::NodeState { .. }
        | Event::AddNode(_)
        | Event::UpdateNode { .. }
        | Event::SubmitArray(_)
        | Event::Array { .. } => None,
    }
}

/// Whether the job's own node access policy depends on the other jobs on
/// its nodes.
fn scoped(j: &Job) -> bool {
    j.req.access().is_some_and(|p| p.depends_on_tenants())
}

fn wrong(j: &Job, expected: &'static str) -> EventError {
    EventError::WrongState {
        job: j.id,
        state: j.display_state().as_str(),
        expected,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::job::Request;

    fn two_nodes() -> State {
        State::new(vec![Node::new("n1", 2, 1000), Node::new("n2", 2, 1000)])
    }

    /// `procs` processors (one task each) on `node`.
    fn on(node: NodeId, procs: u32) -> Vec<Alloc> {
        vec![Alloc {
            node,
            tasks: procs,
            procs,
            mem_mb: 0,
            gres: Default::default(),
        }]
    }

    #[test]
    fn queued_reads_the_same_jobs_dense_or_sparse() {
        let mut s = two_nodes();
        for id in 1..=20 {
            s.apply(
                Event::submit(Job::new(id, "u", Request::procs(1), Some(10), 0)),
                0,
            )
            .unwrap();
        }
        let ids = |s: &State| s.queued().map(|j| j.id).collect::<Vec<_>>();
        let expected = |s: &State| s.queued.keys().copied().collect::<Vec<_>>();
        assert_eq!(ids(&s), (1..=20).collect::<Vec<_>>(), "dense");
        // Cancel most: the queue becomes sparse among the remembered jobs.
        for id in 1..=18 {
            s.apply(Event::Cancel { job: id }, 1).unwrap();
        }
        assert_eq!(ids(&s), vec![19, 20], "sparse");
        assert_eq!(ids(&s), expected(&s));
        let alloc = on(0, 1);
        s.apply(
            Event::Start {
                job: 19,
                alloc,
                kind: StartKind::Priority,
            },
            2,
        )
        .unwrap();
        s.apply(Event::Requeue { job: 19 }, 3).unwrap();
        assert_eq!(ids(&s), vec![19, 20]);
        assert_eq!(ids(&s), expected(&s));
    }

    /// The lean indexes, the timed set and the queue kept by `apply` are
    /// the ones built from scratch after every kind of job event, refused
    /// ones included.
    #[test]
    fn incremental_indexes_match_a_rebuild() {
        let mut s = two_nodes();
        s.set_lean_indexes(true);
        let check = |s: &State, what: &str| {
            let mut fresh = s.clone();
            fresh.set_lean_indexes(false);
            fresh.set_lean_indexes(true);
            // The stamp is history (the lean walk's resumption), not content.
            let content = |s: &State| {
                s.indexes().cloned().map(|mut i| {
                    i.stamp.owner = 0;
                    i.stamp.changes = 0;
                    i.stamp.starts = 0;
                    i.stamp.remembers = 0;
                    i.stamp.tail = (0, 0);
                    i
                })
            };
            assert_eq!(
                format!("{:?}", content(s)),
                format!("{:?}", content(&fresh)),
                "{what}"
            );
            // The walltime ends, shared with the releases or kept apart.
            let mut ends: Vec<(Time, JobId, u32)> = s
                .active()
                .filter(|j| j.state != JobState::Suspended)
                .filter_map(|j| {
                    let run = j.run.as_ref()?;
                    let end = run.start_time + run.suspended_secs + j.walltime?;
                    Some((end, j.id, run.procs()))
                })
                .collect();
            ends.sort_unstable();
            assert_eq!(s.indexes().unwrap().ends().as_slice(), ends, "{what}");
            for b in s.indexes().unwrap().queue.blocks() {
                assert_eq!(b.min_procs, b.items.iter().map(|i| i.procs).min().unwrap());
                assert_eq!(b.min_dur, b.items.iter().map(|i| i.dur).min().unwrap());
            }
            let idle = |f: fn(&Job) -> bool| {
                s.jobs()
                    .filter(|j| j.state == JobState::Idle && f(j))
                    .map(|j| j.id)
                    .collect::<Vec<_>>()
            };
            assert_eq!(s.queued.keys().copied().collect::<Vec<_>>(), idle(|_| true));
            let timed = idle(|j| wakeup_date(j).is_some());
            assert_eq!(s.timed.iter().copied().collect::<Vec<_>>(), timed, "{what}");
        };
        let job = |id: JobId, procs: u32, wall: Option<Secs>| {
            Job::new(id, "u", Request::procs(procs), wall, id as Time)
        };
        let mut dated = job(2, 2, Some(20));
        dated.start_after = Some(50);
        let mut estimated = job(4, 1, Some(30));
        estimated.estimate = Some(5);
        let start = |job: JobId, alloc: Vec<Alloc>| Event::Start {
            job,
            alloc,
            kind: StartKind::Priority,
        };
        let events = vec![
            Event::submit(job(1, 1, Some(10))),
            Event::submit(dated),
            Event::submit(job(3, 1, None)),
            Event::submit(estimated),
            Event::submit(job(5, 1, Some(40))),
            Event::submit(job(1, 1, Some(10))),
            start(1, on(0, 1)),
            start(1, on(0, 1)),
            Event::Launch {
                job: 3,
                alloc: on(1, 1),
                kind: StartKind::Backfill,
            },
            Event::Started { job: 3, at: 12 },
            Event::Modify {
                job: 1,
                change: JobChange::Estimate(Some(4)),
            },
            Event::Suspend { job: 1 },
            Event::Resume { job: 1 },
            Event::Finish {
                job: 2,
                code: CompletionCode::Exit(0),
            },
            Event::Finish {
                job: 3,
                code: CompletionCode::Exit(0),
            },
            Event::Purge { job: 1 },
            Event::Requeue { job: 1 },
            Event::SetHold {
                job: 1,
                hold: HoldType::User,
            },
            Event::Modify {
                job: 2,
                change: JobChange::StartAfter(Some(60)),
            },
            Event::Cancel { job: 2 },
            start(4, on(0, 1)),
            Event::Cancel { job: 4 },
            Event::ReleaseHold {
                job: 1,
                hold: HoldType::User,
            },
            Event::Resubmit { job: 3 },
            start(5, on(1, 1)),
            Event::Finish {
                job: 5,
                code: CompletionCode::Exit(1),
            },
            Event::Purge { job: 2 },
            Event::Purge { job: 4 },
            Event::Purge { job: 5 },
        ];
        for (i, e) in events.into_iter().enumerate() {
            let what = format!("event {i}: {e:?}");
            let _ = s.apply(e, 20 + i as Time);
            check(&s, &what);
        }
        assert_eq!(
            s.jobs().map(|j| j.id).collect::<Vec<_>>(),
            vec![1, 3],
            "refused and applied events as expected"
        );
    }

    #[test]
    fn next_wakeup_follows_start_dates_and_walltimes_through_events() {
        let mut s = two_nodes();
        let mut dated = Job::new(1, "u", Request::procs(1), Some(50), 0);
        dated.start_after = Some(100);
        s.apply(Event::submit(dated), 0).unwrap();
        s.apply(
            Event::submit(Job::new(2, "u", Request::procs(1), Some(30), 0)),
            0,
        )
        .unwrap();
        assert_eq!(s.next_wakeup(0), Some(100));
        assert_eq!(s.next_wakeup(100), None, "only later times");
        let alloc = |n| on(n, 1);
        s.apply(
            Event::Start {
                job: 2,
                alloc: alloc(0),
                kind: StartKind::Priority,
            },
            10,
        )
        .unwrap();
        assert_eq!(s.next_wakeup(0), Some(40), "job 2 ends by its walltime");
        s.apply(
            Event::Modify {
                job: 1,
                change: JobChange::StartAfter(Some(20)),
            },
            10,
        )
        .unwrap();
        assert_eq!(s.next_wakeup(0), Some(20));
        s.apply(
            Event::Start {
                job: 1,
                alloc: alloc(1),
                kind: StartKind::Priority,
            },
            20,
        )
        .unwrap();
        assert_eq!(
            s.next_wakeup(0),
            Some(40),
            "a started job has no start date to wait for"
        );
        s.apply(Event::Cancel { job: 2 }, 25).unwrap();
        assert_eq!(s.next_wakeup(0), Some(70));
    }

    #[test]
    fn start_finish_tracks_usage() {
        let mut s = two_nodes();
        s.apply(
            Event::submit(Job::new(1, "u", Request::procs(2), Some(60), 0)),
            0,
        )
        .unwrap();
        let alloc = on(0, 2);
        s.apply(
            Event::Start {
                job: 1,
                alloc,
                kind: StartKind::Priority,
            },
            5,
        )
        .unwrap();
        assert_eq!(s.free_procs(0), 0);
        assert_eq!(s.node_state(0), Some(NodeState::Busy));
        assert_eq!(s.job(1).unwrap().expected_end(), Some(65));
        s.apply(
            Event::Finish {
                job: 1,
                code: CompletionCode::Exit(0),
            },
            30,
        )
        .unwrap();
        assert_eq!(s.free_procs(0), 2);
        assert_eq!(s.job(1).unwrap().state, JobState::Completed);
    }

    #[test]
    fn purge_hands_a_finished_job_back_and_refuses_any_other() {
        for indexed in [false, true] {
            let mut s = two_nodes();
            s.set_lean_indexes(indexed);
            s.apply(
                Event::submit(Job::new(1, "u", Request::procs(2), Some(60), 0)),
                0,
            )
            .unwrap();
            // Queued: refused, and the job stays as it was (queue included).
            let before = s.job(1).cloned();
            assert!(matches!(
                s.purge(1),
                Err(EventError::WrongState { job: 1, .. })
            ));
            assert_eq!(s.job(1).cloned(), before);
            assert_eq!(s.queued_count(), 1);
            let alloc = on(0, 2);
            let start = Event::Start {
                job: 1,
                alloc,
                kind: StartKind::Priority,
            };
            s.apply(start, 5).unwrap();
            let finish = Event::Finish {
                job: 1,
                code: CompletionCode::Exit(0),
            };
            s.apply(finish, 30).unwrap();
            // Finished: handed back as it ended, and gone.
            let j = s.purge(1).unwrap();
            assert_eq!(j.state, JobState::Completed);
            assert_eq!(j.run.as_ref().map(|r| r.start_time), Some(5));
            assert!(s.job(1).is_none());
            assert!(matches!(s.purge(1), Err(EventError::UnknownJob(1))));
            assert!(matches!(
                s.apply(Event::Purge { job: 1 }, 30),
                Err(EventError::UnknownJob(1))
            ));
        }
    }

    #[test]
    fn a_launched_job_is_starting_until_the_backend_confirms_it() {
        let mut s = two_nodes();
        s.apply(
            Event::submit(Job::new(1, "u", Request::procs(2), Some(60), 0)),
            0,
        )
        .unwrap();
        let alloc = vec![Alloc {
            node: 1,
            tasks: 2,
            procs: 2,
            mem_mb: 100,
            gres: Default::default(),
        }];
        assert!(s.apply(Event::Started { job: 1, at: 5 }, 5).is_err());
        s.apply(
            Event::Launch {
                job: 1,
                alloc,
                kind: StartKind::Backfill,
            },
            10,
        )
        .unwrap();
        let j = s.job(1).unwrap();
        assert_eq!(j.state, JobState::Starting);
        assert_eq!(j.start_count, 1);
        assert_eq!((s.free_procs(1), s.free_mem_mb(1)), (0, 900));
        assert_eq!(s.active_count(), 1);
        // Confirmed: running since the backend's start time, limit from there.
        s.apply(Event::Started { job: 1, at: 25 }, 30).unwrap();
        let j = s.job(1).unwrap();
        assert_eq!(j.state, JobState::Running);
        assert_eq!(j.expected_end(), Some(85));
        // Only once: a running job is not restarted.
        let err = s.apply(Event::Started { job: 1, at: 40 }, 40).unwrap_err();
        assert!(matches!(err, EventError::WrongState { .. }), "{err:?}");
        assert_eq!(s.job(1).unwrap().expected_end(), Some(85));
    }

    #[test]
    fn a_start_time_outside_launch_and_now_is_clamped() {
        for (at, want) in [(3, 10), (50, 20), (15, 15)] {
            let mut s = two_nodes();
            s.apply(
                Event::submit(Job::new(1, "u", Request::procs(1), Some(60), 0)),
                0,
            )
            .unwrap();
            let alloc = on(0, 1);
            s.apply(
                Event::Launch {
                    job: 1,
                    alloc,
                    kind: StartKind::Priority,
                },
                10,
            )
            .unwrap();
            s.apply(Event::Started { job: 1, at }, 20).unwrap();
            let start = s.job(1).unwrap().run.as_ref().unwrap().start_time;
            assert_eq!(start, want, "reported {at}");
        }
    }

    #[test]
    fn a_starting_job_can_end_or_go_back_to_the_queue() {
        let mut s = two_nodes();
        for id in [1, 2] {
            s.apply(
                Event::submit(Job::new(id, "u", Request::procs(1), Some(60), 0)),
                0,
            )
            .unwrap();
            let alloc = on(0, 1);
            s.apply(
                Event::Launch {
                    job: id,
                    alloc,
                    kind: StartKind::Priority,
                },
                1,
            )
            .unwrap();
        }
        assert_eq!(s.free_procs(0), 0);
        s.apply(Event::Requeue { job: 1 }, 2).unwrap();
        assert_eq!(s.job(1).unwrap().state, JobState::Idle);
        s.apply(
            Event::Finish {
                job: 2,
                code: CompletionCode::Exit(3),
            },
            3,
        )
        .unwrap();
        assert_eq!(s.job(2).unwrap().state, JobState::Completed);
        assert_eq!(s.free_procs(0), 2);
    }

    #[test]
    fn node_updates_change_resources_and_keep_allocations() {
        let mut s = two_nodes();
        s.apply(
            Event::submit(Job::new(1, "u", Request::procs(2), Some(60), 0)),
            0,
        )
        .unwrap();
        let alloc = on(0, 2);
        s.apply(
            Event::Start {
                job: 1,
                alloc,
                kind: StartKind::Priority,
            },
            0,
        )
        .unwrap();
        let mut bigger = Node::new("ignored", 8, 4000);
        bigger.features = vec!["gpu".into()];
        bigger.partition = "p".into();
        s.apply(
            Event::UpdateNode {
                node: 0,
                attrs: bigger,
            },
            1,
        )
        .unwrap();
        let n = s.node(0).unwrap();
        assert_eq!(
            (n.name.as_str(), n.procs, n.mem_mb, n.partition.as_str()),
            ("n1", 8, 4000, "p")
        );
        assert!(n.has_features(&["gpu".to_string()]));
        assert_eq!(s.free_procs(0), 6);
        // Shrunk below its allocation: nothing free, the job keeps running.
        let mut down = Node::new("n1", 1, 4000);
        down.admin = NodeAdminState::Down;
        s.apply(
            Event::UpdateNode {
                node: 0,
                attrs: down,
            },
            2,
        )
        .unwrap();
        assert_eq!(s.free_procs(0), 0);
        assert_eq!(s.node_state(0), Some(NodeState::Down));
        assert!(!s.all_nodes_up());
        assert_eq!(s.job(1).unwrap().state, JobState::Running);
        assert!(s
            .apply(
                Event::UpdateNode {
                    node: 7,
                    attrs: Node::new("x", 1, 1),
                },
                3,
            )
            .is_err());
    }

    #[test]
    fn refused_event_changes_nothing() {
        let mut s = two_nodes();
        s.apply(
            Event::submit(Job::new(1, "u", Request::procs(3), Some(60), 0)),
            0,
        )
        .unwrap();
        let before = format!("{s:?}");
        let alloc = on(0, 3);
        let err = s
            .apply(
                Event::Start {
                    job: 1,
                    alloc,
                    kind: StartKind::Priority,
                },
                1,
            )
            .unwrap_err();
        assert_eq!(err, EventError::Overallocated { job: 1, node: 0 });
        assert_eq!(before, format!("{s:?}"));
        assert!(s.apply(Event::Cancel { job: 9 }, 1).is_err());
    }

    #[test]
    fn remembered_reservations_are_validated_and_dropped_on_start() {
        let mut s = two_nodes();
        s.apply(
            Event::submit(Job::new(1, "u", Request::procs(1), Some(60), 0)),
            0,
        )
        .unwrap();
        assert!(s.remember_reservations(vec![(9, 10)]).is_err());
        s.remember_reservations(vec![(1, 10)]).unwrap();
        assert_eq!(s.remembered_reservation(1), Some(10));
        let alloc = on(0, 1);
        s.apply(
            Event::Start {
                job: 1,
                alloc,
                kind: StartKind::Priority,
            },
            10,
        )
        .unwrap();
        assert_eq!(s.remembered_reservation(1), None);
        assert!(s.remember_reservations(vec![(1, 20)]).is_err());
        // Submissions keep reservations in place; any end lets them move.
        s.remember_reservations(Vec::new()).unwrap();
        s.apply(
            Event::submit(Job::new(2, "u", Request::procs(1), Some(60), 0)),
            20,
        )
        .unwrap();
        assert!(!s.reservations_may_compress());
        let code = CompletionCode::Exit(0);
        s.apply(Event::Finish { job: 1, code }, 70).unwrap();
        assert!(s.reservations_may_compress());
    }

    #[test]
    fn suspend_frees_procs_keeps_memory() {
        let mut s = two_nodes();
        let mut job = Job::new(1, "u", Request::procs(2), Some(100), 0);
        job.req.mem_per_task_mb = 100;
        s.apply(Event::submit(job), 0).unwrap();
        let alloc = vec![Alloc {
            node: 0,
            tasks: 2,
            procs: 2,
            mem_mb: 200,
            gres: Default::default(),
        }];
        s.apply(
            Event::Start {
                job: 1,
                alloc,
                kind: StartKind::Priority,
            },
            0,
        )
        .unwrap();
        s.apply(Event::Suspend { job: 1 }, 10).unwrap();
        assert_eq!(s.free_procs(0), 2);
        assert_eq!(s.free_mem_mb(0), 800);
        s.apply(Event::Resume { job: 1 }, 40).unwrap();
        assert_eq!(s.free_procs(0), 0);
        assert_eq!(s.job(1).unwrap().expected_end(), Some(130));
        s.apply(Event::Requeue { job: 1 }, 50).unwrap();
        assert_eq!(s.free_procs(0), 2);
        assert_eq!(s.free_mem_mb(0), 1000);
        assert_eq!(s.job(1).unwrap().state, JobState::Idle);
    }
}
