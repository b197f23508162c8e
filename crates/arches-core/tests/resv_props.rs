//! Property tests of administrative reservations over whole replays: on
//! random clusters, reservations and workloads, nothing is ever
//! over-allocated, no job outside a reservation's access list ever runs on
//! a reserved node during its window (by its wall-clock limit), and every
//! job that fits the machine still runs once the windows are over.

use std::collections::BTreeMap;

use arches_core::job::{CompletionCode, Job, JobId, Request};
use arches_core::node::Node;
use arches_core::plan::BlockReason;
use arches_core::state::{Event, State};
use arches_core::{schedule, Acl, Policy, Reservation, Time};
use proptest::prelude::*;

#[derive(Debug, Clone)]
struct JobSpec {
    submit: Time,
    procs: u32,
    ppn: Option<(u32, u32)>,
    user_a: bool,
    wall: i64,
    run: i64,
}

fn job_spec() -> impl Strategy<Value = JobSpec> {
    (
        0i64..200,
        1u32..8,
        prop::option::weighted(0.2, (1u32..3, 1u32..3)),
        prop::bool::weighted(0.4),
        1i64..200,
        1i64..200,
    )
        .prop_map(|(submit, procs, ppn, user_a, wall, run)| JobSpec {
            submit,
            procs,
            ppn,
            user_a,
            wall,
            run: run.min(wall),
        })
}

/// (host mask, start, duration, procs (0 = whole hosts), admits user a)
type RsvSpec = (u8, Time, i64, u32, bool);

fn rsv_spec() -> impl Strategy<Value = RsvSpec> {
    (
        1u8..16,
        0i64..300,
        1i64..300,
        prop::sample::select(vec![0u32, 0, 2]),
        prop::bool::ANY,
    )
}

fn make_job(id: JobId, s: &JobSpec) -> Job {
    let mut req = Request::procs(s.procs);
    if let Some((nodes, ppn)) = s.ppn {
        req.nodes = Some(nodes);
        req.tasks_per_node = Some(ppn);
        req.tasks = nodes * ppn;
    }
    let user = if s.user_a { "a" } else { "b" };
    Job::new(id, user, req, Some(s.wall), s.submit)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn reservations_keep_others_off_and_never_overallocate(
        sizes in prop::collection::vec(1u32..9, 1..5),
        rsvs in prop::collection::vec(rsv_spec(), 1..3),
        specs in prop::collection::vec(job_spec(), 1..20),
    ) {
        let nodes: Vec<Node> = sizes
            .iter()
            .enumerate()
            .map(|(i, p)| Node::new(&format!("n{i}"), *p, 0))
            .collect();
        let mut state = State::new(nodes.clone());
        let mut windows = Vec::new();
        for (k, (mask, start, dur, procs, admits_a)) in rsvs.iter().enumerate() {
            let hosts: Vec<String> = (0..nodes.len())
                .filter(|i| mask & (1 << i) != 0)
                .map(|i| format!("n{i}"))
                .collect();
            if hosts.is_empty() {
                continue;
            }
            let r = Reservation {
                id: format!("system.{k}"),
                start: *start,
                end: Some(start + dur),
                hosts,
                procs: *procs,
                acl: Acl {
                    users: if *admits_a { vec!["a".into()] } else { Vec::new() },
                    ..Acl::default()
                },
                flags: Vec::new(),
                owner: None,
                standing: None,
                group: None,
            };
            // Overlapping host reservations are refused; skip those.
            if state.add_reservation(r.clone()).is_ok() {
                windows.push((r.resolve(&state), r));
            }
        }
        let policy = Policy::default();
        let mut ends: BTreeMap<Time, Vec<JobId>> = BTreeMap::new();
        let mut times: Vec<Time> = specs.iter().map(|s| s.submit).collect();
        let mut order: Vec<usize> = (0..specs.len()).collect();
        order.sort_by_key(|i| specs[*i].submit);
        let (mut submitted, mut started, mut never, mut steps) = (0usize, 0usize, 0usize, 0);
        loop {
            times.sort_unstable();
            times.dedup();
            let Some(now) = times.first().copied() else { break };
            times.remove(0);
            steps += 1;
            prop_assert!(steps < 10_000, "no progress");
            while submitted < order.len() && specs[order[submitted]].submit <= now {
                let k = order[submitted];
                let job = make_job(k as JobId + 1, &specs[k]);
                state.apply(Event::submit(job), now).unwrap();
                submitted += 1;
            }
            for id in ends.remove(&now).unwrap_or_default() {
                let code = CompletionCode::Exit(0);
                state.apply(Event::Finish { job: id, code }, now).unwrap();
            }
            let plan = schedule(&state, &policy, now);
            for s in &plan.starts {
                let res = state.apply(
                    Event::Start { job: s.job, alloc: s.alloc.clone(), kind: s.kind },
                    now,
                );
                prop_assert!(res.is_ok(), "start refused: {:?}", res);
                let spec = &specs[s.job as usize - 1];
                let job = state.job(s.job).unwrap();
                for (on, r) in &windows {
                    // Whole-host reservations of nodes the job is not
                    // admitted to: no overlap with the window at all.
                    if r.procs != 0 || r.acl.admits(&job.cred, job.cred.qos.as_deref()) {
                        continue;
                    }
                    let overlaps = now < r.end.unwrap() && now + spec.wall > r.start;
                    let reserved = s.alloc.iter().any(|a| on.iter().any(|x| x.0 == a.node));
                    prop_assert!(
                        !(overlaps && reserved),
                        "job {} ({:?}) runs {}..{} on {:?} inside {:?}",
                        s.job, job.cred.user, now, now + spec.wall, s.alloc, r
                    );
                }
                let end = now + spec.run.max(1);
                ends.entry(end).or_default().push(s.job);
                times.push(end);
                started += 1;
            }
            if let Some(w) = plan.next_wakeup {
                times.push(w);
            }
            if times.is_empty() && submitted == order.len() && ends.is_empty() {
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
