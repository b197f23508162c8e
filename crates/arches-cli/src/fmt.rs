//! Moab's time and date strings: `MULToTString` durations, ctime-style dates
//! (`MULToDString` without the year) and the short `HH:MM:SS_MM/DD` form.
//!
//! Dates are rendered in the local time zone with `localtime_r`, exactly as
//! Moab does; tests set `TZ=UTC`.

/// One thousand days: at and above this a duration prints as `INFINITY`.
const INFINITY_SECS: i64 = 86_400_000;
/// One hundred days: at and above this a duration prints as `NNNdays`.
const DAYS_FORM_SECS: i64 = 8_640_000;
/// Ten days below zero: at and below this a negative prints as `-NNdays`.
const NEG_DAYS_FORM_SECS: i64 = -864_000;

/// `MULToTString`: a duration in seconds as Moab prints it, without padding.
///
/// `00:MM:SS` below one hour, `H:MM:SS` below ten hours, `HH:MM:SS` below a
/// day, `D:HH:MM:SS` from one day, `NNNdays` from 100 days, `INFINITY` from
/// 1000 days; negatives carry a `-` in front.
pub fn duration(t: i64) -> String {
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

/// A duration limit that may be unset (`None` prints `INFINITY`).
pub fn limit(t: Option<i64>) -> String {
    match t {
        Some(t) => duration(t),
        None => "INFINITY".to_string(),
    }
}

extern "C" {
    /// POSIX `tzset(3)` (not exported by the libc crate on Unix).
    fn tzset();
}

/// Broken-down local time of an epoch instant.
struct Tm {
    year: i32,
    mon: usize,
    mday: i32,
    wday: usize,
    hour: i32,
    min: i32,
    sec: i32,
}

fn local(epoch: i64) -> Tm {
    let t: libc::time_t = epoch as libc::time_t;
    // SAFETY: an all-zero `tm` is a valid value of this plain C struct.
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    // SAFETY: tzset only (re)reads TZ into libc's globals; localtime_r does
    // not promise to do so itself.
    unsafe { tzset() };
    // SAFETY: both pointers are valid for the duration of the call;
    // localtime_r is the thread-safe variant and writes only into `tm`.
    let ok = unsafe { !libc::localtime_r(&t, &mut tm).is_null() };
    if !ok {
        return Tm {
            year: 1970,
            mon: 0,
            mday: 1,
            wday: 4,
            hour: 0,
            min: 0,
            sec: 0,
        };
    }
    Tm {
        year: tm.tm_year + 1900,
        mon: tm.tm_mon.clamp(0, 11) as usize,
        mday: tm.tm_mday,
        wday: tm.tm_wday.clamp(0, 6) as usize,
        hour: tm.tm_hour,
        min: tm.tm_min,
        sec: tm.tm_sec,
    }
}

const DAYS: [&str; 7] = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];

/// `MULToDString` without its newline: `Www Mmm dd HH:MM:SS` (19 chars, day
/// space-padded, no year).
pub fn date(epoch: i64) -> String {
    let tm = local(epoch);
    format!(
        "{} {} {:2} {:02}:{:02}:{:02}",
        DAYS[tm.wday], MONTHS[tm.mon], tm.mday, tm.hour, tm.min, tm.sec
    )
}

/// Full ctime form with the year (`showres -v`): `Www Mmm dd HH:MM:SS YYYY`.
pub fn date_with_year(epoch: i64) -> String {
    format!("{} {}", date(epoch), local(epoch).year)
}

/// `MULToATString`: `HH:MM:SS_MM/DD` (showbf StartDate).
pub fn short_date(epoch: i64) -> String {
    let tm = local(epoch);
    format!(
        "{:02}:{:02}:{:02}_{:02}/{:02}",
        tm.hour,
        tm.min,
        tm.sec,
        tm.mon + 1,
        tm.mday
    )
}

/// `s` when `n != 1` (Moab's plural rule).
pub fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_follow_multotstring() {
        assert_eq!(duration(0), "00:00:00");
        assert_eq!(duration(3405), "00:56:45");
        assert_eq!(duration(2 * 3600 + 44 * 60 + 11), "2:44:11");
        assert_eq!(duration(11 * 3600 + 49 * 60 + 51), "11:49:51");
        assert_eq!(duration(86400 + 5 * 3600 + 57 * 60 + 31), "1:05:57:31");
        assert_eq!(
            duration(11 * 86400 + 2 * 3600 + 37 * 60 + 52),
            "11:02:37:52"
        );
        assert_eq!(duration(-301), "-00:05:01");
        assert_eq!(duration(-(6 * 3600 + 58 * 60 + 48)), "-6:58:48");
        assert_eq!(duration(109 * 86400 + 5), "109days");
        assert_eq!(duration(86_400_000), "INFINITY");
        assert_eq!(duration(-86_400_000), "-INFINITY");
        assert_eq!(duration(-10 * 86400), "-10days");
        assert_eq!(limit(None), "INFINITY");
    }

    #[test]
    fn dates_in_utc() {
        std::env::set_var("TZ", "UTC");
        // 2019-01-23 15:01:47 UTC
        assert_eq!(date(1548255707), "Wed Jan 23 15:01:47");
        assert_eq!(date(1504278170), "Fri Sep  1 15:02:50");
        assert_eq!(short_date(1548255707), "15:01:47_01/23");
        assert_eq!(date_with_year(1548255707), "Wed Jan 23 15:01:47 2019");
        assert_eq!(date(1_000_000_000 - 86400 * 12), "Tue Aug 28 01:46:40");
    }
}

#[cfg(test)]
mod duration_tests {
    /// The core formats the times inside block reasons with its own copy of
    /// `MULToTString` (it cannot depend on the CLI): both must agree.
    #[test]
    fn core_and_cli_durations_agree() {
        let mut t: i64 = 1;
        let mut samples = vec![0, 59, 60, 3599, 3600, 35_999, 36_000, 86_399, 86_400];
        while t < 200_000_000 {
            samples.push(t);
            samples.push(-t);
            t = t * 3 + 7;
        }
        for t in samples {
            assert_eq!(
                super::duration(t),
                arches_core::timespec::format_duration(t),
                "{t}"
            );
        }
    }
}
