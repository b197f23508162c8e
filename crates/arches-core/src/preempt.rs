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
//!   higher-priority job whose reserved slot has come (it fits now once the
//!   backfill jobs are gone) preempts them, and they are requeued.
//! - Thrashing control: a job that has executed less than
//!   `JOBPREEMPTMINACTIVETIME`, or more than `JOBPREEMPTMAXACTIVETIME`, is
//!   not preemptible; a job resumed in this iteration is not preempted in it.
//! - At most [`MAX_PREEMPTEES`] victims per preemptor.
//! - `PREEMPTPOLICY` escalates by what each victim allows: suspend (needs
//!   SUSPENDABLE) → checkpoint (needs CHECKPOINT) → requeue (needs
//!   RESTARTABLE) → cancel.
//! - Victims: candidates are ordered lowest priority first, then least work
//!   lost (a suspension loses none; requeue and cancel lose the processor
//!   seconds run so far), then fewest processors; they are taken in that
//!   order until the preemptor fits, and the set is then minimised — every
//!   victim whose release is not needed is given back — so no more jobs (or
//!   nodes) than needed are preempted.
//!
//! Suspended jobs resume automatically, before the queue is walked, when
//! their processors are free again (highest priority first), unless an
//! administrator suspended them or a waiting preemptor of higher priority
//! would preempt them again at once.

use std::fmt;

use crate::job::{Alloc, Job, JobFlag, JobId, JobState, StartKind};
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
}

/// Why a blocked preemptor did not preempt (for `checkjob -v`, `mdiag -j`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PreemptNote {
    pub job: JobId,
    pub text: String,
    /// When a preemptee becomes preemptible (`JOBPREEMPTMINACTIVETIME`):
    /// the driver should run an iteration then.
    pub retry_at: Option<Time>,
}

impl fmt::Display for PreemptNote {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// Whether the job carries a flag itself or through its class or QoS
/// (`CLASSCFG[c] JOBFLAGS=`, `QOSCFG[q] JOBFLAGS=`).
pub fn has_flag(job: &Job, policy: &Policy, flag: JobFlag) -> bool {
    job.flags.contains(flag)
        || job
            .cred
            .class
            .as_ref()
            .and_then(|c| policy.classes.get(c))
            .is_some_and(|c| c.job_flags.contains(&flag))
        || effective_qos(job, policy)
            .and_then(|q| policy.qos.get(q))
            .is_some_and(|q| q.job_flags.contains(&flag))
}

/// The job's QoS: [`crate::qos::effective`] (the one assigned at
/// submission, else its credentials' default).
pub fn effective_qos<'j>(job: &'j Job, policy: &'j Policy) -> Option<&'j str> {
    crate::qos::effective(job, policy)
}

fn qos_has(job: &Job, policy: &Policy, flag: QosFlag) -> bool {
    effective_qos(job, policy)
        .and_then(|q| policy.qos.get(q))
        .is_some_and(|q| q.flags.contains(&flag))
}

/// The PREEMPTOR attribute (QoS flag or job flag).
pub fn is_preemptor(job: &Job, policy: &Policy) -> bool {
    qos_has(job, policy, QosFlag::Preemptor) || has_flag(job, policy, JobFlag::Preemptor)
}

/// The PREEMPTEE attribute (QoS flag or job flag).
pub fn is_preemptee(job: &Job, policy: &Policy) -> bool {
    qos_has(job, policy, QosFlag::Preemptee) || has_flag(job, policy, JobFlag::Preemptee)
}

/// Started optimistically by `BACKFILLPOLICY PREEMPT` (preemptible by any
/// higher-priority job whose reserved slot has come).
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

/// Moab's note when a preemption method was escalated (moab-formats §9.2).
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
    Some(format!(
        "job {job} not {what}, preempt policy temporarily changed to {}",
        got.as_str().to_ascii_lowercase()
    ))
}

/// Seconds a job has executed (suspensions excluded).
pub fn active_secs(job: &Job, now: Time) -> Secs {
    let Some(r) = job.run.as_ref() else {
        return 0;
    };
    let end = r.suspended_at.unwrap_or(now);
    (end - r.start_time - r.suspended_secs).max(0)
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
        bare.cred.qos = Some(qos.unwrap_or(crate::qos::DEFAULT_QOS).to_string());
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
    let qos_rule = by_preemptor && is_preemptee(job, policy);
    if !qos_rule && !is_optimistic_backfill(job, policy) {
        if !is_preemptee(job, policy) {
            return Some("job does not have the PREEMPTEE attribute".to_string());
        }
        return Some("preemptor does not have the PREEMPTOR attribute".to_string());
    }
    let ran = active_secs(job, now);
    let min = policy.job_preempt_min_active;
    if min > 0 && ran < min {
        return Some(format!(
            "job has run {ran}s, less than JOBPREEMPTMINACTIVETIME ({min}s)"
        ));
    }
    let max = policy.job_preempt_max_active;
    if max > 0 && ran > max {
        return Some(format!(
            "job has run {ran}s, more than JOBPREEMPTMAXACTIVETIME ({max}s)"
        ));
    }
    if let Some(p) = by_prio {
        let mine = run_priority(job, policy);
        if mine >= p {
            return Some(format!(
                "job priority {} is not lower than the preemptor's {}",
                mine.1, p.1
            ));
        }
    }
    None
}

/// A possible victim.
struct Cand<'a> {
    job: &'a Job,
    method: PreemptPolicy,
    key: (bool, i64, i64, u32, JobId),
}

/// Tries to start `entries[i]` now by preempting running jobs. Returns
/// whether it started. `slot` says the job is guaranteed a timeslot (it is
/// within the reservation depth), which lets it preempt PREEMPT backfill jobs.
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
    let mut cands: Vec<Cand<'a>> = Vec::new();
    let state = walk.ctx.state;
    let mut memo = CredMemo::default();
    let mut excluded = 0usize;
    let mut retry_at: Option<Time> = None;
    for v in state.active() {
        if v.id == job.id || !matches!(v.state, JobState::Running | JobState::Starting) {
            continue;
        }
        let info = memo.get(v, policy);
        let qos_rule = preemptor && (info.preemptee || v.flags.contains(JobFlag::Preemptee));
        let bf_rule = bf_preempt && is_optimistic_backfill(v, policy);
        if !qos_rule && !bf_rule {
            continue;
        }
        if walk.plan.preemptions.iter().any(|p| p.job == v.id) || walk.plan.resumes.contains(&v.id)
        {
            continue;
        }
        let ran = active_secs(v, now);
        let min = policy.job_preempt_min_active;
        let max = policy.job_preempt_max_active;
        let vp = run_priority(v, policy);
        if vp >= my_prio || (max > 0 && ran > max) {
            excluded += 1;
            continue;
        }
        if min > 0 && ran < min {
            let at = now + (min - ran);
            retry_at = Some(retry_at.map_or(at, |r| r.min(at)));
            excluded += 1;
            continue;
        }
        let method = escalate(requested, |m| match m {
            PreemptPolicy::Suspend => info.suspendable || v.flags.contains(JobFlag::Suspendable),
            PreemptPolicy::Checkpoint => {
                info.checkpointable || v.flags.contains(JobFlag::Checkpointable)
            }
            PreemptPolicy::Requeue => {
                (bf_rule && !qos_rule) || info.restartable || v.flags.contains(JobFlag::Restartable)
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
            method,
            key: (vp.0, vp.1, lost, procs, v.id),
        });
    }
    if cands.is_empty() {
        if !preemptor {
            return false;
        }
        let text = if excluded > 0 {
            format!(
                "cannot preempt: {excluded} preemptee(s) not preemptible (priority not lower, or JOBPREEMPTMINACTIVETIME/MAXACTIVETIME)"
            )
        } else {
            "cannot preempt: no running job with the PREEMPTEE attribute".to_string()
        };
        walk.plan.preempt_notes.push(PreemptNote {
            job: job.id,
            text,
            retry_at,
        });
        return false;
    }
    // Only the cheapest few are normally looked at: order those first and
    // the rest only if the greedy pass gets to them.
    let head = (4 * MAX_PREEMPTEES).min(cands.len());
    if head < cands.len() {
        cands.select_nth_unstable_by_key(head - 1, |c| c.key);
    }
    cands[..head].sort_unstable_by_key(|c| c.key);
    let mut rest_sorted = head == cands.len();
    // Cheap aggregate bound first: can these candidates free enough at all?
    let need = i64::from(job.req.total_procs());
    let idle = i64::from(walk.ctx.idle_procs());
    let total: i64 = cands.iter().map(|c| i64::from(c.key.3)).sum();
    if idle + total < need {
        if !preemptor {
            return false;
        }
        walk.plan.preempt_notes.push(PreemptNote {
            job: job.id,
            text: format!(
                "cannot preempt: preemptible jobs hold {total} procs, {} more needed",
                need - idle
            ),
            retry_at,
        });
        return false;
    }
    let mut chosen: Vec<usize> = Vec::new();
    let mut freed = idle;
    let mut fits = false;
    for k in 0..cands.len() {
        if chosen.len() == MAX_PREEMPTEES {
            break;
        }
        if k == head && !rest_sorted {
            cands[head..].sort_unstable_by_key(|c| c.key);
            rest_sorted = true;
        }
        let c = &cands[k];
        if !helps(c.job, job, walk) {
            continue;
        }
        walk.ctx
            .release(c.job, c.method == PreemptPolicy::Suspend, false);
        chosen.push(k);
        freed += i64::from(c.key.3);
        if freed >= need && walk.ctx.fit_now(job, dur).is_some() {
            fits = true;
            break;
        }
    }
    if !fits {
        for &k in chosen.iter().rev() {
            let c = &cands[k];
            walk.ctx
                .release(c.job, c.method == PreemptPolicy::Suspend, true);
        }
        if !preemptor {
            return false;
        }
        walk.plan.preempt_notes.push(PreemptNote {
            job: job.id,
            text: format!(
                "cannot preempt: no set of at most {MAX_PREEMPTEES} preemptees frees the resources"
            ),
            retry_at,
        });
        return false;
    }
    // Minimise: give back every victim the preemptor does not need, most
    // valuable first.
    let mut keep: Vec<usize> = Vec::with_capacity(chosen.len());
    if chosen.len() == 1 {
        keep.push(chosen[0]);
    } else {
        for &k in chosen.iter().rev() {
            let c = &cands[k];
            let susp = c.method == PreemptPolicy::Suspend;
            walk.ctx.release(c.job, susp, true);
            if walk.ctx.fit_now(job, dur).is_some() {
                continue;
            }
            walk.ctx.release(c.job, susp, false);
            keep.push(k);
        }
    }
    let Some(alloc) = walk.ctx.fit_now(job, dur) else {
        // Cannot happen (the last check fitted); undo to stay consistent.
        for &k in &keep {
            let c = &cands[k];
            walk.ctx
                .release(c.job, c.method == PreemptPolicy::Suspend, true);
        }
        return false;
    };
    keep.sort_unstable();
    for &k in &keep {
        let c = &cands[k];
        let why = if is_preemptee(c.job, policy) && preemptor {
            format!(
                "preempted by PREEMPTOR job {} (priority {} > {})",
                job.id, my_prio.1, c.key.1
            )
        } else {
            format!(
                "PREEMPT backfill job preempted: job {} reached its reserved slot",
                job.id
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
    walk.start(entries, i, alloc, dur, StartKind::Priority);
    true
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
