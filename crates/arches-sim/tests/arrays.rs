//! JSONL job arrays in the simulator: an `array` line stands for its
//! sub-jobs, which run with the line's size and run time under the slot
//! limit, and jobs may depend on the whole array.

use arches_core::Policy;
use arches_sim::workload::parse_jsonl;
use arches_sim::{machine, Simulation};

const TRACE: &str = r#"{"id": 1, "submit": 0, "procs": 1, "walltime": 100, "runtime": 10, "array": "1-300%4"}
{"id": 400, "submit": 5, "procs": 2, "walltime": 100, "runtime": 20, "depend": "afterok:1"}
"#;

#[test]
fn array_lines_run_every_sub_job_under_the_slot_limit() {
    let jobs = parse_jsonl(TRACE.as_bytes(), "t.jsonl").unwrap();
    assert_eq!(jobs[0].array.as_ref().map(|a| a.indices.len()), Some(300));
    let mut sim = Simulation::new(machine(16, 16), Policy::default(), jobs);
    sim.run().unwrap();
    let recs = sim.records();
    assert_eq!(recs.len(), 301);
    let subs: Vec<_> = recs.iter().filter(|r| (2..=301).contains(&r.id)).collect();
    assert_eq!(subs.len(), 300);
    // At most 4 at once: at every start, count the sub-jobs running.
    for r in &subs {
        let running = subs
            .iter()
            .filter(|o| o.start <= r.start && r.start < o.end)
            .count();
        assert!(running <= 4, "{running} sub-jobs running at {}", r.start);
    }
    // 300 sub-jobs of 10 s, 4 at a time: 75 rounds.
    let last = subs.iter().map(|r| r.end).max().unwrap();
    assert_eq!(last, 750);
    // The dependent job starts when the whole array is done.
    let dep = recs.iter().find(|r| r.id == 400).unwrap();
    assert_eq!(dep.start, 750);
}

#[test]
fn bad_array_lines_are_refused_with_the_line() {
    let bad =
        r#"{"id": 1, "submit": 0, "procs": 1, "walltime": 100, "runtime": 10, "array": "1-5,3"}"#;
    let e = parse_jsonl(bad.as_bytes(), "t.jsonl")
        .unwrap_err()
        .to_string();
    assert_eq!(e, "t.jsonl:1: array '1-5,3': index 3 given twice");
}
