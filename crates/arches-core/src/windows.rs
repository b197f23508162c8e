//! Backfill windows (showbf) and start estimates (showstart).
//!
//! A backfill window is a rectangle of idle resources starting now: a set of
//! nodes, the processors idle on them, and how long they stay idle given the
//! running jobs, this iteration's planned starts and its priority
//! reservations (Moab §8.2.2). Windows may overlap; they are listed widest
//! first — the seed's figure yields "4 nodes for 1 hour" and "1 node with no
//! time limit".
//!
//! Reservations the engine planned on the aggregate processor pool (jobs
//! without node constraints) are pinned to concrete nodes here, preferring
//! nodes that are busy now so that idle nodes stay idle longest.

use crate::context::Ctx;
use crate::eligibility::planning_duration;
use crate::job::Job;
use crate::node::NodeId;
use crate::placement::node_matches;
use crate::plan::{Plan, PlannedReservation};
use crate::policy::Policy;
use crate::schedule::schedule;
use crate::state::State;
use crate::{Secs, Time};

/// Filters of a window query (showbf `-d -n -f -p -M`). Defaults match all.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WindowQuery {
    /// Only windows lasting at least this long.
    pub min_duration: Option<Secs>,
    /// Only windows with at least this many nodes.
    pub min_nodes: u32,
    /// Only windows with at least this many processors.
    pub min_procs: u32,
    /// Only nodes with all these features.
    pub features: Vec<String>,
    /// Only nodes of this partition.
    pub partition: Option<String>,
    /// Only nodes with at least this much free memory (MB).
    pub min_mem_mb: u64,
    /// The credentials asking (showbf `-u -g -a -c -q`): the administrative
    /// and standing reservations they are on the access list of count as
    /// idle; without, every such reservation is busy.
    pub cred: Option<crate::job::Credentials>,
    /// showbf `-A`: availability for any credential — every administrative
    /// and standing reservation counts as idle.
    pub any_credential: bool,
    /// showbf `--gres NAME` (Arches): windows of this generic resource
    /// instead of processors (a window's `procs` are its free units).
    pub gres: Option<String>,
}

/// A rectangle of idle resources starting at `start`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Window {
    pub start: Time,
    /// How long the resources stay idle (`None` = no limit).
    pub duration: Option<Secs>,
    pub nodes: u32,
    pub procs: u32,
    /// The nodes of the window, ascending.
    pub node_ids: Vec<NodeId>,
    /// Processors of the window on each node of `node_ids`.
    pub node_procs: Vec<u32>,
}

/// The backfill windows available now, widest first.
pub fn backfill_windows(state: &State, policy: &Policy, now: Time, q: &WindowQuery) -> Vec<Window> {
    let plan = schedule(state, policy, now);
    windows_in_plan(state, policy, &plan, now, q)
}

/// The backfill windows at `now` given an already computed `plan` (a driver
/// serving showbf from its last iteration instead of scheduling again).
/// `now` may be later than `plan.now`; the plan's starts that the driver has
/// already applied to `state` (running jobs) are not counted twice.
pub fn windows_in_plan(
    state: &State,
    policy: &Policy,
    plan: &Plan,
    now: Time,
    q: &WindowQuery,
) -> Vec<Window> {
    windows_from(state, policy, plan, now, now, q)
}

/// Current and future windows (showbf `-D`): the windows starting now, then
/// those starting at each later time when processors are released (a job's
/// expected end, a reservation's end), up to `max_points` such times, in
/// start order; a later window that only repeats an earlier one's nodes,
/// processors and end is left out.
pub fn future_windows(
    state: &State,
    policy: &Policy,
    plan: &Plan,
    now: Time,
    q: &WindowQuery,
    max_points: usize,
) -> Vec<Window> {
    let mut ctx = planned_ctx_with(state, policy, plan, now).0;
    if q.any_credential {
        ctx.lift_everything();
    } else if let Some(c) = &q.cred {
        ctx.lift_for(c);
    }
    let mut times: Vec<Time> = Vec::new();
    for prof in ctx.node_profiles() {
        let mut before = prof.free_at(now).procs;
        for &(t, amt) in prof.spans().iter().filter(|s| s.0 > now) {
            if amt.procs > before {
                times.push(t);
            }
            before = amt.procs;
        }
    }
    times.sort_unstable();
    times.dedup();
    times.truncate(max_points);
    let mut out = windows_in_plan(state, policy, plan, now, q);
    for t in times {
        for w in windows_from(state, policy, plan, now, t, q) {
            let end = |w: &Window| w.duration.map(|d| w.start + d);
            if !out
                .iter()
                .any(|o| o.node_ids == w.node_ids && o.procs == w.procs && end(o) == end(&w))
            {
                out.push(w);
            }
        }
    }
    out
}

/// The windows starting at `at` (not before `now`, the planning time).
fn windows_from(
    state: &State,
    policy: &Policy,
    plan: &Plan,
    now: Time,
    at: Time,
    q: &WindowQuery,
) -> Vec<Window> {
    let at = at.max(now);
    let mut ctx = planned_ctx_with(state, policy, plan, now).0;
    if q.any_credential {
        ctx.lift_everything();
    } else if let Some(c) = &q.cred {
        ctx.lift_for(c);
    }
    let profiles = ctx.node_profiles().to_vec();
    // Per node: the breakpoints of what the window counts (processors, or
    // the units of one generic resource).
    let counted: Vec<Option<Vec<(Time, i64)>>> = match q.gres.as_deref() {
        None => profiles
            .iter()
            .map(|p| Some(p.spans().iter().map(|(t, a)| (*t, a.procs)).collect()))
            .collect(),
        Some(name) => match state.gres_table().id(name) {
            Some(kind) => ctx.gres_spans(kind),
            None => vec![None; profiles.len()],
        },
    };
    // Per node: (procs level k, how long k procs stay idle), k = 1..=free now.
    let mut levels: Vec<(NodeId, Vec<Level>)> = Vec::new();
    for (i, node) in state.nodes().iter().enumerate() {
        let id = i as NodeId;
        if !q.features.iter().all(|f| node.features.contains(f))
            || q.partition.as_ref().is_some_and(|p| *p != node.partition)
            || !node_matches(node, &crate::job::Request::procs(1))
        {
            continue;
        }
        let prof = &profiles[i];
        let now_free = prof.free_at(at);
        let Some(spans) = counted[i].as_ref() else {
            continue;
        };
        let at_now = spans
            .iter()
            .take_while(|s| s.0 <= at)
            .last()
            .map_or(0, |s| s.1);
        if at_now <= 0
            || now_free.procs <= 0
            || (q.min_mem_mb > 0 && node.mem_mb > 0 && now_free.mem < q.min_mem_mb as i64)
        {
            continue;
        }
        let mut lv = Vec::new();
        let mut level = at_now;
        for &(t, amt) in spans.iter().filter(|s| s.0 > at) {
            while amt < level && level > 0 {
                lv.push((level as u32, Some(t - at)));
                level -= 1;
            }
        }
        while level > 0 {
            lv.push((level as u32, None));
            level -= 1;
        }
        levels.push((id, lv));
    }
    // Candidate durations: every distinct one, longest first (None = forever).
    let mut durs: Vec<Option<Secs>> = levels
        .iter()
        .flat_map(|(_, l)| l.iter().map(|x| x.1))
        .collect();
    durs.sort_by(|a, b| longer(*b, *a));
    durs.dedup();
    let mut out: Vec<Window> = Vec::new();
    for d in durs {
        if q.min_duration.is_some_and(|m| d.is_some_and(|d| d < m)) {
            continue;
        }
        let mut ids = Vec::new();
        let mut per = Vec::new();
        let mut procs = 0u32;
        for (id, lv) in &levels {
            let k = lv
                .iter()
                .filter(|x| !longer(d, x.1).is_gt())
                .map(|x| x.0)
                .max();
            if let Some(k) = k {
                ids.push(*id);
                per.push(k);
                procs += k;
            }
        }
        if ids.is_empty() || (ids.len() as u32) < q.min_nodes || procs < q.min_procs {
            continue;
        }
        // A shorter window with the same resources as a longer one adds nothing.
        if out
            .iter()
            .any(|w| w.nodes == ids.len() as u32 && w.procs == procs)
        {
            continue;
        }
        out.push(Window {
            start: at,
            duration: d,
            nodes: ids.len() as u32,
            procs,
            node_ids: ids,
            node_procs: per,
        });
    }
    out.sort_by(|a, b| {
        b.nodes
            .cmp(&a.nodes)
            .then(b.procs.cmp(&a.procs))
            .then(longer(b.duration, a.duration))
    });
    out
}

/// Why there is no start estimate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NoEstimate {
    /// The request can never run on the configured nodes.
    NeverFits(String),
    /// It waits for a job without a wall-clock limit: its start cannot be
    /// computed (the LSF rule).
    NoWalltimeAhead,
    /// It is not eligible (a hold, dependency, start date or policy).
    Blocked(String),
}

impl std::fmt::Display for NoEstimate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NoEstimate::NeverFits(why) => write!(f, "job cannot run in any partition ({why})"),
            NoEstimate::NoWalltimeAhead => f.write_str(
                "start time cannot be computed: it waits for a job without a wall-clock limit",
            ),
            NoEstimate::Blocked(why) => write!(f, "job is not eligible ({why})"),
        }
    }
}

/// The earliest start the engine would give `job` if it were the top job:
/// only running jobs count, not other queued jobs. `job` may be queued in the
/// state or hypothetical (showstart with a resource request). `None` when it
/// can never run on the configured nodes, or waits on a job without a
/// wall-clock limit ([`start_estimate`] says which).
pub fn estimate_start(state: &State, policy: &Policy, now: Time, job: &Job) -> Option<Time> {
    start_estimate(state, policy, now, job).ok()
}

/// [`estimate_start`] with the reason when there is none.
pub fn start_estimate(
    state: &State,
    policy: &Policy,
    now: Time,
    job: &Job,
) -> Result<Time, NoEstimate> {
    let mut ctx = Ctx::new(state, policy, now);
    ctx.ever_fits(job).map_err(NoEstimate::NeverFits)?;
    let dur = planning_duration(job, policy);
    if ctx.fit_now(job, dur).is_some() {
        return Ok(now);
    }
    ctx.earliest(job, dur)
        .map(|(t, _)| t)
        .ok_or(NoEstimate::NoWalltimeAhead)
}

/// Moab's priority-based estimate: when `job` would start given the jobs
/// ahead of it in priority order. Every eligible job ahead of it keeps its
/// place (the engine plans each one a reservation, conservative backfill),
/// none behind it can delay it. `job` may be queued in `state`, or
/// hypothetical (it then queues behind every queued job, submitted `now`).
pub fn priority_estimate(
    state: &State,
    policy: &Policy,
    now: Time,
    job: &Job,
) -> Result<Time, NoEstimate> {
    let mut p = policy.clone();
    p.reservation_buckets = vec![crate::policy::ReservationBucket {
        depth: u32::MAX,
        qos: None,
    }];
    if p.reservation_policy == crate::policy::ReservationPolicy::Never {
        p.reservation_policy = crate::policy::ReservationPolicy::CurrentHighest;
    }
    // Jobs behind it neither start out of order nor hold anything.
    p.backfill = crate::policy::BackfillPolicy::None;
    let owned;
    let (st, id) = match state
        .job(job.id)
        .filter(|j| j.state == crate::job::JobState::Idle)
    {
        Some(j) if j.id == job.id && job.id != 0 => (state, j.id),
        _ => {
            let mut s = state.clone();
            let mut j = job.clone();
            j.id = s.jobs().map(|j| j.id).max().unwrap_or(0) + 1;
            j.submit_time = now;
            j.state = crate::job::JobState::Idle;
            let id = j.id;
            s.apply(crate::state::Event::submit(j), now)
                .map_err(|e| NoEstimate::Blocked(e.to_string()))?;
            owned = s;
            (&owned, id)
        }
    };
    let plan = schedule(st, &p, now);
    if plan.starts.iter().any(|s| s.job == id) {
        return Ok(now);
    }
    if let Some(r) = plan.reservation(id) {
        return Ok(r.start);
    }
    match plan.decisions.get(&id).and_then(|d| d.reason.clone()) {
        Some(crate::plan::BlockReason::NeverFits(why)) => Err(NoEstimate::NeverFits(why)),
        Some(r) if !plan.decisions.get(&id).is_some_and(|d| d.eligible) => {
            Err(NoEstimate::Blocked(r.message(now)))
        }
        _ => Err(NoEstimate::NoWalltimeAhead),
    }
}

/// How many recent starts the historical estimate averages.
pub const HISTORY_SAMPLE: usize = 100;

/// Moab's historical estimate: the job's submit time (`now` for a
/// hypothetical one) plus the average queue time of the last
/// [`HISTORY_SAMPLE`] jobs of a similar size (half to twice its
/// processors) that started, never before `now`. `Err` says why there is
/// none (no such job in the history the state keeps).
pub fn historical_estimate(state: &State, now: Time, job: &Job) -> Result<Time, String> {
    let procs = job.req.total_procs().max(1);
    let (lo, hi) = (procs.div_ceil(2), procs.saturating_mul(2));
    let mut waits: Vec<(Time, Time)> = state
        .jobs()
        .filter(|j| j.id != job.id)
        .filter_map(|j| {
            let r = j.run.as_ref()?;
            let p = j.procs();
            (lo..=hi)
                .contains(&p)
                .then_some((r.start_time, (r.start_time - j.submit_time).max(0)))
        })
        .collect();
    if waits.is_empty() {
        return Err(format!(
            "no job of {lo} to {hi} procs has started in the history kept"
        ));
    }
    waits.sort_unstable_by_key(|w| std::cmp::Reverse(*w));
    waits.truncate(HISTORY_SAMPLE);
    let avg = waits.iter().map(|w| w.1).sum::<Time>() / waits.len() as Time;
    let from = if state.job(job.id).is_some() && job.id != 0 {
        job.submit_time
    } else {
        now
    };
    Ok((from + avg).max(now))
}

/// A processor count on one node and how long that many stay idle.
type Level = (u32, Option<Secs>);

/// The plan's priority reservations with concrete nodes (showres): those the
/// engine planned on the aggregate processor pool are pinned to nodes the
/// way [`backfill_windows`] sees them. Ordered by start, then job id.
pub fn reservations(state: &State, policy: &Policy, plan: &Plan) -> Vec<PlannedReservation> {
    reservations_at(state, policy, plan, plan.now)
}

/// [`reservations`] seen at `now` (at or after `plan.now`), for a driver
/// whose `state` already holds the plan's starts as running jobs.
pub fn reservations_at(
    state: &State,
    policy: &Policy,
    plan: &Plan,
    now: Time,
) -> Vec<PlannedReservation> {
    let (_, pinned) = planned_ctx_with(state, policy, plan, now);
    let mut out = pinned;
    out.sort_by_key(|r| (r.start, r.job));
    out
}

/// Orders durations, `None` (forever) being the longest.
fn longer(a: Option<Secs>, b: Option<Secs>) -> std::cmp::Ordering {
    match (a, b) {
        (None, None) => std::cmp::Ordering::Equal,
        (None, Some(_)) => std::cmp::Ordering::Greater,
        (Some(_), None) => std::cmp::Ordering::Less,
        (Some(x), Some(y)) => x.cmp(&y),
    }
}

/// A planning context at `now` (never before `plan.now`) holding the plan's
/// starts and reservations on nodes, and the reservations with their
/// (pinned) nodes. Starts whose job already runs in `state` are part of the
/// running load already; reservations due before `now` are held from `now`.
fn planned_ctx_with<'a>(
    state: &'a State,
    policy: &'a Policy,
    plan: &Plan,
    now: Time,
) -> (Ctx<'a>, Vec<PlannedReservation>) {
    let now = now.max(plan.now);
    let mut ctx = Ctx::new(state, policy, now);
    ctx.node_profiles();
    for s in &plan.starts {
        let Some(job) = state.job(s.job) else {
            continue;
        };
        if job.run.is_none() {
            let end = planning_duration(job, policy).map(|d| now + d.max(1));
            ctx.commit(job, now, end, &s.alloc);
        }
    }
    let mut pinned = Vec::with_capacity(plan.reservations.len());
    for r in &plan.reservations {
        if let Some(job) = state.job(r.job).filter(|j| j.run.is_none()) {
            let start = r.start.max(now);
            let alloc = if r.alloc.is_empty() {
                ctx.place_reservation(job, start, r.end)
            } else {
                r.alloc.clone()
            };
            if r.end.is_none_or(|e| e > start) {
                ctx.commit(job, start, r.end, &alloc);
            }
            pinned.push(PlannedReservation { alloc, ..r.clone() });
        }
    }
    (ctx, pinned)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::job::{Alloc, Request, StartKind};
    use crate::node::Node;
    use crate::state::Event;

    fn run_on(s: &mut State, id: u64, nodes: &[u32], wall: Secs) {
        let job = Job::new(id, "u", Request::procs(nodes.len() as u32), Some(wall), 0);
        s.apply(Event::submit(job), 0).unwrap();
        let alloc = nodes
            .iter()
            .map(|n| Alloc {
                node: *n,
                tasks: 1,
                procs: 1,
                mem_mb: 0,
                gres: Default::default(),
            })
            .collect();
        let kind = StartKind::Priority;
        s.apply(
            Event::Start {
                job: id,
                alloc,
                kind,
            },
            0,
        )
        .unwrap();
    }

    /// The seed's figure: 8 nodes, two running jobs and a reservation for
    /// job C: 4 nodes for one hour, and 1 node with no time limit.
    #[test]
    fn seed_figure_windows() {
        let nodes = (0..8).map(|i| Node::new(&format!("n{i}"), 1, 0)).collect();
        let mut s = State::new(nodes);
        run_on(&mut s, 1, &[0, 1, 2], 3600);
        run_on(&mut s, 2, &[3], 36_000);
        let c = Job::new(3, "u", Request::procs(6), Some(7200), 0);
        s.apply(Event::submit(c), 0).unwrap();
        let p = Policy::default();
        let w = backfill_windows(&s, &p, 0, &WindowQuery::default());
        let shape: Vec<(u32, Option<Secs>)> = w.iter().map(|w| (w.nodes, w.duration)).collect();
        assert_eq!(shape, vec![(4, Some(3600)), (1, None)]);
        let q = WindowQuery {
            min_duration: Some(7200),
            ..WindowQuery::default()
        };
        let long = backfill_windows(&s, &p, 0, &q);
        assert_eq!(long.len(), 1);
        assert_eq!(long[0].nodes, 1);
        // showres: C is pinned to the three nodes job 1 frees and three idle ones.
        let plan = schedule(&s, &p, 0);
        let rsv = reservations(&s, &p, &plan);
        assert_eq!(rsv.len(), 1);
        let nodes: Vec<u32> = rsv[0].alloc.iter().map(|a| a.node).collect();
        assert_eq!(nodes, vec![0, 1, 2, 4, 5, 6]);
        assert_eq!((rsv[0].start, rsv[0].end), (3600, Some(10_800)));
        // showstart: C (6 procs) could start when job 1 ends.
        assert_eq!(estimate_start(&s, &p, 0, s.job(3).unwrap()), Some(3600));
        assert_eq!(priority_estimate(&s, &p, 0, s.job(3).unwrap()), Ok(3600));
        let small = Job::new(99, "u", Request::procs(2), Some(60), 0);
        assert_eq!(estimate_start(&s, &p, 0, &small), Some(0));
        let huge = Job::new(98, "u", Request::procs(9), Some(60), 0);
        assert_eq!(estimate_start(&s, &p, 0, &huge), None);
    }

    /// A driver that applied the plan's starts and serves showbf/showres
    /// later from the same plan sees the same windows, shifted by the time
    /// passed, and the same pinned reservation.
    #[test]
    fn windows_in_plan_after_starts_applied() {
        let nodes = (0..4).map(|i| Node::new(&format!("n{i}"), 2, 0)).collect();
        let mut s = State::new(nodes);
        run_on(&mut s, 1, &[0, 1], 600);
        for (id, procs, wall) in [(2, 8, 1200), (3, 2, 300)] {
            let job = Job::new(id, "u", Request::procs(procs), Some(wall), 0);
            s.apply(Event::submit(job), 0).unwrap();
        }
        let p = Policy::default();
        let q = WindowQuery::default();
        let before = backfill_windows(&s, &p, 0, &q);
        let plan = schedule(&s, &p, 0);
        assert_eq!(plan.starts.len(), 1, "job 3 backfills");
        let rsv_before = reservations(&s, &p, &plan);
        for st in &plan.starts {
            let (job, alloc) = (st.job, st.alloc.clone());
            let kind = StartKind::Backfill;
            s.apply(Event::Start { job, alloc, kind }, 0).unwrap();
        }
        assert_eq!(windows_in_plan(&s, &p, &plan, 0, &q), before);
        assert_eq!(reservations_at(&s, &p, &plan, 0), rsv_before);
        let later = windows_in_plan(&s, &p, &plan, 100, &q);
        let shifted: Vec<(u32, Option<Secs>)> = before
            .iter()
            .map(|w| (w.procs, w.duration.map(|d| d - 100)))
            .collect();
        let got: Vec<(u32, Option<Secs>)> = later.iter().map(|w| (w.procs, w.duration)).collect();
        assert_eq!(got, shifted);
        assert!(later.iter().all(|w| w.start == 100));
    }

    /// showstart's three methods: the reservation-based estimate sees only
    /// running jobs, the priority-based one also the job ahead, the
    /// historical one the queue times of similar jobs.
    #[test]
    fn priority_and_historical_estimates() {
        let mut s = State::new(vec![Node::new("n0", 4, 0)]);
        run_on(&mut s, 1, &[0, 0, 0, 0], 100);
        for (id, wall, t) in [(2, 100, 1), (3, 50, 2)] {
            let j = Job::new(id, "u", Request::procs(4), Some(wall), t);
            s.apply(Event::submit(j), t).unwrap();
        }
        let p = Policy::default();
        let j3 = s.job(3).unwrap().clone();
        assert_eq!(start_estimate(&s, &p, 10, &j3), Ok(100));
        assert_eq!(priority_estimate(&s, &p, 10, &j3), Ok(200));
        // A hypothetical request queues behind both.
        let hyp = Job::new(0, "", Request::procs(2), Some(10), 10);
        assert_eq!(priority_estimate(&s, &p, 10, &hyp), Ok(250));
        // Job 1 (4 procs) started as soon as it was submitted.
        assert_eq!(historical_estimate(&s, 10, &j3), Ok(10));
        let big = Job::new(0, "", Request::procs(64), Some(10), 10);
        let err = historical_estimate(&s, 10, &big).unwrap_err();
        assert!(err.contains("32 to 128 procs"), "{err}");
        let never = Job::new(0, "", Request::procs(8), Some(10), 10);
        assert!(matches!(
            start_estimate(&s, &p, 10, &never),
            Err(NoEstimate::NeverFits(_))
        ));
    }
}
