use super::*;
use std::os::unix::fs::PermissionsExt;
use std::time::Instant;

fn script(dir: &std::path::Path, name: &str, body: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    p.display().to_string()
}

/// Named alice, but with our own ids so the scripts can write our temp dirs.
fn user() -> Caller {
    // SAFETY: no preconditions.
    let (uid, gid) = unsafe { (libc::geteuid(), libc::getegid()) };
    Caller {
        name: "alice".into(),
        uid,
        gid,
        ..Caller::default()
    }
}

fn rm(dir: &std::path::Path, timeout_ms: u64) -> StorageRm {
    StorageRm::new(StorageConfig {
        name: "data".into(),
        system_query: Some("exec://$TOOLSDIR/q".into()),
        cluster_query: Some("exec://$HOME/c".into()),
        system_modify: Some("exec://$TOOLSDIR/m".into()),
        tools_dir: dir.display().to_string(),
        home: dir.display().to_string(),
        timeout: Duration::from_millis(timeout_ms),
        workers: 2,
        env: vec![("MOABHOMEDIR".into(), dir.display().to_string())],
    })
}

fn one(rm: &mut StorageRm, call: StorageCall) -> Result<StorageReply, String> {
    rm.submit(7, call);
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let mut r = rm.wait(Duration::from_millis(200));
        if let Some(r) = r.pop() {
            assert_eq!(r.token, 7);
            return r.outcome;
        }
        assert!(Instant::now() < deadline, "no result");
    }
}

#[test]
fn urls_expand_tools_and_home() {
    assert_eq!(
        expand_exec_url(
            "exec://$TOOLSDIR/dstage.query",
            "/opt/arches/tools/",
            "/var/moab"
        )
        .unwrap(),
        "/opt/arches/tools/dstage.query"
    );
    assert_eq!(
        expand_exec_url("exec:///$HOME/tools/dsquery.pl", "/t", "/var/moab").unwrap(),
        "/var/moab/tools/dsquery.pl"
    );
    assert!(expand_exec_url("http://x/y", "/t", "/h")
        .unwrap_err()
        .contains("exec://"));
}

#[test]
fn arguments_are_exactly_the_seeds() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("args");
    script(
        dir.path(),
        "q",
        &format!("echo \"$#:$*\" >> {}; echo 1234", log.display()),
    );
    script(
        dir.path(),
        "m",
        &format!("echo \"$#:$*\" >> {}; echo 5,99", log.display()),
    );
    script(
        dir.path(),
        "c",
        "echo \"storage STATE=Idle CDISK=73057 ADISK=72119 RATE=2048 CRES=dsop:8\"",
    );
    let mut rm = rm(dir.path(), 5000);
    let r = one(
        &mut rm,
        StorageCall::FileSize {
            user: user(),
            url: "file:///a".into(),
        },
    );
    assert_eq!(r, Ok(StorageReply::FileSize(Some(1234))));
    let r = one(
        &mut rm,
        StorageCall::StageTime {
            user: user(),
            src: "file:///a".into(),
            dest: "file:///b".into(),
            rate_kbps: 0.0,
        },
    );
    assert_eq!(
        r,
        Ok(StorageReply::StageTime {
            secs: Some(1234),
            size: None
        })
    );
    let r = one(
        &mut rm,
        StorageCall::Stage {
            user: user(),
            src: "file:///a".into(),
            dest: "file:///b".into(),
        },
    );
    assert_eq!(
        r,
        Ok(StorageReply::StageTime {
            secs: Some(5),
            size: Some(99)
        })
    );
    let _ = one(
        &mut rm,
        StorageCall::Remove {
            user: user(),
            url: "file:///b".into(),
        },
    );
    let r = one(&mut rm, StorageCall::Cluster).unwrap();
    assert_eq!(
        r,
        StorageReply::Cluster(ClusterInfo {
            name: "storage".into(),
            disk_mb: Some(73057),
            disk_avail_mb: Some(72119),
            rate_kbps: Some(2048.0),
            dsop: Some(8),
            state: Some("Idle".into()),
        })
    );
    let args = std::fs::read_to_string(&log).unwrap();
    assert_eq!(
        args,
        "3:filesize alice file:///a\n5:stagetime alice file:///a file:///b 0.0\n4:stage alice file:///a file:///b\n3:remove alice file:///b\n"
    );
}

#[test]
fn outputs_parse_exactly() {
    let fs = StorageCall::FileSize {
        user: user(),
        url: "x".into(),
    };
    let st = StorageCall::Stage {
        user: user(),
        src: "a".into(),
        dest: "b".into(),
    };
    assert_eq!(parse_reply(&fs, "\n"), Ok(StorageReply::FileSize(None)));
    assert_eq!(parse_reply(&fs, "-1\n"), Ok(StorageReply::FileSize(None)));
    assert_eq!(
        parse_reply(&fs, " 42 \n"),
        Ok(StorageReply::FileSize(Some(42)))
    );
    assert!(parse_reply(&fs, "lots")
        .unwrap_err()
        .contains("invalid filesize output 'lots'"));
    assert_eq!(
        parse_reply(&st, "-1"),
        Ok(StorageReply::StageTime {
            secs: None,
            size: None
        })
    );
    assert_eq!(
        parse_reply(&st, "-1,100"),
        Ok(StorageReply::StageTime {
            secs: None,
            size: Some(100)
        })
    );
    assert_eq!(
        parse_reply(&st, "2.5,7"),
        Ok(StorageReply::StageTime {
            secs: Some(3),
            size: Some(7)
        })
    );
    assert!(parse_reply(&st, "soon")
        .unwrap_err()
        .contains("invalid stagetime output"));
    assert!(parse_cluster("CDISK=3").is_err());
    assert!(parse_cluster("s CDISK=lots")
        .unwrap_err()
        .contains("CDISK=lots"));
}

#[test]
fn failures_garbage_and_hangs_are_errors_not_stalls() {
    let dir = tempfile::tempdir().unwrap();
    script(dir.path(), "q", "echo 'no such file' >&2; exit 3");
    script(dir.path(), "m", "sleep 30; echo 1");
    script(dir.path(), "c", "echo '%%%% garbage'");
    let mut rm = rm(dir.path(), 500);
    let e = one(
        &mut rm,
        StorageCall::FileSize {
            user: user(),
            url: "file:///a".into(),
        },
    )
    .unwrap_err();
    assert!(e.contains("exited with status 3: no such file"), "{e}");
    let t0 = Instant::now();
    let e = one(
        &mut rm,
        StorageCall::Stage {
            user: user(),
            src: "file:///a".into(),
            dest: "file:///b".into(),
        },
    )
    .unwrap_err();
    assert!(e.contains("timed out after 0.5s"), "{e}");
    assert!(t0.elapsed() < Duration::from_secs(20));
    let e = one(&mut rm, StorageCall::Cluster).unwrap_err();
    assert!(e.contains("invalid cluster query"), "{e}");
}

#[test]
fn submit_never_blocks_and_missing_interfaces_fail_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    script(dir.path(), "q", "sleep 2; echo 1");
    let mut rm = rm(dir.path(), 5000);
    let t0 = Instant::now();
    for i in 0..4 {
        rm.submit(
            i,
            StorageCall::FileSize {
                user: user(),
                url: "file:///a".into(),
            },
        );
    }
    assert!(t0.elapsed() < Duration::from_secs(1));
    assert_eq!(rm.in_flight(), 4);
    assert!(rm.poll().is_empty());
    let mut rm2 = StorageRm::new(StorageConfig {
        name: "data".into(),
        workers: 1,
        ..StorageConfig::default()
    });
    rm2.submit(1, StorageCall::Cluster);
    let r = rm2.poll();
    assert_eq!(r.len(), 1);
    assert!(r[0]
        .outcome
        .as_ref()
        .unwrap_err()
        .contains("has no CLUSTERQUERYURL"));
}

#[test]
fn scripts_run_as_the_jobs_user_when_root() {
    // SAFETY: no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    script(dir.path(), "q", "id -u");
    let mut rm = rm(dir.path(), 5000);
    let nobody = Caller {
        name: "nobody".into(),
        uid: 65534,
        gid: 65534,
        ..Caller::default()
    };
    let r = one(
        &mut rm,
        StorageCall::FileSize {
            user: nobody,
            url: "file:///a".into(),
        },
    );
    assert_eq!(r, Ok(StorageReply::FileSize(Some(65534))));
}

#[test]
fn scripts_get_the_users_home_and_groups() {
    // As root: the switch keeps the supplementary groups (initgroups), and
    // HOME/USER/LOGNAME are the job owner's, not the daemon's.
    // SAFETY: no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    std::fs::set_permissions(&out, std::fs::Permissions::from_mode(0o777)).unwrap();
    script(
        dir.path(),
        "q",
        &format!(
            "{{ id -u; id -G | tr ' ' '\\n' | sort -n | tr '\\n' ' '; echo; echo \"$HOME $USER $LOGNAME\"; }} > {}/id; echo 1",
            out.display()
        ),
    );
    let mut rm = rm(dir.path(), 5000);
    let caller = Caller {
        name: "nobody".into(),
        uid: 65534,
        gid: 65534,
        home: "/home/nobody-test".into(),
        groups: vec![65534, 4, 20],
    };
    let r = one(
        &mut rm,
        StorageCall::FileSize {
            user: caller,
            url: "file:///a".into(),
        },
    );
    assert_eq!(r, Ok(StorageReply::FileSize(Some(1))));
    let id = std::fs::read_to_string(out.join("id")).unwrap();
    assert_eq!(
        id, "65534\n4 20 65534 \n/home/nobody-test nobody nobody\n",
        "{id}"
    );
}
