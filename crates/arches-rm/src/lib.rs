//! Resource managers: the one trait every execution backend implements, and
//! the backends (local processes, simulation, Slurm).
//!
//! The trait is synchronous and non-blocking by contract: `start`, `cancel`,
//! `suspend`, `set_walltime`... return as soon as the request is handed over (a backend that
//! talks to something slow queues the work on its own thread); what actually
//! happened comes back later from [`ResourceManager::observe`]. The daemon and
//! the simulator drive every backend the same way: apply the plan through the
//! trait, then feed observations to `State::apply`.

pub mod fsmode;
pub mod local;
pub mod program;
pub mod sim;
pub mod slurm;
pub mod storage;

use arches_core::{JobId, Node, Secs, Time};

/// What the backend needs to run one job: the decision (which nodes, how many
/// tasks each) and the execution details kept by the daemon.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Launch {
    pub job: JobId,
    pub name: String,
    /// Allocated nodes by name with task and processor counts, in allocation order.
    pub nodes: Vec<LaunchNode>,
    pub exec: ExecSpec,
    /// Wall-clock limit to enforce (`None`: no limit).
    pub walltime: Option<Secs>,
    /// The job restarts from a checkpoint: it went back to the queue through
    /// `checkpoint` (the job sees `MOAB_RESTARTED=1`).
    pub restarted: bool,
}

/// One allocated node.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LaunchNode {
    pub name: String,
    pub tasks: u32,
    pub procs: u32,
    /// Generic resources given on this node: `(name, count, unit indices)`
    /// (indices empty for kinds counted only).
    pub gres: Vec<(String, u32, Vec<u32>)>,
}

/// An allocation as the backend names it: one [`LaunchNode`] per node of
/// `alloc` that `state` knows, with the generic resources and the units
/// (device indices) of `units` given on each.
pub fn launch_nodes(
    state: &arches_core::State,
    alloc: &[arches_core::Alloc],
    units: &[arches_core::GresUnits],
) -> Vec<LaunchNode> {
    let table = state.gres_table();
    alloc
        .iter()
        .filter_map(|a| {
            let gres = a
                .gres
                .iter()
                .filter_map(|(kind, n)| {
                    let idx = units
                        .iter()
                        .find(|u| u.node == a.node && u.kind == kind)
                        .map(|u| u.indices())
                        .unwrap_or_default();
                    Some((table.name(kind)?.to_string(), n, idx))
                })
                .collect();
            Some(LaunchNode {
                name: state.node(a.node)?.name.clone(),
                tasks: a.tasks,
                procs: a.procs,
                gres,
            })
        })
        .collect()
}

/// Execution details of a batch job.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ExecSpec {
    /// The script text (spooled at submit time).
    pub script: String,
    /// Interpreter override (`-S`); otherwise the script's `#!` line, else `/bin/sh`.
    pub shell: Option<String>,
    /// Absolute working directory.
    pub workdir: String,
    /// Absolute stdout path (already resolved: directories and `$MOAB_JOBID` expanded).
    pub stdout: String,
    /// Absolute stderr path (ignored when `join`).
    pub stderr: String,
    pub join: bool,
    /// Full environment of the job, in order, including `PBS_*` and `MOAB_*`
    /// variables that do not depend on the allocation. The backend adds the
    /// allocation-dependent ones (`PBS_NODEFILE`, `PBS_NP`, `PBS_NUM_NODES`,
    /// `MOAB_NODELIST`...).
    pub env: Vec<(String, String)>,
    pub user: String,
    pub uid: u32,
    pub gid: u32,
    /// Supplementary groups of the user.
    pub groups: Vec<u32>,
    pub class: Option<String>,
    /// Arguments the script runs with (`msub -F`, `msub script a b`).
    pub args: Vec<String>,
    /// `-W umask=`: the job's file-creation mask; `None`: the daemon's
    /// with group and other write removed.
    pub umask: Option<u32>,
    /// An interactive job (`msub -I`): the script runs on a pseudo-terminal
    /// its owner attaches to (local backend: `local::terminal`).
    pub interactive: bool,
}

/// Something a backend saw happen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Observation {
    /// The job is running (it started, or was found running after a
    /// restart) since `at`.
    Running { job: JobId, at: Time },
    /// The job ended. `code` is the exit status, 128+signal for a signal death.
    Finished { job: JobId, at: Time, code: i32 },
    /// The job was killed at its wall-clock limit.
    WalltimeExceeded { job: JobId, at: Time, code: i32 },
    /// The backend could not start the job (it goes back to the queue, deferred).
    StartFailed {
        job: JobId,
        at: Time,
        message: String,
    },
    /// The job was lost with its node; requeue or fail by its restartable flag.
    NodeFailed { job: JobId, at: Time, node: String },
    /// The job is no longer known to the backend (e.g. after a restart, nothing recorded).
    Vanished { job: JobId, at: Time },
    /// A node changed (added, down, drained, back up, resized, features):
    /// its attributes as the backend sees them now.
    NodeChanged { node: Node },
    /// Something to show with the job (checkjob), without a change of state.
    Note { job: JobId, message: String },
    /// The processor time (user + system, milliseconds) the job's processes
    /// used, measured as it ended; reported just before its end (`FSPOLICY
    /// UTILIZEDPS`). Backends that do not measure it never report it.
    CpuUsed { job: JobId, cpu_ms: u64 },
    /// A job terminated by `requeue` or `checkpoint` has ended (its
    /// processes are gone): it may be started again.
    Requeued { job: JobId, at: Time },
    /// An accepted wall-clock change of an active job failed later (an
    /// asynchronous backend, [`ResourceManager::set_walltime`]): `walltime`
    /// is the limit still enforced.
    WalltimeRefused {
        job: JobId,
        at: Time,
        walltime: Option<Secs>,
        message: String,
    },
    /// A requested operation failed (suspend, signal...).
    OperationFailed {
        job: JobId,
        at: Time,
        operation: &'static str,
        message: String,
    },
}

/// Why a backend refused a request outright.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RmError {
    #[error("job {0} is not known to the resource manager")]
    UnknownJob(JobId),
    #[error("{0}")]
    Refused(String),
    #[error("resource manager unavailable: {0}")]
    Unavailable(String),
    /// Out of something that comes back (disk space, descriptors, memory):
    /// nothing was done; the same request may succeed later.
    #[error("resource manager short of resources: {0}")]
    Busy(String),
}

impl RmError {
    /// An I/O error as an `RmError`: [`RmError::Busy`] when it may pass (no
    /// space left, out of descriptors or memory), else
    /// [`RmError::Unavailable`].
    pub fn from_io(what: String, e: &std::io::Error) -> RmError {
        let passing = matches!(
            e.raw_os_error(),
            Some(libc::ENOSPC | libc::EDQUOT | libc::EMFILE | libc::ENFILE | libc::ENOMEM)
                | Some(libc::EAGAIN)
        );
        if passing {
            RmError::Busy(format!("{what}: {e}"))
        } else {
            RmError::Unavailable(format!("{what}: {e}"))
        }
    }
}

/// The resource-manager function table (Maui's `MRMFunc`), as a trait.
pub trait ResourceManager: Send {
    /// The RM's configured name (`RMCFG[name]`).
    fn name(&self) -> &str;
    /// Its type as printed by mdiag -R and checknode (`LOCAL`, `SIM`, `SLURM`).
    fn kind(&self) -> &'static str;
    /// Whether a job handed over by `start` runs only once the backend says
    /// so ([`Observation::Running`]): the daemon shows it `Starting` until
    /// then and counts its run time from the reported start. `false` (the
    /// default): it runs from the moment `start` returns.
    fn confirms_starts(&self) -> bool {
        false
    }
    /// The nodes it manages now.
    fn nodes(&mut self) -> Result<Vec<Node>, RmError>;
    /// Start a job exactly on the given nodes.
    fn start(&mut self, launch: &Launch, now: Time) -> Result<(), RmError>;
    /// Terminate an active job (it will be reported as finished).
    fn cancel(&mut self, job: JobId, now: Time) -> Result<(), RmError>;
    /// Send a signal to every process of the job.
    fn signal(&mut self, job: JobId, signal: i32, now: Time) -> Result<(), RmError>;
    /// Stop the job's processes (with `signal`, default SIGSTOP).
    fn suspend(&mut self, job: JobId, signal: Option<i32>, now: Time) -> Result<(), RmError>;
    fn resume(&mut self, job: JobId, now: Time) -> Result<(), RmError>;
    /// Terminate the job so it can be started again; no completion is
    /// recorded. The job keeps running until it has ended (a terminating
    /// signal, then a kill after the backend's grace period); `observe` then
    /// reports [`Observation::Requeued`], and only then may it be started
    /// again.
    fn requeue(&mut self, job: JobId, now: Time) -> Result<(), RmError>;
    /// Change the wall-clock limit of an active job (running or
    /// suspended) to `walltime` seconds of run time in total (`None`: no
    /// limit); a limit already exceeded ends the job at once, as a
    /// wall-clock kill. `Err`: refused, the old limit stays. `Ok`: a
    /// synchronous backend enforces the new limit from now on; an
    /// asynchronous one accepted the request and reports a later failure as
    /// [`Observation::WalltimeRefused`].
    fn set_walltime(
        &mut self,
        job: JobId,
        walltime: Option<Secs>,
        now: Time,
    ) -> Result<(), RmError>;
    /// Send `signal`, allow `timeout` seconds to write a checkpoint, then
    /// terminate for requeue; reported as [`Observation::Requeued`] once
    /// the job has ended (by itself or killed).
    fn checkpoint(
        &mut self,
        job: JobId,
        signal: i32,
        timeout: Secs,
        now: Time,
    ) -> Result<(), RmError>;
    /// Everything that happened since the last call.
    fn observe(&mut self, now: Time) -> Vec<Observation>;
    /// After a daemon restart: find these active jobs again. Jobs still
    /// running are re-adopted; ended ones come back from `observe` as
    /// `Finished`, unknown ones as `Vanished`.
    fn recover(&mut self, active: &[JobId], now: Time) -> Result<(), RmError>;
    /// After `recover`: jobs this backend found running that were not in
    /// its `active` list (the daemon's state was lost or replaced by an
    /// older copy). They are left running and are never reported.
    fn unknown_running(&self) -> Vec<JobId> {
        Vec::new()
    }
    /// After `recover`: the highest job id this backend has any trace of
    /// (the daemon never hands out an id up to it again).
    fn highest_job_seen(&self) -> Option<JobId> {
        None
    }
    /// Whether the allocation of a running job can change (malleable and
    /// resizable jobs, [`arches_core::malleable`]). `false` (the default):
    /// the daemon refuses processor ranges.
    fn supports_resize(&self) -> bool {
        false
    }
    /// A running job's allocation is now `nodes` (it grew or shrank): the
    /// job is told (its node file and environment file are rewritten and it
    /// gets `signal`, if any). `Err`: refused, the job keeps its old
    /// allocation.
    fn resize(
        &mut self,
        job: JobId,
        nodes: &[LaunchNode],
        signal: Option<i32>,
        now: Time,
    ) -> Result<(), RmError> {
        let _ = (nodes, signal, now);
        Err(RmError::Refused(format!(
            "the {} resource manager cannot resize running job {job}",
            self.kind()
        )))
    }
}

/// The check every backend's [`ResourceManager::set_walltime`] makes
/// first: a limit must be a positive number of seconds (or none).
pub fn check_walltime(walltime: Option<Secs>) -> Result<(), RmError> {
    match walltime {
        Some(w) if w <= 0 => Err(RmError::Refused(format!("invalid wall-clock limit {w}"))),
        _ => Ok(()),
    }
}
