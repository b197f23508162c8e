//! The commands of issue 16 part 5 end to end on a real daemon: the older
//! single-purpose ones (setspri, releaseres, setres, resetstats, showconfig,
//! showstate) and mshow -a — what each one acted on or answered, checked
//! through the modern commands' JSON.

mod common;

use std::time::Duration;

use common::{run, text, wait_until, Daemon};

const CFG: &str = "NODECFG[node01] PROCS=1 PARTITION=red\nNODECFG[node02] PROCS=2 PARTITION=red\n\
RMCFG[local] TYPE=LOCAL\nRESERVATIONDEPTH 3\n";

fn json(d: &Daemon, cmd: &str, args: &[&str]) -> serde_json::Value {
    let mut a = args.to_vec();
    a.push("--format=json");
    let o = d.run(cmd, &a);
    assert!(o.status.success(), "{cmd} {args:?}: {}", text(&o.stderr));
    serde_json::from_slice(&o.stdout).unwrap()
}

/// `(system_priority, priority)` of job `id` in showq's JSON.
fn prio(d: &Daemon, id: u64) -> (bool, i64) {
    let v = json(d, "showq", &[]);
    let j = v["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|j| j["id"] == id)
        .unwrap_or_else(|| panic!("no job {id}: {v:#}"))
        .clone();
    (
        j["system_priority"].as_bool().unwrap(),
        j["priority"].as_i64().unwrap(),
    )
}

fn rsv_ids(d: &Daemon) -> Vec<String> {
    let v = json(d, "showres", &[]);
    v["reservations"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["kind"] != "Job")
        .map(|r| r["id"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn setspri_sets_and_clears_one_jobs_system_priority() {
    let d = Daemon::start_with_config(Some(CFG));
    // Three processors busy: the next two jobs wait.
    let busy = d.submit("#!/bin/sh\nsleep 300\n", &["-l", "nodes=1:ppn=2"]);
    d.wait_state(busy, "Running", Duration::from_secs(30));
    let busy2 = d.submit("#!/bin/sh\nsleep 300\n", &[]);
    d.wait_state(busy2, "Running", Duration::from_secs(30));
    let a = d.submit("#!/bin/sh\ntrue\n", &[]);
    let b = d.submit("#!/bin/sh\ntrue\n", &[]);
    d.wait_considered(b, Duration::from_secs(30));
    let a_before = prio(&d, a);
    assert!(!a_before.0 && !prio(&d, b).0);

    let (c, o, e) = run(&d, "setspri", &["10", &b.to_string()]);
    assert_eq!(
        (c, o.as_str(), e.as_str()),
        (0, "job system priority adjusted\n", "")
    );
    wait_until("system priority 10", || prio(&d, b) == (true, 10));
    assert_eq!(prio(&d, a), a_before, "only the job named changes");
    // -r adds to the current system priority.
    let (c, o, _) = run(&d, "setspri", &["-r", "5", &b.to_string()]);
    assert_eq!((c, o.as_str()), (0, "job system priority adjusted\n"));
    wait_until("system priority 15", || prio(&d, b) == (true, 15));
    // 0 clears it: the computed priority counts again.
    let (c, _, _) = run(&d, "setspri", &["0", &b.to_string()]);
    assert_eq!(c, 0);
    wait_until("system priority cleared", || !prio(&d, b).0);
    assert_eq!(prio(&d, a), a_before);
    // Errors: an unknown job, a value out of range; nothing else changes.
    let (c, o, e) = run(&d, "setspri", &["10", "999"]);
    assert_eq!(c, 1);
    assert_eq!(o, "");
    assert!(e.contains("999"), "{e}");
    let (c, _, e) = run(&d, "setspri", &["1001", &a.to_string()]);
    assert_eq!(c, 1);
    assert!(e.contains("range 0 - 1000"), "{e}");
    assert_eq!(prio(&d, a), a_before);
}

#[test]
fn setres_and_releaseres_act_on_exactly_what_they_name() {
    let d = Daemon::start_with_config(Some(CFG));
    // A host expression, named after the access list's first user.
    let (c, o, e) = run(
        &d,
        "setres",
        &["-u", "alice:bob", "-d", "1:00:00", "node0[12]"],
    );
    assert_eq!(c, 0, "{e}");
    assert_eq!(
        o,
        "reservation 'alice.1' created on 2 nodes (3 tasks)\n\nnode01:1\nnode02:2\n"
    );
    let v = json(&d, "showres", &[]);
    let r = &v["reservations"].as_array().unwrap()[0];
    assert_eq!(r["id"], "alice.1");
    assert!(r["end"].as_i64().unwrap() - r["start"].as_i64().unwrap() == 3600);
    assert!(r["acl"].to_string().contains("alice") && r["acl"].to_string().contains("bob"));
    // The next one for alice is alice.2; a task count; no access list: system.N.
    let (c, o, e) = run(&d, "setres", &["-u", "alice", "-s", "+1:00:00", "TASKS==1"]);
    assert_eq!(c, 0, "{e}");
    assert!(
        o.starts_with("reservation 'alice.2' created on 1 node (1 task)\n\n"),
        "{o}"
    );
    let (c, o, e) = run(&d, "setres", &["-d", "30:00", "ALL"]);
    assert_eq!(c, 0, "{e}");
    assert!(
        o.starts_with("reservation 'system.1' created on 2 nodes (3 tasks)\n"),
        "{o}"
    );
    // Names whose one is a prefix of the other.
    for n in ["x.1", "x.10"] {
        let (c, _, e) = run(&d, "setres", &["-n", n, "-d", "10:00", "node01"]);
        assert_eq!(c, 0, "{e}");
    }
    let mut ids = rsv_ids(&d);
    ids.sort();
    assert_eq!(ids, ["alice.1", "alice.2", "system.1", "x.1", "x.10"]);
    // Bad input: unknown hosts, unsupported and unknown options; nothing created.
    assert_eq!(run(&d, "setres", &["nosuchnode"]).0, 1);
    let (c, _, e) = run(&d, "setres", &["-T", "t", "ALL"]);
    assert!(c == 1 && e.contains("not supported"), "{e}");
    assert_eq!(run(&d, "setres", &["-l", "x", "node01"]).0, 1);
    assert_eq!(rsv_ids(&d).len(), 5);

    // releaseres: each id named, only it.
    let (c, o, e) = run(&d, "releaseres", &["x.1", "alice.1"]);
    assert_eq!(c, 0, "{e}");
    assert_eq!(
        o,
        "released User reservation 'x.1'\nreleased User reservation 'alice.1'\n"
    );
    let mut ids = rsv_ids(&d);
    ids.sort();
    assert_eq!(ids, ["alice.2", "system.1", "x.10"]);
    // x.1 is gone: an error, and x.10 stays (never taken as a pattern).
    let (c, o, e) = run(&d, "releaseres", &["x.1", "system.1"]);
    assert_eq!(c, 1);
    assert_eq!(o, "released User reservation 'system.1'\n");
    assert_eq!(e, "ERROR:  cannot locate reservation 'x.1'\n");
    let (c, _, _) = run(&d, "releaseres", &["x.*"]);
    assert_eq!(c, 1);
    let mut ids = rsv_ids(&d);
    ids.sort();
    assert_eq!(ids, ["alice.2", "x.10"]);
}

#[test]
fn resetstats_starts_a_new_statistics_period() {
    let d = Daemon::start_with_config(Some(CFG));
    let id = d.submit("#!/bin/sh\ntrue\n", &[]);
    d.wait_state(id, "Completed", Duration::from_secs(30));
    wait_until("completed job counted", || {
        json(&d, "showstats", &[])["completed"]["jobs"] == 1
    });
    let (c, o, e) = run(&d, "resetstats", &[]);
    assert_eq!(c, 0, "{e}");
    // `Statistics Reset at time Www Mmm dd HH:MM:SS YYYY` (the daemon's time).
    let date = o
        .strip_prefix("Statistics Reset at time ")
        .and_then(|s| s.strip_suffix('\n'))
        .unwrap_or_else(|| panic!("{o}"));
    assert_eq!(date.len(), 24, "{o}");
    assert!(date[20..].bytes().all(|b| b.is_ascii_digit()), "{o}");
    assert_eq!(json(&d, "showstats", &[])["completed"]["jobs"], 0);
}

#[test]
fn showconfig_prints_the_parameters_in_effect() {
    let d = Daemon::start_with_config(Some(CFG));
    let pid = d.pid().unwrap();
    let (c, o, e) = run(&d, "showconfig", &[]);
    assert_eq!(c, 0, "{e}");
    let mut lines = o.lines();
    assert_eq!(
        lines.next().unwrap(),
        format!(
            "# moab scheduler version {} (PID: {pid})",
            env!("CARGO_PKG_VERSION")
        )
    );
    assert_eq!(lines.next(), Some(""));
    let body: Vec<&str> = lines.collect();
    // Set in moab.cfg (not the default): shown; a default one: only with -v.
    assert!(
        body.contains(&format!("{:<31} 3", "RESERVATIONDEPTH[0]").as_str()),
        "{o}"
    );
    assert!(body.iter().any(|l| l.starts_with("BACKFILLPOLICY ")), "{o}");
    let cfg = json(&d, "mschedctl", &["-l"]);
    let params: Vec<(String, String)> = cfg["parameters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p[0].as_str().unwrap().to_string(),
                p[1].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let (dk, dv) = params
        .iter()
        .find(|(k, _)| !body.iter().any(|l| l.split_whitespace().next() == Some(k)))
        .expect("some parameter at its default is hidden");
    let v = run(&d, "showconfig", &["-v"]).1;
    let vlines: Vec<&str> = v.lines().collect();
    assert!(
        vlines.contains(&format!("{dk:<31} {dv}").as_str()),
        "{dk} {dv}\n{v}"
    );
    // -v: every parameter mschedctl -l config lists, with its value, in order;
    // the terse lines are among them.
    assert_eq!(vlines.len(), params.len() + 2);
    for (l, (k, val)) in vlines[2..].iter().zip(&params) {
        assert_eq!(*l, format!("{k:<31} {val}"));
    }
    assert!(body.iter().all(|l| vlines.contains(l)));
    assert_eq!(run(&d, "showconfig", &["-x"]).0, 1);
}

#[test]
fn showstate_maps_active_jobs_to_their_nodes() {
    let d = Daemon::start_with_config(Some(CFG));
    let id = d.submit("#!/bin/sh\nsleep 300\n", &["-l", "nodes=1:ppn=2"]);
    d.wait_state(id, "Running", Duration::from_secs(30));
    let queued = d.submit("#!/bin/sh\nsleep 300\n", &["-l", "nodes=1:ppn=2"]);
    d.wait_considered(queued, Duration::from_secs(30));
    let (c, o, e) = run(&d, "showstate", &[]);
    assert_eq!(c, 0, "{e}");
    let lines: Vec<&str> = o.lines().collect();
    assert!(lines[0].starts_with("cluster state summary for "), "{o}");
    // Only the running job is listed (not the queued one), with its letter.
    let rows: Vec<&&str> = lines.iter().filter(|l| l.starts_with('(')).collect();
    assert_eq!(rows.len(), 1, "{o}");
    assert!(
        rows[0].starts_with(&format!("(A) {id:>18} R      root     root     2 ")),
        "{o}"
    );
    assert!(
        o.contains("\nUsage Summary:  1 Active Jobs  1 Active Nodes\n"),
        "{o}"
    );
    // node01 idle, node02 runs job A, the other 14 slots empty.
    assert!(
        lines.contains(&format!("Frame      1: [ ][A]{}", "XXX".repeat(14)).as_str()),
        "{o}"
    );
}

#[test]
fn mshow_a_answers_from_the_schedulers_windows() {
    let d = Daemon::start_with_config(Some(CFG));
    // node02's two processors busy for an hour: one processor free now.
    let id = d.submit(
        "#!/bin/sh\nsleep 300\n",
        &["-l", "nodes=1:ppn=2,walltime=1:00:00"],
    );
    d.wait_state(id, "Running", Duration::from_secs(30));
    let (c, o, e) = run(&d, "mshow", &["-a", "-w", "minprocs=1,duration=10:00"]);
    assert_eq!(c, 0, "{e}");
    let rows: Vec<&str> = o.lines().skip(2).collect();
    assert_eq!(rows.len(), 1, "{o}");
    let f: Vec<&str> = rows[0].split_whitespace().collect();
    assert_eq!(&f[..5], ["ALL", "1", "1", "00:00:00", "00:10:00"], "{o}");
    // Three processors only once the job ends: nothing now, a window in
    // about an hour with --flags=future, the same one showbf -D shows.
    let (c, o, _) = run(&d, "mshow", &["-a", "-w", "minprocs=3,duration=10:00"]);
    assert_eq!(c, 0);
    assert_eq!(o.lines().count(), 2, "{o}");
    let m = json(
        &d,
        "mshow",
        &["-a", "-w", "minprocs=3,duration=10:00", "--flags=future"],
    );
    let b = json(&d, "showbf", &["-D", "-d", "10:00"]);
    let bf: Vec<&serde_json::Value> = b["windows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|w| w["partition"] == "ALL" && w["procs"].as_u64().unwrap() >= 3)
        .collect();
    let ms: Vec<&serde_json::Value> = m["windows"].as_array().unwrap().iter().collect();
    assert!(!ms.is_empty(), "{m:#}");
    assert_eq!(ms, bf);
    let start = ms[0]["start"].as_i64().unwrap() - m["now"].as_i64().unwrap();
    assert!((3000..=3600).contains(&start), "{m:#}");
    // Attributes Arches has no data for are refused; transaction ids are
    // given (tests/rsvctl_live.rs commits them).
    let (c, _, e) = run(&d, "mshow", &["-a", "-w", "minprocs=1,os=linux"]);
    assert!(c == 1 && e.contains("'os' is not supported"), "{e}");
    let (c, o, e) = run(&d, "mshow", &["-a", "--flags=tid"]);
    assert_eq!(c, 0, "{e}");
    assert!(
        o.lines()
            .nth(2)
            .is_some_and(|l| l.ends_with("  TID=1  ReqID=0")),
        "{o}"
    );
}

#[test]
fn showhist_prints_the_record_of_a_completed_job() {
    let d = Daemon::start_with_config(Some(CFG));
    let done = d.submit(
        "#!/bin/sh\nexit 3\n",
        &["-l", "nodes=1:ppn=2", "-A", "chem"],
    );
    d.wait_state(done, "Completed", Duration::from_secs(30));
    let running = d.submit("#!/bin/sh\nsleep 300\n", &[]);
    d.wait_state(running, "Running", Duration::from_secs(30));
    let (c, o, e) = run(&d, "showhist", &["-n", "1", &done.to_string()]);
    assert_eq!(c, 0, "{e}");
    let lines: Vec<&str> = o.lines().collect();
    assert_eq!(lines.len(), 14, "{o}");
    assert_eq!(lines[0], format!("Job Id : {done}"));
    assert!(
        lines[1].starts_with("Executable : /") && lines[1].ends_with(".sh"),
        "{o}"
    );
    assert_eq!(lines[2], "User Name : root");
    assert_eq!(lines[4], "Account Name : chem");
    assert_eq!(lines[6], "Node Count : 1");
    assert_eq!(lines[7], "Processor Count : 2");
    assert!(lines[8].starts_with("Wallclock Duration: 00:00:"), "{o}");
    assert_eq!(lines[12], "Exit Code : 3");
    assert_eq!(lines[13], "Allocated Nodelist: node02");
    // The exit code as the documented scripts read it.
    assert_eq!(lines[12].split_whitespace().last(), Some("3"));
    // A running job, an unknown one and an expression are not records.
    for bad in [running.to_string(), "999".to_string(), "1.*".to_string()] {
        let (c, o, e) = run(&d, "showhist", &[&bad]);
        assert_eq!((c, o.as_str()), (1, ""), "{bad}: {e}");
        assert!(e.contains(&bad), "{e}");
    }
}

/// `showhist.moab.pl` (packaging/bin, installed beside the commands) runs showhist.
#[test]
fn showhist_moab_pl_runs_showhist() {
    let d = Daemon::start_with_config(Some(CFG));
    let id = d.submit("#!/bin/sh\ntrue\n", &[]);
    d.wait_state(id, "Completed", Duration::from_secs(30));
    let dir = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(common::bin("showhist"), dir.path().join("showhist")).unwrap();
    let wrapper = dir.path().join("showhist.moab.pl");
    std::fs::copy(
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/packaging/bin/showhist.moab.pl"
        ),
        &wrapper,
    )
    .unwrap();
    let mut c = std::process::Command::new(&wrapper);
    c.env_clear()
        .envs(common::base_env(d.home.path(), &d.socket))
        .arg(id.to_string());
    let o = c.output().unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert_eq!(
        text(&o.stdout),
        text(&d.run("showhist", &[&id.to_string()]).stdout)
    );
    assert!(text(&o.stdout).starts_with(&format!("Job Id : {id}\n")));
}

#[test]
fn mcredctl_queries_configuration_and_access() {
    let cfg = format!(
        "{CFG}USERCFG[alice] QLIST=high\nACCOUNTCFG[chem] PRIORITY=1\nCLASSCFG[batch] PRIORITY=1\n\
QOSCFG[high] PRIORITY=10\nQOSCFG[normal] PRIORITY=1\nGROUPCFG[staff] PRIORITY=2\n"
    );
    let d = Daemon::start_with_config(Some(&cfg));
    // -q config is what mdiag shows for the credential.
    let (c, o, e) = run(&d, "mcredctl", &["-q", "config", "user:alice"]);
    assert_eq!(c, 0, "{e}");
    assert_eq!(o, text(&d.run("mdiag", &["-u", "alice"]).stdout));
    let (c, o, _) = run(&d, "mcredctl", &["-q", "config", "class"]);
    assert_eq!((c, o), (0, text(&d.run("mdiag", &["-c"]).stdout)));
    // -q accessfrom: Moab's XML, read with a real parser.
    let (c, o, e) = run(
        &d,
        "mcredctl",
        &["-q", "accessfrom", "user:alice", "--format=xml"],
    );
    assert_eq!(c, 0, "{e}");
    let doc = roxmltree::Document::parse(o.trim_end()).unwrap();
    let u = doc
        .descendants()
        .find(|n| n.has_tag_name("user"))
        .unwrap_or_else(|| panic!("{o}"));
    assert_eq!(u.attribute("ID"), Some("alice"));
    assert_eq!(u.attribute("QList"), Some("high"));
    assert!(
        u.attribute("AList")
            .unwrap()
            .split(',')
            .any(|a| a == "chem"),
        "{o}"
    );
    assert!(
        u.attribute("CList")
            .unwrap()
            .split(',')
            .any(|a| a == "batch"),
        "{o}"
    );
    assert_eq!(
        doc.descendants().filter(|n| n.has_tag_name("user")).count(),
        1
    );
    // A group without QLIST may use every QoS.
    let (_, o, _) = run(&d, "mcredctl", &["-q", "accessfrom", "group:staff"]);
    assert!(
        o.contains(r#"ID="staff""#) && o.contains(r#"QList="high,normal""#),
        "{o}"
    );
    // Errors: unknown credential and type, unsupported queries and options.
    let (c, _, e) = run(&d, "mcredctl", &["-q", "config", "user:nobody"]);
    assert!(c == 1 && e.contains("cannot locate user 'nobody'"), "{e}");
    assert_eq!(run(&d, "mcredctl", &["-q", "config", "node:n1"]).0, 1);
    for args in [
        &["-q", "profile", "user:alice"][..],
        &["-m", "hold=true", "user:alice"],
        &["-r", "credits", "user:alice"],
    ] {
        let (c, _, e) = run(&d, "mcredctl", args);
        assert!(c == 1 && e.contains("not supported"), "{args:?}: {e}");
    }
    assert_eq!(run(&d, "mcredctl", &["-Z"]).0, 1);
}

/// A job purged after `JOBCPURGETIME` keeps its record in the job history:
/// showhist prints the same record as before (also after a restart), while
/// checkjob no longer finds it; another user gets no record.
#[test]
fn showhist_finds_purged_jobs_in_the_history() {
    let mut d = Daemon::start_with_config(Some(&format!("{CFG}JOBCPURGETIME 00:00:01\n")));
    let id = d.submit("#!/bin/sh\nexit 4\n", &["-A", "chem"]);
    // Its record as soon as it has one (held or, on a slow machine,
    // already moved to the history: the purge comes a second after the end).
    let mut before = String::new();
    wait_until("the job's record", || {
        let (c, o, _) = run(&d, "showhist", &[&id.to_string()]);
        before = o;
        c == 0
    });
    // Purged: checkjob cannot locate it any more.
    wait_until("the job to be purged", || {
        !d.run("checkjob", &[&id.to_string()]).status.success()
    });
    let (c, after, e) = run(&d, "showhist", &[&id.to_string()]);
    assert_eq!(c, 0, "{e}");
    assert_eq!(after, before);
    assert!(after.contains("Exit Code : 4\n") && after.contains("Account Name : chem\n"));
    // Durable.
    d.stop();
    d.spawn();
    let (c, again, e) = run(&d, "showhist", &[&id.to_string()]);
    assert_eq!((c, again.as_str()), (0, before.as_str()), "{e}");
    // Not the record of another user.
    if common::root_or_skip("showhist_finds_purged_jobs_in_the_history (other user)") {
        let user = common::ensure_user("archesh1");
        let o = common::run_as_user(&d, &user, "showhist", &[&id.to_string()], "", d.home.path());
        assert_eq!(o.status.code(), Some(1), "{}", text(&o.stdout));
        assert_eq!(text(&o.stdout), "");
    }
}
