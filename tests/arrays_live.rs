//! Job arrays, the job's environment and arguments, and dependencies through
//! the real binaries: `msub -t`, sub-jobs running with their own
//! environment and output files, the slot limit, showq's collapsed and
//! expanded lines, checkjob of the array and of one index, actions on the
//! whole array and on one index, dependencies in Moab's forms, and the
//! refusals of bad input.

mod common;

use std::time::{Duration, Instant};

use common::{text, Daemon};

const CFG: &str = "NODECFG[n1] PROCS=2\nRMCFG[local] TYPE=LOCAL\n";

/// Polls `what` until `pred` holds for its output.
fn wait_until(d: &Daemon, args: &[&str], pred: impl Fn(&str) -> bool) -> String {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let out = text(&d.run(args[0], &args[1..]).stdout);
        if pred(&out) {
            return out;
        }
        assert!(
            Instant::now() < deadline,
            "{args:?} never as expected:\n{out}\n{}",
            d.daemon_log()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn file(d: &Daemon, name: &str) -> String {
    std::fs::read_to_string(d.home.path().join(name))
        .unwrap_or_else(|e| panic!("{name}: {e}\n{}", d.daemon_log()))
}

const ENV_SCRIPT: &str = "#!/bin/sh\n#PBS -t 1-4%2\n#PBS -l walltime=300\n\
echo \"id=$PBS_JOBID moab=$MOAB_JOBID idx=$PBS_ARRAYID mi=$MOAB_JOBARRAYINDEX range=$MOAB_JOBARRAYRANGE\"\n\
echo \"name=$PBS_JOBNAME env=$PBS_ENVIRONMENT wt=$PBS_WALLTIME queue=$PBS_O_QUEUE home=$PBS_O_HOME path=$PBS_O_PATH\"\n\
echo \"np=$PBS_NP nodes=$PBS_NUM_NODES ppn=$PBS_NUM_PPN nc=$MOAB_NODECOUNT pc=$MOAB_PROCCOUNT part=$MOAB_PARTITION batch=$MOAB_BATCH\"\n\
echo \"args=$#:$1:$2\"\n";

#[test]
fn sub_jobs_run_with_their_environment_arguments_and_output_files() {
    let d = Daemon::start_with_config(Some(CFG));
    let id = d.submit(ENV_SCRIPT, &["-N", "arr", "-F", "one 'two words'"]);
    let done = wait_until(&d, &["checkjob", &id.to_string()], |o| {
        o.contains("    Completed:        4 ( 100.0% )")
    });
    assert!(done.contains("Job Array Info:\n  Name: "), "{done}");
    assert!(done.contains("  Slot Limit: 2\n"), "{done}");
    let home = d.home.path().display().to_string();
    for i in 1..=4 {
        let out = file(&d, &format!("arr.o{id}-{i}"));
        let want = format!(
            "id={id}[{i}] moab={id}[{i}] idx={i} mi={i} range=4\n\
name=arr env=PBS_BATCH wt=300 queue= home={home} path=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin\n\
np=1 nodes=1 ppn=1 nc=1 pc=1 part=DEFAULT batch=1\n\
args=2:one:two words\n"
        );
        assert_eq!(out, want, "sub-job {i}");
        assert_eq!(file(&d, &format!("arr.e{id}-{i}")), "");
    }
    // One index: its own id, Job Group lines; completed.
    let one = text(&d.run("checkjob", &[&format!("{id}[3]")]).stdout);
    assert!(
        one.starts_with(&format!("job {id}[3]\n\nAName: arr\nState: Completed \n")),
        "{one}"
    );
    assert!(
        one.contains(&format!(
            "Job Group:        {id}\nParent Array ID:  {id}\nArray Range:      4\n"
        )),
        "{one}"
    );
    let done = text(&d.run("showq", &["-c"]).stdout);
    for i in 1..=4 {
        assert!(done.contains(&format!("\n{id}[{i}] ")), "{done}");
    }

    // `-o` patterns: %I is the index, a directory gets the default name.
    std::fs::create_dir(d.home.path().join("outdir")).unwrap();
    let b = d.submit(
        "echo \"$PBS_ARRAYID\"\n",
        &["-t", "[7,9]", "-N", "pat", "-o", "out.%I", "-e", "outdir/"],
    );
    wait_until(&d, &["checkjob", &b.to_string()], |o| {
        o.contains("    Completed:        2 ( 100.0% )")
    });
    assert_eq!(file(&d, "out.7"), "7\n");
    assert_eq!(file(&d, "out.9"), "9\n");
    assert_eq!(file(&d, &format!("outdir/pat.e{b}-9")), "");

    // `msub script a b`: the words after the script are its arguments.
    let script = d.home.path().join("args.sh");
    std::fs::write(&script, "echo \"$#:$1:$2\"\n").unwrap();
    let out = d.run(
        "msub",
        &["-N", "argv", script.to_str().unwrap(), "x", "y z"],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let c = common::parse_id(&out);
    d.wait_state(c, "Completed", Duration::from_secs(30));
    assert_eq!(file(&d, &format!("argv.o{c}")), "2:x:y z\n");
    let v = text(&d.run("checkjob", &[&c.to_string()]).stdout);
    assert!(v.contains("Arguments:    x y z\n"), "{v}");
}

#[test]
fn slot_limit_collapsed_lines_and_whole_array_actions() {
    let d = Daemon::start_with_config(Some(CFG));
    // 300 sub-jobs, at most one running at a time.
    let id = d.submit("sleep 60\n", &["-t", "big[1-300]%1", "-l", "walltime=600"]);
    // Sub-jobs are made jobs in chunks: wait until an iteration has seen
    // all of them held back by the slot limit.
    let q = wait_until(&d, &["showq"], |o| {
        o.contains(&format!("\n{id}[1] ")) && o.contains("299 blocked jobs   \n")
    });
    assert!(q.contains(&format!("\n{id}[2-300] ")), "{q}");
    assert!(q.contains("Total jobs:  300\n"), "{q}");
    let two = text(&d.run("checkjob", &[&format!("{id}[2]")]).stdout);
    assert!(
        two.contains(&format!(
            "job violates active HARD SLOTLIMIT limit of 1 for array {id}  (Req: 1  InUse: 1)"
        )),
        "{two}"
    );
    // Expanded: one line per sub-job.
    let t = text(&d.run("showq", &["-t"]).stdout);
    for i in [2, 150, 300] {
        assert!(t.contains(&format!("\n{id}[{i}] ")), "{t}");
    }
    assert_eq!(t.matches(&format!("\n{id}[")).count(), 300);
    // XML: one <job> per sub-job.
    let x = text(&d.run("showq", &["--xml"]).stdout);
    assert!(x.contains(&format!("JobID=\"{id}[300]\"")), "{x}");

    // One index on hold; the rest of the array is alike.
    let out = d.run("mjobctl", &["-h", "user", &format!("{id}[250]")]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let q = text(&d.run("showq", &[]).stdout);
    assert!(q.contains(&format!("\n{id}[250] ")), "{q}");
    assert!(q.contains("UserHold"), "{q}");
    // Hold the whole array, then cancel it.
    let out = d.run("mjobctl", &["-h", "user", &format!("{id}[]")]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        format!("holds modified for job {id}  (User hold still in place)\n")
    );
    let info = text(&d.run("checkjob", &[&id.to_string()]).stdout);
    assert!(info.contains("    Blocked:        299 ( 99.7% )"), "{info}");
    let out = d.run("canceljob", &[&id.to_string()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), format!("\njob '{id}' cancelled\n\n"));
    let q = wait_until(&d, &["showq"], |o| o.contains("Total jobs:  0\n"));
    assert!(!q.contains(&format!("{id}[")), "{q}");
    let info = text(&d.run("checkjob", &[&id.to_string()]).stdout);
    assert!(
        info.contains("    Completed:      300 ( 100.0% )"),
        "{info}"
    );
    assert!(info.contains("State: Removed \n"), "{info}");
}

#[test]
fn dependencies_in_moab_forms() {
    let d = Daemon::start_with_config(Some(CFG));
    let held = d.submit("true\n", &["-h", "-N", "prep", "-l", "walltime=60"]);
    // No type: afterok; by name.
    let a = d.submit(
        "true\n",
        &["-W", "depend=jobname.prep", "-l", "walltime=60"],
    );
    let v = text(&d.run("checkjob", &["-v", &a.to_string()]).stdout);
    assert!(v.contains(&format!("Depend:    afterok:{held}\n")), "{v}");
    // beforeok: the other job waits for this one.
    let b = d.submit("true\n", &["-h", "-W", &format!("depend=beforeok:{held}")]);
    let v = text(&d.run("checkjob", &["-v", &held.to_string()]).stdout);
    assert!(v.contains(&format!("Depend:    afterok:{b}\n")), "{v}");
    // mjobctl -m depend= replaces, += adds, -= removes.
    let out = d.run(
        "mjobctl",
        &["-m", &format!("depend=afterany:{b}"), &a.to_string()],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let v = text(&d.run("checkjob", &["-v", &a.to_string()]).stdout);
    assert!(v.contains(&format!("Depend:    afterany:{b}\n")), "{v}");
    let out = d.run(
        "mjobctl",
        &["-m", &format!("depend-=afterany:{b}"), &a.to_string()],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let v = text(&d.run("checkjob", &["-v", &a.to_string()]).stdout);
    assert!(!v.contains("Depend:"), "{v}");
    // On a whole array: after every sub-job.
    let arr = d.submit("exit 0\n", &["-t", "1-3", "-l", "walltime=60"]);
    let c = d.submit(
        "true\n",
        &[
            "-W",
            &format!("depend=afterokarray:{arr}[]"),
            "-l",
            "walltime=60",
        ],
    );
    d.wait_state(c, "Completed", Duration::from_secs(30));
    let info = text(&d.run("checkjob", &[&arr.to_string()]).stdout);
    assert!(
        info.contains("    Completed:        3 ( 100.0% )"),
        "{info}"
    );
}

/// A job waiting for another's start (`after`) starts once that one
/// started, in the iteration right after, not at the next poll (ten
/// minutes here) or the other job's end.
#[test]
fn a_job_after_another_starts_right_after_it() {
    let d = Daemon::start_with_config(Some(
        "NODECFG[n1] PROCS=2\nRMCFG[local] TYPE=LOCAL\nRMPOLLINTERVAL 00:10:00\n",
    ));
    let a = d.submit("sleep 300\n", &["-h", "-l", "walltime=600"]);
    let b = d.submit(
        "true\n",
        &["-W", &format!("depend=after:{a}"), "-l", "walltime=60"],
    );
    let out = d.run("releasehold", &[&a.to_string()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    d.wait_state(b, "Completed", Duration::from_secs(30));
    d.wait_state(a, "Running", Duration::from_secs(5));
    let out = d.run("canceljob", &[&a.to_string()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
}

#[test]
fn bad_arrays_and_dependencies_are_refused_and_nothing_is_queued() {
    let d = Daemon::start_with_config(Some(CFG));
    let refused = |args: &[&str], why: &str| {
        let out = d.run_stdin("msub", args, "true\n");
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        assert_eq!(
            text(&out.stderr),
            format!("ERROR:    cannot submit job - {why}\n"),
            "{args:?}"
        );
    };
    refused(
        &["-t", "1-5,3"],
        "invalid job array request '1-5,3' (index 3 given twice)",
    );
    refused(
        &["-t", "1-3%0"],
        "invalid job array request '1-3%0' (slot limit must be at least 1)",
    );
    refused(
        &["-t", "x[1-3"],
        "invalid job array request 'x[1-3' (unbalanced brackets in 'x[1-3')",
    );
    refused(
        &["-t", "1-200000"],
        "invalid job array request '1-200000' (more than 100000 sub-jobs (the largest array accepted))",
    );
    refused(
        &["-W", "depend=syncwith:4"],
        "dependency type 'syncwith' is not supported (synchronized job sets, synccount/syncwith, are not co-scheduled by Arches: submit the set as one job with nodes= or procs=, or as a job array)",
    );
    refused(
        &["-W", "depend=afterok:77"],
        "cannot locate dependency job '77' (afterok:77)",
    );
    refused(
        &["-W", "depend=afterok:jobname.none"],
        "cannot locate dependency job 'jobname.none' (afterok:jobname.none)",
    );
    refused(
        &["-W", "depend=afterok:x"],
        "invalid dependency 'afterok:x' ('x' is not a job id or jobname.NAME)",
    );
    refused(
        &["-F", "a b"],
        "script arguments need a script file (none given: standard input)",
    );
    let q = text(&d.run("showq", &[]).stdout);
    assert!(q.contains("Total jobs:  0\n"), "{q}");
}
