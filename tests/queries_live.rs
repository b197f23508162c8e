//! Query options end to end (issue 16 part 2): showq's errors for unknown
//! credentials, object types and partitions, `-p` with eligible and blocked
//! jobs that may run there, its notes; checkjob `-A` and `--xml` of an unknown
//! job; showstart's best partition and `-f`; showbf `-D` and `-L`. Real
//! binaries against a real daemon on two one-partition nodes.

mod common;

use common::{me, run, text, Daemon};

fn start() -> (Daemon, u64, u64, u64) {
    let cfg = format!(
        "NODECFG[n1] PROCS=2 PARTITION=red\nNODECFG[n2] PROCS=2 PARTITION=blue\n\
         RMCFG[local] TYPE=LOCAL\nUSERCFG[{}] MAXPROC=3\nCLASSCFG[batch] PRIORITY=1\n",
        me()
    );
    let d = Daemon::start_with_config(Some(&cfg));
    let run = d.submit(
        "#!/bin/sh\nsleep 600\n",
        &["-l", "procs=2,walltime=10:00,partition=red"],
    );
    d.wait_state(run, "Running", std::time::Duration::from_secs(20));
    let blue = d.submit("#!/bin/sh\ntrue\n", &["-h", "-l", "partition=blue"]);
    let any = d.submit("#!/bin/sh\ntrue\n", &["-h", "-q", "batch"]);
    (d, run, blue, any)
}

/// The job ids in a showq report's rows (the lines naming our user).
fn ids(report: &str) -> Vec<u64> {
    let user = me();
    report
        .lines()
        .filter(|l| l.split_whitespace().nth(1) == Some(user.as_str()))
        .filter_map(|l| l.split_whitespace().next())
        .filter_map(|w| w.trim_end_matches(['*', '+', '-']).parse().ok())
        .collect()
}

#[test]
fn showq_errors_partitions_and_notes() {
    let (d, running, blue, any) = start();
    // Unknown credentials: Moab's message, exit 1, nothing on stdout.
    for (w, msg) in [
        (
            "user=nosuch",
            "ERROR:    cannot locate user nosuch in Moab's historical data\n",
        ),
        (
            "group=nosuch",
            "ERROR:    cannot locate group nosuch in Moab's historical data\n",
        ),
        (
            "acct=nosuch",
            "ERROR:    cannot locate acct nosuch in Moab's historical data\n",
        ),
        (
            "class=nosuch",
            "ERROR:    cannot locate class nosuch in Moab's historical data\n",
        ),
        (
            "qos=nosuch",
            "ERROR:    cannot locate qos nosuch in Moab's historical data\n",
        ),
        (
            "colour=red",
            "ERROR:    invalid object type colour specified\n",
        ),
        ("partition=green", "ERROR:    unknown partition specified\n"),
    ] {
        let (c, o, e) = run(&d, "showq", &["-w", w]);
        assert_eq!((c, o.as_str(), e.as_str()), (1, "", msg), "{w}");
    }
    let (c, _, e) = run(&d, "showq", &["-u", "nosuch"]);
    assert_eq!(
        (c, e.trim()),
        (
            1,
            "ERROR:    cannot locate user nosuch in Moab's historical data"
        )
    );
    let (c, _, e) = run(&d, "showq", &["-p", "green"]);
    assert_eq!((c, e.trim()), (1, "ERROR:    unknown partition specified"));
    // Known ones: the configured class, our user.
    assert_eq!(run(&d, "showq", &["-w", "class=batch"]).0, 0);
    let (c, o, _) = run(&d, "showq", &["-w", &format!("user={}", me())]);
    assert_eq!(c, 0);
    assert_eq!(ids(&o), [running, blue, any], "{o}");
    // -p red: the running job, and the blocked job that may run in red
    // (no partition asked), not the one that asked for blue; red's summary.
    let (c, o, _) = run(&d, "showq", &["-p", "red"]);
    assert_eq!(c, 0);
    assert_eq!(ids(&o), [running, any], "{o}");
    assert!(
        o.contains("2 of 2 processors in use by local jobs (100.00%)"),
        "{o}"
    );
    let (_, o, _) = run(&d, "showq", &["-p", "blue"]);
    assert_eq!(ids(&o), [blue, any], "{o}");
    assert!(
        o.contains("0 of 2 processors in use by local jobs (0.00%)"),
        "{o}"
    );
    // -n: names; -v: id/full id and the partition.
    let (_, o, _) = run(&d, "showq", &["-v"]);
    assert!(
        o.lines()
            .any(|l| l.starts_with(&format!("{running}/Moab.{running} ")) && l.contains(" red ")),
        "{o}"
    );
    // Notes: paused scheduling, a system reservation over every node.
    assert_eq!(run(&d, "mschedctl", &["-p"]).0, 0);
    let (_, o, _) = run(&d, "showq", &[]);
    assert!(
        o.ends_with("Total jobs:  3\n\nNOTE:  scheduling is paused\n"),
        "{o}"
    );
    let x = run(&d, "showq", &["--xml"]).1;
    let doc = roxmltree::Document::parse(x.trim()).unwrap();
    let note = doc
        .descendants()
        .find(|n| n.has_tag_name("comment"))
        .and_then(|n| n.attribute("note"));
    assert_eq!(note, Some("NOTE:  scheduling is paused"));
    assert_eq!(run(&d, "mschedctl", &["-r"]).0, 0);
    let (c, o, e) = run(&d, "mrsvctl", &["-c", "-h", "n1,n2", "-d", "1:00:00"]);
    assert_eq!(c, 0, "{o}{e}");
    let (_, o, _) = run(&d, "showq", &[]);
    assert!(
        o.ends_with("\nNOTE:  system reservation blocking all nodes\n"),
        "{o}"
    );
    assert_eq!(run(&d, "mrsvctl", &["-r", "system.1"]).0, 0);
    let (_, o, _) = run(&d, "showq", &[]);
    assert!(!o.contains("NOTE:"), "{o}");
}

#[test]
fn checkjob_showstart_and_showbf_options() {
    let (d, running, blue, _any) = start();
    // checkjob -A: Moab's names first, in Moab's order.
    let (c, o, _) = run(&d, "checkjob", &["-A", &running.to_string()]);
    assert_eq!(c, 0);
    let pairs: Vec<(&str, &str)> = o
        .trim_end()
        .trim_end_matches(';')
        .split(';')
        .map(|p| p.split_once('=').unwrap())
        .collect();
    let names: Vec<&str> = pairs.iter().take(11).map(|p| p.0).collect();
    assert_eq!(
        names,
        [
            "NAME",
            "STATE",
            "UNAME",
            "GNAME",
            "ACCOUNT",
            "RCLASS",
            "WCLIMIT",
            "QUEUETIME",
            "STARTTIME",
            "TASKS",
            "NODES"
        ]
    );
    let get = |k: &str| pairs.iter().find(|p| p.0 == k).unwrap().1;
    assert_eq!(get("NAME"), running.to_string());
    assert_eq!((get("STATE"), get("UNAME")), ("Running", me().as_str()));
    assert_eq!((get("WCLIMIT"), get("TASKS")), ("600", "2"));
    assert!(get("STARTTIME").parse::<i64>().unwrap() > 0);
    // checkjob --xml of an unknown job: Moab's error element, exit 1.
    let (c, o, _) = run(&d, "checkjob", &["--xml", "99999"]);
    assert_eq!(c, 1);
    let doc = roxmltree::Document::parse(o.trim()).unwrap();
    let root = doc.root_element();
    assert_eq!(
        (root.tag_name().name(), root.attribute("code"), root.text()),
        (
            "Error",
            Some("700"),
            Some("server rejected request - invalid job specified: 99999")
        )
    );
    // showstart: the best partition is where the job can start first.
    let (_, o, _) = run(&d, "showstart", &["2@60"]);
    assert!(o.contains("Best Partition: blue"), "{o}");
    let (_, o, _) = run(&d, "showstart", &[&running.to_string()]);
    assert!(o.contains("Best Partition: red"), "{o}");
    let (_, o, _) = run(&d, "showstart", &["4@60", "--format=json"]);
    let v: serde_json::Value = serde_json::from_str(&o).unwrap();
    assert_eq!(v["partition"], "ALL", "{o}");
    // -f: no completed job yet, so no feedback and the same estimate.
    let (c, o, _) = run(&d, "showstart", &["-f", "2@60", "--format=json"]);
    let v: serde_json::Value = serde_json::from_str(&o).unwrap();
    assert_eq!((c, v.get("feedback")), (0, None), "{o}");
    let _ = blue;
    // showbf -D: the red processors come free when the running job ends.
    let rows = |args: &[&str]| -> Vec<Vec<String>> {
        text(&d.run("showbf", args).stdout)
            .lines()
            .skip(2)
            .filter(|l| !l.starts_with("ReqID"))
            .map(|l| l.split_whitespace().map(String::from).collect())
            .collect()
    };
    let now = rows(&[]);
    assert!(now.iter().all(|r| r[3] == "00:00:00"), "{now:?}");
    let future = rows(&["-D"]);
    assert!(
        future
            .iter()
            .any(|r| r[0] == "red" && r[1] == "2" && r[3] != "00:00:00"),
        "{future:?}"
    );
    assert!(future.len() > now.len(), "{future:?}");
    // showbf -L: MAXPROC=3 with 2 in use leaves one processor.
    let limited = rows(&["-L"]);
    assert!(
        !limited.is_empty() && limited.iter().all(|r| r[1] == "1"),
        "{limited:?}"
    );
    assert!(now.iter().any(|r| r[1] == "2"), "{now:?}");
}

#[test]
fn mdiag_partitions_verbose_nodes_and_unknown_credentials() {
    let (d, running, blue, any) = start();
    // Unknown credentials are errors; known ones report.
    for (flag, obj) in [
        ("-u", "user"),
        ("-g", "group"),
        ("-a", "acct"),
        ("-c", "class"),
        ("-q", "qos"),
    ] {
        let (c, o, e) = run(&d, "mdiag", &[flag, "nosuch"]);
        assert_eq!(
            (c, o.as_str(), e.trim()),
            (
                1,
                "",
                format!("ERROR:    cannot locate {obj} nosuch in Moab's historical data").as_str()
            ),
            "{flag}"
        );
    }
    let (c, o, _) = run(&d, "mdiag", &["-u", &me()]);
    assert!(c == 0 && o.lines().any(|l| l.starts_with(&me())), "{o}");
    assert_eq!(run(&d, "mdiag", &["-c", "batch"]).0, 0);
    // -t PARTITION restricts -n, -j, -p and -b; unknown partitions are errors.
    let (_, o, _) = run(&d, "mdiag", &["-n", "-t", "blue"]);
    assert!(o.contains("\nn2 ") && !o.contains("\nn1 "), "{o}");
    let (c, _, e) = run(&d, "mdiag", &["-n", "-t", "green"]);
    assert_eq!((c, e.trim()), (1, "ERROR:    unknown partition specified"));
    let (_, o, _) = run(&d, "mdiag", &["-j", "-t", "red", "--format=json"]);
    let v: serde_json::Value = serde_json::from_str(&o).unwrap();
    let jobs: Vec<u64> = v["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j["summary"]["id"].as_u64().unwrap())
        .collect();
    assert_eq!(jobs, [running, any]);
    let (_, o, _) = run(&d, "mdiag", &["-b", "-t", "blue"]);
    assert!(
        o.starts_with("Diagnosing blocked jobs (policylevel SOFT  partition blue)"),
        "{o}"
    );
    assert!(
        o.contains(&format!("job {blue:<20}")) && o.contains(&format!("job {any:<20}")),
        "{o}"
    );
    let (_, o, _) = run(&d, "mdiag", &["-b", "-t", "red"]);
    assert!(!o.contains(&format!("job {blue:<20}")), "{o}");
    // -t with a report it cannot restrict, -w without -j, no report: refused.
    assert_eq!(run(&d, "mdiag", &["-u", "-t", "red"]).0, 1);
    assert_eq!(run(&d, "mdiag", &["-n", "-w", "user=x"]).0, 1);
    let (c, _, e) = run(&d, "mdiag", &[]);
    assert!(c == 1 && e.contains("a report is required"), "{e}");
    // -n -v: the extra columns, the partition among them.
    let (_, o, _) = run(&d, "mdiag", &["-n", "-v"]);
    assert!(
        o.lines()
            .nth(1)
            .unwrap()
            .ends_with("Rsv Classes Network Features"),
        "{o}"
    );
    assert!(
        o.lines()
            .any(|l| l.starts_with("n2 ") && l.contains(" blue ")),
        "{o}"
    );
}

/// showstats -t/-n/-v from the statistics profile, kept across a restart;
/// a stand-alone -t, -T without a tree and -j without templates refused.
#[test]
fn showstats_profiles_survive_restart() {
    let cfg = "NODECFG[n1] PROCS=2\nRMCFG[local] TYPE=LOCAL\nPROFILEDURATION 00:00:01\nRMPOLLINTERVAL 1\n";
    let mut d = Daemon::start_with_config(Some(cfg));
    let id = d.submit("#!/bin/sh\ntrue\n", &["-l", "walltime=1:00"]);
    d.wait_state(id, "Completed", std::time::Duration::from_secs(20));
    // A few one-second intervals pass: node samples are folded in.
    std::thread::sleep(std::time::Duration::from_millis(2500));
    let (c, o, _) = run(&d, "showstats", &["-v"]);
    assert_eq!(c, 0);
    assert!(o.contains("Min System Utilization:"), "{o}");
    assert!(o.contains("Est/Avg Backlog:"), "{o}");
    d.stop();
    d.spawn();
    // The job's interval is in the kept history: -t over the last hour has it.
    let (c, o, e) = run(&d, "showstats", &["-u", "-t", "-1:00:00", "--format=json"]);
    assert_eq!(c, 0, "{e}");
    let v: serde_json::Value = serde_json::from_str(&o).unwrap();
    let me_ = me();
    let mine = v["credentials"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["kind"] == "user" && c["name"] == me_.as_str())
        .unwrap_or_else(|| panic!("{o}"));
    assert_eq!(mine["completed"]["jobs"], 1, "{o}");
    assert!(v["window"].is_array(), "{o}");
    // A time frame before the job: nothing completed in it.
    let (_, o, _) = run(
        &d,
        "showstats",
        &["-u", "-t", "-3:00:00,-2:00:00", "--format=json"],
    );
    let v: serde_json::Value = serde_json::from_str(&o).unwrap();
    assert_eq!(v["completed"]["jobs"], 0, "{o}");
    // -n: the node's samples, from before the restart too.
    let (c, o, _) = run(&d, "showstats", &["-n", "--format=json"]);
    assert_eq!(c, 0);
    let v: serde_json::Value = serde_json::from_str(&o).unwrap();
    assert!(v["nodes"][0]["samples"].as_u64().unwrap() > 1, "{o}");
    let (_, o, _) = run(&d, "showstats", &["-n", "n1"]);
    assert!(
        o.starts_with("node stats from ") && o.contains("\nn1 "),
        "{o}"
    );
    assert_eq!(run(&d, "showstats", &["-n", "nosuch"]).0, 1);
    // Refusals.
    for args in [
        &["-j"][..],
        &["-T"],
        &["-t", "-1:00"],
        &["-u", "-t", "bogus"],
    ] {
        let (c, _, e) = run(&d, "showstats", args);
        assert_eq!(c, 1, "{args:?}: {e}");
    }
    let (c, _, e) = run(&d, "showstats", &["-u", "nosuch"]);
    assert_eq!(
        (c, e.trim()),
        (
            1,
            "ERROR:    cannot locate user 'nosuch' in Moab's historical data"
        )
    );
}
