//! Runs scheduling iterations of the `gres/...` benchmark workloads a fixed
//! number of times, so that an instruction counter can measure them where
//! wall-clock time cannot (a loaded machine, a VM without hardware
//! counters). BENCHMARKS.md "Iteration time with GPU jobs" has the command:
//!
//! ```text
//! cargo build --release -p arches-core --example gres_iteration
//! valgrind --tool=callgrind --callgrind-out-file=/dev/null \
//!     target/release/examples/gres_iteration MACHINE MIX N
//! ```
//!
//! `MACHINE`: `every-5th` (GPUs on every fifth node) or `all-gpu-nodes`;
//! `MIX`: `cpu-only`, `shapes-without-gpus` or `gpu-10pct`; `N`: how many
//! iterations. The instructions of one iteration are the difference between
//! runs with `N` and `0`, divided by `N` (the state is built the same way in
//! both). Prints what one iteration decides, to show that the workloads
//! are the benchmark's.

use std::hint::black_box;
use std::process::ExitCode;

use arches_core::schedule;

#[path = "../benches/common/mod.rs"]
mod common;
use common::{gres_state, policy, Mix};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage =
        "usage: gres_iteration every-5th|all-gpu-nodes cpu-only|shapes-without-gpus|gpu-10pct N";
    let [machine, mix, n] = args.as_slice() else {
        eprintln!("{usage}");
        return ExitCode::from(2);
    };
    let every = match machine.as_str() {
        "every-5th" => 5,
        "all-gpu-nodes" => 1,
        _ => {
            eprintln!("{usage}");
            return ExitCode::from(2);
        }
    };
    let mix = match mix.as_str() {
        "cpu-only" => Mix::CpuOnly,
        "shapes-without-gpus" => Mix::SmallTasks,
        "gpu-10pct" => Mix::Gpus,
        _ => {
            eprintln!("{usage}");
            return ExitCode::from(2);
        }
    };
    let Ok(n) = n.parse::<u32>() else {
        eprintln!("{usage}");
        return ExitCode::from(2);
    };
    let st = gres_state(100_000, 10_000, mix, every);
    let p = policy(1);
    let mut starts = 0;
    for _ in 0..n {
        let plan = black_box(schedule(&st, &p, 1_000_000));
        starts = plan.starts.len();
    }
    println!("{n} iterations, {starts} starts each");
    ExitCode::SUCCESS
}
