//! The shipped `tools/dstage.*` scripts through the storage RM (file://).

use std::time::{Duration, Instant};

use arches_rm::storage::{Caller, StorageCall, StorageConfig, StorageReply, StorageRm};

fn tools() -> String {
    format!("{}/../../tools", env!("CARGO_MANIFEST_DIR"))
}

fn me() -> Caller {
    // SAFETY: no preconditions.
    let (uid, gid) = unsafe { (libc::geteuid(), libc::getegid()) };
    Caller {
        name: "me".into(),
        uid,
        gid,
        ..Caller::default()
    }
}

fn rm(home: &std::path::Path) -> StorageRm {
    StorageRm::new(StorageConfig {
        name: "data".into(),
        system_query: Some("exec://$TOOLSDIR/dstage.query".into()),
        cluster_query: Some("exec://$TOOLSDIR/dstage.cluster".into()),
        system_modify: Some("exec://$TOOLSDIR/dstage.modify".into()),
        tools_dir: tools(),
        home: home.display().to_string(),
        timeout: Duration::from_secs(20),
        workers: 2,
        env: vec![("MOABHOMEDIR".into(), home.display().to_string())],
    })
}

fn call(rm: &mut StorageRm, c: StorageCall) -> Result<StorageReply, String> {
    rm.submit(1, c);
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Some(r) = rm.wait(Duration::from_millis(100)).pop() {
            return r.outcome;
        }
        assert!(Instant::now() < deadline);
    }
}

#[test]
fn file_scripts_stage_verify_and_remove() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("input.dat");
    std::fs::write(&src, vec![b'x'; 3000]).unwrap();
    let src = format!("file://{}", src.display());
    let dest = format!("file://{}/run/input.dat", dir.path().display());
    let mut rm = rm(dir.path());

    let size = call(
        &mut rm,
        StorageCall::FileSize {
            user: me(),
            url: src.clone(),
        },
    );
    assert_eq!(size, Ok(StorageReply::FileSize(Some(3000))));
    let st = StorageCall::StageTime {
        user: me(),
        src: src.clone(),
        dest: dest.clone(),
        rate_kbps: 1.0,
    };
    assert_eq!(
        call(&mut rm, st),
        Ok(StorageReply::StageTime {
            secs: Some(3),
            size: Some(3000)
        })
    );
    // Not there yet: no size.
    let verify = StorageCall::FileSize {
        user: me(),
        url: dest.clone(),
    };
    assert_eq!(
        call(&mut rm, verify.clone()),
        Ok(StorageReply::FileSize(None))
    );
    let staged = call(
        &mut rm,
        StorageCall::Stage {
            user: me(),
            src: src.clone(),
            dest: dest.clone(),
        },
    );
    assert_eq!(
        staged,
        Ok(StorageReply::StageTime {
            secs: None,
            size: Some(3000)
        })
    );
    let deadline = Instant::now() + Duration::from_secs(20);
    while call(&mut rm, verify.clone()) != Ok(StorageReply::FileSize(Some(3000))) {
        assert!(Instant::now() < deadline, "the copy never completed");
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(
        std::fs::read(dir.path().join("run/input.dat"))
            .unwrap()
            .len(),
        3000
    );

    let c = call(&mut rm, StorageCall::Cluster).unwrap();
    let StorageReply::Cluster(info) = c else {
        panic!("{c:?}")
    };
    assert!(info.disk_mb.unwrap() > 0 && info.disk_avail_mb.is_some());

    call(
        &mut rm,
        StorageCall::Remove {
            user: me(),
            url: dest.clone(),
        },
    )
    .unwrap();
    assert!(!dir.path().join("run/input.dat").exists());
}

#[test]
fn file_scripts_report_missing_sources() {
    let dir = tempfile::tempdir().unwrap();
    let mut rm = rm(dir.path());
    let src = format!("file://{}/missing.dat", dir.path().display());
    let dest = format!("file://{}/run/missing.dat", dir.path().display());
    let e = call(
        &mut rm,
        StorageCall::Stage {
            user: me(),
            src: src.clone(),
            dest,
        },
    )
    .unwrap_err();
    assert!(e.contains("not found or unreachable"), "{e}");
    assert_eq!(
        call(
            &mut rm,
            StorageCall::FileSize {
                user: me(),
                url: src
            }
        ),
        Ok(StorageReply::FileSize(None))
    );
}

/// A directory of stand-in commands put first in the scripts' PATH.
fn fake_bin(dir: &std::path::Path, cmds: &[(&str, &str)]) -> String {
    use std::os::unix::fs::PermissionsExt;
    let bin = dir.join("fakebin");
    std::fs::create_dir_all(&bin).unwrap();
    for (name, body) in cmds {
        let p = bin.join(name);
        std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    format!(
        "{}:/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin",
        bin.display()
    )
}

fn rm_with_path(home: &std::path::Path, path: String) -> StorageRm {
    let mut r = rm(home);
    let mut cfg = r.config().clone();
    cfg.env.push(("PATH".into(), path));
    // The scripts' private state directory (remote destinations) stays in
    // the test's own directory.
    cfg.env.push(("TMPDIR".into(), home.display().to_string()));
    r = StorageRm::new(cfg);
    r
}

fn wait_until(what: &str, mut f: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !f() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn progress_is_reported_below_the_total_until_the_copy_is_complete() {
    // A `cp` that copies, then waits for a gate before returning: the copy
    // is all there but not renamed yet.
    let dir = tempfile::tempdir().unwrap();
    let gate = dir.path().join("gate");
    let path = fake_bin(
        dir.path(),
        &[(
            "cp",
            &format!(
                "/bin/cp \"$@\" || exit 1\nwhile [ ! -e {} ]; do sleep 0.05; done",
                gate.display()
            ),
        )],
    );
    let mut rm = rm_with_path(dir.path(), path);
    let src = dir.path().join("in.dat");
    std::fs::write(&src, vec![b'y'; 4000]).unwrap();
    let dest = format!("file://{}/run/in.dat", dir.path().display());
    let staged = call(
        &mut rm,
        StorageCall::Stage {
            user: me(),
            src: format!("file://{}", src.display()),
            dest: dest.clone(),
        },
    );
    assert_eq!(
        staged,
        Ok(StorageReply::StageTime {
            secs: None,
            size: Some(4000)
        })
    );
    let verify = StorageCall::FileSize {
        user: me(),
        url: dest.clone(),
    };
    // Copied but not complete: the bytes so far, below the total.
    wait_until("the partial copy", || {
        call(&mut rm, verify.clone()) == Ok(StorageReply::FileSize(Some(3999)))
    });
    std::fs::write(&gate, "").unwrap();
    wait_until("the completed copy", || {
        call(&mut rm, verify.clone()) == Ok(StorageReply::FileSize(Some(4000)))
    });
}

#[test]
fn remove_stops_a_transfer_in_progress() {
    let dir = tempfile::tempdir().unwrap();
    let path = fake_bin(dir.path(), &[("cp", "/bin/cp \"$@\"; sleep 60")]);
    let mut rm = rm_with_path(dir.path(), path);
    let src = dir.path().join("in.dat");
    std::fs::write(&src, "z").unwrap();
    let dest = format!("file://{}/run/in.dat", dir.path().display());
    call(
        &mut rm,
        StorageCall::Stage {
            user: me(),
            src: format!("file://{}", src.display()),
            dest: dest.clone(),
        },
    )
    .unwrap();
    let partial = dir.path().join("run/in.dat.dstage-partial");
    wait_until("the copy to start", || partial.exists());
    let pid: i32 = std::fs::read_to_string(dir.path().join("run/in.dat.dstage-pid"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    call(
        &mut rm,
        StorageCall::Remove {
            user: me(),
            url: dest.clone(),
        },
    )
    .unwrap();
    // SAFETY: kill with signal 0 only checks that the process exists.
    wait_until("the copy to be stopped", || unsafe {
        libc::kill(pid, 0) != 0
    });
    assert!(!partial.exists());
    assert!(!dir.path().join("run/in.dat").exists());
    assert!(!dir.path().join("run/in.dat.dstage-error").exists());
}

#[test]
fn scp_destinations_report_progress_and_failures() {
    // ssh/scp stand-ins that act on this machine (the "remote" paths are
    // local ones): the shipped scripts' remote branch end to end.
    let dir = tempfile::tempdir().unwrap();
    let fail = dir.path().join("fail-scp");
    let path = fake_bin(
        dir.path(),
        &[
            (
                "ssh",
                "while [ $# -gt 0 ]; do case \"$1\" in -o) shift 2;; -*) shift;; *) break;; esac; done\nshift\nexec sh -c \"$*\"",
            ),
            (
                "scp",
                &format!(
                    "while [ $# -gt 0 ]; do case \"$1\" in -o) shift 2;; -*) shift;; *) break;; esac; done\n\
                     [ -e {} ] && {{ echo 'ssh: connect to host node7: Connection refused' >&2; exit 1; }}\n\
                     exec cp -R \"${{1#*:}}\" \"${{2#*:}}\"",
                    fail.display()
                ),
            ),
        ],
    );
    let mut rm = rm_with_path(dir.path(), path);
    let src = dir.path().join("in.dat");
    std::fs::write(&src, vec![b'q'; 700]).unwrap();
    let src = format!("file://{}", src.display());
    let dest = format!("scp://node7{}/remote/in.dat", dir.path().display());
    call(
        &mut rm,
        StorageCall::Stage {
            user: me(),
            src: src.clone(),
            dest: dest.clone(),
        },
    )
    .unwrap();
    let verify = StorageCall::FileSize {
        user: me(),
        url: dest.clone(),
    };
    wait_until("the remote copy", || {
        call(&mut rm, verify.clone()) == Ok(StorageReply::FileSize(Some(700)))
    });
    assert!(dir.path().join("remote/in.dat").exists());
    // A failing copy leaves the reason for the query (no marker next to a
    // remote file: a private local directory keeps it).
    std::fs::write(&fail, "").unwrap();
    let dest2 = format!("scp://node7{}/remote/other.dat", dir.path().display());
    call(
        &mut rm,
        StorageCall::Stage {
            user: me(),
            src,
            dest: dest2.clone(),
        },
    )
    .unwrap();
    let verify2 = StorageCall::FileSize {
        user: me(),
        url: dest2,
    };
    let mut err = String::new();
    wait_until("the failure", || match call(&mut rm, verify2.clone()) {
        Err(e) => {
            err = e;
            true
        }
        Ok(_) => false,
    });
    assert!(err.contains("Connection refused"), "{err}");
    assert!(!dir.path().join("remote/other.dat").exists());
}

/// A tiny HTTP/1.0 server: `/ok` is 5 bytes, anything else is a 404 page.
fn http_server() -> (String, std::thread::JoinHandle<()>) {
    use std::io::{BufRead, BufReader, Write};
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = format!("http://{}", l.local_addr().unwrap());
    let h = std::thread::spawn(move || {
        for s in l.incoming().take(4) {
            let Ok(mut s) = s else { continue };
            let mut first = String::new();
            let mut r = BufReader::new(s.try_clone().unwrap());
            let _ = r.read_line(&mut first);
            let mut line = String::new();
            while r.read_line(&mut line).is_ok_and(|n| n > 2) {
                line.clear();
            }
            let head = first.starts_with("HEAD");
            let (status, body) = if first.contains(" /ok ") {
                ("200 OK", "hello")
            } else {
                ("404 Not Found", "<html>no such file, sorry</html>")
            };
            let _ = write!(
                s,
                "HTTP/1.0 {status}\r\nContent-Length: {}\r\n\r\n{}",
                body.len(),
                if head { "" } else { body }
            );
        }
    });
    (addr, h)
}

#[test]
fn http_sources_count_only_with_a_success_answer() {
    let dir = tempfile::tempdir().unwrap();
    let (base, server) = http_server();
    let mut rm = rm(dir.path());
    let size = |rm: &mut StorageRm, u: &str| {
        call(
            rm,
            StorageCall::FileSize {
                user: me(),
                url: format!("{base}{u}"),
            },
        )
    };
    assert_eq!(size(&mut rm, "/ok"), Ok(StorageReply::FileSize(Some(5))));
    // The 404 page has a Content-Length too: not a size.
    assert_eq!(size(&mut rm, "/missing"), Ok(StorageReply::FileSize(None)));
    let e = call(
        &mut rm,
        StorageCall::Stage {
            user: me(),
            src: format!("{base}/missing"),
            dest: format!("file://{}/m.dat", dir.path().display()),
        },
    )
    .unwrap_err();
    assert!(e.contains("not found or unreachable"), "{e}");
    drop(rm);
    // Unblock the server's last accept.
    for _ in 0..2 {
        let _ = std::net::TcpStream::connect(base.trim_start_matches("http://"));
    }
    server.join().unwrap();
}
