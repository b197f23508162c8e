//! Choosing a preemptor's victims: whole sets are compared, not jobs one by
//! one.
//!
//! A set's cost is, in this order (lower is better): the highest start
//! priority among its victims, the work it loses (processor-seconds run so
//! far by the requeued or cancelled victims; a suspension or a checkpoint
//! loses none), its number of jobs, its number of distinct nodes. The search:
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
//! The search is bounded ([`MAX_VISITS`] nodes, [`MAX_VERIFY`] placements);
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
const MAX_VISITS: u32 = 20_000;
/// Candidate sets verified against the placement at most for one preemptor.
const MAX_VERIFY: u32 = 24;

/// `(work lost, jobs, nodes)`: the cost of a set within one priority level.
type Cost = (i64, usize, usize);

/// The victims for `job`, as indexes into `cands` (which this reorders), or
/// `None` when no set of at most [`MAX_PREEMPTEES`] makes it fit. Nothing is
/// left released in the planning context.
pub(crate) fn choose<'a>(
    walk: &mut Walk<'a>,
    job: &Job,
    dur: Option<Secs>,
    cands: &mut [Cand<'a>],
) -> Option<Vec<usize>> {
    cands.sort_by_key(|c| (c.prio, c.job.id));
    let need = i64::from(job.req.total_procs());
    let deficit = (need - walk.ctx.free_procs_over(dur)).max(0);
    let mut density = vec![0u32; walk.ctx.state.nodes().len()];
    for c in cands.iter() {
        if let Some(n) = first_node(c.job) {
            if let Some(d) = density.get_mut(n as usize) {
                *d += 1;
            }
        }
    }
    let mut budget = (MAX_VISITS, MAX_VERIFY);
    let mut largest: BinaryHeap<Reverse<u32>> = BinaryHeap::new();
    let mut top_sum = 0i64;
    let n = cands.len();
    let mut k = 0;
    while k < n {
        let level = cands[k].prio;
        while k < n && cands[k].prio == level {
            largest.push(Reverse(cands[k].procs));
            top_sum += i64::from(cands[k].procs);
            if largest.len() > MAX_PREEMPTEES {
                if let Some(Reverse(p)) = largest.pop() {
                    top_sum -= i64::from(p);
                }
            }
            k += 1;
        }
        if top_sum < deficit {
            continue;
        }
        if let Some(set) = search(
            &mut walk.ctx,
            job,
            dur,
            &cands[..k],
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

fn first_node(j: &Job) -> Option<NodeId> {
    j.run.as_ref().and_then(|r| r.alloc.first()).map(|a| a.node)
}

/// One candidate as the search sees it.
struct Item {
    /// Index into the candidates.
    idx: usize,
    procs: i64,
    lost: i64,
    /// Work lost per processor, rounded down (`ratio * procs <= lost`).
    ratio: i64,
    nodes: Vec<NodeId>,
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
}

/// The best verified set among `cands` covering `deficit` processors.
fn search<'a>(
    ctx: &mut Ctx<'a>,
    job: &Job,
    dur: Option<Secs>,
    cands: &[Cand<'a>],
    deficit: i64,
    density: &[u32],
    budget: &mut (u32, u32),
) -> Option<Vec<usize>> {
    let mut items: Vec<Item> = cands
        .iter()
        .enumerate()
        .map(|(idx, c)| {
            let procs = i64::from(c.procs);
            let mut nodes: Vec<NodeId> = c
                .job
                .run
                .as_ref()
                .map(|r| r.alloc.iter().map(|a| a.node).collect())
                .unwrap_or_default();
            nodes.sort_unstable();
            nodes.dedup();
            Item {
                idx,
                procs,
                lost: c.lost,
                ratio: if procs > 0 { c.lost / procs } else { c.lost },
                nodes,
            }
        })
        .collect();
    items.sort_by_key(|it| {
        let first = it.nodes.first().copied().unwrap_or(NodeId::MAX);
        let dens = density.get(first as usize).copied().unwrap_or(0);
        (
            it.ratio,
            Reverse(it.procs),
            it.nodes.len(),
            Reverse(dens),
            cands[it.idx].job.id,
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
    };
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
                );
                if lb >= *best {
                    return;
                }
            }
            self.push(k);
            if self.sum >= self.deficit {
                let cost: Cost = (self.lost, self.chosen.len(), self.nodes.len());
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
        for &n in &it.nodes {
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
        for &n in &it.nodes {
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
    cands.sort_by_key(|c| (c.prio, c.lost, c.procs, c.job.id));
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
