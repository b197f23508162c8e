//! Backend observations turned into core events, and the restoration of
//! stored jobs into a fresh state at start-up (re-creating the allocations of
//! active jobs).

use std::sync::Arc;

use arches_core::{CompletionCode, Event, JobFlag, JobId, JobState, State, Time};
use arches_rm::Observation;

use crate::actor::Actor;

impl Actor {
    pub(crate) fn observe(&mut self, now: Time) {
        let t0 = std::time::Instant::now();
        let observed = self.rm.observe(now);
        crate::metrics::observe_rm_poll(t0.elapsed());
        for o in observed {
            // A job being checkpointed or requeued goes back to the queue
            // however its run ended (also after a daemon restart, when the
            // backend only sees it finish).
            if let Some(job) = ended_job(&o).filter(|j| self.terminating(*j)) {
                self.requeued(job, now);
                continue;
            }
            match o {
                Observation::Running { job, at } => {
                    // A launched job runs now, since Slurm's start time.
                    if self
                        .state
                        .job(job)
                        .is_some_and(|j| j.state == JobState::Starting)
                    {
                        self.apply(Event::Started { job, at }, now);
                        tracing::info!(job, at, "job running");
                    }
                }
                Observation::Requeued { job, .. } => self.requeued(job, now),
                Observation::Finished { job, at, code } => {
                    self.finish(job, at.min(now), code);
                }
                Observation::WalltimeExceeded { job, at, code } => {
                    if let Some(rec) = self.exec.get_mut(&job) {
                        Arc::make_mut(rec).walltime_exceeded = true;
                    }
                    self.note(job, "job exceeded its wallclock limit".to_string());
                    self.finish(job, at.min(now), code);
                }
                Observation::StartFailed { job, message, .. } => {
                    self.start_failed(job, &message, now);
                }
                Observation::NodeFailed { job, node, .. } => {
                    self.note(job, format!("node {node} failed"));
                    let restartable = self
                        .state
                        .job(job)
                        .is_some_and(|j| j.flags.contains(JobFlag::Restartable));
                    if restartable {
                        self.apply(Event::Requeue { job }, now);
                    } else {
                        self.finish(job, now, -1);
                    }
                }
                Observation::Vanished { job, .. } => {
                    if self.requeue_unconfirmed(job, now) {
                        continue;
                    }
                    self.note(
                        job,
                        "job vanished from the resource manager, which has no record of how it ended"
                            .to_string(),
                    );
                    self.finish(job, now, -1);
                }
                Observation::NodeChanged { mut node } => {
                    // NODECFG features, partition and state stay on top.
                    self.cfg.moab.overlay_node(&mut node);
                    match self.state.node_id(&node.name) {
                        Some(id) => {
                            if self.state.node(id).is_some_and(|n| *n != node) {
                                tracing::info!(node = node.name, "node changed");
                                self.apply(
                                    Event::UpdateNode {
                                        node: id,
                                        attrs: node,
                                    },
                                    now,
                                );
                            }
                        }
                        None => {
                            tracing::info!(node = node.name, "node added");
                            self.apply(Event::AddNode(node), now);
                        }
                    }
                }
                Observation::Note { job, message } => self.note(job, message),
                Observation::CpuUsed { job, cpu_ms } => {
                    if self.state.job(job).is_some_and(|j| j.state.is_active()) {
                        self.apply(
                            Event::Modify {
                                job,
                                change: arches_core::state::JobChange::CpuUsed(cpu_ms),
                            },
                            now,
                        );
                    }
                }
                Observation::WalltimeRefused {
                    job,
                    walltime,
                    message,
                    ..
                } => {
                    let shown = walltime.map_or("none".to_string(), |w| w.to_string());
                    self.note(
                        job,
                        format!(
                            "walltime change refused by the resource manager: {message} (limit stays {shown})"
                        ),
                    );
                    if self.state.job(job).is_some_and(|j| j.state.is_active()) {
                        self.apply(
                            Event::Modify {
                                job,
                                change: arches_core::state::JobChange::Walltime(walltime),
                            },
                            now,
                        );
                    }
                }
                Observation::OperationFailed {
                    job,
                    operation,
                    message,
                    ..
                } => self.note(job, format!("{operation} failed: {message}")),
            }
        }
    }

    /// Whether a job is terminating on its way back to the queue.
    fn terminating(&self, job: JobId) -> bool {
        self.state
            .job(job)
            .and_then(|j| j.run.as_ref())
            .is_some_and(|r| r.terminating.is_some())
    }

    /// A checkpointed or requeued job's processes are gone: back to the
    /// queue (its resources free, or locked for its preemptor).
    fn requeued(&mut self, job: JobId, now: Time) {
        let cause = self
            .state
            .job(job)
            .and_then(|j| j.run.as_ref())
            .and_then(|r| r.terminating)
            .map(|t| t.cause);
        if self.apply(Event::Requeue { job }, now) {
            let how = cause.map_or("requeued", |c| match c {
                arches_core::RequeueCause::Checkpoint => "checkpointed and requeued",
                _ => "requeued",
            });
            tracing::info!(job, how, "job back in the queue");
            self.note(job, format!("job {how}: its previous run has ended"));
        }
    }

    fn finish(&mut self, job: JobId, at: Time, code: i32) {
        let Some(j) = self.state.job(job) else { return };
        if !j.state.is_active() {
            return;
        }
        let procs = f64::from(j.procs());
        let start = j.run.as_ref().map_or(at, |r| r.start_time);
        let user = j.cred.user.clone();
        self.predictor.completed(job, &user, (at - start).max(0));
        if self.apply(
            Event::Finish {
                job,
                code: CompletionCode::Exit(code),
            },
            at,
        ) {
            self.stats.jobs_completed += 1;
            self.stats.proc_seconds_used += procs * (at - start).max(0) as f64;
            tracing::info!(job, code, "job finished");
        }
    }
}

/// The job whose run an observation says has ended, if any.
fn ended_job(o: &Observation) -> Option<JobId> {
    match o {
        Observation::Finished { job, .. }
        | Observation::WalltimeExceeded { job, .. }
        | Observation::StartFailed { job, .. }
        | Observation::NodeFailed { job, .. }
        | Observation::Vanished { job, .. } => Some(*job),
        _ => None,
    }
}

/// Puts a stored job back into a fresh state, re-creating the allocation of
/// active jobs (their usage, suspension time and start count).
pub(crate) fn restore_job(state: &mut State, mut job: arches_core::Job) -> anyhow::Result<()> {
    let id = job.id;
    let run = job.run.take();
    let target = job.state;
    if !target.is_active() {
        if target != JobState::Idle && !target.is_finished() {
            job.state = JobState::Idle;
        }
        if target.is_finished() {
            job.run = run;
        }
        state.apply(Event::submit(job), 0)?;
        return Ok(());
    }
    let Some(run) = run else {
        job.state = JobState::Idle;
        state.apply(Event::submit(job), 0)?;
        return Ok(());
    };
    job.state = JobState::Idle;
    job.start_count = job.start_count.saturating_sub(1);
    state.apply(Event::submit(job), 0)?;
    let known = run.alloc.iter().all(|a| state.node(a.node).is_some());
    let (alloc, kind) = (run.alloc.clone(), run.how);
    // `Starting`: still waiting for its backend to run it.
    let event = Event::start(id, alloc, kind, target == JobState::Starting);
    let started = known && state.apply(event, run.start_time).is_ok();
    if !started {
        tracing::warn!(
            job = id,
            "stored allocation no longer fits the nodes; job requeued"
        );
        return Ok(());
    }
    if !run.gres_units.is_empty() {
        // The devices it runs on, not the ones a fresh start would get.
        let change = arches_core::state::JobChange::GresUnits(run.gres_units.clone());
        if let Err(e) = state.apply(Event::Modify { job: id, change }, run.start_time) {
            tracing::warn!(job = id, error = %e, "stored generic-resource units conflict; fresh ones given");
        }
    }
    if run.suspended_secs > 0 || run.resumed_at.is_some() {
        // One suspension as long as all of them, ending at the last resume.
        let resumed = run
            .resumed_at
            .unwrap_or(run.start_time + run.suspended_secs);
        state.apply(Event::Suspend { job: id }, resumed - run.suspended_secs)?;
        state.apply(Event::Resume { job: id }, resumed)?;
    }
    if let Some(at) = run.suspended_at {
        state.apply(Event::Suspend { job: id }, at)?;
    }
    if matches!(target, JobState::Staging | JobState::Staged) {
        // LOCAL data staging to its nodes, not launched yet.
        let change = arches_core::state::JobChange::Phase(target);
        state.apply(Event::Modify { job: id, change }, run.start_time)?;
    }
    if let Some(t) = run.terminating {
        state.apply(
            Event::Terminate {
                job: id,
                cause: t.cause,
                by: t.by,
                until: t.until,
            },
            t.since,
        )?;
    }
    Ok(())
}
