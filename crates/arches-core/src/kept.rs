//! The reservation starts `RESERVATIONPOLICY HIGHEST` keeps from one plan to
//! the next ([`crate::State::remember_reservations`]): a list sorted by job,
//! shared by the state's clones (O(1) clone, as the job maps), rebuilt whole
//! after every plan in one sort instead of one map insertion per job.

use std::sync::Arc;

use crate::job::JobId;
use crate::Time;

/// `(job, start)` pairs sorted by job, one per job.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Kept(Arc<Vec<(JobId, Time)>>);

impl Kept {
    /// From `(job, start)` pairs in any order; a job named twice keeps its
    /// last start.
    pub fn from_list(mut list: Vec<(JobId, Time)>) -> Self {
        list.reverse();
        // Stable: among equal jobs the last given comes first now.
        list.sort_by_key(|e| e.0);
        list.dedup_by_key(|e| e.0);
        Kept(Arc::new(list))
    }

    pub fn get(&self, job: JobId) -> Option<Time> {
        let i = self.0.binary_search_by_key(&job, |e| e.0).ok()?;
        Some(self.0[i].1)
    }

    pub fn remove(&mut self, job: JobId) {
        if let Ok(i) = self.0.binary_search_by_key(&job, |e| e.0) {
            Arc::make_mut(&mut self.0).remove(i);
        }
    }

    pub fn iter(&self) -> impl Iterator<Item = (JobId, Time)> + '_ {
        self.0.iter().copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sorted_by_job_last_start_wins_and_clones_share() {
        let mut k = Kept::from_list(vec![(5, 50), (2, 20), (5, 55), (9, 90)]);
        assert_eq!(k.iter().collect::<Vec<_>>(), vec![(2, 20), (5, 55), (9, 90)]);
        assert_eq!(k.get(5), Some(55));
        assert_eq!(k.get(3), None);
        let snapshot = k.clone();
        k.remove(5);
        k.remove(4);
        assert_eq!(k.iter().collect::<Vec<_>>(), vec![(2, 20), (9, 90)]);
        assert_eq!(snapshot.get(5), Some(55), "a clone keeps its own list");
    }
}
