//! One scheduling iteration: `schedule(&State, &Policy, now) -> Plan`.
//!
//! Reservations and backfill are one algorithm (Moab §8.2, pyss EASY and
//! conservative):
//!
//! 1. order the queue by priority ([`crate::priority`]); holds, start dates
//!    and dependencies block jobs ([`crate::eligibility`]);
//! 2. walk the queue: while nothing has been blocked, start every job that
//!    fits now (`StartKind::Priority`). A job that does not fit gets a
//!    reservation at its earliest start while its reservation bucket
//!    (`RESERVATIONDEPTH`/`RESERVATIONQOSLIST`) has room; the reservation is
//!    subtracted from the availability profile, so later jobs may only start
//!    if they do not delay it;
//! 3. jobs after the first blocked one are backfill candidates: a job still
//!    inside its bucket's depth starts if it fits without delaying anything
//!    (conservative backfill), otherwise gets its reservation; beyond the
//!    depth, `BACKFILLPOLICY` decides: FIRSTFIT starts every candidate that
//!    fits in queue order (pyss's EASY; with `BFORDER WIDESTWINDOWFIRST`,
//!    once every reservation is placed, it traverses the backfill windows
//!    widest first as Moab §8.2.2 describes), BESTFIT and GREEDY choose by
//!    `BACKFILLMETRIC` ([`crate::backfill`]), NONE starts nothing out of order (strict
//!    priority: with depth 1 this is FCFS), PREEMPT is FIRSTFIT that also
//!    starts jobs optimistically on what is free now ([`crate::preempt`]).
//!
//! A job without a wall-clock limit never backfills. A job that would get
//! a reservation but has no computable start (it waits for a job without
//! a wall-clock limit) takes its place in the depth and holds every
//! processor from now on: nothing backfills into what it waits for (LSF:
//! "cannot backfill if the big job is waiting for a job that has no run
//! limit"); later jobs say so (`WaitsBehindNoWalltime`).
//!
//! Preemptors that do not fit, and under PREEMPT backfill jobs within the
//! reservation depth, may preempt running jobs ([`crate::preempt`]);
//! suspended jobs resume before the walk.
//!
//! With credential limits configured the walk runs twice, as Moab does: jobs
//! within their soft limits first, then the jobs within their hard limits.
//! Backfill honours the limits too.
//!
//! `RESERVATIONPOLICY CURRENTHIGHEST` recomputes every reservation each
//! iteration (a reservation slides forward when jobs end early, and a
//! higher-priority job may take a lower one's slot). `HIGHEST` keeps them:
//! the reservations remembered in the state
//! ([`State::remember_reservations`]) are held in the profile and
//! each job can only move its own earlier (pyss's conservative compression);
//! when no job ended since they were remembered
//! ([`State::reservations_may_compress`]) they stay exactly where they are
//! and only new jobs are placed around them, as pyss does between
//! terminations.
//! `NEVER` makes no reservations: any job that fits starts.

use crate::backfill::{self, Candidate};
use crate::context::Ctx;
use crate::eligibility::{check_static, has_limits, planned_end, planning_duration, Tally, Usage};
use crate::job::{Alloc, Job, JobState, StartKind};
use crate::plan::{BlockReason, Decision, Plan, PlannedReservation, PriorityBreakdown, Start};
use crate::policy::{
    BackfillPolicy, Policy, PolicyLevel, PreemptPolicy, QosFlag, ReservationPolicy,
    VirtualWalltimeConflictPolicy,
};
use crate::priority::{queue_order, QueuePriority};
use crate::profile::Amount;
use crate::state::State;
use crate::{Secs, Time};

/// Runs one iteration. Pure: equal inputs give equal plans.
///
/// Jobs backfilled on a virtual wall-clock limit
/// (`BFVIRTUALWALLTIMESCALINGFACTOR`) are planned to end when it expires;
/// once it has, the plan restores their real limit
/// ([`Plan::restore_walltime`]). Under `BFVIRTUALWALLTIMECONFLICTPOLICY
/// NONE` the reservations the real limit overlaps are simply planned
/// later; under `PREEMPT` a scaled job whose real limit would delay a
/// reservation is requeued instead (a [`Plan::preemptions`] entry with
/// its reason), and the plan is made as if it were gone right after now:
/// like every requeued job it keeps its processors until the resource
/// manager reports it ended (`Event::Terminate`), so nothing starts on them
/// in this plan and the delayed reservation moves up to `now + 1`.
///
/// `PREDICTIONGUARD` ([`Policy::prediction_guard`]): when a job that gets a
/// reservation in the plan made with the estimates has waited at least the
/// guard since its submission, the iteration is planned again with every
/// job's walltime (EASY's planning; estimates still order backfill
/// candidates) and that plan is the result. Once a reserved job is guarded
/// its reservation is computed from walltimes and no backfill may delay it
/// on the strength of a prediction, so it starts no later than EASY would
/// promise. Otherwise the plan wakes up when the first reserved job
/// reaches the guard.
pub fn schedule(state: &State, policy: &Policy, now: Time) -> Plan {
    let mut plan = crate::malleable::schedule(state, policy, now, schedule_rigid);
    if crate::fairshare::active(policy) {
        plan.fairshare = Some(policy.fairshare.usage.clone());
    }
    plan.deadline_misses = crate::deadline::misses(state, policy, &plan);
    plan
}

/// [`schedule`] of the jobs as they are (malleable jobs at their current
/// size; [`crate::malleable`] adds their growth).
fn schedule_rigid(state: &State, policy: &Policy, now: Time) -> Plan {
    let Some(guard) = policy
        .prediction_guard
        .filter(|_| !policy.estimates_ignored)
    else {
        return schedule_with(state, policy, now, None);
    };
    let walltimes = || Policy {
        estimates_ignored: true,
        ..policy.clone()
    };
    // Priorities do not depend on planning durations: a plan made again
    // with walltimes orders the queue as the first one did, with its
    // priorities.
    let queue = Queue::of(state, policy, now);
    let mut plan = if expired(state, now).is_empty() {
        // The walk stops at the first reservation of a job that waited the
        // guard (reservations are only ever added, so the finished plan
        // would hold it): its queue is planned again at once.
        match plan_queue(state, policy, now, &[], Release::Now, queue, Some(guard)) {
            Ok(plan) => plan,
            Err(queue) => return schedule_with(state, &walltimes(), now, Some(queue)),
        }
    } else {
        schedule_with(state, policy, now, Some(queue))
    };
    let reached: Vec<Time> = plan
        .reservations
        .iter()
        .filter_map(|r| state.job(r.job))
        .map(|j| j.submit_time.saturating_add(guard.max(0)))
        .collect();
    if reached.iter().any(|t| *t <= now) {
        let queue = Queue::from_plan(state, plan);
        return schedule_with(state, &walltimes(), now, queue);
    }
    plan.next_wakeup = plan.next_wakeup.into_iter().chain(reached).min();
    plan
}

/// [`schedule`] without the prediction guard; `queue`, when given, is the
/// queue [`Queue::of`] would order.
fn schedule_with<'a>(
    state: &'a State,
    policy: &'a Policy,
    now: Time,
    queue: Option<Queue<'a>>,
) -> Plan {
    let queue = queue.unwrap_or_else(|| Queue::of(state, policy, now));
    let expired = expired(state, now);
    let mut plan = plan_unguarded(state, policy, now, &[], Release::Now, queue);
    if expired.is_empty() {
        return plan;
    }
    let mut requeued: Vec<(crate::job::JobId, crate::job::JobId)> = Vec::new();
    if policy.bf_virtual_walltime_conflict == VirtualWalltimeConflictPolicy::Preempt {
        // The plan as the scaled jobs' virtual limits promised it: without
        // them. A reservation that comes earlier there is one their real
        // limits overlap.
        let probe = plan_with(state, policy, now, &expired, Release::Now);
        let when = |p: &Plan, id| {
            if p.starts.iter().any(|s| s.job == id) {
                Some(now)
            } else {
                p.reservation(id).map(|r| r.start)
            }
        };
        let mut delayed: Vec<(u32, crate::job::JobId, Time)> = plan
            .reservations
            .iter()
            .filter_map(|r| {
                let t = when(&probe, r.job).filter(|t| *t < r.start)?;
                Some((
                    plan.decisions.get(&r.job).map_or(u32::MAX, |d| d.rank),
                    r.job,
                    t,
                ))
            })
            .collect();
        delayed.sort_unstable();
        if let Some(&(_, by, t)) = delayed.first() {
            for j in &expired {
                let real_end = planned_end(j, policy, now).unwrap_or(Time::MAX);
                if real_end > t {
                    requeued.push((j.id, by));
                }
            }
        }
        if !requeued.is_empty() {
            let gone: Vec<&Job> = expired
                .iter()
                .copied()
                .filter(|j| requeued.iter().any(|(id, _)| *id == j.id))
                .collect();
            plan = plan_with(state, policy, now, &gone, Release::AfterNow);
            for &(job, by) in &requeued {
                plan.preemptions.push(crate::preempt::Preemption {
                    job,
                    by,
                    method: PreemptPolicy::Requeue,
                    requested: PreemptPolicy::Requeue,
                    reason: format!(
                        "virtual wall-clock limit expired and the real limit would overlap the reservation of job {by} (BFVIRTUALWALLTIMECONFLICTPOLICY PREEMPT)"
                    ),
                });
            }
        }
    }
    plan.restore_walltime = expired
        .iter()
        .map(|j| j.id)
        .filter(|id| !requeued.iter().any(|(j, _)| j == id))
        .collect();
    plan
}

/// The running jobs whose virtual wall-clock limit
/// (`BFVIRTUALWALLTIMESCALINGFACTOR`) has expired by `now`.
fn expired(state: &State, now: Time) -> Vec<&Job> {
    state
        .active()
        .filter(|j| j.state != JobState::Suspended)
        .filter(|j| {
            j.run
                .as_ref()
                .and_then(|r| r.virtual_end())
                .is_some_and(|v| v <= now)
        })
        .collect()
}

/// The queue of a walk stopped at a guarded reservation ([`plan_queue`]):
/// its entries' priorities go back to their jobs.
fn give_back<'a>(
    entries: Vec<Entry<'_>>,
    mut jobs: Vec<(&'a Job, PriorityBreakdown)>,
    order: Vec<u32>,
) -> Queue<'a> {
    for (e, &i) in entries.into_iter().zip(&order) {
        jobs[i as usize].1 = e.prio;
    }
    Queue { jobs, order }
}

/// When [`plan_with`] takes its `released` jobs off their resources.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Release {
    /// Now (what the plan would be without them).
    Now,
    /// Right after now: they still hold their resources at `now`, as a
    /// job being terminated for a requeue does until it is gone.
    AfterNow,
}

/// The idle queued jobs in priority order ([`queue_order`]).
struct Queue<'a> {
    /// Each job with its priority, in the state's (job id) order.
    jobs: Vec<(&'a Job, PriorityBreakdown)>,
    /// Indexes into `jobs`, in queue order.
    order: Vec<u32>,
}

impl<'a> Queue<'a> {
    /// The queue at `now`: one priority computation for the whole queue
    /// (what is the same for every job is worked out once).
    fn of(state: &'a State, policy: &'a Policy, now: Time) -> Self {
        let mut jobs: Vec<(&Job, PriorityBreakdown)> = Vec::with_capacity(state.queued_count());
        let mut prio = QueuePriority::new(policy, now);
        jobs.extend(
            state
                .queued()
                .filter(|j| j.state == JobState::Idle)
                .map(|job| (job, prio.of(job))),
        );
        Self::sorted(jobs)
    }

    /// The queue of `plan`, made by [`plan_queue`] from `state` at the same
    /// instant under a policy that differs only in the durations planning
    /// assumes (estimates or walltimes), which no priority depends on: its
    /// priorities taken back from the plan's decisions (one per queued job,
    /// by job id). `None` if they do not match the queue, as when the plan
    /// carries no decisions ([`Policy::plan_decisions`] off: the simulator):
    /// the queue is then ordered again.
    fn from_plan(state: &'a State, plan: Plan) -> Option<Self> {
        let mut decisions = plan.decisions.into_vec().into_iter();
        let mut jobs: Vec<(&Job, PriorityBreakdown)> = Vec::with_capacity(state.queued_count());
        for job in state.queued().filter(|j| j.state == JobState::Idle) {
            let (id, d) = decisions.next()?;
            if id != job.id {
                return None;
            }
            jobs.push((job, d.priority));
        }
        if decisions.next().is_some() {
            return None;
        }
        Some(Self::sorted(jobs))
    }

    /// Orders `jobs` (given in job id order): sorts compact keys (the
    /// large entries are built once, in order, by [`plan_queue`]).
    /// Guaranteed deadlines come first, earliest first
    /// ([`crate::deadline`]). The usual queue (no system priority, no
    /// deadline, submission times in job id order, totals within 2^32 of
    /// each other) sorts one `u64` per job: the total's distance below the
    /// highest, then the position, which is then the `(submit, id)` order.
    /// (A queue holds fewer than 2^32 jobs: positions are `u32`.)
    fn sorted(jobs: Vec<(&'a Job, PriorityBreakdown)>) -> Self {
        // One pass: whether the queue is the usual one, and its totals' range.
        let (mut plain, mut top, mut low) = (true, i64::MIN, i64::MAX);
        let mut submit = Time::MIN;
        for (j, p) in &jobs {
            plain &= !p.system && p.deadline.is_none() && j.submit_time >= submit;
            submit = j.submit_time;
            top = top.max(p.total);
            low = low.min(p.total);
        }
        let order: Vec<u32> = match u32::try_from(i128::from(top) - i128::from(low)) {
            Ok(_) if plain => {
                let mut keys: Vec<u64> = jobs
                    .iter()
                    .enumerate()
                    .map(|(i, (_, p))| (top.abs_diff(p.total) << 32) | i as u64)
                    .collect();
                keys.sort_unstable();
                keys.into_iter().map(|k| k as u32).collect()
            }
            _ => {
                let mut keys: Vec<(bool, Time, i64, Time, u64, usize)> = jobs
                    .iter()
                    .enumerate()
                    .map(|(i, (j, p))| {
                        let d = p.deadline.unwrap_or(Time::MAX);
                        (!p.system, d, -p.total, j.submit_time, j.id, i)
                    })
                    .collect();
                keys.sort_unstable();
                keys.into_iter().map(|k| k.5 as u32).collect()
            }
        };
        debug_assert!(order.windows(2).all(|w| {
            let (ja, pa) = &jobs[w[0] as usize];
            let (jb, pb) = &jobs[w[1] as usize];
            queue_order((ja, pa), (jb, pb)).is_lt()
        }));
        Queue { jobs, order }
    }
}

/// One iteration with the jobs of `released` taken off their resources
/// (as if requeued, see [`Release`]).
fn plan_with(state: &State, policy: &Policy, now: Time, released: &[&Job], when: Release) -> Plan {
    plan_unguarded(
        state,
        policy,
        now,
        released,
        when,
        Queue::of(state, policy, now),
    )
}

/// [`plan_queue`] without a prediction guard: it always plans.
fn plan_unguarded<'a>(
    state: &'a State,
    policy: &'a Policy,
    now: Time,
    released: &[&Job],
    when: Release,
    queue: Queue<'a>,
) -> Plan {
    match plan_queue(state, policy, now, released, when, queue, None) {
        Ok(plan) => plan,
        // Never taken: without a guard the walk does not stop early.
        Err(queue) => plan_unguarded(state, policy, now, released, when, queue),
    }
}

/// [`plan_with`] of the ordered `queue` ([`Queue::of`]). With a prediction
/// `guard`, the walk stops as soon as it reserves for a job that has waited
/// the guard since its submission, and gives the queue back (`Err`) to be
/// planned with walltimes ([`schedule`]).
fn plan_queue<'a>(
    state: &'a State,
    policy: &'a Policy,
    now: Time,
    released: &[&Job],
    when: Release,
    queue: Queue<'a>,
    guard: Option<Secs>,
) -> Result<Plan, Queue<'a>> {
    let Queue { mut jobs, order } = queue;
    let mut entries: Vec<Entry> = Vec::with_capacity(jobs.len());
    entries.extend(order.iter().map(|&i| {
        let (job, prio) = &mut jobs[i as usize];
        Entry {
            job,
            prio: std::mem::take(prio),
            reason: None,
            eligible: true,
            handled: false,
            started: false,
            waiting: false,
            held: None,
        }
    }));
    let fs_caps = policy.fairshare.enabled && crate::fairshare::has_caps(policy);
    for e in &mut entries {
        let checked = check_static(state, e.job, now).and_then(|()| {
            if fs_caps {
                crate::fairshare::check_caps(e.job, policy)
            } else {
                Ok(())
            }
        });
        if let Err(r) = checked {
            e.reason = Some(r);
            e.eligible = false;
            e.handled = true;
        }
    }
    let throttled = has_limits(policy) || state.has_slot_limits();
    // Jobs with a task request list, in each of their shapes (crate::trl).
    let trl: std::collections::BTreeMap<crate::job::JobId, Vec<Job>> = entries
        .iter()
        .filter(|e| !e.handled && !e.job.req.trl().is_empty())
        .map(|e| (e.job.id, crate::trl::variants(e.job)))
        .collect();
    let mut ctx = Ctx::new(state, policy, now);
    for j in released {
        ctx.release(j, false, false);
        if when == Release::AfterNow {
            let held = j.run.as_ref().map(|r| r.alloc.clone()).unwrap_or_default();
            ctx.commit_procs(j, j.procs(), now, Some(now + 1), &held);
        }
    }
    if policy.reservation_policy == ReservationPolicy::Highest {
        hold_remembered(&mut ctx, state, &mut entries);
    }
    let mut walk = Walk {
        ctx,
        usage: if throttled {
            Usage::from_state(state, policy, now)
        } else {
            Usage::default()
        },
        throttled,
        plan: Plan {
            now,
            ..Plan::default()
        },
        bucket_left: policy.reservation_buckets.iter().map(|b| b.depth).collect(),
        blocked: false,
        top_reservation: None,
        bf_considered: 0,
        candidates: Vec::new(),
        chunk_until: None,
        // A virtual limit expiring moves reservations too (NONE: the
        // overlapped ones are rescheduled).
        no_start_top: None,
        trl: &trl,
        deadline_job: false,
        guard,
        guarded: false,
        pinned: policy.reservation_policy == ReservationPolicy::Highest
            && !state.reservations_may_compress()
            && !state.active().any(|j| {
                j.run
                    .as_ref()
                    .and_then(|r| r.virtual_end())
                    .is_some_and(|v| v <= now)
            }),
    };
    let levels: &[PolicyLevel] = if throttled {
        &[PolicyLevel::Soft, PolicyLevel::Hard]
    } else {
        &[PolicyLevel::Hard]
    };
    crate::preempt::resume_suspended(&mut walk, &entries);
    for &level in levels {
        for i in 0..entries.len() {
            walk.consider(&mut entries, i, level);
            if walk.guarded {
                return Err(give_back(entries, jobs, order));
            }
        }
        // BESTFIT/GREEDY choose among this pass's candidates, under this
        // pass's limits: the soft pass's starts come before any job that
        // only the hard limits admit.
        if !walk.candidates.is_empty() {
            let cands = std::mem::take(&mut walk.candidates);
            backfill::select(&mut walk, &mut entries, cands, level);
            if walk.guarded {
                return Err(give_back(entries, jobs, order));
            }
        }
    }
    // Rank -> position in the queued iteration (job id order).
    Ok(walk.finish(entries, &order))
}

/// Queued jobs the driver may count as bypassed: eligible jobs that did not
/// start although a lower-priority job was backfilled ahead of them.
pub fn bypassed(plan: &Plan) -> Vec<crate::job::JobId> {
    let lowest_bf = plan
        .starts
        .iter()
        .filter(|s| s.kind == StartKind::Backfill)
        .filter_map(|s| plan.decisions.get(&s.job).map(|d| d.rank))
        .max();
    let Some(max_rank) = lowest_bf else {
        return Vec::new();
    };
    let mut out: Vec<(u32, crate::job::JobId)> = plan
        .decisions
        .iter()
        .filter(|(_, d)| d.eligible && d.reason.is_some() && d.rank < max_rank)
        .map(|(id, d)| (d.rank, *id))
        .collect();
    out.sort_unstable();
    out.into_iter().map(|(_, id)| id).collect()
}

/// Under `RESERVATIONPOLICY HIGHEST`, puts every remembered reservation of
/// a schedulable job back into the profile before the walk; each job takes
/// its own out again when the walk reaches it, so it can only move earlier.
fn hold_remembered(ctx: &mut Ctx<'_>, state: &State, entries: &mut [Entry<'_>]) {
    for e in entries.iter_mut().filter(|e| !e.handled) {
        let Some(t) = state.remembered_reservation(e.job.id) else {
            continue;
        };
        let Some(d) = planning_duration(e.job, ctx.policy) else {
            continue;
        };
        let start = t.max(ctx.now);
        let end = Some(start + d.max(1));
        ctx.agg.force_usage(
            start,
            end,
            Amount::procs(i64::from(e.job.req.total_procs())),
        );
        e.held = Some((start, end));
    }
}

/// A queued job during the walk.
pub(crate) struct Entry<'a> {
    pub job: &'a Job,
    pub prio: PriorityBreakdown,
    pub reason: Option<BlockReason>,
    pub eligible: bool,
    /// Decided in an earlier pass (or statically blocked).
    pub handled: bool,
    pub started: bool,
    /// A preemptor waiting for its terminating victims (resources held).
    pub waiting: bool,
    /// A remembered reservation held in the profile (HIGHEST).
    pub held: Option<(Time, Option<Time>)>,
}

/// The iteration's working state.
pub(crate) struct Walk<'a> {
    pub ctx: Ctx<'a>,
    usage: Usage,
    throttled: bool,
    pub plan: Plan,
    bucket_left: Vec<u32>,
    /// A job has failed to start: later starts are out of priority order.
    blocked: bool,
    /// The first reservation made (what backfill must not delay).
    top_reservation: Option<crate::job::JobId>,
    bf_considered: u32,
    /// Backfill candidates for BESTFIT/GREEDY.
    candidates: Vec<Candidate>,
    /// Backfill chunking: small jobs may not backfill before this time.
    chunk_until: Option<Time>,
    /// HIGHEST with no job ended since: remembered reservations stay put.
    pinned: bool,
    /// The first job that would hold a reservation but has no computable
    /// start (it waits for a job without a wall-clock limit).
    no_start_top: Option<crate::job::JobId>,
    /// The shapes of jobs with a task request list ([`crate::trl`]).
    trl: &'a std::collections::BTreeMap<crate::job::JobId, Vec<Job>>,
    /// The job considered has a guaranteed deadline: its reservation is
    /// beyond `RESERVATIONDEPTH` (it uses no bucket's depth).
    deadline_job: bool,
    /// `PREDICTIONGUARD` of the plan made with estimates: a reservation for
    /// a job submitted at least this long ago sets `guarded` and stops the
    /// walk ([`plan_queue`]).
    guard: Option<Secs>,
    guarded: bool,
}

impl<'a> Walk<'a> {
    /// Adds a reservation to the plan; under a prediction guard, one for a
    /// job that has waited the guard marks the walk `guarded`.
    fn reserve(&mut self, r: PlannedReservation) {
        if let Some(g) = self.guard {
            let now = self.ctx.now;
            let state = self.ctx.state;
            if state
                .job(r.job)
                .is_some_and(|j| j.submit_time.saturating_add(g.max(0)) <= now)
            {
                self.guarded = true;
            }
        }
        self.plan.reservations.push(r);
    }

    fn consider(&mut self, entries: &mut [Entry<'a>], i: usize, level: PolicyLevel) {
        if entries[i].handled || entries[i].started {
            return;
        }
        // A preemptor's locked resources are its own.
        let id = entries[i].job.id;
        let lifted = self.ctx.lift_lock(id);
        self.consider_inner(entries, i, level);
        if lifted && !entries[i].started && !entries[i].waiting {
            self.ctx.restore_lock(id);
        }
    }

    fn consider_inner(&mut self, entries: &mut [Entry<'a>], i: usize, level: PolicyLevel) {
        if let Some(vars) = self.trl.get(&entries[i].job.id).filter(|v| !v.is_empty()) {
            // The shape that completes first (crate::trl).
            let k = crate::trl::choose(&mut self.ctx, vars).unwrap_or(0);
            entries[i].job = &vars[k];
        }
        let job = entries[i].job;
        let policy = self.ctx.policy;
        let dur = planning_duration(job, policy);
        self.deadline_job = entries[i].prio.deadline.is_some();
        if self.throttled {
            if let Err(r) = self.usage.check(job, tally(job, dur), policy, level) {
                if level == PolicyLevel::Hard {
                    entries[i].eligible = false;
                    entries[i].handled = true;
                    self.release_held(entries, i);
                }
                entries[i].reason = Some(r);
                return;
            }
        }
        entries[i].handled = true;
        entries[i].reason = None;
        if self.pinned {
            if let Some((start, end)) = entries[i].held.filter(|h| h.0 > self.ctx.now) {
                // No job ended since: the kept reservation stays put.
                self.blocked = true;
                if let Some(b) = self.bucket_of(job) {
                    self.take_bucket(b);
                }
                self.top_reservation.get_or_insert(job.id);
                self.reserve(PlannedReservation {
                    job: job.id,
                    start,
                    end,
                    alloc: Vec::new(),
                });
                entries[i].held = None;
                entries[i].reason = Some(self.resources(job));
                return;
            }
        }
        self.release_held(entries, i);
        if let Err(why) = self.ctx.ever_fits(job) {
            entries[i].reason = Some(BlockReason::NeverFits(why));
            entries[i].eligible = false;
            return;
        }
        let bucket = self.bucket_of(job);
        let no_rsv = qos_flag(job, policy, QosFlag::NoReservation);
        // A guaranteed deadline always gets its reservation, whatever the
        // depth and the reservation policy ([`crate::deadline`]).
        let deadline = self.deadline_job;
        let can_reserve = deadline
            || (policy.reservation_policy != ReservationPolicy::Never
                && !no_rsv
                && bucket.is_some_and(|b| self.bucket_left[b] > 0));
        let bucket = if deadline { bucket.or(Some(0)) } else { bucket };

        if let Some(ready) = job.data_wait.and_then(|w| w.ready_at()) {
            if ready > self.ctx.now {
                let bucket = if can_reserve { bucket } else { None };
                self.reserve_after_data(entries, i, dur, ready, bucket);
                return;
            }
        }
        if (can_reserve && policy.backfill == BackfillPolicy::Preempt)
            || crate::preempt::is_preemptor(job, policy)
        {
            // Preemption (crate::preempt): only when it does not fit as is.
            if self.ctx.fit_now(job, dur).is_none()
                && crate::preempt::try_preempt(self, entries, i, dur, can_reserve)
            {
                return;
            }
        }
        if !self.blocked {
            if let Some(alloc) = self.ctx.fit_now(job, dur) {
                self.start(entries, i, alloc, dur, StartKind::Priority);
                return;
            }
            self.blocked = true;
            self.note_blocked(job);
            self.reserve_or_wait(entries, i, if can_reserve { bucket } else { None }, dur);
            return;
        }
        let bf = policy.backfill;
        if dur.is_none() {
            // Without a wall-clock limit a job only ever starts in priority
            // order: it neither backfills nor holds an endless reservation.
            entries[i].reason = Some(BlockReason::NoWalltime);
            return;
        }
        if can_reserve {
            // Inside the reservation depth: start it if it fits without
            // delaying anything (conservative backfill), else reserve.
            if bf != BackfillPolicy::None && self.backfill_ok(entries, i, dur).is_ok() {
                if let Some(alloc) = self.ctx.fit_now(job, dur) {
                    self.start(entries, i, alloc, dur, StartKind::Backfill);
                    return;
                }
            }
            self.note_blocked(job);
            self.reserve_or_wait(entries, i, bucket, dur);
            return;
        }
        if policy.reservation_policy == ReservationPolicy::Never && bf == BackfillPolicy::None {
            // No reservations and no backfill: strict priority order.
            entries[i].reason = Some(self.resources(job));
            return;
        }
        match bf {
            BackfillPolicy::None => entries[i].reason = Some(self.resources(job)),
            _ => {
                if let Err(r) = self.backfill_ok(entries, i, dur) {
                    entries[i].reason = Some(r);
                    return;
                }
                if matches!(bf, BackfillPolicy::BestFit | BackfillPolicy::Greedy)
                    || (bf == BackfillPolicy::FirstFit && policy.bf_widest_window_first)
                    || policy.bf_shortest_first
                    || (bf == BackfillPolicy::Preempt
                        && policy.bf_priority_policy != crate::policy::BfPriorityPolicy::None)
                {
                    entries[i].reason = Some(self.resources(job));
                    self.candidates.push(Candidate { index: i, dur });
                } else {
                    self.try_backfill(entries, i, dur, level);
                }
            }
        }
    }

    /// Backfill chunking (`BFCHUNKSIZE`, `BFCHUNKDURATION`, FIRSTFIT only,
    /// Moab §8.2): once a job of at least the chunk size is blocked,
    /// processors freed by running jobs are kept from smaller jobs for the
    /// chunk duration after they were last freed
    /// ([`State::resources_freed_at`]), so they accumulate for larger jobs.
    fn note_blocked(&mut self, job: &Job) {
        let p = self.ctx.policy;
        if p.backfill != BackfillPolicy::FirstFit
            || p.bf_chunk_size == 0
            || p.bf_chunk_duration <= 0
            || job.req.total_procs() < p.bf_chunk_size
        {
            return;
        }
        let Some(freed) = self.ctx.state.resources_freed_at() else {
            return;
        };
        let until = freed + p.bf_chunk_duration;
        if until > self.ctx.now {
            self.chunk_until = Some(self.chunk_until.map_or(until, |u| u.max(until)));
        }
    }

    /// Takes a job's remembered reservation out of the profile.
    fn release_held(&mut self, entries: &mut [Entry<'a>], i: usize) {
        if let Some((start, end)) = entries[i].held.take() {
            let procs = Amount::procs(i64::from(entries[i].job.req.total_procs()));
            let _ = self.ctx.agg.remove_usage(start, end, procs);
        }
    }

    /// Pre-conditions for starting out of priority order.
    fn backfill_ok(
        &mut self,
        entries: &[Entry<'a>],
        i: usize,
        dur: Option<Secs>,
    ) -> Result<(), BlockReason> {
        let job = entries[i].job;
        if dur.is_none() {
            return Err(BlockReason::NoWalltime);
        }
        if qos_flag(job, self.ctx.policy, QosFlag::NoBf) {
            return Err(BlockReason::NoBackfill);
        }
        let depth = self.ctx.policy.backfill_depth;
        self.bf_considered += 1;
        if depth > 0 && self.bf_considered > depth {
            return Err(BlockReason::BackfillDepth);
        }
        Ok(())
    }

    /// Starts a backfill candidate if it fits now; records why not otherwise.
    pub(crate) fn try_backfill(
        &mut self,
        entries: &mut [Entry<'a>],
        i: usize,
        dur: Option<Secs>,
        level: PolicyLevel,
    ) {
        let job = entries[i].job;
        if self.throttled {
            // Earlier backfill starts this pass may have used the allowance:
            // over the soft limit the job waits for the hard pass, over the
            // hard one it is blocked.
            if let Err(r) = self
                .usage
                .check(job, tally(job, dur), self.ctx.policy, level)
            {
                match level {
                    PolicyLevel::Soft => entries[i].handled = false,
                    PolicyLevel::Hard => entries[i].eligible = false,
                }
                entries[i].reason = Some(r);
                return;
            }
        }
        let size = self.ctx.policy.bf_chunk_size;
        if let Some(until) = self.chunk_until.filter(|_| job.req.total_procs() < size) {
            entries[i].reason = Some(BlockReason::Chunking { size, until });
            return;
        }
        if let Some(alloc) = self.ctx.fit_now(job, dur) {
            self.start(entries, i, alloc, dur, StartKind::Backfill);
            return;
        }
        // BFVIRTUALWALLTIMESCALINGFACTOR: a second try with the walltime
        // scaled. The job is planned for the scaled time (priority
        // reservations may begin when it expires: see `schedule` for what
        // happens then), but it must keep clear of administrative and
        // standing reservations for its real limit too.
        let virt = self
            .ctx
            .policy
            .bf_virtual_walltime_factor
            .filter(|f| *f > 0.0);
        let scaled = virt
            .zip(dur)
            .map(|(f, d)| ((d as f64 * f).ceil() as Secs).max(1));
        if let Some((v, real)) = scaled.zip(dur).filter(|(v, d)| v < d) {
            let now = self.ctx.now;
            if let Some(alloc) = self.ctx.fit_now_clear(job, Some(v), now + real.max(1)) {
                self.start(entries, i, alloc, Some(v), StartKind::Backfill);
                if let Some(s) = self.plan.starts.last_mut() {
                    s.virtual_walltime = Some(v);
                }
                return;
            }
        }
        if self.ctx.policy.backfill == BackfillPolicy::Preempt {
            // Optimistic: start on what is free now even if it may run into
            // a reservation; it is preempted when that slot comes.
            if let Some(alloc) = self.ctx.fit_free_now(job) {
                self.start(entries, i, alloc, dur, StartKind::Backfill);
                return;
            }
        }
        let idle = self.ctx.idle_procs();
        // An administrative or standing reservation in the way explains it
        // when the job would end before the top priority reservation.
        let top_start = self
            .top_reservation
            .and_then(|r| self.plan.reservation(r))
            .map(|r| r.start);
        let ends_before_top = dur.is_some_and(|d| top_start.is_none_or(|s| self.ctx.now + d <= s));
        let held = if idle >= job.req.total_procs() && ends_before_top {
            self.ctx.held_conflict(job, dur)
        } else {
            None
        };
        entries[i].reason = Some(match (held, self.top_reservation) {
            (Some(h), _) => BlockReason::ReservationConflict(h),
            (None, _) if self.no_start_top.is_some() => {
                BlockReason::WaitsBehindNoWalltime(self.no_start_top.unwrap_or_default())
            }
            (None, Some(r)) if idle >= job.req.total_procs() => {
                BlockReason::WouldDelayReservation(r)
            }
            _ => self.resources(job),
        });
    }

    /// TIGHT data staging: the job's data is expected at `ready`; within the
    /// reservation depth (`bucket`) its compute is reserved from then on,
    /// and nothing is held idle before. A reservation counts against
    /// `RESERVATIONDEPTH` like any other: beyond the depth the job just waits
    /// for its data (its transfer starts at once, see
    /// [`crate::staging::plan`]) and then competes like any queued job.
    fn reserve_after_data(
        &mut self,
        entries: &mut [Entry<'a>],
        i: usize,
        dur: Option<Secs>,
        ready: Time,
        bucket: Option<usize>,
    ) {
        let job = entries[i].job;
        entries[i].reason = Some(BlockReason::DataStaging(Some(ready)));
        let Some(b) = bucket else {
            return;
        };
        if self.ctx.policy.reservation_policy == ReservationPolicy::Never || dur.is_none() {
            return;
        }
        if let Some((start, alloc)) = self.ctx.earliest_from(job, dur, ready) {
            let end = dur.map(|d| start + d.max(1));
            self.ctx.commit(job, start, end, &alloc);
            self.take_bucket(b);
            self.reserve(PlannedReservation {
                job: job.id,
                start,
                end,
                alloc,
            });
        }
    }

    fn reserve_or_wait(
        &mut self,
        entries: &mut [Entry<'a>],
        i: usize,
        bucket: Option<usize>,
        dur: Option<Secs>,
    ) {
        let job = entries[i].job;
        let Some(b) = bucket else {
            entries[i].reason = Some(self.resources(job));
            return;
        };
        match self.ctx.earliest(job, dur) {
            Some((start, alloc)) => {
                let end = dur.map(|d| start + d.max(1));
                self.ctx.commit(job, start, end, &alloc);
                self.take_bucket(b);
                self.top_reservation.get_or_insert(job.id);
                self.reserve(PlannedReservation {
                    job: job.id,
                    start,
                    end,
                    alloc,
                });
                entries[i].reason = Some(self.resources(job));
            }
            None => {
                // The LSF rule: its start cannot be computed (it waits for a
                // job without a wall-clock limit), and nothing may backfill
                // into what it waits for: it holds every processor from now
                // on, and takes its place in the reservation depth.
                entries[i].reason = Some(BlockReason::NoWalltimeAhead);
                self.ctx.commit(job, self.ctx.now, None, &[]);
                self.take_bucket(b);
                self.no_start_top.get_or_insert(job.id);
            }
        }
    }

    pub(crate) fn start(
        &mut self,
        entries: &mut [Entry<'a>],
        i: usize,
        alloc: Vec<Alloc>,
        dur: Option<Secs>,
        kind: StartKind,
    ) {
        let job = entries[i].job;
        let now = self.ctx.now;
        let end = dur.map(|d| now + d.max(1));
        self.ctx.commit(job, now, end, &alloc);
        if self.throttled {
            let mut t = tally(job, dur);
            t.nodes = alloc.len() as u64;
            self.usage.add(job, self.ctx.policy, t);
        }
        entries[i].started = true;
        entries[i].reason = None;
        self.plan.starts.push(Start {
            job: job.id,
            alloc,
            kind,
            virtual_walltime: None,
        });
    }

    fn resources(&self, job: &Job) -> BlockReason {
        if let Some(r) = self.ctx.reservation_conflict(job) {
            return BlockReason::ReservationConflict(r);
        }
        BlockReason::Resources {
            idle_procs: self.ctx.idle_procs(),
            needed_procs: job.req.total_procs(),
        }
    }

    /// One reservation of bucket `b` is used (a guaranteed deadline may
    /// reserve beyond its bucket's depth: the count stays at 0).
    fn take_bucket(&mut self, b: usize) {
        if self.deadline_job {
            return;
        }
        if let Some(left) = self.bucket_left.get_mut(b) {
            *left = left.saturating_sub(1);
        }
    }

    fn bucket_of(&self, job: &Job) -> Option<usize> {
        bucket_of(job, self.ctx.policy)
    }

    fn finish(mut self, entries: Vec<Entry<'a>>, order: &[u32]) -> Plan {
        let now = self.ctx.now;
        // Time alone changes: a running job's limit, a start date, a reservation.
        let ends = self.ctx.state.active().flat_map(|j| {
            let v = j.run.as_ref().and_then(|r| r.virtual_end());
            [j.expected_end(), v].into_iter().flatten()
        });
        let dates = entries.iter().filter_map(|e| match e.reason {
            Some(BlockReason::StartDate(t)) | Some(BlockReason::DataStaging(Some(t))) => Some(t),
            _ => None,
        });
        let rsv = self.plan.reservations.iter().map(|r| r.start);
        let retry = self.plan.preempt_notes.iter().filter_map(|n| n.retry_at);
        // A lock that expires frees its resources for everybody.
        let locks: Vec<Time> = self
            .ctx
            .state
            .locks()
            .filter_map(|l| l.until)
            .map(|u| u + 1)
            .collect();
        // Administrative and standing reservations begin and end.
        let held: Vec<Time> = self
            .ctx
            .held_reservations()
            .flat_map(|r| [Some(r.start), r.end])
            .flatten()
            .collect();
        self.plan.next_wakeup = ends
            .chain(dates)
            .chain(rsv)
            .chain(held)
            .chain(retry)
            .chain(locks)
            .chain(self.chunk_until)
            .filter(|t| *t > now)
            .min();
        // The virtual limits' preemption ranks the reservations it delays
        // by the decisions ([`schedule_with`]).
        let policy = self.ctx.policy;
        if !policy.plan_decisions
            && policy.bf_virtual_walltime_conflict != VirtualWalltimeConflictPolicy::Preempt
        {
            return self.plan;
        }
        // Decisions are placed at their job's position in id order (`order`
        // maps rank to it) instead of sorting the large values by id; sorted
        // input makes the map a bulk build.
        let mut slots: Vec<Option<(crate::job::JobId, Decision)>> = Vec::new();
        slots.resize_with(entries.len(), || None);
        for (rank, e) in entries.into_iter().enumerate() {
            let d = Decision {
                priority: e.prio,
                rank: rank as u32 + 1,
                reason: if e.started { None } else { e.reason },
                eligible: e.eligible,
            };
            if let Some(slot) = order.get(rank).and_then(|&i| slots.get_mut(i as usize)) {
                *slot = Some((e.job.id, d));
            }
        }
        let mut decisions = Vec::with_capacity(slots.len());
        decisions.extend(slots.into_iter().flatten());
        self.plan.decisions = decisions.into_iter().collect();
        self.plan
    }
}

/// What a job adds to its credentials' usage.
pub(crate) fn tally(job: &Job, dur: Option<Secs>) -> Tally {
    Tally {
        jobs: 1,
        procs: u64::from(job.req.total_procs()),
        nodes: u64::from(job.req.nodes.unwrap_or(1)),
        wc: dur.map_or(0, |d| d.max(0) as u64),
    }
}

/// Whether the job's (effective) QoS has a flag.
pub(crate) fn qos_flag(job: &Job, policy: &Policy, flag: QosFlag) -> bool {
    if policy.qos.is_empty() {
        // No QoS configured: no flags (and no default QoS to look up).
        return false;
    }
    crate::qos::effective(job, policy)
        .and_then(|q| policy.qos.get(q))
        .is_some_and(|q| q.flags.contains(&flag))
}

/// The reservation bucket `job` reserves in: the first whose QoS list
/// admits it (the job's QoS is looked up only for a bucket with a list).
pub(crate) fn bucket_of(job: &Job, policy: &Policy) -> Option<usize> {
    policy
        .reservation_buckets
        .iter()
        .position(|b| match &b.qos {
            None => true,
            Some(list) => {
                crate::qos::effective(job, policy).is_some_and(|q| list.iter().any(|x| x == q))
            }
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::job::Request;
    use crate::node::Node;
    use crate::state::Event;

    fn submit(s: &mut State, id: u64, procs: u32, wall: Option<i64>, t: Time) {
        let j = Job::new(id, "u", Request::procs(procs), wall, t);
        s.apply(Event::submit(j), t).unwrap();
    }

    /// Starts `job` where the default policy's plan at `now` places it.
    fn start_as_planned(s: &mut State, job: u64, now: Time) {
        let alloc = schedule(s, &Policy::default(), now)
            .starts
            .into_iter()
            .find(|st| st.job == job)
            .map(|st| st.alloc)
            .expect("room for the job");
        let kind = StartKind::Priority;
        s.apply(Event::Start { job, alloc, kind }, now).unwrap();
    }

    /// Sets the run-time estimate of `job`.
    fn set_estimate(s: &mut State, job: u64, secs: Option<Secs>) {
        let change = crate::state::JobChange::Estimate(secs);
        s.apply(Event::Modify { job, change }, 0).unwrap();
    }

    #[test]
    fn fifo_starts_what_fits_in_order() {
        let mut s = State::new(vec![Node::new("n1", 4, 0)]);
        for (id, procs) in [(1, 2), (2, 4), (3, 1)] {
            submit(&mut s, id, procs, Some(60), id as i64);
        }
        let plan = schedule(&s, &Policy::default(), 10);
        let started: Vec<u64> = plan.starts.iter().map(|s| s.job).collect();
        // 1 starts; 2 is reserved at 70; 3 (1 proc, 60 s) backfills.
        assert_eq!(started, vec![1, 3]);
        assert_eq!(plan.starts[1].kind, StartKind::Backfill);
        assert_eq!(plan.reservation(2).map(|r| r.start), Some(70));
        assert!(matches!(
            plan.decisions.get(&2).and_then(|d| d.reason.as_ref()),
            Some(BlockReason::Resources { .. })
        ));
        assert_eq!(bypassed(&plan), vec![2]);
        assert_eq!(plan.next_wakeup, Some(70));
    }

    #[test]
    fn prediction_guard_replans_with_walltimes_once_a_reserved_job_waited_it() {
        let mut s = State::new(vec![Node::new("n1", 4, 0)]);
        submit(&mut s, 1, 3, Some(3600), 0);
        start_as_planned(&mut s, 1, 0);
        set_estimate(&mut s, 1, Some(600));
        submit(&mut s, 2, 4, Some(3600), 0);
        let guarded = Policy {
            prediction_guard: Some(100),
            ..Policy::default()
        };
        // Before the guard: planned with the estimate, woken at the guard.
        let before = schedule(&s, &guarded, 50);
        assert_eq!(before.reservation(2).map(|r| r.start), Some(600));
        assert_eq!(before.next_wakeup, Some(100));
        // Once job 2 has waited it: planned with walltimes, as EASY.
        let after = schedule(&s, &guarded, 100);
        assert_eq!(after.reservation(2).map(|r| r.start), Some(3600));
        let walltimes = Policy {
            estimates_ignored: true,
            ..Policy::default()
        };
        assert_eq!(after, schedule(&s, &walltimes, 100));
        // Without the guard the estimate plans it however long it waited.
        let easy_pp = schedule(&s, &Policy::default(), 100);
        assert_eq!(easy_pp.reservation(2).map(|r| r.start), Some(600));
    }

    #[test]
    fn indexed_releases_plan_as_the_running_jobs_do() {
        // Running jobs with estimates (some shorter, some expired), with
        // and without walltimes; planned with estimates and with walltimes,
        // with the state's release indexes and without them.
        let mut s = State::new(vec![Node::new("n1", 16, 0), Node::new("n2", 16, 0)]);
        let runs = [
            (1, 6, Some(3600), Some(600)),
            (2, 8, Some(7200), None),
            (3, 4, None, Some(300)),
            (4, 5, Some(900), Some(50)),
            (5, 3, Some(60), Some(900)),
        ];
        for &(id, procs, wall, _) in &runs {
            submit(&mut s, id, procs, wall, 0);
        }
        for &(id, _, _, est) in &runs {
            start_as_planned(&mut s, id, 0);
            set_estimate(&mut s, id, est);
        }
        for (id, procs, wall) in [(10, 20, 600), (11, 4, 100), (12, 30, 3600), (13, 2, 5000)] {
            submit(&mut s, id, procs, Some(wall), 1);
        }
        let mut indexed = s.clone();
        indexed.set_lean_indexes(true);
        for estimates_ignored in [false, true] {
            let p = Policy {
                estimates_ignored,
                reservation_buckets: vec![crate::policy::ReservationBucket {
                    depth: 3,
                    qos: None,
                }],
                ..Policy::default()
            };
            for now in [10, 100, 700, 1000] {
                assert_eq!(
                    schedule(&indexed, &p, now),
                    schedule(&s, &p, now),
                    "at {now}, estimates ignored: {estimates_ignored}"
                );
            }
        }
    }

    #[test]
    fn plans_without_decisions_start_and_reserve_the_same() {
        let mut s = State::new(vec![Node::new("n1", 8, 0)]);
        for (id, procs, wall) in [
            (1, 6, 3600),
            (2, 8, 7200),
            (3, 2, 600),
            (4, 1, 60),
            (5, 3, 900),
        ] {
            submit(&mut s, id, procs, Some(wall), id as i64);
        }
        let weighted = Policy {
            weights: crate::policy::PriorityWeights {
                xfactor: 30,
                ..Default::default()
            },
            prediction_guard: Some(100),
            ..Policy::default()
        };
        let lean = Policy {
            plan_decisions: false,
            ..weighted.clone()
        };
        for now in [10, 50, 200] {
            let mut full = schedule(&s, &weighted, now);
            let bare = schedule(&s, &lean, now);
            assert_eq!(full.decisions.len(), 5);
            assert_eq!(bare.decisions.len(), 0);
            full.decisions = Default::default();
            assert_eq!(full, bare, "at {now}");
        }
    }

    #[test]
    fn backfill_none_is_strict_priority() {
        let mut s = State::new(vec![Node::new("n1", 4, 0)]);
        for (id, procs) in [(1, 2), (2, 4), (3, 1)] {
            submit(&mut s, id, procs, Some(60), id as i64);
        }
        let p = Policy {
            backfill: BackfillPolicy::None,
            ..Policy::default()
        };
        let plan = schedule(&s, &p, 10);
        assert_eq!(plan.starts.len(), 1);
        assert!(bypassed(&plan).is_empty());
    }
}
