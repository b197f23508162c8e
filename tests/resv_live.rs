//! Administrative reservations live: a daemon on two 2-processor nodes,
//! `mrsvctl -c` reservations, real `sleep` jobs. A reservation for another
//! user keeps our jobs off its node; a job on a reservation's access list
//! runs inside it; both survive a daemon restart (the store's
//! `reservations` table); `mrsvctl -r` frees the node and the waiting job
//! starts there.

mod common;

use std::time::{Duration, Instant};

use common::{text, Daemon};

const CFG: &str = "NODECFG[n1] PROCS=2\nNODECFG[n2] PROCS=2\nRMCFG[local] TYPE=LOCAL\n";

/// The node names in checkjob's "Allocated Nodes" section.
fn allocated(cj: &str) -> String {
    cj.split("Allocated Nodes:")
        .nth(1)
        .and_then(|r| r.lines().nth(1))
        .unwrap_or("")
        .to_string()
}

/// Polls `f` until it returns true or 20 s pass.
fn eventually(what: &str, mut f: impl FnMut() -> (bool, String)) {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let (ok, out) = f();
        if ok {
            return;
        }
        assert!(Instant::now() < deadline, "{what}\n{out}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn reservations_keep_others_off_admit_acl_jobs_survive_restart_and_release() {
    let mut d = Daemon::start_with_config(Some(CFG));
    // n1 for alice only, n2 for root (us).
    let out = d.run(
        "mrsvctl",
        &["-c", "-h", "n1", "-a", "USER==alice", "-d", "1:00:00"],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout).trim(),
        "NOTE:  reservation system.1 created"
    );
    let out = d.run(
        "mrsvctl",
        &["-c", "-h", "n2", "-a", "USER==root", "-n", "ours"],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout).trim(), "NOTE:  reservation ours created");
    // Bad requests are refused with a reason.
    let bad = d.run("mrsvctl", &["-c", "-h", "nosuch"]);
    assert!(!bad.status.success());
    assert!(
        text(&bad.stderr).contains("host expression 'nosuch' matches no node"),
        "{}",
        text(&bad.stderr)
    );

    let res = text(&d.run("showres", &[]).stdout);
    let row = res
        .lines()
        .find(|l| l.starts_with("system.1"))
        .unwrap_or_else(|| panic!("no system.1 row\n{res}"));
    let f: Vec<&str> = row.split_whitespace().collect();
    assert_eq!((f[1], f[2], f[6]), ("User", "-", "1/2"), "{res}");
    assert!(res.contains("2 reservations located"), "{res}");

    // Our first job runs inside our reservation on n2; the second cannot
    // use alice's n1.
    let a = d.submit("sleep 300\n", &["-l", "nodes=1:ppn=2,walltime=00:10:00"]);
    let cj = d.wait_state(a, "Running", Duration::from_secs(20));
    assert!(allocated(&cj).contains("n2"), "{cj}");
    let b = d.submit("sleep 300\n", &["-l", "nodes=1:ppn=2,walltime=00:10:00"]);
    std::thread::sleep(Duration::from_secs(2));
    let cj = d.checkjob(b);
    assert!(cj.contains("State: Idle"), "{cj}");

    // checknode n1 lists the reservation; mrsvctl -q shows its access list.
    let cn = text(&d.run("checknode", &["n1"]).stdout);
    assert!(cn.contains("system.1"), "{cn}");
    let q = text(&d.run("mrsvctl", &["-q", "system.1"]).stdout);
    assert!(q.contains("ACL:   USER==alice"), "{q}");
    assert!(q.contains("HostExp='n1'"), "{q}");

    // A restart keeps both reservations, and b still waits.
    d.stop();
    d.spawn();
    let res = text(&d.run("showres", &[]).stdout);
    assert!(res.lines().any(|l| l.starts_with("system.1")), "{res}");
    assert!(res.lines().any(|l| l.starts_with("ours")), "{res}");
    std::thread::sleep(Duration::from_secs(1));
    assert!(d.checkjob(b).contains("State: Idle"), "{}", d.checkjob(b));

    // Releasing alice's reservation lets b start on n1.
    let out = d.run("mrsvctl", &["-r", "system.1"]);
    assert_eq!(text(&out.stdout).trim(), "reservation system.1 released");
    let cj = d.wait_state(b, "Running", Duration::from_secs(20));
    assert!(allocated(&cj).contains("n1"), "{cj}");
    let out = d.run("mrsvctl", &["-r", "system.1"]);
    assert!(!out.status.success());
    assert!(text(&out.stderr).contains("cannot locate reservation 'system.1'"));
    eventually("system.1 gone from showres", || {
        let res = text(&d.run("showres", &[]).stdout);
        (!res.lines().any(|l| l.starts_with("system.1")), res)
    });
    // The id counter survives: the next one is system.2.
    d.stop();
    d.spawn();
    let out = d.run(
        "mrsvctl",
        &["-c", "-t", "1", "-s", "+1:00:00", "-d", "10:00"],
    );
    assert_eq!(
        text(&out.stdout).trim(),
        "NOTE:  reservation system.2 created"
    );
    for id in [a, b] {
        let _ = d.run("canceljob", &[&id.to_string()]);
    }
}
