//! Incremental indexes kept by [`crate::State`] for the lean scheduling path
//! ([`crate::lean`]): maintained by `State::apply` (every change of a job
//! goes through it), never read by the full [`crate::schedule()`].
//!
//! - the idle queue ordered by `(submit time, id)` — the queue order whenever
//!   priority is FIFO by queue time — in blocks that carry the smallest
//!   processor count and planning duration of their jobs, so a backfill pass
//!   skips a whole block when nothing in it can fit;
//! - planned releases of running jobs (start + estimate, else walltime), so an
//!   iteration builds its availability profile without scanning and sorting
//!   the running jobs;
//! - wall-clock expiries of running jobs and start dates of queued jobs (what
//!   `next_wakeup` needs);
//! - counts of what the lean path cannot handle (system priorities,
//!   suspended jobs, jobs waiting for stage-in data, preemptors).

use std::collections::BTreeSet;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::job::{Job, JobId, JobState};
use crate::{Secs, Time};

/// `a < b` for `(time, job)` keys, without a branch: the binary searches
/// of the indexes compare keys whose order is unpredictable, and the
/// lexicographic `<` of a tuple branches on the first field's equality.
#[inline(always)]
fn before(a: (Time, JobId), b: (Time, JobId)) -> bool {
    (a.0 < b.0) | ((a.0 == b.0) & (a.1 < b.1))
}

/// Jobs per block of the ordered queue (split at twice this).
const BLOCK: usize = 64;

/// One queued job in the ordered queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueueItem {
    pub submit: Time,
    pub id: JobId,
    pub procs: u32,
    /// Planning duration (estimate, else walltime); `Secs::MAX` without one.
    pub dur: Secs,
    /// No hold, start date, data wait or dependency: nothing but resources
    /// keeps the job from starting (`eligibility::check_static` passes).
    pub simple: bool,
    /// No node constraint ([`crate::placement::is_constrained`]): with
    /// plain node access the aggregate profile alone places it.
    pub plain: bool,
}

impl QueueItem {
    pub(crate) fn key(&self) -> (Time, JobId) {
        (self.submit, self.id)
    }
}

/// A run of consecutive queued jobs with lower bounds of their demands.
#[derive(Clone, Default)]
pub struct Block {
    pub items: Vec<QueueItem>,
    pub min_procs: u32,
    pub min_dur: Secs,
}

impl Block {
    fn recompute(&mut self) {
        self.min_procs = self.items.iter().map(|i| i.procs).min().unwrap_or(u32::MAX);
        self.min_dur = self.items.iter().map(|i| i.dur).min().unwrap_or(Secs::MAX);
    }
}

/// Idle jobs ordered by `(submit, id)`, in blocks.
#[derive(Clone, Default)]
pub struct OrderedQueue {
    blocks: Vec<Block>,
    len: usize,
}

impl fmt::Debug for OrderedQueue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The block layout depends on history; print the content only.
        f.debug_list()
            .entries(
                self.blocks
                    .iter()
                    .flat_map(|b| b.items.iter().map(|i| i.id)),
            )
            .finish()
    }
}

impl OrderedQueue {
    #[cfg(test)]
    fn len(&self) -> usize {
        self.len
    }

    pub fn blocks(&self) -> &[Block] {
        &self.blocks
    }

    /// The block that holds (or would hold) `key`.
    fn block_of(&self, key: (Time, JobId)) -> usize {
        let b = self
            .blocks
            .partition_point(|b| b.items.last().is_some_and(|l| before(l.key(), key)));
        b.min(self.blocks.len().saturating_sub(1))
    }

    /// Where the jobs queued after `key` begin: block, and item in it.
    pub(crate) fn after(&self, key: (Time, JobId)) -> (usize, usize) {
        let b = self
            .blocks
            .partition_point(|b| b.items.last().is_some_and(|l| !before(key, l.key())));
        let i = self.blocks.get(b).map_or(0, |blk| {
            blk.items.partition_point(|i| !before(key, i.key()))
        });
        (b, i)
    }

    pub fn insert(&mut self, item: QueueItem) {
        if self.blocks.is_empty() {
            self.blocks.push(Block::default());
        }
        // A job queued after every other (a submission, usually) goes at
        // the end without a search.
        let last = self.blocks.len() - 1;
        let tail = self.blocks[last]
            .items
            .last()
            .is_none_or(|l| before(l.key(), item.key()));
        let b = if tail {
            last
        } else {
            self.block_of(item.key())
        };
        let blk = &mut self.blocks[b];
        let pos = if tail {
            blk.items.len()
        } else {
            blk.items.partition_point(|i| before(i.key(), item.key()))
        };
        if blk.items.get(pos).is_some_and(|i| i.key() == item.key()) {
            blk.items[pos] = item;
            blk.recompute();
            return;
        }
        blk.items.insert(pos, item);
        blk.min_procs = blk.min_procs.min(item.procs);
        blk.min_dur = blk.min_dur.min(item.dur);
        if blk.items.len() == 1 {
            blk.recompute();
        }
        self.len += 1;
        if blk.items.len() >= 2 * BLOCK {
            let tail = blk.items.split_off(BLOCK);
            blk.recompute();
            let mut nb = Block {
                items: tail,
                ..Block::default()
            };
            nb.recompute();
            self.blocks.insert(b + 1, nb);
        }
    }

    pub fn remove(&mut self, submit: Time, id: JobId) {
        if self.blocks.is_empty() {
            return;
        }
        let key = (submit, id);
        // The first queued job (a start in queue order, usually) is found
        // without a search.
        let (b, pos) = if self.blocks[0].items.first().is_some_and(|i| i.key() == key) {
            (0, 0)
        } else {
            let b = self.block_of(key);
            (
                b,
                self.blocks[b]
                    .items
                    .partition_point(|i| before(i.key(), key)),
            )
        };
        let blk = &mut self.blocks[b];
        if blk.items.get(pos).is_none_or(|i| i.key() != key) {
            return;
        }
        let gone = blk.items.remove(pos);
        self.len -= 1;
        if blk.items.is_empty() {
            self.blocks.remove(b);
        } else if gone.procs <= blk.min_procs || gone.dur <= blk.min_dur {
            // Only a job at a bound can change it.
            blk.recompute();
        }
    }
}

/// Planned releases `(end, job, processors)` sorted by `(end, job)`: a
/// sorted vector (a few hundred running jobs at most on the traces; an
/// iteration reads them all in one pass, contiguous).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Releases(Vec<(Time, JobId, u32)>);

impl Releases {
    /// Adds (or replaces) the release of `job` at `end`.
    pub fn insert(&mut self, end: Time, job: JobId, procs: u32) {
        let key = (end, job);
        let pos = self.0.partition_point(|r| before((r.0, r.1), key));
        match self.0.get_mut(pos) {
            Some(r) if (r.0, r.1) == key => r.2 = procs,
            _ => self.0.insert(pos, (end, job, procs)),
        }
    }

    /// Removes the release of `job` at `end`, if any.
    pub fn remove(&mut self, end: Time, job: JobId) {
        let key = (end, job);
        let pos = self.0.partition_point(|r| before((r.0, r.1), key));
        if self.0.get(pos).is_some_and(|r| (r.0, r.1) == key) {
            self.0.remove(pos);
        }
    }

    /// Every release, by `(end, job)`.
    pub fn as_slice(&self) -> &[(Time, JobId, u32)] {
        &self.0
    }

    /// The releases as a profile from `now` takes them ([`crate::profile::
    /// Profile::from_sorted_releases`]): each at its end, one already due at
    /// `now + 1`; still in time order (`max` keeps it).
    pub(crate) fn released_from(
        &self,
        now: Time,
    ) -> impl Iterator<Item = (Time, crate::profile::Amount)> + '_ {
        self.0.iter().map(move |&(end, _, procs)| {
            (
                end.max(now + 1),
                crate::profile::Amount::procs(i64::from(procs)),
            )
        })
    }

    /// The earliest end at or after `t`.
    pub fn first_from(&self, t: Time) -> Option<Time> {
        let pos = self.0.partition_point(|r| r.0 < t);
        self.0.get(pos).map(|r| r.0)
    }
}

/// Everything the lean path reads instead of scanning jobs.
#[derive(Debug, Clone, Default)]
pub struct Indexes {
    pub queue: OrderedQueue,
    /// `(planned end, job, processors)` of running (not suspended) jobs
    /// with a planning duration (start + estimate, else walltime).
    pub releases: Releases,
    /// Running jobs without any planning duration (never release).
    pub open_running: usize,
    /// `(expected end by walltime, job, processors)` of running jobs (what
    /// the full iteration's profile releases when it plans with walltimes),
    /// kept only while some running job's differs from its planned release
    /// (`ends_differ`); else empty, and [`Indexes::ends`] is `releases`.
    ends: Releases,
    /// Running (not suspended) jobs whose walltime end is not their planned
    /// release (an estimate shorter than the walltime).
    ends_differ: usize,
    /// `(start date, job)` of queued jobs with one.
    pub dated: BTreeSet<(Time, JobId)>,
    /// Queued jobs with an administrator system priority.
    pub sys_prio: usize,
    /// Suspended jobs.
    pub suspended: usize,
    /// Queued jobs waiting for stage-in data.
    pub data_wait: usize,
    /// Queued jobs with the `PREEMPTOR` job flag.
    pub preemptors: usize,
    /// Active jobs running on a virtual wall-clock limit
    /// (`BFVIRTUALWALLTIMESCALINGFACTOR`).
    pub virtual_running: usize,
    /// Queued jobs with a task request list ([`crate::trl`]).
    pub trl: usize,
    /// Queued and running malleable or resizable jobs ([`crate::malleable`]).
    pub elastic: usize,
    /// Queued jobs with dependencies.
    pub dependent: usize,
    /// What changed since a lean walk ([`crate::lean`] resumes one).
    pub stamp: Stamp,
}

/// What changed since a lean walk: `changes` counts every change but a
/// tail submission (an idle job after every job queued so far, by
/// `(submit, id)`) and a start, which `starts` counts; `tail` is the
/// largest `(submit, id)` ever queued (every queued job's is at most
/// `tail`). `owner` tells states apart: a clone gets an owner no other
/// state has had, so that a state and its clone part ways. History, not
/// content: indexes rebuilt from the same jobs have another.
#[derive(Debug, PartialEq, Eq)]
pub struct Stamp {
    pub owner: u64,
    pub changes: u64,
    pub starts: u64,
    /// Calls of [`crate::State::remember_reservations`] (what a walk
    /// under HIGHEST reads; no other walk reads remembered reservations).
    pub remembers: u64,
    pub tail: (Time, JobId),
}

impl Default for Stamp {
    fn default() -> Self {
        Stamp {
            owner: OWNER.fetch_add(1, Ordering::Relaxed),
            changes: 0,
            starts: 0,
            remembers: 0,
            tail: (Time::MIN, 0),
        }
    }
}

impl Clone for Stamp {
    fn clone(&self) -> Self {
        Stamp {
            owner: OWNER.fetch_add(1, Ordering::Relaxed),
            ..*self
        }
    }
}

/// The source of [`Stamp::owner`] values.
static OWNER: AtomicU64 = AtomicU64::new(1);

impl Indexes {
    /// `(expected end by walltime, job, processors)` of running (not
    /// suspended) jobs with a walltime, by `(end, job)`: the planned
    /// releases themselves while every planning duration is the walltime
    /// (no estimates), as in most trace replays.
    pub fn ends(&self) -> &Releases {
        if self.ends_differ == 0 {
            &self.releases
        } else {
            &self.ends
        }
    }

    /// Something other than a tail submission or a start changed the
    /// state.
    pub fn renew(&mut self) {
        self.stamp.changes += 1;
    }

    /// Whether a job queued with `key` now would be a tail submission.
    pub fn at_tail(&self, key: (Time, JobId)) -> bool {
        key > self.stamp.tail
    }

    /// Adds `job` (as it is now) to the indexes (an `Idle` job is in the
    /// state's queue; a finished one has no place in them).
    pub fn add(&mut self, job: &Job) {
        self.update(job, true);
    }

    /// Removes `job` (as it was when added).
    pub fn remove(&mut self, job: &Job) {
        self.update(job, false);
    }

    fn update(&mut self, job: &Job, add: bool) {
        match job.state {
            JobState::Idle => {
                if add {
                    self.stamp.tail = self.stamp.tail.max((job.submit_time, job.id));
                    self.queue.insert(QueueItem {
                        submit: job.submit_time,
                        id: job.id,
                        procs: job.req.total_procs(),
                        dur: job.planning_walltime().unwrap_or(Secs::MAX),
                        simple: job.holds.is_empty()
                            && job.start_after.is_none()
                            && job.data_wait.is_none()
                            && job.depend.is_empty(),
                        plain: !crate::placement::is_constrained(&job.req),
                    });
                } else {
                    self.queue.remove(job.submit_time, job.id);
                }
                if let Some(t) = job.start_after {
                    set(&mut self.dated, (t, job.id), add);
                }
                if job.sys_prio.is_some() {
                    count(&mut self.sys_prio, add);
                }
                if job.data_wait.is_some() {
                    count(&mut self.data_wait, add);
                }
                if job.flags.contains(crate::job::JobFlag::Preemptor) {
                    count(&mut self.preemptors, add);
                }
                if !job.req.trl().is_empty() {
                    count(&mut self.trl, add);
                }
                if job.elastic.is_some() {
                    count(&mut self.elastic, add);
                }
                if !job.depend.is_empty() {
                    count(&mut self.dependent, add);
                }
            }
            JobState::Running | JobState::Starting | JobState::Staging | JobState::Staged => {
                if job.elastic.is_some() {
                    count(&mut self.elastic, add);
                }
                let Some(run) = job.run.as_ref() else {
                    return;
                };
                let base = run.start_time + run.suspended_secs;
                let planned = job.planning_walltime();
                let differs = planned != job.walltime;
                if add && differs {
                    if self.ends_differ == 0 {
                        // The walltime ends part from the releases now.
                        self.ends = self.releases.clone();
                    }
                    self.ends_differ += 1;
                }
                match planned {
                    Some(d) => {
                        if add {
                            self.releases.insert(base + d, job.id, run.procs());
                        } else {
                            self.releases.remove(base + d, job.id);
                        }
                    }
                    None => count(&mut self.open_running, add),
                }
                if let Some(w) = job.walltime.filter(|_| self.ends_differ > 0) {
                    if add {
                        self.ends.insert(base + w, job.id, run.procs());
                    } else {
                        self.ends.remove(base + w, job.id);
                    }
                }
                if !add && differs {
                    self.ends_differ -= 1;
                    if self.ends_differ == 0 {
                        // Every walltime end is a planned release again.
                        self.ends = Releases::default();
                    }
                }
                if run.virtual_walltime.is_some() {
                    count(&mut self.virtual_running, add);
                }
            }
            JobState::Suspended => count(&mut self.suspended, add),
            _ => {}
        }
    }
}

fn set(s: &mut BTreeSet<(Time, JobId)>, k: (Time, JobId), add: bool) {
    if add {
        s.insert(k);
    } else {
        s.remove(&k);
    }
}

fn count(c: &mut usize, add: bool) {
    if add {
        *c += 1;
    } else {
        *c = c.saturating_sub(1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn releases_stay_sorted_like_a_map() {
        let mut r = Releases::default();
        let mut m = std::collections::BTreeMap::new();
        for i in 0..500u64 {
            let end = ((i * 7919) % 97) as Time;
            let job = (i * 31) % 50;
            if i % 3 == 0 {
                r.remove(end, job);
                m.remove(&(end, job));
            } else {
                r.insert(end, job, i as u32);
                m.insert((end, job), i as u32);
            }
        }
        let want: Vec<(Time, JobId, u32)> = m.iter().map(|(k, v)| (k.0, k.1, *v)).collect();
        assert_eq!(r.as_slice(), &want[..]);
        for t in [0, 13, 50, 96, 97] {
            assert_eq!(r.first_from(t), m.range((t, 0)..).next().map(|(k, _)| k.0));
        }
    }

    #[test]
    fn ordered_queue_keeps_order_and_bounds() {
        let mut q = OrderedQueue::default();
        let n = 1000u64;
        for i in 0..n {
            let id = (i * 7919) % n;
            q.insert(QueueItem {
                submit: (id / 3) as Time,
                id,
                procs: (id % 50 + 1) as u32,
                dur: (id % 17 + 1) as Secs,
                simple: true,
                plain: true,
            });
        }
        assert_eq!(q.len(), n as usize);
        for i in (0..n).filter(|i| i % 3 == 0) {
            q.remove((i / 3) as Time, i);
        }
        q.remove(5, 999_999);
        let ids: Vec<JobId> = q
            .blocks()
            .iter()
            .flat_map(|b| b.items.iter().map(|i| i.id))
            .collect();
        let want: Vec<JobId> = (0..n).filter(|i| i % 3 != 0).collect();
        assert_eq!(ids, want);
        assert_eq!(q.len(), want.len());
        for b in q.blocks() {
            assert!(!b.items.is_empty());
            assert_eq!(b.min_procs, b.items.iter().map(|i| i.procs).min().unwrap());
            assert_eq!(b.min_dur, b.items.iter().map(|i| i.dur).min().unwrap());
        }
    }
}
