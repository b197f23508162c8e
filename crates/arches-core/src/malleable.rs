//! Malleable and resizable jobs: a job submitted with a processor range
//! (`msub -l procs=MIN-MAX`) starts as soon as its minimum fits and may
//! use up to its maximum.
//!
//! - **Growth** (Windows HPC: "grows running jobs to their maximum
//!   requested resources before it tries to utilize resources for
//!   backfilling"): every iteration, running malleable jobs below their
//!   ceiling take, in priority order, the processors that are idle now and
//!   that no reservation needs before the job ends ([`GrowthPolicy`]:
//!   before backfill, as the seed, or after it, or not at all). A job
//!   without a wall-clock limit only takes what no reservation ever needs.
//! - **Resize requests** (LSF "pending job resize allocation requests"):
//!   the owner of a running ranged job asks for `+N` processors
//!   (`mjobctl -m proccount+=N`); the request is planned like a queued job
//!   with the job's priority whose run time is the job's remaining run
//!   time (a 20-hour job 4 hours in asks for 16 hours), so it grows the job
//!   in priority order when it fits, or as backfill when it fits without
//!   delaying any reservation; it never holds a reservation of its own,
//!   and the plan says why it waits. A release (`-=N`) takes effect at
//!   once ([`release`]) and lowers the ceiling of automatic growth to the
//!   new size (a grow request raises it again).
//!
//! Requests are planned through the normal walk ([`crate::schedule()`]) as
//! shadow jobs: a queued copy of the job (id [`SHADOW_BIT`]` | id`) asking
//! for the extra processors, under a copy of its QoS that holds no
//! reservation; the plan turns the shadow's start into a [`Grow`] and its
//! decision into the request's reason. Growth is planned against the
//! plan's starts and reservations ([`crate::context`]'s `fit_now`: now,
//! for the job's remaining run, without delaying anything planned). With
//! growth before backfill the iteration is planned twice: without
//! backfill (priority starts and reservations), then growth, then the
//! whole plan again on the grown allocations, whose backfill fills what is
//! left; so growth never delays a reservation, and backfill only uses what
//! growth left.

use std::collections::BTreeMap;

use crate::context::Ctx;
use crate::eligibility::{planned_end, planning_duration};
use crate::job::{Alloc, Job, JobFlag, JobId, JobState, Request, StartKind};
use crate::plan::{BlockReason, Plan};
use crate::policy::{BackfillPolicy, Policy, QosConfig, QosFlag};
use crate::priority::priority;
use crate::state::{Event, State};
use crate::Time;

/// Ids of shadow jobs (a pending resize request of job `id` is planned as
/// job `SHADOW_BIT | id`); real job ids stay far below.
pub const SHADOW_BIT: JobId = 1 << 62;

/// QoS name prefix of shadow jobs (a copy of the job's QoS that holds no
/// reservation).
const SHADOW_QOS: &str = "\u{1}resize:";

/// A processor range and what is asked of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Elastic {
    /// Processors to start with (the job's request).
    pub min: u32,
    /// The most it may use.
    pub max: u32,
    /// The ceiling of automatic growth: `max`, lowered by a release, raised
    /// again by a grow request.
    pub cap: u32,
    /// A pending grow request.
    pub request: Option<GrowRequest>,
}

/// `mjobctl -m proccount+=N` on a running job, not yet satisfied.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GrowRequest {
    /// Extra processors wanted.
    pub procs: u32,
    /// When it was asked for.
    pub since: Time,
}

/// `MALLEABLEGROWTH`: when running malleable jobs grow.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum GrowthPolicy {
    /// They do not grow by themselves (only resize requests grow them).
    None,
    /// After priority starts and reservations, before backfill (the seed).
    #[default]
    BeforeBackfill,
    /// After backfill: with what backfill left.
    AfterBackfill,
}

impl GrowthPolicy {
    pub const ALL: &'static [GrowthPolicy] = &[
        GrowthPolicy::None,
        GrowthPolicy::BeforeBackfill,
        GrowthPolicy::AfterBackfill,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            GrowthPolicy::None => "NONE",
            GrowthPolicy::BeforeBackfill => "BEFOREBACKFILL",
            GrowthPolicy::AfterBackfill => "AFTERBACKFILL",
        }
    }
}

impl std::fmt::Display for GrowthPolicy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for GrowthPolicy {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        GrowthPolicy::ALL
            .iter()
            .copied()
            .find(|p| p.as_str().eq_ignore_ascii_case(s.trim()))
            .ok_or_else(|| {
                format!("unknown growth policy '{s}' (NONE, BEFOREBACKFILL, AFTERBACKFILL)")
            })
    }
}

/// How a job grew.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GrowKind {
    /// Automatic growth toward its ceiling.
    Auto,
    /// Its resize request was granted, in priority order or as backfill.
    Request(StartKind),
}

/// One growth decision: the job takes these processors too.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grow {
    pub job: JobId,
    pub alloc: Vec<Alloc>,
    pub how: GrowKind,
}

impl Grow {
    pub fn procs(&self) -> u32 {
        self.alloc.iter().map(|a| a.procs).sum()
    }
}

/// The elastic part of a plan.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ElasticPlan {
    /// Jobs to grow (applied with [`Event::Grow`]).
    pub grows: Vec<Grow>,
    /// Pending resize requests that did not grow their job this
    /// iteration, and why (the shadow job's reason).
    pub waits: Vec<(JobId, BlockReason)>,
    /// Malleable jobs below their ceiling that did not grow, and why.
    pub notes: Vec<(JobId, String)>,
}

/// Whether `id` is a shadow job's.
pub fn is_shadow(id: JobId) -> bool {
    id & SHADOW_BIT != 0
}

/// The processors a job has now (its allocation, or its request).
fn current(job: &Job) -> u32 {
    job.procs()
}

/// Checks a range at submission: `min..=max`, `min >= 1`, whole tasks.
pub fn check_range(min: u32, max: u32, procs_per_task: u32) -> Result<Elastic, String> {
    if min == 0 || max < min {
        return Err(format!(
            "invalid processor range {min}-{max} (the minimum must be at least 1 and at most the maximum)"
        ));
    }
    let ppt = procs_per_task.max(1);
    if min % ppt != 0 || max % ppt != 0 {
        return Err(format!(
            "processor range {min}-{max} is not a whole number of {ppt}-processor tasks"
        ));
    }
    Ok(Elastic {
        min,
        max,
        cap: max,
        request: None,
    })
}

/// A running resizable job's range, allocation and task size, for a
/// resize by `procs` processors; why it cannot be resized.
fn resizable(job: &Job, procs: u32) -> Result<(Elastic, &crate::job::RunInfo, u32), String> {
    let e = job.elastic.ok_or_else(|| {
        format!(
            "job {} is not resizable (it was not submitted with a processor range, msub -l procs=MIN-MAX)",
            job.id
        )
    })?;
    let run = job
        .run
        .as_ref()
        .filter(|_| job.state == JobState::Running)
        .ok_or_else(|| {
            format!(
                "job {} is {}: only a running job can be resized",
                job.id,
                job.display_state()
            )
        })?;
    let ppt = job.req.procs_per_task.max(1);
    if procs == 0 || procs % ppt != 0 {
        return Err(format!(
            "invalid resize of {procs} processors (a positive multiple of {ppt})"
        ));
    }
    Ok((e, run, ppt))
}

/// `mjobctl -m proccount+=N`: the job's range with the request recorded
/// (added to a pending one). `Err`: why it is refused.
pub fn request(job: &Job, procs: u32, now: Time) -> Result<Elastic, String> {
    let (e, _, _) = resizable(job, procs)?;
    let pending = e.request.map_or(0, |r| r.procs);
    let target = current(job) + pending + procs;
    if target > e.max {
        return Err(format!(
            "job {} would have {target} processors, more than its maximum of {}",
            job.id, e.max
        ));
    }
    Ok(Elastic {
        cap: e.cap.max(target),
        request: Some(GrowRequest {
            procs: pending + procs,
            since: e.request.map_or(now, |r| r.since),
        }),
        ..e
    })
}

/// `mjobctl -m proccount-=N`: what to take out of the allocation (the most
/// recently added processors first) and the job's range after it (its
/// ceiling lowered to the new size; a pending request is dropped).
pub fn release(job: &Job, procs: u32) -> Result<(Vec<Alloc>, Elastic), String> {
    let (e, run, ppt) = resizable(job, procs)?;
    let now_procs = run.procs();
    if now_procs < procs || now_procs - procs < e.min {
        return Err(format!(
            "job {} would have {} processors, fewer than its minimum of {}",
            job.id,
            now_procs.saturating_sub(procs),
            e.min
        ));
    }
    let per_task_mem = job.req.mem_per_task_mb;
    let mut tasks = procs / ppt;
    let mut less = Vec::new();
    for a in run.alloc.iter().rev() {
        if tasks == 0 {
            break;
        }
        let t = a.tasks.min(tasks);
        if t == 0 {
            continue;
        }
        tasks -= t;
        less.push(Alloc {
            node: a.node,
            tasks: t,
            procs: t * ppt,
            mem_mb: if t == a.tasks {
                a.mem_mb
            } else {
                per_task_mem.saturating_mul(u64::from(t)).min(a.mem_mb)
            },
            // Ranged jobs ask for no generic resources (refused at
            // submission).
            gres: crate::gres::Gres::NONE,
        });
    }
    let left = now_procs - procs;
    Ok((
        less,
        Elastic {
            cap: left,
            request: None,
            ..e
        },
    ))
}

/// Running jobs with a pending resize request.
fn requesters(state: &State) -> Vec<&Job> {
    state
        .active()
        .filter(|j| j.state == JobState::Running)
        .filter(|j| j.run.as_ref().is_some_and(|r| r.terminating.is_none()))
        .filter(|j| j.elastic.is_some_and(|e| e.request.is_some()))
        .collect()
}

/// Running malleable jobs below their ceiling, highest priority first.
fn growable<'a>(state: &'a State, policy: &Policy, now: Time) -> Vec<&'a Job> {
    if policy.growth == GrowthPolicy::None {
        return Vec::new();
    }
    let mut v: Vec<(i64, Time, JobId, &Job)> = state
        .active()
        .filter(|j| j.state == JobState::Running)
        .filter(|j| j.run.as_ref().is_some_and(|r| r.terminating.is_none()))
        .filter(|j| {
            j.elastic
                .is_some_and(|e| e.request.is_none() && current(j) < e.cap)
        })
        .map(|j| (-priority(j, policy, now).total, j.submit_time, j.id, j))
        .collect();
    v.sort_by_key(|x| (x.0, x.1, x.2));
    v.into_iter().map(|x| x.3).collect()
}

/// The shadow job of a pending request.
fn shadow(job: &Job, policy: &Policy, now: Time) -> Option<Job> {
    let req = job.elastic?.request?;
    let ppt = job.req.procs_per_task.max(1);
    let mut s = job.clone();
    s.id = SHADOW_BIT | job.id;
    s.req = Request {
        tasks: req.procs / ppt,
        procs_per_task: ppt,
        nodes: None,
        tasks_per_node: None,
        mem_per_task_mb: job.req.mem_per_task_mb,
        features: job.req.features.clone(),
        partition: job.req.partition.clone(),
        // Host list, access policy, reservation binding (a ranged
        // job has no generic resources, node groups or task list).
        layout: job.req.layout.clone(),
    };
    // Its run time is what is left of the job's (LSF).
    s.walltime = planned_end(job, policy, now).map(|e| (e - now).max(1));
    s.estimate = None;
    s.state = JobState::Idle;
    s.run = None;
    s.completion = None;
    s.holds = crate::job::Holds::none();
    s.depend.clear();
    s.start_after = None;
    s.data_wait = None;
    s.elastic = None;
    s.flags.remove(JobFlag::Preemptor);
    s.cred.qos = Some(compact_str::format_compact!(
        "{SHADOW_QOS}{}",
        crate::qos::effective(job, policy).unwrap_or("")
    ));
    Some(s)
}

/// The state and policy with every pending request as a shadow job.
fn with_shadows(state: &State, policy: &Policy, now: Time, jobs: &[&Job]) -> (State, Policy) {
    let mut st = state.clone();
    let mut pol = policy.clone();
    for j in jobs {
        let Some(s) = shadow(j, policy, now) else {
            continue;
        };
        let q = s.cred.qos.as_deref().unwrap_or_default().to_string();
        pol.qos.entry(q).or_insert_with(|| {
            let base = crate::qos::effective(j, policy)
                .and_then(|name| policy.qos.get(name))
                .cloned()
                .unwrap_or_default();
            QosConfig {
                priority: base.priority,
                flags: vec![QosFlag::NoReservation],
                ..QosConfig::default()
            }
        });
        // A shadow id is never a real job's: the submit cannot clash.
        let _ = st.apply(Event::submit(s), now);
    }
    (st, pol)
}

/// One iteration with elastic jobs ([`crate::schedule()`] calls it; `inner`
/// plans rigid jobs).
pub(crate) fn schedule(
    state: &State,
    policy: &Policy,
    now: Time,
    inner: fn(&State, &Policy, Time) -> Plan,
) -> Plan {
    let asking = requesters(state);
    let growing = growable(state, policy, now);
    let starting = policy.growth != GrowthPolicy::None
        && state
            .queued()
            .any(|j| j.elastic.is_some() && j.state == JobState::Idle);
    if asking.is_empty() && growing.is_empty() && !starting {
        return inner(state, policy, now);
    }
    let (st, mut pol) = if asking.is_empty() {
        (state.clone(), policy.clone())
    } else {
        with_shadows(state, policy, now, &asking)
    };
    // Growth reads the plans' decisions (the shadow jobs' reasons).
    pol.plan_decisions = true;
    let mut plan = match policy.growth {
        GrowthPolicy::BeforeBackfill => {
            // Priority starts and reservations first, without backfill.
            let nobf = Policy {
                backfill: BackfillPolicy::None,
                ..pol.clone()
            };
            let first = inner(&st, &nobf, now);
            let pre = elastic_starts(&st, &first);
            if growing.is_empty() && pre.is_empty() {
                inner(&st, &pol, now)
            } else {
                let (mut grown, grows, notes) = grow_after(&st, &pol, &first, now, &pre);
                for g in &grows {
                    let _ = grown.apply(
                        Event::Grow {
                            job: g.job,
                            alloc: g.alloc.clone(),
                        },
                        now,
                    );
                }
                // Then everything again on the grown allocations: backfill
                // fills what growth left.
                let mut plan = inner(&grown, &pol, now);
                plan.starts.splice(0..0, pre);
                plan.elastic.grows = grows;
                plan.elastic.notes = notes;
                plan
            }
        }
        GrowthPolicy::AfterBackfill => {
            let mut plan = inner(&st, &pol, now);
            let pre = elastic_starts(&st, &plan);
            if !growing.is_empty() || !pre.is_empty() {
                let (_, grows, notes) = grow_after(&st, &pol, &plan, now, &pre);
                plan.elastic.grows = grows;
                plan.elastic.notes = notes;
            }
            plan
        }
        GrowthPolicy::None => inner(&st, &pol, now),
    };
    if !asking.is_empty() {
        take_shadows(&mut plan);
    }
    plan
}

/// The plan's starts of malleable jobs (they may grow in the same
/// iteration), unless the plan preempts (its starts then depend on it).
fn elastic_starts(state: &State, plan: &Plan) -> Vec<crate::plan::Start> {
    if !plan.preemptions.is_empty() || !plan.locks.is_empty() {
        return Vec::new();
    }
    plan.starts
        .iter()
        .filter(|s| !is_shadow(s.job))
        .filter(|s| state.job(s.job).is_some_and(|j| j.elastic.is_some()))
        .cloned()
        .collect()
}

/// Growth after `plan`: the state with the malleable starts `pre` applied,
/// the grows (of the jobs running before and of `pre`) and why others did
/// not grow.
fn grow_after(
    state: &State,
    policy: &Policy,
    plan: &Plan,
    now: Time,
    pre: &[crate::plan::Start],
) -> (State, Vec<Grow>, Vec<(JobId, String)>) {
    let mut st = state.clone();
    for s in pre {
        let _ = st.apply(
            Event::Start {
                job: s.job,
                alloc: s.alloc.clone(),
                kind: s.kind,
            },
            now,
        );
    }
    let jobs = growable(&st, policy, now);
    let skip: Vec<JobId> = pre.iter().map(|s| s.job).collect();
    let (grows, notes) = grow(&st, policy, plan, now, &jobs, &skip);
    (st, grows, notes)
}

/// Turns shadow starts into grows and shadow decisions into reasons.
fn take_shadows(plan: &mut Plan) {
    let starts = std::mem::take(&mut plan.starts);
    for s in starts {
        if is_shadow(s.job) {
            plan.elastic.grows.push(Grow {
                job: s.job & !SHADOW_BIT,
                alloc: s.alloc,
                how: GrowKind::Request(s.kind),
            });
        } else {
            plan.starts.push(s);
        }
    }
    plan.reservations.retain(|r| !is_shadow(r.job));
    plan.preemptions
        .retain(|p| !is_shadow(p.job) && !is_shadow(p.by));
    plan.locks.retain(|l| !is_shadow(l.job));
    plan.preempt_notes.retain(|n| !is_shadow(n.job));
    let mut waits = Vec::new();
    let decisions: Vec<_> = plan
        .decisions
        .iter()
        .filter(|(id, d)| {
            if is_shadow(**id) {
                if let Some(r) = &d.reason {
                    waits.push((**id & !SHADOW_BIT, r.clone()));
                }
                false
            } else {
                true
            }
        })
        .map(|(id, d)| (*id, d.clone()))
        .collect();
    plan.decisions = decisions.into_iter().collect();
    let granted: Vec<JobId> = plan.elastic.grows.iter().map(|g| g.job).collect();
    waits.retain(|(id, _)| !granted.contains(id));
    plan.elastic.waits = waits;
}

/// Automatic growth of `jobs` (priority order) with what the plan left
/// idle now and no reservation needs before each job ends.
fn grow(
    state: &State,
    policy: &Policy,
    plan: &Plan,
    now: Time,
    jobs: &[&Job],
    skip: &[JobId],
) -> (Vec<Grow>, Vec<(JobId, String)>) {
    let mut ctx = Ctx::new(state, policy, now);
    for s in plan.starts.iter().filter(|s| !skip.contains(&s.job)) {
        if let Some(j) = state.job(s.job) {
            let d = s.virtual_walltime.or_else(|| planning_duration(j, policy));
            ctx.commit(j, now, d.map(|d| now + d.max(1)), &s.alloc);
        }
    }
    for &id in &plan.resumes {
        if let Some(j) = state.job(id) {
            let alloc = j.run.as_ref().map(|r| r.alloc.clone()).unwrap_or_default();
            ctx.commit_procs(j, j.procs(), now, planned_end(j, policy, now), &alloc);
        }
    }
    for r in &plan.reservations {
        if let Some(j) = state.job(r.job) {
            ctx.commit(j, r.start, r.end, &r.alloc);
        }
    }
    let mut grows = Vec::new();
    let mut notes = Vec::new();
    for &job in jobs {
        let Some(e) = job.elastic else { continue };
        let ppt = job.req.procs_per_task.max(1);
        let want = (e.cap.saturating_sub(current(job))) / ppt;
        if want == 0 {
            continue;
        }
        let end = planned_end(job, policy, now);
        if end.is_some_and(|e| e <= now) {
            continue;
        }
        let dur = end.map(|e| e - now);
        let mut probe = job.clone();
        probe.state = JobState::Idle;
        probe.run = None;
        probe.elastic = None;
        let fits = |ctx: &mut Ctx<'_>, probe: &mut Job, tasks: u32| {
            probe.req = Request {
                tasks,
                procs_per_task: ppt,
                nodes: None,
                tasks_per_node: None,
                mem_per_task_mb: job.req.mem_per_task_mb,
                features: job.req.features.clone(),
                partition: job.req.partition.clone(),
                // Host list, access policy, reservation binding (a ranged
                // job has no generic resources, node groups or task list).
                layout: job.req.layout.clone(),
            };
            ctx.fit_now(probe, dur)
        };
        // The most tasks that fit (fitting is monotone in the count).
        let (mut lo, mut hi) = (0u32, want);
        let mut best = None;
        while lo < hi {
            let mid = lo + (hi - lo).div_ceil(2);
            match fits(&mut ctx, &mut probe, mid) {
                Some(a) => {
                    lo = mid;
                    best = Some(a);
                }
                None => hi = mid - 1,
            }
        }
        if let Some(alloc) = best {
            probe.req.tasks = lo;
            ctx.commit(&probe, now, end, &alloc);
            grows.push(Grow {
                job: job.id,
                alloc,
                how: GrowKind::Auto,
            });
        } else {
            let idle = ctx.idle_procs();
            let why = if idle == 0 {
                "no processor is idle".to_string()
            } else if !plan.reservations.is_empty() {
                format!(
                    "the {idle} idle processors are needed by reservations before it ends (it never delays one)"
                )
            } else {
                format!("none of the {idle} idle processors is usable by it")
            };
            notes.push((job.id, why));
        }
    }
    (grows, notes)
}

/// Per-job elastic status for the views: `(current, min, max, cap)`.
pub fn range_of(job: &Job) -> Option<(u32, u32, u32, u32)> {
    let e = job.elastic?;
    Some((current(job), e.min, e.max, e.cap))
}

/// Grows and waits by job (for drivers that look them up).
pub fn waits_by_job(plan: &Plan) -> BTreeMap<JobId, &BlockReason> {
    plan.elastic.waits.iter().map(|(j, r)| (*j, r)).collect()
}

#[cfg(test)]
mod tests;
