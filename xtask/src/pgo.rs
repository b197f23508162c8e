//! `cargo run -p xtask -- pgo`: a profile-guided build of `moab` for trace
//! replays (`moab simulate`), the build BENCHMARKS.md measures against pyss
//! beside the plain release build.
//!
//! 1. `moab` built with `-Cprofile-generate` into `<target>/pgo-train`;
//! 2. the training replays: the bundled logs (`data/traces`) under EASY and
//!    conservative backfill, and SDSC-SP2 and UniLu-Gaia under the
//!    recommended run-time prediction setting (BENCHMARKS.md), each summary
//!    kept;
//! 3. the profiles merged with `llvm-profdata` (rustup's `llvm-tools`
//!    component: the one matching rustc's LLVM);
//! 4. `moab` built with `-Cprofile-use` into `<target>/pgo`;
//! 5. the training replays again with that binary: every summary must equal
//!    the instrumented binary's (the same source without the profile's
//!    layout), else the build fails.
//!
//! The profile covers the simulator only: the daemon's code, cold in it, is
//! laid out for size. Install and package the plain release build.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use anyhow::{bail, Context, Result};

/// The recommended run-time prediction setting (BENCHMARKS.md, "the
/// recommended site setting"), with the 12-hour guard of the last sweep.
const RECOMMENDED: &str = "RUNTIMEPREDICTION USERMEAN2
BFORDER SHORTESTPREDICTEDFIRST
PREDICTIONCORRECTION WALLTIME
PREDICTIONGUARD 12:00:00
XFACTORWEIGHT 30
QUEUETIMEWEIGHT 1
FSPOLICY DEDICATEDPS
FSINTERVAL 24:00:00
FSDEPTH 7
FSDECAY 0.8
FSWEIGHT 1
FSUSERWEIGHT 10
USERCFG[DEFAULT] FSTARGET=5
";

/// The bundled logs with the machine arguments the pyss comparison uses.
const LOGS: [(&str, &[&str]); 4] = [
    (
        "KTH-SP2-1996-2.swf.gz",
        &["--procs", "100", "--min-job-id", "15"],
    ),
    ("SDSC-SP2-1998-4.2-cln.swf.gz", &["--procs", "128"]),
    ("CTC-SP2-1996-3.1-cln.swf.gz", &["--procs", "512"]),
    ("UniLu-Gaia-2014-2.swf.gz", &[]),
];

/// One training replay: its name and its `moab` arguments after the trace.
struct Replay {
    name: String,
    log: &'static str,
    args: Vec<String>,
}

fn replays(recommended: &Path) -> Vec<Replay> {
    let mut out = Vec::new();
    for (log, machine) in LOGS {
        let base: Vec<String> = machine.iter().map(|s| s.to_string()).collect();
        let stem = log.split('-').next().unwrap_or(log).to_lowercase();
        out.push(Replay {
            name: format!("{stem}-easy"),
            log,
            args: base.clone(),
        });
        let mut cons = base.clone();
        cons.extend(
            [
                "--reservation-depth",
                "all",
                "--reservation-policy",
                "HIGHEST",
            ]
            .map(String::from),
        );
        out.push(Replay {
            name: format!("{stem}-conservative"),
            log,
            args: cons,
        });
        if matches!(stem.as_str(), "sdsc" | "unilu") {
            let mut rec = base;
            rec.push("--config".into());
            rec.push(recommended.display().to_string());
            out.push(Replay {
                name: format!("{stem}-recommended"),
                log,
                args: rec,
            });
        }
    }
    out
}

/// `llvm-profdata` of the active toolchain (rustup's `llvm-tools`).
fn profdata_tool() -> Result<PathBuf> {
    let out = Command::new("rustc")
        .args(["--print", "sysroot"])
        .output()
        .context("running rustc --print sysroot")?;
    let sysroot = String::from_utf8(out.stdout)?.trim().to_string();
    let vv = Command::new("rustc").arg("-vV").output()?;
    let host = String::from_utf8(vv.stdout)?
        .lines()
        .find_map(|l| l.strip_prefix("host: ").map(str::to_string))
        .context("rustc -vV names no host")?;
    let tool = Path::new(&sysroot)
        .join("lib/rustlib")
        .join(host)
        .join("bin/llvm-profdata");
    if !tool.is_file() {
        bail!(
            "{} not found: install the toolchain's LLVM tools with `rustup component add llvm-tools`",
            tool.display()
        );
    }
    Ok(tool)
}

/// Builds `moab` into `target` with `flag` added to `RUSTFLAGS`; `what`
/// names the build in the progress line.
fn build(root: &Path, target: &Path, flag: &str, what: &str) -> Result<PathBuf> {
    println!("== {what} build (target {})", target.display());
    let mut flags = std::env::var("RUSTFLAGS").unwrap_or_default();
    if !flags.is_empty() {
        flags.push(' ');
    }
    flags.push_str(flag);
    let status = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .current_dir(root)
        .env("RUSTFLAGS", flags)
        .args([
            "build",
            "--release",
            "--locked",
            "-p",
            "arches",
            "--bin",
            "moab",
        ])
        .arg("--target-dir")
        .arg(target)
        .status()
        .context("running cargo build")?;
    if !status.success() {
        bail!("cargo build ({flag}) failed");
    }
    Ok(target.join("release/moab"))
}

/// Runs every replay with `moab`, returning each summary without its wall
/// time (the only field that differs between two runs).
fn train(root: &Path, moab: &Path, replays: &[Replay], dir: &Path) -> Result<Vec<String>> {
    let mut out = Vec::new();
    for r in replays {
        let summary = dir.join(format!("{}.json", r.name));
        let t0 = Instant::now();
        let status = Command::new(moab)
            .arg("simulate")
            .arg("--trace")
            .arg(root.join("data/traces").join(r.log))
            .args(&r.args)
            .arg("--summary")
            .arg(&summary)
            .stdout(std::process::Stdio::null())
            .status()
            .with_context(|| format!("running {}", moab.display()))?;
        if !status.success() {
            bail!("{} simulate ({}) failed", moab.display(), r.name);
        }
        let text = std::fs::read_to_string(&summary)?;
        let mut json: serde_json::Value = serde_json::from_str(&text)
            .with_context(|| format!("{} is not JSON", summary.display()))?;
        if let Some(m) = json.as_object_mut() {
            m.remove("sim_wall_s");
        }
        let kept = json.to_string();
        println!(
            "  {:<24} {:>8.1} ms",
            r.name,
            t0.elapsed().as_secs_f64() * 1e3
        );
        out.push(kept);
    }
    Ok(out)
}

pub fn pgo(root: &Path) -> Result<()> {
    let tool = profdata_tool()?;
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target"));
    let work = target.join("pgo-data");
    let raw = work.join("raw");
    if work.exists() {
        std::fs::remove_dir_all(&work)?;
    }
    std::fs::create_dir_all(&raw)?;
    let cfg = work.join("recommended.cfg");
    std::fs::write(&cfg, RECOMMENDED)?;
    let replays = replays(&cfg);

    let gen = build(
        root,
        &target.join("pgo-train"),
        &format!("-Cprofile-generate={}", raw.display()),
        "instrumented",
    )?;
    println!("== training replays");
    let want = train(root, &gen, &replays, &work)?;
    let merged = work.join("moab.profdata");
    let status = Command::new(&tool)
        .arg("merge")
        .arg("-o")
        .arg(&merged)
        .arg(&raw)
        .status()
        .context("running llvm-profdata")?;
    if !status.success() {
        bail!("llvm-profdata merge failed");
    }
    let moab = build(
        root,
        &target.join("pgo"),
        &format!("-Cprofile-use={}", merged.display()),
        "optimised",
    )?;
    println!("== the same replays with the optimised binary");
    let got = train(root, &moab, &replays, &work)?;
    let differ: Vec<&str> = replays
        .iter()
        .zip(want.iter().zip(&got))
        .filter(|(_, (w, g))| w != g)
        .map(|(r, _)| r.name.as_str())
        .collect();
    if !differ.is_empty() {
        bail!(
            "the profile-guided binary's summaries differ from the instrumented one's: {}",
            differ.join(", ")
        );
    }
    println!(
        "{}: {} summaries identical to the instrumented build's",
        moab.display(),
        replays.len()
    );
    Ok(())
}
