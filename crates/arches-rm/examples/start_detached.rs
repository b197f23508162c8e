//! A stand-in for a daemon that dies right after starting a job:
//! `start_detached <spool dir> <job id> <work dir> <script>` starts the job
//! with a `LocalRm` (supervisor: the `supervisor` example next to this one),
//! output in `<work dir>/<job id>.out`, and exits at once without waiting.
//! A later `LocalRm` on the same spool recovers the job.

use std::process::ExitCode;

use arches_core::Node;
use arches_rm::local::{LocalConfig, LocalRm};
use arches_rm::{ExecSpec, Launch, LaunchNode, ResourceManager};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [spool, job, workdir, script] = args.as_slice() else {
        eprintln!("usage: start_detached <spool dir> <job id> <work dir> <script>");
        return ExitCode::from(2);
    };
    let Ok(job) = job.parse() else {
        eprintln!("bad job id {job:?}");
        return ExitCode::from(2);
    };
    let Some(supervisor) = std::env::current_exe()
        .ok()
        .and_then(|exe| Some(exe.parent()?.join("supervisor")))
    else {
        eprintln!("cannot locate the supervisor example");
        return ExitCode::FAILURE;
    };
    let config = LocalConfig::new(
        "local",
        spool,
        vec![supervisor.to_string_lossy().into_owned()],
        vec![Node::new("local", 1, 1024)],
    );
    // SAFETY: plain getters.
    let (uid, gid) = unsafe { (libc::geteuid(), libc::getegid()) };
    let out = format!("{workdir}/{job}.out");
    let launch = Launch {
        job,
        name: format!("detached{job}"),
        nodes: vec![LaunchNode {
            name: "local".into(),
            tasks: 1,
            procs: 1,
            gres: Vec::new(),
        }],
        exec: ExecSpec {
            script: script.clone(),
            workdir: workdir.clone(),
            stdout: out.clone(),
            stderr: out,
            join: true,
            env: vec![("PATH".into(), "/usr/local/bin:/usr/bin:/bin".into())],
            uid,
            gid,
            ..ExecSpec::default()
        },
        walltime: None,
        restarted: false,
    };
    match LocalRm::new(config).and_then(|mut rm| rm.start(&launch, 0)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{e}");
            ExitCode::FAILURE
        }
    }
}
