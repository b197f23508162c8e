//! Job arrays in showq: the queued sub-jobs of an array that are alike
//! (same section and state) share one line `ID[INDEXES]` (what the daemon
//! sends for sub-jobs it keeps unmade is already such a line); `showq -t`
//! gives every sub-job its own line `ID[INDEX]`, as Torque's `qstat -t`.

use arches_api::{ArrayMember, JobSummary, Section};

/// How many jobs a line stands for.
pub fn count(j: &JobSummary) -> usize {
    match &j.array {
        Some(ArrayMember {
            pending: Some(_),
            pending_count,
            ..
        }) => *pending_count as usize,
        _ => 1,
    }
}

/// Total jobs of a list of lines.
pub fn total(jobs: &[&JobSummary]) -> usize {
    jobs.iter().map(|j| count(j)).sum()
}

fn queued(j: &JobSummary) -> bool {
    matches!(j.section, Section::Eligible | Section::Blocked)
}

/// The indices a line stands for, in order.
fn indices(j: &JobSummary) -> Vec<u32> {
    match &j.array {
        Some(ArrayMember { index: Some(i), .. }) => vec![*i],
        Some(a) if a.pending.is_some() => a.pending_indices(),
        _ => Vec::new(),
    }
}

/// One line per array, section and state for queued sub-jobs (placed
/// where the array's first such sub-job is).
pub fn collapse(jobs: Vec<JobSummary>) -> Vec<JobSummary> {
    let mut out: Vec<JobSummary> = Vec::with_capacity(jobs.len());
    let mut groups: Vec<(usize, Vec<u32>)> = Vec::new();
    for j in jobs {
        let Some(array) = j.array.as_ref().map(|a| a.array).filter(|_| queued(&j)) else {
            out.push(j);
            continue;
        };
        let at = groups.iter().position(|(k, _)| {
            let o = &out[*k];
            o.array.as_ref().is_some_and(|a| a.array == array)
                && o.section == j.section
                && o.state == j.state
        });
        match at {
            Some(g) => groups[g].1.extend(indices(&j)),
            None => {
                groups.push((out.len(), indices(&j)));
                out.push(j);
            }
        }
    }
    for (k, mut idx) in groups {
        idx.sort_unstable();
        idx.dedup();
        let line = &mut out[k];
        if idx.len() == 1 && line.array.as_ref().is_some_and(|a| a.index.is_some()) {
            continue;
        }
        if let Some(a) = line.array.as_mut() {
            a.index = None;
            a.pending_count = idx.len() as u32;
            a.pending = Some(arches_api::index_list(&idx));
        }
    }
    out
}

/// Every sub-job on its own line.
pub fn expand(jobs: Vec<JobSummary>) -> Vec<JobSummary> {
    let mut out = Vec::with_capacity(jobs.len());
    for j in jobs {
        let pending = j.array.as_ref().is_some_and(|a| a.pending.is_some());
        if !pending {
            out.push(j);
            continue;
        }
        for i in indices(&j) {
            let mut one = j.clone();
            if let Some(a) = one.array.as_mut() {
                a.index = Some(i);
                a.pending = None;
                a.pending_count = 0;
            }
            out.push(one);
        }
    }
    out
}
