//! Usage accounting behind `showstats`, `showstats -f` and `mdiag -f`.
//!
//! Pure: the daemon hands every job that reaches a final state to
//! [`Accounting::record`] (with the time it ended) and asks for reports with
//! the current time; active jobs are never stored here but counted at `now`
//! from their run ([`active_usage`]), so running and cancelled-running jobs
//! count exactly as long as their processors were dedicated.
//!
//! Definitions (Moab's, from the admin guide's showstats pages):
//! - **dedicated proc-seconds** of a job: allocated processors × seconds
//!   they were allocated, whatever the job did with them; only the part
//!   after the statistics period began ([`Accounting::since`]) counts;
//! - **requested proc-seconds**: processors × wall-clock limit;
//! - **queue time**: start − the moment the job became eligible (submit,
//!   or its `msub -a` date when later);
//! - **expansion factor** (XFactor): (queue time + run time) / wall-clock
//!   limit (run time when the job has no limit);
//! - **wall-clock accuracy**: run time / wall-clock limit, capped at 100%
//!   (a job that ran past its limit reports 100%); the reported figure is
//!   the job-weighted average over jobs completed in the period that had a
//!   limit.
//!
//! Fairshare usage (`FSPOLICY`) is the dedicated proc-seconds charged to the
//! `FSINTERVAL`-long interval in which they were dedicated; intervals are
//! aligned on multiples of the interval length since the epoch, the newest
//! `FSDEPTH` are kept, and interval *i* (0 = current) weighs `FSDECAY^i`.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::job::{CompletionCode, Job, StartKind};
use crate::{Secs, Time};

/// Credential kinds statistics are kept for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum CredKind {
    User,
    Group,
    Account,
    Class,
    Qos,
    /// A statistics job template (`JOBMATCHCFG[...] JSTAT=NAME`,
    /// `showstats -j`): kept like a credential for statistics only — never
    /// in [`CredKind::ALL`], fairshare or limits.
    Template,
}

impl CredKind {
    /// Every kind, in Moab's report order.
    pub const ALL: [CredKind; 5] = [
        CredKind::User,
        CredKind::Group,
        CredKind::Account,
        CredKind::Qos,
        CredKind::Class,
    ];

    /// Lower-case name (`user`, `group`, `account`, `class`, `qos`,
    /// `template`).
    pub fn as_str(self) -> &'static str {
        match self {
            CredKind::User => "user",
            CredKind::Group => "group",
            CredKind::Account => "account",
            CredKind::Class => "class",
            CredKind::Qos => "qos",
            CredKind::Template => "template",
        }
    }

    /// Parses [`CredKind::as_str`] (and `acct`).
    pub fn parse(s: &str) -> Option<CredKind> {
        Some(match s.to_ascii_lowercase().as_str() {
            "user" => CredKind::User,
            "group" => CredKind::Group,
            "account" | "acct" => CredKind::Account,
            "class" | "queue" => CredKind::Class,
            "qos" => CredKind::Qos,
            "template" => CredKind::Template,
            _ => return None,
        })
    }
}

/// Adds running job `j` to its user's running work (`FSJPU`/`FSPPU`/`FSPSPU`).
fn count_active_user(
    users: &mut BTreeMap<String, crate::fairshare::ActiveUse>,
    j: &Job,
    since: Time,
    now: Time,
) {
    if let Some((procs, _, left)) = active_usage(j, since, now) {
        let u = match users.get_mut(j.cred.user.as_str()) {
            Some(u) => u,
            None => users.entry(j.cred.user.to_string()).or_default(),
        };
        u.jobs += 1;
        u.procs += procs;
        u.ps += left;
    }
}

/// `Σ decay^i × v[i]` (index 0 = the current interval), summed from the
/// current interval back.
fn decayed_sum(v: &[f64], decay: f64) -> f64 {
    let mut w = 1.0;
    let mut s = 0.0;
    for x in v {
        s += w * x;
        w *= decay;
    }
    s
}

/// The decayed sum of one credential's kept intervals in the window that
/// ends with interval `cur`: a missing interval adds `w × 0.0`, which leaves
/// the (non-negative) sum unchanged; `w` still steps once per interval.
fn kept_sum(m: &BTreeMap<i64, f64>, cur: i64, depth: usize, decay: f64) -> f64 {
    let oldest = cur - depth as i64 + 1;
    let (mut s, mut w, mut i) = (0.0, 1.0, 0);
    for (idx, x) in m.range(oldest..=cur).rev() {
        while i < cur - idx {
            w *= decay;
            i += 1;
        }
        s += w * x;
    }
    s
}

/// [`job_creds`] borrowed from the job.
fn job_cred_names(j: &Job) -> impl Iterator<Item = (CredKind, &str)> {
    let c = &j.cred;
    [
        Some((CredKind::User, c.user.as_str())),
        Some((CredKind::Group, c.group.as_str())),
        c.account.as_deref().map(|a| (CredKind::Account, a)),
        c.class.as_deref().map(|x| (CredKind::Class, x)),
        Some((CredKind::Qos, c.qos.as_deref().unwrap_or("DEFAULT"))),
    ]
    .into_iter()
    .flatten()
}

/// The credentials of a job that statistics are kept for.
pub fn job_creds(j: &Job) -> Vec<(CredKind, String)> {
    let c = &j.cred;
    let mut v = vec![
        (CredKind::User, c.user.to_string()),
        (CredKind::Group, c.group.to_string()),
    ];
    if let Some(a) = &c.account {
        v.push((CredKind::Account, a.to_string()));
    }
    if let Some(x) = &c.class {
        v.push((CredKind::Class, x.to_string()));
    }
    v.push((
        CredKind::Qos,
        c.qos.as_deref().unwrap_or("DEFAULT").to_string(),
    ));
    v
}

/// Totals over completed jobs (one credential, one grid cell, or all).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Totals {
    /// Jobs that ran and completed (or were cancelled while running).
    pub jobs: u64,
    /// Of those, jobs that exited with status 0.
    pub successful: u64,
    /// Processors × wall-clock limit (jobs with a limit).
    pub ps_requested: f64,
    /// Dedicated processor-seconds within the period.
    pub ps_dedicated: f64,
    pub xf_sum: f64,
    pub xf_max: f64,
    /// Queue time in seconds.
    pub qtime_sum: f64,
    pub qtime_max: f64,
    /// Sum of capped accuracies (0..=1) and how many jobs had a limit.
    pub wcacc_sum: f64,
    pub wcacc_jobs: u64,
    pub bypass_sum: u64,
    pub bypass_max: u32,
    /// Jobs started by backfill and their dedicated proc-seconds.
    pub backfilled: u64,
    pub ps_backfilled: f64,
    /// Processor-seconds the jobs' processes used (user + system, as their
    /// backend measured), and the dedicated processor-seconds of those same
    /// jobs' whole runs: efficiency = `ps_utilized / ps_measured`.
    pub ps_utilized: f64,
    pub ps_measured: f64,
}

impl Totals {
    /// Adds one job's usage.
    pub fn add_usage(&mut self, u: &JobUsage) {
        self.add(u);
    }

    /// Adds another set of totals (a merged time frame).
    pub fn merge(&mut self, o: &Totals) {
        self.jobs += o.jobs;
        self.successful += o.successful;
        self.ps_requested += o.ps_requested;
        self.ps_dedicated += o.ps_dedicated;
        self.xf_sum += o.xf_sum;
        self.xf_max = self.xf_max.max(o.xf_max);
        self.qtime_sum += o.qtime_sum;
        self.qtime_max = self.qtime_max.max(o.qtime_max);
        self.wcacc_sum += o.wcacc_sum;
        self.wcacc_jobs += o.wcacc_jobs;
        self.bypass_sum += o.bypass_sum;
        self.bypass_max = self.bypass_max.max(o.bypass_max);
        self.backfilled += o.backfilled;
        self.ps_backfilled += o.ps_backfilled;
        self.ps_utilized += o.ps_utilized;
        self.ps_measured += o.ps_measured;
    }

    fn add(&mut self, u: &JobUsage) {
        self.jobs += 1;
        self.successful += u64::from(u.successful);
        if let Some(w) = u.walltime {
            self.ps_requested += f64::from(u.procs) * w as f64;
        }
        self.ps_dedicated += u.ps_dedicated;
        let xf = u.xfactor();
        self.xf_sum += xf;
        self.xf_max = self.xf_max.max(xf);
        self.qtime_sum += u.qtime as f64;
        self.qtime_max = self.qtime_max.max(u.qtime as f64);
        if let Some(a) = u.wc_accuracy() {
            self.wcacc_sum += a;
            self.wcacc_jobs += 1;
        }
        self.bypass_sum += u64::from(u.bypass);
        self.bypass_max = self.bypass_max.max(u.bypass);
        if u.backfill {
            self.backfilled += 1;
            self.ps_backfilled += u.ps_dedicated;
        }
        if let Some(cpu) = u.ps_utilized {
            self.ps_utilized += cpu;
            self.ps_measured += f64::from(u.procs) * u.run_secs() as f64;
        }
    }

    /// Efficiency in percent: processor time used over processor time
    /// dedicated, for the jobs whose use was measured (`None`: none was).
    pub fn efficiency(&self) -> Option<f64> {
        (self.ps_measured > 0.0).then(|| 100.0 * self.ps_utilized / self.ps_measured)
    }

    /// Average expansion factor (0 without jobs).
    pub fn avg_xf(&self) -> f64 {
        ratio(self.xf_sum, self.jobs as f64)
    }
    /// Average queue time in seconds.
    pub fn avg_qtime(&self) -> f64 {
        ratio(self.qtime_sum, self.jobs as f64)
    }
    /// Average wall-clock accuracy (0..=1).
    pub fn wc_accuracy(&self) -> f64 {
        ratio(self.wcacc_sum, self.wcacc_jobs as f64)
    }
    /// Average bypass count.
    pub fn avg_bypass(&self) -> f64 {
        ratio(self.bypass_sum as f64, self.jobs as f64)
    }
}

fn ratio(a: f64, b: f64) -> f64 {
    if b > 0.0 {
        a / b
    } else {
        0.0
    }
}

/// What one finished job contributes.
#[derive(Debug, Clone, PartialEq)]
pub struct JobUsage {
    pub procs: u32,
    pub start: Time,
    pub end: Time,
    pub qtime: Secs,
    pub walltime: Option<Secs>,
    pub successful: bool,
    pub backfill: bool,
    pub bypass: u32,
    /// Dedicated proc-seconds after `since`.
    pub ps_dedicated: f64,
    /// Processor-seconds the job's processes used in its run, if measured.
    pub ps_utilized: Option<f64>,
}

impl JobUsage {
    /// The usage of a job that ran, ending at `end` (`None` if it never ran).
    pub fn of(j: &Job, end: Time, since: Time) -> Option<JobUsage> {
        let run = j.run.as_ref()?;
        let procs = run.procs();
        let eligible = j.start_after.unwrap_or(j.submit_time).max(j.submit_time);
        let run_secs = (end - run.start_time - run.suspended_secs).max(0);
        let from = run.start_time.max(since);
        let dedicated = (end - from - run.suspended_secs).max(0);
        Some(JobUsage {
            procs,
            start: run.start_time,
            end: run.start_time + run_secs,
            qtime: (run.start_time - eligible).max(0),
            walltime: j.walltime.filter(|w| *w > 0),
            successful: j
                .completion
                .is_some_and(|c| c.code == CompletionCode::Exit(0)),
            backfill: run.how == StartKind::Backfill,
            bypass: j.bypass_count,
            ps_dedicated: f64::from(procs) * dedicated as f64,
            ps_utilized: j.cpu_ms.map(|ms| ms as f64 / 1000.0),
        })
    }

    fn run_secs(&self) -> Secs {
        (self.end - self.start).max(0)
    }

    /// (queue time + run time) / limit (run time without a limit).
    pub fn xfactor(&self) -> f64 {
        let limit = self.walltime.unwrap_or(self.run_secs()).max(1) as f64;
        (self.qtime + self.run_secs()) as f64 / limit
    }

    /// run time / limit capped at 1, for jobs with a limit.
    pub fn wc_accuracy(&self) -> Option<f64> {
        self.walltime
            .map(|w| (self.run_secs() as f64 / w as f64).min(1.0))
    }
}

/// Rows of the `showstats -f` matrix: jobs of at most this many processors
/// (`STATPROCMIN 1`, `STATPROCSTEPSIZE 2`, `STATPROCSTEPCOUNT 9`); the last
/// row also takes larger jobs.
pub const GRID_PROCS: [u32; 9] = [1, 2, 4, 8, 16, 32, 64, 128, 256];
/// Columns: jobs whose wall-clock limit is at most this many seconds
/// (`STATTIMEMIN 2:00`, doubling, 11 steps); the last column also takes
/// longer (or unlimited) jobs.
pub const GRID_TIMES: [Secs; 11] = [
    120, 240, 480, 960, 1920, 3840, 7680, 15360, 30720, 61440, 122880,
];

/// Accumulated statistics of one period (since the daemon first started or
/// the last `mschedctl -f`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Accounting {
    /// Start of the statistics period.
    pub since: Time,
    pub total: Totals,
    pub creds: BTreeMap<(CredKind, String), Totals>,
    /// `GRID_PROCS.len() × GRID_TIMES.len()` cells, row-major.
    pub grid: Vec<Totals>,
    /// Fairshare: dedicated proc-seconds per credential per interval index
    /// (`floor(t / FSINTERVAL)`).
    pub fs: BTreeMap<(CredKind, String), BTreeMap<i64, f64>>,
    pub fs_total: BTreeMap<i64, f64>,
    /// Fairshare: the same per (account, user) pair (`mdiag -f -o acct`).
    pub fs_pairs: BTreeMap<(String, String), BTreeMap<i64, f64>>,
    /// The period cut into intervals (`showstats -t`, `showstats -n`).
    pub profile: crate::history::StatProfile,
    /// Only the fairshare intervals are kept ([`Accounting::fairshare_only`]).
    pub fairshare_only: bool,
}

/// The fairshare window: interval length and how many intervals are kept,
/// and what a job is charged (`FSPOLICY`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FsWindow {
    pub interval: Secs,
    pub depth: u32,
    pub decay: f64,
    pub charge: FsCharge,
}

/// What fairshare usage measures (Moab's `FSPOLICY`), per second a job runs.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum FsCharge {
    /// `DEDICATEDPS`: the processors dedicated to the job.
    #[default]
    Dedicated,
    /// `DEDICATEDPES`: the job's processor-equivalents, Moab's
    /// `PE = MAX(procs / total procs, memory / total memory) × total procs`
    /// over the machine's configured processors and memory (MB).
    ProcEquivalents { procs: u32, mem_mb: u64 },
    /// `UTILIZEDPS`: the processor time the job's processes used, as its
    /// resource manager measured it when it ended, spread evenly over its
    /// run. A running job, and one whose resource manager does not measure
    /// it, is charged its dedicated processors.
    Utilized,
}

impl FsCharge {
    /// The processors charged per second of `run` (dedicated or
    /// processor-equivalents; [`FsCharge::Utilized`] charges dedicated here,
    /// its measurement replaces it at the end).
    pub fn rate(&self, run: &crate::job::RunInfo) -> f64 {
        let procs = run.procs();
        match *self {
            FsCharge::ProcEquivalents {
                procs: total,
                mem_mb,
            } if total > 0 => {
                let by_procs = f64::from(procs) / f64::from(total);
                let mem: u64 = run.alloc.iter().map(|a| a.mem_mb).sum();
                let by_mem = if mem_mb > 0 {
                    mem as f64 / mem_mb as f64
                } else {
                    0.0
                };
                by_procs.max(by_mem) * f64::from(total)
            }
            _ => f64::from(procs),
        }
    }
}

impl FsWindow {
    fn index(&self, t: Time) -> i64 {
        t.div_euclid(self.interval.max(1))
    }
}

/// The grid cell of a job.
pub fn grid_cell(procs: u32, walltime: Option<Secs>) -> usize {
    let row = GRID_PROCS
        .iter()
        .position(|p| procs <= *p)
        .unwrap_or(GRID_PROCS.len() - 1);
    let col = walltime
        .and_then(|w| GRID_TIMES.iter().position(|t| w <= *t))
        .unwrap_or(GRID_TIMES.len() - 1);
    row * GRID_TIMES.len() + col
}

/// Splits `rate` processors charged over `[start, end)` into interval
/// buckets.
fn charge(map: &mut BTreeMap<i64, f64>, w: &FsWindow, start: Time, end: Time, rate: f64) {
    let len = w.interval.max(1);
    let mut t = start;
    while t < end {
        let idx = w.index(t);
        let stop = ((idx + 1) * len).min(end);
        *map.entry(idx).or_default() += rate * (stop - t) as f64;
        t = stop;
    }
}

impl Accounting {
    /// An empty period starting at `since`.
    pub fn new(since: Time) -> Accounting {
        Accounting {
            since,
            grid: vec![Totals::default(); GRID_PROCS.len() * GRID_TIMES.len()],
            ..Accounting::default()
        }
    }

    /// An accounting that keeps only what fairshare reads (`fs`,
    /// `fs_total`, `fs_pairs`): a trace replay that shows no statistics
    /// records its jobs without the totals, the grid and the profile.
    pub fn fairshare_only(since: Time) -> Accounting {
        Accounting {
            since,
            fairshare_only: true,
            ..Accounting::default()
        }
    }

    /// Records a job that reached a final state at `end`; jobs that never
    /// ran count nowhere. Returns whether anything changed.
    pub fn record(&mut self, j: &Job, end: Time, fs: &FsWindow) -> bool {
        self.record_in(j, end, fs, &[])
    }

    /// [`Accounting::record`], also counting the job in the statistics
    /// templates `stats` (`JSTAT`, [`CredKind::Template`]); they take no
    /// part in fairshare.
    pub fn record_in(&mut self, j: &Job, end: Time, fs: &FsWindow, stats: &[String]) -> bool {
        let Some(u) = JobUsage::of(j, end, self.since) else {
            return false;
        };
        if !self.fairshare_only {
            self.record_statistics(j, &u, end, stats);
        }
        let from = u.start.max(self.since);
        if from < u.end {
            let run = j.run.as_ref().expect("a job with usage ran");
            let rate = match (fs.charge, u.ps_utilized) {
                // The measured time, over the part of the run in this period.
                (FsCharge::Utilized, Some(cpu)) => {
                    let ran = (u.end - u.start).max(1) as f64;
                    cpu.max(0.0) / ran
                }
                _ => fs.charge.rate(run),
            };
            charge(&mut self.fs_total, fs, from, u.end, rate);
            for (kind, name) in job_cred_names(j) {
                // The name is copied only the first time it is charged.
                let m = match self
                    .fs
                    .get_mut(&(kind, name) as &dyn crate::fairshare::CredKey)
                {
                    Some(m) => m,
                    None => self.fs.entry((kind, name.to_string())).or_default(),
                };
                charge(m, fs, from, u.end, rate);
            }
            if let Some(a) = &j.cred.account {
                let pair = (a.to_string(), j.cred.user.to_string());
                charge(
                    self.fs_pairs.entry(pair).or_default(),
                    fs,
                    from,
                    u.end,
                    rate,
                );
            }
        }
        // Every interval a credential or pair is charged is charged to the
        // total too, so while the total holds nothing older than the window
        // neither does any other map: the full walk is needed only when the
        // window has moved past the oldest kept interval (once per interval).
        let oldest = fs.index(end) - i64::from(fs.depth.max(1)) + 1;
        if self.fs_total.keys().next().is_some_and(|k| *k < oldest) {
            self.trim(fs, end);
        }
        true
    }

    /// The statistics part of [`Accounting::record_in`]: the totals, the
    /// grid, each credential's and template's totals and the profile.
    fn record_statistics(&mut self, j: &Job, u: &JobUsage, end: Time, stats: &[String]) {
        if self.grid.len() != GRID_PROCS.len() * GRID_TIMES.len() {
            self.grid = vec![Totals::default(); GRID_PROCS.len() * GRID_TIMES.len()];
        }
        self.total.add(u);
        self.grid[grid_cell(u.procs, u.walltime)].add(u);
        let creds = job_creds(j);
        // The credentials and the statistics templates (no copy of the
        // credentials when there are none, as on most jobs).
        let with_stats;
        let counted: &[(CredKind, String)] = if stats.is_empty() {
            &creds
        } else {
            with_stats = creds
                .iter()
                .cloned()
                .chain(stats.iter().map(|t| (CredKind::Template, t.clone())))
                .collect::<Vec<_>>();
            &with_stats
        };
        for c in counted {
            match self.creds.get_mut(c) {
                Some(t) => t.add(u),
                None => self.creds.entry(c.clone()).or_default().add(u),
            }
        }
        self.profile.record(counted, u);
        self.profile.trim(end);
    }

    /// Drops fairshare intervals older than the window.
    pub fn trim(&mut self, fs: &FsWindow, now: Time) {
        let oldest = fs.index(now) - i64::from(fs.depth.max(1)) + 1;
        self.fs_total.retain(|k, _| *k >= oldest);
        for m in self.fs.values_mut() {
            m.retain(|k, _| *k >= oldest);
        }
        self.fs.retain(|_, m| !m.is_empty());
        for m in self.fs_pairs.values_mut() {
            m.retain(|k, _| *k >= oldest);
        }
        self.fs_pairs.retain(|_, m| !m.is_empty());
    }

    /// Starts a new period at `now` (`mschedctl -f all`); the profile
    /// settings stay.
    pub fn reset(&mut self, now: Time) {
        let (d, c) = (self.profile.duration, self.profile.count);
        *self = Accounting::new(now);
        self.profile.configure(d, c);
    }

    /// Forgets one credential's statistics (`mcredctl -r stats`): its
    /// totals of the period and of every profile interval. The system
    /// totals keep its jobs.
    pub fn reset_cred_stats(&mut self, kind: CredKind, name: &str) {
        let key = (kind, name.to_string());
        self.creds.remove(&key);
        self.profile.forget(&key);
    }

    /// Forgets one credential's fairshare usage (`mcredctl -r fairshare`),
    /// and its (account, user) pairs'.
    pub fn reset_cred_fairshare(&mut self, kind: CredKind, name: &str) {
        self.fs.remove(&(kind, name.to_string()));
        match kind {
            CredKind::User => self.fs_pairs.retain(|(_, u), _| u != name),
            CredKind::Account => self.fs_pairs.retain(|(a, _), _| a != name),
            _ => {}
        }
    }

    /// Clears only the fairshare usage (`mschedctl -f fairshare`).
    pub fn reset_fairshare(&mut self) {
        self.fs.clear();
        self.fs_total.clear();
        self.fs_pairs.clear();
    }

    /// Fairshare usage per interval (0 = current) including active jobs
    /// charged up to `now`: `(per credential, total)`, each a vector of
    /// `depth` proc-second sums.
    pub fn fairshare<'a>(
        &self,
        active: impl Iterator<Item = &'a Job>,
        fs: &FsWindow,
        now: Time,
    ) -> FairshareUsage {
        let depth = fs.depth.max(1) as usize;
        let cur = fs.index(now);
        let to_vec = |m: &BTreeMap<i64, f64>| -> Vec<f64> {
            (0..depth)
                .map(|i| m.get(&(cur - i as i64)).copied().unwrap_or(0.0))
                .collect()
        };
        let mut creds: BTreeMap<(CredKind, String), BTreeMap<i64, f64>> = self.fs.clone();
        let mut total = self.fs_total.clone();
        let mut pairs = self.fs_pairs.clone();
        let mut users: BTreeMap<String, crate::fairshare::ActiveUse> = BTreeMap::new();
        for j in active {
            let Some(r) = j.run.as_ref() else { continue };
            count_active_user(&mut users, j, self.since, now);
            let from = r.start_time.max(self.since);
            if from >= now {
                continue;
            }
            let rate = fs.charge.rate(r);
            charge(&mut total, fs, from, now, rate);
            for c in job_creds(j) {
                charge(creds.entry(c).or_default(), fs, from, now, rate);
            }
            if let Some(a) = &j.cred.account {
                let pair = (a.to_string(), j.cred.user.to_string());
                charge(pairs.entry(pair).or_default(), fs, from, now, rate);
            }
        }
        FairshareUsage {
            total: to_vec(&total),
            creds: creds.iter().map(|(k, m)| (k.clone(), to_vec(m))).collect(),
            active: users,
            pairs: pairs.iter().map(|(k, m)| (k.clone(), to_vec(m))).collect(),
        }
    }
}

impl Accounting {
    /// The decayed usage at `now` that the priorities and caps read: the same
    /// numbers, bit for bit, as `self.fairshare(active, fs, now).decayed(fs.decay)`,
    /// without cloning the per-credential interval maps or building the
    /// per-interval vectors and the (account, user) pairs. A driver that asks
    /// every iteration keeps a [`DecayedUsage`] instead, which recomputes only
    /// the credentials running jobs charge.
    pub fn decayed_usage<'a>(
        &self,
        active: impl Iterator<Item = &'a Arc<Job>>,
        fs: &FsWindow,
        now: Time,
    ) -> crate::fairshare::FsUsage {
        let mut d = DecayedUsage::default();
        d.update(self, active, fs, now);
        std::sync::Arc::unwrap_or_clone(d.usage)
    }
}

/// [`Accounting::decayed_usage`] kept from one call to the next: `moab
/// simulate` asks for it every iteration, and between two job ends only the
/// credentials of running jobs change (until the window moves on). Each
/// update restores the credentials the running jobs charged last time to
/// their value from the kept intervals alone, then charges the running jobs
/// of now, so the usage equals a fresh [`Accounting::decayed_usage`] bit for
/// bit — provided [`DecayedUsage::invalidate`] is called whenever the
/// accounting's fairshare maps change (a job recorded, a trim, a reset).
///
/// Every update charges every running job (about a hundred at a time on
/// the larger logs), so nothing in that loop looks a credential up by name:
/// credentials are interned as slots ([`CredSlot`]) that keep the
/// credential's kept intervals of the window, each running job keeps its
/// credentials' slots from one update to the next ([`JobSlots`], checked
/// against the job's credentials by comparing names), and a user's running
/// work is counted in its user slot. Each credential's window is the kept
/// intervals plus the running jobs' charges added in the same order, job by
/// job, as [`Accounting::fairshare`] adds them, so every sum is the same
/// floating-point computation as a fresh one.
#[derive(Debug, Clone, Default)]
pub struct DecayedUsage {
    /// The interval index the kept credentials' sums are for (`None`:
    /// compute every credential afresh at the next update).
    at: Option<i64>,
    /// The window the kept sums are for: another one computes afresh.
    window: Option<FsWindow>,
    /// Bumped whenever every kept sum is computed afresh: a slot's kept
    /// intervals are current while its `kept_gen` equals it.
    generation: u64,
    /// Bumped at every update: the slots running jobs charge in an update
    /// carry its epoch.
    epoch: u64,
    /// The interned credentials, and their index by name.
    slots: Vec<CredSlot>,
    ids: CredIds,
    /// The running jobs' slots at the last update, in the order they came.
    jobs: Vec<JobSlots>,
    /// The slots running jobs charged at the last update.
    charged: Vec<u32>,
    /// The user slots that had running work at the last update.
    users: Vec<u32>,
    /// The credentials of the jobs recorded since the last update
    /// ([`DecayedUsage::record`]): their kept sums are computed again at the
    /// next update, rather than at once in a usage the policy still shares.
    recorded: Vec<(CredKind, String)>,
    usage: std::sync::Arc<crate::fairshare::FsUsage>,
    /// The users' running work ([`crate::fairshare::FsUsage::active`]) is
    /// left out: nothing reads it ([`DecayedUsage::count_active_work`]).
    no_active_work: bool,
}

/// The slots of a [`DecayedUsage`]'s credentials by name.
type CredIds = std::collections::HashMap<(CredKind, String), u32, foldhash::fast::FixedState>;

/// One interned credential of a [`DecayedUsage`].
#[derive(Debug, Clone)]
struct CredSlot {
    key: (CredKind, String),
    /// The credential's kept intervals of the window, newest first (0 where
    /// nothing is kept); current while `kept_gen` is the usage's generation.
    kept: Vec<f64>,
    /// Their decayed sum ([`kept_sum`]); `None` when nothing is kept for it.
    kept_sum: Option<f64>,
    kept_gen: u64,
    /// The kept intervals plus the charges of the running jobs, at the
    /// update whose epoch `epoch` is.
    win: Vec<f64>,
    epoch: u64,
    /// A user's running work ([`crate::fairshare::FsUsage::active`]), at the
    /// update whose epoch `user_epoch` is.
    active: crate::fairshare::ActiveUse,
    user_epoch: u64,
}

/// The slots of a running job's credentials, in [`job_cred_names`] order
/// (the user's first), and the job they were found for: while the driver
/// passes that same `Arc` (a job is copied when it changes while shared),
/// the credentials are the same without comparing their names.
#[derive(Debug, Clone)]
struct JobSlots {
    id: crate::job::JobId,
    n: u8,
    slots: [u32; 5],
    /// Taken by the next update (`None` once taken).
    job: Option<Arc<Job>>,
}

impl JobSlots {
    fn slots(&self) -> &[u32] {
        &self.slots[..usize::from(self.n)]
    }

    /// Whether these are still the slots of `j`'s credentials.
    fn fits(&self, slots: &[CredSlot], j: &Arc<Job>) -> bool {
        if self.job.as_ref().is_some_and(|k| Arc::ptr_eq(k, j)) {
            return true;
        }
        let mut n = 0;
        for (kind, name) in job_cred_names(j) {
            match self.slots().get(n) {
                Some(&s) if slots[s as usize].key.0 == kind && slots[s as usize].key.1 == name => {
                    n += 1
                }
                _ => return false,
            }
        }
        n == self.slots().len()
    }
}

/// The slot of credential `(kind, name)`, made if it has none yet.
fn intern(slots: &mut Vec<CredSlot>, ids: &mut CredIds, kind: CredKind, name: &str) -> u32 {
    if let Some(&s) = ids.get(&(kind, name) as &dyn crate::fairshare::CredKey) {
        return s;
    }
    let s = slots.len() as u32;
    slots.push(CredSlot {
        key: (kind, name.to_string()),
        kept: Vec::new(),
        kept_sum: None,
        kept_gen: 0,
        win: Vec::new(),
        epoch: 0,
        active: Default::default(),
        user_epoch: 0,
    });
    ids.insert((kind, name.to_string()), s);
    s
}

impl CredSlot {
    /// Makes the kept intervals those of `acc` in the window of `depth`
    /// intervals ending with `cur`, unless they already are (`generation`).
    fn load(&mut self, acc: &Accounting, generation: u64, cur: i64, depth: usize, decay: f64) {
        if self.kept_gen == generation {
            return;
        }
        self.kept.clear();
        self.kept.resize(depth, 0.0);
        let m = acc.fs.get(&self.key);
        if let Some(m) = m {
            for (idx, x) in m.range(cur - depth as i64 + 1..=cur) {
                self.kept[(cur - idx) as usize] = *x;
            }
        }
        self.kept_sum = m.map(|m| kept_sum(m, cur, depth, decay));
        self.kept_gen = generation;
    }
}

impl DecayedUsage {
    /// The accounting's fairshare maps changed: the next update computes
    /// every credential afresh.
    pub fn invalidate(&mut self) {
        self.at = None;
    }

    /// Whether updates count each user's running work
    /// ([`crate::fairshare::FsUsage::active`], on by default): a driver
    /// turns it off when nothing reads it
    /// ([`crate::fairshare::uses_active_work`]); off, the usage has none.
    pub fn count_active_work(&mut self, on: bool) {
        self.no_active_work = !on;
    }

    /// The usage of the last update (shared: a policy holds it; the next
    /// update copies it only if somebody still does).
    pub fn usage(&self) -> &std::sync::Arc<crate::fairshare::FsUsage> {
        &self.usage
    }

    /// [`Accounting::record`] of a job that ended, keeping this usage valid
    /// for the next [`DecayedUsage::update`]: only the ended job's
    /// credentials are summed again there (everything, if the record dropped
    /// a credential out of the window). The sums wait for the update, which
    /// changes the usage in place once the policy no longer shares it (made
    /// here, the change would copy the whole usage at every job end).
    pub fn record(&mut self, acc: &mut Accounting, j: &Job, end: Time, fs: &FsWindow) -> bool {
        if self.at.is_none_or(|at| at != fs.index(end)) {
            self.at = None;
            return acc.record(j, end, fs);
        }
        let new_keys = job_cred_names(j)
            .filter(|c| !acc.fs.contains_key(c as &dyn crate::fairshare::CredKey))
            .count();
        let before = acc.fs.len();
        let counted = acc.record(j, end, fs);
        if acc.fs.len() != before + new_keys {
            // The window was trimmed: credentials left it.
            self.at = None;
            return counted;
        }
        self.recorded
            .extend(job_cred_names(j).map(|(k, n)| (k, n.to_string())));
        counted
    }

    /// The credentials recorded since the last update, in the interval
    /// `cur` the kept sums are for: a slot's kept intervals are loaded
    /// again when next needed; a credential running jobs charged at the last
    /// update gets its value at this update (charged again or restored),
    /// any other gets its kept sum in the usage now. Each sum is of the
    /// credential's intervals as they are now, after all the records: what
    /// summing them at each record would have left.
    fn apply_recorded(&mut self, acc: &Accounting, fs: &FsWindow, cur: i64) {
        let depth = fs.depth.max(1) as usize;
        let usage = std::sync::Arc::make_mut(&mut self.usage);
        for (kind, name) in self.recorded.drain(..) {
            let c = (kind, name.as_str());
            if let Some(&s) = self.ids.get(&c as &dyn crate::fairshare::CredKey) {
                let slot = &mut self.slots[s as usize];
                slot.kept_gen = 0;
                if slot.epoch == self.epoch {
                    continue;
                }
            }
            let Some(m) = acc.fs.get(&c as &dyn crate::fairshare::CredKey) else {
                continue;
            };
            let v = kept_sum(m, cur, depth, fs.decay);
            if let Some(x) = usage.creds.get_mut(&c as &dyn crate::fairshare::CredKey) {
                *x = v;
            } else {
                usage.creds.insert((kind, name), v);
            }
        }
    }

    /// Brings the usage to `now` with these running jobs.
    pub fn update<'a>(
        &mut self,
        acc: &Accounting,
        active: impl Iterator<Item = &'a Arc<Job>>,
        fs: &FsWindow,
        now: Time,
    ) {
        let depth = fs.depth.max(1) as usize;
        let cur = fs.index(now);
        let oldest = cur - depth as i64 + 1;
        let decay = fs.decay;
        if self.window != Some(*fs) {
            self.window = Some(*fs);
            self.at = None;
        }
        if self.at == Some(cur) {
            self.apply_recorded(acc, fs, cur);
        }
        self.recorded.clear();
        if self.at != Some(cur) {
            let usage = std::sync::Arc::make_mut(&mut self.usage);
            usage.creds = acc
                .fs
                .iter()
                .map(|(k, m)| (k.clone(), kept_sum(m, cur, depth, decay)))
                .collect();
            self.at = Some(cur);
            self.generation += 1;
            // Every credential has its kept value: nothing to restore.
            self.charged.clear();
        }
        self.epoch += 1;
        let (generation, epoch) = (self.generation, self.epoch);
        // A running job's charges up to now, per interval of the window
        // (`(index from the current interval, charge)`, oldest interval
        // first): the same for each of its credentials and the total, added
        // to each in the order `fairshare` adds them (job by job, oldest
        // interval first).
        let mut charges: Vec<(usize, f64)> = Vec::with_capacity(depth);
        let charge_window = |out: &mut Vec<(usize, f64)>, from: Time, rate: f64| {
            out.clear();
            let len = fs.interval.max(1);
            let mut t = from.max(oldest * len);
            while t < now {
                let idx = fs.index(t);
                let stop = ((idx + 1) * len).min(now);
                out.push(((cur - idx) as usize, rate * (stop - t) as f64));
                t = stop;
            }
        };
        let add = |v: &mut [f64], charges: &[(usize, f64)]| {
            for &(i, x) in charges {
                v[i] += x;
            }
        };
        let sum = |v: &[f64]| decayed_sum(v, decay);
        let mut total = vec![0.0; depth];
        for (idx, x) in acc.fs_total.range(oldest..=cur) {
            total[(cur - idx) as usize] = *x;
        }
        let mut before = std::mem::take(&mut self.jobs);
        let mut jobs = Vec::with_capacity(before.len() + 1);
        let mut charged = Vec::with_capacity(self.charged.len() + 1);
        let mut users = Vec::with_capacity(self.users.len() + 1);
        // The drivers pass the running jobs in the same (id) order every
        // time: the job's slots of the last update are usually the next
        // ones.
        let mut next = 0;
        for j in active {
            let Some(r) = j.run.as_ref() else { continue };
            let kept = match before.get(next) {
                Some(c) if c.id == j.id => {
                    next += 1;
                    Some(next - 1)
                }
                // A job that ended since is skipped: the ones after it
                // follow on from where it is found.
                _ => before
                    .binary_search_by_key(&j.id, |c| c.id)
                    .ok()
                    .inspect(|&i| next = i + 1),
            };
            let js = match kept.filter(|&i| before[i].fits(&self.slots, j)) {
                Some(i) => {
                    let c = &mut before[i];
                    JobSlots {
                        id: c.id,
                        n: c.n,
                        slots: c.slots,
                        // The same job keeps its reference (no count
                        // change); a changed one is referred to anew.
                        job: c
                            .job
                            .take()
                            .filter(|k| Arc::ptr_eq(k, j))
                            .or_else(|| Some(Arc::clone(j))),
                    }
                }
                None => {
                    let mut c = JobSlots {
                        id: j.id,
                        n: 0,
                        slots: [0; 5],
                        job: Some(Arc::clone(j)),
                    };
                    for (kind, name) in job_cred_names(j) {
                        c.slots[usize::from(c.n)] =
                            intern(&mut self.slots, &mut self.ids, kind, name);
                        c.n += 1;
                    }
                    c
                }
            };
            let (js_slots, js_n) = (js.slots, usize::from(js.n));
            jobs.push(js);
            // The user's running work (`count_active_user`), in its slot.
            if let Some((procs, _, left)) = (!self.no_active_work)
                .then(|| active_usage(j, acc.since, now))
                .flatten()
            {
                let s = js_slots[0];
                let u = &mut self.slots[s as usize];
                if u.user_epoch != epoch {
                    u.user_epoch = epoch;
                    u.active = Default::default();
                    users.push(s);
                }
                u.active.jobs += 1;
                u.active.procs += procs;
                u.active.ps += left;
            }
            let from = r.start_time.max(acc.since);
            if from >= now {
                continue;
            }
            let rate = fs.charge.rate(r);
            charge_window(&mut charges, from, rate);
            add(&mut total, &charges);
            for &s in &js_slots[..js_n] {
                let slot = &mut self.slots[s as usize];
                if slot.epoch != epoch {
                    slot.load(acc, generation, cur, depth, decay);
                    slot.win.clear();
                    slot.win.extend_from_slice(&slot.kept);
                    slot.epoch = epoch;
                    charged.push(s);
                }
                add(&mut slot.win, &charges);
            }
        }
        self.jobs = jobs;
        let usage = std::sync::Arc::make_mut(&mut self.usage);
        usage.total = sum(&total);
        // Users no longer running anything leave; the others keep their
        // entry (and its name).
        for &s in &self.users {
            let u = &self.slots[s as usize];
            if u.user_epoch != epoch {
                usage.active.remove(&u.key.1);
            }
        }
        for &s in &users {
            let u = &self.slots[s as usize];
            match usage.active.get_mut(&u.key.1) {
                Some(x) => *x = u.active,
                None => {
                    usage.active.insert(u.key.1.clone(), u.active);
                }
            }
        }
        self.users = users;
        for &s in &charged {
            let slot = &self.slots[s as usize];
            let v = sum(&slot.win);
            match usage.creds.get_mut(&slot.key) {
                Some(x) => *x = v,
                None => {
                    usage.creds.insert(slot.key.clone(), v);
                }
            }
        }
        // The credentials charged last time and not now get their kept
        // value back (or leave, when nothing is kept for them).
        for &s in &self.charged {
            let slot = &mut self.slots[s as usize];
            if slot.epoch == epoch {
                continue;
            }
            slot.load(acc, generation, cur, depth, decay);
            match slot.kept_sum {
                Some(v) => {
                    if let Some(x) = usage.creds.get_mut(&slot.key) {
                        *x = v;
                    }
                }
                None => {
                    usage.creds.remove(&slot.key);
                }
            }
        }
        self.charged = charged;
    }
}

/// Per-interval fairshare usage (index 0 = the current interval).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FairshareUsage {
    pub total: Vec<f64>,
    pub creds: BTreeMap<(CredKind, String), Vec<f64>>,
    /// Each user's active work at `now` ([`crate::fairshare::FsUsage::active`]).
    pub active: BTreeMap<String, crate::fairshare::ActiveUse>,
    /// Per (account, user) pair, per interval (`mdiag -f -o acct`).
    pub pairs: BTreeMap<(String, String), Vec<f64>>,
}

impl FairshareUsage {
    /// The decayed usage (`Σ decay^i × usage[i]`) per credential and in
    /// total, as the priority and the caps use it ([`crate::fairshare`]).
    pub fn decayed(&self, decay: f64) -> crate::fairshare::FsUsage {
        let sum = |v: &[f64]| decayed_sum(v, decay);
        crate::fairshare::FsUsage {
            total: sum(&self.total),
            creds: self
                .creds
                .iter()
                .map(|(k, v)| (k.clone(), sum(v)))
                .collect(),
            active: self.active.clone(),
        }
    }

    /// The decayed share of `usage` in `total`, in percent.
    pub fn decayed_percent(usage: &[f64], total: &[f64], decay: f64) -> f64 {
        let mut u = 0.0;
        let mut t = 0.0;
        let mut w = 1.0;
        for (a, b) in usage.iter().zip(total) {
            u += w * a;
            t += w * b;
            w *= decay;
        }
        ratio(u * 100.0, t)
    }
}

/// Usage of an active job at `now`: (procs, dedicated proc-seconds since
/// `since`, proc-seconds still to run up to its limit).
pub fn active_usage(j: &Job, since: Time, now: Time) -> Option<(u32, f64, f64)> {
    let r = j.run.as_ref()?;
    let procs = r.procs();
    let from = r.start_time.max(since);
    let suspended = r.suspended_secs + r.suspended_at.map_or(0, |s| (now - s).max(0));
    let ded = (now - from - suspended.min((now - from).max(0))).max(0);
    let ran = (now - r.start_time - suspended).max(0);
    let left = j.walltime.map_or(0, |w| (w - ran).max(0));
    Some((
        procs,
        f64::from(procs) * ded as f64,
        f64::from(procs) * left as f64,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The jobs as the state shares them: a job equal to the one passed
    /// last time keeps its `Arc` when `reuse` (a changed job gets a new one).
    fn share(
        jobs: Vec<Job>,
        kept: &mut BTreeMap<crate::job::JobId, Arc<Job>>,
        reuse: bool,
    ) -> Vec<Arc<Job>> {
        jobs.into_iter()
            .map(|j| match kept.get(&j.id) {
                Some(k) if reuse && **k == j => Arc::clone(k),
                _ => {
                    let j = Arc::new(j);
                    kept.insert(j.id, Arc::clone(&j));
                    j
                }
            })
            .collect()
    }

    /// `got` equals `want` bit for bit: the total, every credential's
    /// value (the same credentials) and the users' running work.
    fn same_bits(got: &crate::fairshare::FsUsage, want: &crate::fairshare::FsUsage, t: Time) {
        assert_eq!(got.total.to_bits(), want.total.to_bits(), "at {t}");
        let sorted = |u: &crate::fairshare::FsUsage| {
            u.creds
                .keys()
                .cloned()
                .collect::<std::collections::BTreeSet<_>>()
        };
        assert_eq!(sorted(got), sorted(want), "at {t}");
        for (k, v) in &want.creds {
            assert_eq!(got.creds[k].to_bits(), v.to_bits(), "{k:?} at {t}");
        }
        assert_eq!(got.active, want.active, "at {t}");
    }

    #[test]
    fn efficiency_counts_only_measured_jobs() {
        let u = |procs: u32, cpu: Option<f64>| JobUsage {
            procs,
            start: 0,
            end: 100,
            qtime: 0,
            walltime: Some(100),
            successful: true,
            backfill: false,
            bypass: 0,
            ps_dedicated: f64::from(procs) * 100.0,
            ps_utilized: cpu,
        };
        let mut t = Totals::default();
        assert_eq!(t.efficiency(), None);
        t.add_usage(&u(2, Some(150.0)));
        t.add_usage(&u(4, None));
        assert_eq!(t.efficiency(), Some(75.0));
        let mut m = Totals::default();
        m.add_usage(&u(1, Some(100.0)));
        t.merge(&m);
        // (150 + 100) / (200 + 100).
        assert!((t.efficiency().unwrap() - 250.0 / 3.0).abs() < 1e-9);
    }
    use crate::job::{Alloc, Completion, Request, RunInfo};

    fn done(id: u64, procs: u32, wall: Option<Secs>, submit: Time, start: Time, end: Time) -> Job {
        let mut j = Job::new(id, "alice", Request::procs(procs), wall, submit);
        j.run = Some(RunInfo {
            start_time: start,
            alloc: vec![Alloc {
                node: 0,
                tasks: procs,
                procs,
                mem_mb: 0,
                gres: Default::default(),
            }],
            how: StartKind::Priority,
            suspended_secs: 0,
            suspended_at: None,
            resumed_at: None,
            terminating: None,
            virtual_walltime: None,
            gres_units: Vec::new(),
        });
        j.completion = Some(Completion {
            time: end,
            code: CompletionCode::Exit(0),
        });
        j
    }

    const FS: FsWindow = FsWindow {
        interval: 100,
        depth: 3,
        decay: 0.5,
        charge: FsCharge::Dedicated,
    };

    #[test]
    fn totals_follow_the_definitions() {
        let mut a = Accounting::new(0);
        // 2 procs, limit 100, queued 10, ran 50: accuracy 0.5, xf 0.6.
        a.record(&done(1, 2, Some(100), 0, 10, 60), 60, &FS);
        // ran past its limit: accuracy capped at 1.
        a.record(&done(2, 1, Some(10), 0, 0, 30), 30, &FS);
        assert_eq!(a.total.jobs, 2);
        assert_eq!(a.total.ps_dedicated, 2.0 * 50.0 + 30.0);
        assert_eq!(a.total.ps_requested, 200.0 + 10.0);
        assert!((a.total.wc_accuracy() - 0.75).abs() < 1e-9);
        assert!((a.total.xf_max - 3.0).abs() < 1e-9);
        assert_eq!(a.creds[&(CredKind::User, "alice".into())].jobs, 2);
        assert_eq!(a.creds[&(CredKind::Qos, "DEFAULT".into())].jobs, 2);
        let cell = grid_cell(2, Some(100));
        assert_eq!(a.grid[cell].jobs, 1);
    }

    #[test]
    fn statistics_templates_count_like_credentials_but_not_in_fairshare() {
        let mut a = Accounting::new(0);
        let stats = ["big".to_string(), "all".to_string()];
        a.record_in(&done(1, 2, Some(100), 0, 10, 60), 60, &FS, &stats);
        a.record_in(&done(2, 1, Some(100), 0, 0, 30), 30, &FS, &stats[1..]);
        a.record(&done(3, 1, Some(100), 0, 0, 20), 20, &FS);
        let t = |n: &str| a.creds[&(CredKind::Template, n.to_string())].clone();
        assert_eq!(t("big").jobs, 1);
        assert_eq!(t("big").ps_dedicated, 100.0);
        assert_eq!(t("all").jobs, 2);
        assert_eq!(t("all").ps_dedicated, 130.0);
        assert_eq!(a.total.jobs, 3, "the system totals count each job once");
        assert!(a.fs.keys().all(|(k, _)| *k != CredKind::Template));
        let p = a.profile.creds_between(0, 100);
        assert_eq!(p[&(CredKind::Template, "all".to_string())].jobs, 2);
        assert_eq!(CredKind::parse("template"), Some(CredKind::Template));
        assert!(!CredKind::ALL.contains(&CredKind::Template));
    }

    #[test]
    fn one_credential_is_reset_alone() {
        let mut a = Accounting::new(0);
        let mut j = done(1, 2, Some(100), 0, 10, 60);
        j.cred.account = Some("chem".into());
        a.record(&j, 60, &FS);
        let user = (CredKind::User, "alice".to_string());
        let acct = (CredKind::Account, "chem".to_string());
        a.reset_cred_stats(CredKind::User, "alice");
        assert!(!a.creds.contains_key(&user));
        assert!(!a.profile.creds_between(0, 100).contains_key(&user));
        assert_eq!(a.creds[&acct].jobs, 1);
        assert_eq!(a.total.jobs, 1);
        assert!(a.fs.contains_key(&user), "statistics only");
        a.reset_cred_fairshare(CredKind::Account, "chem");
        assert!(!a.fs.contains_key(&acct) && a.fs_pairs.is_empty());
        assert!(a.fs.contains_key(&user));
    }

    #[test]
    fn only_time_inside_the_period_is_dedicated() {
        let mut a = Accounting::new(50);
        a.record(&done(1, 4, Some(100), 0, 0, 80), 80, &FS);
        assert_eq!(a.total.ps_dedicated, 4.0 * 30.0);
    }

    #[test]
    fn never_started_jobs_do_not_count() {
        let mut a = Accounting::new(0);
        let mut j = done(1, 1, Some(10), 0, 0, 0);
        j.run = None;
        assert!(!a.record(&j, 5, &FS));
        assert_eq!(a.total.jobs, 0);
    }

    #[test]
    fn fairshare_splits_usage_across_intervals_and_counts_active_jobs() {
        let mut a = Accounting::new(0);
        // 1 proc from 150 to 250: 50 in interval 1, 50 in interval 2.
        a.record(&done(1, 1, Some(1000), 150, 150, 250), 250, &FS);
        let mut running = done(2, 2, Some(1000), 200, 200, 0);
        running.completion = None;
        let f = a.fairshare([&running].into_iter(), &FS, 290);
        // current interval 2: job1 50 + job2 2*90; interval 1: job1 50.
        assert_eq!(f.total, vec![50.0 + 180.0, 50.0, 0.0]);
        let alice = &f.creds[&(CredKind::User, "alice".into())];
        assert_eq!(alice, &f.total);
        let pct = FairshareUsage::decayed_percent(&[50.0, 50.0, 0.0], &f.total, 0.5);
        assert!((pct - 100.0 * 75.0 / 255.0).abs() < 1e-9);
        // old intervals fall out of the window
        a.trim(&FS, 1000);
        assert!(a.fs_total.is_empty());
    }

    #[test]
    fn decayed_usage_kept_between_updates_equals_a_fresh_one_bit_for_bit() {
        let w = FsWindow {
            interval: 100,
            depth: 3,
            decay: 0.6,
            charge: FsCharge::Dedicated,
        };
        let job = |id: u64, procs, start, end, u: &str, acct: Option<&str>| {
            let mut j = done(id, procs, Some(10_000), 0, start, end);
            j.cred.user = u.into();
            j.cred.account = acct.map(Into::into);
            j
        };
        let mut a = Accounting::new(0);
        // The same jobs recorded in an accounting for fairshare alone.
        let mut lean = Accounting::fairshare_only(0);
        let mut kept = DecayedUsage::default();
        // (start, end, user, account): jobs that run and then end, some
        // across interval boundaries, users sharing accounts and coming back.
        let plan = [
            (0, 150, "alice", Some("p")),
            (20, 90, "bob", None),
            (95, 420, "carol", Some("p")),
            (130, 260, "alice", None),
            (250, 255, "dave", Some("q")),
            (300, 640, "bob", Some("q")),
            (410, 700, "erin", None),
            (650, 990, "alice", Some("p")),
        ];
        let mut shared = BTreeMap::new();
        let mut t = 0;
        while t <= 1000 {
            let running: Vec<Job> = plan
                .iter()
                .enumerate()
                .filter(|(_, (s, e, _, _))| *s <= t && t < *e)
                .map(|(i, (s, e, u, acct))| {
                    let mut j = job(i as u64 + 1, i as u32 % 3 + 1, *s, *e, u, *acct);
                    j.completion = None;
                    j
                })
                .collect();
            // Every other update sees new copies of unchanged jobs.
            let running = share(running, &mut shared, t % 2 == 0);
            kept.update(&a, running.iter(), &w, t);
            let fresh = a.decayed_usage(running.iter(), &w, t);
            let got = kept.usage();
            // The fresh usage also equals the per-interval one decayed.
            let slow = a
                .fairshare(running.iter().map(|j| &**j), &w, t)
                .decayed(w.decay);
            same_bits(&fresh, &slow, t);
            same_bits(got, &fresh, t);
            // Jobs ending at the next step are recorded, as a driver does.
            t += 5;
            for (i, (s, e, u, acct)) in plan.iter().enumerate() {
                if *e > t - 5 && *e <= t {
                    let j = job(i as u64 + 1, i as u32 % 3 + 1, *s, *e, u, *acct);
                    assert!(lean.record(&j, *e, &w));
                    if i % 4 == 3 {
                        a.record(&j, *e, &w);
                        kept.invalidate();
                    } else {
                        kept.record(&mut a, &j, *e, &w);
                    }
                }
            }
        }
        assert!(kept.usage().total > 0.0);
        // The fairshare-only accounting keeps the same fairshare intervals,
        // bit for bit, and no statistics.
        assert_eq!(lean.fs_total, a.fs_total);
        assert_eq!(lean.fs, a.fs);
        assert_eq!(lean.fs_pairs, a.fs_pairs);
        assert!(!a.creds.is_empty() && a.total.jobs > 0);
        assert!(lean.creds.is_empty() && lean.total.jobs == 0 && lean.profile.creds.is_empty());
    }

    /// A driver may skip updates (the simulator does while one job is
    /// queued, or none can start): the kept usage after several records,
    /// interval changes and job starts without an update is still a fresh
    /// one, bit for bit.
    #[test]
    fn decayed_usage_updated_now_and_then_equals_a_fresh_one_bit_for_bit() {
        let w = FsWindow {
            interval: 100,
            depth: 3,
            decay: 0.6,
            charge: FsCharge::Dedicated,
        };
        let job = |id: u64, start, end, u: &str| {
            let mut j = done(id, id as u32 % 3 + 1, Some(10_000), 0, start, end);
            j.cred.user = u.into();
            j.cred.account = (id % 2 == 0).then(|| "p".into());
            j
        };
        let spans: Vec<(Time, Time, &str)> = (0..30)
            .map(|i| {
                let s = i * 37 % 900;
                (
                    s,
                    s + 5 + i * 53 % 240,
                    ["ann", "bo", "cy", "di"][i as usize % 4],
                )
            })
            .collect();
        for skip in [2, 3, 7] {
            let mut a = Accounting::new(0);
            let mut kept = DecayedUsage::default();
            let mut shared = BTreeMap::new();
            let mut updates = 0;
            let mut t = 0;
            while t <= 1200 {
                let running: Vec<Job> = spans
                    .iter()
                    .enumerate()
                    .filter(|(_, (s, e, _))| *s <= t && t < *e)
                    .map(|(i, (s, e, u))| {
                        let mut j = job(i as u64 + 1, *s, *e, u);
                        j.completion = None;
                        j
                    })
                    .collect();
                let running = share(running, &mut shared, true);
                // Updated at some steps only (a pseudo-random pattern).
                if (t / 5) % skip == 0 || (t / 5) % 11 == 4 {
                    kept.update(&a, running.iter(), &w, t);
                    updates += 1;
                    let fresh = a.decayed_usage(running.iter(), &w, t);
                    same_bits(kept.usage(), &fresh, t);
                }
                t += 5;
                for (i, (s, e, u)) in spans.iter().enumerate() {
                    if *e > t - 5 && *e <= t {
                        kept.record(&mut a, &job(i as u64 + 1, *s, *e, u), *e, &w);
                    }
                }
            }
            assert!(updates > 20 && updates < 200, "{updates}");
            assert!(kept.usage().total > 0.0);
        }
    }

    /// The kept usage with running jobs that come in any order, change
    /// credentials under the same id, share credentials across kinds, and
    /// are charged fractional rates (processor-equivalents): still the
    /// per-interval usage decayed, bit for bit, at every step.
    #[test]
    fn decayed_usage_kept_with_changing_jobs_equals_the_interval_usage_bit_for_bit() {
        for charge in [
            FsCharge::Dedicated,
            FsCharge::ProcEquivalents {
                procs: 7,
                mem_mb: 0,
            },
        ] {
            let w = FsWindow {
                interval: 60,
                depth: 4,
                decay: 0.7,
                charge,
            };
            let mut a = Accounting::new(5);
            let mut kept = DecayedUsage::default();
            // (start, end): each job runs for a while, then is recorded.
            let spans: Vec<(Time, Time)> = (0..24)
                .map(|i| (i * 13 % 170, i * 13 % 170 + 7 + i * 29 % 150))
                .collect();
            let users = ["u1", "u2", "g1", "u3"];
            let job = |i: usize, t: Time| {
                let (s, e) = spans[i];
                let mut j = done(i as u64 + 1, (i % 5) as u32 + 1, Some(10_000), 0, s, e);
                // A job's user changes half-way through its run; a group is
                // also a user's name; some jobs have a QoS or a class.
                let late = t >= (s + e) / 2;
                j.cred.user = users[(i + usize::from(late)) % users.len()].into();
                j.cred.group = if i % 3 == 0 { "u1" } else { "g1" }.into();
                j.cred.qos = (i % 4 == 1).then(|| "high".into());
                j.cred.class = (i % 5 == 2).then(|| "batch".into());
                j.cred.account = (i % 2 == 0).then(|| "p".into());
                j
            };
            let mut shared = BTreeMap::new();
            let mut t = 0;
            while t <= 400 {
                let running: Vec<Job> = (0..spans.len())
                    .filter(|&i| spans[i].0 <= t && t < spans[i].1)
                    .map(|i| {
                        let mut j = job(i, t);
                        j.completion = None;
                        j
                    })
                    .collect();
                let mut running = share(running, &mut shared, true);
                if t % 30 == 0 {
                    running.reverse();
                }
                kept.update(&a, running.iter(), &w, t);
                let slow = a
                    .fairshare(running.iter().map(|j| &**j), &w, t)
                    .decayed(w.decay);
                let got = kept.usage();
                same_bits(got, &slow, t);
                t += 3;
                for (i, (s, e)) in spans.iter().enumerate() {
                    if *e > t - 3 && *e <= t {
                        let _ = s;
                        kept.record(&mut a, &job(i, *e), *e, &w);
                    }
                }
            }
            assert!(kept.usage().total > 0.0);
        }
    }

    /// The kept usage is bit for bit the per-interval usage with a
    /// fractional kept interval (where the order of the additions shows),
    /// when it leaves, when a job starts exactly now and when time steps
    /// back.
    #[test]
    fn decayed_usage_kept_with_a_fractional_interval_equals_the_interval_usage_bit_for_bit() {
        let w = FsWindow {
            interval: 50,
            depth: 3,
            decay: 0.9,
            charge: FsCharge::Dedicated,
        };
        let mut a = Accounting::new(0);
        // A fractional kept interval (as `UTILIZEDPS` leaves) for alice.
        a.fs.entry((CredKind::User, "alice".to_string()))
            .or_default()
            .insert(0, 1.0 / 3.0);
        a.fs_total.insert(0, 1.0 / 3.0);
        let run = |id: u64, procs: u32, start: Time, user: &str| {
            let mut j = done(id, procs, Some(10_000), 0, start, start + 1);
            j.completion = None;
            j.cred.user = user.into();
            Arc::new(j)
        };
        // At 10 alice's window is 1/3 + 30 + 1 + 1 job by job, which is not
        // 1/3 + 32 in `f64`.
        let jobs = [
            run(1, 3, 0, "alice"),
            run(2, 2, 7, "bob"),
            run(3, 5, 40, "bob"),
            run(4, 1, 9, "alice"),
            run(5, 1, 9, "alice"),
        ];
        let mut kept = DecayedUsage::default();
        let check = |a: &Accounting, kept: &mut DecayedUsage, t: Time| {
            let running: Vec<&Arc<Job>> = jobs
                .iter()
                .filter(|j| j.run.as_ref().unwrap().start_time <= t)
                .collect();
            kept.update(a, running.iter().copied(), &w, t);
            let slow = a
                .fairshare(running.iter().map(|j| &***j), &w, t)
                .decayed(w.decay);
            same_bits(kept.usage(), &slow, t);
        };
        // 40: job 3 starts exactly now (not charged yet).
        for t in [0, 3, 7, 10, 20, 40, 41, 90, 60, 140, 151] {
            check(&a, &mut kept, t);
        }
        // The fractional interval is gone: whole numbers again.
        a.fs.clear();
        a.fs_total.clear();
        kept.invalidate();
        for t in [160, 170, 171, 230] {
            check(&a, &mut kept, t);
        }
        assert!(kept.usage().total > 0.0);
    }

    #[test]
    fn decayed_usage_equals_the_decayed_interval_usage_bit_for_bit() {
        let mut a = Accounting::new(0);
        let w = FsWindow {
            interval: 100,
            depth: 4,
            decay: 0.7,
            charge: FsCharge::Dedicated,
        };
        let user = |mut j: Job, u: &str, acct: Option<&str>| {
            j.cred.user = u.into();
            j.cred.account = acct.map(Into::into);
            j
        };
        // Completed jobs of three users, one long before the window.
        a.record(&user(done(1, 3, Some(500), 0, 10, 40), "old", None), 40, &w);
        a.record(
            &user(done(2, 1, Some(900), 120, 130, 777), "bob", Some("p")),
            777,
            &w,
        );
        a.record(
            &user(done(3, 5, Some(900), 300, 333, 801), "alice", None),
            801,
            &w,
        );
        // Running: one from before the window, one inside, one not started yet.
        let running = |id, procs, start, u: &str| {
            let mut j = user(done(id, procs, Some(10_000), 0, start, 0), u, Some("q"));
            j.completion = None;
            j
        };
        let jobs = [
            running(4, 7, 37, "alice"),
            running(5, 2, 815, "carol"),
            running(6, 4, 1000, "bob"),
        ]
        .map(Arc::new);
        for now in [820, 899, 900, 950, 1333] {
            let slow = a
                .fairshare(jobs.iter().map(|j| &**j), &w, now)
                .decayed(w.decay);
            let fast = a.decayed_usage(jobs.iter(), &w, now);
            same_bits(&fast, &slow, now);
            assert!(fast.total > 0.0);
            // Without the users' running work: the same sums, no work.
            let mut d = DecayedUsage::default();
            d.count_active_work(false);
            d.update(&a, jobs.iter(), &w, now);
            let mut want = slow.clone();
            want.active.clear();
            assert!(!slow.active.is_empty());
            same_bits(d.usage(), &want, now);
        }
    }

    #[test]
    fn fspolicy_chooses_what_a_job_is_charged() {
        // 2 processors and 3,000 MB of a 10-processor, 10,000 MB machine for
        // 100 s (one interval), having used 50 processor-seconds.
        let mut j = done(1, 2, Some(1000), 0, 0, 100);
        j.run.as_mut().unwrap().alloc[0].mem_mb = 3000;
        let charged = |j: &Job, charge: FsCharge, used: Option<f64>| {
            let fs = FsWindow {
                interval: 1000,
                charge,
                ..FS
            };
            let mut j = j.clone();
            j.cpu_ms = used.map(|s| (s * 1000.0) as u64);
            let mut a = Accounting::new(0);
            a.record(&j, 100, &fs);
            a.fs_total[&0]
        };
        assert_eq!(charged(&j, FsCharge::Dedicated, Some(50.0)), 200.0);
        // PE = max(2/10, 3000/10000) × 10 = 3 processors.
        let pe = FsCharge::ProcEquivalents {
            procs: 10,
            mem_mb: 10_000,
        };
        assert!((charged(&j, pe, None) - 300.0).abs() < 1e-9);
        // Memory below its share: the processors decide.
        j.run.as_mut().unwrap().alloc[0].mem_mb = 1000;
        assert!((charged(&j, pe, None) - 200.0).abs() < 1e-9);
        assert!((charged(&j, FsCharge::Utilized, Some(50.0)) - 50.0).abs() < 1e-9);
        // Not measured: its dedicated processor-seconds.
        assert_eq!(charged(&j, FsCharge::Utilized, None), 200.0);
        // A running job is charged at its rate up to now.
        let mut running = done(2, 2, Some(1000), 0, 0, 0);
        running.completion = None;
        running.run.as_mut().unwrap().alloc[0].mem_mb = 3000;
        let fs = FsWindow {
            interval: 1000,
            charge: pe,
            ..FS
        };
        let f = Accounting::new(0).fairshare([&running].into_iter(), &fs, 10);
        assert!((f.total[0] - 30.0).abs() < 1e-9);
    }

    #[test]
    fn fairshare_usage_is_kept_per_account_and_user_pair() {
        let w = FsWindow {
            interval: 100,
            depth: 2,
            decay: 1.0,
            charge: FsCharge::Dedicated,
        };
        let mut a = Accounting::new(0);
        let mut j = done(1, 2, Some(50), 0, 0, 50);
        j.cred.account = Some("chem".into());
        a.record(&j, 50, &w);
        // A job without an account counts for no pair.
        a.record(&done(2, 1, Some(50), 0, 0, 50), 50, &w);
        let u = a.fairshare(std::iter::empty(), &w, 60);
        assert_eq!(
            u.pairs,
            [(("chem".to_string(), "alice".to_string()), vec![100.0, 0.0])]
                .into_iter()
                .collect()
        );
        a.reset_fairshare();
        assert!(a.fs_pairs.is_empty());
    }

    #[test]
    fn decayed_usage_weighs_older_intervals_by_the_decay() {
        // Maui's example: John 60, 0, 10, 50 of 110, 125, 100, 150, decay 0.5.
        let u = FairshareUsage {
            total: vec![110.0, 125.0, 100.0, 150.0],
            creds: [(
                (CredKind::User, "john".to_string()),
                vec![60.0, 0.0, 10.0, 50.0],
            )]
            .into_iter()
            .collect(),
            active: Default::default(),
            pairs: Default::default(),
        };
        let d = u.decayed(0.5);
        assert!((d.total - (110.0 + 62.5 + 25.0 + 18.75)).abs() < 1e-9);
        assert!((d.of(CredKind::User, "john") - (60.0 + 2.5 + 6.25)).abs() < 1e-9);
        let pct = d.percent(CredKind::User, "john");
        let expected = FairshareUsage::decayed_percent(
            &u.creds[&(CredKind::User, "john".into())],
            &u.total,
            0.5,
        );
        assert!((pct - expected).abs() < 1e-9);
        // No decay: plain sums.
        assert_eq!(u.decayed(1.0).total, 485.0);
    }

    #[test]
    fn active_usage_counts_up_to_now() {
        let mut j = done(1, 3, Some(100), 0, 10, 0);
        j.completion = None;
        let (p, ded, left) = active_usage(&j, 0, 40).unwrap();
        assert_eq!((p, ded, left), (3, 90.0, 210.0));
    }
}
