//! The daemon's handle on one supervisor process — spawned by this
//! [`super::LocalRm`] (a child it reaps) or re-adopted after a restart (found
//! through its `pid` file and `/proc`) — and how its end is reported.

use std::fs;
use std::io;
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
    /// How our child supervisor exited, once reaped.
    pub exit: Option<String>,
}

impl Supervised {
    /// Re-adopt the supervisor of `dir`, if one is at work there. `Err` when
    /// that cannot be told (the pid file or `/proc` could not be read).
    pub(crate) fn adopt(job: JobId, dir: PathBuf) -> io::Result<Option<Supervised>> {
        let arg = dir.to_string_lossy().into_owned();
        let recorded = match Pids::read(&dir)? {
            Some(p) if is_supervisor(p.supervisor, &arg)? => Some(p.supervisor),
            _ => None,
        };
        // Not written yet: the supervisor may be about to fork the job.
        let pid = match recorded {
            Some(pid) => pid,
            None => match find_supervisor(&arg)? {
                Some(pid) => pid,
                None => return Ok(None),
            },
        };
        let sup = Supervised {
            job,
            pid,
            ours: false,
            arg,
            dir,
            requeue: false,
            exit: None,
        };
        Ok(sup.still_supervised()?.then_some(sup))
    }

    /// Whether a re-adopted supervisor is still at work; `Err` when that
    /// cannot be told.
    pub(crate) fn still_supervised(&self) -> io::Result<bool> {
        Ok(!spool::has_status(&self.dir)? && is_supervisor(self.pid, &self.arg)?)
    }

    /// Whether the supervisor has ended (reaping it when it is our child):
    /// `Some(description of its exit)`. `None` also when that cannot be
    /// told now (it is asked again at the next observation).
    pub(crate) fn ended(&mut self) -> Option<String> {
        if self.ours {
            match sys::try_wait(self.pid) {
                Ok(None) => return None,
                Ok(Some(status)) => {
                    // Reaped: never wait for (or signal) this pid again.
                    self.ours = false;
                    self.pid = 0;
                    let exit = sys::describe_exit(status);
                    self.exit = Some(exit.clone());
                    return Some(exit);
                }
                // Not waitable (e.g. SIGCHLD ignored, so reaped by the
                // kernel): watch it like a re-adopted one from now on.
                Err(_) => self.ours = false,
            }
        }
        match self.still_supervised() {
            Ok(true) => None,
            Ok(false) => Some(self.exit.clone().unwrap_or_else(|| "ended".to_string())),
            Err(e) => {
                unknown(self.job, "whether its supervisor still runs", &e);
                None
            }
        }
    }

    /// The observation for an ended launch, from its status file; `None`
    /// when the files that tell could not be read (asked again at the next
    /// observation: an I/O error is never taken for an outcome).
    pub(crate) fn outcome(&self, exit: &str, now: Time) -> Option<Vec<Observation>> {
        let job = self.job;
        let unreadable = |what: &str, e: &io::Error| {
            unknown(job, what, e);
            None
        };
        if self.requeue {
            let pids = match (Pids::read(&self.dir), spool::has_status(&self.dir)) {
                (Ok(pids), Ok(recorded)) => pids.filter(|_| !recorded),
                (Err(e), _) | (_, Err(e)) => return unreadable("how its requeue ended", &e),
            };
            if let Some(pids) = pids {
                // Killed before recording: take its job down with it.
                match sys::process_group(pids.job) {
                    Ok(Some(g)) if g == pids.job => {
                        let _ = sys::kill_group(pids.job, libc::SIGKILL);
                    }
                    Ok(_) => {}
                    Err(e) => return unreadable("whether its processes are gone", &e),
                }
            }
            return Some(vec![Observation::Requeued { job, at: now }]);
        }
        // The recorded time, when there is one: a job that ended while the
        // daemon was down ended then, not now.
        let when = |at: Option<Time>| at.map_or(now, |t| t.min(now));
        let status = match Status::read(&self.dir) {
            Ok(s) => s,
            Err(e) => return unreadable("its status file", &e),
        };
        // What its processes used, reported just before its end.
        let used = match &status {
            Some(Ok(Status::Exited {
                cpu_ms: Some(ms), ..
            })) => Some(Observation::CpuUsed { job, cpu_ms: *ms }),
            _ => None,
        };
        let end = match status {
            Some(Ok(Status::Exited {
                code,
                walltime_exceeded: true,
                at,
                ..
            })) => Observation::WalltimeExceeded {
                job,
                at: when(at),
                code,
            },
            Some(Ok(Status::Exited { code, at, .. })) => Observation::Finished {
                job,
                at: when(at),
                code,
            },
            Some(Ok(Status::Failed { message, at })) => Observation::StartFailed {
                job,
                at: when(at),
                message,
            },
            damaged => {
                if let Some(Err(why)) = damaged {
                    tracing::warn!(job, "local RM: unreadable status file ({why})");
                }
                match Pids::read(&self.dir) {
                    Err(e) => return unreadable("its pid file", &e),
                    Ok(None) => Observation::StartFailed {
                        job,
                        at: now,
                        message: format!("the supervisor {exit} before starting the job"),
                    },
                    Ok(Some(pids)) => {
                        // The supervisor was killed: do not leave its job
                        // running unsupervised (only if the leader still
                        // leads its group).
                        match sys::process_group(pids.job) {
                            Ok(Some(g)) if g == pids.job => {
                                let _ = sys::kill_group(pids.job, libc::SIGKILL);
                            }
                            Ok(_) => {}
                            Err(e) => return unreadable("whether its processes are gone", &e),
                        }
                        remove_cgroup(&self.dir);
                        Observation::Vanished { job, at: now }
                    }
                }
            }
        };
        Some(used.into_iter().chain([end]).collect())
    }
}

/// Logs an observation that could not be made (it is retried).
fn unknown(job: JobId, what: &str, e: &io::Error) {
    tracing::warn!(
        job,
        "local RM: cannot read {what} ({e}); the job's state is unknown until the next observation"
    );
}

/// Kills what is left in the cgroup a dead supervisor recorded, and removes it.
fn remove_cgroup(dir: &Path) {
    let record = fs::read_to_string(dir.join(spool::CGROUP)).unwrap_or_default();
    if let Some((kind, path)) = super::freezer::read_record(&record) {
        super::freezer::remove_dir(&path, kind);
    }
}

/// Whether `pid` is a live supervisor whose last argument is `arg`.
pub(crate) fn is_supervisor(pid: i32, arg: &str) -> io::Result<bool> {
    Ok(sys::alive(pid)?
        && sys::cmdline(pid)?.is_some_and(|argv| argv.last().is_some_and(|a| a == arg)))
}

/// Look through `/proc` for the supervisor of `arg` (slow; recovery only).
fn find_supervisor(arg: &str) -> io::Result<Option<i32>> {
    let mut pids: Vec<i32> = fs::read_dir("/proc")?
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse().ok())
        .collect();
    pids.sort_unstable();
    for pid in pids {
        if is_supervisor(pid, arg)? && runs_in(pid, Path::new(arg))? {
            return Ok(Some(pid));
        }
    }
    Ok(None)
}

/// Every live supervisor of a job directory of `spool` (`<spool>/<job>`, or
/// one moved aside as `<spool>/.retired-<job>-<n>`), as `(job, pid)`: what
/// the processes themselves say, even if their directories are gone.
pub(crate) fn supervisors_of(spool: &Path) -> io::Result<Vec<(JobId, i32)>> {
    let mut found = Vec::new();
    for entry in fs::read_dir("/proc")?.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|p| p.parse::<i32>().ok())
        else {
            continue;
        };
        let Some(argv) = sys::cmdline(pid)? else {
            continue;
        };
        if argv.first().map(String::as_str) != Some(super::SUPERVISOR_NAME) {
            continue;
        }
        let Some(dir) = argv.last().map(Path::new) else {
            continue;
        };
        if dir.parent() != Some(spool) || !sys::alive(pid)? {
            continue;
        }
        if let Some(job) = dir
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(job_of_dir)
        {
            found.push((job, pid));
        }
    }
    found.sort_unstable();
    Ok(found)
}

/// The job of a spool directory name: `<job>`, `.retired-<job>-<n>`.
pub(crate) fn job_of_dir(name: &str) -> Option<JobId> {
    name.parse().ok().or_else(|| {
        name.strip_prefix(".retired-")?
            .split('-')
            .next()?
            .parse()
            .ok()
    })
}

/// Whether `pid` is alive with `dir` as its working directory (a supervisor,
/// possibly of a directory moved aside); `Err` when that cannot be told.
pub(crate) fn runs_in(pid: i32, dir: &Path) -> io::Result<bool> {
    Ok(sys::alive(pid)? && sys::cwd(pid)?.is_some_and(|cwd| cwd == dir))
}
