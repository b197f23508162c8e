//! Indexed object parameters: `NAME[index] ATTR=VALUE ATTR=VALUE ...`
//! (`SCHEDCFG`, `ADMINCFG`, `RMCFG`, `NODECFG`, the credential objects and
//! `SRCFG`). Lines naming the same object accumulate attributes.

use arches_core::policy::{ClassConfig, CredConfig, Limits, PreemptPolicy, QosConfig, QosFlag};
use arches_core::JobFlag;

use super::{AttrDef, ObjectIndex, ParamDef, Setter, Shape, Site};
use crate::config::Config;
use crate::enums::{NodeStateCfg, ResourceType, RmType, SchedMode, SrPeriod};
use crate::value::{Choices, Value, ValueType};

const INT: ValueType = ValueType::Integer {
    min: i64::MIN,
    max: i64::MAX,
};
const COUNT: ValueType = ValueType::Integer {
    min: 0,
    max: u32::MAX as i64,
};
const POSITIVE: ValueType = ValueType::Integer {
    min: 1,
    max: u32::MAX as i64,
};

const fn attr(
    name: &'static str,
    ty: ValueType,
    default: Option<&'static str>,
    doc: &'static str,
    set: Setter,
) -> AttrDef {
    AttrDef {
        name,
        aliases: &[],
        ty,
        default,
        doc,
        set,
    }
}

const fn object(
    name: &'static str,
    index: ObjectIndex,
    attrs: &'static [AttrDef],
    doc: &'static str,
    used_by: &'static str,
) -> ParamDef {
    ParamDef {
        name,
        aliases: &[],
        shape: Shape::Object { index, attrs },
        default: None,
        doc,
        used_by,
    }
}

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

/// The scheduler settings; `SCHEDCFG[name]` also names the scheduler.
fn sched<'a>(c: &'a mut Config, s: Site<'_>) -> &'a mut crate::config::SchedConfig {
    c.sched.name = s.index.to_string();
    &mut c.sched
}

/// A QoS name with Moab's `&` marker (`QDEF=high&`) removed.
fn qos_name(v: &Value) -> Result<String, String> {
    let name = v.text()?.trim_end_matches('&').trim();
    if name.is_empty() || name.contains(char::is_whitespace) {
        return Err(format!("invalid QoS name '{}'", v.text()?));
    }
    Ok(name.to_string())
}

fn qos_list(v: &Value) -> Result<Vec<String>, String> {
    Ok(v.list()?
        .iter()
        .map(|q| q.trim_end_matches('&').to_string())
        .filter(|q| !q.is_empty())
        .collect())
}

fn job_flags(v: &Value) -> Result<Vec<JobFlag>, String> {
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
            $($extra),*
        ]
    };
}

/// Job flags: the core's, plus Moab's others accepted and ignored.
const JOB_FLAGS: Choices = core_choices!(
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
        "DEADLINE",
        "ENABLEUSERRSV",
        "COALLOC",
        "TRIGGER",
        "PREEMPTCONFIG",
        "PREEMPTORX",
        "VIRTUAL",
    ]
);

const QDEF_DOC: &str = "Default QoS (`QDEF=high&`: the `&` marks the class's default QoS).";

static CLASS_ATTRS: &[AttrDef] = cred_attrs!(
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
        "Largest wall-clock limit a job may request.",
        |c, s, v| {
            class(c, s).max_wclimit = Some(v.duration()?);
            Ok(())
        }
    ),
    attr("QDEF", ValueType::Text, None, QDEF_DOC, |c, s, v| {
        class(c, s).qdef = Some(qos_name(v)?);
        Ok(())
    }),
    attr(
        "QLIST",
        ValueType::List,
        None,
        "QoS the class's jobs may use (empty = any).",
        |c, s, v| {
            class(c, s).qlist = qos_list(v)?;
            Ok(())
        }
    ),
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

static QOS_ATTRS: &[AttrDef] = cred_attrs!(
    qos,
    attr(
        "QFLAGS",
        ValueType::ChoiceList(QOS_FLAGS),
        None,
        "QoS flags (PREEMPTOR, PREEMPTEE, NOBF, ...).",
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
);

/// QDEF and QLIST of user, group and account credentials.
macro_rules! cred_q_attrs {
    ($get:ident) => {
        cred_attrs!(
            $get,
            attr("QDEF", ValueType::Text, None, QDEF_DOC, |c, s, v| {
                $get(c, s).qdef = Some(qos_name(v)?);
                Ok(())
            }),
            attr(
                "QLIST",
                ValueType::List,
                None,
                "QoS the credential may use (empty = any).",
                |c, s, v| {
                    $get(c, s).qlist = qos_list(v)?;
                    Ok(())
                }
            ),
        )
    };
}

static USER_ATTRS: &[AttrDef] = cred_q_attrs!(user);
static GROUP_ATTRS: &[AttrDef] = cred_q_attrs!(group);
static ACCOUNT_ATTRS: &[AttrDef] = cred_q_attrs!(account);

static SCHED_ATTRS: &[AttrDef] = &[
    attr(
        "SERVER",
        ValueType::Text,
        None,
        "host[:port] the daemon serves.",
        |c, s, v| {
            sched(c, s).server = Some(v.text()?.to_string());
            Ok(())
        },
    ),
    attr(
        "MODE",
        ValueType::Choice(core_choices!(SchedMode)),
        Some("NORMAL"),
        "Scheduling mode.",
        |c, s, v| {
            sched(c, s).mode = v.parse_choice()?;
            Ok(())
        },
    ),
    attr(
        "FLAGS",
        ValueType::List,
        Some("[NONE]"),
        "Scheduler flags.",
        |c, s, v| {
            sched(c, s).flags = v.list()?.to_vec();
            Ok(())
        },
    ),
    attr(
        "MAXJOBID",
        POSITIVE,
        None,
        "Largest job id before ids wrap.",
        |c, s, v| {
            sched(c, s).max_job_id = Some(v.integer()?.unsigned_abs());
            Ok(())
        },
    ),
    attr("MINJOBID", COUNT, None, "First job id.", |c, s, v| {
        sched(c, s).min_job_id = Some(v.integer()?.unsigned_abs());
        Ok(())
    }),
];

static ADMIN_ATTRS: &[AttrDef] = &[
    attr(
        "USERS",
        ValueType::List,
        None,
        "Users of this level (ALL = everyone); root is always level 1.",
        |c, s, v| {
            let level: usize = s
                .index
                .parse()
                .map_err(|_| format!("invalid level '{}'", s.index))?;
            super::scalars::set_admin(c, level.saturating_sub(1).min(4), v)
        },
    ),
    attr(
        "GROUPS",
        ValueType::List,
        None,
        "Groups whose members have this level.",
        |c, s, v| {
            let level: usize = s
                .index
                .parse()
                .map_err(|_| format!("invalid level '{}'", s.index))?;
            c.admin_groups[level.saturating_sub(1).min(4)] = v.list()?.to_vec();
            Ok(())
        },
    ),
];

fn set_rm_type(c: &mut Config, s: Site<'_>, v: &Value) -> Result<(), String> {
    let text = v.text()?;
    let (t, sub) = match text.split_once(':') {
        Some((t, sub)) if !sub.is_empty() => (t, Some(sub.to_string())),
        Some(_) => return Err(format!("invalid type '{text}' (missing subtype after ':')")),
        None => (text, None),
    };
    let rm_type: RmType = t.parse()?;
    let rm = c.rm_mut(s.index);
    rm.rm_type = rm_type;
    rm.subtype = sub;
    Ok(())
}

fn set_url(c: &mut Config, s: Site<'_>, v: &Value) -> Result<(), String> {
    c.rm_mut(s.index)
        .urls
        .insert(s.name.to_string(), v.text()?.to_string());
    Ok(())
}

/// One native-interface URL attribute.
const fn url(name: &'static str, doc: &'static str) -> AttrDef {
    attr(name, ValueType::Url, None, doc, set_url)
}

static RM_ATTRS: &[AttrDef] = &[
    attr("TYPE", ValueType::Text, Some("PBS"),
        "Interface: LOCAL, SLURM, NATIVE, PBS, TORQUE, WIKI, LL, MOAB, SSS or OTHER, optionally :SUBTYPE.",
        set_rm_type),
    attr("RESOURCETYPE", ValueType::Choice(core_choices!(ResourceType)), Some("COMPUTE"),
        "What the RM manages (STORAGE for data staging).",
        |c, s, v| { c.rm_mut(s.index).resource_type = v.parse_choice()?; Ok(()) }),
    attr("SERVER", ValueType::Text, None, "host[:port] or URL of the RM server.",
        |c, s, v| { c.rm_mut(s.index).server = Some(v.text()?.to_string()); Ok(()) }),
    attr("HOST", ValueType::Text, None, "RM server host.",
        |c, s, v| { c.rm_mut(s.index).host = Some(v.text()?.to_string()); Ok(()) }),
    attr("PORT", ValueType::Integer { min: 1, max: 65535 }, None, "RM server port.",
        |c, s, v| { c.rm_mut(s.index).port = Some(u16::try_from(v.integer()?).map_err(|e| e.to_string())?); Ok(()) }),
    attr("TIMEOUT", ValueType::Duration, Some("00:00:30"), "How long to wait for the RM.",
        |c, s, v| { c.rm_mut(s.index).timeout = v.duration()?; Ok(()) }),
    attr("POLLINTERVAL", ValueType::Duration, None, "How often to query this RM (default RMPOLLINTERVAL).",
        |c, s, v| { c.rm_mut(s.index).poll_interval = Some(v.duration()?); Ok(()) }),
    attr("PARTITION", ValueType::Text, None, "Partition of the nodes this RM reports.",
        |c, s, v| { c.rm_mut(s.index).partition = Some(v.text()?.to_string()); Ok(()) }),
    attr("FLAGS", ValueType::List, Some("[NONE]"), "RM flags.",
        |c, s, v| { c.rm_mut(s.index).flags = v.list()?.to_vec(); Ok(()) }),
    attr("DEFAULTCLASS", ValueType::Text, None, "Class of jobs submitted without one.",
        |c, s, v| { c.rm_mut(s.index).default_class = Some(v.text()?.to_string()); Ok(()) }),
    attr("DESCRIPTION", ValueType::Text, None, "Free text shown by mdiag -R.",
        |c, s, v| { c.rm_mut(s.index).description = Some(v.text()?.to_string()); Ok(()) }),
    attr("DATARM", ValueType::Text, None, "Storage RM that stages this RM's jobs' data.",
        |c, s, v| { c.rm_mut(s.index).data_rm = Some(v.text()?.to_string()); Ok(()) }),
    attr("TARGETUSAGE", ValueType::Percent, None, "Storage: share of the cache data staging may fill.",
        |c, s, v| { c.rm_mut(s.index).target_usage = Some(v.percent()?); Ok(()) }),
    attr("MAXDSOP", POSITIVE, None, "Storage: concurrent data-staging operations.",
        |c, s, v| { c.rm_mut(s.index).max_dsop = Some(v.u32()?); Ok(()) }),
    attr("BANDWIDTH", ValueType::Bandwidth, None, "Storage: transfer rate used to estimate stage durations.",
        |c, s, v| { c.rm_mut(s.index).bandwidth_kbps = Some(v.bandwidth_kbps()?); Ok(()) }),
    attr("SUSPENDSIG", ValueType::Signal, None, "Signal sent to suspend jobs.",
        |c, s, v| { c.rm_mut(s.index).suspend_sig = Some(v.signal()?); Ok(()) }),
    attr("CHECKPOINTSIG", ValueType::Signal, None, "Signal sent to checkpoint jobs.",
        |c, s, v| { c.rm_mut(s.index).checkpoint_sig = Some(v.signal()?); Ok(()) }),
    attr("CHECKPOINTTIMEOUT", ValueType::Duration, None, "Wait for a checkpoint before requeue/cancel.",
        |c, s, v| { c.rm_mut(s.index).checkpoint_timeout = Some(v.duration()?); Ok(()) }),
    attr("SOFTTERMSIG", ValueType::Signal, None, "Signal sent before a job is killed at its limit.",
        |c, s, v| { c.rm_mut(s.index).soft_term_sig = Some(v.signal()?); Ok(()) }),
    url("CLUSTERQUERYURL", "Native: node/resource query (storage: cache resources)."),
    url("WORKLOADQUERYURL", "Native: job query."),
    url("SYSTEMQUERYURL", "Native: system query (storage: file size and owner)."),
    url("SYSTEMMODIFYURL", "Native: system modify (storage: start a transfer)."),
    url("JOBSTARTURL", "Native: start a job."),
    url("JOBCANCELURL", "Native: cancel a job."),
    url("JOBSUBMITURL", "Native: submit a job."),
    url("JOBMODIFYURL", "Native: modify a job."),
    url("JOBREQUEUEURL", "Native: requeue a job."),
    url("JOBSUSPENDURL", "Native: suspend a job."),
    url("JOBRESUMEURL", "Native: resume a job."),
    url("JOBSIGNALURL", "Native: signal a job."),
    url("JOBMIGRATEURL", "Native: migrate a job."),
    url("NODEMODIFYURL", "Native: modify a node."),
    url("NODEPOWERURL", "Native: power a node on/off."),
    url("RMSTARTURL", "Native: start the RM."),
    url("RMSTOPURL", "Native: stop the RM."),
    url("QUEUEQUERYURL", "Native: queue query."),
];

static NODE_ATTRS: &[AttrDef] = &[
    attr(
        "PROCS",
        POSITIVE,
        None,
        "Processors (NODECFG[DEFAULT] supplies it for nodes without).",
        |c, s, v| {
            c.node_mut(s.index).procs = Some(v.u32()?);
            Ok(())
        },
    ),
    attr("MEM", ValueType::Size, None, "Memory in MB.", |c, s, v| {
        c.node_mut(s.index).mem_mb = Some(v.size_mb()?);
        Ok(())
    }),
    attr(
        "FEATURES",
        ValueType::List,
        None,
        "Node features jobs may require.",
        |c, s, v| {
            c.node_mut(s.index).features = Some(v.list()?.to_vec());
            Ok(())
        },
    ),
    attr(
        "PARTITION",
        ValueType::Text,
        Some("DEFAULT"),
        "Partition of the node.",
        |c, s, v| {
            c.node_mut(s.index).partition = Some(v.text()?.to_string());
            Ok(())
        },
    ),
    attr(
        "STATE",
        ValueType::Choice(core_choices!(NodeStateCfg)),
        Some("UP"),
        "Administrative state at start.",
        |c, s, v| {
            c.node_mut(s.index).state = Some(v.parse_choice::<NodeStateCfg>()?.admin());
            Ok(())
        },
    ),
    attr(
        "PREEMPTPOLICY",
        ValueType::Choice(core_choices!(PreemptPolicy, ["OVERCOMMIT", "MIGRATE"])),
        None,
        "Preemption policy for jobs on this node.",
        |c, s, v| {
            c.node_mut(s.index).preempt_policy = Some(v.parse_choice()?);
            Ok(())
        },
    ),
];

static SR_ATTRS: &[AttrDef] = &[
    attr(
        "PERIOD",
        ValueType::Choice(core_choices!(SrPeriod)),
        Some("DAY"),
        "Period the reservation repeats.",
        |c, s, v| {
            c.sr_mut(s.index).period = v.parse_choice()?;
            Ok(())
        },
    ),
    attr(
        "STARTTIME",
        ValueType::Duration,
        None,
        "Start as an offset into the period ([D:]HH:MM:SS).",
        |c, s, v| {
            c.sr_mut(s.index).start_time = Some(v.duration()?);
            Ok(())
        },
    ),
    attr(
        "ENDTIME",
        ValueType::Duration,
        None,
        "End as an offset into the period.",
        |c, s, v| {
            c.sr_mut(s.index).end_time = Some(v.duration()?);
            Ok(())
        },
    ),
    attr(
        "DURATION",
        ValueType::Duration,
        None,
        "Length of each instance.",
        |c, s, v| {
            c.sr_mut(s.index).duration = Some(v.duration()?);
            Ok(())
        },
    ),
    attr(
        "DAYS",
        ValueType::ChoiceList(word_choices!(
            "MON", "TUE", "WED", "THU", "FRI", "SAT", "SUN", "ALL"
        )),
        Some("ALL"),
        "Days the reservation is active.",
        |c, s, v| {
            let days = v.choices()?;
            c.sr_mut(s.index).days = if days.contains(&"ALL") {
                Vec::new()
            } else {
                days.iter().map(|d| d.to_string()).collect()
            };
            Ok(())
        },
    ),
    attr(
        "HOSTLIST",
        ValueType::List,
        None,
        "Nodes reserved.",
        |c, s, v| {
            c.sr_mut(s.index).hosts = v.list()?.to_vec();
            Ok(())
        },
    ),
    attr(
        "TASKCOUNT",
        COUNT,
        Some("0"),
        "Tasks (processors) reserved.",
        |c, s, v| {
            c.sr_mut(s.index).task_count = v.u32()?;
            Ok(())
        },
    ),
    attr(
        "DEPTH",
        COUNT,
        Some("2"),
        "Periods reserved ahead.",
        |c, s, v| {
            c.sr_mut(s.index).depth = v.u32()?;
            Ok(())
        },
    ),
    attr(
        "PARTITION",
        ValueType::Text,
        None,
        "Partition the reservation is in.",
        |c, s, v| {
            c.sr_mut(s.index).partition = Some(v.text()?.to_string());
            Ok(())
        },
    ),
    attr(
        "USERLIST",
        ValueType::List,
        None,
        "Users allowed in.",
        |c, s, v| {
            c.sr_mut(s.index).users = v.list()?.to_vec();
            Ok(())
        },
    ),
    attr(
        "GROUPLIST",
        ValueType::List,
        None,
        "Groups allowed in.",
        |c, s, v| {
            c.sr_mut(s.index).groups = v.list()?.to_vec();
            Ok(())
        },
    ),
    attr(
        "ACCOUNTLIST",
        ValueType::List,
        None,
        "Accounts allowed in.",
        |c, s, v| {
            c.sr_mut(s.index).accounts = v.list()?.to_vec();
            Ok(())
        },
    ),
    attr(
        "CLASSLIST",
        ValueType::List,
        None,
        "Classes allowed in.",
        |c, s, v| {
            c.sr_mut(s.index).classes = v.list()?.to_vec();
            Ok(())
        },
    ),
    attr(
        "QOSLIST",
        ValueType::List,
        None,
        "QoS allowed in.",
        |c, s, v| {
            c.sr_mut(s.index).qos = v.list()?.to_vec();
            Ok(())
        },
    ),
    attr(
        "FLAGS",
        ValueType::List,
        Some("[NONE]"),
        "Reservation flags.",
        |c, s, v| {
            c.sr_mut(s.index).flags = v.list()?.to_vec();
            Ok(())
        },
    ),
    attr(
        "OWNER",
        ValueType::Text,
        None,
        "Owner (TYPE:NAME).",
        |c, s, v| {
            c.sr_mut(s.index).owner = Some(v.text()?.to_string());
            Ok(())
        },
    ),
];

/// Every object parameter.
pub(super) static OBJECTS: &[ParamDef] = &[
    object(
        "SCHEDCFG",
        ObjectIndex::OptionalName,
        SCHED_ATTRS,
        "Scheduler: the index is its name (default Moab).",
        "daemon",
    ),
    object(
        "ADMINCFG",
        ObjectIndex::Level,
        ADMIN_ATTRS,
        "Administrator levels 1–5 (1 = full control).",
        "commands",
    ),
    object(
        "RMCFG",
        ObjectIndex::Name,
        RM_ATTRS,
        "Resource managers (compute and storage).",
        "resource managers, data staging",
    ),
    object(
        "NODECFG",
        ObjectIndex::Name,
        NODE_ATTRS,
        "Nodes; NODECFG[DEFAULT] supplies defaults for every node.",
        "nodes",
    ),
    object(
        "CLASSCFG",
        ObjectIndex::Name,
        CLASS_ATTRS,
        "Classes (queues).",
        "policy",
    ),
    object(
        "QOSCFG",
        ObjectIndex::Name,
        QOS_ATTRS,
        "Qualities of service.",
        "policy, preemption",
    ),
    object("USERCFG", ObjectIndex::Name, USER_ATTRS, "Users.", "policy"),
    object(
        "GROUPCFG",
        ObjectIndex::Name,
        GROUP_ATTRS,
        "Groups.",
        "policy",
    ),
    object(
        "ACCOUNTCFG",
        ObjectIndex::Name,
        ACCOUNT_ATTRS,
        "Accounts.",
        "policy",
    ),
    object(
        "SRCFG",
        ObjectIndex::Name,
        SR_ATTRS,
        "Standing reservations.",
        "reservations",
    ),
];
