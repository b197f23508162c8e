//! The single owner of the mutable state: a plain thread fed by a closed
//! [`Input`] enum. Each turn it drains every pending input (so concurrent
//! submissions share one commit), persists, publishes a new [`Snapshot`] and
//! only then replies; then it collects backend observations, runs a
//! scheduling iteration when something changed or a timer is due (spaced and
//! coalesced under a storm of events, see [`crate::pace`]), hands the
//! starts to the backend, persists and publishes again.

use std::collections::BTreeSet;
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use arches_api::{ActionResponse, JobActionRequest, SchedulerControl, SubmitResponse};
use arches_core::{Event, JobId, JobState, Plan, State, Time};
use arches_rm::{ExecSpec, Launch, ResourceManager};
use arches_store::{Batch, ExecRecord, JobRecord, Payload, Store};
use tokio::sync::oneshot;

use crate::config::DaemonConfig;
use crate::jobspec::{Submission, SubmitError};

/// Everything the actor can be asked to do.
pub enum Input {
    /// A parsed submission; answered after the job is durable.
    Submit {
        sub: Box<Submission>,
        reply: oneshot::Sender<Result<SubmitResponse, SubmitError>>,
    },
    /// A job action by a caller.
    Action {
        caller: Caller,
        req: JobActionRequest,
        reply: oneshot::Sender<ActionResponse>,
    },
    /// mschedctl.
    Control {
        caller: Caller,
        req: SchedulerControl,
        reply: oneshot::Sender<ActionResponse>,
    },
    /// mrsvctl -c / -r.
    Reservation {
        caller: Caller,
        req: arches_api::ReservationRequest,
        reply: oneshot::Sender<ActionResponse>,
    },
    /// Stop after this turn (SIGTERM/SIGINT).
    Shutdown,
    /// An activation filter's verdict ([`crate::activation`]).
    Activation {
        job: JobId,
        verdict: crate::activation::Verdict,
    },
}

/// An identified caller (defined with the authorization rules).
pub use crate::authz::Caller;

/// Scheduler statistics for `mdiag -S` and showstats.
#[derive(Debug, Clone, Default)]
pub struct SchedStats {
    pub started: Time,
    pub iterations: u64,
    pub last_ms: f64,
    pub total_ms: f64,
    pub max_ms: f64,
    pub paused: bool,
    pub jobs_completed: u64,
    pub jobs_backfilled: u64,
    pub proc_seconds_used: f64,
    pub wait_secs_total: f64,
    pub jobs_started: u64,
    /// Jobs preempted by the scheduler (QoS or PREEMPT backfill).
    pub jobs_preempted: u64,
    /// Lowest system utilization seen (0..=1) and on which iteration, and
    /// the backlog samples (showstats -v, [`crate::profiling`]).
    pub min_util: Option<(f64, u64)>,
    pub backlog_sum: f64,
    pub backlog_samples: u64,
    /// Why changes cannot be recorded, while the store fails (mdiag -S).
    pub store_fault: Option<String>,
    /// What a salvage start set aside or left alone (mdiag -S).
    pub notices: Vec<String>,
}

/// Execution records by job: a persistent map, so publishing a snapshot
/// shares it instead of copying it.
pub type ExecMap = imbl::OrdMap<JobId, Arc<ExecRecord>>;

/// What readers see: the state after the last turn. Never blocks the actor.
#[derive(Clone)]
pub struct Snapshot {
    pub now: Time,
    pub state: Arc<State>,
    pub exec: Arc<ExecMap>,
    pub plan: Arc<Plan>,
    pub cfg: Arc<DaemonConfig>,
    pub stats: SchedStats,
    pub host: String,
    pub socket: String,
    pub rm_name: String,
    pub rm_kind: String,
    /// `now` is a virtual clock (a served simulation): readers keep it
    /// instead of replacing it with the wall clock.
    pub virtual_clock: bool,
    /// Data staging: the storage RM and why stage-ins wait.
    pub staging: Option<Arc<crate::staging::StagingSnapshot>>,
    /// Usage accounting of completed jobs (showstats, mdiag -f).
    pub accounting: Arc<arches_core::accounting::Accounting>,
    /// The statistics profile's interval in progress (not in `accounting`
    /// yet) and the system's samples in it; `None` before the first
    /// iteration and in a served simulation.
    pub profile_now: Option<(i64, arches_core::history::SystemSample)>,
}

/// The published snapshot, swapped after every turn.
pub type Published = Arc<RwLock<Arc<Snapshot>>>;

/// Reads the current snapshot, with `now` set to the current time (views
/// show remaining times against the clock, not against the last turn),
/// unless the snapshot runs on a virtual clock.
pub fn current(p: &Published) -> Snapshot {
    let snap = match p.read() {
        Ok(g) => Arc::clone(&g),
        Err(poisoned) => Arc::clone(&poisoned.into_inner()),
    };
    let mut s = (*snap).clone();
    if !s.virtual_clock {
        s.now = now();
    }
    s
}

/// The actor's own state.
pub struct Actor {
    pub(crate) cfg: Arc<DaemonConfig>,
    pub(crate) state: State,
    pub(crate) exec: ExecMap,
    pub(crate) plan: Arc<Plan>,
    pub(crate) store: Store,
    pub(crate) rm: Box<dyn ResourceManager>,
    pub(crate) next_id: u64,
    pub(crate) stats: SchedStats,
    pub(crate) dirty: BTreeSet<JobId>,
    pub(crate) purged: Vec<JobId>,
    /// The last record of each purged job, written (then moved to the job
    /// history and deleted) by the same commit as its purge.
    pub(crate) purged_records: Vec<JobRecord>,
    /// Scripts and environments of jobs submitted this turn, written with
    /// the next commit (then read back from the store when a job starts).
    pub(crate) payloads: Vec<(JobId, Payload)>,
    /// Job arrays: their stored records ([`crate::arrays`]).
    pub(crate) arrays: crate::arrays::Book,
    /// Jobs recovered from a start intent (their start was not confirmed
    /// before the last stop): requeued if the backend does not know them.
    pub(crate) unconfirmed: BTreeSet<JobId>,
    pub(crate) host: String,
    pub(crate) socket: String,
    pub(crate) published: Published,
    /// Something happened that the scheduler must look at.
    pub(crate) wake: bool,
    pub(crate) stop: bool,
    /// `mschedctl -r SECS`: when a pause ends.
    pub(crate) resume_at: Option<Time>,
    /// `mschedctl -s N` / `-S N`: pause once this iteration count is reached.
    pub(crate) stop_at: Option<u64>,
    /// `RUNTIMEPREDICTION`: planning estimates (shared with the simulator).
    pub(crate) predictor: arches_sim::predict::Predictor,
    /// Data staging (a storage RM is configured).
    pub(crate) staging: Option<crate::staging::Driver>,
    /// Next `system.N` reservation id, and reservations created/released
    /// since the last commit ([`crate::rsvctl`]).
    pub(crate) rsv_next: u64,
    pub(crate) rsv_changes: (Vec<arches_store::ReservationRecord>, Vec<String>),
    /// `mshow -a --flags=tid` transactions not yet committed
    /// ([`crate::rsvctl`]; memory only).
    pub(crate) transactions: crate::rsvctl::Transactions,
    /// Usage accounting (durable: the `accounting` meta document), and
    /// whether it changed since the last commit.
    pub(crate) accounting: Arc<arches_core::accounting::Accounting>,
    pub(crate) accounting_dirty: bool,
    /// Deferred jobs (a `Defer` hold after a failed start) and when their
    /// deferral ends ([`crate::defer`]).
    pub(crate) deferred: std::collections::BTreeMap<JobId, Time>,
    /// Submissions since the heap was last trimmed: after a burst the
    /// heap is trimmed once the actor is idle ([`crate::pace::TRIM_BURST`]).
    submitted_since_trim: usize,
    /// A long iteration asked for a heap trim once its plan is published.
    trim_due: bool,
    /// When iterations, observations and commits happen.
    pace: crate::pace::Pace,
    /// Node samples of the statistics profile interval in progress.
    pub(crate) sampler: crate::profiling::NodeSampler,
    /// The store's last failure, while it fails ([`crate::durable`]).
    pub(crate) store_fault: Option<crate::durable::StoreFault>,
    /// The run-time history of a commit that failed (owed).
    pending_history: Option<String>,
    /// Activation filter calls and verdicts ([`crate::activation`]).
    pub(crate) activation: crate::activation::Gate,
    /// The actor's own input channel, for results of work done on other
    /// threads (activation filters); set by [`Actor::set_inbox`].
    pub(crate) inbox: Option<std::sync::mpsc::Sender<Input>>,
    /// Mail and notification program calls ([`crate::mail`]).
    pub(crate) notifier: crate::mail::Notifier,
}

/// The wall clock in epoch seconds.
pub fn now() -> Time {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as Time)
        .unwrap_or(0)
}

impl Actor {
    /// Recovers the state from the store and the backend; publishes the
    /// first snapshot.
    pub fn recover(
        cfg: Arc<DaemonConfig>,
        mut store: Store,
        mut rm: Box<dyn ResourceManager>,
        socket: String,
    ) -> anyhow::Result<(Actor, Published)> {
        use arches_store::RecordKind;
        let now = now();
        let nodes = initial_nodes(&cfg, rm.as_mut())?;
        let mut state = State::new(nodes);
        let mut exec = ExecMap::new();
        let mut active = Vec::new();
        let db = cfg.home.join(crate::STORE_FILE);
        // Unreadable records stop the start, or are set aside (--salvage).
        let mut salvage = crate::salvage::Salvage::new(cfg.salvage, &db);
        let mut intents: std::collections::BTreeMap<JobId, JobRecord> =
            std::collections::BTreeMap::new();
        for r in store.load_start_intents_checked()? {
            match r {
                Ok(r) => {
                    intents.insert(r.job.id, r);
                }
                Err(e) => {
                    let id = crate::salvage::record_id(&e);
                    salvage.unreadable(RecordKind::StartIntent, id, &e)?;
                }
            }
        }
        let mut unconfirmed = BTreeSet::new();
        let mut deferred = std::collections::BTreeMap::new();
        // Arrays first: their sub-jobs' ids are theirs.
        let mut arrays = crate::arrays::Book::default();
        for rec in store.load_arrays()? {
            let a = rec.to_core(state.gres_table())?;
            let id = a.id;
            state
                .apply(Event::SubmitArray(Box::new(a)), now)
                .map_err(|e| anyhow::anyhow!("array {id}: {e}"))?;
            exec.insert(id, Arc::new(rec.exec.clone()));
            arrays.records.insert(id, rec);
        }
        store.for_each_job_checked(|rec| {
            let rec = match rec {
                Ok(rec) => rec,
                Err(e) => {
                    let id = crate::salvage::record_id(&e);
                    return salvage.unreadable(RecordKind::Job, id, &e);
                }
            };
            let rec = crate::intent::prefer_intent(rec, &mut intents, &mut unconfirmed);
            let job = match rec.to_job(state.gres_table()) {
                Ok(job) => job,
                Err(e) => {
                    return salvage.unreadable(RecordKind::Job, rec.job.id.to_string(), &e);
                }
            };
            let id = job.id;
            let defer_hold = job.holds.contains(arches_core::HoldType::Defer);
            crate::observe::restore_job(&mut state, job)?;
            // LOCAL jobs staging to their nodes are allocated but not in
            // the backend yet: the staging driver carries on with them.
            if state.job(id).is_some_and(|j| {
                j.state.is_active() && !matches!(j.state, JobState::Staging | JobState::Staged)
            }) {
                active.push(id);
            }
            if let Some(until) = rec.exec.defer.as_ref().and_then(|d| d.until) {
                if defer_hold {
                    deferred.insert(id, until);
                }
            }
            exec.insert(id, Arc::new(rec.exec));
            Ok::<(), anyhow::Error>(())
        })?;
        if !unconfirmed.is_empty() {
            tracing::warn!(jobs = ?unconfirmed, "starts not confirmed before the last stop");
        }
        for rec in store.load_reservations_checked()? {
            let rec = match rec {
                Ok(rec) => rec,
                Err(e) => {
                    let id = crate::salvage::record_id(&e);
                    salvage.unreadable(RecordKind::Reservation, id, &e)?;
                    continue;
                }
            };
            if let Err(e) = state.add_reservation(rec.to_core()) {
                tracing::warn!(rsv = %rec.id, error = %e, "stored reservation not restored");
            }
        }
        let mut notices = salvage.finish(&mut store, now)?;
        let rsv_next = store
            .meta(crate::rsvctl::NEXT_RSV_KEY)?
            .and_then(|v| v.parse().ok())
            .unwrap_or(1);
        rm.recover(&active, now)?;
        // Jobs the backend runs that the state does not know stop the
        // start (or, salvaging, are reported); no id it knows is reused.
        let (floor, unknown) =
            crate::salvage::check_backend(rm.as_ref(), &state, cfg.salvage, &db)?;
        notices.extend(unknown);
        let next_id = store.next_id()?.max(floor);
        let accounting = match store.meta(arches_store::accounting::ACCOUNTING_KEY)? {
            Some(text) => arches_store::accounting::decode(&text).unwrap_or_else(|e| {
                tracing::warn!(error = %e, "stored statistics unreadable; starting a new period");
                arches_core::accounting::Accounting::new(now)
            }),
            None => arches_core::accounting::Accounting::new(now),
        };
        let accounting = Arc::new(accounting);
        tracing::info!(
            jobs = exec.len(),
            active = active.len(),
            next_id,
            "state recovered"
        );
        let host = crate::ident::short_hostname();
        let stats = SchedStats {
            started: now,
            notices,
            ..SchedStats::default()
        };
        let plan = Arc::new(Plan::default());
        let snap = Snapshot {
            now,
            state: Arc::new(state.clone()),
            exec: Arc::new(exec.clone()),
            plan: Arc::clone(&plan),
            cfg: Arc::clone(&cfg),
            stats: stats.clone(),
            host: host.clone(),
            socket: socket.clone(),
            rm_name: rm.name().to_string(),
            rm_kind: rm.kind().to_string(),
            virtual_clock: false,
            staging: None,
            accounting: Arc::clone(&accounting),
            profile_now: None,
        };
        let published = Arc::new(RwLock::new(Arc::new(snap)));
        let mut predictor = arches_sim::predict::Predictor::new(cfg.moab.runtime_prediction);
        predictor.set_correction(cfg.moab.prediction_correction);
        let saved = store.meta(arches_sim::predict::HISTORY_META_KEY)?;
        let folded = predictor.rebuild(&state, saved.as_deref());
        if predictor.enabled() {
            tracing::info!(
                saved = saved.is_some(),
                completed_jobs = folded,
                "run-time prediction history restored"
            );
        }
        let cfg_for_staging = Arc::clone(&cfg);
        let exec_for_staging = exec.clone();
        let mut actor = Actor {
            cfg,
            state,
            exec,
            plan,
            store,
            rm,
            next_id,
            stats,
            dirty: BTreeSet::new(),
            purged: Vec::new(),
            purged_records: Vec::new(),
            payloads: Vec::new(),
            arrays,
            unconfirmed,
            host,
            socket,
            published: Arc::clone(&published),
            wake: true,
            stop: false,
            resume_at: None,
            stop_at: None,
            predictor,
            staging: crate::staging::Driver::from_config(&cfg_for_staging, now).map(|mut d| {
                d.track_all(&exec_for_staging);
                d
            }),
            rsv_next,
            rsv_changes: (Vec::new(), Vec::new()),
            transactions: Default::default(),
            accounting,
            accounting_dirty: false,
            deferred,
            submitted_since_trim: 0,
            trim_due: false,
            sampler: Default::default(),
            pace: crate::pace::Pace::default(),
            store_fault: None,
            pending_history: None,
            activation: crate::activation::Gate::default(),
            inbox: None,
            notifier: crate::mail::Notifier::default(),
        };
        actor.configure_profile();
        crate::pace::trim_heap();
        Ok((actor, published))
    }

    /// Gives the actor its own input channel (work done on other threads
    /// reports back through it).
    pub fn set_inbox(&mut self, tx: std::sync::mpsc::Sender<Input>) {
        self.inbox = Some(tx);
    }

    /// Runs until shutdown. A store that cannot commit does not stop it
    /// ([`crate::durable`]): no acknowledgement is ever given for something
    /// not durable, and what is owed is retried.
    pub fn run(mut self, rx: Receiver<Input>) -> anyhow::Result<()> {
        let poll = Duration::from_secs(self.cfg.policy.rm_poll_interval.max(1) as u64);
        loop {
            let inputs = self.collect(&rx);
            let now = now();
            if inputs.is_empty() && self.submitted_since_trim >= crate::pace::TRIM_BURST {
                // A burst of submissions is over: what its requests, parses
                // and commits left in the allocator goes back to the system.
                self.submitted_since_trim = 0;
                crate::pace::trim_heap();
            }
            if !inputs.is_empty() {
                // Durable (or refused, crate::durable) and visible before
                // anybody is told.
                let replies = self.turn(inputs, now);
                self.publish(now);
                for r in replies {
                    r();
                }
            }
            // Backend observations and the checks that scan every job run
            // on a timer, not on every turn (a submission storm makes
            // hundreds of turns a second).
            if self.pace.tick(Instant::now()) {
                self.observe(now);
                self.staging_poll(now);
                if self.resume_at.is_some_and(|t| t <= now) {
                    self.resume_at = None;
                    self.stats.paused = false;
                    self.wake = true;
                }
                if self.next_deferral_end().is_some_and(|t| t <= now) {
                    self.release_deferred(now);
                }
                let due = self.pace.since_iteration(Instant::now()) >= poll
                    || self.state.next_wakeup(now - 1).is_some_and(|t| t <= now)
                    || self.plan.next_wakeup.is_some_and(|t| t <= now);
                if due {
                    self.wake = true;
                }
                self.purge(now);
                if crate::pace::take_trim_request() {
                    // Large answers were sent since the last tick.
                    self.trim_due = true;
                }
            }
            // No iteration while the store fails: a start needs its intent
            // recorded first (crate::durable).
            let iterate = self.wake
                && !self.stop
                && self.store_fault.is_none()
                && self.pace.may_iterate(Instant::now());
            if iterate {
                self.iterate(now);
            }
            let owed =
                !self.dirty.is_empty() || !self.purged.is_empty() || self.store_fault.is_some();
            if iterate || owed {
                if self.commit_due() {
                    let _ = self.commit();
                }
                // Visible at once, durable or still owed.
                self.publish(now);
            }
            if self.trim_due {
                // The previous plan (and what the iteration built and
                // dropped) is free now that the new snapshot replaced it.
                self.trim_due = false;
                crate::pace::trim_heap();
            }
            if self.stop {
                // The interval in progress is kept (a later fold of the
                // same interval after a restart merges with it).
                self.fold_samples(now);
                if self.accounting_dirty {
                    let _ = self.commit();
                }
                self.publish(now);
                tracing::info!("scheduler stopped");
                return Ok(());
            }
        }
    }

    /// Waits for the inputs of one turn: blocks until the first one (or
    /// the next timer), then keeps collecting while more keep arriving, so
    /// concurrent clients share one commit.
    fn collect(&mut self, rx: &Receiver<Input>) -> Vec<Input> {
        use crate::pace::{LINGER, MAX_COLLECT};
        let mut inputs = Vec::new();
        match rx.recv_timeout(self.pace.wait(Instant::now(), self.wake && !self.stop)) {
            Ok(i) => inputs.push(i),
            Err(RecvTimeoutError::Timeout) => return inputs,
            Err(RecvTimeoutError::Disconnected) => {
                self.stop = true;
                return inputs;
            }
        }
        let start = Instant::now();
        loop {
            while let Ok(i) = rx.try_recv() {
                inputs.push(i);
            }
            if start.elapsed() >= MAX_COLLECT {
                break;
            }
            match rx.recv_timeout(LINGER) {
                Ok(i) => inputs.push(i),
                Err(RecvTimeoutError::Timeout) => break,
                Err(RecvTimeoutError::Disconnected) => {
                    self.stop = true;
                    break;
                }
            }
        }
        inputs
    }

    pub(crate) fn submit(
        &mut self,
        mut sub: Submission,
        now: Time,
    ) -> Result<SubmitResponse, SubmitError> {
        sub.resolve_dependencies(&self.state)?;
        if sub.job.elastic.is_some() && !self.rm.supports_resize() {
            return Err(SubmitError(format!(
                "the {} resource manager cannot resize running jobs: processor ranges (procs=MIN-MAX) are not supported",
                self.rm.kind()
            )));
        }
        if let Some(spec) = sub.array.take() {
            return self.submit_array(sub, spec, now);
        }
        sub.check_against(&self.state)?;
        let befores = std::mem::take(&mut sub.befores);
        crate::staging::check_submission(self.staging.as_ref().map(|d| d.model), &sub.exec)?;
        let id = self.next_id;
        let (mut job, exec, payload) = sub.finalize(id, &self.host);
        job.submit_time = now;
        job.estimate = self.predictor.predict(&job.cred.user, job.walltime);
        let warnings = crate::deadline::submit_warnings(&job, &self.cfg.policy, now);
        self.state
            .apply(Event::submit(job), now)
            .map_err(|e| SubmitError(e.to_string()))?;
        self.next_id += 1;
        if let Some(d) = self.staging.as_mut() {
            if !exec.stage_in.is_empty() || !exec.stage_out.is_empty() {
                d.track(id);
            }
        }
        self.exec.insert(id, Arc::new(exec));
        self.payloads.push((id, payload));
        self.dirty.insert(id);
        self.wake = true;
        self.submitted_since_trim += 1;
        self.apply_befores(id, &befores, now);
        tracing::info!(job = id, "job submitted");
        for w in &warnings {
            self.note(id, w.clone());
        }
        Ok(SubmitResponse { id, warnings })
    }

    /// Applies an event to a job and marks it for persistence; logs refusals.
    pub(crate) fn apply(&mut self, event: Event, now: Time) -> bool {
        let job = event_job(&event);
        let before = job.and_then(|j| self.state.job(j)).map(|j| j.state);
        let was_final = before.is_some_and(|s| s.is_finished());
        match self.state.apply(event, now) {
            Ok(()) => {
                if let Some(j) = job {
                    self.dirty.insert(j);
                    if !was_final {
                        self.account(j);
                    }
                    self.notice(j, before);
                }
                self.wake = true;
                true
            }
            Err(e) => {
                tracing::debug!(error = %e, "event refused");
                false
            }
        }
    }

    /// Records a job that just reached a final state in the statistics.
    fn account(&mut self, id: JobId) {
        let Some(j) = self.state.job(id).filter(|j| j.state.is_finished()) else {
            return;
        };
        let end = j.completion.map_or(0, |c| c.time);
        let fs = crate::views::fs_window(&self.cfg, &self.state);
        let stats = self
            .exec
            .get(&id)
            .map(|r| r.stat_templates.clone())
            .unwrap_or_default();
        if Arc::make_mut(&mut self.accounting).record_in(j, end, &fs, &stats) {
            self.accounting_dirty = true;
        }
    }

    /// `mschedctl -f`: starts a new statistics period (`all`, `usage`) or
    /// clears the fairshare usage (`fairshare`).
    pub(crate) fn reset_stats(&mut self, what: &str, now: Time) {
        let a = Arc::make_mut(&mut self.accounting);
        match what {
            "fairshare" => a.reset_fairshare(),
            _ => a.reset(now),
        }
        if what != "fairshare" {
            self.stats.jobs_completed = 0;
            self.stats.jobs_backfilled = 0;
            self.stats.jobs_started = 0;
            self.stats.wait_secs_total = 0.0;
            self.stats.proc_seconds_used = 0.0;
        }
        self.accounting_dirty = true;
    }

    /// Adds a note shown by checkjob.
    pub(crate) fn note(&mut self, job: JobId, text: String) {
        if let Some(rec) = self.exec.get_mut(&job) {
            let rec = Arc::make_mut(rec);
            rec.messages.push(text);
            if rec.messages.len() > 20 {
                rec.messages.remove(0);
            }
            self.dirty.insert(job);
        }
    }

    fn iterate(&mut self, now: Time) {
        self.wake = false;
        let t0 = Instant::now();
        self.pace.iterated(t0, Duration::ZERO);
        if self.stats.paused {
            return;
        }
        for (job, secs) in self.predictor.corrections(&self.state, now) {
            self.apply(
                Event::Modify {
                    job,
                    change: arches_core::state::JobChange::Estimate(Some(secs)),
                },
                now,
            );
        }
        self.staging_before(now);
        self.expand_arrays(now);
        let usage = arches_core::fairshare::active(&self.cfg.policy).then(|| {
            std::sync::Arc::new(crate::views::fs_usage(
                &self.cfg,
                &self.accounting,
                &self.state,
                now,
            ))
        });
        let policy = crate::views::policy_with_usage(&self.cfg.policy, usage.as_ref());
        let plan = arches_core::schedule(&self.state, &policy, now);
        self.apply_preemptions(&plan, now);
        // Expired virtual wall-clock limits: the real limit is back.
        for &job in &plan.restore_walltime {
            let change = arches_core::state::JobChange::VirtualWalltime(None);
            if self.apply(Event::Modify { job, change }, now) {
                self.note(
                    job,
                    "virtual wall-clock limit expired: real limit restored".to_string(),
                );
            }
        }
        let (starts, grows) =
            crate::elastic::merge_into_starts(plan.starts.clone(), &plan.elastic.grows);
        let starts = self.activation_gate(starts, now);
        for (job, result) in self.start_jobs(starts, now) {
            if let Err(e) = result {
                // Noted (and deferred) where it failed.
                tracing::warn!(job, error = %e, "start failed");
            }
        }
        self.apply_deadline_misses(&plan.deadline_misses, now);
        self.apply_grows(&grows, now);
        if self.cfg.policy.reservation_policy == arches_core::policy::ReservationPolicy::Highest {
            // HIGHEST keeps reservations across iterations: hand them back.
            // Not an event that needs another iteration (no wake).
            let kept: Vec<(JobId, Time)> = plan
                .reservations
                .iter()
                .filter(|r| {
                    self.state
                        .job(r.job)
                        .is_some_and(|j| j.state == JobState::Idle)
                })
                .map(|r| (r.job, r.start))
                .collect();
            if let Err(e) = self.state.remember_reservations(kept) {
                tracing::debug!(error = %e, "reservations not remembered");
            }
        }
        // A failing start must not spin: the next attempt waits for the next
        // event or poll. Array sub-jobs made after starts, and jobs waiting
        // for these starts (`after`), may start at once: they need another
        // iteration.
        self.wake = !plan.starts.is_empty()
            && (self.expand_arrays(now) > 0
                || arches_core::eligibility::start_releases_dependents(&self.state, now));
        self.plan = Arc::new(plan);
        // Transfers are initiated against the reservations just planned.
        self.staging_after(now);
        self.pace.iterated(t0, t0.elapsed());
        if t0.elapsed() >= crate::pace::TRIM_AFTER {
            // After the next publish, which releases the previous plan.
            self.trim_due = true;
        }
        self.sample(now);
        let ms = t0.elapsed().as_secs_f64() * 1000.0;
        crate::metrics::observe_iteration(t0.elapsed());
        self.stats.iterations += 1;
        self.stats.last_ms = ms;
        self.stats.total_ms += ms;
        self.stats.max_ms = self.stats.max_ms.max(ms);
        if self.stop_at.is_some_and(|n| self.stats.iterations >= n) {
            self.stop_at = None;
            self.stats.paused = true;
            tracing::info!(iteration = self.stats.iterations, "scheduling stopped");
        }
    }

    /// Hands a job to the backend on exactly these resources and records the
    /// start.
    pub(crate) fn start_job(&mut self, start: arches_core::Start, now: Time) -> Result<(), String> {
        let arches_core::Start {
            job: id,
            alloc,
            kind,
            virtual_walltime,
        } = start;
        if self.needs_local_staging(id) {
            // DATASTAGEMODEL LOCAL: the job takes its nodes now and is
            // launched once its $LOCAL data is on them (crate::staging).
            let wait = self
                .state
                .job(id)
                .map_or(0.0, |j| (now - j.submit_time).max(0) as f64);
            if !self.apply(
                Event::Start {
                    job: id,
                    alloc,
                    kind,
                },
                now,
            ) {
                return Err("the allocation no longer fits".to_string());
            }
            self.apply(
                Event::Modify {
                    job: id,
                    change: arches_core::state::JobChange::Phase(JobState::Staging),
                },
                now,
            );
            self.stats.jobs_started += 1;
            self.stats.wait_secs_total += wait;
            crate::metrics::observe_queue_wait(wait as i64);
            if kind == arches_core::StartKind::Backfill {
                self.stats.jobs_backfilled += 1;
            }
            tracing::info!(job = id, "job allocated, staging its $LOCAL data");
            return Ok(());
        }
        if self.state.job(id).is_none() {
            return Err(format!("unknown job {id}"));
        }
        let pid = crate::arrays::payload_id(&self.state, id);
        let payload = match self.payloads.iter().find(|(j, _)| *j == pid) {
            Some((_, p)) => p.clone(),
            None => match self.stored_payload(id, pid, now) {
                Some(p) => p,
                None => return Err(format!("job {id} has no usable stored script")),
            },
        };
        let job = self
            .state
            .job(id)
            .ok_or_else(|| format!("unknown job {id}"))?;
        let rec = self
            .exec
            .get(&id)
            .ok_or_else(|| format!("no execution record for job {id}"))?;
        // The devices the state gives it when the start is applied below.
        let units = self.state.units_for(&alloc);
        let nodes = arches_rm::launch_nodes(&self.state, &alloc, &units);
        let mut launch = Launch {
            job: id,
            name: job.name.to_string(),
            nodes,
            exec: ExecSpec {
                interactive: job.flags.contains(arches_core::JobFlag::Interactive),
                ..exec_spec(
                    &job.cred.user,
                    job.cred.class.as_deref().map(str::to_string),
                    rec,
                    payload,
                )
            },
            walltime: job.walltime,
            // Told only after a checkpoint, not after a plain requeue.
            restarted: job.requeued == Some(arches_core::RequeueCause::Checkpoint),
        };
        if let Some(kv) = self.local_env(id) {
            launch.exec.env.push(kv);
        }
        crate::jobenv::at_start(&self.state, self.rm.name(), id, &mut launch.exec.env);
        let wait = (now - job.submit_time).max(0) as f64;
        if let Err(e) = self.rm.start(&launch, now) {
            let why = e.to_string();
            if matches!(e, arches_rm::RmError::Busy(_)) {
                // Nothing started, and nothing wrong with the job: it stays
                // queued for the next iteration, without a deferral.
                let note = format!("start postponed: {why}");
                if self.exec.get(&id).and_then(|r| r.messages.last()) != Some(&note) {
                    self.note(id, note);
                }
                self.dirty.insert(id);
                return Err(why);
            }
            self.start_failed(id, &why, now);
            return Err(why);
        }
        // Starting until a backend that confirms starts reports it running.
        let event = Event::start(id, alloc, kind, self.rm.confirms_starts());
        if !self.apply(event, now) {
            let _ = self.rm.cancel(id, now);
            let why = "the allocation no longer fits".to_string();
            self.note(id, format!("cannot start job: {why}"));
            return Err(why);
        }
        if let Some(v) = virtual_walltime {
            // Backfilled on its scaled limit (BFVIRTUALWALLTIMESCALINGFACTOR).
            let change = arches_core::state::JobChange::VirtualWalltime(Some(v));
            self.apply(Event::Modify { job: id, change }, now);
            self.note(
                id,
                format!(
                    "backfilled on a virtual wall-clock limit of {:02}:{:02}:{:02} (BFVIRTUALWALLTIMESCALINGFACTOR)",
                    v / 3600,
                    v / 60 % 60,
                    v % 60
                ),
            );
        }
        self.stats.jobs_started += 1;
        self.stats.wait_secs_total += wait;
        crate::metrics::observe_queue_wait(wait as i64);
        if kind == arches_core::StartKind::Backfill {
            self.stats.jobs_backfilled += 1;
        }
        tracing::info!(job = id, "job started");
        Ok(())
    }

    /// Launches an allocated job that staged its `$LOCAL` data (state
    /// `Staged`): the start is recorded as an intent first, as for any
    /// start; the job is `Running` from now on.
    pub(crate) fn launch(
        &mut self,
        id: JobId,
        local: Option<(String, String)>,
        now: Time,
    ) -> Result<(), String> {
        if self.state.job(id).is_none() {
            return Err(format!("unknown job {id}"));
        }
        let pid = crate::arrays::payload_id(&self.state, id);
        let payload = match self.payloads.iter().find(|(j, _)| *j == pid) {
            Some((_, p)) => p.clone(),
            None => self
                .stored_payload(id, pid, now)
                .ok_or_else(|| format!("job {id} has no usable stored script"))?,
        };
        let job = self
            .state
            .job(id)
            .ok_or_else(|| format!("unknown job {id}"))?;
        let run = job
            .run
            .as_ref()
            .ok_or_else(|| format!("job {id} has no allocation"))?;
        let rec = self
            .exec
            .get(&id)
            .ok_or_else(|| format!("no execution record for job {id}"))?;
        let nodes = arches_rm::launch_nodes(&self.state, &run.alloc, &run.gres_units);
        let mut launch = Launch {
            job: id,
            name: job.name.to_string(),
            nodes,
            exec: ExecSpec {
                interactive: job.flags.contains(arches_core::JobFlag::Interactive),
                ..exec_spec(
                    &job.cred.user,
                    job.cred.class.as_deref().map(str::to_string),
                    rec,
                    payload,
                )
            },
            walltime: job.walltime,
            restarted: job.start_count > 1,
        };
        launch.exec.env.extend(local);
        crate::jobenv::at_start(&self.state, self.rm.name(), id, &mut launch.exec.env);
        let mut intent = job.clone();
        intent.state = JobState::Running;
        if let Some(r) = intent.run.as_mut() {
            r.start_time = now;
        }
        self.store
            .record_starts(&[JobRecord::new(
                &intent,
                (**rec).clone(),
                self.state.gres_table(),
            )])
            .map_err(|e| format!("cannot record the start durably: {e}"))?;
        self.rm.start(&launch, now).map_err(|e| e.to_string())?;
        self.apply(
            Event::Modify {
                job: id,
                change: arches_core::state::JobChange::Phase(JobState::Running),
            },
            now,
        );
        tracing::info!(job = id, "job started after staging its $LOCAL data");
        Ok(())
    }

    fn purge(&mut self, now: Time) {
        let limit = self.cfg.purge_secs;
        let old: Vec<JobId> = self
            .state
            .jobs()
            .filter(|j| j.state.is_finished())
            .filter(|j| j.completion.is_some_and(|c| now - c.time >= limit))
            .map(|j| j.id)
            .collect();
        for job in old {
            // Its final state may not be committed yet: the history keeps
            // the record as it ends, not as it was last written.
            let last = self
                .state
                .job(job)
                .zip(self.exec.get(&job))
                .map(|(j, rec)| JobRecord::new(j, (**rec).clone(), self.state.gres_table()));
            if self.state.apply(Event::Purge { job }, now).is_ok() {
                self.purged_records.extend(last);
                self.exec.remove(&job);
                self.dirty.remove(&job);
                self.purged.push(job);
                // Its array keeps its outcome.
                if let Some((a, _)) = self.state.array_of(job) {
                    self.arrays.dirty.insert(a.id);
                }
                tracing::debug!(job, "job purged");
            }
        }
        self.purge_arrays(now);
    }

    /// Commits every change since the last commit in one transaction. On
    /// failure nothing is lost: every change stays owed for the next try.
    pub(crate) fn persist(&mut self) -> Result<(), arches_store::StoreError> {
        let rsv = !self.rsv_changes.0.is_empty() || !self.rsv_changes.1.is_empty();
        // The run-time history changes with the completions committed here.
        let history = self
            .predictor
            .history_update(now())
            .or_else(|| self.pending_history.take());
        if self.dirty.is_empty()
            && self.purged.is_empty()
            && self.payloads.is_empty()
            && !rsv
            && !self.accounting_dirty
            && history.is_none()
            && self.arrays.is_clean()
            // While the store fails, a retry also probes it.
            && self.store_fault.is_none()
        {
            return Ok(());
        }
        let (rsv_upserts, rsv_deletes) = std::mem::take(&mut self.rsv_changes);
        let deletes = std::mem::take(&mut self.purged);
        let finals = std::mem::take(&mut self.purged_records);
        // The job history reaches as far back as the statistics profile.
        let reach = self
            .cfg
            .moab
            .profile_duration
            .saturating_mul(i64::try_from(self.cfg.moab.profile_count).unwrap_or(i64::MAX));
        let history_before = (!deletes.is_empty()).then(|| now().saturating_sub(reach));
        let mut batch = Batch {
            deletes,
            history_before,
            payloads: std::mem::take(&mut self.payloads),
            next_id: Some(self.next_id),
            rsv_upserts,
            rsv_deletes,
            ..Batch::default()
        };
        if rsv {
            let key = crate::rsvctl::NEXT_RSV_KEY.to_string();
            batch.meta.push((key, self.rsv_next.to_string()));
        }
        let accounting = std::mem::take(&mut self.accounting_dirty);
        if accounting {
            batch.meta.push((
                arches_store::accounting::ACCOUNTING_KEY.to_string(),
                arches_store::accounting::encode(&self.accounting),
            ));
        }
        if let Some(h) = &history {
            let key = arches_sim::predict::HISTORY_META_KEY.to_string();
            batch.meta.push((key, h.clone()));
        }
        self.arrays.drain(&self.state, &mut batch);
        let dirty = std::mem::take(&mut self.dirty);
        for &id in &dirty {
            if let (Some(job), Some(rec)) = (self.state.job(id), self.exec.get(&id)) {
                batch.upserts.push(JobRecord::new(
                    job,
                    (**rec).clone(),
                    self.state.gres_table(),
                ));
            }
        }
        // Written before the purge deletes them: the history keeps these.
        batch.upserts.extend(finals.iter().cloned());
        let t0 = Instant::now();
        if let Err(e) = self.store.commit(&batch) {
            // Owed: written by the next commit that succeeds.
            self.dirty.extend(dirty);
            self.purged = batch.deletes;
            self.purged_records = finals;
            self.payloads = batch.payloads;
            self.rsv_changes = (batch.rsv_upserts, batch.rsv_deletes);
            self.accounting_dirty |= accounting;
            self.pending_history = history;
            self.arrays
                .dirty
                .extend(batch.array_upserts.iter().map(|r| r.id()));
            self.arrays.purged.extend(batch.array_deletes);
            return Err(e);
        }
        crate::metrics::observe_commit(t0.elapsed());
        Ok(())
    }

    fn publish(&mut self, now: Time) {
        let snap = Snapshot {
            now,
            state: Arc::new(self.state.clone()),
            exec: Arc::new(self.exec.clone()),
            plan: Arc::clone(&self.plan),
            cfg: Arc::clone(&self.cfg),
            stats: self.stats.clone(),
            host: self.host.clone(),
            socket: self.socket.clone(),
            rm_name: self.rm.name().to_string(),
            rm_kind: self.rm.kind().to_string(),
            virtual_clock: false,
            staging: self
                .staging
                .as_ref()
                .map(|d| Arc::new(d.snapshot(&self.exec, &self.state, now))),
            accounting: Arc::clone(&self.accounting),
            profile_now: self.sampler.interval.map(|i| (i, self.sampler.system)),
        };
        match self.published.write() {
            Ok(mut g) => *g = Arc::new(snap),
            Err(poisoned) => *poisoned.into_inner() = Arc::new(snap),
        }
    }
}

/// The nodes the state starts with. A resource manager that reports its
/// nodes (Slurm) is always asked, with `NODECFG` laid on top (features,
/// partition, state; its `PROCS=`/`MEM=` are ignored, with a warning from
/// the configuration check); otherwise the configured nodes, or the RM's
/// when none is configured.
fn initial_nodes(
    cfg: &DaemonConfig,
    rm: &mut dyn ResourceManager,
) -> anyhow::Result<Vec<arches_core::Node>> {
    if cfg.compute_rm.1 != "SLURM" {
        return Ok(if cfg.nodes.is_empty() {
            rm.nodes()?
        } else {
            cfg.nodes.clone()
        });
    }
    let mut nodes = rm.nodes()?;
    for n in &mut nodes {
        cfg.moab.overlay_node(n);
    }
    for name in cfg.moab.configured_node_names() {
        if !nodes.iter().any(|n| n.name == name) {
            tracing::warn!(
                node = name,
                "NODECFG[{name}]: {} does not report this node; ignored",
                cfg.compute_rm.0
            );
        }
    }
    Ok(nodes)
}

/// The job an event is about.
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

/// The backend's view of a job's execution record.
pub(crate) fn exec_spec(
    user: &str,
    class: Option<String>,
    rec: &ExecRecord,
    payload: Payload,
) -> ExecSpec {
    ExecSpec {
        script: payload.script,
        shell: rec.shell.clone(),
        workdir: rec.workdir.clone(),
        stdout: rec.stdout.clone(),
        stderr: rec.stderr.clone(),
        join: rec.join,
        env: payload.env,
        user: user.to_string(),
        uid: rec.uid,
        gid: rec.gid,
        groups: rec.groups.clone(),
        class,
        args: rec.args.clone(),
        umask: rec.umask,
        interactive: false,
    }
}
