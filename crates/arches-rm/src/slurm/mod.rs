//! The Slurm backend (`RMCFG[name] TYPE=SLURM`): Arches decides when and
//! where every job runs, Slurm executes it on its nodes.
//!
//! How (facts in `shared/slurm/README.md`, Slurm 22.05):
//! - **One worker thread** makes every Slurm call (`sbatch`, `scontrol`,
//!   `scancel`, `squeue --json`, `sinfo --json`). The trait methods only queue
//!   a request and return; what happened comes back from `observe`. So a slow
//!   or restarting slurmctld never blocks the scheduling iteration or client
//!   queries. Only [`ResourceManager::nodes`] (the discovery at daemon start)
//!   waits for Slurm.
//! - **Start**: `sbatch --hold --no-requeue` pinned with `--nodelist` = the
//!   engine's nodes and `--exclude` = every other node (a node list alone
//!   means "at least these"), then `scontrol release` (batched for all the
//!   starts of one round). Slurm never chooses nodes or start times
//!   (configure it with `sched/builtin`, see docs/slurm.md). An uneven
//!   layout (not the same processors on every node) is pinned with a core
//!   reservation holding exactly the engine's processors per node, ended
//!   once the job runs. The job is `Starting` for the engine until Slurm
//!   runs it ([`Observation::Running`] with Slurm's start time); a job
//!   still pending in Slurm `timeout` after its release gets a note
//!   ([`Observation::Note`]) and keeps waiting.
//! - **Tag**: every Slurm job carries the comment `arches:<tag>:<job>:<nonce>`,
//!   so a restarted Arches finds its jobs again (`recover`) and cancels
//!   launches it no longer owns.
//! - **State**: a cheap `squeue -o` text poll every poll interval (paced to
//!   at least twice its own duration); when one of our jobs has ended, one
//!   `squeue --json` for the raw wait status, from which the exit status is
//!   decoded; `TIMEOUT` is a
//!   wall-clock kill; `NODE_FAIL` becomes [`Observation::NodeFailed`] (the
//!   daemon requeues or fails the job by its restartable flag). A job
//!   `squeue` no longer lists (after `MinJobAge`) is looked up in the
//!   completion log (`sacct -c`, or `sacct` with accounting) before it is
//!   reported vanished. `sinfo --json` keeps the nodes current
//!   (`NodeChanged`: state, processors, memory, features; a node Slurm no
//!   longer has is reported Down).
//! - **Control**: cancel = `scancel`; signal = `scancel --full --signal`;
//!   suspend/resume = `scontrol suspend/resume` (a non-STOP suspend signal is
//!   sent first with `scancel --full`; `scontrol suspend` still follows, so
//!   Slurm frees the CPUs for the preemptor); a new wall-clock limit =
//!   `scontrol update TimeLimit=` (minutes, rounded up); requeue = cancel
//!   the Slurm job; checkpoint = signal, then cancel after the timeout
//!   unless it ended first. Either is reported as `Requeued` once Slurm
//!   shows the job ended, never as a completion (the next start is a new
//!   Slurm job, so the old one is gone before it).
//! - **Environment**: `sbatch` runs with exactly the job's environment plus
//!   the allocation variables the local backend sets (`PBS_NODEFILE`,
//!   `PBS_NP`, `MOAB_NODELIST`...); the node file is written in the spool
//!   directory (which must be visible on the compute nodes). As root, the job
//!   is submitted with `--uid/--gid` of its user.
//! - **Interactive jobs** (`msub -I`): the batch script Slurm gets only
//!   keeps the allocation: it writes its arguments and environment to the
//!   job's session directory ([`SESSION_DIR`], the owner's) and waits for
//!   the session's exit status there, then exits with it. msub (as the
//!   user) runs the job's script on a terminal as a step of the allocation
//!   (`srun --jobid --overlap --pty`) and writes the status when it ends; a
//!   wall-clock kill or a cancel ends the job and Slurm kills the step.
//! - **slurmctld unreachable** (a call fails to reach it, or `scontrol
//!   ping` says so): polls only run `scontrol ping` (milliseconds, where a
//!   failing `squeue` or `sbatch` takes 9 s); starts wait without `sbatch`,
//!   for at most `timeout` (RMCFG `TIMEOUT`), then fail; cancels wait and
//!   are sent when it answers again; a waiting start first looks for its
//!   tag, so a submit whose answer was lost is not submitted twice. A
//!   recovery that cannot reach Slurm is retried at every poll.

mod json;
mod worker;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::mpsc::{self, Receiver, Sender};
use std::time::{Duration, Instant};

use arches_core::{JobId, Node, Secs, Time};

use crate::{Launch, Observation, ResourceManager, RmError};
use worker::{Request, Worker};

/// An interactive job's session directory inside its spool directory
/// (`msub -I`, docs/slurm.md): the job's owner's (mode 0700), holding the
/// script the session runs, its arguments and environment (written by the
/// batch script) and its exit status (written by msub; the batch script
/// exits with it).
pub const SESSION_DIR: &str = "session";

/// The Slurm job id recorded for Arches job `job` under `spool_dir`
/// (`Ok(None)`: none yet).
pub fn recorded_slurm_job(spool_dir: &Path, job: JobId) -> Result<Option<u64>, String> {
    let path = spool_dir.join(job.to_string()).join(worker::RECORD);
    match std::fs::read_to_string(&path) {
        Ok(t) => Ok(t.split_whitespace().next().and_then(|w| w.parse().ok())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(format!("cannot read {}: {e}", path.display())),
    }
}

/// Configuration of a [`SlurmRm`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SlurmConfig {
    /// The RM's configured name (`RMCFG[name]`).
    pub name: String,
    /// What identifies this Arches instance's Slurm jobs (in their comment).
    pub tag: String,
    /// Where job node files and scripts go (created if missing, mode 0711);
    /// must be readable on the compute nodes.
    pub spool_dir: PathBuf,
    /// `SLURM_CONF` for every Slurm command (`None`: inherited).
    pub slurm_conf: Option<PathBuf>,
    /// Directory of the Slurm commands (`None`: found through `PATH`).
    pub bin_dir: Option<PathBuf>,
    /// The Arches partition of the discovered nodes.
    pub partition: String,
    /// Time between two `squeue`/`sinfo` polls.
    pub poll_interval: Duration,
    /// RMCFG `TIMEOUT`: how long a start waits for an unreachable
    /// slurmctld (then it fails), how long a released job may stay pending
    /// in Slurm before a note says so, and how long node discovery waits at
    /// daemon start.
    pub timeout: Duration,
}

impl SlurmConfig {
    /// Defaults: `SLURM_CONF` inherited, 1 s polls, a 30 s timeout (Moab's
    /// RMCFG `TIMEOUT` default).
    pub fn new(
        name: impl Into<String>,
        tag: impl Into<String>,
        spool_dir: impl Into<PathBuf>,
    ) -> SlurmConfig {
        SlurmConfig {
            name: name.into(),
            tag: tag.into(),
            spool_dir: spool_dir.into(),
            slurm_conf: None,
            bin_dir: None,
            partition: arches_core::node::DEFAULT_PARTITION.to_string(),
            poll_interval: Duration::from_secs(1),
            timeout: Duration::from_secs(30),
        }
    }

    /// A Slurm command with this configuration's environment.
    pub(crate) fn command(&self, program: &str) -> Command {
        let mut cmd = match &self.bin_dir {
            Some(dir) => Command::new(dir.join(program)),
            None => Command::new(program),
        };
        if let Some(conf) = &self.slurm_conf {
            cmd.env("SLURM_CONF", conf);
        }
        cmd.stdin(std::process::Stdio::null());
        cmd
    }

    /// Runs a Slurm command; its stdout, or why it failed.
    pub(crate) fn run(&self, program: &str, args: &[&str]) -> Result<String, String> {
        output(self.command(program).args(args), program)
    }
}

/// Runs a prepared command; its stdout, or the command and its stderr.
pub(crate) fn output(cmd: &mut Command, program: &str) -> Result<String, String> {
    match cmd.output() {
        Ok(out) if out.status.success() => Ok(String::from_utf8_lossy(&out.stdout).into_owned()),
        Ok(out) => {
            let err = String::from_utf8_lossy(&out.stderr);
            let err = err.trim();
            Err(format!(
                "{program} failed ({}): {}",
                out.status,
                if err.is_empty() { "no message" } else { err }
            ))
        }
        Err(e) => Err(format!("cannot run {program}: {e}")),
    }
}

/// Whether a Slurm command's failure means slurmctld is (temporarily) not
/// answering, so the request should be retried rather than failed.
pub(crate) fn unreachable(message: &str) -> bool {
    // A command this process could not even run for want of descriptors,
    // memory or processes: nothing was asked, nothing is known; retried
    // like an outage (never taken for an answer).
    let short = message.starts_with("cannot run ")
        && [
            "Too many open files",
            "Cannot allocate memory",
            "Resource temporarily unavailable",
        ]
        .iter()
        .any(|m| message.contains(m));
    short
        || [
            "Unable to contact slurm controller",
            "Socket timed out",
            "Connection refused",
            "Zero Bytes were transmitted",
            "Slurm backup controller in standby mode",
            "Communication connection failure",
            "Transport endpoint is not connected",
            "Unable to establish",
            json::JSON_ERROR,
        ]
        .iter()
        .any(|m| message.contains(m))
}

/// The Slurm backend. Dropping it stops its worker (after the Slurm call in
/// progress); the Slurm jobs keep running and a new instance with the same
/// tag finds them with `recover`.
pub struct SlurmRm {
    config: SlurmConfig,
    requests: Sender<Request>,
    observations: Receiver<Observation>,
}

impl SlurmRm {
    /// Creates the spool directory and starts the worker thread. Slurm is
    /// not contacted here.
    pub fn new(config: SlurmConfig) -> Result<SlurmRm, RmError> {
        crate::fsmode::create_dir(&config.spool_dir, 0o711, true).map_err(|e| {
            RmError::Unavailable(format!(
                "spool directory {}: {e}",
                config.spool_dir.display()
            ))
        })?;
        let (requests, rx) = mpsc::channel();
        let (tx, observations) = mpsc::channel();
        let worker = Worker::new(config.clone(), tx);
        std::thread::Builder::new()
            .name(format!("slurm-{}", config.name))
            .spawn(move || worker.run(rx))
            .map_err(|e| RmError::Unavailable(format!("cannot start the Slurm worker: {e}")))?;
        Ok(SlurmRm {
            config,
            requests,
            observations,
        })
    }

    fn send(&self, request: Request) -> Result<(), RmError> {
        self.requests
            .send(request)
            .map_err(|_| RmError::Unavailable("the Slurm worker thread has stopped".into()))
    }
}

/// Reads the nodes from `sinfo --json` (one call, no retry).
pub fn query_nodes(config: &SlurmConfig) -> Result<Vec<Node>, RmError> {
    let text = config
        .run("sinfo", &["--json"])
        .map_err(RmError::Unavailable)?;
    let nodes = json::parse_nodes(&text).map_err(RmError::Unavailable)?;
    Ok(nodes.iter().map(|n| n.to_node(&config.partition)).collect())
}

/// One poll of the jobs as the worker makes it, with its parse; returns the
/// number of jobs Slurm reported (for benchmarks and diagnostics). `full`:
/// `squeue --json` (what a poll costs when one of our jobs has ended),
/// else the cheap `squeue -o` text poll.
pub fn query_jobs(config: &SlurmConfig, full: bool) -> Result<usize, RmError> {
    if full {
        let text = config
            .run("squeue", &["--json"])
            .map_err(RmError::Unavailable)?;
        json::parse_jobs(&text)
            .map(|j| j.len())
            .map_err(RmError::Unavailable)
    } else {
        let mut cmd = config.command("squeue");
        cmd.env("SLURM_TIME_FORMAT", "%s")
            .args(["-h", "-t", "all", "-o", json::SQUEUE_FORMAT]);
        let text = output(&mut cmd, "squeue").map_err(RmError::Unavailable)?;
        Ok(json::parse_jobs_text(&text).len())
    }
}

fn check_signal(signal: i32) -> Result<i32, RmError> {
    if (1..=64).contains(&signal) {
        Ok(signal)
    } else {
        Err(RmError::Refused(format!("invalid signal number {signal}")))
    }
}

impl ResourceManager for SlurmRm {
    fn name(&self) -> &str {
        &self.config.name
    }

    fn kind(&self) -> &'static str {
        "SLURM"
    }

    /// Slurm runs a released job at its next scheduling pass, or later when
    /// the CPUs are busy in Slurm: `Starting` until it reports it running.
    fn confirms_starts(&self) -> bool {
        true
    }

    /// The nodes Slurm reports; waits out an unreachable slurmctld for
    /// `timeout` (this is called once, when the daemon starts).
    fn nodes(&mut self) -> Result<Vec<Node>, RmError> {
        let deadline = Instant::now() + self.config.timeout;
        loop {
            match query_nodes(&self.config) {
                Ok(nodes) if !nodes.is_empty() => return Ok(nodes),
                Ok(_) if Instant::now() >= deadline => {
                    return Err(RmError::Unavailable("Slurm reports no nodes".into()))
                }
                Err(e) if Instant::now() >= deadline || !unreachable(&e.to_string()) => {
                    return Err(e)
                }
                _ => std::thread::sleep(Duration::from_millis(500)),
            }
        }
    }

    fn start(&mut self, launch: &Launch, _now: Time) -> Result<(), RmError> {
        if launch.nodes.is_empty() {
            return Err(RmError::Refused(format!(
                "job {}: no nodes allocated",
                launch.job
            )));
        }
        self.send(Request::Start(Box::new(launch.clone())))
    }

    fn cancel(&mut self, job: JobId, _now: Time) -> Result<(), RmError> {
        self.send(Request::Cancel(job))
    }

    fn signal(&mut self, job: JobId, signal: i32, _now: Time) -> Result<(), RmError> {
        let signal = check_signal(signal)?;
        self.send(Request::Signal(job, signal))
    }

    fn suspend(&mut self, job: JobId, signal: Option<i32>, _now: Time) -> Result<(), RmError> {
        let signal = signal.map(check_signal).transpose()?;
        self.send(Request::Suspend(job, signal))
    }

    fn resume(&mut self, job: JobId, _now: Time) -> Result<(), RmError> {
        self.send(Request::Resume(job))
    }

    fn requeue(&mut self, job: JobId, _now: Time) -> Result<(), RmError> {
        self.send(Request::Requeue(job))
    }

    fn checkpoint(
        &mut self,
        job: JobId,
        signal: i32,
        timeout: Secs,
        _now: Time,
    ) -> Result<(), RmError> {
        let signal = check_signal(signal)?;
        if timeout < 0 {
            return Err(RmError::Refused(format!(
                "negative checkpoint timeout {timeout}"
            )));
        }
        self.send(Request::Checkpoint(job, signal, timeout))
    }

    /// Asynchronous: `scontrol update TimeLimit=` runs on the worker; a
    /// failure comes back as [`Observation::WalltimeRefused`].
    fn set_walltime(
        &mut self,
        job: JobId,
        walltime: Option<Secs>,
        _now: Time,
    ) -> Result<(), RmError> {
        crate::check_walltime(walltime)?;
        self.send(Request::SetWalltime(job, walltime))
    }

    fn observe(&mut self, _now: Time) -> Vec<Observation> {
        self.observations.try_iter().collect()
    }

    fn recover(&mut self, active: &[JobId], _now: Time) -> Result<(), RmError> {
        self.send(Request::Recover(active.to_vec()))
    }
}
