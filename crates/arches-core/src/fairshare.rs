//! Fairshare in job priority and eligibility (Moab §6.3, "Fairshare"):
//! the `FS` priority component and the fairshare caps.
//!
//! Usage is what [`crate::accounting`] charges per `FSINTERVAL` (dedicated
//! processor-seconds), decayed over the `FSDEPTH` newest intervals: the
//! drivers hand the core an [`FsUsage`] computed at the iteration's `now`
//! (completed jobs plus running jobs up to `now`) in
//! [`crate::policy::Fairshare::usage`]. For each credential of a job with
//! an `FSTARGET`, the fairshare factor is, in percentage points,
//!
//! ```text
//! target − 100 × decayed usage of the credential / decayed total usage
//! ```
//!
//! and the `FS` component is `FSWEIGHT × Σ FS<kind>WEIGHT × factor` over user,
//! group, account, QoS and class. The target kinds (Moab's and Maui's
//! `FSTARGET` suffixes):
//!
//! | `FSTARGET=` | kind | priority | eligibility |
//! |---|---|---|---|
//! | `N` | target | raised below `N`, lowered above | — |
//! | `N+` | floor | raised only while usage is below `N` | — |
//! | `N-` | ceiling | lowered only while usage is above `N` | — |
//! | `N%` | relative cap | none | blocked while (usage + the job's processors × wall-clock limit) exceeds `N` percent of the total |
//! | `N^` | absolute cap | none | blocked while usage + the job's processors × wall-clock limit exceeds `N` processor-seconds |
//!
//! A credential without a target of its own takes the `DEFAULT` entry's
//! (`USERCFG[DEFAULT] FSTARGET=...`); without a target its factor is the
//! job's share-tree factor when an `FSTREE` is configured
//! ([`crate::fstree`], Moab uses the tree's factor for every fairshare
//! subcomponent), else 0; no usage at all yet makes every factor 0.
//! `FSJPU`, `FSPPU` and `FSPSPU` are the jobs, processors and remaining
//! processor-seconds the job's user has running ([`active_factor`]).
//! Fairshare is off (factor 0, no caps) unless `FSPOLICY` is set.

use std::collections::BTreeMap;

use crate::accounting::CredKind;
use crate::job::Job;
use crate::plan::BlockReason;
use crate::policy::Policy;

/// The kind of an `FSTARGET` (its suffix).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum FsTargetKind {
    /// No suffix: priority follows the distance to the target both ways.
    #[default]
    Target,
    /// `+`: priority raised only while usage is below the target.
    Floor,
    /// `-`: priority lowered only while usage is above the target.
    Ceiling,
    /// `%`: a cap in percent of the total usage (eligibility).
    CapRelative,
    /// `^`: a cap in absolute usage, processor-seconds (eligibility).
    CapAbsolute,
}

impl FsTargetKind {
    /// The suffix as written in `moab.cfg` and shown by `mdiag -f` (a
    /// space for a plain target, Maui's `MFSTargetToString`).
    pub fn suffix(self) -> char {
        match self {
            FsTargetKind::Target => ' ',
            FsTargetKind::Floor => '+',
            FsTargetKind::Ceiling => '-',
            FsTargetKind::CapRelative => '%',
            FsTargetKind::CapAbsolute => '^',
        }
    }

    /// Whether this kind is a cap (eligibility, not priority).
    pub fn is_cap(self) -> bool {
        matches!(self, FsTargetKind::CapRelative | FsTargetKind::CapAbsolute)
    }
}

/// `FSTARGET=`: a value (percent, or processor-seconds for an absolute
/// cap) in hundredths, and its kind.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct FsTarget {
    pub hundredths: u64,
    pub kind: FsTargetKind,
}

impl FsTarget {
    /// The value: percent, or processor-seconds for [`FsTargetKind::CapAbsolute`].
    pub fn value(&self) -> f64 {
        self.hundredths as f64 / 100.0
    }

    /// As written: `15.00`, `15.00+`, `500000.00^`.
    pub fn display(&self) -> String {
        format!("{:.2}{}", self.value(), self.kind.suffix())
            .trim_end()
            .to_string()
    }
}

/// Decayed fairshare usage at one instant: `Σ FSDECAY^i × usage[i]` over
/// the kept intervals, per credential and in total (processor-seconds).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FsUsage {
    pub total: f64,
    /// Hashed (a fixed seed: nothing reads it in order), since the priority
    /// looks a name up for every queued job's credentials each iteration and
    /// a trace replay rewrites the running jobs' credentials each iteration.
    pub creds: CredValues,
    /// Each user's active (running) work at that instant: the `FSJPU`,
    /// `FSPPU` and `FSPSPU` subcomponents.
    pub active: BTreeMap<String, ActiveUse>,
}

/// Per-credential values ([`FsUsage::creds`]).
pub type CredValues =
    std::collections::HashMap<(CredKind, String), f64, foldhash::fast::FixedState>;

/// A `(kind, name)` credential key that a `(CredKind, String)` map key
/// borrows as, so [`FsUsage::of`] can look up a `&str` name without
/// allocating. Ordered, compared and hashed exactly as the tuple (kind
/// first, then name).
pub(crate) trait CredKey {
    fn key(&self) -> (CredKind, &str);
}

impl CredKey for (CredKind, String) {
    fn key(&self) -> (CredKind, &str) {
        (self.0, self.1.as_str())
    }
}

impl CredKey for (CredKind, &str) {
    fn key(&self) -> (CredKind, &str) {
        (self.0, self.1)
    }
}

impl<'a> std::borrow::Borrow<dyn CredKey + 'a> for (CredKind, String) {
    fn borrow(&self) -> &(dyn CredKey + 'a) {
        self
    }
}

impl PartialEq for dyn CredKey + '_ {
    fn eq(&self, other: &Self) -> bool {
        self.key() == other.key()
    }
}

impl Eq for dyn CredKey + '_ {}

impl std::hash::Hash for dyn CredKey + '_ {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        // `(CredKind, &str)` hashes as `(CredKind, String)`: a `String`
        // hashes as its `str`.
        self.key().hash(state)
    }
}

impl PartialOrd for dyn CredKey + '_ {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for dyn CredKey + '_ {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.key().cmp(&other.key())
    }
}

/// A user's active work ([`FsUsage::active`]).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ActiveUse {
    /// Running jobs.
    pub jobs: u32,
    /// Processors allocated to them.
    pub procs: u32,
    /// Processor-seconds they still hold: processors × remaining
    /// wall-clock limit.
    pub ps: f64,
}

impl FsUsage {
    /// A credential's decayed usage (0 if it used nothing).
    pub fn of(&self, kind: CredKind, name: &str) -> f64 {
        // Looked up by borrowed key: the priority asks this for every queued
        // job and credential kind each iteration, so no `String` is built.
        self.creds
            .get(&(kind, name) as &dyn CredKey)
            .copied()
            .unwrap_or(0.0)
    }

    /// A credential's share of the total, in percent (0 without usage).
    pub fn percent(&self, kind: CredKind, name: &str) -> f64 {
        if self.total > 0.0 {
            self.of(kind, name) * 100.0 / self.total
        } else {
            0.0
        }
    }
}

/// The kinds of the `FS` priority subcomponents, in Moab's order (`FS(User:
/// Group:Accnt:QOS:Class)`).
pub const FS_KINDS: [CredKind; 5] = [
    CredKind::User,
    CredKind::Group,
    CredKind::Account,
    CredKind::Qos,
    CredKind::Class,
];

/// The job's credential of `kind` (QoS: the effective one, `DEFAULT`
/// without one, as the accounting charges it).
pub fn cred_name(job: &Job, policy: &Policy, kind: CredKind) -> Option<String> {
    cred_str(job, policy, kind).map(str::to_string)
}

/// [`cred_name`] borrowed (the priority asks it per queued job and kind).
fn cred_str<'a>(job: &'a Job, policy: &'a Policy, kind: CredKind) -> Option<&'a str> {
    let access = kind == CredKind::Qos && crate::qos::access_configured(policy);
    cred_str_known(job, policy, kind, access)
}

/// [`cred_str`] with [`crate::qos::access_configured`] known (`access`; a
/// caller asking for a whole queue checks it once).
pub(crate) fn cred_str_known<'a>(
    job: &'a Job,
    policy: &'a Policy,
    kind: CredKind,
    access: bool,
) -> Option<&'a str> {
    let c = &job.cred;
    match kind {
        CredKind::User => Some(c.user.as_str()),
        CredKind::Group => Some(c.group.as_str()),
        CredKind::Account => c.account.as_deref(),
        CredKind::Class => c.class.as_deref(),
        CredKind::Qos => {
            Some(crate::qos::effective_known(job, policy, access).unwrap_or("DEFAULT"))
        }
        // Statistics templates are not a job credential.
        CredKind::Template => None,
    }
}

/// The `FSTARGET` of credential `name` of `kind`, else the kind's
/// `DEFAULT` entry's.
pub fn target(policy: &Policy, kind: CredKind, name: &str) -> Option<FsTarget> {
    let get = |n: &str| match kind {
        CredKind::User => policy.users.get(n).and_then(|c| c.fs_target),
        CredKind::Group => policy.groups.get(n).and_then(|c| c.fs_target),
        CredKind::Account => policy.accounts.get(n).and_then(|c| c.fs_target),
        CredKind::Class => policy.classes.get(n).and_then(|c| c.fs_target),
        CredKind::Qos => policy.qos.get(n).and_then(|c| c.fs_target),
        CredKind::Template => None,
    };
    get(name).or_else(|| get("DEFAULT"))
}

/// The fairshare factor of `job` for credential `kind`, in percentage
/// points (see the module doc); 0 when fairshare is off, the credential
/// has no target or the target is a cap.
pub fn factor(job: &Job, policy: &Policy, kind: CredKind) -> f64 {
    let fs = &policy.fairshare;
    if !fs.enabled || fs.usage.total <= 0.0 {
        return 0.0;
    }
    let Some(name) = cred_str(job, policy, kind) else {
        return 0.0;
    };
    match cred_factor(policy, kind, name) {
        Some(f) => f,
        None => tree_factor(job, policy).unwrap_or(0.0),
    }
}

/// The part of [`factor`] that depends on the credential alone (while
/// fairshare is on and there is usage): the factor of credential `name` of
/// `kind` from its target, or `None` when it has none (the job's share-tree
/// factor applies). The same for every job of the credential, so a whole
/// queue's priorities look it up once per credential
/// ([`crate::priority::QueuePriority`]).
pub fn cred_factor(policy: &Policy, kind: CredKind, name: &str) -> Option<f64> {
    let t = target(policy, kind, name).filter(|t| t.hundredths > 0)?;
    let delta = t.value() - policy.fairshare.usage.percent(kind, name);
    Some(match t.kind {
        FsTargetKind::Target => delta,
        FsTargetKind::Floor => delta.max(0.0),
        FsTargetKind::Ceiling => delta.min(0.0),
        FsTargetKind::CapRelative | FsTargetKind::CapAbsolute => 0.0,
    })
}

/// The share-tree factor of `job` ([`crate::fstree`]): its node's factor
/// in the tree of the partition it requests (when that partition has
/// shares of its own), else in the global tree; `None` without a tree or
/// when the job is on no node.
pub fn tree_factor(job: &Job, policy: &Policy) -> Option<f64> {
    let fs = &policy.fairshare;
    let tree = fs.tree.as_ref()?;
    let node = tree.job_node(job)?;
    let par = job.req.partition.clone();
    let state = fs
        .tree_states
        .get(&par)
        .or_else(|| fs.tree_states.get(&None))?;
    state.factor.get(node).copied()
}

/// The `FSJPU`, `FSPPU` and `FSPSPU` subcomponents (`k` 0, 1, 2): the
/// jobs, processors and processor-seconds (processors × remaining
/// wall-clock limit) the job's user has running, under the same
/// conditions as the other fairshare factors (`FSPOLICY` set, some usage).
pub fn active_factor(job: &Job, policy: &Policy, k: usize) -> f64 {
    let fs = &policy.fairshare;
    if !fs.enabled || fs.usage.total <= 0.0 {
        return 0.0;
    }
    let a = fs
        .usage
        .active
        .get(job.cred.user.as_str())
        .copied()
        .unwrap_or_default();
    match k {
        0 => f64::from(a.jobs),
        1 => f64::from(a.procs),
        _ => a.ps,
    }
}

/// Whether a priority reads the users' running work ([`active_factor`]):
/// a weighted `FSJPU`, `FSPPU` or `FSPSPU` subcomponent.
pub fn uses_active_work(policy: &Policy) -> bool {
    let w = &policy.weights;
    w.fs != 0 && (w.fs_jpu != 0 || w.fs_ppu != 0 || w.fs_pspu != 0)
}

/// Whether the fairshare usage of this instant can change no decision of
/// an iteration at `state`: at most one job is queued, so the usage has
/// nothing to order, and it does nothing else (no fairshare cap blocks a
/// job, no preemptor or `BACKFILLPOLICY PREEMPT` compares priorities, no
/// suspended job waits to be resumed in priority order). A driver may then
/// leave the usage of an earlier instant in the policy.
pub fn usage_decides_nothing(state: &crate::state::State, policy: &Policy) -> bool {
    state.queued_count() <= 1
        && policy.backfill != crate::policy::BackfillPolicy::Preempt
        && !crate::preempt::preemptor_configured(policy)
        && !state
            .queued()
            .any(|j| j.flags.contains(crate::job::JobFlag::Preemptor))
        && state
            .active()
            .all(|j| j.state != crate::job::JobState::Suspended)
        && !has_caps(policy)
}

/// Whether any credential configuration has a fairshare cap.
pub fn has_caps(policy: &Policy) -> bool {
    let cap = |t: &Option<FsTarget>| t.is_some_and(|t| t.kind.is_cap());
    policy.users.values().any(|c| cap(&c.fs_target))
        || policy.groups.values().any(|c| cap(&c.fs_target))
        || policy.accounts.values().any(|c| cap(&c.fs_target))
        || policy.classes.values().any(|c| cap(&c.fs_target))
        || policy.qos.values().any(|c| cap(&c.fs_target))
}

/// Whether fairshare can change anything this iteration: `FSPOLICY` set
/// and a weighted `FS` subcomponent or a cap.
pub fn active(policy: &Policy) -> bool {
    let w = &policy.weights;
    policy.fairshare.enabled
        && ([
            w.fs_user,
            w.fs_group,
            w.fs_account,
            w.fs_qos,
            w.fs_class,
            w.fs_jpu,
            w.fs_ppu,
            w.fs_pspu,
        ]
        .iter()
        .any(|sw| w.fs.saturating_mul(*sw) != 0)
            || has_caps(policy))
}

/// Moab's fairshare caps (Maui's `MFSCheckCap`): `job` may not start while
/// one of its credentials' usage plus the job's request (processors ×
/// wall-clock limit) would exceed a cap (`FSTARGET=N%` relative to the
/// total, `N^` absolute). Checked in user, group, account, class, QoS order.
pub fn check_caps(job: &Job, policy: &Policy) -> Result<(), BlockReason> {
    let fs = &policy.fairshare;
    if !fs.enabled {
        return Ok(());
    }
    let request = f64::from(job.procs()) * job.walltime.unwrap_or(0).max(0) as f64;
    for kind in [
        CredKind::User,
        CredKind::Group,
        CredKind::Account,
        CredKind::Class,
        CredKind::Qos,
    ] {
        let Some(name) = cred_str(job, policy, kind) else {
            continue;
        };
        let Some(t) = target(policy, kind, name).filter(|t| t.kind.is_cap()) else {
            continue;
        };
        let used = fs.usage.of(kind, name) + request;
        let over = match t.kind {
            FsTargetKind::CapAbsolute => used > t.value(),
            _ => fs.usage.total > 0.0 && used * 100.0 / fs.usage.total > t.value(),
        };
        if over {
            let (usage, cap) = match t.kind {
                FsTargetKind::CapAbsolute => (format!("{used:.2}"), format!("{:.2}", t.value())),
                _ => (
                    format!("{:.2}%", used * 100.0 / fs.usage.total),
                    format!("{:.2}%", t.value()),
                ),
            };
            return Err(BlockReason::FairshareCap(format!(
                "job violates fairshare cap of {cap} for {} {name} (usage with job: {usage})",
                kind.as_str()
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::job::Request;
    use crate::policy::{CredConfig, QosConfig};
    use std::sync::Arc;

    fn policy(user_target: FsTarget, usage: &[(CredKind, &str, f64)], total: f64) -> Policy {
        let mut p = Policy::default();
        p.fairshare.enabled = true;
        p.users.insert(
            "u".into(),
            CredConfig {
                fs_target: Some(user_target),
                ..CredConfig::default()
            },
        );
        p.fairshare.usage = Arc::new(FsUsage {
            total,
            creds: usage
                .iter()
                .map(|(k, n, v)| ((*k, n.to_string()), *v))
                .collect(),
            active: Default::default(),
        });
        p
    }

    #[test]
    fn the_usage_decides_nothing_with_one_job_queued_and_nothing_else_reading_it() {
        use crate::state::{Event, State};
        let target = policy(t(5.0, FsTargetKind::Target), &[], 1.0);
        let mut s = State::new(vec![crate::node::Node::new("n", 4, 0)]);
        assert!(usage_decides_nothing(&s, &target));
        let job = |id| Job::new(id, "u", Request::procs(8), Some(100), 0);
        s.apply(Event::submit(job(1)), 0).unwrap();
        assert!(usage_decides_nothing(&s, &target));
        // A cap blocks a job by the usage; a preemptor compares priorities.
        let cap = policy(t(5.0, FsTargetKind::CapRelative), &[], 1.0);
        assert!(!usage_decides_nothing(&s, &cap));
        let mut flagged = State::new(vec![crate::node::Node::new("n", 4, 0)]);
        let mut j = job(2);
        j.flags.insert(crate::job::JobFlag::Preemptor);
        flagged.apply(Event::submit(j), 0).unwrap();
        assert!(!usage_decides_nothing(&flagged, &target));
        // Two queued jobs: the usage orders them.
        s.apply(Event::submit(job(3)), 0).unwrap();
        assert!(!usage_decides_nothing(&s, &target));
    }

    fn t(pct: f64, kind: FsTargetKind) -> FsTarget {
        FsTarget {
            hundredths: (pct * 100.0).round() as u64,
            kind,
        }
    }

    fn job() -> Job {
        Job::new(1, "u", Request::procs(2), Some(100), 0)
    }

    #[test]
    fn plain_target_moves_priority_both_ways() {
        // 30 % used against a 50 % target: +20; 70 % used: -20.
        let p = policy(
            t(50.0, FsTargetKind::Target),
            &[(CredKind::User, "u", 30.0)],
            100.0,
        );
        assert!((factor(&job(), &p, CredKind::User) - 20.0).abs() < 1e-9);
        let p = policy(
            t(50.0, FsTargetKind::Target),
            &[(CredKind::User, "u", 70.0)],
            100.0,
        );
        assert!((factor(&job(), &p, CredKind::User) + 20.0).abs() < 1e-9);
    }

    #[test]
    fn floor_only_raises_and_ceiling_only_lowers() {
        let below = [(CredKind::User, "u", 30.0)];
        let above = [(CredKind::User, "u", 70.0)];
        let f = |k, u: &[(CredKind, &str, f64)]| {
            factor(&job(), &policy(t(50.0, k), u, 100.0), CredKind::User)
        };
        assert!((f(FsTargetKind::Floor, &below) - 20.0).abs() < 1e-9);
        assert_eq!(f(FsTargetKind::Floor, &above), 0.0);
        assert_eq!(f(FsTargetKind::Ceiling, &below), 0.0);
        assert!((f(FsTargetKind::Ceiling, &above) + 20.0).abs() < 1e-9);
        // A cap never changes priority.
        assert_eq!(f(FsTargetKind::CapRelative, &above), 0.0);
        assert_eq!(f(FsTargetKind::CapAbsolute, &below), 0.0);
    }

    #[test]
    fn no_usage_no_target_or_fairshare_off_give_zero() {
        let p = policy(t(50.0, FsTargetKind::Target), &[], 0.0);
        assert_eq!(factor(&job(), &p, CredKind::User), 0.0);
        let mut p = policy(
            t(50.0, FsTargetKind::Target),
            &[(CredKind::User, "u", 10.0)],
            100.0,
        );
        assert_eq!(factor(&job(), &p, CredKind::Group), 0.0);
        p.fairshare.enabled = false;
        assert_eq!(factor(&job(), &p, CredKind::User), 0.0);
    }

    #[test]
    fn default_entry_gives_the_target_and_qos_defaults_to_default() {
        let mut p = policy(
            t(1.0, FsTargetKind::Target),
            &[(CredKind::Qos, "DEFAULT", 40.0)],
            100.0,
        );
        p.users.clear();
        p.users.insert(
            "DEFAULT".into(),
            CredConfig {
                fs_target: Some(t(25.0, FsTargetKind::Target)),
                ..CredConfig::default()
            },
        );
        assert!((factor(&job(), &p, CredKind::User) - 25.0).abs() < 1e-9);
        p.qos.insert(
            "DEFAULT".into(),
            QosConfig {
                fs_target: Some(t(50.0, FsTargetKind::Target)),
                ..QosConfig::default()
            },
        );
        assert!((factor(&job(), &p, CredKind::Qos) - 10.0).abs() < 1e-9);
    }

    #[test]
    fn caps_block_while_usage_with_the_job_is_above() {
        // Relative: the job asks 2 procs × 100 s = 200 proc-seconds.
        let p = policy(
            t(30.0, FsTargetKind::CapRelative),
            &[(CredKind::User, "u", 20.0)],
            1000.0,
        );
        // (20 + 200) / 1000 = 22 % <= 30 %: allowed.
        assert_eq!(check_caps(&job(), &p), Ok(()));
        let p = policy(
            t(30.0, FsTargetKind::CapRelative),
            &[(CredKind::User, "u", 150.0)],
            1000.0,
        );
        let e = check_caps(&job(), &p).unwrap_err();
        assert_eq!(
            e.to_string(),
            "job violates fairshare cap of 30.00% for user u (usage with job: 35.00%)"
        );
        // Absolute: 250 proc-seconds cap, 20 used + 200 requested fits; 60 + 200 does not.
        let p = policy(
            t(250.0, FsTargetKind::CapAbsolute),
            &[(CredKind::User, "u", 20.0)],
            1000.0,
        );
        assert_eq!(check_caps(&job(), &p), Ok(()));
        let p = policy(
            t(250.0, FsTargetKind::CapAbsolute),
            &[(CredKind::User, "u", 60.0)],
            1000.0,
        );
        assert!(check_caps(&job(), &p).is_err());
        // Off: nothing is blocked.
        let mut p = p;
        p.fairshare.enabled = false;
        assert_eq!(check_caps(&job(), &p), Ok(()));
    }

    #[test]
    fn target_display_keeps_the_suffix() {
        assert_eq!(t(15.0, FsTargetKind::Target).display(), "15.00");
        assert_eq!(t(15.0, FsTargetKind::Floor).display(), "15.00+");
        assert_eq!(t(5.5, FsTargetKind::Ceiling).display(), "5.50-");
        assert_eq!(
            t(500000.0, FsTargetKind::CapAbsolute).display(),
            "500000.00^"
        );
    }
}
