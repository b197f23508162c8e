//! The simulation loop: a virtual clock jumping from event to event, driving
//! `arches_core` through the simulated backend ([`arches_rm::sim::SimRm`]).
//!
//! Synchronous and deterministic: no threads, no sleeping, no hash-map order.
//! Event order copies pyss (the reference simulator) exactly:
//!
//! 1. jobs whose planned end (start + wall-clock limit) is the current instant
//!    are released first — in pyss's availability profile their processors
//!    are free at that instant whatever the event order;
//! 2. submissions at this instant, in submit then job-number order, each
//!    followed by a scheduling iteration;
//! 3. terminations at this instant, in the order the jobs started, each
//!    followed by an iteration if it changed anything (pyss schedules after
//!    every submission and termination event, not once per timestamp);
//! 4. starts take effect immediately (the backend schedules their completion).
//!
//! Finished jobs are recorded and purged from the [`State`] so iterations stay
//! cheap. [`Simulation::run_until`] stops the clock part-way and keeps the
//! state for inspection (the daemon serves it).

use std::collections::BTreeSet;
use std::sync::Arc;

use arches_config::RuntimePrediction;
use arches_core::policy::ReservationPolicy;
use arches_core::state::JobChange;
use arches_core::{
    schedule, schedule_lean_in, Alloc, CompletionCode, DependencyKind, Event, EventError, Job,
    JobId, LeanPlan, Name, Node, Plan, PlannedReservation, Policy, Request, Secs, Start, StartKind,
    State, Time,
};
use arches_rm::sim::SimRm;
use arches_rm::{Observation, RmError};

use crate::metrics::{summarize, JobRecord, SkippedEntry, Summary};
use crate::predict::Predictor;
use crate::swf::{Trace, TraceJob};
use crate::workload::SimJob;

/// Why a simulation stopped with an error (a bug in a driver or the core:
/// the core refused an event the simulator derived from its own plan).
#[derive(Debug, thiserror::Error)]
pub enum SimError {
    #[error("at t={at}: the core refused an event for job {job}: {source}")]
    Core {
        at: Time,
        job: JobId,
        source: EventError,
    },
    #[error("at t={at}: the simulated backend refused job {job}: {source}")]
    Backend {
        at: Time,
        job: JobId,
        source: RmError,
    },
}

/// A job the simulator could not replay.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkippedJob {
    pub id: JobId,
    pub reason: String,
}

/// A machine of `procs` processors in nodes of `per_node` (the last node
/// takes the remainder). One node holding every processor is the flat
/// processor pool of trace simulators such as pyss.
pub fn machine(procs: u32, per_node: u32) -> Vec<Node> {
    let per_node = per_node.max(1);
    let mut nodes = Vec::new();
    let mut left = procs;
    while left > 0 {
        let p = left.min(per_node);
        nodes.push(Node::new(&format!("node{:04}", nodes.len() + 1), p, 0));
        left -= p;
    }
    nodes
}

/// A running (or finished) simulation.
#[derive(Debug)]
pub struct Simulation {
    pub(crate) state: State,
    policy: Policy,
    pub(crate) rm: SimRm,
    pub(crate) now: Time,
    /// The jobs to submit, in submission order (`next` is the next one).
    pending: Pending,
    next: usize,
    total_procs: u32,
    max_node_procs: u32,
    /// Jobs other jobs depend on: kept in the state after they finish.
    keep: BTreeSet<JobId>,
    /// Usage accounting of finished jobs (showstats of a served
    /// simulation), when enabled with [`Simulation::enable_accounting`].
    accounting: Option<(
        arches_core::accounting::Accounting,
        arches_core::accounting::FsWindow,
    )>,
    /// The fairshare usage kept from one iteration to the next (invalidated
    /// whenever the accounting records a job or is handed out mutably).
    decayed: arches_core::accounting::DecayedUsage,
    pub(crate) meta: std::collections::HashMap<JobId, Meta, IdHash>,
    last_plan: LastPlan,
    records: Vec<JobRecord>,
    skipped: Vec<SkippedJob>,
    iterations: u64,
    /// Iterations that were not lean ones reading only decisions (the full
    /// iteration, or a lean plan with every reservation for data staging).
    complete_plans: u64,
    dirty: bool,
    /// Run-time prediction (`RUNTIMEPREDICTION`; off by default).
    predictor: Predictor,
    /// Always run the full iteration (plans with every job's decision, for
    /// `--serve`); otherwise the lean one where the policy allows it.
    full_plans: bool,
    /// [`arches_core::lean::lean_supported`] of `policy` (checked when the
    /// policy changes, not every iteration).
    lean_ok: bool,
    /// The lean iterations' storage, kept from one to the next.
    lean: arches_core::LeanScratch,
    /// Preemption statistics ([`crate::preempt`]).
    pub(crate) preempt: crate::preempt::PreemptStats,
    /// Iterations skipped because nothing could start
    /// ([`Simulation::quiet_allowed`]; counted in `iterations` too).
    quiet_iterations: u64,
    /// Consecutive wake-ups at reservation edges with nothing else
    /// happening (bounded by [`MAX_RSV_WAKES`]).
    rsv_idle_wakes: u32,
    /// `--staging`: the modelled storage and the core's staging decisions.
    staging: Option<crate::staging::SimStaging>,
    /// Unix time of the workload's time 0 ([`Simulation::start_at`]).
    origin: Time,
    /// Malleable jobs and resize requests ([`crate::elastic`]).
    pub(crate) elastic: crate::elastic::ElasticSim,
    /// Whether the policy can make a job a preemptor through its class or
    /// QoS (a QoS flag or `JOBFLAGS=PREEMPTOR`): when not, only a job's own
    /// flag can ([`arches_core::preempt::is_preemptor`] is not asked at
    /// every end). The policy's QoS and classes never change during a run.
    preemptor_config: bool,
    /// [`arches_core::qos::access_configured`] of the policy: when not, a
    /// job submitted without a QoS gets none (no `qos::assign` per job).
    qos_access: bool,
    /// The observations of an instant and which of them were handled
    /// first (kept from one instant to the next: no vectors per instant).
    ended_buf: Vec<Observation>,
    released_buf: Vec<bool>,
    /// Purged jobs no one else holds, whose allocations the next trace jobs
    /// take (at most [`SPARE_JOBS`]).
    spare: Vec<Arc<Job>>,
}

/// Most purged jobs kept for their allocations.
const SPARE_JOBS: usize = 16;

/// The plan of the last scheduling iteration. A lean iteration's plan is
/// kept as such: its [`Plan`] form (no decisions) is made only when asked
/// for ([`Simulation::last_plan`]), not once per iteration. Its starts'
/// allocations were moved into the state's start events; they are kept
/// here in one reused buffer ([`Moved`]) and put back in the plan form.
#[derive(Debug, Default)]
enum LastPlan {
    #[default]
    None,
    Full(Plan),
    Lean(LeanPlan, Moved, std::sync::OnceLock<Plan>),
}

impl LastPlan {
    fn plan(&self) -> Option<&Plan> {
        match self {
            LastPlan::None => None,
            LastPlan::Full(p) => Some(p),
            LastPlan::Lean(l, moved, full) => Some(full.get_or_init(|| {
                let mut plan = l.clone().into_plan();
                moved.restore(&mut plan.starts);
                plan
            })),
        }
    }

    /// The buffer of the moved allocations, empty, for the next lean plan.
    fn take_moved(&mut self) -> Moved {
        let mut moved = match self {
            LastPlan::Lean(_, m, _) => std::mem::take(m),
            _ => Moved::default(),
        };
        moved.allocs.clear();
        moved.ends.clear();
        moved
    }

    /// The plan's `(now, next_wakeup)`.
    fn wakeup(&self) -> Option<(Time, Option<Time>)> {
        match self {
            LastPlan::None => None,
            LastPlan::Full(p) => Some((p.now, p.next_wakeup)),
            // Only where time alone can change a decision (LeanPlan::next_change).
            LastPlan::Lean(l, ..) => Some((l.now, l.next_change)),
        }
    }
}

/// The allocations of a lean plan's starts, moved out of the plan into
/// the state's start events (no copy, no allocation per start), one after
/// the other: start `i`'s are `allocs[ends[i - 1]..ends[i]]`.
#[derive(Debug, Default)]
struct Moved {
    allocs: Vec<Alloc>,
    ends: Vec<usize>,
}

impl Moved {
    /// Records `alloc` as the next start's.
    fn push(&mut self, alloc: &[Alloc]) {
        self.allocs.extend_from_slice(alloc);
        self.ends.push(self.allocs.len());
    }

    /// Puts the recorded allocations back into `starts` (the plan's, in
    /// the order they were recorded).
    fn restore(&self, starts: &mut [Start]) {
        let mut from = 0;
        for (start, &end) in starts.iter_mut().zip(&self.ends) {
            start.alloc = self.allocs[from..end].to_vec();
            from = end;
        }
    }
}

/// The jobs a simulation replays, in submission order.
#[derive(Debug)]
enum Pending {
    /// Workload jobs (JSONL, a trace converted for data staging, or jobs a
    /// caller built).
    Jobs(Vec<SimJob>),
    /// A compact SWF trace (shared: the configurations of a sweep replay
    /// the same one) on a machine of `cap` processors; each job becomes a
    /// core job only when it is submitted.
    Trace {
        trace: std::sync::Arc<Trace>,
        cap: u32,
        names: Names,
    },
}

impl Pending {
    fn len(&self) -> usize {
        match self {
            Pending::Jobs(v) => v.len(),
            Pending::Trace { trace, .. } => trace.jobs.len(),
        }
    }

    /// Submit time of job `i` relative to the workload as stored (a trace's
    /// own times; jobs' times are moved by [`Simulation::start_at`]).
    fn submit(&self, i: usize) -> Option<Time> {
        match self {
            Pending::Jobs(v) => v.get(i).map(|j| j.submit),
            Pending::Trace { trace, .. } => trace.jobs.get(i).map(|j| j.submit),
        }
    }
}

/// Credential names of trace jobs (`user<N>`, `group<N>`, `queue<N>`), made
/// once per number.
#[derive(Debug, Default)]
struct Names {
    user: Vec<Name>,
    group: Vec<Name>,
    queue: Vec<Name>,
}

impl Names {
    /// A copy of the cached name (inline up to 24 bytes: no allocation).
    fn name(cache: &mut Vec<Name>, prefix: &str, n: i64) -> Name {
        let Some(i) = usize::try_from(n).ok().filter(|i| *i < 1 << 20) else {
            return Name::from(format!("{prefix}{n}"));
        };
        if i >= cache.len() {
            cache.resize(i + 1, Name::default());
        }
        if cache[i].is_empty() {
            cache[i] = Name::from(format!("{prefix}{n}"));
        }
        cache[i].clone()
    }

    /// The core job of a trace job submitted at `submit` (what
    /// [`SimJob::to_core`] of [`TraceJob::to_sim_job`] gives).
    fn core_job(
        &mut self,
        t: &TraceJob,
        procs: u32,
        submit: Time,
        spare: Option<Arc<Job>>,
    ) -> Arc<Job> {
        let user = if t.user >= 0 {
            Self::name(&mut self.user, "user", t.user)
        } else {
            Name::const_new("u")
        };
        // The names are moved in (`Job::new` would copy the user twice).
        let mut job = Job::new(t.id, "", Request::procs(procs), Some(t.walltime), submit);
        job.cred.user = user;
        job.cred.group = if t.group >= 0 {
            Self::name(&mut self.group, "group", t.group)
        } else {
            Name::const_new("g")
        };
        if t.queue >= 0 {
            job.cred.class = Some(Self::name(&mut self.queue, "queue", t.queue));
        }
        // Shared at once, as the state keeps it: in a purged job's
        // allocation when one is free (no allocation, one move into place).
        if let Some(mut a) = spare {
            if let Some(slot) = Arc::get_mut(&mut a) {
                *slot = job;
                return a;
            }
        }
        Arc::new(job)
    }
}

/// Hashing of job ids for the simulator's own per-job tables (looked up
/// several times per job, never iterated): the backend's one multiplication.
pub(crate) use arches_rm::sim::IdHash;

/// What the simulator records of a job at submission.
struct Incoming {
    id: JobId,
    submit: Time,
    procs: u32,
    layout: Option<(u32, u32)>,
    walltime: Secs,
    runtime: Secs,
}

/// With standing reservations (`SRCFG`) a queued job may wait for a window
/// to end with nothing running: the replay keeps waking at reservation
/// edges, but ends after this many such wake-ups in a row with no start,
/// completion or submission (a job that can never start).
pub const MAX_RSV_WAKES: u32 = 1000;

impl Simulation {
    /// A simulation of `jobs` (any order) on `nodes` under `policy`.
    pub fn new(nodes: Vec<Node>, policy: Policy, mut jobs: Vec<SimJob>) -> Self {
        jobs.sort_by_key(|j| (j.submit, j.id));
        // Jobs others depend on stay in the state once finished (a purged
        // job fails every dependency but `afterany`); a `before` carrier is
        // one: the job it names will wait for it.
        let keep = jobs
            .iter()
            .flat_map(|j| {
                j.depend.iter().map(move |d| {
                    if d.kind.reverse().is_some() {
                        j.id
                    } else {
                        d.job
                    }
                })
            })
            .collect();
        Self::with_pending(nodes, policy, Pending::Jobs(jobs), keep)
    }

    /// A simulation of a compact SWF trace on `nodes` under `policy`, the
    /// trace's processor counts capped at `cap` (the machine size the trace
    /// was converted for: [`TraceJob::procs_on`]). The same replay as
    /// [`Simulation::new`] with [`TraceJob::to_sim_job`] of every job,
    /// without holding them all as such: a job is built when submitted.
    pub fn from_trace(
        nodes: Vec<Node>,
        policy: Policy,
        trace: std::sync::Arc<Trace>,
        cap: u32,
    ) -> Self {
        let pending = Pending::Trace {
            trace,
            cap,
            names: Names::default(),
        };
        Self::with_pending(nodes, policy, pending, BTreeSet::new())
    }

    fn with_pending(
        nodes: Vec<Node>,
        mut policy: Policy,
        pending: Pending,
        keep: BTreeSet<JobId>,
    ) -> Self {
        // Nothing shows a replay's priority breakdowns unless it is served
        // ([`Simulation::set_full_plans`]): the queue is ordered by totals.
        policy.priority_components = false;
        // Nor reads any plan's decisions (unless served or staging data).
        policy.plan_decisions = false;
        let total_procs = nodes.iter().map(|n| n.procs).sum();
        let max_node_procs = nodes.iter().map(|n| n.procs).max().unwrap_or(0);
        let now = pending.submit(0).unwrap_or(0);
        let total_jobs = pending.len();
        let mut state = State::new(nodes.clone());
        state.set_lean_indexes(true);
        let lean_ok = arches_core::lean::lean_supported(&policy);
        let preemptor_config = arches_core::preempt::preemptor_configured(&policy);
        let qos_access = arches_core::qos::access_configured(&policy);
        Simulation {
            state,
            policy,
            rm: SimRm::new("sim", nodes),
            now,
            pending,
            next: 0,
            total_procs,
            max_node_procs,
            keep,
            accounting: None,
            decayed: arches_core::accounting::DecayedUsage::default(),
            meta: std::collections::HashMap::default(),
            last_plan: LastPlan::None,
            records: Vec::with_capacity(total_jobs),
            skipped: Vec::new(),
            iterations: 0,
            complete_plans: 0,
            dirty: false,
            predictor: Predictor::default(),
            full_plans: false,
            lean_ok,
            lean: arches_core::LeanScratch::default(),
            preempt: crate::preempt::PreemptStats::default(),
            rsv_idle_wakes: 0,
            staging: None,
            origin: 0,
            elastic: crate::elastic::ElasticSim::default(),
            preemptor_config,
            quiet_iterations: 0,
            qos_access,
            ended_buf: Vec::new(),
            released_buf: Vec::new(),
            spare: Vec::new(),
        }
    }

    /// Stages the jobs' input data ([`crate::staging`]).
    pub fn set_staging(&mut self, staging: crate::staging::SimStaging) {
        self.staging = Some(staging);
        // The staging driver reads the last plan's decisions.
        self.policy.plan_decisions = true;
    }

    /// What staging did so far (with `--staging`).
    pub fn staging_summary(&self) -> Option<crate::staging::StagingSummary> {
        self.staging.as_ref().map(|s| s.summary())
    }

    /// Places the workload's time 0 at the Unix time `origin` (an SWF
    /// header's `UnixStartTime`): every job's times move by `origin`, so the
    /// clock reads real dates — what a served simulation shows, and what
    /// calendar-bound policies (standing reservations) see. Only before the
    /// replay has started; [`Simulation::relative_records`] gives the
    /// records back relative to time 0.
    pub fn start_at(&mut self, origin: Time) {
        assert_eq!(self.next, 0, "start_at after the replay started");
        let by = origin - self.origin;
        // A trace's own times are kept: its jobs are dated when submitted.
        if let Pending::Jobs(jobs) = &mut self.pending {
            for j in jobs {
                j.submit += by;
                j.eligible_at = j.eligible_at.map(|t| t + by);
            }
        }
        self.now += by;
        self.origin = origin;
    }

    /// Unix time of the workload's time 0 (0 unless [`Simulation::start_at`]).
    pub fn origin(&self) -> Time {
        self.origin
    }

    /// Runs the full iteration ([`arches_core::schedule()`]) every time, so
    /// the last plan carries every queued job's decision (what `--serve`
    /// shows). By default the simulation runs the lean iteration
    /// ([`arches_core::schedule_lean`]) where the policy allows it: the same
    /// starts and reservations, without per-job decisions; the full
    /// iteration's decisions then carry priority totals without their
    /// components ([`Policy::priority_components`]).
    pub fn set_full_plans(&mut self, full: bool) {
        self.full_plans = full;
        self.policy.priority_components = full;
        self.policy.plan_decisions = full || self.staging.is_some();
        self.state.set_lean_indexes(!full);
    }

    /// The scheduler's state now.
    pub fn state(&self) -> &State {
        &self.state
    }

    /// Plans with predicted run times (`RUNTIMEPREDICTION USERMEAN2`, see
    /// [`crate::predict`]) instead of the requested walltimes.
    pub fn set_runtime_prediction(&mut self, kind: RuntimePrediction) {
        self.predictor = Predictor::new(kind);
        // The replay reports every start: the predictor looks at the
        // running jobs only when a prediction may have expired.
        self.predictor.track_starts();
    }

    /// What an expired prediction becomes (`PREDICTIONCORRECTION`); after
    /// [`Simulation::set_runtime_prediction`].
    pub fn set_prediction_correction(&mut self, correction: arches_config::PredictionCorrection) {
        self.predictor.set_correction(correction);
    }

    /// The scheduling policy.
    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    /// The plan of the last scheduling iteration. Made by the lean
    /// iteration (not served, no data staging), under `BACKFILLPOLICY NONE`
    /// with `CURRENTHIGHEST` it holds no reservation beyond the first job
    /// that could not start ([`arches_core::LeanScratch::set_decisions_only`]).
    pub fn last_plan(&self) -> Option<&Plan> {
        self.last_plan.plan()
    }

    /// The virtual clock.
    pub fn now(&self) -> Time {
        self.now
    }

    /// Processors of the simulated machine.
    pub fn total_procs(&self) -> u32 {
        self.total_procs
    }

    /// Scheduling iterations run so far.
    pub fn iterations(&self) -> u64 {
        self.iterations
    }

    /// How many of the iterations so far found that nothing could start
    /// and made no plan ([`arches_core::quiet`]; not with
    /// [`Simulation::set_full_plans`]).
    pub fn quiet_iterations(&self) -> u64 {
        self.quiet_iterations
    }

    /// How many of the iterations so far planned completely: the full
    /// iteration, or a lean one for data staging. The others were lean
    /// iterations whose plans hold only what decides the replay
    /// ([`arches_core::LeanScratch::set_decisions_only`]).
    pub fn complete_plans(&self) -> u64 {
        self.complete_plans
    }

    /// Finished jobs, in finish order.
    pub fn records(&self) -> &[JobRecord] {
        &self.records
    }

    /// Finished jobs, in finish order, with times relative to the
    /// workload's time 0 (the trace's own times).
    pub fn relative_records(&self) -> Vec<JobRecord> {
        let o = self.origin;
        self.records
            .iter()
            .map(|r| JobRecord {
                submit: r.submit - o,
                start: r.start - o,
                end: r.end - o,
                ..*r
            })
            .collect()
    }

    /// Jobs that could not be replayed (larger than the machine).
    pub fn skipped(&self) -> &[SkippedJob] {
        &self.skipped
    }

    /// Jobs submitted so far plus those still to come.
    pub fn total_jobs(&self) -> usize {
        self.pending.len()
    }

    /// When pending job `i` is submitted, on the simulation's clock.
    fn submit_time(&self, i: usize) -> Option<Time> {
        match &self.pending {
            Pending::Jobs(_) => self.pending.submit(i),
            Pending::Trace { .. } => self.pending.submit(i).map(|t| t + self.origin),
        }
    }

    /// Jobs submitted so far.
    pub fn submitted(&self) -> usize {
        self.next
    }

    /// The summary of the jobs finished so far (`sim_wall_s` is left to the
    /// caller, who knows what to time). Jobs still queued are listed as never
    /// started only once no event is left.
    pub fn summary(&self) -> Summary {
        let mut s = summarize(&self.records, self.total_procs);
        s.iterations = self.iterations;
        self.preempt.fill(&mut s);
        s.skipped = self
            .skipped
            .iter()
            .map(|k| SkippedEntry {
                job: k.id,
                reason: k.reason.clone(),
            })
            .collect();
        if self.next_event().is_none() {
            s.never_started = self.stranded();
        }
        s.malleable = self.elastic.report();
        s
    }

    /// Queued jobs left when nothing more can happen (they can never start).
    pub fn stranded(&self) -> Vec<JobId> {
        self.state.queued().map(|j| j.id).collect()
    }

    /// When the next event happens, if any.
    pub fn next_event(&self) -> Option<Time> {
        let submit = self.submit_time(self.next);
        let done = self.rm.next_completion();
        let wake = self
            .last_plan
            .wakeup()
            .and_then(|(_, w)| w)
            .filter(|t| *t > self.now && self.state.queued_count() > 0)
            .filter(|_| {
                submit.is_some()
                    || done.is_some()
                    || self.dated_job_waiting()
                    || (!self.policy.standing.is_empty() && self.rsv_idle_wakes < MAX_RSV_WAKES)
            });
        let staging = self
            .staging
            .as_ref()
            .and_then(|s| s.next_event(self.now))
            .filter(|_| self.state.queued_count() > 0);
        let resize = self.elastic.due.first().map(|d| d.0);
        let next = earliest(earliest(submit, done), wake);
        earliest(earliest(next, staging), resize)
    }

    /// Whether a queued job waits for a start date: with nothing running and
    /// nothing left to submit, only that can change a decision, so other
    /// wake-ups are ignored and a replay whose last jobs can never start ends.
    fn dated_job_waiting(&self) -> bool {
        self.state
            .queued()
            .any(|j| j.start_after.is_some_and(|t| t > self.now))
    }

    /// Processes the next `n` instants that have events; returns how many did.
    pub fn step(&mut self, n: usize) -> Result<usize, SimError> {
        for done in 0..n {
            let Some(t) = self.next_event() else {
                return Ok(done);
            };
            self.advance_to(t)?;
        }
        Ok(n)
    }

    /// Processes event instants until at least `n` more scheduling
    /// iterations have run (each instant completes: one with several events
    /// runs an iteration after each) or no event is left; returns the
    /// iterations run. Instants that need no iteration (nothing queued) pass
    /// without counting.
    pub fn step_iterations(&mut self, n: u64) -> Result<u64, SimError> {
        let start = self.iterations;
        while self.iterations - start < n {
            let Some(t) = self.next_event() else {
                break;
            };
            self.advance_to(t)?;
        }
        Ok(self.iterations - start)
    }

    /// Runs until no event is left.
    pub fn run(&mut self) -> Result<(), SimError> {
        while let Some(t) = self.next_event() {
            self.advance_to(t)?;
        }
        Ok(())
    }

    /// Runs every event at or before `until` (a time on the simulation's
    /// clock: [`Simulation::origin`] + seconds after the workload's start),
    /// then sets the clock to `until`.
    pub fn run_until(&mut self, until: Time) -> Result<(), SimError> {
        while self.step_until(usize::MAX, until)? > 0 {}
        self.now = self.now.max(until);
        Ok(())
    }

    /// Processes at most `n` event instants at or before `until`; returns
    /// how many it did (fewer than `n`: none is left before `until`). The
    /// clock is not moved to `until` (see [`Simulation::run_until`]).
    pub fn step_until(&mut self, n: usize, until: Time) -> Result<usize, SimError> {
        for done in 0..n {
            let Some(t) = self.next_event().filter(|t| *t <= until) else {
                return Ok(done);
            };
            self.advance_to(t)?;
        }
        Ok(n)
    }

    /// Handles every event at instant `t` (see the module doc for the order).
    fn advance_to(&mut self, t: Time) -> Result<(), SimError> {
        self.now = t;
        let mut ended = std::mem::take(&mut self.ended_buf);
        ended.clear();
        self.rm.observe_into(t, &mut ended);
        let submitting = self.submit_time(self.next) == Some(t);
        if ended.is_empty() && !submitting && self.rm.next_completion().is_none() {
            self.rsv_idle_wakes += 1;
        } else {
            self.rsv_idle_wakes = 0;
        }
        let mut released = std::mem::take(&mut self.released_buf);
        released.clear();
        released.resize(ended.len(), false);
        for (i, obs) in ended.iter().enumerate() {
            let job = observed_job(obs);
            let planned_end = self
                .meta
                .get(&job)
                .and_then(|m| m.start.map(|(s, _)| s + m.walltime));
            if planned_end == Some(t) {
                self.finish(obs)?;
                released[i] = true;
            }
        }
        while self.submit_time(self.next) == Some(t) {
            let i = self.next;
            self.next += 1;
            self.submit_pending(i)?;
            self.iterate()?;
        }
        for (i, obs) in ended.iter().enumerate() {
            if !released[i] {
                self.finish(obs)?;
            }
            if self.dirty {
                self.iterate()?;
            }
        }
        if ended.is_empty() && (self.dirty || self.next_is_wakeup(t)) {
            self.iterate()?;
        }
        self.ended_buf = ended;
        self.released_buf = released;
        // A transfer ended or is due to begin: the data waits change.
        if self.staging.as_ref().is_some_and(|s| s.due(t)) {
            self.rsv_idle_wakes = 0;
            self.iterate()?;
        }
        // Resize requests and releases of malleable jobs.
        if self.resize_due()? {
            self.predictor.forget_expiry_bound();
            self.rsv_idle_wakes = 0;
            self.iterate()?;
        }
        Ok(())
    }

    fn next_is_wakeup(&self, t: Time) -> bool {
        self.last_plan
            .wakeup()
            .is_some_and(|(now, wake)| wake == Some(t) && now < t)
    }

    /// Submits pending job `i`.
    fn submit_pending(&mut self, i: usize) -> Result<(), SimError> {
        let at = self.now;
        let (t, procs) = match &self.pending {
            Pending::Jobs(_) => {
                // Out of `self` while it is read (put back below, also on
                // error).
                let pending = std::mem::replace(&mut self.pending, Pending::Jobs(Vec::new()));
                let r = match &pending {
                    Pending::Jobs(jobs) => self.submit(&jobs[i]),
                    Pending::Trace { .. } => Ok(()),
                };
                self.pending = pending;
                return r;
            }
            // A trace job is a copy (only the names are borrowed below).
            Pending::Trace { trace, cap, .. } => {
                let t = trace.jobs[i];
                (t, t.procs_on(*cap))
            }
        };
        let incoming = Incoming {
            id: t.id,
            submit: at,
            procs,
            layout: None,
            walltime: t.walltime,
            runtime: t.runtime,
        };
        if let Some(reason) = self.too_big(&incoming) {
            self.skipped.push(SkippedJob { id: t.id, reason });
            return Ok(());
        }
        let core = match &mut self.pending {
            Pending::Trace { names, .. } => names.core_job(&t, procs, at, self.spare.pop()),
            Pending::Jobs(_) => return Ok(()),
        };
        self.submit_core(core, &incoming)
    }

    fn submit(&mut self, job: &SimJob) -> Result<(), SimError> {
        let incoming = Incoming {
            id: job.id,
            submit: job.submit,
            procs: job.procs,
            layout: job.layout,
            walltime: job.walltime,
            runtime: job.runtime,
        };
        if let Some(reason) = self.too_big(&incoming) {
            self.skipped.push(SkippedJob { id: job.id, reason });
            return Ok(());
        }
        let befores = match self.befores(job) {
            Ok(b) => b,
            Err(reason) => {
                self.skipped.push(SkippedJob { id: job.id, reason });
                return Ok(());
            }
        };
        if job.array.is_some() {
            return self.submit_array(job, &incoming);
        }
        self.submit_core(Arc::new(job.to_core()), &incoming)?;
        // `before:X` makes X wait for this job (as msub does).
        for (target, kind) in befores {
            let Some(mut depend) = self.state.job(target).map(|j| j.depend.clone()) else {
                continue;
            };
            // Once only, as the daemon's `apply_befores` (a line may name
            // the same job twice).
            let d = arches_core::Dependency { kind, job: job.id };
            if depend.contains(&d) {
                continue;
            }
            depend.push(d);
            let (at, change) = (self.now, JobChange::Depend(depend));
            self.state
                .apply(
                    Event::Modify {
                        job: target,
                        change,
                    },
                    at,
                )
                .map_err(|source| SimError::Core {
                    at,
                    job: target,
                    source,
                })?;
        }
        self.elastic.submitted(job);
        if let Some(st) = self.staging.as_mut() {
            let at = self.now;
            st.submitted(job, &mut self.state, at)
                .map_err(|source| SimError::Core {
                    at,
                    job: job.id,
                    source,
                })?;
        }
        Ok(())
    }

    /// Submits a job to the core and the simulated backend.
    fn submit_core(&mut self, mut core: Arc<Job>, job: &Incoming) -> Result<(), SimError> {
        // Not shared yet: changed in place.
        let j = Arc::make_mut(&mut core);
        j.estimate = self.predictor.predict(&j.cred.user, j.walltime);
        if j.cred.qos.is_none() && !self.qos_access {
            // What `qos::assign` gives a job asking for none when no
            // credential has a QoS default or list: none.
            return self.submit_assigned(core, job);
        }
        // The QoS as msub assigns it (arches_core::qos): the requested one
        // if the credentials grant it, else their default (QDEF). A trace
        // job asking for a QoS it may not use runs under its default, as
        // Moab does for jobs it learns from a resource manager; a name no
        // configuration knows is kept (it has no effect).
        let requested = j.cred.qos.take();
        match arches_core::qos::assign(&mut j.cred, &self.policy, requested.as_deref()) {
            Ok(()) => {}
            Err(arches_core::qos::QosError::Unknown(_)) => j.cred.qos = requested,
            Err(arches_core::qos::QosError::Denied { .. }) => {
                let _ = arches_core::qos::assign(&mut j.cred, &self.policy, None);
            }
        }
        self.submit_assigned(core, job)
    }

    /// Submits a job whose QoS is assigned.
    fn submit_assigned(&mut self, core: Arc<Job>, job: &Incoming) -> Result<(), SimError> {
        self.state
            .apply(Event::Submit(core), self.now)
            .map_err(|source| SimError::Core {
                at: self.now,
                job: job.id,
                source,
            })?;
        self.track(job.id, job);
        self.dirty = true;
        Ok(())
    }

    /// A JSONL array line: one array record; every sub-job has the line's
    /// size and run time (made jobs a window at a time by the iterations).
    fn submit_array(&mut self, job: &SimJob, incoming: &Incoming) -> Result<(), SimError> {
        let Some(spec) = job.array.clone() else {
            return Ok(());
        };
        let core = job.to_core();
        let a = arches_core::ArrayJob::new(job.id, core, spec.indices, spec.slot_limit);
        let ids: Vec<JobId> = (0..a.count()).map(|p| a.element_id(p)).collect();
        self.state
            .apply(Event::SubmitArray(Box::new(a)), self.now)
            .map_err(|source| SimError::Core {
                at: self.now,
                job: job.id,
                source,
            })?;
        for id in ids {
            self.track(id, incoming);
        }
        self.dirty = true;
        Ok(())
    }

    /// Job `id` runs as `job` says (its run time, and what its record needs).
    fn track(&mut self, id: JobId, job: &Incoming) {
        self.rm.set_runtime(id, job.runtime);
        self.meta.insert(
            id,
            Meta {
                submit: job.submit,
                procs: job.procs,
                walltime: job.walltime,
                runtime: job.runtime,
                start: None,
            },
        );
    }

    /// The jobs a workload job's `before` dependencies make wait, with the
    /// dependency each gets, or why msub would refuse the job
    /// ([`arches_core::eligibility::before_targets`]); `before` kinds of
    /// or on arrays are not replayed (refused too).
    fn befores(&self, job: &SimJob) -> Result<Vec<(JobId, DependencyKind)>, String> {
        let befores =
            arches_core::eligibility::before_targets(&self.state, &job.user, &job.depend)?;
        if let Some((target, _)) = befores
            .iter()
            .find(|(t, _)| job.array.is_some() || self.state.array(*t).is_some())
        {
            return Err(format!(
                "cannot make job {target} wait for this one: before dependencies of or on arrays are not replayed"
            ));
        }
        Ok(befores)
    }

    fn too_big(&self, job: &Incoming) -> Option<String> {
        if job.procs > self.total_procs {
            return Some(format!(
                "needs {} processors, the machine has {}",
                job.procs, self.total_procs
            ));
        }
        if let Some((nodes, ppn)) = job.layout {
            let fitting = self.state.nodes().iter().filter(|n| n.procs >= ppn).count();
            if ppn > self.max_node_procs || nodes as usize > fitting {
                return Some(format!(
                    "needs {nodes} nodes of {ppn} processors, the machine has {fitting} such nodes"
                ));
            }
        }
        None
    }

    /// One scheduling iteration; its starts take effect now. When the plan
    /// requeued victims that a preemptor waits for, a second iteration at
    /// the same instant starts it (the simulated backend ends them at once).
    fn iterate(&mut self) -> Result<(), SimError> {
        let mut requeues = 0;
        loop {
            let active = self.state.active_count();
            let requeued = self.iterate_once()?;
            // Array sub-jobs made after this iteration's starts may start
            // at once (each such pass started jobs: it ends).
            let made = self.state.expand_arrays(self.now);
            let started = self.state.active_count() > active;
            // A start may also let a job that depends on it go
            // (`after`): the next iteration, as Moab's, sees it now.
            if started
                && (!made.is_empty()
                    || arches_core::eligibility::start_releases_dependents(&self.state, self.now))
            {
                continue;
            }
            requeues += 1;
            if !requeued || requeues >= 3 {
                break;
            }
        }
        Ok(())
    }

    fn iterate_once(&mut self) -> Result<bool, SimError> {
        self.dirty = false;
        self.state.expand_arrays(self.now);
        if self.state.queued_count() == 0
            && self.preempt.suspended == 0
            && self.elastic.running == 0
        {
            return Ok(false);
        }
        self.correct_predictions()?;
        if self.quiet_allowed() && arches_core::quiet::nothing_can_start(&self.state, &self.policy)
        {
            // No plan could start or change anything now, nor at any instant
            // before the next event (the free processors and the queue stay
            // as they are, and the corrections made then would be the ones
            // the next iteration makes): no plan, no wake-up.
            self.iterations += 1;
            self.quiet_iterations += 1;
            self.last_plan = LastPlan::Full(Plan {
                now: self.now,
                ..Plan::default()
            });
            return Ok(false);
        }
        if let Some(st) = self.staging.as_mut() {
            let at = self.now;
            st.before(&mut self.state, self.last_plan.plan(), at)
                .map_err(|source| SimError::Core { at, job: 0, source })?;
        }
        self.update_fairshare();
        let lean = if self.full_plans || !self.lean_ok {
            None
        } else {
            // Data staging reads the reservations of the last plan.
            self.lean.set_decisions_only(self.staging.is_none());
            schedule_lean_in(&self.state, &self.policy, self.now, &mut self.lean)
        };
        self.iterations += 1;
        let mut plan = match lean {
            // A lean plan has only starts and reservations (no preemption,
            // resume, lock, walltime restore or grow): applied as it is.
            Some(mut lean) if self.staging.is_none() => {
                self.take_requeues()?;
                let mut moved = self.last_plan.take_moved();
                let applied = self
                    .apply_starts(&mut lean.starts, Some(&mut moved))
                    .and_then(|()| self.remember(&lean.reservations));
                if let Err(e) = applied {
                    // Its allocations' buffer was taken: no last plan.
                    self.last_plan = LastPlan::None;
                    return Err(e);
                }
                // Replaced in place when the last plan was lean too (the
                // enum, with room for a full plan, is not moved).
                match &mut self.last_plan {
                    LastPlan::Lean(old, old_moved, full) => {
                        let old = std::mem::replace(old, lean);
                        *old_moved = moved;
                        *full = std::sync::OnceLock::new();
                        self.lean.recycle(old);
                    }
                    last => *last = LastPlan::Lean(lean, moved, std::sync::OnceLock::new()),
                }
                return Ok(false);
            }
            Some(lean) => {
                self.complete_plans += 1;
                lean.into_plan()
            }
            None => {
                self.complete_plans += 1;
                schedule(&self.state, &self.policy, self.now)
            }
        };
        let requeued = self.apply_preemptions(&plan)?;
        if !(plan.preemptions.is_empty()
            && plan.resumes.is_empty()
            && plan.locks.is_empty()
            && plan.restore_walltime.is_empty()
            && plan.elastic.grows.is_empty())
        {
            // Running jobs' expiries or limits may change otherwise than
            // by a start: the predictor looks at them all next time.
            self.predictor.forget_expiry_bound();
        }
        // Expired virtual wall-clock limits: the real limit is back.
        for &job in &plan.restore_walltime {
            let change = arches_core::state::JobChange::VirtualWalltime(None);
            let at = self.now;
            self.state
                .apply(Event::Modify { job, change }, at)
                .map_err(|source| SimError::Core { at, job, source })?;
        }
        self.apply_starts(&mut plan.starts, None)?;
        self.apply_grows(&plan.elastic.grows)?;
        self.remember(&plan.reservations)?;
        if let Some(st) = self.staging.as_mut() {
            st.after(&plan, self.now);
        }
        self.last_plan = LastPlan::Full(plan);
        Ok(requeued)
    }

    /// Starts a plan's jobs now. With `moved`, each start's allocation is
    /// moved into its start event and recorded there (the plan keeps
    /// none); without, it is copied.
    fn apply_starts(
        &mut self,
        starts: &mut [Start],
        mut moved: Option<&mut Moved>,
    ) -> Result<(), SimError> {
        for start in starts {
            // The simulated backend needs only the limit and the processors
            // of a launch (the processors scale a resized run).
            let walltime = self.meta.get(&start.job).map(|m| m.walltime);
            let procs = start.alloc.iter().map(|a| a.procs).sum::<u32>();
            let at = self.now;
            self.rm
                .start_job(start.job, walltime, procs, at)
                .map_err(|source| SimError::Backend {
                    at,
                    job: start.job,
                    source,
                })?;
            let nodes = start.alloc.len() as u32;
            let alloc = match moved.as_deref_mut() {
                Some(m) => {
                    m.push(&start.alloc);
                    std::mem::take(&mut start.alloc)
                }
                None => start.alloc.clone(),
            };
            self.state
                .apply(
                    Event::Start {
                        job: start.job,
                        alloc,
                        kind: start.kind,
                    },
                    at,
                )
                .map_err(|source| SimError::Core {
                    at,
                    job: start.job,
                    source,
                })?;
            if let Some(v) = start.virtual_walltime {
                let change = arches_core::state::JobChange::VirtualWalltime(Some(v));
                self.state
                    .apply(
                        Event::Modify {
                            job: start.job,
                            change,
                        },
                        at,
                    )
                    .map_err(|source| SimError::Core {
                        at,
                        job: start.job,
                        source,
                    })?;
            }
            if self.predictor.enabled() {
                let job = self.state.job(start.job);
                let run = job.and_then(|j| j.run.as_ref());
                let began = run.map_or(at, |r| r.start_time + r.suspended_secs);
                self.predictor.started(began, job.and_then(|j| j.estimate));
                if start.virtual_walltime.is_some() {
                    self.predictor.forget_expiry_bound();
                }
            }
            if let Some(m) = self.meta.get_mut(&start.job) {
                m.start = Some((at, start.kind));
                self.elastic.started(start.job, procs, at, at - m.submit);
            }
            if let Some(st) = self.staging.as_mut() {
                st.started(start.job, nodes, at);
            }
        }
        Ok(())
    }

    /// HIGHEST keeps reservations across iterations (pyss's conservative
    /// backfill): a plan's reservations are handed back to the state.
    fn remember(&mut self, reservations: &[PlannedReservation]) -> Result<(), SimError> {
        if self.policy.reservation_policy == ReservationPolicy::Highest {
            let kept = reservations.iter().map(|r| (r.job, r.start)).collect();
            let at = self.now;
            self.state
                .remember_reservations(kept)
                .map_err(|source| SimError::Core { at, job: 0, source })?;
        }
        Ok(())
    }

    fn finish(&mut self, obs: &Observation) -> Result<(), SimError> {
        let (job, code) = match obs {
            Observation::Finished { job, code, .. }
            | Observation::WalltimeExceeded { job, code, .. } => (*job, *code),
            _ => return Ok(()),
        };
        let at = self.now;
        let core = |source| SimError::Core { at, job, source };
        self.state
            .apply(
                Event::Finish {
                    job,
                    code: CompletionCode::Exit(code),
                },
                at,
            )
            .map_err(core)?;
        self.rm.forget(job);
        // The finished job leaves the state now, unless a dependency needs
        // it (its end keeps its start time, credentials and suspension
        // time): read from what the purge hands back, else looked up.
        let purged = if self.keep.contains(&job) {
            None
        } else {
            Some(self.state.purge(job).map_err(core)?)
        };
        let (suspended, preemptor) = match purged.as_deref().or_else(|| self.state.job(job)) {
            Some(j) => {
                let ran = j.run.as_ref().map_or(0, |r| at - r.start_time);
                self.predictor.completed(job, &j.cred.user, ran);
                if let Some((acc, fs)) = self.accounting.as_mut() {
                    self.decayed.record(acc, j, at, fs);
                }
                (
                    j.run.as_ref().map_or(0, |r| r.suspended_secs),
                    (self.preemptor_config || j.flags.contains(arches_core::JobFlag::Preemptor))
                        && arches_core::preempt::is_preemptor(j, &self.policy),
                )
            }
            None => (0, false),
        };
        if let Some(st) = self.staging.as_mut() {
            st.ended(job);
        }
        if let Some(m) = self.meta.remove(&job) {
            let (start, kind) = m.start.unwrap_or((at, StartKind::Priority));
            let busy = (at - start - suspended).max(0);
            let elastic_proc_s = self.elastic.ended(job, at, m.procs, busy);
            self.records.push(JobRecord {
                id: job,
                submit: m.submit,
                start,
                end: at,
                procs: m.procs,
                walltime: m.walltime,
                runtime: m.runtime,
                backfilled: kind == StartKind::Backfill,
                suspended,
                elastic_proc_s,
            });
            if preemptor {
                self.preempt.preemptor_waits.push(start - m.submit);
            }
        }
        // A trace job may take its allocation (a workload job is built
        // otherwise).
        if let (Some(j), Pending::Trace { .. }) = (purged, &self.pending) {
            if self.spare.len() < SPARE_JOBS && Arc::strong_count(&j) == 1 {
                self.spare.push(j);
            }
        }
        self.dirty = true;
        Ok(())
    }
}

impl Simulation {
    /// Keeps `acc` as the accounting of every job that finishes from now
    /// on: showstats-style ([`arches_core::accounting::Accounting::new`], a
    /// period starting at its `since`), or the fairshare intervals alone
    /// ([`arches_core::accounting::Accounting::fairshare_only`]). Fairshare
    /// priorities and caps ([`arches_core::fairshare`]) use this usage:
    /// without accounting a fairshare policy sees no usage (every factor 0).
    /// `moab simulate` enables it for fairshare alone with the
    /// configuration's window when fairshare is active; `--serve` replaces
    /// it with a whole one, which showstats and mdiag -f show.
    pub fn enable_accounting(
        &mut self,
        acc: arches_core::accounting::Accounting,
        fs: arches_core::accounting::FsWindow,
    ) {
        self.accounting = Some((acc, fs));
        self.decayed.invalidate();
    }

    /// Whether an iteration that can start nothing may be skipped
    /// ([`arches_core::quiet`]): only its starts are read (no served views,
    /// no data staging reading its reservations), it is a full one (a lean
    /// one costs less than the test), `RESERVATIONPOLICY HIGHEST` does not
    /// remember its reservations, and the predictions' corrections do not
    /// depend on the instants a plan would have woken at.
    fn quiet_allowed(&self) -> bool {
        !self.full_plans
            && !self.lean_ok
            && self.staging.is_none()
            && self.policy.reservation_policy != ReservationPolicy::Highest
            && self.predictor.corrections_timeless(&self.state)
    }

    /// Fairshare: the decayed usage at `now` (completed jobs and the running
    /// ones up to now) for the priorities and caps of this iteration, as the
    /// daemon computes it. Needs the accounting ([`Simulation::enable_accounting`]);
    /// nothing to do unless [`arches_core::fairshare::active`].
    fn update_fairshare(&mut self) {
        if !arches_core::fairshare::active(&self.policy) {
            return;
        }
        if !self.full_plans
            && arches_core::fairshare::usage_decides_nothing(&self.state, &self.policy)
        {
            // The next update computes the usage for its own instant all
            // the same (nothing is carried from one update to the next).
            return;
        }
        if let Some((acc, fs)) = self.accounting.as_ref() {
            // Drop the references the policy and the last plan hold, so the
            // update changes the usage in place instead of copying it (the
            // last plan is replaced by this iteration's).
            self.policy.fairshare.usage = Default::default();
            if let LastPlan::Full(p) = &mut self.last_plan {
                p.fairshare = None;
            }
            self.decayed
                .count_active_work(arches_core::fairshare::uses_active_work(&self.policy));
            self.decayed
                .update(acc, self.state.active_shared(), fs, self.now);
            let usage = self.decayed.usage().clone();
            self.policy.fairshare.set_usage(usage);
            self.lean_ok = arches_core::lean::lean_supported(&self.policy);
        }
    }

    /// The accounting enabled with [`Simulation::enable_accounting`].
    pub fn accounting(&self) -> Option<&arches_core::accounting::Accounting> {
        self.accounting.as_ref().map(|a| &a.0)
    }

    /// The same, to configure it (the statistics profile).
    pub fn accounting_mut(&mut self) -> Option<&mut arches_core::accounting::Accounting> {
        self.decayed.invalidate();
        self.accounting.as_mut().map(|a| &mut a.0)
    }

    /// Extends the expired predictions of running jobs (EASY++ correction)
    /// so that planning never assumes a running job has already ended.
    fn correct_predictions(&mut self) -> Result<(), SimError> {
        let now = self.now;
        for (job, next) in self.predictor.corrections(&self.state, now) {
            self.state
                .apply(
                    Event::Modify {
                        job,
                        change: JobChange::Estimate(Some(next)),
                    },
                    now,
                )
                .map_err(|source| SimError::Core {
                    at: now,
                    job,
                    source,
                })?;
        }
        Ok(())
    }
}

#[derive(Debug, Clone, Copy)]
pub(crate) struct Meta {
    pub(crate) submit: Time,
    procs: u32,
    walltime: Secs,
    runtime: Secs,
    pub(crate) start: Option<(Time, StartKind)>,
}

/// The earlier of two optional times.
fn earliest(a: Option<Time>, b: Option<Time>) -> Option<Time> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, None) => a,
        (None, b) => b,
    }
}

fn observed_job(obs: &Observation) -> JobId {
    match obs {
        Observation::Running { job, .. }
        | Observation::Finished { job, .. }
        | Observation::WalltimeExceeded { job, .. }
        | Observation::StartFailed { job, .. }
        | Observation::NodeFailed { job, .. }
        | Observation::Vanished { job, .. }
        | Observation::Note { job, .. }
        | Observation::CpuUsed { job, .. }
        | Observation::Requeued { job, .. }
        | Observation::WalltimeRefused { job, .. }
        | Observation::OperationFailed { job, .. } => *job,
        Observation::NodeChanged { .. } => 0,
    }
}
