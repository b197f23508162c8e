//! Credential objects: `CLASSCFG`, `QOSCFG`, `USERCFG`, `GROUPCFG`,
//! `ACCOUNTCFG` — priority, soft,hard throttling limits, default QoS and QoS
//! lists, job and QoS flags.

use arches_core::policy::{ClassConfig, CredConfig, Limits, QosConfig, QosFlag, QosListKind};
use arches_core::JobFlag;

use super::{attr, AttrDef, Site, INT, POSITIVE};
use crate::config::Config;
use crate::value::{Choices, Value, ValueType};

fn class<'a>(c: &'a mut Config, s: Site<'_>) -> &'a mut ClassConfig {
    c.policy.classes.entry(s.index.to_string()).or_default()
}
fn qos<'a>(c: &'a mut Config, s: Site<'_>) -> &'a mut QosConfig {
    c.policy.qos.entry(s.index.to_string()).or_default()
}
fn user<'a>(c: &'a mut Config, s: Site<'_>) -> &'a mut CredConfig {
    c.policy.users.entry(s.index.to_string()).or_default()
}
fn group<'a>(c: &'a mut Config, s: Site<'_>) -> &'a mut CredConfig {
    c.policy.groups.entry(s.index.to_string()).or_default()
}
fn account<'a>(c: &'a mut Config, s: Site<'_>) -> &'a mut CredConfig {
    c.policy.accounts.entry(s.index.to_string()).or_default()
}

/// Moab's list marker on a QoS name: `&` (AND list: the credential binds
/// its jobs to its list) or `^` (ONLY list); the name without it.
fn marker(q: &str) -> (&str, Option<QosListKind>) {
    if let Some(n) = q.strip_suffix('&') {
        (n, Some(QosListKind::And))
    } else if let Some(n) = q.strip_suffix('^') {
        (n, Some(QosListKind::Only))
    } else {
        (q, None)
    }
}

/// A QoS name with its list marker (`QDEF=high&`).
fn qos_name(v: &Value) -> Result<(String, Option<QosListKind>), String> {
    let (name, kind) = marker(v.text()?.trim());
    let name = name.trim();
    if name.is_empty() || name.contains(char::is_whitespace) {
        return Err(format!("invalid QoS name '{}'", v.text()?));
    }
    Ok((name.to_string(), kind))
}

/// A QoS list and the marker of any of its names (`QLIST=a,b&`).
fn qos_list(v: &Value) -> Result<(Vec<String>, Option<QosListKind>), String> {
    let mut kind = None;
    let mut names = Vec::new();
    for q in v.list()? {
        let (n, k) = marker(q.trim());
        kind = kind.or(k);
        if !n.is_empty() {
            names.push(n.to_string());
        }
    }
    Ok((names, kind))
}

/// `FSTARGET=N[+|-|%|^]`: a percentage 0-100 (a target, `+` floor, `-`
/// ceiling, `%` cap relative to the total usage), or `N^` a cap in
/// processor-seconds ([`arches_core::fairshare`]).
fn fs_target(v: &Value) -> Result<arches_core::fairshare::FsTarget, String> {
    use arches_core::fairshare::{FsTarget, FsTargetKind};
    let t = v.text()?.trim();
    let (n, kind) = match t.chars().last() {
        Some('+') => (&t[..t.len() - 1], FsTargetKind::Floor),
        Some('-') => (&t[..t.len() - 1], FsTargetKind::Ceiling),
        Some('%') => (&t[..t.len() - 1], FsTargetKind::CapRelative),
        Some('^') => (&t[..t.len() - 1], FsTargetKind::CapAbsolute),
        _ => (t, FsTargetKind::Target),
    };
    let max = if kind == FsTargetKind::CapAbsolute {
        1e15
    } else {
        100.0
    };
    match n.parse::<f64>() {
        Ok(x) if x.is_finite() && (0.0..=max).contains(&x) && !n.starts_with(['+', '-']) => {
            Ok(FsTarget {
                hundredths: (x * 100.0).round() as u64,
                kind,
            })
        }
        _ => Err(format!(
            "invalid fairshare target '{t}' (expected a percentage 0-100, optionally followed by + (floor), - (ceiling) or % (cap), or a usage cap in processor-seconds followed by ^)"
        )),
    }
}

pub(super) fn job_flags(v: &Value) -> Result<Vec<JobFlag>, String> {
    v.choices()?.iter().map(|f| f.parse()).collect()
}

fn set_limit(l: &mut Limits, s: Site<'_>, v: &Value) -> Result<(), String> {
    let limit = Some(v.limit()?);
    match s.name {
        "MAXJOB" => l.max_job = limit,
        "MAXPROC" => l.max_proc = limit,
        "MAXNODE" => l.max_node = limit,
        "MAXWC" => l.max_wc = limit,
        other => return Err(format!("internal error: {other} is not a limit")),
    }
    Ok(())
}

/// PRIORITY, the throttling limits, and the rows in `$extra`, for one
/// credential kind whose config is reached with `$get`.
macro_rules! cred_attrs {
    ($get:ident, $($extra:expr),* $(,)?) => {
        &[
            attr("PRIORITY", INT, Some("0"), "Credential priority (times the kind's weight).",
                |c, s, v| { $get(c, s).priority = v.integer()?; Ok(()) }),
            attr("MAXJOB", ValueType::Limit, None, "Active jobs, SOFT[,HARD].",
                |c, s, v| set_limit(&mut $get(c, s).limits, s, v)),
            AttrDef { aliases: &["MAXPROCS"], ..attr("MAXPROC", ValueType::Limit, None,
                "Active processors, SOFT[,HARD].", |c, s, v| set_limit(&mut $get(c, s).limits, s, v)) },
            AttrDef { aliases: &["MAXNODES"], ..attr("MAXNODE", ValueType::Limit, None,
                "Active nodes, SOFT[,HARD].", |c, s, v| set_limit(&mut $get(c, s).limits, s, v)) },
            attr("MAXWC", ValueType::DurationLimit, None, "Outstanding wall-clock time of active jobs, SOFT[,HARD].",
                |c, s, v| set_limit(&mut $get(c, s).limits, s, v)),
            attr("FSTARGET", ValueType::Text, None,
                "Fairshare target: `N` percent of the decayed usage (priority raised below it, lowered above it, times FSWEIGHT and the kind's FS*WEIGHT), `N+` a floor (only raised), `N-` a ceiling (only lowered), `N%` a cap (jobs blocked while usage with the job would exceed N percent), `N^` a cap in processor-seconds. Shown by mdiag -f.",
                |c, s, v| { $get(c, s).fs_target = Some(fs_target(v)?); Ok(()) }),
            $($extra),*
        ]
    };
}

/// Job flags: the core's, plus Moab's others accepted and ignored.
pub(super) const JOB_FLAGS: Choices = core_choices!(
    JobFlag,
    [
        "COALLOC",
        "ADVRES",
        "NOQUEUE",
        "ARRAYJOB",
        "BESTEFFORT",
        "RSVMAP",
        "SPVIOLATION",
        "IGNNODEPOLICIES",
        "IGNIDLEJOBRSV",
        "FSVIOLATION",
        "GLOBALQUEUE",
        "NORESOURCES",
        "NORMSTART",
        "DEDICATED",
        "SHAREDRESOURCE",
    ]
);

/// QoS flags: the core's, plus Moab's others (`MQOSFlags[]`) accepted and ignored.
const QOS_FLAGS: Choices = core_choices!(
    QosFlag,
    [
        "IGNJOBPERUSER",
        "IGNPROCPERUSER",
        "IGNJOBQUEUEDPERUSER",
        "IGNSYSMAXPE",
        "IGNSYSMAXPROC",
        "IGNSYSMAXTIME",
        "IGNSYSMAXPS",
        "IGNUSER",
        "IGNSYSTEM",
        "DEDICATED",
        "USERESERVED",
        "NTR",
        "PREEMPTFSV",
        "PREEMPTSPV",
        "IGNHOSTLIST",
        "PROVISION",
        "ENABLEUSERRSV",
        "COALLOC",
        "TRIGGER",
        "PREEMPTCONFIG",
        "PREEMPTORX",
        "VIRTUAL",
    ]
);

const QDEF_DOC: &str = "Default QoS of the credential's jobs; also part of its QoS access list. \
A trailing `&` (`QDEF=high&`) binds the jobs to the list (they may use only its QoS), `^` makes \
the list exclusive. Precedence: user, group, account, class.";
const QLIST_DOC: &str = "QoS the credential's jobs may use (union over user, group, account \
and class; `&`/`^` markers as for QDEF). A QoS no QLIST/QDEF names is open to every job.";

pub(super) static CLASS_ATTRS: &[AttrDef] = cred_attrs!(
    class,
    attr(
        "DEFAULT.WCLIMIT",
        ValueType::Duration,
        None,
        "Wall-clock limit given to jobs that request none.",
        |c, s, v| {
            class(c, s).default_wclimit = Some(v.duration()?);
            Ok(())
        }
    ),
    attr(
        "MAX.WCLIMIT",
        ValueType::Duration,
        None,
        "Largest wall-clock limit a job of the class may request (more: refused at submission; a job without one gets it).",
        |c, s, v| {
            class(c, s).max_wclimit = Some(v.duration()?);
            Ok(())
        }
    ),
    attr(
        "DEFAULT.NODES",
        POSITIVE,
        None,
        "Node count given to jobs of the class that request no node or processor count.",
        |c, s, v| {
            class(c, s).job.default_nodes = Some(v.u32()?);
            Ok(())
        }
    ),
    attr(
        "DEFAULT.PROC",
        POSITIVE,
        None,
        "Processors given to jobs of the class that request no node or processor count.",
        |c, s, v| {
            class(c, s).job.default_procs = Some(v.u32()?);
            Ok(())
        }
    ),
    attr(
        "DEFAULT.MEM",
        ValueType::Size,
        None,
        "Memory per task given to jobs of the class that request none.",
        |c, s, v| {
            class(c, s).job.default_mem_mb = Some(v.size_mb()?);
            Ok(())
        }
    ),
    attr(
        "DEFAULT.FEATURES",
        ValueType::List,
        None,
        "Node features required of jobs of the class that request none.",
        |c, s, v| {
            class(c, s).job.default_features = v.list()?.to_vec();
            Ok(())
        }
    ),
    AttrDef {
        aliases: &["MAX.PROCS"],
        ..attr(
            "MAX.PROC",
            POSITIVE,
            None,
            "Most processors a job of the class may request (more: refused at submission).",
            |c, s, v| {
                class(c, s).job.max_procs = Some(v.u32()?);
                Ok(())
            }
        )
    },
    AttrDef {
        aliases: &["MAX.NODES"],
        ..attr(
            "MAX.NODE",
            POSITIVE,
            None,
            "Most nodes a job of the class may request (more: refused at submission).",
            |c, s, v| {
                class(c, s).job.max_nodes = Some(v.u32()?);
                Ok(())
            }
        )
    },
    AttrDef {
        aliases: &["MIN.PROCS"],
        ..attr(
            "MIN.PROC",
            POSITIVE,
            None,
            "Fewest processors a job of the class may request (fewer: refused at submission).",
            |c, s, v| {
                class(c, s).job.min_procs = Some(v.u32()?);
                Ok(())
            }
        )
    },
    attr(
        "MIN.WCLIMIT",
        ValueType::Duration,
        None,
        "Shortest wall-clock limit a job of the class may request (shorter: refused at submission).",
        |c, s, v| {
            class(c, s).job.min_wclimit = Some(v.duration()?);
            Ok(())
        }
    ),
    attr(
        "HOSTLIST",
        ValueType::List,
        None,
        "The nodes the class's jobs may run on (a job's own host list must be within it).",
        |c, s, v| {
            class(c, s).job.hosts = v.list()?.to_vec();
            Ok(())
        }
    ),
    attr(
        "PARTITION",
        ValueType::Text,
        None,
        "The partition the class's jobs run in (a job asking another is refused).",
        |c, s, v| {
            class(c, s).job.partition = Some(v.text()?.to_string());
            Ok(())
        }
    ),
    attr("QDEF", ValueType::Text, None, QDEF_DOC, |c, s, v| {
        let (q, kind) = qos_name(v)?;
        let cfg = class(c, s);
        cfg.qdef = Some(q);
        cfg.qlist_kind = kind.unwrap_or(cfg.qlist_kind);
        Ok(())
    }),
    attr("QLIST", ValueType::List, None, QLIST_DOC, |c, s, v| {
        let (list, kind) = qos_list(v)?;
        let cfg = class(c, s);
        cfg.qlist = list;
        cfg.qlist_kind = kind.unwrap_or(cfg.qlist_kind);
        Ok(())
    }),
    AttrDef {
        aliases: &["FLAGS"],
        ..attr(
            "JOBFLAGS",
            ValueType::ChoiceList(JOB_FLAGS),
            None,
            "Flags given to every job of the class (e.g. SUSPENDABLE).",
            |c, s, v| {
                class(c, s).job_flags = job_flags(v)?;
                Ok(())
            }
        )
    },
);

pub(super) static QOS_ATTRS: &[AttrDef] = cred_attrs!(
    qos,
    attr(
        "QFLAGS",
        ValueType::ChoiceList(QOS_FLAGS),
        None,
        "QoS flags (PREEMPTOR, PREEMPTEE, NOBF, DEADLINE: the jobs' deadlines are guaranteed with a reservation, ...).",
        |c, s, v| {
            qos(c, s).flags = v
                .choices()?
                .iter()
                .map(|f| f.parse())
                .collect::<Result<_, _>>()?;
            Ok(())
        }
    ),
    attr(
        "JOBFLAGS",
        ValueType::ChoiceList(JOB_FLAGS),
        None,
        "Flags given to every job of the QoS.",
        |c, s, v| {
            qos(c, s).job_flags = job_flags(v)?;
            Ok(())
        }
    ),
    attr(
        "QTWEIGHT",
        INT,
        Some("0"),
        "Added to QUEUETIMEWEIGHT for the QoS's jobs (their queue-time subcomponent weight). Shown by mdiag -q.",
        |c, s, v| {
            qos(c, s).qt_weight = v.integer()?;
            Ok(())
        }
    ),
    attr(
        "XFWEIGHT",
        INT,
        Some("0"),
        "Added to XFACTORWEIGHT for the QoS's jobs (their expansion-factor subcomponent weight). Shown by mdiag -q.",
        |c, s, v| {
            qos(c, s).xf_weight = v.integer()?;
            Ok(())
        }
    ),
    attr(
        "QTTARGET",
        ValueType::Duration,
        None,
        "Target queue time of the QoS's jobs, shown by mdiag -q. With QFLAGS=DEADLINE it sets the jobs' relative deadline: submission + QTTARGET + walltime (Moab's Job Deadlines). Moab also feeds it to the TARGET priority component, which Arches does not compute: without QFLAGS=DEADLINE a non-zero value is accepted with a warning.",
        |c, s, v| {
            qos(c, s).qt_target = Some(v.duration()?);
            Ok(())
        }
    ),
    attr(
        "XFTARGET",
        ValueType::Float,
        None,
        "Target expansion factor of the QoS's jobs, shown by mdiag -q. Moab feeds it to the TARGET priority component, which Arches does not compute: a non-zero value is accepted with a warning.",
        |c, s, v| {
            let x = v.float()?;
            if !(0.0..=1e9).contains(&x) {
                return Err(format!("invalid expansion factor target '{x}' (0 to 1e9)"));
            }
            qos(c, s).xf_target_hundredths = Some((x * 100.0).round() as u64);
            Ok(())
        }
    ),
);

/// QDEF and QLIST of user, group and account credentials.
macro_rules! cred_q_attrs {
    ($get:ident) => {
        cred_attrs!(
            $get,
            attr("QDEF", ValueType::Text, None, QDEF_DOC, |c, s, v| {
                let (q, kind) = qos_name(v)?;
                let cfg = $get(c, s);
                cfg.qdef = Some(q);
                cfg.qlist_kind = kind.unwrap_or(cfg.qlist_kind);
                Ok(())
            }),
            attr("QLIST", ValueType::List, None, QLIST_DOC, |c, s, v| {
                let (list, kind) = qos_list(v)?;
                let cfg = $get(c, s);
                cfg.qlist = list;
                cfg.qlist_kind = kind.unwrap_or(cfg.qlist_kind);
                Ok(())
            }),
        )
    };
}

pub(super) static USER_ATTRS: &[AttrDef] = cred_q_attrs!(user);
pub(super) static GROUP_ATTRS: &[AttrDef] = cred_q_attrs!(group);
pub(super) static ACCOUNT_ATTRS: &[AttrDef] = cred_q_attrs!(account);
