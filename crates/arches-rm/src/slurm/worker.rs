//! The Slurm worker thread: every Slurm call happens here, in request order.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender};
use std::time::{Duration, Instant};

use arches_core::{JobId, Node, NodeAdminState, Secs, Time};

use super::json::{self, decode_wait_status, Phase, SlurmJob};
use super::{output, unreachable, SlurmConfig};
use crate::{Launch, Observation};

/// What the trait methods hand to the worker.
pub(crate) enum Request {
    Start(Box<Launch>),
    Cancel(JobId),
    Signal(JobId, i32),
    Suspend(JobId, Option<i32>),
    Resume(JobId),
    Requeue(JobId),
    Checkpoint(JobId, i32, Secs),
    SetWalltime(JobId, Option<Secs>),
    Recover(Vec<JobId>),
}

/// While requests keep arriving, a poll waits this long past its time.
const STORM_POLL_DELAY: Duration = Duration::from_secs(4);
/// Releases are sent in groups of at most this many job ids.
const RELEASE_BATCH: usize = 64;
/// slurmd drops a signal that arrives while it is still resuming the job
/// (seen with 22.05: `scancel --signal` 0.3 s after `scontrol resume` was
/// lost, 2 s after it arrived): signals wait this long after a resume.
const RESUME_SETTLE: Duration = Duration::from_secs(2);
/// A submitted job missing from `squeue` this long is looked up in the
/// completion log, then reported vanished.
const MISSING_GRACE: Duration = Duration::from_secs(30);
/// A completion-log entry that ended this long before our submit is another
/// job's (Slurm job ids start again after its state is wiped).
const CLOCK_SLACK: Time = 60;
/// The file in a job's spool directory that records its Slurm job: `<slurm
/// job id> <submit time>`. It outlives a daemon restart, so a job Slurm no
/// longer lists can still be looked up in the completion log.
pub(crate) const RECORD: &str = "slurm-job";

/// One Arches job's current Slurm job.
struct Track {
    slurm: u64,
    nodes: Vec<String>,
    /// When it was submitted (epoch seconds).
    submitted_at: Time,
    /// When it was released to run (`None` while we hold it).
    released: Option<Instant>,
    /// Seen running or suspended in Slurm.
    started: bool,
    /// Arches has it suspended (until a resume): suspended in Slurm once it
    /// runs, held while it has not started yet.
    suspended: bool,
    cancelled: bool,
    /// When it was last resumed (see [`RESUME_SETTLE`]).
    resumed: Option<Instant>,
    /// The core reservation that pins an uneven layout, until the job runs.
    reservation: Option<String>,
    /// Since when `squeue` no longer lists it.
    missing: Option<Instant>,
    /// Reported as not started `timeout` after its release.
    overdue: bool,
    /// Terminated for a requeue or checkpoint: its end is reported as
    /// [`Observation::Requeued`].
    requeue: bool,
    /// A checkpointed job is cancelled at this deadline if still there.
    kill_at: Option<Instant>,
    /// The wall-clock limit Slurm enforces (seconds as Arches asked;
    /// Slurm rounds it up to minutes).
    limit: Option<Secs>,
}

/// A start waiting for slurmctld to answer again.
struct Deferred {
    launch: Box<Launch>,
    nonce: String,
    first_try: Instant,
}

pub(crate) struct Worker {
    cfg: SlurmConfig,
    out: Sender<Observation>,
    jobs: BTreeMap<JobId, Track>,
    deferred: Vec<Deferred>,
    to_release: Vec<u64>,
    /// The nodes as last reported by `sinfo`, with their threads per core,
    /// and their order in Slurm (core counts of a reservation follow it).
    nodes: BTreeMap<String, Node>,
    threads: HashMap<String, u32>,
    order: Vec<String>,
    /// Since when slurmctld does not answer: starts wait (no `sbatch`),
    /// polls only probe with `scontrol ping`.
    down: Option<Instant>,
    /// The active jobs of a recovery that could not reach Slurm yet:
    /// retried at every poll until it does.
    recovery: Option<Vec<JobId>>,
    /// Cancels asked for jobs of the pending recovery.
    cancel_after_recovery: BTreeSet<JobId>,
    /// Slurm jobs to cancel, and reservations to drop, once slurmctld answers.
    cancels: Vec<u64>,
    stale_reservations: Vec<String>,
    seq: u64,
}

impl Worker {
    pub(crate) fn new(cfg: SlurmConfig, out: Sender<Observation>) -> Worker {
        Worker {
            cfg,
            out,
            jobs: BTreeMap::new(),
            deferred: Vec::new(),
            to_release: Vec::new(),
            nodes: BTreeMap::new(),
            threads: HashMap::new(),
            order: Vec::new(),
            down: None,
            recovery: None,
            cancel_after_recovery: BTreeSet::new(),
            cancels: Vec::new(),
            stale_reservations: Vec::new(),
            seq: 0,
        }
    }

    pub(crate) fn run(mut self, rx: Receiver<Request>) {
        let mut next_poll = Instant::now();
        loop {
            let wait = next_poll.saturating_duration_since(Instant::now());
            match rx.recv_timeout(wait) {
                Ok(first) => {
                    self.handle(first);
                    while let Ok(more) = rx.try_recv() {
                        self.handle(more);
                        if self.to_release.len() >= RELEASE_BATCH {
                            self.release();
                        }
                        // A storm of starts (one `sbatch` each) does not
                        // stop the polls: what runs and what ended is
                        // still reported meanwhile, every few seconds (a
                        // poll with 1,000 jobs takes 0.1-0.5 s; polling at
                        // the normal pace halved the starts per second).
                        if Instant::now() >= next_poll + STORM_POLL_DELAY {
                            self.release();
                            next_poll = self.timed_poll();
                        }
                    }
                    self.release();
                }
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => {
                    self.release();
                    return;
                }
            }
            if Instant::now() >= next_poll {
                next_poll = self.timed_poll();
            }
        }
    }

    /// One poll; when the next one is due.
    fn timed_poll(&mut self) -> Instant {
        let t = Instant::now();
        let answered = self.poll();
        tracing::debug!(
            ms = t.elapsed().as_secs_f64() * 1000.0,
            jobs = self.jobs.len(),
            answered,
            "Slurm poll"
        );
        // A slow slurmctld is polled less often (at most a third of the
        // time); a poll that failed says nothing about its speed.
        let pace = if answered {
            self.cfg.poll_interval.max(2 * t.elapsed())
        } else {
            self.cfg.poll_interval
        };
        Instant::now() + pace
    }

    fn emit(&self, o: Observation) {
        let _ = self.out.send(o);
    }

    fn failed(&self, job: JobId, operation: &'static str, message: String) {
        tracing::warn!(job, operation, "{message}");
        self.emit(Observation::OperationFailed {
            job,
            at: now(),
            operation,
            message,
        });
    }

    /// A Slurm command; an unreachable slurmctld is remembered.
    fn call(&mut self, program: &str, args: &[&str]) -> Result<String, String> {
        let r = self.cfg.run(program, args);
        if let Err(e) = &r {
            if unreachable(e) {
                self.went_down(e);
            }
        }
        r
    }

    fn went_down(&mut self, why: &str) {
        if self.down.is_none() {
            tracing::warn!(
                "slurmctld does not answer ({why}): starts wait, polls probe with `scontrol ping`"
            );
            self.down = Some(Instant::now());
        }
    }

    /// `scontrol ping` (milliseconds, where a failing `squeue` or `sbatch`
    /// takes about 9 s): whether slurmctld answers.
    fn ping(&mut self) -> bool {
        let up = self
            .cfg
            .command("scontrol")
            .arg("ping")
            .output()
            .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains(" is UP"));
        if up {
            if let Some(since) = self.down.take() {
                tracing::info!(
                    "slurmctld answers again after {:.1} s",
                    since.elapsed().as_secs_f64()
                );
                // Jobs released before the outage get their full time to
                // start now that Slurm schedules again.
                let at = Instant::now();
                for t in self.jobs.values_mut().filter(|t| !t.started) {
                    if t.released.is_some() {
                        t.released = Some(at);
                    }
                }
            }
        } else {
            self.went_down("scontrol ping: not UP");
        }
        up
    }

    fn handle(&mut self, request: Request) {
        match request {
            Request::Start(launch) => {
                self.seq += 1;
                let nonce = format!("{}.{}", now(), self.seq);
                self.submit(launch, nonce, Instant::now());
            }
            Request::Cancel(job) => self.cancel(job),
            Request::Signal(job, sig) => {
                self.scancel_signal(job, sig, "signal");
            }
            Request::Suspend(job, sig) => self.suspend(job, sig),
            Request::Resume(job) => self.resume(job),
            Request::Requeue(job) => self.terminate_for_requeue(job, None),
            Request::Checkpoint(job, sig, timeout) => {
                self.scancel_signal(job, sig, "checkpoint");
                let deadline = Instant::now() + Duration::from_secs(timeout.max(0) as u64);
                self.terminate_for_requeue(job, Some(deadline));
            }
            Request::SetWalltime(job, walltime) => self.set_walltime(job, walltime),
            Request::Recover(active) => {
                self.recovery = Some(active);
                if !self.try_recover() {
                    tracing::warn!(
                        "Slurm does not answer: the recovery of the active jobs is retried at every poll"
                    );
                }
            }
        }
    }

    fn cancel(&mut self, job: JobId) {
        if let Some(i) = self.deferred.iter().position(|d| d.launch.job == job) {
            self.deferred.remove(i);
            let _ = fs::remove_dir_all(self.job_dir(job));
            self.emit(Observation::Finished {
                job,
                at: now(),
                code: 128 + libc::SIGTERM,
            });
            return;
        }
        let Some(t) = self.jobs.get_mut(&job) else {
            if self.recovery.as_ref().is_some_and(|a| a.contains(&job)) {
                // Cancelled once the recovery has found its Slurm job.
                self.cancel_after_recovery.insert(job);
                return;
            }
            return self.failed(job, "cancel", format!("job {job} is not in Slurm"));
        };
        t.cancelled = true;
        let id = t.slurm;
        if let Err(e) = self.scancel(id) {
            self.failed(job, "cancel", e);
        }
    }

    /// `scancel ID`, or later when slurmctld does not answer (the cancel is
    /// not lost: it is sent as soon as it answers again).
    fn scancel(&mut self, id: u64) -> Result<(), String> {
        if self.down.is_some() {
            self.cancels.push(id);
            return Ok(());
        }
        match self.call("scancel", &[&id.to_string()]) {
            Ok(_) => Ok(()),
            Err(e) if unreachable(&e) => {
                self.cancels.push(id);
                Ok(())
            }
            Err(e) => Err(e),
        }
    }

    /// `scontrol update JobId=ID TimeLimit=<minutes, rounded up>`; a
    /// failure reports the limit still in force.
    fn set_walltime(&mut self, job: JobId, walltime: Option<Secs>) {
        let Some(t) = self.jobs.get(&job) else {
            return self.failed(job, "set walltime", format!("job {job} is not in Slurm"));
        };
        let id = format!("JobId={}", t.slurm);
        let limit = format!("TimeLimit={}", slurm_minutes(walltime));
        match self.cfg.run("scontrol", &["update", &id, &limit]) {
            Ok(_) => {
                if let Some(t) = self.jobs.get_mut(&job) {
                    t.limit = walltime;
                }
            }
            Err(message) => {
                tracing::warn!(job, "set walltime: {message}");
                self.emit(Observation::WalltimeRefused {
                    job,
                    at: now(),
                    walltime: t.limit,
                    message,
                });
            }
        }
    }

    /// `scancel --full --signal=SIG`; whether it worked.
    fn scancel_signal(&mut self, job: JobId, sig: i32, operation: &'static str) -> bool {
        let Some(t) = self.jobs.get(&job) else {
            self.failed(job, operation, format!("job {job} is not in Slurm"));
            return false;
        };
        if self.down.is_some() {
            self.failed(job, operation, "slurmctld does not answer".into());
            return false;
        }
        if let Some(wait) = t
            .resumed
            .map(|r| RESUME_SETTLE.saturating_sub(r.elapsed()))
            .filter(|w| !w.is_zero())
        {
            std::thread::sleep(wait);
        }
        let id = t.slurm.to_string();
        let arg = format!("--signal={sig}");
        match self.call("scancel", &["--full", &arg, &id]) {
            Ok(_) => true,
            Err(e) => {
                self.failed(job, operation, e);
                false
            }
        }
    }

    /// Suspend: `scontrol suspend`, which stops the processes and gives the
    /// CPUs back to Slurm, so the job that preempts it can start there. A
    /// `SUSPENDSIG` other than STOP is sent first (`scancel --full`), for
    /// jobs that trap it; a job only signalled would keep its CPUs in Slurm
    /// and the preemptor would wait. The way back is the same for both:
    /// `scontrol resume` (CONT), so nothing about how a job was suspended
    /// needs to outlive a restart. A job not yet running in Slurm is held
    /// (`scontrol hold`) instead, and released by the resume; one that
    /// starts in Slurm before the hold takes is suspended by the next poll.
    fn suspend(&mut self, job: JobId, sig: Option<i32>) {
        let Some(t) = self.jobs.get(&job) else {
            return self.failed(job, "suspend", format!("job {job} is not in Slurm"));
        };
        if self.down.is_some() {
            return self.failed(job, "suspend", "slurmctld does not answer".into());
        }
        let (slurm, mut started) = (t.slurm, t.started);
        if !started {
            // Released moments ago: has Slurm run it since the last poll?
            if let Some(at) = self.running_since(slurm) {
                started = true;
                self.emit(Observation::Running { job, at });
            }
        }
        if let Some(t) = self.jobs.get_mut(&job) {
            t.suspended = true;
            t.started = started;
            if !started {
                t.released = None;
            }
        }
        let id = slurm.to_string();
        if !started {
            if let Err(e) = self.call("scontrol", &["hold", &id]) {
                self.failed(job, "suspend", e);
            }
            return;
        }
        if let Some(s) = sig.filter(|s| *s != libc::SIGSTOP) {
            self.scancel_signal(job, s, "suspend");
        }
        if let Err(e) = self.call("scontrol", &["suspend", &id]) {
            self.failed(job, "suspend", e);
        }
    }

    /// When Slurm job `slurm` started, if it runs (or is suspended) now.
    fn running_since(&mut self, slurm: u64) -> Option<Time> {
        let id = slurm.to_string();
        let mut cmd = self.cfg.command("squeue");
        cmd.env("SLURM_TIME_FORMAT", "%s").args([
            "-h",
            "-t",
            "all",
            "-j",
            &id,
            "-o",
            json::SQUEUE_FORMAT,
        ]);
        let text = output(&mut cmd, "squeue").ok()?;
        let j = json::parse_jobs_text(&text)
            .into_iter()
            .find(|j| j.job_id == slurm)?;
        matches!(j.phase(), Phase::Running | Phase::Suspended)
            .then(|| j.start_time.filter(|s| *s > 0).unwrap_or_else(now))
    }

    fn resume(&mut self, job: JobId) {
        let Some(t) = self.jobs.get(&job) else {
            return self.failed(job, "resume", format!("job {job} is not in Slurm"));
        };
        if self.down.is_some() {
            return self.failed(job, "resume", "slurmctld does not answer".into());
        }
        let (id, started) = (t.slurm.to_string(), t.started);
        let what = if started { "resume" } else { "release" };
        match self.call("scontrol", &[what, &id]) {
            Ok(_) => {
                if let Some(t) = self.jobs.get_mut(&job) {
                    t.suspended = false;
                    if started {
                        t.resumed = Some(Instant::now());
                    } else {
                        t.released = Some(Instant::now());
                    }
                }
            }
            Err(e) => self.failed(job, "resume", e),
        }
    }

    /// Terminates the launch for a requeue: its Slurm job is cancelled now,
    /// or at `deadline` after a checkpoint signal (unless it ends first);
    /// once Slurm reports it ended, it is reported as `Requeued`.
    fn terminate_for_requeue(&mut self, job: JobId, deadline: Option<Instant>) {
        if let Some(i) = self.deferred.iter().position(|d| d.launch.job == job) {
            // Never reached Slurm.
            self.deferred.remove(i);
            return self.emit(Observation::Requeued { job, at: now() });
        }
        let Some(t) = self.jobs.get_mut(&job) else {
            // Nothing of it runs in Slurm: it has ended as far as we know.
            tracing::warn!(job, "requeue of a job that is not in Slurm");
            return self.emit(Observation::Requeued { job, at: now() });
        };
        t.requeue = true;
        t.kill_at = deadline;
        // Its core reservation (if any) ends with it.
        let id = t.slurm;
        if deadline.is_none() {
            if let Err(e) = self.scancel(id) {
                tracing::warn!(job, "requeue: {e}");
            }
        }
    }

    fn job_dir(&self, job: JobId) -> PathBuf {
        self.cfg.spool_dir.join(job.to_string())
    }

    fn tag(&self, job: JobId, nonce: &str) -> String {
        format!("arches:{}:{job}:{nonce}", self.cfg.tag)
    }

    /// Whose Slurm job this is: `(arches job, nonce)` if the comment carries our tag.
    fn parse_tag<'a>(&self, comment: &'a str) -> Option<(JobId, &'a str)> {
        let rest = comment.strip_prefix("arches:")?;
        let rest = rest.strip_prefix(self.cfg.tag.as_str())?;
        let (job, nonce) = rest.strip_prefix(':')?.split_once(':')?;
        Some((job.parse().ok()?, nonce))
    }

    /// The prefix of our core reservations' names (Slurm names allow
    /// letters, digits, `.`, `_` and `-`).
    fn reservation_prefix(&self) -> String {
        let tag: String = self
            .cfg
            .tag
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        format!("arches.{tag}.")
    }

    /// Records the Slurm job of a launch in its spool directory.
    fn write_record(&self, job: JobId, slurm: u64, submitted_at: Time) {
        let path = self.job_dir(job).join(RECORD);
        if let Err(e) = fs::write(&path, format!("{slurm} {submitted_at}\n")) {
            tracing::warn!(job, "cannot write {}: {e}", path.display());
        }
    }

    /// The Slurm job recorded for a launch: `Ok(None)` when there is none
    /// (or it is malformed), `Err` when the file could not be read (the
    /// recovery is retried rather than taking the job for vanished).
    fn read_record(&self, job: JobId) -> Result<Option<(u64, Time)>, String> {
        let path = self.job_dir(job).join(RECORD);
        let text = match fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
        };
        let mut f = text.split_whitespace();
        let mut field = || f.next().and_then(|w| w.parse().ok());
        Ok(field().zip(field().map(|t: u64| t as Time)))
    }

    /// Submits one launch held and queues its release; while slurmctld does
    /// not answer the launch waits (no `sbatch` that would take 9 s to fail).
    fn submit(&mut self, launch: Box<Launch>, nonce: String, first_try: Instant) {
        let job = launch.job;
        if self.jobs.contains_key(&job) {
            self.emit(Observation::StartFailed {
                job,
                at: now(),
                message: format!("job {job} is already running in Slurm"),
            });
            return;
        }
        if self.down.is_none() && self.nodes.is_empty() {
            // The exclude list needs every node's name.
            self.poll_nodes();
        }
        if self.down.is_some() {
            return self.defer(launch, nonce, first_try);
        }
        let tag = self.tag(job, &nonce);
        let (layout_args, exact) = layout(&launch);
        let reservation = if exact {
            None
        } else {
            self.core_reservation(&launch, &nonce)
        };
        match self.sbatch(&launch, &tag, layout_args, reservation.as_deref()) {
            Ok(slurm) => {
                tracing::debug!(job, slurm, "submitted to Slurm");
                let submitted_at = now();
                self.write_record(job, slurm, submitted_at);
                self.to_release.push(slurm);
                self.jobs.insert(
                    job,
                    Track {
                        slurm,
                        nodes: launch.nodes.iter().map(|n| n.name.clone()).collect(),
                        submitted_at,
                        released: None,
                        started: false,
                        suspended: false,
                        cancelled: false,
                        resumed: None,
                        reservation,
                        missing: None,
                        overdue: false,
                        requeue: false,
                        kill_at: None,
                        limit: launch.walltime.filter(|w| *w > 0),
                    },
                );
            }
            Err(e) if unreachable(&e) => {
                self.went_down(&e);
                if let Some(r) = reservation {
                    self.stale_reservations.push(r);
                }
                self.defer(launch, nonce, first_try);
            }
            Err(e) => {
                if let Some(r) = reservation {
                    self.drop_reservation(r);
                }
                let _ = fs::remove_dir_all(self.job_dir(job));
                self.emit(Observation::StartFailed {
                    job,
                    at: now(),
                    message: e,
                });
            }
        }
    }

    /// A start waits for slurmctld, at most `timeout` (RMCFG TIMEOUT) after
    /// its first try; then it fails (the job goes back to the queue).
    fn defer(&mut self, launch: Box<Launch>, nonce: String, first_try: Instant) {
        if first_try.elapsed() >= self.cfg.timeout {
            return self.give_up(launch.job);
        }
        tracing::info!(
            job = launch.job,
            "slurmctld does not answer: start deferred"
        );
        self.deferred.push(Deferred {
            launch,
            nonce,
            first_try,
        });
    }

    fn give_up(&self, job: JobId) {
        let _ = fs::remove_dir_all(self.job_dir(job));
        self.emit(Observation::StartFailed {
            job,
            at: now(),
            message: format!(
                "slurmctld did not answer for {} s (RMCFG TIMEOUT)",
                self.cfg.timeout.as_secs()
            ),
        });
    }

    /// Deferred starts past their timeout fail.
    fn expire_deferred(&mut self) {
        let timeout = self.cfg.timeout;
        let (late, keep): (Vec<Deferred>, Vec<Deferred>) = std::mem::take(&mut self.deferred)
            .into_iter()
            .partition(|d| d.first_try.elapsed() >= timeout);
        self.deferred = keep;
        for d in late {
            self.give_up(d.launch.job);
        }
    }

    /// An uneven layout (not the same processors on every node) is pinned
    /// with a core reservation holding exactly the engine's processors on
    /// each node: Slurm splits a job's CPUs over its nodes as it likes
    /// otherwise (6+2 asked, 7+1 given), and neither `--distribution=arbitrary`
    /// nor `--ntasks-per-node` changes that in 22.05. The reservation ends
    /// once the job runs (the job keeps its CPUs) where Slurm allows it,
    /// else when the job ends. `None`: not
    /// possible (no privilege, processors not whole cores...), the layout
    /// is then approximated.
    fn core_reservation(&mut self, launch: &Launch, nonce: &str) -> Option<String> {
        let job = launch.job;
        let pos = |name: &str| self.order.iter().position(|o| o == name);
        let mut nodes: Vec<&crate::LaunchNode> = launch.nodes.iter().collect();
        // Slurm gives the core counts to the nodes in its own node order.
        nodes.sort_by_key(|n| pos(&n.name).unwrap_or(usize::MAX));
        let mut names = Vec::new();
        let mut cores = Vec::new();
        for n in nodes {
            let threads = self.threads.get(&n.name).copied().unwrap_or(1).max(1);
            if n.procs == 0 || n.procs % threads != 0 || pos(&n.name).is_none() {
                tracing::warn!(
                    job,
                    node = n.name,
                    "{} processors are not whole cores ({threads} threads per core): layout approximated",
                    n.procs
                );
                return None;
            }
            names.push(n.name.as_str());
            cores.push((n.procs / threads).to_string());
        }
        let name = format!("{}{job}.{nonce}", self.reservation_prefix());
        let args = [
            "create".to_string(),
            "reservation".to_string(),
            format!("ReservationName={name}"),
            format!("Users={}", launch.exec.user),
            "StartTime=now".to_string(),
            "Duration=UNLIMITED".to_string(),
            format!("Nodes={}", names.join(",")),
            format!("CoreCnt={}", cores.join(",")),
        ];
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        match self.call("scontrol", &args) {
            Ok(_) => Some(name),
            Err(e) => {
                tracing::warn!(
                    job,
                    "no core reservation for the uneven layout ({e}): Slurm splits the processors itself"
                );
                None
            }
        }
    }

    /// Ends one of our core reservations: deleted, or ended now. Slurm
    /// 22.05 refuses both while a job runs in it ("in use", "nodes are
    /// busy"): it then stays until its job ends, holding only the cores the
    /// job holds. Later when slurmctld does not answer. Whether it is gone
    /// (or will be, once slurmctld answers).
    fn drop_reservation(&mut self, name: String) -> bool {
        if self.down.is_some() {
            self.stale_reservations.push(name);
            return true;
        }
        let arg = format!("ReservationName={name}");
        if self
            .call("scontrol", &["delete", "reservation", &name])
            .is_ok()
        {
            return true;
        }
        match self.call("scontrol", &["update", &arg, "EndTime=now"]) {
            Ok(_) => true,
            Err(e) if unreachable(&e) => {
                self.stale_reservations.push(name);
                true
            }
            // Gone already.
            Err(e) if e.contains("reservation is invalid") => true,
            Err(e) => {
                tracing::debug!(reservation = name, "not ended: {e}");
                false
            }
        }
    }

    /// Writes the node file and script, runs `sbatch --hold`; the Slurm job id.
    fn sbatch(
        &self,
        launch: &Launch,
        tag: &str,
        layout_args: Vec<String>,
        reservation: Option<&str>,
    ) -> Result<u64, String> {
        let job = launch.job;
        let exec = &launch.exec;
        let dir = self.job_dir(job);
        let io_err = |what: &str, e: io::Error| format!("{what} {}: {e}", dir.display());
        let _ = fs::remove_dir_all(&dir);
        crate::fsmode::create_dir(&dir, 0o711, false).map_err(|e| io_err("cannot create", e))?;
        let nodefile = dir.join("nodefile");
        let mut lines = String::new();
        for node in &launch.nodes {
            for _ in 0..node.procs {
                lines.push_str(&node.name);
                lines.push('\n');
            }
        }
        crate::fsmode::write_file(&nodefile, lines.as_bytes(), 0o644)
            .map_err(|e| io_err("cannot write the node file in", e))?;
        // The script is a secret of the job's owner: sbatch (run by the
        // daemon's user) reads it and hands Slurm its text.
        let script = dir.join("script");
        // SAFETY: geteuid cannot fail.
        let euid = unsafe { libc::geteuid() };
        let batch = if exec.interactive {
            // An interactive job: the session runs the job's script as a
            // step of this allocation (msub's srun --pty); the batch script
            // keeps the allocation until the session's status appears.
            let session = dir.join(super::SESSION_DIR);
            let owner = (euid == 0).then_some((exec.uid, exec.gid));
            prepare_session(&session, &script_text(exec), owner)
                .map_err(|e| io_err("cannot prepare the interactive session in", e))?;
            session_waiter(&session)
        } else {
            script_text(exec)
        };
        crate::fsmode::write_file(&script, batch.as_bytes(), 0o600)
            .map_err(|e| io_err("cannot write the script in", e))?;

        let lf = crate::local::LaunchFile::new(launch, 0);
        let mut env = crate::local::environment(&lf, &nodefile.to_string_lossy());
        // The GPUs Arches gave it (Slurm sets CUDA_VISIBLE_DEVICES itself
        // for the GPUs it manages with device files, over this).
        let gpus = crate::local::gpu_lines(&lf);
        let gpufile = dir.join("gpufile");
        if !gpus.is_empty() {
            crate::fsmode::write_file(&gpufile, gpus.as_bytes(), 0o644)
                .map_err(|e| io_err("cannot write the GPU file in", e))?;
        }
        crate::local::gpu_environment(&lf, &gpufile.to_string_lossy(), &mut env);
        let chosen: Vec<&str> = launch.nodes.iter().map(|n| n.name.as_str()).collect();
        let others: Vec<&str> = self
            .nodes
            .keys()
            .map(String::as_str)
            .filter(|n| !chosen.contains(n))
            .collect();
        let mut args: Vec<String> = vec![
            "--parsable".into(),
            "--hold".into(),
            "--no-requeue".into(),
            format!("--job-name={}", launch.name),
            format!("--comment={tag}"),
            format!("--nodes={}", chosen.len()),
            format!("--nodelist={}", chosen.join(",")),
        ];
        if !others.is_empty() {
            args.push(format!("--exclude={}", others.join(",")));
        }
        if let Some(r) = reservation {
            args.push(format!("--reservation={r}"));
        }
        args.extend(gres_args(launch, |node, kind| {
            self.nodes
                .get(node)
                .is_some_and(|n| n.gres.iter().any(|(k, c)| k == kind && *c > 0))
        })?);
        // The engine gave the job whole nodes (NACCESSPOLICY SINGLEJOB or
        // SINGLETASK, or every processor anyway): nobody else may share.
        let whole = launch.nodes.iter().all(|n| {
            self.nodes
                .get(&n.name)
                .is_some_and(|x| x.procs > 0 && x.procs == n.procs)
        });
        if whole {
            args.push("--exclusive".into());
        }
        args.extend(layout_args);
        if let Some(w) = launch.walltime.filter(|w| *w > 0) {
            args.push(format!("--time={}", slurm_minutes(Some(w))));
        }
        args.push(format!("--chdir={}", exec.workdir));
        if exec.interactive {
            // The session's output is the user's terminal (as on the
            // LOCAL backend: no output files).
            args.push("--output=/dev/null".into());
        } else {
            args.push(format!("--output={}", exec.stdout));
            if !exec.join && exec.stderr != exec.stdout && !exec.stderr.is_empty() {
                args.push(format!("--error={}", exec.stderr));
            }
        }
        if euid == 0 {
            args.push(format!("--uid={}", exec.uid));
            args.push(format!("--gid={}", exec.gid));
        } else if exec.uid != euid {
            return Err(format!(
                "Arches runs as uid {euid}, not root: it cannot submit job {job} as user {} (uid {})",
                exec.user, exec.uid
            ));
        }
        args.push("--export=ALL".into());
        args.push(script.to_string_lossy().into_owned());
        // sbatch passes what follows the script to it.
        args.extend(exec.args.iter().cloned());
        let mut cmd = self.cfg.command("sbatch");
        cmd.env_clear().envs(env.iter().map(|(k, v)| (k, v)));
        if !env.iter().any(|(k, _)| k == "PATH") {
            cmd.env("PATH", "/usr/local/bin:/usr/bin:/bin");
        }
        if let Some(conf) = &self.cfg.slurm_conf {
            cmd.env("SLURM_CONF", conf);
        } else if let Some(conf) = std::env::var_os("SLURM_CONF") {
            cmd.env("SLURM_CONF", conf);
        }
        // A SLURM_UMASK in the job's environment (a submission from inside
        // a Slurm job) would win over sbatch's own umask.
        cmd.env_remove("SLURM_UMASK");
        cmd.args(&args);
        // sbatch hands its own umask to the job (SLURM_UMASK): the job's
        // `-W umask=`, else the daemon's without group and other write,
        // as on the local backend.
        let umask = exec.umask;
        // SAFETY: umask(2) is async-signal-safe and cannot fail; the
        // closure allocates nothing.
        unsafe {
            std::os::unix::process::CommandExt::pre_exec(&mut cmd, move || {
                match umask {
                    Some(m) => {
                        libc::umask(m as libc::mode_t);
                    }
                    None => {
                        let inherited = libc::umask(0o022);
                        libc::umask(inherited | 0o022);
                    }
                }
                Ok(())
            });
        }
        let out = output(&mut cmd, "sbatch")?;
        let id = out.trim().split(';').next().unwrap_or("");
        id.parse()
            .map_err(|_| format!("sbatch printed no job id: {out:?}"))
    }

    /// `scontrol release` of the jobs submitted this round (later when
    /// slurmctld does not answer: they stay held meanwhile).
    fn release(&mut self) {
        if self.to_release.is_empty() || self.down.is_some() {
            return;
        }
        let mut ids: Vec<u64> = std::mem::take(&mut self.to_release);
        ids.sort_unstable();
        ids.dedup();
        let list = ids.iter().map(u64::to_string).collect::<Vec<_>>().join(",");
        match self.call("scontrol", &["release", &list]) {
            Ok(_) => self.mark_released(&ids),
            Err(e) if unreachable(&e) => self.to_release = ids,
            Err(e) => {
                // Released one by one so one bad id does not hold the others;
                // still-held jobs are released again by the next poll.
                tracing::warn!("scontrol release {list}: {e}");
                for id in ids {
                    if self.call("scontrol", &["release", &id.to_string()]).is_ok() {
                        self.mark_released(&[id]);
                    }
                }
            }
        }
    }

    fn mark_released(&mut self, ids: &[u64]) {
        let ids: HashSet<u64> = ids.iter().copied().collect();
        let at = Instant::now();
        for t in self.jobs.values_mut() {
            if ids.contains(&t.slurm) {
                t.released = Some(at);
            }
        }
    }

    /// `squeue --json` (all jobs); `None` when slurmctld does not answer.
    fn squeue(&mut self) -> Option<Vec<SlurmJob>> {
        match self
            .call("squeue", &["--json"])
            .and_then(|t| json::parse_jobs(&t))
        {
            Ok(jobs) => Some(jobs),
            Err(e) => {
                if unreachable(&e) {
                    self.went_down(&e);
                }
                tracing::warn!("Slurm poll skipped: {e}");
                None
            }
        }
    }

    /// Reads the nodes; reports new and changed ones (processors, memory,
    /// features, state) and the ones Slurm no longer has (as Down).
    /// Whether Slurm answered.
    fn poll_nodes(&mut self) -> bool {
        let parsed = match self
            .call("sinfo", &["--json"])
            .and_then(|t| json::parse_nodes(&t))
        {
            Ok(n) => n,
            Err(e) => {
                if unreachable(&e) {
                    self.went_down(&e);
                }
                tracing::warn!("Slurm node poll skipped: {e}");
                return false;
            }
        };
        if parsed.is_empty() {
            tracing::warn!("Slurm node poll skipped: sinfo reports no nodes");
            return false;
        }
        let new: Vec<Node> = parsed
            .iter()
            .map(|sn| {
                let mut n = sn.to_node(&self.cfg.partition);
                if sn.state_unknown() {
                    // slurmctld has just started: the node keeps the state
                    // it had (it is not down, Slurm does not know yet).
                    if let Some(old) = self.nodes.get(&n.name) {
                        n.admin = old.admin;
                    }
                }
                n
            })
            .collect();
        for node in diff_nodes(&self.nodes, &new) {
            if new.iter().any(|n| n.name == node.name) {
                tracing::info!(node = node.name, admin = ?node.admin, procs = node.procs,
                    mem_mb = node.mem_mb, features = ?node.features, "Slurm node");
            } else {
                tracing::warn!(node = node.name, "Slurm no longer has this node: Down");
            }
            self.emit(Observation::NodeChanged { node });
        }
        self.threads = parsed
            .iter()
            .map(|n| (n.name.clone(), n.threads.unwrap_or(1)))
            .collect();
        self.order = new.iter().map(|n| n.name.clone()).collect();
        self.nodes = new.into_iter().map(|n| (n.name.clone(), n)).collect();
        true
    }

    /// The cheap poll: `squeue -o` text (about 8x cheaper than `--json`
    /// with 1,000 jobs), start times as epoch seconds, without exit statuses.
    fn squeue_fast(&mut self) -> Option<Vec<SlurmJob>> {
        let mut cmd = self.cfg.command("squeue");
        cmd.env("SLURM_TIME_FORMAT", "%s")
            .args(["-h", "-t", "all", "-o", json::SQUEUE_FORMAT]);
        match output(&mut cmd, "squeue") {
            Ok(text) => Some(json::parse_jobs_text(&text)),
            Err(e) => {
                if unreachable(&e) {
                    self.went_down(&e);
                }
                tracing::warn!("Slurm poll skipped: {e}");
                None
            }
        }
    }

    /// How Slurm job `slurm` ended, from the completion log (`sacct -c`:
    /// `JobCompType=jobcomp/filetxt`), else from accounting (`sacct`, with
    /// slurmdbd): for a job `squeue` no longer lists (`MinJobAge`). An entry
    /// that ended before `since` belongs to an earlier job with the same id.
    fn completion_record(&self, slurm: u64, since: Time) -> Result<Option<SlurmJob>, String> {
        let id = slurm.to_string();
        for log in [true, false] {
            let mut cmd = self.cfg.command("sacct");
            cmd.env("SLURM_TIME_FORMAT", "%s");
            if log {
                cmd.arg("-c");
            }
            cmd.args(["-n", "-P", "-j", &id, "-o", json::SACCT_FIELDS]);
            match output(&mut cmd, "sacct") {
                Ok(text) => {
                    if let Some(j) = json::parse_sacct(&text, slurm)
                        .filter(|j| j.end_time.unwrap_or(0) + CLOCK_SLACK >= since)
                    {
                        return Ok(Some(j));
                    }
                }
                // Could not ask (sacct did not run, or Slurm does not
                // answer): the answer is unknown, not "no record".
                Err(e) if unreachable(&e) => return Err(e),
                Err(e) => tracing::debug!(slurm, "{e}"),
            }
        }
        Ok(None)
    }

    /// What to report for a job whose Slurm job `squeue` no longer lists;
    /// `None` when the completion log could not be asked (retried at the
    /// next poll, never reported vanished on an error).
    fn missing_outcome(
        &self,
        job: JobId,
        slurm: u64,
        since: Time,
        cancelled: bool,
    ) -> Option<Vec<Observation>> {
        match self.completion_record(slurm, since) {
            Ok(Some(sj)) => {
                tracing::info!(job, slurm, "found in the completion log");
                let mut obs = Vec::new();
                if let Some(at) = ran_since(&sj) {
                    obs.push(Observation::Running { job, at });
                }
                obs.push(outcome(job, cancelled, &[], &sj, &self.nodes));
                Some(obs)
            }
            Ok(None) => {
                tracing::warn!(
                    job,
                    slurm,
                    "not in squeue nor in the completion log: vanished"
                );
                Some(vec![Observation::Vanished { job, at: now() }])
            }
            Err(e) => {
                tracing::warn!(job, slurm, "completion log not read ({e}): asked again");
                None
            }
        }
    }

    /// One poll; whether Slurm answered. While slurmctld does not answer
    /// only `scontrol ping` runs.
    fn poll(&mut self) -> bool {
        if !self.ping() {
            self.expire_deferred();
            return false;
        }
        for id in std::mem::take(&mut self.cancels) {
            if let Err(e) = self.scancel(id) {
                tracing::warn!(slurm = id, "cancel: {e}");
            }
        }
        for r in std::mem::take(&mut self.stale_reservations) {
            self.drop_reservation(r);
        }
        if !self.poll_nodes() && self.down.is_some() {
            return false;
        }
        if self.recovery.is_some() && !self.try_recover() {
            return false;
        }
        let Some(mut all) = self.squeue_fast() else {
            return false;
        };
        let ours: HashSet<u64> = self.jobs.values().map(|t| t.slurm).collect();
        if all
            .iter()
            .any(|j| ours.contains(&j.job_id) && j.phase() == Phase::Ended)
        {
            // Exit statuses and end times are only in the JSON.
            let Some(full) = self.squeue() else {
                return false;
            };
            all = full;
        }
        let by_id: HashMap<u64, &SlurmJob> = all.iter().map(|j| (j.job_id, j)).collect();
        // Deferred starts: adopt a submit whose answer was lost, else submit.
        for d in std::mem::take(&mut self.deferred) {
            let tag = self.tag(d.launch.job, &d.nonce);
            match all
                .iter()
                .find(|j| j.comment.as_deref() == Some(tag.as_str()))
            {
                Some(j) => {
                    let job = d.launch.job;
                    tracing::info!(
                        job,
                        slurm = j.job_id,
                        "adopted a submit whose answer was lost"
                    );
                    let submitted_at = now();
                    self.write_record(job, j.job_id, submitted_at);
                    self.to_release.push(j.job_id);
                    self.jobs.insert(
                        job,
                        Track {
                            slurm: j.job_id,
                            nodes: d.launch.nodes.iter().map(|n| n.name.clone()).collect(),
                            submitted_at,
                            released: None,
                            started: false,
                            suspended: false,
                            cancelled: false,
                            resumed: None,
                            reservation: None,
                            missing: None,
                            overdue: false,
                            requeue: false,
                            kill_at: None,
                            limit: d.launch.walltime.filter(|w| *w > 0),
                        },
                    );
                }
                None => self.submit(d.launch, d.nonce, d.first_try),
            }
        }
        let timeout = self.cfg.timeout;
        let out = self.out.clone();
        let mut ended: Vec<(JobId, Vec<Observation>)> = Vec::new();
        let mut missing = Vec::new();
        let mut to_cancel = Vec::new();
        let mut to_release = Vec::new();
        let mut to_drop = Vec::new();
        let mut started_in_rsv = Vec::new();
        let mut to_suspend = Vec::new();
        let mut to_hold = Vec::new();
        for (&job, t) in self.jobs.iter_mut() {
            if t.requeue {
                // Terminating for a requeue: reported once Slurm has ended it.
                let gone = by_id
                    .get(&t.slurm)
                    .is_none_or(|j| j.phase() == Phase::Ended);
                if gone {
                    ended.push((job, vec![Observation::Requeued { job, at: now() }]));
                } else if t.kill_at.is_some_and(|d| Instant::now() >= d) {
                    t.kill_at = None;
                    to_cancel.push(t.slurm);
                } else if by_id
                    .get(&t.slurm)
                    .is_some_and(|j| j.phase() == Phase::Pending)
                {
                    to_cancel.push(t.slurm);
                }
                continue;
            }
            let Some(sj) = by_id.get(&t.slurm) else {
                let since = *t.missing.get_or_insert_with(Instant::now);
                if since.elapsed() > MISSING_GRACE {
                    missing.push(job);
                }
                continue;
            };
            t.missing = None;
            match sj.phase() {
                Phase::Running | Phase::Suspended => {
                    if !t.started {
                        t.started = true;
                        let at = sj.start_time.filter(|s| *s > 0).unwrap_or_else(now);
                        let _ = out.send(Observation::Running { job, at });
                        // Running on its CPUs: the reservation has done its
                        // work (ended now where Slurm allows it, else with
                        // the job).
                        if let Some(r) = t.reservation.clone() {
                            started_in_rsv.push((job, r));
                        }
                    }
                    if t.suspended && sj.phase() == Phase::Running {
                        // It started in Slurm before its suspend (a hold) took.
                        to_suspend.push(t.slurm);
                    }
                }
                Phase::Completing => {}
                Phase::Pending => {
                    let reason = sj.state_reason.as_deref().unwrap_or("");
                    if t.started {
                        // Slurm requeued it on its own (node failure).
                        to_cancel.push(t.slurm);
                        let node = t.nodes.first().cloned().unwrap_or_default();
                        ended.push((
                            job,
                            vec![Observation::NodeFailed {
                                job,
                                at: now(),
                                node,
                            }],
                        ));
                    } else if matches!(
                        reason,
                        "BadConstraints" | "PartitionConfig" | "InvalidAccount" | "InvalidQOS"
                    ) {
                        to_cancel.push(t.slurm);
                        ended.push((
                            job,
                            vec![Observation::StartFailed {
                                job,
                                at: now(),
                                message: format!("Slurm cannot run it as placed: {reason}"),
                            }],
                        ));
                    } else if t.suspended {
                        if reason != "JobHeldAdmin" {
                            // Suspended by Arches before it ran: stays held.
                            to_hold.push(t.slurm);
                        }
                    } else if reason == "JobHeldUser" {
                        // Submitted held, never released (a lost release).
                        to_release.push(t.slurm);
                    } else if reason == "JobHeldAdmin" {
                        // Held by an administrator in Slurm.
                    } else if !t.overdue && t.released.is_some_and(|r| r.elapsed() > timeout) {
                        // Slurm does not run it yet where Arches placed it
                        // (its CPUs are still busy in Slurm, or Slurm is
                        // slow with many starts): said once; the job stays
                        // Starting (never shown running while it is not)
                        // and runs when Slurm starts it. Requeueing it
                        // instead fed a storm of cancels and restarts.
                        t.overdue = true;
                        let why = if reason.is_empty() {
                            "no reason"
                        } else {
                            reason
                        };
                        tracing::warn!(job, slurm = t.slurm, "not started by Slurm: {why}");
                        let _ = out.send(Observation::Note {
                            job,
                            message: format!(
                                "Slurm has not started the job {} s after its release (pending: {why}); it stays Starting until Slurm runs it",
                                timeout.as_secs()
                            ),
                        });
                    }
                }
                Phase::Ended => {
                    let mut obs = Vec::new();
                    if !t.started {
                        if let Some(at) = ran_since(sj) {
                            obs.push(Observation::Running { job, at });
                        }
                    }
                    obs.push(outcome(job, t.cancelled, &t.nodes, sj, &self.nodes));
                    ended.push((job, obs));
                }
            }
        }
        for job in missing {
            if let Some(t) = self.jobs.get(&job) {
                if let Some(obs) = self.missing_outcome(job, t.slurm, t.submitted_at, t.cancelled) {
                    ended.push((job, obs));
                }
            }
        }
        for id in to_cancel {
            if let Err(e) = self.scancel(id) {
                tracing::warn!(slurm = id, "cancel: {e}");
            }
        }
        self.to_release.extend(to_release);
        for id in to_suspend {
            tracing::info!(
                slurm = id,
                "suspending a job that started before its suspend took"
            );
            let _ = self.call("scontrol", &["suspend", &id.to_string()]);
        }
        for id in to_hold {
            let _ = self.call("scontrol", &["hold", &id.to_string()]);
        }
        for (job, obs) in ended {
            if let Some(t) = self.jobs.remove(&job) {
                to_drop.extend(t.reservation);
            }
            let _ = fs::remove_dir_all(self.job_dir(job));
            for o in obs {
                self.emit(o);
            }
        }
        for r in to_drop {
            // Its job may still be completing in Slurm: retried next poll.
            if !self.drop_reservation(r.clone()) {
                self.stale_reservations.push(r);
            }
        }
        for (job, r) in started_in_rsv {
            if self.drop_reservation(r) {
                if let Some(t) = self.jobs.get_mut(&job) {
                    t.reservation = None;
                }
            }
        }
        self.release();
        true
    }

    /// The pending recovery after a daemon restart: adopt the newest Slurm
    /// job tagged for each active job, report the ones that ended (from the
    /// completion log when Slurm no longer lists them), cancel tagged jobs
    /// and drop our reservations nobody owns. Whether it could be done
    /// (else it is retried at the next poll; nothing is given up).
    fn try_recover(&mut self) -> bool {
        let Some(active) = self.recovery.clone() else {
            return true;
        };
        if !self.ping() {
            return false;
        }
        if !self.poll_nodes() && self.down.is_some() {
            return false;
        }
        let Some(all) = self.squeue() else {
            return false;
        };
        let mut newest: BTreeMap<JobId, &SlurmJob> = BTreeMap::new();
        let mut ours = Vec::new();
        for j in &all {
            let Some((job, _)) = j.comment.as_deref().and_then(|c| self.parse_tag(c)) else {
                continue;
            };
            ours.push((job, j.job_id, j.phase()));
            if newest.get(&job).is_none_or(|n| n.job_id < j.job_id) {
                newest.insert(job, j);
            }
        }
        // What is known of each job first: a record or a completion log
        // that cannot be read now makes the whole recovery wait for the
        // next poll (nothing reported yet, nothing taken for vanished).
        let mut records = BTreeMap::new();
        let mut ended = BTreeMap::new();
        for &job in &active {
            if self.jobs.contains_key(&job) {
                continue;
            }
            let record = match self.read_record(job) {
                Ok(r) => r,
                Err(e) => {
                    tracing::warn!(job, "Slurm recovery waits: {e}");
                    return false;
                }
            };
            if !newest.contains_key(&job) {
                let obs = match record {
                    Some((slurm, since)) => match self.missing_outcome(job, slurm, since, false) {
                        Some(obs) => obs,
                        None => return false,
                    },
                    None => vec![Observation::Vanished { job, at: now() }],
                };
                ended.insert(job, obs);
            }
            records.insert(job, record);
        }
        self.recovery = None;
        let mut adopted = Vec::new();
        for &job in &active {
            if self.jobs.contains_key(&job) {
                continue;
            }
            let record = records.get(&job).copied().flatten();
            let Some(sj) = newest.get(&job) else {
                let obs = ended.remove(&job).unwrap_or_default();
                let _ = fs::remove_dir_all(self.job_dir(job));
                for o in obs {
                    self.emit(o);
                }
                continue;
            };
            let phase = sj.phase();
            let held = matches!(
                sj.state_reason.as_deref(),
                Some("JobHeldUser" | "JobHeldAdmin")
            );
            let started = matches!(phase, Phase::Running | Phase::Suspended);
            self.jobs.insert(
                job,
                Track {
                    slurm: sj.job_id,
                    nodes: sj.node_names(),
                    submitted_at: record
                        .filter(|(id, _)| *id == sj.job_id)
                        .map_or(0, |(_, at)| at),
                    released: (phase == Phase::Pending && !held).then(Instant::now),
                    started,
                    // Suspended, or held by a suspend before it ran: the
                    // daemon, which has it suspended too, will resume it.
                    suspended: phase == Phase::Suspended
                        || (phase == Phase::Pending
                            && sj.state_reason.as_deref() == Some("JobHeldAdmin")),
                    cancelled: false,
                    resumed: None,
                    reservation: None,
                    missing: None,
                    overdue: false,
                    requeue: false,
                    kill_at: None,
                    limit: sj.time_limit.map(|m| m * 60),
                },
            );
            if started {
                let at = sj.start_time.filter(|s| *s > 0).unwrap_or_else(now);
                self.emit(Observation::Running { job, at });
            }
            adopted.push(job);
        }
        for (job, id, phase) in ours {
            let owned = self.jobs.get(&job).is_some_and(|t| t.slurm == id);
            if !owned && phase != Phase::Ended {
                tracing::info!(job, slurm = id, "cancelling an orphaned Slurm job");
                if let Err(e) = self.scancel(id) {
                    tracing::warn!(slurm = id, "cancel: {e}");
                }
            }
        }
        self.drop_orphan_reservations();
        for job in std::mem::take(&mut self.cancel_after_recovery) {
            if adopted.contains(&job) {
                self.cancel(job);
            }
        }
        tracing::info!(
            adopted = adopted.len(),
            active = active.len(),
            "Slurm jobs recovered"
        );
        true
    }

    /// Our core reservations that no job of ours waits on (left by a
    /// daemon that stopped between a submit and the start).
    fn drop_orphan_reservations(&mut self) {
        let Ok(text) = self.call("scontrol", &["show", "reservation", "-o"]) else {
            return;
        };
        let prefix = self.reservation_prefix();
        let owned: HashSet<&str> = self
            .jobs
            .values()
            .filter_map(|t| t.reservation.as_deref())
            .collect();
        let orphans: Vec<String> = text
            .lines()
            .filter_map(|l| l.strip_prefix("ReservationName="))
            .filter_map(|l| l.split_whitespace().next())
            .filter(|n| n.starts_with(&prefix) && !owned.contains(n))
            .map(String::from)
            .collect();
        for r in orphans {
            tracing::info!(reservation = r, "dropping an orphaned core reservation");
            self.drop_reservation(r);
        }
    }
}

/// The nodes to report after a `sinfo`: new ones, changed ones (any of
/// processors, memory, features, partition, state), and the ones Slurm no
/// longer has, as Down.
fn diff_nodes(old: &BTreeMap<String, Node>, new: &[Node]) -> Vec<Node> {
    let mut out: Vec<Node> = new
        .iter()
        .filter(|n| old.get(&n.name) != Some(*n))
        .cloned()
        .collect();
    for (name, n) in old {
        if !new.iter().any(|x| &x.name == name) && n.admin != NodeAdminState::Down {
            out.push(Node {
                admin: NodeAdminState::Down,
                ..n.clone()
            });
        }
    }
    out
}

/// When an ended Slurm job started, if it ran at all (a job cancelled while
/// pending has a start time but no nodes).
fn ran_since(sj: &SlurmJob) -> Option<Time> {
    sj.start_time
        .filter(|t| *t > 0)
        .filter(|_| !sj.node_names().is_empty())
}

/// The report for a Slurm job that ended.
fn outcome(
    job: JobId,
    cancelled: bool,
    placed: &[String],
    sj: &SlurmJob,
    nodes: &BTreeMap<String, Node>,
) -> Observation {
    let at = sj.end_time.filter(|&e| e > 0).unwrap_or_else(now);
    let code = decode_wait_status(sj.exit_code.unwrap_or(0));
    let or = |default: i32| if code == 0 { default } else { code };
    match sj.job_state.as_str() {
        "COMPLETED" => Observation::Finished { job, at, code },
        "CANCELLED" if cancelled => Observation::Finished {
            job,
            at,
            code: or(128 + libc::SIGTERM),
        },
        "TIMEOUT" => Observation::WalltimeExceeded {
            job,
            at,
            code: or(128 + libc::SIGTERM),
        },
        "NODE_FAIL" | "BOOT_FAIL" => {
            let names = sj.node_names();
            let names = if names.is_empty() {
                placed.to_vec()
            } else {
                names
            };
            let node = names
                .iter()
                .find(|n| nodes.get(*n).is_none_or(|s| s.admin != NodeAdminState::Up))
                .or(names.first())
                .cloned()
                .unwrap_or_default();
            Observation::NodeFailed { job, at, node }
        }
        "OUT_OF_MEMORY" => Observation::Finished {
            job,
            at,
            code: or(128 + libc::SIGKILL),
        },
        "CANCELLED" | "DEADLINE" | "PREEMPTED" => Observation::Finished {
            job,
            at,
            code: or(128 + libc::SIGTERM),
        },
        _ => Observation::Finished {
            job,
            at,
            code: or(1),
        },
    }
}

/// The batch script: the job's script with the interpreter line `sbatch`
/// needs (`-S` shell, else its own `#!`, else `/bin/sh`).
fn script_text(exec: &crate::ExecSpec) -> String {
    let body = &exec.script;
    match &exec.shell {
        Some(shell) => {
            let rest = if body.starts_with("#!") {
                body.split_once('\n').map_or("", |(_, r)| r)
            } else {
                body.as_str()
            };
            format!("#!{shell}\n{rest}")
        }
        None if body.starts_with("#!") => body.clone(),
        None => format!("#!/bin/sh\n{body}"),
    }
}

/// An interactive job's session directory: its owner's (mode 0700), with
/// the job's script (`script`, mode 0700) the session runs.
fn prepare_session(session: &Path, script: &str, owner: Option<(u32, u32)>) -> io::Result<()> {
    crate::fsmode::create_dir(session, 0o700, false)?;
    let file = session.join("script");
    crate::fsmode::write_file(&file, script.as_bytes(), 0o700)?;
    if let Some((uid, gid)) = owner {
        for p in [session, file.as_path()] {
            std::os::unix::fs::chown(p, Some(uid), Some(gid))?;
        }
    }
    Ok(())
}

/// The batch script of an interactive job (it runs as the job's user, in
/// the job's environment): records the script's arguments and its
/// environment for the session (msub waits for `env`), then keeps the
/// allocation until msub writes the session's exit status, and exits with
/// it. The status file is named after the Slurm job (`status.<id>`), so a
/// session of an earlier Slurm job of a requeued job cannot end this one.
/// A wall-clock kill or a cancel ends the job and with it every step.
fn session_waiter(session: &Path) -> String {
    let dir = session.to_string_lossy().replace('\'', r"'\''");
    format!(
        "#!/bin/sh\n\
         # Arches: an interactive job (msub -I). The session runs as a step of this\n\
         # allocation (srun --jobid --overlap --pty, started by msub); this script\n\
         # keeps the allocation until the session's exit status appears.\n\
         s='{dir}'\n\
         : > \"$s/args.new\" || exit 1\n\
         for a in \"$@\"; do printf '%s\\0' \"$a\" >> \"$s/args.new\"; done\n\
         mv -f \"$s/args.new\" \"$s/args\" || exit 1\n\
         env -0 > \"$s/env.new\" && mv -f \"$s/env.new\" \"$s/env\" || exit 1\n\
         st=\"$s/status.${{SLURM_JOB_ID:-0}}\"\n\
         while [ ! -s \"$st\" ]; do sleep 1; done\n\
         read -r code < \"$st\"\n\
         case \"$code\" in ''|*[!0-9]*) code=1 ;; esac\n\
         exit \"$code\"\n"
    )
}

/// `--ntasks...` options reproducing the engine's tasks and processors per
/// node, and whether Slurm's split of the processors over the nodes is then
/// exactly the engine's (one node, or the same tasks and processors on
/// every node). Otherwise Slurm splits the total as it likes and the
/// worker pins it with a core reservation.
fn layout(launch: &Launch) -> (Vec<String>, bool) {
    let nodes = &launch.nodes;
    let tasks: u32 = nodes.iter().map(|n| n.tasks.max(1)).sum();
    let procs: u32 = nodes.iter().map(|n| n.procs.max(1)).sum();
    let first = &nodes[0];
    let even = nodes
        .iter()
        .all(|n| n.tasks == first.tasks && n.procs == first.procs);
    let per_task =
        |n: &crate::LaunchNode| (n.tasks > 0 && n.procs % n.tasks == 0).then(|| n.procs / n.tasks);
    let single = nodes.len() == 1;
    if even {
        if let Some(c) = per_task(first) {
            let args = vec![
                format!("--ntasks={tasks}"),
                format!("--ntasks-per-node={}", first.tasks),
                format!("--cpus-per-task={c}"),
            ];
            return (args, true);
        }
    }
    let ratio = per_task(first);
    if ratio.is_some() && nodes.iter().all(|n| per_task(n) == ratio) {
        let args = vec![
            format!("--ntasks={tasks}"),
            format!("--cpus-per-task={}", ratio.unwrap_or(1)),
        ];
        return (args, single);
    }
    let args = vec![format!("--ntasks={procs}"), "--cpus-per-task=1".into()];
    (args, single)
}

/// `--gres=name:count,...` for the kinds Slurm itself knows on the job's
/// nodes (`known(node, kind)`: Slurm reports the node's `Gres=`). A kind
/// only Arches knows (`NODECFG[n] GRES=` on a node Slurm reports without
/// it) is counted and given out by Arches alone and not passed on. Slurm's
/// generic resources are per node, so the job must have the same count of
/// each passed kind on every node it uses (the engine's mixed layouts with
/// different GPUs per node cannot be said to Slurm 22.05: such a start
/// fails with the reason).
fn gres_args(launch: &Launch, known: impl Fn(&str, &str) -> bool) -> Result<Vec<String>, String> {
    let mut kinds: Vec<&str> = Vec::new();
    for n in &launch.nodes {
        for (k, _, _) in &n.gres {
            if !kinds.contains(&k.as_str()) && launch.nodes.iter().all(|m| known(&m.name, k)) {
                kinds.push(k);
            }
        }
    }
    let mut parts = Vec::new();
    for k in kinds {
        let count =
            |n: &crate::LaunchNode| n.gres.iter().filter(|g| g.0 == k).map(|g| g.1).sum::<u32>();
        let first = count(&launch.nodes[0]);
        if let Some(other) = launch.nodes.iter().find(|n| count(n) != first) {
            return Err(format!(
                "Slurm takes generic resources per node: job {} has {first} {k} on {} but {} on {}",
                launch.job,
                launch.nodes[0].name,
                count(other),
                other.name
            ));
        }
        parts.push(format!("{k}:{first}"));
    }
    Ok(if parts.is_empty() {
        Vec::new()
    } else {
        vec![format!("--gres={}", parts.join(","))]
    })
}

/// A wall-clock limit as Slurm takes it: whole minutes, rounded up
/// (`UNLIMITED` for none).
pub(crate) fn slurm_minutes(walltime: Option<Secs>) -> String {
    match walltime {
        Some(w) => ((w.max(1) + 59) / 60).to_string(),
        None => "UNLIMITED".to_string(),
    }
}

fn now() -> Time {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as Time)
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ExecSpec, LaunchNode};

    #[test]
    fn a_command_that_could_not_run_for_want_of_resources_is_retried() {
        // Nothing was asked: retried like an outage, never an answer.
        assert!(unreachable(
            "cannot run sacct: Too many open files (os error 24)"
        ));
        assert!(unreachable(
            "cannot run squeue: Resource temporarily unavailable (os error 11)"
        ));
        // A missing command is a configuration error, reported as such.
        assert!(!unreachable(
            "cannot run sacct: No such file or directory (os error 2)"
        ));
        // The command ran and said so itself: its own answer.
        assert!(!unreachable(
            "sacct failed (exit status: 1): Too many open files"
        ));
    }

    fn launch(nodes: &[(u32, u32)]) -> Launch {
        Launch {
            job: 7,
            name: "x".into(),
            nodes: nodes
                .iter()
                .enumerate()
                .map(|(i, &(tasks, procs))| LaunchNode {
                    name: format!("n{i}"),
                    tasks,
                    procs,
                    gres: Vec::new(),
                })
                .collect(),
            exec: ExecSpec::default(),
            walltime: None,
            restarted: false,
        }
    }

    #[test]
    fn gres_per_node() {
        let slurm_knows = |_: &str, k: &str| k == "gpu";
        let mut l = launch(&[(1, 1), (1, 1)]);
        assert!(gres_args(&l, slurm_knows).unwrap().is_empty());
        for n in l.nodes.iter_mut() {
            n.gres = vec![("gpu".into(), 2, vec![0, 1]), ("lic".into(), 1, vec![])];
        }
        assert_eq!(
            gres_args(&l, slurm_knows).unwrap(),
            vec!["--gres=gpu:2".to_string()],
            "a kind only Arches knows is not passed"
        );
        assert!(gres_args(&l, |_, _| false).unwrap().is_empty());
        l.nodes[1].gres[0].1 = 1;
        let e = gres_args(&l, slurm_knows).unwrap_err();
        assert!(e.contains("2 gpu on"), "{e}");
    }

    #[test]
    fn layouts() {
        let l = |nodes: &[(u32, u32)]| {
            let (args, exact) = layout(&launch(nodes));
            (args.join(" "), exact)
        };
        assert_eq!(
            l(&[(2, 2), (2, 2)]),
            (
                "--ntasks=4 --ntasks-per-node=2 --cpus-per-task=1".into(),
                true
            )
        );
        assert_eq!(
            l(&[(1, 4)]),
            (
                "--ntasks=1 --ntasks-per-node=1 --cpus-per-task=4".into(),
                true
            )
        );
        assert_eq!(l(&[(2, 3)]), ("--ntasks=3 --cpus-per-task=1".into(), true));
        // Uneven: Slurm would split the processors itself.
        assert_eq!(
            l(&[(2, 2), (1, 1)]),
            ("--ntasks=3 --cpus-per-task=1".into(), false)
        );
        assert_eq!(
            l(&[(2, 3), (1, 1)]),
            ("--ntasks=4 --cpus-per-task=1".into(), false)
        );
        assert_eq!(
            l(&[(1, 2), (2, 2)]),
            ("--ntasks=4 --cpus-per-task=1".into(), false)
        );
    }

    #[test]
    fn node_changes() {
        let mut old = BTreeMap::new();
        for n in ["n1", "n2", "n3"] {
            old.insert(n.to_string(), Node::new(n, 8, 4096));
        }
        let mut n1 = Node::new("n1", 8, 4096);
        n1.features = vec!["gpu".into()];
        let n2 = Node::new("n2", 16, 8192);
        let n3 = Node::new("n3", 8, 4096);
        let n4 = Node::new("n4", 4, 1024);
        // Unchanged: nothing to report.
        let same: Vec<Node> = old.values().cloned().collect();
        assert!(diff_nodes(&old, &same).is_empty());
        // A feature, a size, a new node; n3 is gone from Slurm: Down.
        let changes = diff_nodes(&old, &[n1.clone(), n2.clone(), n4.clone()]);
        let mut gone = n3.clone();
        gone.admin = NodeAdminState::Down;
        assert_eq!(changes, [n1, n2, n4, gone.clone()]);
        // Reported once: a node already Down is not reported again.
        old.insert("n3".into(), gone);
        assert!(diff_nodes(&old, &same[..2]).iter().all(|n| n.name != "n3"));
    }

    #[test]
    fn scripts() {
        let mut e = ExecSpec {
            script: "echo hi\n".into(),
            ..ExecSpec::default()
        };
        assert_eq!(script_text(&e), "#!/bin/sh\necho hi\n");
        e.script = "#!/bin/bash\necho hi\n".into();
        assert_eq!(script_text(&e), "#!/bin/bash\necho hi\n");
        e.shell = Some("/bin/zsh".into());
        assert_eq!(script_text(&e), "#!/bin/zsh\necho hi\n");
    }

    /// The batch script of an interactive job, run for real: it records
    /// its arguments and environment, waits for the session's status and
    /// exits with it (a quote in the path is no problem).
    #[test]
    fn interactive_batch_script_waits_for_the_sessions_status() {
        let tmp = tempfile::tempdir().unwrap();
        let session = tmp.path().join("it's").join(super::super::SESSION_DIR);
        std::fs::create_dir(session.parent().unwrap()).unwrap();
        prepare_session(&session, "#!/bin/sh\nexec /bin/sh\n", None).unwrap();
        use std::os::unix::fs::PermissionsExt;
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o7777;
        assert_eq!(mode(&session), 0o700);
        assert_eq!(mode(&session.join("script")), 0o700);
        let batch = tmp.path().join("batch");
        std::fs::write(&batch, session_waiter(&session)).unwrap();
        // Another Slurm job's status (an earlier start of a requeued job)
        // is not this one's.
        std::fs::write(session.join("status.41"), "3\n").unwrap();
        let mut child = std::process::Command::new("/bin/sh")
            .arg(&batch)
            .args(["a b", "", "c"])
            .env_clear()
            .env("PBS_ENVIRONMENT", "PBS_INTERACTIVE")
            .env("SLURM_JOB_ID", "42")
            .env("PATH", "/usr/bin:/bin")
            .spawn()
            .unwrap();
        let env = session.join("env");
        let deadline = Instant::now() + Duration::from_secs(30);
        while !env.exists() {
            assert!(Instant::now() < deadline, "no env file");
            std::thread::sleep(Duration::from_millis(20));
        }
        let vars = std::fs::read(&env).unwrap();
        assert!(
            vars.split(|b| *b == 0)
                .any(|v| v == b"PBS_ENVIRONMENT=PBS_INTERACTIVE"),
            "{}",
            String::from_utf8_lossy(&vars)
        );
        assert_eq!(std::fs::read(session.join("args")).unwrap(), b"a b\0\0c\0");
        assert_eq!(child.try_wait().unwrap(), None, "waits for the status");
        std::fs::write(session.join("status.42"), "7\n").unwrap();
        assert_eq!(child.wait().unwrap().code(), Some(7));
    }

    fn ended(state: &str, exit: i64) -> SlurmJob {
        SlurmJob {
            job_id: 5,
            name: String::new(),
            comment: None,
            job_state: state.into(),
            state_reason: None,
            exit_code: Some(exit),
            nodes: Some("n[1-2]".into()),
            restart_cnt: None,
            end_time: Some(100),
            start_time: None,
            time_limit: None,
        }
    }

    #[test]
    fn limits_are_whole_minutes_rounded_up() {
        assert_eq!(slurm_minutes(Some(4)), "1");
        assert_eq!(slurm_minutes(Some(60)), "1");
        assert_eq!(slurm_minutes(Some(61)), "2");
        assert_eq!(slurm_minutes(Some(7200)), "120");
        assert_eq!(slurm_minutes(None), "UNLIMITED");
    }

    #[test]
    fn outcomes() {
        let placed = ["n1".to_string(), "n2".to_string()];
        let mut nodes = BTreeMap::new();
        nodes.insert("n1".to_string(), Node::new("n1", 8, 0));
        let mut n2 = Node::new("n2", 8, 0);
        n2.admin = NodeAdminState::Down;
        nodes.insert("n2".to_string(), n2);
        let o = |state: &str, exit: i64| outcome(7, true, &placed, &ended(state, exit), &nodes);
        assert_eq!(
            o("COMPLETED", 0),
            Observation::Finished {
                job: 7,
                at: 100,
                code: 0
            }
        );
        assert_eq!(
            o("FAILED", 768),
            Observation::Finished {
                job: 7,
                at: 100,
                code: 3
            }
        );
        assert_eq!(
            o("FAILED", 9),
            Observation::Finished {
                job: 7,
                at: 100,
                code: 137
            }
        );
        assert_eq!(
            o("FAILED", 0),
            Observation::Finished {
                job: 7,
                at: 100,
                code: 1
            }
        );
        assert_eq!(
            o("CANCELLED", 0),
            Observation::Finished {
                job: 7,
                at: 100,
                code: 143
            }
        );
        assert_eq!(
            o("TIMEOUT", 0),
            Observation::WalltimeExceeded {
                job: 7,
                at: 100,
                code: 143
            }
        );
        assert_eq!(
            o("NODE_FAIL", 0),
            Observation::NodeFailed {
                job: 7,
                at: 100,
                node: "n2".into()
            },
            "the node that is down"
        );
        assert_eq!(
            o("OUT_OF_MEMORY", 0),
            Observation::Finished {
                job: 7,
                at: 100,
                code: 137
            }
        );
    }

    #[test]
    fn tags() {
        let (tx, _rx) = std::sync::mpsc::channel();
        let w = Worker::new(SlurmConfig::new("s", "t@1", "/tmp/x"), tx);
        let tag = w.tag(12, "99.1");
        assert_eq!(tag, "arches:t@1:12:99.1");
        assert_eq!(w.parse_tag(&tag), Some((12, "99.1")));
        assert_eq!(w.parse_tag("arches:t@10:12:99.1"), None);
        assert_eq!(w.parse_tag("other"), None);
    }
}
