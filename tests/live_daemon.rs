//! The real daemon with real jobs (issue 7 / fix7): statistics that count
//! running and cancelled-running jobs and survive a restart, checkjob's
//! reservation line of a running job, the msub forms of the client contract,
//! canceljob's exact output, and every `--xml` output parsed with a real XML
//! parser with its counts checked against the daemon's JSON.

mod common;

use std::time::{Duration, Instant};

use common::{text, Daemon};

const CFG: &str = "NODECFG[n1] PROCS=2\nNODECFG[n2] PROCS=2\nRMCFG[local] TYPE=LOCAL\n\
FSPOLICY DEDICATEDPS\nACCOUNTCFG[chem] FSTARGET=40\n";
const LONG: Duration = Duration::from_secs(30);

fn json(d: &Daemon, cmd: &str, args: &[&str]) -> serde_json::Value {
    let mut all = args.to_vec();
    all.push("--format=json");
    let out = d.run(cmd, &all);
    assert!(
        out.status.success(),
        "{cmd} {args:?}: {}",
        text(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("json")
}

fn wait_running(d: &Daemon, id: u64) {
    d.wait_state(id, "Running", LONG);
}

/// Polls until `pred` holds for `showstats --format=json`.
fn wait_stats(
    d: &Daemon,
    what: &str,
    pred: impl Fn(&serde_json::Value) -> bool,
) -> serde_json::Value {
    let deadline = Instant::now() + LONG;
    loop {
        let v = json(d, "showstats", &[]);
        if pred(&v) {
            return v;
        }
        assert!(Instant::now() < deadline, "{what}: {v:#}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn statistics_count_running_and_cancelled_jobs_and_survive_a_restart() {
    let mut d = Daemon::start_with_config(Some(CFG));
    let ok = d.submit(
        "#!/bin/sh\nexit 0\n",
        &["-l", "walltime=1:00", "-A", "chem"],
    );
    let bad = d.submit("#!/bin/sh\nexit 3\n", &["-l", "walltime=1:00"]);
    let long = d.submit(
        "#!/bin/sh\nsleep 300\n",
        &["-l", "walltime=10:00,nodes=1:ppn=2"],
    );
    d.wait_state(ok, "Completed", LONG);
    d.wait_state(bad, "Completed", LONG);
    wait_running(&d, long);
    // The running job counts at now: dedicated proc-seconds grow while it runs.
    let v = wait_stats(&d, "running job not counted", |v| {
        v["completed"]["jobs"] == 2
            && v["active_jobs"] == 1
            && v["proc_seconds_used"].as_f64()
                > Some(v["completed"]["ps_dedicated"].as_f64().unwrap())
    });
    assert_eq!(v["completed"]["successful"], 1, "{v:#}");
    let out = text(&d.run("showstats", &[]).stdout);
    assert!(
        out.contains("Successful/Completed Jobs:          1/2      (50.000%)"),
        "{out}"
    );
    assert!(
        out.contains("Active Jobs:                        1\n"),
        "{out}"
    );
    // The account's row and its fairshare target.
    let a = text(&d.run("showstats", &["-a", "chem"]).stdout);
    let row = a.lines().last().unwrap();
    assert!(
        row.trim_start()
            .starts_with("chem        0     0      0.00    1 "),
        "{a}"
    );
    assert!(row.contains(" 40.0 "), "{a}");
    // Cancelling the running job records it as a completed (cancelled) job
    // with the time its processors were dedicated.
    let c = d.run("canceljob", &[&long.to_string()]);
    assert_eq!(text(&c.stdout), format!("\njob '{long}' cancelled\n\n"));
    let v = wait_stats(&d, "cancelled job not recorded", |v| {
        v["completed"]["jobs"] == 3
    });
    assert!(
        v["completed"]["ps_dedicated"].as_f64().unwrap() > 0.0,
        "{v:#}"
    );
    assert_eq!(v["completed"]["successful"], 1);
    let before = v["completed"].clone();
    // Durable: a restarted daemon has the same totals and the same period.
    d.stop();
    d.spawn();
    let after = json(&d, "showstats", &[]);
    assert_eq!(after["completed"], before, "{after:#}");
    assert_eq!(after["since"], v["since"]);
    // mdiag -f has the usage, with the account's target.
    let f = text(&d.run("mdiag", &["-f"]).stdout);
    assert!(f.contains("FS Policy: DEDICATEDPS"), "{f}");
    assert!(
        f.lines()
            .any(|l| l.starts_with("chem") && l.contains(" 40.00 ")),
        "{f}"
    );
    // mschedctl -f starts a new period.
    let r = d.run("mschedctl", &["-f"]);
    assert_eq!(text(&r.stdout), "'all' statistics reset successfully\n");
    let z = json(&d, "showstats", &[]);
    assert_eq!(z["completed"]["jobs"], 0, "{z:#}");
    let bad_type = d.run("mschedctl", &["-f", "bogus"]);
    assert_eq!(bad_type.status.code(), Some(1));
    assert!(text(&bad_type.stderr).contains("unknown statistics type 'bogus'"));
}

#[test]
fn running_job_has_its_reservation_and_client_contract_forms() {
    let d = Daemon::start_with_config(Some(CFG));
    // vvtest's `-los=...` (no space), os=/arch= and partition=ALL are accepted.
    let script = "#!/bin/sh\n#MSUB -los=CLE_quad_cache\nsleep 300\n";
    let id = d.submit(
        script,
        &[
            "-l",
            "arch=x86_64",
            "-l",
            "partition=ALL",
            "-l",
            "walltime=5:00",
        ],
    );
    let id2 = d.submit("sleep 1\n", &["-l", "os=linux"]);
    wait_running(&d, id);
    let cj = d.checkjob(id);
    let rsv = cj
        .lines()
        .find(|l| l.starts_with(&format!("Reservation '{id}' (")))
        .unwrap_or_else(|| panic!("no reservation line:\n{cj}"));
    assert!(rsv.ends_with("  Duration: 00:05:00)"), "{cj}");
    assert!(
        cj.contains("Opsys: CLE_quad_cache  Arch: x86_64  Features: ---"),
        "{cj}"
    );
    let script_path = cj
        .lines()
        .find_map(|l| l.strip_prefix("Executable:     "))
        .expect("Executable line");
    assert!(
        script_path.starts_with(d.home.path().to_str().unwrap()) && script_path.contains("job-"),
        "{cj}"
    );
    let x = text(&d.run("checkjob", &["--xml", &id.to_string()]).stdout);
    let doc = roxmltree::Document::parse(x.trim()).expect("xml");
    let job = doc.descendants().find(|n| n.has_tag_name("job")).unwrap();
    assert_eq!(job.attribute("CmdFile"), Some(script_path));
    let req = job.children().find(|n| n.has_tag_name("req")).unwrap();
    assert_eq!(req.attribute("ReqOpsys"), Some("CLE_quad_cache"));
    // mdiag -j: the running job has a reservation, so no warning.
    let j = text(&d.run("mdiag", &["-j"]).stdout);
    assert!(!j.contains("has no reservation"), "{j}");
    assert!(
        j.lines()
            .any(|l| l.starts_with(&id.to_string()) && l.contains("Running")),
        "{j}"
    );
    let _ = id2;
    // Bad resources are still refused with the argument named.
    let out = d.run_stdin("msub", &["-l", "bogus=1"], "true\n");
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("bogus"), "{}", text(&out.stderr));
}

/// Every command that has an XML form, against a live daemon: each answer
/// is one well-formed line rooted at `<Data>` and its counts match the JSON
/// (or text) of the same data.
#[test]
fn every_xml_output_parses_with_counts_matching_the_daemon() {
    let d = Daemon::start_with_config(Some(CFG));
    let done = d.submit("#!/bin/sh\nexit 0\n", &["-l", "walltime=1:00"]);
    d.wait_state(done, "Completed", LONG);
    let run = d.submit(
        "#!/bin/sh\nsleep 300\n",
        &["-l", "walltime=10:00,nodes=1:ppn=2"],
    );
    let run2 = d.submit(
        "#!/bin/sh\nsleep 300\n",
        &["-l", "walltime=10:00,nodes=1:ppn=2"],
    );
    let wait = d.submit(
        "#!/bin/sh\nsleep 300\n",
        &["-l", "walltime=10:00,nodes=2:ppn=2"],
    );
    let held = d.submit("#!/bin/sh\ntrue\n", &["-h"]);
    wait_running(&d, run);
    wait_running(&d, run2);
    let rsv = d.run(
        "mrsvctl",
        &["-c", "-h", "n1", "-s", "+1:00:00", "-d", "1:00:00"],
    );
    assert!(rsv.status.success(), "{}", text(&rsv.stderr));

    let xml = |cmd: &str, args: &[&str]| -> String {
        let out = d.run(cmd, args);
        assert!(
            out.status.success(),
            "{cmd} {args:?}: {}",
            text(&out.stderr)
        );
        let s = text(&out.stdout);
        assert!(
            s.starts_with("<Data") && s.ends_with("</Data>\n"),
            "{cmd} {args:?}: {s}"
        );
        assert_eq!(s.lines().count(), 1, "{cmd} {args:?}: not one line");
        assert!(!s.starts_with("<?xml"));
        s
    };
    let count = |s: &str, tag: &str| -> usize {
        let doc = roxmltree::Document::parse(s.trim()).unwrap_or_else(|e| panic!("{e}: {s}"));
        assert!(doc.root_element().has_tag_name("Data"));
        doc.descendants().filter(|n| n.has_tag_name(tag)).count()
    };

    // showq: each <queue count=N> has N <job> children; totals match the JSON.
    let q = xml("showq", &["--xml"]);
    let doc = roxmltree::Document::parse(q.trim()).unwrap();
    let mut sections = Vec::new();
    for queue in doc.descendants().filter(|n| n.has_tag_name("queue")) {
        let n: usize = queue.attribute("count").unwrap().parse().unwrap();
        assert_eq!(
            n,
            queue.children().filter(|c| c.has_tag_name("job")).count(),
            "{q}"
        );
        sections.push((queue.attribute("option").unwrap().to_string(), n));
    }
    assert_eq!(
        sections,
        vec![
            ("active".into(), 2),
            ("eligible".into(), 1),
            ("blocked".into(), 1)
        ],
        "{q}"
    );
    let qj = json(&d, "showq", &[]);
    assert_eq!(count(&q, "job"), qj["jobs"].as_array().unwrap().len());
    assert_eq!(count(&xml("showq", &["-c", "--xml"]), "job"), 1);
    // checkjob / mjobctl -q diag / mdiag -j: one <job> per job asked for.
    assert_eq!(
        count(
            &xml("checkjob", &["--xml", &run.to_string(), &held.to_string()]),
            "job"
        ),
        2
    );
    let all = json(&d, "checkjob", &["ALL"]);
    let n_all = all["jobs"].as_array().unwrap().len();
    assert_eq!(
        count(
            &xml("mjobctl", &["-q", "diag", "ALL", "--format=xml"]),
            "job"
        ),
        n_all - 1
    );
    assert_eq!(count(&xml("mdiag", &["-j", "--xml"]), "job"), 4);
    // -w completed=true: the completed job only (Moab), not every job.
    let c = xml("mdiag", &["-j", "--xml", "-w", "completed=true"]);
    assert_eq!(count(&c, "job"), 1, "{c}");
    assert!(c.contains(&format!("JobID=\"{done}\"")), "{c}");
    // nodes
    assert_eq!(count(&xml("checknode", &["--xml", "ALL"]), "node"), 2);
    assert_eq!(count(&xml("mdiag", &["-n", "--xml"]), "node"), 2);
    // reservations: the two running jobs, the waiting job's priority
    // reservation and the administrative one — as many as showres's JSON.
    let rj = json(&d, "showres", &[]);
    let n_rsv = rj["reservations"].as_array().unwrap().len();
    assert!(n_rsv >= 3, "{rj:#}");
    assert_eq!(count(&xml("showres", &["--xml"]), "rsv"), n_rsv);
    assert_eq!(count(&xml("mdiag", &["-r", "--xml"]), "rsv"), n_rsv);
    assert_eq!(
        count(&xml("mrsvctl", &["-q", "ALL", "--xml"]), "rsv"),
        n_rsv
    );
    assert_eq!(count(&xml("showres", &["--xml", "system.1"]), "rsv"), 1);
    // credentials: mdiag -q has the DEFAULT QoS; -u the submitting user.
    let qos = xml("mdiag", &["-q", "--xml"]);
    assert!(
        count(&qos, "qos") >= 1 && qos.contains("ID=\"DEFAULT\""),
        "{qos}"
    );
    let creds = json(&d, "mdiag", &["-u"]);
    assert_eq!(
        count(&xml("mdiag", &["-u", "--xml"]), "user"),
        creds["credentials"].as_array().unwrap().len()
    );
    // statistics
    let st = xml("showstats", &["--xml"]);
    let doc = roxmltree::Document::parse(st.trim()).unwrap();
    let stats = doc.descendants().find(|n| n.has_tag_name("stats")).unwrap();
    assert_eq!(stats.attribute("TJC"), Some("1"), "{st}");
    assert_eq!(stats.attribute("GCAJobs"), Some("2"), "{st}");
    // msub --xml and showstart --xml
    let m = d.run_stdin("msub", &["--xml"], "true\n");
    let ms = text(&m.stdout);
    assert_eq!(count(&ms, "job"), 1, "{ms}");
    assert_eq!(
        count(&xml("showstart", &["--xml", &wait.to_string()]), "job"),
        1
    );
    // showres -f --xml: one node element per node
    assert_eq!(count(&xml("showres", &["-f", "--xml"]), "node"), 2);
    // mdiag -T --xml: no triggers
    assert_eq!(count(&xml("mdiag", &["-T", "--xml"]), "trigger"), 0);
}

/// Dynamic completion: `<cmd> --complete jobs|nodes|reservations` asks the
/// daemon, and the generated bash script offers those ids for operands (the
/// script is sourced in a real bash and its function called).
#[test]
fn completion_offers_the_daemons_job_ids_and_node_names() {
    let d = Daemon::start_with_config(Some(CFG));
    let a = d.submit("#!/bin/sh\nsleep 300\n", &["-h"]);
    let b = d.submit("#!/bin/sh\nsleep 300\n", &["-h"]);
    let ids = text(&d.run("checkjob", &["--complete", "jobs"]).stdout);
    assert_eq!(ids, format!("{a}\n{b}\n"));
    assert_eq!(
        text(&d.run("checknode", &["--complete", "nodes"]).stdout),
        "n1\nn2\n"
    );
    // No daemon: nothing at all, exit 0 (a completion must not print errors).
    let none = d
        .cmd("checkjob")
        .args(["--complete", "jobs"])
        .env("MOAB_SOCKET", d.home.path().join("nowhere.sock"))
        .output()
        .expect("run");
    assert!(none.status.success() && none.stdout.is_empty() && none.stderr.is_empty());

    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let bin_dir = common::bin("checkjob").parent().unwrap().to_path_buf();
    let complete = |script: &str, func: &str, words: &[&str]| -> String {
        let words_list = words
            .iter()
            .map(|w| format!("'{w}'"))
            .collect::<Vec<_>>()
            .join(" ");
        let prog = format!(
            "source '{}'; COMP_WORDS=({words_list}); COMP_CWORD={}; COMP_LINE='{}'; COMP_POINT=${{#COMP_LINE}}; {func} {} \"${{COMP_WORDS[COMP_CWORD]}}\" \"${{COMP_WORDS[COMP_CWORD-1]}}\"; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
            root.join(script).display(),
            words.len() - 1,
            words.join(" "),
            words[0]
        );
        let o = std::process::Command::new("bash")
            .args(["--norc", "-c", &prog])
            .env_clear()
            .envs(common::base_env(d.home.path(), &d.socket))
            .env("PATH", format!("{}:/usr/bin:/bin", bin_dir.display()))
            .output()
            .expect("bash");
        assert!(o.status.success(), "{}", text(&o.stderr));
        text(&o.stdout)
    };
    let got = complete(
        "completions/bash/checkjob",
        "_arches_dyn_checkjob",
        &["checkjob", ""],
    );
    assert_eq!(got, format!("{a}\n{b}\n"));
    let got = complete(
        "completions/bash/checkjob",
        "_arches_dyn_checkjob",
        &["checkjob", &a.to_string()[..1]],
    );
    assert!(
        got.lines().all(|l| l.starts_with(&a.to_string()[..1])) && !got.is_empty(),
        "{got}"
    );
    let got = complete(
        "completions/bash/checknode",
        "_arches_dyn_checknode",
        &["checknode", "n"],
    );
    assert_eq!(got, "n1\nn2\n");
    // After an option that takes a value, clap's own completion answers.
    let got = complete(
        "completions/bash/checkjob",
        "_arches_dyn_checkjob",
        &["checkjob", "--format", ""],
    );
    assert!(
        got.contains("json") && !got.contains(&a.to_string()),
        "{got}"
    );
}

/// The options of moab-formats.md that used to be rejected, each doing
/// Moab's thing (or, where Arches has no such subsystem, saying so).
#[test]
fn formerly_rejected_options_do_their_moab_thing() {
    let cfg = format!("{CFG}QOSCFG[high] PRIORITY=10\nUSERCFG[root] QLIST=high\n");
    let d = Daemon::start_with_config(Some(&cfg));
    let run = d.submit(
        "#!/bin/sh\nsleep 300\n",
        &[
            "-N",
            "runner",
            "-l",
            "walltime=10:00,nodes=1:ppn=2",
            "-l",
            "qos=high",
        ],
    );
    wait_running(&d, run);
    let out = |cmd: &str, args: &[&str]| -> (i32, String, String) {
        let o = d.run(cmd, args);
        (
            o.status.code().unwrap_or(-1),
            text(&o.stdout),
            text(&o.stderr),
        )
    };
    // checkjob -A: one parsable line, Moab's names first (NAME is the id)
    let (c, o, _) = out("checkjob", &["-A", &run.to_string()]);
    assert_eq!(c, 0);
    assert!(
        o.starts_with(&format!("NAME={run};STATE=Running;UNAME="))
            && o.contains(";JOBNAME=runner;"),
        "{o}"
    );
    assert_eq!(o.lines().count(), 1);
    // checkjob -n / -q / -r
    let host = d.run("checkjob", &[&run.to_string()]);
    let node = text(&host.stdout)
        .lines()
        .skip_while(|l| !l.starts_with("Allocated Nodes:"))
        .nth(1)
        .map(|l| {
            l.trim_matches(['[', ']'])
                .split(':')
                .next()
                .unwrap()
                .to_string()
        })
        .expect("allocated node");
    let (_, o, _) = out("checkjob", &["-n", &node, &run.to_string()]);
    assert!(
        o.contains(&format!("NOTE:  job {run} can access node {node}\n")),
        "{o}"
    );
    assert!(
        o.contains(&format!("  job {run} on node {node} is not preemptible")),
        "{o}"
    );
    let (_, o, _) = out("checkjob", &["-q", "high,DEFAULT,nosuch", &run.to_string()]);
    assert!(
        o.contains("NOTE:  job granted access to QOS 'high'\n"),
        "{o}"
    );
    assert!(
        o.contains("NOTE:  job denied access to QOS 'DEFAULT' (user root QLIST=high)\n"),
        "{o}"
    );
    assert!(
        o.contains("NOTE:  job denied access to QOS 'nosuch' (QOS not configured)\n"),
        "{o}"
    );
    assert!(d
        .run(
            "mrsvctl",
            &[
                "-c",
                "-h",
                "n1",
                "-s",
                "+1:00:00",
                "-d",
                "10:00",
                "-a",
                "USER==root"
            ]
        )
        .status
        .success());
    let (_, o, _) = out("checkjob", &["-r", "system.1", &run.to_string()]);
    assert!(o.contains("NOTE:  job granted access to reservation 'system.1' w/affinity 'positive' (USER==root)"), "{o}");
    let (c, _, e) = out("checkjob", &["-l", "BOGUS", &run.to_string()]);
    assert_eq!(c, 1);
    assert!(e.contains("invalid policy level 'BOGUS'"), "{e}");
    assert_eq!(
        out(
            "checkjob",
            &["-l", "HARD", "--flags=future", &run.to_string()]
        )
        .0,
        0
    );
    // showq -R: the job reservation's own job; -g/-l: the same report
    let (_, o, _) = out("showq", &["-R", &run.to_string()]);
    assert!(
        o.contains(&format!("\n{run} ")) && o.contains("1 active job "),
        "{o}"
    );
    // (REMAINING may tick between two calls: compare the lines' first words.)
    let words = |t: String| -> Vec<String> {
        t.lines()
            .map(|l| l.split_whitespace().next().unwrap_or("").to_string())
            .collect()
    };
    let plain = words(out("showq", &[]).1);
    assert_eq!(words(out("showq", &["-g"]).1), plain);
    assert_eq!(words(out("showq", &["-l"]).1), plain);
    let (c, _, e) = out("showq", &["-R", "nosuch"]);
    assert_eq!(
        (c, e.trim()),
        (1, "ERROR:  cannot locate reservation 'nosuch'")
    );
    // showres -o: reservations overlapping system.1 in time and nodes
    let (_, o, _) = out("showres", &["-o", "system.1"]);
    assert!(!o.contains("system.1 "), "{o}");
    // mdiag -b -l
    let (_, o, _) = out("mdiag", &["-b", "-l", "hard"]);
    assert!(
        o.starts_with("Diagnosing blocked jobs (policylevel HARD  partition ALL)"),
        "{o}"
    );
    // mdiag -G / -T / -L / -s / -x
    let (_, o, _) = out("mdiag", &["-G"]);
    assert!(
        o.starts_with("NOTE:  power management is not enabled")
            && o.contains("  node n1 is in state"),
        "{o}"
    );
    let (_, o, _) = out("mdiag", &["-T"]);
    assert_eq!(o.lines().count(), 2, "{o}");
    let (_, o, _) = out("mdiag", &["-L"]);
    assert!(o.starts_with("evaluating limits"), "{o}");
    let (_, o, _) = out("mdiag", &["-s"]);
    assert!(
        o.starts_with("Diagnosing Reservations") && !o.contains("system.1"),
        "{o}"
    );
    let (_, o, _) = out("mdiag", &["-x"]);
    assert_eq!(o, "no system problems detected\n");
    // mschedctl -A / -L; -R -n -c -d explain that Arches has no such thing
    assert_eq!(
        out("mschedctl", &["-A", "maintenance at noon"]).1,
        "annotation recorded: maintenance at noon\n"
    );
    assert_eq!(
        out("mschedctl", &["-L", "3"]).1,
        "log level set to 3 (log file unchanged)\n"
    );
    for args in [
        &["-R"][..],
        &["-n"],
        &["-c", "message", "hello"],
        &["-d", "trigger:1"],
    ] {
        let (c, _, e) = out("mschedctl", args);
        assert_eq!(c, 1, "{args:?}");
        assert!(
            e.starts_with("ERROR:    ") && e.contains("Arches"),
            "{args:?}: {e}"
        );
    }
    // mjobctl -S: no internal queue
    let (c, _, e) = out("mjobctl", &["-S", &run.to_string()]);
    assert_eq!(c, 1);
    assert!(e.contains("Arches has no internal queue"), "{e}");
    // mjobctl -n NAME selects by name; -c -w selects by attribute; -F cancels
    let a = d.submit("#!/bin/sh\ntrue\n", &["-h", "-N", "pick"]);
    let b = d.submit("#!/bin/sh\ntrue\n", &["-h", "-N", "keep", "-A", "chem"]);
    let c3 = d.submit("#!/bin/sh\ntrue\n", &["-h", "-N", "keep2"]);
    let (_, o, _) = out("mjobctl", &["-c", "-n", "pick"]);
    assert_eq!(o, format!("\njob '{a}' cancelled\n\n"));
    let (_, o, _) = out("mjobctl", &["-c", "-w", "account=chem"]);
    assert_eq!(o, format!("\njob '{b}' cancelled\n\n"));
    let (c, _, e) = out("mjobctl", &["-c", "-w", "account=nobody"]);
    assert_eq!((c, e.trim()), (1, "ERROR:    no jobs selected"));
    let (_, o, _) = out("mjobctl", &["-F", &c3.to_string()]);
    assert_eq!(o, format!("\njob '{c3}' cancelled\n\n"));
}
