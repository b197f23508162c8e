//! Replays of synthetic Lublin & Feitelson workloads (`arches_sim::generate`,
//! seed 1, offered load 0.7, batch and interactive jobs) through the whole
//! simulator (`Simulation`: event loop, simulated backend, lean iteration):
//!
//! - `replay/easy-60k-128`: 60,000 jobs on 128 processors, EASY (the size
//!   of the SDSC-SP2 trace);
//! - `replay/conservative-20k-128`: 20,000 jobs on 128 processors,
//!   reservations for every queued job kept across iterations (pyss's
//!   conservative backfill);
//! - `replay/easy-100k-100000`: 100,000 jobs on 100,000 processors, EASY
//!   (a tenth of the 1,000,000-job scale run of BENCHMARKS.md).
//!
//! `cargo bench -p arches-sim --bench replay`.

use std::hint::black_box;

use arches_core::policy::{BackfillPolicy, ReservationBucket, ReservationPolicy};
use arches_core::Policy;
use arches_sim::generate::{generate, GenerateParams};
use arches_sim::swf::{parse_swf, to_jobs, SwfOptions};
use arches_sim::{machine, SimJob, Simulation};
use criterion::{criterion_group, criterion_main, Criterion};

fn workload(jobs: usize, procs: u32) -> Vec<SimJob> {
    let text = generate(&GenerateParams {
        jobs,
        machine_procs: procs,
        target_load: 0.7,
        seed: 1,
        interactive: true,
    })
    .expect("generate");
    let trace = parse_swf(text.as_bytes(), "generated", &SwfOptions::default()).expect("parse");
    to_jobs(&trace.records, procs, &SwfOptions::default()).jobs
}

fn replay(jobs: &[SimJob], procs: u32, policy: &Policy) -> f64 {
    let mut sim = Simulation::new(machine(procs, procs), policy.clone(), jobs.to_vec());
    sim.run().expect("replay");
    sim.summary().avg_wait_s
}

fn replays(c: &mut Criterion) {
    let easy = Policy {
        backfill: BackfillPolicy::FirstFit,
        reservation_buckets: vec![ReservationBucket {
            depth: 1,
            qos: None,
        }],
        ..Policy::default()
    };
    let conservative = Policy {
        reservation_buckets: vec![ReservationBucket {
            depth: u32::MAX,
            qos: None,
        }],
        reservation_policy: ReservationPolicy::Highest,
        ..easy.clone()
    };
    let mut g = c.benchmark_group("replay");
    g.sample_size(10);
    let small = workload(60_000, 128);
    g.bench_function("easy-60k-128", |b| {
        b.iter(|| black_box(replay(&small, 128, &easy)))
    });
    let cons = workload(20_000, 128);
    g.bench_function("conservative-20k-128", |b| {
        b.iter(|| black_box(replay(&cons, 128, &conservative)))
    });
    let big = workload(100_000, 100_000);
    g.bench_function("easy-100k-100000", |b| {
        b.iter(|| black_box(replay(&big, 100_000, &easy)))
    });
    g.finish();
}

criterion_group!(benches, replays);
criterion_main!(benches);
