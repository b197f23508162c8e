//! Simulation metrics, with the definitions of `peer-results.md`:
//!
//! - wait = start − submit (s);
//! - bounded slowdown (10 s threshold) = max(1, (wait + run) / max(run, 10));
//! - utilization = Σ(busy × procs) / (P × makespan), makespan = last end −
//!   first submit; busy is the time a job's processors were in use (its run
//!   less the time it spent suspended; with preemption the summary adds the
//!   runs that were interrupted by a requeue, checkpoint or cancel);
//! - "all jobs" averages over every simulated job; the pyss-style statistics
//!   (Tsafrir, Etsion & Feitelson 2007) are [`pyss_stats`]: pyss's own
//!   computation, which drops jobs with a 1-second estimate on 1 processor,
//!   the first 1 % of jobs in finish order (warm-up) and every job from the
//!   first one finishing after the last submission on (cool-down).
//!
//! The breakdown splits jobs by size (processors) and by length (run time):
//! a job is *small* when it uses at most 1/16 of the machine and *short* when
//! it runs at most one hour.

use std::io::Write;

use arches_core::{JobId, Secs, Time};
use serde::Serialize;

/// Bounded-slowdown threshold (s).
pub const BSLD_THRESHOLD: Secs = 10;
/// Run time at or under which a job counts as short (s).
pub const SHORT_JOB_SECS: Secs = 3600;
/// A small job uses at most this fraction of the machine (1/`SMALL_JOB_DIVISOR`).
pub const SMALL_JOB_DIVISOR: u32 = 16;

/// One finished job.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JobRecord {
    pub id: JobId,
    pub submit: Time,
    pub start: Time,
    pub end: Time,
    pub procs: u32,
    pub walltime: Secs,
    /// True run time as replayed (already cut at the walltime).
    pub runtime: Secs,
    pub backfilled: bool,
    /// Time spent suspended between start and end (its processors free).
    pub suspended: Secs,
    /// A malleable job's processor-seconds beyond `procs` over its run
    /// (grown: more; released below its start size: fewer). 0 for a rigid job.
    pub elastic_proc_s: i64,
}

impl JobRecord {
    pub fn wait(&self) -> Secs {
        self.start - self.submit
    }

    /// Time actually run (end − start).
    pub fn run(&self) -> Secs {
        self.end - self.start
    }

    /// Time its processors were in use: the run less suspensions.
    pub fn busy(&self) -> Secs {
        (self.run() - self.suspended).max(0)
    }

    /// Bounded slowdown with a 10 s threshold.
    pub fn bsld(&self) -> f64 {
        let run = self.run();
        ((self.wait() + run) as f64 / run.max(BSLD_THRESHOLD) as f64).max(1.0)
    }
}

/// Averages over a set of jobs.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Averages {
    pub jobs: usize,
    pub avg_wait_s: f64,
    pub avg_bsld10: f64,
    pub max_wait_s: Secs,
    pub backfilled_jobs: usize,
}

impl Averages {
    fn of<'a>(jobs: impl Iterator<Item = &'a JobRecord>) -> Self {
        let mut acc = Sums::default();
        for j in jobs {
            acc.add(j);
        }
        acc.averages()
    }
}

/// The running sums behind [`Averages`], jobs added in order (the float
/// sums are those of the jobs in that order).
#[derive(Debug, Clone, Copy, Default)]
struct Sums {
    jobs: usize,
    wait: f64,
    bsld: f64,
    max_wait_s: Secs,
    backfilled_jobs: usize,
}

impl Sums {
    fn add(&mut self, j: &JobRecord) {
        self.jobs += 1;
        self.wait += j.wait() as f64;
        self.bsld += j.bsld();
        self.max_wait_s = self.max_wait_s.max(j.wait());
        self.backfilled_jobs += usize::from(j.backfilled);
    }

    fn averages(&self) -> Averages {
        let mut a = Averages {
            jobs: self.jobs,
            max_wait_s: self.max_wait_s,
            backfilled_jobs: self.backfilled_jobs,
            ..Averages::default()
        };
        if a.jobs > 0 {
            a.avg_wait_s = self.wait / a.jobs as f64;
            a.avg_bsld10 = self.bsld / a.jobs as f64;
        }
        a
    }
}

/// One row of the size/length breakdown.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Bucket {
    pub label: String,
    #[serde(flatten)]
    pub stats: Averages,
    /// Share of the bucket's jobs started by backfill.
    pub backfilled_share: f64,
}

/// The size and length breakdown.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Breakdown {
    pub by_size: Vec<Bucket>,
    pub by_length: Vec<Bucket>,
    /// Share of small (≤ P/16 processors) and short (≤ 1 h) jobs that backfilled.
    pub small_short_backfilled_share: f64,
    pub small_short_jobs: usize,
}

/// The summary written by `--summary`.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Summary {
    pub machine_procs: u32,
    pub jobs: usize,
    pub avg_wait_s: f64,
    pub avg_bsld10: f64,
    pub max_wait_s: Secs,
    pub utilization: f64,
    pub makespan_s: Secs,
    pub backfilled_jobs: usize,
    /// Preemptions carried out (a job preempted twice counts twice).
    pub preemptions: usize,
    /// Distinct jobs preempted at least once.
    pub preempted_jobs: usize,
    /// Of the preemptions, jobs cancelled (PREEMPTPOLICY CANCEL or no other
    /// method).
    pub preempt_cancelled: usize,
    /// Processor-seconds of work lost by requeued or cancelled jobs (they
    /// start over or never finish). Suspensions lose none, and neither do
    /// checkpoints: a checkpointed job restarts from the point it was
    /// checkpointed and runs only what was left (the restart overhead is not
    /// modelled).
    pub preempt_lost_proc_s: f64,
    /// Jobs with the PREEMPTOR attribute that finished, and their average
    /// wait (whether they had to preempt or not).
    pub preemptor_jobs: usize,
    pub preemptor_avg_wait_s: f64,
    /// Of those, the jobs that preempted others.
    pub preemptors_preempting: usize,
    pub iterations: u64,
    pub sim_wall_s: f64,
    /// pyss-style statistics (wait in minutes, as the 2007 paper prints it).
    pub pyss: PyssStats,
    pub breakdown: Breakdown,
    /// Jobs larger than the machine, skipped with a reason.
    pub skipped: Vec<SkippedEntry>,
    /// Jobs still queued when no event was left (they could never start).
    pub never_started: Vec<JobId>,
    /// Malformed input lines skipped (`--skip-malformed`).
    pub malformed_lines: usize,
    /// Trace jobs asking for more processors than the machine has, capped
    /// at the machine size (pyss's convention) and replayed.
    pub capped_jobs: usize,
    /// Trace jobs dropped by `--sanitize`.
    pub sanitize_dropped: usize,
    /// SWF lines whose job number or submit time is unknown (-1): skipped,
    /// as the job cannot be placed in time.
    pub unknown_lines: usize,
    /// SWF partial-execution lines (status 2, 3 or 4) of checkpointed or
    /// swapped jobs: skipped, the job's summary line being the job.
    pub partial_lines: usize,
    /// `--staging`: the model and the compute idle waiting for data.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub staging: Option<crate::staging::StagingSummary>,
    /// Malleable jobs and resize requests, when the workload has any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub malleable: Option<MalleableSummary>,
}

/// What malleable jobs and resize requests did.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct MalleableSummary {
    /// Malleable jobs that finished.
    pub jobs: usize,
    /// Of those, the jobs that grew at least once.
    pub grown_jobs: usize,
    /// Grows applied (automatic and requested).
    pub grows: usize,
    /// Their average wait (start − submit).
    pub avg_wait_s: f64,
    /// Resize requests made (`mjobctl -m proccount+=N`).
    pub resize_requests: usize,
    /// Of those, the ones granted before their job ended.
    pub resize_granted: usize,
    /// Wait from the request to its grant, over the granted ones.
    pub resize_avg_wait_s: f64,
    pub resize_max_wait_s: Secs,
    /// Releases made (`proccount-=N`), effective at once.
    pub releases: usize,
}

/// pyss-style statistics.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct PyssStats {
    pub jobs: usize,
    pub avg_wait_min: f64,
    pub avg_bsld10: f64,
}

/// A skipped job in the summary.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SkippedEntry {
    pub job: JobId,
    pub reason: String,
}

/// Computes the summary (with `iterations` and `sim_wall_s` left to the caller).
pub fn summarize(records: &[JobRecord], machine_procs: u32) -> Summary {
    let all = Averages::of(records.iter());
    let mut s = Summary {
        machine_procs,
        jobs: all.jobs,
        avg_wait_s: all.avg_wait_s,
        avg_bsld10: all.avg_bsld10,
        max_wait_s: all.max_wait_s,
        backfilled_jobs: all.backfilled_jobs,
        ..Summary::default()
    };
    if records.is_empty() {
        return s;
    }
    let first_submit = records.iter().map(|r| r.submit).min().unwrap_or(0);
    let last_end = records.iter().map(|r| r.end).max().unwrap_or(0);
    s.makespan_s = last_end - first_submit;
    let work: f64 = records
        .iter()
        .map(|r| r.busy() as f64 * f64::from(r.procs) + r.elastic_proc_s as f64)
        .sum();
    if s.makespan_s > 0 && machine_procs > 0 {
        s.utilization = work / (f64::from(machine_procs) * s.makespan_s as f64);
    }
    s.pyss = pyss_stats(records);
    s.breakdown = breakdown(records, machine_procs);
    s
}

/// pyss-style statistics over records in finish order, computed exactly as
/// pyss's `print_statistics` does: jobs are walked in finish order (stable,
/// so equal finish times keep the order they finished in); a *tiny* job (a
/// 1-second estimate on 1 processor — the placeholders, and genuine 1-second
/// serial jobs) is skipped and no longer counted in the job total; a job
/// whose position (tiny ones included) is within the first 1 % of that
/// shrinking total is skipped as warm-up (only with at least 100 jobs); the
/// walk stops at the first job finishing after the last submission
/// (cool-down).
pub fn pyss_stats(records: &[JobRecord]) -> PyssStats {
    let mut by_finish: Vec<&JobRecord> = records.iter().collect();
    by_finish.sort_by_key(|r| r.end);
    let last_submit = records.iter().map(|r| r.submit).max().unwrap_or(0);
    let mut size = records.len();
    let mut kept = Vec::with_capacity(size);
    for (i, r) in by_finish.into_iter().enumerate() {
        if r.walltime == 1 && r.procs == 1 {
            size -= 1;
            continue;
        }
        if size >= 100 && i < size / 100 {
            continue;
        }
        if r.end > last_submit {
            break;
        }
        kept.push(r);
    }
    let a = Averages::of(kept.into_iter());
    PyssStats {
        jobs: a.jobs,
        avg_wait_min: a.avg_wait_s / 60.0,
        avg_bsld10: a.avg_bsld10,
    }
}

fn breakdown(records: &[JobRecord], machine_procs: u32) -> Breakdown {
    let sizes: [(u32, &str); 6] = [
        (1, "1"),
        (4, "2-4"),
        (16, "5-16"),
        (64, "17-64"),
        (256, "65-256"),
        (u32::MAX, ">256"),
    ];
    let lengths: [(Secs, &str); 5] = [
        (600, "<=10m"),
        (3600, "10m-1h"),
        (4 * 3600, "1h-4h"),
        (12 * 3600, "4h-12h"),
        (Secs::MAX, ">12h"),
    ];
    // One pass: every job adds to its size bucket and its length bucket
    // (in record order, as a pass per bucket would).
    let mut by_size_sums = sizes.map(|_| Sums::default());
    let mut by_length_sums = lengths.map(|_| Sums::default());
    let small = (machine_procs / SMALL_JOB_DIVISOR).max(1);
    let (mut ss_jobs, mut ss_backfilled) = (0, 0);
    for r in records {
        // Buckets `(lo, hi]`, the first from 0 (sizes) or -1 (lengths).
        if r.procs > 0 {
            if let Some(i) = sizes.iter().position(|&(hi, _)| r.procs <= hi) {
                by_size_sums[i].add(r);
            }
        }
        let run = r.run();
        if run > -1 {
            if let Some(i) = lengths.iter().position(|&(hi, _)| run <= hi) {
                by_length_sums[i].add(r);
            }
        }
        if r.procs <= small && run <= SHORT_JOB_SECS {
            ss_jobs += 1;
            ss_backfilled += usize::from(r.backfilled);
        }
    }
    Breakdown {
        by_size: buckets(&sizes, &by_size_sums),
        by_length: buckets(&lengths, &by_length_sums),
        small_short_backfilled_share: share(ss_backfilled, ss_jobs),
        small_short_jobs: ss_jobs,
    }
}

/// The rows of the buckets `(upper bound, label)` that hold jobs.
fn buckets<T>(bounds: &[(T, &str)], sums: &[Sums]) -> Vec<Bucket> {
    bounds
        .iter()
        .zip(sums)
        .filter(|(_, s)| s.jobs > 0)
        .map(|((_, label), s)| {
            let stats = s.averages();
            Bucket {
                label: label.to_string(),
                backfilled_share: share(stats.backfilled_jobs, stats.jobs),
                stats,
            }
        })
        .collect()
}

fn share(part: usize, whole: usize) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 / whole as f64
    }
}

/// Writes the per-job CSV (`--jobs-csv`), in job-number order.
pub fn write_jobs_csv(records: &[JobRecord], mut out: impl Write) -> std::io::Result<()> {
    let mut rs: Vec<&JobRecord> = records.iter().collect();
    rs.sort_by_key(|r| r.id);
    writeln!(
        out,
        "job_id,submit,start,end,procs,walltime,runtime,wait,backfilled"
    )?;
    for r in rs {
        writeln!(
            out,
            "{},{},{},{},{},{},{},{},{}",
            r.id,
            r.submit,
            r.start,
            r.end,
            r.procs,
            r.walltime,
            r.run(),
            r.wait(),
            u8::from(r.backfilled)
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(id: JobId, submit: Time, start: Time, run: Secs, procs: u32) -> JobRecord {
        JobRecord {
            id,
            submit,
            start,
            end: start + run,
            procs,
            walltime: run,
            runtime: run,
            backfilled: false,
            suspended: 0,
            elastic_proc_s: 0,
        }
    }

    #[test]
    fn definitions_match_peer_results() {
        let rs = [rec(1, 0, 0, 100, 2), rec(2, 0, 100, 5, 4)];
        let s = summarize(&rs, 4);
        assert_eq!(s.jobs, 2);
        assert_eq!(s.avg_wait_s, 50.0);
        // bsld: job 1 = 1; job 2 = (100 + 5) / 10 = 10.5.
        assert!((s.avg_bsld10 - 5.75).abs() < 1e-12);
        assert_eq!(s.makespan_s, 105);
        assert!((s.utilization - (200.0 + 20.0) / (4.0 * 105.0)).abs() < 1e-12);
        assert_eq!(s.max_wait_s, 100);
    }

    #[test]
    fn empty_is_empty() {
        let s = summarize(&[], 8);
        assert_eq!((s.jobs, s.makespan_s, s.utilization), (0, 0, 0.0));
        assert_eq!(s.pyss, PyssStats::default());
    }

    #[test]
    fn pyss_style_drops_warmup_cooldown_and_tiny_jobs_as_pyss_does() {
        // 200 jobs submitted at t = i, each waits i seconds and runs 10 s.
        let mut rs: Vec<JobRecord> = (0..200)
            .map(|i| rec(i + 1, i as i64, 2 * i as i64, 10, 1))
            .collect();
        // Warm-up: the first 2 in finish order. Last submit 199; the first
        // end > 199 is job i with 2i + 10 > 199 → i = 95, excluded: 2..=94.
        assert_eq!(pyss_stats(&rs).jobs, 93);
        // A tiny job (1 s estimate, 1 processor) is not counted; a 1-second
        // job on 2 processors is.
        rs[50].walltime = 1;
        assert_eq!(pyss_stats(&rs).jobs, 92);
        rs[60].walltime = 1;
        rs[60].procs = 2;
        assert_eq!(pyss_stats(&rs).jobs, 92);
        // Tiny jobs shrink the total the 1 % is taken of but count in the
        // position: 101 jobs, the first to finish tiny, leave a total of 100
        // and a warm-up of 1 position, which the tiny job has used up.
        let mut hundred: Vec<JobRecord> = (0..100)
            .map(|i| rec(i + 1, i as i64, i as i64 + 1000, 10, 1))
            .collect();
        hundred.push(rec(101, 5000, 5000, 10, 1));
        hundred[0].walltime = 1;
        let p = pyss_stats(&hundred);
        // Kept: the 99 others finishing by the last submission (5000).
        assert_eq!(p.jobs, 99, "{p:?}");
    }

    #[test]
    fn csv_has_the_documented_columns() {
        let mut out = Vec::new();
        write_jobs_csv(&[rec(2, 0, 5, 10, 3), rec(1, 0, 0, 5, 1)], &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert_eq!(
            text,
            "job_id,submit,start,end,procs,walltime,runtime,wait,backfilled\n\
             1,0,0,5,1,5,5,0,0\n2,0,5,15,3,10,10,5,0\n"
        );
    }
}
