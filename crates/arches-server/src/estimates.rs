//! showstart and showbf from the last snapshot: a processor availability
//! profile ([`arches_core::profile::Profile`]) of the matching nodes, with the
//! running jobs until their wall-clock ends and the plan's reservations
//! subtracted. Processors only, aggregated over the matching nodes: an
//! estimate, like Moab's.

use arches_api::{BackfillQuery, BackfillView, BackfillWindow, StartEstimate, StartQuery};
use arches_core::profile::{Amount, Profile};
use arches_core::timespec::parse_duration;
use arches_core::{Node, NodeAdminState, Request};

use crate::actor::Snapshot;
use crate::jobspec::parse_job_id;

/// Why an estimate could not be made (the client prints the message).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EstimateError(pub String);

/// Profile of the nodes `keep` selects.
fn profile(s: &Snapshot, keep: impl Fn(&Node) -> bool) -> Profile {
    let nodes = s.state.nodes();
    let mine = |id: u32| nodes.get(id as usize).is_some_and(&keep);
    let total: i64 = nodes
        .iter()
        .filter(|n| n.admin == NodeAdminState::Up && keep(n))
        .map(|n| i64::from(n.procs))
        .sum();
    let mut p = Profile::new(s.now, Amount::procs(total));
    for j in s.state.active() {
        let Some(r) = j.run.as_ref() else { continue };
        let procs: i64 = r
            .alloc
            .iter()
            .filter(|a| mine(a.node))
            .map(|a| i64::from(a.procs))
            .sum();
        let end = j.expected_end().map(|e| e.max(s.now + 1));
        p.force_usage(s.now, end, Amount::procs(procs));
    }
    for r in &s.plan.reservations {
        // The engine plans jobs without node constraints in aggregate (no
        // allocation yet): they hold their whole processor count.
        let procs: i64 = if r.alloc.is_empty() {
            s.state.job(r.job).map_or(0, |j| i64::from(j.procs()))
        } else {
            r.alloc
                .iter()
                .filter(|a| mine(a.node))
                .map(|a| i64::from(a.procs))
                .sum()
        };
        p.force_usage(r.start.max(s.now), r.end, Amount::procs(procs));
    }
    p
}

/// showstart.
pub fn start_estimate(s: &Snapshot, q: &StartQuery) -> Result<StartEstimate, EstimateError> {
    match q {
        StartQuery::Job { id } => {
            let job = parse_job_id(id)
                .and_then(|n| s.state.job(n))
                .ok_or_else(|| EstimateError(format!("ERROR:  invalid job specified: {id}")))?;
            let mut e = StartEstimate {
                now: s.now,
                job: job.id.to_string(),
                procs: job.procs(),
                walltime: job.walltime,
                start: None,
                partition: job.req.partition.clone().unwrap_or_else(|| "ALL".into()),
                running: false,
                note: None,
            };
            if job.state.is_finished() {
                e.note = Some(format!("job {} has completed", job.id));
            } else if let Some(r) = job.run.as_ref().filter(|_| job.state.is_active()) {
                e.running = true;
                e.start = Some(r.start_time);
            } else if let Some(r) = s.plan.reservation(job.id) {
                e.start = Some(r.start);
            } else {
                let req = job.req.clone();
                let p = profile(s, |n| matches(n, &req));
                e.start = p.earliest_fit(
                    s.now,
                    Amount::procs(i64::from(job.procs())),
                    job.planning_walltime(),
                );
                if e.start.is_none() {
                    e.note = Some("job cannot run with the configured resources".into());
                }
            }
            Ok(e)
        }
        StartQuery::Hypothetical {
            procs, duration, ..
        } => {
            let secs = parse_duration(duration)
                .map_err(|_| EstimateError(format!("ERROR:  invalid duration '{duration}'")))?;
            let p = profile(s, |n| n.admin == NodeAdminState::Up);
            let start = p.earliest_fit(s.now, Amount::procs(i64::from(*procs)), Some(secs));
            Ok(StartEstimate {
                now: s.now,
                job: format!("{procs}@{duration}"),
                procs: *procs,
                walltime: Some(secs),
                start,
                partition: "ALL".into(),
                running: false,
                note: start
                    .is_none()
                    .then(|| "request cannot run with the configured resources".into()),
            })
        }
    }
}

fn matches(n: &Node, req: &Request) -> bool {
    n.admin == NodeAdminState::Up
        && n.has_features(&req.features)
        && req.partition.as_ref().is_none_or(|p| *p == n.partition)
}

/// showbf: windows starting now, each the processors free from now for the
/// longest duration (`None` = no limit), widest first.
pub fn backfill(
    s: &Snapshot,
    q: &BackfillQuery,
    user: String,
    group: String,
) -> Result<BackfillView, EstimateError> {
    let min_dur = match &q.duration {
        Some(d) => Some(
            parse_duration(d)
                .map_err(|_| EstimateError(format!("ERROR:  invalid duration '{d}'")))?,
        ),
        None => None,
    };
    let keep = |n: &Node| {
        n.admin == NodeAdminState::Up
            && n.has_features(&q.features)
            && q.partition.as_ref().is_none_or(|p| *p == n.partition)
    };
    let p = profile(s, keep);
    let idle_nodes = s
        .state
        .nodes()
        .iter()
        .enumerate()
        .filter(|(i, n)| keep(n) && s.state.free_procs(*i as u32) > 0)
        .count() as u32;
    let mut windows = Vec::new();
    let spans = p.spans();
    let mut level = spans.first().map_or(0, |sp| sp.1.procs);
    for sp in spans.iter().skip(1) {
        if sp.1.procs < level {
            if level > 0 {
                windows.push((level, Some(sp.0 - s.now)));
            }
            level = sp.1.procs;
        }
    }
    if level > 0 {
        windows.push((level, None));
    }
    let partition = q.partition.clone().unwrap_or_else(|| "ALL".into());
    let windows = windows
        .into_iter()
        .filter(|(_, d)| match (min_dur, d) {
            (Some(m), Some(d)) => *d >= m,
            _ => true,
        })
        .filter(|_| q.nodes.is_none_or(|n| idle_nodes >= n))
        .map(|(procs, duration)| BackfillWindow {
            partition: partition.clone(),
            procs: procs as u32,
            nodes: idle_nodes.min(procs as u32),
            start: s.now,
            duration,
        })
        .collect();
    Ok(BackfillView {
        now: s.now,
        user: q.user.clone().unwrap_or(user),
        group: q.group.clone().unwrap_or(group),
        windows,
    })
}
