//! The daemon through its API: submit, list, detail, actions, permissions,
//! malformed input, group commit, purge, shutdown and crash recovery.

mod common;

use std::process::Command;
use std::time::Duration;

use arches_api::{routes, JobAction, Section, SubmitRequest};
use common::{example, job, Api, ChildDaemon, InProcess};

#[test]
fn submit_list_detail_and_run_to_completion() {
    let d = InProcess::start();
    let mut req = job("#!/bin/sh\nsleep 1\nexit 3\n", d.home.path());
    req.name = Some("first".into());
    req.resources = vec!["nodes=1:ppn=2,walltime=00:10:00".into()];
    let id = d.api.submit(&req).expect("submit");
    assert!(id >= 1);
    let q = d.api.queue(false);
    assert!(
        q.jobs.iter().any(|j| j.id == id),
        "job listed right after submit"
    );
    let v = d.api.jobs(&[&format!("Moab.{id}")]);
    assert_eq!(v.jobs.len(), 1);
    let detail = &v.jobs[0];
    assert_eq!(detail.summary.name, "first");
    assert_eq!(detail.summary.walltime, Some(600));
    assert_eq!(detail.tasks_per_node, Some(2));
    assert_eq!(
        detail.output_file,
        d.home.path().join(format!("first.o{id}")).to_string_lossy()
    );
    d.api.wait_state(id, "Running");
    d.api.wait_state(id, "Completed");
    let q = d.api.queue(true);
    let done = q
        .jobs
        .iter()
        .find(|j| j.id == id)
        .expect("completed job listed");
    assert_eq!(done.section, Section::Completed);
    assert_eq!(done.exit_code, Some(3));
    assert_eq!(q.cluster.config_nodes, 2);
    let unknown = d.api.jobs(&["424242"]);
    assert_eq!(unknown.unknown, vec!["424242".to_string()]);
}

#[test]
fn hold_release_modify_cancel_messages() {
    let d = InProcess::start();
    let mut req = job("sleep 30\n", d.home.path());
    req.hold = true;
    // Suspendable, so that mjobctl -s suspends instead of escalating.
    req.resources = vec!["walltime=100".into(), "flags=suspendable".into()];
    let id = d.api.submit(&req).unwrap();
    let sid = id.to_string();
    let q = d.api.queue(false);
    let row = q.jobs.iter().find(|j| j.id == id).unwrap();
    assert_eq!(
        (row.state.as_str(), row.section),
        ("UserHold", Section::Blocked)
    );

    let r = d.api.act(
        &[&sid],
        JobAction::Modify {
            changes: vec!["walltime=200".into()],
        },
    );
    assert_eq!(
        r.stdout,
        vec![format!("set walltime attribute for job {id} to '200' ")]
    );
    let r = d.api.act(
        &[&sid],
        JobAction::Modify {
            changes: vec!["jobname=renamed".into()],
        },
    );
    assert_eq!(
        r.stdout,
        vec![format!("user-specified jobname modified for job {id}")]
    );
    let r = d.api.act(
        &[&sid],
        JobAction::Modify {
            changes: vec!["bogus=1".into()],
        },
    );
    assert!(r.failed);
    assert_eq!(
        r.stderr,
        vec!["ERROR:  unknown attribute 'bogus' specified".to_string()]
    );
    let r = d.api.act(
        &[&sid],
        JobAction::Modify {
            changes: vec!["userprio=-5".into(), "qos=".into(), "account=acct".into()],
        },
    );
    assert_eq!(
        r.stdout,
        vec![
            "priority modified".to_string(),
            format!("INFO:   Account for job {id} set to acct")
        ]
    );
    assert_eq!(r.stderr.len(), 1, "{r:?}");
    let detail = &d.api.jobs(&[&sid]).jobs[0];
    assert_eq!(
        (detail.user_priority, detail.summary.account.as_deref()),
        (-5, Some("acct"))
    );
    assert_eq!(
        (detail.summary.walltime, detail.summary.name.as_str()),
        (Some(200), "renamed")
    );

    let r = d.api.act(
        &[&sid],
        JobAction::Hold {
            types: vec!["system".into()],
        },
    );
    assert_eq!(
        r.stdout,
        vec![format!(
            "holds modified for job {id}  (User,System holds still in place)"
        )]
    );
    let r = d.api.act(&[&sid], JobAction::Release { types: vec![] });
    assert_eq!(r.stdout, vec![format!("holds modified for job {id}")]);
    d.api.wait_state(id, "Running");

    let r = d.api.act(&[&sid], JobAction::Suspend);
    assert_eq!(r.stdout, vec![format!("job {id} successfully preempted")]);
    assert_eq!(d.api.state(id).as_deref(), Some("Suspended"));
    let r = d.api.act(&[&sid], JobAction::Resume);
    assert_eq!(r.stdout, vec![format!("job {id} successfully resumed ")]);
    let r = d.api.act(
        &[&sid],
        JobAction::Signal {
            signal: "SIGUSR1".into(),
        },
    );
    assert_eq!(
        r.stdout,
        vec![format!("signal successfully sent to job {id}")]
    );

    let r = d.api.act(&[&sid], JobAction::Cancel);
    assert_eq!(r.stdout, vec![format!("job '{id}' cancelled")]);
    assert_eq!(d.api.state(id).as_deref(), Some("Removed"));
    let r = d.api.act(&[&sid], JobAction::Cancel);
    assert!(r.failed);
    assert_eq!(
        r.stderr,
        vec![format!("ERROR:  invalid job specified ({id})")]
    );
}

#[test]
fn rejected_submissions_queue_nothing() {
    let d = InProcess::start();
    let cases: Vec<(Vec<&str>, Vec<&str>)> = vec![
        (vec!["walltime=0"], vec![]),
        (vec!["walltime=-5"], vec![]),
        (vec!["nodes=1:ppn=100000"], vec![]),
        (vec!["procs=abc"], vec![]),
        (vec!["mem=999999tb"], vec![]),
        (vec!["procs=9"], vec![]),
        (vec![], vec!["depend=afterok:987654"]),
    ];
    for (res, ext) in cases {
        let mut req = job("true\n", d.home.path());
        req.resources = res.iter().map(|s| s.to_string()).collect();
        req.extensions = ext.iter().map(|s| s.to_string()).collect();
        let e = d.api.submit(&req).expect_err("must be rejected");
        assert!(
            e.starts_with("ERROR:    cannot submit job - "),
            "{res:?} {ext:?}: {e}"
        );
    }
    let big = job(&"x".repeat(1024 * 1024 + 10), d.home.path());
    assert!(d.api.submit(&big).is_err());
    assert!(d.api.queue(true).jobs.is_empty());
}

#[test]
fn malformed_and_oversized_bodies_get_4xx_and_the_daemon_keeps_serving() {
    let d = InProcess::start();
    for body in [
        b"{not json".to_vec(),
        b"[]".to_vec(),
        b"{\"script\": 5}".to_vec(),
    ] {
        let (status, text) = d.api.post_raw(routes::SUBMIT, body);
        assert_eq!(status, 400, "{text}");
        let e: arches_api::ApiError = serde_json::from_str(&text).expect("ApiError");
        assert!(e.message.starts_with("ERROR:"), "{}", e.message);
    }
    let (status, text) = d
        .api
        .post_unchecked(routes::SUBMIT, &vec![b' '; 3 * 1024 * 1024]);
    assert_eq!(status, 413, "{text}");
    assert!(text.contains("larger than"), "{text}");
    let (status, _) = d.api.post_raw(routes::JOB_ACTION, b"{\"jobs\":1}".to_vec());
    assert_eq!(status, 400);
    let (status, _) = d.api.get_raw("/v1/nothing-here");
    assert_eq!(status, 404);
    let (status, text) = d
        .api
        .post_raw(routes::STARTTIME, br#"{"kind":"job","id":"77"}"#.to_vec());
    assert_eq!(status, 404);
    assert!(text.contains("invalid job specified: 77"), "{text}");
    let id = d
        .api
        .submit(&job("true\n", d.home.path()))
        .expect("still serving");
    assert!(id >= 1);
}

#[test]
fn sixteen_concurrent_submitters_all_durable_with_distinct_ids() {
    let mut d = InProcess::start();
    let socket = d.api.socket.clone();
    let dir = d.home.path().to_path_buf();
    let threads: Vec<_> = (0..16)
        .map(|_| {
            let socket = socket.clone();
            let dir = dir.clone();
            std::thread::spawn(move || {
                let api = Api::new(&socket);
                let mut req = job("sleep 100\n", &dir);
                req.hold = true;
                (0..10)
                    .map(|_| api.submit(&req).expect("submit"))
                    .collect::<Vec<u64>>()
            })
        })
        .collect();
    let mut ids: Vec<u64> = threads
        .into_iter()
        .flat_map(|t| t.join().unwrap())
        .collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), 160);
    d.stop().expect("clean stop");
    // Everything acknowledged is in the database.
    let store = arches_store::Store::open(&d.home.path().join("arches.db")).unwrap();
    let stored: Vec<u64> = store
        .load_jobs()
        .unwrap()
        .iter()
        .map(|r| r.job.id)
        .collect();
    assert_eq!(stored, ids);
    assert!(!d.home.path().join("moab.sock").exists(), "socket removed");
}

#[test]
fn finished_jobs_are_purged_and_ids_are_never_reused() {
    let mut d = InProcess::start_with(|c| c.purge_secs = 3);
    let id = d.api.submit(&job("true\n", d.home.path())).unwrap();
    d.api.wait_state(id, "Completed");
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while d.api.state(id).is_some() {
        assert!(std::time::Instant::now() < deadline, "never purged");
        std::thread::sleep(Duration::from_millis(100));
    }
    let next = d.api.submit(&job("true\n", d.home.path())).unwrap();
    assert!(next > id);
    d.api.wait_state(next, "Completed");
    d.stop().unwrap();
    let store = arches_store::Store::open(&d.home.path().join("arches.db")).unwrap();
    assert!(
        store.load_jobs().unwrap().iter().all(|r| r.job.id != id),
        "purged from the DB"
    );
    assert!(store.next_id().unwrap() > next);
}

#[test]
fn second_daemon_on_the_same_socket_is_refused() {
    let d = InProcess::start();
    let mut cfg = arches_server::config::embedded_default(d.home.path());
    cfg.nodes = common::test_nodes();
    let rm = arches_server::testing::FakeRm::new(d.home.path().join("rm2"), cfg.nodes.clone(), 0)
        .unwrap();
    let loc = arches_server::Locations {
        home: d.home.path().to_path_buf(),
        socket: d.home.path().join("moab.sock"),
    };
    let e = arches_server::serve(loc, cfg, Box::new(rm)).expect_err("refused");
    assert!(e.to_string().contains("already running"), "{e}");
    d.api.queue(false);
}

#[test]
fn kill9_restart_keeps_jobs_and_readopts_running_ones() {
    let home = tempfile::Builder::new()
        .prefix("arches-k9")
        .tempdir()
        .unwrap();
    let mut d = ChildDaemon::spawn(home.path());
    let mut run = job("#!/bin/sh\nsleep 2\nexit 7\n", home.path());
    run.resources = vec!["walltime=60".into()];
    let running = d.api.submit(&run).unwrap();
    d.api.wait_state(running, "Running");
    let mut held = job("true\n", home.path());
    held.hold = true;
    let held = d.api.submit(&held).unwrap();
    d.kill9();
    // The stale socket file is removed by the next start.
    assert!(home.path().join("moab.sock").exists());
    let d = ChildDaemon::spawn(home.path());
    assert_eq!(d.api.state(held).as_deref(), Some("UserHold"));
    let s = d.api.state(running);
    assert!(
        matches!(s.as_deref(), Some("Running") | Some("Completed")),
        "{s:?}"
    );
    d.api.wait_state(running, "Completed");
    let v = d.api.jobs(&[&running.to_string()]);
    assert_eq!(v.jobs[0].summary.exit_code, Some(7));
    let next = d.api.submit(&job("true\n", home.path())).unwrap();
    assert!(next > held);
}

#[test]
fn permission_refusal_between_two_real_users() {
    if !common::root_or_skip("permission_refusal_between_two_real_users") {
        return;
    }
    let user = "archessrv";
    let exists = Command::new("id")
        .arg(user)
        .output()
        .map(|o| o.status.success());
    if !exists.unwrap_or(false) {
        let st = Command::new("useradd")
            .args(["-M", "-s", "/bin/sh", user])
            .status()
            .unwrap();
        assert!(st.success(), "useradd");
    }
    let d = InProcess::start();
    let mut req = job("sleep 30\n", d.home.path());
    req.hold = true;
    let id = d.api.submit(&req).unwrap();
    let call = |method: &str, route: &str, body: &str| {
        let out = Command::new("setpriv")
            .args(["--reuid", user, "--regid", user, "--init-groups", "--"])
            .arg(example("api_call"))
            .args([&d.api.socket.to_string_lossy(), method, route, body])
            .output()
            .expect("setpriv");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        let (status, body) = text.split_once('\n').unwrap_or((&text, ""));
        (status.trim().to_string(), body.trim().to_string())
    };
    let (status, body) = call("GET", routes::QUEUE, "");
    assert_eq!(status, "200");
    assert!(
        body.contains(&format!("\"id\":{id}")),
        "everybody may list: {body}"
    );
    for action in [
        r#"{"action":"cancel"}"#,
        r#"{"action":"release","types":[]}"#,
    ] {
        let body = format!(r#"{{"jobs":["{id}"],"action":{action}}}"#);
        let (status, resp) = call("POST", routes::JOB_ACTION, &body);
        assert_eq!(status, "200");
        let r: arches_api::ActionResponse = serde_json::from_str(&resp).unwrap();
        assert!(r.failed, "{resp}");
        assert_eq!(
            r.stderr,
            vec!["ERROR:  request not authorized - not job owner".to_string()]
        );
    }
    let (_, resp) = call("POST", routes::SCHEDULER_CONTROL, r#"{"op":"kill"}"#);
    assert!(resp.contains("not authorized"), "{resp}");
    // The other user submits its own job: it is recorded under its name.
    let sub = serde_json::to_string(&SubmitRequest {
        script: "true\n".into(),
        hold: true,
        submit_dir: "/tmp".into(),
        ..SubmitRequest::default()
    })
    .unwrap();
    let (status, resp) = call("POST", routes::SUBMIT, &sub);
    assert_eq!(status, "200", "{resp}");
    let theirs: arches_api::SubmitResponse = serde_json::from_str(&resp).unwrap();
    let v = d.api.jobs(&[&theirs.id.to_string(), &id.to_string()]);
    assert_eq!(v.jobs[0].summary.user, user);
    assert_eq!(
        v.jobs[1].summary.state, "UserHold",
        "refusal changed nothing"
    );
    // A uid without a passwd entry cannot submit.
    let out = Command::new("setpriv")
        .args([
            "--reuid",
            "54321",
            "--regid",
            "54321",
            "--clear-groups",
            "--",
        ])
        .arg(example("api_call"))
        .args([
            &d.api.socket.to_string_lossy(),
            "POST",
            routes::SUBMIT,
            &sub,
        ])
        .output()
        .expect("setpriv");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.starts_with("400"), "{text}");
    assert!(
        text.contains("cannot submit job - unknown user (uid 54321"),
        "{text}"
    );
    // Root (an administrator) may act on the other user's job.
    let r = d.api.act(&[&theirs.id.to_string()], JobAction::Cancel);
    assert!(!r.failed, "{r:?}");
}

#[test]
fn paused_scheduler_and_forced_start() {
    let d = InProcess::start();
    let r: arches_api::ActionResponse = d
        .api
        .post(
            routes::SCHEDULER_CONTROL,
            &arches_api::SchedulerControl::Pause,
        )
        .unwrap();
    assert!(!r.failed, "{r:?}");
    let id = d.api.submit(&job("sleep 30\n", d.home.path())).unwrap();
    let big = {
        let mut req = job("sleep 30\n", d.home.path());
        req.resources = vec!["procs=8".into()];
        d.api.submit(&req).unwrap()
    };
    std::thread::sleep(Duration::from_millis(600));
    assert_eq!(
        d.api.state(id).as_deref(),
        Some("Idle"),
        "paused: nothing starts"
    );
    let r = d
        .api
        .act(&[&id.to_string()], JobAction::Execute { flags: vec![] });
    assert_eq!(r.stdout, vec![format!("job {id} successfully started")]);
    assert_eq!(d.api.state(id).as_deref(), Some("Running"));
    let r = d
        .api
        .act(&[&big.to_string()], JobAction::Execute { flags: vec![] });
    assert!(r.failed);
    assert_eq!(
        r.stderr,
        vec![
            "ERROR: job cannot run  (insufficient idle procs in cluster:  8 needed  7 available)"
                .to_string()
        ]
    );
    let r = d
        .api
        .act(&[&big.to_string()], JobAction::Hold { types: vec![] });
    assert!(!r.failed);
    let r = d
        .api
        .act(&[&big.to_string()], JobAction::Execute { flags: vec![] });
    assert_eq!(
        r.stderr,
        vec![format!(
            "job '{big}' is in state 'UserHold'  (state must be idle)"
        )]
    );
}

#[test]
fn runtime_configuration_changes_are_validated() {
    let d = InProcess::start();
    let ctl = |line: &str, evaluate_only: bool| -> arches_api::ActionResponse {
        d.api
            .post(
                routes::SCHEDULER_CONTROL,
                &arches_api::SchedulerControl::ModifyConfig {
                    line: line.into(),
                    evaluate_only,
                },
            )
            .unwrap()
    };
    let r = ctl("BACKFILLPOLICY SOMETIMES", false);
    assert!(r.failed && r.stderr[0].starts_with("ERROR:"), "{r:?}");
    let r = ctl("JOBCPURGETIME 00:05:00", false);
    assert!(!r.failed, "{r:?}");
    let q = d.api.queue(false);
    assert_eq!(q.purge_secs, 300);
    let r = ctl("JOBCPURGETIME 10", true);
    assert!(!r.failed, "{r:?}");
    assert_eq!(
        d.api.queue(false).purge_secs,
        300,
        "evaluate only changes nothing"
    );
}

#[test]
fn start_estimates_and_backfill_windows() {
    let d = InProcess::start();
    let mut req = job("sleep 1000\n", d.home.path());
    req.resources = vec!["procs=6,walltime=100".into()];
    let id = d.api.submit(&req).unwrap();
    d.api.wait_state(id, "Running");
    let e: arches_api::StartEstimate = d
        .api
        .post(
            routes::STARTTIME,
            &arches_api::StartQuery::Job {
                id: id.to_string(),
                feedback: false,
            },
        )
        .unwrap();
    assert!(e.running && e.start.is_some(), "{e:?}");
    let e: arches_api::StartEstimate = d
        .api
        .post(
            routes::STARTTIME,
            &arches_api::StartQuery::Hypothetical {
                procs: 4,
                duration: "10".into(),
                qos: None,
                feedback: false,
            },
        )
        .unwrap();
    let wait = e.start.expect("estimate") - e.now;
    assert!((95..=100).contains(&wait), "{e:?}");
    let bf: arches_api::BackfillView = d
        .api
        .post(routes::BACKFILL, &arches_api::BackfillQuery::default())
        .unwrap();
    assert_eq!(bf.user, "root");
    // The global partition's rows (then the partition DEFAULT's, the same).
    let w: Vec<(u32, Option<i64>)> = bf
        .windows
        .iter()
        .filter(|w| w.partition == "ALL")
        .map(|w| (w.procs, w.duration))
        .collect();
    assert_eq!(w, vec![(2, None)], "two procs free for ever");
    assert!(
        bf.windows.iter().any(|w| w.partition == "DEFAULT"),
        "{bf:?}"
    );
    // A whole-cluster job waiting behind the running one holds a reservation
    // from its end: the free processors are then only free until it starts.
    let mut big = job("sleep 10\n", d.home.path());
    big.resources = vec!["procs=8,walltime=50".into()];
    let big = d.api.submit(&big).unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    let windows = loop {
        let bf: arches_api::BackfillView = d
            .api
            .post(routes::BACKFILL, &arches_api::BackfillQuery::default())
            .unwrap();
        let w: Vec<(u32, Option<i64>)> = bf
            .windows
            .iter()
            .filter(|w| w.partition == "ALL")
            .map(|w| (w.procs, w.duration))
            .collect();
        if w.first().is_some_and(|x| x.1.is_some()) || std::time::Instant::now() > deadline {
            break w;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let res: arches_api::ReservationsView = d.api.get(routes::RESERVATIONS);
    let detail = d.api.jobs(&[&big.to_string()]);
    assert_eq!(
        windows.len(),
        1,
        "{windows:?} {res:?} {:?}",
        detail.jobs[0].summary
    );
    assert_eq!(windows[0].0, 2);
    assert!(
        windows[0].1.is_some_and(|d| (95..=100).contains(&d)),
        "{windows:?} {res:?} {:?}",
        detail.jobs[0].summary
    );
    let e: arches_api::StartEstimate = d
        .api
        .post(
            routes::STARTTIME,
            &arches_api::StartQuery::Job {
                id: big.to_string(),
                feedback: false,
            },
        )
        .unwrap();
    assert!(
        e.start.is_some_and(|t| (95..=100).contains(&(t - e.now))),
        "{e:?}"
    );
    let q = arches_api::BackfillQuery {
        duration: Some("2:00".into()),
        ..Default::default()
    };
    let bf: arches_api::BackfillView = d.api.post(routes::BACKFILL, &q).unwrap();
    assert!(bf.windows.is_empty(), "{:?}", bf.windows);
}

#[test]
fn iterations_follow_events_and_do_not_spin() {
    let d = InProcess::start_with(|c| {
        c.policy.reservation_policy = arches_core::policy::ReservationPolicy::Highest;
    });
    let mut run = job("sleep 1000\n", d.home.path());
    run.resources = vec!["procs=8,walltime=100".into()];
    let first = d.api.submit(&run).unwrap();
    d.api.wait_state(first, "Running");
    let blocked = d.api.submit(&run).unwrap();
    std::thread::sleep(Duration::from_millis(300));
    let before: arches_api::SchedulerView = d.api.get(routes::SCHEDULER);
    std::thread::sleep(Duration::from_millis(1500));
    let after: arches_api::SchedulerView = d.api.get(routes::SCHEDULER);
    assert!(
        after.iterations - before.iterations <= 1,
        "no events, no iterations: {} -> {}",
        before.iterations,
        after.iterations
    );
    let q = d.api.queue(false);
    let row = q.jobs.iter().find(|j| j.id == blocked).unwrap();
    assert!(row.reservation_start.is_some(), "{row:?}");
    assert!(after.iterations >= 2, "submissions trigger iterations");
}

#[test]
fn non_root_daemon_refuses_other_users_jobs() {
    if !common::root_or_skip("non_root_daemon_refuses_other_users_jobs") {
        return;
    }
    let user = "archessrv";
    let exists = Command::new("id")
        .arg(user)
        .output()
        .map(|o| o.status.success());
    if !exists.unwrap_or(false) {
        let st = Command::new("useradd")
            .args(["-M", "-s", "/bin/sh", user])
            .status()
            .unwrap();
        assert!(st.success(), "useradd");
    }
    let home = tempfile::Builder::new()
        .prefix("arches-nr")
        .tempdir()
        .unwrap();
    let st = Command::new("chown")
        .arg(user)
        .arg(home.path())
        .status()
        .unwrap();
    assert!(st.success());
    let mut child = Command::new("setpriv")
        .args(["--reuid", user, "--regid", user, "--init-groups", "--"])
        .arg(example("fake_daemon"))
        .arg(home.path())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("spawn");
    let api = Api::new(&home.path().join("moab.sock"));
    api.wait_ready();
    let e = api.submit(&job("true\n", home.path())).unwrap_err();
    assert_eq!(
        e,
        format!("ERROR:    cannot submit job - server runs as uid {} and cannot run jobs for user 'root'", uid_of(user))
    );
    assert!(api.queue(true).jobs.is_empty());
    let _ = child.kill();
    let _ = child.wait();
}

fn uid_of(user: &str) -> String {
    let out = Command::new("id").args(["-u", user]).output().unwrap();
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}
