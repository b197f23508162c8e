//! The `moab.cfg` reader: lines → parameters → typed [`Config`] plus
//! [`Diagnostic`]s.
//!
//! Syntax: `PARAM value` or `PARAM[index] ATTR=VALUE ATTR=VALUE ...`, one per
//! line; names and attributes are case-insensitive; `#` starts a comment (at
//! the start of a line or after whitespace, outside quotes); double or single
//! quotes group text with spaces; a trailing `\` continues the line.
//!
//! Diagnostics: an unknown parameter or attribute is a WARNING (with the
//! closest known name, if any); an invalid value of a known one is an ERROR
//! `file:line: PARAM: why` and the setting is ignored; a parameter or
//! attribute set twice is a WARNING and the last value wins. Reading never
//! panics, whatever the input.

use std::fmt;

use crate::config::Config;
use crate::params::{self, IndexKind, ObjectIndex, ParamDef, Shape, Site};

/// How bad a diagnostic is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    /// The line was (partly) ignored but the configuration is usable.
    Warning,
    /// An invalid value: the configuration is not what the administrator meant.
    Error,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Warning => "WARNING",
            Severity::Error => "ERROR",
        }
    }
}

/// One finding about one line. `Display`: `file:line: ERROR: message`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    pub file: String,
    /// 1-based line number (0 = the file as a whole).
    pub line: usize,
    pub severity: Severity,
    pub message: String,
}

impl Diagnostic {
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}: {}: {}",
            self.file,
            self.line,
            self.severity.as_str(),
            self.message
        )
    }
}

impl std::error::Error for Diagnostic {}

/// The result of reading a file: the configuration and what was found.
#[derive(Debug, Clone)]
pub struct Parsed {
    pub config: Config,
    pub diagnostics: Vec<Diagnostic>,
}

impl Parsed {
    /// Whether any diagnostic is an error (the daemon refuses to start).
    pub fn has_errors(&self) -> bool {
        self.diagnostics.iter().any(Diagnostic::is_error)
    }

    /// The errors only.
    pub fn errors(&self) -> impl Iterator<Item = &Diagnostic> {
        self.diagnostics.iter().filter(|d| d.is_error())
    }

    /// The configuration and its warnings, or every error if there is one
    /// (what the daemon does at start: refuse an invalid file, log warnings).
    pub fn into_result(self) -> Result<(Config, Vec<Diagnostic>), Vec<Diagnostic>> {
        if self.has_errors() {
            Err(self
                .diagnostics
                .into_iter()
                .filter(Diagnostic::is_error)
                .collect())
        } else {
            Ok((self.config, self.diagnostics))
        }
    }
}

/// Reads `moab.cfg` text; `file` names it in diagnostics.
pub fn parse(text: &str, file: &str) -> Parsed {
    let mut config = Config::default();
    let mut diagnostics = apply_text(&mut config, text, file, Origin::File);
    crate::checks::cross_check(&config, file, &mut diagnostics);
    Parsed {
        config,
        diagnostics,
    }
}

/// A logical line: its first physical line number and its text without
/// comments or continuation backslashes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    pub number: usize,
    pub text: String,
}

/// Splits text into logical lines (comments removed, continuations joined,
/// blank lines dropped).
pub fn logical_lines(text: &str) -> Vec<Line> {
    let mut out = Vec::new();
    let mut pending: Option<Line> = None;
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    for (i, raw) in text.lines().enumerate() {
        let stripped = strip_comment(raw);
        let trimmed = stripped.trim_end();
        let (body, continues) = match trimmed.strip_suffix('\\') {
            Some(b) => (b, true),
            None => (trimmed, false),
        };
        let line = match pending.take() {
            Some(mut l) => {
                l.text.push(' ');
                l.text.push_str(body.trim());
                l
            }
            None => Line {
                number: i + 1,
                text: body.trim().to_string(),
            },
        };
        if continues {
            pending = Some(line);
        } else if !line.text.is_empty() {
            out.push(line);
        }
    }
    if let Some(l) = pending.filter(|l| !l.text.trim().is_empty()) {
        out.push(l);
    }
    out
}

/// Where lines come from: a file (settings remember their line, and setting
/// one again warns) or a runtime change (`mschedctl -m config`), which
/// replaces what the file said without a warning.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Origin {
    File,
    Runtime,
}

/// Applies every line of `text` to `config`, then rebuilds derived fields.
pub(crate) fn apply_text(
    config: &mut Config,
    text: &str,
    file: &str,
    origin: Origin,
) -> Vec<Diagnostic> {
    let mut diags = Vec::new();
    for line in logical_lines(text) {
        let mut ctx = Ctx {
            file,
            line: line.number,
            origin,
            diags: &mut diags,
        };
        apply_one(config, &line.text, &mut ctx);
    }
    config.rebuild();
    diags
}

/// Where diagnostics go.
struct Ctx<'a> {
    file: &'a str,
    line: usize,
    origin: Origin,
    diags: &'a mut Vec<Diagnostic>,
}

impl Ctx<'_> {
    /// The line a setting is recorded with (0 for runtime changes).
    fn recorded_line(&self) -> usize {
        match self.origin {
            Origin::File => self.line,
            Origin::Runtime => 0,
        }
    }
    fn push(&mut self, severity: Severity, message: String) {
        self.diags.push(Diagnostic {
            file: self.file.to_string(),
            line: self.line,
            severity,
            message,
        });
    }
    fn error(&mut self, message: String) {
        self.push(Severity::Error, message);
    }
    fn warn(&mut self, message: String) {
        self.push(Severity::Warning, message);
    }
}

fn apply_one(config: &mut Config, text: &str, ctx: &mut Ctx<'_>) {
    let tokens = match tokenize(text) {
        Ok(t) => t,
        Err(why) => return ctx.error(why),
    };
    let Some((head, rest)) = tokens.split_first() else {
        return;
    };
    let (name, index) = match split_head(head) {
        Ok(h) => h,
        Err(why) => return ctx.error(format!("{head}: {why}")),
    };
    let Some(def) = params::lookup(name) else {
        let hint = params::suggest(name, params::all().map(|p| p.name))
            .map(|s| format!(" (did you mean {s}?)"))
            .unwrap_or_default();
        return ctx.warn(format!("unknown parameter '{name}'{hint}; line ignored"));
    };
    match &def.shape {
        Shape::Scalar {
            ty,
            index: kind,
            set,
        } => {
            let shown = display_name(def.name, index);
            let Some(idx) = scalar_index(def, *kind, index, ctx) else {
                return;
            };
            let raw = rest.join(" ");
            let value = match ty.read(&raw) {
                Ok(reading) => {
                    for note in reading.notes {
                        ctx.warn(format!("{shown}: {note}"));
                    }
                    match reading.value {
                        Some(v) => v,
                        None => return,
                    }
                }
                Err(why) => return ctx.error(format!("{shown}: {why}")),
            };
            let site = Site {
                name: def.name,
                index: &idx,
            };
            if let Err(why) = set(config, site, &value) {
                return ctx.error(format!("{shown}: {why}"));
            }
            // Moab priority weights Arches has no factor for: accepted (a
            // site's file loads as it is) but said, never silently dropped.
            if config.extra_weights.get(def.name).is_some_and(|w| *w != 0) {
                ctx.warn(format!(
                    "{shown}: accepted but not applied (Arches computes no such priority factor; see mdiag -C)"
                ));
            }
            let key = display_name(def.name, (!idx.is_empty()).then_some(idx.as_str()));
            let old = config
                .record
                .scalars
                .insert(key.clone(), (value.to_string(), ctx.recorded_line()));
            let recorded = ctx.recorded_line();
            if let Some((_, line)) = old.filter(|(_, l)| *l > 0 && recorded > 0 && *l != recorded) {
                ctx.warn(format!(
                    "{key} was already set on line {line}; the last value wins"
                ));
            }
        }
        Shape::Object { index: kind, .. } => {
            let Some(idx) = object_index(config, def, *kind, index, ctx) else {
                return;
            };
            let key = format!("{}[{idx}]", def.name);
            if rest.is_empty() {
                return ctx.error(format!("{key}: expected ATTR=VALUE after {key}"));
            }
            for token in rest {
                apply_attr(config, def, &key, &idx, token, ctx);
            }
        }
    }
}

fn apply_attr(
    config: &mut Config,
    def: &'static ParamDef,
    key: &str,
    idx: &str,
    token: &str,
    ctx: &mut Ctx<'_>,
) {
    let Some((attr_name, raw)) = token.split_once('=') else {
        return ctx.error(format!("{key}: expected ATTR=VALUE, found '{token}'"));
    };
    let Some(attr) = def.attr(attr_name) else {
        let names: Vec<&str> = match &def.shape {
            Shape::Object { attrs, .. } => attrs.iter().map(|a| a.name).collect(),
            Shape::Scalar { .. } => Vec::new(),
        };
        let hint = params::suggest(attr_name, names.into_iter())
            .map(|s| format!(" (did you mean {s}?)"))
            .unwrap_or_default();
        return ctx.warn(format!(
            "{key}: unknown attribute '{attr_name}'{hint}; attribute ignored"
        ));
    };
    let value = match attr.ty.read(raw) {
        Ok(reading) => {
            for note in reading.notes {
                ctx.warn(format!("{key} {}: {note}", attr.name));
            }
            match reading.value {
                Some(v) => v,
                None => return,
            }
        }
        Err(why) => return ctx.error(format!("{key} {}: {why}", attr.name)),
    };
    let site = Site {
        name: attr.name,
        index: idx,
    };
    if let Err(why) = (attr.set)(config, site, &value) {
        return ctx.error(format!("{key} {}: {why}", attr.name));
    }
    let entry = config.record.objects.entry(key.to_string()).or_default();
    let text = value.to_string();
    match entry.iter_mut().find(|(a, _, _)| a == attr.name) {
        Some(slot) => {
            let recorded = ctx.recorded_line();
            if slot.2 > 0 && recorded > 0 && slot.2 != recorded {
                ctx.warn(format!(
                    "{key} {} was already set on line {}; the last value wins",
                    attr.name, slot.2
                ));
            }
            slot.1 = text;
            slot.2 = recorded;
        }
        None => entry.push((attr.name.to_string(), text, ctx.recorded_line())),
    }
}

/// `NAME` or `NAME[index]`.
fn display_name(name: &str, index: Option<&str>) -> String {
    match index {
        Some(i) => format!("{name}[{i}]"),
        None => name.to_string(),
    }
}

/// The normalised index of a scalar parameter (`""` = global).
fn scalar_index(
    def: &ParamDef,
    kind: IndexKind,
    index: Option<&str>,
    ctx: &mut Ctx<'_>,
) -> Option<String> {
    match (kind, index) {
        (IndexKind::Bucket, None) => Some("0".to_string()),
        (_, None) => Some(String::new()),
        (IndexKind::None, Some(i)) => {
            ctx.error(format!("{}[{i}]: {} takes no index", def.name, def.name));
            None
        }
        (IndexKind::Partition, Some(i)) => {
            if ["0", "DEFAULT", "ALL"]
                .iter()
                .any(|d| d.eq_ignore_ascii_case(i))
            {
                Some(String::new())
            } else {
                ctx.warn(format!(
                    "{}[{i}]: per-partition values are not supported (Arches applies one policy to all partitions); line ignored",
                    def.name
                ));
                None
            }
        }
        (IndexKind::Bucket, Some(i)) => match i.parse::<u32>() {
            Ok(n) if n <= 15 => Some(n.to_string()),
            _ => {
                ctx.error(format!(
                    "{}[{i}]: invalid bucket index '{i}' (expected 0–15)",
                    def.name
                ));
                None
            }
        },
    }
}

/// The index of an object parameter; `None` after an error.
fn object_index(
    config: &Config,
    def: &ParamDef,
    kind: ObjectIndex,
    index: Option<&str>,
    ctx: &mut Ctx<'_>,
) -> Option<String> {
    match (kind, index) {
        (ObjectIndex::OptionalName, None) => Some(config.sched.name.clone()),
        (ObjectIndex::Level, Some(i)) => match i.parse::<u8>() {
            Ok(n @ 1..=5) => Some(n.to_string()),
            _ => {
                ctx.error(format!(
                    "{}[{i}]: invalid level '{i}' (expected 1–5)",
                    def.name
                ));
                None
            }
        },
        (_, Some(i)) => Some(i.to_string()),
        (_, None) => {
            ctx.error(format!(
                "{}: an index is required ({}[<name>] ATTR=VALUE ...)",
                def.name, def.name
            ));
            None
        }
    }
}

/// Splits `NAME[index]` into its parts.
fn split_head(head: &str) -> Result<(&str, Option<&str>), String> {
    let Some(open) = head.find('[') else {
        if head.contains(']') {
            return Err("unbalanced ']'".to_string());
        }
        return Ok((head, None));
    };
    let name = &head[..open];
    let rest = &head[open + 1..];
    let Some(index) = rest.strip_suffix(']') else {
        return Err("malformed index (expected NAME[INDEX])".to_string());
    };
    if name.is_empty() {
        return Err("missing parameter name before '['".to_string());
    }
    if index.trim().is_empty() || index.contains(['[', ']']) {
        return Err("malformed index (expected NAME[INDEX])".to_string());
    }
    if index.contains(|c: char| c.is_whitespace() || "#\"'=".contains(c)) {
        return Err(format!(
            "invalid index '{index}' (no spaces, '#', '=' or quotes)"
        ));
    }
    Ok((name, Some(index.trim())))
}

/// Removes a `#` comment (at the start or after whitespace, outside quotes).
fn strip_comment(line: &str) -> &str {
    let mut quote: Option<char> = None;
    let mut prev_space = true;
    for (i, c) in line.char_indices() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None if c == '"' || c == '\'' => quote = Some(c),
            None if c == '#' && prev_space => return &line[..i],
            None => {}
        }
        prev_space = c.is_whitespace();
    }
    line
}

/// Splits on whitespace outside quotes; quotes are removed.
fn tokenize(text: &str) -> Result<Vec<String>, String> {
    let mut tokens = Vec::new();
    let mut current = String::new();
    let mut in_token = false;
    let mut quote: Option<char> = None;
    for c in text.chars() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => current.push(c),
            None if c == '"' || c == '\'' => {
                quote = Some(c);
                in_token = true;
            }
            None if c.is_whitespace() => {
                if in_token {
                    tokens.push(std::mem::take(&mut current));
                    in_token = false;
                }
            }
            None => {
                current.push(c);
                in_token = true;
            }
        }
    }
    if quote.is_some() {
        return Err("unterminated quote".to_string());
    }
    if in_token {
        tokens.push(current);
    }
    Ok(tokens)
}

#[cfg(test)]
mod tests;
