//! `showstate`: see `man showstate`. The command is defined in `arches-cli`.
fn main() -> std::process::ExitCode {
    arches_cli::run("showstate")
}
