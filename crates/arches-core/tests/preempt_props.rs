//! Property tests of preemption victim choice: on random clusters of
//! running preemptees, a preemptor's plan never takes more than 32 victims,
//! only takes lower-priority PREEMPTEE jobs with a method each allows, is
//! accepted by `State::apply`, never preempts a job it does not need, and
//! always preempts when at most 32 preemptees could free enough; the
//! preemptor starts at once unless a victim is checkpointed or requeued, in
//! which case it waits for them with its resources locked. On small cases
//! the chosen set is the brute-force optimum: lowest highest priority, then
//! least work lost, then fewest jobs, then fewest nodes, then fewest
//! processors; for preemptors planned on the aggregate profile and for
//! preemptors that need one node.

use arches_core::job::{Job, JobFlag, JobId, Request, RequeueCause};
use arches_core::node::Node;
use arches_core::placement::place;
use arches_core::plan::BlockReason;
use arches_core::policy::{PreemptPolicy, QosConfig, QosFlag, ReservationPolicy};
use arches_core::preempt::{active_secs, method_for, run_priority, terminates, MAX_PREEMPTEES};
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
            j.cred.qos = Some(format!("low{q}").into());
            for (bit, f) in [JobFlag::Suspendable, JobFlag::Checkpointable, JobFlag::Restartable]
                .into_iter()
                .enumerate()
            {
                if flags & (1 << bit) != 0 {
                    j.flags.insert(f);
                }
            }
            state.apply(Event::submit(j), *t).unwrap();
            let plan = schedule(&state, &pol, *t);
            prop_assert!(!plan.acts() || !arches_core::quiet::nothing_can_start(&state, &pol));
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
        state.apply(Event::submit(p), now).unwrap();
        let plan = schedule(&state, &pol, now);
        prop_assert!(!plan.acts() || !arches_core::quiet::nothing_can_start(&state, &pol));
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
        let waits = plan.preemptions.iter().any(|v| terminates(v.method));
        prop_assert_eq!(waits, !started && !plan.preemptions.is_empty(),
            "waits exactly when a victim terminates");
        if waits {
            let reason = plan.decisions.get(&pid).and_then(|d| d.reason.clone());
            prop_assert!(matches!(reason, Some(BlockReason::Preempting(_))), "{:?}", reason);
            prop_assert!(plan.locks.iter().any(|l| l.job == pid), "a waiting preemptor locks");
        }
        for v in &plan.preemptions {
            let ev = match v.method {
                PreemptPolicy::Suspend => Event::Suspend { job: v.job },
                PreemptPolicy::Cancel => Event::Cancel { job: v.job },
                _ => Event::Terminate {
                    job: v.job,
                    cause: RequeueCause::Requeue,
                    by: Some(pid),
                    until: now + 5,
                },
            };
            prop_assert!(state.apply(ev, now).is_ok());
        }
        for l in &plan.locks {
            let ev = Event::Lock { job: l.job, alloc: l.alloc.clone(), retry: l.retry };
            prop_assert!(state.apply(ev, now).is_ok());
        }
        for s in &plan.starts {
            let r = state.apply(Event::Start { job: s.job, alloc: s.alloc.clone(), kind: s.kind }, now);
            prop_assert!(r.is_ok(), "start refused: {:?}", r);
        }
        if waits {
            // Meanwhile nothing else is chosen; once the victims are gone
            // the preemptor starts on what was freed.
            let again = schedule(&state, &pol, now + 1);
            prop_assert!(again.preemptions.is_empty(), "{:?}", again.preemptions);
            prop_assert!(again.starts.is_empty());
            for v in plan.preemptions.iter().filter(|v| terminates(v.method)) {
                let r = state.apply(Event::Requeue { job: v.job }, now + 2);
                prop_assert!(r.is_ok(), "{:?}", r);
            }
            let later = schedule(&state, &pol, now + 2);
            prop_assert!(later.preemptions.is_empty());
            prop_assert!(later.starts.iter().any(|s| s.job == pid), "starts once they are gone");
        }
        if idle >= need {
            prop_assert!(plan.preemptions.is_empty());
        }
        if !plan.preemptions.is_empty() {
            // Minimal: without its smallest victim the preemptor would not fit.
            prop_assert!(idle + freed >= need);
            prop_assert!(idle + freed - smallest < need, "more victims than needed");
        }
        if !started && !waits {
            prop_assert!(plan.preemptions.is_empty());
            let total: u32 = cands.iter().map(|c| c.1).sum();
            prop_assert!(
                need > capacity || idle + total < need || cands.len() > MAX_PREEMPTEES,
                "a fitting victim set existed"
            );
        }
    }
}

/// (highest start priority, work lost, jobs, distinct nodes, processors).
type SetCost = ((bool, i64), i64, usize, usize, u32);

/// The brute-force cost of a victim set: (highest start priority, work
/// lost, jobs, distinct nodes, processors), or `None` when the preemptor
/// does not fit after it.
fn set_cost(
    state: &State,
    pol: &Policy,
    pp: PreemptPolicy,
    set: &[&Job],
    req: &Request,
    now: i64,
) -> Option<SetCost> {
    let n = state.nodes().len();
    let mut free: Vec<u32> = (0..n as u32).map(|i| state.free_procs(i)).collect();
    let mut nodes = std::collections::BTreeSet::new();
    let mut lost = 0i64;
    let mut prio = (false, i64::MIN);
    for j in set {
        let run = j.run.as_ref().unwrap();
        for a in &run.alloc {
            free[a.node as usize] += a.procs;
            nodes.insert(a.node);
        }
        let m = method_for(j, pol, pp, false);
        if matches!(m, PreemptPolicy::Requeue | PreemptPolicy::Cancel) {
            lost += active_secs(j, now) * i64::from(run.procs());
        }
        prio = prio.max(run_priority(j, pol));
    }
    place(state.nodes(), req, pol.node_allocation, 0..n as u32, |i| {
        (free[i as usize], 0)
    })?;
    let procs = set.iter().map(|j| j.procs()).sum();
    Some((prio, lost, set.len(), nodes.len(), procs))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn victim_set_is_the_brute_force_optimum(
        nodes in prop::collection::vec(1u32..7, 1..4),
        jobs in prop::collection::vec((1u32..5, 0i64..3, 0u8..8, 0i64..90), 1..11),
        need in 1u32..16,
        one_node in any::<bool>(),
        pp in prop::sample::select(vec![
            PreemptPolicy::Suspend, PreemptPolicy::Checkpoint,
            PreemptPolicy::Requeue, PreemptPolicy::Cancel,
        ]),
    ) {
        let pol = policy(pp);
        // Either processors anywhere (planned on the aggregate) or all on
        // one node (placed node by node).
        let req = if one_node {
            let mut r = Request::procs(need.min(6));
            r.nodes = Some(1);
            r.tasks_per_node = Some(need.min(6));
            r
        } else {
            Request::procs(need)
        };
        let cluster: Vec<Node> = nodes
            .iter()
            .enumerate()
            .map(|(i, p)| Node::new(&format!("n{i}"), *p, 0))
            .collect();
        let mut state = State::new(cluster);
        for (k, (procs, q, flags, t)) in jobs.iter().enumerate() {
            let id = k as JobId + 1;
            let mut j = Job::new(id, "u", Request::procs(*procs), Some(10_000), 0);
            j.cred.qos = Some(format!("low{q}").into());
            for (bit, f) in [JobFlag::Suspendable, JobFlag::Checkpointable, JobFlag::Restartable]
                .into_iter()
                .enumerate()
            {
                if flags & (1 << bit) != 0 {
                    j.flags.insert(f);
                }
            }
            state.apply(Event::submit(j), *t).unwrap();
            let plan = schedule(&state, &pol, *t);
            prop_assert!(!plan.acts() || !arches_core::quiet::nothing_can_start(&state, &pol));
            for s in &plan.starts {
                state
                    .apply(Event::Start { job: s.job, alloc: s.alloc.clone(), kind: s.kind }, *t)
                    .unwrap();
            }
        }
        let now = 100;
        let cands: Vec<&Job> = state.active().collect();
        // Every feasible subset, by brute force.
        let mut best: Option<SetCost> = None;
        for mask in 1u32..(1 << cands.len()) {
            let set: Vec<&Job> = (0..cands.len())
                .filter(|b| mask & (1 << b) != 0)
                .map(|b| cands[b])
                .collect();
            if set.len() > MAX_PREEMPTEES {
                continue;
            }
            if let Some(c) = set_cost(&state, &pol, pp, &set, &req, now) {
                if best.is_none_or(|b| c < b) {
                    best = Some(c);
                }
            }
        }
        let idle_fits = set_cost(&state, &pol, pp, &[], &req, now).is_some();
        let pid: JobId = 1000;
        let mut p = Job::new(pid, "u", req.clone(), Some(100), now);
        p.cred.qos = Some("high".into());
        let mut after = state.clone();
        after.apply(Event::submit(p), now).unwrap();
        let plan = schedule(&after, &pol, now);
        prop_assert!(!plan.acts() || !arches_core::quiet::nothing_can_start(&after, &pol));
        let chosen: Vec<&Job> = plan
            .preemptions
            .iter()
            .map(|v| state.job(v.job).unwrap())
            .collect();
        if idle_fits {
            prop_assert!(chosen.is_empty());
        } else {
            let got = set_cost(&state, &pol, pp, &chosen, &req, now);
            prop_assert_eq!(got, best, "chosen {:?}", plan.preemptions);
        }
    }
}
