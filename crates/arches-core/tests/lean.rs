//! `schedule_lean` against `schedule`: on random replays (clusters, jobs with
//! holds, start dates, estimates, node constraints, overruns, cancellations,
//! QoS flags; random policies), every iteration where the lean path applies
//! gives exactly the full iteration's starts, reservations and next wake-up.
//! The replay applies the full plan's starts (and, under `HIGHEST`, keeps its
//! reservations), so the state indexes the lean path reads are exercised
//! through every kind of event.

use std::collections::BTreeMap;

use arches_core::job::{CompletionCode, Dependency, DependencyKind, HoldType, Job, JobId, Request};
use arches_core::lean::{decisions_policy, lean_supported};
use arches_core::node::Node;
use arches_core::policy::{
    BackfillMetric, BackfillPolicy, NodeAllocationPolicy, QosConfig, QosFlag, ReservationBucket,
    ReservationPolicy,
};
use arches_core::state::{Event, JobChange, State};
use arches_core::{schedule, schedule_lean, schedule_lean_in, LeanScratch, Policy, Time};
use proptest::prelude::*;

#[derive(Debug, Clone)]
struct Spec {
    submit: Time,
    procs: u32,
    ppn: Option<(u32, u32)>,
    wall: Option<i64>,
    estimate: Option<i64>,
    run: i64,
    hold_until: Option<Time>,
    start_after: Option<Time>,
    qos: u8,
    cancel_at: Option<Time>,
    /// Depends on the job this many ids before (`after`, `afterok` or
    /// `afterany`).
    after: Option<(u64, u8)>,
}

fn spec() -> impl Strategy<Value = Spec> {
    (
        (
            0i64..300,
            1u32..12,
            prop::option::weighted(0.1, (1u32..3, 1u32..3)),
        ),
        (
            prop::option::weighted(0.9, 1i64..400),
            prop::option::weighted(0.2, 1i64..300),
            1i64..500,
        ),
        (
            prop::option::weighted(0.1, 0i64..400),
            prop::option::weighted(0.1, 0i64..400),
            0u8..4,
            prop::option::weighted(0.05, 0i64..400),
        ),
    )
        .prop_map(
            |(
                (submit, procs, ppn),
                (wall, estimate, run),
                (hold_until, start_after, qos, cancel_at),
            )| Spec {
                submit,
                procs,
                ppn,
                wall,
                estimate,
                run,
                hold_until,
                start_after,
                qos,
                cancel_at,
                after: None,
            },
        )
}

/// Jobs submitted close together, with long runs and rarely anything but
/// a submission: the queue grows at its tail between iterations.
fn burst_spec() -> impl Strategy<Value = Spec> {
    (
        spec(),
        0i64..120,
        100i64..600,
        0u8..20,
        prop::option::weighted(0.15, (1u64..4, 0u8..3)),
    )
        .prop_map(|(mut s, submit, run, rare, after)| {
            s.submit = submit;
            s.run = run;
            s.after = after;
            if rare > 0 {
                s.hold_until = None;
                s.cancel_at = None;
                s.start_after = None;
                // Runs end within their planning duration (none overdue).
                s.wall = s.wall.map(|w| run + w);
                s.estimate = s.estimate.map(|e| run + e);
            }
            s
        })
}

fn policy() -> impl Strategy<Value = Policy> {
    (
        prop::sample::select(vec![
            BackfillPolicy::FirstFit,
            BackfillPolicy::None,
            BackfillPolicy::BestFit,
            BackfillPolicy::Greedy,
        ]),
        prop::sample::select(vec![0u32, 1, 2, 5, 100]),
        prop::sample::select(vec![
            ReservationPolicy::CurrentHighest,
            ReservationPolicy::CurrentHighest,
            ReservationPolicy::Never,
            ReservationPolicy::Highest,
        ]),
        prop::sample::select(NodeAllocationPolicy::ALL.to_vec()),
        0u8..4,
        0i64..3,
        prop::sample::select(vec![
            BackfillMetric::Procs,
            BackfillMetric::Nodes,
            BackfillMetric::Seconds,
            BackfillMetric::ProcSeconds,
        ]),
    )
        .prop_map(|(bf, depth, rp, na, qos_mode, qtw, metric)| {
            let mut p = Policy {
                backfill: bf,
                backfill_metric: metric,
                reservation_buckets: vec![ReservationBucket { depth, qos: None }],
                reservation_policy: rp,
                node_allocation: na,
                ..Policy::default()
            };
            p.weights.queuetime = qtw;
            let flag = |f: QosFlag| QosConfig {
                flags: vec![f],
                ..QosConfig::default()
            };
            match qos_mode {
                1 => {
                    p.qos.insert("q1".into(), flag(QosFlag::NoBf));
                    p.qos.insert("q2".into(), flag(QosFlag::NoReservation));
                }
                2 => {
                    // Two buckets: q1 and q2 share one, everything else the other.
                    p.reservation_buckets = vec![
                        ReservationBucket {
                            depth: 1,
                            qos: Some(vec!["q1".into(), "q2".into()]),
                        },
                        ReservationBucket {
                            depth: depth.max(1),
                            qos: None,
                        },
                    ];
                }
                _ => {}
            }
            p
        })
}

fn make_job(id: JobId, s: &Spec) -> Job {
    let mut req = Request::procs(s.procs);
    if let Some((nodes, ppn)) = s.ppn {
        req.nodes = Some(nodes);
        req.tasks_per_node = Some(ppn);
        req.tasks = nodes * ppn;
    }
    let mut j = Job::new(id, "u", req, s.wall, s.submit);
    j.estimate = s.estimate;
    j.start_after = s.start_after;
    if s.hold_until.is_some() {
        j.holds.insert(HoldType::User);
    }
    if let Some((back, kind)) = s.after.filter(|a| a.0 < id) {
        let kind = [
            DependencyKind::After,
            DependencyKind::AfterOk,
            DependencyKind::AfterAny,
        ][usize::from(kind % 3)];
        j.depend.push(Dependency {
            kind,
            job: id - back,
        });
    }
    j.cred.qos = match s.qos {
        1 => Some("q1".into()),
        2 => Some("q2".into()),
        _ => None,
    };
    j
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn lean_equals_full_on_random_replays(
        sizes in prop::collection::vec(1u32..9, 1..4),
        specs in prop::collection::vec(spec(), 1..30),
        policy in policy(),
    ) {
        replay(&sizes, &specs, &policy)?;
    }

    /// Many submissions between the other events, FIRSTFIT, BESTFIT or
    /// NONE: most iterations resume the last walk in kept storage.
    #[test]
    fn lean_equals_full_on_submission_bursts(
        sizes in prop::collection::vec(1u32..9, 1..4),
        specs in prop::collection::vec(burst_spec(), 20..60),
        policy in policy().prop_filter("resumable", |p| matches!(
            p.backfill,
            BackfillPolicy::FirstFit | BackfillPolicy::BestFit | BackfillPolicy::None
        ) && p.reservation_policy != ReservationPolicy::Highest),
    ) {
        replay(&sizes, &specs, &policy)?;
    }
}

/// Replays `specs` on nodes of `sizes` processors under `policy`: at every
/// instant with an event, the lean iteration (fresh, in kept storage, and
/// deciding only) against the full one.
fn replay(sizes: &[u32], specs: &[Spec], policy: &Policy) -> Result<(), TestCaseError> {
    let policy = policy.clone();
    let nodes: Vec<Node> = sizes
        .iter()
        .enumerate()
        .map(|(i, p)| Node::new(&format!("n{i}"), *p, 0))
        .collect();
    let mut state = State::new(nodes);
    // Enabled part-way for some replays: built from the jobs present.
    let enable_at = specs[0].submit % 3 * 50;
    let mut enabled = false;
    // time -> what happens then
    let mut submits: BTreeMap<Time, Vec<usize>> = BTreeMap::new();
    for (i, s) in specs.iter().enumerate() {
        submits.entry(s.submit).or_default().push(i);
    }
    let mut ends: BTreeMap<Time, Vec<JobId>> = BTreeMap::new();
    let mut times: Vec<Time> = specs
        .iter()
        .flat_map(|s| [Some(s.submit), s.hold_until, s.start_after, s.cancel_at])
        .flatten()
        .collect();
    let mut lean_used = 0usize;
    // Storage kept across the iterations, as the simulator keeps it.
    let mut scratch = LeanScratch::default();
    // Storage whose caller reads only starts and `next_change`.
    let mut decisions = LeanScratch::default();
    decisions.set_decisions_only(true);
    // The same, under the policy as decisions see it.
    let decisive = decisions_policy(&policy);
    let mut decisions_norm = LeanScratch::default();
    decisions_norm.set_decisions_only(true);
    // The last lean plan's time, `next_wakeup` and `next_change`.
    let mut quiet: Option<(Time, Option<Time>, Option<Time>)> = None;
    loop {
        times.sort_unstable();
        times.dedup();
        let Some(now) = times.first().copied() else {
            break;
        };
        times.remove(0);
        let mut happened = false;
        for id in ends.remove(&now).unwrap_or_default() {
            if state.job(id).is_some_and(|j| j.state.is_active()) {
                happened = true;
                let code = CompletionCode::Exit(0);
                state.apply(Event::Finish { job: id, code }, now).unwrap();
                if id % 3 == 0 {
                    state.apply(Event::Purge { job: id }, now).unwrap();
                }
            }
        }
        for i in submits.remove(&now).unwrap_or_default() {
            let id = i as JobId + 1;
            happened = true;
            state
                .apply(Event::submit(make_job(id, &specs[i])), now)
                .unwrap();
        }
        for (i, s) in specs.iter().enumerate() {
            let id = i as JobId + 1;
            let Some(j) = state.job(id) else { continue };
            let held = !j.holds.is_empty();
            if s.hold_until == Some(now) && held {
                happened = true;
                state
                    .apply(
                        Event::ReleaseHold {
                            job: id,
                            hold: HoldType::User,
                        },
                        now,
                    )
                    .unwrap();
            }
            let finished = state.job(id).is_some_and(|j| j.state.is_finished());
            if s.cancel_at == Some(now) && !finished {
                happened = true;
                state.apply(Event::Cancel { job: id }, now).unwrap();
            }
            // A running job that outlived its estimate gets a longer one.
            let overdue = state.job(id).is_some_and(|j| {
                j.state.is_active()
                    && j.estimate.is_some()
                    && j.run
                        .as_ref()
                        .is_some_and(|r| r.start_time + j.estimate.unwrap_or(0) <= now)
            });
            if overdue && id % 2 == 0 {
                happened = true;
                let next = state.job(id).and_then(|j| j.estimate).unwrap_or(0) * 2;
                let change = JobChange::Estimate(Some(next));
                state.apply(Event::Modify { job: id, change }, now).unwrap();
            }
        }
        if !enabled && now >= enable_at {
            prop_assert!(schedule_lean(&state, &policy, now).is_none());
            state.set_lean_indexes(true);
            enabled = true;
        }
        let plan = schedule(&state, &policy, now);
        prop_assert!(!plan.acts() || !arches_core::quiet::nothing_can_start(&state, &policy));
        let lean = schedule_lean(&state, &policy, now);
        if lean_supported(&policy) {
            let kept = schedule_lean_in(&state, &policy, now, &mut scratch);
            prop_assert_eq!(&kept, &lean, "plan in kept storage at {}", now);
            // Decisions only: the same starts and next change; under
            // NONE without HIGHEST the reservations may stop at the
            // first blocked job's, otherwise the plan is the same.
            let only = schedule_lean_in(&state, &policy, now, &mut decisions);
            prop_assert_eq!(lean_supported(&decisive), true);
            let only_norm = schedule_lean_in(&state, &decisive, now, &mut decisions_norm);
            prop_assert_eq!(&only_norm, &only, "plan under decisions_policy at {}", now);
            match (&only, &lean) {
                (Some(o), Some(l)) => {
                    prop_assert_eq!(&o.starts, &l.starts, "decisions-only starts at {}", now);
                    prop_assert_eq!(
                        o.next_change,
                        l.next_change,
                        "decisions-only next change at {}",
                        now
                    );
                    prop_assert!(
                        l.reservations.starts_with(&o.reservations),
                        "decisions-only reservations at {} are not a prefix",
                        now
                    );
                    if policy.backfill != BackfillPolicy::None
                        || policy.reservation_policy == ReservationPolicy::Highest
                    {
                        prop_assert_eq!(o, l, "decisions-only plan at {}", now);
                    }
                }
                (o, l) => prop_assert_eq!(o.is_none(), l.is_none()),
            }
        }
        // The wake-ups `next_change` skips (from the last plan's
        // `next_wakeup` on) start nothing when nothing happened since.
        // (A start may satisfy an `after` dependency: with dependent jobs
        // queued, the last plan's starts are something that happened.)
        let dependent = state.queued().any(|j| !j.depend.is_empty());
        if let Some((at, wake, change)) = quiet.filter(|_| !happened && !dependent) {
            if wake.is_some_and(|w| w <= now) && change.is_none_or(|c| now < c) {
                prop_assert!(
                    plan.starts.is_empty(),
                    "a job started at {} with nothing happened since {} and no change due before {:?}",
                    now, at, change
                );
            }
        }
        quiet = lean.as_ref().map(|l| (now, l.next_wakeup, l.next_change));
        match lean {
            Some(lean) => {
                lean_used += 1;
                prop_assert_eq!(&lean.starts, &plan.starts, "starts at {}", now);
                prop_assert_eq!(
                    &lean.reservations,
                    &plan.reservations,
                    "reservations at {}",
                    now
                );
                prop_assert_eq!(
                    lean.next_wakeup,
                    plan.next_wakeup,
                    "next wake-up at {}",
                    now
                );
                prop_assert!(
                    lean.next_wakeup
                        .is_none_or(|w| lean.next_change.is_none_or(|c| c >= w))
                        && lean.next_change.is_none_or(|t| t > now),
                    "next change at {}",
                    now
                );
            }
            None => prop_assert!(
                !enabled || !lean_supported(&policy),
                "lean refused a supported policy"
            ),
        }
        start_all(&mut state, &plan.starts, now);
        for st in &plan.starts {
            let s = &specs[(st.job - 1) as usize];
            let end = now + s.run;
            ends.entry(end).or_default().push(st.job);
            times.push(end);
        }
        if policy.reservation_policy == ReservationPolicy::Highest {
            // HIGHEST keeps reservations across iterations (what the
            // simulator and the daemon hand back after each plan).
            let kept = plan.reservations.iter().map(|r| (r.job, r.start)).collect();
            state.remember_reservations(kept).unwrap();
        }
        if let Some(w) = plan.next_wakeup.filter(|w| *w > now && *w < 5000) {
            times.push(w);
        }
    }
    if lean_supported(&policy) && enabled {
        prop_assert!(lean_used > 0);
    }
    Ok(())
}

/// CURRENTHIGHEST in kept storage takes the last iteration's reservations
/// over (GREEDY), or resumes the last walk (FIRSTFIT, BESTFIT), when only
/// submissions and the plan's starts happened since (here: every iteration
/// after the first blocked one), and plans exactly as the full iteration
/// does.
#[test]
fn kept_storage_reuses_reservations_between_submissions() {
    // GREEDY: the walk is not resumed, its reservations are taken over.
    let scratch = replay_submissions(BackfillPolicy::Greedy, ReservationPolicy::CurrentHighest);
    assert!(
        scratch.reused() > 0,
        "no iteration took the reservations over"
    );
    assert_eq!(scratch.resumed(), 0);
    // FIRSTFIT and BESTFIT: the walk goes on from where the last one ended.
    for backfill in [BackfillPolicy::FirstFit, BackfillPolicy::BestFit] {
        let scratch = replay_submissions(backfill, ReservationPolicy::CurrentHighest);
        assert!(scratch.resumed() > 0, "no iteration resumed the last walk");
    }
}

/// HIGHEST in kept storage resumes the last walk too once the driver
/// remembered its reservations, when only submissions and the plan's
/// starts happened since (every remembered reservation stays where it is
/// then), and plans exactly as the full iteration does.
#[test]
fn kept_storage_resumes_highest_walks_between_submissions() {
    for backfill in [BackfillPolicy::FirstFit, BackfillPolicy::BestFit] {
        let scratch = replay_submissions(backfill, ReservationPolicy::Highest);
        assert!(
            scratch.resumed() > 0,
            "no HIGHEST iteration resumed the last walk"
        );
    }
}

/// A HIGHEST walk is not resumed when its reservations were not remembered
/// (the state's remembered list is another), nor after a job ended.
#[test]
fn highest_walks_resume_only_after_their_own_reservations_and_no_end() {
    let policy = Policy {
        reservation_policy: ReservationPolicy::Highest,
        reservation_buckets: vec![ReservationBucket {
            depth: u32::MAX,
            qos: None,
        }],
        ..Policy::default()
    };
    let mut state = State::new(vec![Node::new("n0", 8, 0)]);
    state.set_lean_indexes(true);
    let submit = |state: &mut State, id: u64, procs: u32, now: Time| {
        let job = Job::new(id as JobId, "u", Request::procs(procs), Some(100), now);
        state.apply(Event::submit(job), now).unwrap();
    };
    let mut scratch = LeanScratch::default();
    // 1 runs on 6 of 8 processors, 2 (4) waits for it.
    submit(&mut state, 1, 6, 0);
    let plan = schedule_lean_in(&state, &policy, 0, &mut scratch).unwrap();
    start_all(&mut state, &plan.starts, 0);
    submit(&mut state, 2, 4, 0);
    let plan = schedule_lean_in(&state, &policy, 0, &mut scratch).unwrap();
    assert_eq!(plan.reservations.len(), 1);
    // Not remembered: 3 is planned by walking the queue again.
    submit(&mut state, 3, 4, 1);
    let plan = schedule_lean_in(&state, &policy, 1, &mut scratch).unwrap();
    assert_eq!(
        scratch.resumed(),
        0,
        "resumed without the remembered reservations"
    );
    assert_eq!(plan, schedule_lean(&state, &policy, 1).unwrap());
    // Remembered: 4 resumes the walk, with the same plan as a fresh one.
    let kept = plan.reservations.iter().map(|r| (r.job, r.start)).collect();
    state.remember_reservations(kept).unwrap();
    submit(&mut state, 4, 1, 2);
    let plan = schedule_lean_in(&state, &policy, 2, &mut scratch).unwrap();
    assert_eq!(scratch.resumed(), 1);
    assert_eq!(plan, schedule_lean(&state, &policy, 2).unwrap());
    let full = schedule(&state, &policy, 2);
    assert_eq!(
        (&plan.starts, &plan.reservations),
        (&full.starts, &full.reservations)
    );
    start_all(&mut state, &plan.starts, 2);
    let kept = plan.reservations.iter().map(|r| (r.job, r.start)).collect();
    state.remember_reservations(kept).unwrap();
    // 1 ends early: the reservations may move up, the queue is walked again.
    state
        .apply(
            Event::Finish {
                job: 1,
                code: CompletionCode::Exit(0),
            },
            3,
        )
        .unwrap();
    submit(&mut state, 5, 1, 3);
    let plan = schedule_lean_in(&state, &policy, 3, &mut scratch).unwrap();
    assert_eq!(scratch.resumed(), 1, "resumed after a job ended");
    assert_eq!(plan, schedule_lean(&state, &policy, 3).unwrap());
}

/// Twelve submissions, each followed by an iteration in kept storage whose
/// plan must be the full iteration's (its starts applied as planned).
fn replay_submissions(
    backfill: BackfillPolicy,
    reservation_policy: ReservationPolicy,
) -> LeanScratch {
    let nodes = vec![Node::new("n0", 8, 0)];
    let mut state = State::new(nodes);
    state.set_lean_indexes(true);
    let policy = Policy {
        backfill,
        reservation_policy,
        reservation_buckets: vec![ReservationBucket {
            depth: 4,
            qos: None,
        }],
        ..Policy::default()
    };
    let mut scratch = LeanScratch::default();
    for id in 1..=12u64 {
        let now = id as Time * 10;
        let procs = [8, 3, 6, 2, 5, 7][(id % 6) as usize];
        let job = Job::new(
            id as JobId,
            "u",
            Request::procs(procs),
            Some(1000 + id as i64 * 37),
            now,
        );
        state.apply(Event::submit(job), now).unwrap();
        let plan = schedule(&state, &policy, now);
        assert!(!plan.acts() || !arches_core::quiet::nothing_can_start(&state, &policy));
        let kept = schedule_lean_in(&state, &policy, now, &mut scratch).unwrap();
        assert_eq!(kept.starts, plan.starts, "starts at {now}");
        assert_eq!(
            kept.reservations, plan.reservations,
            "reservations at {now}"
        );
        assert_eq!(kept.next_wakeup, plan.next_wakeup, "next wake-up at {now}");
        start_all(&mut state, &plan.starts, now);
        if reservation_policy == ReservationPolicy::Highest {
            let kept = plan.reservations.iter().map(|r| (r.job, r.start)).collect();
            state.remember_reservations(kept).unwrap();
        }
    }
    scratch
}

/// `BACKFILLPOLICY NONE` with storage whose caller reads only decisions: the
/// walk ends at the first job that cannot start, so only its reservation is
/// placed; the starts and `next_change` are the complete plan's.
#[test]
fn decisions_only_under_none_stops_at_the_first_blocked_job() {
    let mut state = State::new(vec![Node::new("n0", 8, 0)]);
    state.set_lean_indexes(true);
    let policy = Policy {
        backfill: BackfillPolicy::None,
        reservation_buckets: vec![ReservationBucket {
            depth: 5,
            qos: None,
        }],
        ..Policy::default()
    };
    // 1 runs on 6 of 8 processors; 2 (4 processors) is blocked behind it;
    // 3 and 4 would fit now but NONE starts nothing behind 2.
    for (id, procs) in [(1u64, 6u32), (2, 4), (3, 1), (4, 2)] {
        let job = Job::new(
            id as JobId,
            "u",
            Request::procs(procs),
            Some(100 * id as i64),
            0,
        );
        state.apply(Event::submit(job), 0).unwrap();
        if id == 1 {
            let plan = schedule(&state, &policy, 0);
            start_all(&mut state, &plan.starts, 0);
        }
    }
    let full = schedule(&state, &policy, 0);
    let complete = schedule_lean_in(&state, &policy, 0, &mut LeanScratch::default()).unwrap();
    let mut storage = LeanScratch::default();
    storage.set_decisions_only(true);
    let only = schedule_lean_in(&state, &policy, 0, &mut storage).unwrap();
    assert_eq!(complete.reservations, full.reservations);
    assert_eq!(full.reservations.len(), 3, "{:?}", full.reservations);
    assert!(full.starts.is_empty() && only.starts.is_empty());
    assert_eq!(only.reservations, full.reservations[..1]);
    assert_eq!(only.reservations[0].job, 2);
    assert_eq!(only.next_change, complete.next_change);
    assert_eq!(only.next_change, Some(100));
}

/// A walk kept in storage resumes only on the state it was made on: after
/// a tail submission its own state resumes it, a clone of that state (whose
/// history may have parted from it) walks the queue again.
#[test]
fn resumes_only_on_its_own_state() {
    let mut state = State::new(vec![Node::new("n0", 4, 0)]);
    state.set_lean_indexes(true);
    let policy = Policy::default();
    let submit = |state: &mut State, id: JobId, procs: u32, now: Time| {
        let job = Job::new(id, "u", Request::procs(procs), Some(100), now);
        state.apply(Event::submit(job), now).unwrap();
    };
    submit(&mut state, 1, 4, 0);
    let mut scratch = LeanScratch::default();
    let plan = schedule_lean_in(&state, &policy, 0, &mut scratch).unwrap();
    start_all(&mut state, &plan.starts, 0);
    submit(&mut state, 2, 4, 1);
    let clone = state.clone();
    let on_clone = schedule_lean_in(&clone, &policy, 1, &mut scratch).unwrap();
    assert_eq!(scratch.resumed(), 0, "resumed on a clone");
    assert_eq!(Some(&on_clone), schedule_lean(&clone, &policy, 1).as_ref());
    // Kept from the clone's walk, resumed on the clone after a submission.
    let mut clone = clone;
    submit(&mut clone, 3, 1, 2);
    let resumed = schedule_lean_in(&clone, &policy, 2, &mut scratch).unwrap();
    assert_eq!(scratch.resumed(), 1);
    assert_eq!(Some(&resumed), schedule_lean(&clone, &policy, 2).as_ref());
}

/// Applies a plan's starts at `now`, as planned.
fn start_all(state: &mut State, starts: &[arches_core::plan::Start], now: Time) {
    for st in starts {
        let (job, alloc, kind) = (st.job, st.alloc.clone(), st.kind);
        state.apply(Event::Start { job, alloc, kind }, now).unwrap();
    }
}
