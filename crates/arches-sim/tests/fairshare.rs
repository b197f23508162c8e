//! The simulator honours fairshare: `moab simulate --config` with
//! `FSPOLICY`, `FSUSERWEIGHT` and a per-user `FSTARGET` replays the KTH-SP2
//! trace through the full iteration with the accounting's decayed usage
//! (the lean path steps aside), and the heaviest users wait longer while
//! the lightest wait less; without `FSPOLICY` the schedule is the plain
//! EASY one, job for job (BENCHMARKS.md, "Fairshare").

use std::collections::BTreeMap;
use std::path::PathBuf;

use arches_sim::cli::{prepare, SimulateArgs};
use arches_sim::swf::{read_swf, SwfOptions};
use arches_sim::JobRecord;
use clap::Parser;

#[derive(Parser)]
struct Cli {
    #[command(flatten)]
    args: SimulateArgs,
}

const KTH: &str = "KTH-SP2-1996-2.swf.gz";

/// The trace (kept in the repository: a missing one is a failure).
fn kth() -> PathBuf {
    let d = match std::env::var_os("ARCHES_TRACES") {
        Some(d) => PathBuf::from(d),
        None => PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../data/traces")),
    };
    let p = d.join(KTH);
    assert!(p.exists(), "{}: trace missing", p.display());
    p
}

const FAIRSHARE: &str = "FSPOLICY DEDICATEDPS\nFSINTERVAL 24:00:00\nFSDEPTH 7\nFSDECAY 0.8\n\
FSWEIGHT 1\nFSUSERWEIGHT 100\nUSERCFG[DEFAULT] FSTARGET=5\n";

/// Replays KTH (jobs ≥ 15, 100 processors) under `cfg` (None: defaults).
fn replay(cfg: Option<&str>) -> Vec<JobRecord> {
    let dir = tempfile::tempdir().unwrap();
    let trace = kth();
    let mut argv: Vec<String> = vec![
        "simulate".into(),
        "--trace".into(),
        trace.display().to_string(),
        "--procs".into(),
        "100".into(),
        "--min-job-id".into(),
        "15".into(),
    ];
    if let Some(c) = cfg {
        let path = dir.path().join("moab.cfg");
        std::fs::write(&path, c).unwrap();
        argv.push("--config".into());
        argv.push(path.display().to_string());
    }
    let args = Cli::try_parse_from(argv).unwrap().args;
    let mut prepared = prepare(&args).unwrap();
    prepared.sim.run().unwrap();
    let mut r = prepared.sim.records().to_vec();
    r.sort_by_key(|r| r.id);
    r
}

#[test]
fn fairshare_moves_waits_from_light_to_heavy_users() {
    let trace = read_swf(
        &kth(),
        &SwfOptions {
            min_job_id: Some(15),
            ..SwfOptions::default()
        },
    )
    .unwrap();
    let user: BTreeMap<u64, i64> = trace.records.iter().map(|r| (r.job, r.user)).collect();
    let base = replay(None);
    let fs = replay(Some(FAIRSHARE));
    assert_eq!(base.len(), 28_475);
    assert_eq!(fs.len(), base.len());
    // The plain EASY replay is pyss's (BENCHMARKS.md: 6,899 s).
    let avg = |r: &[JobRecord]| r.iter().map(|j| j.wait()).sum::<i64>() / r.len() as i64;
    assert_eq!(avg(&base), 6_899);
    // Per user: jobs, processor-seconds, summed waits without and with.
    let mut per: BTreeMap<i64, (i64, i64, i64)> = BTreeMap::new();
    for (b, f) in base.iter().zip(&fs) {
        assert_eq!(b.id, f.id);
        let e = per.entry(user[&b.id]).or_default();
        e.0 += i64::from(b.procs) * b.runtime;
        e.1 += b.wait();
        e.2 += f.wait();
    }
    let mut users: Vec<(i64, (i64, i64, i64))> = per.into_iter().collect();
    users.sort_by_key(|(u, (ps, _, _))| (-ps, *u));
    let jobs_of = |set: &[(i64, (i64, i64, i64))]| -> i64 {
        let ids: std::collections::BTreeSet<i64> = set.iter().map(|(u, _)| *u).collect();
        base.iter().filter(|j| ids.contains(&user[&j.id])).count() as i64
    };
    let waits = |set: &[(i64, (i64, i64, i64))]| {
        let n = jobs_of(set) as f64;
        let b: i64 = set.iter().map(|(_, (_, w, _))| w).sum();
        let f: i64 = set.iter().map(|(_, (_, _, w))| w).sum();
        ((b as f64 / n).round() as i64, (f as f64 / n).round() as i64)
    };
    let (heavy_base, heavy_fs) = waits(&users[..5]);
    let half = users.len() / 2;
    let (light_base, light_fs) = waits(&users[half..]);
    // BENCHMARKS.md: heaviest 5 users 20,648 → 28,469 s, lightest half
    // 3,183 → 1,557 s.
    assert_eq!((heavy_base, heavy_fs), (20_648, 28_469));
    assert_eq!((light_base, light_fs), (3_183, 1_557));
}

#[test]
fn without_fspolicy_the_weights_change_nothing() {
    let off: String = FAIRSHARE
        .lines()
        .filter(|l| !l.starts_with("FSPOLICY"))
        .map(|l| format!("{l}\n"))
        .collect();
    let base = replay(None);
    let same = replay(Some(&off));
    let key = |r: &[JobRecord]| -> Vec<(u64, i64, i64)> {
        r.iter().map(|j| (j.id, j.start, j.end)).collect()
    };
    assert_eq!(key(&same), key(&base));
}

/// A share tree (FSTREE, no FSTARGET) moves waits too: the five heaviest
/// users of KTH share one node with 10 of root's 100 shares, everyone else
/// a node with 90; the heavy node's users (far over their 10 shares) wait
/// longer and the others less than under plain EASY (BENCHMARKS.md,
/// "Fairshare").
#[test]
fn a_share_tree_moves_waits_between_its_nodes() {
    let trace = read_swf(
        &kth(),
        &SwfOptions {
            min_job_id: Some(15),
            ..SwfOptions::default()
        },
    )
    .unwrap();
    let user: BTreeMap<u64, i64> = trace.records.iter().map(|r| (r.job, r.user)).collect();
    let base = replay(None);
    let mut ps: BTreeMap<i64, i64> = BTreeMap::new();
    for j in &base {
        *ps.entry(user[&j.id]).or_default() += i64::from(j.procs) * j.runtime;
    }
    let mut by_use: Vec<(i64, i64)> = ps.into_iter().collect();
    by_use.sort_by_key(|(u, p)| (-p, *u));
    let heavy: Vec<i64> = by_use[..5].iter().map(|(u, _)| *u).collect();
    let members = |set: &mut dyn Iterator<Item = i64>| -> String {
        set.map(|u| format!("user:user{u}"))
            .collect::<Vec<_>>()
            .join(",")
    };
    let cfg = format!(
        "FSPOLICY DEDICATEDPS\nFSINTERVAL 24:00:00\nFSDEPTH 7\nFSDECAY 0.8\n\
FSWEIGHT 1\nFSUSERWEIGHT 100\n\
FSTREE[root] SHARES=100 MEMBERLIST=heavy,light\n\
FSTREE[heavy] SHARES=10 MEMBERLIST={}\nFSTREE[light] SHARES=90 MEMBERLIST={}\n",
        members(&mut heavy.iter().copied()),
        members(&mut by_use[5..].iter().map(|(u, _)| *u)),
    );
    let tree = replay(Some(&cfg));
    assert_eq!(tree.len(), base.len());
    let avg_of = |r: &[JobRecord], heavy_side: bool| {
        let js: Vec<&JobRecord> = r
            .iter()
            .filter(|j| heavy.contains(&user[&j.id]) == heavy_side)
            .collect();
        js.iter().map(|j| j.wait()).sum::<i64>() / js.len() as i64
    };
    let measured = (
        (avg_of(&base, true), avg_of(&tree, true)),
        (avg_of(&base, false), avg_of(&tree, false)),
    );
    eprintln!("heavy (base, tree), rest (base, tree): {measured:?}");
    let ((hb, ht), (lb, lt)) = measured;
    assert!(ht > hb && lt < lb, "{measured:?}");
    // BENCHMARKS.md: heavy node 20,647 → 42,021 s, the rest 6,007 → 3,763 s.
    assert_eq!(measured, ((20_647, 42_021), (6_007, 3_763)));
}
