//! The daemon with the real local backend (the `local_daemon` example is
//! `moab` itself: embedded default configuration, `build_rm`): jobs run as
//! processes, write their output files, see their environment, survive a
//! kill -9 of the daemon and are re-adopted.

mod common;

use std::time::Duration;

use common::{job, ChildDaemon};

#[test]
fn real_job_runs_with_environment_and_output_files() {
    let home = tempfile::Builder::new()
        .prefix("arches-loc")
        .tempdir()
        .unwrap();
    common::set_mode(home.path(), 0o755);
    let d = ChildDaemon::spawn_local(home.path());
    let mut req = job(
        "#!/bin/sh\necho out-$PBS_JOBID-$MOAB_JOBNAME-$PBS_O_WORKDIR\necho err >&2\nexit 3\n",
        home.path(),
    );
    req.name = Some("e2e".into());
    req.resources = vec!["walltime=00:05:00".into()];
    let id = d.api.submit(&req).unwrap();
    d.api.wait_state(id, "Completed");
    let v = d.api.jobs(&[&id.to_string()]);
    assert_eq!(v.jobs[0].summary.exit_code, Some(3));
    let o = std::fs::read_to_string(home.path().join(format!("e2e.o{id}"))).unwrap();
    assert_eq!(o.trim(), format!("out-{id}-e2e-{}", home.path().display()));
    let e = std::fs::read_to_string(home.path().join(format!("e2e.e{id}"))).unwrap();
    assert_eq!(e.trim(), "err");
}

#[test]
fn sigterm_leaves_jobs_running_and_restart_readopts_them() {
    let home = tempfile::Builder::new()
        .prefix("arches-loc")
        .tempdir()
        .unwrap();
    common::set_mode(home.path(), 0o755);
    let mut d = ChildDaemon::spawn_local(home.path());
    let mut req = job("#!/bin/sh\nsleep 2\necho done\nexit 7\n", home.path());
    req.name = Some("survivor".into());
    let id = d.api.submit(&req).unwrap();
    d.api.wait_state(id, "Running");
    let status = d.terminate().expect("exited");
    assert!(status.success(), "{status}");
    assert!(
        !home.path().join("moab.sock").exists(),
        "socket removed on clean stop"
    );
    std::thread::sleep(Duration::from_millis(200));
    let mut d = ChildDaemon::spawn_local(home.path());
    d.api.wait_state(id, "Completed");
    let v = d.api.jobs(&[&id.to_string()]);
    assert_eq!(v.jobs[0].summary.exit_code, Some(7));
    let o = std::fs::read_to_string(home.path().join(format!("survivor.o{id}"))).unwrap();
    assert_eq!(o.trim(), "done");
    // A kill -9 in the middle of a run loses nothing either.
    let id2 = d.api.submit(&req).unwrap();
    d.api.wait_state(id2, "Running");
    d.kill9();
    let d = ChildDaemon::spawn_local(home.path());
    d.api.wait_state(id2, "Completed");
    assert_eq!(
        d.api.jobs(&[&id2.to_string()]).jobs[0].summary.exit_code,
        Some(7)
    );
}
