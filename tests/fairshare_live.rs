//! Fairshare feeds priority, end to end: a daemon charges the usage of
//! finished and running jobs per account, and an account over its
//! `FSTARGET` loses priority (`mdiag -p`'s FS column, checkjob's priority
//! analysis, `mdiag -f`), so a job of the account under its target starts
//! first although it was submitted later: with accounts (any uid), and
//! with two real users (root only: it creates a user).

mod common;

use std::path::Path;
use std::time::Duration;

use common::{text, Daemon};

const CFG: &str = "NODECFG[n1] PROCS=2\nNODECFG[n2] PROCS=2\nRMCFG[local] TYPE=LOCAL\n\
FSPOLICY DEDICATEDPS\nFSINTERVAL 1:00:00\nFSDEPTH 2\nFSDECAY 1.0\n\
FSWEIGHT 1\nFSACCOUNTWEIGHT 100\nQUEUETIMEWEIGHT 0\n\
ACCOUNTCFG[heavy] FSTARGET=50\nACCOUNTCFG[light] FSTARGET=50\n";

fn wait_for(d: &Daemon, id: u64, what: &str, pred: impl Fn(&str) -> bool) -> String {
    d.wait_checkjob(id, what, Duration::from_secs(30), pred)
}

#[test]
fn an_account_over_its_target_loses_priority() {
    let d = Daemon::start_with_config(Some(CFG));
    let w = Duration::from_secs(30);
    // All the usage so far is heavy's: a finished job, then a running one
    // that holds the whole machine (and keeps heavy at 100 % of the usage).
    let first = d.submit("sleep 1\n", &["-A", "heavy", "-l", "procs=4,walltime=60"]);
    d.wait_state(first, "Completed", w);
    let blocker = d.submit(
        "sleep 300\n",
        &["-A", "heavy", "-l", "procs=4,walltime=600"],
    );
    d.wait_state(blocker, "Running", w);
    // heavy submits first, light later; FIFO would start heavy's first.
    let jh = d.submit("sleep 60\n", &["-A", "heavy", "-l", "procs=4,walltime=120"]);
    let jl = d.submit("sleep 60\n", &["-A", "light", "-l", "procs=4,walltime=120"]);
    d.wait_considered(jh, w);
    d.wait_considered(jl, w);

    // heavy: 100 × (50 − 100) = −5000; light: 100 × (50 − 0) = +5000. The
    // FS column shows the weighted subcomponent, signed.
    let out = text(&d.run("mdiag", &["-p"]).stdout);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines[2], "Job                    PRIORITY*     FS(Accnt)",
        "{out}"
    );
    assert_eq!(
        lines[3], "             Weights   --------       1(  100)",
        "{out}"
    );
    assert_eq!(
        lines[5],
        format!("{jl:<20}       5000   100.0(5000.)"),
        "{out}"
    );
    assert_eq!(
        lines[6],
        format!("{jh:<20}      -5000   100.0(-5000)"),
        "{out}"
    );
    let cj = text(&d.run("checkjob", &["-v", "-v", &jh.to_string()]).stdout);
    assert!(
        cj.contains(&format!(
            "Priority Analysis:\nJob                    PRIORITY*     FS(Accnt)\n             Weights   --------       1(  100)\n\n{jh:<20}      -5000   100.0(-5000)\n"
        )),
        "{cj}"
    );

    // mdiag -f: heavy over its target, light under it with no usage yet
    // (both more than 5 points away: starred).
    let f = text(&d.run("mdiag", &["-f"]).stdout);
    assert!(f.contains("\nFS Policy: DEDICATEDPS\n"), "{f}");
    assert!(
        f.contains("\nACCT\n-------------\nheavy*          100.00  50.00   100.00 -------\nlight*            0.00  50.00  ------- -------\n"),
        "{f}"
    );

    // Once the machine is free, light's job starts first; heavy's waits.
    let c = d.run("canceljob", &[&blocker.to_string()]);
    assert!(c.status.success(), "{}", text(&c.stderr));
    d.wait_state(jl, "Running", w);
    let h = d.wait_considered(jh, w);
    assert!(h.contains("State: Idle"), "{h}");
    for id in [jl, jh] {
        let _ = d.run("canceljob", &[&id.to_string()]);
    }
    let _ = wait_for(&d, jh, "not gone", |o| !o.contains("State: Idle"));
}

/// The same with users: root has used the machine, a second user has not;
/// FSUSERWEIGHT makes root's later job wait behind the other user's.
#[test]
fn a_user_over_its_target_loses_priority() {
    if !common::root_or_skip("a_user_over_its_target_loses_priority") {
        return;
    }
    let user = common::ensure_user("archesfs");
    let cfg = format!(
        "NODECFG[n1] PROCS=2\nNODECFG[n2] PROCS=2\nRMCFG[local] TYPE=LOCAL\n\
FSPOLICY DEDICATEDPS\nFSWEIGHT 1\nFSUSERWEIGHT 10\nQUEUETIMEWEIGHT 0\n\
USERCFG[root] FSTARGET=50\nUSERCFG[{user}] FSTARGET=50\n"
    );
    let d = Daemon::start_with_config(Some(&cfg));
    let w = Duration::from_secs(30);
    let first = d.submit("sleep 1\n", &["-l", "procs=4,walltime=60"]);
    d.wait_state(first, "Completed", w);
    let blocker = d.submit("sleep 300\n", &["-l", "procs=4,walltime=600"]);
    d.wait_state(blocker, "Running", w);
    let mine = d.submit("sleep 60\n", &["-l", "procs=4,walltime=120"]);
    let dir = tempfile::tempdir().unwrap();
    common::set_mode(dir.path(), 0o777);
    let out = common::run_as_user(
        &d,
        &user,
        "msub",
        &["-l", "procs=4,walltime=120"],
        "sleep 60\n",
        Path::new(dir.path()),
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let theirs = common::parse_id(&out);
    d.wait_considered(mine, w);
    d.wait_considered(theirs, w);
    // root: 10 × (50 − 100) = −500; the other user: 10 × 50 = +500.
    let p = text(&d.run("mdiag", &["-p"]).stdout);
    let lines: Vec<&str> = p.lines().collect();
    assert_eq!(
        lines[2], "Job                    PRIORITY*     FS( User)",
        "{p}"
    );
    assert_eq!(
        lines[5],
        format!("{theirs:<20}        500   100.0(500.0)"),
        "{p}"
    );
    assert_eq!(
        lines[6],
        format!("{mine:<20}       -500   100.0(-500.)"),
        "{p}"
    );
    let c = d.run("canceljob", &[&blocker.to_string()]);
    assert!(c.status.success(), "{}", text(&c.stderr));
    d.wait_state(theirs, "Running", w);
    let h = d.wait_considered(mine, w);
    assert!(h.contains("State: Idle"), "{h}");
    for id in [theirs, mine] {
        let _ = d.run("canceljob", &[&id.to_string()]);
    }
    let _ = wait_for(&d, mine, "not gone", |o| !o.contains("State: Idle"));
}

/// The share (`%` column of `mdiag -f`) of account `acct`.
fn account_share(f: &str, acct: &str) -> f64 {
    f.lines()
        .find(|l| l.trim_start_matches(' ').starts_with(acct))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no share of {acct} in:\n{f}"))
}

/// `FSPOLICY UTILIZEDPS` charges what the job's processes used (measured by
/// the local resource manager when the job ends), not the processors it
/// held: a job that sleeps costs its account nearly nothing, one that
/// computes for as long costs its account nearly all the usage. Under
/// `DEDICATEDPS` both would be charged alike.
#[test]
fn utilizedps_charges_the_processor_time_jobs_used() {
    let cfg = "NODECFG[n1] PROCS=2\nRMCFG[local] TYPE=LOCAL\n\
FSPOLICY UTILIZEDPS\nFSINTERVAL 1:00:00\nFSDEPTH 2\nFSDECAY 1.0\n\
ACCOUNTCFG[busy] FSTARGET=50\nACCOUNTCFG[idle] FSTARGET=50\n";
    let d = Daemon::start_with_config(Some(cfg));
    let w = Duration::from_secs(60);
    let idle = d.submit("sleep 3\n", &["-A", "idle", "-l", "procs=1,walltime=60"]);
    // Computes for about 3 seconds of its own processor time.
    let busy = d.submit(
        "end=$(($(date +%s) + 3)); while [ \"$(date +%s)\" -lt \"$end\" ]; do i=0; while [ $i -lt 2000 ]; do i=$((i+1)); done; done\n",
        &["-A", "busy", "-l", "procs=1,walltime=60"],
    );
    d.wait_state(idle, "Completed", w);
    d.wait_state(busy, "Completed", w);
    let f = text(&d.run("mdiag", &["-f"]).stdout);
    assert!(f.contains("\nFS Policy: UTILIZEDPS\n"), "{f}");
    let (b, i) = (account_share(&f, "busy"), account_share(&f, "idle"));
    assert!(b > 90.0 && i < 10.0, "busy {b} %, idle {i} %:\n{f}");
}

/// `FSPOLICY DEDICATEDPES` charges processor-equivalents: a one-processor
/// job holding three quarters of the machine's memory is charged as three
/// processors, so its account's share is well above the other's although
/// both ran one processor for as long.
#[test]
fn dedicatedpes_charges_processor_equivalents() {
    let cfg = "NODECFG[n1] PROCS=4 MEM=4000\nRMCFG[local] TYPE=LOCAL\n\
FSPOLICY DEDICATEDPES\nFSINTERVAL 1:00:00\nFSDEPTH 2\nFSDECAY 1.0\n\
ACCOUNTCFG[big] FSTARGET=50\nACCOUNTCFG[small] FSTARGET=50\n";
    let d = Daemon::start_with_config(Some(cfg));
    let w = Duration::from_secs(60);
    let big = d.submit(
        "sleep 2\n",
        &["-A", "big", "-l", "procs=1,mem=3000mb,walltime=60"],
    );
    let small = d.submit("sleep 2\n", &["-A", "small", "-l", "procs=1,walltime=60"]);
    d.wait_state(big, "Completed", w);
    d.wait_state(small, "Completed", w);
    let f = text(&d.run("mdiag", &["-f"]).stdout);
    assert!(f.contains("\nFS Policy: DEDICATEDPES\n"), "{f}");
    // 3 : 1 for equal run times; whole-second start and end times can make
    // the runs differ by a second (2 s against 3 s at worst: 2 : 1).
    let (b, s) = (account_share(&f, "big"), account_share(&f, "small"));
    assert!(
        b >= 2.0 * s - 0.01 && b > 60.0,
        "big {b} %, small {s} %:\n{f}"
    );
}

/// A share tree (FSTREE) decides the order without any FSTARGET: heavy and
/// light each have 50 of root's 100 shares; heavy has used everything, so
/// its node is 50 shares over (factor −50 × K, K = 1 + 1 + 1 for FSDEPTH 2,
/// FSDECAY 1.0) and light's 50 under: light's later job starts first.
#[test]
fn an_fstree_changes_which_job_starts_first() {
    let cfg = "NODECFG[n1] PROCS=2\nNODECFG[n2] PROCS=2\nRMCFG[local] TYPE=LOCAL\n\
FSPOLICY DEDICATEDPS\nFSINTERVAL 1:00:00\nFSDEPTH 2\nFSDECAY 1.0\n\
FSWEIGHT 1\nFSACCOUNTWEIGHT 100\nQUEUETIMEWEIGHT 0\n\
FSTREE[root] SHARES=100 MEMBERLIST=acct:heavy,acct:light\n\
FSTREE[acct:heavy] SHARES=50\nFSTREE[acct:light] SHARES=50\n";
    let d = Daemon::start_with_config(Some(cfg));
    let w = Duration::from_secs(30);
    let first = d.submit("sleep 1\n", &["-A", "heavy", "-l", "procs=4,walltime=60"]);
    d.wait_state(first, "Completed", w);
    let blocker = d.submit(
        "sleep 300\n",
        &["-A", "heavy", "-l", "procs=4,walltime=600"],
    );
    d.wait_state(blocker, "Running", w);
    let jh = d.submit("sleep 60\n", &["-A", "heavy", "-l", "procs=4,walltime=120"]);
    let jl = d.submit("sleep 60\n", &["-A", "light", "-l", "procs=4,walltime=120"]);
    d.wait_considered(jh, w);
    d.wait_considered(jl, w);

    // FS(Accnt) = 100 × tree factor: light +150, heavy −150 (Moab prints
    // the raw value in 5 characters: -1500).
    let out = text(&d.run("mdiag", &["-p"]).stdout);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines[5],
        format!("{jl:<20}      15000   100.0(15000)"),
        "{out}"
    );
    assert_eq!(
        lines[6],
        format!("{jh:<20}     -15000   100.0(-1500)"),
        "{out}"
    );

    // mdiag -f ends with the tree: heavy used all of root's 100 shares.
    let f = text(&d.run("mdiag", &["-f"]).stdout);
    let tree = f
        .split("\nShare Tree Overview for partition 'ALL'\n")
        .nth(1)
        .unwrap_or_else(|| panic!("no tree in:\n{f}"));
    let rows: Vec<&str> = tree.lines().collect();
    assert_eq!(rows.len(), 5, "{f}");
    assert_eq!(
        rows[0],
        "Name          Usage    Target                (FSFACTOR)"
    );
    assert!(
        rows[2].starts_with("root        100.00    100.00  of   100.00 (node: "),
        "{f}"
    );
    assert!(
        rows[3].starts_with("- heavy     100.00     50.00  of   100.00 (acct: ")
            && rows[3].ends_with(") (-150.00)"),
        "{f}"
    );
    assert_eq!(
        rows[4], "- light       0.00     50.00  of   100.00 (acct: 0.00) (150.00)",
        "{f}"
    );

    let c = d.run("canceljob", &[&blocker.to_string()]);
    assert!(c.status.success(), "{}", text(&c.stderr));
    d.wait_state(jl, "Running", w);
    let h = d.wait_considered(jh, w);
    assert!(h.contains("State: Idle"), "{h}");
    for id in [jl, jh] {
        let _ = d.run("canceljob", &[&id.to_string()]);
    }
    let _ = wait_for(&d, jh, "not gone", |o| !o.contains("State: Idle"));
}
