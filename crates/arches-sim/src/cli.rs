//! `moab simulate`: the command-line front end of the simulator.
//!
//! Reads a trace (`--trace FILE.swf[.gz]`) or a JSONL workload
//! (`--workload FILE.jsonl`), replays it on a machine (`--procs`, default the
//! trace header's `MaxProcs`) under a policy (`--backfill`,
//! `--reservation-depth`), and writes the summary JSON (`--summary`, default
//! stdout) and optionally the per-job CSV (`--jobs-csv`). `--generate OUT.swf`
//! writes a synthetic Lublin & Feitelson workload instead.

use std::fs::File;
use std::io::{BufWriter, IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use arches_core::policy::{BackfillPolicy, ReservationBucket, ReservationPolicy};

use crate::generate::{generate, GenerateParams};
use crate::metrics::{write_jobs_csv, Summary};
use crate::run::{machine, Simulation};
use crate::swf::{read_trace, SwfOptions, SwfSkipped, Trace};
use crate::workload::{read_jsonl, SimJob, Workload};

/// Exit status: success.
pub const EXIT_OK: u8 = 0;
/// Exit status: the simulation or its output failed.
pub const EXIT_FAILURE: u8 = 1;
/// Exit status: bad arguments or unreadable input.
pub const EXIT_USAGE: u8 = 2;

/// Instants simulated between two progress-bar updates.
pub(crate) const PROGRESS_STEP: usize = 4096;

/// One-line description of `moab simulate` (`--help`, man page NAME).
pub const ABOUT: &str = "Replay a workload (SWF trace or JSONL) through the real scheduling \
engine with a virtual clock, as fast as the CPU allows, and report wait times, bounded \
slowdown, utilisation and backfill statistics";

/// The full description of `moab simulate` (`--help`, the man page's
/// DESCRIPTION): what it does, the input formats and their semantics, the
/// outputs, the served simulation, the generator and the exit status. The
/// options' own texts carry their units.
pub const LONG_ABOUT: &str = "\
Replay a workload (SWF trace or JSONL) through the real scheduling engine with a virtual \
clock, as fast as the CPU allows, and report wait times, bounded slowdown, utilisation and \
backfill statistics.

The simulator runs the daemon's own scheduling iteration against a simulated resource \
manager. The clock jumps from event to event (submissions, completions, scheduling wake-ups): \
nothing sleeps, and the same input always gives the same schedule. The policy comes from \
--config (a moab.cfg: BACKFILLPOLICY, RESERVATIONDEPTH, RESERVATIONPOLICY, priority weights, \
throttling limits, classes, QoS, preemption, NODECFG nodes, SRCFG standing reservations, \
RUNTIMEPREDICTION, BFORDER); the options override it. Without --config the policy is Moab's \
default: FIFO priority, BACKFILLPOLICY FIRSTFIT, RESERVATIONDEPTH 1 (EASY backfill).

SWF TRACES (--trace). The Standard Workload Format, plain or gzip (detected by content). By \
default the semantics are those of the pyss simulator, so that figures compare with the \
literature: processors = field 5 (allocated), capped at the machine size (counted in the \
summary as capped_jobs); the estimate (what the scheduler plans with, and the kill limit) = \
max(requested time, run time, 1 s); the run time = max(min(requested time, run time), 1 s), \
so a job that overran its request is killed at it; a line with run time <= 0 or processors \
<= 0 becomes a 1-second placeholder on its allocated processors (1 if unknown). Jobs queue by \
submit time, ties by job number. At one instant, jobs whose planned end is now are released \
first, then each submission is followed by a scheduling iteration, then each termination. \
User, group and queue numbers become user<N>, group<N> and class queue<N>. The header's \
MaxProcs (else MaxNodes) sizes the machine when neither --procs nor --config does, and its \
UnixStartTime dates the trace. --sanitize applies the SC'15 strong filter instead: drop jobs \
with run time, processors or requested time <= 0, and cut the run time at the request. \
--min-job-id 15 keeps KTH-SP2's cleaned log. -1 means unknown in any SWF field: a line whose \
job number or submit time is unknown is skipped and counted (unknown_lines), the partial-\
execution lines of status 2, 3 or 4 are skipped in favour of their job's summary line \
(partial_lines), and the other unknown fields take the defaults above.

JSONL WORKLOADS (--workload). One JSON object per line, plain or gzip; blank lines and lines \
starting with # are ignored, unknown fields are errors. Times are whole seconds from the \
start of the workload. Fields: id (job number, unique, > 0); submit (s, >= 0); either procs \
(processors, placed anywhere) or nodes and ppn (exactly that many nodes of ppn processors); \
walltime (s, > 0: planned duration and kill limit); runtime (s, >= 0: the true run time, cut \
at the walltime); optional user, group (default: the user), account, class, qos; priority (as \
msub -p, -1024..1023); flags (a list of Moab job flags, e.g. [\"BACKFILL\", \"PREEMPTEE\"]); \
depend (a Moab dependency, e.g. \"afterok:12:13\" or \"afterany:4,after:5\"; a job waiting \
for a job not in the workload never starts); stagein (s of data staging before the job is \
eligible); stagein_size (MB, with --staging); maxprocs (a malleable job: procs is the \
minimum it starts with, maxprocs the most it may use; its work is conserved when it grows); \
deadline (s after submit the job must complete by, as msub -l deadline=+S: guaranteed with a \
QFLAGS=DEADLINE QoS, else only its DEADLINEWEIGHT priority); resize (resize requests of a malleable job, [{\"after\": S, \"procs\": N}]: S seconds after it \
starts its owner asks for N more processors, or releases -N). Example lines:
  {\"id\": 1, \"submit\": 0, \"procs\": 16, \"walltime\": 3600, \"runtime\": 1800, \"user\": \"alice\"}
  {\"id\": 2, \"submit\": 60, \"nodes\": 2, \"ppn\": 8, \"walltime\": 600, \"runtime\": 700, \"depend\": \"afterok:1\"}

BAD INPUT. A malformed SWF or JSONL line is reported as file:line: what is wrong, and the \
simulation does not start (exit status 2); with --skip-malformed such lines are skipped and \
counted (malformed_lines). A job whose node layout the machine cannot hold is skipped with \
the reason (skipped); a job that can never start ends the replay and is listed \
(never_started). An empty input gives the empty summary.

OUTPUTS. The summary (--summary, JSON) has machine_procs, jobs, avg_wait_s (wait = start - \
submit), avg_bsld10 (bounded slowdown with a 10 s threshold: max(1, (wait + run) / max(run, \
10))), max_wait_s, utilization (sum of run x processors / (machine processors x makespan)), \
makespan_s (last end - first submit), backfilled_jobs, preemption counts (preempted_jobs, \
preempt_cancelled, preempt_lost_proc_s, preemptor_jobs, preemptor_avg_wait_s), iterations \
(scheduling iterations run, counting those that found no queued job could start and so made no \
plan), sim_wall_s (wall-clock seconds of the replay), pyss (the 2007 \
paper's statistics as pyss computes them: jobs with a 1-second estimate on 1 processor, the \
first 1 % of jobs by finish time and every job from the first one ending after the last \
submission are left out; avg_wait_min in minutes, avg_bsld10), breakdown (by size and by \
length, with the share of small jobs, at most P/16 processors, and short jobs, at most 1 \
hour, that were backfilled), skipped, never_started, malformed_lines, unknown_lines, \
partial_lines, sanitize_dropped, capped_jobs, with --staging, staging, and with malleable jobs \
malleable (jobs, grown_jobs, grows, avg_wait_s, resize_requests, resize_granted, \
resize_avg_wait_s, resize_max_wait_s, releases); --summary-format table writes the main \
figures as a table for people instead, and --compare A.json B.json ... puts the summaries of \
earlier runs side by side. --jobs-csv writes one line per job: \
job_id,submit,start,end,procs,walltime,runtime,wait,backfilled (times in seconds after the \
trace start; backfilled 0 or 1). --report writes a self-contained HTML page (inline SVG, no \
scripts): the summary, utilisation and queue length over time, average wait by job size and \
a Gantt chart (--gantt-from, --gantt-to). Input notes (skipped lines, capped and skipped jobs) \
go to standard error; on a terminal a progress line shows the share of jobs submitted.

SWEEPS. --sweep replays the same input once per configuration, in parallel on every core, \
the input read once and shared. The configurations are either the *.cfg files of a directory \
(--sweep DIR, each a whole moab.cfg named by its file name; not with --config) or a grid of \
moab.cfg parameters (--sweep RESERVATIONDEPTH=1,2,4 BACKFILLPOLICY=FIRSTFIT,BESTFIT: every \
combination, the first parameter varying slowest, added to --config or the defaults). The \
policy options (--backfill, --reservation-depth, ...) apply to every configuration and may \
not fix a swept parameter. Each configuration gives exactly the summary its single replay \
gives. Grid configurations that differ only in RESERVATIONDEPTH (1 or more) under BACKFILLPOLICY \
NONE and RESERVATIONPOLICY CURRENTHIGHEST start the same jobs at the same times (nothing starts \
behind the first job that cannot): the first is replayed and the others take its summary when \
its replay proves it (every iteration a lean one, which places only that job's reservation), \
else they are replayed too; the table shows '= #N' as their replay time, the CSV and JSON name \
the configuration in same_as. One comparison table goes to standard output (jobs, average and \
maximum wait, average bounded slowdown, utilisation, makespan, backfilled jobs, the pyss figures, iterations, replay \
time, and the bounded slowdown against the first configuration); --sweep-csv writes the same \
figures at full precision, --sweep-json every configuration's whole summary. On a terminal a \
progress bar shows the configurations done and the share of jobs submitted. --jobs-csv, \
--report and --until are for single replays.

SERVED SIMULATION. --until T stops the clock T seconds after the trace start; with --serve \
the simulation then answers the normal client commands on the socket (showq, checkjob, \
checknode, showbf, showstart, showres, mdiag, showstats) with the cluster as it is at that \
virtual time, dated from the trace's UnixStartTime (or --start-epoch). 'mschedctl -S [N]' \
runs N more scheduling iterations (default 1), 'mschedctl -k' (or SIGTERM) stops it, and the \
summary, report and job CSV asked for are written then. Submissions and job changes are \
refused.

GENERATOR. --generate OUT.swf --procs N writes a synthetic SWF workload from the Lublin & \
Feitelson (2003) model as its reference program m_lublin99.c implements it: batch and \
interactive jobs (--gen-batch-only: batch only), sizes from a two-stage log-uniform \
distribution favouring powers of two, log run times hyper-gamma and correlated with size \
(at most e^12 s, about 45 hours), log inter-arrival times gamma with a daily cycle. The \
arrival rate is scaled (the daily cycle kept) so that the offered load, sum of run x size / \
(N x last arrival), is --target-load. Requested times are the run time rounded up to a usual \
limit (5 min to 48 h); users are drawn from 64. The same seed gives the same file.

EXIT STATUS. 0: success. 1: the replay or writing an output failed. 2: bad arguments, an \
unreadable or malformed input or configuration (the message names the file and line).";

/// Arguments of `moab simulate`.
#[derive(Debug, Clone, clap::Args)]
#[command(
    about = ABOUT,
    long_about = LONG_ABOUT,
    group(clap::ArgGroup::new("input").required(true).args(["trace", "workload", "generate", "compare"]))
)]
pub struct SimulateArgs {
    /// SWF trace to replay (plain or gzip; see SWF TRACES).
    #[arg(long, value_name = "FILE")]
    pub trace: Option<PathBuf>,
    /// JSONL workload to replay (one job per line; see JSONL WORKLOADS).
    #[arg(long, value_name = "FILE")]
    pub workload: Option<PathBuf>,
    /// Machine size in processors (default: the --config nodes, else the
    /// trace header's MaxProcs, else MaxNodes). With --generate: the
    /// machine the workload is generated for (required, at least 2).
    #[arg(long, value_name = "N",
          value_parser = clap::value_parser!(u32).range(1..=i64::from(arches_core::limits::MAX_TOTAL_PROCS)))]
    pub procs: Option<u32>,
    /// Processors per node (default: one node holding every processor, the
    /// flat pool of trace simulators such as pyss; the last node takes the
    /// remainder).
    #[arg(long, value_name = "K")]
    pub procs_per_node: Option<u32>,
    /// moab.cfg to take the policy and the nodes (NODECFG) from; the options
    /// below override it. Errors in it stop the simulation (exit status 2),
    /// warnings are printed.
    #[arg(long, value_name = "moab.cfg")]
    pub config: Option<PathBuf>,
    /// BACKFILLPOLICY: FIRSTFIT (default), BESTFIT, GREEDY, NONE (no
    /// backfill: FCFS).
    #[arg(long, value_name = "POLICY")]
    pub backfill: Option<BackfillPolicy>,
    /// RESERVATIONDEPTH: how many queued jobs get a reservation (default 1:
    /// EASY backfill); `all` reserves for every queued job (conservative
    /// backfill).
    #[arg(long, value_name = "N|all", value_parser = parse_depth)]
    pub reservation_depth: Option<u32>,
    /// RESERVATIONPOLICY: CURRENTHIGHEST (default: reservations recomputed
    /// every iteration), HIGHEST (kept and only compressed: pyss's
    /// conservative backfill with `--reservation-depth all`), NEVER.
    #[arg(long, value_name = "POLICY")]
    pub reservation_policy: Option<ReservationPolicy>,
    /// RUNTIMEPREDICTION: NONE (plan with the walltimes) or USERMEAN2 (plan
    /// with the mean of the user's last two run times, extended stepwise
    /// when a job outlives it; the walltime stays the kill limit). Default:
    /// the --config value, else NONE.
    #[arg(long, value_name = "NONE|USERMEAN2")]
    pub runtime_prediction: Option<arches_config::RuntimePrediction>,
    /// BFORDER: PRIORITY (default), SHORTESTPREDICTEDFIRST (SJBF: backfill
    /// candidates shortest planning duration first) or WIDESTWINDOWFIRST
    /// (FIRSTFIT traverses the backfill windows widest first). Default: the
    /// --config value, else PRIORITY.
    #[arg(long, value_name = "PRIORITY|SHORTESTPREDICTEDFIRST|WIDESTWINDOWFIRST")]
    pub bf_order: Option<arches_config::BfOrder>,
    /// PREDICTIONCORRECTION, with USERMEAN2: STEPWISE (default: an expired
    /// prediction is extended by 1, 5, 15, 30 minutes, 1, 2, 5, 10, 20, 50,
    /// 100 hours past the elapsed time) or WALLTIME (the job is planned with
    /// its walltime from then on, as pyss's EASY++). Default: the --config
    /// value, else STEPWISE.
    #[arg(long, value_name = "STEPWISE|WALLTIME")]
    pub prediction_correction: Option<arches_config::PredictionCorrection>,
    /// PREDICTIONSCOPE, with USERMEAN2: ALL (default: running and queued
    /// jobs are planned with their prediction) or RUNNING (queued jobs keep
    /// their walltime for reservations and backfill, so no backfilled job
    /// can delay a reservation; predictions still order candidates under
    /// SHORTESTPREDICTEDFIRST). Default: the --config value, else ALL.
    #[arg(long, value_name = "ALL|RUNNING")]
    pub prediction_scope: Option<arches_config::PredictionScope>,
    /// PREDICTIONGUARD, with USERMEAN2: once a job holding a reservation
    /// has waited this long ([[[DD:]HH:]MM:]SS; 0 = off), the iteration is
    /// planned with walltimes as EASY is, so no prediction can delay it
    /// further. Default: the --config value, else off.
    #[arg(long, value_name = "DURATION", value_parser = parse_guard)]
    pub prediction_guard: Option<arches_core::Secs>,
    /// Where to write the summary JSON (`-` = standard output; see OUTPUTS).
    #[arg(long, value_name = "FILE|-", default_value = "-")]
    pub summary: String,
    /// The summary's format: json (default, every figure; see OUTPUTS) or
    /// table (the main figures as a table for people, durations as 1h 30m).
    #[arg(long, value_name = "json|table", default_value = "json", value_parser = ["json", "table"])]
    pub summary_format: String,
    /// Compare the summaries (JSON files written by --summary) of earlier
    /// runs side by side in a table, one column per file, and exit.
    #[arg(long, value_name = "SUMMARY.json", num_args = 1..)]
    pub compare: Vec<PathBuf>,
    /// Write one CSV line per job here (times in seconds after the trace
    /// start).
    #[arg(long, value_name = "FILE")]
    pub jobs_csv: Option<PathBuf>,
    /// SC'15 strong filter: drop jobs with run time, processors or requested
    /// time <= 0 (counted as sanitize_dropped) and cut run times at the
    /// request.
    #[arg(long)]
    pub sanitize: bool,
    /// Keep only jobs numbered at least N (KTH-SP2's cleaned log: 15).
    #[arg(long, value_name = "N")]
    pub min_job_id: Option<u64>,
    /// Write a self-contained HTML report (SVG charts) here.
    #[arg(long, value_name = "FILE.html")]
    pub report: Option<PathBuf>,
    /// Skip malformed input lines (SWF or JSONL; counted in the summary's
    /// `malformed_lines`) instead of failing with `file:line: what`.
    #[arg(long)]
    pub skip_malformed: bool,
    /// Stop the clock T after the trace start (time 0 of its submit
    /// times; T in seconds, [[DD:]HH:]MM:SS or a duration such as 30d or
    /// 2h 30m); without --serve the summary describes the jobs finished by
    /// then.
    #[arg(long, value_name = "T", value_parser = crate::human::parse_secs)]
    pub until: Option<i64>,
    /// Unix time (seconds since 1970) of the workload's time 0, for the
    /// dates a served simulation shows and for calendar-bound policies
    /// (SRCFG standing reservations). Default: the SWF header's
    /// UnixStartTime, else 0.
    #[arg(long, value_name = "EPOCH",
          value_parser = clap::value_parser!(i64).range(0..=arches_core::limits::MAX_TIME))]
    pub start_epoch: Option<i64>,
    /// --report: start of the Gantt chart's window after the trace start
    /// (seconds, [[DD:]HH:]MM:SS or 2h 30m; default: 80 jobs around the
    /// middle of the replay; with only --gantt-to: from the first
    /// submission).
    #[arg(long, value_name = "T", value_parser = crate::human::parse_secs)]
    pub gantt_from: Option<i64>,
    /// --report: end of the Gantt chart's window after the trace start
    /// (same forms as --gantt-from; with only --gantt-from: to the last
    /// job's end). The chart shows every job waiting or running in the
    /// window, at most 500.
    #[arg(long, value_name = "T", value_parser = crate::human::parse_secs)]
    pub gantt_to: Option<i64>,
    /// With --until: stop the replay at T and serve the normal client API
    /// (showq, checkjob, showbf, showres, mdiag, ...) on the socket, with the
    /// virtual clock as "now"; `mschedctl -S [N]` runs N more iterations,
    /// `mschedctl -k` stops (see SERVED SIMULATION).
    #[arg(long, requires = "until")]
    pub serve: bool,
    /// Socket for --serve (default: MOAB_SOCKET, else <home>/moab.sock).
    #[arg(long, value_name = "PATH", requires = "serve")]
    pub socket: Option<PathBuf>,
    /// Write a synthetic Lublin & Feitelson workload to this SWF file and
    /// exit (see GENERATOR; needs --procs).
    #[arg(long, value_name = "OUT.swf")]
    pub generate: Option<PathBuf>,
    /// Generator: number of jobs.
    #[arg(long, value_name = "N", default_value = "10000")]
    pub gen_jobs: usize,
    /// Generator: seed of the pseudo-random generator (same seed, same file).
    #[arg(long, value_name = "SEED", default_value = "1")]
    pub seed: u64,
    /// Generator: target offered load, sum of run time x processors /
    /// (machine processors x last arrival); > 0 (above 1 overloads the
    /// machine).
    #[arg(long, value_name = "L", default_value = "0.7")]
    pub target_load: f64,
    /// Generator: batch jobs only (default: batch and interactive jobs, as
    /// the model's reference program).
    #[arg(long)]
    pub gen_batch_only: bool,
    /// Data staging model for the jobs' stage-in (JSONL `stagein` files,
    /// `stagein_size` MB or `stagein` seconds, else --stage-size): SELF (the
    /// job stages its own data on its nodes), LOOSE or TIGHT (DATASTAGEMODEL,
    /// the daemon's staging decisions on a modelled storage). Prints the
    /// allocated node-hours idle waiting for data.
    #[arg(long, value_name = "SELF|LOOSE|TIGHT", ignore_case = true)]
    pub staging: Option<crate::staging::StagingMode>,
    /// --staging: transfer rate of one staging operation, in KB/s.
    #[arg(long, value_name = "KB/s", default_value = "102400")]
    pub stage_rate: f64,
    /// --staging: most staging operations at once (MAXDSOP).
    #[arg(long, value_name = "N", default_value = "4")]
    pub stage_maxdsop: u32,
    /// --staging: stage-in size, in MB, of every job without its own.
    #[arg(long, value_name = "MB")]
    pub stage_size: Option<u64>,
    /// --staging: disk of the storage manager (MB; default unlimited).
    #[arg(long, value_name = "MB")]
    pub stage_disk: Option<u64>,
    /// --staging: share of --stage-disk staged data may fill (TARGETUSAGE, percent).
    #[arg(long, value_name = "PERCENT", requires = "stage_disk")]
    pub stage_target: Option<f64>,
    /// Replay the input once per configuration, in parallel on every core,
    /// and compare them in one table (see SWEEPS): a directory of moab.cfg
    /// files (each *.cfg is a configuration), or moab.cfg parameters with
    /// the values to try, PARAM=V1,V2,... (every combination is a
    /// configuration, added to --config or the defaults).
    #[arg(
        long,
        num_args = 1..,
        value_name = "DIR|PARAM=V1,V2,...",
        conflicts_with_all = ["serve", "generate"]
    )]
    pub sweep: Vec<String>,
    /// --sweep: also write the comparison as CSV here (`-` = standard
    /// output; the table then goes to standard error).
    #[arg(long, value_name = "FILE|-", requires = "sweep")]
    pub sweep_csv: Option<String>,
    /// --sweep: also write every configuration's whole summary as JSON here
    /// (`-` = standard output; the table then goes to standard error).
    #[arg(long, value_name = "FILE|-", requires = "sweep")]
    pub sweep_json: Option<String>,
    /// Make a share (0-1) of the jobs malleable: each may use up to FACTOR
    /// (default 2) times its processors, capped at the machine; chosen by
    /// job number, the same jobs every run. Jobs with a node layout stay rigid.
    #[arg(long, value_name = "SHARE[:FACTOR]", value_parser = parse_malleable)]
    pub malleable: Option<(f64, f64)>,
    /// With --malleable: each malleable job also asks for its extra
    /// processors a quarter into its run (a resize request, mjobctl -m
    /// proccount+=N); use --growth NONE to measure requests alone.
    #[arg(long, requires = "malleable")]
    pub resize_requests: bool,
    /// When running malleable jobs grow (MALLEABLEGROWTH): BEFOREBACKFILL
    /// (default), AFTERBACKFILL or NONE.
    #[arg(long, value_name = "POLICY")]
    pub growth: Option<arches_core::malleable::GrowthPolicy>,
}

fn parse_malleable(s: &str) -> Result<(f64, f64), String> {
    let (share, factor) = s.split_once(':').unwrap_or((s, "2"));
    let share: f64 = share
        .parse()
        .map_err(|_| format!("invalid share '{share}' (a number 0-1)"))?;
    let factor: f64 = factor
        .parse()
        .map_err(|_| format!("invalid factor '{factor}' (a number > 1)"))?;
    if !(0.0..=1.0).contains(&share) || factor.is_nan() || factor <= 1.0 {
        return Err(format!(
            "--malleable {s}: the share must be 0-1 and the factor above 1"
        ));
    }
    Ok((share, factor))
}

/// How far `moab simulate` grows its heap ahead, in huge pages
/// ([`crate::heap`]): the public traces replay within it.
const HEAP_PAD: usize = 64 << 20;

/// Runs `moab simulate`.
pub fn main(args: SimulateArgs) -> ExitCode {
    // One process, one replay (or sweep): its memory in huge pages.
    crate::heap::prefer_huge_pages(HEAP_PAD);
    match run(&args) {
        Ok(()) => ExitCode::from(EXIT_OK),
        Err((code, msg)) => {
            eprintln!("moab simulate: {msg}");
            ExitCode::from(code)
        }
    }
}

fn parse_guard(s: &str) -> Result<arches_core::Secs, String> {
    arches_core::timespec::parse_duration(s).map_err(|e| e.to_string())
}

fn parse_depth(s: &str) -> Result<u32, String> {
    if s.eq_ignore_ascii_case("all") {
        Ok(u32::MAX)
    } else {
        s.parse()
            .map_err(|_| format!("invalid reservation depth '{s}' (a number or `all`)"))
    }
}

/// A result whose error carries the exit status and the message.
pub type CliResult<T> = Result<T, (u8, String)>;

pub(crate) fn usage<E: std::fmt::Display>(e: E) -> (u8, String) {
    (EXIT_USAGE, e.to_string())
}

pub(crate) fn failure<E: std::fmt::Display>(e: E) -> (u8, String) {
    (EXIT_FAILURE, e.to_string())
}

/// A simulation ready to run, with what the input reading found.
#[derive(Debug)]
pub struct Prepared {
    pub sim: Simulation,
    /// The `--config` file as parsed, if any.
    pub config: Option<arches_config::Config>,
    /// What the outputs report besides the replay itself.
    pub info: RunInfo,
}

/// What the input reading and the set-up found, for the outputs.
#[derive(Debug, Clone)]
pub struct RunInfo {
    /// Machine size in processors.
    pub procs: u32,
    /// Malformed lines skipped.
    pub malformed: usize,
    /// Every kind of input line skipped (SWF: unknown job number or submit
    /// time, partial-execution lines; malformed lines).
    pub skipped: SwfSkipped,
    /// Jobs dropped by the sanitising filter.
    pub dropped: usize,
    /// Trace jobs larger than the machine, capped at it.
    pub capped: usize,
    /// "FIRSTFIT backfill, ... depth 1" for titles.
    pub title_policy: String,
}

/// Reads the input and the configuration and builds the simulation (not yet
/// run). Errors carry the exit status ([`EXIT_USAGE`] for bad input).
pub fn prepare(args: &SimulateArgs) -> Result<Prepared, (u8, String)> {
    let config = args.config.as_deref().map(load_config).transpose()?;
    let input = read_input(args)?;
    build(args, config, &input)
}

/// Builds the simulation of the input read once ([`read_input`]) under a
/// configuration (`--config`, or one of a sweep's) and the options. Errors
/// carry the exit status.
pub fn build(
    args: &SimulateArgs,
    config: Option<arches_config::Config>,
    input: &Input,
) -> Result<Prepared, (u8, String)> {
    let config_nodes = config
        .as_ref()
        .map(|c| c.nodes.clone())
        .filter(|n| !n.is_empty() && args.procs.is_none());
    let config_procs = config_nodes
        .as_ref()
        .map(|n| n.iter().map(|n| n.procs).sum::<u32>());
    if let (Some(from), Some(to)) = (args.gantt_from, args.gantt_to) {
        if from >= to {
            return Err(usage(format!(
                "--gantt-from {from} must be before --gantt-to {to}"
            )));
        }
    }
    let procs = input.machine_procs(args, config_procs)?;
    let (skipped, dropped, unix_start) = (input.skipped, input.dropped, input.unix_start);
    let capped = match &input.jobs {
        Jobs::Trace(t) => t.capped(procs),
        Jobs::List(_) => 0,
    };
    let mut jobs = match &input.jobs {
        // Data staging models each job's data and malleable jobs carry
        // their processor range and resizes: they need the jobs whole.
        Jobs::Trace(t) if args.staging.is_some() || args.malleable.is_some() => {
            Jobs::List(t.jobs.iter().map(|j| j.to_sim_job(procs)).collect())
        }
        Jobs::Trace(t) => Jobs::Trace(t.clone()),
        Jobs::List(v) => Jobs::List(v.clone()),
    };
    let staging = args.staging.map(|mode| {
        if args.stage_rate.is_nan() || args.stage_rate <= 0.0 {
            return Err(usage("--stage-rate must be > 0"));
        }
        if args
            .stage_target
            .is_some_and(|t| t.is_nan() || !(0.0..=100.0).contains(&t))
        {
            return Err(usage("--stage-target must be a percentage (0-100)"));
        }
        let model = crate::staging::StorageModel {
            rate_kbps: args.stage_rate,
            max_dsop: args.stage_maxdsop.max(1),
            default_mb: args.stage_size,
            disk_mb: args.stage_disk,
            target_usage: args.stage_target,
        };
        let Jobs::List(jobs) = &mut jobs else {
            unreachable!("a trace is converted to jobs for data staging");
        };
        let self_secs = if mode == crate::staging::StagingMode::SelfStaged {
            crate::staging::apply_self(&model, jobs)
        } else {
            // The data waits replace the `stagein` seconds' start dates.
            for j in jobs.iter_mut() {
                j.eligible_at = None;
            }
            std::collections::BTreeMap::new()
        };
        Ok(crate::staging::SimStaging::new(mode, model, self_secs))
    });
    let staging = staging.transpose()?;
    let nodes = match config_nodes {
        Some(nodes) => nodes,
        None => machine(procs, args.procs_per_node.unwrap_or(procs).max(1)),
    };
    let mut policy = config
        .as_ref()
        .map(|c| c.policy.clone())
        .unwrap_or_default();
    if let Some(b) = args.backfill {
        policy.backfill = b;
    }
    if let Some(p) = args.reservation_policy {
        policy.reservation_policy = p;
    }
    if let Some(g) = args.growth {
        policy.growth = g;
    }
    if let Some((share, factor)) = args.malleable {
        let Jobs::List(jobs) = &mut jobs else {
            unreachable!("a trace is converted to jobs for malleable jobs");
        };
        crate::elastic::make_malleable(jobs, share, factor, procs, args.resize_requests);
    }
    if let Some(depth) = args.reservation_depth {
        policy.reservation_buckets = vec![ReservationBucket { depth, qos: None }];
    }
    let title_policy = format!(
        "{} backfill, {} reservations, depth {}",
        policy.backfill,
        policy.reservation_policy,
        match policy.reservation_buckets.first().map(|b| b.depth) {
            Some(u32::MAX) => "all".to_string(),
            Some(d) => d.to_string(),
            None => "0".to_string(),
        }
    );
    if let Some(order) = args
        .bf_order
        .or_else(|| config.as_ref().map(|c| c.bf_order))
    {
        policy.bf_shortest_first = order == arches_config::BfOrder::ShortestPredictedFirst;
        policy.bf_widest_window_first = order == arches_config::BfOrder::WidestWindowFirst;
    }
    if let Some(scope) = args.prediction_scope {
        policy.estimates_running_only = scope == arches_config::PredictionScope::Running;
    }
    if let Some(guard) = args.prediction_guard {
        policy.prediction_guard = (guard > 0).then_some(guard);
    }
    let prediction = args
        .runtime_prediction
        .or_else(|| config.as_ref().map(|c| c.runtime_prediction))
        .unwrap_or(arches_config::RuntimePrediction::None);
    let correction = args
        .prediction_correction
        .or_else(|| config.as_ref().map(|c| c.prediction_correction))
        .unwrap_or(arches_config::PredictionCorrection::Stepwise);
    let title_policy = match prediction {
        arches_config::RuntimePrediction::None => title_policy,
        p => format!(
            "{title_policy}, run-time prediction {p} ({correction} correction, {} jobs{})",
            if policy.estimates_running_only {
                "running"
            } else {
                "all"
            },
            policy
                .prediction_guard
                .map(|g| format!(", guard {g} s"))
                .unwrap_or_default()
        ),
    };
    let mut sim = match jobs {
        Jobs::List(jobs) => Simulation::new(nodes, policy, jobs),
        Jobs::Trace(trace) => Simulation::from_trace(nodes, policy, trace, procs),
    };
    sim.start_at(args.start_epoch.or(unix_start).unwrap_or(0));
    if arches_core::fairshare::active(sim.policy()) {
        // Fairshare feeds priority: charge every finished job as the daemon
        // does (FSINTERVAL, FSDEPTH, FSDECAY of the configuration).
        let fs = config
            .as_ref()
            .map(|c| c.fairshare.clone())
            .unwrap_or_else(|| arches_config::Config::default().fairshare);
        // The fairshare intervals alone: nothing here shows statistics
        // (`--serve` keeps a whole accounting of its own).
        let acc = arches_core::accounting::Accounting::fairshare_only(sim.now());
        sim.enable_accounting(acc, fs.window_for(sim.state()));
    }
    if let Some(st) = staging {
        sim.set_staging(st);
    }
    sim.set_runtime_prediction(prediction);
    sim.set_prediction_correction(correction);
    // A served simulation shows every queued job's decision.
    sim.set_full_plans(args.serve);
    Ok(Prepared {
        sim,
        config,
        info: RunInfo {
            procs,
            malformed: skipped.malformed,
            skipped,
            dropped,
            capped,
            title_policy,
        },
    })
}

fn run(args: &SimulateArgs) -> CliResult<()> {
    if let Some(out) = &args.generate {
        return run_generate(args, out);
    }
    if !args.compare.is_empty() {
        return run_compare(&args.compare);
    }
    if args.serve {
        return Err(usage(
            "--serve is available only through the moab binary (moab simulate --serve)",
        ));
    }
    if !args.sweep.is_empty() {
        return crate::sweep::run(args);
    }
    let Prepared { mut sim, info, .. } = prepare(args)?;
    let started = Instant::now();
    let until = args.until.map(|u| sim.origin() + u);
    let progress = std::io::stderr().is_terminal();
    let total = sim.total_jobs();
    loop {
        let done = match until {
            Some(u) => sim.step_until(PROGRESS_STEP, u),
            None => sim.step(PROGRESS_STEP),
        }
        .map_err(failure)?;
        if done < PROGRESS_STEP {
            break;
        }
        if progress {
            eprint!("\r{}", progress_line(&sim, total));
        }
    }
    if let Some(u) = until {
        sim.run_until(u).map_err(failure)?;
    }
    if progress {
        eprintln!("\r{}", progress_line(&sim, total));
    }
    write_outputs(args, &info, &sim, started.elapsed().as_secs_f64())
}

/// The progress bar's text: share of the jobs submitted and the virtual time
/// (seconds after the trace start).
pub fn progress_line(sim: &Simulation, total: usize) -> String {
    format!(
        "{:>6.2}%  {} / {} jobs submitted  t={}",
        100.0 * sim.submitted() as f64 / total.max(1) as f64,
        sim.submitted(),
        total,
        sim.now() - sim.origin()
    )
}

/// The summary of a replay as it stands: the simulation's own, with what
/// the input reading found. `sim_wall_s` is the replay's wall time.
pub fn summary_of(info: &RunInfo, sim: &Simulation, sim_wall_s: f64) -> Summary {
    let mut summary: Summary = sim.summary();
    summary.sim_wall_s = sim_wall_s;
    summary.malformed_lines = info.malformed;
    summary.sanitize_dropped = info.dropped;
    summary.capped_jobs = info.capped;
    summary.unknown_lines = info.skipped.unknown;
    summary.partial_lines = info.skipped.partial;
    summary.staging = sim.staging_summary();
    summary
}

/// Prints what the input reading skipped or capped on stderr.
pub fn input_notes(info: &RunInfo) {
    if info.malformed > 0 {
        eprintln!(
            "moab simulate: skipped {} malformed input lines",
            info.malformed
        );
    }
    if info.skipped.unknown > 0 {
        eprintln!(
            "moab simulate: skipped {} SWF lines with an unknown (-1) job number or submit time",
            info.skipped.unknown
        );
    }
    if info.skipped.partial > 0 {
        eprintln!(
            "moab simulate: skipped {} SWF partial-execution lines (status 2-4; each job's summary line is replayed)",
            info.skipped.partial
        );
    }
    if info.capped > 0 {
        let procs = info.procs;
        eprintln!(
            "moab simulate: {} job(s) asked for more than the machine's {procs} processors and were capped at {procs}",
            info.capped
        );
    }
}

/// Writes what the arguments ask for — the summary (`--summary`), the
/// report (`--report`) and the job CSV (`--jobs-csv`) — for the replay as it
/// stands, and prints the input notes (skipped lines, capped and skipped
/// jobs, staging) on stderr. `sim_wall_s` is the replay's wall time.
pub fn write_outputs(
    args: &SimulateArgs,
    info: &RunInfo,
    sim: &Simulation,
    sim_wall_s: f64,
) -> CliResult<()> {
    let procs = info.procs;
    let records = sim.relative_records();
    let summary = summary_of(info, sim, sim_wall_s);
    input_notes(info);
    for s in &summary.skipped {
        eprintln!("moab simulate: job {} skipped: {}", s.job, s.reason);
    }
    if let Some(st) = &summary.staging {
        eprintln!(
            "moab simulate: staging {}: {} jobs staged, {:.1} node-hours of allocated compute idle waiting for data, mean stage wait {:.0} s, at most {} MB staged at once",
            st.mode, st.staged_jobs, st.idle_node_hours_waiting_for_data, st.mean_stage_wait_s, st.peak_staged_mb
        );
    }
    write_summary(&args.summary, &args.summary_format, &summary)?;
    if let Some(path) = &args.report {
        let input = args.trace.as_ref().or(args.workload.as_ref());
        let title = format!(
            "Arches simulation: {} on {procs} processors ({})",
            input.map_or_else(String::new, |p| p.display().to_string()),
            info.title_policy
        );
        let window = crate::report::GanttWindow {
            from: args.gantt_from,
            to: args.gantt_to,
        };
        let html = crate::report::render(&title, &summary, &records, window);
        std::fs::write(path, html).map_err(|e| failure(format!("{}: {e}", path.display())))?;
    }
    if let Some(path) = &args.jobs_csv {
        let f = File::create(path).map_err(|e| failure(format!("{}: {e}", path.display())))?;
        let mut w = BufWriter::new(f);
        write_jobs_csv(&records, &mut w)
            .and_then(|()| w.flush())
            .map_err(|e| failure(format!("{}: {e}", path.display())))?;
    }
    Ok(())
}

/// The jobs of the input.
pub enum Jobs {
    /// A JSONL workload.
    List(Vec<SimJob>),
    /// An SWF trace, in compact form (shared, never copied).
    Trace(std::sync::Arc<Trace>),
}

/// The input as read, once: a simulation, or every configuration of a
/// sweep, is built from it ([`build`]).
pub struct Input {
    pub jobs: Jobs,
    /// Lines skipped (malformed ones included).
    pub skipped: SwfSkipped,
    /// Jobs dropped by the sanitising filter.
    pub dropped: usize,
    /// The SWF header's machine size (`MaxProcs`, else `MaxNodes`).
    header_procs: Option<u32>,
    /// The SWF header's UnixStartTime.
    pub unix_start: Option<i64>,
    /// The input file, for messages.
    path: PathBuf,
}

impl Input {
    /// The machine size: `--procs`, else the configuration's nodes
    /// (`config_procs`), else (SWF) the header's; an empty input needs none.
    fn machine_procs(&self, args: &SimulateArgs, config_procs: Option<u32>) -> CliResult<u32> {
        let given = args.procs.or(config_procs);
        let empty = match &self.jobs {
            Jobs::Trace(t) => t.jobs.is_empty() && self.dropped == 0,
            Jobs::List(v) => v.is_empty(),
        };
        let procs = match &self.jobs {
            Jobs::Trace(_) => given.or(self.header_procs),
            Jobs::List(_) => given,
        };
        match procs.filter(|p| *p > 0) {
            Some(p) => Ok(p),
            // Nothing to replay: the empty summary, whatever the machine.
            None if empty => Ok(0),
            None => Err(usage(match &self.jobs {
                Jobs::Trace(_) => format!(
                    "{}: the header gives no MaxProcs; pass --procs",
                    self.path.display()
                ),
                Jobs::List(_) => "a JSONL workload needs --procs N or --config with NODECFG".into(),
            })),
        }
    }
}

/// Reads moab.cfg; errors are fatal, warnings are printed.
pub(crate) fn load_config(path: &std::path::Path) -> CliResult<arches_config::Config> {
    let parsed = arches_config::load_file(path).map_err(usage)?;
    for d in &parsed.diagnostics {
        eprintln!("moab simulate: {d}");
    }
    if parsed.has_errors() {
        return Err(usage(format!("{}: invalid configuration", path.display())));
    }
    Ok(parsed.config)
}

/// Reads the input (`--trace` or `--workload`) once.
pub fn read_input(args: &SimulateArgs) -> CliResult<Input> {
    if let Some(path) = &args.trace {
        let opts = SwfOptions {
            sanitize: args.sanitize,
            min_job_id: args.min_job_id,
            skip_malformed: args.skip_malformed,
        };
        let trace = read_trace(path, &opts).map_err(usage)?;
        return Ok(Input {
            skipped: trace.skipped,
            dropped: trace.dropped,
            header_procs: trace.header.max_procs.or(trace.header.max_nodes),
            unix_start: trace.header.unix_start_time,
            path: path.clone(),
            jobs: Jobs::Trace(std::sync::Arc::new(trace)),
        });
    }
    let path = args
        .workload
        .as_ref()
        .ok_or_else(|| usage("give --trace, --workload or --generate"))?;
    let Workload {
        mut jobs,
        malformed,
    } = read_jsonl(path, args.skip_malformed).map_err(usage)?;
    if let Some(m) = args.min_job_id {
        jobs.retain(|j| j.id >= m);
    }
    Ok(Input {
        jobs: Jobs::List(jobs),
        skipped: SwfSkipped {
            malformed,
            ..SwfSkipped::default()
        },
        dropped: 0,
        header_procs: None,
        unix_start: None,
        path: path.clone(),
    })
}

/// `--compare`: the summaries side by side ([`crate::human::comparison_table`]).
fn run_compare(files: &[PathBuf]) -> CliResult<()> {
    let mut names = Vec::new();
    let mut docs = Vec::new();
    for f in files {
        let text =
            std::fs::read_to_string(f).map_err(|e| usage(format!("{}: {e}", f.display())))?;
        let doc: serde_json::Value = serde_json::from_str(&text).map_err(|e| {
            usage(format!(
                "{}: not a summary JSON document ({e})",
                f.display()
            ))
        })?;
        if doc.get("jobs").is_none() || doc.get("avg_wait_s").is_none() {
            return Err(usage(format!(
                "{}: not a moab simulate summary (no jobs/avg_wait_s)",
                f.display()
            )));
        }
        names.push(f.file_stem().map_or_else(
            || f.display().to_string(),
            |s| s.to_string_lossy().into_owned(),
        ));
        docs.push(doc);
    }
    let table = crate::human::comparison_table(&names, &docs);
    print_out(&format!("{table}"))
}

/// Prints `text` and a newline on stdout; a closed pipe is not an error.
fn print_out(text: &str) -> CliResult<()> {
    let mut out = std::io::stdout().lock();
    match writeln!(out, "{text}").and_then(|()| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            Err(failure(format!("stdout: {e}")))
        }
        _ => Ok(()),
    }
}

fn write_summary(dest: &str, format: &str, summary: &Summary) -> CliResult<()> {
    let mut text = serde_json::to_string_pretty(summary).map_err(failure)?;
    if format == "table" {
        let doc: serde_json::Value = serde_json::from_str(&text).map_err(failure)?;
        text = crate::human::summary_table(&doc).to_string();
    }
    if dest == "-" {
        // A closed pipe (`| head`) is not an error of the simulation.
        return print_out(&text);
    }
    std::fs::write(dest, text + "\n").map_err(|e| failure(format!("{dest}: {e}")))
}

fn run_generate(args: &SimulateArgs, out: &PathBuf) -> CliResult<()> {
    let procs = args
        .procs
        .filter(|p| *p > 1)
        .ok_or_else(|| usage("--generate needs --procs N (N >= 2)"))?;
    let params = GenerateParams {
        jobs: args.gen_jobs,
        machine_procs: procs,
        target_load: args.target_load,
        seed: args.seed,
        interactive: !args.gen_batch_only,
    };
    let text = generate(&params).map_err(usage)?;
    std::fs::write(out, text).map_err(|e| failure(format!("{}: {e}", out.display())))
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        args: SimulateArgs,
    }

    fn parse(argv: &[&str]) -> Result<SimulateArgs, clap::Error> {
        Cli::try_parse_from(std::iter::once("simulate").chain(argv.iter().copied())).map(|c| c.args)
    }

    #[test]
    fn prediction_and_serve_flags_parse() {
        let a = parse(&["--workload", "w", "--runtime-prediction", "usermean2"]).unwrap();
        assert_eq!(
            a.runtime_prediction,
            Some(arches_config::RuntimePrediction::UserMean2)
        );
        assert!(parse(&["--workload", "w", "--runtime-prediction", "usermean3"]).is_err());
        let a = parse(&["--workload", "w", "--prediction-guard", "1:00:00:00"]).unwrap();
        assert_eq!(a.prediction_guard, Some(86_400));
        let e = parse(&["--workload", "w", "--prediction-guard", "a day"]).unwrap_err();
        assert!(e.to_string().contains("a day"), "{e}");
        // --serve needs --until; --socket needs --serve.
        assert!(parse(&["--workload", "w", "--serve"]).is_err());
        assert!(parse(&["--workload", "w", "--until", "5", "--socket", "s"]).is_err());
        let a = parse(&[
            "--workload",
            "w",
            "--until",
            "5",
            "--serve",
            "--socket",
            "s",
        ])
        .unwrap();
        assert!(a.serve && a.socket.is_some());
    }

    #[test]
    fn workload_run_writes_summary_and_csv() {
        let dir = tempfile::tempdir().unwrap();
        let w = dir.path().join("w.jsonl");
        std::fs::write(
            &w,
            "{\"id\":1,\"submit\":0,\"procs\":4,\"walltime\":100,\"runtime\":50}\n\
             {\"id\":2,\"submit\":5,\"procs\":8,\"walltime\":100,\"runtime\":100}\n\
             {\"id\":3,\"submit\":5,\"procs\":64,\"walltime\":100,\"runtime\":100}\n",
        )
        .unwrap();
        let summary = dir.path().join("s.json");
        let csv = dir.path().join("j.csv");
        let report = dir.path().join("r.html");
        let args = parse(&[
            "--workload",
            w.to_str().unwrap(),
            "--procs",
            "8",
            "--procs-per-node",
            "2",
            "--summary",
            summary.to_str().unwrap(),
            "--jobs-csv",
            csv.to_str().unwrap(),
            "--report",
            report.to_str().unwrap(),
        ])
        .unwrap();
        run(&args).unwrap();
        let s: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&summary).unwrap()).unwrap();
        assert_eq!(s["jobs"], 2);
        assert_eq!(s["avg_wait_s"], 22.5);
        assert_eq!(s["skipped"][0]["job"], 3);
        let csv = std::fs::read_to_string(&csv).unwrap();
        assert_eq!(csv.lines().nth(2), Some("2,5,50,150,8,100,100,45,0"));
        assert!(std::fs::read_to_string(&report).unwrap().contains("<svg"));
    }

    #[test]
    fn human_durations_table_summary_and_comparison() {
        let a = parse(&[
            "--workload",
            "w",
            "--until",
            "2h 30m",
            "--gantt-from",
            "1:00:00",
            "--gantt-to",
            "9000",
        ])
        .unwrap();
        assert_eq!(
            (a.until, a.gantt_from, a.gantt_to),
            (Some(9000), Some(3600), Some(9000))
        );
        assert_eq!(
            parse(&["--workload", "w", "--until", "30d"]).unwrap().until,
            Some(2_592_000)
        );
        assert!(parse(&["--workload", "w", "--until", "soon"]).is_err());
        assert!(parse(&["--workload", "w", "--compare", "a.json"]).is_err());
        let dir = tempfile::tempdir().unwrap();
        let w = dir.path().join("w.jsonl");
        std::fs::write(
            &w,
            "{\"id\":1,\"submit\":0,\"procs\":4,\"walltime\":100,\"runtime\":50}\n\
             {\"id\":2,\"submit\":5,\"procs\":8,\"walltime\":100,\"runtime\":100}\n",
        )
        .unwrap();
        let table = dir.path().join("t.txt");
        let json = dir.path().join("easy.json");
        for (dest, format) in [(&table, "table"), (&json, "json")] {
            let args = parse(&[
                "--workload",
                w.to_str().unwrap(),
                "--procs",
                "8",
                "--summary",
                dest.to_str().unwrap(),
                "--summary-format",
                format,
            ])
            .unwrap();
            run(&args).unwrap();
        }
        let t = std::fs::read_to_string(&table).unwrap();
        let wait = t.lines().find(|l| l.contains("Average wait")).unwrap();
        assert!(wait.contains("23s"), "{t}"); // 22.5 s rounded
        let bad = dir.path().join("bad.json");
        std::fs::write(&bad, "{}").unwrap();
        let e = run_compare(&[json.clone(), bad]).unwrap_err();
        assert!(
            e.1.contains("bad.json: not a moab simulate summary"),
            "{e:?}"
        );
        run_compare(&[json.clone(), json]).unwrap();
    }

    /// Runs `moab simulate ARGS --summary FILE` and returns the summary.
    fn summary_of(dir: &std::path::Path, argv: &[&str]) -> serde_json::Value {
        let summary = dir.join("s.json");
        let mut all = argv.to_vec();
        all.extend_from_slice(&["--summary", summary.to_str().unwrap()]);
        run(&parse(&all).unwrap()).unwrap();
        serde_json::from_str(&std::fs::read_to_string(&summary).unwrap()).unwrap()
    }

    #[test]
    fn jobs_larger_than_the_machine_are_capped_and_counted() {
        let dir = tempfile::tempdir().unwrap();
        let swf = dir.path().join("t.swf");
        std::fs::write(
            &swf,
            "; MaxProcs: 16\n\
             1 0 -1 100 16 -1 -1 16 200 -1 1 1 1 -1 1 -1 -1 -1\n\
             2 5 -1 100 4 -1 -1 4 200 -1 1 1 1 -1 1 -1 -1 -1\n\
             3 9 -1 100 12 -1 -1 12 200 -1 1 1 1 -1 1 -1 -1 -1\n",
        )
        .unwrap();
        let trace = swf.to_str().unwrap();
        let s = summary_of(dir.path(), &["--trace", trace, "--procs", "8"]);
        assert_eq!(
            (s["jobs"].as_u64(), s["capped_jobs"].as_u64()),
            (Some(3), Some(2))
        );
        assert_eq!(s["skipped"].as_array().map(Vec::len), Some(0));
        let s = summary_of(dir.path(), &["--trace", trace]);
        assert_eq!(
            s["capped_jobs"], 0,
            "the header's 16 processors hold them all"
        );
    }

    #[test]
    fn skip_malformed_applies_to_jsonl_workloads() {
        let dir = tempfile::tempdir().unwrap();
        let w = dir.path().join("w.jsonl");
        std::fs::write(
            &w,
            "{\"id\":1,\"submit\":0,\"procs\":4,\"walltime\":100,\"runtime\":50}\n\
             {\"id\":2,\"submit\":1,\"procs\":0,\"walltime\":100,\"runtime\":50}\n\
             {oops\n\
             {\"id\":3,\"submit\":2,\"procs\":2,\"walltime\":100,\"runtime\":50}\n",
        )
        .unwrap();
        let wl = w.to_str().unwrap();
        let strict = parse(&["--workload", wl, "--procs", "8"]).unwrap();
        let e = run(&strict).unwrap_err();
        assert_eq!(e.0, EXIT_USAGE);
        assert!(e.1.contains("w.jsonl:2:"), "{}", e.1);
        let s = summary_of(
            dir.path(),
            &["--workload", wl, "--procs", "8", "--skip-malformed"],
        );
        assert_eq!(
            (s["jobs"].as_u64(), s["malformed_lines"].as_u64()),
            (Some(2), Some(2))
        );
    }

    #[test]
    fn an_empty_input_gives_the_empty_summary() {
        let dir = tempfile::tempdir().unwrap();
        let swf = dir.path().join("empty.swf");
        std::fs::write(&swf, "").unwrap();
        // No header, no --procs: nothing to replay is not an error.
        let s = summary_of(dir.path(), &["--trace", swf.to_str().unwrap()]);
        assert_eq!(
            (s["jobs"].as_u64(), s["makespan_s"].as_u64()),
            (Some(0), Some(0))
        );
        assert_eq!(s["avg_wait_s"], 0.0);
        std::fs::write(&swf, "; Note: only comments\n\n").unwrap();
        let s = summary_of(dir.path(), &["--trace", swf.to_str().unwrap()]);
        assert_eq!(s["jobs"], 0);
        let w = dir.path().join("empty.jsonl");
        std::fs::write(&w, "# nothing\n").unwrap();
        let s = summary_of(dir.path(), &["--workload", w.to_str().unwrap()]);
        assert_eq!(s["jobs"], 0);
        // With a job but no machine size it stays an error.
        std::fs::write(&swf, "1 0 -1 100 16 -1 -1 16 200 -1 1 1 1 -1 1 -1 -1 -1\n").unwrap();
        let e = run(&parse(&["--trace", swf.to_str().unwrap()]).unwrap()).unwrap_err();
        assert!(e.1.contains("gives no MaxProcs"), "{}", e.1);
    }

    #[test]
    fn jsonl_dependencies_hold_jobs_until_their_parents_end() {
        let dir = tempfile::tempdir().unwrap();
        let w = dir.path().join("w.jsonl");
        // Room for everything at t=0, but 2 waits for 1 (afterok), 3 for 2
        // (afterany), 4 for both 1 and 3, and 5 for a job not in the
        // workload (it never starts).
        std::fs::write(
            &w,
            "{\"id\":1,\"submit\":0,\"procs\":1,\"walltime\":100,\"runtime\":100}\n\
             {\"id\":2,\"submit\":0,\"procs\":1,\"walltime\":100,\"runtime\":30,\"depend\":\"afterok:1\"}\n\
             {\"id\":3,\"submit\":5,\"procs\":1,\"walltime\":100,\"runtime\":20,\"depend\":\"afterany:2\"}\n\
             {\"id\":4,\"submit\":5,\"procs\":1,\"walltime\":100,\"runtime\":10,\"depend\":\"afterok:1:3\"}\n\
             {\"id\":5,\"submit\":5,\"procs\":1,\"walltime\":100,\"runtime\":10,\"depend\":\"afterok:99\"}\n\
             {\"id\":6,\"submit\":5,\"procs\":1,\"walltime\":100,\"runtime\":10}\n",
        )
        .unwrap();
        let csv = dir.path().join("j.csv");
        let s = summary_of(
            dir.path(),
            &[
                "--workload",
                w.to_str().unwrap(),
                "--procs",
                "8",
                "--jobs-csv",
                csv.to_str().unwrap(),
            ],
        );
        let starts: Vec<(u64, i64)> = std::fs::read_to_string(&csv)
            .unwrap()
            .lines()
            .skip(1)
            .map(|l| {
                let f: Vec<&str> = l.split(',').collect();
                (f[0].parse().unwrap(), f[2].parse().unwrap())
            })
            .collect();
        assert_eq!(starts, vec![(1, 0), (2, 100), (3, 130), (4, 150), (6, 5)]);
        assert_eq!(s["never_started"], serde_json::json!([5]), "{s}");
    }

    #[test]
    fn gantt_window_options_reach_the_report() {
        let dir = tempfile::tempdir().unwrap();
        let w = dir.path().join("w.jsonl");
        let mut text = String::new();
        for i in 1..=50 {
            text.push_str(&format!(
                "{{\"id\":{i},\"submit\":{},\"procs\":1,\"walltime\":100,\"runtime\":100}}\n",
                i * 100
            ));
        }
        std::fs::write(&w, text).unwrap();
        let report = dir.path().join("r.html");
        let argv = |from: &str, to: &str| {
            vec![
                "--workload".to_string(),
                w.display().to_string(),
                "--procs".into(),
                "4".into(),
                "--summary".into(),
                dir.path().join("s.json").display().to_string(),
                "--report".into(),
                report.display().to_string(),
                "--gantt-from".into(),
                from.into(),
                "--gantt-to".into(),
                to.into(),
            ]
        };
        let a = argv("1000", "1250");
        run(&parse(&a.iter().map(String::as_str).collect::<Vec<_>>()).unwrap()).unwrap();
        let html = std::fs::read_to_string(&report).unwrap();
        assert!(html.contains("Gantt chart: t=1000 s to t=1250 s"), "{html}");
        // Jobs 10 (1000..1100), 11 and 12 (1200..1300); job 9 ends at 1000.
        assert!(html.contains("3 jobs waiting or running in the window"));
        let bad = argv("500", "500");
        let e =
            run(&parse(&bad.iter().map(String::as_str).collect::<Vec<_>>()).unwrap()).unwrap_err();
        assert_eq!(e.0, EXIT_USAGE);
        assert!(
            e.1.contains("--gantt-from 500 must be before --gantt-to 500"),
            "{}",
            e.1
        );
    }

    #[test]
    fn config_gives_nodes_and_policy_and_flags_override_it() {
        let dir = tempfile::tempdir().unwrap();
        let cfg = dir.path().join("moab.cfg");
        std::fs::write(
            &cfg,
            "BACKFILLPOLICY NONE\nNODECFG[n1] PROCS=2\nNODECFG[n2] PROCS=2\n",
        )
        .unwrap();
        let w = dir.path().join("w.jsonl");
        // Job 3 could backfill beside job 1 while job 2 waits, unless NONE.
        std::fs::write(
            &w,
            "{\"id\":1,\"submit\":0,\"procs\":3,\"walltime\":100,\"runtime\":100}\n\
             {\"id\":2,\"submit\":1,\"procs\":4,\"walltime\":100,\"runtime\":100}\n\
             {\"id\":3,\"submit\":2,\"procs\":1,\"walltime\":10,\"runtime\":10}\n",
        )
        .unwrap();
        let summary = dir.path().join("s.json");
        let backfilled = |extra: &[&str]| {
            let mut argv = vec![
                "--workload",
                w.to_str().unwrap(),
                "--config",
                cfg.to_str().unwrap(),
                "--summary",
                summary.to_str().unwrap(),
            ];
            argv.extend_from_slice(extra);
            run(&parse(&argv).unwrap()).unwrap();
            let s: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(&summary).unwrap()).unwrap();
            assert_eq!(s["machine_procs"], 4);
            s["backfilled_jobs"].as_u64().unwrap()
        };
        assert_eq!(backfilled(&[]), 0, "BACKFILLPOLICY NONE from moab.cfg");
        assert_eq!(backfilled(&["--backfill", "FIRSTFIT"]), 1, "the flag wins");
        std::fs::write(&cfg, "BACKFILLPOLICY SOMETIMES\n").unwrap();
        let bad = parse(&[
            "--workload",
            w.to_str().unwrap(),
            "--config",
            cfg.to_str().unwrap(),
        ]);
        assert_eq!(run(&bad.unwrap()).unwrap_err().0, EXIT_USAGE);
    }

    #[test]
    fn generated_trace_replays_and_bad_input_is_a_usage_error() {
        let dir = tempfile::tempdir().unwrap();
        let swf = dir.path().join("g.swf");
        let g = parse(&[
            "--generate",
            swf.to_str().unwrap(),
            "--procs",
            "64",
            "--gen-jobs",
            "300",
        ]);
        run(&g.unwrap()).unwrap();
        let summary = dir.path().join("s.json");
        let args = parse(&[
            "--trace",
            swf.to_str().unwrap(),
            "--reservation-depth",
            "all",
            "--summary",
            summary.to_str().unwrap(),
        ])
        .unwrap();
        assert_eq!(args.reservation_depth, Some(u32::MAX));
        run(&args).unwrap();
        let s: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&summary).unwrap()).unwrap();
        assert_eq!(
            (s["jobs"].as_u64(), s["machine_procs"].as_u64()),
            (Some(300), Some(64))
        );
        assert!(parse(&["--trace", "x", "--reservation-depth", "some"]).is_err());
        assert!(parse(&["--procs", "4"]).is_err(), "an input is required");
        let missing = parse(&["--trace", "/nonexistent/t.swf"]).unwrap();
        assert_eq!(run(&missing).unwrap_err().0, EXIT_USAGE);
    }
}
