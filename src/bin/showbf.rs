//! `showbf`: see `man showbf`. The command is defined in `arches-cli`.
fn main() -> std::process::ExitCode {
    arches_cli::run("showbf")
}
