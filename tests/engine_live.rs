//! The engine live: a daemon on two 2-processor nodes, real `sleep` jobs, and
//! checkjob/showstart/showres/showbf reporting the core's reservation and
//! backfill windows; a short job backfills, a long one waits.

mod common;

use std::time::Duration;

use common::{text, Daemon};

const CFG: &str = "NODECFG[n1] PROCS=2\nNODECFG[n2] PROCS=2\nRMCFG[local] TYPE=LOCAL\n";

/// Seconds of a Moab duration/offset such as `-00:05:01`, `1:58`,
/// `1:05:54:59` or `INFINITY` (`None`).
fn secs(t: &str) -> Option<i64> {
    let t = t.trim().trim_end_matches(')');
    let (neg, t) = match t.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, t),
    };
    let parts: Vec<i64> = t
        .split(':')
        .map(|p| p.parse().ok())
        .collect::<Option<_>>()?;
    let v = match parts.as_slice() {
        [d, h, m, s] => ((d * 24 + h) * 60 + m) * 60 + s,
        [h, m, s] => (h * 60 + m) * 60 + s,
        [m, s] => m * 60 + s,
        [s] => *s,
        _ => return None,
    };
    Some(if neg { -v } else { v })
}

fn assert_near(what: &str, got: i64, want: i64, out: &str) {
    assert!(
        (got - want).abs() <= 4,
        "{what}: got {got}s, expected about {want}s\n{out}"
    );
}

/// The showres row of `id`: (type, state, start, end, duration, N/P).
fn showres_row(out: &str, id: u64) -> Option<Vec<String>> {
    out.lines()
        .map(|l| l.split_whitespace().map(String::from).collect::<Vec<_>>())
        .find(|f| f.first().is_some_and(|x| *x == id.to_string()))
}

/// Polls checkjob until `pred` holds for its output.
fn wait_for(d: &Daemon, id: u64, what: &str, pred: impl Fn(&str) -> bool) -> String {
    d.wait_checkjob(id, what, Duration::from_secs(30), pred)
}

#[test]
fn reservation_showstart_showres_showbf_and_backfill_live() {
    let d = Daemon::start_with_config(Some(CFG));
    let a = d.submit("sleep 300\n", &["-l", "nodes=1:ppn=2,walltime=00:01:00"]);
    let b = d.submit("sleep 300\n", &["-l", "nodes=1:ppn=1,walltime=00:02:00"]);
    d.wait_state(a, "Running", Duration::from_secs(20));
    d.wait_state(b, "Running", Duration::from_secs(20));
    // The big job needs all four processors: it waits for b (2 minutes).
    let big = d.submit("sleep 1\n", &["-l", "procs=4,walltime=00:01:00"]);
    let cj = wait_for(&d, big, "no reservation", |o| o.contains("Reservation '"));

    // showres: b's end is where the big job's reservation starts.
    let res = text(&d.run("showres", &[]).stdout);
    let row_b = showres_row(&res, b).unwrap_or_else(|| panic!("no row for {b}\n{res}"));
    let row_big = showres_row(&res, big).unwrap_or_else(|| panic!("no row for {big}\n{res}"));
    assert_eq!(
        (row_b[1].as_str(), row_b[2].as_str()),
        ("Job", "R"),
        "{res}"
    );
    assert_eq!(
        (row_big[1].as_str(), row_big[2].as_str()),
        ("Job", "I"),
        "{res}"
    );
    let b_end = secs(&row_b[4]).expect("b end");
    assert_near("b ends after its 2 minute walltime", b_end, 120, &res);
    let rsv_start = secs(&row_big[3]).expect("rsv start");
    assert_near("reservation starts at b's end", rsv_start, b_end, &res);
    assert_eq!(secs(&row_big[5]), Some(60), "{res}");
    assert_eq!(row_big[6], "2/4", "pinned to both nodes, 4 procs\n{res}");

    // checkjob: Reservation '<id>' (start -> end  Duration: 00:01:00)
    let line = cj
        .lines()
        .find(|l| l.starts_with(&format!("Reservation '{big}' (")))
        .unwrap_or_else(|| panic!("no reservation line\n{cj}"));
    let inner = line.split_once('(').map(|x| x.1).unwrap_or_default();
    let f: Vec<&str> = inner.split_whitespace().collect();
    assert_eq!((f[1], f[3]), ("->", "Duration:"), "{line}");
    let (s, e) = (secs(f[0]).expect("start"), secs(f[2]).expect("end"));
    assert_near("checkjob reservation start", s, rsv_start, &cj);
    assert_eq!(e - s, 60, "{line}");
    assert_eq!(secs(f[4]), Some(60), "{line}");

    // showstart: the reservation's start.
    let ss = text(&d.run("showstart", &[&big.to_string()]).stdout);
    let est = ss
        .lines()
        .find_map(|l| l.strip_prefix("Estimated Rsv based start in"))
        .and_then(|r| r.split_whitespace().next())
        .and_then(secs)
        .unwrap_or_else(|| panic!("no estimate\n{ss}"));
    assert_near("showstart", est, rsv_start, &ss);

    // showbf: one processor on n2 stays idle until the reservation.
    let bf = text(&d.run("showbf", &[]).stdout);
    let win: Vec<Vec<&str>> = bf
        .lines()
        .filter(|l| l.starts_with("ALL "))
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(win.len(), 1, "one window\n{bf}");
    assert_eq!((win[0][1], win[0][2]), ("1", "1"), "1 task on 1 node\n{bf}");
    let dur = secs(win[0][4]).expect("window duration");
    assert_near("window lasts until the reservation", dur, rsv_start, &bf);

    // A long job does not fit the window and waits behind the reservation...
    let long = d.submit("sleep 300\n", &["-l", "nodes=1:ppn=1,walltime=00:10:00"]);
    // ...while a short one submitted after it backfills into the window.
    let short = d.submit("sleep 300\n", &["-l", "nodes=1:ppn=1,walltime=00:00:30"]);
    d.wait_state(short, "Running", Duration::from_secs(20));
    let long_out = d.checkjob(long);
    assert!(long_out.contains("State: Idle"), "{long_out}");
    let big_out = d.checkjob(big);
    assert!(big_out.contains("State: Idle"), "{big_out}");
    assert!(
        big_out.contains(&format!("Reservation '{big}' (")),
        "{big_out}"
    );
    let stats = text(&d.run("showstats", &[]).stdout);
    let backfilled = stats
        .lines()
        .find_map(|l| l.strip_prefix("Backfill Jobs:"))
        .and_then(|v| v.trim().parse::<u64>().ok());
    assert_eq!(backfilled, Some(1), "{stats}");
    // The window is used up: nothing is left idle now.
    let bf = text(&d.run("showbf", &[]).stdout);
    assert!(!bf.lines().any(|l| l.starts_with("ALL ")), "{bf}");
    // A hypothetical 4-processor job could start once b ends.
    let hs = text(&d.run("showstart", &["4@60"]).stdout);
    let hyp = hs
        .lines()
        .find_map(|l| l.strip_prefix("Estimated Rsv based start in"))
        .and_then(|r| r.split_whitespace().next())
        .and_then(secs)
        .unwrap_or_else(|| panic!("no estimate\n{hs}"));
    assert_near("hypothetical start", hyp, rsv_start, &hs);
}

/// `mdiag -c`, `-q` and `-u` on a live daemon: the configured classes, QoS and
/// users in the Maui/Moab layouts, with usage counted from running jobs.
#[test]
fn mdiag_credentials_show_the_configuration_and_usage() {
    let cfg = format!(
        "{CFG}QOSCFG[high] PRIORITY=1000 QFLAGS=PREEMPTOR\n\
         CLASSCFG[batch] QDEF=high MAXJOB=2,4 DEFAULT.WCLIMIT=00:10:00\n\
         USERCFG[DEFAULT] MAXPROC=8\n"
    );
    let d = Daemon::start_with_config(Some(&cfg));
    let id = d.submit("sleep 30\n", &["-q", "batch", "-l", "procs=1"]);
    d.wait_state(id, "Running", Duration::from_secs(20));

    let c = text(&d.run("mdiag", &["-c"]).stdout);
    assert!(c.starts_with("Class/Queue Status\n"), "{c}");
    let batch = c.lines().find(|l| l.starts_with("batch ")).expect(&c);
    assert!(batch.contains(" high "), "{c}");
    assert!(batch.ends_with("  MAXJOB=1:2,4"), "{c}");
    assert!(c.contains("\n  DEFAULT.WCLIMIT=00:10:00\n"), "{c}");

    let q = text(&d.run("mdiag", &["-q"]).stdout);
    let high = q.lines().find(|l| l.starts_with("high ")).expect(&q);
    assert!(high.contains(" 1000 ") && high.contains("PREEMPTOR"), "{q}");
    assert!(q.contains("  Classes:  batch\n"), "{q}");
    assert!(q.lines().any(|l| l.starts_with("DEFAULT ")), "{q}");

    let u = text(&d.run("mdiag", &["-u"]).stdout);
    assert!(u.starts_with("evaluating user information\nName "), "{u}");
    d.run("canceljob", &[&id.to_string()]);
}

/// A class mapped to a NOBF QoS (`CLASSCFG[bf] QDEF=slow`, `QOSCFG[slow]
/// QFLAGS=NOBF`): `msub -q bf` gets QoS slow and never backfills, while a
/// job of another class, submitted after it, does; asking for a QoS the
/// credentials do not grant is refused with Moab's message.
#[test]
fn class_default_qos_nobf_and_qos_access_live() {
    let cfg = format!(
        "{CFG}QOSCFG[slow] QFLAGS=NOBF\nQOSCFG[fast] PRIORITY=10\n\
         CLASSCFG[bf] QDEF=slow\nCLASSCFG[other] PRIORITY=0\nUSERCFG[nobody] QLIST=fast\n"
    );
    let d = Daemon::start_with_config(Some(&cfg));
    let a = d.submit("sleep 300\n", &["-l", "nodes=1:ppn=2,walltime=00:01:00"]);
    let b = d.submit("sleep 300\n", &["-l", "nodes=1:ppn=1,walltime=00:02:00"]);
    d.wait_state(a, "Running", Duration::from_secs(20));
    d.wait_state(b, "Running", Duration::from_secs(20));
    let big = d.submit("sleep 1\n", &["-l", "procs=4,walltime=00:01:00"]);
    wait_for(&d, big, "no reservation", |o| o.contains("Reservation '"));
    // One processor is idle until the reservation: a 30-second job fits.
    let slow = d.submit("sleep 300\n", &["-q", "bf", "-l", "procs=1,walltime=30"]);
    let other = d.submit("sleep 300\n", &["-q", "other", "-l", "procs=1,walltime=30"]);
    d.wait_state(other, "Running", Duration::from_secs(20));
    let out = d.checkjob(slow);
    assert!(out.contains("State: Idle"), "{out}");
    assert!(out.contains("  qos:slow"), "class bf's QDEF\n{out}");
    assert!(d.checkjob(other).contains("State: Running"));

    // QoS access: slow belongs to class bf's list, fast to user nobody's.
    for (class, qos) in [("other", "slow"), ("bf", "fast"), ("other", "nosuch")] {
        let script = d.home.path().join("denied.sh");
        std::fs::write(&script, "true\n").unwrap();
        let out = d.run(
            "msub",
            &[
                "-q",
                class,
                "-l",
                &format!("qos={qos}"),
                &script.to_string_lossy(),
            ],
        );
        assert!(!out.status.success(), "{class}/{qos} accepted");
        assert_eq!(
            text(&out.stderr).trim_end(),
            "ERROR:  cannot submit job - invalid QOS requested",
            "{class}/{qos}"
        );
    }
    // mjobctl -m qos= checks the same access.
    let m = d.run("mjobctl", &["-m", "qos=fast", &slow.to_string()]);
    assert!(!m.status.success());
    let err = text(&m.stderr) + &text(&m.stdout);
    assert!(
        err.contains(&format!(
            "job {slow} does not have access to QOS fast (QOSList: slow)"
        )),
        "{err}"
    );
}

/// `mdiag -p` renders what the daemon computed (the core's weight table and
/// breakdowns, end to end): credential columns first in Moab's order, held
/// jobs only with `-v -v`, running jobs with `-v`; `--xml`; checkjob -v -v's
/// priority analysis is the same table.
#[test]
fn mdiag_p_live_from_the_daemon() {
    let cfg = format!(
        "{CFG}QOSWEIGHT 2\nACCOUNTWEIGHT 1\nQOSCFG[hi] PRIORITY=50\nACCOUNTCFG[acct] PRIORITY=5\n"
    );
    let d = Daemon::start_with_config(Some(&cfg));
    let run = d.submit("sleep 300\n", &["-l", "nodes=2:ppn=2,walltime=00:10:00"]);
    d.wait_state(run, "Running", Duration::from_secs(20));
    let a = d.submit(
        "sleep 1\n",
        &["-A", "acct", "-l", "procs=1,walltime=60,qos=hi"],
    );
    let held = d.submit("sleep 1\n", &["-h", "-l", "procs=1,walltime=60"]);
    wait_for(&d, a, "no iteration", |o| o.contains("IterationJobRank"));
    let out = text(&d.run("mdiag", &["-p"]).stdout);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines[0], "diagnosing job priority information (partition: ALL)",
        "{out}"
    );
    assert_eq!(
        lines[2], "Job                    PRIORITY*   Cred(Accnt:  QOS)  Serv(QTime)",
        "{out}"
    );
    assert_eq!(
        lines[3], "             Weights   --------       1(    1:    2)     1(    1)",
        "{out}"
    );
    // 1×5 (account) + 2×50 (QoS) + 0 minutes queued.
    assert_eq!(
        lines[5],
        format!("{a:<20}        105   100.0(  5.0: 50.0)   0.0(  0.0)"),
        "{out}"
    );
    assert!(
        !out.contains(&format!("\n{held} ")),
        "held job listed\n{out}"
    );
    assert!(
        !out.contains(&format!("\n{run} ")),
        "running job listed\n{out}"
    );
    assert!(
        out.ends_with("\n\n* indicates system prio set on job\n"),
        "{out}"
    );
    let v = text(&d.run("mdiag", &["-p", "-v"]).stdout);
    assert!(v.contains(&format!("---Active Jobs---\n{run} ")), "{v}");
    let vv = text(&d.run("mdiag", &["-p", "-v", "-v"]).stdout);
    assert!(vv.contains(&format!("\n{held} ")), "{vv}");
    let xml = text(&d.run("mdiag", &["-p", "--xml"]).stdout);
    assert!(
        xml.starts_with("<Data><job name=\"template\"><pc name=\"Cred\" value=\"1\">"),
        "{xml}"
    );
    assert!(
        xml.contains(&format!("<job name=\"{a}\" priority=\"105.000000\">")),
        "{xml}"
    );
    let cj = text(&d.run("checkjob", &["-v", "-v", &a.to_string()]).stdout);
    assert!(
        cj.contains("Priority Analysis:\nJob                    PRIORITY*   Cred(Accnt:  QOS)"),
        "{cj}"
    );
}

/// `msub -a` date `secs` from now, as `YYYYMMDDhhmm` in UTC (the tests' TZ).
fn start_date_in(secs: i64) -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock")
        .as_secs() as i64;
    let out = std::process::Command::new("date")
        .args(["-u", "-d", &format!("@{}", now + secs), "+%Y%m%d%H%M"])
        .output()
        .expect("date");
    text(&out.stdout).trim().to_string()
}

/// Reasons on a live daemon. The LSF rule: job `big` waits for a job
/// without a wall-clock limit, so its start cannot be computed (checkjob
/// and showstart say so) and nothing backfills; a start date shows as Moab's
/// duration to it (mdiag -b, checkjob), never as an epoch.
#[test]
fn reasons_lsf_rule_and_start_dates_live() {
    let d = Daemon::start_with_config(Some(CFG));
    let unlimited = d.submit("sleep 300\n", &["-l", "nodes=1:ppn=2"]);
    d.wait_state(unlimited, "Running", Duration::from_secs(20));
    let big = d.submit("sleep 1\n", &["-l", "procs=4,walltime=00:01:00"]);
    let small = d.submit("sleep 1\n", &["-l", "procs=1,walltime=30"]);
    let dated = d.submit(
        "sleep 1\n",
        &["-a", &start_date_in(7200), "-l", "procs=1,walltime=30"],
    );
    let cj = wait_for(&d, big, "no reason", |o| {
        o.contains("NOTE:  job cannot run")
    });
    assert!(
        cj.contains("NOTE:  job cannot run in partition ALL (start time cannot be computed: a job ahead of it has no wall-clock limit)"),
        "{cj}"
    );
    let cs = wait_for(&d, small, "no reason", |o| {
        o.contains("NOTE:  job cannot run")
    });
    assert!(
        cs.contains(&format!(
            "(cannot backfill: job {big} waits for a job without a wall-clock limit"
        )),
        "{cs}"
    );
    assert!(cs.contains("State: Idle"), "small job backfilled\n{cs}");
    let ss = text(&d.run("showstart", &[&big.to_string()]).stdout);
    assert!(
        ss.contains("Estimated Rsv based start cannot be determined: start time cannot be computed: it waits for a job without a wall-clock limit"),
        "{ss}"
    );
    assert!(!ss.contains("configured resources"), "{ss}");
    // No wall-clock limit: showstart of the running job completes INFINITY.
    let su = text(&d.run("showstart", &[&unlimited.to_string()]).stdout);
    assert!(su.contains("requires 2 procs for INFINITY"), "{su}");
    assert!(
        su.contains("Estimated Rsv based completion in           INFINITY\n"),
        "{su}"
    );

    // The dated job was submitted last: wait until a plan has considered
    // it (mdiag -b reads the same plan as checkjob).
    wait_for(&d, dated, "no start date block", |o| {
        o.contains("BLOCK MSG: job has not reached its start date (")
    });
    let b = text(&d.run("mdiag", &["-b"]).stdout);
    let line = b
        .lines()
        .find(|l| l.starts_with(&format!("job {dated:<20} ")))
        .unwrap_or_else(|| panic!("no line for {dated}\n{b}"));
    let rest = line
        .strip_prefix(&format!("job {dated:<20} has not reached its start date ("))
        .and_then(|r| r.strip_suffix(" to startdate)"))
        .unwrap_or_else(|| panic!("{line}"));
    let left = secs(rest).unwrap_or_else(|| panic!("{line}"));
    assert!((7000..=7200).contains(&left), "{line}");
    // The date has minute precision, so what is left is in (7140, 7200]:
    // exactly 2:00:00 when the submission fell on the minute's first second.
    let cd = d.checkjob(dated);
    let left = cd
        .lines()
        .find_map(|l| l.strip_prefix("BLOCK MSG: job has not reached its start date ("))
        .and_then(|r| r.split_once(" to startdate)"))
        .and_then(|(d, _)| secs(d))
        .unwrap_or_else(|| panic!("no start date block message\n{cd}"));
    assert!((7000..=7200).contains(&left), "{cd}");
}

/// showbf per partition and for all credentials: ALL's rows, then each
/// partition's; `-p ALL` the global rows only; `-A` counts a reservation
/// for someone else as free; `-v` names the nodes; `--xml` is mshow -a's
/// shape.
#[test]
fn showbf_partitions_all_credentials_verbose_and_xml_live() {
    let cfg = "NODECFG[n1] PROCS=2 PARTITION=red\nNODECFG[n2] PROCS=2 PARTITION=blue\n\
               RMCFG[local] TYPE=LOCAL\n";
    let d = Daemon::start_with_config(Some(cfg));
    let rows = |args: &[&str]| -> Vec<Vec<String>> {
        text(&d.run("showbf", args).stdout)
            .lines()
            .skip(2)
            .filter(|l| !l.starts_with("ReqID"))
            .map(|l| l.split_whitespace().map(String::from).collect())
            .collect()
    };
    let all = rows(&[]);
    let names: Vec<&str> = all.iter().map(|r| r[0].as_str()).collect();
    assert_eq!(names, ["ALL", "blue", "red"], "{all:?}");
    assert_eq!(
        (all[0][1].as_str(), all[0][2].as_str()),
        ("4", "2"),
        "{all:?}"
    );
    assert_eq!(
        (all[1][1].as_str(), all[1][2].as_str()),
        ("2", "1"),
        "{all:?}"
    );
    let only_all = rows(&["-p", "ALL"]);
    assert_eq!(only_all.len(), 1, "{only_all:?}");
    assert_eq!(only_all[0][0], "ALL");
    let blue = rows(&["-p", "blue"]);
    assert_eq!(blue.len(), 1, "{blue:?}");
    assert_eq!(blue[0][0], "blue");
    // n2 reserved for another user: busy for us, free with -A.
    let out = d.run("mrsvctl", &["-c", "-h", "n2", "-a", "USER==nobody-else"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let mine = rows(&["-p", "ALL"]);
    assert_eq!(mine[0][1], "2", "reserved node counted free\n{mine:?}");
    let any = rows(&["-A", "-p", "ALL"]);
    assert_eq!(any[0][1], "4", "-A ignores the access list\n{any:?}");
    let v = text(&d.run("showbf", &["-v", "-p", "red"]).stdout);
    assert!(v.contains("ReqID=0  HostList=n1:2\n"), "{v}");
    let xml = text(&d.run("showbf", &["--xml"]).stdout);
    assert!(
        xml.starts_with("<Data><Object>cluster</Object><job User="),
        "{xml}"
    );
    assert!(
        xml.contains("<par Name=\"red\" feasibleNodeCount=\"1\" feasibleTaskCount=\"2\"><range duration=\"INFINITY\" hostlist=\"n1:2\""),
        "{xml}"
    );
}
