//! QoS access and the default QoS (Moab's `MQOSGetAccess`).
//!
//! Every job runs under at most one QoS. A job that requests none is given
//! its credentials' default (`QDEF=`) when it is submitted ([`assign`]); a
//! job that requests one must have access to it. Both daemon and simulator
//! call [`assign`], and every part of the engine (priority, limits, NOBF,
//! NORESERVATION, reservation buckets, preemption, reservation ACLs) reads
//! the one QoS [`effective`] returns.
//!
//! Access (the job's QoS access list):
//!
//! - each credential of the job — user, group, account, class — contributes
//!   its `QLIST=` plus its `QDEF=`; a credential without either uses the
//!   kind's `DEFAULT` entry (`USERCFG[DEFAULT] QLIST=...`);
//! - lists without a marker are OR-ed together; a `&` list (`QDEF=high&`:
//!   the seed's "class bound to a QoS") restricts the job to that list (the
//!   intersection of all its `&` lists); a `^` list is taken as is, the
//!   first of user, group, account, class winning;
//! - Arches addition: a QoS that no credential's `QLIST`/`QDEF` names is
//!   open to every job (Moab would grant only `DEFAULT`), so a site that
//!   defines `QOSCFG[x]` without access lists keeps working. With no access
//!   list configured at all every QoS is open.
//!
//! Default QoS: the first `QDEF` of user, group, account, class (Moab's
//! precedence) that the job may access; with none, a job restricted by a
//! `&` or `^` list gets the first QoS of that list, any other job none (Moab's
//! `DEFAULT`).

use std::collections::BTreeSet;
use std::fmt;

use crate::job::{Credentials, Job, Name};
use crate::policy::{ClassConfig, CredConfig, Policy, QosListKind};

/// Moab's name for "no particular QoS".
pub const DEFAULT_QOS: &str = "DEFAULT";

/// Why a QoS cannot be given to a job.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum QosError {
    /// No `QOSCFG[...]` defines the QoS (while some are defined).
    Unknown(String),
    /// The job's credentials do not grant the QoS; `allowed` is the job's
    /// access list.
    Denied { qos: String, allowed: Vec<String> },
}

impl fmt::Display for QosError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            QosError::Unknown(q) => write!(f, "QOS '{q}' does not exist"),
            QosError::Denied { qos, allowed } => {
                let list = if allowed.is_empty() {
                    "NONE".to_string()
                } else {
                    allowed.join(",")
                };
                write!(f, "job does not have access to QOS {qos} (QOSList: {list})")
            }
        }
    }
}

/// A job's QoS access list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Access<'p> {
    /// No access list is configured anywhere: every QoS is allowed.
    Open,
    /// Exactly these QoS; `restricted` when a `&` or `^` list decided it.
    List {
        names: Vec<&'p str>,
        restricted: bool,
    },
}

impl Access<'_> {
    /// Whether the job may run under `qos`.
    pub fn allows(&self, qos: &str) -> bool {
        match self {
            Access::Open => true,
            Access::List { names, .. } => names.contains(&qos),
        }
    }

    /// The allowed names, in order (empty for [`Access::Open`]).
    pub fn names(&self) -> Vec<String> {
        match self {
            Access::Open => Vec::new(),
            Access::List { names, .. } => names.iter().map(|s| s.to_string()).collect(),
        }
    }
}

/// One credential's contribution: its list (QLIST then QDEF), kind, QDEF,
/// and whether it came from the kind's `DEFAULT` entry.
struct Contribution<'p> {
    list: Vec<&'p str>,
    kind: QosListKind,
    qdef: Option<&'p str>,
    from_default: bool,
}

fn from_cred(c: &CredConfig) -> Option<Contribution<'_>> {
    contribution(&c.qlist, c.qdef.as_deref(), c.qlist_kind)
}

fn from_class(c: &ClassConfig) -> Option<Contribution<'_>> {
    contribution(&c.qlist, c.qdef.as_deref(), c.qlist_kind)
}

fn contribution<'p>(
    qlist: &'p [String],
    qdef: Option<&'p str>,
    kind: QosListKind,
) -> Option<Contribution<'p>> {
    let qdef = qdef.filter(|q| !q.eq_ignore_ascii_case(DEFAULT_QOS));
    if qlist.is_empty() && qdef.is_none() {
        return None;
    }
    let mut list: Vec<&str> = Vec::with_capacity(qlist.len() + 1);
    for q in qlist.iter().map(String::as_str).chain(qdef) {
        if !list.contains(&q) {
            list.push(q);
        }
    }
    Some(Contribution {
        list,
        kind,
        qdef,
        from_default: false,
    })
}

/// Whether any credential has a `QLIST` or `QDEF` (access control is on).
pub fn access_configured(policy: &Policy) -> bool {
    let cred = |c: &CredConfig| c.qdef.is_some() || !c.qlist.is_empty();
    policy.users.values().any(cred)
        || policy.groups.values().any(cred)
        || policy.accounts.values().any(cred)
        || policy
            .classes
            .values()
            .any(|c| c.qdef.is_some() || !c.qlist.is_empty())
}

/// The contributions of user, group, account and class, in Moab's order.
fn contributions<'p>(cred: &Credentials, policy: &'p Policy) -> [Option<Contribution<'p>>; 4] {
    let dflt = |c: Contribution<'p>| Contribution {
        from_default: true,
        ..c
    };
    let pick = |map: &'p std::collections::BTreeMap<String, CredConfig>, name: Option<&str>| {
        name.and_then(|n| map.get(n))
            .and_then(from_cred)
            .or_else(|| map.get(DEFAULT_QOS).and_then(from_cred).map(dflt))
    };
    let class = cred
        .class
        .as_deref()
        .and_then(|n| policy.classes.get(n))
        .and_then(from_class)
        .or_else(|| {
            policy
                .classes
                .get(DEFAULT_QOS)
                .and_then(from_class)
                .map(dflt)
        });
    [
        pick(&policy.users, Some(&cred.user)),
        pick(&policy.groups, Some(&cred.group)),
        pick(&policy.accounts, cred.account.as_deref()),
        class,
    ]
}

/// The QoS access list of a job with these credentials.
pub fn access<'p>(cred: &Credentials, policy: &'p Policy) -> Access<'p> {
    if !access_configured(policy) {
        return Access::Open;
    }
    let parts = contributions(cred, policy);
    let parts: Vec<&Contribution<'p>> = parts.iter().flatten().collect();
    if let Some(only) = parts.iter().find(|c| c.kind == QosListKind::Only) {
        return Access::List {
            names: only.list.clone(),
            restricted: true,
        };
    }
    let mut ands = parts.iter().filter(|c| c.kind == QosListKind::And);
    if let Some(first) = ands.next() {
        let mut names = first.list.clone();
        for other in ands {
            names.retain(|q| other.list.contains(q));
        }
        return Access::List {
            names,
            restricted: true,
        };
    }
    // OR lists, plus every QoS no credential names (Arches: open QoS).
    let mut named: BTreeSet<&str> = BTreeSet::new();
    let mut all_lists = |c: &'p CredConfig| {
        named.extend(c.qlist.iter().map(String::as_str));
        named.extend(c.qdef.as_deref());
    };
    policy.users.values().for_each(&mut all_lists);
    policy.groups.values().for_each(&mut all_lists);
    policy.accounts.values().for_each(&mut all_lists);
    for c in policy.classes.values() {
        named.extend(c.qlist.iter().map(String::as_str));
        named.extend(c.qdef.as_deref());
    }
    let mut names: Vec<&str> = Vec::new();
    for q in parts.iter().flat_map(|c| c.list.iter().copied()) {
        if !names.contains(&q) {
            names.push(q);
        }
    }
    for q in policy.qos.keys().map(String::as_str) {
        if !named.contains(q) && !names.contains(&q) {
            names.push(q);
        }
    }
    Access::List {
        names,
        restricted: false,
    }
}

/// The default QoS of a job with these credentials (see the module doc).
pub fn default_qos<'p>(cred: &Credentials, policy: &'p Policy) -> Option<&'p str> {
    if !access_configured(policy) {
        return None;
    }
    let access = access(cred, policy);
    let parts = contributions(cred, policy);
    // Each credential's own QDEF (user, group, account, class), then the
    // kinds' DEFAULT entries.
    for from_default in [false, true] {
        if let Some(q) = parts
            .iter()
            .flatten()
            .filter(|c| c.from_default == from_default)
            .filter_map(|c| c.qdef)
            .find(|q| access.allows(q))
        {
            return Some(q);
        }
    }
    match access {
        Access::List {
            names,
            restricted: true,
        } if !names.iter().any(|n| n.eq_ignore_ascii_case(DEFAULT_QOS)) => names.first().copied(),
        _ => None,
    }
}

/// Gives a job being submitted its QoS: the one it requested (`DEFAULT`
/// or none means its default) if it may use it, else an error.
pub fn assign(
    cred: &mut Credentials,
    policy: &Policy,
    requested: Option<&str>,
) -> Result<(), QosError> {
    let requested = requested
        .map(str::trim)
        .filter(|q| !q.is_empty() && !q.eq_ignore_ascii_case(DEFAULT_QOS));
    let Some(q) = requested else {
        cred.qos = default_qos(cred, policy).map(Name::from);
        return Ok(());
    };
    check_access(cred, policy, q)?;
    cred.qos = Some(Name::from(q));
    Ok(())
}

/// Whether a job with these credentials may run under `qos`: `Unknown`
/// when no `QOSCFG` and no access list knows the name (while some QoS are
/// configured), `Denied` when its credentials do not grant it.
pub fn check_access(cred: &Credentials, policy: &Policy, qos: &str) -> Result<(), QosError> {
    let known = policy.qos.is_empty() || policy.qos.contains_key(qos) || named(policy, qos);
    if !known {
        return Err(QosError::Unknown(qos.to_string()));
    }
    let access = access(cred, policy);
    if !access.allows(qos) {
        return Err(QosError::Denied {
            qos: qos.to_string(),
            allowed: access.names(),
        });
    }
    Ok(())
}

/// Whether some credential's `QLIST` or `QDEF` names the QoS.
fn named(policy: &Policy, qos: &str) -> bool {
    let cred = |c: &CredConfig| c.qdef.as_deref() == Some(qos) || c.qlist.iter().any(|q| q == qos);
    policy.users.values().any(cred)
        || policy.groups.values().any(cred)
        || policy.accounts.values().any(cred)
        || policy
            .classes
            .values()
            .any(|c| c.qdef.as_deref() == Some(qos) || c.qlist.iter().any(|q| q == qos))
}

/// The QoS the engine uses for a job: the one it was given at submission,
/// else (jobs recorded before their credentials had a `QDEF`, scenario
/// jobs) its credentials' default.
pub fn effective<'a>(job: &'a Job, policy: &'a Policy) -> Option<&'a str> {
    match job.cred.qos.as_deref() {
        Some(q) if !q.eq_ignore_ascii_case(DEFAULT_QOS) => Some(q),
        Some(_) => None,
        None => default_qos(&job.cred, policy),
    }
}

/// [`effective`] with `access` = [`access_configured`] known: a caller
/// asking for every queued job checks the configuration once (without an
/// access list no job has a default QoS).
pub fn effective_known<'a>(job: &'a Job, policy: &'a Policy, access: bool) -> Option<&'a str> {
    match job.cred.qos.as_deref() {
        None if !access => None,
        _ => effective(job, policy),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::QosConfig;

    fn cred(user: &str, class: Option<&str>) -> Credentials {
        Credentials {
            user: user.into(),
            group: user.into(),
            account: None,
            class: class.map(Into::into),
            qos: None,
        }
    }

    fn policy() -> Policy {
        let mut p = Policy::default();
        for q in ["high", "low", "slow", "med"] {
            p.qos.insert(q.into(), QosConfig::default());
        }
        p
    }

    #[test]
    fn without_access_lists_every_qos_is_open_and_there_is_no_default() {
        let p = policy();
        let mut c = cred("u", Some("batch"));
        assert_eq!(access(&c, &p), Access::Open);
        assert!(assign(&mut c, &p, Some("high")).is_ok());
        assert_eq!(c.qos.as_deref(), Some("high"));
        let mut d = cred("u", None);
        assign(&mut d, &p, None).unwrap();
        assert_eq!(d.qos, None);
        assert_eq!(
            assign(&mut d, &p, Some("gold")),
            Err(QosError::Unknown("gold".into()))
        );
    }

    #[test]
    fn class_qdef_is_the_default_and_binds_with_ampersand() {
        // The seed: CLASSCFG[special] QDEF=high&
        let mut p = policy();
        let special = p.classes.entry("special".into()).or_default();
        special.qdef = Some("high".into());
        special.qlist_kind = QosListKind::And;
        let mut c = cred("u", Some("special"));
        assign(&mut c, &p, None).unwrap();
        assert_eq!(c.qos.as_deref(), Some("high"));
        // Bound: a special job may not pick another QoS.
        let mut c2 = cred("u", Some("special"));
        let e = assign(&mut c2, &p, Some("low")).unwrap_err();
        assert_eq!(
            e,
            QosError::Denied {
                qos: "low".into(),
                allowed: vec!["high".into()]
            }
        );
        // Other classes: high is named by a list, so not open; low is.
        let mut o = cred("u", Some("batch"));
        assert!(assign(&mut o, &p, Some("high")).is_err());
        assert!(assign(&mut o, &p, Some("low")).is_ok());
        let mut n = cred("u", Some("batch"));
        assign(&mut n, &p, None).unwrap();
        assert_eq!(n.qos, None);
    }

    #[test]
    fn user_qdef_wins_over_class_qdef_and_lists_are_or_ed() {
        let mut p = policy();
        p.classes.entry("bf".into()).or_default().qdef = Some("slow".into());
        let u = p.users.entry("alice".into()).or_default();
        u.qdef = Some("med".into());
        u.qlist = vec!["high".into()];
        let c = cred("alice", Some("bf"));
        assert_eq!(default_qos(&c, &p), Some("med"));
        let a = access(&c, &p);
        for q in ["med", "high", "slow", "low"] {
            assert!(a.allows(q), "{q}");
        }
        // bob: only the class's list and the open QoS.
        let b = cred("bob", Some("bf"));
        assert_eq!(default_qos(&b, &p), Some("slow"));
        assert!(!access(&b, &p).allows("high"));
        assert!(!access(&b, &p).allows("med"));
        assert!(access(&b, &p).allows("low"));
    }

    #[test]
    fn default_credentials_and_caret_lists() {
        let mut p = policy();
        p.users.entry("DEFAULT".into()).or_default().qdef = Some("low".into());
        let g = p.groups.entry("staff".into()).or_default();
        g.qlist = vec!["med".into(), "high".into()];
        g.qlist_kind = QosListKind::Only;
        let mut c = cred("carol", None);
        c.group = "staff".into();
        // ^ list: exactly med,high; the user DEFAULT QDEF low is not in it,
        // so the default is the list's first.
        assert_eq!(access(&c, &p).names(), vec!["med", "high"]);
        assert_eq!(default_qos(&c, &p), Some("med"));
        let d = cred("dave", None);
        assert_eq!(default_qos(&d, &p), Some("low"));
    }

    #[test]
    fn effective_prefers_the_assigned_qos() {
        let mut p = policy();
        p.classes.entry("bf".into()).or_default().qdef = Some("slow".into());
        let mut j = Job::new(1, "u", crate::job::Request::procs(1), Some(10), 0);
        j.cred.class = Some("bf".into());
        assert_eq!(effective(&j, &p), Some("slow"));
        j.cred.qos = Some("high".into());
        assert_eq!(effective(&j, &p), Some("high"));
        j.cred.qos = Some("DEFAULT".into());
        assert_eq!(effective(&j, &p), None);
    }
}
