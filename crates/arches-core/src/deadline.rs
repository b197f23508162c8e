//! Job deadlines (Moab "Job Deadlines", §10.9, and the priority's
//! `DEADLINE` service subcomponent).
//!
//! Two kinds, as Moab has them:
//!
//! - **Guaranteed** (the QoS method): a job whose QoS has `QFLAGS=DEADLINE`
//!   completes by its deadline when that is possible. Its deadline is the one
//!   it requested (`msub -l deadline=`, `mjobctl -m deadline=`), or, without
//!   one, `QTTARGET` after its submission plus its wall-clock limit (Moab's
//!   relative deadline: a two-hour job of a QoS with `QTTARGET=1:00:00` must
//!   complete three hours after its submission). Such a job is planned first
//!   ("bumped to the front of the queue": after administrator system
//!   priorities, before every other job, earliest deadline first) and always
//!   gets a reservation, whatever `RESERVATIONDEPTH`, so backfill never
//!   delays it. When its planned completion (its reservation's end, or a
//!   running job's limit) is after the deadline, the plan reports it
//!   ([`Plan::deadline_misses`](crate::Plan::deadline_misses)) and the driver
//!   applies `DEADLINEPOLICY` ([`action`]).
//! - **Priority only**: any job with a deadline (a guaranteed one too) gets
//!   the `DEADLINE` service subcomponent, `DEADLINEWEIGHT` × [`factor`], which
//!   rises linearly from 0 at submission to 100 at the deadline (the
//!   percentage of the time between them that has passed), and stays 100
//!   after it.
//!
//! A deadline requested without a `DEADLINE` QoS is therefore kept, shown
//! (checkjob) and weighted, but not guaranteed: Moab ignores it silently,
//! Arches says so (msub's warning, checkjob's note).
//!
//! Pure: time in, decisions out.

use crate::job::Job;
use crate::policy::{DeadlinePolicy, Policy, QosFlag};
use crate::Time;

/// Whether the job's effective QoS has `QFLAGS=DEADLINE`.
pub fn qos_allows(job: &Job, policy: &Policy) -> bool {
    crate::schedule::qos_flag(job, policy, QosFlag::Deadline)
}

/// The QoS's relative deadline: submission + `QTTARGET` + walltime (a
/// `DEADLINE` QoS with a `QTTARGET`; a job with a wall-clock limit).
pub fn relative(job: &Job, policy: &Policy) -> Option<Time> {
    if !qos_allows(job, policy) {
        return None;
    }
    let q = crate::qos::effective(job, policy)?;
    let target = policy.qos.get(q)?.qt_target.filter(|t| *t > 0)?;
    let wall = crate::eligibility::effective_walltime(job, policy)?;
    job.submit_time
        .checked_add(target)
        .and_then(|t| t.checked_add(wall))
}

/// The job's deadline: the one it requested, else its QoS's relative one.
pub fn of(job: &Job, policy: &Policy) -> Option<Time> {
    job.deadline.or_else(|| relative(job, policy))
}

/// The deadline the scheduler guarantees: the job's QoS has
/// `QFLAGS=DEADLINE`, and it was not found unmeetable (or `DEADLINEPOLICY`
/// keeps retrying it).
pub fn guaranteed(job: &Job, policy: &Policy) -> Option<Time> {
    if job.deadline_failed.is_some() && !retries(policy) {
        return None;
    }
    if !qos_allows(job, policy) {
        return None;
    }
    of(job, policy)
}

/// Whether `DEADLINEPOLICY` keeps an unmeetable deadline guaranteed.
pub fn retries(policy: &Policy) -> bool {
    matches!(
        policy.deadline_policy,
        DeadlinePolicy::Retry | DeadlinePolicy::Escalate
    )
}

/// The `DEADLINE` priority subcomponent: the percentage of the time from
/// the job's submission to its deadline that has passed at `now`, 0 to 100
/// (0 without a deadline).
pub fn factor(job: &Job, policy: &Policy, now: Time) -> f64 {
    let Some(d) = of(job, policy) else {
        return 0.0;
    };
    let from = job.submit_time;
    if d <= from {
        return 100.0;
    }
    let passed = (now - from).clamp(0, d - from);
    100.0 * passed as f64 / (d - from) as f64
}

/// A guaranteed deadline the plan cannot meet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Miss {
    pub job: crate::job::JobId,
    pub deadline: Time,
    /// When the job is expected to complete: its limit's end if it starts
    /// now or at its reservation (a job without a wall-clock limit: its
    /// earliest start, for it cannot promise any completion).
    pub expected: Time,
}

/// What the driver does about a [`Miss`] under `DEADLINEPOLICY`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Cancel the job.
    Cancel,
    /// Record the failure (the deadline is dropped) and put a system hold.
    Hold,
    /// Record the failure: the deadline is dropped, the job runs as any other.
    Drop,
    /// Keep the deadline (retried next iteration); tell the administrators.
    Escalate,
    /// Keep the deadline (retried next iteration).
    Retry,
}

/// The action `DEADLINEPOLICY` takes on a miss.
pub fn action(policy: &Policy) -> Action {
    match policy.deadline_policy {
        DeadlinePolicy::Cancel => Action::Cancel,
        DeadlinePolicy::Hold => Action::Hold,
        DeadlinePolicy::None | DeadlinePolicy::Ignore => Action::Drop,
        DeadlinePolicy::Escalate => Action::Escalate,
        DeadlinePolicy::Retry => Action::Retry,
    }
}

/// Whether any QoS has `QFLAGS=DEADLINE` (otherwise no deadline is
/// guaranteed and planning is as without deadlines).
pub fn any_guaranteed(policy: &Policy) -> bool {
    policy
        .qos
        .values()
        .any(|q| q.flags.contains(&QosFlag::Deadline))
}

/// The guaranteed deadlines of queued jobs the plan misses: a job started
/// now whose limit ends after its deadline, a job whose reservation ends
/// after it, and a job neither started nor reserved (blocked, held,
/// waiting) that could no longer complete by it if it started now. A
/// running job is not judged again (it started when it could). Ordered by
/// job id.
pub fn misses(state: &crate::state::State, policy: &Policy, plan: &crate::Plan) -> Vec<Miss> {
    let now = plan.now;
    let mut out = Vec::new();
    if !any_guaranteed(policy) {
        return out;
    }
    for job in state.queued() {
        let Some(deadline) = guaranteed(job, policy) else {
            continue;
        };
        let dur = crate::eligibility::planning_duration(job, policy);
        let end_from = |t: Time| dur.map_or(t, |d| t.saturating_add(d.max(1)));
        let expected = if plan.starts.iter().any(|s| s.job == job.id) {
            end_from(now)
        } else if let Some(r) = plan.reservations.iter().find(|r| r.job == job.id) {
            r.end.unwrap_or(r.start)
        } else {
            // Not planned: late only once even an immediate start would be.
            end_from(now)
        };
        if expected > deadline {
            out.push(Miss {
                job: job.id,
                deadline,
                expected,
            });
        }
    }
    out.sort_by_key(|m| m.job);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::job::Request;
    use crate::node::Node;
    use crate::policy::QosConfig;
    use crate::state::{Event, State};

    fn policy(qt_target: Option<i64>) -> Policy {
        let mut p = Policy::default();
        p.qos.insert(
            "special".into(),
            QosConfig {
                flags: vec![QosFlag::Deadline],
                qt_target,
                ..QosConfig::default()
            },
        );
        p.qos.insert("plain".into(), QosConfig::default());
        p
    }

    fn job(id: u64, procs: u32, wall: i64, qos: &str, deadline: Option<Time>) -> Job {
        let mut j = Job::new(id, "u", Request::procs(procs), Some(wall), 0);
        j.cred.qos = Some(qos.into());
        j.deadline = deadline;
        j
    }

    #[test]
    fn only_a_deadline_qos_guarantees_and_qttarget_sets_the_relative_deadline() {
        let p = policy(Some(3600));
        // Moab's example: a two-hour job of a QoS with QTTARGET 1:00:00
        // must complete 3 hours after its submission.
        assert_eq!(of(&job(1, 1, 7200, "special", None), &p), Some(10_800));
        assert_eq!(
            guaranteed(&job(1, 1, 7200, "special", None), &p),
            Some(10_800)
        );
        // A requested deadline wins over the relative one.
        assert_eq!(
            guaranteed(&job(2, 1, 7200, "special", Some(500)), &p),
            Some(500)
        );
        // Without the QoS flag: kept (priority), not guaranteed.
        let plain = job(3, 1, 7200, "plain", Some(500));
        assert_eq!(of(&plain, &p), Some(500));
        assert_eq!(guaranteed(&plain, &p), None);
        assert_eq!(relative(&plain, &p), None);
        // A failed deadline is no longer guaranteed, unless retried.
        let mut failed = job(4, 1, 60, "special", Some(500));
        failed.deadline_failed = Some(900);
        assert_eq!(guaranteed(&failed, &p), None);
        let mut retry = p.clone();
        retry.deadline_policy = DeadlinePolicy::Retry;
        assert_eq!(guaranteed(&failed, &retry), Some(500));
    }

    #[test]
    fn the_priority_factor_rises_linearly_to_the_deadline() {
        let p = policy(None);
        let j = job(1, 1, 60, "plain", Some(1000));
        assert_eq!(factor(&j, &p, 0), 0.0);
        assert_eq!(factor(&j, &p, 250), 25.0);
        assert_eq!(factor(&j, &p, 500), 50.0);
        assert_eq!(factor(&j, &p, 1000), 100.0);
        assert_eq!(factor(&j, &p, 5000), 100.0, "held at 100 after it");
        assert_eq!(factor(&job(2, 1, 60, "plain", None), &p, 500), 0.0);
    }

    #[test]
    fn the_weighted_subcomponent_is_in_the_priority_breakdown() {
        let mut p = policy(None);
        p.weights.deadline = 10;
        let b = crate::priority::priority(&job(1, 1, 60, "plain", Some(1000)), &p, 500);
        let d = b
            .components
            .iter()
            .find(|c| c.sub == "Deadl")
            .expect("Deadl");
        assert_eq!(
            (d.component, d.value, d.contribution),
            ("Serv", 50.0, 500.0)
        );
        assert_eq!(b.deadline, None, "priority only: not guaranteed");
    }

    /// One 4-processor node; job 1 runs until 1000. A high-priority job 2
    /// needs the whole node for 2000 s; job 3 (2 procs, 500 s) must complete
    /// by 1600.
    fn busy(p: &Policy, qos3: &str) -> (State, crate::Plan) {
        let mut s = State::new(vec![Node::new("n1", 4, 0)]);
        let mut j1 = job(1, 4, 1000, "plain", None);
        j1.submit_time = 0;
        s.apply(Event::submit(j1), 0).unwrap();
        let alloc = vec![crate::job::Alloc {
            node: 0,
            tasks: 4,
            procs: 4,
            ..Default::default()
        }];
        s.apply(
            Event::Start {
                job: 1,
                alloc,
                kind: crate::job::StartKind::Priority,
            },
            0,
        )
        .unwrap();
        let mut j2 = job(2, 4, 2000, "plain", None);
        j2.sys_prio = None;
        j2.user_prio = 1000;
        s.apply(Event::submit(j2), 0).unwrap();
        let j3 = job(3, 2, 500, qos3, Some(1600));
        s.apply(Event::submit(j3), 10).unwrap();
        let plan = crate::schedule(&s, p, 100);
        (s, plan)
    }

    #[test]
    fn a_guaranteed_deadline_is_reserved_ahead_of_higher_priority_jobs() {
        let mut p = policy(None);
        p.weights.userprio = 1;
        let (_, plan) = busy(&p, "special");
        let r3 = plan.reservation(3).expect("job 3 reserved");
        assert_eq!((r3.start, r3.end), (1000, Some(1500)), "meets 1600");
        let r2 = plan.reservation(2).expect("job 2 reserved after it");
        assert!(r2.start >= 1500, "{r2:?}");
        assert!(plan.deadline_misses.is_empty());
        // Without the DEADLINE QoS, job 2 goes first and job 3 would end
        // at 3500 at best: its deadline would be missed.
        let (_, plain) = busy(&p, "plain");
        assert_eq!(plain.reservation(2).map(|r| r.start), Some(1000));
        assert!(plain.reservation(3).is_none_or(|r| r.start >= 3000));
        assert!(
            plain.deadline_misses.is_empty(),
            "not guaranteed: not judged"
        );
    }

    #[test]
    fn an_unmeetable_deadline_is_a_miss() {
        let p = policy(None);
        let mut s = State::new(vec![Node::new("n1", 4, 0)]);
        let mut j1 = job(1, 4, 1000, "plain", None);
        j1.submit_time = 0;
        s.apply(Event::submit(j1), 0).unwrap();
        s.apply(
            Event::Start {
                job: 1,
                alloc: vec![crate::job::Alloc {
                    node: 0,
                    tasks: 4,
                    procs: 4,
                    ..Default::default()
                }],
                kind: crate::job::StartKind::Priority,
            },
            0,
        )
        .unwrap();
        // Needs 500 s from 1000 at the earliest: cannot complete by 1200.
        s.apply(Event::submit(job(2, 2, 500, "special", Some(1200))), 10)
            .unwrap();
        let plan = crate::schedule(&s, &p, 100);
        assert_eq!(
            plan.deadline_misses,
            vec![Miss {
                job: 2,
                deadline: 1200,
                expected: 1500
            }]
        );
        assert_eq!(action(&p), Action::Drop, "NONE: as IGNORE");
        let mut c = p.clone();
        c.deadline_policy = DeadlinePolicy::Cancel;
        assert_eq!(action(&c), Action::Cancel);
        // Recorded as failed (IGNORE): no longer guaranteed, no more misses.
        s.apply(
            Event::Modify {
                job: 2,
                change: crate::state::JobChange::DeadlineFailed(Some(1500)),
            },
            100,
        )
        .unwrap();
        assert!(crate::schedule(&s, &p, 100).deadline_misses.is_empty());
        // A new deadline clears the failure.
        s.apply(
            Event::Modify {
                job: 2,
                change: crate::state::JobChange::Deadline(Some(5000)),
            },
            100,
        )
        .unwrap();
        assert_eq!(s.job(2).unwrap().deadline_failed, None);
        assert!(crate::schedule(&s, &p, 100).deadline_misses.is_empty());
    }
}
