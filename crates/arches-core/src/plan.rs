//! What one scheduling iteration decided: starts, reservations and, for every
//! queued job, its priority breakdown and why it did not start. Decisions are
//! data and carry their reasons; commands print exactly what the scheduler
//! used.

use std::fmt;

use crate::job::{Alloc, Dependency, HoldType, JobId, StartKind};
use crate::policy::PolicyLevel;
use crate::Time;

/// A job to start now, on exactly these resources.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Start {
    pub job: JobId,
    pub alloc: Vec<Alloc>,
    pub kind: StartKind,
    /// Backfilled on its scaled wall-clock limit
    /// (`BFVIRTUALWALLTIMESCALINGFACTOR`): the driver records it right after
    /// the start (`JobChange::VirtualWalltime`).
    pub virtual_walltime: Option<crate::Secs>,
}

/// A priority reservation: where and when a queued job is guaranteed to start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlannedReservation {
    pub job: JobId,
    pub start: Time,
    /// `None` when the job has no wall-clock limit.
    pub end: Option<Time>,
    pub alloc: Vec<Alloc>,
}

/// One priority component's contribution (for `mdiag -p` and `checkjob -v`).
#[derive(Debug, Clone, PartialEq)]
pub struct PriorityComponent {
    /// Moab's column name, e.g. `Serv`, `Cred`.
    pub component: &'static str,
    /// Subcomponent name, e.g. `QTime`, `QOS`.
    pub sub: &'static str,
    /// The raw factor value (minutes queued, QoS priority, ...).
    pub value: f64,
    /// Component weight × subcomponent weight × value.
    pub contribution: f64,
}

/// How a job's priority was computed.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PriorityBreakdown {
    /// The start priority used to order the queue.
    pub total: i64,
    /// Whether an administrator system priority overrides the computed value.
    pub system: bool,
    pub components: Vec<PriorityComponent>,
    /// The job's guaranteed deadline ([`crate::deadline::guaranteed`]):
    /// such jobs are ordered before all others without a system priority,
    /// earliest deadline first.
    pub deadline: Option<crate::Time>,
}

/// A throttling limit a job would exceed ([`BlockReason::Policy`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PolicyBlock {
    pub level: PolicyLevel,
    /// `MAXJOB`, `MAXPROC`, ...
    pub limit: &'static str,
    /// `user`, `group`, `account`, `class`, `qos`.
    pub cred_kind: &'static str,
    pub cred: String,
    pub max: u64,
    pub requested: u64,
    pub in_use: u64,
}

/// Why a queued job did not start this iteration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BlockReason {
    /// Holds are in place.
    Hold(Vec<HoldType>),
    /// `msub -a` start date not reached.
    StartDate(Time),
    /// A dependency is not satisfied.
    Dependency(Dependency),
    /// A dependency can never be satisfied (the job it waits for ended the wrong way).
    DependencyFailed(Dependency),
    /// A throttling limit would be exceeded (boxed: the largest reason,
    /// and every queued job's decision holds one reason).
    Policy(Box<PolicyBlock>),
    /// Not enough free resources now; waiting (possibly with a reservation).
    Resources { idle_procs: u32, needed_procs: u32 },
    /// The request can never be satisfied by the configured nodes.
    NeverFits(String),
    /// Behind a reservation with no computable start because a job it waits
    /// for has no wall-clock limit (the LSF rule).
    NoWalltimeAhead,
    /// Not considered: beyond `BACKFILLDEPTH`.
    BackfillDepth,
    /// Its QoS forbids backfill (`NOBF`) and it is not the top job.
    NoBackfill,
    /// It has no wall-clock limit and so can never backfill.
    NoWalltime,
    /// Backfill chunking protects the free resources for larger jobs
    /// (`BFCHUNKSIZE` processors or more) until `until`.
    Chunking { size: u32, until: Time },
    /// Starting it would delay a higher-priority reservation.
    WouldDelayReservation(JobId),
    /// No backfill while a higher-priority job waits, with no computable
    /// start, for a job without a wall-clock limit (LSF: "cannot backfill if
    /// the big job is waiting for a job that has no run limit").
    WaitsBehindNoWalltime(JobId),
    /// An administrative or standing reservation it is not on the access
    /// list of holds the processors it would need (the reservation's id).
    ReservationConflict(String),
    /// Waiting for its stage-in data: until it is confirmed (`None`), or
    /// until the estimated data-ready time (TIGHT; compute is reserved from
    /// then on).
    DataStaging(Option<Time>),
    /// A preemptor waiting for the jobs it preempted (checkpointed or
    /// requeued) to terminate; their resources are held for it.
    Preempting(Vec<JobId>),
    /// A credential's fairshare usage with the job would exceed its
    /// fairshare cap (`FSTARGET=N%` or `N^`, [`crate::fairshare`]): the
    /// message.
    FairshareCap(String),
}

impl BlockReason {
    /// The reason as the commands print it at `now`: Moab's wording, times
    /// as durations from `now` in Moab's format (`has not reached its start
    /// date (1:00:00 to startdate)`), never raw epochs.
    pub fn message(&self, now: Time) -> String {
        let rel = |t: Time| crate::timespec::format_duration(t - now);
        match self {
            BlockReason::StartDate(t) => {
                format!("job has not reached its start date ({} to startdate)", rel(*t))
            }
            BlockReason::DataStaging(Some(t)) => format!(
                "job is waiting for stage-in data (expected ready in {})",
                rel(*t)
            ),
            BlockReason::Chunking { size, until } => format!(
                "job may be blocked by backfill chunking (freed procs held for jobs of {size} procs or more for {})",
                rel(*until)
            ),
            other => other.to_string(),
        }
    }

    /// When time alone lifts the block (a start date, a chunking window,
    /// data expected ready), for renderers that print dates.
    pub fn until(&self) -> Option<Time> {
        match self {
            BlockReason::StartDate(t)
            | BlockReason::DataStaging(Some(t))
            | BlockReason::Chunking { until: t, .. } => Some(*t),
            _ => None,
        }
    }
}

/// Without a time of reference: the timed reasons print their time as an
/// epoch; the commands use [`BlockReason::message`].
impl fmt::Display for BlockReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BlockReason::Hold(h) => {
                let names: Vec<&str> = h.iter().map(|h| h.as_str()).collect();
                write!(f, "job has hold in place ({})", names.join(","))
            }
            BlockReason::StartDate(t) => write!(f, "start date not reached ({t})"),
            BlockReason::Dependency(d) => {
                write!(f, "dependency is not met ({}:{})", d.kind.as_str(), d.job)
            }
            BlockReason::DependencyFailed(d) => write!(
                f,
                "dependency cannot be met ({}:{} ended otherwise)",
                d.kind.as_str(),
                d.job
            ),
            BlockReason::Policy(p) => write!(
                f,
                "job violates active {} {} limit of {} for {} {}  (Req: {}  InUse: {})",
                p.level.as_str(),
                p.limit,
                p.max,
                p.cred_kind,
                p.cred,
                p.requested,
                p.in_use
            ),
            BlockReason::Resources { idle_procs, needed_procs } => write!(
                f,
                "insufficient idle procs available: {idle_procs} < {needed_procs}"
            ),
            BlockReason::NeverFits(why) => write!(f, "job cannot run in any partition ({why})"),
            BlockReason::NoWalltimeAhead => f.write_str(
                "start time cannot be computed: a job ahead of it has no wall-clock limit",
            ),
            BlockReason::BackfillDepth => f.write_str("not considered for backfill (BACKFILLDEPTH)"),
            BlockReason::NoBackfill => f.write_str("QOS does not allow backfill (NOBF)"),
            BlockReason::NoWalltime => f.write_str("job has no wall-clock limit and cannot backfill"),
            BlockReason::Chunking { size, until } => write!(
                f,
                "job may be blocked by backfill chunking (jobs smaller than {size} procs until {until})"
            ),
            BlockReason::WouldDelayReservation(j) => {
                write!(f, "would delay the reservation of job {j}")
            }
            BlockReason::WaitsBehindNoWalltime(j) => write!(
                f,
                "cannot backfill: job {j} waits for a job without a wall-clock limit and its start cannot be computed"
            ),
            BlockReason::ReservationConflict(r) => {
                write!(f, "reservation conflict (resources reserved by {r})")
            }
            BlockReason::DataStaging(None) => f.write_str("job is waiting for stage-in data"),
            BlockReason::DataStaging(Some(_)) => f.write_str(
                "job is waiting for stage-in data (data-ready time estimated)",
            ),
            BlockReason::FairshareCap(m) => f.write_str(m),
            BlockReason::Preempting(jobs) => {
                let ids: Vec<String> = jobs.iter().map(|j| j.to_string()).collect();
                write!(
                    f,
                    "waiting for preempted job(s) {} to terminate (resources held)",
                    ids.join(",")
                )
            }
        }
    }
}

/// Everything the iteration concluded about one queued job.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Decision {
    pub priority: PriorityBreakdown,
    /// Rank in the priority-ordered queue (1 = first), Moab's IterationJobRank.
    pub rank: u32,
    /// Why it did not start (absent for jobs that started).
    pub reason: Option<BlockReason>,
    /// Whether the job is eligible (no hold, dependency or policy blocks it):
    /// showq lists eligible jobs apart from blocked ones.
    pub eligible: bool,
}

/// The output of one scheduling iteration.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Plan {
    pub now: Time,
    pub starts: Vec<Start>,
    pub reservations: Vec<PlannedReservation>,
    pub decisions: Decisions,
    /// When time alone will next change a decision (a reservation starts, a
    /// start date arrives, a chunking window closes).
    pub next_wakeup: Option<Time>,
    /// Running jobs to preempt before the starts are applied
    /// ([`crate::preempt`]).
    pub preemptions: Vec<crate::preempt::Preemption>,
    /// Suspended jobs to resume (before the starts).
    pub resumes: Vec<JobId>,
    /// Why blocked preemptors did not preempt.
    pub preempt_notes: Vec<crate::preempt::PreemptNote>,
    /// Resources to lock for preemptors (applied after the preemptions,
    /// before the starts).
    pub locks: Vec<crate::preempt::PreemptorLock>,
    /// Running jobs whose virtual wall-clock limit expired: from this plan
    /// on they are planned with their real limit, and the driver clears the
    /// virtual one (`JobChange::VirtualWalltime(None)`). Under
    /// `BFVIRTUALWALLTIMECONFLICTPOLICY PREEMPT` a job whose real limit
    /// would overlap a reservation is requeued instead (in `preemptions`).
    pub restore_walltime: Vec<JobId>,
    /// Running malleable and resizable jobs to grow, and why the others
    /// did not ([`crate::malleable`]).
    pub elastic: crate::malleable::ElasticPlan,
    /// The fairshare usage the priorities were computed with (when
    /// [`crate::fairshare::active`]), for the views that compute the
    /// priority of running jobs.
    pub fairshare: Option<std::sync::Arc<crate::fairshare::FsUsage>>,
    /// Guaranteed deadlines of queued jobs this plan cannot meet
    /// ([`crate::deadline::misses`]); the driver applies `DEADLINEPOLICY`
    /// ([`crate::deadline::action`]).
    pub deadline_misses: Vec<crate::deadline::Miss>,
}

/// Every queued job's [`Decision`], ordered by job id: a sorted vector,
/// built in one pass per iteration and searched by id (a map rebuilt on
/// every iteration cost a third of an FCFS simulation).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Decisions(Vec<(JobId, Decision)>);

impl Decisions {
    /// The decision about `job`.
    pub fn get(&self, job: &JobId) -> Option<&Decision> {
        self.0
            .binary_search_by_key(job, |d| d.0)
            .ok()
            .map(|i| &self.0[i].1)
    }

    /// Decisions by ascending job id.
    pub fn iter(&self) -> impl Iterator<Item = (&JobId, &Decision)> {
        self.0.iter().map(|(id, d)| (id, d))
    }

    /// Decisions by ascending job id, without the ids.
    pub fn values(&self) -> impl Iterator<Item = &Decision> {
        self.0.iter().map(|d| &d.1)
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// The decisions by ascending job id, taken out.
    pub(crate) fn into_vec(self) -> Vec<(JobId, Decision)> {
        self.0
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// Collects decisions in any order (linear for input already sorted by id);
/// like a map, the last decision given for an id wins.
impl FromIterator<(JobId, Decision)> for Decisions {
    fn from_iter<I: IntoIterator<Item = (JobId, Decision)>>(iter: I) -> Self {
        let mut v: Vec<(JobId, Decision)> = iter.into_iter().collect();
        v.sort_by_key(|d| d.0);
        // `dedup_by` keeps the earlier element: swap the later one in.
        v.dedup_by(|later, kept| {
            let same = later.0 == kept.0;
            if same {
                std::mem::swap(later, kept);
            }
            same
        });
        Decisions(v)
    }
}

impl Plan {
    /// Whether applying this plan changes more than the reservations: it
    /// starts, preempts, resumes, locks, grows or restores a limit, or
    /// reports a missed deadline ([`crate::quiet`] answers when none can).
    pub fn acts(&self) -> bool {
        !(self.starts.is_empty()
            && self.preemptions.is_empty()
            && self.resumes.is_empty()
            && self.locks.is_empty()
            && self.restore_walltime.is_empty()
            && self.elastic.grows.is_empty()
            && self.deadline_misses.is_empty())
    }

    /// The preemption of a job by this plan, if any.
    pub fn preemption(&self, job: JobId) -> Option<&crate::preempt::Preemption> {
        self.preemptions.iter().find(|p| p.job == job)
    }

    /// Why a preemptor did not preempt in this plan, if it tried.
    pub fn preempt_note(&self, job: JobId) -> Option<&crate::preempt::PreemptNote> {
        self.preempt_notes.iter().find(|n| n.job == job)
    }

    /// The reservation of a job, if it has one.
    pub fn reservation(&self, job: JobId) -> Option<&PlannedReservation> {
        self.reservations.iter().find(|r| r.job == job)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(rank: u32) -> Decision {
        Decision {
            priority: PriorityBreakdown::default(),
            rank,
            reason: None,
            eligible: true,
        }
    }

    #[test]
    fn decisions_sort_by_id_and_the_last_one_wins() {
        let ds: Decisions = [(7, d(1)), (3, d(2)), (7, d(3)), (5, d(4))]
            .into_iter()
            .collect();
        let ids: Vec<JobId> = ds.iter().map(|(id, _)| *id).collect();
        assert_eq!(ids, vec![3, 5, 7]);
        assert_eq!(ds.get(&7).map(|d| d.rank), Some(3));
        assert_eq!(ds.get(&5).map(|d| d.rank), Some(4));
        assert!(ds.get(&4).is_none());
        assert_eq!(ds.len(), 3);
        assert!(Decisions::default().is_empty());
    }

    #[test]
    fn messages_give_times_as_moab_durations_from_now() {
        let now = 1_795_620_300;
        let r = BlockReason::StartDate(now + 3600);
        assert_eq!(
            r.message(now),
            "job has not reached its start date (1:00:00 to startdate)"
        );
        assert_eq!(r.until(), Some(now + 3600));
        let c = BlockReason::Chunking {
            size: 4,
            until: now + 50,
        };
        assert!(
            c.message(now).ends_with("for 00:00:50)"),
            "{}",
            c.message(now)
        );
        let res = BlockReason::Resources {
            idle_procs: 0,
            needed_procs: 4,
        };
        assert_eq!(res.message(now), "insufficient idle procs available: 0 < 4");
    }
}
