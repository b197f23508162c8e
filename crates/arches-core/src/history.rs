//! Statistics profiles (Moab's `PROFILEDURATION` / `PROFILECOUNT`): the
//! period's statistics cut into fixed intervals, so that `showstats -t
//! <TIMESPEC>` can report any time frame of the kept history and `showstats
//! -n` each node's memory and load over it, and the dashboard can chart the
//! system's utilisation and queue length interval by interval. Pure data:
//! the drivers feed it (completed jobs through
//! [`crate::accounting::Accounting::record`], node and system samples once
//! per scheduling iteration) and the store keeps it.

use std::collections::BTreeMap;

use crate::accounting::{CredKind, JobUsage, Totals};
use crate::{Secs, Time};

/// Moab's default `PROFILEDURATION`: 30 minutes.
pub const DEFAULT_DURATION: Secs = 1800;
/// Moab's default `PROFILECOUNT`: 600 intervals.
pub const DEFAULT_COUNT: usize = 600;

/// One node's samples within an interval (or a merged time frame).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct NodeSample {
    pub samples: u64,
    /// Configured memory (MB) and processors (the last sample's).
    pub cfg_mem: u64,
    pub cfg_procs: u32,
    pub mem_min: u64,
    pub mem_max: u64,
    pub mem_sum: u64,
    pub load_min: f64,
    pub load_max: f64,
    pub load_sum: f64,
}

impl NodeSample {
    /// Adds one observation of memory in use (MB) and load.
    pub fn observe(&mut self, cfg_mem: u64, cfg_procs: u32, mem: u64, load: f64) {
        if self.samples == 0 {
            self.mem_min = mem;
            self.load_min = load;
        } else {
            self.mem_min = self.mem_min.min(mem);
            self.load_min = self.load_min.min(load);
        }
        self.samples += 1;
        self.cfg_mem = cfg_mem;
        self.cfg_procs = cfg_procs;
        self.mem_max = self.mem_max.max(mem);
        self.mem_sum += mem;
        self.load_max = self.load_max.max(load);
        self.load_sum += load;
    }

    /// Folds another time frame's samples in.
    pub fn merge(&mut self, o: &NodeSample) {
        if o.samples == 0 {
            return;
        }
        if self.samples == 0 {
            *self = o.clone();
            return;
        }
        self.samples += o.samples;
        self.cfg_mem = o.cfg_mem;
        self.cfg_procs = o.cfg_procs;
        self.mem_min = self.mem_min.min(o.mem_min);
        self.mem_max = self.mem_max.max(o.mem_max);
        self.mem_sum += o.mem_sum;
        self.load_min = self.load_min.min(o.load_min);
        self.load_max = self.load_max.max(o.load_max);
        self.load_sum += o.load_sum;
    }

    /// Average memory in use (MB).
    pub fn avg_mem(&self) -> u64 {
        self.mem_sum.checked_div(self.samples).unwrap_or(0)
    }

    /// Average load.
    pub fn avg_load(&self) -> f64 {
        if self.samples == 0 {
            0.0
        } else {
            self.load_sum / self.samples as f64
        }
    }
}

/// The whole system's samples within an interval: utilisation (allocated
/// over up processors, 0 to 1), running jobs and queued (eligible and
/// blocked) jobs.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct SystemSample {
    pub samples: u64,
    pub util_sum: f64,
    pub util_min: f64,
    pub util_max: f64,
    pub running_sum: u64,
    pub running_max: u32,
    pub queued_sum: u64,
    pub queued_max: u32,
}

impl SystemSample {
    /// Adds one observation.
    pub fn observe(&mut self, util: f64, running: u32, queued: u32) {
        if self.samples == 0 {
            self.util_min = util;
        } else {
            self.util_min = self.util_min.min(util);
        }
        self.samples += 1;
        self.util_sum += util;
        self.util_max = self.util_max.max(util);
        self.running_sum += u64::from(running);
        self.running_max = self.running_max.max(running);
        self.queued_sum += u64::from(queued);
        self.queued_max = self.queued_max.max(queued);
    }

    /// Folds another time frame's samples in.
    pub fn merge(&mut self, o: &SystemSample) {
        if o.samples == 0 {
            return;
        }
        if self.samples == 0 {
            *self = *o;
            return;
        }
        self.samples += o.samples;
        self.util_sum += o.util_sum;
        self.util_min = self.util_min.min(o.util_min);
        self.util_max = self.util_max.max(o.util_max);
        self.running_sum += o.running_sum;
        self.running_max = self.running_max.max(o.running_max);
        self.queued_sum += o.queued_sum;
        self.queued_max = self.queued_max.max(o.queued_max);
    }

    fn avg(&self, sum: f64) -> f64 {
        if self.samples == 0 {
            0.0
        } else {
            sum / self.samples as f64
        }
    }

    /// Average utilisation (0 to 1).
    pub fn avg_util(&self) -> f64 {
        self.avg(self.util_sum)
    }

    /// Average number of running jobs.
    pub fn avg_running(&self) -> f64 {
        self.avg(self.running_sum as f64)
    }

    /// Average number of queued jobs.
    pub fn avg_queued(&self) -> f64 {
        self.avg(self.queued_sum as f64)
    }
}

/// The statistics of a period cut into intervals of `duration` seconds,
/// the last `count` kept.
#[derive(Debug, Clone, PartialEq)]
pub struct StatProfile {
    pub duration: Secs,
    pub count: usize,
    /// Per interval index (`floor(t / duration)`): the totals of the jobs
    /// that completed in it, per credential.
    pub creds: BTreeMap<i64, BTreeMap<(CredKind, String), Totals>>,
    /// Per interval index: each node's samples.
    pub nodes: BTreeMap<i64, BTreeMap<String, NodeSample>>,
    /// Per interval index: the system's samples.
    pub system: BTreeMap<i64, SystemSample>,
}

impl Default for StatProfile {
    fn default() -> Self {
        StatProfile {
            duration: DEFAULT_DURATION,
            count: DEFAULT_COUNT,
            creds: BTreeMap::new(),
            nodes: BTreeMap::new(),
            system: BTreeMap::new(),
        }
    }
}

impl StatProfile {
    /// The interval holding time `t`.
    pub fn index(&self, t: Time) -> i64 {
        t.div_euclid(self.duration.max(1))
    }

    /// The start of interval `i`.
    pub fn start_of(&self, i: i64) -> Time {
        i * self.duration.max(1)
    }

    /// Sets the interval length and count (`PROFILEDURATION`,
    /// `PROFILECOUNT`); a new length starts the history afresh (intervals of
    /// two lengths cannot be merged).
    pub fn configure(&mut self, duration: Secs, count: usize) {
        let duration = duration.max(1);
        if duration != self.duration {
            self.creds.clear();
            self.nodes.clear();
            self.system.clear();
        }
        self.duration = duration;
        self.count = count.max(1);
    }

    /// Adds a completed job's usage to the interval it ended in.
    pub fn record(&mut self, creds: &[(CredKind, String)], u: &JobUsage) {
        let i = self.index(u.end);
        let m = self.creds.entry(i).or_default();
        for c in creds {
            m.entry(c.clone()).or_default().add_usage(u);
        }
    }

    /// Forgets one credential in every interval.
    pub fn forget(&mut self, key: &(CredKind, String)) {
        for m in self.creds.values_mut() {
            m.remove(key);
        }
        self.creds.retain(|_, m| !m.is_empty());
    }

    /// Adds one interval's node samples.
    pub fn add_nodes(&mut self, i: i64, samples: BTreeMap<String, NodeSample>) {
        let m = self.nodes.entry(i).or_default();
        for (n, s) in samples {
            m.entry(n).or_default().merge(&s);
        }
    }

    /// Adds one interval's system samples.
    pub fn add_system(&mut self, i: i64, s: &SystemSample) {
        self.system.entry(i).or_default().merge(s);
    }

    /// Drops intervals older than the last `count` before `now`'s.
    pub fn trim(&mut self, now: Time) {
        let oldest = self.index(now) - self.count as i64 + 1;
        // Keyed by interval: only the first entries can be too old (no walk
        // over every kept interval at each job end).
        fn drop_before<V>(m: &mut BTreeMap<i64, V>, oldest: i64) {
            while m.first_key_value().is_some_and(|(i, _)| *i < oldest) {
                m.pop_first();
            }
        }
        drop_before(&mut self.creds, oldest);
        drop_before(&mut self.nodes, oldest);
        drop_before(&mut self.system, oldest);
    }

    /// The intervals overlapping `[from, to)`.
    fn within(&self, from: Time, to: Time) -> std::ops::RangeInclusive<i64> {
        self.index(from)..=self.index((to - 1).max(from))
    }

    /// Per-credential totals of the jobs completed in the intervals
    /// overlapping `[from, to)`.
    pub fn creds_between(&self, from: Time, to: Time) -> BTreeMap<(CredKind, String), Totals> {
        let mut out: BTreeMap<(CredKind, String), Totals> = BTreeMap::new();
        for (_, m) in self.creds.range(self.within(from, to)) {
            for (k, t) in m {
                out.entry(k.clone()).or_default().merge(t);
            }
        }
        out
    }

    /// Each node's samples in the intervals overlapping `[from, to)`.
    pub fn nodes_between(&self, from: Time, to: Time) -> BTreeMap<String, NodeSample> {
        let mut out: BTreeMap<String, NodeSample> = BTreeMap::new();
        for (_, m) in self.nodes.range(self.within(from, to)) {
            for (n, s) in m {
                out.entry(n.clone()).or_default().merge(s);
            }
        }
        out
    }

    /// The start of the oldest interval kept (`None`: nothing kept).
    pub fn first(&self) -> Option<Time> {
        let a = self.creds.keys().next().copied();
        let b = self.nodes.keys().next().copied();
        let c = self.system.keys().next().copied();
        a.into_iter()
            .chain(b)
            .chain(c)
            .min()
            .map(|i| self.start_of(i))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn usage(end: Time, procs: u32) -> JobUsage {
        JobUsage {
            procs,
            start: end - 100,
            end,
            qtime: 10,
            walltime: Some(200),
            successful: true,
            backfill: false,
            bypass: 0,
            ps_dedicated: f64::from(procs) * 100.0,
            ps_utilized: None,
        }
    }

    #[test]
    fn jobs_land_in_the_interval_they_ended_and_windows_merge_them() {
        let mut p = StatProfile::default();
        p.configure(100, 3);
        let alice = vec![(CredKind::User, "alice".to_string())];
        p.record(&alice, &usage(150, 2));
        p.record(&alice, &usage(250, 4));
        p.record(&alice, &usage(260, 1));
        let all = p.creds_between(0, 300);
        assert_eq!(all[&alice[0]].jobs, 3);
        let late = p.creds_between(200, 300);
        assert_eq!(late[&alice[0]].jobs, 2);
        assert_eq!(late[&alice[0]].ps_dedicated, 500.0);
        assert!(p.creds_between(0, 100).is_empty());
        // Only the last `count` intervals are kept.
        p.trim(450);
        assert_eq!(p.creds_between(0, 500)[&alice[0]].jobs, 2);
        assert_eq!(p.first(), Some(200));
    }

    #[test]
    fn node_samples_give_min_max_and_average() {
        let mut s = NodeSample::default();
        s.observe(1000, 4, 100, 1.0);
        s.observe(1000, 4, 300, 3.0);
        let mut p = StatProfile::default();
        p.configure(60, 10);
        p.add_nodes(0, [("n1".to_string(), s)].into());
        let mut t = NodeSample::default();
        t.observe(1000, 4, 50, 4.0);
        p.add_nodes(1, [("n1".to_string(), t)].into());
        let n = &p.nodes_between(0, 120)["n1"];
        assert_eq!((n.mem_min, n.mem_max, n.avg_mem()), (50, 300, 150));
        assert_eq!((n.load_min, n.load_max), (1.0, 4.0));
        assert!((n.avg_load() - 8.0 / 3.0).abs() < 1e-9);
        assert_eq!(p.nodes_between(60, 120)["n1"].samples, 1);
        // A new interval length starts afresh.
        p.configure(30, 10);
        assert!(p.nodes.is_empty());
    }

    #[test]
    fn system_samples_give_averages_per_interval_and_are_trimmed() {
        let mut s = SystemSample::default();
        s.observe(0.5, 2, 4);
        s.observe(1.0, 4, 0);
        assert_eq!((s.util_min, s.util_max), (0.5, 1.0));
        assert_eq!(
            (s.avg_util(), s.avg_running(), s.avg_queued()),
            (0.75, 3.0, 2.0)
        );
        assert_eq!((s.running_max, s.queued_max), (4, 4));
        let mut p = StatProfile::default();
        p.configure(60, 2);
        p.add_system(0, &s);
        let mut t = SystemSample::default();
        t.observe(0.0, 0, 10);
        // A part of an interval folded twice (a restart within it) merges.
        p.add_system(1, &t);
        p.add_system(1, &t);
        assert_eq!(p.system[&1].samples, 2);
        assert_eq!(p.system[&1].util_min, 0.0);
        assert_eq!(p.first(), Some(0));
        p.trim(150);
        assert_eq!(p.system.keys().copied().collect::<Vec<_>>(), vec![1]);
        p.configure(30, 2);
        assert!(p.system.is_empty());
    }
}
