//! Malleable jobs and resize requests in a replay (JSONL `maxprocs`,
//! `resize`): a malleable job grows when processors free up and, its work
//! conserved, ends sooner; growth before backfill takes idle processors
//! before a backfill job can, growth after backfill leaves them to it; a
//! resize request is granted as backfill on its remaining run time and its
//! wait is reported.

use arches_core::malleable::GrowthPolicy;
use arches_core::{Node, Policy};
use arches_sim::run::Simulation;
use arches_sim::workload::parse_jsonl;

fn run(policy: Policy, jsonl: &str) -> Simulation {
    let jobs = parse_jsonl(jsonl.as_bytes(), "w.jsonl").unwrap();
    let mut sim = Simulation::new(vec![Node::new("n0", 10, 0)], policy, jobs);
    sim.run().unwrap();
    sim
}

fn policy(growth: GrowthPolicy) -> Policy {
    Policy {
        growth,
        ..Policy::default()
    }
}

fn end(sim: &Simulation, id: u64) -> (i64, i64) {
    let r = sim.records().iter().find(|r| r.id == id).unwrap();
    (r.start, r.end)
}

/// Ten processors. A (6, 2 h), C (2, 10 min) and the malleable M (2 to 4,
/// 3600 s of work on 2) start; B (8) is reserved when A ends; S (2, 10 min)
/// waits. When C ends at 600 s, growth and backfill compete for its two
/// processors (the simulator iterates after each submission and each
/// termination, as pyss does).
const JOBS: &str = r#"
{"id": 1, "submit": 0, "procs": 6, "walltime": 7200, "runtime": 7200}
{"id": 2, "submit": 0, "procs": 2, "walltime": 600, "runtime": 600}
{"id": 3, "submit": 0, "procs": 2, "maxprocs": 4, "walltime": 3600, "runtime": 3600}
{"id": 4, "submit": 0, "procs": 8, "walltime": 3600, "runtime": 3600}
{"id": 5, "submit": 0, "procs": 2, "walltime": 600, "runtime": 600}
"#;

#[test]
fn growth_before_and_after_backfill_and_none() {
    // Before backfill: M takes the freed pair at 600 s; its 3000 s of
    // two-processor work left take 1500 s on four (it ends at 2100 s);
    // S backfills when M ends.
    let before = run(policy(GrowthPolicy::BeforeBackfill), JOBS);
    assert_eq!(end(&before, 3), (0, 2100));
    assert_eq!(end(&before, 5), (2100, 2700));
    assert_eq!(end(&before, 4).0, 7200);
    let m = before.summary().malleable.unwrap();
    assert_eq!((m.jobs, m.grown_jobs, m.grows), (1, 1, 1));
    // After backfill: S takes them at 600 s; M grows when S ends (1200 s,
    // 2400 s of two-processor work left: 1200 s on four).
    let after = run(policy(GrowthPolicy::AfterBackfill), JOBS);
    assert_eq!(end(&after, 5), (600, 1200));
    assert_eq!(end(&after, 3), (0, 2400));
    // Without growth M runs its 3600 s on two.
    let none = run(policy(GrowthPolicy::None), JOBS);
    assert_eq!(end(&none, 3), (0, 3600));
    assert_eq!(end(&none, 5), (600, 1200));
    assert_eq!(none.summary().malleable.unwrap().grows, 0);
    // The work is the same; utilisation counts the grown processors.
    let u = |s: &Simulation| s.summary().utilization;
    assert!(
        (u(&before) - u(&none)).abs() < 1e-9,
        "{} {}",
        u(&before),
        u(&none)
    );
}

#[test]
fn a_resize_request_backfills_on_its_remaining_run_time() {
    // LSF's example, as scenario resize_request_lsf_remaining_runtime.txt:
    // J (2 to 4, a 20-hour limit) asks for 2 more 4 hours in; B (8) is
    // reserved at 20 h; the request (16 h left) fits before it.
    let jsonl = r#"
{"id": 1, "submit": 0, "procs": 2, "maxprocs": 4, "walltime": 72000, "runtime": 72000, "resize": [{"after": 14400, "procs": 2}]}
{"id": 2, "submit": 0, "procs": 4, "walltime": 68400, "runtime": 68400}
{"id": 3, "submit": 3600, "procs": 8, "walltime": 3600, "runtime": 3600, "priority": 100}
"#;
    let jobs = parse_jsonl(jsonl.as_bytes(), "w.jsonl").unwrap();
    let mut sim = Simulation::new(
        vec![Node::new("n0", 8, 0)],
        policy(GrowthPolicy::None),
        jobs,
    );
    sim.run().unwrap();
    let m = sim.summary().malleable.unwrap();
    assert_eq!((m.resize_requests, m.resize_granted), (1, 1));
    assert_eq!(m.resize_avg_wait_s, 0.0, "granted at once, as backfill");
    // Its remaining 16 h of two-processor work took 8 h on four.
    assert_eq!(end(&sim, 1), (0, 14400 + 28800));
    assert_eq!(end(&sim, 3).0, 68400, "B was not delayed (A ends at 19 h)");
}
