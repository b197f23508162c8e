//! The lean scheduling iteration: the same starts, reservations and
//! `next_wakeup` as [`crate::schedule()`], without the per-job decision
//! records, for drivers that only act on starts (the simulator).
//!
//! It applies when the queue order is static and no credential limit is set
//! ([`lean_supported`]): priority is FIFO by queue time (the only non-zero
//! priority weight is `QUEUETIMEWEIGHT`, no system priorities, no QoS `QTWEIGHT`/`XFWEIGHT`, fairshare
//! neither weighted nor capped: [`crate::fairshare::active`]), no throttling
//! limits, no preemptor, `BACKFILLPOLICY FIRSTFIT`, `BESTFIT`, `GREEDY` or `NONE` without backfill depth,
//! chunking, virtual walltime scaling or shortest-first or widest-window ordering,
//! `RESERVATIONPOLICY CURRENTHIGHEST`, `HIGHEST` or `NEVER`, no class wall-clock
//! defaults, every node up, no suspended job, no job waiting for stage-in
//! data ([`crate::staging`]) and no administrative or standing reservation
//! ([`crate::resv`]). Otherwise
//! [`schedule_lean`] returns `None` and the driver runs the full iteration.
//!
//! Instead of ordering every queued job by priority it walks the state's
//! incremental queue index (enabled with [`State::set_lean_indexes`]) (ordered by submit time, then id) and builds the
//! availability profile from the release index. Once every reservation is
//! placed, the rest of the queue can only backfill: blocks of the index whose
//! smallest job cannot fit for its shortest duration are skipped whole, and
//! with `BACKFILLPOLICY NONE` the walk stops. `BESTFIT` and `GREEDY` collect the
//! backfill candidates the walk reaches and start them after it, best
//! `BACKFILLMETRIC` first (ties in queue order), or the best combination
//! first, as [`crate::backfill`] does: capacity only shrinks during an iteration, so
//! a candidate skipped because it cannot fit when the walk reaches it would
//! not fit then either. Under `HIGHEST` (pyss's
//! conservative backfill with every job reserved) the remembered
//! reservations ([`State::remember_reservations`]) are held in the profile
//! in one merge pass, and every queued job is visited (a kept reservation
//! must be seen to be kept or compressed). The walk itself is
//! [`mod@crate::schedule`]'s, restricted to what these policies use; the
//! property tests in `tests/lean.rs` compare both on random states.

use crate::context::Ctx;
use crate::eligibility::{check_static, has_limits, planning_duration};
use crate::job::{Job, JobId, StartKind};
use crate::plan::{Plan, PlannedReservation, Start};
use crate::policy::{BackfillPolicy, Policy, QosFlag, ReservationPolicy};
use crate::profile::Amount;
use crate::schedule::qos_flag;
use crate::state::State;
use crate::{Secs, Time};

/// What a lean iteration decided: the starts and reservations of
/// [`crate::schedule()`]'s plan, without decisions.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LeanPlan {
    pub now: Time,
    pub starts: Vec<Start>,
    pub reservations: Vec<PlannedReservation>,
    pub next_wakeup: Option<Time>,
    /// The earliest time at which time alone may let a job of this state
    /// start: `next_wakeup` without the reservation starts no job can reach
    /// before something else happens. Under `BACKFILLPOLICY NONE` (and
    /// `CURRENTHIGHEST`) nothing starts behind the first blocked job, so of
    /// the reservation starts only that job's counts: waking at a later
    /// job's start (the end of a reservation of a job that fits now but may
    /// not start) would plan the same again. A driver that iterates only
    /// when a decision can change (the simulator) wakes at this;
    /// `next_wakeup` stays [`crate::schedule()`]'s.
    pub next_change: Option<Time>,
}

impl LeanPlan {
    /// A [`Plan`] with these starts and reservations and no decisions.
    pub fn into_plan(self) -> Plan {
        Plan {
            now: self.now,
            starts: self.starts,
            reservations: self.reservations,
            next_wakeup: self.next_wakeup,
            ..Plan::default()
        }
    }
}

/// Whether the policy allows the lean path (see the module doc).
pub fn lean_supported(policy: &Policy) -> bool {
    let w = &policy.weights;
    let zero = |cw: i64, sw: i64| cw.saturating_mul(sw) == 0;
    let no_prio = |m: &std::collections::BTreeMap<String, crate::policy::CredConfig>| {
        m.values().all(|c| c.priority == 0)
    };
    let fifo = w.service.saturating_mul(w.queuetime) >= 0
        && zero(w.service, w.xfactor)
        && zero(w.service, w.bypass)
        && zero(w.service, w.userprio)
        && zero(w.service, w.deadline)
        && (zero(w.cred, w.user) || no_prio(&policy.users))
        && (zero(w.cred, w.group) || no_prio(&policy.groups))
        && (zero(w.cred, w.account) || no_prio(&policy.accounts))
        && (zero(w.cred, w.class) || policy.classes.values().all(|c| c.priority == 0))
        && (zero(w.cred, w.qos) || policy.qos.values().all(|c| c.priority == 0))
        && policy
            .qos
            .values()
            .all(|q| q.qt_weight == 0 && q.xf_weight == 0);
    let chunking = policy.backfill == BackfillPolicy::FirstFit
        && policy.bf_chunk_size > 0
        && policy.bf_chunk_duration > 0;
    fifo && !crate::fairshare::active(policy)
        && !crate::deadline::any_guaranteed(policy)
        && !has_limits(policy)
        && matches!(
            policy.backfill,
            BackfillPolicy::FirstFit
                | BackfillPolicy::BestFit
                | BackfillPolicy::Greedy
                | BackfillPolicy::None
        )
        && !crate::preempt::preemptor_configured(policy)
        && policy.backfill_depth == 0
        && !chunking
        && !policy.bf_shortest_first
        && !policy.estimates_running_only
        && !policy.estimates_ignored
        && policy.prediction_guard.is_none()
        && !policy.bf_widest_window_first
        && policy.bf_virtual_walltime_factor.is_none_or(|f| f <= 0.0)
        && matches!(
            policy.reservation_policy,
            ReservationPolicy::CurrentHighest
                | ReservationPolicy::Highest
                | ReservationPolicy::Never
        )
        && policy
            .classes
            .values()
            .all(|c| c.default_wclimit.is_none() && c.max_wclimit.is_none())
}

/// Storage a driver that runs many lean iterations keeps between them
/// ([`schedule_lean_in`]): the planning context's profile and per-node
/// buffers, the reservation buckets, the held reservations. Under
/// `RESERVATIONPOLICY CURRENTHIGHEST` it also keeps the last iteration's
/// reservations and final profile, which the next iteration takes over
/// when it can prove they would be placed again ([`reuse_last`]), and
/// under `FIRSTFIT`, `BESTFIT` or `NONE` where the last walk ended, to go on from
/// there when only submissions and its starts happened since ([`Resume`]).
/// A plan in kept storage is the plan without it (the property tests in
/// `tests/lean.rs` check it). One storage serves one state and one policy:
/// a driver that changes the policy starts with new storage.
#[derive(Debug, Default)]
pub struct LeanScratch {
    ctx: crate::context::Buffers,
    bucket_left: Vec<u32>,
    held: Vec<Held>,
    steps: Vec<(Time, i64)>,
    /// Storage for the profile's breakpoints when the held reservations
    /// are merged in ([`crate::profile::Profile::add_steps_in`]).
    spare: Vec<(Time, Amount)>,
    /// CURRENTHIGHEST: the last iteration's reservations in plan order
    /// (empty when it cannot be reused), its time and its final profile's
    /// breakpoints.
    last: Vec<Held>,
    last_now: Time,
    last_spans: Vec<(Time, Amount)>,
    /// How many iterations took the last reservations over (for tests).
    reused: u64,
    /// The caller reads only the starts and `next_change` of the plans made
    /// in this storage ([`LeanScratch::set_decisions_only`]).
    decisions_only: bool,
    /// Storage of a plan the caller is done with ([`LeanScratch::recycle`]),
    /// empty: the next plan's lists.
    spare_starts: Vec<Start>,
    spare_reservations: Vec<PlannedReservation>,
    /// The last walk, when the next one may resume it ([`Resume`]).
    resume: Resume,
    /// How many iterations resumed the last walk (for tests).
    resumed: u64,
}

/// Where a lean walk ended, kept so that the next iteration can go on from
/// there instead of walking the queue again.
///
/// When that is the same walk. The walk of t0 visited the queued jobs up to
/// `tail` (every job queued then) and started `starts`; suppose that since
/// then the state changed only by those starts, applied at t0 as planned,
/// and by tail submissions (the index's stamp says so), that
/// t1 >= t0 comes before every release (start + planning duration of a
/// running job, the starts of t0 among them), start date of a queued job
/// after t0 and reservation of the walk, and that no queued job depends on
/// another (a start may satisfy a dependency, a submission make one on a
/// job unknown so far wait). The
/// walk of t1 visits the same jobs first, minus those started at t0. Its
/// profile from t1 on is t0's final one without the reservations (the
/// releases are t0's with every start of t0 in them; nothing releases in
/// between), never more than what each job saw at t0. So, job by job, what
/// did not start at t0 cannot start at t1; each reservation lands where it
/// was (the argument of [`reuse_last`], with every reservation placed by
/// the aggregate profile alone); and the walk reaches the new jobs blocked
/// or not as t0's ended, with the same reservations, the buckets' room and
/// t0's final profile (shifted to begin at t1): what it resumes with.
/// BESTFIT starts its candidates after the walk, best first: a candidate of
/// t0 that did not start failed in a profile holding at least what t0's
/// final one holds, so in any order at t1 it fails again, and only the
/// new jobs' candidates, tried best first, can start. GREEDY is not
/// resumed (its bounded search over all candidates may choose otherwise
/// with more of them). Kept for FIRSTFIT, BESTFIT and NONE under
/// CURRENTHIGHEST or NEVER, and under HIGHEST once the driver remembered
/// the walk's reservations and nothing else happened since (no job ended:
/// every remembered reservation stays where it is, `pinned`, so the walk
/// of t1 holds them all again in the profile and keeps them, and reaches
/// the new jobs with t0's final profile; resumed only after that very
/// list was remembered, the index's `remembers` one more).
#[derive(Debug, Default)]
struct Resume {
    valid: bool,
    owner: u64,
    changes: u64,
    /// The index's start count before the walk's starts were applied.
    starts_seen: u64,
    /// A walk under HIGHEST, and the index's count of remembered
    /// reservation lists then: it is resumed only once the driver
    /// remembered its reservations, and nothing since.
    highest: bool,
    remembers: u64,
    tail: (Time, JobId),
    now: Time,
    /// The walk's starts and their allocations (`allocs[range]`).
    starts: Vec<(JobId, std::ops::Range<usize>)>,
    allocs: Vec<crate::job::Alloc>,
    /// The walk's reservations, in plan order: every one of a job the
    /// aggregate profile alone places (a resumable walk's), so each is
    /// its `Held` ([`Held::planned`]).
    placed: Vec<Held>,
    blocked: bool,
    first_blocked: Option<JobId>,
    bucket_left: Vec<u32>,
    /// The final profile is `last_spans` (kept for [`reuse_last`]), not
    /// the context's buffers.
    spans_in_last: bool,
}

impl Resume {
    /// Whether the walk of `now` is this one resumed (the conditions in
    /// the type's doc).
    fn holds(&self, state: &State, idx: &crate::index::Indexes, now: Time) -> bool {
        if !self.valid
            || (self.owner, self.changes) != (idx.stamp.owner, idx.stamp.changes)
            || now < self.now
            || idx.stamp.starts != self.starts_seen + self.starts.len() as u64
            || idx.dependent > 0
            || self.placed.iter().any(|r| r.start <= now)
        {
            return false;
        }
        if self.highest
            && (idx.stamp.remembers != self.remembers + 1
                || state.reservations_may_compress()
                || !state
                    .remembered_in_plan_order()
                    .iter()
                    .copied()
                    .eq(self.placed.iter().map(|r| (r.job, r.start))))
        {
            return false;
        }
        if now > self.now
            && (idx.releases.as_slice().first().is_some_and(|r| r.0 <= now)
                || idx
                    .dated
                    .range((self.now + 1, 0)..)
                    .next()
                    .is_some_and(|d| d.0 <= now))
        {
            return false;
        }
        self.starts.iter().all(|(id, range)| {
            state.job(*id).is_some_and(|j| {
                j.state.is_active()
                    && j.run.as_ref().is_some_and(|r| {
                        r.start_time == self.now && r.alloc[..] == self.allocs[range.clone()]
                    })
            })
        })
    }
}

impl LeanScratch {
    /// How many iterations in this storage took the previous iteration's
    /// reservations over instead of placing them again ([`reuse_last`]).
    pub fn reused(&self) -> u64 {
        self.reused
    }

    /// How many iterations in this storage went on from where the last
    /// walk ended instead of walking the queue again (a walk is resumed
    /// when only tail submissions and its starts happened since).
    pub fn resumed(&self) -> u64 {
        self.resumed
    }

    /// Whether the caller reads only the plans' starts and `next_change`
    /// (off by default: the plans are complete). On, under `BACKFILLPOLICY
    /// NONE` without `HIGHEST` the walk ends at the first job that cannot
    /// start: nothing starts behind it, and of the reservations only its own
    /// counts for `next_change`, so the deeper ones it would place are left
    /// out of the plan (its `reservations` and `next_wakeup` are then not
    /// [`crate::schedule()`]'s). The simulator turns it on when nothing
    /// reads its plans' reservations (no data staging; a served replay runs
    /// the full iteration).
    pub fn set_decisions_only(&mut self, on: bool) {
        self.decisions_only = on;
    }

    /// Takes back the storage of a plan made in this storage that the
    /// caller no longer needs: the next plan's lists reuse it instead of
    /// being allocated and grown again.
    pub fn recycle(&mut self, plan: LeanPlan) {
        let LeanPlan {
            mut starts,
            mut reservations,
            ..
        } = plan;
        starts.clear();
        reservations.clear();
        self.spare_starts = starts;
        self.spare_reservations = reservations;
    }
}

/// `policy` as far as the plans of lean iterations reading only decisions
/// ([`LeanScratch::set_decisions_only`]) depend on it: under
/// `BACKFILLPOLICY NONE` with `CURRENTHIGHEST` and one reservation bucket
/// without QoS, a depth of 1 or more places the first blocked job's
/// reservation alone, so such a depth is made 1. Policies with equal
/// `decisions_policy` make equal decisions-only lean plans from equal
/// states (the sweep replays such configurations once).
pub fn decisions_policy(policy: &Policy) -> Policy {
    let mut p = policy.clone();
    if p.backfill == BackfillPolicy::None
        && p.reservation_policy == ReservationPolicy::CurrentHighest
    {
        if let [bucket] = p.reservation_buckets.as_mut_slice() {
            if bucket.qos.is_none() && bucket.depth > 1 {
                bucket.depth = 1;
            }
        }
    }
    p
}

/// Below this many reservations, placing them again costs less than the
/// merge and comparison passes of [`reuse_last`].
const REUSE_MIN: usize = 2;

/// One lean iteration, or `None` when the policy or the state needs the full
/// [`crate::schedule()`]. Pure: equal inputs give equal plans, and the starts,
/// reservations and `next_wakeup` equal `schedule()`'s.
pub fn schedule_lean(state: &State, policy: &Policy, now: Time) -> Option<LeanPlan> {
    if !lean_supported(policy) {
        return None;
    }
    schedule_lean_in(state, policy, now, &mut LeanScratch::default())
}

/// [`schedule_lean`] for a policy the caller has checked with
/// [`lean_supported`] (which depends on the policy alone: a driver checks
/// it once per policy, not every iteration), in the storage `scratch` of
/// earlier iterations. The same plan as [`schedule_lean`] whenever
/// `lean_supported(policy)` holds; `None` when the state needs the full
/// iteration.
pub fn schedule_lean_in(
    state: &State,
    policy: &Policy,
    now: Time,
    scratch: &mut LeanScratch,
) -> Option<LeanPlan> {
    let idx = state.indexes()?;
    debug_assert!(lean_supported(policy), "schedule_lean_in: unchecked policy");
    if idx.sys_prio > 0
        || idx.suspended > 0
        || idx.data_wait > 0
        || idx.preemptors > 0
        || idx.virtual_running > 0
        || idx.trl > 0
        || state.terminating_count() > 0
        || state.locks().next().is_some()
        || !state.all_nodes_up()
        || state.has_slot_limits()
        || !policy.standing.is_empty()
        || state.reservations().any(|r| r.end.is_none_or(|e| e > now))
        || idx.elastic > 0
    {
        return None;
    }
    // Sorted by end already.
    let releases = idx.releases.released_from(now);
    // The last walk goes on from where it ended, with its final profile.
    let resume = scratch.resume.holds(state, idx, now);
    scratch.resume.valid = false;
    if resume {
        if let Some(plan) = resume_unchanged(state, idx, policy, now, scratch) {
            return Some(plan);
        }
    }
    let mut buffers = std::mem::take(&mut scratch.ctx);
    if resume && scratch.resume.spans_in_last {
        buffers.swap_spans(&mut scratch.last_spans);
    }
    // No reservation in force, no standing reservation, no lock (checked
    // above): the context need not look for them.
    let mut ctx = Ctx::with_profile_in(state, policy, now, buffers, true, |free, spans| {
        if resume {
            crate::profile::Profile::resumed(spans, now, free)
        } else {
            crate::profile::Profile::from_sorted_releases_in(spans, now, free, releases)
        }
    });
    #[cfg(debug_assertions)]
    if resume {
        // The resumed profile is the releases' with the reservations.
        let free: i64 = (0..state.nodes().len())
            .map(|n| i64::from(state.free_procs(n as crate::node::NodeId)))
            .sum();
        let mut fresh = crate::profile::Profile::from_sorted_releases_in(
            Vec::new(),
            now,
            Amount::procs(free),
            idx.releases.released_from(now),
        );
        for h in &scratch.resume.placed {
            fresh.force_usage(h.start, Some(h.end), Amount::procs(i64::from(h.procs)));
        }
        debug_assert_eq!(fresh.spans(), ctx.agg.spans(), "resumed profile at {now}");
    }
    let highest = policy.reservation_policy == ReservationPolicy::Highest;
    let mut held = std::mem::take(&mut scratch.held);
    held.clear();
    // A resumed walk's profile holds them already (they all stay: no job
    // ended since they were remembered, none starts by now).
    if highest && !resume {
        hold_remembered(
            &mut ctx,
            state,
            idx,
            &mut held,
            &mut scratch.steps,
            &mut scratch.spare,
        );
    }
    let mut bucket_left = std::mem::take(&mut scratch.bucket_left);
    bucket_left.clear();
    bucket_left.extend(policy.reservation_buckets.iter().map(|b| b.depth));
    // Room for the reservations the buckets allow (capped: `all` is
    // unbounded), so that the plan's list rarely grows.
    let depth: usize = bucket_left.iter().map(|&b| b as usize).sum();
    let mut placed = std::mem::take(&mut scratch.last);
    let mut walk = Lean {
        ctx: &mut ctx,
        starts: std::mem::take(&mut scratch.spare_starts),
        reservations: {
            let mut r = std::mem::take(&mut scratch.spare_reservations);
            r.reserve(held.len() + depth.min(64));
            r
        },
        bucket_left,
        blocked: false,
        first_blocked: None,
        pinned: highest && !state.reservations_may_compress(),
        quick_keep: false,
        held,
        next_held: 0,
        // Which bucket a job reserves in depends on the job only with
        // per-QoS buckets.
        plain_buckets: policy.reservation_buckets.iter().all(|b| b.qos.is_none()),
        candidates: Vec::new(),
        placed: Vec::new(),
        reusable: false,
    };
    walk.quick_keep = highest && !walk.pinned && walk.may_keep_in_place();
    let current = policy.reservation_policy == ReservationPolicy::CurrentHighest;
    let never = policy.reservation_policy == ReservationPolicy::Never;
    // Which reservations a later walk may take over or resume with.
    walk.reusable = current || never || highest;
    // CURRENTHIGHEST: the first queued jobs' reservations taken over from
    // the last iteration (the queue items they are for skipped by the walk).
    let mut to_skip = 0;
    if resume {
        let r = &scratch.resume;
        walk.blocked = r.blocked;
        walk.first_blocked = r.first_blocked;
        walk.bucket_left.clear();
        walk.bucket_left.extend_from_slice(&r.bucket_left);
        walk.reservations.extend(r.placed.iter().map(Held::planned));
        placed.clear();
        placed.extend_from_slice(&r.placed);
        scratch.resumed += 1;
    } else if current && depth >= REUSE_MIN {
        to_skip = reuse_last(
            &mut walk,
            idx,
            &placed,
            scratch.last_now,
            &scratch.last_spans,
            &mut scratch.steps,
            &mut scratch.spare,
        );
        if to_skip > 0 {
            scratch.reused += 1;
        } else {
            placed.clear();
        }
    } else {
        placed.clear();
    }
    walk.placed = placed;
    // Once blocked with no reservation left to place, only backfill can
    // start anything (under HIGHEST a job beyond the depth may still hold a
    // remembered reservation: every job is visited). It changes only when a
    // job is considered, and then stays.
    let only_backfill = |w: &Lean<'_, '_>| {
        w.blocked && !highest && (never || w.bucket_left.iter().all(|b| *b == 0))
    };
    let mut backfill_only = only_backfill(&walk);
    // Processors free now: only a considered job changes them. A job
    // needing more cannot backfill (the first test of `Lean::may_fit`).
    let mut free_now = walk.free_now();
    // Without backfill nothing is left to do then: the walk ends (at once,
    // or as soon as a considered job makes it so, inside its block).
    let no_backfill = policy.backfill == BackfillPolicy::None;
    // ... and when only decisions are read, nothing is left to do once a
    // job is blocked ([`LeanScratch::set_decisions_only`]).
    let stop_when_blocked = no_backfill && !highest && scratch.decisions_only;
    // BESTFIT and GREEDY, once only backfill is left: a queue item whose job
    // `consider` would surely push as a candidate (nothing but resources
    // keeps it, no node constraint, within the machine; no class, QoS or
    // estimate rule that could say otherwise; plain node access and no
    // reservation in force) is pushed from the item ([`Lean::push_item`]).
    let items_push = matches!(
        policy.backfill,
        BackfillPolicy::BestFit | BackfillPolicy::Greedy
    ) && policy.qos.is_empty()
        && policy.classes.is_empty()
        && !policy.estimates_ignored
        && !policy.estimates_running_only
        && walk.ctx.plain_reservations();
    // The walk starts after the jobs whose reservations were taken over:
    // at block `first`, item `skip` (a block's lower bounds still hold for
    // its tail).
    let blocks = idx.queue.blocks();
    let (mut first, mut skip) = (0, to_skip);
    if resume {
        // The jobs queued since the last walk, after every job it visited.
        (first, skip) = idx.queue.after(scratch.resume.tail);
    }
    while first < blocks.len() && skip >= blocks[first].items.len() {
        skip -= blocks[first].items.len();
        first += 1;
    }
    // A resumed walk that had stopped at its first blocked job stays
    // stopped.
    if resume && stop_when_blocked && walk.blocked {
        first = blocks.len();
    }
    'blocks: for block in &blocks[first.min(blocks.len())..] {
        let items = &block.items[std::mem::take(&mut skip).min(block.items.len())..];
        if backfill_only {
            if no_backfill {
                break 'blocks;
            }
            if i64::from(block.min_procs) > free_now
                || !walk.may_fit(block.min_procs, block.min_dur)
            {
                continue;
            }
        }
        for item in items {
            if backfill_only
                && (i64::from(item.procs) > free_now || !walk.may_fit(item.procs, item.dur))
            {
                continue;
            }
            if highest && walk.kept(item) {
                continue;
            }
            if backfill_only
                && items_push
                && item.simple
                && item.plain
                && i64::from(item.procs) <= walk.ctx.capacity
            {
                // Pushing a candidate changes neither what is free nor
                // whether only backfill is left.
                walk.push_item(item);
                continue;
            }
            let Some(job) = state.job(item.id) else {
                continue;
            };
            walk.consider(job);
            backfill_only = only_backfill(&walk);
            if (backfill_only && no_backfill) || (stop_when_blocked && walk.blocked) {
                break 'blocks;
            }
            free_now = walk.free_now();
        }
    }
    walk.start_candidates();
    let keep =
        current && walk.reusable && walk.placed.len() >= REUSE_MIN && walk.may_keep_in_place();
    // Where this walk ended may be resumed ([`Resume`]).
    let resumable = matches!(
        policy.backfill,
        BackfillPolicy::FirstFit | BackfillPolicy::BestFit | BackfillPolicy::None
    ) && (current || never || highest)
        && walk.reusable
        && walk.placed.len() == walk.reservations.len()
        && walk.may_keep_in_place();
    let Lean {
        starts,
        reservations,
        bucket_left,
        held,
        blocked,
        first_blocked,
        mut placed,
        ..
    } = walk;
    if resumable {
        let r = &mut scratch.resume;
        r.valid = true;
        r.owner = idx.stamp.owner;
        r.changes = idx.stamp.changes;
        r.starts_seen = idx.stamp.starts;
        r.highest = highest;
        r.remembers = idx.stamp.remembers;
        r.tail = idx.stamp.tail;
        r.now = now;
        r.starts.clear();
        r.allocs.clear();
        for st in &starts {
            let from = r.allocs.len();
            r.allocs.extend_from_slice(&st.alloc);
            r.starts.push((st.job, from..r.allocs.len()));
        }
        debug_assert!(placed
            .iter()
            .map(Held::planned)
            .eq(reservations.iter().cloned()));
        r.placed.clear();
        if keep {
            r.placed.extend_from_slice(&placed);
        } else {
            // `placed` is cleared below: its list moves instead of a copy.
            std::mem::swap(&mut r.placed, &mut placed);
        }
        r.blocked = blocked;
        r.first_blocked = first_blocked;
        r.bucket_left.clear();
        r.bucket_left.extend_from_slice(&bucket_left);
        r.spans_in_last = keep;
    }
    // The storage back for the next iteration.
    scratch.ctx = ctx.take_buffers();
    scratch.bucket_left = bucket_left;
    scratch.held = held;
    if keep {
        // This iteration's final profile kept for the next (its storage
        // exchanged with the last one's, no copy).
        debug_assert_eq!(placed.len(), reservations.len());
        scratch.ctx.swap_spans(&mut scratch.last_spans);
        scratch.last_now = now;
    } else {
        placed.clear();
    }
    scratch.last = placed;
    Some(finish_plan(
        state,
        idx,
        policy,
        now,
        starts,
        reservations,
        first_blocked,
    ))
}

/// The plan of a walk that made `starts` and `reservations`, blocked first
/// at `first_blocked`: with the times at which time alone changes
/// something (a running job's limit, a start date, a reservation).
fn finish_plan(
    state: &State,
    idx: &crate::index::Indexes,
    policy: &Policy,
    now: Time,
    starts: Vec<Start>,
    reservations: Vec<PlannedReservation>,
    first_blocked: Option<JobId>,
) -> LeanPlan {
    let highest = policy.reservation_policy == ReservationPolicy::Highest;
    let after = (now + 1, 0);
    let end = idx.ends().first_from(now + 1);
    let date = idx
        .dated
        .range(after..)
        .find(|(_, id)| state.job(*id).is_some_and(|j| j.holds.is_empty()))
        .map(|k| k.0);
    let rsv = reservations
        .iter()
        .map(|r| r.start)
        .filter(|t| *t > now)
        .min();
    let next_wakeup = [end, date, rsv].into_iter().flatten().min();
    let next_change = if policy.backfill == BackfillPolicy::None && !highest {
        let first = reservations
            .iter()
            .filter(|r| Some(r.job) == first_blocked && r.start > now)
            .map(|r| r.start)
            .min();
        [end, date, first].into_iter().flatten().min()
    } else {
        next_wakeup
    };
    LeanPlan {
        now,
        starts,
        reservations,
        next_wakeup,
        next_change,
    }
}

/// A resumed walk ([`Resume`]) that would visit its new jobs in vain: it
/// was left with only backfill to do (or, deciding only, stopped at its
/// first blocked job), and no job queued since can backfill (more
/// processors than are free, or not for its duration before the
/// reservations' usage). Its plan then is the last one's reservations,
/// without a start, and the walk stays resumable as it is, from `now`.
fn resume_unchanged(
    state: &State,
    idx: &crate::index::Indexes,
    policy: &Policy,
    now: Time,
    scratch: &mut LeanScratch,
) -> Option<LeanPlan> {
    let r = &scratch.resume;
    if r.highest {
        // Every job is visited under HIGHEST (beyond the depth too).
        return None;
    }
    let never = policy.reservation_policy == ReservationPolicy::Never;
    let none = policy.backfill == BackfillPolicy::None;
    let backfill_only = r.blocked && (never || r.bucket_left.iter().all(|b| *b == 0));
    // The walk's own stops: without backfill once only backfill is left;
    // deciding only, under NONE, at the first blocked job.
    if !(backfill_only || (none && scratch.decisions_only && r.blocked)) {
        return None;
    }
    if !none {
        // The final profile, from `now` on (nothing changes before).
        let spans = if r.spans_in_last {
            &scratch.last_spans[..]
        } else {
            scratch.ctx.spans()
        };
        let (first, skip) = idx.queue.after(r.tail);
        let blocks = idx.queue.blocks();
        let mut items = blocks
            .get(first..)
            .unwrap_or_default()
            .iter()
            .enumerate()
            .flat_map(|(k, b)| &b.items[if k == 0 { skip } else { 0 }..]);
        if items.any(|i| crate::profile::may_fit_in(spans, now, i.procs, i.dur)) {
            return None;
        }
    }
    let mut reservations = std::mem::take(&mut scratch.spare_reservations);
    reservations.extend(r.placed.iter().map(Held::planned));
    let first_blocked = r.first_blocked;
    let starts = std::mem::take(&mut scratch.spare_starts);
    let r = &mut scratch.resume;
    r.valid = true;
    r.now = now;
    r.starts_seen = idx.stamp.starts;
    r.tail = idx.stamp.tail;
    r.starts.clear();
    r.allocs.clear();
    scratch.resumed += 1;
    Some(finish_plan(
        state,
        idx,
        policy,
        now,
        starts,
        reservations,
        first_blocked,
    ))
}

/// A BESTFIT/GREEDY backfill candidate: a job `consider` pushed, or a queue
/// item the walk knew it would push without looking the job up
/// ([`Lean::push_item`]); the job is looked up only if it may still fit when
/// its turn comes.
#[derive(Clone, Copy)]
enum Candidate<'a> {
    Job(&'a Job),
    Item { id: JobId, procs: u32 },
}

impl Candidate<'_> {
    fn procs(&self) -> u32 {
        match self {
            Candidate::Job(j) => j.req.total_procs(),
            Candidate::Item { procs, .. } => *procs,
        }
    }

    /// An item is unconstrained (`QueueItem::plain`).
    fn constrained(&self) -> bool {
        match self {
            Candidate::Job(j) => crate::placement::is_constrained(&j.req),
            Candidate::Item { .. } => false,
        }
    }
}

struct Lean<'c, 'a> {
    ctx: &'c mut Ctx<'a>,
    starts: Vec<Start>,
    reservations: Vec<PlannedReservation>,
    bucket_left: Vec<u32>,
    blocked: bool,
    /// The job whose failure to start now blocked the walk.
    first_blocked: Option<JobId>,
    /// HIGHEST with no job ended since: remembered reservations stay put.
    pinned: bool,
    /// HIGHEST, not pinned: a held reservation of a job that needs nothing
    /// but processors may be kept in place when it would land there again
    /// ([`Lean::kept`], [`Lean::may_keep_in_place`]).
    quick_keep: bool,
    /// HIGHEST: the remembered reservations held in the profile, in queue
    /// order; `next_held` is the next one the walk will reach.
    held: Vec<Held>,
    next_held: usize,
    /// No reservation bucket is restricted to QoS.
    plain_buckets: bool,
    /// BESTFIT and GREEDY: the backfill candidates in queue order, with
    /// their metric and planning duration, started after the walk.
    candidates: Vec<(u64, Candidate<'a>, Option<Secs>)>,
    /// CURRENTHIGHEST: every reservation of the plan so far, as the next
    /// iteration may take it over ([`reuse_last`]), while `reusable`: every
    /// reservation so far is of a job the aggregate profile alone places,
    /// for its planning duration.
    placed: Vec<Held>,
    reusable: bool,
}

/// A remembered reservation held in the profile (HIGHEST), or a placed
/// reservation of a job the aggregate profile alone places.
#[derive(Debug, Clone, Copy)]
struct Held {
    job: JobId,
    start: Time,
    end: Time,
    procs: u32,
}

impl Held {
    /// The plan's reservation (no per-node allocation).
    fn planned(&self) -> PlannedReservation {
        PlannedReservation {
            job: self.job,
            start: self.start,
            end: Some(self.end),
            alloc: Vec::new(),
        }
    }
}

/// Under `RESERVATIONPOLICY HIGHEST`, holds every remembered reservation of
/// a schedulable queued job in the aggregate profile (what
/// [`crate::schedule()`] does entry by entry, in one merge pass); each job
/// takes its own out again when the walk reaches it ([`Lean::kept`]).
/// Pushes what it held onto `held` (empty), in queue order; `steps` and
/// `spare` are storage. A job with nothing but resources to wait for is
/// read from the queue index alone.
fn hold_remembered(
    ctx: &mut Ctx<'_>,
    state: &State,
    idx: &crate::index::Indexes,
    held: &mut Vec<Held>,
    steps: &mut Vec<(Time, i64)>,
    spare: &mut Vec<(Time, Amount)>,
) {
    // The context's policy and time (same as the caller's).
    let (policy, now) = (ctx.policy, ctx.now);
    let kept = state.remembered_in_plan_order();
    if kept.is_empty() {
        return;
    }
    held.reserve(kept.len());
    // A plan's reservations are in queue order: walk both together (a
    // queued job that is not the next kept one is looked up: a job
    // submitted since, or kept out of order).
    let mut next = 0;
    for item in idx.queue.blocks().iter().flat_map(|b| &b.items) {
        let t = match kept.get(next) {
            Some(&(job, t)) if job == item.id => {
                next += 1;
                Some(t)
            }
            _ => state.remembered_reservation(item.id),
        };
        let Some(t) = t else {
            continue;
        };
        let window = if item.simple && item.dur != Secs::MAX {
            // Under the lean policies the planning duration is the
            // index's (no class wall-clock defaults, estimates used).
            let start = t.max(now);
            Some((start, start + item.dur.max(1)))
        } else {
            state
                .job(item.id)
                .and_then(|job| held_window(state, job, policy, now, t))
        };
        if let Some((start, end)) = window {
            held.push(Held {
                job: item.id,
                start,
                end,
                procs: item.procs,
            });
        }
    }
    // The starts, then the ends, each sorted by time (steps at one time
    // add up in any order, so the sort need not be stable: the unstable
    // one costs a third less here), merged into the profile in one pass.
    steps.clear();
    steps.reserve(2 * held.len());
    steps.extend(held.iter().map(|h| (h.start, -i64::from(h.procs))));
    steps.extend(held.iter().map(|h| (h.end, i64::from(h.procs))));
    let (starts, ends) = steps.split_at_mut(held.len());
    starts.sort_unstable_by_key(|s| s.0);
    ends.sort_unstable_by_key(|s| s.0);
    ctx.agg.add_steps_in(merged(starts, ends), spare);
}

/// The steps of two runs sorted by time, in time order.
fn merged<'s>(
    a: &'s [(Time, i64)],
    b: &'s [(Time, i64)],
) -> impl Iterator<Item = (Time, i64)> + 's {
    let (mut i, mut j) = (0, 0);
    std::iter::from_fn(move || {
        let x = match (a.get(i), b.get(j)) {
            (Some(x), Some(y)) if y.0 < x.0 => {
                j += 1;
                *y
            }
            (Some(x), _) => {
                i += 1;
                *x
            }
            (None, Some(y)) => {
                j += 1;
                *y
            }
            (None, None) => return None,
        };
        Some(x)
    })
}

/// Where a remembered reservation starting at `t` is held, if its job is
/// schedulable: from `max(t, now)` for its planning duration.
fn held_window(
    state: &State,
    job: &Job,
    policy: &Policy,
    now: Time,
    t: Time,
) -> Option<(Time, Time)> {
    if job.state != crate::job::JobState::Idle || check_static(state, job, now).is_err() {
        return None;
    }
    let d = planning_duration(job, policy)?;
    let start = t.max(now);
    Some((start, start + d.max(1)))
}

/// `RESERVATIONPOLICY CURRENTHIGHEST`: takes the last iteration's
/// reservations `last` (made at `last_now`, leaving the final profile
/// `last_spans`) over when the walk would place every one of them again,
/// exactly where it was: puts them in the profile in one merge pass, in
/// the plan, and in their bucket, and returns how many queue items (the
/// first ones) the walk skips; else changes nothing and returns 0.
///
/// When the walk would place them again. At `last_now` = t0 the walk gave
/// the job J_i the earliest start s_i in the profile Q_i it saw (the
/// releases of t0, the starts the walk made before J_i, the reservations
/// R_1..R_{i-1}); it went on with more starts (each placed where it fits
/// with the reservations before it), ending with the profile S0. Now (t1)
/// suppose t0 <= t1 < every s_i, the first queued jobs are J_1..J_d in that
/// order (every job t0 walked past before J_d was started, or is gone), each
/// still needs nothing but its processors for the same duration, any job
/// may reserve (one plain bucket with room for d more, no QoS refusing
/// reservations, plain node access), and the profile of releases P1 plus
/// R_1..R_d equals S0 from t1 on — that is, P1 is the releases of t0 with
/// every start of t0 in them, nothing else. Then the walk of t1 sees J_1
/// first, in P1 <= Q_1 from t1 on (starts only take), so no start in
/// [t1, s_1) fits (none in [t0, s_1) did in Q_1): J_1 cannot start now and
/// is blocked, and s_1 fits, as the usage of S0 (>= 0 over R_1, each later
/// start having fitted) is P1 + R_1 + more; its earliest start is s_1 again.
/// The same holds for each J_i in P1 + R_1..R_{i-1} <= Q_i, with no start
/// between them. So the walk reaches the (d+1)-th queued job blocked, with
/// the profile P1 + R_1..R_d and those reservations: what this gives it.
fn reuse_last(
    walk: &mut Lean<'_, '_>,
    idx: &crate::index::Indexes,
    last: &[Held],
    last_now: Time,
    last_spans: &[(Time, Amount)],
    steps: &mut Vec<(Time, i64)>,
    spare: &mut Vec<(Time, Amount)>,
) -> usize {
    let now = walk.ctx.now;
    let d = last.len();
    if d == 0
        || last_now > now
        || walk.ctx.policy.reservation_buckets.len() != 1
        || (walk.bucket_left[0] as usize) < d
        || !walk.may_keep_in_place()
    {
        return 0;
    }
    let capacity = walk.ctx.capacity;
    let mut items = idx.queue.blocks().iter().flat_map(|b| &b.items);
    for h in last {
        let same = items.next().is_some_and(|item| {
            item.id == h.job
                && item.simple
                && item.plain
                && item.dur != Secs::MAX
                && item.procs == h.procs
                && h.start + item.dur.max(1) == h.end
                && i64::from(item.procs) <= capacity
        });
        if !same || h.start <= now {
            return 0;
        }
    }
    // Every reservation starts after now: P1 + R_1..R_d is P1 now, and the
    // last profile there is S0 (a cheap refusal after a job ended).
    let agg = &mut walk.ctx.agg;
    let k = last_spans.partition_point(|s| s.0 <= now);
    if k == 0 || last_spans[k - 1].1 != agg.free_at(now) {
        return 0;
    }
    // The reservations' starts, then their ends, each sorted by time,
    // merged into the profile in one pass (as `hold_remembered`).
    steps.clear();
    steps.extend(last.iter().map(|h| (h.start, -i64::from(h.procs))));
    steps.extend(last.iter().map(|h| (h.end, i64::from(h.procs))));
    let (starts, ends) = steps.split_at_mut(d);
    starts.sort_unstable_by_key(|s| s.0);
    ends.sort_unstable_by_key(|s| s.0);
    agg.add_steps_in(merged(starts, ends), spare);
    if !agg.same_from_origin(last_spans) {
        // Something else changed: the profile of releases back.
        let undo = merged(starts, ends).map(|(t, p)| (t, -p));
        agg.add_steps_in(undo, spare);
        return 0;
    }
    walk.blocked = true;
    walk.first_blocked = Some(last[0].job);
    walk.bucket_left[0] -= d as u32;
    walk.reservations
        .extend(last.iter().map(|h| PlannedReservation {
            job: h.job,
            start: h.start,
            end: Some(h.end),
            alloc: Vec::new(),
        }));
    d
}

impl<'a> Lean<'_, 'a> {
    /// Processors free now (what the walk has not taken yet).
    fn free_now(&self) -> i64 {
        self.ctx.agg.free_at(self.ctx.now).procs
    }

    /// Whether a job of at least `procs` processors for at least `dur`
    /// seconds could start now (a necessary condition of `fit_now`).
    fn may_fit(&self, procs: u32, dur: Secs) -> bool {
        if dur == Secs::MAX {
            // No planning duration: such jobs never backfill.
            return false;
        }
        let now = self.ctx.now;
        let demand = Amount::procs(i64::from(procs));
        // The profile starts now: its first span is what is free now, a
        // bound of what is free over any interval from now.
        if !self.ctx.agg.free_at(now).covers(demand) {
            return false;
        }
        let end = now.saturating_add(dur.max(1));
        self.ctx.agg.free_over(now, Some(end)).covers(demand)
    }

    /// [`crate::schedule`]'s `Walk::consider` for the supported policies.
    fn consider(&mut self, job: &'a Job) {
        let policy = self.ctx.policy;
        let now = self.ctx.now;
        if check_static(self.ctx.state, job, now).is_err() {
            return;
        }
        let dur = planning_duration(job, policy);
        if self.ctx.ever_fits(job).is_err() {
            return;
        }
        let bucket = self.bucket_of(job);
        let can_reserve = policy.reservation_policy != ReservationPolicy::Never
            && !qos_flag(job, policy, QosFlag::NoReservation)
            && bucket.is_some_and(|b| self.bucket_left[b] > 0);
        let bf = policy.backfill;
        if !self.blocked {
            if let Some(alloc) = self.ctx.fit_now(job, dur) {
                self.start(job, alloc, dur, StartKind::Priority);
                return;
            }
            self.blocked = true;
            self.first_blocked = Some(job.id);
            if can_reserve {
                self.reserve(job, bucket, dur);
            }
            return;
        }
        if dur.is_none() {
            return;
        }
        let no_bf = qos_flag(job, policy, QosFlag::NoBf);
        if can_reserve {
            if bf != BackfillPolicy::None && !no_bf {
                if let Some(alloc) = self.ctx.fit_now(job, dur) {
                    self.start(job, alloc, dur, StartKind::Backfill);
                    return;
                }
            }
            self.reserve(job, bucket, dur);
            return;
        }
        if bf == BackfillPolicy::None || no_bf {
            return;
        }
        if matches!(bf, BackfillPolicy::BestFit | BackfillPolicy::Greedy) {
            let value = crate::backfill::metric(
                policy.backfill_metric,
                job.req.total_procs(),
                job.req.nodes,
                dur.unwrap_or(0),
            );
            self.candidates.push((value, Candidate::Job(job), dur));
            return;
        }
        if let Some(alloc) = self.ctx.fit_now(job, dur) {
            self.start(job, alloc, dur, StartKind::Backfill);
        }
    }

    /// What [`Lean::consider`] does with the job of `item` once only
    /// backfill is left, under the conditions of `items_push` in
    /// [`schedule_lean_in`]: `check_static` passes (`simple`), the planning
    /// duration is the item's, `ever_fits` holds (no class, unconstrained,
    /// within the machine), no bucket is left and no QoS flag exists, so the
    /// job becomes a candidate.
    fn push_item(&mut self, item: &crate::index::QueueItem) {
        debug_assert!(item.dur != Secs::MAX, "the walk's may_fit passed");
        let value =
            crate::backfill::metric(self.ctx.policy.backfill_metric, item.procs, None, item.dur);
        let c = Candidate::Item {
            id: item.id,
            procs: item.procs,
        };
        self.candidates.push((value, c, Some(item.dur)));
    }

    /// After the walk, [`crate::backfill`]'s selection: BESTFIT tries each
    /// candidate in descending metric order (a stable sort: ties stay in
    /// queue order); GREEDY the best combination's members first, then the
    /// others, each in queue order. A candidate starts if it fits now.
    fn start_candidates(&mut self) {
        if self.candidates.is_empty() {
            return;
        }
        let mut cands = std::mem::take(&mut self.candidates);
        if self.ctx.policy.backfill == BackfillPolicy::Greedy {
            let chosen = crate::backfill::greedy_choice(
                &self.ctx.agg,
                self.ctx.now,
                cands
                    .iter()
                    .enumerate()
                    .map(|(k, &(value, c, dur))| crate::backfill::GreedyItem {
                        key: k,
                        constrained: c.constrained(),
                        procs: c.procs(),
                        dur,
                        value,
                    }),
            );
            let first = cands.iter().enumerate().filter(|(k, _)| chosen.contains(k));
            let rest = cands
                .iter()
                .enumerate()
                .filter(|(k, _)| !chosen.contains(k));
            let order: Vec<_> = first.chain(rest).map(|(_, c)| *c).collect();
            cands = order;
        } else {
            cands.sort_by_key(|c| std::cmp::Reverse(c.0));
        }
        for (_, c, dur) in cands {
            let job = match c {
                Candidate::Job(job) => job,
                Candidate::Item { id, procs } => {
                    // `fit_now`'s first refusal (no reservation in force),
                    // before the look-up.
                    if i64::from(procs) > self.free_now() {
                        continue;
                    }
                    match self.ctx.state.job(id) {
                        Some(job) => job,
                        None => continue,
                    }
                }
            };
            if let Some(alloc) = self.ctx.fit_now(job, dur) {
                self.start(job, alloc, dur, StartKind::Backfill);
            }
        }
    }

    /// HIGHEST, when the walk reaches a queued job: its remembered
    /// reservation held by [`hold_remembered`] stays where it is when no job
    /// ended since (`pinned`; then `true`: the job is decided), else it is
    /// taken out of the profile so the job can only move earlier — unless
    /// [`Lean::lands_in_place`] shows `consider` would reserve it where it
    /// is (most of the time): then it stays, decided (`true`), as
    /// `consider` would have left it, without the two profile edits.
    fn kept(&mut self, item: &crate::index::QueueItem) -> bool {
        let Some(h) = self
            .held
            .get(self.next_held)
            .filter(|h| h.job == item.id)
            .copied()
        else {
            return false;
        };
        self.next_held += 1;
        if self.pinned && h.start > self.ctx.now {
            self.blocked = true;
            let bucket = if self.plain_buckets {
                (!self.ctx.policy.reservation_buckets.is_empty()).then_some(0)
            } else {
                self.ctx
                    .state
                    .job(h.job)
                    .and_then(|job| self.bucket_of(job))
            };
            self.stay(item, &h, bucket);
            return true;
        }
        let procs = Amount::procs(i64::from(h.procs));
        if self.lands_in_place(item, &h) {
            // What `consider` would do, without taking the reservation out
            // and putting it back: no start now (it would not fit before
            // its held start), a reservation where it was.
            self.blocked = true;
            self.stay(item, &h, Some(0));
            return true;
        }
        let _ = self.ctx.agg.remove_usage(h.start, Some(h.end), procs);
        false
    }

    /// A held reservation stays where it is: it counts in its bucket and
    /// is part of the plan (its usage is already in the profile); while
    /// every reservation is of a job the aggregate profile alone places
    /// (`reusable`), it is one of them if its job is.
    fn stay(&mut self, item: &crate::index::QueueItem, h: &Held, bucket: Option<usize>) {
        if let Some(b) = bucket {
            self.bucket_left[b] = self.bucket_left[b].saturating_sub(1);
        }
        if self.reusable {
            if item.simple && item.plain && item.dur != Secs::MAX {
                self.placed.push(*h);
            } else {
                self.reusable = false;
            }
        }
        self.reservations.push(PlannedReservation {
            job: h.job,
            start: h.start,
            end: Some(h.end),
            alloc: Vec::new(),
        });
    }

    /// Whether no job of the walk can be refused a reservation, or be given
    /// an allocation, by anything but its processors, duration and the
    /// aggregate profile: no class shape check, no QoS with
    /// `NORESERVATION`, one reservation bucket open to every job, plain
    /// node access and no reservation held ([`Ctx::plain_reservations`]).
    /// Then [`Lean::lands_in_place`] may decide a held job from its queue
    /// item alone.
    fn may_keep_in_place(&self) -> bool {
        let policy = self.ctx.policy;
        self.plain_buckets
            && !policy.reservation_buckets.is_empty()
            && policy.classes.is_empty()
            && !policy
                .qos
                .values()
                .any(|q| q.flags.contains(&QosFlag::NoReservation))
            && self.ctx.plain_reservations()
    }

    /// With [`Lean::quick_keep`], whether `consider` of the job holding `h`
    /// (taken out of the profile) would reserve it exactly where it is held:
    /// the job is simple (`check_static` passes), has no node constraint
    /// and a planning duration (`h` spans it), fits the machine, the
    /// bucket has room, and the aggregate profile with `h` given back has
    /// its earliest start at `h.start`, later than now (so it cannot start
    /// now either). Decided from the queue item, without the job.
    fn lands_in_place(&self, item: &crate::index::QueueItem, h: &Held) -> bool {
        if !(self.quick_keep
            && item.simple
            && item.plain
            && item.dur != Secs::MAX
            && h.start > self.ctx.now
            && i64::from(item.procs) <= self.ctx.capacity
            && self.bucket_left[0] > 0)
        {
            return false;
        }
        debug_assert_eq!((h.procs, h.end), (item.procs, h.start + item.dur.max(1)));
        let demand = Amount::procs(i64::from(h.procs));
        self.ctx.agg.fits_again_at(
            self.ctx.now,
            demand,
            Some(item.dur.max(1)),
            (h.start, h.end, demand),
        )
    }

    fn reserve(&mut self, job: &Job, bucket: Option<usize>, dur: Option<Secs>) {
        let Some(b) = bucket else {
            return;
        };
        if let Some((start, alloc)) = self.ctx.earliest(job, dur) {
            let end = dur.map(|d| start + d.max(1));
            self.ctx.commit(job, start, end, &alloc);
            self.bucket_left[b] -= 1;
            match end {
                _ if !self.reusable => {}
                Some(end)
                    if alloc.is_empty()
                        && !crate::placement::is_constrained(&job.req)
                        && !self.ctx.is_general(job) =>
                {
                    self.placed.push(Held {
                        job: job.id,
                        start,
                        end,
                        procs: job.req.total_procs(),
                    });
                }
                _ => self.reusable = false,
            }
            self.reservations.push(PlannedReservation {
                job: job.id,
                start,
                end,
                alloc,
            });
        } else {
            // No computable start (LSF rule): it holds everything it can.
            let now = self.ctx.now;
            self.ctx.commit(job, now, None, &[]);
            self.bucket_left[b] -= 1;
            self.reusable = false;
        }
    }

    fn start(
        &mut self,
        job: &Job,
        alloc: Vec<crate::job::Alloc>,
        dur: Option<Secs>,
        kind: StartKind,
    ) {
        let now = self.ctx.now;
        let end = dur.map(|d| now + d.max(1));
        self.ctx.commit(job, now, end, &alloc);
        self.starts.push(Start {
            job: job.id,
            alloc,
            kind,
            virtual_walltime: None,
        });
    }

    fn bucket_of(&self, job: &Job) -> Option<usize> {
        crate::schedule::bucket_of(job, self.ctx.policy)
    }
}
