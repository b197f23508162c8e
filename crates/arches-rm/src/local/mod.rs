//! The local resource manager: jobs run as real processes on this machine,
//! each under its own supervisor process so that it survives the daemon.
//!
//! Protocol between [`LocalRm`] (in the daemon) and a supervisor
//! ([`supervise_main`]), all through `<spool>/<jobid>/`:
//! - `start` writes `launch.json` and spawns (`posix_spawn`, no copy of the
//!   daemon's memory) `<supervisor...> <job dir>` in a new session, with its
//!   control signals blocked so that none is lost before it is ready. That is
//!   the whole cost of a start: nothing is flushed to disk for it (see
//!   `housekeeping` for why that is safe).
//! - The supervisor forks the job, writes `pid` (its own pid and the job's
//!   process group), and at the end writes `status` (`exit <code>` +
//!   `walltime ok|exceeded`, or `failed <reason>`; then `at <epoch secs>`,
//!   when it happened) atomically and durably (temp file, fsync, rename,
//!   fsync of the job directory and of the spool directory) before exiting.
//! - Control requests (cancel, signal, suspend, resume, requeue, checkpoint,
//!   a new wall-clock limit)
//!   are appended as lines to `ctl`, then the supervisor is woken with SIGUSR1.
//! - `observe` reaps the supervisors it spawned (`try_wait`) and, for
//!   re-adopted ones, looks for their `status` file.
//!
//! Conventions for the daemon:
//! - A job started again after a checkpoint sees `MOAB_RESTARTED=1`.
//! - `requeue` and `checkpoint` terminate the job (the checkpoint signal
//!   first, then `CHECKPOINTTIMEOUT`); the launch stays supervised and its
//!   end is reported as `Requeued`, so the job is never started again
//!   while its previous run is still alive.
//! - The supervisor runs as `arches-supervisor` (argv\[0\] and, truncated,
//!   the process name), so `pkill moab` aimed at the daemon spares jobs.
//! - Where cgroups allow (as root, usually), each job runs in its own cgroup
//!   (`freezer`): suspension with SIGSTOP freezes the cgroup, and the end of
//!   a job kills it, so processes that left the job's process group are
//!   suspended and cleaned up too. Elsewhere the process group is signalled.
//! - A successful `start` is the confirmation of the start; `Running` is
//!   reported only for jobs re-adopted by `recover`.
//! - Cancel and walltime kills are signal deaths: code 128+SIGTERM (143), or
//!   128+SIGKILL (137) when the job outlived the grace period. Each process
//!   is sent SIGTERM once: the process group, then the cgroup's processes
//!   outside it (a second copy would run a job's TERM handler twice).
//! - The directory of a job reported as ended is removed at the next
//!   `observe` (the daemon has handled the previous batch by then); `recover`
//!   removes the directories of jobs that are neither active nor supervised.
//! - The spool directory must be traversable by job users: job directories
//!   are mode 0711, the script is owned by the user, the node file is
//!   world-readable, `launch.json` and `ctl` are private to the daemon.
//!
//! Wiring it into a daemon whose binary dispatches `__supervise` to
//! [`supervise_main`]:
//!
//! ```no_run
//! use arches_core::Node;
//! use arches_rm::local::{LocalConfig, LocalRm};
//! use arches_rm::ResourceManager;
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let moab = std::env::current_exe()?.to_string_lossy().into_owned();
//! let config = LocalConfig::new(
//!     "local",
//!     "/var/spool/arches/jobs",
//!     vec![moab, "__supervise".into()],
//!     vec![Node::new("node01", 8, 16_384)],
//! );
//! let mut rm = LocalRm::new(config)?;
//! let active_jobs = [17, 18]; // from the durable state
//! let now = 1_700_000_000;
//! rm.recover(&active_jobs, now)?;
//! let observations = rm.observe(now); // Running / Finished / Vanished...
//! # drop(observations);
//! # Ok(())
//! # }
//! ```

mod exec;
mod freezer;
mod housekeeping;
mod resize;
mod spool;
mod supervisor;
mod sys;
mod terminal;
mod tracked;

pub use spool::TTY_SOCKET;
pub use supervisor::supervise_main;
// Shared with the Slurm backend (same job environment and node file).
pub(crate) use spool::LaunchFile;
pub(crate) use supervisor::{environment, gpu_environment, gpu_lines};

use std::collections::BTreeMap;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use arches_core::{JobId, Node, Secs, Time};

use crate::{Launch, Observation, ResourceManager, RmError};
use housekeeping::{Housekeeper, TRASH_PREFIX};
use spool::{Control, Pids};
use tracked::{runs_in, Supervised};

/// Seconds between SIGTERM and SIGKILL when a job is terminated, by default.
pub const DEFAULT_KILL_GRACE_SECS: u64 = 5;

/// The supervisor's argv\[0\]; its process name is the first 15 bytes
/// (`arches-supervis`, what `ps -e` and `pgrep` show).
pub const SUPERVISOR_NAME: &str = "arches-supervisor";

/// Configuration of a [`LocalRm`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LocalConfig {
    /// The RM's configured name (`RMCFG[name]`).
    pub name: String,
    /// Where job directories live (created if missing, mode 0711).
    pub spool_dir: PathBuf,
    /// The argument-vector prefix that runs the supervisor, e.g.
    /// `[path to moab, "__supervise"]`; the job directory is appended.
    pub supervisor: Vec<String>,
    /// The nodes: slots on this machine.
    pub nodes: Vec<Node>,
    /// Seconds between SIGTERM and SIGKILL.
    pub kill_grace_secs: u64,
}

impl LocalConfig {
    /// A configuration with the default kill grace period.
    pub fn new(
        name: impl Into<String>,
        spool_dir: impl Into<PathBuf>,
        supervisor: Vec<String>,
        nodes: Vec<Node>,
    ) -> LocalConfig {
        LocalConfig {
            name: name.into(),
            spool_dir: spool_dir.into(),
            supervisor,
            nodes,
            kill_grace_secs: DEFAULT_KILL_GRACE_SECS,
        }
    }
}

/// The local backend. Dropping it leaves running jobs and their supervisors
/// alone; a new instance on the same spool finds them with `recover`.
pub struct LocalRm {
    config: LocalConfig,
    spawner: sys::Spawner,
    spool: PathBuf,
    housekeeper: Housekeeper,
    jobs: BTreeMap<JobId, Supervised>,
    /// Launches of an older version's requeues still winding down (found at
    /// recovery): never reported.
    retired: Vec<Supervised>,
    pending: Vec<Observation>,
    /// Directories of jobs reported as ended by the last `observe`.
    reported: Vec<PathBuf>,
    /// Directories of jobs whose outcome is in `pending`.
    pending_dirs: Vec<PathBuf>,
    seq: u64,
    /// Found by `recover`: live supervisors of jobs the daemon did not list
    /// as active, and the highest job id in the spool.
    unknown: Vec<JobId>,
    highest: Option<JobId>,
}

impl LocalRm {
    /// Check the configuration, create the spool directory if needed and
    /// start the housekeeping thread.
    pub fn new(config: LocalConfig) -> Result<LocalRm, RmError> {
        if config.supervisor.is_empty() {
            return Err(RmError::Refused(
                "local resource manager: no supervisor command configured".into(),
            ));
        }
        let unavailable = |e: io::Error| {
            RmError::Unavailable(format!(
                "spool directory {}: {e}",
                config.spool_dir.display()
            ))
        };
        if !config.spool_dir.exists() {
            // Exactly 0711 whatever the umask: job users traverse it.
            crate::fsmode::create_dir(&config.spool_dir, 0o711, true).map_err(unavailable)?;
        }
        let spool = config.spool_dir.canonicalize().map_err(unavailable)?;
        if !spool.is_dir() {
            return Err(unavailable(io::Error::other("not a directory")));
        }
        let housekeeper = Housekeeper::start(&spool).map_err(unavailable)?;
        let spawner = sys::Spawner::new(&config.supervisor).map_err(|e| {
            RmError::Refused(format!("local resource manager: supervisor command: {e}"))
        })?;
        Ok(LocalRm {
            spawner,
            config,
            spool,
            housekeeper,
            jobs: BTreeMap::new(),
            retired: Vec::new(),
            pending: Vec::new(),
            reported: Vec::new(),
            pending_dirs: Vec::new(),
            seq: 0,
            unknown: Vec::new(),
            highest: None,
        })
    }

    /// The (absolute) spool directory.
    pub fn spool_dir(&self) -> &Path {
        &self.spool
    }

    /// The directory of a job's current launch.
    pub fn job_dir(&self, job: JobId) -> PathBuf {
        self.spool.join(job.to_string())
    }

    /// Number of jobs being supervised and not yet reported.
    pub fn active_jobs(&self) -> usize {
        self.jobs.len()
    }

    /// Make room for a new launch of `job` in `dir`.
    fn clear_dir(&mut self, job: JobId, dir: &Path) -> io::Result<()> {
        self.reported.retain(|d| d != dir);
        self.pending_dirs.retain(|d| d != dir);
        if let Some(old) = self.retired.iter_mut().find(|r| r.dir == dir) {
            // Its supervisor is still winding down in there: move it aside.
            self.seq += 1;
            let moved = self.spool.join(format!(".retired-{job}-{}", self.seq));
            fs::rename(dir, &moved)?;
            old.dir = moved;
        }
        self.housekeeper.reclaim(dir)
    }

    fn spawn_supervisor(&self, dir: &Path) -> io::Result<i32> {
        self.spawner.spawn(dir)
    }

    /// Hand a control request to the job's supervisor.
    fn control(&mut self, job: JobId, control: Control) -> Result<(), RmError> {
        let sup = self.jobs.get(&job).ok_or(RmError::UnknownJob(job))?;
        control.append(&sup.dir).map_err(|e| {
            RmError::Unavailable(format!("cannot write to {}: {e}", sup.dir.display()))
        })?;
        if !sup.ours && matches!(sup.still_supervised(), Ok(false)) {
            // Ended already: `observe` reports it.
            return Ok(());
        }
        match sys::kill(sup.pid, libc::SIGUSR1) {
            Err(e) if e.raw_os_error() != Some(libc::ESRCH) => Err(RmError::Refused(format!(
                "cannot signal the supervisor of job {job} (pid {}): {e}",
                sup.pid
            ))),
            _ => Ok(()),
        }
    }

    /// Terminate for requeue: the launch stays supervised until it has
    /// ended, then is reported as `Requeued`.
    fn terminate_for_requeue(&mut self, job: JobId, control: Control) -> Result<(), RmError> {
        self.control(job, control)?;
        if let Some(sup) = self.jobs.get_mut(&job) {
            sup.requeue = true;
        }
        Ok(())
    }

    /// Remove spool directories nobody needs: not active, not supervised.
    fn collect_garbage(&mut self, active: &[JobId]) {
        let Ok(entries) = fs::read_dir(&self.spool) else {
            return;
        };
        let mut names: Vec<String> = entries
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        for name in names {
            let dir = self.spool.join(&name);
            let current = name.parse::<JobId>().ok();
            let known = current.is_some_and(|j| active.contains(&j) || self.jobs.contains_key(&j))
                || self.retired.iter().any(|r| r.dir == dir)
                || self.pending_dirs.contains(&dir);
            let ours = current.is_some()
                || name.starts_with(".retired-")
                || name.starts_with(TRASH_PREFIX);
            if known || !ours {
                continue;
            }
            let live = match Pids::read(&dir) {
                Ok(Some(p)) => runs_in(p.supervisor, &dir).map(|r| r.then_some(p)),
                Ok(None) => Ok(None),
                Err(e) => Err(e),
            };
            match live {
                // A requeued launch still winding down.
                Ok(Some(pids)) => self.retired.push(Supervised {
                    job: current.unwrap_or_default(),
                    pid: pids.supervisor,
                    ours: false,
                    arg: String::new(),
                    dir,
                    requeue: true,
                    exit: None,
                }),
                Ok(None) => self.housekeeper.remove(dir),
                // Cannot tell: left alone (looked at again next start).
                Err(e) => tracing::warn!("local RM: cannot inspect {}: {e}", dir.display()),
            }
        }
    }
}

fn check_signal(signal: i32) -> Result<i32, RmError> {
    if (1..=64).contains(&signal) {
        Ok(signal)
    } else {
        Err(RmError::Refused(format!("invalid signal number {signal}")))
    }
}

impl ResourceManager for LocalRm {
    fn name(&self) -> &str {
        &self.config.name
    }

    fn kind(&self) -> &'static str {
        "LOCAL"
    }

    fn nodes(&mut self) -> Result<Vec<Node>, RmError> {
        Ok(self.config.nodes.clone())
    }

    fn start(&mut self, launch: &Launch, _now: Time) -> Result<(), RmError> {
        let job = launch.job;
        if self.jobs.contains_key(&job) {
            return Err(RmError::Refused(format!("job {job} is already running")));
        }
        let dir = self.job_dir(job);
        let fail =
            |what: &str, e: io::Error| RmError::from_io(format!("{what} {}", dir.display()), &e);
        let json = serde_json::to_vec(&LaunchFile::new(launch, self.config.kill_grace_secs))
            .map_err(|e| RmError::Refused(format!("cannot encode the launch of job {job}: {e}")))?;
        self.clear_dir(job, &dir)
            .map_err(|e| fail("cannot clear the job directory", e))?;
        crate::fsmode::create_dir(&dir, 0o711, false)
            .map_err(|e| fail("cannot create the job directory", e))?;
        let pid = spool::write_private(&dir, spool::LAUNCH, &json)
            .and_then(|()| self.spawn_supervisor(&dir))
            .map_err(|e| {
                let _ = fs::remove_dir_all(&dir);
                fail("cannot start the supervisor for", e)
            })?;
        self.jobs.insert(
            job,
            Supervised {
                job,
                pid,
                ours: true,
                arg: dir.to_string_lossy().into_owned(),
                dir,
                requeue: false,
                exit: None,
            },
        );
        Ok(())
    }

    fn cancel(&mut self, job: JobId, _now: Time) -> Result<(), RmError> {
        self.control(job, Control::Cancel)
    }

    fn signal(&mut self, job: JobId, signal: i32, _now: Time) -> Result<(), RmError> {
        let signal = check_signal(signal)?;
        self.control(job, Control::Signal(signal))
    }

    fn suspend(&mut self, job: JobId, signal: Option<i32>, _now: Time) -> Result<(), RmError> {
        let signal = check_signal(signal.unwrap_or(libc::SIGSTOP))?;
        self.control(job, Control::Suspend(signal))
    }

    fn resume(&mut self, job: JobId, _now: Time) -> Result<(), RmError> {
        self.control(job, Control::Resume)
    }

    fn requeue(&mut self, job: JobId, _now: Time) -> Result<(), RmError> {
        self.terminate_for_requeue(job, Control::Requeue)
    }

    fn set_walltime(
        &mut self,
        job: JobId,
        walltime: Option<Secs>,
        _now: Time,
    ) -> Result<(), RmError> {
        crate::check_walltime(walltime)?;
        let sup = self.jobs.get(&job).ok_or(RmError::UnknownJob(job))?;
        if !sup.ours && matches!(sup.still_supervised(), Ok(false)) {
            return Err(RmError::Refused(format!("job {job} has ended")));
        }
        self.control(job, Control::Walltime(walltime))
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
        self.terminate_for_requeue(job, Control::Checkpoint { signal, timeout })
    }

    fn observe(&mut self, now: Time) -> Vec<Observation> {
        for dir in std::mem::take(&mut self.reported) {
            self.housekeeper.remove(dir);
        }
        let mut out = std::mem::take(&mut self.pending);
        self.reported = std::mem::take(&mut self.pending_dirs);
        let mut ended = Vec::new();
        for (&job, sup) in self.jobs.iter_mut() {
            if let Some(exit) = sup.ended() {
                ended.push((job, exit));
            }
        }
        for (job, exit) in ended {
            // Unknown (a file could not be read): kept, asked again next time.
            let Some(outcome) = self.jobs.get(&job).and_then(|s| s.outcome(&exit, now)) else {
                continue;
            };
            if let Some(sup) = self.jobs.remove(&job) {
                out.extend(outcome);
                self.reported.push(sup.dir);
            }
        }
        let mut done = Vec::new();
        self.retired.retain_mut(|sup| {
            let running = if sup.ours {
                sup.ended().is_none()
            } else {
                // Cannot tell: still winding down, as far as we know.
                runs_in(sup.pid, &sup.dir).unwrap_or(true)
            };
            if !running {
                done.push(std::mem::take(&mut sup.dir));
            }
            running
        });
        for dir in done {
            self.housekeeper.remove(dir);
        }
        out
    }

    fn supports_resize(&self) -> bool {
        true
    }

    fn resize(
        &mut self,
        job: JobId,
        nodes: &[crate::LaunchNode],
        signal: Option<i32>,
        _now: Time,
    ) -> Result<(), RmError> {
        self.resize_job(job, nodes, signal)
    }

    fn recover(&mut self, active: &[JobId], now: Time) -> Result<(), RmError> {
        // A spool that cannot be read is an error, never a job that vanished
        // or ended: the daemon does not start on a guess.
        let unreadable = |dir: &Path, e: io::Error| {
            RmError::Unavailable(format!("cannot inspect {}: {e}", dir.display()))
        };
        for &job in active {
            if self.jobs.contains_key(&job) {
                continue;
            }
            let dir = self.job_dir(job);
            if !dir.try_exists().map_err(|e| unreadable(&dir, e))? {
                self.pending.push(Observation::Vanished { job, at: now });
                continue;
            }
            if !spool::has_status(&dir).map_err(|e| unreadable(&dir, e))? {
                let adopted =
                    Supervised::adopt(job, dir.clone()).map_err(|e| unreadable(&dir, e))?;
                if let Some(sup) = adopted {
                    self.pending.push(Observation::Running { job, at: now });
                    self.jobs.insert(job, sup);
                    continue;
                }
            }
            // Ended, while we were away or just now.
            let sup = Supervised {
                job,
                pid: 0,
                ours: false,
                arg: String::new(),
                dir,
                requeue: false,
                exit: None,
            };
            match sup.outcome("ended", now) {
                Some(o) => {
                    self.pending.extend(o);
                    self.pending_dirs.push(sup.dir);
                }
                None => {
                    return Err(RmError::Unavailable(format!(
                        "cannot read how job {job} ended in {}",
                        sup.dir.display()
                    )))
                }
            }
        }
        // Every job this spool knows of, also those the daemon does not (a
        // lost state database): their ids are never handed out again, and
        // the live ones are not taken for garbage.
        let live =
            tracked::supervisors_of(&self.spool).map_err(|e| unreadable(Path::new("/proc"), e))?;
        let names = fs::read_dir(&self.spool).map_err(|e| unreadable(&self.spool, e))?;
        self.highest = names
            .flatten()
            .filter_map(|e| tracked::job_of_dir(e.file_name().to_str()?))
            .chain(live.iter().map(|(job, _)| *job))
            .max();
        self.unknown = live
            .iter()
            .map(|(job, _)| *job)
            .filter(|j| !active.contains(j))
            .collect();
        self.unknown.dedup();
        self.collect_garbage(active);
        Ok(())
    }

    fn unknown_running(&self) -> Vec<JobId> {
        self.unknown.clone()
    }

    fn highest_job_seen(&self) -> Option<JobId> {
        self.highest
    }
}
