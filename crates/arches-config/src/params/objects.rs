//! Indexed object parameters: `NAME[index] ATTR=VALUE ATTR=VALUE ...`.
//! Lines naming the same object accumulate attributes. This module holds
//! `SCHEDCFG`, `ADMINCFG`, `NODECFG` and `SRCFG`, and the list of every object
//! (credentials are in [`super::creds`], resource managers in [`super::rm`]).

use arches_core::policy::PreemptPolicy;

use super::creds::{ACCOUNT_ATTRS, CLASS_ATTRS, GROUP_ATTRS, QOS_ATTRS, USER_ATTRS};
use super::rm::RM_ATTRS;
use super::templates::{JOB_ATTRS, MATCH_ATTRS};
use super::{attr, AttrDef, ObjectIndex, ParamDef, Shape, Site, COUNT, INT, POSITIVE};
use crate::config::Config;
use crate::enums::{NodeStateCfg, SchedMode, SrPeriod};
use crate::value::ValueType;

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

/// The scheduler settings; `SCHEDCFG[name]` also names the scheduler.
fn sched<'a>(c: &'a mut Config, s: Site<'_>) -> &'a mut crate::config::SchedConfig {
    c.sched.name = s.index.to_string();
    &mut c.sched
}

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
        "Users of this level (ALL = everyone); root and the user the daemon runs as are always level 1.",
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

static NODE_ATTRS: &[AttrDef] = &[
    attr(
        "PROCS",
        ValueType::Integer {
            min: 1,
            max: arches_core::limits::MAX_NODE_PROCS as i64,
        },
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
        "PRIORITY",
        INT,
        Some("0"),
        "Node priority: NODEALLOCATIONPOLICY PRIORITY allocates the highest first.",
        |c, s, v| {
            c.node_mut(s.index).priority = Some(v.integer()?);
            Ok(())
        },
    ),
    attr(
        "GRES",
        ValueType::Text,
        None,
        "Generic resources of the node, NAME[:COUNT][,NAME[:COUNT]]... (gpu:4,matlab:2); counted per node like processors. With a node-reporting RM (Slurm), replaces the node's reported generic resources.",
        |c, s, v| {
            let list = arches_core::gres::parse_list(v.text()?)?;
            c.node_mut(s.index).gres = Some(list);
            Ok(())
        },
    ),
    attr(
        "ACCESS",
        ValueType::Choice(core_choices!(arches_core::access::NodeAccessPolicy)),
        None,
        "Node access policy of the jobs on this node that have none of their own (default: NODEACCESSPOLICY).",
        |c, s, v| {
            c.node_mut(s.index).access = Some(v.parse_choice()?);
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
        "RESOURCES",
        ValueType::Text,
        Some("PROCS:1"),
        "Resources per task (PROCS:N[;MEM:M]); only processors are reserved.",
        |c, s, v| {
            c.sr_mut(s.index).procs_per_task = crate::config::sr_procs_per_task(v.text()?)?;
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

/// The share tree being configured (`FSTREE[...]` lines accumulate).
fn fstree(c: &mut Config) -> &mut arches_core::fstree::FsTree {
    std::sync::Arc::make_mut(c.policy.fairshare.tree.get_or_insert_with(Default::default))
}

static FSTREE_ATTRS: &[AttrDef] = &[
    attr(
        "SHARES",
        ValueType::Text,
        None,
        "The node's shares of its parent's: `N` (the global tree), `N@PARTITION` (that partition's tree), several separated by commas. A credential member without SHARES has none (it takes its parent's factor).",
        |c, s, v| {
            let t = fstree(c);
            let i = t.node_for_index(s.index)?;
            t.set_shares(i, v.text()?)
        },
    ),
    attr(
        "MEMBERLIST",
        ValueType::Text,
        None,
        "The node's members, comma-separated: `user:NAME`, `group:NAME`, `acct:NAME`, `class:NAME`, `qos:NAME` stand for that credential; an untyped NAME is an inner node (configured by its own FSTREE[NAME] line). A node in no MEMBERLIST hangs from `root`.",
        |c, s, v| {
            let t = fstree(c);
            let i = t.node_for_index(s.index)?;
            t.add_members(i, v.text()?)
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
        "FSTREE",
        ObjectIndex::Name,
        FSTREE_ATTRS,
        "Hierarchical fairshare (share tree): FSTREE[<node>] SHARES=... MEMBERLIST=...; the index is a node (`root` is the tree's root) or a credential member (`user:NAME`). A job's node is its user under its account (else its user, else its deepest credential node); the node's tree factor is the FS value of every fairshare subcomponent whose credential has no FSTARGET (mdiag -f shows the tree, docs/formats.md \"Fairshare\" the arithmetic).",
        "fairshare",
    ),
    object(
        "SRCFG",
        ObjectIndex::Name,
        SR_ATTRS,
        "Standing reservations.",
        "reservations",
    ),
    object(
        "JOBCFG",
        ObjectIndex::Name,
        JOB_ATTRS,
        "Job templates: criteria for JOBMATCHCFG's JMIN/JMAX, attributes for its JDEF/JSET, or (SELECT=TRUE) templates users request with msub -l template=NAME.",
        "job templates",
    ),
    object(
        "JOBMATCHCFG",
        ObjectIndex::Name,
        MATCH_ATTRS,
        "Job template rules, evaluated in file order at submission: a job meeting JMIN and not exceeding JMAX gets JDEF's defaults and JSET's forced values; a rule without JDEF/JSET rejects the jobs it does not match.",
        "job templates",
    ),
];
