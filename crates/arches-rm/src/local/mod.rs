//! The local resource manager: jobs run as real processes on this machine,
//! each under its own supervisor process so that it survives the daemon.
//!
//! Protocol between [`LocalRm`] (in the daemon) and a supervisor
//! ([`supervise_main`]), all through `<spool>/<jobid>/`:
//! - `start` writes `launch.json` durably and spawns `<supervisor...> <job dir>`
//!   in a new session, with its control signals blocked so that none is lost
//!   before it is ready. That is the whole cost of a start.
//! - The supervisor writes `pid`, forks the job, and at the end writes `status`
//!   (`exit <code>` + `walltime ok|exceeded`, or `failed <reason>`) atomically
//!   and durably before exiting.
//! - Control requests (cancel, signal, suspend, resume, requeue, checkpoint)
//!   are appended as lines to `ctl`, then the supervisor is woken with SIGUSR1.
//! - `observe` reaps supervisors it spawned (`try_wait`) and, for re-adopted
//!   ones, looks for their `status` file.
//!
//! Conventions: a job started again after a checkpoint sees
//! `MOAB_RESTARTED=1`. `Running` is reported for jobs re-adopted by
//! `recover`; a successful `start` is itself the confirmation of a start. The
//! directory of a job reported as ended is removed at the next `observe` (the
//! daemon has handled the previous batch by then); `recover` removes the
//! directories of jobs that are neither active nor still supervised.
//! The spool directory must be traversable by job users (job directories are
//! mode 0711, the script is owned by the user, the node file is readable).

mod exec;
mod spool;
mod supervisor;
mod sys;

pub use supervisor::supervise_main;

use std::collections::BTreeMap;
use std::fs::{self, DirBuilder, File};
use std::io;
use std::os::unix::fs::DirBuilderExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use arches_core::{JobId, Node, Secs, Time};

use crate::{Launch, Observation, ResourceManager, RmError};
use spool::{Control, LaunchFile, Status};

/// Seconds between SIGTERM and SIGKILL when a job is terminated, by default.
pub const DEFAULT_KILL_GRACE_SECS: u64 = 5;

/// Configuration of a [`LocalRm`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LocalConfig {
    /// The RM's configured name (`RMCFG[name]`).
    pub name: String,
    /// Where job directories live (created if missing).
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
    spool: PathBuf,
    jobs: BTreeMap<JobId, Supervised>,
    /// Requeued or checkpointed launches still winding down: never reported.
    retired: Vec<Supervised>,
    pending: Vec<Observation>,
    /// Directories of jobs reported as ended by the last `observe`.
    reported: Vec<PathBuf>,
    /// Directories of jobs whose outcome is in `pending`.
    pending_dirs: Vec<PathBuf>,
    seq: u64,
}

impl LocalRm {
    /// Check the configuration and create the spool directory if needed.
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
            DirBuilder::new()
                .recursive(true)
                .mode(0o711)
                .create(&config.spool_dir)
                .map_err(unavailable)?;
        }
        let spool = config.spool_dir.canonicalize().map_err(unavailable)?;
        Ok(LocalRm {
            config,
            spool,
            jobs: BTreeMap::new(),
            retired: Vec::new(),
            pending: Vec::new(),
            reported: Vec::new(),
            pending_dirs: Vec::new(),
            seq: 0,
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

    /// Number of jobs being supervised (reported ones excluded).
    pub fn active_jobs(&self) -> usize {
        self.jobs.len()
    }

    /// Move an existing directory of `job` out of the way before a new launch.
    fn clear_dir(&mut self, job: JobId, dir: &Path) -> io::Result<()> {
        self.reported.retain(|d| d != dir);
        self.pending_dirs.retain(|d| d != dir);
        if let Some(old) = self.retired.iter_mut().find(|r| r.dir == dir) {
            self.seq += 1;
            let moved = self.spool.join(format!(".retired-{job}-{}", self.seq));
            fs::rename(dir, &moved)?;
            old.dir = moved;
            return Ok(());
        }
        match fs::remove_dir_all(dir) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        }
    }

    fn spawn_supervisor(&self, dir: &Path) -> io::Result<Child> {
        let log = File::create(dir.join("supervisor.log"))?;
        let mut cmd = Command::new(&self.config.supervisor[0]);
        cmd.args(&self.config.supervisor[1..])
            .arg(dir)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log);
        // SAFETY: setsid and sigprocmask are async-signal-safe.
        unsafe {
            cmd.pre_exec(|| {
                if libc::setsid() == -1 {
                    return Err(io::Error::last_os_error());
                }
                sys::block_supervisor_signals()
            });
        }
        cmd.spawn()
    }

    /// Hand a control request to the job's supervisor.
    fn control(&mut self, job: JobId, control: Control) -> Result<(), RmError> {
        let sup = self.jobs.get(&job).ok_or(RmError::UnknownJob(job))?;
        control.append(&sup.dir).map_err(|e| {
            RmError::Unavailable(format!("cannot write to {}: {e}", sup.dir.display()))
        })?;
        if sup.child.is_none() && !sup.still_supervised() {
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

    /// Terminate for requeue: the launch is never reported.
    fn retire(&mut self, job: JobId, control: Control) -> Result<(), RmError> {
        self.control(job, control)?;
        if let Some(sup) = self.jobs.remove(&job) {
            self.retired.push(sup);
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
            let retired = name.starts_with(".retired-");
            if current.is_some_and(|j| active.contains(&j) || self.jobs.contains_key(&j))
                || !(current.is_some() || retired)
                || self.retired.iter().any(|r| r.dir == dir)
            {
                continue;
            }
            match spool::read_pid(&dir, spool::PID).filter(|&pid| runs_in(pid, &dir)) {
                Some(pid) => self.retired.push(Supervised {
                    job: current.unwrap_or(0),
                    pid,
                    child: None,
                    arg: String::new(),
                    dir,
                }),
                None => {
                    let _ = fs::remove_dir_all(&dir);
                }
            }
        }
    }
}

/// One supervisor process, spawned by us or re-adopted.
struct Supervised {
    job: JobId,
    pid: i32,
    /// Our child (reaped by `try_wait`), or `None` when re-adopted.
    child: Option<Child>,
    /// The job directory as passed on the supervisor's command line.
    arg: String,
    /// Where its files are now.
    dir: PathBuf,
}

impl Supervised {
    /// Whether a re-adopted supervisor is still at work.
    fn still_supervised(&self) -> bool {
        !self.dir.join(spool::STATUS).exists() && is_supervisor(self.pid, &self.arg)
    }

    /// Whether the supervisor has ended (reaping it when it is our child);
    /// `Some(description)` of how a child of ours exited.
    fn ended(&mut self) -> Option<String> {
        if let Some(child) = &mut self.child {
            return match child.try_wait() {
                Ok(None) => None,
                Ok(Some(status)) => Some(status.to_string()),
                Err(e) => Some(format!("cannot be waited for: {e}")),
            };
        }
        if self.still_supervised() {
            None
        } else {
            Some("ended".to_string())
        }
    }

    /// The observation for an ended launch, from its status file.
    fn outcome(&self, exit: &str, now: Time) -> Observation {
        let job = self.job;
        match Status::read(&self.dir) {
            Ok(Some(Status::Exited {
                code,
                walltime_exceeded: true,
            })) => Observation::WalltimeExceeded { job, at: now, code },
            Ok(Some(Status::Exited { code, .. })) => Observation::Finished { job, at: now, code },
            Ok(Some(Status::Failed { message })) => Observation::StartFailed {
                job,
                at: now,
                message,
            },
            Ok(None) if spool::read_pid(&self.dir, spool::JOB_PID).is_none() => {
                let log = fs::read_to_string(self.dir.join("supervisor.log")).unwrap_or_default();
                Observation::StartFailed {
                    job,
                    at: now,
                    message: format!(
                        "the supervisor {exit} without recording an outcome{}{}",
                        if log.trim().is_empty() { "" } else { ": " },
                        log.trim()
                    ),
                }
            }
            Ok(None) | Err(_) => Observation::Vanished { job, at: now },
        }
    }
}

/// Whether `pid` is a live supervisor whose last argument is `arg`.
fn is_supervisor(pid: i32, arg: &str) -> bool {
    sys::alive(pid) && sys::cmdline(pid).is_some_and(|argv| argv.last().is_some_and(|a| a == arg))
}

/// Whether `pid` is alive with `dir` as its working directory (a supervisor,
/// possibly of a renamed directory).
fn runs_in(pid: i32, dir: &Path) -> bool {
    sys::alive(pid) && fs::read_link(format!("/proc/{pid}/cwd")).is_ok_and(|cwd| cwd == dir)
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
        let fail = |what: &str, e: io::Error| {
            RmError::Unavailable(format!("{what} {}: {e}", dir.display()))
        };
        self.clear_dir(job, &dir)
            .map_err(|e| fail("cannot clear the job directory", e))?;
        DirBuilder::new()
            .mode(0o711)
            .create(&dir)
            .map_err(|e| fail("cannot create the job directory", e))?;
        let json = serde_json::to_vec(&LaunchFile::new(launch, self.config.kill_grace_secs))
            .map_err(|e| RmError::Refused(format!("cannot encode the launch of job {job}: {e}")))?;
        let spooled = spool::write_durable(&dir, spool::LAUNCH, &json)
            .and_then(|()| File::open(&self.spool)?.sync_all());
        let child = spooled
            .and_then(|()| self.spawn_supervisor(&dir))
            .map_err(|e| {
                let _ = fs::remove_dir_all(&dir);
                fail("cannot start the supervisor for", e)
            })?;
        let pid = i32::try_from(child.id()).unwrap_or(i32::MAX);
        self.jobs.insert(
            job,
            Supervised {
                job,
                pid,
                child: Some(child),
                arg: dir.to_string_lossy().into_owned(),
                dir,
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
        self.retire(job, Control::Requeue)
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
        self.retire(job, Control::Checkpoint { signal, timeout })
    }

    fn observe(&mut self, now: Time) -> Vec<Observation> {
        for dir in std::mem::take(&mut self.reported) {
            let _ = fs::remove_dir_all(dir);
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
            if let Some(sup) = self.jobs.remove(&job) {
                out.push(sup.outcome(&exit, now));
                self.reported.push(sup.dir);
            }
        }
        self.retired.retain_mut(|sup| match sup.ended() {
            None if sup.child.is_some() || runs_in(sup.pid, &sup.dir) => true,
            _ => {
                let _ = fs::remove_dir_all(&sup.dir);
                false
            }
        });
        out
    }

    fn recover(&mut self, active: &[JobId], now: Time) -> Result<(), RmError> {
        for &job in active {
            if self.jobs.contains_key(&job) {
                continue;
            }
            let dir = self.job_dir(job);
            let arg = dir.to_string_lossy().into_owned();
            let sup = Supervised {
                job,
                pid: spool::read_pid(&dir, spool::PID).unwrap_or(0),
                child: None,
                arg,
                dir,
            };
            if sup.dir.join(spool::STATUS).exists() {
                self.pending.push(sup.outcome("ended", now));
                self.pending_dirs.push(sup.dir);
            } else if sup.still_supervised() {
                self.pending.push(Observation::Running { job, at: now });
                self.jobs.insert(job, sup);
            } else {
                self.pending.push(Observation::Vanished { job, at: now });
            }
        }
        self.collect_garbage(active);
        Ok(())
    }
}
