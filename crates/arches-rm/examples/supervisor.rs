//! A stand-alone local-RM supervisor (`supervisor <job dir>`), the same code
//! the `moab` binary runs as `moab __supervise <job dir>`. The integration
//! tests and the start-rate benchmark use it.

fn main() -> std::process::ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    arches_rm::local::supervise_main(&args)
}
