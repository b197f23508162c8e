//! mrsvctl in full (issue 16 part 4), end to end on a real daemon: host
//! expressions (regular expressions, class:, feature:), -f/-p/-x filters,
//! -t ALL, -d INFINITY, -E exclusive and overlapping reservations, -g
//! groups, -m time frame/hosts/access changes, -l/-q listings, -r of several
//! ids, ALL and regular expressions — every id acted on or an error.

mod common;

use common::{text, Daemon};

const CFG: &str = "NODECFG[node01] PROCS=2 FEATURES=fast PARTITION=red\n\
NODECFG[node02] PROCS=2 PARTITION=red\nNODECFG[node10] PROCS=2 PARTITION=blue\n\
RMCFG[local] TYPE=LOCAL\nCLASSCFG[batch] PRIORITY=1\n\
CLASSCFG[short] HOSTLIST=node02,node10\nCLASSCFG[reds] PARTITION=red\n";

fn run(d: &Daemon, args: &[&str]) -> (i32, String, String) {
    let o = d.run("mrsvctl", args);
    (
        o.status.code().unwrap_or(-1),
        text(&o.stdout),
        text(&o.stderr),
    )
}

/// Every reservation's (id, nodes, end is None) from showres's JSON.
fn rsvs(d: &Daemon) -> Vec<(String, Vec<String>, bool, Vec<String>)> {
    let o = d.run("showres", &["--format=json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    v["reservations"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["kind"] != "Job")
        .map(|r| {
            (
                r["id"].as_str().unwrap().to_string(),
                r["nodes"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|n| n["node"].as_str().unwrap().to_string())
                    .collect(),
                r["end"].is_null(),
                r["acl"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|a| a.as_str().unwrap().to_string())
                    .collect(),
            )
        })
        .collect()
}

fn nodes_of(d: &Daemon, id: &str) -> Vec<String> {
    rsvs(d)
        .into_iter()
        .find(|r| r.0 == id)
        .unwrap_or_else(|| panic!("no {id}: {:?}", rsvs(d)))
        .1
}

#[test]
fn create_with_host_expressions_filters_and_overlaps() {
    let d = Daemon::start_with_config(Some(CFG));
    let ok = |args: &[&str]| {
        let (c, o, e) = run(&d, args);
        assert_eq!(c, 0, "{args:?}: {o}{e}");
        o.trim().to_string()
    };
    // A regular expression over node names.
    assert_eq!(
        ok(&["-c", "-h", "node0[1-2]", "-n", "re", "-d", "1:00:00"]),
        "NOTE:  reservation re created"
    );
    assert_eq!(nodes_of(&d, "re"), ["node01", "node02"]);
    // class: and feature: selectors; -p and -f filters.
    ok(&[
        "-c",
        "-h",
        "class:batch",
        "-p",
        "blue",
        "-n",
        "cls",
        "-d",
        "1:00:00",
    ]);
    assert_eq!(nodes_of(&d, "cls"), ["node10"]);
    // A class with a host list or partition selects only its nodes.
    ok(&["-c", "-h", "class:short", "-n", "short", "-d", "1:00:00"]);
    assert_eq!(nodes_of(&d, "short"), ["node02", "node10"]);
    ok(&["-c", "-h", "class:reds", "-n", "reds", "-d", "1:00:00"]);
    assert_eq!(nodes_of(&d, "reds"), ["node01", "node02"]);
    ok(&["-r", "short,reds"]);
    ok(&["-c", "-h", "feature:fast", "-n", "feat", "-d", "1:00:00"]);
    assert_eq!(nodes_of(&d, "feat"), ["node01"]);
    ok(&[
        "-c", "-h", "ALL", "-f", "fast", "-n", "flt", "-d", "1:00:00",
    ]);
    assert_eq!(nodes_of(&d, "flt"), ["node01"]);
    // -t ALL and -d INFINITY.
    ok(&["-c", "-t", "ALL", "-d", "INFINITY", "-n", "all"]);
    let all = rsvs(&d).into_iter().find(|r| r.0 == "all").unwrap();
    assert_eq!((all.1.len(), all.2), (3, true));
    // Overlapping reservations are allowed; -E refuses where another holds.
    let (c, _, e) = run(
        &d,
        &["-c", "-h", "node10", "-E", "-n", "excl", "-d", "1:00:00"],
    );
    assert_eq!(c, 1);
    assert!(e.contains("exclusive reservation conflicts with"), "{e}");
    // Bad input: unknown class, no matching node, bad regex, unsupported options.
    for args in [
        &["-c", "-h", "class:nosuch"][..],
        &["-c", "-h", "nosuch[0-9]"],
        &["-c", "-h", "node[", "-d", "1:00"],
        &["-c", "-h", "node01", "-p", "green"],
        &["-c", "-h", "node01", "-T", "offset=1"],
        &["-c", "-t", "1", "-R", "MEM=100"],
        &["-C"],
    ] {
        let (c, _, e) = run(&d, args);
        assert_eq!(c, 1, "{args:?}: {e}");
    }
    // -l lists with showres's layout, -q in detail; both take expressions.
    let (c, o, _) = run(&d, &["-l", "f.*"]);
    assert_eq!(c, 0);
    assert!(o.contains("2 reservations located"), "{o}");
    let (c, o, _) = run(&d, &["-q", "re"]);
    assert_eq!(c, 0);
    assert!(
        o.starts_with("Diagnosing Reservations") && o.contains("HostExp='node01 node02'"),
        "{o}"
    );
    let (c, _, e) = run(&d, &["-q", "nosuch"]);
    assert_eq!(
        (c, e.trim()),
        (1, "ERROR:  cannot locate reservation 'nosuch'")
    );
    // -r: several ids, a regular expression; one unknown token is an error
    // and releases nothing.
    let (c, _, e) = run(&d, &["-r", "re,nosuch"]);
    assert_eq!(
        (c, e.trim()),
        (1, "ERROR:  cannot locate reservation 'nosuch'")
    );
    assert_eq!(rsvs(&d).len(), 5);
    let (c, o, _) = run(&d, &["-r", "f.*"]);
    assert_eq!(
        (c, o.as_str()),
        (0, "reservation feat released\nreservation flt released\n")
    );
    let (c, o, _) = run(&d, &["-r", "re,cls"]);
    assert_eq!(
        (c, o.as_str()),
        (0, "reservation re released\nreservation cls released\n")
    );
    let (c, o, _) = run(&d, &["-r", "ALL"]);
    assert_eq!((c, o.as_str()), (0, "reservation all released\n"));
    assert!(rsvs(&d).is_empty());
}

#[test]
fn groups_excluded_jobs_and_modifications() {
    let d = Daemon::start_with_config(Some(CFG));
    // A job runs on one node: -x leaves its node out.
    let job = d.submit(
        "#!/bin/sh\nsleep 600\n",
        &["-l", "nodes=1:ppn=2,walltime=10:00,partition=blue"],
    );
    d.wait_state(job, "Running", std::time::Duration::from_secs(20));
    let (c, o, e) = run(
        &d,
        &[
            "-c",
            "-h",
            "ALL",
            "-x",
            &job.to_string(),
            "-n",
            "nojob",
            "-g",
            "maint",
        ],
    );
    assert_eq!(c, 0, "{o}{e}");
    assert_eq!(nodes_of(&d, "nojob"), ["node01", "node02"]);
    let (c, _, _) = run(
        &d,
        &[
            "-c", "-h", "node10", "-n", "other", "-g", "maint", "-s", "+1:00:00", "-d", "1:00:00",
        ],
    );
    assert_eq!(c, 0);
    // -q shows the group; -l -g lists it.
    let (_, o, _) = run(&d, &["-q", "nojob"]);
    assert!(o.contains("    RsvGroup: maint"), "{o}");
    // -m: duration, start, end, hosts, access list; messages per change.
    let (c, o, e) = run(&d, &["-m", "duration=2:00:00", "other"]);
    assert_eq!(
        (c, o.as_str()),
        (0, "duration for rsv 'other' changed\n"),
        "{e}"
    );
    let (c, o, _) = run(&d, &["-m", "-d", "+=1:00:00", "-s", "+=30:00", "other"]);
    assert_eq!(
        (c, o.as_str()),
        (
            0,
            "duration for rsv 'other' changed\nstarttime for rsv 'other' changed\n"
        )
    );
    let q = |d: &Daemon| -> serde_json::Value {
        let o = d.run("mrsvctl", &["-q", "other", "--format=json"]);
        serde_json::from_slice::<serde_json::Value>(&o.stdout).unwrap()["reservations"][0].clone()
    };
    let r = q(&d);
    assert_eq!(
        r["end"].as_i64().unwrap() - r["start"].as_i64().unwrap(),
        3 * 3600
    );
    let (c, o, _) = run(&d, &["-m", "-e", "-=1:00:00", "other"]);
    assert_eq!((c, o.as_str()), (0, "endtime for rsv 'other' changed\n"));
    let r = q(&d);
    assert_eq!(
        r["end"].as_i64().unwrap() - r["start"].as_i64().unwrap(),
        2 * 3600
    );
    let (c, o, _) = run(&d, &["-m", "-h", "node0[12]", "other"]);
    assert_eq!((c, o.as_str()), (0, "hostexp for rsv 'other' changed\n"));
    assert_eq!(nodes_of(&d, "other"), ["node01", "node02"]);
    let (c, o, _) = run(&d, &["-m", "-a", "USER==alice:bob,GROUP+=staff", "other"]);
    assert_eq!((c, o.as_str()), (0, "ACL for rsv 'other' changed\n"));
    let (c, _, _) = run(&d, &["-m", "-a", "USER-=alice", "other"]);
    assert_eq!(c, 0);
    let acl = rsvs(&d).into_iter().find(|r| r.0 == "other").unwrap().3;
    assert!(
        acl.iter().any(|a| a.contains("bob")) && !acl.iter().any(|a| a.contains("alice")),
        "{acl:?}"
    );
    // A change that makes no sense changes nothing.
    let before = q(&d);
    let (c, _, e) = run(&d, &["-m", "endtime-=10:00:00", "other"]);
    assert_eq!(c, 1, "{e}");
    let (c, _, _) = run(&d, &["-m", "duration=1:00:00", "-h", "nosuch", "other"]);
    assert_eq!(c, 1);
    assert_eq!(q(&d), before);
    let (c, _, e) = run(&d, &["-m", "duration=1:00:00", "nosuch"]);
    assert_eq!(
        (c, e.trim()),
        (1, "ERROR:  cannot locate reservation 'nosuch'")
    );
    // -r -g releases the whole group.
    let (c, o, _) = run(&d, &["-r", "-g", "maint"]);
    assert_eq!(
        (c, o.as_str()),
        (
            0,
            "reservation nojob released\nreservation other released\n"
        )
    );
    let (c, _, e) = run(&d, &["-r", "-g", "maint"]);
    assert_eq!(
        (c, e.trim()),
        (1, "ERROR:  cannot locate reservation group 'maint'")
    );
}

/// Changes survive a restart (the store's reservations table).
#[test]
fn modified_reservations_survive_restart() {
    let mut d = Daemon::start_with_config(Some(CFG));
    assert_eq!(
        run(
            &d,
            &["-c", "-h", "node01", "-n", "keep", "-g", "grp", "-d", "1:00:00"]
        )
        .0,
        0
    );
    assert_eq!(
        run(
            &d,
            &["-m", "duration=5:00:00", "-h", "node01,node02", "keep"]
        )
        .0,
        0
    );
    d.stop();
    d.spawn();
    let (_, o, _) = run(&d, &["-q", "keep"]);
    assert!(
        o.contains("    RsvGroup: grp") && o.contains("HostExp='node01 node02'"),
        "{o}"
    );
    assert!(o.contains("5:00:00"), "{o}");
}

/// `mshow -a --flags=tid` (any user) offers each window as a transaction;
/// `mrsvctl -c -R TID` (an administrator) reserves exactly that window for
/// the user who asked, once; unknown and spent ids are errors.
#[test]
fn mshow_transactions_are_committed_with_mrsvctl_r() {
    if !common::root_or_skip("mshow_transactions_are_committed_with_mrsvctl_r") {
        return;
    }
    let d = Daemon::start_with_config(Some(CFG));
    let user = common::ensure_user("archestid");
    let cwd = tempfile::tempdir().unwrap();
    common::set_mode(cwd.path(), 0o755);
    let as_user = |prog: &str, args: &[&str]| {
        let o = common::run_as_user(&d, &user, prog, args, "", cwd.path());
        (
            o.status.code().unwrap_or(-1),
            text(&o.stdout),
            text(&o.stderr),
        )
    };
    let (c, out, err) = as_user(
        "mshow",
        &[
            "-a",
            "-w",
            "minprocs=2,duration=1:00:00,nodefeature=fast",
            "--flags=tid",
        ],
    );
    assert_eq!(c, 0, "{out}{err}");
    let rows: Vec<&str> = out.lines().skip(2).collect();
    assert_eq!(rows.len(), 1, "{out}");
    assert!(rows[0].ends_with("  TID=1  ReqID=0"), "{out}");
    // Committing is for administrators.
    let (c, _, err) = as_user("mrsvctl", &["-c", "-R", "1"]);
    assert_eq!(c, 1);
    assert!(err.contains("not authorized"), "{err}");
    // Other attributes do not go with a transaction.
    let (c, _, err) = run(&d, &["-c", "-R", "1", "-d", "10"]);
    assert_eq!(c, 1);
    assert!(err.contains("no other reservation attributes"), "{err}");
    let (c, out, err) = run(&d, &["-c", "-R", "1"]);
    assert_eq!(c, 0, "{out}{err}");
    assert_eq!(out.trim(), "NOTE:  reservation system.1 created");
    let r = rsvs(&d);
    let (_, nodes, no_end, acl) = r.iter().find(|r| r.0 == "system.1").expect("system.1");
    assert_eq!(nodes, &["node01"], "the fast node: {r:?}");
    assert!(!no_end, "an hour: {r:?}");
    assert!(acl.iter().any(|a| a.contains(&user)), "{acl:?}");
    let o = d.run("showres", &["--format=json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let rsv = v["reservations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == "system.1")
        .unwrap()
        .clone();
    assert_eq!(rsv["procs"], 2, "{rsv}");
    assert_eq!(rsv["owner"], user.as_str(), "{rsv}");
    assert_eq!(
        rsv["end"].as_i64().unwrap() - rsv["start"].as_i64().unwrap(),
        3600,
        "{rsv}"
    );
    // Spent, and never made.
    for tid in ["1", "999"] {
        let (c, _, err) = run(&d, &["-c", "-R", tid]);
        assert_eq!(c, 1);
        assert_eq!(
            err.trim(),
            format!("ERROR:  cannot locate transaction {tid}")
        );
    }
    // The next query's ids follow on; gres and minnodes are refused.
    let (c, out, err) = as_user(
        "mshow",
        &["-a", "-w", "minprocs=1,duration=10:00", "--flags=tid"],
    );
    assert_eq!(c, 0, "{out}{err}");
    assert!(out.contains("  TID=2  ReqID=0"), "{out}");
    let (c, _, err) = as_user("mshow", &["-a", "-w", "minnodes=1", "--flags=tid"]);
    assert_eq!(c, 1);
    assert!(err.contains("node count"), "{err}");
}
