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
