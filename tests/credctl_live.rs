//! Issue 16's remaining command surface end to end: measured efficiency
//! (showstats' Effic, showq -c's EFFIC), mcredctl's queries and changes,
//! mrsvctl's per-task resources (-R).
//! Real binaries against a real daemon with the local resource manager.

mod common;

use std::time::Duration;

use common::{me, run, text, Daemon};

/// A number in `0..=100·cores` (an efficiency in percent), not dashes.
fn efficiency(cell: &str) -> f64 {
    let v: f64 = cell
        .parse()
        .unwrap_or_else(|_| panic!("not a measured efficiency: {cell:?}"));
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get()) as f64;
    assert!(v > 0.0 && v <= 100.0 * cores, "{v}");
    v
}

/// A job's processor use is measured when it ends: showq -c's EFFIC and
/// showstats -u's Effic come from it (used / dedicated processor time),
/// and it is kept across a restart; a job that never ran has none.
#[test]
fn efficiency_is_measured_and_kept() {
    let cfg = "NODECFG[n1] PROCS=2\nRMCFG[local] TYPE=LOCAL\nRMPOLLINTERVAL 1\n";
    let mut d = Daemon::start_with_config(Some(cfg));
    let busy = d.submit(
        // Computes for two seconds of wall time (at least one whole second
        // between its start and end stamps: a job that starts and ends in
        // the same second has no dedicated time to measure against).
        "#!/bin/sh\nend=$(($(date +%s) + 2)); while [ \"$(date +%s)\" -lt \"$end\" ]; do i=0; while [ $i -lt 2000 ]; do i=$((i+1)); done; done\n",
        &["-l", "walltime=5:00"],
    );
    d.wait_state(busy, "Completed", Duration::from_secs(60));
    let user = me();
    let check = |d: &Daemon| {
        let (c, o, e) = run(d, "showq", &["-c"]);
        assert_eq!(c, 0, "{e}");
        let row = o
            .lines()
            .find(|l| l.starts_with(&busy.to_string()))
            .unwrap_or_else(|| panic!("{o}"));
        // JOBID S CCODE PAR EFFIC ...
        let job_effic = efficiency(row.split_whitespace().nth(4).unwrap());
        let (c, o, e) = run(d, "showstats", &["-u"]);
        assert_eq!(c, 0, "{e}");
        let row = o
            .lines()
            .find(|l| l.split_whitespace().next() == Some(user.as_str()))
            .unwrap_or_else(|| panic!("{o}"));
        let cols: Vec<&str> = row.split_whitespace().collect();
        // ... AvgQH Effic WCAcc: the one job's efficiency.
        let user_effic = efficiency(cols[cols.len() - 2]);
        assert!(
            (job_effic - user_effic).abs() < 0.011,
            "{job_effic} {user_effic}"
        );
        // The summary's line: the same jobs, three decimals.
        let (_, o, _) = run(d, "showstats", &[]);
        let line = o
            .lines()
            .find(|l| l.starts_with("Avg Job Proc Efficiency:"))
            .unwrap_or_else(|| panic!("{o}"));
        let all = efficiency(
            line["Avg Job Proc Efficiency:".len()..]
                .trim()
                .trim_end_matches('%'),
        );
        assert!((all - user_effic).abs() < 0.011, "{all} {user_effic}");
        let (_, o, _) = run(d, "showstats", &["-u", "--format=json"]);
        let v: serde_json::Value = serde_json::from_str(&o).unwrap();
        let mine = v["credentials"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["kind"] == "user" && c["name"] == user.as_str())
            .unwrap_or_else(|| panic!("{o}"));
        assert!(
            mine["completed"]["ps_utilized"].as_f64().unwrap() > 0.0,
            "{o}"
        );
        assert!(
            mine["completed"]["ps_measured"].as_f64().unwrap() > 0.0,
            "{o}"
        );
    };
    check(&d);
    d.stop();
    d.spawn();
    check(&d);
    // Cancelled before it ran: no measurement, dashes.
    let held = d.submit("#!/bin/sh\ntrue\n", &["-h"]);
    assert_eq!(run(&d, "canceljob", &[&held.to_string()]).0, 0);
    common::wait_until("the cancelled job in showq -c", || {
        run(&d, "showq", &["-c"])
            .1
            .lines()
            .any(|l| l.starts_with(&held.to_string()))
    });
    let (_, o, _) = run(&d, "showq", &["-c"]);
    let row = o
        .lines()
        .find(|l| l.starts_with(&held.to_string()))
        .unwrap_or_else(|| panic!("{o}"));
    assert_eq!(row.split_whitespace().nth(4), Some("------"), "{o}");
}

/// mcredctl -m config="..." changes a credential in the running daemon
/// (mdiag -u and the scheduler see it at once), refuses a bad value or an
/// unknown credential, is not written to moab.cfg (gone after a restart),
/// and is for administrators only (a second uid is refused with Moab's
/// message); -l lists a type as XML; the options Arches cannot honour say
/// why.
#[test]
fn mcredctl_modifies_lists_and_refuses() {
    if !common::root_or_skip("mcredctl_modifies_lists_and_refuses") {
        return;
    }
    let other = common::ensure_user("archescred");
    let user = me();
    let cfg = format!(
        "NODECFG[n1] PROCS=2\nRMCFG[local] TYPE=LOCAL\nUSERCFG[{user}] PRIORITY=5\n\
         USERCFG[{other}] PRIORITY=1\nQOSCFG[high] PRIORITY=10\n"
    );
    let mut d = Daemon::start_with_config(Some(&cfg));
    let row = |d: &Daemon, name: &str| -> String {
        let (c, o, e) = run(d, "mdiag", &["-u", name]);
        assert_eq!(c, 0, "{e}");
        o.lines()
            .find(|l| l.split_whitespace().next() == Some(name))
            .unwrap_or_else(|| panic!("{o}"))
            .to_string()
    };
    assert_eq!(row(&d, &user).split_whitespace().nth(1), Some("5"));
    let target = format!("user:{user}");
    let (c, o, e) = run(
        &d,
        "mcredctl",
        &["-m", "config=PRIORITY=42 MAXJOB=3,4", &target],
    );
    assert_eq!(c, 0, "{e}");
    assert_eq!(o, format!("config adjusted for user {user}\n"));
    let r = row(&d, &user);
    assert_eq!(r.split_whitespace().nth(1), Some("42"), "{r}");
    assert!(r.contains("MAXJOB=3,4"), "{r}");
    // The shorthand, on a QoS; mdiag -q shows it.
    let (c, _, e) = run(&d, "mcredctl", &["-m", "QTWEIGHT=7", "qos:high"]);
    assert_eq!(c, 0, "{e}");
    let (_, o, _) = run(&d, "mdiag", &["-q"]);
    let q = o.lines().find(|l| l.starts_with("high ")).unwrap();
    assert_eq!(q.split_whitespace().nth(2), Some("7"), "{o}");
    // Invalid values are moab.cfg's errors; nothing changes.
    let (c, _, e) = run(&d, "mcredctl", &["-m", "config=MAXJOB=lots", &target]);
    assert_eq!(c, 1);
    assert!(e.contains("MAXJOB"), "{e}");
    assert!(row(&d, &user).contains("MAXJOB=3,4"));
    let (c, _, e) = run(&d, "mcredctl", &["-m", "PRIORITY=1", "user:nosuchuser"]);
    assert_eq!(c, 1);
    assert_eq!(e, "ERROR:    cannot locate user 'nosuchuser'\n");
    // Not an administrator: Moab's refusal, and no change.
    let dir = tempfile::tempdir().unwrap();
    common::set_mode(dir.path(), 0o777);
    let out = common::run_as_user(
        &d,
        &other,
        "mcredctl",
        &["-m", "PRIORITY=99", &format!("user:{other}")],
        "",
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        text(&out.stderr),
        format!("ERROR:    user '{other}' is not authorized to modify user {other}\n")
    );
    assert_eq!(row(&d, &other).split_whitespace().nth(1), Some("1"));
    // -l: the type as XML.
    let (c, o, e) = run(&d, "mcredctl", &["-l", "user"]);
    assert_eq!(c, 0, "{e}");
    let doc = roxmltree::Document::parse(o.trim()).unwrap();
    let ids: Vec<&str> = doc
        .root_element()
        .children()
        .filter(|n| n.has_tag_name("user"))
        .filter_map(|n| n.attribute("ID"))
        .collect();
    assert!(
        ids.contains(&user.as_str()) && ids.contains(&other.as_str()),
        "{o}"
    );
    // Refused, each with its reason.
    for (args, says) in [
        (&["-m", "hold=true", "user:root"][..], "mjobctl -h"),
        (&["-m", "credits=10", "user:root"], "allocation manager"),
        (&["-d", "user:root"], "moab.cfg"),
        (&["-r", "credits", "user:root"], "allocation manager"),
        (&["-h", "user:root"], "mjobctl -h"),
        (&["-q", "profile", "user:root"], "not supported"),
    ] {
        let (c, _, e) = run(&d, "mcredctl", args);
        assert_eq!(c, 1, "{args:?}");
        assert!(e.contains(says), "{args:?}: {e}");
    }
    // Not written to moab.cfg: a restart reads the file again.
    d.stop();
    d.spawn();
    assert_eq!(row(&d, &user).split_whitespace().nth(1), Some("5"));
}

/// mrsvctl -c -t N -R PROCS=P reserves N tasks of P processors; per-task
/// memory, disk, swap or generic resources are refused with the reason.
#[test]
fn mrsvctl_per_task_resources() {
    let cfg = "NODECFG[n1] PROCS=4\nNODECFG[n2] PROCS=4\nRMCFG[local] TYPE=LOCAL\n";
    let d = Daemon::start_with_config(Some(cfg));
    let (c, _, e) = run(
        &d,
        "mrsvctl",
        &[
            "-c", "-t", "3", "-R", "PROCS=2", "-d", "1:00:00", "-n", "pertask",
        ],
    );
    assert_eq!(c, 0, "{e}");
    let (c, o, e) = run(&d, "mrsvctl", &["-q", "pertask", "--format=json"]);
    assert_eq!(c, 0, "{e}");
    let v: serde_json::Value = serde_json::from_str(&o).unwrap();
    assert_eq!(v["reservations"][0]["procs"], 6, "{o}");
    for (args, says) in [
        (
            &["-c", "-t", "1", "-R", "MEM=100;PROCS=1", "-d", "1:00"][..],
            "per-task MEM (-R) not supported by Arches",
        ),
        (
            &["-c", "-R", "PROCS=2", "-d", "1:00"],
            "-R needs the task count",
        ),
        (
            &["-c", "-t", "ALL", "-R", "PROCS=2", "-d", "1:00"],
            "positive task count",
        ),
    ] {
        let (c, _, e) = run(&d, "mrsvctl", args);
        assert_eq!(c, 1, "{args:?}");
        assert!(e.contains(says), "{args:?}: {e}");
    }
    // Nothing was created by the refused requests.
    let (_, o, _) = run(&d, "mrsvctl", &["-l", "ALL", "--format=json"]);
    let v: serde_json::Value = serde_json::from_str(&o).unwrap();
    assert_eq!(v["reservations"].as_array().unwrap().len(), 1, "{o}");
}

/// mcredctl -q limit shows a credential's configured active limits (hard
/// and soft, as MAXJOB=3,4 gives them) and its usage by running jobs, as
/// Moab's `<Data><user ID=..><limits .../></user></Data>`; a credential
/// without limits or jobs has an empty `<limits/>`; an unknown one is
/// Moab's error.
#[test]
fn mcredctl_limit_shows_limits_and_usage() {
    let user = me();
    let cfg = format!(
        "NODECFG[n1] PROCS=2\nRMCFG[local] TYPE=LOCAL\nRMPOLLINTERVAL 1\n\
         USERCFG[{user}] MAXJOB=3,4 MAXPROC=2 MAXWC=1:00:00\nQOSCFG[high] PRIORITY=10\n"
    );
    let d = Daemon::start_with_config(Some(&cfg));
    let job = d.submit("#!/bin/sh\nsleep 300\n", &["-l", "walltime=10:00"]);
    d.wait_state(job, "Running", Duration::from_secs(60));
    let (c, o, e) = run(&d, "mcredctl", &["-q", "limit", &format!("user:{user}")]);
    assert_eq!(c, 0, "{e}");
    // UPS: the processor-seconds left of the job's 10-minute limit.
    let ups: u64 = o
        .split("UPS=\"")
        .nth(1)
        .and_then(|r| r.split('"').next())
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("{o}"));
    assert!(ups > 0 && ups <= 600, "{o}");
    assert_eq!(
        o,
        format!(
            "<Data><user ID=\"{user}\"><limits HLAJobs=\"4\" HLAProcs=\"2\" SLAJobs=\"3\" \
             SLAProcs=\"2\" UJobs=\"1\" UNodes=\"1\" UPS=\"{ups}\" UProcs=\"1\"/></user></Data>\n"
        )
    );
    let (c, o, e) = run(&d, "mcredctl", &["-q", "limit", "qos:high", "--format=xml"]);
    assert_eq!(c, 0, "{e}");
    assert_eq!(o, "<Data><qos ID=\"high\"><limits/></qos></Data>\n");
    let (c, _, e) = run(&d, "mcredctl", &["-q", "limit", "user:nosuchuser"]);
    assert_eq!(c, 1);
    assert_eq!(e, "ERROR:    cannot locate user 'nosuchuser'\n");
}

/// mcredctl -q policies shows every configured limit with its usage, in
/// Moab's client layout (text) and XML, to any user (Moab checks no
/// authorization for it: a second uid gets the same answer).
#[test]
fn mcredctl_policies_shows_every_limit() {
    if !common::root_or_skip("mcredctl_policies_shows_every_limit") {
        return;
    }
    let other = common::ensure_user("archescred");
    let user = me();
    let cfg = format!(
        "NODECFG[n1] PROCS=2\nRMCFG[local] TYPE=LOCAL\nRMPOLLINTERVAL 1\n\
         USERCFG[{user}] MAXJOB=3,4\nCLASSCFG[batch] MAX.WCLIMIT=2:00:00 MAX.PROC=2\n\
         QOSCFG[high] MAXPROC=8\n"
    );
    let d = Daemon::start_with_config(Some(&cfg));
    let job = d.submit("#!/bin/sh\nsleep 300\n", &["-l", "walltime=10:00"]);
    d.wait_state(job, "Running", Duration::from_secs(60));
    let want = format!(
        "\n\npartition limits\n-----------------\nALL\n  USERCFG[{user}]\n      MAXJOB=3,4 Usage=1\n  \
         CLASSCFG[batch] MAX.PROC=2 MAX.WCLIMIT=7200\n  QOSCFG[high]\n      MAXPROC=8\n\n"
    );
    let (c, o, e) = run(&d, "mcredctl", &["-q", "policies", &format!("user:{user}")]);
    assert_eq!(c, 0, "{e}");
    assert_eq!(o, want);
    let (c, o, e) = run(&d, "mcredctl", &["-q", "policies", "--format=xml"]);
    assert_eq!(c, 0, "{e}");
    assert_eq!(
        o,
        format!(
            "<Data><policies><par ID=\"ALL\"><class MAX.PROC=\"2\" MAX.WCLIMIT=\"7200\" NAME=\"batch\"/>\
             <qos QOS=\"high\"><limits NAME=\"MAXPROC\" SLIMIT=\"8\"/></qos><user User=\"{user}\">\
             <limits HLIMIT=\"4\" NAME=\"MAXJOB\" SLIMIT=\"3\" USAGE=\"1\"/></user></par></policies></Data>\n"
        )
    );
    let dir = tempfile::tempdir().unwrap();
    common::set_mode(dir.path(), 0o777);
    let out = common::run_as_user(&d, &other, "mcredctl", &["-q", "policies"], "", dir.path());
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), want);
    let (c, _, e) = run(&d, "mcredctl", &["-q", "policies", "user:nosuchuser"]);
    assert_eq!(c, 1);
    assert_eq!(e, "ERROR:    cannot locate user 'nosuchuser'\n");
}

/// mcredctl -q role gives Moab's roles: adminN for each ADMINCFG level
/// naming the user (root is level 1), admin5 for everybody, also for a
/// name the daemon does not know; user:ALL lists every known user.
#[test]
fn mcredctl_role_shows_admin_levels() {
    let user = me();
    let cfg = "NODECFG[n1] PROCS=2\nRMCFG[local] TYPE=LOCAL\nADMINCFG[3] USERS=helper,nobody2\n\
               USERCFG[helper] PRIORITY=1\n";
    let d = Daemon::start_with_config(Some(cfg));
    let (c, o, e) = run(&d, "mcredctl", &["-q", "role", "user:helper"]);
    assert_eq!(c, 0, "{e}");
    assert_eq!(
        o,
        "<Data><user ID=\"helper\" role=\"admin3,admin5\"/></Data>\n"
    );
    let (c, o, e) = run(
        &d,
        "mcredctl",
        &["-q", "role", "user:stranger", "--format=xml"],
    );
    assert_eq!(c, 0, "{e}");
    assert_eq!(o, "<Data><user ID=\"stranger\" role=\"admin5\"/></Data>\n");
    // The daemon's own user (and root) is a level-1 administrator.
    let (c, o, e) = run(&d, "mcredctl", &["-q", "role", &format!("user:{user}")]);
    assert_eq!(c, 0, "{e}");
    assert_eq!(
        o,
        format!("<Data><user ID=\"{user}\" role=\"admin1,admin5\"/></Data>\n")
    );
    let (c, o, e) = run(&d, "mcredctl", &["-q", "role", "user:ALL"]);
    assert_eq!(c, 0, "{e}");
    assert_eq!(
        o,
        "<Data><user ID=\"helper\" role=\"admin3,admin5\"/></Data>\n"
    );
}

/// mcredctl -q accessto lists who may use a credential, the inverse of
/// accessfrom: users whose QLIST names a QoS (or who have none), and the
/// classes and accounts (which take every QoS); a group's members (the
/// users whose Unix groups include it).
#[test]
fn mcredctl_accessto_inverts_accessfrom() {
    let user = me();
    let out = std::process::Command::new("id")
        .arg("-gn")
        .output()
        .unwrap();
    let group = text(&out.stdout).trim().to_string();
    assert!(!group.is_empty(), "id -gn");
    let cfg = format!(
        "NODECFG[n1] PROCS=2\nRMCFG[local] TYPE=LOCAL\nUSERCFG[ann] QLIST=high\n\
         USERCFG[bob] PRIORITY=1\nQOSCFG[high] PRIORITY=1\nQOSCFG[low] PRIORITY=1\n\
         CLASSCFG[batch] PRIORITY=1\nUSERCFG[{user}] QLIST=high\nGROUPCFG[{group}] PRIORITY=1\n\
         GROUPCFG[archesnogrp] PRIORITY=1\n"
    );
    let d = Daemon::start_with_config(Some(&cfg));
    let mut users = ["ann", "bob", user.as_str()];
    users.sort_unstable();
    let all = users.join(",");
    let mut groups = ["archesnogrp", group.as_str()];
    groups.sort_unstable();
    let gall = groups.join(",");
    let (c, o, e) = run(&d, "mcredctl", &["-q", "accessto", "qos:low"]);
    assert_eq!(c, 0, "{e}");
    assert_eq!(
        o,
        format!("<Data><qos CList=\"batch\" GList=\"{gall}\" ID=\"low\" UList=\"bob\"/></Data>\n")
    );
    let (c, o, e) = run(&d, "mcredctl", &["-q", "accessto", "qos", "--format=xml"]);
    assert_eq!(c, 0, "{e}");
    assert_eq!(
        o,
        format!(
            "<Data><qos CList=\"batch\" GList=\"{gall}\" ID=\"high\" UList=\"{all}\"/>\
             <qos CList=\"batch\" GList=\"{gall}\" ID=\"low\" UList=\"bob\"/></Data>\n"
        )
    );
    let (c, o, e) = run(&d, "mcredctl", &["-q", "accessto", "class:batch"]);
    assert_eq!(c, 0, "{e}");
    assert_eq!(
        o,
        format!("<Data><class ID=\"batch\" UList=\"{all}\"/></Data>\n")
    );
    // The user's primary group has them as a member; a group nobody is in
    // has nobody.
    let (c, o, e) = run(
        &d,
        "mcredctl",
        &["-q", "accessto", &format!("group:{group}")],
    );
    assert_eq!(c, 0, "{e}");
    assert_eq!(
        o,
        format!("<Data><group ID=\"{group}\" UList=\"{user}\"/></Data>\n")
    );
    let (c, o, e) = run(&d, "mcredctl", &["-q", "accessto", "group:archesnogrp"]);
    assert_eq!(c, 0, "{e}");
    assert_eq!(o, "<Data><group ID=\"archesnogrp\"/></Data>\n");
}

/// `mcredctl -r stats|fairshare|all TYPE[:NAME]`: one credential's
/// statistics forgotten (the system's and the other credentials' kept),
/// fairshare reset for users and accounts only, Moab's INFO lines; kept
/// across a restart; bad input refused.
#[test]
fn mcredctl_reset_forgets_one_credentials_statistics() {
    let cfg = "NODECFG[n1] PROCS=2\nRMCFG[local] TYPE=LOCAL\nRMPOLLINTERVAL 1\n\
               ACCOUNTCFG[chem] PRIORITY=1\nCLASSCFG[batch] PRIORITY=1\n";
    let mut d = Daemon::start_with_config(Some(cfg));
    let user = me();
    let id = d.submit(
        "#!/bin/sh\ntrue\n",
        &["-A", "chem", "-q", "batch", "-l", "walltime=1:00"],
    );
    d.wait_state(id, "Completed", Duration::from_secs(30));
    let jobs = |d: &Daemon, flag: &str, name: &str| -> u64 {
        let (c, o, e) = run(d, "showstats", &[flag, "--format=json"]);
        assert_eq!(c, 0, "{e}");
        let v: serde_json::Value = serde_json::from_str(&o).unwrap();
        v["credentials"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == name)
            .map_or(0, |c| c["completed"]["jobs"].as_u64().unwrap())
    };
    assert_eq!((jobs(&d, "-u", &user), jobs(&d, "-a", "chem")), (1, 1));
    let (c, o, e) = run(&d, "mcredctl", &["-r", "stats", &format!("user:{user}")]);
    assert_eq!((c, e.as_str()), (0, ""));
    assert_eq!(
        o,
        format!("INFO:  profiling statistics reset for user:{user}\n")
    );
    assert_eq!((jobs(&d, "-u", &user), jobs(&d, "-a", "chem")), (0, 1));
    let (_, o, _) = run(&d, "showstats", &["--format=json"]);
    let v: serde_json::Value = serde_json::from_str(&o).unwrap();
    assert_eq!(v["completed"]["jobs"], 1, "the system keeps the job: {o}");
    // Fairshare: accounts and users; Moab says so for the other types.
    let (c, o, _) = run(&d, "mcredctl", &["-r", "fairshare", "acct:chem"]);
    assert_eq!(
        (c, o.as_str()),
        (0, "INFO:  fairshare reset for acct:chem in partition ALL\n")
    );
    let (c, o, _) = run(&d, "mcredctl", &["-r", "all", "class:batch"]);
    assert_eq!(
        (c, o.as_str()),
        (
            0,
            "INFO:  profiling statistics reset for class:batch\n\
             INFO:  cannot reset fairshare info for class:batch in partition ALL\n"
        )
    );
    assert_eq!(jobs(&d, "-c", "batch"), 0);
    // Every account: chem is the only one.
    let (_, o, _) = run(&d, "mcredctl", &["-r", "stats", "acct"]);
    assert_eq!(o, "INFO:  profiling statistics reset for acct:chem\n");
    assert_eq!(jobs(&d, "-a", "chem"), 0);
    // Bad input.
    for (args, says) in [
        (&["-r", "bogus", "user:root"][..], "invalid reset 'bogus'"),
        (&["-r", "stats"], "no credential specified"),
        (
            &["-r", "stats", "user:nosuchuser"],
            "cannot locate user 'nosuchuser'",
        ),
        (&["-r", "stats", "node:n1"], "invalid credential type"),
    ] {
        let (c, o, e) = run(&d, "mcredctl", args);
        assert_eq!((c, o.as_str()), (1, ""), "{args:?}");
        assert!(e.contains(says), "{args:?}: {e}");
    }
    // Kept across a restart.
    d.stop();
    d.spawn();
    assert_eq!((jobs(&d, "-u", &user), jobs(&d, "-a", "chem")), (0, 0));
}

/// Who administers is not everybody's business: a user who is not an
/// administrator of levels 1–3 reads only their own roles (the daemon
/// narrows the ADMINCFG lists it sends them to their own name), and a
/// role query about anyone else is refused, as Moab refuses it.
#[test]
fn mcredctl_role_hides_the_admin_lists_from_other_users() {
    if !common::root_or_skip("mcredctl_role_hides_the_admin_lists_from_other_users") {
        return;
    }
    let other = common::ensure_user("archesrole");
    let cfg = format!(
        "NODECFG[n1] PROCS=2\nRMCFG[local] TYPE=LOCAL\nADMINCFG[3] USERS=helper\n\
         ADMINCFG[4] USERS={other},watcher\nUSERCFG[helper] PRIORITY=1\n"
    );
    let d = Daemon::start_with_config(Some(&cfg));
    let dir = tempfile::tempdir().unwrap();
    common::set_mode(dir.path(), 0o777);
    let as_other = |args: &[&str]| {
        let out = common::run_as_user(&d, &other, "mcredctl", args, "", dir.path());
        (out.status.code(), text(&out.stdout), text(&out.stderr))
    };
    let me_ = format!("user:{other}");
    assert_eq!(
        as_other(&["-q", "role", &me_]),
        (
            Some(0),
            format!("<Data><user ID=\"{other}\" role=\"admin4,admin5\"/></Data>\n"),
            String::new()
        )
    );
    for who in ["user:helper", "user:root", "user:ALL"] {
        assert_eq!(
            as_other(&["-q", "role", who]),
            (
                Some(1),
                String::new(),
                format!("ERROR:    user '{other}' is not authorized to run command\n")
            ),
            "{who}"
        );
    }
    // The raw answer names nobody else.
    let (c, o, e) = as_other(&["-q", "role", &me_, "--format=json"]);
    assert_eq!(c, Some(0), "{e}");
    let v: serde_json::Value = serde_json::from_str(&o).unwrap();
    assert_eq!(
        v["admin_users"],
        serde_json::json!([[], [], [], [other.as_str()]]),
        "{o}"
    );
    assert_eq!(v["viewer"], other.as_str(), "{o}");
    // helper is a configured user (USERCFG), listed as a credential, but
    // nowhere as an administrator.
    let lists = v["admin_users"].to_string();
    assert!(
        !lists.contains("helper") && !lists.contains("watcher") && !lists.contains("root"),
        "{lists}"
    );
    // Nor through the configuration listings (administrators' commands).
    for cmd in [&["showconfig"][..], &["mschedctl", "-l", "config"]] {
        let out = common::run_as_user(&d, &other, cmd[0], &cmd[1..], "", dir.path());
        assert_eq!(out.status.code(), Some(1), "{cmd:?}");
        assert!(
            text(&out.stdout).is_empty(),
            "{cmd:?}: {}",
            text(&out.stdout)
        );
        assert_eq!(
            text(&out.stderr),
            format!("ERROR:    user '{other}' is not authorized to run command\n"),
            "{cmd:?}"
        );
    }
    let (c, o, e) = run(&d, "showconfig", &["-v"]);
    assert_eq!(c, 0, "{e}");
    assert!(o.contains("watcher"), "{o}");
    // An administrator still reads the whole lists.
    let (c, o, e) = run(&d, "mcredctl", &["-q", "role", "user:watcher"]);
    assert_eq!(c, 0, "{e}");
    assert_eq!(
        o,
        "<Data><user ID=\"watcher\" role=\"admin4,admin5\"/></Data>\n"
    );
}
