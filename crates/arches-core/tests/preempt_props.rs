//! Property tests of preemption victim choice: on random clusters of
//! running preemptees, a preemptor's plan never takes more than 32 victims,
//! only takes lower-priority PREEMPTEE jobs with a method each allows, is
//! accepted by `State::apply`, never preempts a job it does not need, and
//! always preempts when at most 32 preemptees could free enough.

use arches_core::job::{Job, JobFlag, JobId, Request};
use arches_core::node::Node;
use arches_core::policy::{PreemptPolicy, QosConfig, QosFlag, ReservationPolicy};
use arches_core::preempt::{method_for, MAX_PREEMPTEES};
use arches_core::state::{Event, State};
use arches_core::{schedule, Policy};
use proptest::prelude::*;

fn policy(p: PreemptPolicy) -> Policy {
    let mut pol = Policy {
        preempt_policy: p,
        reservation_policy: ReservationPolicy::Never,
        ..Policy::default()
    };
    pol.weights.qos = 1;
    pol.qos.insert(
        "high".into(),
        QosConfig {
            priority: 1000,
            flags: vec![QosFlag::Preemptor],
            ..QosConfig::default()
        },
    );
    for i in 0..5 {
        pol.qos.insert(
            format!("low{i}"),
            QosConfig {
                priority: i * 10,
                flags: vec![QosFlag::Preemptee],
                ..QosConfig::default()
            },
        );
    }
    pol
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn victims_are_few_needed_and_allowed(
        nodes in prop::collection::vec(1u32..9, 1..6),
        jobs in prop::collection::vec((1u32..5, 0i64..5, 0u8..16, 0i64..90), 1..50),
        need in 1u32..30,
        pp in prop::sample::select(vec![
            PreemptPolicy::Suspend, PreemptPolicy::Checkpoint,
            PreemptPolicy::Requeue, PreemptPolicy::Cancel,
        ]),
    ) {
        let pol = policy(pp);
        let cluster: Vec<Node> = nodes
            .iter()
            .enumerate()
            .map(|(i, p)| Node::new(&format!("n{i}"), *p, 0))
            .collect();
        let capacity: u32 = nodes.iter().sum();
        let mut state = State::new(cluster);
        // Fill the machine with preemptees started at various times.
        for (k, (procs, q, flags, t)) in jobs.iter().enumerate() {
            let id = k as JobId + 1;
            let mut j = Job::new(id, "u", Request::procs(*procs), Some(10_000), 0);
            j.cred.qos = Some(format!("low{q}"));
            for (bit, f) in [JobFlag::Suspendable, JobFlag::Checkpointable, JobFlag::Restartable]
                .into_iter()
                .enumerate()
            {
                if flags & (1 << bit) != 0 {
                    j.flags.insert(f);
                }
            }
            state.apply(Event::Submit(Box::new(j)), *t).unwrap();
            let plan = schedule(&state, &pol, *t);
            for s in &plan.starts {
                state
                    .apply(Event::Start { job: s.job, alloc: s.alloc.clone(), kind: s.kind }, *t)
                    .unwrap();
            }
        }
        let now = 100;
        let idle: u32 = (0..nodes.len() as u32).map(|n| state.free_procs(n)).sum();
        let cands: Vec<(JobId, u32)> = state
            .active()
            .map(|j| (j.id, j.procs()))
            .collect();
        let pid: JobId = 1000;
        let mut p = Job::new(pid, "u", Request::procs(need), Some(100), now);
        p.cred.qos = Some("high".into());
        state.apply(Event::Submit(Box::new(p)), now).unwrap();
        let plan = schedule(&state, &pol, now);
        prop_assert!(plan.preemptions.len() <= MAX_PREEMPTEES);
        let started = plan.starts.iter().any(|s| s.job == pid);
        let mut freed = 0u32;
        let mut smallest = u32::MAX;
        for v in &plan.preemptions {
            prop_assert_eq!(v.by, pid);
            let job = state.job(v.job).unwrap();
            prop_assert_eq!(v.method, method_for(job, &pol, pp, false));
            freed += job.procs();
            smallest = smallest.min(job.procs());
        }
        for v in &plan.preemptions {
            let ev = match v.method {
                PreemptPolicy::Suspend => Event::Suspend { job: v.job },
                PreemptPolicy::Cancel => Event::Cancel { job: v.job },
                _ => Event::Requeue { job: v.job },
            };
            prop_assert!(state.apply(ev, now).is_ok());
        }
        for s in &plan.starts {
            let r = state.apply(Event::Start { job: s.job, alloc: s.alloc.clone(), kind: s.kind }, now);
            prop_assert!(r.is_ok(), "start refused: {:?}", r);
        }
        if idle >= need {
            prop_assert!(plan.preemptions.is_empty());
        }
        if started && !plan.preemptions.is_empty() {
            // Minimal: without its smallest victim the preemptor would not fit.
            prop_assert!(idle + freed >= need);
            prop_assert!(idle + freed - smallest < need, "more victims than needed");
        }
        if !started {
            prop_assert!(plan.preemptions.is_empty());
            let total: u32 = cands.iter().map(|c| c.1).sum();
            prop_assert!(
                need > capacity || idle + total < need || cands.len() > MAX_PREEMPTEES,
                "a fitting victim set existed"
            );
        }
    }
}
