//! The per-job supervisor process (`moab __supervise <job dir>`).
//!
//! It runs in its own session so the job survives the daemon: it reads
//! `launch.json`, prepares the script and `PBS_NODEFILE`, forks the job in its
//! own process group (as the job's user when running as root), enforces the
//! wall-clock limit (time spent suspended does not count; `walltime` control
//! lines change it), obeys the control
//! commands the daemon appends to `ctl` (announced with SIGUSR1), and finally
//! records the outcome durably in `status` and exits. SIGTERM or SIGINT to the
//! supervisor cancels the job. The job ends when its leader (the script's
//! interpreter) exits; processes it leaves behind in its process group are
//! killed then.
//!
//! The supervisor's working directory is its job directory, so it keeps
//! writing to the right place even if the daemon renames that directory
//! (which it does when the same job is launched again after a requeue).

use std::fs::{self, File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use std::os::fd::AsRawFd;

use super::exec::{Credentials, ExecPlan, Prepared};
use super::freezer::Freezer;
use super::spool::{self, Control, LaunchFile, Pids, Status};
use super::sys::{self, SignalFd, SUPERVISOR_SIGNALS};
use super::terminal::{self, Relay};

/// Exit status of a supervisor called with bad arguments or a job directory
/// it cannot enter (nothing is recorded then).
const EXIT_USAGE: u8 = 2;
/// Exit status of a supervisor that could not record the job's outcome.
const EXIT_UNRECORDED: u8 = 3;

/// Entry point of the supervisor: `args` are the arguments after
/// `__supervise`, i.e. exactly one, the absolute path of the job's spool
/// directory. Returns success once the outcome is recorded.
pub fn supervise_main(args: &[String]) -> ExitCode {
    let [dir] = args else {
        eprintln!("usage: moab __supervise <job spool directory>");
        return ExitCode::from(EXIT_USAGE);
    };
    let dir = Path::new(dir);
    // Whatever binary runs it, the supervisor is not the daemon (`pkill moab`).
    let _ = sys::set_process_name(super::SUPERVISOR_NAME);
    sys::close_inherited_fds();
    if let Err(e) = std::env::set_current_dir(dir) {
        eprintln!("supervisor: cannot enter {}: {e}", dir.display());
        return ExitCode::from(EXIT_USAGE);
    }
    // The status's room on disk, before anything can fill the disk up: a
    // job that ends on a full disk keeps its real outcome.
    if let Err(e) = spool::reserve_status(Path::new(".")) {
        eprintln!("supervisor: cannot reserve the status file: {e}");
    }
    let status = match Supervisor::start(dir) {
        Ok(mut sup) => sup.run(),
        Err(message) => Status::Failed {
            message,
            at: Some(epoch_now()),
        },
    };
    record(dir, &status)
}

/// Records the outcome durably. For a job that ran, a failure that may
/// pass (no space left, out of descriptors or memory) is retried, ever less
/// often, for as long as it takes: the supervisor owes the daemon the job's
/// exit status (the job shows running until then). A start that failed is
/// tried once: without its status (and without a pid file) the daemon
/// still knows the job never started.
fn record(dir: &Path, status: &Status) -> ExitCode {
    let mut wait = Duration::from_secs(1);
    loop {
        let recorded = spool::write_status(Path::new("."), status.render().as_bytes())
            // The job directory's own entry in the spool: nothing else
            // flushes it (the daemon does not sync the spool). A spool this
            // supervisor may not read (a test's) is left to the file
            // system's ordering.
            .and_then(|()| match File::open("..") {
                Ok(spool) => spool.sync_all(),
                Err(e) => {
                    eprintln!("supervisor: cannot open the spool directory to flush it: {e}");
                    Ok(())
                }
            });
        let e = match recorded {
            Ok(()) => return ExitCode::SUCCESS,
            Err(e) => e,
        };
        eprintln!(
            "supervisor: cannot record the status in {}: {e}",
            dir.display()
        );
        let passing = matches!(
            e.raw_os_error(),
            Some(libc::ENOSPC | libc::EDQUOT | libc::EMFILE | libc::ENFILE | libc::ENOMEM)
                | Some(libc::EAGAIN | libc::EINTR)
        );
        if !passing || matches!(status, Status::Failed { .. }) {
            return ExitCode::from(EXIT_UNRECORDED);
        }
        std::thread::sleep(wait);
        wait = (wait * 2).min(Duration::from_secs(30));
    }
}

/// The wall clock in epoch seconds (when an outcome happened).
fn epoch_now() -> arches_core::Time {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as arches_core::Time)
}

/// Wall-clock accounting that stops while the job is suspended.
struct Clock {
    limit: Option<Duration>,
    used: Duration,
    since: Option<Instant>,
}

impl Clock {
    fn pause(&mut self, now: Instant) {
        if let Some(since) = self.since.take() {
            self.used += now.saturating_duration_since(since);
        }
    }

    fn resume(&mut self, now: Instant) {
        self.since.get_or_insert(now);
    }

    fn deadline(&self) -> Option<Instant> {
        Some(self.since? + self.limit?.saturating_sub(self.used))
    }
}

struct Supervisor {
    signals: SignalFd,
    grace: Duration,
    /// The job leader's pid, also its process group id.
    pgid: i32,
    clock: Clock,
    suspended: bool,
    /// When SIGKILL follows the SIGTERM already sent (`None`: not terminating).
    kill_at: Option<Instant>,
    killed: bool,
    checkpoint_until: Option<Instant>,
    walltime_exceeded: bool,
    ctl_offset: u64,
    /// The job's cgroup, when the system allows one.
    freezer: Option<Freezer>,
    /// Suspended by freezing the cgroup (not by a signal).
    frozen: bool,
    /// An interactive job's terminal relay (`terminal`).
    relay: Option<Relay>,
}

impl Supervisor {
    /// Set up, prepare and fork the job; `Err` is the start-failure reason.
    fn start(dir: &Path) -> Result<Supervisor, String> {
        let signals = SignalFd::new(&SUPERVISOR_SIGNALS)
            .map_err(|e| format!("cannot set up signals: {e}"))?;
        let text = fs::read_to_string(spool::LAUNCH)
            .map_err(|e| format!("cannot read {}: {e}", dir.join(spool::LAUNCH).display()))?;
        let launch: LaunchFile =
            serde_json::from_str(&text).map_err(|e| format!("bad {}: {e}", spool::LAUNCH))?;
        let owner = (sys::euid() == 0).then_some((launch.uid, launch.gid));
        let pty = if launch.interactive {
            Some(terminal::open_pty(owner.map(|o| o.0))?)
        } else {
            None
        };
        let prepared = prepare(dir, &launch, pty.as_ref().map(|p| p.slave.as_raw_fd()))?;
        let freezer = Freezer::create(&format!("arches-job{}-{}", launch.job, std::process::id()));
        let procs = freezer.as_ref().and_then(|f| f.procs_file().ok());
        let spawned = prepared.spawn(procs.as_ref().map(|f| f.as_raw_fd()));
        drop(procs);
        let pgid = match spawned {
            Ok(pgid) => pgid,
            Err(e) => {
                if let Some(f) = &freezer {
                    f.remove();
                }
                return Err(e);
            }
        };
        // An interactive job: its terminal, relayed to its owner.
        let relay = match pty {
            Some(pty) => {
                drop(pty.slave);
                let relay = terminal::listen(owner)
                    .and_then(|l| Relay::start(l, pty.master, launch.uid, pgid));
                match relay {
                    Ok(r) => Some(r),
                    Err(e) => {
                        let _ = sys::kill_group(pgid, libc::SIGKILL);
                        let _ = sys::wait(pgid);
                        if let Some(f) = &freezer {
                            f.remove();
                        }
                        return Err(e);
                    }
                }
            }
            None => None,
        };
        // Only a cgroup the leader is in is any use.
        let freezer = match freezer {
            Some(f) if f.contains(pgid) => {
                let _ = spool::write_private(
                    Path::new("."),
                    spool::CGROUP,
                    super::freezer::render(&f).as_bytes(),
                );
                Some(f)
            }
            Some(f) => {
                f.remove();
                None
            }
            None => None,
        };
        let now = Instant::now();
        let pids = Pids {
            supervisor: i32::try_from(std::process::id()).unwrap_or(i32::MAX),
            job: pgid,
        };
        if let Err(e) = spool::write_private(Path::new("."), spool::PID, pids.render().as_bytes()) {
            // Without it a restarted daemon cannot find the job: do not run it.
            let _ = sys::kill_group(pgid, libc::SIGKILL);
            let _ = sys::wait(pgid);
            if let Some(f) = &freezer {
                f.remove();
            }
            return Err(format!("cannot write the pid file: {e}"));
        }
        Ok(Supervisor {
            signals,
            grace: Duration::from_secs(launch.kill_grace_secs),
            pgid,
            clock: Clock {
                limit: launch
                    .walltime
                    .map(|w| Duration::from_secs(w.max(0).unsigned_abs())),
                used: Duration::ZERO,
                since: Some(now),
            },
            suspended: false,
            kill_at: None,
            killed: false,
            checkpoint_until: None,
            walltime_exceeded: false,
            ctl_offset: 0,
            freezer,
            frozen: false,
            relay,
        })
    }

    /// Watch the job until it ends; its recorded outcome.
    fn run(&mut self) -> Status {
        self.read_controls(Instant::now());
        loop {
            let now = Instant::now();
            if let Ok(Some(status)) = sys::try_wait(self.pgid) {
                // Leftover processes of the job go with it, also those that
                // left its process group (its cgroup).
                let _ = sys::kill_group(self.pgid, libc::SIGKILL);
                // What the job's processes used: its whole cgroup when it
                // has one, else what the job waited for.
                let cpu_ms = self
                    .freezer
                    .as_ref()
                    .and_then(|f| f.cpu_ms())
                    .or_else(sys::children_cpu_ms);
                if let Some(f) = &self.freezer {
                    f.remove();
                }
                let code = sys::exit_code(status);
                if let Some(relay) = self.relay.take() {
                    relay.finish(code);
                }
                return Status::Exited {
                    code,
                    walltime_exceeded: self.walltime_exceeded,
                    at: Some(epoch_now()),
                    cpu_ms,
                };
            }
            self.check_deadlines(now);
            let timeout = self.next_deadline().map_or(-1, |at| {
                let wait = at.saturating_duration_since(now).as_millis() + 1;
                i32::try_from(wait).unwrap_or(i32::MAX)
            });
            if self.signals.wait(timeout).is_err() {
                std::thread::sleep(Duration::from_millis(100));
            }
            let now = Instant::now();
            for signal in self.signals.drain().unwrap_or_default() {
                match signal {
                    libc::SIGUSR1 => self.read_controls(now),
                    libc::SIGTERM | libc::SIGINT => self.terminate(now),
                    _ => {}
                }
            }
        }
    }

    fn check_deadlines(&mut self, now: Instant) {
        if let Some(kill_at) = self.kill_at {
            if !self.killed && now >= kill_at {
                let _ = sys::kill_group(self.pgid, libc::SIGKILL);
                if let Some(f) = &self.freezer {
                    f.kill_all();
                }
                self.killed = true;
            }
        }
        if self.checkpoint_until.is_some_and(|t| now >= t) {
            self.checkpoint_until = None;
            self.terminate(now);
        }
        if self.kill_at.is_none() && self.clock.deadline().is_some_and(|d| now >= d) {
            self.walltime_exceeded = true;
            self.terminate(now);
        }
    }

    fn next_deadline(&self) -> Option<Instant> {
        let kill = self.kill_at.filter(|_| !self.killed);
        let walltime = self.clock.deadline().filter(|_| self.kill_at.is_none());
        [kill, self.checkpoint_until, walltime]
            .into_iter()
            .flatten()
            .min()
    }

    /// SIGTERM (and SIGCONT, in case it is stopped) now, SIGKILL after the grace.
    fn terminate(&mut self, now: Instant) {
        if self.kill_at.is_some() {
            return;
        }
        self.thaw();
        if self.relay.is_some() {
            // An interactive shell ignores SIGTERM: hang up its terminal.
            let _ = sys::kill_group(self.pgid, libc::SIGHUP);
        }
        let _ = sys::kill_group(self.pgid, libc::SIGTERM);
        let _ = sys::kill_group(self.pgid, libc::SIGCONT);
        if let Some(f) = &self.freezer {
            // Processes that left the process group are told too (only
            // they: a member told twice may run its handler twice).
            for pid in f.outside_group(self.pgid) {
                let _ = sys::kill(pid, libc::SIGTERM);
            }
        }
        self.clock.pause(now);
        self.kill_at = Some(now + self.grace);
    }

    /// Apply the control lines appended since the last read.
    fn read_controls(&mut self, now: Instant) {
        let Ok(mut f) = File::open(spool::CTL) else {
            return;
        };
        let mut text = String::new();
        if f.seek(SeekFrom::Start(self.ctl_offset)).is_err() || f.read_to_string(&mut text).is_err()
        {
            return;
        }
        let Some(end) = text.rfind('\n') else {
            return;
        };
        self.ctl_offset += end as u64 + 1;
        for line in text[..end].lines() {
            match Control::parse(line) {
                Ok(control) => self.apply(control, now),
                Err(e) => eprintln!("supervisor: {e}"),
            }
        }
    }

    fn apply(&mut self, control: Control, now: Instant) {
        match control {
            Control::Cancel | Control::Requeue => self.terminate(now),
            Control::Signal(signal) => {
                let _ = sys::kill_group(self.pgid, signal);
            }
            Control::Suspend(signal) => {
                if self.kill_at.is_some() {
                    return;
                }
                // SIGSTOP (the default) freezes the whole cgroup when there
                // is one; a configured SUSPENDSIG is for the job to handle.
                let frozen = signal == libc::SIGSTOP
                    && self
                        .freezer
                        .as_ref()
                        .is_some_and(|f| f.freeze(true).is_ok());
                if frozen || sys::kill_group(self.pgid, signal).is_ok() {
                    self.frozen = frozen;
                    self.suspended = true;
                    self.clock.pause(now);
                }
            }
            Control::Resume => {
                self.thaw();
                let _ = sys::kill_group(self.pgid, libc::SIGCONT);
                if self.suspended && self.kill_at.is_none() {
                    self.suspended = false;
                    self.clock.resume(now);
                }
            }
            Control::Walltime(limit) => {
                // Total run time, as at the start; an exceeded limit ends
                // the job at the next deadline check (now).
                self.clock.limit = limit.map(|w| Duration::from_secs(w.max(0).unsigned_abs()));
            }
            Control::Checkpoint { signal, timeout } => {
                self.thaw();
                let _ = sys::kill_group(self.pgid, signal);
                if self.suspended {
                    let _ = sys::kill_group(self.pgid, libc::SIGCONT);
                    self.suspended = false;
                    self.clock.resume(now);
                }
                let until = now + Duration::from_secs(timeout.max(0).unsigned_abs());
                self.checkpoint_until = Some(self.checkpoint_until.map_or(until, |t| t.min(until)));
            }
        }
    }
}

impl Supervisor {
    /// Thaws a frozen cgroup (before resuming or terminating the job).
    fn thaw(&mut self) {
        if self.frozen {
            if let Some(f) = &self.freezer {
                let _ = f.freeze(false);
            }
            self.frozen = false;
        }
    }
}

/// Write the script and node file, check the user, build the environment.
fn prepare(dir: &Path, launch: &LaunchFile, tty: Option<i32>) -> Result<Prepared, String> {
    let euid = sys::euid();
    let credentials = if euid == 0 {
        Some(Credentials {
            uid: launch.uid,
            gid: launch.gid,
            groups: launch.groups.clone(),
        })
    } else if launch.uid != euid {
        return Err(format!(
            "the supervisor runs as uid {euid}, not root: it cannot run a job as user {} (uid {})",
            launch.user, launch.uid
        ));
    } else {
        None
    };
    let owner = credentials.as_ref().map(|c| (c.uid, c.gid));
    let script = dir.join(spool::SCRIPT);
    write_owned(spool::SCRIPT, launch.script.as_bytes(), 0o700, owner)?;
    let nodefile = dir.join(spool::NODEFILE);
    let lines = super::resize::nodefile_lines(&launch.nodes);
    write_owned(spool::NODEFILE, lines.as_bytes(), 0o644, owner)?;
    let gpus = gpu_lines(launch);
    if !gpus.is_empty() {
        write_owned(spool::GPUFILE, gpus.as_bytes(), 0o644, owner)?;
    }

    let script = script.to_string_lossy().into_owned();
    let (program, mut argv) = match &launch.shell {
        Some(shell) => (shell.clone(), vec![shell.clone(), script]),
        None if launch.script.starts_with("#!") => (script.clone(), vec![script]),
        None => ("/bin/sh".to_string(), vec!["/bin/sh".to_string(), script]),
    };
    argv.extend(launch.args.iter().cloned());
    let mut env = environment(launch, &nodefile.to_string_lossy());
    gpu_environment(
        launch,
        &dir.join(spool::GPUFILE).to_string_lossy(),
        &mut env,
    );
    Prepared::new(ExecPlan {
        program: &program,
        argv: &argv,
        env: &env,
        workdir: &launch.workdir,
        stdout: &launch.stdout,
        // The same file twice would be truncated twice and overwritten: join.
        stderr: (!launch.join && launch.stderr != launch.stdout).then_some(launch.stderr.as_str()),
        credentials,
        umask: launch.umask,
        tty,
    })
}

/// The job environment: `ExecSpec.env` plus the allocation-dependent variables
/// (which replace any of the same name). `MOAB_RESTARTED=1` is set when the
/// job was requeued from a checkpoint.
pub(crate) fn environment(launch: &LaunchFile, nodefile: &str) -> Vec<(String, String)> {
    let mut env = launch.env.clone();
    let mut set = |key: &str, value: String| match env.iter_mut().find(|(k, _)| k == key) {
        Some(slot) => slot.1 = value,
        None => env.push((key.to_string(), value)),
    };
    set("PBS_NODEFILE", nodefile.to_string());
    for (k, v) in super::resize::allocation_env(&launch.nodes) {
        set(&k, v);
    }
    set("PBS_TASKNUM", "1".to_string());
    set("PBS_NODENUM", "0".to_string());
    // Where a malleable job finds its new allocation when it is resized.
    let dir = std::path::Path::new(nodefile)
        .parent()
        .map(|d| {
            d.join(super::resize::RESIZE_ENV)
                .to_string_lossy()
                .into_owned()
        })
        .unwrap_or_default();
    set("MOAB_RESIZEFILE", dir);
    if launch.restarted {
        set("MOAB_RESTARTED", "1".to_string());
    }
    for key in ["PBS_JOBID", "MOAB_JOBID"] {
        if !env.iter().any(|(k, _)| k == key) {
            env.push((key.to_string(), launch.job.to_string()));
        }
    }
    env
}

/// `PBS_GPUFILE`'s lines: `<host>-gpu<index>` for every GPU given.
pub(crate) fn gpu_lines(launch: &LaunchFile) -> String {
    let mut out = String::new();
    for n in &launch.nodes {
        for (_, _, idx) in n.gres.iter().filter(|g| g.0 == "gpu") {
            for i in idx {
                out.push_str(&format!("{}-gpu{i}\n", n.name));
            }
        }
    }
    out
}

/// The GPUs a job was given: `CUDA_VISIBLE_DEVICES` (the indices on the
/// first node, where the script runs) and `PBS_GPUFILE` (Torque's file of
/// every GPU of the job). A job given no GPU sees no inherited
/// `CUDA_VISIBLE_DEVICES`: it names devices the job does not hold.
pub(crate) fn gpu_environment(launch: &LaunchFile, gpufile: &str, env: &mut Vec<(String, String)>) {
    env.retain(|(k, _)| k != "CUDA_VISIBLE_DEVICES" && k != "PBS_GPUFILE");
    let first: Option<Vec<String>> = launch.nodes.first().and_then(|n| {
        n.gres
            .iter()
            .find(|g| g.0 == "gpu" && !g.2.is_empty())
            .map(|g| g.2.iter().map(u32::to_string).collect())
    });
    if let Some(idx) = first {
        env.push(("CUDA_VISIBLE_DEVICES".to_string(), idx.join(",")));
    }
    if !gpu_lines(launch).is_empty() {
        env.push(("PBS_GPUFILE".to_string(), gpufile.to_string()));
    }
}

/// Create or replace a file in the job directory with this mode and owner.
fn write_owned(
    name: &str,
    bytes: &[u8],
    mode: u32,
    owner: Option<(u32, u32)>,
) -> Result<(), String> {
    let fail = |e: std::io::Error| format!("cannot write {name}: {e}");
    let _ = fs::remove_file(name);
    let mut f = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(mode)
        .open(name)
        .map_err(fail)?;
    f.write_all(bytes).map_err(fail)?;
    if let Some((uid, gid)) = owner {
        std::os::unix::fs::fchown(&f, Some(uid), Some(gid)).map_err(fail)?;
    }
    f.set_permissions(std::os::unix::fs::PermissionsExt::from_mode(mode))
        .map_err(fail)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::local::spool::NodeEntry;

    #[test]
    fn clock_does_not_count_paused_time() {
        let t0 = Instant::now();
        let secs = Duration::from_secs;
        let mut clock = Clock {
            limit: Some(secs(10)),
            used: Duration::ZERO,
            since: Some(t0),
        };
        assert_eq!(clock.deadline(), Some(t0 + secs(10)));
        clock.pause(t0 + secs(4));
        assert_eq!(clock.deadline(), None, "no deadline while suspended");
        clock.resume(t0 + secs(100));
        clock.resume(t0 + secs(200));
        assert_eq!(clock.deadline(), Some(t0 + secs(106)));
        clock.limit = None;
        assert_eq!(clock.deadline(), None);
    }

    fn launch() -> LaunchFile {
        LaunchFile {
            job: 42,
            name: "j".into(),
            nodes: vec![
                NodeEntry {
                    name: "a".into(),
                    tasks: 1,
                    procs: 2,
                    gres: vec![("gpu".into(), 2, vec![1, 3])],
                },
                NodeEntry {
                    name: "b".into(),
                    tasks: 2,
                    procs: 2,
                    gres: vec![("gpu".into(), 1, vec![0]), ("lic".into(), 5, vec![])],
                },
            ],
            script: String::new(),
            shell: None,
            workdir: "/".into(),
            stdout: "/dev/null".into(),
            stderr: "/dev/null".into(),
            join: false,
            env: vec![
                ("PATH".into(), "/bin".into()),
                ("PBS_NP".into(), "999".into()),
                ("PBS_JOBID".into(), "42.host".into()),
            ],
            user: "u".into(),
            uid: 1,
            gid: 1,
            groups: vec![],
            walltime: None,
            restarted: true,
            kill_grace_secs: 5,
            args: Vec::new(),
            umask: None,
            interactive: false,
        }
    }

    #[test]
    fn gpus_given_are_the_jobs_devices() {
        let l = launch();
        assert_eq!(gpu_lines(&l), "a-gpu1\na-gpu3\nb-gpu0\n");
        let mut env = vec![("CUDA_VISIBLE_DEVICES".to_string(), "0,1,2,3".to_string())];
        gpu_environment(&l, "/spool/42/gpufile", &mut env);
        assert_eq!(
            env,
            vec![
                ("CUDA_VISIBLE_DEVICES".to_string(), "1,3".to_string()),
                ("PBS_GPUFILE".to_string(), "/spool/42/gpufile".to_string()),
            ]
        );
        let mut none = l.clone();
        for n in none.nodes.iter_mut() {
            n.gres.clear();
        }
        let mut env = vec![("CUDA_VISIBLE_DEVICES".to_string(), "0".to_string())];
        gpu_environment(&none, "/x", &mut env);
        assert!(
            env.is_empty(),
            "an inherited list of devices is not the job's"
        );
    }

    #[test]
    fn environment_adds_the_allocation() {
        let env = environment(&launch(), "/spool/42/nodefile");
        let get = |k: &str| {
            let found: Vec<&str> = env
                .iter()
                .filter(|(key, _)| key == k)
                .map(|(_, v)| v.as_str())
                .collect();
            assert_eq!(found.len(), 1, "{k} set once");
            found[0].to_string()
        };
        assert_eq!(env[0], ("PATH".to_string(), "/bin".to_string()));
        assert_eq!(get("PBS_NP"), "4", "the allocation wins");
        assert_eq!(get("PBS_JOBID"), "42.host", "kept from the spec");
        assert_eq!(get("MOAB_JOBID"), "42");
        assert_eq!(get("PBS_NODEFILE"), "/spool/42/nodefile");
        assert_eq!(get("PBS_NUM_NODES"), "2");
        assert_eq!(get("PBS_NUM_PPN"), "2");
        assert_eq!(get("MOAB_NODELIST"), "a,b");
        assert_eq!(get("MOAB_TASKMAP"), "a,b,b");
        assert_eq!(get("MOAB_PROCCOUNT"), "4");
        assert_eq!(get("MOAB_RESTARTED"), "1");
        assert_eq!(get("MOAB_RESIZEFILE"), "/spool/42/resize.env");
    }
}
