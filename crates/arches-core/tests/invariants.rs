//! Property tests of whole replays: on random clusters, workloads and
//! policies, every planned start is accepted by `State::apply` (nothing is
//! ever over-allocated), every job that fits the machine eventually starts,
//! and equal inputs give equal plans.

use std::collections::BTreeMap;

use arches_core::job::{CompletionCode, Job, JobId, Request};
use arches_core::node::Node;
use arches_core::plan::BlockReason;
use arches_core::policy::{
    BackfillMetric, BackfillPolicy, NodeAllocationPolicy, PreemptPolicy, ReservationBucket,
    ReservationPolicy,
};
use arches_core::state::{Event, State};
use arches_core::{schedule, Policy, Time};
use proptest::prelude::*;

#[derive(Debug, Clone)]
struct JobSpec {
    submit: Time,
    procs: u32,
    ppn: Option<(u32, u32)>,
    mem: u64,
    gpu: bool,
    wall: Option<i64>,
    run: i64,
}

fn job_spec() -> impl Strategy<Value = JobSpec> {
    (
        0i64..200,
        1u32..10,
        prop::option::weighted(0.2, (1u32..3, 1u32..4)),
        prop::sample::select(vec![0u64, 0, 300, 900]),
        prop::bool::weighted(0.15),
        prop::option::weighted(0.9, 1i64..300),
        1i64..300,
    )
        .prop_map(|(submit, procs, ppn, mem, gpu, wall, run)| JobSpec {
            submit,
            procs,
            ppn,
            mem,
            gpu,
            wall,
            run,
        })
}

fn policy_strategy() -> impl Strategy<Value = Policy> {
    (
        prop::sample::select(BackfillPolicy::ALL.to_vec()),
        prop::sample::select(BackfillMetric::ALL.to_vec()),
        prop::sample::select(vec![1u32, 2, 100]),
        prop::sample::select(ReservationPolicy::ALL.to_vec()),
        prop::sample::select(NodeAllocationPolicy::ALL.to_vec()),
        0u32..3,
    )
        .prop_map(|(bf, metric, depth, rp, na, bfdepth)| Policy {
            backfill: bf,
            backfill_metric: metric,
            reservation_buckets: vec![ReservationBucket { depth, qos: None }],
            reservation_policy: rp,
            node_allocation: na,
            backfill_depth: bfdepth,
            ..Policy::default()
        })
}

fn cluster(sizes: &[(u32, bool)]) -> Vec<Node> {
    sizes
        .iter()
        .enumerate()
        .map(|(i, (p, gpu))| {
            let mut n = Node::new(&format!("n{i}"), *p, 1000);
            if *gpu {
                n.features.push("gpu".into());
            }
            n
        })
        .collect()
}

fn make_job(id: JobId, s: &JobSpec) -> Job {
    let mut req = Request::procs(s.procs);
    if let Some((nodes, ppn)) = s.ppn {
        req.nodes = Some(nodes);
        req.tasks_per_node = Some(ppn);
        req.tasks = nodes * ppn;
    }
    req.mem_per_task_mb = s.mem;
    if s.gpu {
        req.features.push("gpu".into());
    }
    Job::new(id, "u", req, s.wall, s.submit)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn replays_never_overallocate_and_finish(
        sizes in prop::collection::vec((1u32..9, prop::bool::weighted(0.3)), 1..5),
        specs in prop::collection::vec(job_spec(), 1..25),
        policy in policy_strategy(),
    ) {
        let nodes = cluster(&sizes);
        let mut state = State::new(nodes);
        let mut events: BTreeMap<Time, Vec<JobId>> = BTreeMap::new();
        let mut times: Vec<Time> = specs.iter().map(|s| s.submit).collect();
        let mut submitted = 0usize;
        let mut order: Vec<usize> = (0..specs.len()).collect();
        order.sort_by_key(|i| specs[*i].submit);
        let mut started = 0usize;
        let mut ran = std::collections::BTreeSet::new();
        let mut never = 0usize;
        let mut steps = 0;
        loop {
            times.sort_unstable();
            times.dedup();
            let Some(now) = times.first().copied() else { break };
            times.remove(0);
            steps += 1;
            prop_assert!(steps < 10_000, "no progress");
            while submitted < order.len() && specs[order[submitted]].submit <= now {
                let k = order[submitted];
                state.apply(Event::submit(make_job(k as JobId + 1, &specs[k])), now).unwrap();
                submitted += 1;
            }
            for id in events.remove(&now).unwrap_or_default() {
                state.apply(Event::Finish { job: id, code: CompletionCode::Exit(0) }, now).unwrap();
            }
            let plan = schedule(&state, &policy, now);
            prop_assert!(!plan.acts() || !arches_core::quiet::nothing_can_start(&state, &policy));
            prop_assert_eq!(&plan, &schedule(&state, &policy, now));
            // PREEMPT backfill requeues optimistic backfill jobs.
            for p in &plan.preemptions {
                prop_assert_eq!(policy.backfill, BackfillPolicy::Preempt);
                prop_assert_eq!(p.method, PreemptPolicy::Requeue);
                let res = state.apply(Event::Requeue { job: p.job }, now);
                prop_assert!(res.is_ok(), "requeue refused: {:?}", res);
                for ids in events.values_mut() {
                    ids.retain(|j| *j != p.job);
                }
            }
            for s in &plan.starts {
                let res = state.apply(
                    Event::Start { job: s.job, alloc: s.alloc.clone(), kind: s.kind },
                    now,
                );
                prop_assert!(res.is_ok(), "start refused: {:?}", res);
                let spec = &specs[s.job as usize - 1];
                let end = now + spec.run.min(spec.wall.unwrap_or(i64::MAX / 4)).max(1);
                events.entry(end).or_default().push(s.job);
                times.push(end);
                if ran.insert(s.job) {
                    started += 1;
                }
            }
            if let Some(w) = plan.next_wakeup {
                times.push(w);
            }
            if times.is_empty() && submitted == order.len() && events.is_empty() {
                never = plan
                    .decisions
                    .values()
                    .filter(|d| matches!(d.reason, Some(BlockReason::NeverFits(_))))
                    .count();
            }
        }
        prop_assert_eq!(started + never, specs.len(), "every job that fits ran");
    }
}

/// Replays single-processor-task jobs (FIFO, run time <= walltime) and
/// returns, per job, its first reservation start and its actual start.
fn guarantee_replay(
    procs: u32,
    jobs: &[(Time, u32, i64, i64)],
    policy: &Policy,
    remember: bool,
) -> BTreeMap<JobId, (Option<Time>, Time)> {
    let mut state = State::new(vec![Node::new("m", procs, 0)]);
    let mut out: BTreeMap<JobId, (Option<Time>, Time)> = BTreeMap::new();
    let mut first_rsv: BTreeMap<JobId, Time> = BTreeMap::new();
    let mut ends: BTreeMap<Time, Vec<JobId>> = BTreeMap::new();
    let mut times: Vec<Time> = jobs.iter().map(|j| j.0).collect();
    let mut next = 0;
    while !times.is_empty() {
        times.sort_unstable();
        times.dedup();
        let now = times.remove(0);
        while next < jobs.len() && jobs[next].0 <= now {
            let (submit, p, wall, _) = jobs[next];
            let job = Job::new(
                next as JobId + 1,
                "u",
                Request::procs(p),
                Some(wall),
                submit,
            );
            state.apply(Event::submit(job), now).unwrap();
            next += 1;
        }
        for id in ends.remove(&now).unwrap_or_default() {
            let code = CompletionCode::Exit(0);
            state.apply(Event::Finish { job: id, code }, now).unwrap();
        }
        let plan = schedule(&state, policy, now);
        assert!(!plan.acts() || !arches_core::quiet::nothing_can_start(&state, policy));
        for s in &plan.starts {
            state
                .apply(
                    Event::Start {
                        job: s.job,
                        alloc: s.alloc.clone(),
                        kind: s.kind,
                    },
                    now,
                )
                .unwrap();
            let (_, _, wall, run) = jobs[s.job as usize - 1];
            let end = now + run.min(wall);
            ends.entry(end).or_default().push(s.job);
            times.push(end);
            out.insert(s.job, (first_rsv.get(&s.job).copied(), now));
        }
        for r in &plan.reservations {
            first_rsv.entry(r.job).or_insert(r.start);
            times.push(r.start);
        }
        if remember {
            let rsv = plan.reservations.iter().map(|r| (r.job, r.start)).collect();
            state.remember_reservations(rsv).unwrap();
        }
    }
    out
}

fn fifo_jobs() -> impl Strategy<Value = Vec<(Time, u32, i64, i64)>> {
    prop::collection::vec((0i64..50, 1u32..8, 1i64..100, 1i64..100), 1..30).prop_map(|v| {
        let mut t = 0;
        v.into_iter()
            .map(|(dt, p, wall, run)| {
                t += dt;
                (t, p, wall, run.min(wall))
            })
            .collect()
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// EASY: backfill never delays the protected job past its reservation.
    #[test]
    fn easy_never_delays_the_reservation(jobs in fifo_jobs()) {
        let policy = Policy::default();
        for (id, (rsv, start)) in guarantee_replay(8, &jobs, &policy, false) {
            if let Some(r) = rsv {
                prop_assert!(start <= r, "job {id} reserved at {r} started at {start}");
            }
        }
    }

    /// Conservative with kept reservations (HIGHEST): no job ever starts
    /// later than the first reservation it was given.
    #[test]
    fn conservative_keeps_every_reservation(jobs in fifo_jobs()) {
        let policy = Policy {
            reservation_buckets: vec![ReservationBucket { depth: 1000, qos: None }],
            reservation_policy: ReservationPolicy::Highest,
            ..Policy::default()
        };
        let out = guarantee_replay(8, &jobs, &policy, true);
        prop_assert_eq!(out.len(), jobs.len());
        for (id, (rsv, start)) in out {
            if let Some(r) = rsv {
                prop_assert!(start <= r, "job {id} reserved at {r} started at {start}");
            }
        }
    }
}
