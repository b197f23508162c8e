//! The parameter table: every `moab.cfg` parameter declared once — name,
//! aliases, value type, default, indexing, one-line doc, the feature that uses
//! it, and the setter that stores the parsed value in the [`Config`].
//!
//! The table drives parsing ([`crate::parse()`]), `mschedctl -l config`
//! ([`Config::effective`]) and the generated reference
//! ([`crate::reference_markdown`]). Scalar parameters live in
//! `scalars.rs`, indexed objects (`RMCFG[x] ATTR=VALUE ...`) in `objects.rs`,
//! `creds.rs` and `rm.rs`.

mod creds;
mod hooks;
mod objects;
mod rm;
mod scalars;
mod templates;

use crate::config::Config;
use crate::value::{Value, ValueType};

/// One parameter.
#[derive(Debug)]
pub struct ParamDef {
    /// Canonical upper-case name.
    pub name: &'static str,
    /// Other accepted names (deprecated spellings).
    pub aliases: &'static [&'static str],
    pub shape: Shape,
    /// Default as `moab.cfg` text (`None` = unset).
    pub default: Option<&'static str>,
    /// One-line description.
    pub doc: &'static str,
    /// The feature that uses it.
    pub used_by: &'static str,
}

/// Where a value goes: the parameter (and its index) or attribute being set.
#[derive(Debug, Clone, Copy)]
pub struct Site<'a> {
    /// Canonical parameter or attribute name.
    pub name: &'static str,
    /// The index (`""` if none; `"0"`.. for buckets; the object name).
    pub index: &'a str,
}

/// Stores a parsed value in the configuration; an `Err` is the "why" of an
/// invalid-value error.
pub type Setter = fn(&mut Config, Site<'_>, &Value) -> Result<(), String>;

/// The shape of a parameter.
#[derive(Debug)]
pub enum Shape {
    /// `NAME VALUE`, `NAME[index] VALUE`.
    Scalar {
        ty: ValueType,
        index: IndexKind,
        set: Setter,
    },
    /// `NAME[index] ATTR=VALUE ATTR=VALUE ...`.
    Object {
        index: ObjectIndex,
        attrs: &'static [AttrDef],
    },
}

/// The index a scalar parameter accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IndexKind {
    /// No index.
    None,
    /// Optional partition (`PARAM[<partition>] value`); Arches has one policy
    /// for all partitions, so only the default partition (`0`, `DEFAULT`,
    /// `ALL`) may be given.
    Partition,
    /// Optional numeric bucket `0..=15` (default 0).
    Bucket,
}

/// The index an object parameter requires.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ObjectIndex {
    /// A name (`RMCFG[torque]`).
    Name,
    /// An optional name (`SCHEDCFG[Moab]`, or `SCHEDCFG` alone for the current one).
    OptionalName,
    /// An administrator level 1–5.
    Level,
}

/// One attribute of an object parameter.
#[derive(Debug)]
pub struct AttrDef {
    pub name: &'static str,
    pub aliases: &'static [&'static str],
    pub ty: ValueType,
    /// Default as text (`None` = unset).
    pub default: Option<&'static str>,
    pub doc: &'static str,
    pub set: Setter,
}

impl ParamDef {
    /// Whether `name` (any case) is this parameter or one of its aliases.
    pub fn matches(&self, name: &str) -> bool {
        self.name.eq_ignore_ascii_case(name)
            || self.aliases.iter().any(|a| a.eq_ignore_ascii_case(name))
    }

    /// The attribute named `name` (any case, aliases allowed) of an object.
    pub fn attr(&self, name: &str) -> Option<&'static AttrDef> {
        match &self.shape {
            Shape::Object { attrs, .. } => attrs.iter().find(|a| {
                a.name.eq_ignore_ascii_case(name)
                    || a.aliases.iter().any(|x| x.eq_ignore_ascii_case(name))
            }),
            Shape::Scalar { .. } => None,
        }
    }
}

/// Every parameter, scalars first, in reference order.
pub fn all() -> impl Iterator<Item = &'static ParamDef> {
    scalars::SCALARS
        .iter()
        .chain(hooks::HOOKS.iter())
        .chain(objects::OBJECTS.iter())
}

/// The parameter named `name` (any case, aliases allowed).
pub fn lookup(name: &str) -> Option<&'static ParamDef> {
    all().find(|p| p.matches(name))
}

/// The known name closest to `name`, if it is close enough to be a likely typo.
pub fn suggest<'a>(name: &str, candidates: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    let up = name.to_ascii_uppercase();
    candidates
        .map(|c| (strsim::normalized_damerau_levenshtein(&up, c), c))
        .filter(|(score, _)| *score >= 0.75)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, c)| c)
}

/// The effective value of every parameter (see [`Config::effective`]).
pub(crate) fn effective(config: &Config) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for p in all() {
        match &p.shape {
            Shape::Scalar {
                index: IndexKind::Bucket,
                ..
            } if !config.record.buckets.is_empty() => {
                // Every configured bucket, with this parameter's value or default.
                for i in config.record.buckets.keys() {
                    let key = format!("{}[{i}]", p.name);
                    let value = match config.record.scalars.get(&key) {
                        Some((v, _)) => quote(v),
                        None => p.default.unwrap_or("").to_string(),
                    };
                    out.push((key, value));
                }
            }
            Shape::Scalar { .. } => {
                let mut any = false;
                for (key, (value, _)) in &config.record.scalars {
                    if key == p.name || key.strip_prefix(p.name).is_some_and(|r| r.starts_with('['))
                    {
                        out.push((key.clone(), quote(value)));
                        any = true;
                    }
                }
                if !any {
                    out.push((p.name.to_string(), p.default.unwrap_or("").to_string()));
                }
            }
            Shape::Object {
                index: ObjectIndex::Level,
                ..
            } => {
                for level in 0..5 {
                    let (users, groups) = (&config.admins[level], &config.admin_groups[level]);
                    if users.is_empty() && groups.is_empty() {
                        continue;
                    }
                    let mut parts = Vec::new();
                    if !users.is_empty() {
                        parts.push(format!("USERS={}", quote(&users.join(","))));
                    }
                    if !groups.is_empty() {
                        parts.push(format!("GROUPS={}", quote(&groups.join(","))));
                    }
                    out.push((format!("{}[{}]", p.name, level + 1), parts.join(" ")));
                }
            }
            Shape::Object {
                index: ObjectIndex::OptionalName,
                ..
            } => {
                // One scheduler: show the merged result under its final name.
                let sched = &config.sched;
                let mut parts = Vec::new();
                if let Some(server) = &sched.server {
                    parts.push(format!("SERVER={}", quote(server)));
                }
                parts.push(format!("MODE={}", sched.mode));
                if !sched.flags.is_empty() {
                    parts.push(format!("FLAGS={}", quote(&sched.flags.join(","))));
                }
                if let Some(id) = sched.max_job_id {
                    parts.push(format!("MAXJOBID={id}"));
                }
                if let Some(id) = sched.min_job_id {
                    parts.push(format!("MINJOBID={id}"));
                }
                out.push((format!("{}[{}]", p.name, sched.name), parts.join(" ")));
            }
            Shape::Object { .. } => {
                let prefix = format!("{}[", p.name);
                for (key, attrs) in &config.record.objects {
                    if key.starts_with(&prefix) {
                        let text: Vec<String> = attrs
                            .iter()
                            .map(|(a, v, _)| format!("{a}={}", quote(v)))
                            .collect();
                        out.push((key.clone(), text.join(" ")));
                    }
                }
            }
        }
    }
    out
}

/// Any whole number.
pub(crate) const INT: ValueType = ValueType::Integer {
    min: i64::MIN,
    max: i64::MAX,
};
/// A count (fits `u32`).
pub(crate) const COUNT: ValueType = ValueType::Integer {
    min: 0,
    max: u32::MAX as i64,
};
/// A positive count (fits `u32`).
pub(crate) const POSITIVE: ValueType = ValueType::Integer {
    min: 1,
    max: u32::MAX as i64,
};

/// An attribute without aliases.
pub(crate) const fn attr(
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

/// Quotes a value containing spaces, `#`, quotes or `\\` so the line parses back.
fn quote(v: &str) -> String {
    if !v.contains(|c: char| c.is_whitespace() || "#\"'\\".contains(c)) {
        v.to_string()
    } else if v.contains('"') {
        format!("'{v}'")
    } else {
        format!("\"{v}\"")
    }
}

#[cfg(test)]
mod tests;
