//! `moab`: the Arches daemon (and `moab simulate`). Defined in `arches-server`.
//!
//! `moab __supervise <job dir>` is the per-job supervisor of the local
//! resource manager (`arches_rm::local`): the daemon starts one for every job
//! so that jobs outlive the daemon. It is not meant to be run by hand.
fn main() -> std::process::ExitCode {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("__supervise") {
        return arches_rm::local::supervise_main(&args[2..]);
    }
    arches_server::main()
}
