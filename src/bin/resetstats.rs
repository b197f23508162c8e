//! `resetstats`: see `man resetstats`. The command is defined in `arches-cli`.
fn main() -> std::process::ExitCode {
    arches_cli::run("resetstats")
}
