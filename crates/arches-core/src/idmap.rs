//! The state's containers keyed by job id: persistent or flat.
//!
//! The daemon publishes a clone of its [`crate::State`] after every turn,
//! so by default the jobs, the queue and the active jobs are persistent
//! maps (`imbl`: an O(1) clone that shares every entry). A driver that
//! turns the lean indexes on ([`crate::State::set_lean_indexes`]: the
//! simulator) already has O(queue) clones and rarely makes one; there they
//! are flat sorted vectors in blocks instead ([`Blocks`]): a trace job is
//! submitted after every job so far (a push), a look-up is a binary search,
//! nothing is allocated per insertion, and a change moves at most one
//! block's entries even in a queue of thousands (KTH-SP2 EASY: 3
//! insertions, 3 removals and about 6 look-ups per job).
//!
//! Both forms hold the same entries in the same (id) order, and every
//! method gives the same answers in either form.

use std::ops::RangeInclusive;

use imbl::OrdMap;

use crate::job::JobId;

/// A map from job ids to `V`, by id: persistent (`Shared`) or flat.
#[derive(Debug, Clone)]
pub(crate) enum IdMap<V: Clone> {
    Shared(OrdMap<JobId, V>),
    Flat(Blocks<V>),
}

/// A set of job ids ([`IdMap`] without values).
pub(crate) type IdSet = IdMap<()>;

impl<V: Clone> Default for IdMap<V> {
    fn default() -> Self {
        IdMap::Shared(OrdMap::new())
    }
}

/// One of two iterators over the same items.
pub(crate) enum Either<L, R> {
    L(L),
    R(R),
}

impl<T, L: Iterator<Item = T>, R: Iterator<Item = T>> Iterator for Either<L, R> {
    type Item = T;

    fn next(&mut self) -> Option<T> {
        match self {
            Either::L(l) => l.next(),
            Either::R(r) => r.next(),
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        match self {
            Either::L(l) => l.size_hint(),
            Either::R(r) => r.size_hint(),
        }
    }
}

impl<T, L: DoubleEndedIterator<Item = T>, R: DoubleEndedIterator<Item = T>> DoubleEndedIterator
    for Either<L, R>
{
    fn next_back(&mut self) -> Option<T> {
        match self {
            Either::L(l) => l.next_back(),
            Either::R(r) => r.next_back(),
        }
    }
}

/// Entries per block of [`Blocks`] (a block is split at twice this).
const BLOCK: usize = 64;

/// Entries sorted by id in blocks of at most `2 * BLOCK` (none empty): an
/// insertion or removal moves at most one block's entries, whatever the
/// size (a queue of thousands of jobs under `BACKFILLPOLICY NONE`), and a
/// map of at most `2 * BLOCK` entries (the usual running set and queue) is
/// one sorted vector.
#[derive(Debug, Clone)]
pub(crate) struct Blocks<V> {
    blocks: Vec<Vec<(JobId, V)>>,
    len: usize,
}

impl<V> Blocks<V> {
    fn from_sorted(entries: impl Iterator<Item = (JobId, V)>) -> Self {
        let mut b = Blocks {
            blocks: Vec::new(),
            len: 0,
        };
        for (id, v) in entries {
            match b.blocks.last_mut() {
                Some(last) if last.len() < BLOCK => last.push((id, v)),
                _ => b.blocks.push(vec![(id, v)]),
            }
            b.len += 1;
        }
        b
    }

    /// The block that holds (or would hold) `id`: the first whose last id
    /// is at least `id`, else the last. Most look-ups in a replay are of
    /// recent jobs: the last block first.
    #[inline]
    fn block_of(&self, id: JobId) -> usize {
        let n = self.blocks.len();
        if n <= 1 {
            return 0;
        }
        if self.blocks[n - 2].last().is_some_and(|l| l.0 < id) {
            return n - 1;
        }
        self.blocks[..n - 1].partition_point(|b| b.last().is_some_and(|l| l.0 < id))
    }

    /// Where `id` is (`Ok`: block and position) or would go (`Err`).
    #[inline]
    fn find(&self, id: JobId) -> Result<(usize, usize), (usize, usize)> {
        let b = self.block_of(id);
        let Some(blk) = self.blocks.get(b) else {
            return Err((0, 0));
        };
        match blk.last() {
            Some(last) if last.0 < id => Err((b, blk.len())),
            Some(last) if last.0 == id => Ok((b, blk.len() - 1)),
            _ => blk
                .binary_search_by_key(&id, |e| e.0)
                .map(|i| (b, i))
                .map_err(|i| (b, i)),
        }
    }

    #[inline]
    fn get(&self, id: JobId) -> Option<&V> {
        let (b, i) = self.find(id).ok()?;
        Some(&self.blocks[b][i].1)
    }

    #[inline]
    fn get_mut(&mut self, id: JobId) -> Option<&mut V> {
        let (b, i) = self.find(id).ok()?;
        Some(&mut self.blocks[b][i].1)
    }

    fn insert(&mut self, id: JobId, value: V) -> Option<V> {
        match self.find(id) {
            Ok((b, i)) => Some(std::mem::replace(&mut self.blocks[b][i].1, value)),
            Err((b, i)) => {
                self.len += 1;
                let Some(blk) = self.blocks.get_mut(b) else {
                    self.blocks.push(vec![(id, value)]);
                    return None;
                };
                blk.insert(i, (id, value));
                if blk.len() >= 2 * BLOCK {
                    let tail = blk.split_off(BLOCK);
                    self.blocks.insert(b + 1, tail);
                }
                None
            }
        }
    }

    fn remove(&mut self, id: JobId) -> Option<V> {
        let (b, i) = self.find(id).ok()?;
        self.len -= 1;
        let (_, v) = self.blocks[b].remove(i);
        if self.blocks[b].is_empty() {
            self.blocks.remove(b);
        }
        Some(v)
    }

    fn iter(&self) -> impl DoubleEndedIterator<Item = &(JobId, V)> + '_ {
        self.blocks.iter().flatten()
    }

    /// The entries with ids in `lo..=hi`.
    fn range(&self, lo: JobId, hi: JobId) -> impl DoubleEndedIterator<Item = &(JobId, V)> + '_ {
        let first = self.block_of(lo);
        let last = self.block_of(hi).max(first);
        self.blocks
            .get(first..=last)
            .unwrap_or_default()
            .iter()
            .flat_map(move |blk| {
                let from = blk.partition_point(|e| e.0 < lo);
                let to = blk.partition_point(|e| e.0 <= hi).max(from);
                &blk[from..to]
            })
    }
}

impl<V: Clone> IdMap<V> {
    /// The same entries, flat (`true`) or persistent.
    pub fn set_flat(&mut self, flat: bool) {
        *self = match (std::mem::take(self), flat) {
            (IdMap::Shared(m), true) => IdMap::Flat(Blocks::from_sorted(m.into_iter())),
            (IdMap::Flat(b), false) => IdMap::Shared(b.blocks.into_iter().flatten().collect()),
            (same, _) => same,
        };
    }

    #[inline]
    pub fn len(&self) -> usize {
        match self {
            IdMap::Shared(m) => m.len(),
            IdMap::Flat(b) => b.len,
        }
    }

    #[inline]
    pub fn get(&self, id: &JobId) -> Option<&V> {
        match self {
            IdMap::Shared(m) => m.get(id),
            IdMap::Flat(b) => b.get(*id),
        }
    }

    #[inline]
    pub fn get_mut(&mut self, id: &JobId) -> Option<&mut V> {
        match self {
            IdMap::Shared(m) => m.get_mut(id),
            IdMap::Flat(b) => b.get_mut(*id),
        }
    }

    #[inline]
    pub fn contains_key(&self, id: &JobId) -> bool {
        self.get(id).is_some()
    }

    /// Inserts or replaces; the value replaced, if any.
    pub fn insert(&mut self, id: JobId, value: V) -> Option<V> {
        match self {
            IdMap::Shared(m) => m.insert(id, value),
            IdMap::Flat(b) => b.insert(id, value),
        }
    }

    pub fn remove(&mut self, id: &JobId) -> Option<V> {
        match self {
            IdMap::Shared(m) => m.remove(id),
            IdMap::Flat(b) => b.remove(*id),
        }
    }

    /// Every entry, by id.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = (&JobId, &V)> + '_ {
        match self {
            IdMap::Shared(m) => Either::L(m.iter()),
            IdMap::Flat(b) => Either::R(b.iter().map(|(k, x)| (k, x))),
        }
    }

    /// Every id, in order.
    pub fn keys(&self) -> impl DoubleEndedIterator<Item = &JobId> + '_ {
        self.iter().map(|(k, _)| k)
    }

    /// Every value, by id.
    pub fn values(&self) -> impl DoubleEndedIterator<Item = &V> + '_ {
        self.iter().map(|(_, x)| x)
    }

    /// The entries whose ids are in `range`, by id.
    pub fn range(
        &self,
        range: RangeInclusive<JobId>,
    ) -> impl DoubleEndedIterator<Item = (&JobId, &V)> + '_ {
        match self {
            IdMap::Shared(m) => Either::L(m.range(range)),
            IdMap::Flat(b) => Either::R(b.range(*range.start(), *range.end()).map(|(k, x)| (k, x))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[derive(Debug, Clone)]
    enum Op {
        Insert(JobId, u32),
        Remove(JobId),
        Flat(bool),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            6 => (0..512u64, any::<u32>()).prop_map(|(k, v)| Op::Insert(k, v)),
            3 => (0..512u64).prop_map(Op::Remove),
            1 => any::<bool>().prop_map(Op::Flat),
        ]
    }

    proptest! {
        /// Either form answers every question as a `BTreeMap` does, after
        /// any sequence of insertions, removals and changes of form.
        #[test]
        fn both_forms_behave_as_an_ordered_map(ops in prop::collection::vec(op(), 0..1200), lo in 0..512u64, hi in 0..512u64) {
            let mut m: IdMap<u32> = IdMap::default();
            let mut want = std::collections::BTreeMap::new();
            for op in ops {
                match op {
                    Op::Insert(k, v) => prop_assert_eq!(m.insert(k, v), want.insert(k, v)),
                    Op::Remove(k) => prop_assert_eq!(m.remove(&k), want.remove(&k)),
                    Op::Flat(f) => m.set_flat(f),
                }
                prop_assert_eq!(m.len(), want.len());
            }
            for k in 0..512u64 {
                prop_assert_eq!(m.get(&k), want.get(&k));
                prop_assert_eq!(m.contains_key(&k), want.contains_key(&k));
            }
            if let Some(v) = m.get_mut(&lo) {
                *v = v.wrapping_add(1);
                *want.get_mut(&lo).unwrap() = want[&lo].wrapping_add(1);
            }
            let got: Vec<_> = m.iter().map(|(k, v)| (*k, *v)).collect();
            let exp: Vec<_> = want.iter().map(|(k, v)| (*k, *v)).collect();
            prop_assert_eq!(got, exp);
            let (lo, hi) = (lo.min(hi), lo.max(hi));
            let got: Vec<_> = m.range(lo..=hi).rev().map(|(k, v)| (*k, *v)).collect();
            let exp: Vec<_> = want.range(lo..=hi).rev().map(|(k, v)| (*k, *v)).collect();
            prop_assert_eq!(got, exp);
        }
    }
}
