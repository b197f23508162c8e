//! Statistics profiling in the daemon: once per scheduling iteration each
//! node's memory in use and load, and the system's utilisation (allocated
//! over up processors), running jobs and queued (eligible and blocked) jobs,
//! are sampled into the current `PROFILEDURATION` interval, which is folded
//! into the durable accounting ([`arches_core::history::StatProfile`]) when
//! the next interval begins (and when the daemon stops, so that a restart
//! loses nothing of it); the scheduler's utilization and backlog feed
//! `showstats -v` (minimum system utilization and the iteration it happened
//! on, average backlog). The dashboard charts the kept system samples, with
//! the interval in progress (published in the snapshot) as the last point.

use std::collections::BTreeMap;
use std::sync::Arc;

use arches_core::history::{NodeSample, SystemSample};
use arches_core::{NodeAdminState, Time};

use crate::actor::Actor;

/// The samples of the interval in progress.
#[derive(Debug, Clone, Default)]
pub struct NodeSampler {
    pub interval: Option<i64>,
    pub samples: BTreeMap<String, NodeSample>,
    /// The system's samples of the interval.
    pub system: SystemSample,
}

impl Actor {
    /// Applies `PROFILEDURATION`/`PROFILECOUNT` to the accounting's profile.
    pub(crate) fn configure_profile(&mut self) {
        let (d, c) = (self.cfg.moab.profile_duration, self.cfg.moab.profile_count);
        let p = &self.accounting.profile;
        if p.duration != d || p.count != c {
            Arc::make_mut(&mut self.accounting).profile.configure(d, c);
            self.accounting_dirty = true;
        }
    }

    /// One iteration's samples: nodes into the current interval (folding
    /// the previous one into the accounting when a new interval begins),
    /// utilization and backlog into the scheduler statistics.
    pub(crate) fn sample(&mut self, now: Time) {
        let idx = self.accounting.profile.index(now);
        if self.sampler.interval != Some(idx) {
            self.fold_samples(now);
            self.sampler.interval = Some(idx);
        }
        let (mut up, mut used) = (0u64, 0u64);
        for (i, n) in self.state.nodes().iter().enumerate() {
            let u = self.state.usage(i as u32);
            if n.admin != NodeAdminState::Down {
                up += u64::from(n.procs);
                used += u64::from(u.procs);
            }
            self.sampler
                .samples
                .entry(n.name.clone())
                .or_default()
                .observe(n.mem_mb, n.procs, u.mem_mb, f64::from(u.procs));
        }
        let (mut running, mut queued) = (0u32, 0u32);
        for j in self.state.jobs() {
            if j.state.is_active() {
                running += 1;
            } else if !j.state.is_finished() {
                queued += 1;
            }
        }
        let util = if up == 0 {
            0.0
        } else {
            used as f64 / up as f64
        };
        self.sampler.system.observe(util, running, queued);
        if up > 0 {
            let it = self.stats.iterations;
            if self.stats.min_util.is_none_or(|(m, _)| util < m) {
                self.stats.min_util = Some((util, it));
            }
            let backlog: f64 = self
                .state
                .queued()
                .map(|j| f64::from(j.procs()) * j.walltime.unwrap_or(0) as f64)
                .sum::<f64>()
                / up as f64;
            self.stats.backlog_sum += backlog;
            self.stats.backlog_samples += 1;
        }
    }
}

impl Actor {
    /// Folds the samples of the interval in progress into the accounting
    /// (a later fold of the same interval merges with it).
    pub(crate) fn fold_samples(&mut self, now: Time) {
        let Some(i) = self.sampler.interval else {
            return;
        };
        let nodes = std::mem::take(&mut self.sampler.samples);
        let system = std::mem::take(&mut self.sampler.system);
        if nodes.is_empty() && system.samples == 0 {
            return;
        }
        let a = Arc::make_mut(&mut self.accounting);
        a.profile.add_nodes(i, nodes);
        a.profile.add_system(i, &system);
        a.profile.trim(now);
        self.accounting_dirty = true;
    }
}

/// showstats with `-t` and/or `-n`: the period's view with the credential
/// totals of the time frame (jobs completed in the profile intervals it
/// overlaps) and each node's samples over it (closed intervals, plus the
/// node's state now).
pub fn stats_view(
    s: &crate::actor::Snapshot,
    q: &arches_api::StatsQuery,
) -> Result<arches_api::StatsView, String> {
    use arches_core::accounting::{CredKind, Totals};
    let mut v = crate::views::stats(s);
    let acc = &s.accounting;
    let (from, to) = match &q.window {
        Some(spec) => window(spec, s.now)?,
        None => (v.since, s.now),
    };
    if q.window.is_some() {
        let totals = acc.profile.creds_between(from, to);
        for c in &mut v.credentials {
            let key = CredKind::parse(&c.kind).map(|k| (k, c.name.clone()));
            c.completed = key
                .and_then(|k| totals.get(&k))
                .map(crate::views::stat_totals)
                .unwrap_or_default();
        }
        let mut all = Totals::default();
        for ((k, _), t) in &totals {
            if *k == CredKind::User {
                all.merge(t);
            }
        }
        v.completed = crate::views::stat_totals(&all);
        v.jobs_completed = all.jobs;
        v.window = Some((from, to));
        v.since = from;
    }
    if q.nodes {
        let mut samples = acc.profile.nodes_between(from, to);
        for (i, n) in s.state.nodes().iter().enumerate() {
            let u = s.state.usage(i as u32);
            samples.entry(n.name.clone()).or_default().observe(
                n.mem_mb,
                n.procs,
                u.mem_mb,
                f64::from(u.procs),
            );
        }
        v.nodes = s
            .state
            .nodes()
            .iter()
            .filter_map(|n| {
                let x = samples.get(&n.name)?;
                Some(arches_api::NodeStats {
                    node: n.name.clone(),
                    samples: x.samples,
                    cfg_mem: x.cfg_mem,
                    min_mem: x.mem_min,
                    max_mem: x.mem_max,
                    avg_mem: x.avg_mem(),
                    cfg_procs: x.cfg_procs,
                    min_load: x.load_min,
                    max_load: x.load_max,
                    avg_load: x.avg_load(),
                })
            })
            .collect();
        v.window = Some((from, to));
    }
    Ok(v)
}

/// `<TIME>[,<TIME>]`: absolute times as mrsvctl takes them, `+D`/`-D` =
/// `D` ago, epoch seconds; one time = from it to now.
fn window(spec: &str, now: Time) -> Result<(Time, Time), String> {
    let one = |t: &str| -> Result<Time, String> {
        let t = t.trim();
        match t.strip_prefix('+').or_else(|| t.strip_prefix('-')) {
            Some(d) => arches_core::timespec::parse_duration(d)
                .map(|d| now - d)
                .map_err(|_| format!("ERROR:    invalid time specification '{spec}'")),
            None => crate::rsvctl::parse_time(t, now)
                .map_err(|_| format!("ERROR:    invalid time specification '{spec}'")),
        }
    };
    let (a, b) = match spec.split_once(',') {
        Some((a, b)) => (one(a)?, one(b)?),
        None => (one(spec)?, now),
    };
    if b <= a {
        return Err(format!(
            "ERROR:    invalid time specification '{spec}' (the end is not after the start)"
        ));
    }
    Ok((a, b))
}
