//! The ranges every numeric input is checked against at the boundaries
//! (moab.cfg, msub, mjobctl, mschedctl, SWF and JSONL workloads), so that
//! the engine's arithmetic on accepted values can never overflow: a value
//! outside its range is refused with a clear error, never wrapped or
//! silently clamped. docs/security.md lists them.
//!
//! The bounds are far above any real cluster and chosen so that products
//! the engine forms stay within `i64`/`u64`: processors × wall time
//! (`MAX_TOTAL_PROCS * MAX_WALLTIME` < 2^63), a time plus a wall time, a
//! node's processors summed over every node (`MAX_TOTAL_PROCS` < 2^32).

use crate::{Secs, Time};

/// Longest wall-clock limit, run time or duration (100 years).
pub const MAX_WALLTIME: Secs = 100 * 365 * 86_400;

/// Latest absolute time (epoch seconds, the end of year 9999 UTC).
pub const MAX_TIME: Time = 253_402_300_799;

/// Most processors of one node (`NODECFG[x] PROCS=`).
pub const MAX_NODE_PROCS: u32 = 1 << 20;

/// Most processors of the whole cluster (the sum over every node) and of
/// one job.
pub const MAX_TOTAL_PROCS: u32 = 1 << 31;

/// Most nodes one job may ask for.
pub const MAX_JOB_NODES: u32 = 1 << 20;

/// User priority range (`msub -p`, `mjobctl -m userprio`, Moab's).
pub const USER_PRIORITY: std::ops::RangeInclusive<i64> = -1024..=1023;

/// Absolute system priority range (`mjobctl -p N`, Moab's).
pub const SYSTEM_PRIORITY: std::ops::RangeInclusive<i64> = 0..=1000;

/// Range of a relative system priority (`mjobctl -p +N` / `-N`) after the
/// change is applied.
pub const RELATIVE_PRIORITY: std::ops::RangeInclusive<i64> = -1_000_000_000..=1_000_000_000;

/// Most scheduling iterations `mschedctl -S N` may step at once, and the
/// highest iteration `mschedctl -s N` may name.
pub const MAX_ITERATIONS: u64 = 1_000_000_000;

/// Whether `v` lies in `range`, else the error `what V out of range (LO..HI)`.
pub fn check<T: PartialOrd + std::fmt::Display + Copy>(
    what: &str,
    v: T,
    range: std::ops::RangeInclusive<T>,
) -> Result<T, String> {
    if range.contains(&v) {
        Ok(v)
    } else {
        Err(format!(
            "{what} {v} out of range ({}..{})",
            range.start(),
            range.end()
        ))
    }
}

/// A wall-clock limit or duration: positive and at most [`MAX_WALLTIME`].
pub fn check_walltime(what: &str, secs: Secs) -> Result<Secs, String> {
    check(what, secs, 1..=MAX_WALLTIME)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn products_of_accepted_values_fit() {
        let work = i64::from(MAX_TOTAL_PROCS).checked_mul(MAX_WALLTIME);
        assert!(work.is_some());
        assert!(MAX_TIME.checked_add(MAX_WALLTIME * 4).is_some());
        assert!(u64::from(MAX_TOTAL_PROCS) * 2 <= u64::from(u32::MAX) + 1);
    }

    #[test]
    fn check_names_the_value_and_range() {
        assert_eq!(check("priority", 5, 0..=10), Ok(5));
        assert_eq!(
            check("priority", 11, 0..=10),
            Err("priority 11 out of range (0..10)".to_string())
        );
        assert!(check_walltime("walltime", 0).is_err());
        assert!(check_walltime("walltime", MAX_WALLTIME + 1).is_err());
    }
}
