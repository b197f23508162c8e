//! msub's option precedence and working directory, end to end: `-l` in
//! directives and on the command line (the command line wins, a later `-l`
//! overrides an earlier one for the same resource), and `-d` (default: the
//! submission directory; `PBS_O_INITDIR` when given).

mod common;

use std::time::Duration;

use common::Daemon;

fn output(d: &Daemon, name: &str) -> String {
    std::fs::read_to_string(d.home.path().join(name))
        .unwrap_or_else(|e| panic!("{name}: {e}\n{}", d.daemon_log()))
}

const SCRIPT: &str = "#!/bin/sh\n#PBS -l nodes=1:ppn=1,walltime=10:00\n#PBS -l pmem=10mb\n\
echo \"cwd=$(pwd) init=${PBS_O_INITDIR:-none} work=$PBS_O_WORKDIR\"\n";

#[test]
fn command_line_resources_override_directives_and_later_ones_earlier() {
    let d = Daemon::start();
    let id = d.submit(
        SCRIPT,
        &[
            "-o",
            "first.out",
            "-l",
            "nodes=1:ppn=2",
            "-l",
            "walltime=5:00",
            "-l",
            "walltime=20:00",
        ],
    );
    let cj = d.wait_state(id, "Completed", Duration::from_secs(60));
    assert!(cj.contains("Total Requested Tasks: 2\n"), "{cj}");
    assert!(cj.contains(" of 00:20:00\n"), "{cj}");
    let home = d.home.path().display().to_string();
    assert_eq!(
        output(&d, "first.out"),
        format!("cwd={home} init=none work={home}\n"),
        "without -d the job runs in the submission directory"
    );
}

#[test]
fn d_sets_the_working_directory_and_pbs_o_initdir() {
    let d = Daemon::start();
    let sub = d.home.path().join("sub");
    std::fs::create_dir(&sub).expect("mkdir");
    common::set_mode(&sub, 0o755);
    let id = d.submit(SCRIPT, &["-d", "sub", "-o", "second.out"]);
    d.wait_state(id, "Completed", Duration::from_secs(60));
    let home = d.home.path().display().to_string();
    let sub = sub.display().to_string();
    assert_eq!(
        output(&d, "second.out"),
        format!("cwd={sub} init={sub} work={home}\n"),
        "-o stays relative to the submission directory"
    );
}
