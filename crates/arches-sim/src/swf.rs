//! Standard Workload Format (SWF) reader: plain or gzip-compressed, read line
//! by line.
//!
//! [`read_swf`] returns the header keys the simulator needs and the raw
//! records; [`to_jobs`] turns records into [`SimJob`]s for a machine size.
//! The default conversion copies pyss (the reference simulator, see
//! `peer-results.md`):
//! - processors = field 5 (allocated), capped at the machine size;
//! - estimate (wall-clock limit) = max(requested time, run time, 1);
//! - run time = max(min(requested time, run time), 1) — an overrun is cut
//!   (and, literally, a job with no requested time runs 1 second);
//! - run time <= 0 or processors <= 0 → a placeholder that runs 1 second
//!   with a 1-second estimate, on its allocated processors (1 if unknown).
//!   This reproduces pyss's EASY results exactly (KTH all-jobs bsld 92.88,
//!   SDSC-SP2 106.96); a 1-processor placeholder or one keeping the requested
//!   time as its estimate does not.
//!
//! [`SwfOptions::sanitize`] applies the SC'15 "strong filter" instead: drop
//! jobs with run time, processors or requested time <= 0, and cut the run time
//! at the requested time. [`SwfOptions::min_job_id`] drops low job numbers
//! (KTH's cleaned log keeps jobs 15 and above).

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use flate2::read::MultiGzDecoder;

use crate::workload::SimJob;

/// Number of data fields on an SWF line.
pub const SWF_FIELDS: usize = 18;

/// How to read and convert a trace.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SwfOptions {
    /// Apply the SC'15 strong filter instead of pyss's placeholders.
    pub sanitize: bool,
    /// Keep only jobs numbered at least this.
    pub min_job_id: Option<u64>,
    /// Skip (and count) malformed lines instead of failing.
    pub skip_malformed: bool,
}

/// The header keys that matter to a simulation.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SwfHeader {
    pub max_procs: Option<u32>,
    pub max_nodes: Option<u32>,
    pub unix_start_time: Option<i64>,
}

/// One SWF data line (the fields a simulator uses; -1 = unknown).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SwfRecord {
    pub job: u64,
    pub submit: i64,
    pub run: i64,
    pub alloc_procs: i64,
    pub req_procs: i64,
    pub req_time: i64,
    pub status: i64,
    pub user: i64,
    pub group: i64,
    pub queue: i64,
    pub partition: i64,
    pub preceding: i64,
}

/// A trace as read.
#[derive(Debug, Clone, Default)]
pub struct SwfTrace {
    pub header: SwfHeader,
    pub records: Vec<SwfRecord>,
    /// Malformed lines skipped (only with `skip_malformed`).
    pub malformed: usize,
}

/// Why a trace could not be read.
#[derive(Debug, thiserror::Error)]
pub enum SwfError {
    #[error("{file}: {source}")]
    Io {
        file: String,
        source: std::io::Error,
    },
    #[error("{file}:{line}: {what}")]
    Malformed {
        file: String,
        line: usize,
        what: String,
    },
}

/// Opens a file, decompressing it if it is gzip (by content, not by name).
pub fn open_maybe_gz(path: &Path) -> std::io::Result<Box<dyn BufRead>> {
    let mut file = File::open(path)?;
    let mut magic = [0u8; 2];
    let n = file.read(&mut magic)?;
    let file = File::open(path)?;
    if n == 2 && magic == [0x1f, 0x8b] {
        Ok(Box::new(BufReader::new(MultiGzDecoder::new(file))))
    } else {
        Ok(Box::new(BufReader::new(file)))
    }
}

/// Reads an SWF file (plain or `.gz`).
pub fn read_swf(path: &Path, opts: &SwfOptions) -> Result<SwfTrace, SwfError> {
    let file = path.display().to_string();
    let reader = open_maybe_gz(path).map_err(|source| SwfError::Io {
        file: file.clone(),
        source,
    })?;
    parse_swf(reader, &file, opts)
}

/// Parses SWF text; `file` names the source in errors.
pub fn parse_swf(
    reader: impl BufRead,
    file: &str,
    opts: &SwfOptions,
) -> Result<SwfTrace, SwfError> {
    let mut trace = SwfTrace::default();
    let mut seen = std::collections::BTreeSet::new();
    for (i, line) in reader.lines().enumerate() {
        let line = line.map_err(|source| SwfError::Io {
            file: file.to_string(),
            source,
        })?;
        let text = line.trim();
        if text.is_empty() {
            continue;
        }
        if let Some(h) = text.strip_prefix(';') {
            if let Err(what) = parse_header_line(h, &mut trace.header) {
                return Err(SwfError::Malformed {
                    file: file.to_string(),
                    line: i + 1,
                    what,
                });
            }
            continue;
        }
        let record = parse_record(text).and_then(|r| {
            if seen.insert(r.job) {
                Ok(r)
            } else {
                Err(format!("duplicate job number {}", r.job))
            }
        });
        match record {
            Ok(r) => {
                if opts.min_job_id.is_none_or(|m| r.job >= m) {
                    trace.records.push(r);
                }
            }
            Err(what) if opts.skip_malformed => {
                let _ = what;
                trace.malformed += 1;
            }
            Err(what) => {
                return Err(SwfError::Malformed {
                    file: file.to_string(),
                    line: i + 1,
                    what,
                })
            }
        }
    }
    Ok(trace)
}

/// A header line (`; Key: value`). Unknown keys and values that are not
/// numbers are ignored (comments); a number out of range is an error.
fn parse_header_line(h: &str, header: &mut SwfHeader) -> Result<(), String> {
    use arches_core::limits::{check, MAX_TIME, MAX_TOTAL_PROCS};
    let Some((key, value)) = h.split_once(':') else {
        return Ok(());
    };
    let value = value.split_whitespace().next().unwrap_or("");
    let Ok(n) = value.parse::<i64>() else {
        return Ok(());
    };
    let procs = |what| check(what, n, 0..=i64::from(MAX_TOTAL_PROCS)).map(|n| Some(n as u32));
    match key.trim() {
        "MaxProcs" => header.max_procs = procs("MaxProcs")?,
        "MaxNodes" => header.max_nodes = procs("MaxNodes")?,
        "UnixStartTime" => header.unix_start_time = Some(check("UnixStartTime", n, 0..=MAX_TIME)?),
        _ => {}
    }
    Ok(())
}

fn parse_record(text: &str) -> Result<SwfRecord, String> {
    let mut f = [0i64; SWF_FIELDS];
    let mut n = 0;
    for (i, tok) in text.split_whitespace().enumerate() {
        if i >= SWF_FIELDS {
            return Err(format!("more than {SWF_FIELDS} fields"));
        }
        // Some archive logs write fractional values (e.g. CPU time).
        f[i] = match tok.parse::<i64>() {
            Ok(v) => v,
            Err(_) => match tok.parse::<f64>() {
                // Within ±2^62: the cast cannot saturate.
                Ok(v) if v.is_finite() && v.abs() < 4.6e18 => v.round() as i64,
                Ok(_) => return Err(format!("field {} out of range: '{tok}'", i + 1)),
                _ => return Err(format!("field {} is not a number: '{tok}'", i + 1)),
            },
        };
        n = i + 1;
    }
    if n != SWF_FIELDS {
        return Err(format!("{n} fields, expected {SWF_FIELDS}"));
    }
    if f[0] <= 0 {
        return Err(format!("job number must be positive, got {}", f[0]));
    }
    if f[1] < 0 {
        return Err(format!("submit time must be >= 0, got {}", f[1]));
    }
    // Times and sizes the replay adds and multiplies (-1: unknown).
    use arches_core::limits::{check, MAX_TIME, MAX_TOTAL_PROCS, MAX_WALLTIME};
    check("submit time", f[1], 0..=MAX_TIME)?;
    check("run time", f[3], -1..=MAX_WALLTIME)?;
    check("requested time", f[8], -1..=MAX_WALLTIME)?;
    let procs = -1..=i64::from(MAX_TOTAL_PROCS);
    check("allocated processors", f[4], procs.clone())?;
    check("requested processors", f[7], procs)?;
    Ok(SwfRecord {
        job: f[0] as u64,
        submit: f[1],
        run: f[3],
        alloc_procs: f[4],
        req_procs: f[7],
        req_time: f[8],
        status: f[10],
        user: f[11],
        group: f[12],
        queue: f[14],
        partition: f[15],
        preceding: f[16],
    })
}

/// Jobs converted from SWF records.
#[derive(Debug, Clone, Default)]
pub struct Converted {
    /// Sorted by submit time, then job number.
    pub jobs: Vec<SimJob>,
    /// Records the sanitising filter dropped.
    pub dropped: usize,
    /// Jobs whose processor count exceeded the machine and was capped at it
    /// (pyss's convention, kept so that figures compare).
    pub capped: usize,
}

/// Converts records to jobs for a machine of `machine_procs` processors,
/// sorted by submit time then job number.
pub fn to_jobs(records: &[SwfRecord], machine_procs: u32, opts: &SwfOptions) -> Converted {
    let mut out = Converted {
        jobs: Vec::with_capacity(records.len()),
        ..Converted::default()
    };
    let cap = i64::from(machine_procs.max(1));
    for r in records {
        let job = if opts.sanitize {
            if r.run <= 0 || r.alloc_procs <= 0 || r.req_time <= 0 {
                out.dropped += 1;
                continue;
            }
            let procs = r.alloc_procs.min(cap) as u32;
            SimJob::new(r.job, r.submit, procs, r.req_time, r.run.min(r.req_time))
        } else {
            let estimate = r.req_time.max(r.run).max(1);
            if r.run <= 0 || r.alloc_procs <= 0 {
                let procs = r.alloc_procs.clamp(1, cap) as u32;
                let mut j = SimJob::new(r.job, r.submit, procs, 1, 1);
                j.placeholder = true;
                j
            } else {
                let procs = r.alloc_procs.min(cap) as u32;
                // Literally pyss's rule: with no requested time (-1) the
                // run is cut to 1 second while the estimate keeps the run.
                let runtime = r.req_time.min(r.run).max(1);
                SimJob::new(r.job, r.submit, procs, estimate, runtime)
            }
        };
        out.capped += usize::from(r.alloc_procs > cap);
        out.jobs.push(with_credentials(job, r));
    }
    out.jobs.sort_by_key(|j| (j.submit, j.id));
    out
}

fn with_credentials(mut job: SimJob, r: &SwfRecord) -> SimJob {
    if r.user >= 0 {
        job.user = format!("user{}", r.user);
    }
    if r.group >= 0 {
        job.group = format!("group{}", r.group);
    }
    if r.queue >= 0 {
        job.class = Some(format!("queue{}", r.queue));
    }
    job
}

#[cfg(test)]
mod tests {
    use super::*;

    const TRACE: &str = "; MaxProcs: 8\n; MaxNodes: 4\n; UnixStartTime: 1000\n\
        1 0 5 100 4 -1 -1 4 200 -1 1 3 2 -1 1 -1 -1 -1\n\
        2 10 0 300 16 -1 -1 16 100 -1 1 3 2 -1 1 -1 -1 -1\n\
        3 10 0 -1 2 -1 -1 2 50 -1 5 3 2 -1 1 -1 -1 -1\n\
        4 5 0 30 -1 -1 -1 2 50 -1 1 3 2 -1 1 -1 -1 -1\n\
        5 5 0 30 2 -1 -1 2 -1 -1 1 3 2 -1 1 -1 -1 -1\n";

    #[test]
    fn pyss_semantics_by_default() {
        let t = parse_swf(TRACE.as_bytes(), "t.swf", &SwfOptions::default()).unwrap();
        assert_eq!(t.header.max_procs, Some(8));
        assert_eq!(t.header.max_nodes, Some(4));
        assert_eq!(t.header.unix_start_time, Some(1000));
        let Converted {
            jobs,
            dropped,
            capped,
        } = to_jobs(&t.records, 8, &SwfOptions::default());
        assert_eq!(dropped, 0);
        assert_eq!(capped, 1, "job 2 asked for 16 of 8 processors");
        let ids: Vec<u64> = jobs.iter().map(|j| j.id).collect();
        assert_eq!(ids, vec![1, 4, 5, 2, 3], "submit order, ties by number");
        let j = |id| jobs.iter().find(|j| j.id == id).unwrap();
        assert_eq!((j(1).procs, j(1).walltime, j(1).runtime), (4, 200, 100));
        // Overran its estimate: cut; capped at the machine.
        assert_eq!((j(2).procs, j(2).walltime, j(2).runtime), (8, 300, 100));
        assert!(j(3).placeholder && j(3).procs == 2 && j(3).runtime == 1);
        assert_eq!(j(3).walltime, 1);
        assert!(j(4).placeholder && j(4).procs == 1, "no processor count");
        // No requested time: pyss keeps the run as the estimate, runs 1 s.
        assert_eq!((j(5).walltime, j(5).runtime), (30, 1));
    }

    #[test]
    fn sanitize_and_min_job_id() {
        let opts = SwfOptions {
            sanitize: true,
            min_job_id: Some(2),
            ..SwfOptions::default()
        };
        let t = parse_swf(TRACE.as_bytes(), "t.swf", &opts).unwrap();
        let Converted { jobs, dropped, .. } = to_jobs(&t.records, 8, &opts);
        assert_eq!(dropped, 3);
        assert_eq!(jobs.len(), 1);
        assert_eq!(
            (jobs[0].id, jobs[0].walltime, jobs[0].runtime),
            (2, 100, 100)
        );
    }

    #[test]
    fn malformed_lines_fail_or_are_counted() {
        let bad = "1 0 5 100 4 -1 -1 4 200 -1 1 3 2 -1 1 -1 -1 -1\n1 2 3\n";
        let e = parse_swf(bad.as_bytes(), "b.swf", &SwfOptions::default()).unwrap_err();
        assert_eq!(e.to_string(), "b.swf:2: 3 fields, expected 18");
        let nan = "1 0 x 100 4 -1 -1 4 200 -1 1 3 2 -1 1 -1 -1 -1\n";
        let e = parse_swf(nan.as_bytes(), "n.swf", &SwfOptions::default()).unwrap_err();
        assert!(
            e.to_string().contains("field 3 is not a number: 'x'"),
            "{e}"
        );
        let opts = SwfOptions {
            skip_malformed: true,
            ..SwfOptions::default()
        };
        let t = parse_swf(bad.as_bytes(), "b.swf", &opts).unwrap();
        assert_eq!((t.records.len(), t.malformed), (1, 1));
        let dup = "1 0 5 100 4 -1 -1 4 200 -1 1 3 2 -1 1 -1 -1 -1\n".repeat(2);
        let e = parse_swf(dup.as_bytes(), "d.swf", &SwfOptions::default()).unwrap_err();
        assert_eq!(e.to_string(), "d.swf:2: duplicate job number 1");
    }
}
