use super::*;

fn files(n: usize, size: Option<u64>) -> Vec<StageFile> {
    (0..n)
        .map(|i| StageFile {
            size,
            ..StageFile::new(&format!("file:///src/f{i}"), &format!("file:///dst/f{i}"))
        })
        .collect()
}

fn job(id: JobId, f: &[StageFile]) -> StageJob<'_> {
    StageJob {
        job: id,
        files: f,
        reservation: None,
        phase: Phase::Queued,
    }
}

fn view() -> StorageView {
    StorageView {
        cleanup: true,
        ..StorageView::default()
    }
}

#[test]
fn spec_forms_of_the_seed() {
    let v = parse_stage_spec("file:///home/jsmith/big301.dat", "/home/jsmith/run").unwrap();
    assert_eq!(
        v,
        vec![(
            "file:///home/jsmith/big301.dat".to_string(),
            "file:///home/jsmith/run/big301.dat".to_string()
        )]
    );
    let v = parse_stage_spec(
        "file:///tmp/big01.dat|file:///tmp/big02.dat,file:///home/test/",
        "/w",
    )
    .unwrap();
    assert_eq!(v.len(), 2);
    assert_eq!(v[1].1, "file:///home/test/big02.dat");
    let v = parse_stage_spec("/tmp/a,/scratch/b", "/w").unwrap();
    assert_eq!(v[0], ("file:///tmp/a".into(), "file:///scratch/b".into()));
    let v = parse_stage_spec("scp://head/home/u/x.dat,$HOME/x.dat", "/w").unwrap();
    assert_eq!(v[0].1, "file://$HOME/x.dat");
}

#[test]
fn local_destinations() {
    for (spec, dest) in [
        ("file:///a/in.dat,$LOCAL/in.dat", "file://$LOCAL/in.dat"),
        ("file:///a/in.dat,$LOCAL/", "file://$LOCAL/in.dat"),
        ("file:///a/in.dat,$LOCAL", "file://$LOCAL/in.dat"),
        (
            "file:///a/in.dat,file://$LOCAL/sub/x",
            "file://$LOCAL/sub/x",
        ),
        (
            "file:///a/in.dat,scp://$LOCAL/scratch/x",
            "scp://$LOCAL/scratch/x",
        ),
    ] {
        let v = parse_stage_spec(spec, "/w").unwrap();
        assert_eq!(v[0].1, dest, "{spec}");
        assert!(is_local(&v[0].1), "{spec}");
    }
    assert_eq!(
        local_dest("file://$LOCAL/sub/x"),
        Some(LocalDest::Under("sub/x"))
    );
    assert_eq!(
        local_dest("scp://$LOCAL/scratch/x"),
        Some(LocalDest::Absolute("/scratch/x"))
    );
    assert!(!is_local("file:///scratch/$LOCAL/x"));
    assert!(!is_local("file://$LOCALX/x"));
    assert!(!is_local("http://$LOCAL/x"));
}

#[test]
fn bad_specs_are_clear_errors() {
    for (spec, needle) in [
        ("", "empty"),
        ("relative/path", "absolute path"),
        ("bogus://x/y", "unsupported scheme"),
        ("file:///a|file:///b,file:///c", "directory destination"),
        ("file:///dir/", "no file name"),
        ("file:///a,", "empty destination"),
        ("file:///a b", "white space"),
        ("file:///a,file:///b,file:///c", "separated by '|', not ','"),
        ("/a,/b,/c", "separated by '|', not ','"),
        ("$LOCAL/a,/b", "$LOCAL may only begin a destination"),
        ("/a,/scratch/$LOCAL/b", "$LOCAL must begin it"),
        ("/a,http://$LOCAL/b", "$LOCAL must begin it"),
    ] {
        let e = parse_stage_spec(spec, "/w").unwrap_err().to_string();
        assert!(e.contains(needle), "{spec}: {e}");
    }
    // A comma inside a URL that does not start another URL is fine.
    let v = parse_stage_spec("http://h/get?a=1,2,/scratch/x", "/w").unwrap();
    assert_eq!(v[0].0, "http://h/get?a=1,2");
}

#[test]
fn external_verifies_and_blocks_without_reservation() {
    let f = files(2, None);
    let p = plan(StageModel::External, &view(), &[job(1, &f)], 100);
    assert_eq!(
        p.actions,
        vec![
            StageAction::Verify { job: 1, file: 0 },
            StageAction::Verify { job: 1, file: 1 }
        ]
    );
    assert_eq!(p.waits, vec![(1, Some(DataWait::Unknown))]);
    // Queried recently: not again until the requery interval passed.
    let mut f = f;
    for x in &mut f {
        x.last_query = Some(95);
    }
    let s = StorageView {
        requery: 10,
        ..view()
    };
    assert!(plan(StageModel::External, &s, &[job(1, &f)], 100)
        .actions
        .is_empty());
    assert_eq!(
        plan(StageModel::External, &s, &[job(1, &f)], 105)
            .actions
            .len(),
        2
    );
    // Present: no wait.
    for x in &mut f {
        x.status = StageStatus::Complete;
    }
    let p = plan(StageModel::External, &s, &[job(1, &f)], 200);
    assert_eq!(p.waits, vec![(1, None)]);
    assert!(p.actions.is_empty());
    // What EXTERNAL did not stage, it does not remove.
    let mut ended = job(1, &f);
    ended.phase = Phase::Ended;
    assert!(plan(StageModel::External, &s, &[ended], 300)
        .actions
        .is_empty());
}

#[test]
fn loose_initiates_in_priority_order_up_to_maxdsop() {
    let a = files(2, Some(MB));
    let b = files(1, Some(MB));
    let c = files(1, Some(MB));
    let s = StorageView {
        max_dsop: Some(2),
        ..view()
    };
    let jobs = [job(7, &a), job(3, &b), job(5, &c)];
    let p = plan(StageModel::Loose, &s, &jobs, 0);
    assert_eq!(
        p.actions,
        vec![
            StageAction::Stage { job: 7, file: 0 },
            StageAction::Stage { job: 7, file: 1 }
        ]
    );
    assert_eq!(p.deferred.len(), 2);
    assert_eq!(p.deferred[0], (3, StageDeferral::MaxDsop(2)));
    assert!(p.waits.iter().all(|w| w.1 == Some(DataWait::Unknown)));
}

#[test]
fn loose_asks_for_the_size_first() {
    let unk = files(1, None);
    let p = plan(StageModel::Loose, &view(), &[job(4, &unk)], 0);
    assert_eq!(p.actions, vec![StageAction::QuerySize { job: 4, file: 0 }]);
    assert_eq!(p.waits, vec![(4, Some(DataWait::Unknown))]);
    // The size stays unknown after asking: staged anyway.
    let mut unk = unk;
    unk[0].last_query = Some(0);
    let p = plan(StageModel::Loose, &view(), &[job(4, &unk)], 5);
    assert_eq!(p.actions, vec![StageAction::Stage { job: 4, file: 0 }]);
}

#[test]
fn loose_respects_target_usage() {
    // 100 MB disk, target 25% = 25 MB; 20 MB already staged for a queued job.
    let mut done = files(1, Some(20 * MB));
    done[0].status = StageStatus::Complete;
    let big = files(1, Some(10 * MB));
    let small = files(1, Some(4 * MB));
    let s = StorageView {
        target_usage: Some(25.0),
        disk_mb: Some(100),
        ..view()
    };
    let jobs = [job(1, &done), job(2, &big), job(3, &small)];
    let p = plan(StageModel::Loose, &s, &jobs, 0);
    assert_eq!(p.actions, vec![StageAction::Stage { job: 3, file: 0 }]);
    assert_eq!(
        p.deferred,
        vec![(
            2,
            StageDeferral::TargetUsage {
                dedicated: 20 * MB,
                size: 10 * MB,
                target: 25 * MB
            }
        )]
    );
    assert_eq!(p.waits[0], (1, None));
}

#[test]
fn data_counts_until_it_is_removed() {
    // The same 20 MB, now of a running job, then of an ended one.
    let mut done = files(1, Some(20 * MB));
    done[0].status = StageStatus::Complete;
    done[0].started = Some(0);
    let big = files(1, Some(10 * MB));
    let s = StorageView {
        target_usage: Some(25.0),
        disk_mb: Some(100),
        ..view()
    };
    for phase in [Phase::Running, Phase::Ended] {
        let mut d = job(1, &done);
        d.phase = phase;
        let jobs = [d, job(2, &big)];
        assert_eq!(usage(&jobs, true).dedicated, 20 * MB, "{phase:?}");
        let p = plan(StageModel::Loose, &s, &jobs, 0);
        assert!(
            !p.actions.contains(&StageAction::Stage { job: 2, file: 0 }),
            "{phase:?}: {p:?}"
        );
        if phase == Phase::Ended {
            assert_eq!(p.actions, vec![StageAction::Remove { job: 1, file: 0 }]);
        }
    }
    // Removed: the space is free again.
    let mut gone = done.clone();
    gone[0].status = StageStatus::Removed;
    let mut d = job(1, &gone);
    d.phase = Phase::Ended;
    let jobs = [d, job(2, &big)];
    assert_eq!(usage(&jobs, true).dedicated, 0);
    let p = plan(StageModel::Loose, &s, &jobs, 0);
    assert_eq!(p.actions, vec![StageAction::Stage { job: 2, file: 0 }]);
    // Kept (DATASTAGECLEANUP FALSE): an ended job's data is no longer
    // staging's, nothing is removed.
    let mut d = job(1, &done);
    d.phase = Phase::Ended;
    let keep = StorageView {
        cleanup: false,
        ..s
    };
    let jobs = [d, job(2, &big)];
    assert_eq!(usage(&jobs, false).dedicated, 0);
    let p = plan(StageModel::Loose, &keep, &jobs, 0);
    assert_eq!(p.actions, vec![StageAction::Stage { job: 2, file: 0 }]);
}

#[test]
fn disk_full_defers() {
    let f = files(1, Some(50 * MB));
    let s = StorageView {
        disk_avail_mb: Some(10),
        ..view()
    };
    let p = plan(StageModel::Loose, &s, &[job(1, &f)], 0);
    assert!(p.actions.is_empty());
    assert_eq!(
        p.deferred,
        vec![(
            1,
            StageDeferral::DiskFull {
                avail: 10 * MB,
                size: 50 * MB
            }
        )]
    );
}

#[test]
fn tight_estimates_ready_time_and_waits_for_the_reservation() {
    // 1000 KB at 10 KB/s = 100 s.
    let f = files(1, Some(1000 * 1024));
    let s = StorageView {
        rate_kbps: Some(10.0),
        ..view()
    };
    let p = plan(StageModel::Tight, &s, &[job(1, &f)], 1000);
    assert_eq!(p.actions, vec![StageAction::Stage { job: 1, file: 0 }]);
    assert_eq!(p.waits, vec![(1, Some(DataWait::Until(1100)))]);
    // The compute reservation is an hour away: start the transfer later.
    let mut j = job(1, &f);
    j.reservation = Some(1000 + 3600);
    let p = plan(StageModel::Tight, &s, &[j], 1000);
    assert!(p.actions.is_empty());
    assert_eq!(
        p.deferred,
        vec![(1, StageDeferral::NotYet(1000 + 3600 - 100 - 60))]
    );
    // Active transfer started at 1000: ready at 1100.
    let mut a = f.clone();
    a[0].status = StageStatus::Active;
    a[0].started = Some(1000);
    a[0].last_query = Some(1040);
    let s2 = StorageView { requery: 30, ..s };
    let p = plan(StageModel::Tight, &s2, &[job(1, &a)], 1050);
    assert_eq!(p.waits, vec![(1, Some(DataWait::Until(1100)))]);
    assert!(p.actions.is_empty());
    // Over-running: pushed just ahead of now, and verified.
    let p = plan(StageModel::Tight, &s2, &[job(1, &a)], 1200);
    assert_eq!(p.waits, vec![(1, Some(DataWait::Until(1230)))]);
    assert_eq!(p.actions, vec![StageAction::Verify { job: 1, file: 0 }]);
}

#[test]
fn tight_ready_time_with_a_short_estimate_stays_put() {
    // A 10 s transfer started at 100: ready at 110, whatever the time of
    // the round before then (it used to move to now + 10 every round).
    let mut a = files(1, Some(10 * 1024));
    a[0].status = StageStatus::Active;
    a[0].started = Some(100);
    a[0].last_query = Some(100);
    let s = StorageView {
        rate_kbps: Some(1.0),
        requery: 1000,
        ..view()
    };
    for now in [100, 103, 109] {
        let p = plan(StageModel::Tight, &s, &[job(1, &a)], now);
        assert_eq!(p.waits, vec![(1, Some(DataWait::Until(110)))], "at {now}");
    }
    // Past it: a step ahead of now.
    let p = plan(StageModel::Tight, &s, &[job(1, &a)], 110);
    assert_eq!(
        p.waits,
        vec![(1, Some(DataWait::Until(110 + OVERRUN_STEP)))]
    );
    assert_eq!(expected_ready(100, 10, 105), 110);
    assert_eq!(expected_ready(100, 10, 110), 140);
    assert_eq!(expected_ready(100, 0, 100), 130);
}

#[test]
fn tight_without_rate_asks_for_stage_time() {
    let f = files(1, None);
    let p = plan(StageModel::Tight, &view(), &[job(1, &f)], 0);
    assert_eq!(
        p.actions,
        vec![StageAction::QueryStageTime { job: 1, file: 0 }]
    );
    assert_eq!(p.waits, vec![(1, Some(DataWait::Unknown))]);
    let mut f = f;
    f[0].estimate = Some(40);
    f[0].last_query = Some(0);
    let p = plan(StageModel::Tight, &view(), &[job(1, &f)], 10);
    assert_eq!(p.waits, vec![(1, Some(DataWait::Until(50)))]);
}

#[test]
fn overrunning_transfers_expire() {
    // No estimate: DATASTAGETIMEOUT (600 s) after it was initiated.
    let mut a = files(1, None);
    a[0].status = StageStatus::Active;
    a[0].started = Some(1000);
    a[0].last_query = Some(1000);
    let s = StorageView {
        timeout: 600,
        requery: 10,
        max_dsop: Some(1),
        ..view()
    };
    let other = files(1, Some(1));
    let p = plan(StageModel::Loose, &s, &[job(1, &a), job(2, &other)], 1599);
    assert!(p.expired.is_empty());
    assert_eq!(p.deferred, vec![(2, StageDeferral::MaxDsop(1))]);
    let p = plan(StageModel::Loose, &s, &[job(1, &a), job(2, &other)], 1600);
    assert_eq!(p.expired, vec![(1, 0)]);
    assert!(!p.actions.contains(&StageAction::Verify { job: 1, file: 0 }));
    // With an estimate of 300 s: three times that (900 s) is longer.
    a[0].estimate = Some(300);
    assert_eq!(s.deadline(&a[0]), Some(1900));
    let p = plan(StageModel::Tight, &s, &[job(1, &a)], 1899);
    assert!(p.expired.is_empty());
    let p = plan(StageModel::Tight, &s, &[job(1, &a)], 1900);
    assert_eq!(p.expired, vec![(1, 0)]);
    // DATASTAGETIMEOUT 0: never.
    let never = StorageView { timeout: 0, ..s };
    assert_eq!(never.deadline(&a[0]), None);
}

#[test]
fn failures_are_reported_and_running_jobs_ignored() {
    let mut f = files(1, None);
    f[0].status = StageStatus::Failed;
    f[0].error = Some("script exited with status 2".into());
    let mut running = job(2, &f);
    running.phase = Phase::Running;
    let p = plan(StageModel::Loose, &view(), &[job(1, &f), running], 0);
    assert_eq!(
        p.failed,
        vec![(1, "script exited with status 2".to_string())]
    );
    assert_eq!(p.waits, vec![(1, Some(DataWait::Unknown))]);
}

#[test]
fn in_flight_files_are_not_asked_twice() {
    let mut f = files(1, Some(1));
    f[0].in_flight = true;
    let p = plan(StageModel::Loose, &view(), &[job(1, &f)], 0);
    assert!(p.actions.is_empty());
    let s = StorageView {
        max_dsop: Some(1),
        ..view()
    };
    let mut g = files(1, Some(1));
    g[0].status = StageStatus::Active;
    g[0].in_flight = true;
    let h = files(1, Some(1));
    let p = plan(StageModel::Loose, &s, &[job(1, &g), job(2, &h)], 0);
    assert!(p.actions.is_empty());
    assert_eq!(p.deferred, vec![(2, StageDeferral::MaxDsop(1))]);
}

fn local_files(n: usize) -> Vec<StageFile> {
    (0..n)
        .map(|i| StageFile {
            size: Some(MB),
            ..StageFile::new(&format!("file:///src/l{i}"), &format!("file://$LOCAL/l{i}"))
        })
        .collect()
}

#[test]
fn local_files_wait_for_the_allocation() {
    // Queued: the $LOCAL file does not hold the job back (it cannot be
    // staged before the job has nodes); its shared file is staged TIGHT.
    let mut f = local_files(1);
    f.extend(files(1, Some(1000 * 1024)));
    let s = StorageView {
        rate_kbps: Some(10.0),
        ..view()
    };
    let p = plan(StageModel::Local, &s, &[job(1, &f)], 0);
    assert_eq!(p.actions, vec![StageAction::Stage { job: 1, file: 1 }]);
    assert_eq!(p.waits, vec![(1, Some(DataWait::Until(100)))]);
    // Only $LOCAL files: nothing to wait for before the start.
    let l = local_files(2);
    let p = plan(StageModel::Local, &s, &[job(2, &l)], 0);
    assert!(p.actions.is_empty());
    assert_eq!(p.waits, vec![(2, None)]);
    // Under another model a $LOCAL file is an error, not a directory
    // named '$LOCAL'.
    let p = plan(StageModel::Loose, &s, &[job(2, &l)], 0);
    assert!(p.actions.is_empty());
    assert_eq!(p.failed.len(), 2);
    assert!(p.failed[0].1.contains("needs DATASTAGEMODEL LOCAL"));
    assert_eq!(p.waits, vec![(2, Some(DataWait::Unknown))]);
}

#[test]
fn local_stages_to_the_allocated_node_throttled_per_node() {
    let a = local_files(2);
    let b = local_files(1);
    let c = local_files(1);
    let s = StorageView {
        max_node_ops: Some(1),
        max_dsop: Some(8),
        ..view()
    };
    let on = |id, f, node| StageJob {
        job: id,
        files: f,
        reservation: None,
        phase: Phase::Allocated { node },
    };
    let jobs = [on(1, &a, "n1"), on(2, &b, "n1"), on(3, &c, "n2")];
    let p = plan(StageModel::Local, &s, &jobs, 0);
    assert_eq!(
        p.actions,
        vec![
            StageAction::Stage { job: 1, file: 0 },
            StageAction::Stage { job: 3, file: 0 }
        ]
    );
    let busy = StageDeferral::NodeBusy {
        node: "n1".into(),
        limit: 1,
    };
    assert_eq!(p.deferred, vec![(1, busy.clone()), (2, busy)]);
    assert!(p.ready.is_empty());
    // An active stage-in to n1 counts for the node.
    let mut a2 = a.clone();
    a2[0].status = StageStatus::Active;
    a2[0].node = Some("n1".into());
    a2[0].started = Some(0);
    a2[0].last_query = Some(0);
    let jobs = [on(1, &a2, "n1"), on(2, &b, "n1")];
    let u = usage(&jobs, true);
    assert_eq!(u.node_ops.get("n1"), Some(&1));
    // $LOCAL data is on the node, not the storage manager.
    assert_eq!(u.dedicated, 0);
    let p = plan(
        StageModel::Local,
        &StorageView { requery: 5, ..s },
        &jobs,
        1,
    );
    assert!(p
        .actions
        .iter()
        .all(|x| !matches!(x, StageAction::Stage { .. })));
    // All there: launch.
    let mut done = a.clone();
    for x in &mut done {
        x.status = StageStatus::Complete;
    }
    let p = plan(StageModel::Local, &s, &[on(1, &done, "n1")], 2);
    assert_eq!(p.ready, vec![1]);
    // A failure is reported for the driver to requeue the job.
    let mut bad = a.clone();
    bad[1].status = StageStatus::Failed;
    bad[1].error = Some("disk full".into());
    let p = plan(StageModel::Local, &s, &[on(1, &bad, "n1")], 2);
    assert_eq!(p.failed, vec![(1, "disk full".to_string())]);
    assert!(p.actions.is_empty() && p.ready.is_empty());
}

mod scheduling {
    use crate::job::{Job, JobState, Request};
    use crate::node::Node;
    use crate::plan::BlockReason;
    use crate::policy::Policy;
    use crate::schedule::schedule;
    use crate::staging::DataWait;
    use crate::state::{Event, JobChange, State};

    fn state(jobs: &[(u64, u32, i64, i64)]) -> State {
        // (id, procs, walltime, user priority)
        let mut s = State::new(vec![Node::new("n1", 4, 0)]);
        for &(id, procs, wall, prio) in jobs {
            let mut j = Job::new(id, "u", Request::procs(procs), Some(wall), 0);
            j.user_prio = prio;
            s.apply(Event::submit(j), 0).unwrap();
        }
        s
    }

    fn wait(s: &mut State, job: u64, w: Option<DataWait>) {
        let change = JobChange::DataWait(w);
        s.apply(Event::Modify { job, change }, 0).unwrap();
    }

    #[test]
    fn tight_reserves_from_data_ready_and_lets_others_use_the_nodes() {
        // Job 1 (top priority) needs the whole node but its data is ready at 60.
        let mut s = state(&[(1, 4, 100, 100), (2, 4, 50, 0)]);
        wait(&mut s, 1, Some(DataWait::Until(60)));
        let plan = schedule(&s, &Policy::default(), 0);
        let started: Vec<u64> = plan.starts.iter().map(|x| x.job).collect();
        assert_eq!(
            started,
            vec![2],
            "job 2 uses the nodes while job 1's data stages"
        );
        assert_eq!(plan.reservation(1).map(|r| r.start), Some(60));
        assert_eq!(
            plan.decisions.get(&1).and_then(|d| d.reason.clone()),
            Some(BlockReason::DataStaging(Some(60)))
        );
        // The plan wakes up for the data-ready time (job 2's end is known
        // to the state once it is started).
        assert_eq!(plan.next_wakeup, Some(60));
        assert_eq!(s.next_wakeup(0), Some(60));
    }

    #[test]
    fn tight_reservation_is_not_delayed_by_later_jobs() {
        let mut s = state(&[(1, 4, 100, 100), (2, 4, 61, 0)]);
        wait(&mut s, 1, Some(DataWait::Until(60)));
        let plan = schedule(&s, &Policy::default(), 0);
        assert!(plan.starts.is_empty());
        assert_eq!(plan.reservation(1).map(|r| r.start), Some(60));
        // The data reservation used the depth-1 bucket: job 2 has none.
        assert_eq!(plan.reservation(2), None);
    }

    #[test]
    fn tight_reservations_count_against_the_reservation_depth() {
        use crate::policy::ReservationBucket;
        // Three jobs waiting for data, depth 2: the first two are reserved
        // from their data-ready times, the third only waits.
        let mut s = state(&[(1, 4, 100, 30), (2, 4, 100, 20), (3, 4, 100, 10)]);
        for j in 1..=3 {
            wait(&mut s, j, Some(DataWait::Until(60)));
        }
        let policy = Policy {
            reservation_buckets: vec![ReservationBucket {
                depth: 2,
                qos: None,
            }],
            ..Policy::default()
        };
        let plan = schedule(&s, &policy, 0);
        assert_eq!(plan.reservation(1).map(|r| r.start), Some(60));
        assert_eq!(plan.reservation(2).map(|r| r.start), Some(160));
        assert_eq!(plan.reservation(3), None);
        assert_eq!(
            plan.decisions.get(&3).and_then(|d| d.reason.clone()),
            Some(BlockReason::DataStaging(Some(60)))
        );
        // A job without data behind them gets no reservation either (the
        // depth is used up) but backfills where it fits.
        let mut s = state(&[(1, 4, 100, 30), (2, 4, 100, 20), (4, 2, 50, 0)]);
        for j in 1..=2 {
            wait(&mut s, j, Some(DataWait::Until(60)));
        }
        let plan = schedule(&s, &policy, 0);
        assert_eq!(
            plan.starts.iter().map(|x| x.job).collect::<Vec<_>>(),
            vec![4]
        );
    }

    #[test]
    fn local_phases_hold_the_allocation_and_restart_the_clock() {
        let mut s = state(&[(1, 4, 100, 0), (2, 4, 100, 0)]);
        let plan = schedule(&s, &Policy::default(), 0);
        let st = plan.starts[0].clone();
        assert_eq!(st.job, 1);
        s.apply(
            Event::Start {
                job: 1,
                alloc: st.alloc,
                kind: st.kind,
            },
            0,
        )
        .unwrap();
        let phase = |s: &mut State, p, at| {
            s.apply(
                Event::Modify {
                    job: 1,
                    change: JobChange::Phase(p),
                },
                at,
            )
        };
        phase(&mut s, JobState::Staging, 0).unwrap();
        assert_eq!(s.job(1).unwrap().display_state(), JobState::Staging);
        assert!(s.job(1).unwrap().state.is_active());
        // The allocation is held: job 2 does not fit.
        let plan = schedule(&s, &Policy::default(), 10);
        assert!(plan.starts.is_empty());
        phase(&mut s, JobState::Staged, 20).unwrap();
        // Launched at 30: the limit counts from then.
        phase(&mut s, JobState::Running, 30).unwrap();
        let j = s.job(1).unwrap();
        assert_eq!(j.run.as_ref().map(|r| r.start_time), Some(30));
        assert_eq!(j.expected_end(), Some(130));
        // Running cannot go back to Staged; an idle job has no phase.
        assert!(phase(&mut s, JobState::Staged, 40).is_err());
        assert!(s
            .apply(
                Event::Modify {
                    job: 2,
                    change: JobChange::Phase(JobState::Staging)
                },
                40
            )
            .is_err());
        // A staging job can be requeued (its staging failed): the
        // allocation is freed and it queues again.
        phase(&mut s, JobState::Staging, 40).unwrap();
        s.apply(Event::Requeue { job: 1 }, 41).unwrap();
        assert_eq!(s.job(1).unwrap().state, JobState::Idle);
        let plan = schedule(&s, &Policy::default(), 42);
        assert_eq!(plan.starts.len(), 1);
    }

    #[test]
    fn unknown_wait_blocks_without_reservation_and_ready_data_starts() {
        let mut s = state(&[(1, 4, 100, 100), (2, 2, 500, 0)]);
        wait(&mut s, 1, Some(DataWait::Unknown));
        let plan = schedule(&s, &Policy::default(), 0);
        assert_eq!(
            plan.starts.iter().map(|x| x.job).collect::<Vec<_>>(),
            vec![2]
        );
        assert!(plan.reservation(1).is_none());
        let d = plan.decisions.get(&1).unwrap();
        assert_eq!(d.reason, Some(BlockReason::DataStaging(None)));
        assert!(!d.eligible);
        assert_eq!(
            d.reason.as_ref().unwrap().to_string(),
            "job is waiting for stage-in data"
        );
        // Data arrives: it starts.
        let mut s = state(&[(1, 4, 100, 100)]);
        wait(&mut s, 1, Some(DataWait::Unknown));
        wait(&mut s, 1, None);
        let plan = schedule(&s, &Policy::default(), 0);
        assert_eq!(plan.starts.len(), 1);
        assert_eq!(s.job(1).map(|j| j.state), Some(JobState::Idle));
    }
}
