//! The resource view one iteration plans against.
//!
//! Two layers, so that the common case stays cheap on big machines:
//!
//! - an **aggregate processor profile** (all usable processors of up nodes,
//!   running jobs released at their planned end, planned starts and
//!   reservations subtracted). Jobs without node constraints (single-processor
//!   tasks, no features, memory, partition or node count) are planned on it
//!   alone: processors are fungible for them, so the aggregate is exact;
//! - **per-node profiles**, built lazily the first time a constrained job is
//!   considered, for constrained feasibility and reservations. Constrained
//!   jobs must fit both layers, and every usage is recorded in both, so the
//!   aggregate stays the sum of the nodes.
//!
//! Concrete placement of a start uses per-node free processors now (kept in a
//! bitmap of nodes with free processors, walked in node order, so a start
//! costs only the nodes it touches), or the per-node profiles once they
//! exist.

use crate::eligibility::planned_end;
use crate::job::{Alloc, Job};
use crate::node::NodeId;
use crate::placement::{is_constrained, place};
use crate::policy::Policy;
use crate::profile::{Amount, Profile};
use crate::resv::Holds;
use crate::state::State;
use crate::{Secs, Time};

mod layers;

/// Memory figure used for nodes that report none (never constrains).
const UNLIMITED_MEM: i64 = i64::MAX / 4;

/// The planning view of one iteration.
pub(crate) struct Ctx<'a> {
    pub state: &'a State,
    pub policy: &'a Policy,
    pub now: Time,
    /// Aggregate free processors over time.
    pub agg: Profile,
    /// Free processors and memory per node right now.
    free: Vec<(u32, u64)>,
    /// Up nodes with free processors now.
    free_set: NodeSet,
    /// Per-node profiles, once a constrained job needed them.
    nodes: Option<Vec<Profile>>,
    /// Every concrete usage planned so far (to replay into node profiles):
    /// `(its allocations in planned_allocs, start, end)`.
    planned: Vec<(std::ops::Range<usize>, Time, Option<Time>)>,
    /// The allocations of `planned`, one after the other.
    planned_allocs: Vec<Alloc>,
    /// Total configured processors of up nodes.
    pub capacity: i64,
    /// Administrative and standing reservations held out of the profiles
    /// ([`crate::resv`]).
    rsv: Holds,
    /// Preemptors' locks in force, held out of the profiles for every job
    /// but their own ([`crate::state::Lock`]).
    locks: Vec<LockHold>,
    /// Releases of running jobs ([`Ctx::release`]) made before the per-node
    /// profiles existed, replayed when they are built: `(usage, start, end,
    /// given back)`.
    released: Vec<(Alloc, Time, Option<Time>, bool)>,
    /// Generic resources, node access policies, reservation binding and the
    /// general placement ([`layers`]).
    extra: layers::Extra,
}

/// The storage of a spent context, kept for the next one by a driver that
/// plans many iterations ([`crate::lean::LeanScratch`]): contents are
/// dropped, allocations reused (but the profile's breakpoints, which a
/// resumed lean walk starts from).
#[derive(Debug, Default)]
pub(crate) struct Buffers {
    spans: Vec<(Time, Amount)>,
    free: Vec<(u32, u64)>,
    free_set: NodeSet,
    planned: Vec<(std::ops::Range<usize>, Time, Option<Time>)>,
    planned_allocs: Vec<Alloc>,
}

impl Buffers {
    /// Exchanges the profile's breakpoint storage with `other`: the lean
    /// walk keeps an iteration's final profile this way, without a copy
    /// ([`crate::lean`]'s reuse of the last reservations).
    pub(crate) fn swap_spans(&mut self, other: &mut Vec<(Time, Amount)>) {
        std::mem::swap(&mut self.spans, other);
    }

    /// The breakpoints of the profile last stored.
    pub(crate) fn spans(&self) -> &[(Time, Amount)] {
        &self.spans
    }
}

/// A set of node ids as a bitmap: O(1) insertion, removal and membership,
/// iteration in ascending (or descending) id order.
#[derive(Debug, Default, Clone)]
pub(crate) struct NodeSet {
    words: Vec<u64>,
    len: usize,
}

impl NodeSet {
    /// Empties the set, with room for ids below `n`.
    fn reset(&mut self, n: usize) {
        self.words.clear();
        self.words.resize(n.div_ceil(64), 0);
        self.len = 0;
    }

    pub fn insert(&mut self, id: NodeId) -> bool {
        let (w, m) = ((id / 64) as usize, 1u64 << (id % 64));
        if w >= self.words.len() {
            self.words.resize(w + 1, 0);
        }
        let word = &mut self.words[w];
        if *word & m != 0 {
            return false;
        }
        *word |= m;
        self.len += 1;
        true
    }

    pub fn remove(&mut self, id: &NodeId) -> bool {
        let (w, m) = ((*id / 64) as usize, 1u64 << (*id % 64));
        match self.words.get_mut(w) {
            Some(word) if *word & m != 0 => {
                *word &= !m;
                self.len -= 1;
                true
            }
            _ => false,
        }
    }

    pub fn contains(&self, id: &NodeId) -> bool {
        let (w, m) = ((*id / 64) as usize, 1u64 << (*id % 64));
        self.words.get(w).is_some_and(|word| word & m != 0)
    }

    pub fn len(&self) -> usize {
        self.len
    }

    /// The ids in ascending order.
    pub fn iter(&self) -> NodeSetIter<'_> {
        NodeSetIter {
            rest: self.words.iter().enumerate(),
            front: (0, 0),
            back: (0, 0),
        }
    }
}

/// [`NodeSet::iter`]: words not yet reached from either end, and the bits
/// left of the word each end is in (with its first id).
pub(crate) struct NodeSetIter<'s> {
    rest: std::iter::Enumerate<std::slice::Iter<'s, u64>>,
    front: (u64, NodeId),
    back: (u64, NodeId),
}

impl Iterator for NodeSetIter<'_> {
    type Item = NodeId;

    fn next(&mut self) -> Option<NodeId> {
        loop {
            if self.front.0 != 0 {
                let b = self.front.0.trailing_zeros();
                self.front.0 &= self.front.0 - 1;
                return Some(self.front.1 + b);
            }
            match self.rest.next() {
                Some((i, w)) => self.front = (*w, (i * 64) as NodeId),
                None => {
                    if self.back.0 == 0 {
                        return None;
                    }
                    let b = self.back.0.trailing_zeros();
                    self.back.0 &= self.back.0 - 1;
                    return Some(self.back.1 + b);
                }
            }
        }
    }
}

impl DoubleEndedIterator for NodeSetIter<'_> {
    fn next_back(&mut self) -> Option<NodeId> {
        loop {
            if self.back.0 != 0 {
                let b = 63 - self.back.0.leading_zeros();
                self.back.0 &= !(1u64 << b);
                return Some(self.back.1 + b);
            }
            match self.rest.next_back() {
                Some((i, w)) => self.back = (*w, (i * 64) as NodeId),
                None => {
                    if self.front.0 == 0 {
                        return None;
                    }
                    let b = 63 - self.front.0.leading_zeros();
                    self.front.0 &= !(1u64 << b);
                    return Some(self.front.1 + b);
                }
            }
        }
    }
}

/// One preemptor's lock as usage: what it holds now (idle resources it was
/// planned on) and, from each terminating victim's expected release, what
/// that victim frees.
struct LockHold {
    /// The preemptor.
    job: crate::job::JobId,
    parts: Vec<(Vec<Alloc>, Time, Option<Time>)>,
    on: bool,
}

impl<'a> Ctx<'a> {
    pub fn new(state: &'a State, policy: &'a Policy, now: Time) -> Self {
        if let Some(index) = indexed_releases(state, policy) {
            // In time order already: no collection, no sort.
            return Self::with_profile(state, policy, now, |free| {
                Profile::from_sorted_releases(now, free, index.released_from(now))
            });
        }
        let releases = running_releases(state, policy, now)
            .map(|(_, end, procs, _)| (end, Amount::procs(procs)))
            .collect();
        Self::with_releases(state, policy, now, releases)
    }

    /// A context whose aggregate profile releases these `(time, amount)`
    /// (what [`Ctx::new`] derives from the running jobs; the lean path reads
    /// them from the state's release index instead).
    pub fn with_releases(
        state: &'a State,
        policy: &'a Policy,
        now: Time,
        releases: Vec<(Time, Amount)>,
    ) -> Self {
        Self::with_profile(state, policy, now, |free| {
            Profile::from_releases(now, free, releases)
        })
    }

    /// A context whose aggregate profile `base` builds from the processors
    /// free now (with the releases to come).
    pub fn with_profile(
        state: &'a State,
        policy: &'a Policy,
        now: Time,
        base: impl FnOnce(Amount) -> Profile,
    ) -> Self {
        Self::with_profile_in(state, policy, now, Buffers::default(), false, |free, _| {
            base(free)
        })
    }

    /// [`Ctx::with_profile`] in the storage of a spent context
    /// ([`Ctx::take_buffers`]): `base` gets the aggregate profile's storage
    /// with the processors free now. `plain`: the caller has checked that
    /// no administrative or standing reservation is in force at `now` and
    /// no preemptor holds a lock (the lean path's conditions), so neither
    /// is looked for. Inlined: the context is built where the caller keeps
    /// it (a large struct, not copied out).
    #[inline(always)]
    pub fn with_profile_in(
        state: &'a State,
        policy: &'a Policy,
        now: Time,
        buffers: Buffers,
        plain: bool,
        base: impl FnOnce(Amount, Vec<(Time, Amount)>) -> Profile,
    ) -> Self {
        let Buffers {
            spans,
            mut free,
            mut free_set,
            mut planned,
            mut planned_allocs,
        } = buffers;
        let n = state.nodes().len();
        free.clear();
        free.reserve(n);
        planned.clear();
        planned_allocs.clear();
        free_set.reset(n);
        let mut total = 0i64;
        let mut capacity = 0i64;
        for (i, node) in state.nodes().iter().enumerate() {
            let id = i as NodeId;
            let p = state.free_procs(id);
            free.push((p, state.free_mem_mb(id)));
            if p > 0 {
                free_set.insert(id);
            }
            total += i64::from(p);
            if node.admin == crate::node::NodeAdminState::Up {
                capacity += i64::from(node.procs);
            }
        }
        let mut agg = base(Amount::procs(total), spans);
        debug_assert!(!plain || crate::resv::in_force(state, &policy.standing, now).is_empty());
        let list = if plain {
            Vec::new()
        } else {
            crate::resv::in_force(state, &policy.standing, now)
        };
        let rsv = if list.is_empty() {
            Holds::default()
        } else {
            let h = Holds::new(list, state, node_profiles(state, policy, now), now);
            h.apply_all(&mut agg, &mut [], 1);
            h
        };
        let mut ctx = Ctx {
            state,
            policy,
            now,
            agg,
            free,
            free_set,
            nodes: None,
            planned,
            planned_allocs,
            capacity,
            rsv,
            locks: Vec::new(),
            released: Vec::new(),
            extra: layers::Extra::new(state, policy, now),
        };
        if !plain {
            ctx.hold_locks();
        }
        ctx
    }

    /// The storage of this context, for the next one
    /// ([`Ctx::with_profile_in`]): the context is spent (its aggregate
    /// profile left empty), only to be dropped.
    pub fn take_buffers(&mut self) -> Buffers {
        Buffers {
            spans: self.agg.take_spans(),
            free: std::mem::take(&mut self.free),
            free_set: std::mem::take(&mut self.free_set),
            planned: std::mem::take(&mut self.planned),
            planned_allocs: std::mem::take(&mut self.planned_allocs),
        }
    }

    /// Every usage planned so far, with the preemptor locks held: what the
    /// per-node layers built late replay.
    fn planned_usage(&self) -> impl Iterator<Item = (&[Alloc], Time, Option<Time>)> {
        let locked = self
            .locks
            .iter()
            .filter(|l| l.on)
            .flat_map(|l| l.parts.iter())
            .map(|(a, s, e)| (&a[..], *s, *e));
        self.planned
            .iter()
            .map(|(r, s, e)| (&self.planned_allocs[r.clone()], *s, *e))
            .chain(locked)
    }

    /// Holds every preemptor lock in force out of the profiles.
    fn hold_locks(&mut self) {
        let state = self.state;
        let now = self.now;
        let locks: Vec<&crate::state::Lock> = state
            .locks()
            .filter(|l| state.lock_in_force(l.job, now).is_some())
            .collect();
        if locks.is_empty() {
            return;
        }
        // Terminating victims (still holding processors), by preemptor.
        let mut victims: std::collections::BTreeMap<crate::job::JobId, Vec<&Job>> =
            std::collections::BTreeMap::new();
        if state.terminating_count() > 0 {
            for v in state.active() {
                let by = v
                    .run
                    .as_ref()
                    .and_then(|r| r.terminating)
                    .and_then(|t| t.by);
                if let Some(p) = by.filter(|_| v.state != crate::job::JobState::Suspended) {
                    victims.entry(p).or_default().push(v);
                }
            }
        }
        for l in locks {
            let Some(p) = state.job(l.job) else { continue };
            let dur = crate::eligibility::planning_duration(p, self.policy);
            let vs: Vec<(&Job, Time)> = victims
                .get(&l.job)
                .map(Vec::as_slice)
                .unwrap_or(&[])
                .iter()
                .map(|v| (*v, release_at(v, self.policy, now).unwrap_or(now + 1)))
                .collect();
            let parts = self.claim_parts(&l.alloc, &vs, dur);
            self.locks.push(LockHold {
                job: l.job,
                parts,
                on: false,
            });
            let k = self.locks.len() - 1;
            self.set_lock(k, true);
        }
    }

    /// What a preemptor planned on `alloc` holds while it waits for
    /// `victims` (each with when its resources come back): from now, the
    /// part of `alloc` its victims do not hold (as far as it is free); from
    /// each victim's release on, the victim's share of the rest. Until the
    /// preemptor's planned end after the last release. Memory and generic
    /// resources are claimed like processors: what a preemptor needs on a
    /// node beyond what is idle there now must not be taken, once its victims
    /// free it, by a job planned after it (which would make it preempt
    /// again, and again).
    pub fn claim_parts(
        &self,
        alloc: &[Alloc],
        victims: &[(&Job, Time)],
        dur: Option<Secs>,
    ) -> Vec<(Vec<Alloc>, Time, Option<Time>)> {
        let now = self.now;
        let last = victims.iter().map(|v| v.1).max().unwrap_or(now).max(now);
        let end = dur.map(|d| last + d.max(1));
        // What a job holds on a node (processors, memory, generic resources).
        let on_node = |j: &Job, node: NodeId| -> Alloc {
            let mut sum = Alloc {
                node,
                ..Alloc::default()
            };
            let allocs = j.run.as_ref().map_or(&[][..], |r| &r.alloc[..]);
            for a in allocs.iter().filter(|a| a.node == node) {
                sum.procs += a.procs;
                sum.mem_mb += a.mem_mb;
                sum.gres = sum.gres.plus(&a.gres);
            }
            sum
        };
        let mut parts = Vec::new();
        let mut held = Vec::new();
        // What each node still owes the preemptor after its idle part.
        let mut owed: Vec<Alloc> = Vec::new();
        for a in alloc {
            // What its victims hold there.
            let pend = victims.iter().fold(Alloc::default(), |p, (v, _)| {
                let o = on_node(v, a.node);
                Alloc {
                    procs: p.procs + o.procs,
                    mem_mb: p.mem_mb + o.mem_mb,
                    gres: p.gres.plus(&o.gres),
                    ..p
                }
            });
            let (fp, fm) = self.free_now(a.node);
            let idle = Alloc {
                procs: a.procs.saturating_sub(pend.procs).min(fp),
                mem_mb: a.mem_mb.saturating_sub(pend.mem_mb).min(fm),
                gres: a.gres.minus(&pend.gres),
                ..*a
            };
            if idle.procs > 0 || idle.mem_mb > 0 || !idle.gres.is_empty() {
                held.push(idle);
            }
            owed.push(Alloc {
                tasks: 0,
                procs: a.procs - idle.procs,
                mem_mb: a.mem_mb - idle.mem_mb,
                gres: a.gres.minus(&idle.gres),
                ..*a
            });
        }
        if !held.is_empty() {
            parts.push((held, now, end));
        }
        let mut order: Vec<&(&Job, Time)> = victims.iter().collect();
        order.sort_by_key(|(v, t)| (*t, v.id));
        for (v, t) in order {
            if end.is_some_and(|e| e <= *t) {
                continue;
            }
            let mut share = Vec::new();
            for left in owed.iter_mut() {
                let has = on_node(v, left.node);
                let take = Alloc {
                    procs: has.procs.min(left.procs),
                    mem_mb: has.mem_mb.min(left.mem_mb),
                    // The smaller count of each kind.
                    gres: left.gres.minus(&left.gres.minus(&has.gres)),
                    ..*left
                };
                if take.procs > 0 || take.mem_mb > 0 || !take.gres.is_empty() {
                    left.procs -= take.procs;
                    left.mem_mb -= take.mem_mb;
                    left.gres = left.gres.minus(&take.gres);
                    share.push(take);
                }
            }
            if !share.is_empty() {
                parts.push((share, *t, end));
            }
        }
        parts
    }

    /// Holds `job`'s claim parts ([`Ctx::claim_parts`]) in this plan.
    pub fn commit_parts(&mut self, job: &Job, parts: &[(Vec<Alloc>, Time, Option<Time>)]) {
        for (alloc, start, end) in parts {
            let procs = alloc.iter().map(|a| a.procs).sum();
            self.commit_procs(job, procs, *start, *end, alloc);
        }
    }

    /// Holds (`on`) or gives back a lock's usage.
    fn set_lock(&mut self, k: usize, on: bool) {
        if self.locks[k].on == on {
            return;
        }
        self.locks[k].on = on;
        let parts = std::mem::take(&mut self.locks[k].parts);
        for (alloc, start, end) in &parts {
            let procs: i64 = alloc.iter().map(|a| i64::from(a.procs)).sum();
            if on {
                self.agg.force_usage(*start, *end, Amount::procs(procs));
            } else {
                let _ = self.agg.remove_usage(*start, *end, Amount::procs(procs));
            }
            if let Some(nodes) = self.nodes.as_mut() {
                for a in alloc {
                    let p = &mut nodes[a.node as usize];
                    if on {
                        p.force_usage(*start, *end, alloc_amount(a));
                    } else {
                        let _ = p.remove_usage(*start, *end, alloc_amount(a));
                    }
                }
            }
            self.layers_lock(alloc, *start, *end, on);
            if *start <= self.now {
                for a in alloc {
                    let f = &mut self.free[a.node as usize];
                    if on {
                        f.0 = f.0.saturating_sub(a.procs);
                        f.1 = f.1.saturating_sub(a.mem_mb);
                        if f.0 == 0 {
                            self.free_set.remove(&a.node);
                        }
                    } else {
                        f.0 += a.procs;
                        f.1 += a.mem_mb;
                        if f.0 > 0 {
                            self.free_set.insert(a.node);
                        }
                    }
                }
            }
        }
        self.locks[k].parts = parts;
    }

    /// Gives a preemptor its own lock (before it is considered); whether it
    /// had one in force.
    pub fn lift_lock(&mut self, job: crate::job::JobId) -> bool {
        match self.locks.iter().position(|l| l.job == job && l.on) {
            Some(k) => {
                self.set_lock(k, false);
                true
            }
            None => false,
        }
    }

    /// Holds a lifted lock again (its preemptor neither started nor waits).
    pub fn restore_lock(&mut self, job: crate::job::JobId) {
        if let Some(k) = self.locks.iter().position(|l| l.job == job && !l.on) {
            self.set_lock(k, true);
        }
    }

    /// Whether a job needs per-node planning: node constraints, or
    /// reservations it may use (what it takes must come out of them).
    fn needs_nodes(&self, job: &Job) -> bool {
        is_constrained(&job.req)
            || self.is_general(job)
            || (!self.rsv.is_empty()
                && self
                    .rsv
                    .admits(&job.cred, crate::qos::effective(job, self.policy)))
    }

    /// Gives the reservations `job` may use back to the profiles.
    fn lift(&mut self, job: &Job) {
        if !self.rsv.is_empty() {
            let qos = crate::qos::effective(job, self.policy);
            self.rsv
                .lift(&job.cred, qos, &mut self.agg, self.nodes.as_mut());
        }
    }

    /// Undoes [`Ctx::lift`]; `taken`: what the job took out of them.
    fn unlift(&mut self, taken: Option<(&[Alloc], Time, Option<Time>)>) {
        if !self.rsv.is_empty() {
            self.rsv
                .unlift_after(&mut self.agg, self.nodes.as_mut(), taken);
        }
    }

    /// Lifts the reservations these credentials may use for the rest of
    /// this context's life (showbf for a user, group or account).
    pub fn lift_for(&mut self, cred: &crate::job::Credentials) {
        if !self.rsv.is_empty() {
            self.rsv.lift(
                cred,
                cred.qos.as_deref(),
                &mut self.agg,
                self.nodes.as_mut(),
            );
        }
    }

    /// Lifts every reservation for the rest of this context's life (showbf
    /// -A: availability for any credential).
    pub fn lift_everything(&mut self) {
        if !self.rsv.is_empty() {
            self.rsv.lift_all(&mut self.agg, self.nodes.as_mut());
        }
    }

    /// Why a job that did not fit now was kept off: the first reservation
    /// holding processors now, when without those it would have had enough.
    pub fn reservation_conflict(&self, job: &Job) -> Option<String> {
        if self.rsv.is_empty() {
            return None;
        }
        let (held, first) = self.rsv.held_now(self.now);
        let idle = self.agg.free_at(self.now).procs;
        let need = i64::from(job.req.total_procs());
        (idle < need && idle + held >= need)
            .then(|| first.map(str::to_string))
            .flatten()
    }

    /// The first administrative or standing reservation the job may not use
    /// that holds processors at some time in `[now, now + dur)`.
    pub fn held_conflict(&self, job: &Job, dur: Option<Secs>) -> Option<String> {
        if self.rsv.is_empty() {
            return None;
        }
        let end = dur.map(|d| self.now + d.max(1));
        let qos = crate::qos::effective(job, self.policy);
        self.rsv
            .held()
            .find(|h| {
                !h.rsv.acl.admits(&job.cred, qos)
                    && h.rsv.start < end.unwrap_or(Time::MAX)
                    && h.rsv.end.is_none_or(|e| e > self.now)
            })
            .map(|h| h.rsv.id.clone())
    }

    /// The reservations held in this context's profiles.
    pub fn held_reservations(&self) -> impl Iterator<Item = &crate::resv::Reservation> {
        self.rsv.held().map(|h| &h.rsv)
    }

    /// Free processors now (aggregate).
    pub fn idle_procs(&self) -> u32 {
        u32::try_from(self.agg.free_at(self.now).procs.max(0)).unwrap_or(u32::MAX)
    }

    /// Whether the request could run on the configured, up nodes at all.
    pub fn ever_fits(&self, job: &Job) -> Result<(), String> {
        let req = &job.req;
        if !self.policy.classes.is_empty() {
            crate::class::check_job_shape(job, self.policy)?;
        }
        if i64::from(req.total_procs()) > self.capacity {
            return Err(format!(
                "{} procs requested, {} configured",
                req.total_procs(),
                self.capacity
            ));
        }
        if self.is_general(job) {
            return self.ever_fits_general(job);
        }
        if !is_constrained(req) {
            return Ok(());
        }
        let nodes = self.state.nodes();
        let cands = 0..nodes.len() as NodeId;
        let full = |id: NodeId| {
            let n = &nodes[id as usize];
            (n.procs, n.mem_mb)
        };
        place(nodes, req, self.policy.node_allocation, cands, full)
            .map(|_| ())
            .ok_or_else(|| "no set of nodes satisfies the request".to_string())
    }

    /// Tries to place `job` now for `dur` without delaying anything planned.
    pub fn fit_now(&mut self, job: &Job, dur: Option<Secs>) -> Option<Vec<Alloc>> {
        // Cheap refusal before lifting: not enough processors now even
        // with the reservations the job may use (none: the first test of
        // `fit_now_lifted`, without the calls).
        let demand = i64::from(job.req.total_procs());
        let free = self.agg.free_at(self.now).procs;
        if free < demand
            && (self.rsv.is_empty()
                || free
                    + self.rsv.admitted_at(
                        &job.cred,
                        crate::qos::effective(job, self.policy),
                        self.now,
                    )
                    < demand)
        {
            return None;
        }
        self.lift(job);
        let r = self.fit_now_lifted(job, dur);
        self.unlift(None);
        r
    }

    /// [`Ctx::fit_now`] for a scaled (virtual) duration `dur` that must
    /// also keep clear of every administrative or standing reservation the
    /// job may not use until `clear_until` (its real limit's end): a scaled
    /// job never overlaps one with either limit.
    pub fn fit_now_clear(
        &mut self,
        job: &Job,
        dur: Option<Secs>,
        clear_until: Time,
    ) -> Option<Vec<Alloc>> {
        if self.rsv.is_empty() {
            return self.fit_now(job, dur);
        }
        self.lift(job);
        let r = self.fit_now_lifted(job, dur).and_then(|_| {
            self.place_at(
                job,
                self.now,
                dur.map(|d| self.now + d.max(1)),
                Some(clear_until),
            )
        });
        self.unlift(None);
        r
    }

    fn fit_now_lifted(&mut self, job: &Job, dur: Option<Secs>) -> Option<Vec<Alloc>> {
        let end = dur.map(|d| self.now + d.max(1));
        let demand = Amount::procs(i64::from(job.req.total_procs()));
        if !self.agg.free_at(self.now).covers(demand)
            || !self.agg.free_over(self.now, end).covers(demand)
        {
            return None;
        }
        // A start now is placed on per-node free processors, less what
        // reservations not lifted hold during the run: jobs on an access
        // list need no per-node profiles for it.
        if self.is_general(job) {
            self.prepare_general(job, false);
        } else if is_constrained(&job.req) {
            self.ensure_nodes();
        }
        self.place_at(job, self.now, end, None)
    }

    /// Earliest start of `job` for `dur` from now on, with its placement when
    /// the job needs per-node planning (empty for aggregate-only jobs).
    pub fn earliest(&mut self, job: &Job, dur: Option<Secs>) -> Option<(Time, Vec<Alloc>)> {
        self.earliest_from(job, dur, self.now)
    }

    /// Earliest start of `job` for `dur` at or after `from`.
    pub fn earliest_from(
        &mut self,
        job: &Job,
        dur: Option<Secs>,
        from: Time,
    ) -> Option<(Time, Vec<Alloc>)> {
        self.lift(job);
        let r = self.earliest_from_lifted(job, dur, from);
        self.unlift(None);
        r
    }

    fn earliest_from_lifted(
        &mut self,
        job: &Job,
        dur: Option<Secs>,
        from: Time,
    ) -> Option<(Time, Vec<Alloc>)> {
        let from = from.max(self.now);
        let demand = Amount::procs(i64::from(job.req.total_procs()));
        if !self.needs_nodes(job) {
            let t = self.agg.earliest_fit(from, demand, dur.map(|d| d.max(1)))?;
            return Some((t, Vec::new()));
        }
        let general = self.is_general(job);
        if general {
            self.prepare_general(job, true);
        } else {
            self.ensure_nodes();
        }
        let mut times: Vec<Time> = self.agg.change_points(from).collect();
        if general {
            times.extend(self.general_times(job, from));
            times.sort_unstable();
            times.dedup();
        }
        for t in times {
            let end = dur.map(|d| t + d.max(1));
            if !self.agg.free_over(t, end).covers(demand) {
                continue;
            }
            if general && !self.gres_may_fit(job, t, dur) {
                continue;
            }
            if let Some(a) = self.place_at(job, t, end, None) {
                return Some((t, a));
            }
        }
        None
    }

    /// Records a planned usage (a start now, or a reservation) in every layer.
    pub fn commit(&mut self, job: &Job, start: Time, end: Option<Time>, alloc: &[Alloc]) {
        // A job given whole nodes takes all their processors.
        let procs = if alloc.is_empty() {
            job.req.total_procs()
        } else {
            alloc.iter().map(|a| a.procs).sum()
        };
        self.commit_procs(job, procs, start, end, alloc);
    }

    /// [`Ctx::commit`] of `procs` processors (a resumed job's allocation,
    /// whose memory stayed held).
    pub fn commit_procs(
        &mut self,
        job: &Job,
        procs: u32,
        start: Time,
        end: Option<Time>,
        alloc: &[Alloc],
    ) {
        self.lift(job);
        self.commit_lifted(procs, start, end, alloc);
        self.unlift(Some((alloc, start, end)));
        self.layers_commit(job, alloc, start, end);
    }

    fn commit_lifted(&mut self, procs: u32, start: Time, end: Option<Time>, alloc: &[Alloc]) {
        let demand = Amount::procs(i64::from(procs));
        self.agg.force_usage(start, end, demand);
        if let Some(nodes) = self.nodes.as_mut() {
            for a in alloc {
                nodes[a.node as usize].force_usage(start, end, alloc_amount(a));
            }
        }
        if start <= self.now {
            for a in alloc {
                let f = &mut self.free[a.node as usize];
                f.0 = f.0.saturating_sub(a.procs);
                f.1 = f.1.saturating_sub(a.mem_mb);
                if f.0 == 0 {
                    self.free_set.remove(&a.node);
                }
            }
        }
        if !alloc.is_empty() {
            let from = self.planned_allocs.len();
            self.planned_allocs.extend_from_slice(alloc);
            let to = self.planned_allocs.len();
            self.planned.push((from..to, start, end));
        }
    }

    /// Frees an active job's resources from now until its planned end, as if
    /// it were preempted now (suspension keeps its memory). `reverse` undoes
    /// an earlier release. Used by [`crate::preempt`] to try victim sets.
    pub fn release(&mut self, job: &Job, keep_mem: bool, reverse: bool) {
        let Some(run) = job.run.as_ref() else {
            return;
        };
        self.layers_release(job, keep_mem, reverse);
        let end = release_at(job, self.policy, self.now);
        let procs: i64 = run.alloc.iter().map(|a| i64::from(a.procs)).sum();
        if reverse {
            self.agg.force_usage(self.now, end, Amount::procs(procs));
        } else {
            let _ = self.agg.remove_usage(self.now, end, Amount::procs(procs));
        }
        for a in &run.alloc {
            let up = self
                .state
                .node(a.node)
                .is_some_and(|n| n.admin == crate::node::NodeAdminState::Up);
            if !up {
                continue;
            }
            let mut amount = alloc_amount(a);
            if keep_mem {
                amount.mem = 0;
            }
            match self.nodes.as_mut() {
                Some(nodes) => {
                    let p = &mut nodes[a.node as usize];
                    if reverse {
                        p.force_usage(self.now, end, amount);
                    } else {
                        let _ = p.remove_usage(self.now, end, amount);
                    }
                }
                None => {
                    // Kept for the per-node profiles, should a constrained
                    // job need them later in this plan.
                    let mem = if keep_mem { 0 } else { a.mem_mb };
                    let usage = Alloc { mem_mb: mem, ..*a };
                    self.released.push((usage, self.now, end, !reverse));
                }
            }
            let mem = if keep_mem { 0 } else { a.mem_mb };
            let f = &mut self.free[a.node as usize];
            if reverse {
                f.0 = f.0.saturating_sub(a.procs);
                f.1 = f.1.saturating_sub(mem);
                if f.0 == 0 {
                    self.free_set.remove(&a.node);
                }
            } else {
                f.0 += a.procs;
                f.1 += mem;
                if f.0 > 0 {
                    self.free_set.insert(a.node);
                }
            }
        }
    }

    /// Whether the earliest start of a job without node constraints is the
    /// aggregate profile's alone, and its reservation holds nothing but
    /// the aggregate: plain node access (no general placement) and no
    /// administrative or standing reservation held ([`Ctx::earliest`]
    /// then returns no allocation, and [`Ctx::commit`] of it changes the
    /// aggregate profile only).
    pub fn plain_reservations(&self) -> bool {
        self.extra.access_plain && self.rsv.is_empty() && self.locks.is_empty()
    }

    /// Whether [`Ctx::fit_now`] for `job` is decided by the aggregate profile
    /// alone (no node constraints, no reservations, no per-node profiles
    /// built, a node allocation policy that takes any free processors):
    /// then [`Ctx::fits_with_released`] answers it exactly.
    pub fn aggregate_only(&self, job: &Job) -> bool {
        !is_constrained(&job.req)
            && !self.is_general(job)
            && self.rsv.is_empty()
            && self.nodes.is_none()
            && self.policy.node_allocation != crate::policy::NodeAllocationPolicy::Contiguous
    }

    /// Whether `job` would fit now for `dur` if running jobs holding
    /// `victims` (`(processors, when planning expects them back)`) were
    /// released from now on — [`Ctx::release`] then [`Ctx::fit_now`] without
    /// touching the profile. Exact only when [`Ctx::aggregate_only`].
    pub fn fits_with_released(
        &self,
        job: &Job,
        dur: Option<Secs>,
        victims: &[(i64, Option<Time>)],
    ) -> bool {
        let now = self.now;
        let end = dur.map(|d| now + d.max(1));
        let need = i64::from(job.req.total_procs());
        // Victims' processors count from now until their release: sweep the
        // profile's breakpoints and the releases together, in time order.
        let mut rel: Vec<(Time, i64)> = victims
            .iter()
            .filter_map(|&(p, r)| r.map(|r| (r, p)))
            .collect();
        rel.sort_unstable();
        let mut freed: i64 = victims.iter().map(|v| v.0).sum();
        let mut r = 0;
        let spans = self.agg.spans();
        let mut i = spans.partition_point(|s| s.0 <= now).saturating_sub(1);
        let mut t = now;
        loop {
            while r < rel.len() && rel[r].0 <= t {
                freed -= rel[r].1;
                r += 1;
            }
            let free = self.agg.free_at(t).procs;
            if free + freed < need {
                return false;
            }
            // The next instant anything changes.
            let next_span = spans.get(i + 1).map(|s| s.0);
            let next_rel = rel.get(r).map(|x| x.0);
            let next = match (next_span, next_rel) {
                (Some(a), Some(b)) => a.min(b),
                (a, b) => match a.or(b) {
                    Some(x) => x,
                    None => return true,
                },
            };
            if end.is_some_and(|e| next >= e) {
                return true;
            }
            if next_span == Some(next) {
                i += 1;
            }
            t = next;
        }
    }

    /// When planning expects a running job's processors back (`None`: never).
    pub fn release_time(&self, job: &Job) -> Option<Time> {
        release_at(job, self.policy, self.now)
    }

    /// Processors free (aggregate) over the whole of `[now, now + dur)`.
    pub fn free_procs_over(&self, dur: Option<Secs>) -> i64 {
        let end = dur.map(|d| self.now + d.max(1));
        self.agg.free_over(self.now, end).procs
    }

    /// Whether `demand` processors are free (aggregate) from now for `dur`.
    pub fn covers_now(&self, procs: u32, dur: Option<Secs>) -> bool {
        let end = dur.map(|d| self.now + d.max(1));
        let demand = Amount::procs(i64::from(procs));
        self.agg.free_at(self.now).covers(demand)
            && self.agg.free_over(self.now, end).covers(demand)
    }

    /// Free processors and memory of a node right now (after this plan's starts).
    pub fn free_now(&self, node: NodeId) -> (u32, u64) {
        self.free.get(node as usize).copied().unwrap_or((0, 0))
    }

    /// Places `job` on what is free right now, ignoring later reservations
    /// (optimistic PREEMPT backfill).
    pub fn fit_free_now(&mut self, job: &Job) -> Option<Vec<Alloc>> {
        self.lift(job);
        let demand = Amount::procs(i64::from(job.req.total_procs()));
        let r = if self.agg.free_at(self.now).covers(demand) {
            if self.is_general(job) {
                self.prepare_general(job, false);
            } else if self.needs_nodes(job) {
                self.ensure_nodes();
            }
            self.place_at(job, self.now, Some(self.now + 1), None)
        } else {
            None
        };
        self.unlift(None);
        r
    }

    /// Per-node profiles (built on first use).
    pub fn node_profiles(&mut self) -> &[Profile] {
        self.ensure_nodes();
        self.nodes.as_deref().unwrap_or(&[])
    }

    /// Concrete nodes for a reservation planned on the aggregate only:
    /// nodes busy now first (so idle nodes stay idle as long as possible),
    /// then by index.
    pub fn place_reservation(&mut self, job: &Job, start: Time, end: Option<Time>) -> Vec<Alloc> {
        if self.is_general(job) {
            self.prepare_general(job, true);
            return self
                .place_general(job, start, end, None)
                .unwrap_or_default();
        }
        self.ensure_nodes();
        let Some(profiles) = self.nodes.as_ref() else {
            return Vec::new();
        };
        let now = self.now;
        let mut order: Vec<NodeId> = (0..profiles.len() as NodeId).collect();
        order.sort_by_key(|id| (profiles[*id as usize].free_at(now).procs, *id));
        let avail = |id: NodeId| {
            let a = profiles[id as usize].free_over(start, end);
            (clamp_u32(a.procs), u64::try_from(a.mem.max(0)).unwrap_or(0))
        };
        let pol = crate::policy::NodeAllocationPolicy::FirstAvailable;
        place(self.state.nodes(), &job.req, pol, order.into_iter(), avail).unwrap_or_default()
    }

    /// Places `job` over `[t, end)`; with `clear_until`, also off every
    /// reservation not lifted for it until then (a start now only).
    fn place_at(
        &self,
        job: &Job,
        t: Time,
        end: Option<Time>,
        clear_until: Option<Time>,
    ) -> Option<Vec<Alloc>> {
        if self.is_general(job) {
            return self.place_general(job, t, end, clear_until);
        }
        let nodes = self.state.nodes();
        let pol = self.policy.node_allocation;
        // What held reservations leave of a node now, to `clear_until`.
        let clear = |id: NodeId, procs: u32| match clear_until {
            Some(c) if !self.rsv.is_empty() => procs.min(
                self.free[id as usize]
                    .0
                    .saturating_sub(self.rsv.blocked(id, t, Some(c))),
            ),
            _ => procs,
        };
        match &self.nodes {
            Some(profiles) => {
                let avail = |id: NodeId| {
                    let a = profiles[id as usize].free_over(t, end);
                    (
                        clear(id, clamp_u32(a.procs)),
                        u64::try_from(a.mem.max(0)).unwrap_or(0),
                    )
                };
                // A job inside reservations it may use prefers their nodes.
                let inside = self.rsv.lifted_nodes();
                if !inside.is_empty() {
                    let first = place(nodes, &job.req, pol, inside.into_iter(), avail);
                    if first.is_some() {
                        return first;
                    }
                }
                if t <= self.now {
                    // Nodes without a free processor now hold no task now.
                    return place(nodes, &job.req, pol, self.free_set.iter(), avail);
                }
                place(nodes, &job.req, pol, 0..nodes.len() as NodeId, avail)
            }
            None if !self.rsv.is_empty() => {
                // Reservations not lifted for this job keep it off what
                // they hold at any time of its run; a job inside
                // reservations it may use prefers their nodes.
                let until = clear_until.or(end);
                let avail = |id: NodeId| {
                    let (p, m) = self.free[id as usize];
                    (p.saturating_sub(self.rsv.blocked(id, t, until)), m)
                };
                let mut inside = self.rsv.lifted_nodes();
                inside.retain(|n| self.free_set.contains(n));
                if !inside.is_empty() {
                    let first = place(nodes, &job.req, pol, inside.into_iter(), avail);
                    if first.is_some() {
                        return first;
                    }
                }
                place(nodes, &job.req, pol, self.free_set.iter(), avail)
            }
            None => {
                let avail = |id: NodeId| self.free[id as usize];
                place(nodes, &job.req, pol, self.free_set.iter(), avail)
            }
        }
    }

    fn ensure_nodes(&mut self) {
        if self.nodes.is_some() {
            return;
        }
        let mut profiles = node_profiles(self.state, self.policy, self.now);
        for (alloc, start, end) in self.planned_usage() {
            for a in alloc {
                profiles[a.node as usize].force_usage(start, end, alloc_amount(a));
            }
        }
        for (a, start, end, freed) in std::mem::take(&mut self.released) {
            let p = &mut profiles[a.node as usize];
            if freed {
                let _ = p.remove_usage(start, end, alloc_amount(&a));
            } else {
                p.force_usage(start, end, alloc_amount(&a));
            }
        }
        let mut scratch = Profile::new(self.now, Amount::default());
        self.rsv.apply_all(&mut scratch, &mut profiles, 1);
        self.nodes = Some(profiles);
    }
}

/// Per-node free profiles given the running jobs only.
fn node_profiles(state: &State, policy: &Policy, now: Time) -> Vec<Profile> {
    let mut releases: Vec<Vec<(Time, Amount)>> = vec![Vec::new(); state.nodes().len()];
    for (alloc, end, _, _) in running_releases(state, policy, now) {
        releases[alloc.node as usize].push((end, alloc_amount(&alloc)));
    }
    state
        .nodes()
        .iter()
        .enumerate()
        .zip(releases)
        .map(|((i, node), rel)| {
            let id = i as NodeId;
            let mem = if node.mem_mb == 0 {
                UNLIMITED_MEM
            } else {
                i64::try_from(state.free_mem_mb(id)).unwrap_or(UNLIMITED_MEM)
            };
            let free = Amount {
                procs: i64::from(state.free_procs(id)),
                mem,
            };
            Profile::from_releases(now, free, rel)
        })
        .collect()
}

fn alloc_amount(a: &Alloc) -> Amount {
    Amount {
        procs: i64::from(a.procs),
        mem: i64::try_from(a.mem_mb).unwrap_or(UNLIMITED_MEM),
    }
}

fn clamp_u32(v: i64) -> u32 {
    u32::try_from(v.max(0)).unwrap_or(u32::MAX)
}

/// When planning expects an active job's processors back: its planned end
/// (a job past it still holds them until the resource manager reports it
/// finished: just after now), or a terminating job's deadline if earlier.
pub(crate) fn release_at(j: &Job, policy: &Policy, now: Time) -> Option<Time> {
    let term = j.run.as_ref().and_then(|r| r.terminating).map(|t| t.until);
    let end = match (term, planned_end(j, policy, now)) {
        (Some(t), Some(e)) => t.min(e),
        (t, e) => t.or(e)?,
    };
    Some(end.max(now + 1))
}

/// The state's index of the releases [`running_releases`] gives under
/// `policy` (before `max(now + 1)`), when there is one: the planned ends
/// (estimate, else walltime) or, planning with walltimes, the walltime
/// ends. Only while every planned end is the job's own (no class default or
/// maximum wall-clock limit, no virtual limit running), every node is up
/// and no job is terminating.
fn indexed_releases<'s>(state: &'s State, policy: &Policy) -> Option<&'s crate::index::Releases> {
    let idx = state.indexes()?;
    if idx.virtual_running > 0
        || state.terminating_count() > 0
        || !state.all_nodes_up()
        || policy
            .classes
            .values()
            .any(|c| c.default_wclimit.is_some() || c.max_wclimit.is_some())
    {
        return None;
    }
    Some(if policy.estimates_ignored {
        idx.ends()
    } else {
        &idx.releases
    })
}

/// `(alloc on an up node, planned end, procs, job)` for every running
/// (not suspended) job with a computable end.
fn running_releases<'s>(
    state: &'s State,
    policy: &'s Policy,
    now: Time,
) -> impl Iterator<Item = (Alloc, Time, i64, &'s Job)> + 's {
    state
        .active()
        .filter(|j| j.state != crate::job::JobState::Suspended)
        .filter_map(move |j| {
            let end = release_at(j, policy, now)?;
            Some((j, end))
        })
        .flat_map(move |(j, end)| {
            j.run
                .as_ref()
                .map_or(&[][..], |r| r.alloc.as_slice())
                .iter()
                .copied()
                .filter(move |a| {
                    state
                        .node(a.node)
                        .is_some_and(|n| n.admin == crate::node::NodeAdminState::Up)
                })
                .map(move |a| (a, end, i64::from(a.procs), j))
        })
}
