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
        queued: true,
    }
}

const MB: u64 = 1024 * 1024;

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
fn bad_specs_are_clear_errors() {
    for (spec, needle) in [
        ("", "empty"),
        ("relative/path", "absolute path"),
        ("bogus://x/y", "unsupported scheme"),
        ("file:///a|file:///b,file:///c", "directory destination"),
        ("file:///dir/", "no file name"),
        ("file:///a,", "empty destination"),
        ("file:///a b", "white space"),
    ] {
        let e = parse_stage_spec(spec, "/w").unwrap_err().to_string();
        assert!(e.contains(needle), "{spec}: {e}");
    }
}

#[test]
fn external_verifies_and_blocks_without_reservation() {
    let f = files(2, None);
    let p = plan(
        StageModel::External,
        &StorageView::default(),
        &[job(1, &f)],
        100,
    );
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
        ..StorageView::default()
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
}

#[test]
fn loose_initiates_in_priority_order_up_to_maxdsop() {
    let a = files(2, Some(MB));
    let b = files(1, Some(MB));
    let c = files(1, Some(MB));
    let s = StorageView {
        max_dsop: Some(2),
        ..StorageView::default()
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
fn loose_respects_target_usage() {
    // 100 MB disk, target 25% = 25 MB; 20 MB already staged for a queued job.
    let mut done = files(1, Some(20 * MB));
    done[0].status = StageStatus::Complete;
    let big = files(1, Some(10 * MB));
    let small = files(1, Some(4 * MB));
    let s = StorageView {
        target_usage: Some(25.0),
        disk_mb: Some(100),
        ..StorageView::default()
    };
    let jobs = [job(1, &done), job(2, &big), job(3, &small)];
    let p = plan(StageModel::Loose, &s, &jobs, 0);
    assert_eq!(p.actions, vec![StageAction::Stage { job: 3, file: 0 }]);
    assert_eq!(
        p.deferred,
        vec![(
            2,
            StageDeferral::TargetUsage {
                dedicated_mb: 20,
                size_mb: 10,
                target_mb: 25
            }
        )]
    );
    assert_eq!(p.waits[0], (1, None));
    // Unknown size with a target: ask for it first.
    let unk = files(1, None);
    let p = plan(StageModel::Loose, &s, &[job(4, &unk)], 0);
    assert_eq!(p.actions, vec![StageAction::QuerySize { job: 4, file: 0 }]);
}

#[test]
fn disk_full_defers() {
    let f = files(1, Some(50 * MB));
    let s = StorageView {
        disk_avail_mb: Some(10),
        ..StorageView::default()
    };
    let p = plan(StageModel::Loose, &s, &[job(1, &f)], 0);
    assert!(p.actions.is_empty());
    assert_eq!(
        p.deferred,
        vec![(
            1,
            StageDeferral::DiskFull {
                avail_mb: 10,
                size_mb: 50
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
        ..StorageView::default()
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
fn tight_without_rate_asks_for_stage_time() {
    let f = files(1, None);
    let p = plan(StageModel::Tight, &StorageView::default(), &[job(1, &f)], 0);
    assert_eq!(
        p.actions,
        vec![StageAction::QueryStageTime { job: 1, file: 0 }]
    );
    assert_eq!(p.waits, vec![(1, Some(DataWait::Unknown))]);
    let mut f = f;
    f[0].estimate = Some(40);
    f[0].last_query = Some(0);
    let p = plan(
        StageModel::Tight,
        &StorageView::default(),
        &[job(1, &f)],
        10,
    );
    assert_eq!(p.waits, vec![(1, Some(DataWait::Until(50)))]);
}

#[test]
fn failures_are_reported_and_running_jobs_ignored() {
    let mut f = files(1, None);
    f[0].status = StageStatus::Failed;
    f[0].error = Some("script exited with status 2".into());
    let mut running = job(2, &f);
    running.queued = false;
    let p = plan(
        StageModel::Loose,
        &StorageView::default(),
        &[job(1, &f), running],
        0,
    );
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
    let p = plan(StageModel::Loose, &StorageView::default(), &[job(1, &f)], 0);
    assert!(p.actions.is_empty());
    let s = StorageView {
        max_dsop: Some(1),
        ..StorageView::default()
    };
    let mut g = files(1, Some(1));
    g[0].status = StageStatus::Active;
    g[0].in_flight = true;
    let h = files(1, Some(1));
    let p = plan(StageModel::Loose, &s, &[job(1, &g), job(2, &h)], 0);
    assert!(p.actions.is_empty());
    assert_eq!(p.deferred, vec![(2, StageDeferral::MaxDsop(1))]);
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
            s.apply(Event::Submit(Box::new(j)), 0).unwrap();
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
        // Job 2 still gets the depth-1 reservation: the data reservation does
        // not use the RESERVATIONDEPTH bucket.
        assert_eq!(plan.reservation(2).map(|r| r.start), Some(160));
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
