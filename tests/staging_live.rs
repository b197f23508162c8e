//! Data staging live (Moab §17.12): a daemon with a storage RM driven by the
//! shipped `tools/dstage.*` scripts (file://), per model; the job really
//! finds its input file; checkjob/checknode/mdiag -R show the staging;
//! failing, garbage-printing and hanging scripts, transfers that never
//! complete and a full destination hold or defer the job with a message
//! while the daemon and other jobs carry on; MAXDSOP and TARGETUSAGE
//! throttle; staged data is removed after the job; LOCAL stages to the
//! allocated node; TIGHT lets other jobs use the nodes while data stages.
//!
//! Nothing is written outside temporary directories: the implicit
//! stdout/stderr stage-out goes to `IMPLICITSTAGEOUTURL` in a temporary
//! directory, never the job owner's real home.

mod common;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::{set_mode, text, Daemon};

fn tools() -> String {
    format!("{}/tools", env!("CARGO_MANIFEST_DIR"))
}

/// A temporary directory other users (job owners) may write.
fn scratch() -> tempfile::TempDir {
    let d = tempfile::Builder::new()
        .prefix("arches-stage")
        .tempdir()
        .unwrap();
    set_mode(d.path(), 0o777);
    d
}

fn config(model: &str, extra: &str, tools_dir: &str, out: &Path) -> String {
    format!(
        "NODECFG[n1] PROCS=2\nRMCFG[local] TYPE=LOCAL DATARM=data\nRMPOLLINTERVAL 00:00:01\n\
         DATASTAGEMODEL {model}\nTOOLSDIR {tools_dir}\nIMPLICITSTAGEOUTURL file://{}/\n\
         RMCFG[data] TYPE=NATIVE RESOURCETYPE=STORAGE TIMEOUT=00:00:05 POLLINTERVAL=00:00:01 {extra}\n\
         RMCFG[data] SYSTEMQUERYURL=exec://$TOOLSDIR/dstage.query\n\
         RMCFG[data] CLUSTERQUERYURL=exec://$TOOLSDIR/dstage.cluster\n\
         RMCFG[data] SYSTEMMODIFYURL=exec://$TOOLSDIR/dstage.modify\n",
        out.display()
    )
}

fn wait_for(d: &Daemon, what: &str, mut f: impl FnMut() -> Option<String>) -> String {
    let deadline = Instant::now() + Duration::from_secs(40);
    loop {
        if let Some(s) = f() {
            return s;
        }
        assert!(
            Instant::now() < deadline,
            "timed out waiting for {what}\n{}",
            d.daemon_log()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn write(p: &Path, content: &str) {
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, content).unwrap();
    set_mode(p, 0o644);
}

/// A sparse file of `bytes` (no disk used).
fn sparse(p: &Path, bytes: u64) {
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    let f = std::fs::File::create(p).unwrap();
    f.set_len(bytes).unwrap();
    set_mode(p, 0o644);
}

/// A job that copies its staged input to `result`.
fn reader_job(input: &Path, result: &Path) -> String {
    format!(
        "#!/bin/sh\ncat {} > {}\n",
        input.display(),
        result.display()
    )
}

fn checknode(d: &Daemon) -> String {
    let o = d.run("checknode", &["-v", "storage"]);
    format!("{}{}", text(&o.stdout), text(&o.stderr))
}

fn staged_run(model: &str, extra: &str) {
    let out = scratch();
    let d = Daemon::start_with_config(Some(&config(model, extra, &tools(), out.path())));
    let home = d.home.path();
    let src = home.join("archive/input.dat");
    write(&src, "the input data\n");
    let dest = home.join("scratch/input.dat");
    let result = home.join("result.txt");
    let spec = format!(
        "x=STAGEIN:file://{},file://{}",
        src.display(),
        dest.display()
    );
    let id = d.submit(&reader_job(&dest, &result), &["-W", &spec]);
    let done = d.wait_state(id, "Completed", Duration::from_secs(30));
    assert_eq!(
        std::fs::read_to_string(&result).unwrap(),
        "the input data\n",
        "the job found its staged input ({model})\n{done}"
    );
    // The staged file is removed once the job has ended, and no longer
    // counts on the storage manager.
    let out_job = wait_for(&d, "the staged data to be removed", || {
        let o = d.checkjob(id);
        o.contains(&format!(
            "StageIn:  File={}  Size=15 bytes  Status=removed",
            dest.display()
        ))
        .then_some(o)
    });
    assert!(!dest.exists(), "{out_job}");
    let node = checknode(&d);
    assert!(
        node.starts_with("node storage\n\nState:      Idle  (in current state for "),
        "{node}{}",
        text(&d.run("mdiag", &["-R"]).stdout)
    );
    assert!(
        node.contains("Active Data Staging Operations:  0"),
        "{node}"
    );
    assert!(
        node.contains("Dedicated Storage Manager Disk Usage:  0 of "),
        "{node}"
    );
    assert!(
        node.contains("Cluster Query URL:  exec://$TOOLSDIR/dstage.cluster"),
        "{node}"
    );
    assert!(node.contains("RM[data]:    TYPE=NATIVE\n"), "{node}");
    assert!(node.contains("\nTotal Time: "), "{node}");
    assert!(node.contains("  Up: "), "{node}");
    let rms = text(&d.run("mdiag", &["-R"]).stdout);
    assert!(
        rms.contains("RM[data]  Type: NATIVE  State: Active  ResourceType: STORAGE"),
        "{rms}"
    );
    assert!(
        rms.contains(&format!("Data Stage Model:   {model}")),
        "{rms}"
    );
}

#[test]
fn loose_stages_in_and_the_job_finds_its_input() {
    staged_run("LOOSE", "MAXDSOP=4 TARGETUSAGE=80%");
}

#[test]
fn tight_stages_in_and_the_job_finds_its_input() {
    staged_run("TIGHT", "MAXDSOP=4 BANDWIDTH=100000");
}

#[test]
fn external_waits_until_the_file_is_there() {
    let out = scratch();
    let d = Daemon::start_with_config(Some(&config("EXTERNAL", "", &tools(), out.path())));
    let home = d.home.path();
    let dest = home.join("scratch/ext.dat");
    let result = home.join("ext-result.txt");
    let spec = format!(
        "x=STAGEIN:file:///elsewhere/ext.dat,file://{}",
        dest.display()
    );
    let id = d.submit(&reader_job(&dest, &result), &["-W", &spec]);
    let out = wait_for(&d, "the job to wait for its data", || {
        let o = d.checkjob(id);
        o.contains("job is waiting for stage-in data").then_some(o)
    });
    assert!(out.contains("State: Idle"), "{out}");
    assert!(out.contains("Status=pending"), "{out}");
    // A job without staging is not held up.
    let plain = d.submit("#!/bin/sh\ntrue\n", &[]);
    d.wait_state(plain, "Completed", Duration::from_secs(30));
    assert!(d.checkjob(id).contains("State: Idle"));
    // Something else stages the file: the job starts and finds it.
    write(&dest, "external\n");
    d.wait_state(id, "Completed", Duration::from_secs(30));
    assert_eq!(std::fs::read_to_string(&result).unwrap(), "external\n");
    // What EXTERNAL did not stage, it does not remove.
    std::thread::sleep(Duration::from_secs(3));
    assert!(dest.exists());
}

#[test]
fn missing_source_defers_the_job_with_a_message() {
    let out = scratch();
    let d = Daemon::start_with_config(Some(&config("LOOSE", "", &tools(), out.path())));
    let home = d.home.path();
    let spec = format!(
        "x=STAGEIN:file://{}/nowhere.dat,file://{}/scratch/",
        home.display(),
        home.display()
    );
    let id = d.submit("#!/bin/sh\ntrue\n", &["-W", &spec]);
    let out = d.wait_state(id, "Deferred", Duration::from_secs(30));
    assert!(out.contains("not found or unreachable"), "{out}");
    assert!(out.contains("Status=failed"), "{out}");
    let rms = text(&d.run("mdiag", &["-R"]).stdout);
    // Moab's RM failure list: `  <date>  <function>  '<message>'`, no
    // raw epoch.
    assert!(rms.contains("\nRM[data] Failures:\n"), "{rms}");
    let line = rms
        .lines()
        .find(|l| l.contains("nowhere.dat"))
        .unwrap_or_else(|| panic!("{rms}"));
    assert!(
        line.starts_with("  ") && line[21..].starts_with("  systemmodify     '"),
        "{line}"
    );
    assert!(!rms.contains("ALERT:  ["), "{rms}");
    let plain = d.submit("#!/bin/sh\ntrue\n", &[]);
    d.wait_state(plain, "Completed", Duration::from_secs(30));
}

#[test]
fn a_full_destination_defers_the_job_with_the_scripts_message() {
    // A sparse source bigger than the destination's file system. Without a
    // cluster query (optional in LOOSE), the shipped dstage.modify refuses
    // it before copying anything.
    let out = scratch();
    let cfg = config("LOOSE", "", &tools(), out.path()).replace(
        "RMCFG[data] CLUSTERQUERYURL=exec://$TOOLSDIR/dstage.cluster\n",
        "",
    );
    assert!(!cfg.contains("CLUSTERQUERYURL"));
    let d = Daemon::start_with_config(Some(&cfg));
    let home = d.home.path();
    let src = home.join("archive/huge.dat");
    sparse(&src, 1 << 42);
    let spec = format!(
        "x=STAGEIN:file://{},file://{}/scratch/",
        src.display(),
        home.display()
    );
    let id = d.submit("#!/bin/sh\ntrue\n", &["-W", &spec]);
    let deferred = d.wait_state(id, "Deferred", Duration::from_secs(30));
    assert!(
        deferred.contains("disk full at the destination"),
        "{deferred}"
    );
    assert!(deferred.contains("Status=failed"), "{deferred}");
    assert!(!home.join("scratch/huge.dat").exists());
    assert!(!home.join("scratch/huge.dat.dstage-partial").exists());
    let plain = d.submit("#!/bin/sh\ntrue\n", &[]);
    d.wait_state(plain, "Completed", Duration::from_secs(30));
    drop(d);
    // With the cluster query the scheduler knows the free disk and waits
    // instead (the job stays eligible, the reason is shown).
    let d = Daemon::start_with_config(Some(&config("LOOSE", "", &tools(), out.path())));
    let src = d.home.path().join("archive/huge.dat");
    sparse(&src, 1 << 42);
    let spec = format!(
        "x=STAGEIN:file://{},file://{}/scratch/",
        src.display(),
        d.home.path().display()
    );
    let id = d.submit("#!/bin/sh\ntrue\n", &["-W", &spec]);
    let o = wait_for(&d, "the free disk deferral", || {
        let o = d.checkjob(id);
        o.contains("NOTE:  stage-in not started: insufficient disk at the storage manager (")
            .then_some(o)
    });
    assert!(o.contains(" MB available, 4194304 MB needed)"), "{o}");
    assert!(o.contains("State: Idle"), "{o}");
}

/// A tools directory with the shipped scripts but one interface replaced.
fn custom_tools(dir: &Path, name: &str, body: &str) -> String {
    std::fs::create_dir_all(dir).unwrap();
    for f in [
        "dstage.common",
        "dstage.query",
        "dstage.modify",
        "dstage.cluster",
    ] {
        std::fs::copy(format!("{}/{f}", tools()), dir.join(f)).unwrap();
    }
    std::fs::write(dir.join(name), format!("#!/bin/sh\n{body}\n")).unwrap();
    set_mode(&dir.join(name), 0o755);
    set_mode(dir, 0o755);
    dir.display().to_string()
}

/// The shipped scripts, but `stage` waits for `gate` to exist before the
/// shipped dstage.modify copies (the test decides when a transfer ends).
fn gated_tools(dir: &Path, gate: &Path) -> String {
    custom_tools(
        dir,
        "dstage.modify",
        &format!(
            "here=$(dirname \"$0\")\n\
             if [ \"$1\" = stage ]; then\n\
               size=$(. \"$here/dstage.common\"; url_size \"$3\")\n\
               [ -n \"$size\" ] || {{ echo \"source $3 not found\" >&2; exit 1; }}\n\
               ( while [ ! -e {} ]; do sleep 0.1; done; exec \"$here/dstage.modify.real\" \"$@\" ) </dev/null >/dev/null 2>&1 &\n\
               echo \"-1,$size\"; exit 0\n\
             fi\n\
             exec \"$here/dstage.modify.real\" \"$@\"",
            gate.display()
        ),
    );
    std::fs::copy(
        format!("{}/dstage.modify", tools()),
        dir.join("dstage.modify.real"),
    )
    .unwrap();
    dir.display().to_string()
}

#[test]
fn hanging_and_garbage_scripts_defer_without_stalling() {
    let scratch = scratch();
    for (body, needle) in [
        ("sleep 60", "timed out after"),
        ("echo 'no idea what you mean'", "invalid filesize output"),
        (
            "echo 'disk exploded' >&2; exit 7",
            "exited with status 7: disk exploded",
        ),
    ] {
        let tools = custom_tools(
            &scratch.path().join(needle.replace(' ', "_")),
            "dstage.query",
            body,
        );
        let cfg = config("EXTERNAL", "", &tools, scratch.path())
            .replace("TIMEOUT=00:00:05", "TIMEOUT=00:00:01");
        let d = Daemon::start_with_config(Some(&cfg));
        let spec = format!(
            "x=STAGEIN:file:///a/b.dat,file://{}/b.dat",
            d.home.path().display()
        );
        let id = d.submit("#!/bin/sh\ntrue\n", &["-W", &spec]);
        let t0 = Instant::now();
        let out = d.wait_state(id, "Deferred", Duration::from_secs(30));
        assert!(out.contains(needle), "{needle}: {out}");
        // The daemon kept answering and other jobs run.
        assert!(t0.elapsed() < Duration::from_secs(25));
        let plain = d.submit("#!/bin/sh\ntrue\n", &[]);
        d.wait_state(plain, "Completed", Duration::from_secs(30));
    }
}

#[test]
fn maxdsop_throttles_and_a_transfer_that_never_completes_fails() {
    let scratch = scratch();
    // A modify script that accepts the transfer but never copies.
    let log = scratch.path().join("stage.log");
    std::fs::write(&log, "").unwrap();
    set_mode(&log, 0o666);
    let tools = custom_tools(
        &scratch.path().join("t"),
        "dstage.modify",
        &format!(
            "[ \"$1\" = stage ] && echo \"$*\" >> {}; echo -1,100",
            log.display()
        ),
    );
    let cfg = format!(
        "{}DATASTAGETIMEOUT 00:00:04\n",
        config("LOOSE", "MAXDSOP=1", &tools, scratch.path())
    );
    let d = Daemon::start_with_config(Some(&cfg));
    let home = d.home.path();
    let src = home.join("archive/x.dat");
    write(&src, "x\n");
    let mut ids = Vec::new();
    for i in 0..2 {
        let spec = format!(
            "x=STAGEIN:file://{},file://{}/s{i}/x.dat",
            src.display(),
            home.display()
        );
        ids.push(d.submit("#!/bin/sh\ntrue\n", &["-W", &spec]));
    }
    let node = wait_for(&d, "one active operation", || {
        let n = checknode(&d);
        n.contains("Active Data Staging Operations:  1 (limit: 1)")
            .then_some(n)
    });
    assert!(node.contains("active (0 of 100 bytes)"), "{node}");
    let waiting = wait_for(&d, "the second job's deferral", || {
        let o = d.checkjob(ids[1]);
        o.contains("NOTE:  stage-in not started: data staging operation limit reached (MAXDSOP=1)")
            .then_some(o)
    });
    assert!(waiting.contains("State: Idle"), "{waiting}");
    let calls = std::fs::read_to_string(&log).unwrap();
    assert_eq!(
        calls.lines().count(),
        1,
        "only one stage operation at a time: {calls}"
    );
    // The first transfer never completes: after DATASTAGETIMEOUT it fails,
    // the job is deferred with the reason, and the slot goes to the next.
    let first = d.wait_state(ids[0], "Deferred", Duration::from_secs(30));
    assert!(
        first.contains("did not complete within 0:00:04 (DATASTAGETIMEOUT"),
        "{first}"
    );
    assert!(first.contains("Status=failed"), "{first}");
    wait_for(&d, "the second job's transfer", || {
        let c = std::fs::read_to_string(&log).unwrap();
        (c.lines().count() == 2).then_some(c)
    });
    let rms = text(&d.run("mdiag", &["-R"]).stdout);
    assert!(rms.contains("did not complete within"), "{rms}");
}

#[test]
fn target_usage_throttles_until_staged_data_is_removed() {
    let scratch = scratch();
    // A 100 MB storage manager; TARGETUSAGE=50% leaves 50 MB for staging.
    let tools = custom_tools(
        &scratch.path().join("t"),
        "dstage.cluster",
        "echo 'storage STATE=Idle CDISK=100 ADISK=100'",
    );
    let d = Daemon::start_with_config(Some(&config(
        "LOOSE",
        "TARGETUSAGE=50%",
        &tools,
        scratch.path(),
    )));
    let home = d.home.path();
    let mut ids = Vec::new();
    let gate = home.join("release-first");
    for (i, script) in [
        format!(
            "#!/bin/sh\nwhile [ ! -e {} ]; do sleep 0.1; done\n",
            gate.display()
        ),
        "#!/bin/sh\ntrue\n".to_string(),
    ]
    .iter()
    .enumerate()
    {
        let src = home.join(format!("archive/big{i}.dat"));
        sparse(&src, 30 << 20);
        let spec = format!(
            "x=STAGEIN:file://{},file://{}/scratch/",
            src.display(),
            home.display()
        );
        ids.push(d.submit(script, &["-W", &spec]));
        // The first one's size is known (and it is staged) before the
        // second comes.
        if i == 0 {
            d.wait_state(ids[0], "Running", Duration::from_secs(30));
        }
    }
    let waiting = wait_for(&d, "the target usage deferral", || {
        let o = d.checkjob(ids[1]);
        o.contains(
            "NOTE:  stage-in not started: staging 30 MB would exceed the target storage usage (30 of 50 MB dedicated)",
        )
        .then_some(o)
    });
    assert!(waiting.contains("Status=pending"), "{waiting}");
    let node = checknode(&d);
    assert!(
        node.contains("Dedicated Storage Manager Disk Usage:  30 of 100 MB (Target=50 MB)"),
        "{node}"
    );
    // The first job ends: its data is removed, the second is staged.
    write(&gate, "");
    d.wait_state(ids[1], "Completed", Duration::from_secs(30));
    assert!(!home.join("scratch/big0.dat").exists());
}

#[test]
fn malformed_stagein_is_refused_and_nothing_is_queued() {
    let out = scratch();
    let d = Daemon::start_with_config(Some(&config("LOOSE", "", &tools(), out.path())));
    let path = d.home.path().join("j.sh");
    std::fs::write(&path, "#!/bin/sh\ntrue\n").unwrap();
    for (spec, needle) in [
        ("x=STAGEIN:relative/file", "invalid STAGEIN 'relative/file'"),
        (
            "x=STAGEIN:file:///a,file:///b,file:///c",
            "several sources are separated by '|', not ','",
        ),
        (
            "x=STAGEIN:file:///a,$LOCAL/a",
            "$LOCAL (the allocated node's local disk) needs DATASTAGEMODEL LOCAL",
        ),
        (
            "x=STAGEOUT:$LOCAL/out,file:///b",
            "$LOCAL may only begin a destination",
        ),
        ("x=STAGEOUT:/a,$LOCAL/b", "$LOCAL is a stage-in destination"),
    ] {
        let out = d.run("msub", &["-W", spec, &path.display().to_string()]);
        assert!(!out.status.success(), "{spec}");
        let err = text(&out.stderr);
        assert!(err.contains(needle), "{spec}: {err}");
    }
    let q = text(&d.run("showq", &[]).stdout);
    assert!(q.contains("\nTotal jobs:  0\n"), "{q}");
    let c = d.run("checkjob", &["1"]);
    assert!(!c.status.success(), "{}", text(&c.stdout));
}

#[test]
fn stdout_is_staged_back_to_the_implicit_stage_out_directory() {
    let out = scratch();
    let d = Daemon::start_with_config(Some(&config("LOOSE", "", &tools(), out.path())));
    let id = d.submit("#!/bin/sh\necho staged-back\n", &["-N", "stgout"]);
    let name = format!("stgout.o{id}");
    let shown = format!("{}/{name}", out.path().display());
    let o = wait_for(&d, "the implicit stage-out", || {
        let o = d.checkjob(id);
        o.contains(&format!(
            "StageOut: File={shown}  Size=12 bytes  Status=complete"
        ))
        .then_some(o)
    });
    assert_eq!(
        std::fs::read_to_string(out.path().join(&name)).unwrap(),
        "staged-back\n",
        "{o}"
    );
}

#[test]
fn local_stages_to_the_allocated_node_and_exports_local() {
    let scratch = scratch();
    let gate = scratch.path().join("go");
    let tools = gated_tools(&scratch.path().join("t"), &gate);
    let local_dir = scratch.path().join("nodelocal");
    let cfg = format!(
        "{}DATASTAGELOCALDIR {}\n",
        config("LOCAL", "MAXDSOP=4", &tools, scratch.path()),
        local_dir.display()
    );
    let d = Daemon::start_with_config(Some(&cfg));
    let home = d.home.path();
    let src = home.join("archive/in.dat");
    write(&src, "node-local input\n");
    let result = home.join("local-result.txt");
    let job = format!(
        "#!/bin/sh\necho \"$LOCAL\" > {0}\ncat \"$LOCAL/in.dat\" >> {0}\n",
        result.display()
    );
    let spec = format!("x=STAGEIN:file://{},$LOCAL/in.dat", src.display());
    let id = d.submit(&job, &["-W", &spec]);
    // It takes its node first and stages to it: state Staging, active.
    let staging = d.wait_state(id, "Staging", Duration::from_secs(30));
    assert!(
        staging.contains("StageIn:  File=$LOCAL/in.dat"),
        "{staging}"
    );
    let q = text(&d.run("showq", &[]).stdout);
    assert!(
        q.lines()
            .any(|l| l.starts_with(&id.to_string()) && l.contains("Staging")),
        "{q}"
    );
    wait_for(&d, "the active stage-in", || {
        let n = checknode(&d);
        n.contains("active (0 of 17 bytes)  ($LOCAL/in.dat)")
            .then_some(n)
    });
    // The data arrives: launched with $LOCAL; it finds its input there.
    write(&gate, "");
    d.wait_state(id, "Completed", Duration::from_secs(30));
    let local = local_dir.join(id.to_string());
    assert_eq!(
        std::fs::read_to_string(&result).unwrap(),
        format!("{}\nnode-local input\n", local.display())
    );
    // The job's $LOCAL directory goes with it.
    wait_for(&d, "the $LOCAL directory to be removed", || {
        (!local.exists()).then_some(String::new())
    });
}

#[test]
fn tight_lets_other_jobs_use_the_node_while_data_stages() {
    let scratch = scratch();
    let gate = scratch.path().join("go");
    let tools = gated_tools(&scratch.path().join("t"), &gate);
    let cfg = config("TIGHT", "MAXDSOP=4 BANDWIDTH=1", &tools, scratch.path())
        .replace("NODECFG[n1] PROCS=2", "NODECFG[n1] PROCS=1");
    let d = Daemon::start_with_config(Some(&cfg));
    let home = d.home.path();
    let src = home.join("archive/a.dat");
    write(&src, "tight input\n");
    let dest = home.join("scratch/a.dat");
    let result = home.join("a-result.txt");
    let spec = format!(
        "x=STAGEIN:file://{},file://{}",
        src.display(),
        dest.display()
    );
    // The data job comes first and has the higher priority.
    let a = d.submit(
        &reader_job(&dest, &result),
        &["-W", &spec, "-p", "100", "-l", "walltime=60"],
    );
    wait_for(&d, "the transfer to begin", || {
        let o = d.checkjob(a);
        o.contains("Status=active").then_some(o)
    });
    let other = PathBuf::from(home).join("other.txt");
    let b = d.submit(
        &format!("#!/bin/sh\necho ran > {}\n", other.display()),
        &["-l", "walltime=5"],
    );
    // The node is not held for job a while its data stages: b runs.
    d.wait_state(b, "Completed", Duration::from_secs(30));
    let waiting = d.checkjob(a);
    assert!(waiting.contains("State: Idle"), "{waiting}");
    assert!(waiting.contains("DataReady="), "{waiting}");
    assert!(!result.exists());
    write(&gate, "");
    d.wait_state(a, "Completed", Duration::from_secs(30));
    assert_eq!(std::fs::read_to_string(&result).unwrap(), "tight input\n");
}

#[test]
fn tight_times_a_new_jobs_transfer_against_its_reservation() {
    // The node is busy for five minutes; a new TIGHT job whose data takes
    // seconds is reserved from then, and its transfer is planned to end
    // just before — not started at once.
    let out = scratch();
    let cfg = config("TIGHT", "MAXDSOP=4 BANDWIDTH=100", &tools(), out.path())
        .replace("NODECFG[n1] PROCS=2", "NODECFG[n1] PROCS=1");
    let d = Daemon::start_with_config(Some(&cfg));
    let home = d.home.path();
    let busy = d.submit("#!/bin/sh\nsleep 300\n", &["-l", "walltime=300"]);
    d.wait_state(busy, "Running", Duration::from_secs(30));
    let src = home.join("archive/t.dat");
    write(&src, "tight\n");
    let spec = format!(
        "x=STAGEIN:file://{},file://{}/scratch/",
        src.display(),
        home.display()
    );
    let id = d.submit("#!/bin/sh\ntrue\n", &["-W", &spec, "-l", "walltime=60"]);
    let o = wait_for(&d, "the planned transfer start", || {
        let o = d.checkjob(id);
        o.contains("NOTE:  stage-in scheduled to begin at ")
            .then_some(o)
    });
    assert!(o.contains("Status=pending"), "{o}");
    assert!(o.contains("DataReady="), "{o}");
    assert!(!home.join("scratch/t.dat").exists());
    let _ = d.run("mjobctl", &["-c", &format!("{busy},{id}")]);
}

#[test]
fn a_failed_local_stage_in_gives_the_nodes_back_and_defers_the_job() {
    let out = scratch();
    let cfg = format!(
        "{}DATASTAGELOCALDIR {}/nodelocal\n",
        config("LOCAL", "", &tools(), out.path())
            .replace("NODECFG[n1] PROCS=2", "NODECFG[n1] PROCS=1"),
        out.path().display()
    );
    let d = Daemon::start_with_config(Some(&cfg));
    let spec = format!(
        "x=STAGEIN:file://{}/missing.dat,$LOCAL/",
        d.home.path().display()
    );
    let id = d.submit("#!/bin/sh\ntrue\n", &["-W", &spec]);
    let o = d.wait_state(id, "Deferred", Duration::from_secs(30));
    assert!(o.contains("not found or unreachable"), "{o}");
    assert!(o.contains("Status=failed"), "{o}");
    // Its node is free again: another job runs on the one processor.
    let plain = d.submit("#!/bin/sh\ntrue\n", &[]);
    d.wait_state(plain, "Completed", Duration::from_secs(30));
}

#[test]
fn a_staging_local_job_survives_a_daemon_restart() {
    let scratch = scratch();
    let gate = scratch.path().join("go");
    let tools = gated_tools(&scratch.path().join("t"), &gate);
    let cfg = format!(
        "{}DATASTAGELOCALDIR {}/nodelocal\n",
        config("LOCAL", "", &tools, scratch.path()),
        scratch.path().display()
    );
    let mut d = Daemon::start_with_config(Some(&cfg));
    let home = d.home.path().to_path_buf();
    let src = home.join("archive/in.dat");
    write(&src, "survives\n");
    let result = home.join("r.txt");
    let spec = format!("x=STAGEIN:file://{},$LOCAL/in.dat", src.display());
    let id = d.submit(
        &format!("#!/bin/sh\ncat \"$LOCAL/in.dat\" > {}\n", result.display()),
        &["-W", &spec],
    );
    wait_for(&d, "the active stage-in", || {
        let o = d.checkjob(id);
        (o.contains("State: Staging") && o.contains("Status=active")).then_some(o)
    });
    d.stop();
    d.spawn();
    // Still allocated and staging (not lost, not launched, not vanished).
    let o = d.checkjob(id);
    assert!(o.contains("State: Staging"), "{o}");
    write(&gate, "");
    d.wait_state(id, "Completed", Duration::from_secs(30));
    assert_eq!(std::fs::read_to_string(&result).unwrap(), "survives\n");
}
