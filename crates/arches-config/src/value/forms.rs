//! Parsers of the individual value forms (numbers, booleans, percentages,
//! limits, signals, sizes, rates, URLs). Each returns the "why" of an error.

use arches_core::policy::Limit;

pub(super) fn parse_integer(text: &str, min: i64, max: i64) -> Result<i64, String> {
    let v: i64 = text
        .parse()
        .map_err(|_| format!("invalid integer '{text}'"))?;
    if v < min || v > max {
        if max == i64::MAX {
            return Err(format!("value {v} out of range (must be at least {min})"));
        }
        return Err(format!("value {v} out of range ({min}–{max})"));
    }
    Ok(v)
}

pub(super) fn parse_float(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
        _ => Err(format!("invalid number '{text}' (expected a decimal ≥ 0)")),
    }
}

pub(super) fn parse_bool(text: &str) -> Result<bool, String> {
    match text.to_ascii_uppercase().as_str() {
        "TRUE" | "1" | "ON" | "YES" => Ok(true),
        "FALSE" | "0" | "OFF" | "NO" => Ok(false),
        _ => Err(format!(
            "invalid boolean '{text}' (expected TRUE, FALSE, 1, 0, ON, OFF, YES or NO)"
        )),
    }
}

pub(super) fn parse_percent(text: &str) -> Result<f64, String> {
    let err = || format!("invalid percentage '{text}' (expected 0–100%, or a fraction 0–1)");
    let (num, explicit) = match text.strip_suffix('%') {
        Some(n) => (n.trim(), true),
        None => (text, false),
    };
    let v: f64 = num.parse().map_err(|_| err())?;
    if !v.is_finite() || v < 0.0 {
        return Err(err());
    }
    let pct = if !explicit && v <= 1.0 && num.contains('.') {
        v * 100.0
    } else {
        v
    };
    if pct > 100.0 {
        return Err(err());
    }
    Ok(pct)
}

pub(super) fn parse_limit(
    text: &str,
    field: impl Fn(&str) -> Result<i64, String>,
) -> Result<Limit, String> {
    let (soft, hard) = match text.split_once(',') {
        Some((s, h)) => (field(s.trim())?, field(h.trim())?),
        None => {
            let v = field(text)?;
            (v, v)
        }
    };
    let (soft, hard) = (
        u64::try_from(soft).map_err(|_| format!("negative limit in '{text}'"))?,
        u64::try_from(hard).map_err(|_| format!("negative limit in '{text}'"))?,
    );
    if soft > hard {
        return Err(format!(
            "soft limit exceeds hard limit in '{text}' (expected SOFT,HARD with SOFT ≤ HARD)"
        ));
    }
    Ok(Limit { soft, hard })
}

/// Linux signal numbers by name (without the `SIG` prefix).
pub(super) const SIGNALS: [(&str, i32); 31] = [
    ("HUP", 1),
    ("INT", 2),
    ("QUIT", 3),
    ("ILL", 4),
    ("TRAP", 5),
    ("ABRT", 6),
    ("BUS", 7),
    ("FPE", 8),
    ("KILL", 9),
    ("USR1", 10),
    ("SEGV", 11),
    ("USR2", 12),
    ("PIPE", 13),
    ("ALRM", 14),
    ("TERM", 15),
    ("STKFLT", 16),
    ("CHLD", 17),
    ("CONT", 18),
    ("STOP", 19),
    ("TSTP", 20),
    ("TTIN", 21),
    ("TTOU", 22),
    ("URG", 23),
    ("XCPU", 24),
    ("XFSZ", 25),
    ("VTALRM", 26),
    ("PROF", 27),
    ("WINCH", 28),
    ("IO", 29),
    ("PWR", 30),
    ("SYS", 31),
];

pub(super) fn parse_signal(text: &str) -> Result<i32, String> {
    let err = || format!("invalid signal '{text}' (expected a number 1–64 or a name like SIGTSTP)");
    if let Ok(n) = text.parse::<i32>() {
        return if (1..=64).contains(&n) {
            Ok(n)
        } else {
            Err(err())
        };
    }
    let up = text.to_ascii_uppercase();
    let name = up.strip_prefix("SIG").unwrap_or(&up);
    SIGNALS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, v)| *v)
        .ok_or_else(err)
}

pub(super) const SIZE_UNITS: [(&str, u64); 8] = [
    ("KB", 0),
    ("K", 0),
    ("MB", 1),
    ("M", 1),
    ("GB", 1024),
    ("G", 1024),
    ("TB", 1024 * 1024),
    ("T", 1024 * 1024),
];

/// Parses `N[unit]` where a unit multiplies (0 marks "divide by 1024").
pub(super) fn parse_scaled(text: &str, units: &[(&str, u64)], what: &str) -> Result<u64, String> {
    let up = text.to_ascii_uppercase();
    let digits = up.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    let unit = &up[digits.len()..];
    let n: u64 = digits
        .trim()
        .parse()
        .map_err(|_| format!("invalid {what} '{text}'"))?;
    if unit.is_empty() {
        return Ok(n);
    }
    let (_, factor) = units
        .iter()
        .find(|(u, _)| *u == unit)
        .ok_or_else(|| format!("invalid {what} '{text}'"))?;
    if *factor == 0 {
        Ok(n.div_ceil(1024))
    } else {
        n.checked_mul(*factor)
            .ok_or_else(|| format!("invalid {what} '{text}' (too large)"))
    }
}

pub(super) fn parse_bandwidth(text: &str) -> Result<u64, String> {
    let up = text.to_ascii_uppercase();
    let t = up
        .strip_suffix("/S")
        .or_else(|| up.strip_suffix("PS"))
        .unwrap_or(&up);
    let digits = t.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    let unit = &t[digits.len()..];
    let err =
        || format!("invalid rate '{text}' (expected MB/s, or a number with KB, MB, GB or TB)");
    let n: u64 = digits.trim().parse().map_err(|_| err())?;
    let factor: u64 = match unit {
        "KB" | "K" => 1,
        "" | "MB" | "M" => 1024,
        "GB" | "G" => 1024 * 1024,
        "TB" | "T" => 1024 * 1024 * 1024,
        _ => return Err(err()),
    };
    n.checked_mul(factor).ok_or_else(err)
}

pub(super) fn parse_url(text: &str) -> Result<String, String> {
    match text.split_once("://") {
        Some((scheme, rest))
            if !scheme.is_empty()
                && !rest.is_empty()
                && scheme
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'+') =>
        {
            Ok(text.to_string())
        }
        _ => Err(format!(
            "invalid URL '{text}' (expected scheme://..., e.g. exec://$TOOLSDIR/script.pl)"
        )),
    }
}
