use super::*;
use crate::job::{Alloc, Request, StartKind};
use crate::node::Node;
use crate::state::Event;
use crate::Policy;

#[test]
fn index_lists_parse_format_and_locate() {
    let i = Indices::parse("1-9:2").unwrap();
    assert_eq!(i.len(), 5);
    assert_eq!(i.iter().collect::<Vec<_>>(), [1, 3, 5, 7, 9]);
    assert_eq!(i.format(), "1-9:2");
    assert_eq!(i.nth(2), Some(5));
    assert_eq!(i.position(7), Some(3));
    assert_eq!(i.position(4), None);
    // The end is the last index reached.
    assert_eq!(Indices::parse("1-10:2").unwrap().format(), "1-9:2");
    let l = Indices::parse("7,1,5").unwrap();
    assert_eq!(l.iter().collect::<Vec<_>>(), [1, 5, 7]);
    assert_eq!(l.format(), "1,5,7");
    assert_eq!(l.nth(3), None);
    let m = Indices::parse("0-4,10-20:5").unwrap();
    assert_eq!(m.len(), 8);
    assert_eq!(m.nth(5), Some(10));
    assert_eq!(m.position(20), Some(7));
    assert_eq!(m.format(), "0-4,10-20:5");
    for bad in [
        "", "1-", "a", "1,,2", "5-1", "1-4,3", "1-9:0", "3:2", "1-200000",
    ] {
        assert!(Indices::parse(bad).is_err(), "{bad}");
    }
    assert_eq!(
        Indices::parse("1-4,3").unwrap_err(),
        "index 3 given twice".to_string()
    );
}

#[test]
fn array_requests_as_msub_takes_them() {
    let s = ArraySpec::parse("myarray[1-100]%5").unwrap();
    assert_eq!(s.name.as_deref(), Some("myarray"));
    assert_eq!(s.indices.len(), 100);
    assert_eq!(s.slot_limit, Some(5));
    let s = ArraySpec::parse("1,5,7").unwrap();
    assert_eq!((s.name, s.indices.len(), s.slot_limit), (None, 3, None));
    let s = ArraySpec::parse("[0-9:3]").unwrap();
    assert_eq!(s.indices.format(), "0-9:3");
    for bad in ["x[1-3", "1-3]", "1-3%0", "1-3%x", "a b[1]", "[]", "%2"] {
        assert!(ArraySpec::parse(bad).is_err(), "{bad}");
    }
}

fn state_with_array(procs: u32, count: &str, limit: Option<u32>) -> State {
    let mut s = State::new(vec![Node::new("n1", procs, 0)]);
    let t = Job::new(0, "u", Request::procs(1), Some(100), 0);
    let a = ArrayJob::new(10, t, Indices::parse(count).unwrap(), limit);
    s.apply(Event::SubmitArray(Box::new(a)), 0).unwrap();
    s
}

#[test]
fn sub_jobs_become_jobs_a_window_at_a_time() {
    let mut s = state_with_array(4, "1-1000", None);
    assert_eq!(s.queued_count(), 0);
    let made = s.expand_arrays(0);
    assert_eq!(made.len(), WINDOW as usize);
    assert_eq!(made[0], 11);
    assert_eq!(s.queued_count(), WINDOW as usize);
    let (a, m) = s.array_of(11 + 500).unwrap();
    assert_eq!((a.id, m.index, m.position), (10, 501, 500));
    assert!(!a.materialized(500));
    assert_eq!(a.pending(), 1000 - WINDOW);
    // Nothing more while the window is full.
    assert!(s.expand_arrays(0).is_empty());
    // One sub-job made out of order (held on its own), then the window
    // refills past it after starts.
    assert_eq!(s.materialize(10, 900, 0).unwrap(), 911);
    s.apply(
        Event::Start {
            job: 11,
            alloc: vec![Alloc {
                node: 0,
                tasks: 1,
                procs: 1,
                mem_mb: 0,
                gres: Default::default(),
            }],
            kind: StartKind::Priority,
        },
        0,
    )
    .unwrap();
    // 911 is queued and counts in the window.
    assert!(s.expand_arrays(0).is_empty());
    let c = s.array_counts(s.array(10).unwrap());
    assert_eq!((c.total, c.active, c.idle, c.completed), (1000, 1, 999, 0));
    // Ids of the array's range cannot be taken by other jobs.
    let other = Job::new(600, "u", Request::procs(1), Some(1), 0);
    assert!(s.apply(Event::submit(other), 0).is_err());
}

#[test]
fn a_cancelled_array_makes_no_more_jobs() {
    let mut s = state_with_array(4, "1-300", None);
    s.expand_arrays(0);
    let op = ArrayOp::Cancel;
    s.apply(Event::Array { array: 10, op }, 5).unwrap();
    for id in (11..11 + u64::from(WINDOW)).collect::<Vec<_>>() {
        s.apply(Event::Cancel { job: id }, 5).unwrap();
    }
    assert!(s.expand_arrays(5).is_empty());
    let c = s.array_counts(s.array(10).unwrap());
    assert_eq!((c.completed, c.removed, c.idle), (300, 300, 0));
    // Dependencies on it can no longer be met.
    let dep = Dependency {
        kind: DependencyKind::AfterOk,
        job: 10,
    };
    assert_eq!(array_dependency(&s, dep), Some(Err(())));
    for id in 11..11 + u64::from(WINDOW) {
        s.apply(Event::Purge { job: id }, 9).unwrap();
    }
    assert_eq!(s.purgeable_arrays(), [10]);
    s.apply(
        Event::Array {
            array: 10,
            op: ArrayOp::Purge,
        },
        9,
    )
    .unwrap();
    assert!(s.array(10).is_none());
}

#[test]
fn slot_limit_blocks_beyond_the_limit() {
    let mut s = state_with_array(8, "1-6", Some(2));
    s.expand_arrays(0);
    let plan = crate::schedule(&s, &Policy::default(), 0);
    let started: Vec<JobId> = plan.starts.iter().map(|st| st.job).collect();
    assert_eq!(started, [11, 12]);
    let r = plan
        .decisions
        .get(&13)
        .and_then(|d| d.reason.clone())
        .unwrap();
    assert_eq!(
        r.to_string(),
        "job violates active HARD SLOTLIMIT limit of 2 for array 10  (Req: 1  InUse: 2)"
    );
}

#[test]
fn dependencies_on_an_array_wait_for_all_of_it() {
    let mut s = state_with_array(8, "1-2", None);
    s.expand_arrays(0);
    let dep = |kind| Dependency { kind, job: 10 };
    assert_eq!(
        array_dependency(&s, dep(DependencyKind::AfterOk)),
        Some(Ok(false))
    );
    let alloc = vec![Alloc {
        node: 0,
        tasks: 1,
        procs: 1,
        mem_mb: 0,
        gres: Default::default(),
    }];
    for id in [11, 12] {
        s.apply(
            Event::Start {
                job: id,
                alloc: alloc.clone(),
                kind: StartKind::Priority,
            },
            0,
        )
        .unwrap();
    }
    assert_eq!(
        array_dependency(&s, dep(DependencyKind::AfterStartArray)),
        Some(Ok(true))
    );
    s.apply(
        Event::Finish {
            job: 11,
            code: CompletionCode::Exit(0),
        },
        5,
    )
    .unwrap();
    assert_eq!(
        array_dependency(&s, dep(DependencyKind::AfterOk)),
        Some(Ok(false))
    );
    s.apply(
        Event::Finish {
            job: 12,
            code: CompletionCode::Exit(1),
        },
        6,
    )
    .unwrap();
    assert_eq!(
        array_dependency(&s, dep(DependencyKind::AfterOkArray)),
        Some(Err(()))
    );
    assert_eq!(
        array_dependency(&s, dep(DependencyKind::AfterAny)),
        Some(Ok(true))
    );
    assert_eq!(
        array_dependency(&s, dep(DependencyKind::AfterNotOkArray)),
        Some(Ok(true))
    );
    // A dependency on one sub-job is a plain dependency.
    let one = Dependency {
        kind: DependencyKind::AfterOk,
        job: 11,
    };
    assert_eq!(array_dependency(&s, one), None);
}
