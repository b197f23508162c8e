use super::*;
use crate::node::Node;
use crate::state::JobChange;

fn running(state: &mut State, id: JobId, range: (u32, u32), wall: i64, now: Time) {
    let mut j = Job::new(id, "u", Request::procs(range.0), Some(wall), now);
    j.elastic = Some(check_range(range.0, range.1, 1).unwrap());
    state.apply(Event::submit(j), now).unwrap();
    let plan = crate::schedule(
        state,
        &Policy {
            growth: GrowthPolicy::None,
            ..Policy::default()
        },
        now,
    );
    let s = plan.starts.iter().find(|s| s.job == id).unwrap().clone();
    state
        .apply(
            Event::Start {
                job: id,
                alloc: s.alloc,
                kind: s.kind,
            },
            now,
        )
        .unwrap();
}

#[test]
fn ranges_are_checked() {
    assert!(check_range(2, 8, 1).is_ok());
    assert_eq!(
        check_range(0, 8, 1).unwrap_err(),
        "invalid processor range 0-8 (the minimum must be at least 1 and at most the maximum)"
    );
    assert!(check_range(8, 2, 1).is_err());
    assert_eq!(
        check_range(2, 7, 2).unwrap_err(),
        "processor range 2-7 is not a whole number of 2-processor tasks"
    );
}

#[test]
fn requests_and_releases_are_checked() {
    let mut s = State::new(vec![Node::new("n1", 8, 0)]);
    running(&mut s, 1, (2, 6), 3600, 0);
    let j = s.job(1).unwrap();
    let e = request(j, 2, 100).unwrap();
    assert_eq!(
        e.request,
        Some(GrowRequest {
            procs: 2,
            since: 100
        })
    );
    s.apply(
        Event::Modify {
            job: 1,
            change: JobChange::Elastic(Some(e)),
        },
        100,
    )
    .unwrap();
    let j = s.job(1).unwrap();
    // Requests add up; the maximum bounds them.
    let e2 = request(j, 2, 200).unwrap();
    assert_eq!(e2.request.map(|r| (r.procs, r.since)), Some((4, 100)));
    assert_eq!(
        request(j, 4, 200).unwrap_err(),
        "job 1 would have 8 processors, more than its maximum of 6"
    );
    assert!(request(j, 0, 200).is_err());
    // A release below the minimum is refused; one within lowers the cap.
    assert_eq!(
        release(j, 2).unwrap_err(),
        "job 1 would have 0 processors, fewer than its minimum of 2"
    );
    // A rigid job, or one not running, is not resizable.
    let rigid = Job::new(2, "u", Request::procs(1), Some(60), 0);
    assert!(request(&rigid, 1, 0)
        .unwrap_err()
        .starts_with("job 2 is not resizable"));
    let mut queued = rigid.clone();
    queued.elastic = Some(check_range(1, 4, 1).unwrap());
    assert_eq!(
        request(&queued, 1, 0).unwrap_err(),
        "job 2 is Idle: only a running job can be resized"
    );
}

#[test]
fn a_release_gives_back_the_last_processors_and_lowers_the_ceiling() {
    let mut s = State::new(vec![Node::new("n1", 4, 0), Node::new("n2", 4, 0)]);
    running(&mut s, 1, (2, 8), 3600, 0);
    let other = 1 - s.job(1).unwrap().run.as_ref().unwrap().alloc[0].node;
    let alloc = vec![Alloc {
        node: other,
        tasks: 3,
        procs: 3,
        mem_mb: 0,
        gres: Default::default(),
    }];
    s.apply(Event::Grow { job: 1, alloc }, 0).unwrap();
    assert_eq!(s.job(1).unwrap().procs(), 5);
    let (less, e) = release(s.job(1).unwrap(), 3).unwrap();
    assert_eq!(
        less.iter().map(|a| (a.node, a.procs)).collect::<Vec<_>>(),
        [(other, 3)]
    );
    assert_eq!((e.cap, e.min, e.max), (2, 2, 8));
    s.apply(
        Event::Shrink {
            job: 1,
            alloc: less,
        },
        10,
    )
    .unwrap();
    let j = s.job(1).unwrap();
    assert_eq!(j.procs(), 2);
    assert_eq!(
        j.run.as_ref().unwrap().alloc.len(),
        1,
        "the grown node left the allocation"
    );
    assert_eq!(s.usage(other).procs, 0);
    assert_eq!(s.usage(other).jobs, 0);
    // A shrink that is not part of the allocation is refused, nothing changes.
    let bad = vec![Alloc {
        node: other,
        tasks: 1,
        procs: 1,
        mem_mb: 0,
        gres: Default::default(),
    }];
    assert!(s.apply(Event::Shrink { job: 1, alloc: bad }, 10).is_err());
    assert_eq!(s.job(1).unwrap().procs(), 2);
}

#[test]
fn shadows_never_show_as_queued_jobs() {
    let mut s = State::new(vec![Node::new("n1", 4, 0)]);
    running(&mut s, 1, (2, 4), 3600, 0);
    // Another job takes the rest; a request cannot be granted.
    let other = Job::new(2, "u", Request::procs(2), Some(7200), 0);
    s.apply(Event::submit(other), 0).unwrap();
    let none = Policy {
        growth: GrowthPolicy::None,
        ..Policy::default()
    };
    let p = crate::schedule(&s, &none, 0);
    let alloc = p.starts[0].alloc.clone();
    s.apply(
        Event::Start {
            job: 2,
            alloc,
            kind: StartKind::Priority,
        },
        0,
    )
    .unwrap();
    let e = request(s.job(1).unwrap(), 2, 10).unwrap();
    s.apply(
        Event::Modify {
            job: 1,
            change: JobChange::Elastic(Some(e)),
        },
        10,
    )
    .unwrap();
    let p = crate::schedule(&s, &none, 10);
    assert!(p.elastic.grows.is_empty());
    assert!(p.decisions.iter().all(|(id, _)| !is_shadow(*id)));
    assert!(p.reservations.iter().all(|r| !is_shadow(r.job)));
    assert_eq!(p.elastic.waits.len(), 1);
    assert_eq!(p.elastic.waits[0].0, 1);
    assert!(matches!(
        p.elastic.waits[0].1,
        BlockReason::Resources {
            idle_procs: 0,
            needed_procs: 2
        }
    ));
}

#[test]
fn a_malleable_job_that_cannot_grow_says_why() {
    let mut s = State::new(vec![Node::new("n1", 4, 0)]);
    running(&mut s, 1, (4, 8), 3600, 0);
    let p = crate::schedule(&s, &Policy::default(), 10);
    assert_eq!(p.elastic.notes, [(1, "no processor is idle".to_string())]);
    assert_eq!(
        "afterbackfill".parse::<GrowthPolicy>(),
        Ok(GrowthPolicy::AfterBackfill)
    );
    assert!("sometimes".parse::<GrowthPolicy>().is_err());
}
