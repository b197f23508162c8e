//! Fidelity of the simulator: exact schedules on small constructed
//! workloads, and replays of the real traces in `data/traces` checked
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
    let summary = sim.summary();
    assert_eq!((summary.jobs, summary.skipped[0].job), (1, 1));
    assert!(summary.iterations >= 1 && summary.never_started.is_empty());
}

/// Forty jobs of 1 to 4 processors for 4 processors, submitted 7 s apart,
/// each running 20 to 89 s of a 90 s limit.
fn forty_jobs() -> Vec<SimJob> {
    (1..=40)
        .map(|i| {
            SimJob::new(
                i,
                (i as i64) * 7,
                1 + (i as u32 * 5) % 4,
                90,
                20 + (i as i64 * 13) % 70,
            )
        })
        .collect()
}

/// A lean iteration's starts hand their allocations to the state's start
/// events; the last plan still shows them, each equal to the started job's.
#[test]
fn the_last_plan_shows_its_starts_allocations() {
    let jobs = forty_jobs();
    let mut sim = Simulation::new(machine(4, 4), policy(BackfillPolicy::FirstFit, 1), jobs);
    let mut checked = 0;
    while sim.step(1).unwrap() == 1 {
        let Some(plan) = sim.last_plan() else {
            continue;
        };
        for start in &plan.starts {
            assert!(!start.alloc.is_empty(), "job {} at {}", start.job, plan.now);
            let run = sim.state().job(start.job).and_then(|j| j.run.as_ref());
            if let Some(run) = run.filter(|r| r.start_time == plan.now) {
                assert_eq!(run.alloc, start.alloc, "job {} at {}", start.job, plan.now);
                checked += 1;
            }
        }
    }
    assert!(
        sim.complete_plans() == 0,
        "the replay ran the lean iteration"
    );
    assert!(checked >= 20, "{checked} starts checked");
}

#[test]
fn until_stops_the_clock_and_resuming_gives_the_same_schedule() {
    let jobs = forty_jobs();
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
fn stage_in_delays_eligibility_and_wakes_the_scheduler() {
    // Job 2 is staged in for 40 s: nothing else happens at t=50, so only
    // the scheduler's wake-up starts it.
    let mut staged = SimJob::new(2, 10, 1, 10, 10);
    staged.eligible_at = Some(50);
    let jobs = vec![SimJob::new(1, 0, 1, 20, 20), staged];
    assert_eq!(schedule_of(4, easy(), jobs), vec![(1, 0, 20), (2, 50, 60)]);
}

#[test]
fn a_job_that_can_never_start_ends_the_replay() {
    let mut odd = SimJob::new(2, 0, 4, 10, 10);
    odd.layout = Some((2, 2));
    let jobs = vec![SimJob::new(1, 0, 1, 10, 10), odd];
    // Two nodes of 2 processors would fit it; one node of 4 never does.
    let mut sim = Simulation::new(machine(4, 4), easy(), jobs);
    sim.run().unwrap();
    assert_eq!(sim.records().len(), 1);
    assert_eq!(sim.stranded().len() + sim.skipped().len(), 1);
}

#[test]
fn empty_workload_gives_an_empty_summary() {
    let mut sim = Simulation::new(machine(4, 4), fcfs(), Vec::new());
    sim.run().unwrap();
    let s = summarize(sim.records(), 4);
    assert_eq!((s.jobs, s.makespan_s), (0, 0));
}

/// The public traces kept in the repository (`data/traces`, credited in its
/// README), or `ARCHES_TRACES`. They are part of the repository: a missing
/// trace is a failure, never a skip.
fn traces_dir() -> Option<PathBuf> {
    let d = match std::env::var_os("ARCHES_TRACES") {
        Some(d) => PathBuf::from(d),
        None => PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../data/traces")),
    };
    assert!(
        d.join(KTH).exists(),
        "{}: trace {KTH} missing (the repository keeps them in data/traces)",
        d.display()
    );
    Some(d)
}

fn load(name: &str, procs: u32, min_job_id: Option<u64>, limit: usize) -> Option<Vec<SimJob>> {
    let dir = traces_dir()?;
    let opts = SwfOptions {
        min_job_id,
        ..SwfOptions::default()
    };
    let trace = read_swf(&dir.join(name), &opts).unwrap();
    let mut jobs = to_jobs(&trace.records, procs, &opts).jobs;
    jobs.truncate(limit);
    Some(jobs)
}

/// A row of `peer-results.md` (all jobs), every figure at the precision
/// printed there.
struct Peer {
    jobs: usize,
    avg_wait_s: i64,
    /// Average bounded slowdown, 2 decimals.
    bsld: &'static str,
    /// Utilization, 4 decimals.
    util: &'static str,
    makespan_s: i64,
    max_wait_s: i64,
    /// pyss-style wait (min) and bsld, "115.55 / 93.19", where given.
    pyss: Option<&'static str>,
}

/// Replays a whole trace and compares every figure with pyss's row.
fn assert_matches_pyss(name: &str, procs: u32, opts: SwfOptions, policy: Policy, peer: Peer) {
    let Some(dir) = traces_dir() else {
        return;
    };
    let trace = read_swf(&dir.join(name), &opts).unwrap();
    let jobs = to_jobs(&trace.records, procs, &opts).jobs;
    let mut sim = Simulation::new(machine(procs, procs), policy, jobs);
    sim.run().unwrap();
    check_feasible(sim.records(), procs);
    let s = summarize(sim.records(), procs);
    let got = (
        s.jobs,
        s.avg_wait_s.round() as i64,
        format!("{:.2}", s.avg_bsld10),
        format!("{:.4}", s.utilization),
        s.makespan_s,
        s.max_wait_s,
    );
    let want = (
        peer.jobs,
        peer.avg_wait_s,
        peer.bsld.to_string(),
        peer.util.to_string(),
        peer.makespan_s,
        peer.max_wait_s,
    );
    assert_eq!(
        got, want,
        "{name} on {procs}: (jobs, wait, bsld, util, makespan, max wait)"
    );
    if let Some(p) = peer.pyss {
        let pyss = format!("{:.2} / {:.2}", s.pyss.avg_wait_min, s.pyss.avg_bsld10);
        assert_eq!(pyss, p, "{name} on {procs}: pyss-style wait (min) / bsld");
    }
}

const KTH: &str = "KTH-SP2-1996-2.swf.gz";
const SDSC: &str = "SDSC-SP2-1998-4.2-cln.swf.gz";
const CTC: &str = "CTC-SP2-1996-3.1-cln.swf.gz";
const GAIA: &str = "UniLu-Gaia-2014-2.swf.gz";

fn kth_opts(sanitize: bool) -> SwfOptions {
    SwfOptions {
        min_job_id: Some(15),
        sanitize,
        ..SwfOptions::default()
    }
}

fn original() -> SwfOptions {
    SwfOptions::default()
}

fn sanitized() -> SwfOptions {
    SwfOptions {
        sanitize: true,
        ..SwfOptions::default()
    }
}

/// pyss's conservative backfill: a reservation for every queued job, kept
/// across iterations and only compressed (`RESERVATIONDEPTH` all,
/// `RESERVATIONPOLICY HIGHEST`).
fn conservative() -> Policy {
    Policy {
        reservation_policy: arches_core::policy::ReservationPolicy::Highest,
        ..policy(BackfillPolicy::FirstFit, u32::MAX)
    }
}

// peer-results.md, "Results on the original traces (all jobs)": every row.

#[test]
fn kth_easy_matches_pyss_exactly() {
    let peer = Peer {
        jobs: 28_475,
        avg_wait_s: 6_899,
        bsld: "92.88",
        util: "0.6990",
        makespan_s: 28_763_776,
        max_wait_s: 262_194,
        pyss: Some("115.55 / 93.19"),
    };
    assert_matches_pyss(KTH, 100, kth_opts(false), easy(), peer);
}

#[test]
fn kth_conservative_matches_pyss_exactly() {
    let peer = Peer {
        jobs: 28_475,
        avg_wait_s: 7_297,
        bsld: "88.30",
        util: "0.6990",
        makespan_s: 28_763_776,
        max_wait_s: 249_058,
        pyss: Some("122.32 / 88.66"),
    };
    assert_matches_pyss(KTH, 100, kth_opts(false), conservative(), peer);
}

#[test]
fn kth_fcfs_matches_pyss_exactly() {
    let peer = Peer {
        jobs: 28_475,
        avg_wait_s: 354_169,
        bsld: "6829.28",
        util: "0.6985",
        makespan_s: 28_781_494,
        max_wait_s: 946_685,
        pyss: None,
    };
    assert_matches_pyss(KTH, 100, kth_opts(false), fcfs(), peer);
}

#[test]
fn sdsc_easy_matches_pyss_exactly() {
    let peer = Peer {
        jobs: 59_715,
        avg_wait_s: 18_942,
        bsld: "106.96",
        util: "0.8245",
        makespan_s: 63_025_323,
        max_wait_s: 459_837,
        pyss: Some("346.90 / 89.25"),
    };
    assert_matches_pyss(SDSC, 128, original(), easy(), peer);
}

#[test]
fn sdsc_conservative_matches_pyss_exactly() {
    let peer = Peer {
        jobs: 59_715,
        avg_wait_s: 19_846,
        bsld: "110.91",
        util: "0.8243",
        makespan_s: 63_042_857,
        max_wait_s: 686_223,
        pyss: Some("363.75 / 94.18"),
    };
    assert_matches_pyss(SDSC, 128, original(), conservative(), peer);
}

#[test]
fn sdsc_fcfs_matches_pyss_exactly() {
    let peer = Peer {
        jobs: 59_715,
        avg_wait_s: 1_544_126,
        bsld: "28042.76",
        util: "0.7596",
        makespan_s: 68_412_610,
        max_wait_s: 5_481_737,
        pyss: None,
    };
    assert_matches_pyss(SDSC, 128, original(), fcfs(), peer);
}

#[test]
fn ctc_easy_matches_pyss_exactly() {
    let peer = Peer {
        jobs: 77_222,
        avg_wait_s: 1_271,
        bsld: "4.60",
        util: "0.5518",
        makespan_s: 29_306_682,
        max_wait_s: 97_748,
        pyss: Some("21.01 / 4.58"),
    };
    assert_matches_pyss(CTC, 512, original(), easy(), peer);
}

#[test]
fn ctc_conservative_matches_pyss_exactly() {
    let peer = Peer {
        jobs: 77_222,
        avg_wait_s: 1_535,
        bsld: "5.06",
        util: "0.5518",
        makespan_s: 29_306_682,
        max_wait_s: 86_376,
        pyss: Some("25.47 / 5.04"),
    };
    assert_matches_pyss(CTC, 512, original(), conservative(), peer);
}

#[test]
fn ctc_fcfs_matches_pyss_exactly() {
    let peer = Peer {
        jobs: 77_222,
        avg_wait_s: 6_101,
        bsld: "30.30",
        util: "0.5518",
        makespan_s: 29_306_682,
        max_wait_s: 87_857,
        pyss: Some("101.90 / 30.29"),
    };
    assert_matches_pyss(CTC, 512, original(), fcfs(), peer);
}

/// A fourth archive log, not in `peer-results.md`: UniLu-Gaia-2014-2 on the
/// header's 2004 processors, EASY, the trace as it is (its 127 status 2-4
/// partial lines skipped, as by default), EASY and conservative. The figures
/// are pyss's, measured
/// 2026-12-01 (BENCHMARKS.md, issue 18): pyss given the same lines (the file
/// without its status 2-4 lines), the all-jobs figures computed from pyss's
/// own job records.
#[test]
fn gaia_easy_matches_pyss_exactly() {
    let peer = Peer {
        jobs: 51_860,
        avg_wait_s: 185,
        bsld: "1.61",
        util: "0.4524",
        makespan_s: 7_697_292,
        max_wait_s: 28_045,
        pyss: Some("3.11 / 1.62"),
    };
    assert_matches_pyss(GAIA, 2004, original(), easy(), peer);
}

#[test]
fn gaia_conservative_matches_pyss_exactly() {
    let peer = Peer {
        jobs: 51_860,
        avg_wait_s: 262,
        bsld: "2.05",
        util: "0.4524",
        makespan_s: 7_697_292,
        max_wait_s: 28_045,
        pyss: Some("4.39 / 2.06"),
    };
    assert_matches_pyss(GAIA, 2004, original(), conservative(), peer);
}

#[test]
fn ctc_on_430_processors_easy_matches_pyss_exactly() {
    let peer = Peer {
        jobs: 77_222,
        avg_wait_s: 3_232,
        bsld: "10.55",
        util: "0.6570",
        makespan_s: 29_306_682,
        max_wait_s: 152_179,
        pyss: Some("53.89 / 10.53"),
    };
    assert_matches_pyss(CTC, 430, original(), easy(), peer);
}

// peer-results.md, "Results on sanitised inputs (all jobs)": every row (the
// job counts are the "Left:" figures; pyss-style figures are not given).

#[test]
fn sanitized_kth_matches_pyss_exactly() {
    let easy_row = Peer {
        jobs: 28_467,
        avg_wait_s: 6_893,
        bsld: "92.72",
        util: "0.6990",
        makespan_s: 28_763_776,
        max_wait_s: 262_194,
        pyss: None,
    };
    assert_matches_pyss(KTH, 100, kth_opts(true), easy(), easy_row);
    let conservative_row = Peer {
        jobs: 28_467,
        avg_wait_s: 7_344,
        bsld: "88.94",
        util: "0.6990",
        makespan_s: 28_763_776,
        max_wait_s: 249_058,
        pyss: None,
    };
    assert_matches_pyss(KTH, 100, kth_opts(true), conservative(), conservative_row);
}

#[test]
fn sanitized_sdsc_easy_matches_pyss_exactly() {
    let peer = Peer {
        jobs: 53_999,
        avg_wait_s: 20_495,
        bsld: "87.83",
        util: "0.8245",
        makespan_s: 63_025_323,
        max_wait_s: 459_740,
        pyss: None,
    };
    assert_matches_pyss(SDSC, 128, sanitized(), easy(), peer);
}

#[test]
fn sanitized_sdsc_conservative_matches_pyss_exactly() {
    let peer = Peer {
        jobs: 53_999,
        avg_wait_s: 21_888,
        bsld: "89.64",
        util: "0.8244",
        makespan_s: 63_033_953,
        max_wait_s: 692_773,
        pyss: None,
    };
    assert_matches_pyss(SDSC, 128, sanitized(), conservative(), peer);
}

#[test]
fn sanitized_ctc_easy_matches_pyss_exactly() {
    let peer = Peer {
        jobs: 77_199,
        avg_wait_s: 1_243,
        bsld: "4.50",
        util: "0.5518",
        makespan_s: 29_306_682,
        max_wait_s: 101_073,
        pyss: None,
    };
    assert_matches_pyss(CTC, 512, sanitized(), easy(), peer);
}

#[test]
fn sanitized_ctc_conservative_matches_pyss_exactly() {
    let peer = Peer {
        jobs: 77_199,
        avg_wait_s: 1_528,
        bsld: "5.09",
        util: "0.5518",
        makespan_s: 29_306_682,
        max_wait_s: 93_546,
        pyss: None,
    };
    assert_matches_pyss(CTC, 512, sanitized(), conservative(), peer);
}

#[test]
fn first_jobs_of_every_trace_replay_feasibly_under_each_policy() {
    for (name, procs, min) in [(KTH, 100, Some(15)), (SDSC, 128, None), (CTC, 512, None)] {
        let Some(jobs) = load(name, procs, min, 3000) else {
            return;
        };
        for p in [
            fcfs(),
            policy(BackfillPolicy::FirstFit, 1),
            policy(BackfillPolicy::FirstFit, u32::MAX),
            conservative(),
        ] {
            let mut sim = Simulation::new(machine(procs, procs), p, jobs.clone());
            sim.run().unwrap();
            assert_eq!(sim.records().len(), 3000, "{name}");
            check_feasible(sim.records(), procs);
        }
    }
}
