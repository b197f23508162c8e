//! Moab time specifications: `[[[DD:]HH:]MM:]SS` durations (plain integers are
//! seconds) as used by `moab.cfg`, `msub -l walltime=` and the commands.

use crate::Secs;

/// Moab's `MULToTString`: a duration as the commands print it. `00:MM:SS`
/// below one hour, `H:MM:SS` below ten hours, `HH:MM:SS` below a day,
/// `D:HH:MM:SS` from one day, `NNNdays` from 100 days, `INFINITY` from 1000
/// days; negatives carry a `-` in front. (The CLI's renderers have the same
/// function; a test keeps the two equal.) Used for the times inside block
/// reasons ([`crate::BlockReason::message`]).
///
/// ```
/// use arches_core::timespec::format_duration;
/// assert_eq!(format_duration(3599), "00:59:59");
/// assert_eq!(format_duration(36_000), "10:00:00");
/// assert_eq!(format_duration(-301), "-00:05:01");
/// assert_eq!(format_duration(90_061), "1:01:01:01");
/// ```
pub fn format_duration(t: Secs) -> String {
    const INFINITY_SECS: Secs = 86_400_000;
    const DAYS_FORM_SECS: Secs = 8_640_000;
    const NEG_DAYS_FORM_SECS: Secs = -864_000;
    if t >= INFINITY_SECS {
        return "INFINITY".to_string();
    }
    if t <= -INFINITY_SECS {
        return "-INFINITY".to_string();
    }
    if t >= DAYS_FORM_SECS || t <= NEG_DAYS_FORM_SECS {
        return format!("{}days", t / 86_400);
    }
    let sign = if t < 0 { "-" } else { "" };
    let a = t.unsigned_abs();
    let (d, h, m, s) = (a / 86_400, (a % 86_400) / 3600, (a % 3600) / 60, a % 60);
    if d > 0 {
        format!("{sign}{d}:{h:02}:{m:02}:{s:02}")
    } else if h > 0 {
        format!("{sign}{h}:{m:02}:{s:02}")
    } else {
        format!("{sign}00:{m:02}:{s:02}")
    }
}

/// Why a time specification was rejected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid time specification '{0}' (expected [[[DD:]HH:]MM:]SS)")]
pub struct TimespecError(pub String);

/// Parses `[[[DD:]HH:]MM:]SS` (each field any number of digits, so hours may
/// exceed 24), and the Slurm form `D-H:M:S` / `D-H` / `D-H:M`.
///
/// ```
/// use arches_core::timespec::parse_duration;
/// assert_eq!(parse_duration("90"), Ok(90));
/// assert_eq!(parse_duration("1:00:00"), Ok(3600));
/// assert_eq!(parse_duration("2:00:00:00"), Ok(172800));
/// assert_eq!(parse_duration("30:00:00"), Ok(108000));
/// assert_eq!(parse_duration("1-02:00:00"), Ok(93600));
/// ```
pub fn parse_duration(text: &str) -> Result<Secs, TimespecError> {
    let err = || TimespecError(text.to_string());
    let s = text.trim();
    if s.is_empty() {
        return Err(err());
    }
    let (days, rest) = match s.split_once('-') {
        Some((d, rest)) => (parse_field(d).ok_or_else(err)?, Some(rest)),
        None => (0, None),
    };
    let fields: Vec<&str> = rest.unwrap_or(s).split(':').collect();
    let mut values = Vec::with_capacity(fields.len());
    for f in &fields {
        values.push(parse_field(f).ok_or_else(err)?);
    }
    let secs = if rest.is_some() {
        // Slurm: D-H, D-H:M, D-H:M:S
        match values.as_slice() {
            [h] => h * 3600,
            [h, m] => h * 3600 + m * 60,
            [h, m, sec] => h * 3600 + m * 60 + sec,
            _ => return Err(err()),
        }
    } else {
        match values.as_slice() {
            [sec] => *sec,
            [m, sec] => m * 60 + sec,
            [h, m, sec] => h * 3600 + m * 60 + sec,
            [d, h, m, sec] => d * 86400 + h * 3600 + m * 60 + sec,
            _ => return Err(err()),
        }
    };
    days.checked_mul(86400)
        .and_then(|d| d.checked_add(secs))
        .ok_or_else(err)
}

fn parse_field(f: &str) -> Option<i64> {
    if f.is_empty() || f.len() > 12 || !f.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    f.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forms() {
        assert_eq!(parse_duration("0"), Ok(0));
        assert_eq!(parse_duration("00:10:00"), Ok(600));
        assert_eq!(parse_duration("10:00"), Ok(600));
        assert_eq!(parse_duration("1-0"), Ok(86400));
        assert_eq!(parse_duration("1-1:1"), Ok(86400 + 3600 + 60));
        assert!(parse_duration("").is_err());
        assert!(parse_duration("a:b").is_err());
        assert!(parse_duration("-5").is_err());
        assert!(parse_duration("1:2:3:4:5").is_err());
        assert!(parse_duration("99999999999999:00").is_err());
    }
}
