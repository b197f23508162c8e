//! Unit tests of submission parsing.

use super::*;
use arches_core::Node;

fn user() -> UserInfo {
    UserInfo {
        name: "alice".into(),
        uid: 1000,
        gid: 1000,
        home: "/home/alice".into(),
        shell: "/bin/bash".into(),
    }
}

fn submit(resources: &[&str], ext: &[&str]) -> Result<Submission, SubmitError> {
    let req = SubmitRequest {
        script: "true\n".into(),
        resources: resources.iter().map(|s| s.to_string()).collect(),
        extensions: ext.iter().map(|s| s.to_string()).collect(),
        submit_dir: "/tmp/sub".into(),
        ..SubmitRequest::default()
    };
    parse(&req, &user(), "users", &Policy::default(), 1000)
}

#[test]
fn nodes_ppn_features_and_walltime() {
    let s = submit(&["nodes=2:ppn=4:fast,walltime=1-02:00:00"], &[]).unwrap();
    let r = &s.job.req;
    assert_eq!((r.tasks, r.nodes, r.tasks_per_node), (8, Some(2), Some(4)));
    assert_eq!(r.features, vec!["fast".to_string()]);
    assert_eq!(s.job.walltime, Some(93600));
    let s = submit(&["walltime=30:00:00", "procs=3"], &[]).unwrap();
    assert_eq!(s.job.walltime, Some(108000));
    assert_eq!(s.job.req.tasks, 3);
}

#[test]
fn memory_units_and_select() {
    assert_eq!(parse_mem("2GB").unwrap(), 2048);
    assert_eq!(parse_mem("512mb").unwrap(), 512);
    assert_eq!(parse_mem("1024kb").unwrap(), 1);
    assert_eq!(parse_mem("1tb").unwrap(), 1024 * 1024);
    assert!(parse_mem("12xb").is_err());
    let s = submit(&["select=1:ncpus=4:mem=8gb"], &[]).unwrap();
    assert_eq!(s.job.req.tasks, 4);
    assert_eq!(s.job.req.mem_per_task_mb, 2048);
    let s = submit(&["procs=2,pmem=100mb"], &[]).unwrap();
    assert_eq!(s.job.req.total_mem_mb(), 200);
}

#[test]
fn flags_depend_and_extensions() {
    let s = submit(
        &["flags=suspendable", "qos=high", "gres=matlab:2"],
        &[
            "x=FLAGS:RESTARTABLE;PARTITION:p1",
            "depend=afterok:Moab.4:5",
        ],
    )
    .unwrap();
    assert!(s.job.flags.contains(JobFlag::Suspendable));
    assert!(s.job.flags.contains(JobFlag::Restartable));
    assert_eq!(s.job.req.partition.as_deref(), Some("p1"));
    assert_eq!(s.job.cred.qos.as_deref(), Some("high"));
    assert_eq!(s.job.depend.len(), 2);
    assert_eq!(s.job.depend[0].job, 4);
    assert_eq!(s.job.req.gres(), [("matlab".to_string(), 2)]);
}

#[test]
fn malformed_requests_are_rejected() {
    for bad in [
        "walltime=0",
        "walltime=-5",
        "procs=abc",
        "nodes=0",
        "mem=lots",
        "nodes=1:ppn=",
        "bogus",
        "flags=whatever",
    ] {
        assert!(submit(&[bad], &[]).is_err(), "{bad} accepted");
    }
    assert!(submit(&[], &["depend=afterok"]).is_err());
    let e = submit(&["walltime=0"], &[]).unwrap_err();
    assert!(e.message().starts_with("ERROR:    cannot submit job - "));
}

#[test]
fn cluster_fit_and_dependencies_are_checked() {
    let state = State::new(vec![Node::new("n1", 4, 1000)]);
    assert!(submit(&["nodes=1:ppn=4"], &[])
        .unwrap()
        .check_against(&state)
        .is_ok());
    for bad in [
        "nodes=1:ppn=5",
        "nodes=2",
        "procs=5",
        "mem=2000mb",
        "feature=gpu",
    ] {
        let s = submit(&[bad], &[]).unwrap();
        assert!(s.check_against(&state).is_err(), "{bad} fits?");
    }
    let s = submit(&[], &["depend=afterok:99"]).unwrap();
    assert!(s.check_against(&state).unwrap_err().0.contains("99"));

    // Mixed nodes: each node must hold its share on its own, not the
    // largest node and the node count separately.
    let mut n1 = Node::new("n1", 4, 4000);
    n1.features = vec!["fast".into()];
    n1.partition = "p1".into();
    let mut n2 = Node::new("n2", 2, 1000);
    n2.partition = "p2".into();
    let mixed = State::new(vec![n1, n2, Node::new("n3", 2, 1000)]);
    let check = |res: &[&str]| submit(res, &[]).unwrap().check_against(&mixed);
    for good in [
        "nodes=1:ppn=3",
        "nodes=3:ppn=2",
        "nodes=2:ppn=2,pmem=500mb",
        "procs=8",
        "nodes=1:ppn=4:fast",
        "nodes=1:ppn=2,partition=p2",
        "nodes=1:ppn=1,pmem=4000mb",
    ] {
        assert!(check(&[good]).is_ok(), "{good}: {:?}", check(&[good]));
    }
    let e = check(&["nodes=2:ppn=3"]).unwrap_err();
    assert_eq!(
        e.0,
        "job requests 2 nodes with 3 procs each but only 1 of the 3 usable nodes is that large"
    );
    for bad in [
        "nodes=2:ppn=3",
        "nodes=2:ppn=1:fast",
        "nodes=2:ppn=2,pmem=1000mb",
        "nodes=2:ppn=1,pmem=1500mb",
        "nodes=2:ppn=1,partition=p1",
        "nodes=1:ppn=3,partition=p2",
        "procs=9",
        "procs=4,pmem=1500mb",
    ] {
        let r = check(&[bad]);
        assert!(r.is_err(), "{bad} fits?");
        let msg = r.unwrap_err().message();
        assert!(
            msg.starts_with("ERROR:    cannot submit job - job requests"),
            "{bad}: {msg}"
        );
    }
}

#[test]
fn finalize_resolves_paths_and_environment() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_string_lossy().to_string();
    let req = SubmitRequest {
        script: "true\n".into(),
        name: Some("job".into()),
        submit_dir: d.clone(),
        output: Some("out/$MOAB_JOBID.log".into()),
        error: Some(format!("{d}/")),
        env: vec![("FOO".into(), "bar".into()), ("PATH".into(), "/x".into())],
        ..SubmitRequest::default()
    };
    let s = parse(&req, &user(), "users", &Policy::default(), 0).unwrap();
    let (job, exec, payload) = s.finalize(42, "host");
    assert_eq!(job.id, 42);
    assert_eq!(exec.stdout, format!("{d}/out/42.log"));
    assert_eq!(exec.stderr, format!("{d}/job.e42"));
    let get = |k: &str| {
        payload
            .env
            .iter()
            .find(|(n, _)| n == k)
            .map(|(_, v)| v.clone())
    };
    assert_eq!(get("FOO").as_deref(), Some("bar"));
    assert_eq!(get("PATH").as_deref(), Some("/x"));
    assert_eq!(get("PBS_JOBID").as_deref(), Some("42"));
    assert_eq!(get("MOAB_JOBNAME").as_deref(), Some("job"));
    assert_eq!(get("MOAB_USER").as_deref(), Some("alice"));
    assert_eq!(get("HOME").as_deref(), Some("/home/alice"));
    assert_eq!(output_path(None, "x.o1", "/s", "1"), "/s/x.o1".to_string());
}

#[test]
fn join_modes_and_working_directory_place_the_output() {
    let base = SubmitRequest {
        script: "true\n".into(),
        name: Some("j".into()),
        submit_dir: "/sub".into(),
        workdir: Some("/elsewhere".into()),
        ..SubmitRequest::default()
    };
    let paths = |req: &SubmitRequest| {
        let s = parse(req, &user(), "users", &Policy::default(), 0).unwrap();
        let (_, exec, _) = s.finalize(7, "host");
        (exec.workdir, exec.stdout, exec.stderr, exec.join)
    };
    // -d moves the job, not its default output files (submission directory).
    let (wd, out, err, join) = paths(&base);
    assert_eq!(wd, "/elsewhere");
    assert_eq!(
        (out.as_str(), err.as_str(), join),
        ("/sub/j.o7", "/sub/j.e7", false)
    );
    // -j oe: both streams into the output file.
    let oe = SubmitRequest {
        join: true,
        ..base.clone()
    };
    assert_eq!(paths(&oe).1, "/sub/j.o7");
    assert!(paths(&oe).3);
    // -j eo: both streams into the error file (Torque).
    let eo = SubmitRequest {
        join: true,
        join_to_error: true,
        error: Some("errs/x.err".into()),
        ..base.clone()
    };
    let (_, out, err, join) = paths(&eo);
    assert_eq!(
        (out.as_str(), err.as_str(), join),
        ("/sub/errs/x.err", "/sub/errs/x.err", true)
    );
}

#[test]
fn start_dates_parse_in_local_time() {
    let now = 1_700_000_000;
    let t = parse_start_date("202612041300", now).unwrap();
    let t2 = parse_start_date("202612041300.30", now).unwrap();
    assert_eq!(t2 - t, 30);
    assert!(parse_start_date("2561", now).is_err());
    assert!(parse_start_date("abc", now).is_err());
    let s = submit(&[], &[]).unwrap();
    assert_eq!(s.job.start_after, None);
}

#[test]
fn oversized_script_is_rejected() {
    let req = SubmitRequest {
        script: "x".repeat(MAX_SCRIPT_BYTES + 1),
        submit_dir: "/tmp".into(),
        ..SubmitRequest::default()
    };
    assert!(parse(&req, &user(), "u", &Policy::default(), 0).is_err());
}

#[test]
fn class_defaults_apply() {
    let mut policy = Policy::default();
    let class = arches_core::policy::ClassConfig {
        default_wclimit: Some(3600),
        job_flags: vec![JobFlag::Preemptee],
        ..Default::default()
    };
    policy.classes.insert("batch".into(), class);
    let req = SubmitRequest {
        script: "true\n".into(),
        class: Some("batch".into()),
        submit_dir: "/tmp".into(),
        ..SubmitRequest::default()
    };
    let s = parse(&req, &user(), "users", &policy, 0).unwrap();
    assert_eq!(s.job.walltime, Some(3600));
    assert!(s.job.flags.contains(JobFlag::Preemptee));
    let mut explicit = req.clone();
    explicit.resources = vec!["walltime=60".into()];
    assert_eq!(
        parse(&explicit, &user(), "u", &policy, 0)
            .unwrap()
            .job
            .walltime,
        Some(60)
    );
}

#[test]
fn only_administrators_may_ask_for_preemptor() {
    let s = submit(&["walltime=60,flags=preemptor"], &[]).unwrap();
    let e = s.check_privileges(false).unwrap_err();
    assert!(
        e.message()
            .contains("job flag PREEMPTOR may only be set by an administrator"),
        "{}",
        e.message()
    );
    assert!(s.check_privileges(true).is_ok());
    // PREEMPTEE makes one's own job preemptible: anybody may.
    let s = submit(&["walltime=60,flags=preemptee"], &[]).unwrap();
    assert!(s.check_privileges(false).is_ok());
    // A class granting PREEMPTOR is the administrator's decision.
    let mut policy = Policy::default();
    let class = arches_core::policy::ClassConfig {
        job_flags: vec![JobFlag::Preemptor],
        ..Default::default()
    };
    policy.classes.insert("urgent".into(), class);
    let req = SubmitRequest {
        script: "true\n".into(),
        class: Some("urgent".into()),
        submit_dir: "/tmp".into(),
        ..SubmitRequest::default()
    };
    let s = parse(&req, &user(), "users", &policy, 0).unwrap();
    assert!(s.job.flags.contains(JobFlag::Preemptor));
    assert!(s.check_privileges(false).is_ok());
}

#[test]
fn qos_default_and_access_are_applied_at_submission() {
    // CLASSCFG[bf] QDEF=slow, USERCFG[alice] QLIST=gold, QOSCFG[slow|gold|open].
    let mut policy = Policy::default();
    for q in ["slow", "gold", "open"] {
        policy.qos.insert(q.into(), Default::default());
    }
    policy.classes.entry("bf".into()).or_default().qdef = Some("slow".into());
    policy.classes.entry("other".into()).or_default();
    let req = |class: &str, qos: Option<&str>| SubmitRequest {
        script: "true\n".into(),
        class: Some(class.into()),
        resources: qos.map(|q| vec![format!("qos={q}")]).unwrap_or_default(),
        submit_dir: "/tmp".into(),
        ..SubmitRequest::default()
    };
    let qos_of = |r: &SubmitRequest, who: &UserInfo, policy: &Policy| {
        parse(r, who, "users", policy, 0).map(|s| s.job.cred.qos)
    };
    assert_eq!(
        qos_of(&req("bf", None), &user(), &policy),
        Ok(Some("slow".into()))
    );
    assert_eq!(qos_of(&req("other", None), &user(), &policy), Ok(None));
    // `open` is named by no list: anyone may ask for it.
    assert_eq!(
        qos_of(&req("other", Some("open")), &user(), &policy),
        Ok(Some("open".into()))
    );
    // `slow` belongs to class bf's list: other classes may not use it.
    let denied = qos_of(&req("other", Some("slow")), &user(), &policy).unwrap_err();
    assert_eq!(
        denied.message(),
        "ERROR:  cannot submit job - invalid QOS requested"
    );
    assert!(qos_of(&req("other", Some("nosuch")), &user(), &policy).is_err());
    policy.users.entry("alice".into()).or_default().qlist = vec!["gold".into()];
    assert_eq!(
        qos_of(&req("bf", Some("gold")), &user(), &policy),
        Ok(Some("gold".into()))
    );
    let mut bob = user();
    bob.name = "bob".into();
    assert!(qos_of(&req("bf", Some("gold")), &bob, &policy).is_err());
}

fn submit_in(
    resources: &[&str],
    class: Option<&str>,
    policy: &Policy,
) -> Result<Submission, SubmitError> {
    let req = SubmitRequest {
        script: "true\n".into(),
        resources: resources.iter().map(|s| s.to_string()).collect(),
        class: class.map(String::from),
        submit_dir: "/tmp/sub".into(),
        ..SubmitRequest::default()
    };
    parse(&req, &user(), "users", policy, 1000)
}

#[test]
fn class_limits_refuse_with_moabs_words_and_unknown_classes() {
    let mut p = Policy::default();
    let mut batch = arches_core::policy::ClassConfig {
        max_wclimit: Some(3600),
        ..Default::default()
    };
    batch.job.max_procs = Some(8);
    batch.job.max_nodes = Some(2);
    batch.job.min_procs = Some(2);
    batch.job.default_procs = Some(4);
    p.classes.insert("batch".into(), batch);
    p.default_class = Some("batch".into());
    let e = submit_in(&["walltime=2:00:00,procs=4"], Some("batch"), &p).unwrap_err();
    assert_eq!(
        e.message(),
        "ERROR:    cannot submit job - job violates class configuration 'wclimit too high for class 'batch' (7200 > 3600)'"
    );
    let e = submit_in(&["procs=16"], None, &p).unwrap_err();
    assert!(
        e.0.contains("procs too high for class 'batch' (16 > 8)"),
        "{e}"
    );
    let e = submit_in(&["nodes=3"], None, &p).unwrap_err();
    assert!(
        e.0.contains("nodes too high for class 'batch' (3 > 2)"),
        "{e}"
    );
    let e = submit_in(&["procs=1"], None, &p).unwrap_err();
    assert!(
        e.0.contains("procs too low for class 'batch' (1 < 2)"),
        "{e}"
    );
    // The default class, and its defaults.
    let s = submit_in(&[], None, &p).unwrap();
    assert_eq!(s.job.cred.class.as_deref(), Some("batch"));
    assert_eq!(s.job.req.tasks, 4);
    let e = submit_in(&[], Some("gpu"), &p).unwrap_err();
    assert!(
        e.0.contains("unknown class 'gpu' (configured classes: batch)"),
        "{e}"
    );
}

#[test]
fn node_specifications_and_placement_extensions() {
    let s = submit(&["nodes=2:ppn=8+1:ppn=4"], &[]).unwrap();
    let r = &s.job.req;
    assert_eq!((r.tasks, r.nodes, r.tasks_per_node), (20, Some(3), None));
    assert_eq!(r.groups().len(), 2);
    let s = submit(&["nodes=n1+n2:ppn=2:gpus=1"], &[]).unwrap();
    assert_eq!(s.job.req.groups()[1].host.as_deref(), Some("n2"));
    assert_eq!(s.job.req.tasks, 3);
    let s = submit(
        &["procs=8,tpn=4,naccesspolicy=singlejob,gres=gpu:1"],
        &["x=HOSTLIST:n1,n2;TRL:4@600:8@300"],
    )
    .unwrap();
    let r = &s.job.req;
    assert_eq!((r.nodes, r.tasks_per_node), (Some(2), Some(4)));
    assert_eq!(r.access(), Some(arches_core::NodeAccessPolicy::SingleJob));
    assert_eq!(r.gres(), [("gpu".to_string(), 1)]);
    assert_eq!(r.hosts(), ["n1".to_string(), "n2".to_string()]);
    assert_eq!(r.trl().len(), 2);
    let s = submit(&[], &["x=FLAGS:ADVRES:system.3:RESTARTABLE"]).unwrap();
    assert_eq!(s.job.req.advres(), Some("system.3"));
    assert!(s.job.flags.contains(JobFlag::Restartable));
    let s = submit(&["advres=r1"], &[]).unwrap();
    assert_eq!(s.job.req.advres(), Some("r1"));
    let s = submit(&["select=2:ncpus=4:ngpus=1"], &[]).unwrap();
    assert_eq!(s.job.req.groups()[0].gres, vec![("gpu".to_string(), 1)]);
}

#[test]
fn unsupported_elements_are_refused_not_ignored() {
    for (res, ext, why) in [
        (&["cput=10:00"][..], &[][..], "CPU-time"),
        (&["pcput=10"], &[], "CPU-time"),
        (&["file=10gb"], &[], "disk"),
        (&["nodeset=ONEOF:FEATURE:a:b"], &[], "nodeset"),
        (&["other=x"], &[], "other"),
        (&["feature=a|b"], &[], "alternatives"),
        (&["gpus=2"], &[], "node specification"),
        (&["nodes=2:mics=1"], &[], "mics"),
        (&["naccesspolicy=ALONE"], &[], "node access policy"),
        (&["select=1:ncpus=2:arch=x"], &[], "arch"),
        (&["nodes=n1+n1"], &[], "twice"),
        (&["nodes=n1+n2,ppn=2"], &[], "ppn"),
        (&["gres=gpu:0"], &[], "gpu"),
        (&["trl=4-2"], &[], "reversed"),
        (&[], &["x=BOGUS:1"], "BOGUS"),
        (&[], &["umask=0800"], "invalid umask '0800'"),
        (&[], &["umask=1777"], "invalid umask '1777'"),
        (&[], &["umask=-1"], "invalid umask"),
        (&[], &["umask="], "invalid umask"),
        (&[], &["group_list=x"], "'-W group_list='"),
    ] {
        let e = submit(res, ext).expect_err(&format!("{res:?} {ext:?} accepted"));
        assert!(e.0.contains(why), "{res:?} {ext:?}: {e}");
    }
}

#[test]
fn the_engine_checks_layouts_against_the_cluster() {
    let mut n1 = Node::new("n1", 4, 0);
    n1.gres = vec![("gpu".into(), 2)];
    let state = State::new(vec![n1, Node::new("n2", 4, 0)]);
    let ok = |res: &[&str]| submit(res, &[]).unwrap().check_against(&state);
    assert!(ok(&["gres=gpu:2"]).is_ok());
    assert!(ok(&["nodes=n1:ppn=2:gpus=2+n2:ppn=4"]).is_ok());
    assert!(ok(&["gres=gpu:3"])
        .unwrap_err()
        .0
        .contains("no set of nodes"));
    assert!(ok(&["gres=fpga:1"])
        .unwrap_err()
        .0
        .contains("no node has generic resource 'fpga'"));
    assert!(ok(&["nodes=n9"])
        .unwrap_err()
        .0
        .contains("no node is named 'n9'"));
    assert!(ok(&["hostlist=n2,procs=5"]).is_err());
    assert!(ok(&["advres=nowhere"]).unwrap_err().0.contains("nowhere"));
}

#[test]
fn umask_is_recorded_as_torque_writes_it() {
    for (given, mask) in [
        ("022", 0o022),
        ("0077", 0o077),
        ("7", 0o007),
        ("0", 0),
        ("777", 0o777),
    ] {
        let s = submit(&[], &[&format!("umask={given}")]).unwrap();
        assert_eq!(s.exec.umask, Some(mask), "{given}");
    }
    assert_eq!(submit(&[], &[]).unwrap().exec.umask, None);
}

#[test]
fn later_resources_override_earlier_ones() {
    // Directives first, then the command line (msub's order).
    let s = submit(
        &[
            "nodes=1:ppn=2,walltime=10:00,pmem=100mb",
            "qos=high",
            "nodes=2:ppn=4",
            "walltime=20:00,pmem=200mb",
        ],
        &[],
    )
    .unwrap();
    let r = &s.job.req;
    assert_eq!((r.nodes, r.tasks_per_node, r.tasks), (Some(2), Some(4), 8));
    assert_eq!(s.job.walltime, Some(1200));
    assert_eq!(r.mem_per_task_mb, 200);
    assert_eq!(
        effective_resources(&[
            "var=a:1,select=1:ncpus=2".into(),
            "var=b:2,nodes=3,var=a:3".into()
        ]),
        ["var=b:2", "nodes=3", "var=a:3"]
    );
    // Lists add up.
    assert_eq!(
        effective_resources(&["depend=afterok:1".into(), "depend=afterany:2".into()]).len(),
        2
    );
    // Within one list too: the last nodes= is the job's.
    let s = submit(&["nodes=1,nodes=3"], &[]).unwrap();
    assert_eq!(s.job.req.nodes, Some(3));
}

#[test]
fn working_directory_defaults_to_the_submission_directory() {
    let req = SubmitRequest {
        script: "true\n".into(),
        submit_dir: "/tmp/sub".into(),
        ..SubmitRequest::default()
    };
    let env_of = |req: &SubmitRequest| {
        let (_, exec, payload) = parse(req, &user(), "users", &Policy::default(), 1000)
            .unwrap()
            .finalize(7, "h");
        (exec.workdir, payload.env)
    };
    let (wd, env) = env_of(&req);
    assert_eq!(wd, "/tmp/sub");
    assert!(!env.iter().any(|(k, _)| k == "PBS_O_INITDIR"));
    let with_d = SubmitRequest {
        workdir: Some("run".into()),
        ..req.clone()
    };
    let (wd, env) = env_of(&with_d);
    assert_eq!(wd, "/tmp/sub/run");
    assert!(env.contains(&("PBS_O_INITDIR".to_string(), "/tmp/sub/run".to_string())));
    assert!(env.contains(&("PBS_O_WORKDIR".to_string(), "/tmp/sub".to_string())));
}

#[test]
fn deadlines_parse_moab_forms_and_refuse_the_past() {
    // The submission time `submit` uses (1000): +DURATION counts from it.
    let s = submit(&["walltime=60,deadline=+3:00:00"], &[]).unwrap();
    assert_eq!(s.job.deadline, Some(1000 + 3 * 3600));
    let now = 1_780_000_000; // 2026
    let abs = parse_deadline("08:00:00_03/01/27", now).unwrap();
    assert_eq!(abs, parse_deadline("08:00_03/01/2027", now).unwrap());
    assert_eq!(parse_deadline("1900000000", now), Ok(1_900_000_000));
    let e = parse_deadline("08:00:00_03/01/08", now).unwrap_err().0;
    assert_eq!(e, "deadline '08:00:00_03/01/08' has already passed");
    let e = parse_deadline("soon", now).unwrap_err().0;
    assert!(e.starts_with("invalid deadline 'soon'"), "{e}");
    assert!(submit(&["deadline="], &[]).is_err());
    assert!(
        submit(&["deadline=+0"], &[]).is_err(),
        "now is not a deadline"
    );
    assert_eq!(submit(&["walltime=60"], &[]).unwrap().job.deadline, None);
}
