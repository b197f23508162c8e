//! Stand-alone `simulate` for measurements before `moab simulate` is wired:
//! `cargo run --release -p arches-sim --example simulate -- --trace FILE ...`.

use clap::Parser;

/// Replays a workload trace through the Arches scheduler.
#[derive(Parser)]
struct Cli {
    #[command(flatten)]
    args: arches_sim::SimulateArgs,
}

fn main() -> std::process::ExitCode {
    arches_sim::main(Cli::parse().args)
}
