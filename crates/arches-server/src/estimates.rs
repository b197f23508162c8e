//! showstart and showbf from the last snapshot. The scheduling arithmetic is
//! the core's ([`arches_core::windows_in_plan`], [`arches_core::estimate_start`],
//! [`arches_core::reservations_at`]); this module only parses the queries
//! (durations, `-m` memory comparisons) into core terms and converts the
//! answers to API types.

use arches_api::{
    BackfillQuery, BackfillView, BackfillWindow, NodeShare, StartEstimate, StartQuery,
};
use arches_core::timespec::parse_duration;
use arches_core::{Job, NodeAdminState, PlannedReservation, Request, WindowQuery};

use crate::actor::Snapshot;
use crate::jobspec::parse_job_id;

/// Why an estimate could not be made (the client prints the message).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EstimateError(pub String);

/// The last plan's priority reservations pinned to nodes, as of `s.now`.
pub fn pinned_reservations(s: &Snapshot) -> Vec<PlannedReservation> {
    arches_core::reservations_at(&s.state, &s.cfg.policy, &s.plan, s.now)
}

/// showstart: the reservation-based estimate (the job's reservation, else
/// the engine's earliest start for it as the top job, held back by backfill
/// chunking if that is what keeps it), the priority-based one (given the
/// jobs ahead of it) and the historical one; each says why when there is
/// none. A running job's estimates are its real start.
pub fn start_estimate(s: &Snapshot, q: &StartQuery) -> Result<StartEstimate, EstimateError> {
    let policy = &s.cfg.policy;
    match q {
        StartQuery::Job { id, feedback } => {
            // `ID[INDEX]` (a sub-job not made a job yet is estimated as it
            // will be), an array's `ID` or `ID[]` (its next sub-job).
            let pending;
            let job = match crate::arrays::resolve(&s.state, id) {
                Some(crate::arrays::Target::Job(n)) => s.state.job(n),
                Some(crate::arrays::Target::Pending(a, pos)) => {
                    pending = s.state.array(a).map(|a| crate::arrays::pending_job(a, pos));
                    pending.as_ref()
                }
                Some(crate::arrays::Target::Array(a)) => s.state.array(a).and_then(|a| {
                    let mut subs = s.state.array_jobs(a);
                    subs.find(|j| !j.state.is_finished())
                }),
                None => parse_job_id(id).and_then(|n| s.state.job(n)),
            }
            .ok_or_else(|| EstimateError(format!("ERROR:  invalid job specified: {id}")))?;
            let mut e = StartEstimate {
                now: s.now,
                job: crate::arrays::display_id(&s.state, job.id),
                procs: job.procs(),
                walltime: job.walltime,
                start: None,
                partition: best_partition(s, job),
                running: false,
                note: None,
                priority_start: None,
                priority_note: None,
                historical_start: None,
                historical_note: None,
                feedback: None,
            };
            if job.state.is_finished() {
                e.note = Some(format!("job {} has completed", job.id));
                return Ok(e);
            }
            if let Some(r) = job.run.as_ref().filter(|_| job.state.is_active()) {
                e.running = true;
                e.start = Some(r.start_time);
                e.priority_start = Some(r.start_time);
                e.historical_start = Some(r.start_time);
                return Ok(e);
            }
            let decision = s.plan.decisions.get(&job.id);
            let blocked = decision.is_some_and(|d| !d.eligible) || !job.holds.is_empty();
            let why_blocked = || {
                decision
                    .and_then(|d| d.reason.as_ref())
                    .map_or_else(|| "job is not eligible".to_string(), |r| r.message(s.now))
            };
            if blocked {
                e.note = Some(why_blocked());
            } else if let Some(r) = s.plan.reservation(job.id) {
                e.start = Some(r.start.max(s.now));
            } else {
                match arches_core::windows::start_estimate(&s.state, policy, s.now, job) {
                    Ok(t) => {
                        // What keeps a job that fits now from starting.
                        let held = match decision.and_then(|d| d.reason.as_ref()) {
                            Some(arches_core::BlockReason::Chunking { until, .. }) => Some(*until),
                            _ => None,
                        };
                        e.start = Some(held.map_or(t, |u| u.max(t)));
                    }
                    Err(why) => e.note = Some(why.to_string()),
                }
            }
            if blocked {
                e.priority_note = Some(why_blocked());
            } else {
                match arches_core::windows::priority_estimate(&s.state, policy, s.now, job) {
                    Ok(t) => e.priority_start = Some(t),
                    Err(why) => e.priority_note = Some(why.to_string()),
                }
            }
            match arches_core::windows::historical_estimate(&s.state, s.now, job) {
                Ok(t) => e.historical_start = Some(t),
                Err(why) => e.historical_note = Some(why),
            }
            if *feedback {
                apply_feedback(s, &mut e);
            }
            Ok(e)
        }
        StartQuery::Hypothetical {
            procs,
            duration,
            qos,
            feedback,
        } => {
            let secs = parse_duration(duration)
                .ok()
                .filter(|d| *d <= arches_core::limits::MAX_WALLTIME)
                .ok_or_else(|| EstimateError(format!("ERROR:  invalid duration '{duration}'")))?;
            if *procs == 0 || *procs > arches_core::limits::MAX_TOTAL_PROCS {
                return Err(EstimateError(format!(
                    "ERROR:  invalid processor count in '{procs}@{duration}'"
                )));
            }
            let mut job = Job::new(0, "", Request::procs(*procs), Some(secs), s.now);
            job.cred.qos = qos.as_deref().map(Into::into);
            let partition = best_partition(s, &job);
            let rsv = arches_core::windows::start_estimate(&s.state, policy, s.now, &job);
            let prio = arches_core::windows::priority_estimate(&s.state, policy, s.now, &job);
            let hist = arches_core::windows::historical_estimate(&s.state, s.now, &job);
            let mut e = StartEstimate {
                now: s.now,
                job: format!("{procs}@{duration}"),
                procs: *procs,
                walltime: Some(secs),
                start: rsv.as_ref().ok().copied(),
                partition,
                running: false,
                note: rsv.err().map(|e| e.to_string()),
                priority_start: prio.as_ref().ok().copied(),
                priority_note: prio.err().map(|e| e.to_string()),
                historical_start: hist.as_ref().ok().copied(),
                historical_note: hist.err(),
                feedback: None,
            };
            if *feedback {
                apply_feedback(s, &mut e);
            }
            Ok(e)
        }
    }
}

/// `showstart -f` (Moab: "apply historical reservation accuracy
/// information"): a reservation-based start assumes every job ahead runs to
/// its wall-clock limit; the jobs of the statistics period ran, on average,
/// this fraction of their limits, so the wait until that start is scaled by
/// it. Without completed jobs there is no feedback and nothing changes.
fn apply_feedback(s: &Snapshot, e: &mut StartEstimate) {
    let t = &s.accounting.total;
    if t.wcacc_jobs == 0 || e.running {
        return;
    }
    let acc = (t.wcacc_sum / t.wcacc_jobs as f64).clamp(0.0, 1.0);
    if let Some(start) = e.start {
        let wait = (start - s.now).max(0) as f64;
        e.start = Some(s.now + (wait * acc).round() as i64);
    }
    e.feedback = Some(acc);
}

/// showstart's `Best Partition:`: where a running job runs, where a
/// reserved job's reservation lies, else the partition (of those the job may
/// run in) with the earliest estimated start (ties: the first by name); `ALL`
/// only when no partition can hold the job.
pub fn best_partition(s: &Snapshot, job: &Job) -> String {
    let part_of = |alloc: &[arches_core::Alloc]| {
        alloc
            .first()
            .and_then(|a| s.state.node(a.node))
            .map(|n| n.partition.clone())
    };
    if let Some(r) = job.run.as_ref().filter(|_| job.state.is_active()) {
        if let Some(p) = part_of(&r.alloc) {
            return p;
        }
    }
    if s.plan.reservation(job.id).is_some() && job.id != 0 {
        let pinned = pinned_reservations(s);
        if let Some(p) = pinned
            .iter()
            .find(|r| r.job == job.id)
            .and_then(|r| part_of(&r.alloc))
        {
            return p;
        }
    }
    let mut parts: Vec<&str> = s
        .state
        .nodes()
        .iter()
        .map(|n| n.partition.as_str())
        .collect();
    parts.sort_unstable();
    parts.dedup();
    let mut best: Option<(arches_core::Time, &str)> = None;
    for p in parts {
        if !crate::showq::may_run_in(s, job, p) {
            continue;
        }
        let mut j = job.clone();
        j.req.partition = Some(p.to_string());
        if let Ok(t) = arches_core::windows::start_estimate(&s.state, &s.cfg.policy, s.now, &j) {
            if best.is_none_or(|(bt, _)| t < bt) {
                best = Some((t, p));
            }
        }
    }
    best.map(|(_, p)| p.to_string())
        .or_else(|| job.req.partition.clone())
        .unwrap_or_else(|| "ALL".into())
}

/// showbf: the core's windows starting now, widest first — the global
/// partition `ALL` first, then each real partition's (Moab's table), or only
/// the partition `-p` names (`-p ALL`: the global rows).
pub fn backfill(
    s: &Snapshot,
    q: &BackfillQuery,
    user: String,
    group: String,
) -> Result<BackfillView, EstimateError> {
    let mut wq = window_query(q)?;
    if let Some(g) = wq.gres.as_deref() {
        if s.state.gres_table().id(g).is_none() {
            return Err(EstimateError(format!(
                "ERROR:  no node has generic resource '{g}'"
            )));
        }
    }
    // Reservations the asking credentials may use count as idle (showbf
    // -u/-g/-a/-c/-q, else the caller's own user and group; -A: anyone's).
    wq.any_credential = q.all;
    wq.cred = Some(arches_core::Credentials {
        user: q.user.as_deref().unwrap_or(&user).into(),
        group: q.group.as_deref().unwrap_or(&group).into(),
        account: q.account.as_deref().map(Into::into),
        class: q.class.as_deref().map(Into::into),
        qos: q.qos.as_deref().map(Into::into),
    });
    let mut parts: Vec<String> = s
        .state
        .nodes()
        .iter()
        .map(|n| n.partition.clone())
        .collect();
    parts.sort();
    parts.dedup();
    let shown: Vec<Option<String>> = match wq.partition.take() {
        Some(p) if p.eq_ignore_ascii_case("ALL") => vec![None],
        Some(p) => vec![Some(p)],
        None => std::iter::once(None)
            .chain(parts.into_iter().map(Some))
            .collect(),
    };
    let mut windows = Vec::new();
    let mut partitions = Vec::new();
    let cap = if q.hard_limits {
        Some(crate::showq::headroom(
            s,
            wq.cred.as_ref().expect("set above"),
        ))
    } else {
        None
    };
    for part in shown {
        let label = part.clone().unwrap_or_else(|| "ALL".into());
        let pq = WindowQuery {
            partition: part.clone(),
            ..wq.clone()
        };
        let (nodes, procs) = s
            .state
            .nodes()
            .iter()
            .filter(|n| n.admin == NodeAdminState::Up)
            .filter(|n| part.as_ref().is_none_or(|p| *p == n.partition))
            .filter(|n| n.has_features(&pq.features))
            .fold((0u32, 0u32), |(a, b), n| (a + 1, b + n.procs));
        partitions.push((label.clone(), nodes, procs));
        let found = if q.future {
            arches_core::future_windows(&s.state, &s.cfg.policy, &s.plan, s.now, &pq, FUTURE_POINTS)
        } else {
            arches_core::windows_in_plan(&s.state, &s.cfg.policy, &s.plan, s.now, &pq)
        };
        for mut w in found {
            if let Some(cap) = &cap {
                if !cap.cut(&mut w) {
                    continue;
                }
            }
            let hosts = w
                .node_ids
                .iter()
                .zip(&w.node_procs)
                .filter_map(|(id, p)| {
                    Some(NodeShare {
                        node: s.state.node(*id)?.name.clone(),
                        tasks: *p,
                    })
                })
                .collect();
            windows.push(BackfillWindow {
                partition: label.clone(),
                procs: w.procs,
                nodes: w.nodes,
                start: w.start,
                duration: w.duration,
                hosts,
                tid: None,
            });
        }
    }
    Ok(BackfillView {
        now: s.now,
        user: q.user.clone().unwrap_or(user),
        group: q.group.clone().unwrap_or(group),
        windows,
        partitions,
    })
}

/// How many later release times `showbf -D` looks at.
const FUTURE_POINTS: usize = 32;

/// Maps showbf's options onto the core's [`WindowQuery`].
fn window_query(q: &BackfillQuery) -> Result<WindowQuery, EstimateError> {
    let min_duration = match &q.duration {
        Some(d) => Some(
            parse_duration(d)
                .ok()
                .filter(|d| *d <= arches_core::limits::MAX_WALLTIME)
                .ok_or_else(|| EstimateError(format!("ERROR:  invalid duration '{d}'")))?,
        ),
        None => None,
    };
    let min_mem_mb = match &q.memory {
        Some(m) => min_memory(m)?,
        None => 0,
    };
    Ok(WindowQuery {
        min_duration,
        min_nodes: q.nodes.unwrap_or(0),
        min_procs: 0,
        features: q.features.clone(),
        partition: q.partition.clone(),
        min_mem_mb,
        cred: None,
        any_credential: q.all,
        gres: q.gres.clone(),
    })
}

/// showbf `-m`: `>=N`, `>N`, `=N`, `==N` or `N` (MB) as a lower bound on
/// free node memory. Upper bounds cannot be expressed as a window filter.
fn min_memory(text: &str) -> Result<u64, EstimateError> {
    let t = text.trim();
    let bad = || EstimateError(format!("ERROR:  invalid memory comparison '{text}'"));
    let (offset, num) = if let Some(n) = t.strip_prefix(">=") {
        (0, n)
    } else if let Some(n) = t.strip_prefix('>') {
        (1, n)
    } else if let Some(n) = t.strip_prefix("==") {
        (0, n)
    } else if let Some(n) = t.strip_prefix('=') {
        (0, n)
    } else if t.starts_with('<') {
        return Err(bad());
    } else {
        (0, t)
    };
    let n: u64 = num.trim().parse().map_err(|_| bad())?;
    n.checked_add(offset).ok_or_else(bad)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_comparisons_become_lower_bounds() {
        assert_eq!(min_memory(">=256"), Ok(256));
        assert_eq!(min_memory(">256"), Ok(257));
        assert_eq!(min_memory("=512"), Ok(512));
        assert_eq!(min_memory("1024"), Ok(1024));
        assert!(min_memory("<=256").is_err());
        assert!(min_memory(">=lots").is_err());
    }

    #[test]
    fn window_query_parses_duration_and_nodes() {
        let q = BackfillQuery {
            duration: Some("1:00:00".into()),
            nodes: Some(2),
            features: vec!["fast".into()],
            memory: Some(">=128".into()),
            ..BackfillQuery::default()
        };
        let w = window_query(&q).unwrap();
        assert_eq!(w.min_duration, Some(3600));
        assert_eq!((w.min_nodes, w.min_mem_mb), (2, 128));
        assert_eq!(w.features, vec!["fast".to_string()]);
        let bad = BackfillQuery {
            duration: Some("soon".into()),
            ..BackfillQuery::default()
        };
        assert!(window_query(&bad).is_err());
    }
}
