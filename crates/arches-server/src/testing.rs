//! A resource manager for tests and benchmarks (never chosen by
//! [`crate::rm::build_rm`]): jobs "run" without processes. A job runs for the
//! seconds of the first `sleep N` in its script (default: the configured
//! run time) and exits with the first `exit N` (default 0). Its state is kept
//! in one file per job under a directory, so running jobs survive a `kill -9`
//! of the daemon and are re-adopted by [`ResourceManager::recover`].

use std::collections::BTreeMap;
use std::path::PathBuf;

use arches_core::{JobId, Node, Secs, Time};
use arches_rm::{Launch, Observation, ResourceManager, RmError};

/// The file-backed fake backend.
pub struct FakeRm {
    dir: PathBuf,
    nodes: Vec<Node>,
    default_runtime: Secs,
    /// Suspended jobs: when they were suspended.
    suspended: BTreeMap<JobId, Time>,
    pending: Vec<Observation>,
}

/// One running fake job as recorded on disk:
/// `start runtime exit_code limit paused` (`limit` -1: none).
#[derive(Debug, Clone, Copy)]
struct Record {
    start: Time,
    runtime: Secs,
    code: i32,
    limit: Option<Secs>,
    /// Seconds spent suspended (before the current suspension).
    paused: Secs,
}

impl Record {
    fn walltime_hit(&self) -> bool {
        self.limit.is_some_and(|l| l < self.runtime)
    }

    fn end(&self) -> Time {
        let run = match self.limit {
            Some(l) => l.min(self.runtime),
            None => self.runtime,
        };
        self.start + self.paused + run
    }

    fn exit_code(&self) -> i32 {
        if self.walltime_hit() {
            137
        } else {
            self.code
        }
    }
}

impl FakeRm {
    /// A backend keeping its job files in `dir` (created if missing).
    pub fn new(dir: PathBuf, nodes: Vec<Node>, default_runtime: Secs) -> std::io::Result<Self> {
        std::fs::create_dir_all(&dir)?;
        Ok(FakeRm {
            dir,
            nodes,
            default_runtime,
            suspended: BTreeMap::new(),
            pending: Vec::new(),
        })
    }

    fn path(&self, job: JobId) -> PathBuf {
        self.dir.join(job.to_string())
    }

    fn read(&self, job: JobId) -> Option<Record> {
        let t = std::fs::read_to_string(self.path(job)).ok()?;
        let mut f = t.split_whitespace();
        Some(Record {
            start: f.next()?.parse().ok()?,
            runtime: f.next()?.parse().ok()?,
            code: f.next()?.parse().ok()?,
            limit: Some(f.next()?.parse::<Secs>().ok()?).filter(|l| *l >= 0),
            paused: f.next()?.parse().ok()?,
        })
    }

    fn write(&self, job: JobId, r: Record) -> Result<(), RmError> {
        let text = format!(
            "{} {} {} {} {}",
            r.start,
            r.runtime,
            r.code,
            r.limit.unwrap_or(-1),
            r.paused
        );
        std::fs::write(self.path(job), text).map_err(|e| RmError::Unavailable(e.to_string()))
    }

    fn remove(&mut self, job: JobId) -> Result<(), RmError> {
        self.suspended.remove(&job);
        std::fs::remove_file(self.path(job)).map_err(|_| RmError::UnknownJob(job))
    }
}

/// `(runtime, exit code)` from a script: first `sleep N`, first `exit N`.
fn script_behaviour(script: &str, default_runtime: Secs) -> (Secs, i32) {
    let mut runtime = None;
    let mut code = None;
    for line in script.lines() {
        let mut words = line.split_whitespace();
        match (words.next(), words.next()) {
            (Some("sleep"), Some(n)) if runtime.is_none() => runtime = n.parse().ok(),
            (Some("exit"), Some(n)) if code.is_none() => code = n.parse().ok(),
            _ => {}
        }
    }
    (runtime.unwrap_or(default_runtime), code.unwrap_or(0))
}

impl ResourceManager for FakeRm {
    fn name(&self) -> &str {
        "fake"
    }
    fn kind(&self) -> &'static str {
        "SIM"
    }
    fn nodes(&mut self) -> Result<Vec<Node>, RmError> {
        Ok(self.nodes.clone())
    }
    fn start(&mut self, launch: &Launch, now: Time) -> Result<(), RmError> {
        let (runtime, code) = script_behaviour(&launch.exec.script, self.default_runtime);
        let rec = Record {
            start: now,
            runtime,
            code,
            limit: launch.walltime,
            paused: 0,
        };
        self.write(launch.job, rec)?;
        self.pending.push(Observation::Running {
            job: launch.job,
            at: now,
        });
        Ok(())
    }
    fn cancel(&mut self, job: JobId, _now: Time) -> Result<(), RmError> {
        self.remove(job)
    }
    fn signal(&mut self, job: JobId, _signal: i32, _now: Time) -> Result<(), RmError> {
        self.read(job).map(|_| ()).ok_or(RmError::UnknownJob(job))
    }
    fn suspend(&mut self, job: JobId, _signal: Option<i32>, now: Time) -> Result<(), RmError> {
        self.read(job).ok_or(RmError::UnknownJob(job))?;
        self.suspended.insert(job, now);
        Ok(())
    }
    fn resume(&mut self, job: JobId, now: Time) -> Result<(), RmError> {
        let mut r = self.read(job).ok_or(RmError::UnknownJob(job))?;
        let at = self
            .suspended
            .remove(&job)
            .ok_or_else(|| RmError::Refused(format!("job {job} is not suspended")))?;
        r.paused += now - at;
        self.write(job, r)
    }
    fn set_walltime(
        &mut self,
        job: JobId,
        walltime: Option<Secs>,
        _now: Time,
    ) -> Result<(), RmError> {
        let mut r = self.read(job).ok_or(RmError::UnknownJob(job))?;
        r.limit = walltime;
        self.write(job, r)
    }
    fn requeue(&mut self, job: JobId, _now: Time) -> Result<(), RmError> {
        self.remove(job)
    }
    fn checkpoint(&mut self, job: JobId, _s: i32, _t: Secs, _now: Time) -> Result<(), RmError> {
        self.remove(job)
    }
    fn observe(&mut self, now: Time) -> Vec<Observation> {
        let mut out = std::mem::take(&mut self.pending);
        let Ok(entries) = std::fs::read_dir(&self.dir) else {
            return out;
        };
        let mut ids: Vec<JobId> = entries
            .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
            .collect();
        ids.sort_unstable();
        for job in ids {
            if self.suspended.contains_key(&job) {
                continue;
            }
            if let Some(r) = self.read(job).filter(|r| r.end() <= now) {
                let _ = std::fs::remove_file(self.path(job));
                let at = r.end();
                out.push(if r.walltime_hit() {
                    Observation::WalltimeExceeded {
                        job,
                        at,
                        code: r.exit_code(),
                    }
                } else {
                    Observation::Finished {
                        job,
                        at,
                        code: r.exit_code(),
                    }
                });
            }
        }
        out
    }
    fn recover(&mut self, active: &[JobId], now: Time) -> Result<(), RmError> {
        for &job in active {
            if self.read(job).is_none() {
                self.pending.push(Observation::Vanished { job, at: now });
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn script_behaviour_reads_sleep_and_exit() {
        assert_eq!(script_behaviour("#!/bin/sh\nsleep 3\nexit 7\n", 1), (3, 7));
        assert_eq!(script_behaviour("true\n", 2), (2, 0));
    }
}
