//! Job templates: `JOBCFG[name] ATTR=VALUE ...` (the templates) and
//! `JOBMATCHCFG[name] JMIN= JMAX= JDEF= JSET= FLAGS=BREAK` (the rules that
//! relate them). Semantics in [`arches_core::templates`].

use arches_core::templates::JobTemplate;

use super::creds::{job_flags, JOB_FLAGS};
use super::{attr, AttrDef, Site, POSITIVE};
use crate::config::Config;
use crate::value::{Value, ValueType};

fn template<'a>(c: &'a mut Config, s: Site<'_>) -> &'a mut JobTemplate {
    c.policy
        .templates
        .templates
        .entry(s.index.to_string())
        .or_default()
}

fn names(v: &Value) -> Result<Vec<String>, String> {
    Ok(v.list()?.to_vec())
}

/// A template name (one word).
fn template_name(v: &Value) -> Result<Option<String>, String> {
    let t = v.text()?.trim();
    if t.is_empty() || t.contains(char::is_whitespace) {
        return Err(format!("invalid template name '{t}'"));
    }
    Ok(Some(t.to_string()))
}

pub(super) static JOB_ATTRS: &[AttrDef] = &[
    attr(
        "SELECT",
        ValueType::Boolean,
        Some("FALSE"),
        "Users may request the template at submission (msub -l template=NAME); its attributes are then the job's defaults, and a JOBMATCHCFG of the same name applies to the jobs that requested it.",
        |c, s, v| {
            template(c, s).select = v.boolean()?;
            Ok(())
        },
    ),
    attr(
        "DESCRIPTION",
        ValueType::Text,
        None,
        "What the template is for.",
        |c, s, v| {
            template(c, s).description = Some(v.text()?.to_string());
            Ok(())
        },
    ),
    attr(
        "ACCOUNT",
        ValueType::List,
        None,
        "Accounts: matched (JMIN: one of them; JMAX: none of them), the first set (JDEF/JSET).",
        |c, s, v| {
            template(c, s).accounts = names(v)?;
            Ok(())
        },
    ),
    attr(
        "CLASS",
        ValueType::List,
        None,
        "Classes (queues): matched, the first set.",
        |c, s, v| {
            template(c, s).classes = names(v)?;
            Ok(())
        },
    ),
    attr(
        "QOS",
        ValueType::List,
        None,
        "QoS: matched, the first set (access rules still apply).",
        |c, s, v| {
            template(c, s).qos = names(v)?;
            Ok(())
        },
    ),
    attr(
        "USER",
        ValueType::List,
        None,
        "Users: matched only (a template cannot change a job's owner).",
        |c, s, v| {
            template(c, s).users = names(v)?;
            Ok(())
        },
    ),
    attr(
        "GROUP",
        ValueType::List,
        None,
        "Groups: matched only.",
        |c, s, v| {
            template(c, s).groups = names(v)?;
            Ok(())
        },
    ),
    attr(
        "PARTITION",
        ValueType::List,
        None,
        "Partitions: matched, the first set.",
        |c, s, v| {
            template(c, s).partitions = names(v)?;
            Ok(())
        },
    ),
    attr(
        "FLAGS",
        ValueType::ChoiceList(JOB_FLAGS),
        None,
        "Job flags: matched (JMIN: all of them; JMAX: none of them), added (JDEF/JSET).",
        |c, s, v| {
            template(c, s).flags = job_flags(v)?;
            Ok(())
        },
    ),
    AttrDef {
        aliases: &["RFEATURES"],
        ..attr(
            "FEATURES",
            ValueType::List,
            None,
            "Required node features: matched (all / none of them), set.",
            |c, s, v| {
                template(c, s).features = names(v)?;
                Ok(())
            },
        )
    },
    AttrDef {
        aliases: &["WCLIMIT"],
        ..attr(
            "WALLTIME",
            ValueType::Duration,
            None,
            "Wall-clock limit: the least (JMIN) or most (JMAX) a job may request, or the one it gets (JDEF/JSET). A job without a limit exceeds every maximum.",
            |c, s, v| {
                let w = v.duration()?;
                if w <= 0 {
                    return Err("a template's WALLTIME must be positive".to_string());
                }
                template(c, s).walltime = Some(w);
                Ok(())
            },
        )
    },
    AttrDef {
        aliases: &["TASKS"],
        ..attr(
            "PROCS",
            POSITIVE,
            None,
            "Total processors: the least, the most, or what the job requests (procs=N).",
            |c, s, v| {
                template(c, s).procs = Some(v.u32()?);
                Ok(())
            },
        )
    },
    attr(
        "NODES",
        POSITIVE,
        None,
        "Node count: the least, the most, or what the job requests.",
        |c, s, v| {
            template(c, s).nodes = Some(v.u32()?);
            Ok(())
        },
    ),
    attr(
        "MEM",
        ValueType::Size,
        None,
        "Total memory: the least, the most, or what the job requests.",
        |c, s, v| {
            template(c, s).mem_mb = Some(v.size_mb()?);
            Ok(())
        },
    ),
];

pub(super) static MATCH_ATTRS: &[AttrDef] = &[
    attr(
        "JMIN",
        ValueType::Text,
        None,
        "Template a job must meet for the rule to apply (a rule without JDEF/JSET rejects the jobs that do not).",
        |c, s, v| {
            c.policy.templates.match_mut(s.index).jmin = template_name(v)?;
            Ok(())
        },
    ),
    attr(
        "JMAX",
        ValueType::Text,
        None,
        "Template a job must not exceed for the rule to apply (a rule without JDEF/JSET rejects the jobs that exceed it, naming the template).",
        |c, s, v| {
            c.policy.templates.match_mut(s.index).jmax = template_name(v)?;
            Ok(())
        },
    ),
    attr(
        "JDEF",
        ValueType::Text,
        None,
        "Template whose attributes a matching job gets where it has none (defaults).",
        |c, s, v| {
            c.policy.templates.match_mut(s.index).jdef = template_name(v)?;
            Ok(())
        },
    ),
    attr(
        "JSET",
        ValueType::Text,
        None,
        "Template whose attributes a matching job gets, overriding its own (flags and features are added).",
        |c, s, v| {
            c.policy.templates.match_mut(s.index).jset = template_name(v)?;
            Ok(())
        },
    ),
    attr(
        "JSTAT",
        ValueType::Text,
        None,
        "Statistics templates (NAME[,NAME]...) the jobs this rule matches are counted in (showstats -j); they need no JOBCFG. A rule with a JSTAT is not a limit: its JMIN/JMAX only choose the jobs counted.",
        |c, s, v| {
            let mut names = Vec::new();
            for n in v.text()?.split(',').map(str::trim) {
                if n.is_empty() || n.contains(char::is_whitespace) {
                    return Err(format!("invalid template name '{n}'"));
                }
                if !names.iter().any(|x: &String| x == n) {
                    names.push(n.to_string());
                }
            }
            c.policy.templates.match_mut(s.index).jstat = names;
            Ok(())
        },
    ),
    attr(
        "FLAGS",
        ValueType::ChoiceList(word_choices!("BREAK")),
        None,
        "BREAK: a job this rule matched is not evaluated against the rules that follow.",
        |c, s, v| {
            c.policy.templates.match_mut(s.index).brk = v.choices()?.contains(&"BREAK");
            Ok(())
        },
    ),
];
