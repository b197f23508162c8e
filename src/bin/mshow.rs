//! `mshow`: see `man mshow`. The command is defined in `arches-cli`.
fn main() -> std::process::ExitCode {
    arches_cli::run("mshow")
}
