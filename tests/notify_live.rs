//! Notifications live (issue 19 part 6): `msub -m abe -M list` mail on
//! begin, end and abort through `MAILPROGRAM` (here a capturing fake
//! sendmail), the default (`a`: abort only, to the owner), `-m n`, and
//! `NOTIFICATIONPROGRAM` called for every job event.

mod common;

use std::path::Path;
use std::time::Duration;

use common::{set_mode, text, wait_until, Daemon};

/// A fake sendmail: each call leaves `mail.N` with its arguments on the
/// first line and the message after it.
const SENDMAIL: &str = r#"#!/bin/sh
dir=$(dirname "$0")
n=$(ls "$dir" | grep -c '^mail\.')
{ echo "ARGS: $*"; cat; } > "$dir/mail.tmp.$$"
mv "$dir/mail.tmp.$$" "$dir/mail.$n"
"#;

const NOTIFY: &str = r#"#!/bin/sh
echo "$1|$2|$3|$4|$5" >> "$(dirname "$0")/events.log"
"#;

fn setup() -> (tempfile::TempDir, Daemon) {
    let dir = tempfile::Builder::new()
        .prefix("arches-notify")
        .tempdir()
        .unwrap();
    for (name, body) in [("sendmail", SENDMAIL), ("notify", NOTIFY)] {
        let p = dir.path().join(name);
        std::fs::write(&p, body).unwrap();
        set_mode(&p, 0o755);
    }
    let d = Daemon::start_with_config(Some(&format!(
        "NODECFG[n1] PROCS=4\nRMCFG[local] TYPE=LOCAL\nRMPOLLINTERVAL 00:00:01\n\
         MAILPROGRAM {0}/sendmail\nNOTIFICATIONPROGRAM {0}/notify\n",
        dir.path().display()
    )));
    (dir, d)
}

fn mails(dir: &Path) -> Vec<String> {
    let mut v: Vec<(u32, String)> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| {
            let name = e.ok()?.file_name().to_string_lossy().to_string();
            let n: u32 = name.strip_prefix("mail.")?.parse().ok()?;
            Some((n, std::fs::read_to_string(dir.join(&name)).ok()?))
        })
        .collect();
    v.sort();
    v.into_iter().map(|(_, m)| m).collect()
}

fn events(dir: &Path) -> String {
    std::fs::read_to_string(dir.join("events.log")).unwrap_or_default()
}

#[test]
fn mail_on_begin_end_and_abort_and_the_notification_program() {
    let (dir, d) = setup();
    let dir = dir.path();
    // -m abe to two addresses: a begin and an end mail.
    let a = d.submit(
        "exit 3\n",
        &["-N", "sim", "-m", "abe", "-M", "alice@example.org,bob"],
    );
    wait_until("job a's end notification", || {
        events(dir).contains(&format!("JobEnd|job|{a}|"))
    });
    wait_until("two mails", || mails(dir).len() >= 2);
    let m = mails(dir);
    assert!(
        m[0].starts_with(
            "ARGS: alice@example.org bob\nTo: alice@example.org, bob\nSubject: PBS JOB "
        ),
        "{m:?}"
    );
    assert!(m[0].contains("Job Name:   sim\n"), "{}", m[0]);
    assert!(
        m[0].ends_with("Exec host:  n1\nBegun execution\n"),
        "{}",
        m[0]
    );
    assert!(
        m[1].ends_with("Execution terminated\nExit_status=3\n"),
        "{}",
        m[1]
    );
    // No -m: mail on abort only, to the owner. Cancelled while running.
    let b = d.submit("sleep 300\n", &["-N", "victim"]);
    d.wait_state(b, "Running", Duration::from_secs(20));
    assert!(d.run("canceljob", &[&b.to_string()]).status.success());
    wait_until("job b's abort notification", || {
        events(dir).contains(&format!("JobFail|job|{b}|root|job aborted: job cancelled"))
    });
    wait_until("the abort mail", || mails(dir).len() >= 3);
    let m = mails(dir);
    assert!(m[2].starts_with("ARGS: root\nTo: root\n"), "{}", m[2]);
    assert!(
        m[2].ends_with("Aborted by Moab: job cancelled\n"),
        "{}",
        m[2]
    );
    // Killed at its wall-clock limit: an abort.
    let c = d.submit("sleep 300\n", &["-m", "a", "-l", "walltime=1"]);
    wait_until("job c's abort", || {
        events(dir).contains(&format!("JobFail|job|{c}|"))
    });
    wait_until("the limit mail", || mails(dir).len() >= 4);
    let m = mails(dir);
    assert!(
        m[3].contains("Aborted by Moab: job exceeded its wall-clock limit"),
        "{}",
        m[3]
    );
    // -m n: no mail at all, but the site program still hears of it.
    let quiet = d.submit("true\n", &["-m", "n"]);
    wait_until("job quiet's end", || {
        events(dir).contains(&format!("JobEnd|job|{quiet}|"))
    });
    // One more event after it: had quiet's mail been sent, it would be
    // there by now (one sender, in order).
    let last = d.submit("true\n", &["-m", "e"]);
    wait_until("the last mail", || mails(dir).len() >= 5);
    let m = mails(dir);
    assert_eq!(m.len(), 5, "{m:#?}");
    assert!(m[4].contains(&format!("PBS Job Id: {last}.")), "{}", m[4]);
    // Every event reached the notification program, begin included.
    let ev = events(dir);
    for id in [a, b, c, quiet, last] {
        assert!(
            ev.contains(&format!("JobStart|job|{id}|root|job started\n")),
            "{ev}"
        );
    }
    assert!(
        ev.contains(&format!(
            "JobEnd|job|{a}|root|job completed with exit status 3\n"
        )),
        "{ev}"
    );
    // checkjob shows the events asked for.
    assert!(d
        .checkjob(a)
        .contains("Notification Events: JobStart,JobEnd,JobFail\n"));
}

#[test]
fn bad_mail_options_are_refused_at_submission() {
    let (_dir, d) = setup();
    for (args, why) in [
        (
            vec!["-M", "alice,-oQ/tmp/evil"],
            "invalid mail recipient '-oQ/tmp/evil'",
        ),
        (vec!["-M", "a b"], "invalid mail recipient 'a b'"),
        (
            vec!["-m", "xyz"],
            "invalid mail options 'xyz' (n, or any of a, b, e)",
        ),
    ] {
        let out = d.run_stdin("msub", &args, "true\n");
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        assert_eq!(
            text(&out.stderr),
            format!("ERROR:    cannot submit job - {why}\n")
        );
    }
    let q = text(&d.run("showq", &[]).stdout);
    assert!(q.contains("Total jobs:  0"), "{q}");
}
