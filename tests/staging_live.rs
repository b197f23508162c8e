//! Data staging live (Moab §17.12): a daemon with a storage RM driven by the
//! shipped `tools/dstage.*` scripts (file://), per model; the job really
//! finds its input; checkjob/checknode/mdiag -R show the staging; failing,
//! garbage-printing and hanging scripts hold or defer the job with a message
//! while the daemon and other jobs carry on; MAXDSOP throttles.

mod common;

use std::path::Path;
use std::time::{Duration, Instant};

use common::{set_mode, text, Daemon};

fn tools() -> String {
    format!("{}/tools", env!("CARGO_MANIFEST_DIR"))
}

fn config(model: &str, extra: &str, tools_dir: &str) -> String {
    format!(
        "NODECFG[n1] PROCS=2\nRMCFG[local] TYPE=LOCAL DATARM=data\nRMPOLLINTERVAL 00:00:01\n\
         DATASTAGEMODEL {model}\nTOOLSDIR {tools_dir}\n\
         RMCFG[data] TYPE=NATIVE RESOURCETYPE=STORAGE TIMEOUT=00:00:05 POLLINTERVAL=00:00:01 {extra}\n\
         RMCFG[data] SYSTEMQUERYURL=exec://$TOOLSDIR/dstage.query\n\
         RMCFG[data] CLUSTERQUERYURL=exec://$TOOLSDIR/dstage.cluster\n\
         RMCFG[data] SYSTEMMODIFYURL=exec://$TOOLSDIR/dstage.modify\n"
    )
}

fn wait_for(d: &Daemon, what: &str, mut f: impl FnMut() -> Option<String>) -> String {
    let deadline = Instant::now() + Duration::from_secs(30);
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

/// A job that copies its staged input to `result`.
fn reader_job(input: &Path, result: &Path) -> String {
    format!(
        "#!/bin/sh\ncat {} > {}\n",
        input.display(),
        result.display()
    )
}

fn staged_run(model: &str, extra: &str) {
    let d = Daemon::start_with_config(Some(&config(model, extra, &tools())));
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
    let out = d.wait_state(id, "Completed", Duration::from_secs(30));
    assert_eq!(
        std::fs::read_to_string(&result).unwrap(),
        "the input data\n",
        "the job found its staged input ({model})\n{out}"
    );
    assert!(
        out.contains(&format!(
            "StageIn:  File={}  Size=15 bytes  Status=complete",
            dest.display()
        )),
        "{out}"
    );
    let node = d.run("checknode", &["-v", "storage"]);
    let node = format!("{}{}", text(&node.stdout), text(&node.stderr));
    assert!(
        node.starts_with("node storage\n"),
        "{node}{}",
        text(&d.run("mdiag", &["-R"]).stdout)
    );
    assert!(
        node.contains("Active Data Staging Operations:  0"),
        "{node}"
    );
    assert!(
        node.contains("Dedicated Storage Manager Disk Usage:  "),
        "{node}"
    );
    assert!(
        node.contains("Cluster Query URL:  exec://$TOOLSDIR/dstage.cluster"),
        "{node}"
    );
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
    let d = Daemon::start_with_config(Some(&config("EXTERNAL", "", &tools())));
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
}

#[test]
fn missing_source_defers_the_job_with_a_message() {
    let d = Daemon::start_with_config(Some(&config("LOOSE", "", &tools())));
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
    assert!(
        rms.contains("ALERT:") && rms.contains("nowhere.dat"),
        "{rms}"
    );
    let plain = d.submit("#!/bin/sh\ntrue\n", &[]);
    d.wait_state(plain, "Completed", Duration::from_secs(30));
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

#[test]
fn hanging_and_garbage_scripts_defer_without_stalling() {
    let scratch = tempfile::tempdir().unwrap();
    set_mode(scratch.path(), 0o755);
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
        let cfg = config("EXTERNAL", "", &tools).replace("TIMEOUT=00:00:05", "TIMEOUT=00:00:01");
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
fn maxdsop_throttles_stage_operations() {
    let scratch = tempfile::tempdir().unwrap();
    set_mode(scratch.path(), 0o755);
    // A modify script that accepts the transfer but never completes it.
    let log = scratch.path().join("stage.log");
    std::fs::write(&log, "").unwrap();
    set_mode(&log, 0o666);
    let tools = custom_tools(
        &scratch.path().join("t"),
        "dstage.modify",
        &format!("echo \"$*\" >> {}; echo -1,100", log.display()),
    );
    let d = Daemon::start_with_config(Some(&config("LOOSE", "MAXDSOP=1", &tools)));
    let home = d.home.path();
    let src = home.join("archive/x.dat");
    write(&src, "x\n");
    let mut ids = Vec::new();
    for i in 0..3 {
        let spec = format!(
            "x=STAGEIN:file://{},file://{}/s{i}/x.dat",
            src.display(),
            home.display()
        );
        ids.push(d.submit("#!/bin/sh\ntrue\n", &["-W", &spec]));
    }
    let node = wait_for(&d, "one active operation", || {
        let n = text(&d.run("checknode", &["-v", "storage"]).stdout);
        n.contains("Active Data Staging Operations:  1 (limit: 1)")
            .then_some(n)
    });
    assert!(node.contains("active (0 of 100 bytes)"), "{node}");
    std::thread::sleep(Duration::from_secs(3));
    let calls = std::fs::read_to_string(&log).unwrap();
    assert_eq!(
        calls.lines().count(),
        1,
        "only one stage operation at a time: {calls}"
    );
    let waiting = d.checkjob(ids[2]);
    assert!(
        waiting.contains("stage-in not started: data staging operation limit reached (MAXDSOP=1)"),
        "{waiting}"
    );
}

#[test]
fn malformed_stagein_is_refused_and_nothing_is_queued() {
    let d = Daemon::start_with_config(Some(&config("LOOSE", "", &tools())));
    let path = d.home.path().join("j.sh");
    std::fs::write(&path, "#!/bin/sh\ntrue\n").unwrap();
    let out = d.run(
        "msub",
        &["-W", "x=STAGEIN:relative/file", &path.display().to_string()],
    );
    assert!(!out.status.success());
    let err = text(&out.stderr);
    assert!(err.contains("invalid STAGEIN 'relative/file'"), "{err}");
    let q = text(&d.run("showq", &[]).stdout);
    assert!(q.contains("0 active jobs") || !q.contains("j.sh"), "{q}");
}

#[test]
fn stdout_is_staged_back_to_the_home_directory() {
    let d = Daemon::start_with_config(Some(&config("LOOSE", "", &tools())));
    let id = d.submit("#!/bin/sh\necho staged-back\n", &["-N", "stgout"]);
    let name = format!("stgout.o{id}");
    let out = wait_for(&d, "the implicit stage-out", || {
        let o = d.checkjob(id);
        o.contains(&format!(
            "StageOut: File=$HOME/{name}  Size=12 bytes  Status=complete"
        ))
        .then_some(o)
    });
    // SAFETY: getuid has no preconditions.
    let uid = unsafe { libc::getuid() };
    let home = std::process::Command::new("sh")
        .args(["-c", &format!("getent passwd {uid} | cut -d: -f6")])
        .output()
        .map(|o| text(&o.stdout).trim().to_string())
        .unwrap();
    let copied = Path::new(&home).join(&name);
    let content = std::fs::read_to_string(&copied);
    let _ = std::fs::remove_file(&copied);
    assert_eq!(content.unwrap(), "staged-back\n", "{out}");
}
