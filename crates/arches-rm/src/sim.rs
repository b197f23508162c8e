//! The simulated backend: jobs "run" for a run time the driver tells it in
//! advance (the true run time from a trace), and `observe(now)` reports the
//! completions that are due by `now`.
//!
//! Nothing here reads a clock or sleeps: time is the `now` argument. A job
//! with a wall-clock limit shorter than its true run time is cut at the limit
//! and reported as [`Observation::WalltimeExceeded`]. Completions due at the
//! same instant are reported in the order the jobs were started, which is the
//! order a trace simulator such as pyss handles its termination events.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, HashMap};

use arches_core::{JobId, Node, Secs, Time};

use crate::{Launch, Observation, ResourceManager, RmError};

/// Exit status reported for a job the simulation terminated (SIGTERM).
pub const CANCELLED_EXIT: i32 = 128 + 15;
/// Exit status reported for a job killed at its wall-clock limit (SIGKILL).
pub const WALLTIME_EXIT: i32 = 128 + 9;
/// SIGKILL, SIGTERM: signals that end a simulated job.
const TERMINATING_SIGNALS: [i32; 2] = [9, 15];

/// Hashing of job ids for the backend's tables (one multiplication; ids
/// are never iterated in hash order).
#[derive(Debug, Clone, Copy, Default)]
pub struct IdHash;

impl std::hash::BuildHasher for IdHash {
    type Hasher = IdHasher;
    fn build_hasher(&self) -> IdHasher {
        IdHasher(0)
    }
}

/// The hasher of [`IdHash`].
pub struct IdHasher(u64);

impl std::hash::Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }
    fn write_u64(&mut self, x: u64) {
        self.0 = (self.0.rotate_left(5) ^ x).wrapping_mul(0x517c_c1b7_2722_0a95);
    }
}

/// A simulated resource manager.
#[derive(Debug, Clone)]
pub struct SimRm {
    name: String,
    nodes: Vec<Node>,
    /// True run time of every job the driver announced (looked up by id,
    /// never iterated: hashed).
    runtimes: HashMap<JobId, Secs, IdHash>,
    /// Running jobs (hashed by id; [`SimRm::running`] sorts).
    running: HashMap<JobId, Running, IdHash>,
    /// Suspended jobs: their run so far.
    suspended: BTreeMap<JobId, Segment>,
    /// Pending completions, earliest (end time, start sequence) first. An
    /// entry whose job stopped or was relaunched with another end is stale
    /// ([`SimRm::is_due`] is false): it is dropped when it comes to the
    /// top, and the top is always a live completion ([`SimRm::drop_stale`]).
    due: BinaryHeap<Reverse<(Time, u64, JobId)>>,
    /// How many entries of `due` are stale (one per stop of a running job;
    /// none in a run without preemption or resizing).
    stale: usize,
    /// Observations produced outside the completion queue (cancellations...).
    pending: Vec<Observation>,
    next_seq: u64,
}

#[derive(Debug, Clone, Copy)]
struct Running {
    end: Time,
    seq: u64,
    /// The job is cut at its wall-clock limit.
    killed: bool,
    /// When this run segment began (the start, or the last resume).
    since: Time,
    /// The job's run before this segment.
    run: Segment,
}

/// How long a job runs in total, how much of that it has done, and its
/// wall-clock limit (total run time).
#[derive(Debug, Clone, Copy)]
struct Segment {
    runtime: Secs,
    used: Secs,
    limit: Option<Secs>,
    /// Processors it runs on (a resize scales what is left of its run).
    procs: u32,
}

impl SimRm {
    /// A backend named `name` managing `nodes`.
    pub fn new(name: &str, nodes: Vec<Node>) -> Self {
        SimRm {
            name: name.to_string(),
            nodes,
            runtimes: HashMap::default(),
            running: HashMap::default(),
            suspended: BTreeMap::new(),
            due: BinaryHeap::new(),
            stale: 0,
            pending: Vec::new(),
            next_seq: 0,
        }
    }

    /// Announces a job's true run time (before it starts).
    pub fn set_runtime(&mut self, job: JobId, runtime: Secs) {
        self.runtimes.insert(job, runtime.max(0));
    }

    /// Forgets a finished job's run time (keeps the table small).
    pub fn forget(&mut self, job: JobId) {
        self.runtimes.remove(&job);
    }

    /// Starts `job` now with wall-clock limit `walltime` on `procs`
    /// processors: what [`ResourceManager::start`] does with a launch, which
    /// the simulated backend needs nothing else of (a simulator calls this
    /// directly instead of building launches; the processors scale the rest
    /// of the run when the job is resized).
    pub fn start_job(
        &mut self,
        job: JobId,
        walltime: Option<Secs>,
        procs: u32,
        now: Time,
    ) -> Result<(), RmError> {
        if self.running.contains_key(&job) || self.suspended.contains_key(&job) {
            return Err(RmError::Refused(format!("job {job} is already running")));
        }
        let runtime = *self.runtimes.get(&job).ok_or(RmError::UnknownJob(job))?;
        let run = Segment {
            runtime,
            used: 0,
            limit: walltime,
            procs: procs.max(1),
        };
        self.launch(job, run, None, now);
        Ok(())
    }

    /// When the next completion is due, if any job is running.
    pub fn next_completion(&self) -> Option<Time> {
        self.due.peek().map(|Reverse((t, _, _))| *t)
    }

    /// Whether anything is still to be reported.
    pub fn is_idle(&self) -> bool {
        self.due.is_empty() && self.pending.is_empty()
    }

    /// Whether the job is running or suspended here (a job whose end was
    /// just observed is not, though its driver may not have recorded it yet).
    pub fn has(&self, job: JobId) -> bool {
        self.running.contains_key(&job) || self.suspended.contains_key(&job)
    }

    /// Running jobs and when each will end, by job id.
    pub fn running(&self) -> impl Iterator<Item = (JobId, Time)> + '_ {
        let mut all: Vec<(JobId, Time)> = self.running.iter().map(|(j, r)| (*j, r.end)).collect();
        all.sort_unstable();
        all.into_iter()
    }

    /// Observations waiting outside the completion queue (cancellations,
    /// requeues), taken now without touching due completions.
    pub fn take_pending(&mut self) -> Vec<Observation> {
        std::mem::take(&mut self.pending)
    }

    /// Stops a job without any report and forgets it (a job the driver
    /// removes itself).
    pub fn discard(&mut self, job: JobId) {
        if self.suspended.remove(&job).is_none() {
            let _ = self.stop(job);
        }
        self.runtimes.remove(&job);
    }

    fn stop(&mut self, job: JobId) -> Result<Running, RmError> {
        let r = self.running.remove(&job).ok_or(RmError::UnknownJob(job))?;
        // Its completion entry is stale now.
        self.stale += 1;
        self.drop_stale();
        Ok(r)
    }

    /// Whether the completion entry `(end, seq, job)` is live: the job runs
    /// with that end and start sequence.
    fn is_due(&self, (end, seq, job): (Time, u64, JobId)) -> bool {
        self.running
            .get(&job)
            .is_some_and(|r| r.end == end && r.seq == seq)
    }

    /// Drops stale completion entries from the top of the queue (so that
    /// the top, if any, is a live completion).
    fn drop_stale(&mut self) {
        while self.stale > 0 {
            let Some(&Reverse(top)) = self.due.peek() else {
                break;
            };
            if self.is_due(top) {
                break;
            }
            self.due.pop();
            self.stale -= 1;
        }
    }

    /// [`ResourceManager::observe`] into `out` (appended; a driver keeps
    /// one buffer instead of a new vector per call).
    pub fn observe_into(&mut self, now: Time, out: &mut Vec<Observation>) {
        out.append(&mut self.pending);
        while let Some(&Reverse((end, seq, job))) = self.due.peek() {
            if end > now {
                break;
            }
            self.due.pop();
            // The top is live unless stale entries are left below it (they
            // are dropped as they surface).
            let killed = match self.running.remove(&job) {
                Some(r) if r.end == end && r.seq == seq => r.killed,
                Some(r) => {
                    self.running.insert(job, r);
                    self.stale -= 1;
                    continue;
                }
                None => {
                    self.stale -= 1;
                    continue;
                }
            };
            out.push(if killed {
                Observation::WalltimeExceeded {
                    job,
                    at: end,
                    code: WALLTIME_EXIT,
                }
            } else {
                Observation::Finished {
                    job,
                    at: end,
                    code: 0,
                }
            });
        }
        self.drop_stale();
    }

    /// Runs (or goes on running) a job from `now`; `seq` keeps the order
    /// of an earlier start (`None`: a new start).
    fn launch(&mut self, job: JobId, run: Segment, seq: Option<u64>, now: Time) {
        let left = (run.runtime - run.used).max(0);
        let (length, killed) = match run.limit {
            Some(l) if run.runtime > l => ((l - run.used).max(0), true),
            _ => (left, false),
        };
        let seq = seq.unwrap_or_else(|| {
            self.next_seq += 1;
            self.next_seq - 1
        });
        let end = now + length;
        self.running.insert(
            job,
            Running {
                end,
                seq,
                killed,
                since: now,
                run,
            },
        );
        self.due.push(Reverse((end, seq, job)));
    }

    /// A running job's run so far, at `now`.
    fn so_far(r: &Running, now: Time) -> Segment {
        Segment {
            used: r.run.used + (now - r.since).max(0),
            ..r.run
        }
    }
}

/// A run resized to `procs`: what is left takes `old/new` as long.
fn scaled(run: Segment, procs: u32) -> Segment {
    let left = (run.runtime - run.used).max(0) as u128;
    let left = (left * u128::from(run.procs.max(1))).div_ceil(u128::from(procs.max(1)));
    Segment {
        runtime: run.used + left as Secs,
        procs,
        ..run
    }
}

impl ResourceManager for SimRm {
    fn name(&self) -> &str {
        &self.name
    }

    fn kind(&self) -> &'static str {
        "SIM"
    }

    fn nodes(&mut self) -> Result<Vec<Node>, RmError> {
        Ok(self.nodes.clone())
    }

    fn start(&mut self, launch: &Launch, now: Time) -> Result<(), RmError> {
        let procs = launch.nodes.iter().map(|n| n.procs).sum::<u32>();
        self.start_job(launch.job, launch.walltime, procs, now)
    }

    fn cancel(&mut self, job: JobId, now: Time) -> Result<(), RmError> {
        if self.suspended.remove(&job).is_none() {
            self.stop(job)?;
        }
        self.pending.push(Observation::Finished {
            job,
            at: now,
            code: CANCELLED_EXIT,
        });
        Ok(())
    }

    fn signal(&mut self, job: JobId, signal: i32, now: Time) -> Result<(), RmError> {
        if !self.running.contains_key(&job) && !self.suspended.contains_key(&job) {
            return Err(RmError::UnknownJob(job));
        }
        if TERMINATING_SIGNALS.contains(&signal) {
            self.cancel(job, now)?;
        }
        Ok(())
    }

    fn suspend(&mut self, job: JobId, _signal: Option<i32>, now: Time) -> Result<(), RmError> {
        let r = self.stop(job)?;
        self.suspended.insert(job, Self::so_far(&r, now));
        Ok(())
    }

    fn resume(&mut self, job: JobId, now: Time) -> Result<(), RmError> {
        let run = self
            .suspended
            .remove(&job)
            .ok_or(RmError::UnknownJob(job))?;
        self.launch(job, run, None, now);
        Ok(())
    }

    fn set_walltime(
        &mut self,
        job: JobId,
        walltime: Option<Secs>,
        now: Time,
    ) -> Result<(), RmError> {
        crate::check_walltime(walltime)?;
        if let Some(s) = self.suspended.get_mut(&job) {
            s.limit = walltime;
            return Ok(());
        }
        let r = self.stop(job)?;
        let run = Segment {
            limit: walltime,
            ..Self::so_far(&r, now)
        };
        self.launch(job, run, Some(r.seq), now);
        Ok(())
    }

    /// Ends the job at once (reported as `Requeued`); it starts over.
    fn requeue(&mut self, job: JobId, now: Time) -> Result<(), RmError> {
        if self.suspended.remove(&job).is_none() {
            self.stop(job)?;
        }
        self.pending.push(Observation::Requeued { job, at: now });
        Ok(())
    }

    /// Ends the job at once (reported as `Requeued`) with its progress
    /// saved: started again, it runs only what was left.
    fn checkpoint(
        &mut self,
        job: JobId,
        _signal: i32,
        _timeout: Secs,
        now: Time,
    ) -> Result<(), RmError> {
        // What is left of the true run (the wall-clock limit applies afresh
        // to the restart).
        let run = match self.suspended.remove(&job) {
            Some(run) => run,
            None => {
                let r = self.stop(job)?;
                Self::so_far(&r, now)
            }
        };
        let left = (run.runtime - run.used).max(0);
        self.runtimes.insert(job, left);
        self.pending.push(Observation::Requeued { job, at: now });
        Ok(())
    }

    fn supports_resize(&self) -> bool {
        true
    }

    /// A malleable job's work is conserved (linear speed-up): what is left
    /// of its run shrinks or stretches by its old over its new processors.
    fn resize(
        &mut self,
        job: JobId,
        nodes: &[crate::LaunchNode],
        _signal: Option<i32>,
        now: Time,
    ) -> Result<(), RmError> {
        let procs = nodes.iter().map(|n| n.procs).sum::<u32>().max(1);
        if let Some(s) = self.suspended.get_mut(&job) {
            *s = scaled(*s, procs);
            return Ok(());
        }
        let r = self.stop(job)?;
        let run = scaled(Self::so_far(&r, now), procs);
        self.launch(job, run, Some(r.seq), now);
        Ok(())
    }

    fn observe(&mut self, now: Time) -> Vec<Observation> {
        let mut out = Vec::new();
        self.observe_into(now, &mut out);
        out
    }

    fn recover(&mut self, active: &[JobId], now: Time) -> Result<(), RmError> {
        for &job in active {
            if !self.running.contains_key(&job) && !self.suspended.contains_key(&job) {
                self.pending.push(Observation::Vanished { job, at: now });
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ExecSpec, LaunchNode};

    fn launch(job: JobId, walltime: Option<Secs>) -> Launch {
        Launch {
            job,
            name: format!("job{job}"),
            nodes: vec![LaunchNode {
                name: "n1".into(),
                tasks: 1,
                procs: 1,
                gres: Vec::new(),
            }],
            exec: ExecSpec::default(),
            walltime,
            restarted: false,
        }
    }

    fn rm() -> SimRm {
        SimRm::new("sim", vec![Node::new("n1", 4, 0)])
    }

    #[test]
    fn completions_come_due_in_time_then_start_order() {
        let mut rm = rm();
        for (job, rt) in [(1, 100), (2, 50), (3, 100)] {
            rm.set_runtime(job, rt);
        }
        rm.start(&launch(3, Some(500)), 0).unwrap();
        rm.start(&launch(1, Some(500)), 0).unwrap();
        rm.start(&launch(2, Some(500)), 0).unwrap();
        assert_eq!(rm.next_completion(), Some(50));
        assert!(rm.observe(49).is_empty());
        let at_100 = rm.observe(100);
        let jobs: Vec<JobId> = at_100
            .iter()
            .map(|o| match o {
                Observation::Finished { job, .. } => *job,
                other => panic!("unexpected {other:?}"),
            })
            .collect();
        assert_eq!(jobs, vec![2, 3, 1]);
        assert!(rm.is_idle());
    }

    #[test]
    fn a_resized_job_does_its_remaining_work_faster_or_slower() {
        let mut rm = rm();
        rm.set_runtime(1, 1000);
        rm.start(&launch(1, None), 0).unwrap();
        assert!(rm.supports_resize());
        // Half done at 500 on one processor; on four the rest takes 125.
        let four = [LaunchNode {
            name: "n1".into(),
            tasks: 4,
            procs: 4,
            gres: Vec::new(),
        }];
        rm.resize(1, &four, None, 500).unwrap();
        assert_eq!(rm.next_completion(), Some(625));
        // Back to two at 525: 100 s of four-processor work left, 200 on two.
        let two = [LaunchNode {
            name: "n1".into(),
            tasks: 2,
            procs: 2,
            gres: Vec::new(),
        }];
        rm.resize(1, &two, None, 525).unwrap();
        assert_eq!(rm.next_completion(), Some(725));
        assert_eq!(rm.resize(9, &two, None, 525), Err(RmError::UnknownJob(9)));
    }

    #[test]
    fn walltime_cuts_the_run() {
        let mut rm = rm();
        rm.set_runtime(1, 1000);
        rm.start(&launch(1, Some(300)), 10).unwrap();
        assert_eq!(
            rm.observe(310),
            vec![Observation::WalltimeExceeded {
                job: 1,
                at: 310,
                code: WALLTIME_EXIT
            }]
        );
    }

    #[test]
    fn unknown_runtime_and_double_start_are_refused() {
        let mut rm = rm();
        assert_eq!(rm.start(&launch(7, None), 0), Err(RmError::UnknownJob(7)));
        rm.set_runtime(7, 10);
        rm.start(&launch(7, None), 0).unwrap();
        assert!(matches!(
            rm.start(&launch(7, None), 0),
            Err(RmError::Refused(_))
        ));
    }

    #[test]
    fn suspend_resume_shifts_the_end_and_cancel_reports() {
        let mut rm = rm();
        rm.set_runtime(1, 100);
        rm.start(&launch(1, None), 0).unwrap();
        rm.suspend(1, None, 40).unwrap();
        assert_eq!(rm.next_completion(), None);
        rm.resume(1, 100).unwrap();
        assert_eq!(rm.next_completion(), Some(160));
        rm.cancel(1, 120).unwrap();
        assert_eq!(
            rm.observe(120),
            vec![Observation::Finished {
                job: 1,
                at: 120,
                code: CANCELLED_EXIT
            }]
        );
        assert!(rm.observe(1000).is_empty());
    }

    #[test]
    fn walltime_changes_move_the_end() {
        let mut rm = rm();
        rm.set_runtime(1, 1000);
        rm.start(&launch(1, Some(300)), 0).unwrap();
        // Extended past its run time: it finishes normally.
        rm.set_walltime(1, Some(2000), 100).unwrap();
        assert_eq!(rm.next_completion(), Some(1000));
        // Shortened: cut at the new limit (total run time).
        rm.set_walltime(1, Some(500), 200).unwrap();
        assert_eq!(
            rm.observe(500),
            vec![Observation::WalltimeExceeded {
                job: 1,
                at: 500,
                code: WALLTIME_EXIT
            }]
        );
        // Suspended time does not count; a limit already used up ends it now.
        rm.set_runtime(2, 1000);
        rm.start(&launch(2, Some(300)), 0).unwrap();
        rm.suspend(2, None, 100).unwrap();
        rm.set_walltime(2, Some(150), 400).unwrap();
        rm.resume(2, 500).unwrap();
        assert_eq!(rm.next_completion(), Some(550));
        rm.set_walltime(2, Some(120), 530).unwrap();
        assert_eq!(
            rm.observe(530),
            vec![Observation::WalltimeExceeded {
                job: 2,
                at: 530,
                code: WALLTIME_EXIT
            }]
        );
        assert_eq!(rm.set_walltime(3, Some(10), 0), Err(RmError::UnknownJob(3)));
        assert!(rm.set_walltime(1, Some(0), 0).is_err());
    }

    #[test]
    fn recover_reports_unknown_jobs_vanished() {
        let mut rm = rm();
        rm.recover(&[5], 9).unwrap();
        assert_eq!(rm.observe(9), vec![Observation::Vanished { job: 5, at: 9 }]);
    }
}
