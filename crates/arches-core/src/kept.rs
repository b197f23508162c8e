//! The reservation starts `RESERVATIONPOLICY HIGHEST` keeps from one plan to
//! the next ([`crate::State::remember_reservations`]): a list sorted by job
//! for lookups and the list in the order it was given (a plan's: queue
//! order), both shared by the state's clones (O(1) clone, as the job maps)
//! and rebuilt whole after every plan instead of one map insertion per job.

use std::sync::Arc;

use crate::job::JobId;
use crate::Time;

/// `(job, start)` pairs, one per job: sorted by job, and as given.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Kept {
    by_job: Arc<Vec<(JobId, Time)>>,
    given: Arc<Vec<(JobId, Time)>>,
}

impl Kept {
    /// From `(job, start)` pairs in any order; a job named twice keeps its
    /// last start (and its last place in the given order).
    pub fn from_list(list: Vec<(JobId, Time)>) -> Self {
        let mut by_job = list.clone();
        by_job.reverse();
        // Stable: among equal jobs the last given comes first now.
        by_job.sort_by_key(|e| e.0);
        by_job.dedup_by_key(|e| e.0);
        let given = if by_job.len() == list.len() {
            list
        } else {
            let mut seen = std::collections::BTreeSet::new();
            let mut g: Vec<(JobId, Time)> = list
                .into_iter()
                .rev()
                .filter(|e| seen.insert(e.0))
                .collect();
            g.reverse();
            g
        };
        Kept {
            by_job: Arc::new(by_job),
            given: Arc::new(given),
        }
    }

    /// Replaces the pairs with `list` ([`Kept::from_list`]). A list in
    /// increasing job order (a plan's reservations in queue order usually
    /// are: job numbers follow submission) is taken as it is, without
    /// sorting, into the storage of the lists replaced when no clone
    /// shares it.
    pub fn replace(&mut self, list: Vec<(JobId, Time)>) {
        if !list.windows(2).all(|w| w[0].0 < w[1].0) {
            *self = Self::from_list(list);
            return;
        }
        match Arc::get_mut(&mut self.by_job) {
            Some(v) => {
                v.clear();
                v.extend_from_slice(&list);
            }
            None => self.by_job = Arc::new(list.clone()),
        }
        match Arc::get_mut(&mut self.given) {
            Some(v) => *v = list,
            None => self.given = Arc::new(list),
        }
    }

    /// The jobs of `list` that hold no pair here, in `list`'s order. A
    /// list in increasing job order (as [`Kept::replace`] takes it) is
    /// walked together with the pairs, one step each; any other is looked
    /// up job by job.
    pub fn not_kept<'a>(&'a self, list: &'a [(JobId, Time)]) -> impl Iterator<Item = JobId> + 'a {
        let sorted = list.windows(2).all(|w| w[0].0 < w[1].0);
        let mut k = 0;
        list.iter().map(|e| e.0).filter(move |&job| {
            if !sorted {
                return self.get(job).is_none();
            }
            while self.by_job.get(k).is_some_and(|e| e.0 < job) {
                k += 1;
            }
            self.by_job.get(k).is_none_or(|e| e.0 != job)
        })
    }

    pub fn get(&self, job: JobId) -> Option<Time> {
        let i = self.by_job.binary_search_by_key(&job, |e| e.0).ok()?;
        Some(self.by_job[i].1)
    }

    pub fn remove(&mut self, job: JobId) {
        if let Ok(i) = self.by_job.binary_search_by_key(&job, |e| e.0) {
            Arc::make_mut(&mut self.by_job).remove(i);
            if let Some(k) = self.given.iter().position(|e| e.0 == job) {
                Arc::make_mut(&mut self.given).remove(k);
            }
        }
    }

    /// By job.
    pub fn iter(&self) -> impl Iterator<Item = (JobId, Time)> + '_ {
        self.by_job.iter().copied()
    }

    /// In the order given (less the removed ones).
    pub fn in_given_order(&self) -> &[(JobId, Time)] {
        &self.given
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sorted_by_job_last_start_wins_and_clones_share() {
        let mut k = Kept::from_list(vec![(5, 50), (2, 20), (5, 55), (9, 90)]);
        assert_eq!(
            k.iter().collect::<Vec<_>>(),
            vec![(2, 20), (5, 55), (9, 90)]
        );
        assert_eq!(k.in_given_order(), &[(2, 20), (5, 55), (9, 90)]);
        let g = Kept::from_list(vec![(7, 1), (3, 2)]);
        assert_eq!(g.in_given_order(), &[(7, 1), (3, 2)]);
        assert_eq!(k.get(5), Some(55));
        assert_eq!(k.get(3), None);
        let snapshot = k.clone();
        k.remove(5);
        k.remove(4);
        assert_eq!(k.iter().collect::<Vec<_>>(), vec![(2, 20), (9, 90)]);
        assert_eq!(k.in_given_order(), &[(2, 20), (9, 90)]);
        assert_eq!(snapshot.get(5), Some(55), "a clone keeps its own list");
    }

    #[test]
    fn not_kept_names_the_jobs_without_a_pair_in_either_order() {
        let k = Kept::from_list(vec![(2, 20), (5, 50), (9, 90)]);
        let sorted = [(1, 0), (2, 0), (3, 0), (5, 0), (10, 0)];
        assert_eq!(k.not_kept(&sorted).collect::<Vec<_>>(), [1, 3, 10]);
        let unsorted = [(10, 0), (2, 0), (3, 0), (9, 0), (1, 0)];
        assert_eq!(k.not_kept(&unsorted).collect::<Vec<_>>(), [10, 3, 1]);
        assert_eq!(k.not_kept(&[]).count(), 0);
        assert_eq!(Kept::default().not_kept(&sorted).count(), 5);
    }

    #[test]
    fn replace_equals_from_list() {
        let lists: [&[(JobId, Time)]; 4] = [
            &[(2, 20), (5, 55), (9, 90)],
            &[(5, 50), (2, 20), (5, 55), (9, 90)],
            &[],
            &[(7, 1), (3, 2)],
        ];
        let mut k = Kept::from_list(vec![(1, 1), (4, 4)]);
        for list in lists {
            let shared = k.clone();
            let before: Vec<(JobId, Time)> = k.iter().collect();
            let given = k.in_given_order().to_vec();
            k.replace(list.to_vec());
            assert_eq!(k, Kept::from_list(list.to_vec()));
            assert_eq!(
                shared.iter().collect::<Vec<_>>(),
                before,
                "a clone keeps its own list"
            );
            assert_eq!(shared.in_given_order(), &given[..]);
            // Unshared now: replaced in place.
            k.replace(list.to_vec());
            assert_eq!(k, Kept::from_list(list.to_vec()));
        }
    }
}
