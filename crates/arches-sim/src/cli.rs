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
use crate::swf::{read_swf, to_jobs, SwfOptions};
use crate::workload::{read_jsonl, SimJob};

/// Exit status: success.
pub const EXIT_OK: u8 = 0;
/// Exit status: the simulation or its output failed.
pub const EXIT_FAILURE: u8 = 1;
/// Exit status: bad arguments or unreadable input.
pub const EXIT_USAGE: u8 = 2;

/// Instants simulated between two progress-bar updates.
const PROGRESS_STEP: usize = 4096;

/// Arguments of `moab simulate`.
#[derive(Debug, Clone, clap::Args)]
#[command(group(clap::ArgGroup::new("input").required(true).args(["trace", "workload", "generate"])))]
pub struct SimulateArgs {
    /// SWF trace to replay (plain or gzip).
    #[arg(long, value_name = "FILE")]
    pub trace: Option<PathBuf>,
    /// JSONL workload to replay (one job per line, see the arches-sim docs).
    #[arg(long, value_name = "FILE")]
    pub workload: Option<PathBuf>,
    /// Machine size in processors (default: the --config nodes, else the
    /// trace header's MaxProcs).
    #[arg(long, value_name = "N")]
    pub procs: Option<u32>,
    /// Processors per node (default: one node holding every processor).
    #[arg(long, value_name = "K")]
    pub procs_per_node: Option<u32>,
    /// moab.cfg to take the policy and the nodes (NODECFG) from; the flags
    /// below override it.
    #[arg(long, value_name = "moab.cfg")]
    pub config: Option<PathBuf>,
    /// BACKFILLPOLICY: FIRSTFIT (default), BESTFIT, GREEDY, NONE.
    #[arg(long, value_name = "POLICY")]
    pub backfill: Option<BackfillPolicy>,
    /// RESERVATIONDEPTH (default 1 = EASY); `all` reserves for every queued
    /// job (conservative backfill).
    #[arg(long, value_name = "N|all", value_parser = parse_depth)]
    pub reservation_depth: Option<u32>,
    /// RESERVATIONPOLICY: CURRENTHIGHEST (default: reservations recomputed
    /// every iteration), HIGHEST (kept and only compressed: pyss's
    /// conservative backfill with `--reservation-depth all`), NEVER.
    #[arg(long, value_name = "POLICY")]
    pub reservation_policy: Option<ReservationPolicy>,
    /// RUNTIMEPREDICTION: NONE (plan with the walltimes) or USERMEAN2 (plan
    /// with the mean of the user's last two run times, extended stepwise
    /// when a job outlives it: EASY++). Default: the --config value, else NONE.
    #[arg(long, value_name = "NONE|USERMEAN2")]
    pub runtime_prediction: Option<arches_config::RuntimePrediction>,
    /// BFORDER: PRIORITY (default), SHORTESTPREDICTEDFIRST (SJBF: backfill
    /// candidates shortest planning duration first) or WIDESTWINDOWFIRST
    /// (FIRSTFIT traverses the backfill windows widest first). Default: the
    /// --config value, else PRIORITY.
    #[arg(long, value_name = "PRIORITY|SHORTESTPREDICTEDFIRST|WIDESTWINDOWFIRST")]
    pub bf_order: Option<arches_config::BfOrder>,
    /// Where to write the summary JSON (`-` = stdout).
    #[arg(long, value_name = "FILE|-", default_value = "-")]
    pub summary: String,
    /// Write one CSV line per job here.
    #[arg(long, value_name = "FILE")]
    pub jobs_csv: Option<PathBuf>,
    /// SC'15 strong filter: drop jobs with run, processors or requested time <= 0.
    #[arg(long)]
    pub sanitize: bool,
    /// Keep only jobs numbered at least N (KTH's cleaned log: 15).
    #[arg(long, value_name = "N")]
    pub min_job_id: Option<u64>,
    /// Write a self-contained HTML report (SVG charts) here.
    #[arg(long, value_name = "FILE.html")]
    pub report: Option<PathBuf>,
    /// Skip malformed trace lines (counted in the summary) instead of failing.
    #[arg(long)]
    pub skip_malformed: bool,
    /// Stop the clock T seconds after the trace start.
    #[arg(long, value_name = "T")]
    pub until: Option<i64>,
    /// With --until: stop the replay at T and serve the normal client API
    /// (showq, checkjob, showbf, mschedctl -S to step, -k to stop) on the
    /// socket, with the virtual clock as "now".
    #[arg(long, requires = "until")]
    pub serve: bool,
    /// Socket for --serve (default: MOAB_SOCKET, else <home>/moab.sock).
    #[arg(long, value_name = "PATH", requires = "serve")]
    pub socket: Option<PathBuf>,
    /// Write a synthetic Lublin & Feitelson workload to this SWF file and exit.
    #[arg(long, value_name = "OUT.swf")]
    pub generate: Option<PathBuf>,
    /// Generator: number of jobs.
    #[arg(long, value_name = "N", default_value = "10000")]
    pub gen_jobs: usize,
    /// Generator: PRNG seed.
    #[arg(long, value_name = "SEED", default_value = "1")]
    pub seed: u64,
    /// Generator: target offered load (0 < L).
    #[arg(long, value_name = "L", default_value = "0.7")]
    pub target_load: f64,
    /// Data staging model for the jobs' stage-in (JSONL `stagein` seconds or
    /// `stagein_size` MB, else --stage-size): SELF (the job stages its own
    /// data on its nodes), LOOSE or TIGHT (DATASTAGEMODEL). Prints the
    /// compute processor-hours idle waiting for data.
    #[arg(long, value_name = "SELF|LOOSE|TIGHT", ignore_case = true)]
    pub staging: Option<crate::staging::StagingMode>,
    /// --staging: transfer rate of one staging operation, KB/s.
    #[arg(long, value_name = "KB/s", default_value = "102400")]
    pub stage_rate: f64,
    /// --staging: simultaneous staging operations (MAXDSOP).
    #[arg(long, value_name = "N", default_value = "4")]
    pub stage_maxdsop: u32,
    /// --staging: stage-in size (MB) of every job without its own.
    #[arg(long, value_name = "MB")]
    pub stage_size: Option<u64>,
}

/// Runs `moab simulate`.
pub fn main(args: SimulateArgs) -> ExitCode {
    match run(&args) {
        Ok(()) => ExitCode::from(EXIT_OK),
        Err((code, msg)) => {
            eprintln!("moab simulate: {msg}");
            ExitCode::from(code)
        }
    }
}

fn parse_depth(s: &str) -> Result<u32, String> {
    if s.eq_ignore_ascii_case("all") {
        Ok(u32::MAX)
    } else {
        s.parse()
            .map_err(|_| format!("invalid reservation depth '{s}' (a number or `all`)"))
    }
}

type CliResult<T> = Result<T, (u8, String)>;

fn usage<E: std::fmt::Display>(e: E) -> (u8, String) {
    (EXIT_USAGE, e.to_string())
}

fn failure<E: std::fmt::Display>(e: E) -> (u8, String) {
    (EXIT_FAILURE, e.to_string())
}

/// A simulation ready to run, with what the input reading found.
#[derive(Debug)]
pub struct Prepared {
    pub sim: Simulation,
    /// Machine size in processors.
    pub procs: u32,
    /// Malformed lines skipped.
    pub malformed: usize,
    /// Jobs dropped by the sanitising filter.
    pub dropped: usize,
    /// "FIRSTFIT backfill, ... depth 1" for titles.
    pub title_policy: String,
    /// The `--config` file as parsed, if any.
    pub config: Option<arches_config::Config>,
    /// What `--staging` did to the workload.
    pub staging: Option<crate::staging::StagingSummary>,
}

/// Reads the input and the configuration and builds the simulation (not yet
/// run). Errors carry the exit status ([`EXIT_USAGE`] for bad input).
pub fn prepare(args: &SimulateArgs) -> Result<Prepared, (u8, String)> {
    let config = args.config.as_deref().map(load_config).transpose()?;
    let config_nodes = config
        .as_ref()
        .map(|c| c.nodes.clone())
        .filter(|n| !n.is_empty() && args.procs.is_none());
    let config_procs = config_nodes
        .as_ref()
        .map(|n| n.iter().map(|n| n.procs).sum::<u32>());
    let Loaded {
        mut jobs,
        procs,
        malformed,
        dropped,
    } = load(args, config_procs)?;
    let staging = args.staging.map(|mode| {
        if args.stage_rate.is_nan() || args.stage_rate <= 0.0 {
            return Err(usage("--stage-rate must be > 0"));
        }
        let model = crate::staging::StorageModel {
            rate_kbps: args.stage_rate,
            max_dsop: args.stage_maxdsop.max(1),
            default_mb: args.stage_size,
        };
        Ok(crate::staging::apply(mode, &model, &mut jobs))
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
    let prediction = args
        .runtime_prediction
        .or_else(|| config.as_ref().map(|c| c.runtime_prediction))
        .unwrap_or(arches_config::RuntimePrediction::None);
    let title_policy = match prediction {
        arches_config::RuntimePrediction::None => title_policy,
        p => format!("{title_policy}, run-time prediction {p}"),
    };
    let mut sim = Simulation::new(nodes, policy, jobs);
    sim.set_runtime_prediction(prediction);
    // A served simulation shows every queued job's decision.
    sim.set_full_plans(args.serve);
    Ok(Prepared {
        sim,
        procs,
        malformed,
        dropped,
        title_policy,
        config,
        staging,
    })
}

fn run(args: &SimulateArgs) -> CliResult<()> {
    if let Some(out) = &args.generate {
        return run_generate(args, out);
    }
    if args.serve {
        return Err(usage(
            "--serve is available only through the moab binary (moab simulate --serve)",
        ));
    }
    let Prepared {
        mut sim,
        procs,
        malformed,
        dropped,
        title_policy,
        config: _,
        staging,
    } = prepare(args)?;
    let started = Instant::now();
    if let Some(u) = args.until {
        sim.run_until(u).map_err(failure)?;
    } else {
        let progress = std::io::stderr().is_terminal();
        let total = sim.total_jobs();
        while sim.step(PROGRESS_STEP).map_err(failure)? == PROGRESS_STEP {
            if progress {
                eprint!(
                    "\r{:>6.2}%  {} / {} jobs submitted  t={}",
                    100.0 * sim.submitted() as f64 / total.max(1) as f64,
                    sim.submitted(),
                    total,
                    sim.now()
                );
            }
        }
        if progress {
            eprintln!();
        }
    }
    let mut summary: Summary = sim.summary();
    summary.sim_wall_s = started.elapsed().as_secs_f64();
    summary.malformed_lines = malformed;
    summary.sanitize_dropped = dropped;
    if malformed > 0 {
        eprintln!("moab simulate: skipped {malformed} malformed trace lines");
    }
    for s in &summary.skipped {
        eprintln!("moab simulate: job {} skipped: {}", s.job, s.reason);
    }
    if let Some(st) = &staging {
        summary.staging = Some(st.clone());
        eprintln!(
            "moab simulate: staging {}: {} jobs staged, {:.1} processor-hours of compute idle waiting for data, mean stage wait {:.0} s",
            st.mode, st.staged_jobs, st.idle_proc_hours_waiting_for_data, st.mean_stage_wait_s
        );
    }
    write_summary(&args.summary, &summary)?;
    if let Some(path) = &args.report {
        let input = args.trace.as_ref().or(args.workload.as_ref());
        let title = format!(
            "Arches simulation: {} on {procs} processors ({title_policy})",
            input.map_or_else(String::new, |p| p.display().to_string()),
        );
        let html = crate::report::render(&title, &summary, sim.records());
        std::fs::write(path, html).map_err(|e| failure(format!("{}: {e}", path.display())))?;
    }
    if let Some(path) = &args.jobs_csv {
        let f = File::create(path).map_err(|e| failure(format!("{}: {e}", path.display())))?;
        let mut w = BufWriter::new(f);
        write_jobs_csv(sim.records(), &mut w)
            .and_then(|()| w.flush())
            .map_err(|e| failure(format!("{}: {e}", path.display())))?;
    }
    Ok(())
}

/// The input as read.
struct Loaded {
    jobs: Vec<SimJob>,
    procs: u32,
    /// Malformed lines skipped.
    malformed: usize,
    /// Jobs dropped by the sanitising filter.
    dropped: usize,
}

/// Reads moab.cfg; errors are fatal, warnings are printed.
fn load_config(path: &std::path::Path) -> CliResult<arches_config::Config> {
    let parsed = arches_config::load_file(path).map_err(usage)?;
    for d in &parsed.diagnostics {
        eprintln!("moab simulate: {d}");
    }
    if parsed.has_errors() {
        return Err(usage(format!("{}: invalid configuration", path.display())));
    }
    Ok(parsed.config)
}

/// Reads the input; `config_procs` is the machine size the configuration's
/// nodes give (used when `--procs` is absent).
fn load(args: &SimulateArgs, config_procs: Option<u32>) -> CliResult<Loaded> {
    if let Some(path) = &args.trace {
        let opts = SwfOptions {
            sanitize: args.sanitize,
            min_job_id: args.min_job_id,
            skip_malformed: args.skip_malformed,
        };
        let trace = read_swf(path, &opts).map_err(usage)?;
        let procs = args
            .procs
            .or(config_procs)
            .or(trace.header.max_procs)
            .or(trace.header.max_nodes)
            .filter(|p| *p > 0)
            .ok_or_else(|| {
                usage(format!(
                    "{}: the header gives no MaxProcs; pass --procs",
                    path.display()
                ))
            })?;
        let (jobs, dropped) = to_jobs(&trace.records, procs, &opts);
        return Ok(Loaded {
            jobs,
            procs,
            malformed: trace.malformed,
            dropped,
        });
    }
    let path = args
        .workload
        .as_ref()
        .ok_or_else(|| usage("give --trace, --workload or --generate"))?;
    let mut jobs = read_jsonl(path).map_err(usage)?;
    if let Some(m) = args.min_job_id {
        jobs.retain(|j| j.id >= m);
    }
    let procs = args
        .procs
        .or(config_procs)
        .filter(|p| *p > 0)
        .ok_or_else(|| usage("a JSONL workload needs --procs N or --config with NODECFG"))?;
    Ok(Loaded {
        jobs,
        procs,
        malformed: 0,
        dropped: 0,
    })
}

fn write_summary(dest: &str, summary: &Summary) -> CliResult<()> {
    let text = serde_json::to_string_pretty(summary).map_err(failure)?;
    if dest == "-" {
        let mut out = std::io::stdout().lock();
        return match writeln!(out, "{text}").and_then(|()| out.flush()) {
            // A closed pipe (`| head`) is not an error of the simulation.
            Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
                Err(failure(format!("stdout: {e}")))
            }
            _ => Ok(()),
        };
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
