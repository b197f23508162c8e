//! `showhist` (also installed as Moab's `showhist.moab.pl`): see `man showhist`.
//! The command is defined in `arches-cli`.
fn main() -> std::process::ExitCode {
    arches_cli::run("showhist")
}
