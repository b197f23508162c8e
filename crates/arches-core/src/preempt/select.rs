//! Choosing a preemptor's victims: whole sets are compared, not jobs one by
//! one.
//!
//! A set's cost is, in this order (lower is better): the highest start
//! priority among its victims, the work it loses (processor-seconds run so
//! far by the requeued or cancelled victims; a suspension or a checkpoint
//! loses none), its number of jobs, its number of distinct nodes, its number
//! of processors (free no more than needed). The search:
//!
//! 1. priority levels are tried lowest first: a level is searched only if
//!    the [`MAX_PREEMPTEES`] largest candidates at or below it could free
//!    enough processors at all, so the first level with a solution gives the
//!    set with the lowest highest priority;
//! 2. within a level, a depth-first branch and bound over the candidates
//!    ordered by work lost per processor (then larger first, then on the
//!    nodes with the most candidates, then by id) finds the set of least (loss, jobs,
//!    nodes) whose processors cover what is missing; the bound is the
//!    fractional cost of covering the rest, so single candidates that
//!    suffice are reached at once and most branches are cut;
//! 3. every set that would be the new best is verified against the real
//!    placement (its victims released, the preemptor placed), since node
//!    layout, memory and later reservations can make a covering set useless.
//!
//! A job planned on the aggregate profile alone (no node constraints,
//! reservations or per-node profiles) is verified exactly without touching
//! the profile ([`Ctx::fits_with_released`], [`MAX_FAST_VERIFY`] times at
//! most); others release and place ([`MAX_VERIFY`] times at most).
//! The search visits at most [`MAX_VISITS`] nodes, except that with at most
//! [`EXHAUSTIVE`] candidates it is exhaustive (so exact);
//! when it finds nothing within those bounds the greedy fallback takes
//! candidates one by one in (priority, loss, size) order until the preemptor
//! fits and gives back every victim it does not need.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::{Cand, MAX_PREEMPTEES};
use crate::context::Ctx;
use crate::job::Job;
use crate::node::NodeId;
use crate::policy::PreemptPolicy;
use crate::schedule::Walk;
use crate::Secs;

/// Search nodes visited at most for one preemptor.
const MAX_VISITS: u32 = 2_048;
/// Candidate sets verified against the placement at most for one preemptor.
const MAX_VERIFY: u32 = 24;
/// Candidate sets verified on the aggregate profile alone at most (cheap).
const MAX_FAST_VERIFY: u32 = 512;
/// With at most this many candidates the search is exhaustive (exact).
const EXHAUSTIVE: usize = 12;

/// `(work lost, jobs, nodes, processors)`: the cost of a set within one
/// priority level (processors last: of equal sets, free no more than needed).
type Cost = (i64, usize, usize, i64);

/// The victims for `job`, as indexes into `cands` (which this reorders), or
/// `None` when no set of at most [`MAX_PREEMPTEES`] makes it fit. Nothing is
/// left released in the planning context.
pub(crate) fn choose<'a>(
    walk: &mut Walk<'a>,
    job: &Job,
    dur: Option<Secs>,
    cands: &mut [Cand<'a>],
) -> Option<Vec<usize>> {
    let need = i64::from(job.req.total_procs());
    let deficit = (need - walk.ctx.free_procs_over(dur)).max(0);
    let mut density = vec![0u32; walk.ctx.state.nodes().len()];
    // Candidates by priority level, lowest first (no full sort: levels
    // are few, candidates many).
    let mut levels: std::collections::BTreeMap<(bool, i64), Vec<usize>> =
        std::collections::BTreeMap::new();
    for (k, c) in cands.iter().enumerate() {
        if let Some(d) = c.first_node.and_then(|n| density.get_mut(n as usize)) {
            *d += 1;
        }
        levels.entry(c.prio).or_default().push(k);
    }
    let fast = walk.ctx.aggregate_only(job);
    let mut budget = if cands.len() <= EXHAUSTIVE {
        // Few candidates: search them all (at most 2^EXHAUSTIVE sets).
        (2 << EXHAUSTIVE, 1 << EXHAUSTIVE)
    } else {
        (MAX_VISITS, if fast { MAX_FAST_VERIFY } else { MAX_VERIFY })
    };
    let mut largest: BinaryHeap<Reverse<u32>> = BinaryHeap::new();
    let mut top_sum = 0i64;
    let mut usable: Vec<usize> = Vec::new();
    for level in levels.into_values() {
        for k in level {
            largest.push(Reverse(cands[k].procs));
            top_sum += i64::from(cands[k].procs);
            if largest.len() > MAX_PREEMPTEES {
                if let Some(Reverse(p)) = largest.pop() {
                    top_sum -= i64::from(p);
                }
            }
            usable.push(k);
        }
        if top_sum < deficit {
            continue;
        }
        if let Some(set) = search(
            &mut walk.ctx,
            job,
            dur,
            cands,
            &usable,
            deficit,
            &density,
            &mut budget,
        ) {
            return Some(set);
        }
        if budget.0 == 0 || budget.1 == 0 {
            break;
        }
    }
    greedy(&mut walk.ctx, job, dur, cands)
}

/// One candidate as the search sees it.
struct Item {
    /// Index into the candidates.
    idx: usize,
    procs: i64,
    /// When planning expects its processors back (`None`: never).
    release: Option<crate::Time>,
    lost: i64,
    /// Work lost per processor, rounded down (`ratio * procs <= lost`).
    ratio: i64,
    /// Its first node, and its other distinct nodes (usually none).
    first: Option<NodeId>,
    more: Vec<NodeId>,
}

impl Item {
    fn nodes(&self) -> impl Iterator<Item = NodeId> + '_ {
        self.first.into_iter().chain(self.more.iter().copied())
    }

    fn node_count(&self) -> usize {
        usize::from(self.first.is_some()) + self.more.len()
    }
}

struct Search<'c, 'a, 'j> {
    ctx: &'c mut Ctx<'a>,
    job: &'j Job,
    dur: Option<Secs>,
    cands: &'c [Cand<'a>],
    items: Vec<Item>,
    /// Largest processor count from each position on.
    suffix_max: Vec<i64>,
    deficit: i64,
    chosen: Vec<usize>,
    sum: i64,
    lost: i64,
    /// Distinct nodes of the chosen victims, with how many use each.
    nodes: Vec<(NodeId, u32)>,
    best: Option<(Cost, Vec<usize>)>,
    budget: &'c mut (u32, u32),
    /// The placement is decided by the aggregate profile alone: verify
    /// without releasing anything.
    fast: bool,
}

/// The best verified set among `cands[usable]` covering `deficit`
/// processors (indexes into `cands`).
#[allow(clippy::too_many_arguments)]
fn search<'a>(
    ctx: &mut Ctx<'a>,
    job: &Job,
    dur: Option<Secs>,
    cands: &[Cand<'a>],
    usable: &[usize],
    deficit: i64,
    density: &[u32],
    budget: &mut (u32, u32),
) -> Option<Vec<usize>> {
    let mut items: Vec<Item> = usable
        .iter()
        .map(|&idx| {
            let c = &cands[idx];
            let procs = i64::from(c.procs);
            // Most jobs hold one node: no allocation for those.
            let alloc = c.job.run.as_ref().map_or(&[][..], |r| &r.alloc[..]);
            let mut more: Vec<NodeId> = Vec::new();
            if alloc.len() > 1 {
                more = alloc.iter().map(|a| a.node).collect();
                more.sort_unstable();
                more.dedup();
            }
            let first = alloc.first().map(|a| a.node);
            if !more.is_empty() {
                more.retain(|n| Some(*n) != first);
            }
            Item {
                idx,
                procs,
                release: ctx.release_time(c.job),
                lost: c.lost,
                ratio: if procs > 0 { c.lost / procs } else { c.lost },
                first,
                more,
            }
        })
        .collect();
    items.sort_unstable_by_key(|it| {
        let first = it.first.unwrap_or(NodeId::MAX);
        let dens = density.get(first as usize).copied().unwrap_or(0);
        (
            it.ratio,
            Reverse(it.procs),
            it.node_count(),
            Reverse(dens),
            cands[it.idx].id,
        )
    });
    let mut suffix_max = vec![0i64; items.len() + 1];
    for k in (0..items.len()).rev() {
        suffix_max[k] = suffix_max[k + 1].max(items[k].procs);
    }
    let mut s = Search {
        ctx,
        job,
        dur,
        cands,
        items,
        suffix_max,
        deficit,
        chosen: Vec::new(),
        sum: 0,
        lost: 0,
        nodes: Vec::new(),
        best: None,
        budget,
        fast: false,
    };
    s.fast = s.ctx.aggregate_only(job);
    s.dfs(0);
    s.best.map(|(_, set)| set)
}

impl Search<'_, '_, '_> {
    fn dfs(&mut self, start: usize) {
        for k in start..self.items.len() {
            if self.budget.0 == 0 || self.chosen.len() >= MAX_PREEMPTEES {
                return;
            }
            self.budget.0 -= 1;
            if let Some((best, _)) = &self.best {
                // No set completed from items k.. can beat the best: every
                // later item loses at least as much per processor and is no
                // larger, so the bound only grows with k.
                let rest = (self.deficit - self.sum).max(0);
                let maxp = self.suffix_max[k].max(1);
                let more = usize::try_from((rest.max(1) + maxp - 1) / maxp).unwrap_or(usize::MAX);
                let lb: Cost = (
                    self.lost + rest * self.items[k].ratio,
                    self.chosen.len() + more,
                    self.nodes.len(),
                    self.sum,
                );
                if lb >= *best {
                    return;
                }
            }
            self.push(k);
            if self.sum >= self.deficit {
                let cost: Cost = (self.lost, self.chosen.len(), self.nodes.len(), self.sum);
                if self.best.as_ref().is_none_or(|(b, _)| cost < *b) {
                    if self.budget.1 == 0 {
                        self.pop(k);
                        return;
                    }
                    self.budget.1 -= 1;
                    if self.verify() {
                        let set = self.chosen.iter().map(|&i| self.items[i].idx).collect();
                        self.best = Some((cost, set));
                    } else {
                        // Covering is not fitting (layout, memory, later
                        // reservations): a larger set may fit.
                        self.dfs(k + 1);
                    }
                }
            } else {
                self.dfs(k + 1);
            }
            self.pop(k);
        }
    }

    fn push(&mut self, k: usize) {
        let it = &self.items[k];
        self.sum += it.procs;
        self.lost += it.lost;
        for n in it.nodes() {
            match self.nodes.iter_mut().find(|(m, _)| *m == n) {
                Some(e) => e.1 += 1,
                None => self.nodes.push((n, 1)),
            }
        }
        self.chosen.push(k);
    }

    fn pop(&mut self, k: usize) {
        let it = &self.items[k];
        self.sum -= it.procs;
        self.lost -= it.lost;
        for n in it.nodes() {
            if let Some(pos) = self.nodes.iter().position(|(m, _)| *m == n) {
                self.nodes[pos].1 -= 1;
                if self.nodes[pos].1 == 0 {
                    self.nodes.swap_remove(pos);
                }
            }
        }
        self.chosen.pop();
    }

    /// Whether the preemptor fits once the chosen victims are gone.
    fn verify(&mut self) -> bool {
        if self.fast {
            let victims: Vec<(i64, Option<crate::Time>)> = self
                .chosen
                .iter()
                .map(|&i| (self.items[i].procs, self.items[i].release))
                .collect();
            let fits = self.ctx.fits_with_released(self.job, self.dur, &victims);
            // The shortcut must agree with releasing and placing (tests).
            debug_assert_eq!(fits, self.verify_by_placement(), "fast verification");
            return fits;
        }
        self.verify_by_placement()
    }

    /// Releases the chosen victims, places the preemptor, undoes.
    fn verify_by_placement(&mut self) -> bool {
        for &i in &self.chosen {
            let c = &self.cands[self.items[i].idx];
            self.ctx
                .release(c.job, c.method == PreemptPolicy::Suspend, false);
        }
        let fits = self.ctx.fit_now(self.job, self.dur).is_some();
        for &i in &self.chosen {
            let c = &self.cands[self.items[i].idx];
            self.ctx
                .release(c.job, c.method == PreemptPolicy::Suspend, true);
        }
        fits
    }
}

/// Candidates one by one in (priority, loss, size, id) order until the
/// preemptor fits, then every victim it does not need given back (most
/// valuable first).
fn greedy<'a>(
    ctx: &mut Ctx<'a>,
    job: &Job,
    dur: Option<Secs>,
    cands: &mut [Cand<'a>],
) -> Option<Vec<usize>> {
    cands.sort_unstable_by_key(|c| (c.prio, c.lost, c.procs, c.id));
    let susp = |c: &Cand<'_>| c.method == PreemptPolicy::Suspend;
    let mut chosen: Vec<usize> = Vec::new();
    let mut fits = false;
    for (k, c) in cands.iter().enumerate() {
        if chosen.len() == MAX_PREEMPTEES {
            break;
        }
        ctx.release(c.job, susp(c), false);
        chosen.push(k);
        if ctx.fit_now(job, dur).is_some() {
            fits = true;
            break;
        }
    }
    if !fits {
        for &k in chosen.iter().rev() {
            ctx.release(cands[k].job, susp(&cands[k]), true);
        }
        return None;
    }
    let mut keep: Vec<usize> = Vec::with_capacity(chosen.len());
    for &k in chosen.iter().rev() {
        let c = &cands[k];
        ctx.release(c.job, susp(c), true);
        if chosen.len() > 1 && ctx.fit_now(job, dur).is_some() {
            continue;
        }
        ctx.release(c.job, susp(c), false);
        keep.push(k);
    }
    for &k in &keep {
        ctx.release(cands[k].job, susp(&cands[k]), true);
    }
    keep.sort_unstable();
    Some(keep)
}
