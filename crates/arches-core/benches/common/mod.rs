//! Workloads shared by the `iteration` benchmark and the `gres_iteration`
//! example (which counts the instructions of an iteration under callgrind):
//! deterministic, from a fixed linear congruential generator.

#![allow(dead_code)]

use arches_core::job::{Alloc, Job, Request, StartKind};
use arches_core::node::Node;
use arches_core::policy::ReservationBucket;
use arches_core::state::{Event, State};
use arches_core::{Policy, Time};

pub struct Lcg(pub u64);

impl Lcg {
    pub fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// `nodes` 8-processor nodes, ~90% busy with running jobs of varied ends,
/// and `jobs` idle jobs.
pub fn loaded_state(jobs: u64, nodes: u32) -> State {
    let mut rng = Lcg(42);
    let node_list = (0..nodes)
        .map(|i| Node::new(&format!("n{i}"), 8, 0))
        .collect();
    let mut s = State::new(node_list);
    let mut id = 1;
    for n in 0..nodes {
        if rng.below(10) == 0 {
            continue;
        }
        let wall = 600 + rng.below(86_400) as i64;
        let job = Job::new(id, "r", Request::procs(8), Some(wall), 0);
        s.apply(Event::submit(job), 0).unwrap();
        let alloc = vec![Alloc {
            node: n,
            tasks: 8,
            procs: 8,
            mem_mb: 0,
            gres: Default::default(),
        }];
        let kind = StartKind::Priority;
        s.apply(
            Event::Start {
                job: id,
                alloc,
                kind,
            },
            0,
        )
        .unwrap();
        id += 1;
    }
    for k in 0..jobs {
        let procs = 1u32 << rng.below(9);
        let wall = 60 + rng.below(86_400) as i64;
        let user = format!("u{}", rng.below(50));
        let job = Job::new(id, &user, Request::procs(procs), Some(wall), k as Time);
        s.apply(Event::submit(job), 0).unwrap();
        id += 1;
    }
    s
}

pub fn policy(depth: u32) -> Policy {
    Policy {
        reservation_buckets: vec![ReservationBucket { depth, qos: None }],
        backfill_depth: 0,
        ..Policy::default()
    }
}

/// The idle jobs of [`gres_state`].
#[derive(Clone, Copy, PartialEq)]
pub enum Mix {
    /// Those of [`loaded_state`] (1–256 processors each).
    CpuOnly,
    /// One in ten reshaped to 1–4 tasks, without GPUs: the control of
    /// `Gpus` (the same jobs less the GPU requests).
    SmallTasks,
    /// One in ten with 1–4 tasks of 1–2 GPUs each.
    Gpus,
}

/// [`loaded_state`] on nodes of which every `every`-th has 4 GPUs; the
/// running jobs on GPU nodes hold 1–4 of them; the idle jobs as `mix` says.
pub fn gres_state(jobs: u64, nodes: u32, mix: Mix, every: u32) -> State {
    let mut rng = Lcg(4242);
    let base = loaded_state(jobs, nodes);
    let node_list: Vec<Node> = base
        .nodes()
        .iter()
        .enumerate()
        .map(|(i, n)| {
            let mut n = n.clone();
            if i as u32 % every == 0 {
                n.gres = vec![("gpu".into(), 4)];
            }
            n
        })
        .collect();
    let mut s = State::new(node_list);
    let gpu = s.gres_table().id("gpu").unwrap();
    let mut gpus_used = vec![0u32; s.nodes().len()];
    let mut all: Vec<&Job> = base.jobs().collect();
    all.sort_by_key(|j| (j.run.is_none(), j.id));
    for j in all {
        let mut job = j.clone();
        let run = job.run.take();
        job.state = arches_core::JobState::Idle;
        if run.is_none() && mix != Mix::CpuOnly && rng.below(10) == 0 {
            job.req.tasks = 1 + rng.below(4) as u32;
            let gpus = 1 + rng.below(2) as u32;
            if mix == Mix::Gpus {
                job.req.layout_mut().gres = vec![("gpu".into(), gpus)];
            }
        }
        s.apply(Event::submit(job), 0).unwrap();
        if let Some(r) = run {
            let mut alloc = r.alloc;
            for a in alloc.iter_mut() {
                let used = &mut gpus_used[a.node as usize];
                if a.node % every == 0 && *used < 4 {
                    let n = (1 + rng.below(4) as u32).min(4 - *used);
                    *used += n;
                    a.gres.set(gpu, n);
                }
            }
            let ev = Event::Start {
                job: j.id,
                alloc,
                kind: r.how,
            };
            s.apply(ev, 0).unwrap();
        }
    }
    s
}
