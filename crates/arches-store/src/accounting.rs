//! The stored form of [`arches_core::accounting::Accounting`] (showstats and
//! fairshare usage): one JSON document in the `meta` table under
//! [`ACCOUNTING_KEY`], written in the same transaction as the job records
//! whose completion changed it.

use std::collections::BTreeMap;

use arches_core::accounting::{Accounting, CredKind, Totals};
use arches_core::history::{NodeSample, StatProfile, SystemSample};
use serde::{Deserialize, Serialize};

/// `meta` key of the accounting document.
pub const ACCOUNTING_KEY: &str = "accounting";

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct TotalsRecord {
    jobs: u64,
    successful: u64,
    ps_requested: f64,
    ps_dedicated: f64,
    xf_sum: f64,
    xf_max: f64,
    qtime_sum: f64,
    qtime_max: f64,
    wcacc_sum: f64,
    wcacc_jobs: u64,
    bypass_sum: u64,
    bypass_max: u32,
    backfilled: u64,
    ps_backfilled: f64,
    #[serde(default)]
    ps_utilized: f64,
    #[serde(default)]
    ps_measured: f64,
}

impl From<&Totals> for TotalsRecord {
    fn from(t: &Totals) -> Self {
        TotalsRecord {
            jobs: t.jobs,
            successful: t.successful,
            ps_requested: t.ps_requested,
            ps_dedicated: t.ps_dedicated,
            xf_sum: t.xf_sum,
            xf_max: t.xf_max,
            qtime_sum: t.qtime_sum,
            qtime_max: t.qtime_max,
            wcacc_sum: t.wcacc_sum,
            wcacc_jobs: t.wcacc_jobs,
            bypass_sum: t.bypass_sum,
            bypass_max: t.bypass_max,
            backfilled: t.backfilled,
            ps_backfilled: t.ps_backfilled,
            ps_utilized: t.ps_utilized,
            ps_measured: t.ps_measured,
        }
    }
}

impl From<&TotalsRecord> for Totals {
    fn from(t: &TotalsRecord) -> Self {
        Totals {
            jobs: t.jobs,
            successful: t.successful,
            ps_requested: t.ps_requested,
            ps_dedicated: t.ps_dedicated,
            xf_sum: t.xf_sum,
            xf_max: t.xf_max,
            qtime_sum: t.qtime_sum,
            qtime_max: t.qtime_max,
            wcacc_sum: t.wcacc_sum,
            wcacc_jobs: t.wcacc_jobs,
            bypass_sum: t.bypass_sum,
            bypass_max: t.bypass_max,
            backfilled: t.backfilled,
            ps_backfilled: t.ps_backfilled,
            ps_utilized: t.ps_utilized,
            ps_measured: t.ps_measured,
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct CredRecord {
    kind: String,
    name: String,
    totals: TotalsRecord,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct FsRecord {
    kind: String,
    name: String,
    /// (interval index, proc-seconds)
    usage: Vec<(i64, f64)>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct AccountingRecord {
    since: i64,
    total: TotalsRecord,
    creds: Vec<CredRecord>,
    grid: Vec<TotalsRecord>,
    fs: Vec<FsRecord>,
    fs_total: Vec<(i64, f64)>,
    /// The statistics profile (absent in documents written before it).
    #[serde(default)]
    profile: Option<ProfileRecord>,
    /// Fairshare usage per (account, user) pair (absent in documents
    /// written before it).
    #[serde(default)]
    fs_pairs: Vec<PairRecord>,
}

/// (account, user, (interval index, proc-seconds) ...).
type PairRecord = (String, String, Vec<(i64, f64)>);

/// [`arches_core::history::StatProfile`].
#[derive(Debug, Clone, Serialize, Deserialize)]
struct ProfileRecord {
    duration: i64,
    count: usize,
    /// (interval index, credentials completed in it)
    creds: Vec<(i64, Vec<CredRecord>)>,
    /// (interval index, node samples)
    nodes: Vec<(i64, Vec<NodeSampleRecord>)>,
    /// (interval index, system samples); absent in documents written
    /// before the dashboard charted them.
    #[serde(default)]
    system: Vec<(i64, SystemSampleRecord)>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct SystemSampleRecord {
    samples: u64,
    util_sum: f64,
    util_min: f64,
    util_max: f64,
    running_sum: u64,
    running_max: u32,
    queued_sum: u64,
    queued_max: u32,
}

impl From<&SystemSample> for SystemSampleRecord {
    fn from(s: &SystemSample) -> Self {
        SystemSampleRecord {
            samples: s.samples,
            util_sum: s.util_sum,
            util_min: s.util_min,
            util_max: s.util_max,
            running_sum: s.running_sum,
            running_max: s.running_max,
            queued_sum: s.queued_sum,
            queued_max: s.queued_max,
        }
    }
}

impl From<&SystemSampleRecord> for SystemSample {
    fn from(s: &SystemSampleRecord) -> Self {
        SystemSample {
            samples: s.samples,
            util_sum: s.util_sum,
            util_min: s.util_min,
            util_max: s.util_max,
            running_sum: s.running_sum,
            running_max: s.running_max,
            queued_sum: s.queued_sum,
            queued_max: s.queued_max,
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct NodeSampleRecord {
    node: String,
    samples: u64,
    cfg_mem: u64,
    cfg_procs: u32,
    mem_min: u64,
    mem_max: u64,
    mem_sum: u64,
    load_min: f64,
    load_max: f64,
    load_sum: f64,
}

fn profile_record(p: &StatProfile) -> ProfileRecord {
    ProfileRecord {
        duration: p.duration,
        count: p.count,
        creds: p
            .creds
            .iter()
            .map(|(i, m)| {
                let v = m
                    .iter()
                    .map(|((k, n), t)| CredRecord {
                        kind: k.as_str().to_string(),
                        name: n.clone(),
                        totals: t.into(),
                    })
                    .collect();
                (*i, v)
            })
            .collect(),
        nodes: p
            .nodes
            .iter()
            .map(|(i, m)| {
                let v = m
                    .iter()
                    .map(|(n, s)| NodeSampleRecord {
                        node: n.clone(),
                        samples: s.samples,
                        cfg_mem: s.cfg_mem,
                        cfg_procs: s.cfg_procs,
                        mem_min: s.mem_min,
                        mem_max: s.mem_max,
                        mem_sum: s.mem_sum,
                        load_min: s.load_min,
                        load_max: s.load_max,
                        load_sum: s.load_sum,
                    })
                    .collect();
                (*i, v)
            })
            .collect(),
        system: p.system.iter().map(|(i, s)| (*i, s.into())).collect(),
    }
}

fn profile_from(r: &ProfileRecord) -> Result<StatProfile, String> {
    let mut p = StatProfile::default();
    p.configure(r.duration, r.count);
    for (i, v) in &r.creds {
        let m = p.creds.entry(*i).or_default();
        for c in v {
            let k = CredKind::parse(&c.kind)
                .ok_or_else(|| format!("unknown credential kind '{}'", c.kind))?;
            m.insert((k, c.name.clone()), (&c.totals).into());
        }
    }
    for (i, v) in &r.nodes {
        let m = p.nodes.entry(*i).or_default();
        for s in v {
            m.insert(
                s.node.clone(),
                NodeSample {
                    samples: s.samples,
                    cfg_mem: s.cfg_mem,
                    cfg_procs: s.cfg_procs,
                    mem_min: s.mem_min,
                    mem_max: s.mem_max,
                    mem_sum: s.mem_sum,
                    load_min: s.load_min,
                    load_max: s.load_max,
                    load_sum: s.load_sum,
                },
            );
        }
    }
    for (i, s) in &r.system {
        p.system.insert(*i, s.into());
    }
    Ok(p)
}

/// Encodes accounting for the `meta` table.
pub fn encode(a: &Accounting) -> String {
    let rec = AccountingRecord {
        since: a.since,
        total: (&a.total).into(),
        creds: a
            .creds
            .iter()
            .map(|((k, n), t)| CredRecord {
                kind: k.as_str().to_string(),
                name: n.clone(),
                totals: t.into(),
            })
            .collect(),
        grid: a.grid.iter().map(TotalsRecord::from).collect(),
        fs: a
            .fs
            .iter()
            .map(|((k, n), m)| FsRecord {
                kind: k.as_str().to_string(),
                name: n.clone(),
                usage: m.iter().map(|(i, v)| (*i, *v)).collect(),
            })
            .collect(),
        fs_total: a.fs_total.iter().map(|(i, v)| (*i, *v)).collect(),
        profile: Some(profile_record(&a.profile)),
        fs_pairs: a
            .fs_pairs
            .iter()
            .map(|((acct, user), m)| {
                (
                    acct.clone(),
                    user.clone(),
                    m.iter().map(|(i, v)| (*i, *v)).collect(),
                )
            })
            .collect(),
    };
    serde_json::to_string(&rec).unwrap_or_default()
}

/// Decodes what [`encode`] wrote.
pub fn decode(text: &str) -> Result<Accounting, String> {
    let rec: AccountingRecord = serde_json::from_str(text).map_err(|e| e.to_string())?;
    let kind = |k: &str| CredKind::parse(k).ok_or_else(|| format!("unknown credential kind '{k}'"));
    let mut a = Accounting::new(rec.since);
    a.total = (&rec.total).into();
    for c in &rec.creds {
        a.creds
            .insert((kind(&c.kind)?, c.name.clone()), (&c.totals).into());
    }
    if rec.grid.len() == a.grid.len() {
        a.grid = rec.grid.iter().map(Totals::from).collect();
    }
    for f in &rec.fs {
        let m: BTreeMap<i64, f64> = f.usage.iter().copied().collect();
        a.fs.insert((kind(&f.kind)?, f.name.clone()), m);
    }
    a.fs_total = rec.fs_total.into_iter().collect();
    for (acct, user, m) in rec.fs_pairs {
        a.fs_pairs.insert((acct, user), m.into_iter().collect());
    }
    if let Some(p) = &rec.profile {
        a.profile = profile_from(p)?;
    }
    Ok(a)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let mut a = Accounting::new(7);
        a.total.jobs = 3;
        a.total.xf_sum = 1.5;
        a.grid[4].jobs = 1;
        a.creds
            .insert((CredKind::Account, "chem".into()), a.total.clone());
        a.fs.insert((CredKind::User, "bob".into()), [(3, 10.0)].into());
        a.fs_total.insert(3, 10.0);
        a.fs_pairs
            .insert(("chem".into(), "bob".into()), [(3, 10.0)].into());
        a.profile.configure(600, 5);
        a.profile
            .creds
            .entry(2)
            .or_default()
            .insert((CredKind::User, "bob".into()), a.total.clone());
        let mut s = NodeSample::default();
        s.observe(100, 4, 10, 2.0);
        a.profile.add_nodes(2, [("n1".to_string(), s)].into());
        let mut sys = SystemSample::default();
        sys.observe(0.25, 1, 3);
        a.profile.add_system(2, &sys);
        assert_eq!(decode(&encode(&a)).unwrap(), a);
        assert!(decode("{").is_err());
    }

    #[test]
    fn documents_without_system_samples_still_load() {
        let mut a = Accounting::new(7);
        a.profile.configure(600, 5);
        let mut s = NodeSample::default();
        s.observe(100, 4, 10, 2.0);
        a.profile.add_nodes(2, [("n1".to_string(), s)].into());
        let mut doc: serde_json::Value = serde_json::from_str(&encode(&a)).unwrap();
        let removed = doc["profile"]
            .as_object_mut()
            .and_then(|p| p.remove("system"));
        assert!(removed.is_some(), "{doc}");
        let old = decode(&doc.to_string()).unwrap();
        assert!(old.profile.system.is_empty());
        assert_eq!(old, a);
    }
}
