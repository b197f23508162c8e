//! The state's containers keyed by job id: persistent or flat.
//!
//! The daemon publishes a clone of its [`crate::State`] after every turn,
//! so by default the jobs, the queue and the active jobs are persistent
//! maps (`imbl`: an O(1) clone that shares every entry). A driver that
//! turns the lean indexes on ([`crate::State::set_lean_indexes`]: the
//! simulator) already has O(queue) clones and rarely makes one; there they
//! are flat sorted vectors instead: a trace job is submitted after every
//! job so far (a push), a look-up is a binary search over a few hundred
//! ids, and nothing is allocated per insertion (KTH-SP2 EASY: 3 insertions,
//! 3 removals and about 6 look-ups per job).
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
    /// Sorted by id, each id once.
    Flat(Vec<(JobId, V)>),
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

impl<V: Clone> IdMap<V> {
    /// The same entries, flat (`true`) or persistent.
    pub fn set_flat(&mut self, flat: bool) {
        *self = match (std::mem::take(self), flat) {
            (IdMap::Shared(m), true) => IdMap::Flat(m.into_iter().collect()),
            (IdMap::Flat(v), false) => IdMap::Shared(v.into_iter().collect()),
            (same, _) => same,
        };
    }

    pub fn len(&self) -> usize {
        match self {
            IdMap::Shared(m) => m.len(),
            IdMap::Flat(v) => v.len(),
        }
    }

    /// Where `id` is in a flat map (`Ok`), or would go.
    fn find(v: &[(JobId, V)], id: JobId) -> Result<usize, usize> {
        // Most look-ups in a replay are of recent jobs: the last entry
        // first.
        match v.last() {
            Some(last) if last.0 < id => Err(v.len()),
            Some(last) if last.0 == id => Ok(v.len() - 1),
            _ => v.binary_search_by_key(&id, |e| e.0),
        }
    }

    pub fn get(&self, id: &JobId) -> Option<&V> {
        match self {
            IdMap::Shared(m) => m.get(id),
            IdMap::Flat(v) => Self::find(v, *id).ok().map(|i| &v[i].1),
        }
    }

    pub fn get_mut(&mut self, id: &JobId) -> Option<&mut V> {
        match self {
            IdMap::Shared(m) => m.get_mut(id),
            IdMap::Flat(v) => Self::find(v, *id).ok().map(|i| &mut v[i].1),
        }
    }

    pub fn contains_key(&self, id: &JobId) -> bool {
        self.get(id).is_some()
    }

    /// Inserts or replaces; the value replaced, if any.
    pub fn insert(&mut self, id: JobId, value: V) -> Option<V> {
        match self {
            IdMap::Shared(m) => m.insert(id, value),
            IdMap::Flat(v) => match Self::find(v, id) {
                Ok(i) => Some(std::mem::replace(&mut v[i].1, value)),
                Err(i) => {
                    v.insert(i, (id, value));
                    None
                }
            },
        }
    }

    pub fn remove(&mut self, id: &JobId) -> Option<V> {
        match self {
            IdMap::Shared(m) => m.remove(id),
            IdMap::Flat(v) => Self::find(v, *id).ok().map(|i| v.remove(i).1),
        }
    }

    /// Every entry, by id.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = (&JobId, &V)> + '_ {
        match self {
            IdMap::Shared(m) => Either::L(m.iter()),
            IdMap::Flat(v) => Either::R(v.iter().map(|(k, x)| (k, x))),
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
            IdMap::Flat(v) => {
                let lo = v.partition_point(|e| e.0 < *range.start());
                let hi = v.partition_point(|e| e.0 <= *range.end());
                Either::R(v[lo..hi.max(lo)].iter().map(|(k, x)| (k, x)))
            }
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
            6 => (0..64u64, any::<u32>()).prop_map(|(k, v)| Op::Insert(k, v)),
            3 => (0..64u64).prop_map(Op::Remove),
            1 => any::<bool>().prop_map(Op::Flat),
        ]
    }

    proptest! {
        /// Either form answers every question as a `BTreeMap` does, after
        /// any sequence of insertions, removals and changes of form.
        #[test]
        fn both_forms_behave_as_an_ordered_map(ops in prop::collection::vec(op(), 0..200), lo in 0..64u64, hi in 0..64u64) {
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
            for k in 0..64u64 {
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
