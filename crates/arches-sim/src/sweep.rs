//! `moab simulate --sweep`: one replay of the same input per configuration,
//! in parallel on every core (rayon), the input read once and shared (a
//! compact SWF trace is never copied), with a progress bar, one comparison
//! table (comfy-table) and CSV/JSON output.
//!
//! The configurations are either the `*.cfg` files of a directory (each a
//! whole moab.cfg, named by its file name) or a parameter grid:
//! `RESERVATIONDEPTH=1,2,4,8 BACKFILLPOLICY=FIRSTFIT,BESTFIT` is every
//! combination (the first parameter varies slowest) of those lines added to
//! the base configuration (`--config`, else Moab's defaults). The options
//! that set a policy (`--backfill`, `--reservation-depth`, ...) apply to
//! every configuration; with a grid they may not name a swept parameter.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use rayon::prelude::*;
use serde::Serialize;

use crate::cli::{
    build, failure, input_notes, load_config, read_input, summary_of, usage, CliResult, Prepared,
    SimulateArgs, PROGRESS_STEP,
};
use crate::metrics::Summary;

/// Most configurations one sweep replays.
pub const MAX_CONFIGURATIONS: usize = 4096;

/// One configuration of a sweep.
#[derive(Debug, Clone)]
pub struct SweepConfig {
    /// `RESERVATIONDEPTH=4 BACKFILLPOLICY=BESTFIT`, or the file name.
    pub name: String,
    /// The grid's `(parameter, value)` pairs (empty for a file).
    pub parameters: Vec<(String, String)>,
    /// The moab.cfg file (a directory sweep).
    pub file: Option<PathBuf>,
    pub config: arches_config::Config,
}

/// The options that set what a swept parameter would: a grid may not sweep
/// what an option fixes.
const OPTION_PARAMS: &[(&str, &str)] = &[
    ("BACKFILLPOLICY", "--backfill"),
    ("RESERVATIONDEPTH", "--reservation-depth"),
    ("RESERVATIONPOLICY", "--reservation-policy"),
    ("RUNTIMEPREDICTION", "--runtime-prediction"),
    ("BFORDER", "--bf-order"),
    ("PREDICTIONCORRECTION", "--prediction-correction"),
    ("PREDICTIONSCOPE", "--prediction-scope"),
    ("PREDICTIONGUARD", "--prediction-guard"),
];

fn option_given(args: &SimulateArgs, option: &str) -> bool {
    match option {
        "--backfill" => args.backfill.is_some(),
        "--reservation-depth" => args.reservation_depth.is_some(),
        "--reservation-policy" => args.reservation_policy.is_some(),
        "--runtime-prediction" => args.runtime_prediction.is_some(),
        "--bf-order" => args.bf_order.is_some(),
        "--prediction-correction" => args.prediction_correction.is_some(),
        "--prediction-scope" => args.prediction_scope.is_some(),
        "--prediction-guard" => args.prediction_guard.is_some(),
        _ => false,
    }
}

/// The configurations `--sweep` names: a directory of moab.cfg files, or
/// `PARAM=V1,V2,...` dimensions (one per value of `--sweep`, or several in
/// one value separated by white space).
pub fn configurations(args: &SimulateArgs) -> CliResult<Vec<SweepConfig>> {
    let specs: Vec<&str> = args
        .sweep
        .iter()
        .flat_map(|s| s.split_whitespace())
        .collect();
    if specs.is_empty() {
        return Err(usage(
            "--sweep needs a directory of moab.cfg files or PARAM=V1,V2,...",
        ));
    }
    if specs.len() == 1 && !specs[0].contains('=') {
        if args.config.is_some() {
            return Err(usage(
                "--sweep DIR takes whole moab.cfg files: --config cannot be combined with it",
            ));
        }
        return directory(Path::new(specs[0]));
    }
    let base = match args.config.as_deref() {
        Some(p) => load_config(p)?,
        None => arches_config::Config::default(),
    };
    let mut dims: Vec<(String, Vec<String>)> = Vec::new();
    for spec in specs {
        let (name, values) = spec.split_once('=').ok_or_else(|| {
            usage(format!(
                "--sweep {spec}: expected PARAM=V1,V2,... (or one directory of moab.cfg files)"
            ))
        })?;
        let bare = name.split('[').next().unwrap_or(name);
        if arches_config::params::lookup(bare).is_none() {
            let hint =
                arches_config::params::suggest(bare, arches_config::params::all().map(|p| p.name))
                    .map(|s| format!(" (did you mean {s}?)"))
                    .unwrap_or_default();
            return Err(usage(format!(
                "--sweep {spec}: unknown moab.cfg parameter '{bare}'{hint}"
            )));
        }
        if let Some((_, opt)) = OPTION_PARAMS
            .iter()
            .find(|(p, o)| p.eq_ignore_ascii_case(bare) && option_given(args, o))
        {
            return Err(usage(format!(
                "--sweep {spec}: {opt} fixes {bare} for every configuration; leave one of them out"
            )));
        }
        if dims.iter().any(|(n, _)| n.eq_ignore_ascii_case(name)) {
            return Err(usage(format!("--sweep: {name} is swept twice")));
        }
        let values: Vec<String> = values
            .split(',')
            .map(str::trim)
            .filter(|v| !v.is_empty())
            .map(String::from)
            .collect();
        if values.is_empty() {
            return Err(usage(format!("--sweep {spec}: no value")));
        }
        dims.push((name.to_string(), values));
    }
    let count = dims
        .iter()
        .try_fold(1usize, |n, (_, v)| n.checked_mul(v.len()))
        .filter(|n| *n <= MAX_CONFIGURATIONS)
        .ok_or_else(|| {
            usage(format!(
                "--sweep: more than {MAX_CONFIGURATIONS} configurations"
            ))
        })?;
    let mut out = Vec::with_capacity(count);
    for k in 0..count {
        // Mixed radix, the first dimension varying slowest.
        let mut rest = k;
        let mut picks = vec![0; dims.len()];
        for (d, (_, values)) in dims.iter().enumerate().rev() {
            picks[d] = rest % values.len();
            rest /= values.len();
        }
        let mut config = base.clone();
        let mut parameters = Vec::with_capacity(dims.len());
        for (d, (name, values)) in dims.iter().enumerate() {
            let value = &values[picks[d]];
            config
                .apply_line(&format!("{name} {value}"))
                .map_err(|errors| {
                    let why: Vec<String> = errors.iter().map(|e| e.message.clone()).collect();
                    usage(format!("--sweep {name}={value}: {}", why.join("; ")))
                })?;
            parameters.push((name.clone(), value.clone()));
        }
        let name = parameters
            .iter()
            .map(|(n, v)| format!("{n}={v}"))
            .collect::<Vec<_>>()
            .join(" ");
        out.push(SweepConfig {
            name,
            parameters,
            file: None,
            config,
        });
    }
    Ok(out)
}

/// Every `*.cfg` file of `dir`, by file name.
fn directory(dir: &Path) -> CliResult<Vec<SweepConfig>> {
    let entries = std::fs::read_dir(dir).map_err(|e| {
        usage(format!(
            "--sweep {}: {e} (give a directory of moab.cfg files or PARAM=V1,V2,...)",
            dir.display()
        ))
    })?;
    let mut files: Vec<PathBuf> = Vec::new();
    for e in entries {
        let path = e
            .map_err(|e| usage(format!("{}: {e}", dir.display())))?
            .path();
        if path.is_file() && path.extension().is_some_and(|x| x == "cfg") {
            files.push(path);
        }
    }
    files.sort();
    if files.is_empty() {
        return Err(usage(format!(
            "--sweep {}: no *.cfg file in it",
            dir.display()
        )));
    }
    if files.len() > MAX_CONFIGURATIONS {
        return Err(usage(format!(
            "--sweep {}: more than {MAX_CONFIGURATIONS} configurations",
            dir.display()
        )));
    }
    files
        .into_iter()
        .map(|f| {
            Ok(SweepConfig {
                name: f
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default(),
                parameters: Vec::new(),
                config: load_config(&f)?,
                file: Some(f),
            })
        })
        .collect()
}

/// One configuration's result.
#[derive(Debug, Clone, Serialize)]
pub struct SweepResult {
    pub name: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub parameters: Vec<(String, String)>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<PathBuf>,
    /// The policy as the report titles it.
    pub policy: String,
    /// The configuration whose replay gave these results, when this one was
    /// not replayed on its own because it must replay alike ([`twins`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub same_as: Option<String>,
    pub summary: Summary,
}

/// The JSON document of a sweep (`--sweep-json`).
#[derive(Debug, Clone, Serialize)]
pub struct SweepReport {
    pub input: String,
    /// Jobs in the input (replayed by every configuration).
    pub input_jobs: usize,
    /// Wall-clock seconds reading the input (once).
    pub read_s: f64,
    /// Wall-clock seconds of the replays (all configurations, in parallel).
    pub replay_wall_s: f64,
    /// Threads the replays ran on.
    pub threads: usize,
    pub configurations: Vec<SweepResult>,
}

/// Runs `moab simulate --sweep`.
pub fn run(args: &SimulateArgs) -> CliResult<()> {
    if args.jobs_csv.is_some() || args.report.is_some() || args.until.is_some() {
        return Err(usage(
            "--sweep writes one table (--sweep-csv, --sweep-json): --jobs-csv, --report and --until are for single replays",
        ));
    }
    let configs = configurations(args)?;
    let read = Instant::now();
    let input = read_input(args)?;
    let read_s = read.elapsed().as_secs_f64();
    let mut prepared: Vec<(SweepConfig, Prepared)> = Vec::with_capacity(configs.len());
    for c in configs {
        let p = build(args, Some(c.config.clone()), &input)
            .map_err(|(code, msg)| (code, format!("configuration {}: {msg}", c.name)))?;
        prepared.push((c, p));
    }
    if let Some((_, p)) = prepared.first() {
        input_notes(&p.info);
    }
    let input_jobs = prepared.first().map_or(0, |(_, p)| p.sim.total_jobs());
    // The configurations that must replay as an earlier one are set aside:
    // they take its results if its replay proves it (every iteration lean,
    // reading only decisions), else they are replayed after all.
    let twin_of = twins(&prepared);
    let total = prepared.len();
    let submitted: Vec<AtomicUsize> = (0..total).map(|_| AtomicUsize::new(0)).collect();
    let finished = AtomicUsize::new(0);
    let started = Instant::now();
    let done = AtomicUsize::new(0);
    let results: Vec<CliResult<SweepResult>> = std::thread::scope(|scope| {
        let bar = std::io::stderr().is_terminal().then(|| {
            let (submitted, finished, done) = (&submitted, &finished, &done);
            scope.spawn(move || {
                while done.load(Ordering::Relaxed) == 0 {
                    let jobs: usize = submitted.iter().map(|a| a.load(Ordering::Relaxed)).sum();
                    let configs = finished.load(Ordering::Relaxed);
                    eprint!(
                        "\r{}",
                        progress_bar(configs, total, jobs, input_jobs * total)
                    );
                    std::thread::sleep(Duration::from_millis(200));
                }
            })
        });
        // Replays a batch in parallel, each result at its configuration's
        // position.
        let mut results: Vec<Option<CliResult<(SweepResult, bool)>>> =
            (0..total).map(|_| None).collect();
        let run_batch =
            |batch: Vec<(usize, (SweepConfig, Prepared))>,
             results: &mut [Option<CliResult<(SweepResult, bool)>>]| {
                let out: Vec<_> = batch
                    .into_par_iter()
                    .map(|(i, (c, p))| {
                        let r = replay(c, p, &submitted[i]);
                        finished.fetch_add(1, Ordering::Relaxed);
                        (i, r)
                    })
                    .collect();
                for (i, r) in out {
                    results[i] = Some(r);
                }
            };
        let (first, set_aside): (Vec<_>, Vec<_>) = prepared
            .into_iter()
            .enumerate()
            .partition(|(i, _)| twin_of[*i].is_none());
        run_batch(first, &mut results);
        let mut again = Vec::new();
        for (i, (c, p)) in set_aside {
            let rep = twin_of[i].expect("set aside as a twin");
            let Some(Ok((res, true))) = &results[rep] else {
                again.push((i, (c, p)));
                continue;
            };
            let mut summary = res.summary.clone();
            // Not replayed: no time of its own.
            summary.sim_wall_s = 0.0;
            let twin = SweepResult {
                same_as: Some(res.name.clone()),
                name: c.name,
                parameters: c.parameters,
                file: c.file,
                policy: p.info.title_policy,
                summary,
            };
            results[i] = Some(Ok((twin, true)));
            submitted[i].store(input_jobs, Ordering::Relaxed);
            finished.fetch_add(1, Ordering::Relaxed);
        }
        run_batch(again, &mut results);
        let out = results
            .into_iter()
            .map(|r| {
                r.expect("every configuration has a result")
                    .map(|(res, _)| res)
            })
            .collect();
        done.store(1, Ordering::Relaxed);
        if let Some(b) = bar {
            let _ = b.join();
            eprintln!(
                "\r{}",
                progress_bar(total, total, input_jobs * total, input_jobs * total)
            );
        }
        out
    });
    let replay_wall_s = started.elapsed().as_secs_f64();
    let configurations = results.into_iter().collect::<CliResult<Vec<_>>>()?;
    let report = SweepReport {
        input: args
            .trace
            .as_ref()
            .or(args.workload.as_ref())
            .map(|p| p.display().to_string())
            .unwrap_or_default(),
        input_jobs,
        read_s,
        replay_wall_s,
        threads: rayon::current_num_threads(),
        configurations,
    };
    write_report(args, &report)
}

/// For each configuration, the earlier one it must replay exactly as, if
/// any: grid configurations that differ only in `RESERVATIONDEPTH` and whose
/// policies are equal as far as decisions-only lean iterations go
/// ([`arches_core::lean::decisions_policy`]: under `BACKFILLPOLICY NONE`
/// with `CURRENTHIGHEST` any depth of 1 or more). Their replays are the same
/// when every iteration was such a lean one, which is known only after it
/// ([`crate::run::Simulation::complete_plans`]): the caller checks.
pub fn twins(prepared: &[(SweepConfig, Prepared)]) -> Vec<Option<usize>> {
    let depth = |n: &str| n.eq_ignore_ascii_case("RESERVATIONDEPTH");
    // The other parameters and the policy as decisions see it.
    type Key = (Vec<(String, String)>, arches_core::Policy);
    let keys: Vec<Option<Key>> = prepared
        .iter()
        .map(|(c, p)| {
            let grid = c.file.is_none() && c.parameters.iter().any(|(n, _)| depth(n));
            grid.then(|| {
                let others = c
                    .parameters
                    .iter()
                    .filter(|(n, _)| !depth(n))
                    .map(|(n, v)| (n.to_ascii_uppercase(), v.clone()))
                    .collect();
                (others, arches_core::lean::decisions_policy(p.sim.policy()))
            })
        })
        .collect();
    (0..prepared.len())
        .map(|i| {
            let key = keys[i].as_ref()?;
            // The first with the key (itself replayed).
            (0..i).find(|&j| keys[j].as_ref() == Some(key))
        })
        .collect()
}

/// Replays one configuration to the end, publishing how many jobs it
/// submitted so far in `progress`; with whether every iteration was a lean
/// one reading only decisions.
fn replay(c: SweepConfig, p: Prepared, progress: &AtomicUsize) -> CliResult<(SweepResult, bool)> {
    let Prepared { mut sim, info, .. } = p;
    let started = Instant::now();
    loop {
        let done = sim
            .step(PROGRESS_STEP)
            .map_err(|e| failure(format!("configuration {}: {e}", c.name)))?;
        progress.store(sim.submitted(), Ordering::Relaxed);
        if done < PROGRESS_STEP {
            break;
        }
    }
    let summary = summary_of(&info, &sim, started.elapsed().as_secs_f64());
    let decisions_only = sim.complete_plans() == 0;
    Ok((
        SweepResult {
            name: c.name,
            parameters: c.parameters,
            file: c.file,
            policy: info.title_policy,
            same_as: None,
            summary,
        },
        decisions_only,
    ))
}

/// `[#########...........]  3/16 configurations  41.2% of jobs submitted`.
pub fn progress_bar(configs: usize, total: usize, jobs: usize, all_jobs: usize) -> String {
    const WIDTH: usize = 30;
    let share = if all_jobs == 0 {
        if total == 0 {
            1.0
        } else {
            configs as f64 / total as f64
        }
    } else {
        jobs as f64 / all_jobs as f64
    };
    let filled = ((share * WIDTH as f64).round() as usize).min(WIDTH);
    format!(
        "[{}{}] {configs}/{total} configurations  {:5.1}% of jobs submitted",
        "#".repeat(filled),
        ".".repeat(WIDTH - filled),
        100.0 * share
    )
}

/// The comparison table, the CSV and the JSON, where asked (`-` is
/// standard output; the table goes to standard error then).
fn write_report(args: &SimulateArgs, report: &SweepReport) -> CliResult<()> {
    let to_stdout = |d: &Option<String>| d.as_deref() == Some("-");
    let table = table(report).to_string();
    if to_stdout(&args.sweep_csv) || to_stdout(&args.sweep_json) {
        eprintln!("{table}");
    } else {
        emit("-", &(table + "\n"))?;
    }
    if let Some(dest) = &args.sweep_csv {
        emit(dest, &csv(report))?;
    }
    if let Some(dest) = &args.sweep_json {
        let text = serde_json::to_string_pretty(report).map_err(failure)?;
        emit(dest, &(text + "\n"))?;
    }
    Ok(())
}

fn emit(dest: &str, text: &str) -> CliResult<()> {
    if dest == "-" {
        let mut out = std::io::stdout().lock();
        return match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
            // A closed pipe (`| head`) is not an error of the sweep.
            Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
                Err(failure(format!("stdout: {e}")))
            }
            _ => Ok(()),
        };
    }
    std::fs::write(dest, text).map_err(|e| failure(format!("{dest}: {e}")))
}

/// Columns of the table and the CSV: header, CSV name, value.
type Column = (&'static str, &'static str, fn(&Summary) -> String);

const COLUMNS: &[Column] = &[
    ("jobs", "jobs", |s| s.jobs.to_string()),
    ("avg wait (s)", "avg_wait_s", |s| {
        format!("{:.0}", s.avg_wait_s)
    }),
    ("avg bsld", "avg_bsld10", |s| format!("{:.2}", s.avg_bsld10)),
    ("max wait (s)", "max_wait_s", |s| s.max_wait_s.to_string()),
    ("utilization", "utilization", |s| {
        format!("{:.4}", s.utilization)
    }),
    ("makespan (s)", "makespan_s", |s| s.makespan_s.to_string()),
    ("backfilled", "backfilled_jobs", |s| {
        s.backfilled_jobs.to_string()
    }),
    ("pyss wait (min)", "pyss_avg_wait_min", |s| {
        format!("{:.2}", s.pyss.avg_wait_min)
    }),
    ("pyss bsld", "pyss_avg_bsld10", |s| {
        format!("{:.2}", s.pyss.avg_bsld10)
    }),
    ("iterations", "iterations", |s| s.iterations.to_string()),
    ("replay (s)", "sim_wall_s", |s| {
        format!("{:.3}", s.sim_wall_s)
    }),
];

/// The comparison table: one row per configuration, in sweep order, with
/// the change of bounded slowdown against the first configuration.
pub fn table(report: &SweepReport) -> comfy_table::Table {
    use comfy_table::{presets, CellAlignment, ContentArrangement, Table};
    let first = report.configurations.first().map(|r| r.summary.avg_bsld10);
    let mut t = Table::new();
    t.load_preset(presets::UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Disabled);
    let mut header = vec!["#", "configuration"];
    header.extend(COLUMNS.iter().map(|c| c.0));
    header.push("bsld vs #1");
    t.set_header(header);
    for (i, r) in report.configurations.iter().enumerate() {
        let mut row = vec![(i + 1).to_string(), r.name.clone()];
        row.extend(COLUMNS.iter().map(|c| (c.2)(&r.summary)));
        // A twin was not replayed: its replay time is the one it shares.
        if let Some(same) = &r.same_as {
            let k = report.configurations.iter().position(|o| &o.name == same);
            let replay = COLUMNS.iter().position(|c| c.1 == "sim_wall_s");
            if let (Some(k), Some(cell)) = (k, replay.and_then(|c| row.get_mut(2 + c))) {
                *cell = format!("= #{}", k + 1);
            }
        }
        row.push(match first {
            Some(f) if f > 0.0 && i > 0 => {
                format!("{:+.1}%", 100.0 * (r.summary.avg_bsld10 / f - 1.0))
            }
            _ => "-".to_string(),
        });
        t.add_row(row);
    }
    for i in 0..t.column_count() {
        if i != 1 {
            if let Some(c) = t.column_mut(i) {
                c.set_cell_alignment(CellAlignment::Right);
            }
        }
    }
    t
}

/// One CSV line per configuration: `configuration` then the table's
/// figures at full precision.
pub fn csv(report: &SweepReport) -> String {
    let mut out = String::from("configuration");
    for c in COLUMNS {
        out.push(',');
        out.push_str(c.1);
    }
    out.push_str(",same_as\n");
    for r in &report.configurations {
        out.push_str(&csv_field(&r.name));
        let s = &r.summary;
        let values = [
            s.jobs.to_string(),
            s.avg_wait_s.to_string(),
            s.avg_bsld10.to_string(),
            s.max_wait_s.to_string(),
            s.utilization.to_string(),
            s.makespan_s.to_string(),
            s.backfilled_jobs.to_string(),
            s.pyss.avg_wait_min.to_string(),
            s.pyss.avg_bsld10.to_string(),
            s.iterations.to_string(),
            s.sim_wall_s.to_string(),
        ];
        debug_assert_eq!(values.len(), COLUMNS.len());
        for v in values {
            out.push(',');
            out.push_str(&v);
        }
        out.push(',');
        out.push_str(&csv_field(r.same_as.as_deref().unwrap_or("")));
        out.push('\n');
    }
    out
}

/// A CSV field, quoted when it holds a comma, a quote or a line break.
fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_bar_fills_with_the_jobs_submitted() {
        assert_eq!(
            progress_bar(0, 4, 0, 100),
            "[..............................] 0/4 configurations    0.0% of jobs submitted"
        );
        assert!(progress_bar(2, 4, 50, 100).starts_with("[###############..............."));
        assert!(progress_bar(4, 4, 100, 100).contains("100.0%"));
        assert!(
            progress_bar(1, 2, 0, 0).contains(" 50.0%"),
            "an empty input counts configurations"
        );
    }

    #[test]
    fn csv_fields_are_quoted_when_needed() {
        assert_eq!(csv_field("RESERVATIONDEPTH=4"), "RESERVATIONDEPTH=4");
        assert_eq!(csv_field("a,b"), "\"a,b\"");
        assert_eq!(csv_field("say \"x\""), "\"say \"\"x\"\"\"");
    }
}
