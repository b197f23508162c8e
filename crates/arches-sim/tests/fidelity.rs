//! Fidelity of the simulator: exact schedules on small constructed
//! workloads, and replays of the real traces in `shared/traces` checked
//! against the reference results of `peer-results.md` (pyss).

use std::path::PathBuf;

use arches_core::policy::{BackfillPolicy, ReservationBucket};
use arches_core::{JobId, Policy, Time};
use arches_sim::swf::{read_swf, to_jobs, SwfOptions};
use arches_sim::{machine, summarize, JobRecord, SimJob, Simulation};

fn policy(backfill: BackfillPolicy, depth: u32) -> Policy {
    Policy {
        backfill,
        reservation_buckets: vec![ReservationBucket { depth, qos: None }],
        ..Policy::default()
    }
}

fn fcfs() -> Policy {
    policy(BackfillPolicy::None, 1)
}

/// Runs `jobs` on `procs` processors and returns (job, start, end) by job id.
fn schedule_of(procs: u32, policy: Policy, jobs: Vec<SimJob>) -> Vec<(JobId, Time, Time)> {
    let mut sim = Simulation::new(machine(procs, procs), policy, jobs);
    sim.run().unwrap();
    let mut out: Vec<_> = sim
        .records()
        .iter()
        .map(|r| (r.id, r.start, r.end))
        .collect();
    out.sort();
    out
}

/// Every job starts after its submission and the machine is never
/// over-subscribed.
fn check_feasible(records: &[JobRecord], procs: u32) {
    let mut edges: Vec<(Time, i64)> = Vec::new();
    for r in records {
        assert!(r.start >= r.submit, "job {} starts before submit", r.id);
        assert!(
            r.end >= r.start && r.end - r.start <= r.walltime,
            "job {}",
            r.id
        );
        edges.push((r.start, i64::from(r.procs)));
        edges.push((r.end, -i64::from(r.procs)));
    }
    // Ends before starts at the same instant.
    edges.sort_by_key(|&(t, d)| (t, d));
    let mut used = 0;
    for (t, d) in edges {
        used += d;
        assert!(used <= i64::from(procs), "over-subscribed at t={t}: {used}");
    }
}

#[test]
fn fcfs_blocks_behind_the_head_job() {
    let jobs = vec![
        SimJob::new(1, 0, 2, 100, 100),
        SimJob::new(2, 1, 4, 50, 50),
        SimJob::new(3, 2, 1, 10, 10),
    ];
    assert_eq!(
        schedule_of(4, fcfs(), jobs),
        vec![(1, 0, 100), (2, 100, 150), (3, 150, 160)]
    );
}

#[test]
fn overrun_is_cut_at_the_walltime_and_early_end_frees_processors() {
    // Job 1 asks 100 s but would run 500: killed at 100. Job 2 ends early.
    let jobs = vec![
        SimJob::new(1, 0, 3, 100, 500),
        SimJob::new(2, 0, 1, 400, 30),
        SimJob::new(3, 5, 2, 60, 60),
        SimJob::new(4, 6, 1, 60, 60),
    ];
    assert_eq!(
        schedule_of(4, fcfs(), jobs),
        vec![(1, 0, 100), (2, 0, 30), (3, 100, 160), (4, 100, 160)]
    );
}

#[test]
fn equal_submit_times_are_served_by_job_number() {
    let jobs = vec![
        SimJob::new(9, 10, 4, 20, 20),
        SimJob::new(3, 10, 4, 20, 20),
        SimJob::new(5, 10, 4, 20, 20),
    ];
    assert_eq!(
        schedule_of(4, fcfs(), jobs),
        vec![(3, 10, 30), (5, 30, 50), (9, 50, 70)]
    );
}

fn easy() -> Policy {
    policy(BackfillPolicy::FirstFit, 1)
}

#[test]
fn easy_backfills_a_short_job_that_ends_before_the_reservation() {
    // Job 2 (whole machine) waits for job 1; job 3 fits beside job 1 and
    // ends before job 2's reservation at t=100; job 4 would delay it.
    let jobs = vec![
        SimJob::new(1, 0, 3, 100, 100),
        SimJob::new(2, 1, 4, 50, 50),
        SimJob::new(3, 2, 1, 90, 90),
        SimJob::new(4, 3, 1, 200, 200),
    ];
    assert_eq!(
        schedule_of(4, easy(), jobs),
        vec![(1, 0, 100), (2, 100, 150), (3, 2, 92), (4, 150, 350)]
    );
}

#[test]
fn a_submission_is_scheduled_before_a_simultaneous_early_termination() {
    // pyss order: job 3 arrives at t=50 while job 1 (planned to t=100) is
    // still running, fits beside it, is backfilled ahead of job 2's reservation, and then
    // job 1's termination at the same instant leaves job 2 one processor
    // short until job 3 ends at t=60.
    let jobs = vec![
        SimJob::new(1, 0, 3, 100, 50),
        SimJob::new(2, 10, 4, 100, 100),
        SimJob::new(3, 50, 1, 10, 10),
    ];
    assert_eq!(
        schedule_of(4, easy(), jobs),
        vec![(1, 0, 50), (2, 60, 160), (3, 50, 60)]
    );
}

#[test]
fn a_job_larger_than_the_machine_is_skipped_not_hung() {
    let jobs = vec![SimJob::new(1, 0, 8, 10, 10), SimJob::new(2, 0, 4, 10, 10)];
    let mut sim = Simulation::new(machine(4, 2), fcfs(), jobs);
    sim.run().unwrap();
    assert_eq!(sim.skipped().len(), 1);
    assert_eq!(sim.skipped()[0].id, 1);
    assert!(sim.skipped()[0].reason.contains("needs 8 processors"));
    assert_eq!(sim.records().len(), 1);
    assert!(sim.stranded().is_empty());
}

#[test]
fn until_stops_the_clock_and_resuming_gives_the_same_schedule() {
    let jobs: Vec<SimJob> = (1..=40)
        .map(|i| {
            SimJob::new(
                i,
                (i as i64) * 7,
                1 + (i as u32 * 5) % 4,
                90,
                20 + (i as i64 * 13) % 70,
            )
        })
        .collect();
    let straight = schedule_of(4, fcfs(), jobs.clone());
    let mut sim = Simulation::new(machine(4, 4), fcfs(), jobs);
    sim.run_until(100).unwrap();
    assert_eq!(sim.now(), 100);
    assert!(sim.state().active_count() > 0, "jobs are running at t=100");
    assert!(sim.last_plan().is_some());
    assert!(sim.records().iter().all(|r| r.end <= 100));
    sim.step(3).unwrap();
    assert!(sim.now() > 100);
    sim.run().unwrap();
    let mut resumed: Vec<_> = sim
        .records()
        .iter()
        .map(|r| (r.id, r.start, r.end))
        .collect();
    resumed.sort();
    assert_eq!(resumed, straight);
}

#[test]
fn empty_workload_gives_an_empty_summary() {
    let mut sim = Simulation::new(machine(4, 4), fcfs(), Vec::new());
    sim.run().unwrap();
    let s = summarize(sim.records(), 4);
    assert_eq!((s.jobs, s.makespan_s), (0, 0));
}

/// `shared/traces` found from this crate upwards, or `ARCHES_TRACES`.
fn traces_dir() -> Option<PathBuf> {
    if let Some(d) = std::env::var_os("ARCHES_TRACES") {
        return Some(PathBuf::from(d));
    }
    let here = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    here.ancestors()
        .map(|a| a.join("shared/traces"))
        .find(|p| p.join("KTH-SP2-1996-2.swf.gz").exists())
}

fn load(name: &str, procs: u32, min_job_id: Option<u64>, limit: usize) -> Option<Vec<SimJob>> {
    let Some(dir) = traces_dir() else {
        eprintln!("traces not found (set ARCHES_TRACES): skipping {name}");
        return None;
    };
    let opts = SwfOptions {
        min_job_id,
        ..SwfOptions::default()
    };
    let trace = read_swf(&dir.join(name), &opts).unwrap();
    let (mut jobs, _) = to_jobs(&trace.records, procs, &opts);
    jobs.truncate(limit);
    Some(jobs)
}

#[test]
fn kth_fcfs_matches_pyss_exactly() {
    // peer-results.md, KTH-SP2 jobs >= 15 on 100 processors, FCFS no backfill:
    // 28,475 jobs, avg wait 354,169 s, bsld 6,829.28, utilization 0.6985,
    // makespan 28,781,494 s, max wait 946,685 s.
    let Some(jobs) = load("KTH-SP2-1996-2.swf.gz", 100, Some(15), usize::MAX) else {
        return;
    };
    let mut sim = Simulation::new(machine(100, 100), fcfs(), jobs);
    sim.run().unwrap();
    check_feasible(sim.records(), 100);
    let s = summarize(sim.records(), 100);
    assert_eq!(s.jobs, 28_475);
    assert_eq!(s.avg_wait_s.round(), 354_169.0);
    assert_eq!((s.avg_bsld10 * 100.0).round(), 682_928.0);
    assert_eq!((s.utilization * 10_000.0).round(), 6985.0);
    assert_eq!(s.makespan_s, 28_781_494);
    assert_eq!(s.max_wait_s, 946_685);
}

#[test]
fn kth_easy_matches_pyss_exactly() {
    // peer-results.md, KTH-SP2 jobs >= 15 on 100 processors, EASY: avg wait
    // 6,899 s, bsld 92.88, utilization 0.6990, makespan 28,763,776 s, max
    // wait 262,194 s; pyss-style wait 115.55 min.
    let Some(jobs) = load("KTH-SP2-1996-2.swf.gz", 100, Some(15), usize::MAX) else {
        return;
    };
    let mut sim = Simulation::new(machine(100, 100), easy(), jobs);
    sim.run().unwrap();
    check_feasible(sim.records(), 100);
    let s = summarize(sim.records(), 100);
    assert_eq!(s.jobs, 28_475);
    assert_eq!(s.avg_wait_s.round(), 6_899.0);
    assert_eq!((s.avg_bsld10 * 100.0).round(), 9_288.0);
    assert_eq!((s.utilization * 10_000.0).round(), 6990.0);
    assert_eq!(s.makespan_s, 28_763_776);
    assert_eq!(s.max_wait_s, 262_194);
    assert_eq!((s.pyss.avg_wait_min * 100.0).round(), 11_555.0);
}

#[test]
fn first_jobs_of_every_trace_replay_feasibly_under_each_policy() {
    for (name, procs, min) in [
        ("KTH-SP2-1996-2.swf.gz", 100, Some(15)),
        ("SDSC-SP2-1998-4.2-cln.swf.gz", 128, None),
        ("CTC-SP2-1996-3.1-cln.swf.gz", 512, None),
    ] {
        let Some(jobs) = load(name, procs, min, 3000) else {
            return;
        };
        for p in [
            fcfs(),
            policy(BackfillPolicy::FirstFit, 1),
            policy(BackfillPolicy::FirstFit, u32::MAX),
        ] {
            let mut sim = Simulation::new(machine(procs, procs), p, jobs.clone());
            sim.run().unwrap();
            assert_eq!(sim.records().len(), 3000, "{name}");
            check_feasible(sim.records(), procs);
        }
    }
}
