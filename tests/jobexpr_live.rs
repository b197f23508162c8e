//! Job expressions end to end: the real commands against a real daemon,
//! each form checked for exactly which jobs it acted on (the state of every
//! job before and after). Ids are 1..=21, so `1.*` is 1 and 10..=19, and
//! never "job 1" alone; `2.*` is 2, 20 and 21.

mod common;

use std::collections::BTreeMap;

use common::{text, Daemon};

const CFG: &str = "NODECFG[n1] PROCS=1 PARTITION=red\nNODECFG[n2] PROCS=1 PARTITION=blue\n\
RMCFG[local] TYPE=LOCAL\nCLASSCFG[batch] PRIORITY=1\nCLASSCFG[fast] PRIORITY=2\nQOSCFG[hi] PRIORITY=10\n";

struct Q {
    d: Daemon,
}

impl Q {
    /// Every job's display state, by id (completed ones included).
    fn states(&self) -> BTreeMap<u64, String> {
        let out = self.d.run("checkjob", &["ALL", "--format=json"]);
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
        v["jobs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|j| {
                (
                    j["summary"]["id"].as_u64().unwrap(),
                    j["summary"]["state"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    }

    /// Runs a command; returns (exit code, stdout, stderr).
    fn run(&self, cmd: &str, args: &[&str]) -> (i32, String, String) {
        let o = self.d.run(cmd, args);
        (
            o.status.code().unwrap_or(-1),
            text(&o.stdout),
            text(&o.stderr),
        )
    }

    /// The ids whose state changed between two snapshots.
    fn changed(before: &BTreeMap<u64, String>, after: &BTreeMap<u64, String>) -> Vec<u64> {
        after
            .iter()
            .filter(|(id, s)| before.get(id) != Some(s))
            .map(|(id, _)| *id)
            .collect()
    }

    /// Runs `cmd args` and returns the exit code and the ids it changed.
    fn acted(&self, cmd: &str, args: &[&str]) -> (i32, Vec<u64>, String) {
        let before = self.states();
        let (c, o, e) = self.run(cmd, args);
        let after = self.states();
        (c, Self::changed(&before, &after), format!("{o}{e}"))
    }
}

fn setup() -> Q {
    let d = Daemon::start_with_config(Some(CFG));
    for i in 1..=21u64 {
        let name = if i % 3 == 0 { "three" } else { "other" };
        let mut args = vec!["-h", "-N", name];
        if i % 2 == 0 {
            args.extend(["-A", "even", "-q", "fast"]);
        } else {
            args.extend(["-q", "batch"]);
        }
        if i % 5 == 0 {
            args.extend(["-l", "qos=hi,partition=blue"]);
        }
        let id = d.submit("#!/bin/sh\nsleep 600\n", &args);
        assert_eq!(id, i);
    }
    Q { d }
}

#[test]
fn regular_expressions_act_on_exactly_the_jobs_they_match() {
    let q = setup();
    // sethold -b "1[0-2]": 10, 11, 12 (UserHold -> UserHold+Batch shows BatchHold).
    let (c, ids, out) = q.acted("sethold", &["-b", "1[0-2]"]);
    assert_eq!((c, ids), (0, vec![10, 11, 12]), "{out}");
    // releasehold -b with the same regex releases exactly those.
    let (c, ids, out) = q.acted("releasehold", &["-b", "1[0-2]"]);
    assert_eq!((c, ids), (0, vec![10, 11, 12]), "{out}");
    // mjobctl -h batch "2.*": 2, 20, 21 — never "job 2" alone.
    let (c, ids, out) = q.acted("mjobctl", &["-h", "batch", "2.*"]);
    assert_eq!((c, ids), (0, vec![2, 20, 21]), "{out}");
    // Moab's doc example: mjobctl -m priority+=200 "74[3-5]" shape, here
    // "1[3-4]" — one line per job, in job order.
    let (c, o, e) = q.run("mjobctl", &["-m", "sysprio=7", "1[3-4]"]);
    assert_eq!(
        (c, o.as_str(), e.as_str()),
        (
            0,
            "job 13 system priority modified\njob 14 system priority modified\n",
            ""
        )
    );
    // canceljob "1.*": 1 and 10..=19 (anchored: not 21, not every id with a 1).
    let (c, ids, out) = q.acted("canceljob", &["1.*"]);
    assert_eq!(
        (c, ids),
        (0, vec![1, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19]),
        "{out}"
    );
    // A regex that matches nothing is an error and acts on nothing.
    let (c, ids, out) = q.acted("mjobctl", &["-c", "9[0-9]"]);
    assert_eq!((c, ids), (1, vec![]), "{out}");
    assert_eq!(out, "ERROR:  invalid job specified (9[0-9])\n");
    // A malformed regex too.
    let (c, ids, out) = q.acted("canceljob", &["7[4"]);
    assert_eq!((c, ids), (1, vec![]), "{out}");
    assert!(
        out.starts_with("ERROR:  invalid job expression '7[4' ("),
        "{out}"
    );
    // `Moab.N` and comma lists (a comma inside braces belongs to the regex).
    let (c, ids, out) = q.acted("mjobctl", &["-u", "user", "Moab.3,[4-5]{1,1}"]);
    assert_eq!((c, ids), (0, vec![3, 4, 5]), "{out}");
    // checkjob, mjobctl -q diag and mdiag -j take the same expressions.
    let cj = q.run("checkjob", &["--format=json", "[6-8]"]).1;
    let v: serde_json::Value = serde_json::from_str(&cj).unwrap();
    let shown: Vec<u64> = v["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j["summary"]["id"].as_u64().unwrap())
        .collect();
    assert_eq!(shown, [6, 7, 8]);
    let x = q.run("mjobctl", &["-q", "diag", "2.*", "--format=xml"]).1;
    let doc = roxmltree::Document::parse(x.trim()).unwrap();
    let ids: Vec<&str> = doc
        .descendants()
        .filter(|n| n.has_tag_name("job"))
        .map(|n| n.attribute("JobID").unwrap())
        .collect();
    assert_eq!(ids, ["2", "20", "21"]);
    // showstart takes one job id: a regex is not an id.
    let (c, _, e) = q.run("showstart", &["2.*"]);
    assert_eq!((c, e.trim()), (1, "ERROR:  invalid job specified: 2.*"));
    // mjobctl -q starttime resolves the expression, one estimate per job.
    let (_, o, _) = q.run("mjobctl", &["-q", "starttime", "2[0-1]"]);
    assert_eq!(o.matches("job 2").count(), 2, "{o}");
}

#[test]
fn where_constraints_and_names_select_exactly_their_jobs() {
    let q = setup();
    let me = text(
        &std::process::Command::new("id")
            .arg("-un")
            .output()
            .unwrap()
            .stdout,
    )
    .trim()
    .to_string();
    let grp = text(
        &std::process::Command::new("id")
            .arg("-gn")
            .output()
            .unwrap()
            .stdout,
    )
    .trim()
    .to_string();
    // A selection that matches nothing is an error and acts on nothing.
    for w in [
        "user=nosuchuser",
        "group=nosuchgroup",
        "account=none",
        "class=none",
        "qos=none",
        "state=Running",
        "partition=green",
        "jobname=none",
    ] {
        let (c, ids, out) = q.acted("mjobctl", &["-h", "batch", "-w", w]);
        assert_eq!(
            (c, ids, out.as_str()),
            (1, vec![], "ERROR:    no jobs selected\n"),
            "{w}"
        );
    }
    // Unknown attributes are refused.
    let (c, ids, out) = q.acted("mjobctl", &["-c", "-w", "colour=red"]);
    assert_eq!((c, ids), (1, vec![]), "{out}");
    assert!(out.contains("unsupported constraint 'colour'"), "{out}");
    // -w flags= belongs to -x only.
    let (c, _, out) = q.acted("mjobctl", &["-c", "-w", "flags=ignorersv", "1"]);
    assert_eq!(c, 1, "{out}");
    // qos=hi: 5, 10, 15, 20; partition=blue: the same jobs.
    let (c, ids, out) = q.acted("mjobctl", &["-h", "batch", "-w", "qos=hi"]);
    assert_eq!((c, ids), (0, vec![5, 10, 15, 20]), "{out}");
    // state=BatchHold selects exactly those, released by -u.
    let (c, ids, out) = q.acted("mjobctl", &["-u", "batch", "-w", "state=BatchHold"]);
    assert_eq!((c, ids), (0, vec![5, 10, 15, 20]), "{out}");
    let (c, ids, out) = q.acted("mjobctl", &["-h", "system", "-w", "partition=blue"]);
    assert_eq!((c, ids), (0, vec![5, 10, 15, 20]), "{out}");
    // Combined: account=even and class=fast and jobname=three: 6, 12, 18.
    let (c, ids, out) = q.acted(
        "mjobctl",
        &[
            "-h",
            "batch",
            "-w",
            "account=even",
            "-w",
            "class=fast",
            "-n",
            "three",
        ],
    );
    assert_eq!((c, ids), (0, vec![6, 12, 18]), "{out}");
    // -w with an expression: the intersection (class=batch among 1..=4: 1, 3).
    let (c, ids, out) = q.acted("mjobctl", &["-h", "batch", "-w", "class=batch", "[1-4]"]);
    assert_eq!((c, ids), (0, vec![1, 3]), "{out}");
    // user= and group= (every job is ours).
    let (c, o, _) = q.run(
        "mjobctl",
        &["-q", "diag", "-w", &format!("user={me}"), "--format=xml"],
    );
    assert_eq!((c, o.matches("<job ").count()), (0, 21), "{o}");
    let (c, o, _) = q.run(
        "mjobctl",
        &["-q", "diag", "-w", &format!("group={grp}"), "--format=xml"],
    );
    assert_eq!((c, o.matches("<job ").count()), (0, 21), "{o}");
    // canceljob is mjobctl -c; then CompletionTime over the finished ones.
    let (c, ids, out) = q.acted("mjobctl", &["-c", "-n", "three", "-w", "class=batch"]);
    assert_eq!((c, ids), (0, vec![3, 9, 15, 21]), "{out}");
    let (_, o, _) = q.run(
        "mjobctl",
        &[
            "-q",
            "diag",
            "ALL",
            "--flags=completed",
            "-w",
            "CompletionTime>=1",
            "--format=xml",
        ],
    );
    let doc = roxmltree::Document::parse(o.trim()).unwrap();
    let done: Vec<&str> = doc
        .descendants()
        .filter(|n| n.has_tag_name("job"))
        .map(|n| n.attribute("JobID").unwrap())
        .collect();
    assert_eq!(done, ["3", "9", "15", "21"]);
    let (c, _, e) = q.run(
        "mjobctl",
        &["-q", "diag", "-w", "CompletionTime<1", "--format=xml"],
    );
    assert_eq!((c, e.as_str()), (1, "ERROR:    no jobs selected\n"));
    // mdiag -j -w selects the same way.
    let (_, o, _) = q.run("mdiag", &["-j", "-w", "qos=hi", "--format=json"]);
    let v: serde_json::Value = serde_json::from_str(&o).unwrap();
    let ids: Vec<u64> = v["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j["summary"]["id"].as_u64().unwrap())
        .collect();
    assert_eq!(ids, [5, 10, 20]);
}
