//! Value types of `moab.cfg` parameters and attributes, their parsers and
//! their normalised text form.
//!
//! Every parameter and attribute in the table ([`crate::params`]) declares one
//! [`ValueType`]; the parser turns the raw text into a [`Value`] with
//! [`ValueType::parse`] (one error wording for every parameter of a type) and
//! the table's setter stores the typed value in the [`crate::Config`].
//! `Value`'s `Display` is the normalised form shown by `mschedctl -l config`,
//! and it parses back to the same value.

use std::fmt;

use arches_core::policy::Limit;
use arches_core::timespec::parse_duration;
use arches_core::Secs;

use forms::{
    parse_bandwidth, parse_bool, parse_float, parse_integer, parse_limit, parse_percent,
    parse_scaled, parse_signal, parse_url, SIZE_UNITS,
};

/// The allowed words of an enumerated value: a list for the reference and a
/// canonicaliser (case-insensitive, aliases allowed) for parsing.
#[derive(Clone, Copy)]
pub struct Choices {
    /// Every canonical spelling, in declaration order.
    pub names: fn() -> Vec<&'static str>,
    /// The canonical spelling of `text`, if it is one of the choices.
    pub canonical: fn(&str) -> Option<&'static str>,
    /// Moab values Arches does not implement: accepted with a warning and
    /// ignored, so a site's existing `moab.cfg` still loads.
    pub unsupported: &'static [&'static str],
}

impl fmt::Debug for Choices {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&(self.names)().join("|"))
    }
}

/// Builds [`Choices`] from an enum of `arches_core` (anything with `ALL`,
/// `as_str` and `FromStr`).
macro_rules! core_choices {
    ($t:ty) => {
        core_choices!($t, [])
    };
    ($t:ty, [$($u:literal),* $(,)?]) => {
        $crate::value::Choices {
            names: || <$t>::ALL.iter().map(|v| v.as_str()).collect(),
            canonical: |s| s.parse::<$t>().ok().map(|v| v.as_str()),
            unsupported: &[$($u),*],
        }
    };
}

/// Builds [`Choices`] from a fixed list of upper-case words.
macro_rules! word_choices {
    ($($w:literal),+ $(,)?) => {
        $crate::value::Choices {
            names: || vec![$($w),+],
            canonical: |s| [$($w),+].into_iter().find(|w| w.eq_ignore_ascii_case(s.trim())),
            unsupported: &[],
        }
    };
}

/// The type of a parameter's or attribute's value.
#[derive(Debug, Clone, Copy)]
pub enum ValueType {
    /// A whole number within `min..=max`.
    Integer { min: i64, max: i64 },
    /// A non-negative decimal number.
    Float,
    /// `[[[DD:]HH:]MM:]SS` (plain integers are seconds).
    Duration,
    /// `TRUE/FALSE`, `1/0`, `ON/OFF`, `YES/NO`.
    Boolean,
    /// One word of a fixed set.
    Choice(Choices),
    /// Words of a fixed set separated by `,`, `:` or spaces (`[NONE]` = empty).
    ChoiceList(Choices),
    /// Free text (quotes may group spaces).
    Text,
    /// Names separated by `,`, `:` or spaces (`[NONE]` = empty).
    List,
    /// A percentage: `80%`, `80`, or a fraction with a decimal point (`0.8`).
    Percent,
    /// A count limit: `SOFT[,HARD]` (one value sets both).
    Limit,
    /// A wall-clock limit: `SOFT[,HARD]` durations.
    DurationLimit,
    /// A signal number (`23`) or name (`SIGTSTP`, `TSTP`).
    Signal,
    /// A memory size in MB; a suffix `K|M|G|T` (optionally with `B`) scales it.
    Size,
    /// A transfer rate; a plain number is MB/s, a suffix `KB|MB|GB|TB` (optionally
    /// `/s`) scales it. Stored in KB/s.
    Bandwidth,
    /// A URL `scheme://...` (`exec://`, `file://`, `http://`, ...).
    Url,
}

/// A parsed value. `Display` renders the normalised text.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Integer(i64),
    Float(f64),
    Duration(Secs),
    Boolean(bool),
    Choice(&'static str),
    Choices(Vec<&'static str>),
    Text(String),
    List(Vec<String>),
    /// Percent in `0.0..=100.0`.
    Percent(f64),
    Limit(Limit),
    /// Soft/hard wall-clock seconds.
    DurationLimit(Limit),
    Signal(i32),
    /// Megabytes.
    Size(u64),
    /// Kilobytes per second.
    Bandwidth(u64),
}

/// What [`ValueType::read`] found in a valid value.
#[derive(Debug, Clone, PartialEq)]
pub struct Reading {
    /// The value; `None` when the whole value is a Moab value Arches does not
    /// support (the setting is ignored).
    pub value: Option<Value>,
    /// Warnings (unsupported Moab words that were dropped).
    pub notes: Vec<String>,
}

impl ValueType {
    /// Reads `raw` (already stripped of comments and quotes), accepting Moab
    /// words Arches does not support with a note. The error is the "why" of
    /// `file:line: PARAM: why`.
    pub fn read(&self, raw: &str) -> Result<Reading, String> {
        let text = raw.trim();
        let unsupported = |w: &str| self.unsupported().iter().any(|u| u.eq_ignore_ascii_case(w));
        match *self {
            ValueType::Choice(c) if (c.canonical)(text).is_none() && unsupported(text) => {
                Ok(Reading {
                    value: None,
                    notes: vec![format!(
                        "'{text}' is a Moab value Arches does not support; the setting is ignored"
                    )],
                })
            }
            ValueType::ChoiceList(c) => {
                if text.is_empty() {
                    return Err("missing value".to_string());
                }
                let mut words = Vec::new();
                let mut notes = Vec::new();
                for w in split_list(text) {
                    if (c.canonical)(&w).is_none() && unsupported(&w) {
                        notes.push(format!(
                            "'{w}' is a Moab value Arches does not support; it is ignored"
                        ));
                    } else {
                        words.push(parse_choice(c, &w)?);
                    }
                }
                Ok(Reading {
                    value: Some(Value::Choices(words)),
                    notes,
                })
            }
            _ => self.parse(text).map(|v| Reading {
                value: Some(v),
                notes: Vec::new(),
            }),
        }
    }

    /// The Moab words this type accepts but ignores.
    pub fn unsupported(&self) -> &'static [&'static str] {
        match self {
            ValueType::Choice(c) | ValueType::ChoiceList(c) => c.unsupported,
            _ => &[],
        }
    }

    /// Parses `raw` strictly: unsupported Moab words are errors too.
    pub fn parse(&self, raw: &str) -> Result<Value, String> {
        let text = raw.trim();
        if text.is_empty() {
            return Err("missing value".to_string());
        }
        match *self {
            ValueType::Integer { min, max } => parse_integer(text, min, max).map(Value::Integer),
            ValueType::Float => parse_float(text).map(Value::Float),
            ValueType::Duration => bounded_duration(text).map(Value::Duration),
            ValueType::Boolean => parse_bool(text).map(Value::Boolean),
            ValueType::Choice(c) => parse_choice(c, text).map(Value::Choice),
            ValueType::ChoiceList(c) => split_list(text)
                .iter()
                .map(|w| parse_choice(c, w))
                .collect::<Result<Vec<_>, _>>()
                .map(Value::Choices),
            ValueType::Text => Ok(Value::Text(text.to_string())),
            ValueType::List => Ok(Value::List(split_list(text))),
            ValueType::Percent => parse_percent(text).map(Value::Percent),
            ValueType::Limit => {
                parse_limit(text, |f| parse_integer(f, 0, i64::MAX)).map(Value::Limit)
            }
            ValueType::DurationLimit => {
                parse_limit(text, bounded_duration).map(Value::DurationLimit)
            }
            ValueType::Signal => parse_signal(text).map(Value::Signal),
            ValueType::Size => parse_scaled(text, &SIZE_UNITS, "size")
                .map(Value::Size)
                .map_err(|e| format!("{e} (expected MB, or a number with K, M, G or T)")),
            ValueType::Bandwidth => parse_bandwidth(text).map(Value::Bandwidth),
            ValueType::Url => parse_url(text).map(Value::Text),
        }
    }

    /// How the type is written in the reference.
    pub fn describe(&self) -> String {
        match self {
            ValueType::Integer { min, max } if *min == i64::MIN => "integer".to_string(),
            ValueType::Integer { min, max } if *max >= i64::from(u32::MAX) => {
                format!("integer ≥ {min}")
            }
            ValueType::Integer { min, max } => format!("integer {min}–{max}"),
            ValueType::Float => "decimal ≥ 0".to_string(),
            ValueType::Duration => "duration `[[[DD:]HH:]MM:]SS`".to_string(),
            ValueType::Boolean => "boolean".to_string(),
            ValueType::Choice(c) => format!("one of `{}`", (c.names)().join("|")),
            ValueType::ChoiceList(c) => format!("list of `{}`", (c.names)().join("|")),
            ValueType::Text => "string".to_string(),
            ValueType::List => "list (`,` `:` or space separated)".to_string(),
            ValueType::Percent => "percent (`80%` or `0.8`)".to_string(),
            ValueType::Limit => "limit `SOFT[,HARD]`".to_string(),
            ValueType::DurationLimit => "wall-clock limit `SOFT[,HARD]` durations".to_string(),
            ValueType::Signal => "signal (number or name)".to_string(),
            ValueType::Size => "size (MB, or with K/M/G/T suffix)".to_string(),
            ValueType::Bandwidth => "rate (MB/s, or with KB/MB/GB/TB suffix)".to_string(),
            ValueType::Url => "URL `scheme://...`".to_string(),
        }
    }
}

impl Value {
    /// The integer of an `Integer` value.
    pub fn integer(&self) -> Result<i64, String> {
        match self {
            Value::Integer(i) => Ok(*i),
            other => Err(mismatch("an integer", other)),
        }
    }

    /// The integer as `u32` (the table's range guarantees it fits).
    pub fn u32(&self) -> Result<u32, String> {
        let i = self.integer()?;
        u32::try_from(i).map_err(|_| format!("value {i} out of range"))
    }

    pub fn float(&self) -> Result<f64, String> {
        match self {
            Value::Float(f) => Ok(*f),
            other => Err(mismatch("a number", other)),
        }
    }

    pub fn duration(&self) -> Result<Secs, String> {
        match self {
            Value::Duration(d) => Ok(*d),
            other => Err(mismatch("a duration", other)),
        }
    }

    pub fn boolean(&self) -> Result<bool, String> {
        match self {
            Value::Boolean(b) => Ok(*b),
            other => Err(mismatch("a boolean", other)),
        }
    }

    /// The canonical word of a `Choice`.
    pub fn choice(&self) -> Result<&'static str, String> {
        match self {
            Value::Choice(c) => Ok(c),
            other => Err(mismatch("a word", other)),
        }
    }

    /// Parses a `Choice` into a typed enum (any `FromStr` over its words).
    pub fn parse_choice<T: std::str::FromStr<Err = String>>(&self) -> Result<T, String> {
        self.choice()?.parse()
    }

    /// The words of a `ChoiceList`.
    pub fn choices(&self) -> Result<&[&'static str], String> {
        match self {
            Value::Choices(c) => Ok(c),
            other => Err(mismatch("a list of words", other)),
        }
    }

    pub fn text(&self) -> Result<&str, String> {
        match self {
            Value::Text(t) => Ok(t),
            other => Err(mismatch("text", other)),
        }
    }

    pub fn list(&self) -> Result<&[String], String> {
        match self {
            Value::List(l) => Ok(l),
            other => Err(mismatch("a list", other)),
        }
    }

    pub fn percent(&self) -> Result<f64, String> {
        match self {
            Value::Percent(p) => Ok(*p),
            other => Err(mismatch("a percentage", other)),
        }
    }

    /// The pair of a `Limit` or `DurationLimit`.
    pub fn limit(&self) -> Result<Limit, String> {
        match self {
            Value::Limit(l) | Value::DurationLimit(l) => Ok(*l),
            other => Err(mismatch("a limit", other)),
        }
    }

    pub fn signal(&self) -> Result<i32, String> {
        match self {
            Value::Signal(s) => Ok(*s),
            other => Err(mismatch("a signal", other)),
        }
    }

    pub fn size_mb(&self) -> Result<u64, String> {
        match self {
            Value::Size(s) => Ok(*s),
            other => Err(mismatch("a size", other)),
        }
    }

    pub fn bandwidth_kbps(&self) -> Result<u64, String> {
        match self {
            Value::Bandwidth(b) => Ok(*b),
            other => Err(mismatch("a rate", other)),
        }
    }
}

fn mismatch(expected: &str, got: &Value) -> String {
    format!("internal error: expected {expected}, got '{got}'")
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Integer(i) => write!(f, "{i}"),
            Value::Float(x) => write!(f, "{x}"),
            Value::Duration(d) => f.write_str(&format_duration(*d)),
            Value::Boolean(b) => f.write_str(if *b { "TRUE" } else { "FALSE" }),
            Value::Choice(c) => f.write_str(c),
            Value::Choices(c) if c.is_empty() => f.write_str("[NONE]"),
            Value::Choices(c) => f.write_str(&c.join(",")),
            Value::Text(t) => f.write_str(t),
            Value::List(l) if l.is_empty() => f.write_str("[NONE]"),
            Value::List(l) => f.write_str(&l.join(",")),
            Value::Percent(p) => write!(f, "{p}%"),
            Value::Limit(l) if l.soft == l.hard => write!(f, "{}", l.soft),
            Value::Limit(l) => write!(f, "{},{}", l.soft, l.hard),
            Value::DurationLimit(l) if l.soft == l.hard => {
                f.write_str(&format_duration(secs(l.soft)))
            }
            Value::DurationLimit(l) => write!(
                f,
                "{},{}",
                format_duration(secs(l.soft)),
                format_duration(secs(l.hard))
            ),
            Value::Signal(s) => write!(f, "{s}"),
            Value::Size(mb) => write!(f, "{mb}"),
            Value::Bandwidth(kb) if kb % 1024 == 0 => write!(f, "{}MB", kb / 1024),
            Value::Bandwidth(kb) => write!(f, "{kb}KB"),
        }
    }
}

fn secs(v: u64) -> Secs {
    Secs::try_from(v).unwrap_or(Secs::MAX)
}

/// Formats seconds as `HH:MM:SS`, or `D:HH:MM:SS` from one day on (the form
/// `mschedctl -l config` shows; it parses back with `parse_duration`).
pub fn format_duration(secs: Secs) -> String {
    let s = secs.max(0);
    let (d, h, m, sec) = (s / 86400, s % 86400 / 3600, s % 3600 / 60, s % 60);
    if d > 0 {
        format!("{d}:{h:02}:{m:02}:{sec:02}")
    } else {
        format!("{h:02}:{m:02}:{sec:02}")
    }
}

/// Splits a list on `,`, `:` and whitespace; `[NONE]` is the empty list.
pub fn split_list(text: &str) -> Vec<String> {
    let t = text.trim();
    if t.eq_ignore_ascii_case("[NONE]") {
        return Vec::new();
    }
    t.split(|c: char| c == ',' || c == ':' || c.is_whitespace())
        .filter(|w| !w.is_empty())
        .map(str::to_string)
        .collect()
}

fn parse_choice(c: Choices, text: &str) -> Result<&'static str, String> {
    (c.canonical)(text).ok_or_else(|| {
        format!(
            "invalid value '{text}' (expected one of {})",
            (c.names)().join(", ")
        )
    })
}

mod forms;

/// A signal number or name (`SIGWINCH`, `WINCH`, `28`).
pub(crate) fn signal_number(text: &str) -> Result<i32, String> {
    parse_signal(text)
}

/// A duration of at most [`arches_core::limits::MAX_WALLTIME`].
fn bounded_duration(text: &str) -> Result<Secs, String> {
    let secs = parse_duration(text).map_err(|e| e.to_string())?;
    if secs > arches_core::limits::MAX_WALLTIME {
        return Err(format!(
            "duration '{text}' too long ({secs} seconds, at most {})",
            arches_core::limits::MAX_WALLTIME
        ));
    }
    Ok(secs)
}

#[cfg(test)]
mod tests;
