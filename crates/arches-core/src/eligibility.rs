//! Eligibility and throttling: holds, start dates, dependencies and the
//! credential limits (`MAXJOB MAXPROC MAXNODE MAXWC`, soft,hard pairs) of
//! users, groups, accounts, classes and QoS.
//!
//! Holds, dependencies, start dates and policy violations make a job
//! *blocked*; lack of resources leaves it *eligible*. Limits are checked
//! against a [`Usage`] tally of active jobs that the iteration updates as it
//! plans starts, so backfill honours them too.

use std::collections::BTreeMap;

use crate::job::{CompletionCode, Dependency, DependencyKind, Job, JobFlag, JobId, JobState};
use crate::plan::BlockReason;
use crate::policy::{Limits, Policy, PolicyLevel};
use crate::state::State;
use crate::{Secs, Time};

/// The wall-clock limit a job runs under: its own, else its class's
/// `DEFAULT.WCLIMIT`, in both cases bounded by the class's `MAX.WCLIMIT`.
/// `None` when neither the job nor its class gives one.
pub fn effective_walltime(job: &Job, policy: &Policy) -> Option<Secs> {
    let class = job
        .cred
        .class
        .as_deref()
        .and_then(|c| policy.classes.get(c));
    let w = job
        .walltime
        .or_else(|| class.and_then(|c| c.default_wclimit))?;
    Some(match class.and_then(|c| c.max_wclimit) {
        Some(max) => w.min(max),
        None => w,
    })
}

/// The duration planning assumes: the job's estimate if set, else its
/// effective walltime. Under `estimates_running_only` a job that is not
/// running (no allocation) is planned with its effective walltime; under
/// `estimates_ignored` every job is.
pub fn planning_duration(job: &Job, policy: &Policy) -> Option<Secs> {
    if policy.estimates_ignored || (policy.estimates_running_only && job.run.is_none()) {
        return effective_walltime(job, policy);
    }
    job.estimate.or_else(|| effective_walltime(job, policy))
}

/// The run time backfill candidates are ordered by under
/// `bf_shortest_first`: the estimate if set (the predicted run time, also
/// under `estimates_running_only`), else the planning duration.
pub fn ordering_duration(job: &Job, policy: &Policy) -> Option<Secs> {
    job.estimate.or_else(|| planning_duration(job, policy))
}

/// When an active job is expected to free its resources for planning
/// purposes at `now` (`None` = never: no wall-clock limit). A job
/// backfilled on a virtual wall-clock limit is planned to end when that
/// expires, until it has expired; then with its real limit.
pub fn planned_end(job: &Job, policy: &Policy, now: Time) -> Option<Time> {
    let run = job.run.as_ref()?;
    let real = planning_duration(job, policy).map(|d| run.start_time + run.suspended_secs + d);
    match run.virtual_end() {
        Some(v) if v > now => Some(real.map_or(v, |r| r.min(v))),
        _ => real,
    }
}

/// The static part of eligibility: holds, start date, dependencies.
/// `Err` carries the reason the job is blocked.
pub fn check_static(state: &State, job: &Job, now: Time) -> Result<(), BlockReason> {
    if !job.holds.is_empty() {
        return Err(BlockReason::Hold(job.holds.iter().collect()));
    }
    if let Some(t) = job.start_after.filter(|t| *t > now) {
        return Err(BlockReason::StartDate(t));
    }
    if job.data_wait == Some(crate::staging::DataWait::Unknown) {
        return Err(BlockReason::DataStaging(None));
    }
    for d in &job.depend {
        match dependency_status(state, *d) {
            DepStatus::Satisfied => {}
            DepStatus::Waiting => return Err(BlockReason::Dependency(*d)),
            DepStatus::Failed => return Err(BlockReason::DependencyFailed(*d)),
        }
    }
    Ok(())
}

/// Whether a dependency is met, pending or can never be met.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DepStatus {
    Satisfied,
    Waiting,
    Failed,
}

/// Evaluates one dependency against the other job's state. An unknown or
/// purged job satisfies `afterany` and fails every other kind. The
/// `before` kinds never hold back the job that carries them (they were
/// given to the other job as `after` kinds at submission); a dependency on
/// an array waits for all of it ([`crate::array::array_dependency`]), one
/// on a sub-job not yet made a job waits for it.
pub fn dependency_status(state: &State, dep: Dependency) -> DepStatus {
    if dep.kind.reverse().is_some() {
        return DepStatus::Satisfied;
    }
    if let Some(r) = crate::array::array_dependency(state, dep) {
        return match r {
            Ok(true) => DepStatus::Satisfied,
            Ok(false) => DepStatus::Waiting,
            Err(()) => DepStatus::Failed,
        };
    }
    // An array kind on a single job means the plain kind.
    let kind = match dep.kind {
        DependencyKind::AfterStartArray => DependencyKind::After,
        DependencyKind::AfterOkArray => DependencyKind::AfterOk,
        DependencyKind::AfterNotOkArray => DependencyKind::AfterNotOk,
        DependencyKind::AfterAnyArray => DependencyKind::AfterAny,
        k => k,
    };
    let Some(other) = state.job(dep.job) else {
        if let Some((a, m)) = state.array_of(dep.job) {
            if !a.materialized(m.position) {
                // Waiting to be made a job, or removed with its array.
                return match (a.cancelled, kind) {
                    (None, _) => DepStatus::Waiting,
                    (Some(_), DependencyKind::AfterAny | DependencyKind::AfterNotOk) => {
                        DepStatus::Satisfied
                    }
                    (Some(_), _) => DepStatus::Failed,
                };
            }
        }
        return match kind {
            DependencyKind::AfterAny => DepStatus::Satisfied,
            _ => DepStatus::Failed,
        };
    };
    let finished = other.state.is_finished();
    let ok = matches!(
        other.completion.map(|c| c.code),
        Some(CompletionCode::Exit(0))
    ) && other.state == JobState::Completed;
    match kind {
        DependencyKind::After => {
            if other.state.is_active() || (finished && other.start_count > 0) {
                DepStatus::Satisfied
            } else if finished {
                DepStatus::Failed
            } else {
                DepStatus::Waiting
            }
        }
        DependencyKind::AfterAny if finished => DepStatus::Satisfied,
        DependencyKind::AfterOk if finished && ok => DepStatus::Satisfied,
        DependencyKind::AfterOk if finished => DepStatus::Failed,
        DependencyKind::AfterNotOk if finished && !ok => DepStatus::Satisfied,
        DependencyKind::AfterNotOk if finished => DepStatus::Failed,
        _ => DepStatus::Waiting,
    }
}

/// Whether a job that started at `now` lets a queued job go: some queued
/// job has an `after` dependency (or `afterstartarray`, or a `before` kind
/// given to it) on a job that started at `now`, now satisfied. A plan
/// decides every job against the state as the iteration began, so such a
/// job waits for the next iteration; Moab's comes at once, as the start is
/// reported. An event-driven replay iterates again at `now` when this
/// holds, instead of leaving the job until the next event.
pub fn start_releases_dependents(state: &State, now: Time) -> bool {
    if state.indexes().is_some_and(|idx| idx.dependent == 0) {
        return false;
    }
    let started_now = |id| {
        state.job(id).is_some_and(|o| {
            o.state.is_active() && o.run.as_ref().is_some_and(|r| r.start_time == now)
        })
    };
    state.queued().any(|job| {
        job.depend.iter().any(|&dep| {
            let on_start = matches!(
                dep.kind,
                DependencyKind::After | DependencyKind::AfterStartArray
            );
            // An array's start is any of its sub-jobs' (the status says
            // whether one did); a job's, its own at `now`.
            let now_started = state.job(dep.job).is_none() || started_now(dep.job);
            on_start && now_started && dependency_status(state, dep) == DepStatus::Satisfied
        })
    })
}

/// The jobs a submission's `before` dependencies make wait, with the
/// `after` kind each gets (`beforeok` gives `afterok`...): each must be
/// queued (an array: not cancelled) and `user`'s, else the reason, as
/// msub words it. Every driver gives them at submission.
pub fn before_targets(
    state: &State,
    user: &str,
    deps: &[Dependency],
) -> Result<Vec<(JobId, DependencyKind)>, String> {
    let mut out = Vec::new();
    for d in deps {
        let Some(kind) = d.kind.reverse() else {
            continue;
        };
        let (owner, queued) = match (state.job(d.job), state.array(d.job)) {
            (Some(j), _) => (j.cred.user.as_str(), j.state == JobState::Idle),
            (None, Some(a)) => (a.template.cred.user.as_str(), a.cancelled.is_none()),
            (None, None) => ("", false),
        };
        let refuse = |why: &str| {
            Err(format!(
                "cannot make job {} wait for this one ({}): {why}",
                d.job,
                d.kind.as_str()
            ))
        };
        if owner != user {
            return refuse("it is not your job");
        }
        if !queued {
            return refuse("it is not queued");
        }
        out.push((d.job, kind));
    }
    Ok(out)
}

/// Resources counted against a credential's limits.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tally {
    pub jobs: u64,
    pub procs: u64,
    pub nodes: u64,
    /// Outstanding wall-clock seconds.
    pub wc: u64,
}

impl Tally {
    fn add(&mut self, o: Tally) {
        self.jobs += o.jobs;
        self.procs += o.procs;
        self.nodes += o.nodes;
        self.wc += o.wc;
    }
}

const KINDS: [&str; 5] = ["user", "group", "account", "class", "qos"];

/// Active usage per credential, for throttling.
#[derive(Debug, Clone, Default)]
pub struct Usage {
    /// Active sub-jobs against their arrays' slot limits.
    slots: crate::array::Slots,
    /// Per credential kind (index into `KINDS`), by name: looked up with a
    /// borrowed name, no allocation per check.
    by_cred: [BTreeMap<String, Tally>; 5],
}

impl Usage {
    /// Tallies the active jobs of a state.
    pub fn from_state(state: &State, policy: &Policy, now: Time) -> Self {
        let mut u = Usage::default();
        for j in state.active() {
            let nodes = j.run.as_ref().map_or(0, |r| r.nodes());
            let wc = planned_end(j, policy, now).map_or(0, |e| (e - now).max(0) as u64);
            u.add(
                j,
                policy,
                Tally {
                    jobs: 1,
                    procs: u64::from(j.procs()),
                    nodes: u64::from(nodes),
                    wc,
                },
            );
        }
        u.slots = crate::array::Slots::from_state(state);
        u
    }

    /// Counts a job (e.g. one the plan starts).
    pub fn add(&mut self, job: &Job, policy: &Policy, t: Tally) {
        self.slots.add(job.id);
        for (k, name) in creds(job, policy) {
            match self.by_cred[k].get_mut(name) {
                Some(tally) => tally.add(t),
                None => {
                    let mut tally = Tally::default();
                    tally.add(t);
                    self.by_cred[k].insert(name.to_string(), tally);
                }
            }
        }
    }

    /// The tally of one credential (`kind` is `user`, `group`, ...).
    pub fn get(&self, kind: &str, name: &str) -> Tally {
        KINDS
            .iter()
            .position(|k| *k == kind)
            .and_then(|k| self.by_cred[k].get(name).copied())
            .unwrap_or_default()
    }

    /// Checks a job requesting `req` against every credential limit at
    /// `level`. Jobs flagged `IGNPOLICIES` are never throttled.
    pub fn check(
        &self,
        job: &Job,
        req: Tally,
        policy: &Policy,
        level: PolicyLevel,
    ) -> Result<(), BlockReason> {
        if let Some((array, max, in_use)) = self.slots.exceeded(job.id) {
            // An array's slot limit holds whatever the job's flags.
            return Err(BlockReason::Policy(Box::new(crate::plan::PolicyBlock {
                level,
                limit: "SLOTLIMIT",
                cred_kind: "array",
                cred: array.to_string(),
                max: u64::from(max),
                requested: 1,
                in_use: u64::from(in_use),
            })));
        }
        if job.flags.contains(JobFlag::IgnPolicies) {
            return Ok(());
        }
        for (k, name) in creds(job, policy) {
            let Some(limits) = limits_of(policy, k, name) else {
                continue;
            };
            let used = self.by_cred[k].get(name).copied().unwrap_or_default();
            let checks = [
                ("MAXJOB", limits.max_job, used.jobs, req.jobs),
                ("MAXPROC", limits.max_proc, used.procs, req.procs),
                ("MAXNODE", limits.max_node, used.nodes, req.nodes),
                ("MAXWC", limits.max_wc, used.wc, req.wc),
            ];
            for (limit, l, in_use, requested) in checks {
                let Some(l) = l else { continue };
                let max = l.at(level);
                if in_use + requested > max {
                    return Err(BlockReason::Policy(Box::new(crate::plan::PolicyBlock {
                        level,
                        limit,
                        cred_kind: KINDS[k],
                        cred: name.to_string(),
                        max,
                        requested,
                        in_use,
                    })));
                }
            }
        }
        Ok(())
    }
}

/// The job's credentials by kind; the QoS is the effective one.
fn creds<'a>(job: &'a Job, policy: &'a Policy) -> impl Iterator<Item = (usize, &'a str)> {
    let c = &job.cred;
    [
        Some(c.user.as_str()),
        Some(c.group.as_str()),
        c.account.as_deref(),
        c.class.as_deref(),
        crate::qos::effective(job, policy),
    ]
    .into_iter()
    .enumerate()
    .filter_map(|(k, n)| n.map(|n| (k, n)))
}

fn limits_of<'a>(policy: &'a Policy, kind: usize, name: &str) -> Option<&'a Limits> {
    match kind {
        0 => policy.users.get(name).map(|c| &c.limits),
        1 => policy.groups.get(name).map(|c| &c.limits),
        2 => policy.accounts.get(name).map(|c| &c.limits),
        3 => policy.classes.get(name).map(|c| &c.limits),
        _ => policy.qos.get(name).map(|c| &c.limits),
    }
}

/// Whether any credential limit is configured at all (lets the iteration
/// skip throttling work entirely in the common case).
pub fn has_limits(policy: &Policy) -> bool {
    let set = |l: &Limits| *l != Limits::default();
    policy.users.values().any(|c| set(&c.limits))
        || policy.groups.values().any(|c| set(&c.limits))
        || policy.accounts.values().any(|c| set(&c.limits))
        || policy.classes.values().any(|c| set(&c.limits))
        || policy.qos.values().any(|c| set(&c.limits))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::job::{Alloc, HoldType, Request, StartKind};
    use crate::node::Node;
    use crate::policy::{ClassConfig, CredConfig, Limit};
    use crate::state::Event;

    #[test]
    fn estimates_plan_running_jobs_only_under_estimates_running_only() {
        let mut queued = Job::new(1, "u", Request::procs(1), Some(600), 0);
        queued.estimate = Some(60);
        let mut s = state_with(vec![queued.clone()]);
        run(&mut s, 1, 1);
        let running = s.job(1).unwrap().clone();
        let mut p = Policy::default();
        assert_eq!(planning_duration(&queued, &p), Some(60));
        assert_eq!(planning_duration(&running, &p), Some(60));
        p.estimates_running_only = true;
        assert_eq!(planning_duration(&queued, &p), Some(600));
        assert_eq!(planning_duration(&running, &p), Some(60));
        assert_eq!(planned_end(&running, &p, 0), Some(60));
        // The estimate still orders backfill candidates.
        assert_eq!(ordering_duration(&queued, &p), Some(60));
        queued.estimate = None;
        assert_eq!(ordering_duration(&queued, &p), Some(600));
    }

    fn state_with(jobs: Vec<Job>) -> State {
        let mut s = State::new(vec![Node::new("n1", 8, 0)]);
        for j in jobs {
            s.apply(Event::submit(j), 0).unwrap();
        }
        s
    }

    fn run(s: &mut State, id: u64, procs: u32) {
        let alloc = vec![Alloc {
            node: 0,
            tasks: procs,
            procs,
            mem_mb: 0,
            gres: Default::default(),
        }];
        s.apply(
            Event::Start {
                job: id,
                alloc,
                kind: StartKind::Priority,
            },
            0,
        )
        .unwrap();
    }

    #[test]
    fn class_default_and_max_walltime() {
        let mut p = Policy::default();
        p.classes.insert(
            "batch".into(),
            ClassConfig {
                default_wclimit: Some(600),
                max_wclimit: Some(300),
                ..ClassConfig::default()
            },
        );
        let mut j = Job::new(1, "u", Request::procs(1), None, 0);
        assert_eq!(effective_walltime(&j, &p), None);
        j.cred.class = Some("batch".into());
        assert_eq!(effective_walltime(&j, &p), Some(300));
        j.walltime = Some(100);
        assert_eq!(effective_walltime(&j, &p), Some(100));
    }

    #[test]
    fn dependencies_follow_the_other_job() {
        let a = Job::new(1, "u", Request::procs(1), Some(60), 0);
        let mut s = state_with(vec![a]);
        let dep = |kind, job| Dependency { kind, job };
        assert_eq!(
            dependency_status(&s, dep(DependencyKind::AfterOk, 1)),
            DepStatus::Waiting
        );
        assert_eq!(
            dependency_status(&s, dep(DependencyKind::AfterAny, 99)),
            DepStatus::Satisfied
        );
        assert_eq!(
            dependency_status(&s, dep(DependencyKind::AfterOk, 99)),
            DepStatus::Failed
        );
        run(&mut s, 1, 1);
        assert_eq!(
            dependency_status(&s, dep(DependencyKind::After, 1)),
            DepStatus::Satisfied
        );
        s.apply(
            Event::Finish {
                job: 1,
                code: CompletionCode::Exit(3),
            },
            10,
        )
        .unwrap();
        assert_eq!(
            dependency_status(&s, dep(DependencyKind::AfterOk, 1)),
            DepStatus::Failed
        );
        assert_eq!(
            dependency_status(&s, dep(DependencyKind::AfterNotOk, 1)),
            DepStatus::Satisfied
        );
        assert_eq!(
            dependency_status(&s, dep(DependencyKind::AfterAny, 1)),
            DepStatus::Satisfied
        );
    }

    #[test]
    fn holds_and_start_dates_block() {
        let mut j = Job::new(1, "u", Request::procs(1), Some(60), 0);
        j.start_after = Some(100);
        let s = state_with(vec![]);
        assert_eq!(check_static(&s, &j, 50), Err(BlockReason::StartDate(100)));
        assert_eq!(check_static(&s, &j, 100), Ok(()));
        j.holds.insert(HoldType::User);
        assert_eq!(
            check_static(&s, &j, 100),
            Err(BlockReason::Hold(vec![HoldType::User]))
        );
    }

    #[test]
    fn soft_and_hard_limits() {
        let mut p = Policy::default();
        let mut c = CredConfig::default();
        c.limits.max_job = Some(Limit { soft: 1, hard: 2 });
        p.users.insert("u".into(), c);
        assert!(has_limits(&p));
        let a = Job::new(1, "u", Request::procs(1), Some(60), 0);
        let b = Job::new(2, "u", Request::procs(1), Some(60), 0);
        let mut s = state_with(vec![a, b.clone()]);
        run(&mut s, 1, 1);
        let u = Usage::from_state(&s, &p, 0);
        assert_eq!(u.get("user", "u").jobs, 1);
        let one = Tally {
            jobs: 1,
            procs: 1,
            nodes: 1,
            wc: 60,
        };
        let err = u.check(&b, one, &p, PolicyLevel::Soft).unwrap_err();
        assert!(matches!(
            err,
            BlockReason::Policy(p) if p.limit == "MAXJOB" && p.max == 1 && p.in_use == 1
        ));
        assert_eq!(u.check(&b, one, &p, PolicyLevel::Hard), Ok(()));
    }

    #[test]
    fn planned_end_follows_the_virtual_limit_until_it_expires() {
        let p = Policy::default();
        let j = Job::new(1, "u", Request::procs(1), Some(200), 0);
        let mut s = state_with(vec![j]);
        run(&mut s, 1, 1);
        let change = crate::state::JobChange::VirtualWalltime(Some(100));
        s.apply(Event::Modify { job: 1, change }, 0).unwrap();
        let j = s.job(1).unwrap();
        assert_eq!(planned_end(j, &p, 0), Some(100));
        assert_eq!(planned_end(j, &p, 99), Some(100));
        // Expired: the real limit again.
        assert_eq!(planned_end(j, &p, 100), Some(200));
        // Only an active job has a virtual limit.
        let q = Job::new(2, "u", Request::procs(1), Some(200), 0);
        s.apply(Event::submit(q), 0).unwrap();
        let change = crate::state::JobChange::VirtualWalltime(Some(100));
        assert!(s.apply(Event::Modify { job: 2, change }, 0).is_err());
    }
}
