//! Issue 15 items 2–4 through the real binaries: GPUs given as distinct
//! devices (CUDA_VISIBLE_DEVICES, PBS_GPUFILE) and counted per node,
//! Torque node specifications and host lists, exclusive nodes, class
//! defaults and limits refused with Moab's words, `/etc/msubrc` site
//! defaults, `mjobctl -m gres=`, and unsupported requests refused.

mod common;

use std::time::{Duration, Instant};

use common::{text, Daemon};

const T: Duration = Duration::from_secs(30);

fn wait_file(path: &std::path::Path) -> String {
    let deadline = Instant::now() + T;
    loop {
        if let Ok(s) = std::fs::read_to_string(path) {
            if s.contains("done") {
                return s;
            }
        }
        assert!(
            Instant::now() < deadline,
            "{} never written",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn allocated(checkjob: &str) -> String {
    checkjob
        .split("Allocated Nodes:\n")
        .nth(1)
        .and_then(|s| s.lines().next())
        .unwrap_or("")
        .to_string()
}

#[test]
fn gpu_jobs_get_distinct_devices_and_wait_for_them() {
    let d = Daemon::start_with_config(Some(
        "NODECFG[g1] PROCS=4 GRES=gpu:2\nRMCFG[local] TYPE=LOCAL\n",
    ));
    let home = d.home.path();
    let script = |n: u32| {
        format!(
            "echo \"$CUDA_VISIBLE_DEVICES|$(cat \"$PBS_GPUFILE\" | tr '\\n' ' ')\" > {}/gpu{n}.txt\necho done >> {}/gpu{n}.txt\nsleep 30\n",
            home.display(),
            home.display()
        )
    };
    let a = d.submit(&script(1), &["-l", "gres=gpu:1,walltime=1:00"]);
    let b = d.submit(&script(2), &["-l", "nodes=1:ppn=1:gpus=1,walltime=1:00"]);
    let one = wait_file(&home.join("gpu1.txt"));
    let two = wait_file(&home.join("gpu2.txt"));
    let dev = |s: &str| s.lines().next().unwrap_or("").to_string();
    let (d1, d2) = (dev(&one), dev(&two));
    let idx = |s: &str| s.split('|').next().unwrap_or("").to_string();
    assert_ne!(idx(&d1), idx(&d2), "one device, two jobs: {d1} / {d2}");
    let mut both = [idx(&d1), idx(&d2)];
    both.sort();
    assert_eq!(both, ["0".to_string(), "1".to_string()]);
    assert!(d1.contains(&format!("g1-gpu{}", idx(&d1))), "{d1}");
    // No GPU left: a third GPU job waits although processors are free.
    let c = d.submit("sleep 1\n", &["-l", "gres=gpu:1,walltime=1:00"]);
    let cj = d.wait_considered(c, T);
    assert!(cj.contains("GRes: gpu:1"), "{cj}");
    assert!(
        cj.contains("Dedicated Resources Per Task: PROCS: 1  gpu: 1"),
        "{cj}"
    );
    let node = text(&d.run("checknode", &["g1"]).stdout);
    assert!(
        node.contains("Configured Resources: PROCS: 4  gpu: 2"),
        "{node}"
    );
    assert!(
        node.contains("Dedicated  Resources: PROCS: 2  gpu: 2"),
        "{node}"
    );
    let summary = text(&d.run("mdiag", &["-n"]).stdout);
    assert!(
        summary.contains("GRes") && summary.contains("gpu:0:2"),
        "{summary}"
    );
    let xml = text(&d.run("checknode", &["g1", "--xml"]).stdout);
    assert!(
        xml.contains("GRES=\"gpu:2\"") && xml.contains("AGRES=\"gpu:0\""),
        "{xml}"
    );
    let bf = text(&d.run("showbf", &["--gres", "gpu"]).stdout);
    assert!(
        !bf.contains("ReqID=0") || bf.contains("   0 "),
        "no GPU is free: {bf}"
    );
    let cpu_bf = text(&d.run("showbf", &[]).stdout);
    assert!(cpu_bf.contains("ALL"), "{cpu_bf}");
    let bad = d.run("showbf", &["--gres", "fpga"]);
    assert!(!bad.status.success() && text(&bad.stderr).contains("fpga"));
    // The JSON of checkjob carries the devices.
    let json = text(&d.run("checkjob", &[&a.to_string(), "--format=json"]).stdout);
    assert!(json.contains("\"gres_units\""), "{json}");
    // Cancel one: the waiting job gets its device.
    assert!(d.run("canceljob", &[&b.to_string()]).status.success());
    d.wait_state(c, "Running", T);
    let _ = a;
}

#[test]
fn node_specifications_host_lists_and_exclusive_nodes() {
    let d = Daemon::start_with_config(Some(
        "NODECFG[n1] PROCS=2\nNODECFG[n2] PROCS=2\nNODECFG[n3] PROCS=2 FEATURES=bigmem\nRMCFG[local] TYPE=LOCAL\n",
    ));
    let named = d.submit("sleep 30\n", &["-l", "nodes=n2:ppn=1,walltime=1:00"]);
    let cj = d.wait_state(named, "Running", T);
    assert_eq!(allocated(&cj), "[n2:1]", "{cj}");
    let hl = d.submit(
        "sleep 30\n",
        &["-W", "x=HOSTLIST:n1", "-l", "walltime=1:00"],
    );
    let cj = d.wait_state(hl, "Running", T);
    assert_eq!(allocated(&cj), "[n1:1]", "{cj}");
    assert!(cj.contains("Required HostList: [n1]"), "{cj}");
    let feat = d.submit("sleep 30\n", &["-l", "nodes=1:ppn=1:bigmem,walltime=1:00"]);
    let cj = d.wait_state(feat, "Running", T);
    assert_eq!(allocated(&cj), "[n3:1]", "{cj}");
    // One processor left on each node; an exclusive job needs a whole one.
    let excl = d.submit(
        "sleep 30\n",
        &["-l", "procs=1,naccesspolicy=singlejob,walltime=1:00"],
    );
    let cj = d.wait_considered(excl, T);
    assert!(cj.contains("NOTE:  job cannot run in partition"), "{cj}");
    assert!(d.run("canceljob", &[&named.to_string()]).status.success());
    let cj = d.wait_state(excl, "Running", T);
    assert_eq!(allocated(&cj), "[n2:1]", "{cj}");
    let node = text(&d.run("checknode", &["n2"]).stdout);
    assert!(node.contains("Dedicated  Resources: PROCS: 2"), "{node}");
    assert!(node.contains("EffNodeAccessPolicy: SINGLEJOB"), "{node}");
    // A mixed layout of three distinct nodes cannot fit while they are busy.
    let mixed = d.submit("sleep 1\n", &["-l", "nodes=2:ppn=2+1:ppn=1,walltime=1:00"]);
    let cj = d.wait_considered(mixed, T);
    assert!(cj.contains("Req[1]  TaskCount: 1"), "{cj}");
}

#[test]
fn classes_defaults_limits_and_site_defaults() {
    let d = Daemon::start_with_config(Some(
        "NODECFG[n1] PROCS=4\nRMCFG[local] TYPE=LOCAL DEFAULTCLASS=batch\n\
         CLASSCFG[batch] DEFAULT.WCLIMIT=0:10:00 MAX.WCLIMIT=1:00:00 MAX.PROC=2 DEFAULT.PROC=2\n\
         CLASSCFG[long] MAX.WCLIMIT=4:00:00 MIN.WCLIMIT=0:30:00\n",
    ));
    let refused = |args: &[&str], why: &str| {
        let path = d.home.path().join("r.sh");
        std::fs::write(&path, "true\n").unwrap();
        let mut all = args.to_vec();
        let p = path.to_string_lossy().to_string();
        all.push(&p);
        let out = d.run("msub", &all);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?} accepted");
        assert_eq!(
            err.trim_end(),
            format!("ERROR:    cannot submit job - {why}"),
            "{args:?}"
        );
    };
    refused(
        &["-l", "walltime=2:00:00"],
        "job violates class configuration 'wclimit too high for class 'batch' (7200 > 3600)'",
    );
    refused(
        &["-l", "procs=3"],
        "job violates class configuration 'procs too high for class 'batch' (3 > 2)'",
    );
    refused(
        &["-q", "long", "-l", "walltime=0:05:00"],
        "job violates class configuration 'wclimit too low (300 < 1800) for class 'long''",
    );
    refused(
        &["-q", "gpu"],
        "unknown class 'gpu' (configured classes: batch,long)",
    );
    refused(
        &["-l", "cput=1:00:00"],
        "resource 'cput' (a CPU-time limit) is not supported; give the wall-clock limit with walltime=",
    );
    refused(
        &["-W", "x=MAGIC:1"],
        "unsupported resource manager extension 'MAGIC' in '-W x=MAGIC:1'",
    );
    let q = text(&d.run("showq", &[]).stdout);
    assert!(
        q.contains("0 active jobs") && q.contains("0 eligible jobs"),
        "nothing queued: {q}"
    );
    // Defaults of the default class.
    let j = d.submit("sleep 1\n", &[]);
    let cj = d.checkjob(j);
    assert!(cj.contains("class:batch"), "{cj}");
    assert!(cj.contains("Total Requested Tasks: 2"), "{cj}");
    assert!(
        cj.contains("WallTime:   00:00:00 of 00:10:00") || cj.contains("of 00:10:00"),
        "{cj}"
    );
    assert!(
        cj.contains("NOTE:  class 'batch' limits: MAX.WCLIMIT=1:00:00  MAX.PROC=2"),
        "{cj}"
    );
    // Site defaults (/etc/msubrc, here $MSUBRC): a class and a limit.
    std::fs::write(
        d.home.path().join("msubrc"),
        "-q long  # site default\n-l walltime=1:00:00\n",
    )
    .unwrap();
    let s = d.submit("sleep 1\n", &["-h"]);
    let cj = d.checkjob(s);
    assert!(
        cj.contains("class:long") && cj.contains("of 1:00:00"),
        "{cj}"
    );
    // The command line wins over the site default.
    let s2 = d.submit("sleep 1\n", &["-h", "-l", "walltime=2:00:00"]);
    assert!(d.checkjob(s2).contains("of 2:00:00"));
    std::fs::write(d.home.path().join("msubrc"), "-Z bogus\n").unwrap();
    let path = d.home.path().join("x.sh");
    std::fs::write(&path, "true\n").unwrap();
    let out = d.run("msub", &[&path.to_string_lossy()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("msubrc"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn mjobctl_modifies_generic_resources_of_queued_jobs() {
    let d = Daemon::start_with_config(Some(
        "NODECFG[g1] PROCS=2 GRES=gpu:2\nRMCFG[local] TYPE=LOCAL\n",
    ));
    let j = d.submit("sleep 1\n", &["-h", "-l", "walltime=1:00"]);
    let out = d.run("mjobctl", &["-m", "gres=gpu:2", &j.to_string()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(d.checkjob(j).contains("GRes: gpu:2"));
    let out = d.run("mjobctl", &["-m", "gres=gpu:3", &j.to_string()]);
    assert!(!out.status.success(), "three GPUs per task fit nowhere");
    let out = d.run("mjobctl", &["-m", "gres-=gpu:2", &j.to_string()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(!d.checkjob(j).contains("GRes:"));
}
