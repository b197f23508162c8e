//! `moab`: the Arches daemon (and `moab simulate`). Defined in `arches-server`.
fn main() -> std::process::ExitCode {
    arches_server::main()
}
