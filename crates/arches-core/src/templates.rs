//! Job templates (Moab's "Job Templates", the Windows HPC seed's job
//! templates with maximum run times): `JOBCFG[name]` templates and the
//! `JOBMATCHCFG[name]` rules that relate them, applied to a submission
//! before it is queued. Pure: the daemon builds a [`Subject`] from the
//! submission, [`apply`] changes it (or rejects it with the reason) and says
//! which templates applied; the daemon writes the changes back.
//!
//! Semantics (Moab's, with the choices where its documentation is silent):
//!
//! - A job *meets* a template used as `JMIN` when it has every credential
//!   the template lists (one of each list), every flag and feature, and at
//!   least its wall time, processors, nodes and memory. A job *exceeds* a
//!   template used as `JMAX` when it has one of the credentials, flags or
//!   features the template lists, or more wall time, processors, nodes or
//!   memory. A job without a wall-clock limit has an unlimited one: it meets
//!   every minimum and exceeds every maximum.
//! - A `JOBMATCHCFG` entry *matches* a job that meets its `JMIN` and does
//!   not exceed its `JMAX` (either may be absent). A matching job gets the
//!   entry's `JDEF` attributes where it has none (defaults) and then its
//!   `JSET` attributes (forced; flags and features are added); `FLAGS=BREAK`
//!   stops the evaluation of the entries that follow. Entries are evaluated
//!   in the order of the configuration file.
//! - An entry with neither `JDEF` nor `JSET` is a *limit*: a job it does not
//!   match is rejected, with a message naming the entry and the template
//!   (`JMAX` "job exceeds template ...", `JMIN` "job does not meet ...").
//! - `JSTAT=NAME[,NAME]` names statistics templates: a job the entry
//!   matches has its usage reported into each (`showstats -j`), whatever
//!   else the entry does; an entry with a `JSTAT` is not a limit (its
//!   `JMIN`/`JMAX` only choose the jobs counted).
//! - A template with `SELECT=TRUE` may be requested at submission (`msub -l
//!   template=NAME`); its attributes are the job's defaults (the Windows HPC
//!   template: defaults for what the user did not specify), applied before
//!   any `JOBMATCHCFG`. A `JOBMATCHCFG` entry named like a selectable
//!   template applies only to the jobs that selected it — the template's
//!   constraints (`JOBMATCHCFG[SmallJob] JMAX=SmallJob.max`); every other
//!   entry applies to every job.

use std::collections::BTreeMap;

use crate::job::JobFlag;
use crate::timespec::format_duration;
use crate::Secs;

/// One `JOBCFG[name]` template.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct JobTemplate {
    /// `SELECT=TRUE`: users may request it (`msub -l template=NAME`).
    pub select: bool,
    /// `DESCRIPTION=`.
    pub description: Option<String>,
    /// `ACCOUNT=`, `CLASS=`, `QOS=`, `USER=`, `GROUP=`, `PARTITION=`: lists
    /// for matching; the first value is what `JDEF`/`JSET` set.
    pub accounts: Vec<String>,
    pub classes: Vec<String>,
    pub qos: Vec<String>,
    pub users: Vec<String>,
    pub groups: Vec<String>,
    pub partitions: Vec<String>,
    /// `FLAGS=`.
    pub flags: Vec<JobFlag>,
    /// `FEATURES=` (`RFEATURES=`): required node features.
    pub features: Vec<String>,
    /// `WALLTIME=` (`WCLIMIT=`).
    pub walltime: Option<Secs>,
    /// `PROCS=` (`TASKS=`): total processors.
    pub procs: Option<u32>,
    /// `NODES=`.
    pub nodes: Option<u32>,
    /// `MEM=`: total memory in MB.
    pub mem_mb: Option<u64>,
}

/// One `JOBMATCHCFG[name]` rule.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TemplateMatch {
    pub name: String,
    pub jmin: Option<String>,
    pub jmax: Option<String>,
    pub jdef: Option<String>,
    pub jset: Option<String>,
    /// `FLAGS=BREAK`.
    pub brk: bool,
    /// `JSTAT=`: statistics templates the jobs this rule matches are
    /// counted in (`showstats -j`); they need no `JOBCFG`.
    pub jstat: Vec<String>,
}

impl TemplateMatch {
    /// No `JDEF`/`JSET`/`JSTAT`: the entry only constrains (rejects what it
    /// does not match). With a `JSTAT`, `JMIN`/`JMAX` choose the jobs counted.
    pub fn is_limit(&self) -> bool {
        self.jdef.is_none() && self.jset.is_none() && self.jstat.is_empty()
    }
}

/// Every template and rule of the configuration.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Templates {
    pub templates: BTreeMap<String, JobTemplate>,
    /// In configuration order.
    pub matches: Vec<TemplateMatch>,
}

impl Templates {
    pub fn is_empty(&self) -> bool {
        self.templates.is_empty() && self.matches.is_empty()
    }

    /// The rule named `name`, created at the end of the list if new.
    pub fn match_mut(&mut self, name: &str) -> &mut TemplateMatch {
        if let Some(i) = self.matches.iter().position(|m| m.name == name) {
            return &mut self.matches[i];
        }
        self.matches.push(TemplateMatch {
            name: name.to_string(),
            ..TemplateMatch::default()
        });
        self.matches.last_mut().expect("just pushed")
    }

    /// The statistics templates (`JSTAT=`) of every rule, sorted, once each.
    pub fn stat_templates(&self) -> Vec<String> {
        let mut v: Vec<String> = self
            .matches
            .iter()
            .flat_map(|m| m.jstat.iter().cloned())
            .collect();
        v.sort();
        v.dedup();
        v
    }

    /// Template names the rules refer to that no `JOBCFG` defines:
    /// `(rule, role, template)`.
    pub fn undefined_references(&self) -> Vec<(String, &'static str, String)> {
        let mut out = Vec::new();
        for m in &self.matches {
            for (role, t) in [
                ("JMIN", &m.jmin),
                ("JMAX", &m.jmax),
                ("JDEF", &m.jdef),
                ("JSET", &m.jset),
            ] {
                if let Some(t) = t.as_ref().filter(|t| !self.templates.contains_key(*t)) {
                    out.push((m.name.clone(), role, t.clone()));
                }
            }
        }
        out
    }
}

/// What templates look at and change in a submission.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Subject {
    pub user: String,
    pub group: String,
    pub account: Option<String>,
    pub class: Option<String>,
    pub qos: Option<String>,
    pub partition: Option<String>,
    pub flags: Vec<JobFlag>,
    pub features: Vec<String>,
    /// `None`: no wall-clock limit given (unlimited).
    pub walltime: Option<Secs>,
    /// Total processors; `None`: none requested (one).
    pub procs: Option<u32>,
    /// `None`: no node count requested (one).
    pub nodes: Option<u32>,
    /// Total memory in MB; `None`: none requested.
    pub mem_mb: Option<u64>,
}

/// The result of [`apply`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Applied {
    /// What applied, in order: the selected template, then the name of each
    /// rule that changed the job (`JDEF`/`JSET`) or constrained it (a limit
    /// the job passed).
    pub names: Vec<String>,
    /// Which template set each attribute (`"WALLTIME"` → `"default.def"`).
    pub origin: BTreeMap<&'static str, String>,
    /// The statistics templates (`JSTAT=`) of the rules the job matched,
    /// in order, once each: its usage is reported into them.
    pub stats: Vec<String>,
}

/// Applies the templates to a submission: the selected template's defaults,
/// then every `JOBMATCHCFG` rule in order. `Err` is the rejection reason.
pub fn apply(t: &Templates, s: &mut Subject, selected: Option<&str>) -> Result<Applied, String> {
    let mut applied = Applied::default();
    if let Some(name) = selected {
        let tpl = t
            .templates
            .get(name)
            .ok_or_else(|| format!("job template '{name}' does not exist"))?;
        if !tpl.select {
            return Err(format!(
                "job template '{name}' cannot be requested (it does not have SELECT=TRUE)"
            ));
        }
        set(tpl, name, s, false, &mut applied.origin);
        applied.names.push(name.to_string());
    }
    for m in &t.matches {
        let scoped = t.templates.get(&m.name).is_some_and(|x| x.select);
        if scoped && selected != Some(m.name.as_str()) {
            continue;
        }
        let verdict = judge(t, m, s);
        match verdict {
            Ok(()) => {}
            Err(why) if m.is_limit() => return Err(why),
            Err(_) => continue,
        }
        for st in &m.jstat {
            if !applied.stats.contains(st) {
                applied.stats.push(st.clone());
            }
        }
        let before = s.clone();
        for (name, force) in [(&m.jdef, false), (&m.jset, true)] {
            if let Some(tpl) = name.as_ref().and_then(|n| t.templates.get(n)) {
                set(
                    tpl,
                    name.as_deref().unwrap_or(""),
                    s,
                    force,
                    &mut applied.origin,
                );
            }
        }
        // A rule applied when it changed the job or constrained it (a rule
        // that collects statistics constrains nothing).
        let applies = m.is_limit() || *s != before;
        if applies && !applied.names.contains(&m.name) {
            applied.names.push(m.name.clone());
        }
        if m.brk {
            break;
        }
    }
    Ok(applied)
}

/// Whether the rule matches; the reason it does not.
fn judge(t: &Templates, m: &TemplateMatch, s: &Subject) -> Result<(), String> {
    if let Some(name) = &m.jmin {
        if let Some(tpl) = t.templates.get(name) {
            if let Some(why) = short_of(tpl, s) {
                return Err(format!(
                    "job does not meet template '{name}' (JOBMATCHCFG[{}] JMIN): {why}",
                    m.name
                ));
            }
        }
    }
    if let Some(name) = &m.jmax {
        if let Some(tpl) = t.templates.get(name) {
            if let Some(why) = beyond(tpl, s) {
                return Err(format!(
                    "job exceeds template '{name}' (JOBMATCHCFG[{}] JMAX): {why}",
                    m.name
                ));
            }
        }
    }
    Ok(())
}

fn walltime_text(w: Option<Secs>) -> String {
    w.map_or_else(|| "no wall-clock limit".to_string(), format_duration)
}

/// The credentials a template lists and the job's: `(what, list, job's)`.
fn creds<'a>(
    tpl: &'a JobTemplate,
    s: &'a Subject,
) -> [(&'static str, &'a [String], Option<&'a String>); 6] {
    [
        ("account", &tpl.accounts, s.account.as_ref()),
        ("class", &tpl.classes, s.class.as_ref()),
        ("QOS", &tpl.qos, s.qos.as_ref()),
        ("user", &tpl.users, Some(&s.user)),
        ("group", &tpl.groups, Some(&s.group)),
        ("partition", &tpl.partitions, s.partition.as_ref()),
    ]
}

/// The template's sizes and the job's: `(what, template's, job's)`.
fn counts(tpl: &JobTemplate, s: &Subject) -> [(&'static str, Option<u64>, u64); 3] {
    [
        (
            "procs",
            tpl.procs.map(u64::from),
            u64::from(s.procs.unwrap_or(1)),
        ),
        (
            "nodes",
            tpl.nodes.map(u64::from),
            u64::from(s.nodes.unwrap_or(1)),
        ),
        ("memory (MB)", tpl.mem_mb, s.mem_mb.unwrap_or(0)),
    ]
}

/// Why the job does not meet the template as a minimum (`None`: it does).
fn short_of(tpl: &JobTemplate, s: &Subject) -> Option<String> {
    for (what, list, have) in creds(tpl, s) {
        if !list.is_empty() && !have.is_some_and(|h| list.contains(h)) {
            return Some(format!(
                "{what} {} is not {}",
                have.map_or("(none)", |h| h.as_str()),
                list.join(" or ")
            ));
        }
    }
    if let Some(f) = tpl.flags.iter().find(|f| !s.flags.contains(f)) {
        return Some(format!("flag {f} is not set"));
    }
    if let Some(f) = tpl.features.iter().find(|f| !s.features.contains(f)) {
        return Some(format!("feature {f} is not requested"));
    }
    if let (Some(min), Some(w)) = (tpl.walltime, s.walltime) {
        if w < min {
            return Some(format!(
                "walltime {} < {}",
                format_duration(w),
                format_duration(min)
            ));
        }
    }
    for (what, min, have) in counts(tpl, s) {
        if let Some(min) = min.filter(|m| have < *m) {
            return Some(format!("{what} {have} < {min}"));
        }
    }
    None
}

/// Why the job exceeds the template as a maximum (`None`: it does not).
fn beyond(tpl: &JobTemplate, s: &Subject) -> Option<String> {
    for (what, list, have) in creds(tpl, s) {
        if let Some(h) = have.filter(|h| list.contains(h)) {
            return Some(format!("{what} {h} is excluded"));
        }
    }
    if let Some(f) = tpl.flags.iter().find(|f| s.flags.contains(f)) {
        return Some(format!("flag {f} is excluded"));
    }
    if let Some(f) = tpl.features.iter().find(|f| s.features.contains(f)) {
        return Some(format!("feature {f} is excluded"));
    }
    if let Some(max) = tpl.walltime {
        if s.walltime.is_none_or(|w| w > max) {
            return Some(format!(
                "walltime {} > {}",
                walltime_text(s.walltime),
                format_duration(max)
            ));
        }
    }
    for (what, max, have) in counts(tpl, s) {
        if let Some(max) = max.filter(|m| have > *m) {
            return Some(format!("{what} {have} > {max}"));
        }
    }
    None
}

/// Writes the template's attributes into the subject: all of them
/// (`force`), or only where the subject has none.
fn set(
    tpl: &JobTemplate,
    name: &str,
    s: &mut Subject,
    force: bool,
    origin: &mut BTreeMap<&'static str, String>,
) {
    let mut note = |attr: &'static str| {
        origin.insert(attr, name.to_string());
    };
    for (attr, list, field) in [
        ("ACCOUNT", &tpl.accounts, &mut s.account),
        ("CLASS", &tpl.classes, &mut s.class),
        ("QOS", &tpl.qos, &mut s.qos),
        ("PARTITION", &tpl.partitions, &mut s.partition),
    ] {
        if let Some(v) = list.first() {
            if force || field.is_none() {
                *field = Some(v.clone());
                note(attr);
            }
        }
    }
    for f in &tpl.flags {
        if !s.flags.contains(f) {
            s.flags.push(*f);
            note("FLAGS");
        }
    }
    if !tpl.features.is_empty() && (force || s.features.is_empty()) {
        for f in &tpl.features {
            if !s.features.contains(f) {
                s.features.push(f.clone());
            }
        }
        note("FEATURES");
    }
    if let Some(w) = tpl.walltime {
        if force || s.walltime.is_none() {
            s.walltime = Some(w);
            note("WALLTIME");
        }
    }
    if let Some(p) = tpl.procs {
        if force || s.procs.is_none() {
            s.procs = Some(p);
            note("PROCS");
        }
    }
    if let Some(n) = tpl.nodes {
        if force || s.nodes.is_none() {
            s.nodes = Some(n);
            note("NODES");
        }
    }
    if let Some(m) = tpl.mem_mb {
        if force || s.mem_mb.is_none() {
            s.mem_mb = Some(m);
            note("MEM");
        }
    }
}

#[cfg(test)]
mod tests;
