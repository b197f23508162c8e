//! The Slurm worker thread: every Slurm call happens here, in request order.

use std::collections::{BTreeMap, HashMap};
use std::fs;
use std::io;
use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::path::PathBuf;
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender};
use std::time::{Duration, Instant};

use arches_core::{JobId, NodeAdminState, Secs, Time};

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

/// Releases are sent in groups of at most this many job ids.
const RELEASE_BATCH: usize = 64;
/// slurmd drops a signal that arrives while it is still resuming the job
/// (seen with 22.05: `scancel --signal` 0.3 s after `scontrol resume` was
/// lost, 2 s after it arrived): signals wait this long after a resume.
const RESUME_SETTLE: Duration = Duration::from_secs(2);
/// A submitted job missing from `squeue` this long is reported vanished.
const MISSING_GRACE: Duration = Duration::from_secs(30);

/// One Arches job's current Slurm job.
struct Track {
    slurm: u64,
    nodes: Vec<String>,
    submitted: Instant,
    /// Seen running or suspended.
    started: bool,
    /// Suspended with a signal other than STOP (resume sends CONT).
    signal_suspended: bool,
    cancelled: bool,
    /// When it was last resumed (see [`RESUME_SETTLE`]).
    resumed: Option<Instant>,
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
    /// Last known node states.
    nodes: BTreeMap<String, NodeAdminState>,
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
                let t = Instant::now();
                self.poll();
                // A slow slurmctld is polled less often (at most half the time).
                next_poll = Instant::now() + self.cfg.poll_interval.max(2 * t.elapsed());
            }
        }
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

    fn handle(&mut self, request: Request) {
        match request {
            Request::Start(launch) => {
                self.seq += 1;
                let nonce = format!("{}.{}", now(), self.seq);
                self.submit(launch, nonce, Instant::now());
            }
            Request::Cancel(job) => {
                if let Some(i) = self.deferred.iter().position(|d| d.launch.job == job) {
                    self.deferred.remove(i);
                    self.emit(Observation::Finished {
                        job,
                        at: now(),
                        code: 128 + libc::SIGTERM,
                    });
                    return;
                }
                let Some(t) = self.jobs.get_mut(&job) else {
                    return self.failed(job, "cancel", format!("job {job} is not in Slurm"));
                };
                t.cancelled = true;
                let id = t.slurm.to_string();
                if let Err(e) = self.cfg.run("scancel", &[&id]) {
                    self.failed(job, "cancel", e);
                }
            }
            Request::Signal(job, sig) => {
                self.scancel_signal(job, sig, "signal");
            }
            Request::Suspend(job, sig) => match sig {
                Some(s) if s != libc::SIGSTOP => {
                    if self.scancel_signal(job, s, "suspend") {
                        if let Some(t) = self.jobs.get_mut(&job) {
                            t.signal_suspended = true;
                        }
                    }
                }
                _ => self.scontrol_job(job, "suspend"),
            },
            Request::Resume(job) => {
                let by_signal = self.jobs.get(&job).is_some_and(|t| t.signal_suspended);
                if by_signal {
                    if self.scancel_signal(job, libc::SIGCONT, "resume") {
                        if let Some(t) = self.jobs.get_mut(&job) {
                            t.signal_suspended = false;
                        }
                    }
                } else {
                    self.scontrol_job(job, "resume");
                    if let Some(t) = self.jobs.get_mut(&job) {
                        t.resumed = Some(Instant::now());
                    }
                }
            }
            Request::Requeue(job) => self.terminate_for_requeue(job, None),
            Request::Checkpoint(job, sig, timeout) => {
                self.scancel_signal(job, sig, "checkpoint");
                let deadline = Instant::now() + Duration::from_secs(timeout.max(0) as u64);
                self.terminate_for_requeue(job, Some(deadline));
            }
            Request::SetWalltime(job, walltime) => self.set_walltime(job, walltime),
            Request::Recover(active) => self.recover(&active),
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
        if let Some(wait) = t
            .resumed
            .map(|r| RESUME_SETTLE.saturating_sub(r.elapsed()))
            .filter(|w| !w.is_zero())
        {
            std::thread::sleep(wait);
        }
        let id = t.slurm.to_string();
        let arg = format!("--signal={sig}");
        match self.cfg.run("scancel", &["--full", &arg, &id]) {
            Ok(_) => true,
            Err(e) => {
                self.failed(job, operation, e);
                false
            }
        }
    }

    /// `scontrol suspend|resume ID`.
    fn scontrol_job(&mut self, job: JobId, what: &'static str) {
        let Some(t) = self.jobs.get(&job) else {
            return self.failed(job, what, format!("job {job} is not in Slurm"));
        };
        let id = t.slurm.to_string();
        if let Err(e) = self.cfg.run("scontrol", &[what, &id]) {
            self.failed(job, what, e);
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
        if deadline.is_none() {
            let id = t.slurm.to_string();
            if let Err(e) = self.cfg.run("scancel", &[&id]) {
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

    /// Submits one launch held and queues its release.
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
        if self.nodes.is_empty() {
            // The exclude list needs every node's name.
            self.poll_nodes();
        }
        let tag = self.tag(job, &nonce);
        match self.sbatch(&launch, &tag) {
            Ok(slurm) => {
                tracing::debug!(job, slurm, "submitted to Slurm");
                self.to_release.push(slurm);
                self.jobs.insert(
                    job,
                    Track {
                        slurm,
                        nodes: launch.nodes.iter().map(|n| n.name.clone()).collect(),
                        submitted: Instant::now(),
                        started: false,
                        signal_suspended: false,
                        cancelled: false,
                        resumed: None,
                        requeue: false,
                        kill_at: None,
                        limit: launch.walltime.filter(|w| *w > 0),
                    },
                );
            }
            Err(e) if unreachable(&e) && first_try.elapsed() < self.cfg.retry => {
                tracing::warn!(job, "slurmctld unreachable, start retried: {e}");
                self.deferred.push(Deferred {
                    launch,
                    nonce,
                    first_try,
                });
            }
            Err(e) => {
                let _ = fs::remove_dir_all(self.job_dir(job));
                self.emit(Observation::StartFailed {
                    job,
                    at: now(),
                    message: e,
                });
            }
        }
    }

    /// Writes the node file and script, runs `sbatch --hold`; the Slurm job id.
    fn sbatch(&self, launch: &Launch, tag: &str) -> Result<u64, String> {
        let job = launch.job;
        let exec = &launch.exec;
        let dir = self.job_dir(job);
        let io_err = |what: &str, e: io::Error| format!("{what} {}: {e}", dir.display());
        let _ = fs::remove_dir_all(&dir);
        fs::DirBuilder::new()
            .mode(0o711)
            .create(&dir)
            .map_err(|e| io_err("cannot create", e))?;
        let nodefile = dir.join("nodefile");
        let mut lines = String::new();
        for node in &launch.nodes {
            for _ in 0..node.procs {
                lines.push_str(&node.name);
                lines.push('\n');
            }
        }
        fs::write(&nodefile, lines).map_err(|e| io_err("cannot write the node file in", e))?;
        fs::set_permissions(&nodefile, fs::Permissions::from_mode(0o644))
            .map_err(|e| io_err("cannot chmod the node file in", e))?;
        let script = dir.join("script");
        fs::write(&script, script_text(exec))
            .map_err(|e| io_err("cannot write the script in", e))?;

        let lf = crate::local::LaunchFile::new(launch, 0);
        let env = crate::local::environment(&lf, &nodefile.to_string_lossy());
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
        args.extend(layout(launch));
        if let Some(w) = launch.walltime.filter(|w| *w > 0) {
            args.push(format!("--time={}", slurm_minutes(Some(w))));
        }
        args.push(format!("--chdir={}", exec.workdir));
        args.push(format!("--output={}", exec.stdout));
        if !exec.join && exec.stderr != exec.stdout && !exec.stderr.is_empty() {
            args.push(format!("--error={}", exec.stderr));
        }
        // SAFETY: geteuid cannot fail.
        let euid = unsafe { libc::geteuid() };
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
        cmd.args(&args);
        let out = output(&mut cmd, "sbatch")?;
        let id = out.trim().split(';').next().unwrap_or("");
        id.parse()
            .map_err(|_| format!("sbatch printed no job id: {out:?}"))
    }

    /// `scontrol release` of the jobs submitted this round.
    fn release(&mut self) {
        if self.to_release.is_empty() {
            return;
        }
        let ids: Vec<String> = self.to_release.drain(..).map(|i| i.to_string()).collect();
        let list = ids.join(",");
        for attempt in 0.. {
            match self.cfg.run("scontrol", &["release", &list]) {
                Ok(_) => return,
                Err(e) if unreachable(&e) && attempt < 20 => {
                    std::thread::sleep(Duration::from_millis(500));
                }
                Err(e) => {
                    // Released one by one so one bad id does not hold the others;
                    // still-held jobs are released again by the next poll.
                    tracing::warn!("scontrol release {list}: {e}");
                    for id in &ids {
                        let _ = self.cfg.run("scontrol", &["release", id]);
                    }
                    return;
                }
            }
        }
    }

    /// `squeue --json` (all jobs); `None` when slurmctld does not answer.
    fn squeue(&self) -> Option<Vec<SlurmJob>> {
        match self
            .cfg
            .run("squeue", &["--json"])
            .and_then(|t| json::parse_jobs(&t))
        {
            Ok(jobs) => Some(jobs),
            Err(e) => {
                tracing::warn!("Slurm poll skipped: {e}");
                None
            }
        }
    }

    fn poll_nodes(&mut self) {
        let text = match self.cfg.run("sinfo", &["--json"]) {
            Ok(t) => t,
            Err(e) => return tracing::warn!("Slurm node poll skipped: {e}"),
        };
        let Ok(nodes) = json::parse_nodes(&text) else {
            return;
        };
        for n in nodes {
            let admin = n.admin();
            if self.nodes.get(&n.name) != Some(&admin) {
                tracing::info!(node = n.name, ?admin, "Slurm node state");
                self.nodes.insert(n.name.clone(), admin);
                self.emit(Observation::NodeChanged {
                    node: n.to_node(&self.cfg.partition),
                });
            }
        }
    }

    /// The cheap poll: `squeue -o` text (about 8x cheaper than `--json`
    /// with 1,000 jobs), without exit statuses.
    fn squeue_fast(&self) -> Option<Vec<SlurmJob>> {
        match self
            .cfg
            .run("squeue", &["-h", "-t", "all", "-o", json::SQUEUE_FORMAT])
        {
            Ok(text) => Some(json::parse_jobs_text(&text)),
            Err(e) => {
                tracing::warn!("Slurm poll skipped: {e}");
                None
            }
        }
    }

    fn poll(&mut self) {
        self.poll_nodes();
        let Some(mut all) = self.squeue_fast() else {
            return;
        };
        let ended = |jobs: &[SlurmJob], ids: &std::collections::HashSet<u64>| {
            jobs.iter()
                .any(|j| ids.contains(&j.job_id) && j.phase() == Phase::Ended)
        };
        let ours: std::collections::HashSet<u64> = self.jobs.values().map(|t| t.slurm).collect();
        // (A requeued job's end needs no exit status: the text poll will do.)
        if ended(&all, &ours) {
            // Exit statuses and end times are only in the JSON.
            let Some(full) = self.squeue() else { return };
            all = full;
        }
        let by_id: HashMap<u64, &SlurmJob> = all.iter().map(|j| (j.job_id, j)).collect();
        // Deferred starts: adopt a submit whose answer was lost, else retry.
        for d in std::mem::take(&mut self.deferred) {
            let tag = self.tag(d.launch.job, &d.nonce);
            match all
                .iter()
                .find(|j| j.comment.as_deref() == Some(tag.as_str()))
            {
                Some(j) => {
                    self.to_release.push(j.job_id);
                    self.jobs.insert(
                        d.launch.job,
                        Track {
                            slurm: j.job_id,
                            nodes: d.launch.nodes.iter().map(|n| n.name.clone()).collect(),
                            submitted: Instant::now(),
                            started: false,
                            signal_suspended: false,
                            cancelled: false,
                            resumed: None,
                            requeue: false,
                            kill_at: None,
                            limit: d.launch.walltime.filter(|w| *w > 0),
                        },
                    );
                }
                None => self.submit(d.launch, d.nonce, d.first_try),
            }
        }
        let mut ended = Vec::new();
        let mut to_cancel = Vec::new();
        for (&job, t) in self.jobs.iter_mut() {
            if t.requeue {
                // Terminating for a requeue: reported once Slurm has ended it.
                let gone = by_id
                    .get(&t.slurm)
                    .is_none_or(|j| j.phase() == Phase::Ended);
                if gone {
                    ended.push((job, Observation::Requeued { job, at: now() }));
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
                if t.submitted.elapsed() > MISSING_GRACE {
                    ended.push((job, Observation::Vanished { job, at: now() }));
                }
                continue;
            };
            match sj.phase() {
                Phase::Running | Phase::Suspended => t.started = true,
                Phase::Completing => {}
                Phase::Pending => {
                    let reason = sj.state_reason.as_deref().unwrap_or("");
                    if t.started {
                        // Slurm requeued it on its own (node failure).
                        to_cancel.push(t.slurm);
                        let node = t.nodes.first().cloned().unwrap_or_default();
                        ended.push((
                            job,
                            Observation::NodeFailed {
                                job,
                                at: now(),
                                node,
                            },
                        ));
                    } else if matches!(
                        reason,
                        "BadConstraints" | "PartitionConfig" | "InvalidAccount" | "InvalidQOS"
                    ) {
                        to_cancel.push(t.slurm);
                        ended.push((
                            job,
                            Observation::StartFailed {
                                job,
                                at: now(),
                                message: format!("Slurm cannot run it as placed: {reason}"),
                            },
                        ));
                    } else if reason == "JobHeldUser" || reason == "JobHeldAdmin" {
                        // Held but never released (e.g. a lost release).
                        self.to_release.push(t.slurm);
                    }
                }
                Phase::Ended => {
                    let o = outcome(job, t, sj, &self.nodes);
                    ended.push((job, o));
                }
            }
        }
        for id in to_cancel {
            let _ = self.cfg.run("scancel", &[&id.to_string()]);
        }
        for (job, o) in ended {
            self.jobs.remove(&job);
            let _ = fs::remove_dir_all(self.job_dir(job));
            self.emit(o);
        }
        self.release();
    }

    /// After a daemon restart: adopt the newest Slurm job tagged for each
    /// active job, cancel tagged jobs nobody owns, report the missing ones.
    fn recover(&mut self, active: &[JobId]) {
        self.poll_nodes();
        let deadline = Instant::now() + self.cfg.retry;
        let all = loop {
            if let Some(all) = self.squeue() {
                break all;
            }
            if Instant::now() >= deadline {
                tracing::warn!("Slurm unreachable: active jobs left as they are");
                return;
            }
            std::thread::sleep(Duration::from_millis(500));
        };
        let mut newest: BTreeMap<JobId, &SlurmJob> = BTreeMap::new();
        let mut ours = Vec::new();
        for j in &all {
            let Some((job, _)) = j.comment.as_deref().and_then(|c| self.parse_tag(c)) else {
                continue;
            };
            ours.push((job, j));
            if newest.get(&job).is_none_or(|n| n.job_id < j.job_id) {
                newest.insert(job, j);
            }
        }
        for &job in active {
            if self.jobs.contains_key(&job) {
                continue;
            }
            let Some(sj) = newest.get(&job) else {
                self.emit(Observation::Vanished { job, at: now() });
                continue;
            };
            self.jobs.insert(
                job,
                Track {
                    slurm: sj.job_id,
                    nodes: sj.node_names(),
                    submitted: Instant::now(),
                    started: matches!(sj.phase(), Phase::Running | Phase::Suspended),
                    signal_suspended: false,
                    cancelled: false,
                    resumed: None,
                    requeue: false,
                    kill_at: None,
                    limit: sj.time_limit.map(|m| m * 60),
                },
            );
            if sj.phase() != Phase::Ended {
                self.emit(Observation::Running { job, at: now() });
            }
        }
        for (job, j) in ours {
            let owned = self.jobs.get(&job).is_some_and(|t| t.slurm == j.job_id);
            if !owned && j.phase() != Phase::Ended {
                tracing::info!(job, slurm = j.job_id, "cancelling an orphaned Slurm job");
                let _ = self.cfg.run("scancel", &[&j.job_id.to_string()]);
            }
        }
    }
}

/// The report for a Slurm job that ended.
fn outcome(
    job: JobId,
    t: &Track,
    sj: &SlurmJob,
    nodes: &BTreeMap<String, NodeAdminState>,
) -> Observation {
    let at = sj.end_time.filter(|&e| e > 0).unwrap_or_else(now);
    let code = decode_wait_status(sj.exit_code.unwrap_or(0));
    let or = |default: i32| if code == 0 { default } else { code };
    match sj.job_state.as_str() {
        "COMPLETED" => Observation::Finished { job, at, code },
        "CANCELLED" if t.cancelled => Observation::Finished {
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
                t.nodes.clone()
            } else {
                names
            };
            let node = names
                .iter()
                .find(|n| nodes.get(*n).is_some_and(|s| *s != NodeAdminState::Up))
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

/// `--ntasks...` options reproducing the engine's tasks and processors per node
/// as closely as Slurm allows (an even layout is exact).
fn layout(launch: &Launch) -> Vec<String> {
    let nodes = &launch.nodes;
    let tasks: u32 = nodes.iter().map(|n| n.tasks.max(1)).sum();
    let procs: u32 = nodes.iter().map(|n| n.procs.max(1)).sum();
    let first = &nodes[0];
    let even = nodes
        .iter()
        .all(|n| n.tasks == first.tasks && n.procs == first.procs);
    let per_task =
        |n: &crate::LaunchNode| (n.tasks > 0 && n.procs % n.tasks == 0).then(|| n.procs / n.tasks);
    if even {
        if let Some(c) = per_task(first) {
            return vec![
                format!("--ntasks={tasks}"),
                format!("--ntasks-per-node={}", first.tasks),
                format!("--cpus-per-task={c}"),
            ];
        }
    }
    let ratio = per_task(first);
    if ratio.is_some() && nodes.iter().all(|n| per_task(n) == ratio) {
        return vec![
            format!("--ntasks={tasks}"),
            format!("--cpus-per-task={}", ratio.unwrap_or(1)),
        ];
    }
    vec![format!("--ntasks={procs}"), "--cpus-per-task=1".into()]
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
                })
                .collect(),
            exec: ExecSpec::default(),
            walltime: None,
            restarted: false,
        }
    }

    #[test]
    fn layouts() {
        assert_eq!(
            layout(&launch(&[(2, 2), (2, 2)])),
            ["--ntasks=4", "--ntasks-per-node=2", "--cpus-per-task=1"]
        );
        assert_eq!(
            layout(&launch(&[(1, 4)])),
            ["--ntasks=1", "--ntasks-per-node=1", "--cpus-per-task=4"]
        );
        assert_eq!(
            layout(&launch(&[(2, 2), (1, 1)])),
            ["--ntasks=3", "--cpus-per-task=1"]
        );
        assert_eq!(
            layout(&launch(&[(2, 3), (1, 1)])),
            ["--ntasks=4", "--cpus-per-task=1"]
        );
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
        let t = Track {
            slurm: 5,
            nodes: vec!["n1".into(), "n2".into()],
            submitted: Instant::now(),
            started: true,
            signal_suspended: false,
            cancelled: false,
            resumed: None,
            requeue: false,
            kill_at: None,
            limit: None,
        };
        let mut nodes = BTreeMap::new();
        nodes.insert("n1".to_string(), NodeAdminState::Up);
        nodes.insert("n2".to_string(), NodeAdminState::Down);
        let o = |state: &str, exit: i64| outcome(7, &t, &ended(state, exit), &nodes);
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
