//! Job start priority, Moab's formula (§5.1):
//!
//! ```text
//! SERVICEWEIGHT × (QUEUETIMEWEIGHT × minutes queued + XFACTORWEIGHT × xfactor
//!                  + BYPASSWEIGHT × bypass count + USERPRIOWEIGHT × user priority)
//! + CREDWEIGHT × (USERWEIGHT × user prio + GROUPWEIGHT × group prio
//!                 + ACCOUNTWEIGHT × account prio + CLASSWEIGHT × class prio
//!                 + QOSWEIGHT × QoS prio)
//! + FSWEIGHT × cap_FSCAP(FSUSERWEIGHT × user fs + FSGROUPWEIGHT × group fs
//!               + FSACCOUNTWEIGHT × account fs + FSQOSWEIGHT × QoS fs
//!               + FSCLASSWEIGHT × class fs + FSJPUWEIGHT × user's running jobs
//!               + FSPPUWEIGHT × their processors + FSPSPUWEIGHT × their
//!               remaining processor-seconds)
//! ```
//!
//! where each `fs` factor is the credential's fairshare target minus its
//! decayed share of the usage, in percentage points, as its target kind
//! allows — or, for a credential without a target, the job's share-tree
//! factor when an `FSTREE` is configured ([`crate::fairshare`],
//! [`crate::fstree`]). `cap_FSCAP` holds the sum within ±`FSCAP` (0: no
//! cap); the breakdown's fairshare contributions are scaled to add up to
//! the capped component.
//!
//! A QoS's `QTWEIGHT`/`XFWEIGHT` are added to `QUEUETIMEWEIGHT` and
//! `XFACTORWEIGHT` for its jobs (Moab's `MJobGetStartPriority`).
//!
//! Only components whose effective weight (component × subcomponent) is
//! non-zero contribute and appear in the breakdown. The user priority of
//! `msub -p` is Moab's `UPrio` service subcomponent, weighted by
//! `USERPRIOWEIGHT` (0 by default, as in Moab). An administrator system
//! priority (`mjobctl -p`) overrides the computed value and puts the job
//! before every job without one. With the default weights the order is FIFO by
//! submit time; ties are broken by submit time, then job id.

use std::cmp::Ordering;

use crate::job::Job;
use crate::plan::{PriorityBreakdown, PriorityComponent};
use crate::policy::Policy;
use crate::Time;

/// The priority subcomponents Arches computes, as `(component,
/// subcomponent)` in Moab's display order (`mdiag -p` columns, checkjob's
/// priority analysis): credential (user, group, account, QoS, class),
/// fairshare (the same), then service (queue time, expansion factor, user
/// priority, bypass). The names are Moab's column labels. [`priority`]
/// emits its breakdown in this order and [`weights`] gives the weights in
/// it: the one definition every report uses.
pub const SUBCOMPONENTS: [(&str, &str); 18] = [
    ("Cred", "User"),
    ("Cred", "Group"),
    ("Cred", "Accnt"),
    ("Cred", "QOS"),
    ("Cred", "Class"),
    ("FS", "User"),
    ("FS", "Group"),
    ("FS", "Accnt"),
    ("FS", "QOS"),
    ("FS", "Class"),
    ("FS", "JPU"),
    ("FS", "PPU"),
    ("FS", "PSPU"),
    ("Serv", "QTime"),
    ("Serv", "XFctr"),
    ("Serv", "UPrio"),
    ("Serv", "Bypas"),
    ("Serv", "Deadl"),
];

/// Whether [`SUBCOMPONENTS`] entry `k` is a fairshare one (`FS`): an index
/// test, not a string comparison (every queued job's priority asks it).
#[inline]
fn is_fs(k: usize) -> bool {
    (5..=12).contains(&k)
}

/// `(component, subcomponent, component weight, subcomponent weight)` for
/// every entry of [`SUBCOMPONENTS`], in that order.
pub fn weights(policy: &Policy) -> Vec<(&'static str, &'static str, i64, i64)> {
    SUBCOMPONENTS
        .iter()
        .zip(weight_pairs(policy))
        .map(|(&(c, s), (cw, sw))| (c, s, cw, sw))
        .collect()
}

/// `(component weight, subcomponent weight)` of every entry of
/// [`SUBCOMPONENTS`], in that order.
fn weight_pairs(policy: &Policy) -> [(i64, i64); 18] {
    let w = &policy.weights;
    [
        (w.cred, w.user),
        (w.cred, w.group),
        (w.cred, w.account),
        (w.cred, w.qos),
        (w.cred, w.class),
        (w.fs, w.fs_user),
        (w.fs, w.fs_group),
        (w.fs, w.fs_account),
        (w.fs, w.fs_qos),
        (w.fs, w.fs_class),
        (w.fs, w.fs_jpu),
        (w.fs, w.fs_ppu),
        (w.fs, w.fs_pspu),
        (w.service, w.queuetime),
        (w.service, w.xfactor),
        (w.service, w.userprio),
        (w.service, w.bypass),
        (w.service, w.deadline),
    ]
}

/// The raw value of subcomponent `k` of [`SUBCOMPONENTS`] for `job`.
fn factor(k: usize, job: &Job, policy: &Policy, now: Time) -> f64 {
    let c = &job.cred;
    let cred_prio = |map: &std::collections::BTreeMap<String, crate::policy::CredConfig>,
                     key: Option<&str>| {
        key.and_then(|k| map.get(k)).map_or(0, |cfg| cfg.priority) as f64
    };
    match k {
        0 => cred_prio(&policy.users, Some(&c.user)),
        1 => cred_prio(&policy.groups, Some(&c.group)),
        2 => cred_prio(&policy.accounts, c.account.as_deref()),
        3 => crate::qos::effective(job, policy)
            .and_then(|q| policy.qos.get(q))
            .map_or(0, |cfg| cfg.priority) as f64,
        4 => c
            .class
            .as_deref()
            .and_then(|k| policy.classes.get(k))
            .map_or(0, |cfg| cfg.priority) as f64,
        5..=9 => crate::fairshare::factor(job, policy, crate::fairshare::FS_KINDS[k - 5]),
        10..=12 => crate::fairshare::active_factor(job, policy, k - 10),
        QTIME => capped(
            ((now - job.queued_since()).max(0) / 60) as f64,
            policy.weights.queuetime_cap,
        ),
        XFCTR => capped(xfactor(job, policy, now), policy.weights.xfactor_cap),
        15 => job.user_prio as f64,
        16 => capped(f64::from(job.bypass_count), policy.weights.bypass_cap),
        _ => crate::deadline::factor(job, policy, now),
    }
}

/// Each subcomponent's effective weight for `job` (component ×
/// subcomponent weight, the QoS's `QTWEIGHT`/`XFWEIGHT` added), in
/// [`SUBCOMPONENTS`] order.
fn effective_weights(job: &Job, policy: &Policy) -> [i64; 18] {
    weights_adjusted(policy, qos_weights(job, policy))
}

/// The effective weights with the QoS adjustment `adj` ([`qos_weights`]).
fn weights_adjusted(policy: &Policy, adj: (i64, i64)) -> [i64; 18] {
    let mut out = [0i64; 18];
    for (k, (cw, sw)) in weight_pairs(policy).into_iter().enumerate() {
        out[k] = cw.saturating_mul(sw.saturating_add(adjustment(k, adj)));
    }
    out
}

/// The job's QoS `(QTWEIGHT, XFWEIGHT)`: Moab adds them to the queue-time
/// and expansion-factor subcomponent weights for the QoS's jobs.
fn qos_weights(job: &Job, policy: &Policy) -> (i64, i64) {
    if policy.qos.is_empty() {
        return (0, 0);
    }
    // A job without a QoS of its own is in the DEFAULT QoS.
    let q = crate::qos::effective(job, policy).unwrap_or(crate::qos::DEFAULT_QOS);
    policy
        .qos
        .get(q)
        .map_or((0, 0), |q| (q.qt_weight, q.xf_weight))
}

/// What [`qos_weights`] adds to the weight of subcomponent `k`.
fn adjustment(k: usize, (qt, xf): (i64, i64)) -> i64 {
    match k {
        QTIME => qt,
        XFCTR => xf,
        _ => 0,
    }
}

/// Index of `Serv:QTime` in [`SUBCOMPONENTS`] (and in [`factor`]).
const QTIME: usize = 13;
/// Index of `Serv:XFctr` in [`SUBCOMPONENTS`].
const XFCTR: usize = 14;

/// A raw subcomponent value held to its `*CAP` (0: no cap).
fn capped(v: f64, cap: i64) -> f64 {
    if cap > 0 {
        v.min(cap as f64)
    } else {
        v
    }
}

/// Computes a job's priority breakdown at time `now`.
pub fn priority(job: &Job, policy: &Policy, now: Time) -> PriorityBreakdown {
    let ws = effective_weights(job, policy);
    breakdown_with(job, policy, &ws, &Active::of(&ws), |k| {
        factor(k, job, policy, now)
    })
}

/// The subcomponents with a non-zero weight, in [`SUBCOMPONENTS`] order.
#[derive(Debug, Clone, Copy)]
struct Active {
    k: [u8; 18],
    n: u8,
}

impl Active {
    fn of(ws: &[i64; 18]) -> Self {
        let mut a = Active { k: [0; 18], n: 0 };
        for (k, w) in ws.iter().enumerate() {
            if *w != 0 {
                a.k[usize::from(a.n)] = k as u8;
                a.n += 1;
            }
        }
        a
    }

    fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        self.k[..usize::from(self.n)]
            .iter()
            .map(|&k| usize::from(k))
    }
}

/// The breakdown of [`priority`] from the job's effective weights `ws` and
/// its raw subcomponent values (`value(k)`, asked only for non-zero
/// weights, in [`SUBCOMPONENTS`] order): the one definition [`priority`]
/// and [`QueuePriority`] share.
fn breakdown_with(
    job: &Job,
    policy: &Policy,
    ws: &[i64; 18],
    active: &Active,
    mut value: impl FnMut(usize) -> f64,
) -> PriorityBreakdown {
    // The contributions, in SUBCOMPONENTS order (non-zero weights only:
    // `active`).
    let mut contrib = [0.0f64; 18];
    let mut values = [0.0f64; 18];
    for k in active.iter() {
        values[k] = value(k);
        contrib[k] = ws[k] as f64 * values[k];
    }
    // FSCAP: the fairshare contributions scaled to the capped component.
    let fs: f64 = active
        .iter()
        .filter(|&k| is_fs(k))
        .map(|k| contrib[k])
        .sum();
    let capped_fs = fs_capped(fs, policy);
    if capped_fs != fs && fs != 0.0 {
        let scale = capped_fs / fs;
        for k in active.iter().filter(|&k| is_fs(k)) {
            contrib[k] *= scale;
        }
    }
    let computed: f64 = active.iter().map(|k| contrib[k]).sum();
    // The components, unless the policy orders by totals only. Exactly as
    // many slots as there are components (a plan holds one breakdown per
    // queued job: no spare capacity).
    let mut comps = Vec::new();
    if policy.priority_components {
        comps.reserve_exact(usize::from(active.n));
        comps.extend(active.iter().map(|k| PriorityComponent {
            component: SUBCOMPONENTS[k].0,
            sub: SUBCOMPONENTS[k].1,
            value: values[k],
            contribution: contrib[k],
        }));
    }
    let computed = computed.clamp(i64::MIN as f64, i64::MAX as f64) as i64;
    match job.sys_prio {
        Some(p) => PriorityBreakdown {
            total: p,
            system: true,
            components: comps,
            deadline: crate::deadline::guaranteed(job, policy),
        },
        None => PriorityBreakdown {
            total: computed,
            system: false,
            components: comps,
            deadline: crate::deadline::guaranteed(job, policy),
        },
    }
}

/// [`priority`] of the many queued jobs of one iteration (one policy, one
/// `now`), with what does not depend on the job worked out once instead of
/// once per job: the subcomponent weights (the same for every job unless a
/// QoS is configured: a QoS's `QTWEIGHT`/`XFWEIGHT` are their only per-job
/// part), whether any QoS access list exists (a job's default QoS), and each
/// credential's fairshare factor (one target and usage look-up per
/// credential, [`crate::fairshare::cred_factor`]). Gives exactly
/// [`priority`]'s breakdowns.
pub struct QueuePriority<'a> {
    policy: &'a Policy,
    now: Time,
    /// Every job's effective weights when no QoS is configured, and which
    /// are not zero.
    weights: Option<([i64; 18], Active)>,
    /// [`crate::qos::access_configured`].
    qos_access: bool,
    /// Fairshare factor per credential name, per [`crate::fairshare::FS_KINDS`]
    /// entry (`None`: no target, the job's share-tree factor applies). Hashed
    /// (a fixed seed: nothing depends on the order), since every queued job
    /// looks its names up at every iteration.
    fs: [FsCache<'a>; 5],
}

impl<'a> QueuePriority<'a> {
    pub fn new(policy: &'a Policy, now: Time) -> Self {
        // No QoS configured: no job has a QoS adjustment ([`qos_weights`]).
        let weights = policy
            .qos
            .is_empty()
            .then(|| weights_adjusted(policy, (0, 0)))
            .map(|ws| (ws, Active::of(&ws)));
        QueuePriority {
            policy,
            now,
            weights,
            qos_access: crate::qos::access_configured(policy),
            fs: Default::default(),
        }
    }

    /// [`priority`] of `job` at this instant.
    pub fn of(&mut self, job: &'a Job) -> PriorityBreakdown {
        let QueuePriority {
            policy,
            now,
            weights,
            qos_access,
            fs,
        } = self;
        let (policy, now, qos_access) = (*policy, *now, *qos_access);
        // The shared weights are read where they are (not copied per job).
        let own;
        let (ws, active) = match weights {
            Some((ws, active)) => (&*ws, &*active),
            None => {
                let ws = effective_weights(job, policy);
                own = (ws, Active::of(&ws));
                (&own.0, &own.1)
            }
        };
        breakdown_with(job, policy, ws, active, |k| {
            Self::factor(policy, now, qos_access, fs, k, job)
        })
    }

    /// [`factor`], the QoS and fairshare ones from what is known (`fs`:
    /// the per-name fairshare factors of this instant).
    fn factor(
        policy: &'a Policy,
        now: Time,
        qos_access: bool,
        cache: &mut [FsCache<'a>; 5],
        k: usize,
        job: &'a Job,
    ) -> f64 {
        match k {
            3 => crate::qos::effective_known(job, policy, qos_access)
                .and_then(|q| policy.qos.get(q))
                .map_or(0, |cfg| cfg.priority) as f64,
            5..=9 => {
                let fs = &policy.fairshare;
                if !fs.enabled || fs.usage.total <= 0.0 {
                    return 0.0;
                }
                let kind = crate::fairshare::FS_KINDS[k - 5];
                let Some(name) = crate::fairshare::cred_str_known(job, policy, kind, qos_access)
                else {
                    return 0.0;
                };
                let cache = &mut cache[k - 5];
                if cache.capacity() == 0 {
                    // Room for the usual number of names in a queue at once.
                    cache.reserve(32);
                }
                let f = *cache
                    .entry(name)
                    .or_insert_with(|| crate::fairshare::cred_factor(policy, kind, name));
                match f {
                    Some(f) => f,
                    None => crate::fairshare::tree_factor(job, policy).unwrap_or(0.0),
                }
            }
            _ => factor(k, job, policy, now),
        }
    }
}

/// Fairshare factors by credential name ([`QueuePriority`]).
type FsCache<'a> = std::collections::HashMap<&'a str, Option<f64>, foldhash::fast::FixedState>;

/// `(system, total)` of [`priority`] without building the breakdown: the
/// same terms summed in the same order, skipping zero weights (used for the
/// thousands of running jobs preemption compares).
pub fn priority_total(job: &Job, policy: &Policy, now: Time) -> (bool, i64) {
    if let Some(p) = job.sys_prio {
        return (true, p);
    }
    let mut sum = 0.0f64;
    let mut fs = 0.0f64;
    for (k, weight) in effective_weights(job, policy).into_iter().enumerate() {
        if weight != 0 {
            let c = weight as f64 * factor(k, job, policy, now);
            if is_fs(k) {
                fs += c;
            } else {
                sum += c;
            }
        }
    }
    sum += fs_capped(fs, policy);
    (false, sum.clamp(i64::MIN as f64, i64::MAX as f64) as i64)
}

/// The weighted fairshare component (`FSWEIGHT × Σ FS<sub>WEIGHT ×
/// factor`) with `FSCAP` applied: Moab caps the component's factor (the
/// sum before `FSWEIGHT`) to ±`FSCAP`.
fn fs_capped(weighted: f64, policy: &Policy) -> f64 {
    let w = &policy.weights;
    if w.fs_cap <= 0 || w.fs == 0 {
        return weighted;
    }
    let cap = w.fs_cap as f64;
    (weighted / w.fs as f64).clamp(-cap, cap) * w.fs as f64
}

/// Expansion factor: (time queued + walltime) / walltime; 1 without walltime.
pub fn xfactor(job: &Job, policy: &Policy, now: Time) -> f64 {
    let queued = (now - job.queued_since()).max(0) as f64;
    match crate::eligibility::effective_walltime(job, policy) {
        Some(w) if w > 0 => (queued + w as f64) / w as f64,
        _ => 1.0,
    }
}

/// Queue order: system-priority jobs first (highest first), then guaranteed
/// deadlines (earliest first, [`crate::deadline`]), then by total priority
/// (highest first), then submit time, then job id.
pub fn queue_order(a: (&Job, &PriorityBreakdown), b: (&Job, &PriorityBreakdown)) -> Ordering {
    let (ja, pa) = a;
    let (jb, pb) = b;
    let dl = |p: &PriorityBreakdown| p.deadline.unwrap_or(Time::MAX);
    pb.system
        .cmp(&pa.system)
        .then(dl(pa).cmp(&dl(pb)))
        .then(pb.total.cmp(&pa.total))
        .then(ja.submit_time.cmp(&jb.submit_time))
        .then(ja.id.cmp(&jb.id))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::job::Request;
    use crate::policy::{CredConfig, QosConfig};

    #[test]
    fn the_fairshare_subcomponents_are_the_fs_ones() {
        for (k, (component, _)) in SUBCOMPONENTS.iter().enumerate() {
            assert_eq!(is_fs(k), *component == "FS", "{k}");
        }
    }

    fn job(id: u64, submit: Time) -> Job {
        Job::new(id, "u", Request::procs(1), Some(3600), submit)
    }

    #[test]
    fn priority_total_matches_the_breakdown() {
        let mut p = Policy::default();
        p.weights.qos = 3;
        p.weights.xfactor = 2;
        p.weights.userprio = 1;
        p.weights.class = 5;
        p.qos.insert(
            "q".into(),
            QosConfig {
                priority: 70,
                ..QosConfig::default()
            },
        );
        for (k, t) in [(1u64, 0i64), (2, 500), (3, 7_000)] {
            let mut j = job(k, t);
            j.cred.qos = (k != 2).then(|| "q".into());
            j.user_prio = k as i64 * 7 - 10;
            let b = priority(&j, &p, 9_999);
            assert_eq!(priority_total(&j, &p, 9_999), (b.system, b.total));
            j.sys_prio = Some(5);
            assert_eq!(priority_total(&j, &p, 9_999), (true, 5));
        }
    }

    /// A whole queue's priorities ([`QueuePriority`]) are [`priority`]'s,
    /// with and without a QoS configured, for jobs sharing credentials.
    #[test]
    fn queue_priority_matches_priority() {
        use crate::accounting::CredKind;
        use crate::fairshare::{FsTarget, FsTargetKind, FsUsage};
        let mut p = Policy::default();
        p.weights.xfactor = 30;
        p.weights.fs_user = 10;
        p.weights.fs_qos = 3;
        p.fairshare.enabled = true;
        p.users.insert(
            "DEFAULT".into(),
            CredConfig {
                fs_target: Some(FsTarget {
                    hundredths: 500,
                    kind: FsTargetKind::Target,
                }),
                ..CredConfig::default()
            },
        );
        p.fairshare.usage = std::sync::Arc::new(FsUsage {
            total: 1000.0,
            creds: [
                ((CredKind::User, "a".to_string()), 300.0),
                ((CredKind::User, "b".to_string()), 7.0),
            ]
            .into_iter()
            .collect(),
            ..FsUsage::default()
        });
        let jobs: Vec<Job> = [(1, "a"), (2, "b"), (3, "a"), (4, "c")]
            .into_iter()
            .map(|(id, u)| {
                let mut j = Job::new(id, u, Request::procs(1), Some(600 * id as i64), 10);
                j.cred.qos = (id == 3).then(|| "q".into());
                j
            })
            .collect();
        for with_qos in [false, true] {
            if with_qos {
                p.qos.insert(
                    "q".into(),
                    QosConfig {
                        priority: 9,
                        qt_weight: 2,
                        xf_weight: 5,
                        fs_target: Some(FsTarget {
                            hundredths: 1000,
                            kind: FsTargetKind::Floor,
                        }),
                        ..QosConfig::default()
                    },
                );
                p.weights.qos = 4;
            }
            let mut q = QueuePriority::new(&p, 5_000);
            for j in &jobs {
                assert_eq!(q.of(j), priority(j, &p, 5_000), "job {}", j.id);
            }
            // Totals only: the same totals (FSCAP scaling included), no
            // components.
            for cap in [0, 2] {
                let mut full = p.clone();
                full.weights.fs_cap = cap;
                let totals = Policy {
                    priority_components: false,
                    ..full.clone()
                };
                let mut q = QueuePriority::new(&totals, 5_000);
                for j in &jobs {
                    let want = priority(j, &full, 5_000);
                    assert!(!want.components.is_empty());
                    let got = q.of(j);
                    assert_eq!(
                        (got.total, got.system, got.deadline, got.components.len()),
                        (want.total, want.system, want.deadline, 0),
                        "job {} cap {cap}",
                        j.id
                    );
                }
            }
        }
    }

    #[test]
    fn default_weights_are_fifo() {
        let p = Policy::default();
        let a = job(1, 0);
        let b = job(2, 30);
        let c = job(3, 30);
        let pa = priority(&a, &p, 600);
        let pb = priority(&b, &p, 600);
        let pc = priority(&c, &p, 600);
        assert_eq!(pa.total, 10);
        assert_eq!(pa.components.len(), 1);
        assert_eq!(pa.components[0].sub, "QTime");
        assert_eq!(queue_order((&a, &pa), (&b, &pb)), Ordering::Less);
        assert_eq!(queue_order((&b, &pb), (&c, &pc)), Ordering::Less);
    }

    #[test]
    fn credentials_and_system_priority() {
        let mut p = Policy::default();
        p.weights.qos = 10;
        p.weights.user = 2;
        p.qos.insert(
            "high".into(),
            QosConfig {
                priority: 100,
                ..QosConfig::default()
            },
        );
        p.users.insert(
            "u".into(),
            CredConfig {
                priority: 5,
                ..CredConfig::default()
            },
        );
        let mut a = job(1, 0);
        a.cred.qos = Some("high".into());
        let pa = priority(&a, &p, 120);
        // 2 minutes + 10*100 + 2*5
        assert_eq!(pa.total, 2 + 1000 + 10);
        // Moab's order: credential subcomponents first, then service.
        let subs: Vec<&str> = pa.components.iter().map(|c| c.sub).collect();
        assert_eq!(subs, vec!["User", "QOS", "QTime"]);
        let mut s = job(2, 100);
        s.sys_prio = Some(1);
        let ps = priority(&s, &p, 120);
        assert!(ps.system);
        assert_eq!(queue_order((&s, &ps), (&a, &pa)), Ordering::Less);
    }

    /// The admin guide's fairshare priority example: user 5 below its
    /// target, group without a target, account 10 above, a QoS floor it is
    /// above: `100 × (10×5 + 20×0 + 30×(−10) + 40×0 + 0×0)`.
    #[test]
    fn fairshare_component_follows_the_admin_guide_example() {
        use crate::accounting::CredKind;
        use crate::fairshare::{FsTarget, FsTargetKind, FsUsage};
        let t = |pct: u64, kind| FsTarget {
            hundredths: pct * 100,
            kind,
        };
        let mut p = Policy::default();
        p.weights.queuetime = 0;
        p.weights.fs = 100;
        p.weights.fs_user = 10;
        p.weights.fs_group = 20;
        p.weights.fs_account = 30;
        p.weights.fs_qos = 40;
        p.weights.fs_class = 0;
        p.fairshare.enabled = true;
        let cred = |target| CredConfig {
            fs_target: Some(target),
            ..CredConfig::default()
        };
        p.users
            .insert("a".into(), cred(t(50, FsTargetKind::Target)));
        p.accounts
            .insert("c".into(), cred(t(25, FsTargetKind::Target)));
        p.qos.insert(
            "d".into(),
            QosConfig {
                fs_target: Some(t(10, FsTargetKind::Floor)),
                ..QosConfig::default()
            },
        );
        let usage = [
            (CredKind::User, "a", 45.0),
            (CredKind::Group, "b", 65.0),
            (CredKind::Account, "c", 35.0),
            (CredKind::Qos, "d", 25.0),
            (CredKind::Class, "e", 20.0),
        ];
        p.fairshare.usage = std::sync::Arc::new(FsUsage {
            total: 100.0,
            creds: usage
                .iter()
                .map(|(k, n, v)| ((*k, n.to_string()), *v))
                .collect(),
            active: Default::default(),
        });
        let mut j = Job::new(1, "a", Request::procs(1), Some(60), 0);
        j.cred.group = "b".into();
        j.cred.account = Some("c".into());
        j.cred.qos = Some("d".into());
        j.cred.class = Some("e".into());
        let b = priority(&j, &p, 0);
        assert_eq!(b.total, 100 * (10 * 5 + 30 * -10));
        let subs: Vec<(&str, &str, f64)> = b
            .components
            .iter()
            .map(|c| (c.component, c.sub, c.value))
            .collect();
        // Weighted subcomponents only, in Moab's order; values rounded.
        let round = |v: f64| (v * 1e6).round() / 1e6;
        let subs: Vec<_> = subs.into_iter().map(|(c, s, v)| (c, s, round(v))).collect();
        assert_eq!(
            subs,
            vec![
                ("FS", "User", 5.0),
                ("FS", "Group", 0.0),
                ("FS", "Accnt", -10.0),
                ("FS", "QOS", 0.0)
            ]
        );
        assert_eq!(priority_total(&j, &p, 0), (false, b.total));
        // FSCAP 100: the component (10 × 5 + 30 × −10 = −250) counts −100.
        p.weights.fs_cap = 100;
        let c = priority(&j, &p, 0);
        assert_eq!(c.total, 100 * -100);
        let sum: f64 = c.components.iter().map(|x| x.contribution).sum();
        assert!((sum - c.total as f64).abs() < 1e-6);
        assert_eq!(priority_total(&j, &p, 0), (false, c.total));
        p.weights.fs_cap = 0;
        // Fairshare off (no FSPOLICY): no effect whatever the weights.
        p.fairshare.enabled = false;
        assert_eq!(priority(&j, &p, 0).total, 0);
    }

    #[test]
    fn active_work_per_user_weights() {
        use crate::fairshare::{ActiveUse, FsUsage};
        let mut p = Policy::default();
        p.weights.queuetime = 0;
        p.fairshare.enabled = true;
        p.weights.fs_jpu = -1000;
        p.weights.fs_ppu = -10;
        p.weights.fs_pspu = -1;
        p.fairshare.usage = std::sync::Arc::new(FsUsage {
            total: 50.0,
            active: [(
                "u".to_string(),
                ActiveUse {
                    jobs: 2,
                    procs: 6,
                    ps: 300.0,
                },
            )]
            .into_iter()
            .collect(),
            ..FsUsage::default()
        });
        let j = job(1, 0);
        let b = priority(&j, &p, 0);
        assert_eq!(b.total, -2000 - 60 - 300);
        let subs: Vec<&str> = b.components.iter().map(|c| c.sub).collect();
        assert_eq!(subs, ["JPU", "PPU", "PSPU"]);
        assert_eq!(priority_total(&j, &p, 0), (false, b.total));
        // Another user runs nothing.
        let mut k = job(2, 0);
        k.cred.user = "v".into();
        assert_eq!(priority(&k, &p, 0).total, 0);
    }

    #[test]
    fn share_tree_factor_feeds_fairshare_subcomponents_without_a_target() {
        use crate::accounting::CredKind;
        use crate::fairshare::FsUsage;
        let mut p = Policy::default();
        p.weights.queuetime = 0;
        p.weights.fs_user = 1;
        p.fairshare.enabled = true;
        let mut t = crate::fstree::FsTree::default();
        t.add_members(0, "user:u,user:v").unwrap();
        for n in ["user:u", "user:v"] {
            let i = t.node_for_index(n).unwrap();
            t.set_shares(i, "50").unwrap();
        }
        p.fairshare.tree = Some(std::sync::Arc::new(t));
        p.fairshare.depth = 1;
        p.fairshare.decay = 1.0; // K = 2
        p.fairshare.set_usage(std::sync::Arc::new(FsUsage {
            total: 100.0,
            creds: [((CredKind::User, "u".to_string()), 100.0)]
                .into_iter()
                .collect(),
            ..FsUsage::default()
        }));
        let j = job(1, 0);
        // u used 100 of 100 shares against 50: −50 × 2.
        assert_eq!(priority(&j, &p, 0).total, -100);
        let mut k = job(2, 0);
        k.cred.user = "v".into();
        assert_eq!(priority(&k, &p, 0).total, 100);
        // A target of its own wins over the tree.
        p.users.insert(
            "u".into(),
            CredConfig {
                fs_target: Some(crate::fairshare::FsTarget {
                    hundredths: 9000,
                    kind: crate::fairshare::FsTargetKind::Target,
                }),
                ..CredConfig::default()
            },
        );
        assert_eq!(priority(&j, &p, 0).total, -10);
    }

    #[test]
    fn xfactor_and_user_priority_weights() {
        let mut p = Policy::default();
        p.weights.queuetime = 0;
        p.weights.xfactor = 100;
        p.weights.userprio = 1;
        let mut a = job(1, 0);
        a.user_prio = 7;
        let pa = priority(&a, &p, 3600);
        // xfactor = (3600 + 3600) / 3600 = 2
        assert_eq!(pa.total, 200 + 7);
    }

    #[test]
    fn service_indices_name_their_subcomponents() {
        assert_eq!(SUBCOMPONENTS[QTIME], ("Serv", "QTime"));
        assert_eq!(SUBCOMPONENTS[XFCTR], ("Serv", "XFctr"));
    }

    #[test]
    fn qos_service_weights_add_to_the_subcomponent_weights() {
        let mut p = Policy::default();
        p.weights.queuetime = 1;
        p.weights.xfactor = 0;
        p.qos.insert(
            "fast".into(),
            crate::policy::QosConfig {
                qt_weight: 4,
                xf_weight: 10,
                ..Default::default()
            },
        );
        let plain = job(1, 0);
        let mut fast = job(2, 0);
        fast.cred.qos = Some("fast".into());
        // 60 minutes queued, xfactor 2.
        assert_eq!(priority(&plain, &p, 3600).total, 60);
        let b = priority(&fast, &p, 3600);
        assert_eq!(b.total, (1 + 4) * 60 + 10 * 2);
        assert_eq!(priority_total(&fast, &p, 3600), (false, b.total));
        // The lean path's static order no longer holds.
        assert!(!crate::lean::lean_supported(&p));
    }

    #[test]
    fn service_caps_hold_the_raw_values() {
        let mut p = Policy::default();
        p.weights.queuetime = 1;
        p.weights.xfactor = 100;
        let a = job(1, 0);
        // 60 minutes queued, xfactor 2: 60 + 200 uncapped.
        assert_eq!(priority(&a, &p, 3600).total, 260);
        p.weights.queuetime_cap = 30;
        p.weights.xfactor_cap = 1;
        assert_eq!(priority(&a, &p, 3600).total, 30 + 100);
        let mut b = job(2, 0);
        b.bypass_count = 9;
        p.weights.bypass = 10;
        p.weights.bypass_cap = 4;
        assert_eq!(priority(&b, &p, 3600).total, 30 + 100 + 40);
    }
}
