//! `mcredctl`: see `man mcredctl`. The command is defined in `arches-cli`.
fn main() -> std::process::ExitCode {
    arches_cli::run("mcredctl")
}
