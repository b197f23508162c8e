//! Forced starts (`mjobctl -x`, `runjob`): where an administrator may start
//! an idle job now, out of the scheduler's order, and what stands in the
//! way. The credential limits (`MAXJOB`...) and the administrative and
//! standing reservations (and preemptors' locks) still apply unless the
//! administrator says otherwise (`-w flags=ignorepolicies`, `ignorersv`).

use crate::context::Ctx;
use crate::eligibility::{has_limits, planning_duration, Usage};
use crate::job::{Alloc, Job};
use crate::placement::place;
use crate::plan::BlockReason;
use crate::policy::{Policy, PolicyLevel};
use crate::state::State;
use crate::Time;

/// What a forced start may ignore.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ForceFlags {
    /// `ignorepolicies`: credential limits.
    pub ignore_policies: bool,
    /// `ignorersv`: reservations and preemptors' locks.
    pub ignore_rsv: bool,
}

/// Why a job cannot be forced to start now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ForceError {
    /// A credential limit would be exceeded (the hard limit).
    Policy(BlockReason),
    /// Enough processors are free, but held by a reservation the job is not
    /// on the access list of (its id), or locked for a preemptor.
    Reserved(Option<String>),
    /// Not enough free processors (`needed`, `available`).
    Resources { needed: u32, available: u32 },
}

/// Where `job` can start now, or why it cannot.
pub fn force_placement(
    state: &State,
    policy: &Policy,
    job: &Job,
    now: Time,
    flags: ForceFlags,
) -> Result<Vec<Alloc>, ForceError> {
    if !flags.ignore_policies && (has_limits(policy) || state.has_slot_limits()) {
        let usage = Usage::from_state(state, policy, now);
        let dur = planning_duration(job, policy);
        let tally = crate::schedule::tally(job, dur);
        usage
            .check(job, tally, policy, PolicyLevel::Hard)
            .map_err(ForceError::Policy)?;
    }
    let n = state.nodes().len() as u32;
    let mut ctx = Ctx::new(state, policy, now);
    let raw = if ctx.is_general(job) {
        // Layouts, generic resources, access policies (crate::layout); the
        // tenants and reservations are the context's business below.
        let dem =
            crate::layout::Demand::resolve(state, &job.req).map_err(|_| ForceError::Resources {
                needed: job.req.total_procs(),
                available: (0..n).map(|node| state.free_procs(node)).sum(),
            })?;
        crate::layout::place(
            state,
            &job.req,
            &dem,
            policy.node_access,
            policy.node_allocation,
            0..n,
            |node| {
                Some(crate::layout::Free {
                    procs: state.free_procs(node),
                    mem: state.free_mem_mb(node),
                    gres: state.free_gres(node),
                })
            },
        )
    } else {
        place(
            state.nodes(),
            &job.req,
            policy.node_allocation,
            0..n,
            |node| (state.free_procs(node), state.free_mem_mb(node)),
        )
    };
    let Some(raw) = raw else {
        return Err(ForceError::Resources {
            needed: job.req.total_procs(),
            available: (0..n).map(|node| state.free_procs(node)).sum(),
        });
    };
    if flags.ignore_rsv {
        return Ok(raw);
    }
    ctx.fit_free_now(job)
        .ok_or_else(|| ForceError::Reserved(ctx.reservation_conflict(job)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::job::{Request, StartKind};
    use crate::node::Node;
    use crate::policy::Limit;
    use crate::resv::{Acl, Reservation};
    use crate::state::Event;

    fn two_jobs() -> State {
        let mut s = State::new(vec![Node::new("n1", 4, 0)]);
        for id in [1, 2] {
            let j = Job::new(id, "u", Request::procs(2), Some(60), 0);
            s.apply(Event::submit(j), 0).unwrap();
        }
        let alloc = vec![Alloc {
            node: 0,
            tasks: 2,
            procs: 2,
            mem_mb: 0,
            gres: Default::default(),
        }];
        let kind = StartKind::Priority;
        s.apply(
            Event::Start {
                job: 1,
                alloc,
                kind,
            },
            0,
        )
        .unwrap();
        s
    }

    #[test]
    fn limits_refuse_unless_ignored() {
        let s = two_jobs();
        let mut p = Policy::default();
        p.users.entry("u".into()).or_default().limits.max_job = Some(Limit { soft: 1, hard: 1 });
        let j = s.job(2).unwrap();
        let e = force_placement(&s, &p, j, 10, ForceFlags::default()).unwrap_err();
        assert!(
            matches!(
                &e,
                ForceError::Policy(BlockReason::Policy(p)) if p.limit == "MAXJOB"
            ),
            "{e:?}"
        );
        let flags = ForceFlags {
            ignore_policies: true,
            ..ForceFlags::default()
        };
        assert!(force_placement(&s, &p, j, 10, flags).is_ok());
    }

    #[test]
    fn reservations_refuse_unless_ignored() {
        let mut s = two_jobs();
        s.add_reservation(Reservation {
            id: "system.1".into(),
            start: 0,
            end: Some(1000),
            hosts: vec!["n1".into()],
            procs: 0,
            acl: Acl {
                users: vec!["nobody".into()],
                ..Acl::default()
            },
            flags: Vec::new(),
            owner: None,
            standing: None,
            group: None,
        })
        .unwrap();
        let p = Policy::default();
        let j = s.job(2).unwrap().clone();
        let e = force_placement(&s, &p, &j, 10, ForceFlags::default()).unwrap_err();
        assert_eq!(e, ForceError::Reserved(Some("system.1".into())));
        let flags = ForceFlags {
            ignore_rsv: true,
            ..ForceFlags::default()
        };
        assert!(force_placement(&s, &p, &j, 10, flags).is_ok());
        // Too big for what is free at all.
        let mut big = j;
        big.req = Request::procs(3);
        let e = force_placement(&s, &p, &big, 10, flags).unwrap_err();
        assert_eq!(
            e,
            ForceError::Resources {
                needed: 3,
                available: 2
            }
        );
    }
}
