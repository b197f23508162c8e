//! Replays the real SWF traces with pyss's input semantics through
//! `State::apply` + `schedule` and compares average wait and bounded slowdown
//! with the pyss results in `reference/peer-results.md` (must be within 1%).
//!
//! The traces live outside the repository (`/work/shared/traces`, or the
//! directory in `ARCHES_TRACES`), so these tests are `#[ignore]`d; run them
//! with `cargo test --release -p arches-core --test pyss_equivalence -- --ignored`.
//!
//! pyss semantics (peer-results.md): processors = SWF field 5 capped at the
//! machine size; run time = max(min(requested, run), 1); estimate =
//! max(requested, run, 1); jobs with run <= 0 or procs <= 0 become 1-second,
//! 1-processor jobs; at one instant submissions come first, then
//! terminations, then starts; FCFS priority by submit time, ties by number.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::time::Instant;

use arches_core::job::{CompletionCode, Job, Request};
use arches_core::node::Node;
use arches_core::policy::{BackfillPolicy, ReservationBucket, ReservationPolicy};
use arches_core::state::{Event, State};
use arches_core::{schedule, Policy, Time};

struct TraceJob {
    id: u64,
    submit: Time,
    procs: u32,
    run: i64,
    estimate: i64,
}

fn load(file: &str, procs: u32, min_id: u64) -> Vec<TraceJob> {
    let dir = std::env::var("ARCHES_TRACES").unwrap_or_else(|_| "/work/shared/traces".into());
    let path = PathBuf::from(dir).join(file);
    let f = std::fs::File::open(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let r = BufReader::new(flate2::read::GzDecoder::new(f));
    let mut jobs = Vec::new();
    for line in r.lines() {
        let line = line.unwrap();
        let line = line.trim();
        if line.is_empty() || line.starts_with(';') {
            continue;
        }
        let v: Vec<i64> = line
            .split_whitespace()
            .map(|x| x.parse::<f64>().unwrap() as i64)
            .collect();
        let (id, submit, run, alloc, req_time) = (v[0] as u64, v[1], v[3], v[4], v[8]);
        if id < min_id {
            continue;
        }
        let (p, run, est) = if run <= 0 || alloc <= 0 {
            (1, 1, 1)
        } else {
            let est = req_time.max(run).max(1);
            let run = req_time.min(run).max(1);
            (alloc.min(i64::from(procs)) as u32, run, est)
        };
        jobs.push(TraceJob {
            id,
            submit,
            procs: p,
            run,
            estimate: est,
        });
    }
    jobs.sort_by_key(|j| (j.submit, j.id));
    jobs
}

/// A replay in progress.
struct Sim<'a> {
    s: State,
    policy: &'a Policy,
    run: BTreeMap<u64, i64>,
    ends: BTreeMap<Time, Vec<u64>>,
    /// Reservation starts: pyss starts a reserved job when its time comes.
    wakes: BTreeSet<Time>,
    wait_sum: f64,
    bsld_sum: f64,
}

impl Sim<'_> {
    /// One iteration: schedule, start, remember the reservations.
    fn iterate(&mut self, now: Time) {
        let plan = schedule(&self.s, self.policy, now);
        for st in plan.starts {
            let submit = self.s.job(st.job).unwrap().submit_time;
            let r = self.run[&st.job];
            let wait = (now - submit) as f64;
            self.wait_sum += wait;
            self.bsld_sum += ((wait + r as f64) / (r.max(10) as f64)).max(1.0);
            self.ends.entry(now + r).or_default().push(st.job);
            let ev = Event::Start {
                job: st.job,
                alloc: st.alloc,
                kind: st.kind,
            };
            self.s.apply(ev, now).unwrap();
        }
        self.wakes.extend(plan.reservations.iter().map(|r| r.start));
        let rsv = plan.reservations.iter().map(|r| (r.job, r.start)).collect();
        self.s.remember_reservations(rsv).unwrap();
    }
}

/// Average wait and bounded slowdown (10 s) over all jobs.
fn simulate(jobs: &[TraceJob], procs: u32, policy: &Policy) -> (f64, f64) {
    let mut sim = Sim {
        s: State::new(vec![Node::new("machine", procs, 0)]),
        policy,
        run: jobs.iter().map(|j| (j.id, j.run)).collect(),
        ends: BTreeMap::new(),
        wakes: BTreeSet::new(),
        wait_sum: 0.0,
        bsld_sum: 0.0,
    };
    let mut next = 0;
    loop {
        let candidates = [
            jobs.get(next).map(|j| j.submit),
            sim.ends.keys().next().copied(),
            sim.wakes.first().copied(),
        ];
        let Some(now) = candidates.into_iter().flatten().min() else {
            break;
        };
        let woke = sim.wakes.remove(&now);
        // pyss: submissions, then each termination, each followed by scheduling.
        let mut acted = false;
        while next < jobs.len() && jobs[next].submit == now {
            let t = &jobs[next];
            let job = Job::new(
                t.id,
                "u",
                Request::procs(t.procs),
                Some(t.estimate),
                t.submit,
            );
            sim.s.apply(Event::Submit(Box::new(job)), now).unwrap();
            next += 1;
            acted = true;
        }
        if acted {
            sim.iterate(now);
        }
        if let Some(ids) = sim.ends.remove(&now) {
            for id in ids {
                let code = CompletionCode::Exit(0);
                sim.s.apply(Event::Finish { job: id, code }, now).unwrap();
                sim.s.apply(Event::Purge { job: id }, now).unwrap();
                sim.iterate(now);
                acted = true;
            }
        }
        if woke && !acted {
            sim.iterate(now);
        }
    }
    assert_eq!(sim.s.queued_count(), 0, "every job ran");
    let n = jobs.len() as f64;
    (sim.wait_sum / n, sim.bsld_sum / n)
}

fn policy(depth: u32, backfill: BackfillPolicy) -> Policy {
    Policy {
        reservation_buckets: vec![ReservationBucket { depth, qos: None }],
        backfill,
        ..Policy::default()
    }
}

/// pyss conservative: a reservation for every job, kept and compressed.
fn conservative() -> Policy {
    Policy {
        reservation_policy: ReservationPolicy::Highest,
        ..policy(u32::MAX, BackfillPolicy::FirstFit)
    }
}

fn within(got: f64, want: f64, tol: f64) -> bool {
    (got - want).abs() <= want * tol
}

fn check(file: &str, procs: u32, min_id: u64, cases: &[(&str, Policy, f64, f64)]) {
    let jobs = load(file, procs, min_id);
    let mut bad = Vec::new();
    for (name, p, wait, bsld) in cases {
        let t = Instant::now();
        let (w, b) = simulate(&jobs, procs, p);
        let line = format!(
            "{file} ({procs}) {name}: {} jobs wait {w:.0} (pyss {wait}) bsld {b:.2} (pyss {bsld}) in {:.2?}",
            jobs.len(),
            t.elapsed()
        );
        println!("{line}");
        if !within(w, *wait, 0.01) || !within(b, *bsld, 0.01) {
            bad.push(line);
        }
    }
    assert!(bad.is_empty(), "outside 1% of pyss:\n{}", bad.join("\n"));
}

#[test]
#[ignore = "needs the external SWF traces; run with --ignored in release mode"]
fn sdsc_sp2_matches_pyss() {
    check(
        "SDSC-SP2-1998-4.2-cln.swf.gz",
        128,
        0,
        &[
            (
                "EASY",
                policy(1, BackfillPolicy::FirstFit),
                18_942.0,
                106.96,
            ),
            ("conservative", conservative(), 19_846.0, 110.91),
            (
                "FCFS",
                policy(1, BackfillPolicy::None),
                1_544_126.0,
                28_042.76,
            ),
        ],
    );
}

#[test]
#[ignore = "needs the external SWF traces; run with --ignored in release mode"]
fn kth_sp2_matches_pyss() {
    check(
        "KTH-SP2-1996-2.swf.gz",
        100,
        15,
        &[
            ("EASY", policy(1, BackfillPolicy::FirstFit), 6_899.0, 92.88),
            ("conservative", conservative(), 7_297.0, 88.30),
            ("FCFS", policy(1, BackfillPolicy::None), 354_169.0, 6_829.28),
        ],
    );
}

#[test]
#[ignore = "needs the external SWF traces; run with --ignored in release mode"]
fn ctc_sp2_matches_pyss() {
    check(
        "CTC-SP2-1996-3.1-cln.swf.gz",
        512,
        0,
        &[
            ("EASY", policy(1, BackfillPolicy::FirstFit), 1_271.0, 4.60),
            ("conservative", conservative(), 1_535.0, 5.06),
            ("FCFS", policy(1, BackfillPolicy::None), 6_101.0, 30.30),
        ],
    );
}
