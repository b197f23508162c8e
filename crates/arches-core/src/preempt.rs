//! Preemption (Moab §8.4, §8.2's PREEMPT backfill): which running jobs a
//! blocked job may preempt, how each one is preempted, which victims to
//! choose, and when suspended jobs resume.
//!
//! Rules:
//!
//! - **QoS preemption** happens only when the seed's three conditions hold:
//!   the preemptor has the PREEMPTOR attribute (`QOSCFG[q] QFLAGS=PREEMPTOR`
//!   or the job flag), the victim has PREEMPTEE (QoS flag or job flag, e.g.
//!   from `CLASSCFG[c] JOBFLAGS=`), and the preemptor's priority is higher
//!   than the victim's (a running job's priority is taken at its start).
//! - **PREEMPT backfill** (`BACKFILLPOLICY PREEMPT`): backfill jobs start
//!   optimistically even when their wall-clock does not fit the window; a
//!   job whose guaranteed timeslot has come (it is within the reservation
//!   depth and fits now once the backfill jobs are gone) preempts them,
//!   whatever their priority, and they are requeued.
//! - Thrashing control: a job that has executed less than
//!   `JOBPREEMPTMINACTIVETIME` since it started or was last resumed, or
//!   more than `JOBPREEMPTMAXACTIVETIME` in all, is not preemptible; a job
//!   resumed in this iteration is not preempted in it.
//! - At most [`MAX_PREEMPTEES`] victims per preemptor.
//! - `PREEMPTPOLICY` escalates by what each victim allows: suspend (needs
//!   SUSPENDABLE) → checkpoint (needs CHECKPOINT) → requeue (needs
//!   RESTARTABLE) → cancel.
//! - Victims: whole sets are compared — the set whose highest victim
//!   priority is lowest, then the one that loses the least work (a
//!   suspension or a checkpoint loses none; requeue and cancel lose the
//!   processor-seconds run so far), then the one with the fewest jobs, then
//!   the fewest nodes, then the fewest processors. [`select`] searches them (branch and bound, bounded)
//!   and verifies each candidate set against the real placement.
//! - A checkpointed or requeued victim keeps its processors until the
//!   resource manager reports it gone ([`crate::state::Event::Terminate`]):
//!   the preemptor waits for it (its resources held for it in the plan and by
//!   a [`crate::state::Lock`]) and starts in a later iteration. Suspended and
//!   cancelled victims free their processors at once.
//! - `GUARANTEEDPREEMPTION`: the resources freed for a preemptor stay locked
//!   for it until it starts, also across a start that fails at the resource
//!   manager, for up to `JOBRETRYTIME` after they were freed.
//!
//! Suspended jobs resume automatically, before the queue is walked, when
//! their processors are free again (highest priority first), unless an
//! administrator suspended them or a waiting preemptor of higher priority
//! would preempt them again at once.

mod select;

use std::fmt;

use crate::job::{Alloc, Job, JobFlag, JobId, JobState, StartKind};
use crate::plan::BlockReason;
use crate::policy::{BackfillPolicy, Policy, PreemptPolicy, QosFlag};
use crate::priority::priority_total;
use crate::schedule::{Entry, Walk};
use crate::{Secs, Time};

/// At most this many preemptees per preemptor (Moab §8.4.1).
pub const MAX_PREEMPTEES: usize = 32;

/// One job preempted by the plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Preemption {
    /// The job preempted.
    pub job: JobId,
    /// The job it was preempted for.
    pub by: JobId,
    /// How it is preempted (after escalation).
    pub method: PreemptPolicy,
    /// What `PREEMPTPOLICY` asked for.
    pub requested: PreemptPolicy,
    /// Why this job was chosen.
    pub reason: String,
}

impl Preemption {
    /// Moab's escalation note when the method had to change, e.g.
    /// `job 7 not suspendable, preempt policy temporarily changed to requeue`.
    pub fn note(&self) -> Option<String> {
        escalation_note(self.job, self.requested, self.method)
    }

    /// Whether the victim keeps its processors until the resource manager
    /// reports it gone (checkpoint, requeue): its preemptor waits for it.
    pub fn terminates(&self) -> bool {
        terminates(self.method)
    }
}

/// Whether a method ends the job through a termination the resource manager
/// reports later (checkpoint and requeue).
pub fn terminates(method: PreemptPolicy) -> bool {
    matches!(method, PreemptPolicy::Checkpoint | PreemptPolicy::Requeue)
}

/// Resources a preemptor keeps for itself (the driver applies it as
/// [`crate::state::Event::Lock`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PreemptorLock {
    pub job: JobId,
    pub alloc: Vec<Alloc>,
    /// How long the lock outlives the victims' release: `JOBRETRYTIME`
    /// under `GUARANTEEDPREEMPTION`, else 0.
    pub retry: Secs,
}

/// Preemptees a preemptor could not use, by the condition that failed
/// (seed §8.4.3's checklist).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Excluded {
    /// Their priority is not lower than the preemptor's.
    pub priority: u32,
    /// They executed less than `JOBPREEMPTMINACTIVETIME` since they started
    /// or were last resumed.
    pub min_active: u32,
    /// They executed more than `JOBPREEMPTMAXACTIVETIME`.
    pub max_active: u32,
    /// They are already being preempted (terminating, or taken or resumed
    /// by this iteration).
    pub busy: u32,
    /// They hold no processors on nodes the preemptor can use.
    pub unusable: u32,
}

impl Excluded {
    pub fn total(&self) -> u32 {
        self.priority + self.min_active + self.max_active + self.busy + self.unusable
    }

    /// `(count, condition)` of every condition that excluded some.
    pub fn reasons(&self) -> Vec<(u32, &'static str)> {
        [
            (self.priority, "priority not lower"),
            (self.min_active, "under JOBPREEMPTMINACTIVETIME"),
            (self.max_active, "over JOBPREEMPTMAXACTIVETIME"),
            (self.busy, "already being preempted"),
            (self.unusable, "on nodes the job cannot use"),
        ]
        .into_iter()
        .filter(|(n, _)| *n > 0)
        .collect()
    }
}

impl fmt::Display for Excluded {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts: Vec<String> = self
            .reasons()
            .iter()
            .map(|(n, why)| format!("{n} {why}"))
            .collect();
        write!(
            f,
            "{} preemptee(s) not preemptible ({})",
            self.total(),
            parts.join(", ")
        )
    }
}

/// How a preemptor's attempt ended when it did not preempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoteOutcome {
    /// No running job has the PREEMPTEE attribute.
    NoPreemptee,
    /// Every preemptee was excluded (see [`PreemptNote::excluded`]).
    NonePreemptible,
    /// The preemptible jobs hold too few processors.
    TooFew { held: u32, more: u32 },
    /// No set of at most [`MAX_PREEMPTEES`] frees resources it can use.
    NoSet,
}

/// Why a blocked preemptor did not preempt (for `checkjob -v`, `mdiag -j`),
/// with a count per failed condition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PreemptNote {
    pub job: JobId,
    pub outcome: NoteOutcome,
    pub excluded: Excluded,
    /// When a preemptee becomes preemptible (`JOBPREEMPTMINACTIVETIME`):
    /// the driver should run an iteration then.
    pub retry_at: Option<Time>,
}

impl fmt::Display for PreemptNote {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("cannot preempt: ")?;
        match self.outcome {
            NoteOutcome::NoPreemptee => {
                return f.write_str("no running job with the PREEMPTEE attribute")
            }
            NoteOutcome::NonePreemptible => return write!(f, "{}", self.excluded),
            NoteOutcome::TooFew { held, more } => {
                write!(f, "preemptible jobs hold {held} procs, {more} more needed")?
            }
            NoteOutcome::NoSet => write!(
                f,
                "no set of at most {MAX_PREEMPTEES} preemptees frees the resources"
            )?,
        }
        if self.excluded.total() > 0 {
            write!(f, "; {}", self.excluded)?;
        }
        Ok(())
    }
}

/// Whether the job carries a flag itself or through its class or QoS
/// (`CLASSCFG[c] JOBFLAGS=`, `QOSCFG[q] JOBFLAGS=`).
pub fn has_flag(job: &Job, policy: &Policy, flag: JobFlag) -> bool {
    job.flags.contains(flag)
        || job
            .cred
            .class
            .as_deref()
            .and_then(|c| policy.classes.get(c))
            .is_some_and(|c| c.job_flags.contains(&flag))
        // No QoS configured: no QoS flag (and no default QoS to look up).
        || (!policy.qos.is_empty()
            && effective_qos(job, policy)
                .and_then(|q| policy.qos.get(q))
                .is_some_and(|q| q.job_flags.contains(&flag)))
}

/// The job's QoS: [`crate::qos::effective`] (the one assigned at
/// submission, else its credentials' default).
pub fn effective_qos<'j>(job: &'j Job, policy: &'j Policy) -> Option<&'j str> {
    crate::qos::effective(job, policy)
}

fn qos_has(job: &Job, policy: &Policy, flag: QosFlag) -> bool {
    // No QoS configured: no QoS flag (and no default QoS to look up).
    !policy.qos.is_empty()
        && effective_qos(job, policy)
            .and_then(|q| policy.qos.get(q))
            .is_some_and(|q| q.flags.contains(&flag))
}

/// The PREEMPTOR attribute (QoS flag or job flag).
pub fn is_preemptor(job: &Job, policy: &Policy) -> bool {
    qos_has(job, policy, QosFlag::Preemptor) || has_flag(job, policy, JobFlag::Preemptor)
}

/// Whether the policy can make a job a preemptor through its class or QoS
/// (a QoS flag or `JOBFLAGS=PREEMPTOR`); when not, only a job's own flag
/// can.
pub fn preemptor_configured(policy: &Policy) -> bool {
    policy
        .qos
        .values()
        .any(|q| q.flags.contains(&QosFlag::Preemptor) || q.job_flags.contains(&JobFlag::Preemptor))
        || policy
            .classes
            .values()
            .any(|c| c.job_flags.contains(&JobFlag::Preemptor))
}

/// The PREEMPTOR attribute from the job's class or QoS alone (what a user
/// may not give a job by flag: see the daemon's submission checks).
pub fn preemptor_by_credential(job: &Job, policy: &Policy) -> bool {
    let mut bare = job.clone();
    bare.flags.remove(JobFlag::Preemptor);
    is_preemptor(&bare, policy)
}

/// The PREEMPTEE attribute (QoS flag or job flag).
pub fn is_preemptee(job: &Job, policy: &Policy) -> bool {
    qos_has(job, policy, QosFlag::Preemptee) || has_flag(job, policy, JobFlag::Preemptee)
}

/// Started optimistically by `BACKFILLPOLICY PREEMPT` (preemptible by any
/// job whose reserved slot has come).
pub fn is_optimistic_backfill(job: &Job, policy: &Policy) -> bool {
    policy.backfill == BackfillPolicy::Preempt
        && job
            .run
            .as_ref()
            .is_some_and(|r| r.how == StartKind::Backfill)
}

/// The method actually used for a job when `requested` is asked for:
/// Moab's escalation suspend → checkpoint → requeue → cancel by what the
/// job allows. `restartable` forces requeue to be allowed (PREEMPT backfill
/// jobs are always restarted later).
pub fn method_for(
    job: &Job,
    policy: &Policy,
    requested: PreemptPolicy,
    restartable: bool,
) -> PreemptPolicy {
    escalate(requested, |m| match m {
        PreemptPolicy::Suspend => has_flag(job, policy, JobFlag::Suspendable),
        PreemptPolicy::Checkpoint => has_flag(job, policy, JobFlag::Checkpointable),
        PreemptPolicy::Requeue => restartable || has_flag(job, policy, JobFlag::Restartable),
        PreemptPolicy::Cancel => true,
    })
}

/// The first method from `requested` on (suspend → checkpoint → requeue →
/// cancel) that the job `allows`.
fn escalate(requested: PreemptPolicy, allows: impl Fn(PreemptPolicy) -> bool) -> PreemptPolicy {
    let order = [
        PreemptPolicy::Suspend,
        PreemptPolicy::Checkpoint,
        PreemptPolicy::Requeue,
        PreemptPolicy::Cancel,
    ];
    let from = order.iter().position(|m| *m == requested).unwrap_or(2);
    order[from..]
        .iter()
        .copied()
        .find(|m| allows(*m))
        .unwrap_or(PreemptPolicy::Cancel)
}

/// Moab's note when a preemption method was escalated (moab-formats §9.2,
/// Moab 7 `MJobPreempt`): the requested method the job does not allow, and
/// "or requeueable" when it had to fall through to cancel, e.g.
/// `job 7 not suspendable or requeueable, preempt policy temporarily changed to cancel`.
pub fn escalation_note(job: JobId, requested: PreemptPolicy, got: PreemptPolicy) -> Option<String> {
    if requested == got {
        return None;
    }
    let what = match requested {
        PreemptPolicy::Suspend => "suspendable",
        PreemptPolicy::Checkpoint => "checkpointable",
        PreemptPolicy::Requeue => "requeueable",
        PreemptPolicy::Cancel => return None,
    };
    let or_requeue = if got == PreemptPolicy::Cancel && requested != PreemptPolicy::Requeue {
        " or requeueable"
    } else {
        ""
    };
    Some(format!(
        "job {job} not {what}{or_requeue}, preempt policy temporarily changed to {}",
        got.as_str().to_ascii_lowercase()
    ))
}

/// Seconds a job has executed in all (suspensions excluded):
/// `JOBPREEMPTMAXACTIVETIME` and the work a requeue loses.
pub fn active_secs(job: &Job, now: Time) -> Secs {
    let Some(r) = job.run.as_ref() else {
        return 0;
    };
    let end = r.suspended_at.unwrap_or(now);
    (end - r.start_time - r.suspended_secs).max(0)
}

/// Seconds a job has executed since it started or was last resumed (0 while
/// suspended): `JOBPREEMPTMINACTIVETIME` protects "a newly started or newly
/// resumed job" (seed §8.4.1).
pub fn recent_active_secs(job: &Job, now: Time) -> Secs {
    match job.run.as_ref() {
        Some(r) if r.suspended_at.is_none() => (now - r.active_since()).max(0),
        _ => 0,
    }
}

/// The priority a running job is compared with: its priority when it
/// started (Moab's StartPriority), so queue time stops growing.
pub fn run_priority(job: &Job, policy: &Policy) -> (bool, i64) {
    let at = job.run.as_ref().map_or(job.submit_time, |r| r.start_time);
    priority_total(job, policy, at)
}

/// What a job's class and QoS give it, looked up once per credential pair.
#[derive(Clone, Copy)]
struct CredInfo {
    preemptee: bool,
    suspendable: bool,
    checkpointable: bool,
    restartable: bool,
}

/// A small memo of [`CredInfo`] by (class, QoS): a preemptor may look at
/// thousands of running jobs of a handful of credentials.
#[derive(Default)]
struct CredMemo<'a> {
    seen: Vec<(CredKey<'a>, CredInfo)>,
}

/// (class, QoS).
type CredKey<'a> = (Option<&'a str>, Option<&'a str>);

impl<'a> CredMemo<'a> {
    fn get(&mut self, job: &'a Job, policy: &'a Policy) -> CredInfo {
        let qos = effective_qos(job, policy);
        let key = (job.cred.class.as_deref(), qos);
        if let Some((_, i)) = self.seen.iter().find(|(k, _)| *k == key) {
            return *i;
        }
        let mut bare = Job::new(0, "", crate::job::Request::procs(1), None, 0);
        bare.cred.class = job.cred.class.clone();
        bare.cred.qos = Some(qos.unwrap_or(crate::qos::DEFAULT_QOS).into());
        let info = CredInfo {
            preemptee: is_preemptee(&bare, policy),
            suspendable: has_flag(&bare, policy, JobFlag::Suspendable),
            checkpointable: has_flag(&bare, policy, JobFlag::Checkpointable),
            restartable: has_flag(&bare, policy, JobFlag::Restartable),
        };
        if self.seen.len() < 64 {
            self.seen.push((key, info));
        }
        info
    }
}

/// Why an active job cannot be preempted by a preemptor of priority
/// `by_prio` (with the PREEMPTOR attribute or not), or `None` if it can.
/// This is the seed's checklist (§8.4.3) in order.
pub fn why_not_preemptible(
    job: &Job,
    policy: &Policy,
    now: Time,
    by_preemptor: bool,
    by_prio: Option<(bool, i64)>,
) -> Option<String> {
    if job.state != JobState::Running && job.state != JobState::Starting {
        return Some(format!("job is {}, not running", job.state.as_str()));
    }
    if job.run.as_ref().is_some_and(|r| r.terminating.is_some()) {
        return Some("job is already being preempted (terminating)".to_string());
    }
    let optimistic = is_optimistic_backfill(job, policy);
    let qos_rule = by_preemptor && is_preemptee(job, policy);
    if !qos_rule && !optimistic {
        if !is_preemptee(job, policy) {
            return Some("job does not have the PREEMPTEE attribute".to_string());
        }
        return Some("preemptor does not have the PREEMPTOR attribute".to_string());
    }
    let min = policy.job_preempt_min_active;
    let recent = recent_active_secs(job, now);
    if min > 0 && recent < min {
        return Some(format!(
            "job has run {recent}s since it started or resumed, less than JOBPREEMPTMINACTIVETIME ({min}s)"
        ));
    }
    let ran = active_secs(job, now);
    let max = policy.job_preempt_max_active;
    if max > 0 && ran > max {
        return Some(format!(
            "job has run {ran}s, more than JOBPREEMPTMAXACTIVETIME ({max}s)"
        ));
    }
    if let Some(p) = by_prio {
        let mine = run_priority(job, policy);
        // An optimistic PREEMPT backfill job yields to any job whose
        // guaranteed slot has come, whatever the priorities.
        if mine >= p && !optimistic {
            return Some(format!(
                "job priority {} is not lower than the preemptor's {}",
                mine.1, p.1
            ));
        }
    }
    None
}

/// A possible victim.
pub(crate) struct Cand<'a> {
    pub job: &'a Job,
    /// Copied out of the job so sorting does not chase pointers.
    pub id: JobId,
    /// The first node of its allocation (for the nodes tie-break).
    pub first_node: Option<crate::node::NodeId>,
    pub method: PreemptPolicy,
    /// Its start priority.
    pub prio: (bool, i64),
    /// Processor-seconds lost by preempting it with `method`.
    pub lost: i64,
    pub procs: u32,
    /// The victim counts only as an optimistic PREEMPT backfill job.
    pub as_backfill: bool,
}

/// Tries to start `entries[i]` now by preempting running jobs; returns
/// whether it was handled (started, or waiting for its terminating
/// victims). `slot` says the job is guaranteed a timeslot (it is within the
/// reservation depth), which lets it preempt PREEMPT backfill jobs.
pub(crate) fn try_preempt<'a>(
    walk: &mut Walk<'a>,
    entries: &mut [Entry<'a>],
    i: usize,
    dur: Option<Secs>,
    slot: bool,
) -> bool {
    let job = entries[i].job;
    let policy = walk.ctx.policy;
    let now = walk.ctx.now;
    let preemptor = is_preemptor(job, policy);
    let bf_preempt = slot && policy.backfill == BackfillPolicy::Preempt;
    if !preemptor && !bf_preempt {
        return false;
    }
    let my_prio = (entries[i].prio.system, entries[i].prio.total);
    let requested = policy.preempt_policy;
    let state = walk.ctx.state;
    let mut memo = CredMemo::default();
    let mut cands: Vec<Cand<'a>> = Vec::new();
    // Victims of an earlier iteration still terminating for this job.
    let mut pending: Vec<&'a Job> = Vec::new();
    let mut ex = Excluded::default();
    let mut retry_at: Option<Time> = None;
    let min = policy.job_preempt_min_active;
    let max = policy.job_preempt_max_active;
    for v in state.active() {
        if v.id == job.id {
            continue;
        }
        let term = v.run.as_ref().and_then(|r| r.terminating);
        if term.is_some_and(|t| t.by == Some(job.id)) {
            if v.state != JobState::Suspended {
                pending.push(v);
            }
            continue;
        }
        if !matches!(v.state, JobState::Running | JobState::Starting) {
            continue;
        }
        let info = memo.get(v, policy);
        let preemptee = info.preemptee || v.flags.contains(JobFlag::Preemptee);
        let qos_rule = preemptor && preemptee;
        let bf_rule = bf_preempt && is_optimistic_backfill(v, policy);
        if !qos_rule && !bf_rule {
            continue;
        }
        if term.is_some()
            || walk.plan.preemptions.iter().any(|p| p.job == v.id)
            || walk.plan.resumes.contains(&v.id)
        {
            ex.busy += 1;
            continue;
        }
        let vp = run_priority(v, policy);
        // The seed's third condition holds for QoS preemption; an
        // optimistic backfill job yields to a guaranteed slot regardless.
        let by_qos = qos_rule && vp < my_prio;
        if !by_qos && !bf_rule {
            ex.priority += 1;
            continue;
        }
        let ran = active_secs(v, now);
        if max > 0 && ran > max {
            ex.max_active += 1;
            continue;
        }
        let recent = recent_active_secs(v, now);
        if min > 0 && recent < min {
            let at = now + (min - recent);
            retry_at = Some(retry_at.map_or(at, |r| r.min(at)));
            ex.min_active += 1;
            continue;
        }
        if !helps(v, job, walk) {
            ex.unusable += 1;
            continue;
        }
        let as_backfill = !by_qos;
        let method = escalate(requested, |m| match m {
            PreemptPolicy::Suspend => info.suspendable || v.flags.contains(JobFlag::Suspendable),
            PreemptPolicy::Checkpoint => {
                info.checkpointable || v.flags.contains(JobFlag::Checkpointable)
            }
            PreemptPolicy::Requeue => {
                as_backfill || info.restartable || v.flags.contains(JobFlag::Restartable)
            }
            PreemptPolicy::Cancel => true,
        });
        let procs = v.run.as_ref().map_or(0, |r| r.procs());
        let lost = match method {
            PreemptPolicy::Suspend | PreemptPolicy::Checkpoint => 0,
            _ => ran.saturating_mul(i64::from(procs)),
        };
        cands.push(Cand {
            job: v,
            id: v.id,
            first_node: v.run.as_ref().and_then(|r| r.alloc.first()).map(|a| a.node),
            method,
            prio: vp,
            lost,
            procs,
            as_backfill,
        });
    }
    // What is already on its way out for this job counts as freed.
    for v in &pending {
        walk.ctx.release(v, false, false);
    }
    let undo_pending = |walk: &mut Walk<'a>| {
        for v in &pending {
            walk.ctx.release(v, false, true);
        }
    };
    if !pending.is_empty() {
        if let Some(alloc) = walk.ctx.fit_now(job, dur) {
            wait_for(walk, entries, i, alloc, dur, &pending, &[]);
            return true;
        }
    }
    let note = |walk: &mut Walk<'a>, outcome: NoteOutcome| {
        if preemptor {
            walk.plan.preempt_notes.push(PreemptNote {
                job: job.id,
                outcome,
                excluded: ex,
                retry_at,
            });
        }
    };
    if cands.is_empty() {
        undo_pending(walk);
        let outcome = if ex.total() > 0 {
            NoteOutcome::NonePreemptible
        } else {
            NoteOutcome::NoPreemptee
        };
        note(walk, outcome);
        return false;
    }
    // Cheap aggregate bound first: can these candidates free enough at all?
    let need = i64::from(job.req.total_procs());
    let idle = i64::from(walk.ctx.idle_procs());
    let total: i64 = cands.iter().map(|c| i64::from(c.procs)).sum();
    if idle + total < need {
        undo_pending(walk);
        let held = u32::try_from(total).unwrap_or(u32::MAX);
        let more = u32::try_from(need - idle).unwrap_or(u32::MAX);
        note(walk, NoteOutcome::TooFew { held, more });
        return false;
    }
    let Some(chosen) = select::choose(walk, job, dur, &mut cands) else {
        undo_pending(walk);
        note(walk, NoteOutcome::NoSet);
        return false;
    };
    for &k in &chosen {
        let c = &cands[k];
        walk.ctx
            .release(c.job, c.method == PreemptPolicy::Suspend, false);
    }
    let Some(alloc) = walk.ctx.fit_now(job, dur) else {
        // The search verified this set: cannot happen; undo to stay consistent.
        for &k in &chosen {
            let c = &cands[k];
            walk.ctx
                .release(c.job, c.method == PreemptPolicy::Suspend, true);
        }
        undo_pending(walk);
        note(walk, NoteOutcome::NoSet);
        return false;
    };
    let mut victims: Vec<&Cand<'a>> = chosen.iter().map(|&k| &cands[k]).collect();
    victims.sort_by_key(|c| c.job.id);
    for c in &victims {
        let why = if c.as_backfill {
            format!(
                "PREEMPT backfill job preempted: job {} reached its reserved slot",
                job.id
            )
        } else {
            format!(
                "preempted by PREEMPTOR job {} (priority {} > {})",
                job.id, my_prio.1, c.prio.1
            )
        };
        walk.plan.preemptions.push(Preemption {
            job: c.job.id,
            by: job.id,
            method: c.method,
            requested,
            reason: why,
        });
    }
    let terminating: Vec<&Job> = victims
        .iter()
        .filter(|c| terminates(c.method))
        .map(|c| c.job)
        .collect();
    if !pending.is_empty() || !terminating.is_empty() {
        wait_for(walk, entries, i, alloc, dur, &pending, &terminating);
        return true;
    }
    if policy.guaranteed_preemption {
        walk.plan.locks.push(PreemptorLock {
            job: job.id,
            alloc: alloc.clone(),
            retry: policy.job_retry_time,
        });
    }
    walk.start(entries, i, alloc, dur, StartKind::Priority);
    true
}

/// The preemptor waits for victims that keep their processors until they
/// are gone: in this plan they still hold them now, and the preemptor holds
/// the idle part of its placement and, from their release on, their share
/// of the rest; the driver locks the same for it ([`PreemptorLock`]) until
/// it starts. On entry every victim is released in the planning context.
fn wait_for<'a>(
    walk: &mut Walk<'a>,
    entries: &mut [Entry<'a>],
    i: usize,
    alloc: Vec<Alloc>,
    dur: Option<Secs>,
    pending: &[&Job],
    terminating: &[&Job],
) {
    let job = entries[i].job;
    let now = walk.ctx.now;
    let policy = walk.ctx.policy;
    let mut victims: Vec<(&Job, Time)> = Vec::new();
    for v in pending {
        // Back as they were: holding their processors until their deadline.
        walk.ctx.release(v, false, true);
        let until = v
            .run
            .as_ref()
            .and_then(|r| r.terminating)
            .map_or(now + 1, |t| t.until.max(now + 1));
        victims.push((v, until));
    }
    for v in terminating {
        // Still running now; gone (the plan assumes) right after.
        let held = v.run.as_ref().map(|r| r.alloc.clone()).unwrap_or_default();
        walk.ctx
            .commit_procs(v, v.procs(), now, Some(now + 1), &held);
        victims.push((v, now + 1));
    }
    let parts = walk.ctx.claim_parts(&alloc, &victims, dur);
    walk.ctx.commit_parts(job, &parts);
    let mut ids: Vec<JobId> = victims.iter().map(|(j, _)| j.id).collect();
    ids.sort_unstable();
    entries[i].waiting = true;
    entries[i].reason = Some(BlockReason::Preempting(ids));
    let locked = walk.ctx.state.lock_in_force(job.id, now).is_some();
    if !terminating.is_empty() || !locked {
        let retry = if policy.guaranteed_preemption {
            policy.job_retry_time
        } else {
            0
        };
        walk.plan.locks.push(PreemptorLock {
            job: job.id,
            alloc,
            retry,
        });
    }
}

/// Whether preempting `victim` can help `job` at all (it holds processors
/// on nodes the job could use: features).
fn helps(victim: &Job, job: &Job, walk: &Walk<'_>) -> bool {
    if job.req.features.is_empty() {
        return true;
    }
    let nodes = walk.ctx.state.nodes();
    victim.run.as_ref().is_some_and(|r| {
        r.alloc.iter().any(|a| {
            nodes
                .get(a.node as usize)
                .is_some_and(|n| job.req.features.iter().all(|f| n.features.contains(f)))
        })
    })
}

/// Resumes suspended jobs whose processors are free, highest priority
/// first, before the queue is walked.
pub(crate) fn resume_suspended<'a>(walk: &mut Walk<'a>, entries: &[Entry<'a>]) {
    let state = walk.ctx.state;
    let policy = walk.ctx.policy;
    let now = walk.ctx.now;
    let mut susp: Vec<((bool, i64), &Job)> = state
        .active()
        .filter(|j| j.state == JobState::Suspended && !j.admin_suspended)
        .filter(|j| j.run.as_ref().is_some_and(|r| r.terminating.is_none()))
        .map(|j| (run_priority(j, policy), j))
        .collect();
    if susp.is_empty() {
        return;
    }
    // The best waiting preemptor: a preemptee below it stays suspended.
    let top_preemptor = entries
        .iter()
        .filter(|e| !e.handled && is_preemptor(e.job, policy))
        .map(|e| (e.prio.system, e.prio.total))
        .max();
    susp.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.id.cmp(&b.1.id)));
    for (prio, job) in susp {
        if top_preemptor.is_some_and(|p| p > prio) && is_preemptee(job, policy) {
            continue;
        }
        let Some(run) = job.run.as_ref() else {
            continue;
        };
        if !run
            .alloc
            .iter()
            .all(|a| walk.ctx.free_now(a.node).0 >= a.procs)
        {
            continue;
        }
        let left = crate::eligibility::planning_duration(job, policy)
            .map(|d| (d - active_secs(job, now)).max(1));
        if !walk.ctx.covers_now(run.procs(), left) {
            continue;
        }
        // Memory stayed held while suspended: only processors come back.
        let alloc: Vec<Alloc> = run
            .alloc
            .iter()
            .map(|a| Alloc { mem_mb: 0, ..*a })
            .collect();
        walk.ctx
            .commit_procs(job, run.procs(), now, left.map(|l| now + l), &alloc);
        walk.plan.resumes.push(job.id);
    }
}
