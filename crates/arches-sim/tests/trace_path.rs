//! The compact trace path `moab simulate` takes (`swf::read_trace` +
//! `Simulation::from_trace`, jobs built when submitted) replays exactly as
//! the job-list path the fidelity tests use (`read_swf` + `to_jobs` +
//! `Simulation::new`): every job's record, on real traces, EASY and
//! conservative, with the trace's start moved to a Unix date.

use std::path::PathBuf;
use std::sync::Arc;

use arches_core::policy::{BackfillPolicy, ReservationBucket, ReservationPolicy};
use arches_core::Policy;
use arches_sim::swf::{read_swf, read_trace, to_jobs, SwfOptions};
use arches_sim::{machine, Simulation};

fn trace(name: &str) -> PathBuf {
    let p = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../data/traces")).join(name);
    assert!(
        p.exists(),
        "{}: missing (data/traces is part of the repository)",
        p.display()
    );
    p
}

fn policies() -> Vec<Policy> {
    let depth = |d| {
        vec![ReservationBucket {
            depth: d,
            qos: None,
        }]
    };
    vec![
        Policy {
            reservation_buckets: depth(1),
            ..Policy::default()
        },
        Policy {
            backfill: BackfillPolicy::FirstFit,
            reservation_buckets: depth(u32::MAX),
            reservation_policy: ReservationPolicy::Highest,
            ..Policy::default()
        },
    ]
}

/// Replays the jobs of the trace numbered up to `last` both ways.
fn same_replay(name: &str, procs: u32, opts: SwfOptions, last: u64) {
    let path = trace(name);
    let mut records = read_swf(&path, &opts).unwrap().records;
    records.retain(|r| r.job <= last);
    let mut compact = read_trace(&path, &opts).unwrap();
    compact.jobs.retain(|j| j.id <= last);
    let compact = Arc::new(compact);
    for policy in policies() {
        let mut a = Simulation::new(
            machine(procs, procs),
            policy.clone(),
            to_jobs(&records, procs, &opts).jobs,
        );
        a.start_at(1_000_000);
        a.run().unwrap();
        let mut b = Simulation::from_trace(machine(procs, procs), policy, compact.clone(), procs);
        b.start_at(1_000_000);
        b.run().unwrap();
        assert_eq!(a.records(), b.records(), "{name} on {procs}");
        assert_eq!(a.iterations(), b.iterations());
        assert_eq!(a.relative_records(), b.relative_records());
    }
}

#[test]
fn kth_replays_the_same_either_way() {
    let opts = SwfOptions {
        min_job_id: Some(15),
        ..SwfOptions::default()
    };
    same_replay("KTH-SP2-1996-2.swf.gz", 100, opts, u64::MAX);
}

#[test]
fn sanitised_on_a_smaller_machine_replays_the_same_either_way() {
    // 90 processors: KTH's jobs of 91 to 100 are capped at the machine.
    let opts = SwfOptions {
        sanitize: true,
        min_job_id: Some(15),
        ..SwfOptions::default()
    };
    same_replay("KTH-SP2-1996-2.swf.gz", 90, opts, 10_000);
}
