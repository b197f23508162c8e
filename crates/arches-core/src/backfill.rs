//! Backfill selection: the candidates the queue walk of
//! [`mod@crate::schedule`] collected (jobs beyond the reservation depth),
//! after every priority start and reservation is placed.
//!
//! - FIRSTFIT runs inline in the queue walk (priority order, pyss's EASY)
//!   unless `BFORDER WIDESTWINDOWFIRST`: then it traverses Moab's backfill
//!   windows widest first (§8.2.2): the
//!   windows are the rectangles of idle processors from now on, one per
//!   drop of the free-processor profile — the widest is the shortest. In
//!   each window the first candidate (priority order) that fits starts,
//!   until none does. On the processor profile the planner uses (tasks of
//!   unconstrained jobs are fungible across nodes), a job fits window `i`
//!   exactly when its duration ends by the window's end and it fits the
//!   profile, and resources only shrink as jobs start, so the traversal is
//!   the candidates ordered by their first (widest) window, then priority,
//!   each started if it fits ([`window_order`]). This differs from a plain
//!   priority-order walk: a short wide job can start before a
//!   higher-priority long narrow one that would take what it needs (see
//!   `tests/scenarios/backfill_windows_widest_first.txt`).
//!
//! - BESTFIT repeatedly starts the fitting candidate with the best
//!   `BACKFILLMETRIC`. Starting a job only ever removes free capacity, so a
//!   candidate that does not fit now never fits later in the same iteration:
//!   one pass in descending metric order (ties in priority order) is exactly
//!   "repeatedly pick the best that fits".
//! - GREEDY looks for the combination of candidates with the largest total
//!   metric. The search is bounded: it considers the first
//!   [`GREEDY_CANDIDATES`] candidates that fit on their own, explores
//!   include/exclude choices depth-first on the free processors of the
//!   aggregate profile's spans from now on for at most [`GREEDY_BUDGET`]
//!   nodes, starts the best combination found
//!   in priority order, then fills what is left first-fit.
//! - PREEMPT is today FIRSTFIT; preemption of backfilled jobs will plug in
//!   here (choose preemptible candidates, mark their starts).

use crate::placement::is_constrained;
use crate::policy::{BackfillMetric, BackfillPolicy, BfPriorityPolicy, PolicyLevel};
use crate::profile::Amount;
use crate::schedule::{Entry, Walk};
use crate::Secs;

/// At most this many candidates enter the GREEDY combination search.
pub const GREEDY_CANDIDATES: usize = 16;
/// At most this many search nodes per iteration for GREEDY.
pub const GREEDY_BUDGET: usize = 4096;

/// A queued job waiting for BESTFIT/GREEDY selection.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Candidate {
    /// Index in the priority-ordered queue.
    pub index: usize,
    /// Planning duration (always set: jobs without one never backfill).
    pub dur: Option<Secs>,
}

/// The metric value of a job for `BACKFILLMETRIC` (larger is better).
pub fn metric(metric: BackfillMetric, procs: u32, nodes: Option<u32>, dur: Secs) -> u64 {
    let procs = u64::from(procs);
    let secs = dur.max(0) as u64;
    match metric {
        BackfillMetric::Procs => procs,
        BackfillMetric::Nodes => u64::from(nodes.unwrap_or(1)),
        BackfillMetric::Seconds => secs,
        BackfillMetric::ProcSeconds => procs.saturating_mul(secs),
    }
}

/// The window breaks of a profile from `now`: the times at which the free
/// processors drop below every earlier amount. Window `i` is
/// `[now, breaks[i])` (the last one, after every break, has no end).
pub(crate) fn window_breaks(prof: &crate::profile::Profile, now: crate::Time) -> Vec<crate::Time> {
    let mut min = prof.free_at(now).procs;
    let mut breaks = Vec::new();
    for &(t, a) in prof.spans().iter().filter(|s| s.0 > now) {
        if a.procs < min {
            breaks.push(t);
            min = a.procs;
        }
    }
    breaks
}

/// Orders FIRSTFIT candidates as Moab's widest-first window traversal
/// visits them: by the widest (first) window whose end they fit before,
/// then priority (their order in `cands`). `dur` gives a candidate's
/// planning duration (`None`: never fits a window with an end).
pub(crate) fn window_order<T>(
    cands: &mut [T],
    breaks: &[crate::Time],
    now: crate::Time,
    dur: impl Fn(&T) -> Option<Secs>,
) {
    cands.sort_by_key(|c| match dur(c) {
        Some(d) => breaks.partition_point(|b| *b < now + d.max(1)),
        None => breaks.len(),
    });
}

/// Chooses and starts backfill jobs among one throttling pass's `cands`
/// (in priority order), under that pass's limits (`level`).
pub(crate) fn select<'a>(
    walk: &mut Walk<'a>,
    entries: &mut [Entry<'a>],
    cands: Vec<Candidate>,
    level: PolicyLevel,
) {
    let policy = walk.ctx.policy;
    let value = |c: &Candidate, entries: &[Entry<'a>]| {
        let j = entries[c.index].job;
        metric(
            policy.backfill_metric,
            j.req.total_procs(),
            j.req.nodes,
            c.dur.unwrap_or(0),
        )
    };
    match policy.backfill {
        BackfillPolicy::FirstFit if policy.bf_widest_window_first && !policy.bf_shortest_first => {
            let mut order = cands;
            let breaks = window_breaks(&walk.ctx.agg, walk.ctx.now);
            window_order(&mut order, &breaks, walk.ctx.now, |c| c.dur);
            for c in order {
                walk.try_backfill(entries, c.index, c.dur, level);
            }
        }
        BackfillPolicy::Greedy => {
            let chosen = greedy(walk, entries, &cands, |c| value(c, entries));
            for c in cands.iter().filter(|c| chosen.contains(&c.index)) {
                walk.try_backfill(entries, c.index, c.dur, level);
            }
            for c in cands.iter().filter(|c| !chosen.contains(&c.index)) {
                walk.try_backfill(entries, c.index, c.dur, level);
            }
        }
        // SJBF (not under PREEMPT, whose BFPRIORITYPOLICY orders): shortest
        // predicted (else planned) duration first, then priority. Each key
        // is computed once; the keys are distinct (the position breaks
        // ties), so an unstable sort gives the stable order.
        _ if policy.bf_shortest_first && policy.backfill != BackfillPolicy::Preempt => {
            let mut order: Vec<((Secs, usize), Candidate)> = cands
                .iter()
                .enumerate()
                .map(|(k, c)| {
                    let job = entries[c.index].job;
                    let d = crate::eligibility::ordering_duration(job, policy).or(c.dur);
                    ((d.unwrap_or(Secs::MAX), k), *c)
                })
                .collect();
            order.sort_unstable_by_key(|(key, _)| *key);
            for (_, c) in order {
                walk.try_backfill(entries, c.index, c.dur, level);
            }
        }
        _ => {
            let mut order: Vec<(u64, usize, Candidate)> = cands
                .iter()
                .enumerate()
                .map(|(k, c)| (value(c, entries), k, *c))
                .collect();
            if policy.backfill == BackfillPolicy::Preempt {
                // BFPRIORITYPOLICY orders PREEMPT backfill candidates.
                match policy.bf_priority_policy {
                    BfPriorityPolicy::Duration | BfPriorityPolicy::HwDuration => {
                        order.sort_by_key(|(_, k, c)| (c.dur.unwrap_or(Secs::MAX), *k))
                    }
                    BfPriorityPolicy::Random => order.sort_by_key(|(_, k, c)| {
                        // Deterministic shuffle (the core has no randomness).
                        let id = entries[c.index].job.id;
                        (id.wrapping_mul(0x9E37_79B9_7F4A_7C15).rotate_left(17), *k)
                    }),
                    BfPriorityPolicy::None => order.sort_by_key(|(_, k, _)| *k),
                }
            } else {
                order.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
            }
            for (_, _, c) in order {
                walk.try_backfill(entries, c.index, c.dur, level);
            }
        }
    }
}

/// Bounded search for the best combination; returns chosen queue indexes.
fn greedy<'a>(
    walk: &Walk<'a>,
    entries: &[Entry<'a>],
    cands: &[Candidate],
    value: impl Fn(&Candidate) -> u64,
) -> Vec<usize> {
    greedy_choice(
        &walk.ctx.agg,
        walk.ctx.now,
        cands.iter().map(|c| {
            let job = entries[c.index].job;
            GreedyItem {
                key: c.index,
                constrained: is_constrained(&job.req),
                procs: job.req.total_procs(),
                dur: c.dur,
                value: value(c),
            }
        }),
    )
}

/// A GREEDY candidate as the combination search sees it.
pub(crate) struct GreedyItem {
    /// What the caller knows the candidate by (returned when chosen).
    pub key: usize,
    /// Node constraints keep a job out of the search (tried first-fit after).
    pub constrained: bool,
    pub procs: u32,
    pub dur: Option<Secs>,
    /// Its `BACKFILLMETRIC` value.
    pub value: u64,
}

/// GREEDY's bounded search on the aggregate profile `prof` at `now`: among
/// the first [`GREEDY_CANDIDATES`] unconstrained candidates (in priority
/// order) that fit on their own, the combination with the largest total
/// value found within [`GREEDY_BUDGET`] search nodes. Returns the chosen
/// keys in priority order. Shared by [`mod@crate::schedule`] and
/// [`crate::lean`].
pub(crate) fn greedy_choice(
    prof: &crate::profile::Profile,
    now: crate::Time,
    cands: impl Iterator<Item = GreedyItem>,
) -> Vec<usize> {
    // The search runs on the free processors of the profile's spans from
    // `now` on (`slack`), each item covering the spans that begin before
    // its end: adding an item is "every covered span keeps at least its
    // processors", then subtracting them there, which is what
    // `Profile::add_usage` checks and does on these spans (the items' memory
    // demand is zero and the filter below saw it free), without splitting
    // and merging breakpoints or copying the profile.
    let spans = prof.spans();
    let spans = &spans[spans.partition_point(|s| s.0 <= now).saturating_sub(1)..];
    let items: Vec<Item> = cands
        .filter(|c| !c.constrained)
        .filter_map(|c| {
            let procs = i64::from(c.procs);
            let end = c.dur.map(|d| now + d.max(1));
            prof.free_over(now, end)
                .covers(Amount::procs(procs))
                .then(|| Item {
                    key: c.key,
                    procs,
                    covers: match end {
                        Some(e) => 1 + spans[1..].partition_point(|s| s.0 < e),
                        None => spans.len(),
                    },
                    value: c.value,
                })
        })
        .take(GREEDY_CANDIDATES)
        .collect();
    let mut slack: Vec<i64> = spans.iter().map(|s| s.1.procs).collect();
    // `rest[k]`: the value of items `k..` (the search's upper bound).
    let mut rest = vec![0u64; items.len() + 1];
    for k in (0..items.len()).rev() {
        rest[k] = rest[k + 1] + items[k].value;
    }
    let mut search = Search {
        items: &items,
        rest: &rest,
        slack: &mut slack,
        stack: Vec::with_capacity(items.len()),
        best: (0, Vec::with_capacity(items.len())),
        budget: GREEDY_BUDGET,
    };
    search.dfs(0, 0);
    search.best.1
}

/// A GREEDY search item: its key, processors, the number of spans (from
/// `now`) it covers, and its value.
struct Item {
    key: usize,
    procs: i64,
    covers: usize,
    value: u64,
}

/// The state of GREEDY's depth-first search.
struct Search<'a> {
    items: &'a [Item],
    rest: &'a [u64],
    /// Free processors of each span from `now`, less the chosen items'.
    slack: &'a mut [i64],
    stack: Vec<usize>,
    best: (u64, Vec<usize>),
    budget: usize,
}

impl Search<'_> {
    /// Include/exclude item `k` and on, the chosen so far worth `total`.
    fn dfs(&mut self, k: usize, total: u64) {
        if total > self.best.0 {
            // In place: the best so far changes often early on.
            self.best.0 = total;
            self.best.1.clone_from(&self.stack);
        }
        if k == self.items.len() || self.budget == 0 {
            return;
        }
        self.budget -= 1;
        // Upper bound: everything left fits.
        if total + self.rest[k] <= self.best.0 {
            return;
        }
        let item = &self.items[k];
        let covered = &mut self.slack[..item.covers];
        if covered.iter().all(|&s| s >= item.procs) {
            covered.iter_mut().for_each(|s| *s -= item.procs);
            self.stack.push(item.key);
            self.dfs(k + 1, total + item.value);
            self.stack.pop();
            let covered = &mut self.slack[..item.covers];
            covered.iter_mut().for_each(|s| *s += item.procs);
        }
        self.dfs(k + 1, total);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metrics() {
        assert_eq!(metric(BackfillMetric::Procs, 4, None, 100), 4);
        assert_eq!(metric(BackfillMetric::Nodes, 4, Some(2), 100), 2);
        assert_eq!(metric(BackfillMetric::Seconds, 4, None, 100), 100);
        assert_eq!(metric(BackfillMetric::ProcSeconds, 4, None, 100), 400);
    }

    /// The search as it was written first, on a copy of the profile with
    /// `Profile::add_usage`/`remove_usage`: what [`greedy_choice`] must
    /// still choose.
    fn reference_choice(
        prof: &crate::profile::Profile,
        now: crate::Time,
        cands: &[GreedyItem],
    ) -> Vec<usize> {
        type Items = [(usize, i64, Option<i64>, u64)];
        #[allow(clippy::too_many_arguments)]
        fn dfs(
            items: &Items,
            k: usize,
            prof: &mut crate::profile::Profile,
            now: i64,
            total: u64,
            stack: &mut Vec<usize>,
            best: &mut (u64, Vec<usize>),
            budget: &mut usize,
        ) {
            if total > best.0 {
                *best = (total, stack.clone());
            }
            if k == items.len() || *budget == 0 {
                return;
            }
            *budget -= 1;
            let rest: u64 = items[k..].iter().map(|i| i.3).sum();
            if total + rest <= best.0 {
                return;
            }
            let (idx, procs, end, v) = items[k];
            if prof.add_usage(now, end, Amount::procs(procs)).is_ok() {
                stack.push(idx);
                dfs(items, k + 1, prof, now, total + v, stack, best, budget);
                stack.pop();
                let _ = prof.remove_usage(now, end, Amount::procs(procs));
            }
            dfs(items, k + 1, prof, now, total, stack, best, budget);
        }
        let items: Vec<(usize, i64, Option<i64>, u64)> = cands
            .iter()
            .filter(|c| !c.constrained)
            .filter_map(|c| {
                let procs = i64::from(c.procs);
                let end = c.dur.map(|d| now + d.max(1));
                prof.free_over(now, end)
                    .covers(Amount::procs(procs))
                    .then_some((c.key, procs, end, c.value))
            })
            .take(GREEDY_CANDIDATES)
            .collect();
        let mut best = (0u64, Vec::new());
        let (mut budget, mut stack, mut work) = (GREEDY_BUDGET, Vec::new(), prof.clone());
        dfs(
            &items,
            0,
            &mut work,
            now,
            0,
            &mut stack,
            &mut best,
            &mut budget,
        );
        best.1
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2000))]

        /// The search on the spans' free processors chooses exactly what the
        /// search on a copied profile chose: random profiles (releases and
        /// reservations, so free capacity rises and falls), candidates that
        /// fit or not, open-ended ones, zero values, more than
        /// [`GREEDY_CANDIDATES`] of them, `now` at or after the origin.
        #[test]
        fn greedy_choice_equals_the_profile_search(
            cap in 1i64..64,
            releases in proptest::collection::vec((1i64..200, 1i64..16), 0..12),
            held in proptest::collection::vec((0i64..200, 1i64..100, 1i64..32), 0..6),
            now in 0i64..60,
            cands in proptest::collection::vec(
                (1u32..48, proptest::option::weighted(0.9, 0i64..150), 0u64..20, proptest::bool::weighted(0.1)),
                0..24,
            ),
        ) {
            let used: i64 = releases.iter().map(|r| r.1).sum();
            let rel = releases.iter().map(|&(t, a)| (t, Amount::procs(a))).collect();
            let mut prof = crate::profile::Profile::from_releases(0, Amount::procs((cap - used).max(0)), rel);
            for &(start, len, procs) in &held {
                let _ = prof.add_usage(start, Some(start + len), Amount::procs(procs));
            }
            let items: Vec<GreedyItem> = cands
                .iter()
                .enumerate()
                .map(|(key, &(procs, dur, value, constrained))| GreedyItem { key, constrained, procs, dur, value })
                .collect();
            let expected = reference_choice(&prof, now, &items);
            let chosen = greedy_choice(&prof, now, items.into_iter());
            proptest::prop_assert_eq!(chosen, expected);
        }
    }
}
