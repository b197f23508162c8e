//! Interactive jobs (`msub -I`) end to end: the real msub on a real
//! pseudo-terminal against a real daemon (local backend). The job's shell
//! runs on a pty of its own, relayed through the job's terminal socket.

mod common;

use std::io::{Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use common::term::{job_id, lflags, set_size, Term};
use common::{ensure_user, root_or_skip, text, wait_until, Daemon};

#[test]
fn interactive_shell_has_the_jobs_environment_terminal_and_exit_status() {
    let d = Daemon::start();
    let cwd = tempfile::tempdir().expect("tempdir");
    let cwd_path = cwd.path().canonicalize().expect("canonical");
    let mut t = Term::spawn(&d, "msub", &["-I", "-l", "walltime=600"], &cwd_path);
    let out = t.wait_for("msub: job ");
    let id = job_id(&out);
    t.wait_for(&format!("msub: job {id} ready"));
    // The job's variables, on a terminal of the first node's size.
    t.type_line("echo \"id=${PBS_JOBID} wd=${PBS_O_WORKDIR} env=${PBS_ENVIRONMENT} nodes=$(wc -l < $PBS_NODEFILE)\"\n");
    t.wait_for(&format!(
        "id={id} wd={} env=PBS_INTERACTIVE nodes=1",
        cwd_path.display()
    ));
    t.type_line("test -t 0 && echo \"tty\"\"=yes size=$(stty size)\"\n");
    t.wait_for("tty=yes size=24 80");
    // A new window size reaches the job (SIGWINCH, stty size).
    set_size(t.master.as_raw_fd(), 30, 100);
    t.type_line(
        "while [ \"$(stty size)\" != \"30 100\" ]; do sleep 0.1; done; echo \"re\"\"sized\"\n",
    );
    t.wait_for("\nresized");
    // Ctrl-C stops the foreground command, not the session.
    t.type_line("echo \"sl\"\"eeping\"; sleep 1000\n");
    t.wait_for("\nsleeping");
    t.type_line("\x03");
    t.type_line("echo \"al\"\"ive\"\n");
    t.wait_for("alive\r\n");
    t.type_line("exit 3\n");
    assert_eq!(t.exit_code(), 3, "msub exits with the shell's status");
    // (The reader may still be behind msub's last line.)
    t.wait_for(&format!("msub: job {id} completed"));
    let cj = d.wait_state(id, "Completed", Duration::from_secs(30));
    assert!(cj.contains("Completion Code: 3"), "{cj}");
    assert!(cj.contains("INTERACTIVE"), "checkjob shows the flag:\n{cj}");
}

#[test]
fn interactive_job_ends_at_its_walltime() {
    let d = Daemon::start();
    let cwd = tempfile::tempdir().expect("tempdir");
    let mut t = Term::spawn(&d, "msub", &["-I", "-l", "walltime=2"], cwd.path());
    let out = t.wait_for("msub: job ");
    let id = job_id(&out);
    t.wait_for(&format!("msub: job {id} ready"));
    // Nothing typed: the shell waits until the limit hangs it up.
    let code = t.exit_code();
    assert!(
        code >= 128,
        "killed by a signal, got {code}: {}",
        t.output()
    );
    t.wait_for(&format!("msub: job {id} completed"));
    let cj = d.wait_state(id, "Completed", Duration::from_secs(30));
    assert!(
        cj.contains(&format!("Completion Code: {code}")),
        "the job's status is the shell's:\n{cj}"
    );
}

#[test]
fn interactive_refusals_are_clear() {
    let d = Daemon::start();
    let out = d.run("msub", &["-I", "-X"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr)
            .starts_with("ERROR:    cannot submit job - X11 forwarding (-X) is not supported"),
        "{}",
        text(&out.stderr)
    );
    let out = d.run_stdin("msub", &["-W", "x=FLAGS:INTERACTIVE"], "true\n");
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("job flag INTERACTIVE is set by msub -I"),
        "{}",
        text(&out.stderr)
    );
    let q = d.run("showq", &[]);
    assert!(
        text(&q.stdout).contains("0 active jobs"),
        "{}",
        text(&q.stdout)
    );
}

/// A job submitted interactive (as msub -I does) that nobody attached to yet.
fn interactive_job(d: &Daemon) -> u64 {
    let req = arches_api::SubmitRequest {
        script: "#!/bin/sh\nexec /bin/sh\n".into(),
        name: Some("STDIN".into()),
        resources: vec!["walltime=600".into()],
        submit_dir: d.home.path().display().to_string(),
        interactive: true,
        ..Default::default()
    };
    let body = serde_json::to_string(&req).expect("json");
    let mut s = common::raw::send(
        &d.socket,
        &common::raw::request("POST", arches_api::routes::SUBMIT, Some(&body)),
    );
    let (status, answer) = common::raw::read_response(&mut s);
    assert_eq!(status, 200, "{answer}");
    let v: serde_json::Value = serde_json::from_str(&answer).expect("answer");
    v["id"].as_u64().expect("id")
}

/// What `user` gets connecting to `socket` (perl, as that user): the
/// connect error, or the bytes the other end sent before closing.
fn connect_as(user: &str, socket: &Path, send: &[u8]) -> String {
    let hex: String = send.iter().map(|b| format!("{b:02x}")).collect();
    let script = r#"
use IO::Socket::UNIX;
$SIG{PIPE} = "IGNORE";
my $s = IO::Socket::UNIX->new(Type => SOCK_STREAM(), Peer => $ARGV[0]) or do { print "refused: $!\n"; exit 0 };
print $s pack("H*", $ARGV[1]);
my $got = ''; my $buf;
while (sysread($s, $buf, 4096)) { $got .= $buf; }
print "connected, got " . length($got) . " bytes: $got\n";
"#;
    let out = Command::new("setpriv")
        .args(["--reuid", user, "--regid", user, "--init-groups", "--"])
        .args(["perl", "-e", script])
        .arg(socket)
        .arg(hex)
        .output()
        .expect("perl as user");
    assert!(out.status.success(), "{}", text(&out.stderr));
    text(&out.stdout)
}

#[test]
fn only_the_owner_attaches_to_an_interactive_job() {
    if !root_or_skip("only_the_owner_attaches_to_an_interactive_job") {
        return;
    }
    let other = ensure_user("archesitty");
    let d = Daemon::start();
    let id = interactive_job(&d);
    d.wait_state(id, "Running", Duration::from_secs(30));
    let tty = d
        .home
        .path()
        .join("spool")
        .join(id.to_string())
        .join("tty.sock");
    wait_until("the terminal socket", || tty.exists());
    // The daemon tells nobody else where it is...
    let http = format!(
        "POST {} HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{{\"id\":{id}}}",
        arches_api::routes::TERMINAL,
        format!("{{\"id\":{id}}}").len()
    );
    let answer = connect_as(&other, &d.socket, http.as_bytes());
    assert!(answer.contains("403"), "{answer}");
    assert!(answer.contains("only its owner may attach"), "{answer}");
    // ...the socket is the owner's alone...
    let answer = connect_as(&other, &tty, b"");
    assert!(answer.starts_with("refused: Permission denied"), "{answer}");
    // ...and were its mode opened, the relay still closes on anyone else
    // without a byte (peer credentials), the shell untouched.
    common::set_mode(&tty, 0o666);
    let frame = arches_api::tty::encode(arches_api::tty::DATA, b"touch /tmp/pwned-by-other\n");
    let answer = connect_as(&other, &tty, &frame);
    assert!(answer.starts_with("connected, got 0 bytes"), "{answer}");
    // The owner attaches afterwards and runs the session to its end.
    let mut conn = UnixStream::connect(&tty).expect("owner connects");
    conn.write_all(&arches_api::tty::encode(
        arches_api::tty::DATA,
        b"echo \"own\"\"er-$PBS_JOBID\"; exit 4\n",
    ))
    .expect("type");
    let mut all = Vec::new();
    conn.read_to_end(&mut all).expect("read");
    let mut dec = arches_api::tty::Decoder::default();
    dec.push(&all);
    let (mut shown, mut code) = (Vec::new(), None);
    while let Some((kind, p)) = dec.next_frame().expect("frames") {
        match kind {
            arches_api::tty::DATA => shown.extend(p),
            arches_api::tty::EXIT => code = arches_api::tty::parse_exit(&p),
            _ => {}
        }
    }
    let shown = String::from_utf8_lossy(&shown);
    assert!(shown.contains(&format!("owner-{id}")), "{shown}");
    assert_eq!(code, Some(4));
    let cj = d.wait_state(id, "Completed", Duration::from_secs(30));
    assert!(cj.contains("Completion Code: 4"), "{cj}");
    assert!(!Path::new("/tmp/pwned-by-other").exists());
}

#[test]
fn msub_restores_the_terminal_when_it_is_ended_by_a_signal() {
    let d = Daemon::start();
    let cwd = tempfile::tempdir().expect("tempdir");
    let mut t = Term::spawn(&d, "msub", &["-I", "-l", "walltime=600"], cwd.path());
    let cooked = libc::ICANON | libc::ECHO;
    assert_eq!(lflags(t.slave.as_raw_fd()) & cooked, cooked);
    let out = t.wait_for("msub: job ");
    let id = job_id(&out);
    t.wait_for(&format!("msub: job {id} ready"));
    assert_eq!(
        lflags(t.slave.as_raw_fd()) & cooked,
        0,
        "raw while attached"
    );
    // SAFETY: signals our own child.
    unsafe { libc::kill(t.child.id() as i32, libc::SIGTERM) };
    assert_eq!(t.exit_code(), 1);
    t.wait_for("detached from job");
    assert_eq!(
        lflags(t.slave.as_raw_fd()) & cooked,
        cooked,
        "the user's terminal is restored"
    );
    // The job's terminal was hung up: the allocation ends.
    d.wait_state(id, "Completed", Duration::from_secs(30));
}
