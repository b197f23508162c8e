//! The activation filter (Windows HPC): a site program (`ACTIVATIONFILTER`)
//! called just before a job the scheduler decided to start is started. It
//! may let the job start, defer it or hold it.
//!
//! The call never blocks the scheduling iteration: a planned start whose job
//! has no fresh verdict is withheld, the filter runs on a worker thread
//! (at most [`MAX_RUNNING`] at a time, the rest queued) with a timeout
//! (`ACTIVATIONFILTERTIMEOUT`), and its verdict comes back to the actor as
//! an [`Input`]. Until then the job keeps its place: the next iterations
//! plan it again (the processors stay free for it) and lower-priority jobs
//! are planned around it. A start verdict is used by the next iteration
//! that plans the job (within [`ALLOW_VALIDITY`] seconds; later the filter
//! is asked again).
//!
//! The program is called as `ACTIVATIONFILTER JOBID USER PROCS WALLTIME`
//! (seconds, `-1` for none) with `MOAB_JOBID`, `MOAB_JOBNAME`, `MOAB_USER`,
//! `MOAB_GROUP`, `MOAB_CLASS`, `MOAB_ACCOUNT`, `MOAB_QOS`, `MOAB_PROCCOUNT`
//! and `MOAB_NODECOUNT` in its environment, as the daemon's user. Exit
//! status: 0 start; 1 defer (a `Defer` hold for `DEFERTIME`, released as
//! any deferral); 2 hold (a batch hold an administrator releases); anything
//! else, a crash, or the timeout: deferred, noting the failure. The first
//! line of its standard output is the reason checkjob shows.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::sync::Arc;
use std::time::Duration;

use arches_core::{Event, HoldType, JobId, Start, Time};
use arches_rm::program::{self, Invocation};

use crate::actor::{Actor, Input};

/// Filters running at once; further calls wait in a queue.
pub const MAX_RUNNING: usize = 8;

/// How long a start verdict stays good (seconds).
pub const ALLOW_VALIDITY: Time = 60;

/// What the filter decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    Start(String),
    Defer(String),
    Hold(String),
    /// It could not be run, crashed, timed out or exited otherwise.
    Failed(String),
}

/// One call to make.
#[derive(Debug, Clone)]
struct Call {
    job: JobId,
    args: Vec<String>,
    env: Vec<(String, String)>,
}

/// The activation state of the jobs the scheduler wants to start.
#[derive(Debug, Default)]
pub struct Gate {
    /// Jobs whose filter is queued or running.
    pending: BTreeSet<JobId>,
    queue: VecDeque<Call>,
    running: usize,
    /// Jobs the filter let start, and when.
    allowed: BTreeMap<JobId, Time>,
}

/// The verdict of a finished filter run.
pub fn verdict(result: Result<program::Outcome, program::RunError>) -> Verdict {
    match result {
        Err(e) => Verdict::Failed(e.to_string()),
        Ok(out) => {
            let reason = out.stdout.lines().next().unwrap_or("").trim().to_string();
            match out.code {
                Some(0) => Verdict::Start(reason),
                Some(1) => Verdict::Defer(reason),
                Some(2) => Verdict::Hold(reason),
                _ => {
                    let why = program::last_line(&out.stderr);
                    Verdict::Failed(if why.is_empty() {
                        format!("exited with {}", out.status_text())
                    } else {
                        format!("exited with {}: {why}", out.status_text())
                    })
                }
            }
        }
    }
}

fn with_reason(what: &str, reason: &str) -> String {
    if reason.is_empty() {
        what.to_string()
    } else {
        format!("{what} ({reason})")
    }
}

impl Actor {
    /// The planned starts that may go ahead now; the others wait for their
    /// activation filter (called here, off this thread).
    pub(crate) fn activation_gate(&mut self, starts: Vec<Start>, now: Time) -> Vec<Start> {
        let Some(filter) = self.cfg.moab.hooks.activation_filter.clone() else {
            return starts;
        };
        if self.inbox.is_none() {
            return starts;
        }
        let mut go = Vec::new();
        for s in starts {
            match self.activation.allowed.remove(&s.job) {
                Some(at) if now - at <= ALLOW_VALIDITY => {
                    go.push(s);
                    continue;
                }
                _ => {}
            }
            if self.activation.pending.contains(&s.job) {
                continue;
            }
            let Some(j) = self.state.job(s.job) else {
                continue;
            };
            let procs: u32 = s.alloc.iter().map(|a| a.procs).sum();
            let wall = j
                .walltime
                .map_or_else(|| "-1".to_string(), |w| w.to_string());
            let opt = |o: &Option<arches_core::Name>| o.as_deref().unwrap_or_default().to_string();
            let call = Call {
                job: s.job,
                args: vec![
                    s.job.to_string(),
                    j.cred.user.to_string(),
                    procs.to_string(),
                    wall,
                ],
                env: vec![
                    ("MOAB_JOBID".into(), s.job.to_string()),
                    ("MOAB_JOBNAME".into(), j.name.to_string()),
                    ("MOAB_USER".into(), j.cred.user.to_string()),
                    ("MOAB_GROUP".into(), j.cred.group.to_string()),
                    ("MOAB_CLASS".into(), opt(&j.cred.class)),
                    ("MOAB_ACCOUNT".into(), opt(&j.cred.account)),
                    ("MOAB_QOS".into(), opt(&j.cred.qos)),
                    ("MOAB_PROCCOUNT".into(), procs.to_string()),
                    ("MOAB_NODECOUNT".into(), s.alloc.len().to_string()),
                ],
            };
            self.activation.pending.insert(s.job);
            self.activation.queue.push_back(call);
            tracing::info!(job = s.job, filter, "activation filter called");
        }
        self.dispatch_activation();
        go
    }

    /// Starts queued filter calls while there is room.
    fn dispatch_activation(&mut self) {
        let (Some(filter), Some(inbox)) = (
            self.cfg.moab.hooks.activation_filter.clone(),
            self.inbox.clone(),
        ) else {
            return;
        };
        let timeout =
            Duration::from_secs(self.cfg.moab.hooks.activation_filter_timeout.max(1) as u64);
        while self.activation.running < MAX_RUNNING {
            let Some(call) = self.activation.queue.pop_front() else {
                return;
            };
            self.activation.running += 1;
            let filter = filter.clone();
            let inbox = inbox.clone();
            let spawned = std::thread::Builder::new()
                .name("activation".into())
                .spawn(move || {
                    let result = program::run(&Invocation {
                        program: &filter,
                        args: &call.args,
                        stdin: None,
                        caller: None,
                        timeout,
                        env: &call.env,
                        output_limit: 65536,
                    });
                    let _ = inbox.send(Input::Activation {
                        job: call.job,
                        verdict: verdict(result),
                    });
                });
            if let Err(e) = spawned {
                // No thread: the job simply is not started this time.
                tracing::error!(error = %e, "cannot start an activation filter thread");
                self.activation.running -= 1;
                self.activation.pending.remove(&call.job);
                return;
            }
        }
    }

    /// Applies a filter's verdict to its job.
    pub(crate) fn activation_result(&mut self, job: JobId, verdict: Verdict, now: Time) {
        self.activation.running = self.activation.running.saturating_sub(1);
        self.activation.pending.remove(&job);
        self.dispatch_activation();
        let idle = self
            .state
            .job(job)
            .is_some_and(|j| j.state == arches_core::JobState::Idle && j.holds.is_empty());
        if !idle {
            // Cancelled, held or started otherwise meanwhile.
            return;
        }
        self.wake = true;
        match verdict {
            Verdict::Start(reason) => {
                self.activation.allowed.insert(job, now);
                self.note(
                    job,
                    with_reason("activation filter: start allowed", &reason),
                );
            }
            Verdict::Hold(reason) => {
                self.apply(
                    Event::SetHold {
                        job,
                        hold: HoldType::Batch,
                    },
                    now,
                );
                self.note(
                    job,
                    with_reason("activation filter: job held (batch hold)", &reason),
                );
            }
            Verdict::Defer(reason) => self.activation_defer(
                job,
                &with_reason("activation filter: job deferred", &reason),
                now,
            ),
            Verdict::Failed(why) => self.activation_defer(
                job,
                &format!("activation filter failed: {why}; job deferred"),
                now,
            ),
        }
    }

    /// A `Defer` hold for `DEFERTIME`, released like a failed start's.
    fn activation_defer(&mut self, job: JobId, note: &str, now: Time) {
        let until = now + self.cfg.moab.defer_time.max(1);
        self.hold_deferred(job, until, now);
        if let Some(rec) = self.exec.get_mut(&job) {
            let rec = Arc::make_mut(rec);
            let mut d = rec.defer.as_deref().copied().unwrap_or_default();
            d.until = Some(until);
            rec.defer = Some(Box::new(d));
            self.dirty.insert(job);
        }
        self.note(
            job,
            format!(
                "{note} until {}",
                arches_core::timespec::format_duration(until - now)
            ),
        );
        tracing::info!(job, until, "activation filter deferred the job");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn out(code: Option<i32>, stdout: &str, stderr: &str) -> program::Outcome {
        program::Outcome {
            code,
            stdout: stdout.into(),
            stderr: stderr.into(),
            truncated: false,
        }
    }

    #[test]
    fn exit_statuses_are_verdicts() {
        assert_eq!(
            verdict(Ok(out(Some(0), "licences free\nmore\n", ""))),
            Verdict::Start("licences free".into())
        );
        assert_eq!(
            verdict(Ok(out(Some(1), "", ""))),
            Verdict::Defer(String::new())
        );
        assert_eq!(
            verdict(Ok(out(Some(2), "quota exceeded", ""))),
            Verdict::Hold("quota exceeded".into())
        );
        assert_eq!(
            verdict(Ok(out(Some(7), "", "boom\n"))),
            Verdict::Failed("exited with status 7: boom".into())
        );
        assert_eq!(
            verdict(Ok(out(None, "", ""))),
            Verdict::Failed("exited with a signal".into())
        );
        assert_eq!(
            verdict(Err(program::RunError::Timeout {
                program: "/f".into(),
                secs: 2.0
            })),
            Verdict::Failed("'/f' timed out after 2s".into())
        );
    }
}
