//! Cost of deciding a preemption: one scheduling iteration in which a
//! PREEMPTOR job (24 processors) finds its victims among `n` running
//! single-processor PREEMPTEE jobs filling the machine (16-processor nodes),
//! with varied priorities and start times. Target: n = 10,000 in ≤ 10 ms;
//! n = 3,200 is OpenPBS's preemption benchmark size.
//!
//! Workloads come from a fixed linear congruential generator: deterministic.

use std::hint::black_box;

use arches_core::job::{Alloc, Job, JobFlag, Request, StartKind};
use arches_core::node::Node;
use arches_core::policy::{PreemptPolicy, QosConfig, QosFlag, ReservationPolicy};
use arches_core::state::{Event, State};
use arches_core::{schedule, Policy};
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};

struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

fn policy() -> Policy {
    let mut p = Policy {
        preempt_policy: PreemptPolicy::Suspend,
        reservation_policy: ReservationPolicy::Never,
        ..Policy::default()
    };
    p.weights.qos = 1;
    p.qos.insert(
        "high".into(),
        QosConfig {
            priority: 10_000,
            flags: vec![QosFlag::Preemptor],
            ..QosConfig::default()
        },
    );
    for i in 0..10 {
        p.qos.insert(
            format!("low{i}"),
            QosConfig {
                priority: i * 100,
                flags: vec![QosFlag::Preemptee],
                ..QosConfig::default()
            },
        );
    }
    p
}

/// `n` running preemptees filling `n / 16` nodes, plus one queued preemptor.
fn state(n: u32) -> State {
    let mut rng = Lcg(7);
    let nodes = n.div_ceil(16);
    let list = (0..nodes)
        .map(|i| Node::new(&format!("n{i}"), 16, 0))
        .collect();
    let mut s = State::new(list);
    for k in 0..n {
        let id = u64::from(k) + 1;
        let start = rng.below(3_000) as i64;
        let mut j = Job::new(id, "u", Request::procs(1), Some(86_400), start);
        j.cred.qos = Some(format!("low{}", rng.below(10)).into());
        if rng.below(2) == 0 {
            j.flags.insert(JobFlag::Suspendable);
        } else {
            j.flags.insert(JobFlag::Restartable);
        }
        s.apply(Event::submit(j), start).unwrap();
        let alloc = vec![Alloc {
            node: k / 16,
            tasks: 1,
            procs: 1,
            mem_mb: 0,
            gres: Default::default(),
        }];
        s.apply(
            Event::Start {
                job: id,
                alloc,
                kind: StartKind::Priority,
            },
            start,
        )
        .unwrap();
    }
    let mut p = Job::new(1_000_000, "v", Request::procs(24), Some(3_600), 3_600);
    p.cred.qos = Some("high".into());
    s.apply(Event::submit(p), 3_600).unwrap();
    s
}

fn bench(c: &mut Criterion) {
    let pol = policy();
    let mut g = c.benchmark_group("preempt");
    g.sample_size(20);
    for n in [3_200u32, 10_000] {
        let s = state(n);
        let plan = schedule(&s, &pol, 3_600);
        assert_eq!(plan.starts.len(), 1, "the preemptor starts");
        assert_eq!(plan.preemptions.len(), 24, "victims");
        g.bench_with_input(BenchmarkId::new("candidates", n), &s, |b, s| {
            b.iter(|| black_box(schedule(s, &pol, 3_600)))
        });
        // The same iteration without the PREEMPTOR flag: what any
        // iteration over this many running jobs costs anyway.
        let mut base = pol.clone();
        if let Some(q) = base.qos.get_mut("high") {
            q.flags.clear();
        }
        g.bench_with_input(BenchmarkId::new("baseline", n), &s, |b, s| {
            b.iter(|| black_box(schedule(s, &base, 3_600)))
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
