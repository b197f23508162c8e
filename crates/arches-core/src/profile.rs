//! Availability profile: a timeline of free capacity.
//!
//! A [`Profile`] knows spans and capacities, never jobs. It is a sorted list
//! of breakpoints `(time, free)`: `free` holds from `time` until the next
//! breakpoint, and the last breakpoint's amount holds forever. Usage
//! rectangles are subtracted (`add_usage`) and given back (`remove_usage`);
//! queries ask for the earliest time a demand fits for a duration and for the
//! free amount over an interval. Every operation is O(breakpoints), which for
//! a scheduling iteration is O(running jobs + reservations).
//!
//! An open end (`None`) means "forever": a job without a wall-clock limit.

use crate::{Secs, Time};

/// A two-dimensional amount of resources: processors and memory (MB).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, PartialOrd, Ord, Hash)]
pub struct Amount {
    pub procs: i64,
    pub mem: i64,
}

impl Amount {
    /// Processors only.
    pub const fn procs(procs: i64) -> Self {
        Amount { procs, mem: 0 }
    }

    /// Whether `demand` fits in `self` in every dimension.
    pub fn covers(self, demand: Amount) -> bool {
        self.procs >= demand.procs && self.mem >= demand.mem
    }

    fn plus(self, o: Amount) -> Amount {
        Amount {
            procs: self.procs + o.procs,
            mem: self.mem + o.mem,
        }
    }

    fn minus(self, o: Amount) -> Amount {
        Amount {
            procs: self.procs - o.procs,
            mem: self.mem - o.mem,
        }
    }

    fn min(self, o: Amount) -> Amount {
        Amount {
            procs: self.procs.min(o.procs),
            mem: self.mem.min(o.mem),
        }
    }
}

/// Why a usage rectangle could not be added.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum ProfileError {
    #[error("usage exceeds free capacity at time {0}")]
    Overallocated(Time),
    #[error("empty or reversed interval [{start}, {end})")]
    BadInterval { start: Time, end: Time },
}

/// A timeline of free capacity starting at `origin`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Profile {
    /// Breakpoints sorted by time, first at the origin; adjacent amounts differ.
    spans: Vec<(Time, Amount)>,
}

/// [`crate::lean`]'s `may_fit` on the breakpoints of a profile resumed at
/// `now` ([`Profile::resumed`]: its first span taken to begin at `now`, no
/// other at or before it): whether `procs` processors are free from `now`
/// for `dur` seconds (never without a duration, `Secs::MAX`).
pub(crate) fn may_fit_in(
    spans: &[(Time, Amount)],
    now: Time,
    procs: u32,
    dur: crate::Secs,
) -> bool {
    if dur == crate::Secs::MAX {
        return false;
    }
    let demand = Amount::procs(i64::from(procs));
    let end = now.saturating_add(dur.max(1));
    let mut it = spans.iter();
    it.next().is_some_and(|s| s.1.covers(demand))
        && it.take_while(|s| s.0 < end).all(|s| s.1.covers(demand))
}

impl Profile {
    /// A profile with `free` available from `origin` on.
    pub fn new(origin: Time, free: Amount) -> Self {
        Profile {
            spans: vec![(origin, free)],
        }
    }

    /// Builds a profile from the free amount at `origin` and future releases
    /// `(time, amount)` (in any order). Releases at or before the origin are
    /// counted as free at the origin. O(r log r).
    pub fn from_releases(origin: Time, free: Amount, mut releases: Vec<(Time, Amount)>) -> Self {
        releases.sort_unstable_by_key(|r| r.0);
        Self::from_sorted_releases(origin, free, releases)
    }

    /// [`Profile::from_releases`] of releases already sorted by time (no
    /// copy, no sort: one pass).
    pub fn from_sorted_releases(
        origin: Time,
        free: Amount,
        releases: impl IntoIterator<Item = (Time, Amount)>,
    ) -> Self {
        Self::from_sorted_releases_in(Vec::new(), origin, free, releases)
    }

    /// [`Profile::from_sorted_releases`] in the storage of `spans` (its
    /// contents are dropped; what [`Profile::into_spans`] gave back of a
    /// spent profile, so that a driver planning many iterations does not
    /// allocate one per iteration).
    pub fn from_sorted_releases_in(
        mut spans: Vec<(Time, Amount)>,
        origin: Time,
        free: Amount,
        releases: impl IntoIterator<Item = (Time, Amount)>,
    ) -> Self {
        let releases = releases.into_iter();
        // Room for the breakpoints an iteration's starts and reservations
        // add (each usage splits up to two spans), so that they rarely
        // reallocate.
        spans.clear();
        spans.reserve(releases.size_hint().0 + 17);
        // The breakpoint being summed (`time`, `cur`), and whether it is
        // the origin's (always kept) or else the amount of the one before.
        let (mut time, mut cur) = (origin, free);
        let mut first = true;
        let mut before = free;
        let mut prev = Time::MIN;
        for (t, amount) in releases {
            debug_assert!(t >= prev, "releases out of order");
            prev = t;
            if t > time {
                // The summed breakpoint is complete: kept unless it changes
                // nothing (adjacent equal amounts merge).
                if first || before != cur {
                    spans.push((time, cur));
                    before = cur;
                    first = false;
                }
                time = t;
            }
            // At or before the origin, or at the summed breakpoint's time.
            cur = cur.plus(amount);
        }
        if first || before != cur {
            spans.push((time, cur));
        }
        Profile { spans }
    }

    /// The profile's storage, for [`Profile::from_sorted_releases_in`].
    /// The final profile of a lean walk (its breakpoints `spans`) resumed
    /// at `origin` ([`crate::lean`]): no breakpoint after its origin comes
    /// at or before `origin`, and `free` is free then.
    pub(crate) fn resumed(mut spans: Vec<(Time, Amount)>, origin: Time, free: Amount) -> Self {
        debug_assert!(spans.first().is_some_and(|s| s.0 <= origin && s.1 == free));
        debug_assert!(spans.get(1).is_none_or(|s| s.0 > origin));
        if let Some(first) = spans.first_mut() {
            first.0 = origin;
        }
        Profile { spans }
    }

    pub fn into_spans(self) -> Vec<(Time, Amount)> {
        self.spans
    }

    /// [`Profile::into_spans`] of a profile not needed any more: it is left
    /// without breakpoints (only to be dropped).
    pub(crate) fn take_spans(&mut self) -> Vec<(Time, Amount)> {
        std::mem::take(&mut self.spans)
    }

    /// The first time of the profile.
    pub fn origin(&self) -> Time {
        self.spans[0].0
    }

    /// The breakpoints `(time, free from then on)`.
    pub fn spans(&self) -> &[(Time, Amount)] {
        &self.spans
    }

    /// Free amount at time `t` (the origin's amount before the origin).
    pub fn free_at(&self, t: Time) -> Amount {
        self.spans[self.index_at(t)].1
    }

    /// Minimum free amount over `[start, end)` (`None` = forever).
    pub fn free_over(&self, start: Time, end: Option<Time>) -> Amount {
        let mut i = self.index_at(start);
        let mut m = self.spans[i].1;
        i += 1;
        while i < self.spans.len() && end.is_none_or(|e| self.spans[i].0 < e) {
            m = m.min(self.spans[i].1);
            i += 1;
        }
        m
    }

    /// Earliest time `>= from` at which `demand` is free for `duration`
    /// (`None` = forever). `None` if it never fits.
    pub fn earliest_fit(&self, from: Time, demand: Amount, duration: Option<Secs>) -> Option<Time> {
        let n = self.spans.len();
        let mut i = self.index_at(from);
        loop {
            // Skip spans where the demand does not fit.
            while i < n && !self.spans[i].1.covers(demand) {
                i += 1;
            }
            if i == n {
                return None;
            }
            let start = self.spans[i].0.max(from);
            let end = duration.map(|d| start + d.max(0));
            let mut j = i + 1;
            let mut ok = true;
            while j < n && end.is_none_or(|e| self.spans[j].0 < e) {
                if !self.spans[j].1.covers(demand) {
                    ok = false;
                    break;
                }
                j += 1;
            }
            if ok {
                return Some(start);
            }
            i = j;
        }
    }

    /// Whether [`Profile::earliest_fit`] from `from` (at or after the
    /// origin) would answer `hs` if `extra` more were free over `[hs, he)`,
    /// without changing the profile: whether a usage rectangle held there
    /// would be placed in the same place again once given back (the lean
    /// conservative walk then keeps it, instead of `remove_usage` and
    /// `add_usage` again). `false` when `hs < from`.
    ///
    /// Why two scans answer it: `hs` is the earliest fit iff the demand
    /// fits from `hs` for the duration with the extra, and no start `t` in
    /// `[from, hs)` fits. Such a start's window ends before `hs +
    /// duration`, so past `hs` it lies in the first window (where the
    /// demand fits), and before `hs` the extra is not there: `t` fits iff
    /// the demand fits over its window cut at `hs`, in the profile as it is.
    /// O(spans up to the end of the window).
    pub fn fits_again_at(
        &self,
        from: Time,
        demand: Amount,
        duration: Option<Secs>,
        (hs, he, extra): (Time, Time, Amount),
    ) -> bool {
        if hs < from || from < self.origin() {
            return false;
        }
        // The span where `hs` falls, and the end of the spans starting
        // before it.
        let k = self.index_at(hs);
        let before_hs = if self.spans[k].0 < hs { k + 1 } else { k };
        if hs > from {
            // No earlier start: `earliest_fit`'s scan with windows cut at
            // `hs`.
            let mut i = self.index_at(from);
            loop {
                while i < before_hs && !self.spans[i].1.covers(demand) {
                    i += 1;
                }
                if i == before_hs {
                    break;
                }
                let start = self.spans[i].0.max(from);
                let end = duration.map_or(hs, |d| (start + d.max(0)).min(hs));
                let mut j = i + 1;
                while j < before_hs && self.spans[j].0 < end && self.spans[j].1.covers(demand) {
                    j += 1;
                }
                if j == before_hs || self.spans[j].0 >= end {
                    return false;
                }
                i = j + 1;
            }
        }
        let end = duration.map(|d| hs + d.max(0));
        if end == Some(he) {
            // The window is the rectangle (the lean walk's case): the
            // demand less the extra fits over it.
            let need = demand.minus(extra);
            return self.spans[k].1.covers(need)
                && self.spans[k + 1..]
                    .iter()
                    .take_while(|s| s.0 < he)
                    .all(|s| s.1.covers(need));
        }
        // The window from `hs`: with the extra before `he`, without from
        // `he` on (at least its first instant, as `earliest_fit` checks
        // the span it starts in).
        for (j, &(t, free)) in self.spans.iter().enumerate().skip(k) {
            let a = t.max(hs);
            if j > k && end.is_some_and(|e| a >= e) {
                break;
            }
            if a < he && !free.plus(extra).covers(demand) {
                return false;
            }
            let lo = a.max(he);
            let hi = match (self.spans.get(j + 1).map(|s| s.0), end) {
                (Some(b), Some(e)) => Some(b.min(e)),
                (b, e) => b.or(e),
            };
            if hi.is_none_or(|hi| lo < hi) && !free.covers(demand) {
                return false;
            }
        }
        true
    }

    /// Whether this profile, from its origin on, is the same timeline as
    /// the profile of breakpoints `other` ([`Profile::spans`]) from that time
    /// on (`other` may start earlier). Both keep
    /// adjacent amounts different, so equal timelines have equal
    /// breakpoints: one comparison of the slices.
    pub fn same_from_origin(&self, other: &[(Time, Amount)]) -> bool {
        let t = self.origin();
        if other.first().is_none_or(|o| t < o.0) {
            return false;
        }
        let k = other.partition_point(|s| s.0 <= t) - 1;
        other[k].1 == self.spans[0].1 && other[k + 1..] == self.spans[1..]
    }

    /// The times at or after `from` where the free amount changes (candidate
    /// start times), `from` first.
    pub fn change_points(&self, from: Time) -> impl Iterator<Item = Time> + '_ {
        let i = self.index_at(from);
        std::iter::once(from).chain(self.spans[i + 1..].iter().map(|s| s.0))
    }

    /// Subtracts `amount` over `[start, end)`; refuses (changing nothing) if
    /// that would make any free amount negative.
    pub fn add_usage(
        &mut self,
        start: Time,
        end: Option<Time>,
        amount: Amount,
    ) -> Result<(), ProfileError> {
        check_interval(start, end)?;
        let avail = self.free_over(start, end);
        if !avail.covers(amount) {
            return Err(ProfileError::Overallocated(start));
        }
        self.shift(start, end, |a| a.minus(amount));
        Ok(())
    }

    /// Gives back `amount` over `[start, end)` (the inverse of `add_usage`).
    pub fn remove_usage(
        &mut self,
        start: Time,
        end: Option<Time>,
        amount: Amount,
    ) -> Result<(), ProfileError> {
        check_interval(start, end)?;
        self.shift(start, end, |a| a.plus(amount));
        Ok(())
    }

    /// Subtracts without checking (a running job already holds the capacity,
    /// e.g. on an overcommitted node).
    pub fn force_usage(&mut self, start: Time, end: Option<Time>, amount: Amount) {
        if check_interval(start, end).is_ok() {
            self.shift(start, end, |a| a.minus(amount));
        }
    }

    fn shift(&mut self, start: Time, end: Option<Time>, f: impl Fn(Amount) -> Amount) {
        let start = start.max(self.origin());
        let s = self.split(start);
        let e = match end {
            Some(e) => self.split(e),
            None => self.spans.len(),
        };
        for sp in &mut self.spans[s..e] {
            sp.1 = f(sp.1);
        }
        // Merge equal neighbours around the changed range. Every amount
        // in it moved by the same change (adjacent amounts differed before,
        // so they still differ inside): only its two ends can now equal
        // their neighbours outside.
        if e > 0 && e < self.spans.len() && self.spans[e].1 == self.spans[e - 1].1 {
            self.spans.remove(e);
        }
        if s > 0 && s < self.spans.len() && self.spans[s].1 == self.spans[s - 1].1 {
            self.spans.remove(s);
        }
    }

    /// Ensures a breakpoint at `t` (>= origin); returns its index. Leaves
    /// two equal neighbours when it adds one: only for [`Profile::shift`].
    fn split(&mut self, t: Time) -> usize {
        let i = self.index_at(t);
        if self.spans[i].0 == t {
            return i;
        }
        let amt = self.spans[i].1;
        self.spans.insert(i + 1, (t, amt));
        i + 1
    }

    /// Index of the span containing `t` (0 before the origin).
    /// Adds a step function of processors in one merge pass, O(spans +
    /// steps): `steps` are `(time, change)` sorted by time, each change
    /// holding from its time on (changes at or before the origin apply from
    /// the origin). Many usage rectangles at once (a reservation over many
    /// nodes) cost one pass instead of one per rectangle.
    pub fn add_steps(&mut self, steps: &[(Time, i64)]) {
        self.add_steps_in(steps.iter().copied(), &mut Vec::new());
    }

    /// [`Profile::add_steps`] of steps given in time order by an iterator,
    /// the new breakpoints built in the storage of `spare` (whose contents
    /// are dropped); `spare` is left with the old breakpoints' storage, for
    /// the next call.
    pub fn add_steps_in(
        &mut self,
        steps: impl Iterator<Item = (Time, i64)>,
        spare: &mut Vec<(Time, Amount)>,
    ) {
        let mut steps = steps.peekable();
        if steps.peek().is_none() {
            return;
        }
        let origin = self.origin();
        let mut acc = 0i64;
        while let Some(&(t, d)) = steps.peek() {
            if t > origin {
                break;
            }
            acc += d;
            steps.next();
        }
        let with = |a: Amount, acc: i64| Amount {
            procs: a.procs + acc,
            mem: a.mem,
        };
        let out = spare;
        out.clear();
        out.reserve(self.spans.len() + steps.size_hint().0);
        let mut base = self.spans[0].1;
        out.push((origin, with(base, acc)));
        let mut i = 1;
        loop {
            let t = match (self.spans.get(i), steps.peek()) {
                (Some(a), Some(b)) => a.0.min(b.0),
                (Some(a), None) => a.0,
                (None, Some(b)) => b.0,
                (None, None) => break,
            };
            if self.spans.get(i).is_some_and(|x| x.0 == t) {
                base = self.spans[i].1;
                i += 1;
            }
            while let Some(&(st, d)) = steps.peek() {
                if st != t {
                    break;
                }
                acc += d;
                steps.next();
            }
            let amt = with(base, acc);
            if out.last().is_some_and(|l| l.1 != amt) {
                out.push((t, amt));
            }
        }
        std::mem::swap(&mut self.spans, out);
    }

    fn index_at(&self, t: Time) -> usize {
        // Most queries are about the first span (now): no search for them.
        if self.spans.get(1).is_none_or(|s| t < s.0) {
            return 0;
        }
        self.spans.partition_point(|s| s.0 <= t).saturating_sub(1)
    }
}

fn check_interval(start: Time, end: Option<Time>) -> Result<(), ProfileError> {
    match end {
        Some(e) if e <= start => Err(ProfileError::BadInterval { start, end: e }),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_from_origin_compares_the_common_timeline() {
        let a = Profile::from_releases(
            10,
            Amount::procs(4),
            vec![(20, Amount::procs(2)), (40, Amount::procs(2))],
        );
        // The same timeline seen from 15 and from 20.
        let b = Profile::from_releases(
            15,
            Amount::procs(4),
            vec![(20, Amount::procs(2)), (40, Amount::procs(2))],
        );
        assert!(b.same_from_origin(a.spans()));
        let c = Profile::from_releases(20, Amount::procs(6), vec![(40, Amount::procs(2))]);
        assert!(c.same_from_origin(a.spans()));
        // A different amount later, or an origin before the other's.
        let d = Profile::from_releases(20, Amount::procs(6), vec![(41, Amount::procs(2))]);
        assert!(!d.same_from_origin(a.spans()));
        assert!(!a.same_from_origin(c.spans()));
        let e = Profile::from_releases(20, Amount::procs(5), vec![(40, Amount::procs(3))]);
        assert!(!e.same_from_origin(a.spans()));
    }

    #[test]
    fn add_steps_equals_rectangles() {
        let base = Profile::from_releases(
            10,
            Amount { procs: 4, mem: 7 },
            vec![(20, Amount::procs(2)), (40, Amount::procs(2))],
        );
        let rects: [(Time, Option<Time>, i64); 3] =
            [(5, Some(25), 1), (20, None, 2), (30, Some(40), 3)];
        let mut a = base.clone();
        for (s, e, p) in rects {
            a.force_usage(s, e, Amount::procs(p));
        }
        let mut steps = Vec::new();
        for (s, e, p) in rects {
            steps.push((s, -p));
            if let Some(e) = e {
                steps.push((e, p));
            }
        }
        steps.sort_unstable();
        let mut b = base.clone();
        b.add_steps(&steps);
        assert_eq!(a, b);
        let inverse: Vec<(Time, i64)> = steps.iter().map(|(t, d)| (*t, -d)).collect();
        b.add_steps(&inverse);
        assert_eq!(b, base);
    }
    use proptest::prelude::*;

    fn p(n: i64) -> Amount {
        Amount::procs(n)
    }

    #[test]
    fn earliest_fit_waits_for_releases() {
        // 2 free now, +2 at 100, +4 at 200.
        let prof = Profile::from_releases(0, p(2), vec![(200, p(4)), (100, p(2))]);
        assert_eq!(prof.spans().len(), 3);
        assert_eq!(prof.earliest_fit(0, p(2), Some(1000)), Some(0));
        assert_eq!(prof.earliest_fit(0, p(3), Some(10)), Some(100));
        assert_eq!(prof.earliest_fit(0, p(8), None), Some(200));
        assert_eq!(prof.earliest_fit(0, p(9), Some(1)), None);
        assert_eq!(prof.earliest_fit(150, p(3), Some(10)), Some(150));
    }

    #[test]
    fn reservation_hole_is_respected() {
        let mut prof = Profile::new(0, p(4));
        prof.add_usage(100, Some(200), p(3)).unwrap();
        // 2 procs for 50 s fit now; for 150 s they must wait for the hole to end.
        assert_eq!(prof.earliest_fit(0, p(2), Some(50)), Some(0));
        assert_eq!(prof.earliest_fit(0, p(2), Some(150)), Some(200));
        assert_eq!(prof.earliest_fit(0, p(1), Some(150)), Some(0));
        assert_eq!(prof.free_over(0, Some(100)), p(4));
        assert_eq!(prof.free_over(50, Some(150)), p(1));
        assert_eq!(
            prof.add_usage(150, Some(160), p(2)),
            Err(ProfileError::Overallocated(150))
        );
        assert!(prof.add_usage(10, Some(10), p(1)).is_err());
    }

    #[test]
    fn open_ended_usage_never_returns() {
        let mut prof = Profile::new(0, p(4));
        prof.add_usage(10, None, p(4)).unwrap();
        assert_eq!(prof.earliest_fit(0, p(1), Some(10)), Some(0));
        assert_eq!(prof.earliest_fit(0, p(1), Some(11)), None);
        assert_eq!(prof.earliest_fit(0, p(1), None), None);
    }

    #[test]
    fn memory_dimension_counts() {
        let prof = Profile::from_releases(
            0,
            Amount { procs: 4, mem: 100 },
            vec![(50, Amount { procs: 0, mem: 900 })],
        );
        let d = Amount { procs: 1, mem: 500 };
        assert_eq!(prof.earliest_fit(0, d, Some(10)), Some(50));
    }

    proptest! {
        #[test]
        fn never_overallocates_and_round_trips(
            cap in 1i64..64,
            ops in prop::collection::vec((0i64..100, 1i64..50, 1i64..64, any::<bool>()), 1..40)
        ) {
            let original = Profile::new(0, p(cap));
            let mut prof = original.clone();
            let mut added = Vec::new();
            for (start, len, amt, open) in ops {
                let end = if open { None } else { Some(start + len) };
                if prof.add_usage(start, end, p(amt)).is_ok() {
                    added.push((start, end, amt));
                }
                for s in prof.spans() {
                    prop_assert!(s.1.procs >= 0 && s.1.procs <= cap);
                }
                // Spans are sorted and merged.
                for w in prof.spans().windows(2) {
                    prop_assert!(w[0].0 < w[1].0);
                    prop_assert!(w[0].1 != w[1].1);
                }
            }
            for (start, end, amt) in added.into_iter().rev() {
                prof.remove_usage(start, end, p(amt)).unwrap();
            }
            prop_assert_eq!(prof, original);
        }

        #[test]
        fn earliest_fit_is_feasible_and_earliest(
            cap in 1i64..32,
            used in prop::collection::vec((0i64..100, 1i64..50, 1i64..32), 0..20),
            demand in 1i64..32,
            dur in 1i64..60,
        ) {
            let mut prof = Profile::new(0, p(cap));
            for (start, len, amt) in used {
                let _ = prof.add_usage(start, Some(start + len), p(amt));
            }
            match prof.earliest_fit(0, p(demand), Some(dur)) {
                Some(t) => {
                    prop_assert!(prof.free_over(t, Some(t + dur)).procs >= demand);
                    for earlier in 0..t {
                        prop_assert!(prof.free_over(earlier, Some(earlier + dur)).procs < demand);
                    }
                    let mut after = prof.clone();
                    prop_assert!(after.add_usage(t, Some(t + dur), p(demand)).is_ok());
                }
                None => prop_assert!(demand > cap),
            }
        }

        #[test]
        fn fits_again_at_equals_giving_back_first(
            cap in 1i64..32,
            used in prop::collection::vec((0i64..100, 1i64..50, 1i64..32), 0..20),
            hole in (0i64..120, 1i64..60, 1i64..32),
            from in 0i64..130,
            demand in 1i64..40,
            dur in prop::option::of(0i64..80),
            whole in any::<bool>(),
        ) {
            // A profile with a rectangle held in it: it answers what giving
            // the rectangle back and asking `earliest_fit` answers.
            let mut prof = Profile::new(0, p(cap));
            for (start, len, amt) in used {
                let _ = prof.add_usage(start, Some(start + len), p(amt));
            }
            let (hs, len, amt) = hole;
            // The lean walk's case: the window is the rectangle.
            let dur = if whole { Some(len) } else { dur };
            prof.force_usage(hs, Some(hs + len), p(amt));
            let mut given = prof.clone();
            given.remove_usage(hs, Some(hs + len), p(amt)).unwrap();
            let got = prof.fits_again_at(from, p(demand), dur, (hs, hs + len, p(amt)));
            if hs >= from {
                prop_assert_eq!(got, given.earliest_fit(from, p(demand), dur) == Some(hs));
            } else {
                prop_assert!(!got);
            }
        }

        #[test]
        fn sorted_releases_build_the_same_profile(
            origin in 0i64..50,
            free in 0i64..10,
            rel in prop::collection::vec((0i64..100, -3i64..5), 0..30),
        ) {
            let releases: Vec<(Time, Amount)> = rel.iter().map(|&(t, a)| (t, p(a))).collect();
            let mut sorted = releases.clone();
            sorted.sort_by_key(|r| r.0);
            let prof = Profile::from_sorted_releases(origin, p(free), sorted);
            prop_assert_eq!(&prof, &Profile::from_releases(origin, p(free), releases.clone()));
            // The model: what is free at t is the free amount plus every
            // release at or before t (or the origin).
            for t in origin..110 {
                let want: i64 = free
                    + releases.iter().filter(|r| r.0 <= t).map(|r| r.1.procs).sum::<i64>();
                prop_assert_eq!(prof.free_at(t).procs, want);
            }
            prop_assert_eq!(prof.origin(), origin);
            for w in prof.spans().windows(2) {
                prop_assert!(w[0].0 < w[1].0);
                prop_assert!(w[0].1 != w[1].1);
            }
        }

        #[test]
        fn split_then_merge_keeps_amounts(
            cap in 1i64..16,
            cut in 0i64..200,
            len in 0i64..50,
            probe in 0i64..250,
        ) {
            let mut prof = Profile::new(0, p(cap));
            let before = prof.free_at(probe);
            prof.split(cut);
            prop_assert_eq!(prof.free_at(probe), before);
            // A zero shift over a range merges the split away again.
            prof.shift(cut, Some(cut + len), |a| a);
            prop_assert_eq!(prof.spans().len(), 1);
            prop_assert_eq!(prof.free_at(probe), before);
        }

        #[test]
        fn usage_keeps_breakpoints_minimal(
            cap in 1i64..32,
            rel in prop::collection::vec((1i64..100, 0i64..4), 0..10),
            ops in prop::collection::vec((0i64..120, 1i64..60, 1i64..8, any::<bool>(), any::<bool>()), 1..40)
        ) {
            // Releases, then usage added and given back in any order: the
            // profile equals one built from scratch with the same amounts
            // (no two adjacent breakpoints with equal amounts).
            let releases: Vec<(Time, Amount)> = rel.iter().map(|&(t, a)| (t, p(a))).collect();
            let mut prof = Profile::from_releases(0, p(cap), releases);
            for (start, len, amt, open, give) in ops {
                let end = if open { None } else { Some(start + len) };
                if give {
                    prof.remove_usage(start, end, p(amt)).unwrap();
                } else {
                    prof.force_usage(start, end, p(amt));
                }
                let rebuilt = Profile::from_sorted_releases(
                    0,
                    prof.spans()[0].1,
                    prof.spans()
                        .windows(2)
                        .map(|w| (w[1].0, w[1].1.minus(w[0].1)))
                        .collect::<Vec<_>>(),
                );
                prop_assert_eq!(&prof, &rebuilt);
            }
        }
    }
}
