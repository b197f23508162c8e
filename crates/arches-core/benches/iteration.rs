//! Cost of one scheduling iteration, and of a trace-like replay.
//!
//! - `iteration/jobs=100000,nodes=10000,depth=1`: 100,000 idle jobs on 10,000
//!   8-processor nodes with about 90% of the machine busy, RESERVATIONDEPTH 1,
//!   BACKFILLDEPTH 0 (target ≤ 100 ms); `depth=10`; `depth=100` (target ≤ 1 s);
//! - `iteration/...,rsv`: the same plus an administrative reservation of
//!   1,000 nodes for 12 hours whose access list admits one of the 50 users
//!   (about 2% of the queue runs inside it) and a daily standing
//!   reservation of 200 nodes nobody in the queue may use;
//! - `iteration/...,policies`: the same jobs with credential limits (MAXJOB
//!   and MAXPROC soft,hard pairs on the 50 users, so both throttling passes
//!   run), priority weights (queue time, expansion factor, user and QoS
//!   priorities) and one job in ten node-constrained (`nodes=N:ppn=P` or a
//!   feature), which brings in the per-node timelines;
//! - `gres/...` (issue 15): 10,000 8-processor nodes of which 2,000 have 4
//!   GPUs each (`gres=gpu:4`), ~90% busy (the running jobs on GPU nodes
//!   hold 1–4 GPUs, at most the node's 4), 100,000 idle jobs; `cpu-only`: no job requests GPUs;
//!   `gpu-10pct`: one job in ten requests 1–2 GPUs per task (target: within
//!   20% of `cpu-only`); `gpu-10pct-shapes-without-gpus`: the same jobs as
//!   `gpu-10pct` without their GPU requests (what the GPU accounting itself
//!   costs is the difference between these two); `all-gpu-nodes,...`: the
//!   same with 4 GPUs on every node;
//! - `scaling/...`: the same over a grid of jobs × nodes × depth;
//! - `replay/easy-60k`: a 60,000-job synthetic workload on 128 processors
//!   replayed event by event (schedule at every submission and completion),
//!   the simulator's inner loop (target < 1 s).
//!
//! Workloads come from a fixed linear congruential generator: deterministic.

use std::collections::BTreeMap;
use std::hint::black_box;

use arches_core::job::{CompletionCode, Job, Request};
use arches_core::node::Node;
use arches_core::state::{Event, State};
use arches_core::{schedule, Acl, Policy, Reservation, Standing, Time};
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};

mod common;
use common::{gres_state, loaded_state, policy, Lcg, Mix};

fn iteration(c: &mut Criterion) {
    let mut g = c.benchmark_group("iteration");
    g.sample_size(10);
    let s = loaded_state(100_000, 10_000);
    for depth in [1u32, 10, 100] {
        let p = policy(depth);
        let id = format!("jobs=100000,nodes=10000,depth={depth}");
        g.bench_function(id, |b| b.iter(|| black_box(schedule(&s, &p, 1_000_000))));
    }
    let (rs, rp) = with_reservations(&s, policy(1));
    g.bench_function("jobs=100000,nodes=10000,depth=1,rsv", |b| {
        b.iter(|| black_box(schedule(&rs, &rp, 1_000_000)))
    });
    let (ps, pp) = with_policies(100_000, 10_000, policy(1));
    g.bench_function("jobs=100000,nodes=10000,depth=1,policies", |b| {
        b.iter(|| black_box(schedule(&ps, &pp, 1_000_000)))
    });
    g.finish();
}

/// [`loaded_state`] with one idle job in ten node-constrained (half
/// `nodes=N:ppn=P`, half a feature half the nodes have) and QoS `hi`/`lo`
/// on alternate jobs; `p` with MAXJOB 20,40 and MAXPROC 400,800 per user,
/// QoS priorities and weights on queue time, expansion factor, user and QoS.
fn with_policies(jobs: u64, nodes: u32, mut p: Policy) -> (State, Policy) {
    use arches_core::policy::{Limit, QosConfig};
    let mut rng = Lcg(99);
    let base = loaded_state(jobs, nodes);
    let mut node_list: Vec<Node> = base.nodes().to_vec();
    for (i, n) in node_list.iter_mut().enumerate() {
        if i % 2 == 0 {
            n.features = vec!["fast".into()];
        }
    }
    let mut s = State::new(node_list);
    let mut all: Vec<&Job> = base.jobs().collect();
    all.sort_by_key(|j| (j.run.is_none(), j.id));
    for j in all {
        let mut job = j.clone();
        let run = job.run.take();
        job.state = arches_core::JobState::Idle;
        if run.is_none() {
            match rng.below(20) {
                0 => {
                    let n = 1 + rng.below(4) as u32;
                    let ppn = 1 + rng.below(8) as u32;
                    job.req.nodes = Some(n);
                    job.req.tasks_per_node = Some(ppn);
                    job.req.tasks = n * ppn;
                }
                1 => job.req.features = vec!["fast".into()],
                _ => {}
            }
            job.cred.qos = Some(if job.id % 2 == 0 { "hi" } else { "lo" }.into());
        }
        s.apply(Event::submit(job), 0).unwrap();
        if let Some(r) = run {
            let ev = Event::Start {
                job: j.id,
                alloc: r.alloc,
                kind: r.how,
            };
            s.apply(ev, 0).unwrap();
        }
    }
    for u in 0..50 {
        let c = p.users.entry(format!("u{u}")).or_default();
        c.limits.max_job = Some(Limit { soft: 20, hard: 40 });
        c.limits.max_proc = Some(Limit {
            soft: 400,
            hard: 800,
        });
        c.priority = i64::from(u);
    }
    for (q, prio) in [("hi", 1000), ("lo", 0)] {
        p.qos.insert(
            q.into(),
            QosConfig {
                priority: prio,
                ..QosConfig::default()
            },
        );
    }
    p.weights.xfactor = 10;
    p.weights.user = 1;
    p.weights.qos = 1;
    (s, p)
}

/// `s` and `p` with an administrative reservation of n0..n999 (12 hours,
/// user u0) and a standing daily reservation of n5000..n5199 (8:00-17:00,
/// group g1).
fn with_reservations(s: &State, mut p: Policy) -> (State, Policy) {
    let mut s = s.clone();
    let r = Reservation {
        id: "system.1".into(),
        start: 1_000_000,
        end: Some(1_000_000 + 12 * 3600),
        hosts: (0..1000).map(|i| format!("n{i}")).collect(),
        procs: 0,
        acl: Acl {
            users: vec!["u0".into()],
            ..Acl::default()
        },
        flags: Vec::new(),
        owner: None,
        standing: None,
        group: None,
    };
    s.add_reservation(r).unwrap();
    let mut st = Standing::new("day");
    st.start_time = Some(8 * 3600);
    st.end_time = Some(17 * 3600);
    st.hosts = (5000..5200).map(|i| format!("n{i}")).collect();
    st.acl.groups = vec!["g1".into()];
    p.standing.push(st);
    (s, p)
}

fn scaling(c: &mut Criterion) {
    let mut g = c.benchmark_group("scaling");
    g.sample_size(10);
    for (jobs, nodes) in [(1_000u64, 1_000u32), (10_000, 1_000), (10_000, 10_000)] {
        let s = loaded_state(jobs, nodes);
        for depth in [1u32, 10, 100] {
            let p = policy(depth);
            let id =
                BenchmarkId::from_parameter(format!("jobs={jobs},nodes={nodes},depth={depth}"));
            g.bench_with_input(id, &p, |b, p| {
                b.iter(|| black_box(schedule(&s, p, 1_000_000)))
            });
        }
    }
    g.finish();
}

/// Replays a synthetic pyss-style workload; returns the sum of waits.
fn replay(jobs: u64, procs: u32, policy: &Policy) -> i64 {
    let mut rng = Lcg(7);
    let mut s = State::new(vec![Node::new("m", procs, 0)]);
    let mut subs: Vec<(Time, Job, i64)> = Vec::new();
    let mut t = 0;
    for id in 1..=jobs {
        // Mean inter-arrival 1,400 s: an offered load of about 0.9.
        t += rng.below(2_800) as i64;
        let p = (1u32 << rng.below(7)).min(procs);
        let wall = 60 + rng.below(36_000) as i64;
        let run = 1 + rng.below(wall as u64) as i64;
        subs.push((t, Job::new(id, "u", Request::procs(p), Some(wall), t), run));
    }
    let mut ends: BTreeMap<Time, Vec<u64>> = BTreeMap::new();
    let mut runtime = BTreeMap::new();
    let mut wait = 0;
    let mut next = 0;
    loop {
        let ts = subs.get(next).map(|s| s.0);
        let te = ends.keys().next().copied();
        let now = match (ts, te) {
            (Some(a), Some(b)) => a.min(b),
            (Some(a), None) => a,
            (None, Some(b)) => b,
            (None, None) => break,
        };
        while next < subs.len() && subs[next].0 == now {
            let (_, job, run) = subs[next].clone();
            runtime.insert(job.id, run);
            s.apply(Event::submit(job), now).unwrap();
            next += 1;
        }
        if let Some(ids) = ends.remove(&now) {
            for id in ids {
                let code = CompletionCode::Exit(0);
                s.apply(Event::Finish { job: id, code }, now).unwrap();
                s.apply(Event::Purge { job: id }, now).unwrap();
            }
        }
        let plan = schedule(&s, policy, now);
        for st in plan.starts {
            wait += now - s.job(st.job).map_or(now, |j| j.submit_time);
            ends.entry(now + runtime[&st.job]).or_default().push(st.job);
            let ev = Event::Start {
                job: st.job,
                alloc: st.alloc,
                kind: st.kind,
            };
            s.apply(ev, now).unwrap();
        }
    }
    wait
}

fn replays(c: &mut Criterion) {
    let mut g = c.benchmark_group("replay");
    g.sample_size(10);
    let easy = policy(1);
    g.bench_function("easy-60k", |b| {
        b.iter(|| black_box(replay(60_000, 128, &easy)))
    });
    let cons = policy(10_000);
    g.bench_function("conservative-60k", |b| {
        b.iter(|| black_box(replay(60_000, 128, &cons)))
    });
    g.finish();
}

fn gres(c: &mut Criterion) {
    let mut g = c.benchmark_group("gres");
    g.sample_size(10);
    let p = policy(1);
    // Every fifth node with GPUs (a mixed machine), then every node.
    for (every, machine) in [(5u32, ""), (1, ",all-gpu-nodes")] {
        for (mix, label) in [
            (Mix::CpuOnly, "cpu-only"),
            (Mix::SmallTasks, "gpu-10pct-shapes-without-gpus"),
            (Mix::Gpus, "gpu-10pct"),
        ] {
            let st = gres_state(100_000, 10_000, mix, every);
            // What the iteration decides (outside the measurement).
            let plan = schedule(&st, &p, 1_000_000);
            let with_gpus = plan
                .starts
                .iter()
                .filter(|s| s.alloc.iter().any(|a| !a.gres.is_empty()))
                .count();
            let free: u32 = (0..st.nodes().len() as u32)
                .map(|i| st.free_gres(i).0.iter().sum::<u32>())
                .sum();
            eprintln!(
                "gres{machine}/{label}: {} starts ({with_gpus} with GPUs), {} reservations, {free} GPUs free",
                plan.starts.len(),
                plan.reservations.len()
            );
            g.bench_function(
                format!("jobs=100000,nodes=10000,depth=1{machine},{label}"),
                |b| b.iter(|| black_box(schedule(&st, &p, 1_000_000))),
            );
        }
    }
    g.finish();
}

criterion_group!(benches, iteration, gres, scaling, replays);
criterion_main!(benches);
