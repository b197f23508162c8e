//! Dependencies on a job's start in the simulator: a job that may start
//! once another started (`after`, or `before` given to the other job)
//! starts at the same second when resources allow, not at the next event.

use arches_core::Policy;
use arches_sim::workload::parse_jsonl;
use arches_sim::{machine, Simulation};

/// Starts `(job, time)` by job id, or skipped jobs `(job, reason)`.
type Pairs<T> = Vec<(u64, T)>;

/// A replay of `jsonl` on one node of `procs` processors: the starts by
/// job id, and the jobs skipped with their reasons.
fn replay(jsonl: &str, procs: u32) -> (Pairs<i64>, Pairs<String>) {
    let jobs = parse_jsonl(jsonl.as_bytes(), "t.jsonl").unwrap();
    let mut sim = Simulation::new(machine(procs, procs), Policy::default(), jobs);
    sim.run().unwrap();
    let mut starts: Vec<(u64, i64)> = sim.records().iter().map(|r| (r.id, r.start)).collect();
    starts.sort_unstable();
    let skipped = sim
        .skipped()
        .iter()
        .map(|s| (s.id, s.reason.clone()))
        .collect();
    (starts, skipped)
}

fn starts(jsonl: &str, procs: u32) -> Vec<(u64, i64)> {
    replay(jsonl, procs).0
}

#[test]
fn a_job_after_another_starts_when_that_one_starts() {
    // Job 1 holds 3 of 4 processors until 500; job 2 (2 processors) starts
    // then, and job 3, waiting for job 2 to start, fits beside it at once.
    let trace = r#"{"id": 1, "submit": 0, "procs": 3, "walltime": 500, "runtime": 500}
{"id": 2, "submit": 10, "procs": 2, "walltime": 1000, "runtime": 1000}
{"id": 3, "submit": 20, "procs": 1, "walltime": 100, "runtime": 100, "depend": "after:2"}
"#;
    assert_eq!(starts(trace, 4), [(1, 0), (2, 500), (3, 500)]);
}

#[test]
fn a_before_dependency_makes_the_other_job_wait_for_this_ones_start() {
    // Job 3 asks that the queued job 4 start only after it started
    // (`before:4`, given to job 4 as `after:3`). Job 4 comes first in the
    // queue, but waits: job 3 takes the whole machine at 500, job 4 starts
    // when it ends. (Without the dependency job 4 would start at 500 and
    // job 3 at 600.)
    let trace = r#"{"id": 1, "submit": 0, "procs": 4, "walltime": 500, "runtime": 500}
{"id": 4, "submit": 10, "procs": 1, "walltime": 100, "runtime": 100}
{"id": 3, "submit": 20, "procs": 4, "walltime": 1000, "runtime": 1000, "depend": "before:4"}
"#;
    assert_eq!(starts(trace, 4), [(1, 0), (3, 500), (4, 1500)]);
    // With room beside job 3, job 4 starts with it (the iteration after
    // job 3's start).
    let roomy = trace.replace(
        r#""procs": 4, "walltime": 1000"#,
        r#""procs": 2, "walltime": 1000"#,
    );
    assert_eq!(starts(&roomy, 4), [(1, 0), (3, 500), (4, 500)]);
    // Named twice, the dependency is given once (the replay is the same).
    let twice = trace.replace(r#""before:4""#, r#""before:4,before:4""#);
    assert_eq!(starts(&twice, 4), [(1, 0), (3, 500), (4, 1500)]);
}

#[test]
fn a_released_job_without_room_waits_for_the_next_end() {
    // Job 3 may start once job 2 did, but no processor is free until job
    // 2 ends: the extra iteration starts nothing and the replay goes on.
    let trace = r#"{"id": 1, "submit": 0, "procs": 4, "walltime": 500, "runtime": 500}
{"id": 2, "submit": 10, "procs": 4, "walltime": 1000, "runtime": 1000}
{"id": 3, "submit": 20, "procs": 1, "walltime": 100, "runtime": 100, "depend": "after:2"}
"#;
    assert_eq!(starts(trace, 4), [(1, 0), (2, 500), (3, 1500)]);
}

#[test]
fn a_before_dependency_on_a_job_not_queued_is_refused_with_the_reason() {
    // Job 2 already runs when job 3 asks it to wait (`before:2`): msub
    // refuses such a job, and so does the replay, naming why.
    let trace = r#"{"id": 2, "submit": 0, "procs": 1, "walltime": 100, "runtime": 100}
{"id": 3, "submit": 10, "procs": 1, "walltime": 100, "runtime": 100, "depend": "before:2"}
"#;
    let (starts, skipped) = replay(trace, 4);
    assert_eq!(starts, [(2, 0)]);
    let why = "cannot make job 2 wait for this one (before): it is not queued";
    assert_eq!(skipped, [(3, why.to_string())]);
}

#[test]
fn a_before_dependency_on_another_users_job_is_refused() {
    // Job 2 is queued behind job 1 but is alice's: bob may not make it wait.
    let trace = r#"{"id": 1, "submit": 0, "procs": 4, "walltime": 100, "runtime": 100}
{"id": 2, "submit": 5, "procs": 1, "walltime": 100, "runtime": 100, "user": "alice"}
{"id": 3, "submit": 10, "procs": 1, "walltime": 100, "runtime": 100, "user": "bob", "depend": "before:2"}
"#;
    let (starts, skipped) = replay(trace, 4);
    assert_eq!(starts, [(1, 0), (2, 100)]);
    let why = "cannot make job 2 wait for this one (before): it is not your job";
    assert_eq!(skipped, [(3, why.to_string())]);
}
