//! Job arrays (`msub -t name[1-100]%5`, Moab's "Job Arrays", Torque's `-t`).
//!
//! An array is one submission that stands for many sub-jobs, each a real job
//! for the scheduler (priority, backfill, reservations, limits) with its own
//! id `ARRAY[INDEX]`. What makes arrays a room of their own is their size: a
//! 10,000-element array must submit in well under a second and cost little
//! while it waits. So the state keeps an array as **one record** — a
//! template job (what every sub-job asks for), the index list as ranges and
//! a slot limit — and turns sub-jobs into real [`Job`]s only a window at a
//! time ([`WINDOW`] queued sub-jobs per array, [`State::expand_arrays`]).
//!
//! Why a window is exact: pending sub-jobs are identical (same request,
//! credentials, submit time, priority) and their ids are consecutive, so
//! they are consecutive in the priority order and the scheduler treats them
//! alike: if the last materialized one cannot start, no later one can in
//! that iteration. When an iteration starts sub-jobs, the drivers expand the
//! window again and iterate once more ([`State::expand_arrays`] returns what
//! it created), so an array can fill a large cluster in successive passes.
//!
//! Ids: the array takes the id `A` (its "master", never scheduled itself)
//! and the `N` ids after it, one per sub-job in index order (sub-job at
//! position `p` of the index list is job `A + 1 + p`), so every sub-job is
//! an ordinary numeric [`JobId`] for the engine, ids stay unique and never
//! reused, and ties in priority break in index order (Moab: "sub-jobs of an
//! array are executed in sub-job index order").
//!
//! The slot limit (`%5`: at most 5 sub-jobs active at once) is a throttling
//! limit of its own ([`Slots`], counted with the credential limits in
//! [`crate::eligibility::Usage`]): a sub-job beyond it is blocked with the
//! reason `SLOTLIMIT`. Dependencies on an array (`afterok:A`, `afterokarray:A`)
//! wait for every sub-job ([`array_dependency`]).

use std::collections::BTreeSet;
use std::sync::Arc;

use imbl::{OrdMap, OrdSet};

use crate::job::{CompletionCode, Dependency, DependencyKind, HoldType, Job, JobId, JobState};
use crate::state::{EventError, JobChange, State};
use crate::Time;

/// Queued sub-jobs kept as real jobs per array; the rest wait as the
/// array's pending positions.
pub const WINDOW: u32 = 128;

/// The largest array accepted (sub-jobs per submission).
pub const MAX_ELEMENTS: u32 = 100_000;

/// One `start[-end[:step]]` run of indices.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IndexRange {
    pub start: u32,
    pub end: u32,
    pub step: u32,
}

impl IndexRange {
    fn len(&self) -> u32 {
        (self.end - self.start) / self.step + 1
    }
}

/// An array's index list, in increasing order, as ranges (compact whatever
/// the array's size).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Indices {
    ranges: Vec<IndexRange>,
    /// Sub-jobs before each range (prefix sums), for position lookups.
    before: Vec<u32>,
    len: u32,
}

impl Indices {
    /// Builds an index list from ranges; refuses empty, overlapping,
    /// unordered or oversized lists.
    pub fn new(mut ranges: Vec<IndexRange>) -> Result<Indices, String> {
        if ranges.is_empty() {
            return Err("no index".to_string());
        }
        for r in &mut ranges {
            if r.step == 0 {
                return Err("step must be at least 1".to_string());
            }
            if r.end < r.start {
                return Err(format!("range {}-{} ends before it starts", r.start, r.end));
            }
            // The last index actually reached.
            r.end = r.start + (r.end - r.start) / r.step * r.step;
        }
        ranges.sort_by_key(|r| r.start);
        for w in ranges.windows(2) {
            if w[1].start <= w[0].end {
                let (a, b) = (w[0], w[1]);
                let clash = (b.start..=b.end.min(a.end))
                    .step_by(b.step as usize)
                    .find(|i| *i >= a.start && (i - a.start) % a.step == 0);
                return Err(match clash {
                    Some(i) => format!("index {i} given twice"),
                    None => "interleaved ranges are not supported".to_string(),
                });
            }
        }
        let mut before = Vec::with_capacity(ranges.len());
        let mut len: u64 = 0;
        for r in &ranges {
            before.push(len as u32);
            len += u64::from(r.len());
            if len > u64::from(MAX_ELEMENTS) {
                return Err(format!(
                    "more than {MAX_ELEMENTS} sub-jobs (the largest array accepted)"
                ));
            }
        }
        Ok(Indices {
            ranges,
            before,
            len: len as u32,
        })
    }

    /// Parses Moab's and Torque's index list: `1-100`, `1-9:2`, `1,5,7`,
    /// `0-4,10-20:5` (no slot limit, no brackets).
    pub fn parse(text: &str) -> Result<Indices, String> {
        let num = |s: &str| -> Result<u32, String> {
            let s = s.trim();
            if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
                return Err(format!("'{s}' is not an index"));
            }
            s.parse::<u32>()
                .map_err(|_| format!("index '{s}' too large"))
        };
        let mut ranges = Vec::new();
        for part in text.split(',') {
            if part.trim().is_empty() {
                return Err(format!("empty element in '{text}'"));
            }
            let (span, step) = match part.split_once(':') {
                Some((s, st)) => (s, num(st)?),
                None => (part, 1),
            };
            let (start, end) = match span.split_once('-') {
                Some((a, b)) => (num(a)?, num(b)?),
                None if step != 1 => return Err(format!("a step needs a range in '{part}'")),
                None => {
                    let n = num(span)?;
                    (n, n)
                }
            };
            ranges.push(IndexRange { start, end, step });
        }
        Indices::new(ranges)
    }

    /// The ranges, in order.
    pub fn ranges(&self) -> &[IndexRange] {
        &self.ranges
    }

    /// Number of sub-jobs.
    pub fn len(&self) -> u32 {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The index at position `pos` (0-based).
    pub fn nth(&self, pos: u32) -> Option<u32> {
        if pos >= self.len {
            return None;
        }
        let k = self.before.partition_point(|b| *b <= pos) - 1;
        let r = self.ranges[k];
        Some(r.start + (pos - self.before[k]) * r.step)
    }

    /// The position of `index` in the list.
    pub fn position(&self, index: u32) -> Option<u32> {
        let k = self
            .ranges
            .partition_point(|r| r.start <= index)
            .checked_sub(1)?;
        let r = self.ranges[k];
        (index <= r.end && (index - r.start) % r.step == 0)
            .then(|| self.before[k] + (index - r.start) / r.step)
    }

    /// Every index, in order.
    pub fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        self.ranges
            .iter()
            .flat_map(|r| (r.start..=r.end).step_by(r.step as usize))
    }

    /// Moab's notation: `1-100`, `1-99:2`, `1,5,7`.
    pub fn format(&self) -> String {
        format_ranges(&self.ranges)
    }
}

fn format_ranges(ranges: &[IndexRange]) -> String {
    let parts: Vec<String> = ranges
        .iter()
        .map(|r| match (r.start == r.end, r.step) {
            (true, _) => r.start.to_string(),
            (false, 1) => format!("{}-{}", r.start, r.end),
            (false, s) if r.end - r.start == s => format!("{},{}", r.start, r.end),
            (false, s) => format!("{}-{}:{s}", r.start, r.end),
        })
        .collect();
    parts.join(",")
}

/// `msub -t`: `[name][INDICES][%LIMIT]` or `INDICES[%LIMIT]` — `1-100`,
/// `myarray[1-100]%5`, `[1-9:2]`, `1,5,7%2`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArraySpec {
    pub name: Option<String>,
    pub indices: Indices,
    pub slot_limit: Option<u32>,
}

impl ArraySpec {
    pub fn parse(text: &str) -> Result<ArraySpec, String> {
        let t = text.trim();
        if t.is_empty() {
            return Err("empty array request".to_string());
        }
        let (body, limit) = match t.rsplit_once('%') {
            Some((b, l)) => {
                let n: u32 = l
                    .trim()
                    .parse()
                    .map_err(|_| format!("invalid slot limit '{l}'"))?;
                if n == 0 {
                    return Err("slot limit must be at least 1".to_string());
                }
                (b, Some(n))
            }
            None => (t, None),
        };
        let (name, list) = match body.find('[') {
            Some(open) => {
                let Some(inner) = body[open + 1..].strip_suffix(']') else {
                    return Err(format!("unbalanced brackets in '{body}'"));
                };
                let name = body[..open].trim();
                if name.contains(char::is_whitespace) {
                    return Err(format!("invalid array name '{name}'"));
                }
                ((!name.is_empty()).then(|| name.to_string()), inner)
            }
            None if body.contains(']') => return Err(format!("unbalanced brackets in '{body}'")),
            None => (None, body),
        };
        let indices = Indices::parse(list)?;
        Ok(ArraySpec {
            name,
            indices,
            slot_limit: limit,
        })
    }
}

/// A job array as the state keeps it.
#[derive(Debug, Clone, PartialEq)]
pub struct ArrayJob {
    /// The array's id (`A`; sub-jobs are `A+1..=A+N`).
    pub id: JobId,
    /// What every sub-job is (its id is the array's): request, credentials,
    /// walltime, dependencies, flags, holds. Whole-array holds and
    /// modifications change it, so sub-jobs made later inherit them.
    pub template: Arc<Job>,
    pub indices: Indices,
    /// At most this many sub-jobs active at once (`%N`).
    pub slot_limit: Option<u32>,
    /// Positions below `next` are jobs (or were: purged).
    pub next: u32,
    /// Positions at or after `next` made jobs out of order (one sub-job held,
    /// modified or cancelled on its own).
    pub extra: BTreeSet<u32>,
    /// Cancelled as a whole: positions never made jobs are removed then.
    pub cancelled: Option<Time>,
    /// Sub-jobs purged after completing successfully, and otherwise
    /// (what dependencies on the whole array still need to know).
    pub purged_ok: u32,
    pub purged_failed: u32,
}

impl ArrayJob {
    /// A new array: nothing made a job yet.
    pub fn new(id: JobId, template: Job, indices: Indices, slot_limit: Option<u32>) -> Self {
        let mut template = template;
        template.id = id;
        ArrayJob {
            id,
            template: Arc::new(template),
            indices,
            slot_limit,
            next: 0,
            extra: BTreeSet::new(),
            cancelled: None,
            purged_ok: 0,
            purged_failed: 0,
        }
    }

    /// Number of sub-jobs.
    pub fn count(&self) -> u32 {
        self.indices.len()
    }

    /// The last id the array owns.
    pub fn last_id(&self) -> JobId {
        self.id + u64::from(self.count())
    }

    /// The job id of the sub-job at `pos`.
    pub fn element_id(&self, pos: u32) -> JobId {
        self.id + 1 + u64::from(pos)
    }

    /// The position of sub-job `job`, if it belongs to this array.
    pub fn position_of(&self, job: JobId) -> Option<u32> {
        (job > self.id && job <= self.last_id()).then(|| (job - self.id - 1) as u32)
    }

    /// The index of sub-job `job`.
    pub fn index_of(&self, job: JobId) -> Option<u32> {
        self.position_of(job).and_then(|p| self.indices.nth(p))
    }

    /// The job id of the sub-job with index `index`.
    pub fn id_of_index(&self, index: u32) -> Option<JobId> {
        self.indices.position(index).map(|p| self.element_id(p))
    }

    /// Whether the sub-job at `pos` was made a job.
    pub fn materialized(&self, pos: u32) -> bool {
        pos < self.next || self.extra.contains(&pos)
    }

    /// Positions not made jobs yet (and never will be once cancelled).
    pub fn pending_positions(&self) -> impl Iterator<Item = u32> + '_ {
        (self.next..self.count()).filter(|p| !self.extra.contains(p))
    }

    /// How many sub-jobs wait unmade.
    pub fn pending(&self) -> u32 {
        self.count() - self.next - self.extra.len() as u32
    }

    /// A sub-job as a job, from the template.
    fn element(&self, pos: u32) -> Job {
        let mut j = (*self.template).clone();
        j.id = self.element_id(pos);
        j.state = JobState::Idle;
        j
    }
}

/// A whole-array operation ([`crate::Event::Array`]). It changes the array's
/// record (what sub-jobs not yet made will be); drivers apply the matching
/// per-job events to the sub-jobs that exist.
#[derive(Debug, Clone, PartialEq)]
pub enum ArrayOp {
    SetHold(HoldType),
    ReleaseHold(HoldType),
    Modify(JobChange),
    /// No further sub-job will be made; the pending ones count as removed.
    Cancel,
    /// Forget the array (every sub-job finished and purged).
    Purge,
}

/// The arrays of a state (persistent maps: cloning the state stays O(1)).
#[derive(Debug, Clone, Default)]
pub(crate) struct Arrays {
    pub(crate) map: OrdMap<JobId, Arc<ArrayJob>>,
    /// Arrays with pending positions that may still be made jobs.
    pub(crate) pending: OrdSet<JobId>,
    /// Arrays with a slot limit.
    pub(crate) limited: usize,
}

/// A sub-job's place in its array.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Member {
    pub array: JobId,
    pub index: u32,
    pub position: u32,
}

/// Sub-jobs of an array by what they are doing (checkjob's `Job Array Info`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    pub total: u32,
    pub active: u32,
    /// Queued (made jobs or still pending).
    pub idle: u32,
    pub completed: u32,
    /// Finished with exit status 0.
    pub succeeded: u32,
    /// Cancelled or removed (made jobs or pending when the array was cancelled).
    pub removed: u32,
}

impl State {
    /// The array with this id.
    pub fn array(&self, id: JobId) -> Option<&ArrayJob> {
        self.arrays.map.get(&id).map(|a| &**a)
    }

    /// Every array, by id.
    pub fn arrays(&self) -> impl Iterator<Item = &ArrayJob> {
        self.arrays.map.values().map(|a| &**a)
    }

    /// The array a job id belongs to (as a sub-job), made a job or not.
    pub fn array_of(&self, job: JobId) -> Option<(&ArrayJob, Member)> {
        if self.arrays.map.is_empty() {
            return None;
        }
        let (_, a) = self.arrays.map.range(..job).next_back()?;
        let position = a.position_of(job)?;
        let index = a.indices.nth(position)?;
        Some((
            &**a,
            Member {
                array: a.id,
                index,
                position,
            },
        ))
    }

    /// Whether some array has a slot limit (throttling is then needed).
    pub fn has_slot_limits(&self) -> bool {
        self.arrays.limited > 0
    }

    /// The sub-jobs of an array that are jobs now, by id.
    pub fn array_jobs<'a>(&'a self, a: &ArrayJob) -> impl Iterator<Item = &'a Job> + 'a {
        self.jobs.range(a.id + 1..=a.last_id()).map(|(_, j)| &**j)
    }

    /// Counts of an array's sub-jobs by state.
    pub fn array_counts(&self, a: &ArrayJob) -> Counts {
        let mut c = Counts {
            total: a.count(),
            ..Counts::default()
        };
        for j in self.array_jobs(a) {
            if j.state.is_active() {
                c.active += 1;
            } else if j.state.is_finished() {
                c.completed += 1;
                match j.completion.map(|c| c.code) {
                    Some(CompletionCode::Exit(0)) if j.state == JobState::Completed => {
                        c.succeeded += 1
                    }
                    Some(CompletionCode::Cancelled) => c.removed += 1,
                    _ => {}
                }
            } else {
                c.idle += 1;
            }
        }
        let pending = a.pending();
        // Sub-jobs made and already purged.
        c.completed += a.purged_ok + a.purged_failed;
        c.succeeded += a.purged_ok;
        if a.cancelled.is_some() {
            c.completed += pending;
            c.removed += pending;
        } else {
            c.idle += pending;
        }
        c
    }

    /// Makes the sub-job at `pos` of `array` a job (Idle, from the template);
    /// returns its id. Already a job: its id, nothing changes.
    pub fn materialize(&mut self, array: JobId, pos: u32, now: Time) -> Result<JobId, EventError> {
        let a = self
            .arrays
            .map
            .get(&array)
            .ok_or(EventError::UnknownJob(array))?;
        if pos >= a.count() {
            return Err(EventError::UnknownJob(a.element_id(pos)));
        }
        let id = a.element_id(pos);
        if a.materialized(pos) {
            return Ok(id);
        }
        if a.cancelled.is_some() {
            return Err(EventError::WrongState {
                job: id,
                state: "Removed",
                expected: "Idle",
            });
        }
        let job = a.element(pos);
        let a = Arc::make_mut(self.arrays.map.get_mut(&array).expect("checked above"));
        if pos == a.next {
            a.next += 1;
            while a.extra.remove(&a.next) {
                a.next += 1;
            }
        } else {
            a.extra.insert(pos);
        }
        if a.pending() == 0 {
            self.arrays.pending.remove(&array);
        }
        self.apply(crate::Event::submit(job), now)?;
        Ok(id)
    }

    /// Keeps [`WINDOW`] queued sub-jobs of every array as jobs: makes jobs
    /// of pending positions, in index order, where fewer are queued. Returns
    /// the ids made (the drivers persist them; a non-empty answer after an
    /// iteration's starts means another iteration may start more).
    #[inline]
    pub fn expand_arrays(&mut self, now: Time) -> Vec<JobId> {
        if self.arrays.pending.is_empty() {
            // No array waits for sub-jobs (the simulator asks twice per
            // iteration): decided at the call site, without a call.
            return Vec::new();
        }
        self.expand_pending_arrays(now)
    }

    fn expand_pending_arrays(&mut self, now: Time) -> Vec<JobId> {
        let mut made = Vec::new();
        let ids: Vec<JobId> = self.arrays.pending.iter().copied().collect();
        for id in ids {
            let Some(a) = self.arrays.map.get(&id) else {
                continue;
            };
            let queued = self.queued.range(a.id + 1..=a.last_id()).count() as u32;
            let want = WINDOW.saturating_sub(queued);
            let positions: Vec<u32> = a.pending_positions().take(want as usize).collect();
            for pos in positions {
                match self.materialize(id, pos, now) {
                    Ok(j) => made.push(j),
                    Err(_) => break,
                }
            }
        }
        made
    }

    /// Arrays that may be forgotten: nothing pending, every sub-job made
    /// and purged.
    pub fn purgeable_arrays(&self) -> Vec<JobId> {
        self.arrays
            .map
            .values()
            .filter(|a| a.pending() == 0 || a.cancelled.is_some())
            .filter(|a| self.array_jobs(a).next().is_none())
            .map(|a| a.id)
            .collect()
    }

    /// A finished sub-job is forgotten: its array keeps its outcome.
    pub(crate) fn note_purged(&mut self, job: &Job) {
        let Some((a, _)) = self.array_of(job.id) else {
            return;
        };
        let id = a.id;
        let ok = job.state == JobState::Completed
            && matches!(
                job.completion.map(|c| c.code),
                Some(CompletionCode::Exit(0))
            );
        if let Some(a) = self.arrays.map.get_mut(&id) {
            let a = Arc::make_mut(a);
            if ok {
                a.purged_ok += 1;
            } else {
                a.purged_failed += 1;
            }
        }
    }

    pub(crate) fn submit_array(&mut self, a: ArrayJob) -> Result<(), EventError> {
        if a.count() == 0 {
            return Err(EventError::UnknownJob(a.id));
        }
        if self.arrays.map.contains_key(&a.id) {
            return Err(EventError::DuplicateJob(a.id));
        }
        let clash = self
            .jobs
            .range(a.id..=a.last_id())
            .next()
            .map(|(id, _)| *id);
        let clash = clash.or_else(|| {
            self.arrays
                .map
                .range(..=a.last_id())
                .next_back()
                .filter(|(_, o)| o.last_id() >= a.id)
                .map(|(id, _)| *id)
        });
        if let Some(id) = clash {
            return Err(EventError::DuplicateJob(id));
        }
        if a.slot_limit.is_some() {
            self.arrays.limited += 1;
        }
        if a.pending() > 0 && a.cancelled.is_none() {
            self.arrays.pending.insert(a.id);
        }
        self.arrays.map.insert(a.id, Arc::new(a));
        Ok(())
    }

    pub(crate) fn array_op(
        &mut self,
        array: JobId,
        op: ArrayOp,
        now: Time,
    ) -> Result<(), EventError> {
        let a = self
            .arrays
            .map
            .get_mut(&array)
            .ok_or(EventError::UnknownJob(array))?;
        let a = Arc::make_mut(a);
        match op {
            ArrayOp::SetHold(h) => {
                Arc::make_mut(&mut a.template).holds.insert(h);
            }
            ArrayOp::ReleaseHold(h) => {
                Arc::make_mut(&mut a.template).holds.remove(h);
            }
            ArrayOp::Modify(change) => {
                let t = Arc::make_mut(&mut a.template);
                match change {
                    JobChange::Walltime(w) => t.walltime = w,
                    JobChange::Name(n) => t.name = n.into(),
                    JobChange::Class(c) => t.cred.class = c.map(Into::into),
                    JobChange::Account(x) => t.cred.account = x.map(Into::into),
                    JobChange::Qos(q) => t.cred.qos = q.map(Into::into),
                    JobChange::UserPrio(p) => t.user_prio = p,
                    JobChange::SysPrio(p) => t.sys_prio = p,
                    JobChange::StartAfter(s) => t.start_after = s,
                    JobChange::Flags(f) => t.flags = f.into_iter().collect(),
                    JobChange::Depend(d) => t.depend = d,
                    _ => {
                        return Err(EventError::ActiveJob {
                            job: array,
                            what: "this attribute of an array",
                        })
                    }
                }
            }
            ArrayOp::Cancel => {
                if a.cancelled.is_none() {
                    a.cancelled = Some(now);
                }
                self.arrays.pending.remove(&array);
            }
            ArrayOp::Purge => {
                if a.pending() > 0 && a.cancelled.is_none() {
                    return Err(EventError::WrongState {
                        job: array,
                        state: "Idle",
                        expected: "finished",
                    });
                }
                let limited = a.slot_limit.is_some();
                self.arrays.map.remove(&array);
                self.arrays.pending.remove(&array);
                if limited {
                    self.arrays.limited = self.arrays.limited.saturating_sub(1);
                }
            }
        }
        Ok(())
    }
}

/// Active sub-jobs against each array's slot limit, for one iteration:
/// built from the state, counted up as the plan starts sub-jobs.
#[derive(Debug, Clone, Default)]
pub struct Slots {
    /// By array id: (last sub-job id, limit, active sub-jobs).
    arrays: std::collections::BTreeMap<JobId, (JobId, u32, u32)>,
}

impl Slots {
    pub fn from_state(state: &State) -> Slots {
        let mut s = Slots::default();
        if !state.has_slot_limits() {
            return s;
        }
        for a in state.arrays() {
            if let Some(limit) = a.slot_limit {
                let active = state.array_jobs(a).filter(|j| j.state.is_active()).count();
                s.arrays.insert(a.id, (a.last_id(), limit, active as u32));
            }
        }
        s
    }

    /// `Some((array, limit, active))` when starting `job` would exceed its
    /// array's slot limit.
    pub fn exceeded(&self, job: JobId) -> Option<(JobId, u32, u32)> {
        let (id, e) = self.arrays.range(..job).next_back()?;
        (job <= e.0 && e.2 >= e.1).then_some((*id, e.1, e.2))
    }

    /// Counts a started sub-job.
    pub fn add(&mut self, job: JobId) {
        if let Some((_, e)) = self.arrays.range_mut(..job).next_back() {
            if job <= e.0 {
                e.2 += 1;
            }
        }
    }
}

/// A dependency on a whole array (`afterok:A` where `A` is an array, or the
/// `...array` kinds): `None` when `dep.job` is not an array. `Some(Ok(true))`
/// satisfied, `Some(Ok(false))` waiting, `Some(Err(()))` can never be met.
pub fn array_dependency(state: &State, dep: Dependency) -> Option<Result<bool, ()>> {
    let a = state.array(dep.job)?;
    let c = state.array_counts(a);
    let done = c.completed == c.total;
    let any_failed = c.completed > c.succeeded;
    Some(match dep.kind {
        DependencyKind::After | DependencyKind::AfterStartArray => {
            if c.active > 0 || c.completed > 0 {
                Ok(true)
            } else {
                Ok(false)
            }
        }
        DependencyKind::AfterAny | DependencyKind::AfterAnyArray => Ok(done),
        DependencyKind::AfterOk | DependencyKind::AfterOkArray => {
            if any_failed {
                Err(())
            } else {
                Ok(done)
            }
        }
        DependencyKind::AfterNotOk | DependencyKind::AfterNotOkArray => {
            if done && !any_failed {
                Err(())
            } else {
                Ok(done)
            }
        }
        _ => return None,
    })
}

#[cfg(test)]
mod tests;
