//! Trust (issue 14, point 7), end to end through the real binaries:
//! overflowing numbers are refused with a clear error and change nothing;
//! control characters never reach a terminal or the log raw; NULs are
//! refused; jobs that could never start are refused at submission; a body
//! announced larger than the limit is refused at once.

mod common;

use std::io::{Read, Write};
use std::time::Duration;

use common::{parse_id, text, Daemon};

/// Raw control characters a terminal would act on.
fn has_raw_control(s: &str) -> bool {
    s.chars().any(|c| c.is_control() && c != '\n')
}

#[test]
fn overflowing_numbers_are_refused_and_change_nothing() {
    let d = Daemon::start();
    let id = d.submit("sleep 30\n", &["-h", "-l", "walltime=100"]);
    let j = id.to_string();
    let refused = |prog: &str, args: &[&str], want: &str| {
        let out = d.run(prog, args);
        let all = format!("{}{}", text(&out.stdout), text(&out.stderr));
        assert_eq!(out.status.code(), Some(1), "{prog} {args:?}: {all}");
        assert!(all.contains(want), "{prog} {args:?}: {all}");
    };
    // Relative system priorities: checked, never wrapped.
    let ok = d.run("mjobctl", &["-p", "+999999999", &j]);
    assert!(ok.status.success(), "{}", text(&ok.stderr));
    refused(
        "mjobctl",
        &["-p", "+2", &j],
        "relative system priority change '+2' out of range (the result must be in -1000000000 - 1000000000)",
    );
    refused(
        "mjobctl",
        &["-p", "+9223372036854775807", &j],
        "relative system priority change '+9223372036854775807' out of range",
    );
    refused(
        "mjobctl",
        &["-p", "1001", &j],
        "system priority must be in the range 0 - 1000",
    );
    refused(
        "mjobctl",
        &["-m", "userprio-=-9223372036854775808", &j],
        "invalid value for user priority",
    );
    refused(
        "mjobctl",
        &["-m", "walltime+=99999999999:00:00", &j],
        &format!("cannot change walltime attribute for job {id} from 100 to"),
    );
    // Iteration counts, pause durations, log levels.
    refused(
        "mschedctl",
        &["-S", "18446744073709551615"],
        "invalid iteration count 18446744073709551615",
    );
    refused(
        "mschedctl",
        &["-s", "18446744073709551615"],
        "invalid iteration 18446744073709551615",
    );
    refused(
        "mschedctl",
        &["-r", "9223372036854775807"],
        "invalid resume time 9223372036854775807",
    );
    refused(
        "mschedctl",
        &["-L", "4294967295"],
        "invalid log level 4294967295 (0-9)",
    );
    refused(
        "mschedctl",
        &["-S", "18446744073709551616"],
        "invalid iteration count",
    );
    // Submissions.
    for (args, why) in [
        (
            vec!["-l", "walltime=99999999999:00:00"],
            "wallclock limit 359999999996400 out of range",
        ),
        (
            vec!["-l", "nodes=4294967296"],
            "invalid node count '4294967296'",
        ),
        (
            vec!["-l", "nodes=65536:ppn=65536"],
            "node request too large",
        ),
        (
            vec!["-l", "mem=99999999999999999999tb"],
            "invalid memory specification",
        ),
        (
            vec!["-p", "99999999999999999999"],
            "invalid priority '99999999999999999999'",
        ),
        (
            vec!["-p", "1024"],
            "invalid user priority 1024 (range -1024..1023)",
        ),
    ] {
        let out = d.run_stdin("msub", &args, "true\n");
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        let err = text(&out.stderr);
        assert!(
            err.starts_with("ERROR:    cannot submit job - "),
            "{args:?}: {err}"
        );
        assert!(err.contains(why), "{args:?}: {err}");
    }
    // Nothing changed: still held, priority and limit as set.
    let c = d.checkjob(id);
    assert!(
        c.contains("State: UserHold") && c.contains("of 00:01:40"),
        "{c}"
    );
    let q = text(&d.run("showq", &[]).stdout);
    assert!(q.contains("Total job:  1"), "{q}");
}

#[test]
fn a_node_count_out_of_range_in_moab_cfg_stops_the_daemon_with_file_and_line() {
    // 2049 nodes of 2^20 processors: one too many for a cluster.
    let big: String = (0..2049)
        .map(|i| format!("NODECFG[n{i}] PROCS=1048576\n"))
        .collect();
    for (cfg, line, why) in [
        (
            "NODECFG[n1] PROCS=4294967295\n",
            1,
            "value 4294967295 out of range (1–1048576)",
        ),
        (
            big.as_str(),
            2049,
            "NODECFG[n2048]: the nodes would have more than 2147483648 processors",
        ),
        (
            "DEFERTIME 99999999999:00:00\n",
            1,
            "duration '99999999999:00:00' too long",
        ),
    ] {
        let home = tempfile::Builder::new()
            .prefix("arches-badnum")
            .tempdir()
            .unwrap();
        std::fs::write(home.path().join("moab.cfg"), cfg).unwrap();
        let socket = home.path().join("moab.sock");
        let out = std::process::Command::new(common::bin("moab"))
            .env_clear()
            .envs(common::base_env(home.path(), &socket))
            .stdin(std::process::Stdio::null())
            .output()
            .expect("moab");
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{err}");
        let at = format!("{}:{line}: ", home.path().join("moab.cfg").display());
        assert!(
            err.lines().any(|l| l.contains(&at) && l.contains(why)),
            "{why}: {err}"
        );
    }
}

#[test]
fn swf_and_jsonl_numbers_out_of_range_are_errors_with_the_line() {
    let dir = tempfile::tempdir().unwrap();
    let swf = dir.path().join("t.swf");
    std::fs::write(
        &swf,
        "; MaxProcs: 8\n1 0 0 10 1 -1 -1 1 20 -1 1 1 1 -1 1 -1 -1 -1\n\
         2 9223372036854775807 0 10 1 -1 -1 1 20 -1 1 1 1 -1 1 -1 -1 -1\n",
    )
    .unwrap();
    let out = std::process::Command::new(common::bin("moab"))
        .args(["simulate", "--trace"])
        .arg(&swf)
        .output()
        .expect("moab simulate");
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&format!(
            "{}:3: submit time 9223372036854775807 out of range",
            swf.display()
        )),
        "{err}"
    );
    let jsonl = dir.path().join("w.jsonl");
    std::fs::write(
        &jsonl,
        "{\"id\":1,\"submit\":0,\"procs\":1,\"walltime\":10,\"runtime\":5,\"stagein\":9223372036854775807}\n",
    )
    .unwrap();
    let out = std::process::Command::new(common::bin("moab"))
        .args(["simulate", "--procs", "4", "--workload"])
        .arg(&jsonl)
        .output()
        .expect("moab simulate");
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains(":1: stagein 9223372036854775807 out of range"),
        "{err}"
    );
}

#[test]
fn control_characters_are_refused_or_escaped_and_nuls_refused() {
    let d = Daemon::start_with_config(Some("NODECFG[bad\u{1b}node] PROCS=2\n"));
    // Names that reach a terminal: refused at the door...
    let out = d.run_stdin("msub", &["-N", "evil\u{1b}]0;owned\u{7}"], "true\n");
    assert_eq!(
        text(&out.stderr),
        "ERROR:    cannot submit job - invalid job name 'evil\\x1b]0;owned\\x07' (control characters)\n"
    );
    let id = d.submit("sleep 30\n", &["-h"]);
    let out = d.run("mjobctl", &["-m", "jobname=a\rb", &id.to_string()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("invalid job name 'a\\rb' (control characters)"));
    let out = d.run(
        "mrsvctl",
        &["-c", "-h", "ALL", "-n", "r\u{1b}[1m", "-d", "60"],
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
    // ...and shown escaped wherever they come from (a host name here, a
    // message there), in every format, never raw.
    for (args, shown) in [
        (vec!["ALL"], "bad\\x1bnode"),
        (vec!["ALL", "--xml"], "bad\\x1bnode"),
        // JSON escapes the backslash itself.
        (vec!["ALL", "--format", "json"], "bad\\\\x1bnode"),
    ] {
        let out = d.run("checknode", &args);
        let all = text(&out.stdout);
        assert!(all.contains(shown), "{args:?}: {all}");
        assert!(!has_raw_control(&all), "{args:?}: {all:?}");
    }
    let q = text(&d.run("showq", &["-r"]).stdout);
    assert!(!has_raw_control(&q), "{q:?}");
    let out = d.run(
        "mschedctl",
        &["-A", "hello\u{1b}]0;pwned\u{7}\nINFO fake line"],
    );
    let said = text(&out.stdout);
    assert!(!has_raw_control(&said), "{said:?}");
    assert!(
        said.contains("hello\\x1b]0;pwned\\x07\\nINFO fake line"),
        "{said}"
    );
    let log = std::fs::read_to_string(d.home.path().join("log").join("moab.log")).unwrap();
    assert!(
        log.contains("hello\\x1b]0;pwned\\x07\\nINFO fake line"),
        "{log}"
    );
    assert!(!has_raw_control(&log), "raw control characters in moab.log");
    assert!(
        !log.lines().any(|l| l.starts_with("INFO fake line")),
        "a forged log line"
    );
    // NUL: in a script, in a configuration line sent to the daemon.
    let out = d.run_stdin("msub", &[], "echo a\0b\n");
    assert_eq!(
        text(&out.stderr),
        "ERROR:    cannot submit job - script contains a NUL character\n"
    );
    let out = d.run_stdin("mschedctl", &["-m", "config"], "RMPOLLINTERVAL 1\0");
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("request contains a NUL character"),
        "{}",
        text(&out.stderr)
    );
    let q = text(&d.run("showq", &[]).stdout);
    assert!(q.contains("Total job:  1"), "{q}");
}

#[test]
fn jobs_that_could_never_start_are_refused_at_submission() {
    let d = Daemon::start_with_config(Some("CLASSCFG[batch] MAXJOB=10\nCLASSCFG[long] MAXJOB=2\n"));
    let long = "x".repeat(256);
    let deep = format!("/tmp/{long}/out");
    for (args, why) in [
        (
            vec!["-S", "/no/such/shell"],
            "shell '/no/such/shell' cannot be used (No such file or directory",
        ),
        (vec!["-S", "bash"], "shell 'bash' is not an absolute path"),
        (
            vec!["-N", "../etc/x"],
            "invalid job name '../etc/x' (contains '/')",
        ),
        (
            vec!["-q", "gpu"],
            "unknown class 'gpu' (configured classes: batch,long)",
        ),
        (
            vec!["-o", deep.as_str()],
            "has a component longer than 255 bytes",
        ),
        (vec!["-v", "=x"], "invalid variable '=x'"),
    ] {
        let out = d.run_stdin("msub", &args, "true\n");
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert!(
            err.starts_with("ERROR:    cannot submit job - "),
            "{args:?}: {err}"
        );
        assert!(err.contains(why), "{args:?}: {err}");
    }
    let q = text(&d.run("showq", &[]).stdout);
    assert!(q.contains("Total jobs:  0"), "{q}");
    // A known class and an existing shell are fine.
    let out = d.run_stdin("msub", &["-q", "long", "-S", "/bin/sh"], "true\n");
    assert!(out.status.success(), "{}", text(&out.stderr));
    d.wait_state(parse_id(&out), "Completed", Duration::from_secs(60));
}

#[test]
fn a_body_announced_larger_than_the_limit_is_refused_at_once() {
    let d = Daemon::start();
    let mut s = std::os::unix::net::UnixStream::connect(&d.socket).expect("connect");
    // A hang guard only: the answer must come without the body being sent.
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    s.write_all(
        b"POST /v1/jobs HTTP/1.1\r\nhost: localhost\r\ncontent-type: application/json\r\ncontent-length: 1000000000\r\n\r\n",
    )
    .unwrap();
    let mut answer = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        match s.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => answer.extend_from_slice(&buf[..n]),
            Err(e) => panic!("no answer without the body ({e}): {}", text(&answer)),
        }
    }
    let a = text(&answer);
    assert!(a.starts_with("HTTP/1.1 413"), "{a}");
    assert!(a.contains("request body larger than 2097152 bytes"), "{a}");
    assert!(d.run("showq", &[]).status.success(), "daemon still serving");
}
