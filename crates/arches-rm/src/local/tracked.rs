//! The daemon's handle on one supervisor process — spawned by this
//! [`super::LocalRm`] (a child it reaps) or re-adopted after a restart (found
//! through its `pid` file and `/proc`) — and how its end is reported.

use std::fs;
use std::path::{Path, PathBuf};

use arches_core::{JobId, Time};

use super::spool::{self, Pids, Status};
use super::sys;
use crate::Observation;

/// One supervisor process.
pub(crate) struct Supervised {
    pub job: JobId,
    pub pid: i32,
    /// Our child (reaped with `waitpid`), or a re-adopted supervisor.
    pub ours: bool,
    /// The job directory as passed on the supervisor's command line.
    pub arg: String,
    /// Where its files are now (a requeued launch's directory is moved aside
    /// when the job starts again).
    pub dir: PathBuf,
    /// Terminated for a requeue or checkpoint: its end is reported as
    /// [`Observation::Requeued`].
    pub requeue: bool,
}

impl Supervised {
    /// Re-adopt the supervisor of `dir`, if one is at work there.
    pub(crate) fn adopt(job: JobId, dir: PathBuf) -> Option<Supervised> {
        let arg = dir.to_string_lossy().into_owned();
        let pid = Pids::read(&dir)
            .map(|p| p.supervisor)
            .filter(|&pid| is_supervisor(pid, &arg))
            // Not written yet: the supervisor may be about to fork the job.
            .or_else(|| find_supervisor(&arg))?;
        let sup = Supervised {
            job,
            pid,
            ours: false,
            arg,
            dir,
            requeue: false,
        };
        sup.still_supervised().then_some(sup)
    }

    /// Whether a re-adopted supervisor is still at work.
    pub(crate) fn still_supervised(&self) -> bool {
        !self.dir.join(spool::STATUS).exists() && is_supervisor(self.pid, &self.arg)
    }

    /// Whether the supervisor has ended (reaping it when it is our child):
    /// `Some(description of its exit)`.
    pub(crate) fn ended(&mut self) -> Option<String> {
        if self.ours {
            match sys::try_wait(self.pid) {
                Ok(None) => return None,
                Ok(Some(status)) => {
                    // Reaped: never wait for (or signal) this pid again.
                    self.ours = false;
                    self.pid = 0;
                    return Some(sys::describe_exit(status));
                }
                // Not waitable (e.g. SIGCHLD ignored, so reaped by the
                // kernel): watch it like a re-adopted one from now on.
                Err(_) => self.ours = false,
            }
        }
        if self.still_supervised() {
            None
        } else {
            Some("ended".to_string())
        }
    }

    /// The observation for an ended launch, from its status file.
    pub(crate) fn outcome(&self, exit: &str, now: Time) -> Observation {
        let job = self.job;
        if self.requeue {
            if let Some(pids) =
                Pids::read(&self.dir).filter(|_| !self.dir.join(spool::STATUS).exists())
            {
                // Killed before recording: take its job down with it.
                if sys::process_group(pids.job) == Some(pids.job) {
                    let _ = sys::kill_group(pids.job, libc::SIGKILL);
                }
            }
            return Observation::Requeued { job, at: now };
        }
        // The recorded time, when there is one: a job that ended while the
        // daemon was down ended then, not now.
        let when = |at: Option<Time>| at.map_or(now, |t| t.min(now));
        match Status::read(&self.dir) {
            Ok(Some(Status::Exited {
                code,
                walltime_exceeded: true,
                at,
            })) => Observation::WalltimeExceeded {
                job,
                at: when(at),
                code,
            },
            Ok(Some(Status::Exited { code, at, .. })) => Observation::Finished {
                job,
                at: when(at),
                code,
            },
            Ok(Some(Status::Failed { message, at })) => Observation::StartFailed {
                job,
                at: when(at),
                message,
            },
            Ok(None) | Err(_) => match Pids::read(&self.dir) {
                None => Observation::StartFailed {
                    job,
                    at: now,
                    message: format!("the supervisor {exit} before starting the job"),
                },
                Some(pids) => {
                    // The supervisor was killed: do not leave its job running
                    // unsupervised (only if the leader still leads its group).
                    if sys::process_group(pids.job) == Some(pids.job) {
                        let _ = sys::kill_group(pids.job, libc::SIGKILL);
                    }
                    remove_cgroup(&self.dir);
                    Observation::Vanished { job, at: now }
                }
            },
        }
    }
}

/// Kills what is left in the cgroup a dead supervisor recorded, and removes it.
fn remove_cgroup(dir: &Path) {
    let record = fs::read_to_string(dir.join(spool::CGROUP)).unwrap_or_default();
    if let Some((kind, path)) = super::freezer::read_record(&record) {
        super::freezer::remove_dir(&path, kind);
    }
}

/// Whether `pid` is a live supervisor whose last argument is `arg`.
pub(crate) fn is_supervisor(pid: i32, arg: &str) -> bool {
    sys::alive(pid) && sys::cmdline(pid).is_some_and(|argv| argv.last().is_some_and(|a| a == arg))
}

/// Look through `/proc` for the supervisor of `arg` (slow; recovery only).
fn find_supervisor(arg: &str) -> Option<i32> {
    let mut pids: Vec<i32> = fs::read_dir("/proc")
        .ok()?
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse().ok())
        .collect();
    pids.sort_unstable();
    pids.into_iter()
        .find(|&pid| is_supervisor(pid, arg) && runs_in(pid, Path::new(arg)))
}

/// Whether `pid` is alive with `dir` as its working directory (a supervisor,
/// possibly of a directory moved aside).
pub(crate) fn runs_in(pid: i32, dir: &Path) -> bool {
    sys::alive(pid) && fs::read_link(format!("/proc/{pid}/cwd")).is_ok_and(|cwd| cwd == dir)
}
