//! `RMCFG[name]`: resource managers — interface type, server, polling,
//! signals, native interface URLs and the storage (data-staging) attributes.

use super::{attr, AttrDef, Site, POSITIVE};
use crate::config::Config;
use crate::enums::{ResourceType, RmType};
use crate::value::{Value, ValueType};

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

fn set_server(c: &mut Config, s: Site<'_>, v: &Value) -> Result<(), String> {
    let server = v.text()?.to_string();
    let type_given = c
        .record
        .objects
        .get(&format!("RMCFG[{}]", s.index))
        .is_some_and(|attrs| attrs.iter().any(|(a, _, _)| a == "TYPE"));
    let rm = c.rm_mut(s.index);
    if !type_given {
        // The type is implied by the last SERVER given.
        rm.rm_type = if server.to_ascii_lowercase().starts_with("moab://") {
            RmType::Moab
        } else {
            RmType::Pbs // Moab's default TYPE
        };
    }
    rm.server = Some(server);
    Ok(())
}

/// One native-interface URL attribute.
const fn url(name: &'static str, doc: &'static str) -> AttrDef {
    attr(name, ValueType::Url, None, doc, set_url)
}

pub(super) static RM_ATTRS: &[AttrDef] = &[
    attr("TYPE", ValueType::Text, Some("PBS"),
        "Interface: LOCAL, SLURM, NATIVE, PBS, TORQUE, WIKI, LL, MOAB, SSS or OTHER, optionally :SUBTYPE.",
        set_rm_type),
    attr("RESOURCETYPE", ValueType::Choice(core_choices!(ResourceType)), Some("COMPUTE"),
        "What the RM manages (STORAGE for data staging).",
        |c, s, v| { c.rm_mut(s.index).resource_type = v.parse_choice()?; Ok(()) }),
    attr("SERVER", ValueType::Text, None,
        "host[:port] or URL of the RM server (a moab:// URL implies TYPE=MOAB unless TYPE is given).",
        set_server),
    attr("HOST", ValueType::Text, None, "RM server host.",
        |c, s, v| { c.rm_mut(s.index).host = Some(v.text()?.to_string()); Ok(()) }),
    attr("PORT", ValueType::Integer { min: 1, max: 65535 }, None, "RM server port.",
        |c, s, v| { c.rm_mut(s.index).port = Some(u16::try_from(v.integer()?).map_err(|e| e.to_string())?); Ok(()) }),
    attr("TIMEOUT", ValueType::Duration, Some("00:00:30"),
        "How long to wait for the RM (Slurm: for an unreachable slurmctld before a start fails, and for a released job to run).",
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
    attr("MAXDSOPPERNODE", POSITIVE, Some("1"), "Storage, DATASTAGEMODEL LOCAL: concurrent stage-ins to one compute node's local disk, so that staging does not disturb the jobs already running there.",
        |c, s, v| { c.rm_mut(s.index).max_dsop_per_node = v.u32()?; Ok(()) }),
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
