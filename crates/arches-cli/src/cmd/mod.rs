//! One module per command: its clap definition and its execution.

use std::ffi::OsString;

use clap::{CommandFactory, Parser};

pub mod jobctl;
pub mod legacy;
pub mod mcredctl;
pub mod mdiag;
pub mod mschedctl;
pub mod mshow;
pub mod msub;
pub mod msub_interactive;
pub mod msub_script;
pub mod msub_slurm;
pub mod msubrc;
pub mod query;
pub mod rsv;

/// The clap `Command` of a client command, by name.
pub fn command(name: &str) -> Option<clap::Command> {
    Some(match name {
        "msub" => msub::Msub::command(),
        "showq" => query::Showq::command(),
        "checkjob" => query::Checkjob::command(),
        "checknode" => query::Checknode::command(),
        "canceljob" => jobctl::Canceljob::command(),
        "mdel" => jobctl::Canceljob::command()
            .name("mdel")
            .bin_name("mdel")
            .about("Cancel jobs (alias of canceljob)"),
        "mjobctl" => jobctl::Mjobctl::command(),
        "releasehold" => jobctl::Releasehold::command(),
        "sethold" => jobctl::Sethold::command(),
        "runjob" => jobctl::Runjob::command(),
        "mdiag" => mdiag::Mdiag::command(),
        "mschedctl" => mschedctl::Mschedctl::command(),
        "showbf" => query::Showbf::command(),
        "showstart" => query::Showstart::command(),
        "showres" => rsv::Showres::command(),
        "showstats" => query::Showstats::command(),
        "mrsvctl" => rsv::Mrsvctl::command(),
        "setspri" => legacy::Setspri::command(),
        "releaseres" => legacy::Releaseres::command(),
        "setres" => legacy::Setres::command(),
        "resetstats" => legacy::Resetstats::command(),
        "showconfig" => legacy::Showconfig::command(),
        "showstate" => legacy::Showstate::command(),
        "mshow" => mshow::Mshow::command(),
        "showhist" => legacy::Showhist::command(),
        "mcredctl" => mcredctl::Mcredctl::command(),
        _ => return None,
    })
}

/// Parses argv with `P`, turning clap's errors into Moab's exit code 1
/// (help and version still exit 0).
fn parse<P: Parser>(name: &str, args: Vec<OsString>) -> Result<P, u8> {
    let cmd = command(name).unwrap_or_else(P::command);
    match cmd.try_get_matches_from(args) {
        Ok(m) => {
            let mut m = m;
            P::from_arg_matches_mut(&mut m).map_err(|e| {
                let _ = e.print();
                crate::EXIT_ERROR
            })
        }
        Err(e) if name == "msub" && e.use_stderr() => {
            // msub's every rejection has one shape (moab-formats §10.2).
            eprintln!("{}", msub::fail(msub::usage_reason(&e)));
            Err(crate::EXIT_ERROR)
        }
        Err(e) => {
            let _ = e.print();
            Err(if e.use_stderr() {
                crate::EXIT_ERROR
            } else {
                crate::EXIT_OK
            })
        }
    }
}

/// Runs a command; `Err` carries the complete message for stderr.
pub fn dispatch(name: &str, args: Vec<OsString>) -> Result<u8, String> {
    macro_rules! go {
        ($ty:ty, $f:path) => {
            match parse::<$ty>(name, args) {
                Ok(a) => $f(a),
                Err(code) => Ok(code),
            }
        };
    }
    match name {
        "msub" => go!(msub::Msub, msub::exec),
        "showq" => go!(query::Showq, query::showq),
        "checkjob" => go!(query::Checkjob, query::checkjob),
        "checknode" => go!(query::Checknode, query::checknode),
        "canceljob" | "mdel" => go!(jobctl::Canceljob, jobctl::canceljob),
        "mjobctl" => go!(jobctl::Mjobctl, jobctl::mjobctl),
        "releasehold" => go!(jobctl::Releasehold, jobctl::releasehold),
        "sethold" => go!(jobctl::Sethold, jobctl::sethold),
        "runjob" => go!(jobctl::Runjob, jobctl::runjob),
        "mdiag" => go!(mdiag::Mdiag, mdiag::exec),
        "mschedctl" => go!(mschedctl::Mschedctl, mschedctl::exec),
        "showbf" => go!(query::Showbf, query::showbf),
        "showstart" => go!(query::Showstart, query::showstart),
        "showres" => go!(rsv::Showres, rsv::showres),
        "showstats" => go!(query::Showstats, query::showstats),
        "mrsvctl" => go!(rsv::Mrsvctl, rsv::mrsvctl),
        "setspri" => go!(legacy::Setspri, legacy::setspri),
        "releaseres" => go!(legacy::Releaseres, legacy::releaseres),
        "setres" => go!(legacy::Setres, legacy::setres),
        "resetstats" => go!(legacy::Resetstats, legacy::resetstats),
        "showconfig" => go!(legacy::Showconfig, legacy::showconfig),
        "showstate" => go!(legacy::Showstate, legacy::showstate),
        "mshow" => go!(mshow::Mshow, mshow::exec),
        "showhist" => go!(legacy::Showhist, legacy::showhist),
        "mcredctl" => go!(mcredctl::Mcredctl, mcredctl::exec),
        other => Err(format!("ERROR:    unknown command '{other}'")),
    }
}
