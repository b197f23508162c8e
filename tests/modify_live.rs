//! `mjobctl -m` for every attribute Moab lists (issue 16 part 3), end to end:
//! each one changes what checkjob shows, is checked as msub checks it, and
//! is refused on a running job where Moab refuses it; the attributes Arches
//! has no model for are refused with the reason. `mjobctl -q wiki`.

mod common;

use common::{run, text, Daemon};

const CFG: &str = "NODECFG[n1] PROCS=4 FEATURES=fast PARTITION=red\n\
NODECFG[n2] PROCS=2 PARTITION=blue\nRMCFG[local] TYPE=LOCAL\n";

fn detail(d: &Daemon, id: u64) -> serde_json::Value {
    let (_, o, _) = run(d, "checkjob", &["--format=json", &id.to_string()]);
    let v: serde_json::Value = serde_json::from_str(&o).unwrap();
    v["jobs"][0].clone()
}

/// `mjobctl -m CHANGE ID`: (exit code, the one line printed).
fn modify(d: &Daemon, change: &str, id: u64) -> (i32, String) {
    let (c, o, e) = run(d, "mjobctl", &["-m", change, &id.to_string()]);
    (c, format!("{o}{e}").trim().to_string())
}

#[test]
fn request_time_and_record_attributes_are_modified_and_checked() {
    let d = Daemon::start_with_config(Some(CFG));
    let id = d.submit("#!/bin/sh\ntrue\n", &["-h", "-l", "nodes=1,walltime=10:00"]);
    // nodecount / proccount
    assert_eq!(
        modify(&d, "nodecount=2", id),
        (0, "node count modified".into())
    );
    let j = detail(&d, id);
    assert_eq!(
        (j["summary"]["nodes"].as_u64(), j["tasks"].as_u64()),
        (Some(2), Some(2))
    );
    assert_eq!(
        modify(&d, "proccount=4", id),
        (0, format!("INFO:   ReqProcs for job {id} set to 4"))
    );
    assert_eq!(detail(&d, id)["summary"]["procs"], 4);
    assert_eq!(modify(&d, "proccount-=1", id).0, 0);
    assert_eq!(detail(&d, id)["summary"]["procs"], 3);
    // Checked as msub checks: 5 processors on 2 nodes needs 3 on each, and
    // n2 has only 2.
    let (c, m) = modify(&d, "proccount=5", id);
    assert_eq!(c, 1);
    assert!(
        m.contains("only 1 of the 2 usable nodes is that large"),
        "{m}"
    );
    assert_eq!(
        detail(&d, id)["summary"]["procs"],
        3,
        "a refused change changes nothing"
    );
    assert_eq!(modify(&d, "nodecount=1", id).0, 0);
    let (c, m) = modify(&d, "proccount=99", id);
    assert_eq!(c, 1);
    assert!(m.contains("no node has more than 4"), "{m}");
    assert_eq!(modify(&d, "nodecount=0", id).0, 1);
    assert_eq!(modify(&d, "nodecount=abc", id).0, 1);
    // features: set, add, remove; a feature no node has is refused.
    assert_eq!(modify(&d, "proccount=1", id).0, 0);
    assert_eq!(
        modify(&d, "features=fast", id),
        (0, "job features modified".into())
    );
    assert_eq!(detail(&d, id)["features"], serde_json::json!(["fast"]));
    let (c, m) = modify(&d, "features+=gpu", id);
    assert_eq!(c, 1, "{m}");
    assert!(m.contains("no node has features 'fast:gpu'"), "{m}");
    assert_eq!(modify(&d, "features-=fast", id).0, 0);
    assert_eq!(detail(&d, id)["features"], serde_json::json!([]));
    // partition: must exist.
    assert_eq!(
        modify(&d, "partition=blue", id),
        (0, "partition modified".into())
    );
    assert_eq!(detail(&d, id)["summary"]["partition"], "blue");
    assert_eq!(
        modify(&d, "partition=green", id),
        (
            1,
            "partition (green) does not exist, cannot modify partition for job".into()
        )
    );
    assert_eq!(modify(&d, "partition+=red", id).0, 1);
    assert_eq!(modify(&d, "partition=ALL", id).0, 0);
    // jobmem: msub's memory units.
    assert_eq!(
        modify(&d, "jobmem=2gb", id),
        (0, format!("INFO:   ReqMem for job {id} set to 2048M"))
    );
    assert_eq!(detail(&d, id)["mem_per_task_mb"], 2048);
    assert_eq!(modify(&d, "jobmem=lots", id).0, 1);
    // minstarttime: a future date holds it back; 0 clears it.
    assert_eq!(
        modify(&d, "minstarttime=+1:00:00", id),
        (0, "job minstarttime modified".into())
    );
    let after = detail(&d, id)["start_after"].as_i64().unwrap();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    assert!((after - now - 3600).abs() < 30, "{after} {now}");
    assert_eq!(modify(&d, "minstarttime=0", id).0, 0);
    assert!(detail(&d, id)["start_after"].is_null());
    assert_eq!(
        modify(&d, "minstarttime=soonish", id),
        (1, "job minstarttime cannot be modified".into())
    );
    // eeduration: the queue time the priority counts (administrators).
    assert_eq!(
        modify(&d, "eeduration=2:00:00", id),
        (0, format!("effective queue time specified for job {id}"))
    );
    // The priority's queue-time factor (minutes) counts from two hours ago.
    let qtime = |d: &Daemon| -> f64 {
        let (_, o, _) = run(d, "mdiag", &["-p", "-v", "-v", "--format=json"]);
        let v: serde_json::Value = serde_json::from_str(&o).unwrap();
        v["jobs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|j| j["id"] == id)
            .and_then(|j| {
                j["components"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|c| c["sub"] == "QTime")
                    .and_then(|c| c["value"].as_f64())
            })
            .unwrap_or_else(|| panic!("{o}"))
    };
    // (The priority is recomputed at the next iteration.)
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while qtime(&d) < 120.0 {
        assert!(
            std::time::Instant::now() < deadline,
            "queue time never counted"
        );
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    assert_eq!(
        modify(&d, "eeduration=0", id),
        (0, format!("effective queue time reset for job {id}"))
    );
    // group: must exist (administrators may name any group).
    let (c, m) = modify(&d, "group=nosuchgroup", id);
    assert_eq!(
        (c, m.as_str()),
        (1, "ERROR:  cannot locate group 'nosuchgroup'")
    );
    let root_group = text(
        &std::process::Command::new("id")
            .arg("-gn")
            .output()
            .unwrap()
            .stdout,
    )
    .trim()
    .to_string();
    assert_eq!(modify(&d, &format!("group={root_group}"), id).0, 0);
    assert_eq!(detail(&d, id)["summary"]["group"], root_group.as_str());
    // notification address, variables, messages
    assert_eq!(
        modify(&d, "notificationaddress=ops@example.org", id),
        (0, format!("notification address modified for job {id}"))
    );
    assert_eq!(detail(&d, id)["notification_address"], "ops@example.org");
    assert_eq!(
        modify(&d, "var=STEP:3", id),
        (0, format!("successfully set variables on job {id}"))
    );
    assert_eq!(modify(&d, "var=MODE:fast", id).0, 0);
    assert_eq!(
        detail(&d, id)["variables"],
        serde_json::json!([["STEP", "3"], ["MODE", "fast"]])
    );
    assert_eq!(
        modify(&d, "var-=STEP", id),
        (0, format!("successfully unset variables on job {id}"))
    );
    assert_eq!(
        detail(&d, id)["variables"],
        serde_json::json!([["MODE", "fast"]])
    );
    assert_eq!(modify(&d, "messages=checked by ops", id).0, 0);
    assert!(detail(&d, id)["messages"]
        .as_array()
        .unwrap()
        .iter()
        .any(|m| m == "checked by ops"));
    // Attributes Arches has no model for: refused with Moab's wording.
    for a in [
        "jobdisk",
        "jobswap",
        "loglevel",
        "rmxstring",
        "trig",
        "trigvar",
        "awduration",
        "env",
    ] {
        let (c, m) = modify(&d, &format!("{a}=x"), id);
        assert_eq!(c, 1, "{a}");
        assert!(
            m.starts_with(&format!(
                "ERROR:  modification of job attribute '{a}' not supported ("
            )),
            "{a}: {m}"
        );
    }
    assert_eq!(
        modify(&d, "colour=red", id),
        (1, "ERROR:  unknown attribute 'colour' specified".into())
    );
    // mjobctl -q wiki: one WIKI line.
    let (c, o, _) = run(&d, "mjobctl", &["-q", "wiki", &id.to_string()]);
    assert_eq!(c, 0);
    assert!(
        o.starts_with(&format!("{id} UPDATETIME="))
            && o.contains(";STATE=Hold;")
            && o.contains(";WCLIMIT=600;"),
        "{o}"
    );
    assert_eq!(o.lines().count(), 1);
    // state: removed cancels; completed and others are refused.
    assert_eq!(modify(&d, "state=completed", id).0, 1);
    assert_eq!(
        modify(&d, "state=running", id),
        (
            1,
            "ERROR:  can only set state to completed or removed".into()
        )
    );
    assert_eq!(
        modify(&d, "state=removed", id),
        (0, format!("job {id} Removed"))
    );
    assert_eq!(detail(&d, id)["summary"]["state"], "Removed");
}

#[test]
fn a_running_job_keeps_its_request() {
    let d = Daemon::start_with_config(Some(CFG));
    let id = d.submit("#!/bin/sh\nsleep 600\n", &["-l", "nodes=1,walltime=10:00"]);
    d.wait_state(id, "Running", std::time::Duration::from_secs(20));
    assert_eq!(
        modify(&d, "nodecount=2", id),
        (
            1,
            "ERROR:  cannot modify node count for a running or starting job".into()
        )
    );
    assert_eq!(
        modify(&d, "partition=blue", id),
        (1, "cannot modify partition for a running job".into())
    );
    assert_eq!(
        modify(&d, "features=fast", id),
        (1, "cannot modify features on active job".into())
    );
    assert_eq!(
        modify(&d, "minstarttime=+1:00", id),
        (1, "job minstarttime cannot be modified".into())
    );
    assert_eq!(
        modify(&d, "hostlist=n1", id),
        (
            1,
            format!("ERROR:  cannot modify hostlist of active job {id}")
        )
    );
    // What does not change the request still works on a running job.
    assert_eq!(modify(&d, "var=A:1", id).0, 0);
    assert_eq!(
        modify(&d, "state=removed", id),
        (0, format!("job {id} Removed"))
    );
}

/// `hostlist=` and `reqreservation=` (issue 16 part 3): what `-W
/// x=HOSTLIST:` and `-W x=FLAGS:ADVRES:` give at submission, changed on a
/// queued job and checked by the engine's own "can it ever run" test.
#[test]
fn host_lists_and_required_reservations_are_modified_and_checked() {
    let d = Daemon::start_with_config(Some(CFG));
    let id = d.submit("#!/bin/sh\ntrue\n", &["-h", "-l", "procs=1,walltime=10:00"]);
    let hostlist = |d: &Daemon| {
        d.checkjob(id)
            .lines()
            .find(|l| l.starts_with("Required HostList:"))
            .map(str::to_string)
    };
    assert_eq!(
        modify(&d, "hostlist=n2", id),
        (0, format!("hostlist set to 'n2' for job {id}"))
    );
    assert_eq!(hostlist(&d).as_deref(), Some("Required HostList: [n2]"));
    assert_eq!(
        modify(&d, "hostlist+=n1", id),
        (0, format!("hostlist set to 'n2,n1' for job {id}"))
    );
    assert_eq!(
        modify(&d, "hostlist-=n2", id),
        (0, format!("hostlist set to 'n1' for job {id}"))
    );
    assert_eq!(
        modify(&d, "hostlist=n9", id),
        (
            1,
            "ERROR:  invalid host 'n9' in hostlist (no such node)".into()
        )
    );
    // n1 is in partition red: a job of partition blue could never run there.
    assert_eq!(modify(&d, "partition=red", id).0, 0);
    assert_eq!(
        modify(&d, "partition=blue", id).0,
        1,
        "partition blue with hostlist n1"
    );
    assert_eq!(
        modify(&d, "hostlist=NONE", id),
        (0, format!("hostlist cleared for job {id}"))
    );
    assert_eq!(hostlist(&d), None);
    // A reservation the job must run in.
    let o = d.run(
        "mrsvctl",
        &[
            "-c",
            "-h",
            "n1",
            "-n",
            "maint",
            "-a",
            "USER==root",
            "-d",
            "1:00:00",
        ],
    );
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert_eq!(text(&o.stdout).trim(), "NOTE:  reservation maint created");
    let rsv = "maint";
    assert_eq!(
        modify(&d, &format!("reqreservation={rsv}"), id),
        (
            0,
            format!("required reservation set to '{rsv}' for job {id}")
        )
    );
    let cj = d.checkjob(id);
    assert!(cj.contains(&format!("ADVRES:{rsv}")), "{cj}");
    let (c, m) = modify(&d, "reqreservation=nosuch", id);
    assert_eq!(c, 1, "{m}");
    assert!(
        m.starts_with(&format!(
            "ERROR:  cannot modify reqreservation of job {id} ("
        )),
        "{m}"
    );
    assert_eq!(
        modify(&d, "reqreservation+=x", id).1,
        "ERROR:  reqreservation+= not supported: a job requires one reservation (use reqreservation=)"
    );
    // Released, it runs inside the reservation (n1, the one node of red).
    let o = d.run("mjobctl", &["-u", &id.to_string()]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let cj = d.wait_state(id, "Completed", std::time::Duration::from_secs(30));
    assert!(
        cj.contains("Execution Partition:  red") && cj.contains("Flags:          ADVRES:maint"),
        "{cj}"
    );
}
