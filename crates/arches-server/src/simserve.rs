//! `moab simulate --until T --serve`: replays a workload up to the virtual
//! time T, then serves the normal client API on the socket so that `showq`,
//! `checkjob`, `showbf`, `showstart`, `checknode`, `showres` and `mdiag` show
//! the simulated cluster as it is at T (times against the virtual clock).
//!
//! The views are the daemon's own ([`crate::views`] over a
//! [`Snapshot`](crate::actor::Snapshot) marked `virtual_clock`): the
//! simulation's state and last plan plus a synthetic execution record per job
//! (simulated jobs have no scripts). `mschedctl -S [N]` runs N more scheduling
//! iterations (Moab's simulation stepping: event instants are processed until
//! N iterations have run, the last instant completing) and `mschedctl -k`
//! stops; the summary, report and job CSV asked for are written then.
//! Submissions and job changes are refused. Dates are real: time 0 of the
//! workload is the SWF header's `UnixStartTime` (or `--start-epoch`).

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::mpsc::Receiver;
use std::sync::{Arc, RwLock};

use anyhow::Context;
use arches_api::{ActionResponse, SchedulerControl};
use arches_core::{Job, JobState, Time};
use arches_sim::{SimulateArgs, Simulation};
use arches_store::ExecRecord;

use crate::actor::{Caller, Input, Published, SchedStats, Snapshot};
use crate::config::DaemonConfig;
use crate::jobspec::SubmitError;
use crate::{http, ident};

/// Runs `moab simulate ... --until T --serve`; the exit status follows
/// `moab simulate` (2 for bad input, 1 for failures).
pub fn main(args: &SimulateArgs) -> ExitCode {
    let prepared = match arches_sim::prepare(args) {
        Ok(p) => p,
        Err((code, msg)) => {
            eprintln!("moab simulate: {msg}");
            return ExitCode::from(code);
        }
    };
    match run(args, prepared) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("moab simulate: {e:#}");
            ExitCode::from(arches_sim::cli::EXIT_FAILURE)
        }
    }
}

/// Replays up to `--until`, then serves until `mschedctl -k`, SIGTERM or
/// SIGINT.
pub fn run(args: &SimulateArgs, prepared: arches_sim::Prepared) -> anyhow::Result<()> {
    let until = args
        .until
        .context("--serve needs --until T (the virtual time to stop at)")?;
    let socket = args
        .socket
        .clone()
        .unwrap_or_else(|| arches_api::paths::socket(None));
    let mut sim = prepared.sim;
    let info = prepared.info;
    let started = sim.now();
    let fs = prepared
        .config
        .as_ref()
        .map(|c| c.fairshare.clone())
        .unwrap_or_else(|| arches_config::Config::default().fairshare);
    let (pdur, pcount) = prepared
        .config
        .as_ref()
        .map(|c| (c.profile_duration, c.profile_count))
        .unwrap_or((
            arches_core::history::DEFAULT_DURATION,
            arches_core::history::DEFAULT_COUNT,
        ));
    sim.enable_accounting(
        arches_core::accounting::Accounting::new(started),
        fs.window_for(sim.state()),
    );
    if let Some(a) = sim.accounting_mut() {
        a.profile.configure(pdur, pcount);
    }
    let wall = std::time::Instant::now();
    sim.run_until(sim.origin() + until)
        .with_context(|| format!("replay up to {until} failed"))?;
    let cfg = Arc::new(daemon_config(prepared.config, &sim, &socket));
    crate::claim_socket(&socket)?;
    let server = SimServer {
        sim,
        cfg: Arc::clone(&cfg),
        started,
        host: ident::short_hostname(),
        socket: socket.display().to_string(),
        stop: false,
    };
    let published: Published = Arc::new(RwLock::new(Arc::new(server.snapshot())));
    let shared = Arc::clone(&published);
    eprintln!(
        "moab simulate: replayed up to t={} ({} jobs finished); serving on {}",
        server.sim.now() - server.sim.origin(),
        server.sim.records().len(),
        socket.display()
    );
    let (tx, rx) = std::sync::mpsc::channel();
    let (done_tx, done_rx) = tokio::sync::oneshot::channel::<()>();
    let thread = std::thread::Builder::new()
        .name("simulation".into())
        .spawn(move || {
            let r = server.run(rx, &shared);
            let _ = done_tx.send(());
            r
        })
        .context("cannot start the simulation thread")?;
    let app = http::AppState {
        tx,
        published,
        cfg,
        daemon_uid: ident::current_uid(),
    };
    let served = crate::serve_socket(&socket, app, done_rx);
    let result = thread
        .join()
        .map_err(|_| anyhow::anyhow!("simulation thread panicked"))?;
    let _ = std::fs::remove_file(&socket);
    served?;
    let sim = result?;
    // The outputs describe the simulation where it stopped.
    arches_sim::write_outputs(args, &info, &sim, wall.elapsed().as_secs_f64())
        .map_err(|(_, msg)| anyhow::anyhow!(msg))
}

/// The synthetic execution record of a simulated job.
pub fn synthetic_record(job: &Job, host: &str) -> ExecRecord {
    ExecRecord {
        workdir: "/".to_string(),
        submit_dir: "/".to_string(),
        submit_host: host.to_string(),
        submit_args: format!("(simulated job {})", job.id),
        executable: "(simulated)".to_string(),
        ..ExecRecord::default()
    }
}

/// The owner of the simulation while it is served.
struct SimServer {
    sim: Simulation,
    cfg: Arc<DaemonConfig>,
    /// Virtual time the replay started at.
    started: Time,
    host: String,
    socket: String,
    stop: bool,
}

impl SimServer {
    /// Serves inputs until stopped; gives the simulation back.
    fn run(mut self, rx: Receiver<Input>, published: &Published) -> anyhow::Result<Simulation> {
        while let Ok(input) = rx.recv() {
            let reply = self.handle(input)?;
            self.publish(published);
            reply();
            if self.stop {
                break;
            }
        }
        Ok(self.sim)
    }

    /// Handles one input; returns the reply to send once published.
    fn handle(&mut self, input: Input) -> anyhow::Result<Box<dyn FnOnce()>> {
        Ok(match input {
            Input::Submit { reply, .. } => Box::new(move || {
                let _ = reply.send(Err(SubmitError(
                    "a served simulation does not accept new jobs".to_string(),
                )));
            }),
            Input::Action { reply, .. } => Box::new(move || {
                let _ = reply.send(refusal(
                    "a served simulation does not accept job changes".to_string(),
                ));
            }),
            Input::Reservation { reply, .. } => Box::new(move || {
                let _ = reply.send(refusal(
                    "a served simulation does not accept reservation changes".to_string(),
                ));
            }),
            Input::Control { caller, req, reply } => {
                let resp = self.control(&caller, &req)?;
                Box::new(move || {
                    let _ = reply.send(resp);
                })
            }
            Input::Shutdown => {
                self.stop = true;
                Box::new(|| {})
            }
            // No activation filter runs in a simulation.
            Input::Activation { .. } => Box::new(|| {}),
        })
    }

    /// mschedctl on a served simulation.
    fn control(
        &mut self,
        caller: &Caller,
        req: &SchedulerControl,
    ) -> anyhow::Result<ActionResponse> {
        if !caller.admin {
            return Ok(refusal(format!(
                "user '{}' is not authorized to run command",
                caller.user
            )));
        }
        let mut resp = ActionResponse::default();
        let iteration = self.sim.iterations();
        match req {
            SchedulerControl::Kill => {
                self.stop = true;
                resp.stdout.push(format!(
                    "{} will be shutdown immediately",
                    self.cfg.scheduler_name.to_lowercase()
                ));
            }
            SchedulerControl::Step { iterations } => {
                let n = (*iterations).max(1);
                let before = self.sim.now();
                let done = self
                    .sim
                    .step_iterations(n)
                    .context("simulation step failed")?;
                let secs = (self.sim.now() - before).max(0) as u64;
                resp.stdout.push(format!(
                    "scheduling will stop in {:02}:{:02}:{:02} at iteration {}",
                    secs / 3600,
                    secs / 60 % 60,
                    secs % 60,
                    self.sim.iterations()
                ));
                if done < n {
                    resp.stdout.push(format!(
                        "NOTE:  the simulation has no event left (ran {done} of {n} iterations)"
                    ));
                }
            }
            SchedulerControl::Stop { .. } | SchedulerControl::Pause => {
                resp.stdout
                    .push("scheduling was already stopped".to_string());
                resp.stdout.push(format!(
                    "scheduling will stop immediately at iteration {iteration}"
                ));
            }
            SchedulerControl::Resume { .. }
            | SchedulerControl::ModifyConfig { .. }
            | SchedulerControl::CredentialConfig { .. }
            | SchedulerControl::CredentialReset { .. }
            | SchedulerControl::Flush { .. }
            | SchedulerControl::Annotate { .. }
            | SchedulerControl::LogLevel { .. } => {
                return Ok(refusal(
                    "a served simulation only steps ('mschedctl -S [N]') or stops ('mschedctl -k')"
                        .to_string(),
                ));
            }
        }
        Ok(resp)
    }

    fn publish(&self, published: &Published) {
        let snap = Arc::new(self.snapshot());
        match published.write() {
            Ok(mut g) => *g = snap,
            Err(poisoned) => *poisoned.into_inner() = snap,
        }
    }

    /// What the views see: the simulation at its virtual now.
    fn snapshot(&self) -> Snapshot {
        let state = self.sim.state();
        let exec: crate::actor::ExecMap = state
            .jobs()
            .map(|j| (j.id, Arc::new(synthetic_record(j, &self.host))))
            .collect();
        Snapshot {
            now: self.sim.now(),
            state: Arc::new(state.clone()),
            exec: Arc::new(exec),
            plan: Arc::new(self.sim.last_plan().cloned().unwrap_or_default()),
            cfg: Arc::clone(&self.cfg),
            stats: self.stats(),
            host: self.host.clone(),
            socket: self.socket.clone(),
            rm_name: "sim".to_string(),
            rm_kind: "SIM".to_string(),
            virtual_clock: true,
            staging: None,
            accounting: Arc::new(self.accounting()),
            profile_now: None,
        }
    }

    /// Statistics of the jobs finished so far (accounting enabled at start).
    fn accounting(&self) -> arches_core::accounting::Accounting {
        self.sim
            .accounting()
            .cloned()
            .unwrap_or_else(|| arches_core::accounting::Accounting::new(self.started))
    }

    /// Statistics of the replay so far (finished jobs plus running ones).
    fn stats(&self) -> SchedStats {
        let records = self.sim.records();
        let running: Vec<&Job> = self
            .sim
            .state()
            .jobs()
            .filter(|j| j.state == JobState::Running)
            .collect();
        let running_wait: f64 = running
            .iter()
            .filter_map(|j| {
                j.run
                    .as_ref()
                    .map(|r| (r.start_time - j.submit_time) as f64)
            })
            .sum();
        SchedStats {
            started: self.started,
            iterations: self.sim.iterations(),
            jobs_completed: records.len() as u64,
            jobs_backfilled: records.iter().filter(|r| r.backfilled).count() as u64,
            proc_seconds_used: records
                .iter()
                .map(|r| f64::from(r.procs) * (r.end - r.start) as f64)
                .sum(),
            wait_secs_total: records
                .iter()
                .map(|r| (r.start - r.submit) as f64)
                .sum::<f64>()
                + running_wait,
            jobs_started: (records.len() + running.len()) as u64,
            ..SchedStats::default()
        }
    }
}

/// A refused request with Moab's `ERROR:` prefix.
fn refusal(why: String) -> ActionResponse {
    let mut resp = ActionResponse::default();
    resp.stderr.push(format!("ERROR:    {why}"));
    resp.failed = true;
    resp
}

/// The configuration the views show: the `--config` file (or the embedded
/// default) with the simulation's policy and nodes; the user running the
/// simulation is an administrator (may step and stop it).
fn daemon_config(
    moab: Option<arches_config::Config>,
    sim: &Simulation,
    socket: &std::path::Path,
) -> DaemonConfig {
    let home = socket
        .parent()
        .map(PathBuf::from)
        .unwrap_or_else(arches_api::paths::home);
    let moab = moab.unwrap_or_default();
    let note = "served simulation: 'mschedctl -S [N]' runs N more scheduling iterations, \
                'mschedctl -k' stops"
        .to_string();
    let mut cfg = crate::config::from_moab(&home, moab, None, vec![note]);
    cfg.policy = sim.policy().clone();
    cfg.nodes = sim.state().nodes().to_vec();
    if let Some(me) = ident::user_by_uid(ident::current_uid()) {
        if !cfg.admins.contains(&me.name) {
            cfg.admins.push(me.name);
        }
    }
    cfg
}
