//! Cross-checks of the job templates (`JOBCFG`, `JOBMATCHCFG`) after the
//! whole file: rules naming templates that do not exist, templates that
//! contradict the class they put jobs in.

use crate::config::Config;
use crate::parse::{Diagnostic, Severity};

pub(super) fn check_templates(config: &Config, file: &str, out: &mut Vec<Diagnostic>) {
    let t = &config.policy.templates;
    let mut push = |line: usize, severity: Severity, message: String| {
        out.push(Diagnostic {
            file: file.to_string(),
            line,
            severity,
            message,
        })
    };
    for (rule, role, name) in t.undefined_references() {
        let key = format!("JOBMATCHCFG[{rule}]");
        push(
            config.object_line(&key),
            Severity::Error,
            format!("{key} {role}={name}: no JOBCFG[{name}] defines this template"),
        );
    }
    for m in &t.matches {
        let key = format!("JOBMATCHCFG[{}]", m.name);
        if m.jmin.is_none() && m.jmax.is_none() && m.is_limit() {
            push(
                config.object_line(&key),
                Severity::Warning,
                format!(
                    "{key}: names no template (JMIN, JMAX, JDEF, JSET or JSTAT); it has no effect"
                ),
            );
        }
    }
    // Templates that put jobs in a class and give them a wall-clock limit
    // the class does not allow: every job they apply to would be refused.
    let setters = t
        .matches
        .iter()
        .flat_map(|m| [m.jdef.as_ref(), m.jset.as_ref()])
        .flatten()
        .cloned()
        .chain(
            t.templates
                .iter()
                .filter(|(_, x)| x.select)
                .map(|(n, _)| n.clone()),
        );
    let mut seen = std::collections::BTreeSet::new();
    for name in setters {
        if !seen.insert(name.clone()) {
            continue;
        }
        let Some(tpl) = t.templates.get(&name) else {
            continue;
        };
        let key = format!("JOBCFG[{name}]");
        let Some(class) = tpl.classes.first() else {
            continue;
        };
        match config.policy.classes.get(class) {
            None if !config.policy.classes.is_empty() => push(
                config.object_line(&key),
                Severity::Warning,
                format!("{key} CLASS={class}: no CLASSCFG[{class}] is configured"),
            ),
            Some(c) => {
                if let (Some(w), Some(max)) = (tpl.walltime, c.max_wclimit) {
                    if w > max {
                        push(
                            config.object_line(&key),
                            Severity::Error,
                            format!(
                                "{key} WALLTIME={} contradicts CLASSCFG[{class}] MAX.WCLIMIT={} (the class the template puts jobs in)",
                                arches_core::timespec::format_duration(w),
                                arches_core::timespec::format_duration(max)
                            ),
                        );
                    }
                }
            }
            None => {}
        }
        if !tpl.users.is_empty() || !tpl.groups.is_empty() {
            push(
                config.object_line(&key),
                Severity::Warning,
                format!("{key} USER/GROUP: only matched; a template does not change a job's owner or group"),
            );
        }
    }
}

#[cfg(test)]
mod tests;
