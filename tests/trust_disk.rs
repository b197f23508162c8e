//! Disk full (issue 14, point 5): on a tiny tmpfs home filled to the last
//! byte, a submission that cannot be recorded fails with a clear message,
//! the daemon keeps serving, a job that ends meanwhile keeps its real exit
//! status, and everything recovers by itself once space returns.

mod common;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use common::{set_mode, text, Daemon};

const LONG: Duration = Duration::from_secs(60);

/// A tmpfs mounted on a directory for the test's lifetime.
struct Tmpfs(PathBuf);

impl Tmpfs {
    fn mount(dir: &Path, size: &str) -> Tmpfs {
        let st = Command::new("mount")
            .args([
                "-t",
                "tmpfs",
                "-o",
                &format!("size={size},mode=0755"),
                "tmpfs",
            ])
            .arg(dir)
            .status()
            .expect("mount");
        assert!(st.success(), "mount -t tmpfs on {} failed", dir.display());
        Tmpfs(dir.to_path_buf())
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).status();
    }
}

/// Fills the file system of `path` to the last byte with one file.
fn fill(path: &Path) {
    let mut f = std::fs::File::create(path).expect("filler");
    for size in [1 << 20, 4096, 1] {
        let chunk = vec![b'x'; size];
        while f.write_all(&chunk).is_ok() {}
    }
    let _ = f.sync_all();
}

fn script_file(dir: &Path, name: &str, body: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, body).expect("script");
    set_mode(&path, 0o644);
    path.to_string_lossy().into_owned()
}

#[test]
fn a_full_disk_refuses_submissions_clearly_keeps_exit_statuses_and_recovers() {
    if !common::root_or_skip(
        "a_full_disk_refuses_submissions_clearly_keeps_exit_statuses_and_recovers",
    ) {
        return;
    }
    let mut d = Daemon::unstarted(None);
    let tmpfs = Tmpfs::mount(d.home.path(), "8m");
    d.spawn();
    // Scripts, outputs and the trigger live outside the full disk.
    let outside = tempfile::tempdir().expect("tempdir");
    set_mode(outside.path(), 0o755);
    let out = |name: &str| outside.path().join(name).to_string_lossy().into_owned();
    let go = outside.path().join("go");
    let started = outside.path().join("started");
    let waiting = script_file(
        outside.path(),
        "wait.sh",
        &format!(
            "#!/bin/sh\ntouch {}\nwhile [ ! -e {} ]; do sleep 0.05; done\nexit 7\n",
            started.display(),
            go.display()
        ),
    );
    let sub = d.run(
        "msub",
        &["-o", &out("w.out"), "-e", &out("w.err"), &waiting],
    );
    assert!(sub.status.success(), "{}", text(&sub.stderr));
    let id = common::parse_id(&sub);
    d.wait_state(id, "Running", LONG);
    // Really running (its supervisor done with its own files).
    let deadline = Instant::now() + LONG;
    while !started.exists() {
        assert!(Instant::now() < deadline, "the job never started");
        std::thread::sleep(Duration::from_millis(20));
    }

    fill(&d.home.path().join("filler"));
    // A job whose record cannot be written is refused, with the reason.
    let big = script_file(
        outside.path(),
        "big.sh",
        &format!(
            "#!/bin/sh\n{}exit 0\n",
            "# padding padding padding\n".repeat(40_000)
        ),
    );
    let refused = d.run("msub", &["-o", &out("b.out"), "-e", &out("b.err"), &big]);
    assert!(!refused.status.success(), "{}", text(&refused.stdout));
    assert_eq!(
        text(&refused.stderr).trim_end(),
        "ERROR:    cannot submit job - no space left on the scheduler's disk"
    );
    // Reads are served.
    let q = d.run("showq", &[]);
    assert!(q.status.success(), "{}", text(&q.stderr));
    assert!(text(&q.stdout).contains(&id.to_string()));
    // The running job ends on the full disk: its real exit status.
    std::fs::write(&go, "").expect("go");
    let ended = Instant::now();
    let done = d.wait_state(id, "Completed", LONG);
    let seen_ended = ended.elapsed();
    assert!(done.contains("Completion Code: 7"), "{done}");

    // Space returns: the same submission goes through, by itself.
    std::fs::remove_file(d.home.path().join("filler")).expect("free");
    let freed = Instant::now();
    let deadline = freed + LONG;
    let accepted = loop {
        let again = d.run("msub", &["-o", &out("b.out"), "-e", &out("b.err"), &big]);
        if again.status.success() {
            break common::parse_id(&again);
        }
        assert!(Instant::now() < deadline, "{}", text(&again.stderr));
        std::thread::sleep(Duration::from_millis(100));
    };
    // Figures for BENCHMARKS.md (printed, never compared with a threshold).
    eprintln!(
        "disk full: job end shown after {:.2} s; space freed -> first accepted submission after {:.2} s",
        seen_ended.as_secs_f64(),
        freed.elapsed().as_secs_f64()
    );
    assert!(accepted > id, "ids move on: {accepted} after {id}");
    let ran = d.wait_state(accepted, "Completed", LONG);
    assert!(ran.contains("Completion Code: 0"), "{ran}");
    // What was owed meanwhile is durable.
    d.stop();
    d.spawn();
    let after = d.checkjob(id);
    assert!(
        after.contains("State: Completed") && after.contains("Completion Code: 7"),
        "{after}"
    );
    d.stop();
    drop(tmpfs);
}
