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
//! SWF writes -1 for "unknown" in any field. Unknown run times, processor
//! counts and requested times get pyss's defaults above; a line whose job
//! number or submit time is unknown describes no job that can be placed in
//! time and is skipped and counted ([`SwfSkipped::unknown`]), as are the
//! partial-execution lines (status 2, 3 or 4) of checkpointed or swapped
//! jobs, whose summary line (status 0, 1 or 5) is the job
//! ([`SwfSkipped::partial`]). Only lines that are not SWF at all (a wrong
//! number of fields, a field that is not a number, a job number given
//! twice) are malformed.
//!
//! Reading allocates nothing per line: one buffer is reused and the fields
//! are parsed from its bytes. The usual data line (18 integers or short
//! decimals, ASCII whitespace) takes a fast path that classifies 16 bytes at
//! a time and reads each field with one 8-byte load; every other line goes
//! the general way, which gives the same values, counts and errors.
//! [`read_trace`] keeps the jobs in the compact form the simulator replays
//! ([`TraceJob`], 64 bytes each).
//!
//! [`SwfOptions::sanitize`] applies the SC'15 "strong filter" instead: drop
//! jobs with run time, processors or requested time <= 0, and cut the run time
//! at the requested time. [`SwfOptions::min_job_id`] drops low job numbers
//! (KTH's cleaned log keeps jobs 15 and above).

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use flate2::bufread::MultiGzDecoder;

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

/// Lines of a trace that describe no job the simulator can replay, skipped
/// and counted as the SWF definition allows (-1 is "unknown" in any field).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SwfSkipped {
    /// Malformed lines skipped (only with `skip_malformed`).
    pub malformed: usize,
    /// Jobs whose number or submit time is unknown (-1): a job that cannot
    /// be placed in time is not replayed.
    pub unknown: usize,
    /// Partial-execution lines (status 2, 3 or 4) of checkpointed or
    /// swapped jobs: the job's summary line (status 0, 1 or 5) describes
    /// the whole job and is the one replayed.
    pub partial: usize,
}

/// A trace as read.
#[derive(Debug, Clone, Default)]
pub struct SwfTrace {
    pub header: SwfHeader,
    pub records: Vec<SwfRecord>,
    /// Malformed lines skipped (only with `skip_malformed`).
    pub malformed: usize,
    /// Every kind of line skipped, malformed ones included.
    pub skipped: SwfSkipped,
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
/// Read in large blocks: a trace is read once, front to back.
pub fn open_maybe_gz(path: &Path) -> std::io::Result<Box<dyn BufRead>> {
    let mut file = File::open(path)?;
    let mut magic = [0u8; 2];
    let n = file.read(&mut magic)?;
    let file = File::open(path)?;
    if n == 2 && magic == [0x1f, 0x8b] {
        // The bufread decoder reads the file's buffer directly (the read
        // one would put a buffer of its own in between).
        let gz = MultiGzDecoder::new(BufReader::with_capacity(READ_BLOCK, file));
        Ok(Box::new(BufReader::with_capacity(READ_BLOCK, gz)))
    } else {
        Ok(Box::new(BufReader::with_capacity(READ_BLOCK, file)))
    }
}

/// Bytes read (and decompressed) at a time.
const READ_BLOCK: usize = 256 * 1024;

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
    let mut records = Vec::new();
    scan(
        reader,
        file,
        opts,
        &mut trace.header,
        &mut trace.skipped,
        |r| records.push(r),
    )?;
    trace.records = records;
    trace.malformed = trace.skipped.malformed;
    Ok(trace)
}

/// Reads SWF text in large blocks (no allocation or copy per line: lines
/// are parsed where they lie in the block), handing every replayable
/// record to `sink` in file order. Header keys go to `header`, skipped
/// lines are counted in `skipped`. The first malformed line is an error
/// unless `opts.skip_malformed`.
pub fn scan(
    mut reader: impl BufRead,
    file: &str,
    opts: &SwfOptions,
    header: &mut SwfHeader,
    skipped: &mut SwfSkipped,
    mut sink: impl FnMut(SwfRecord),
) -> Result<(), SwfError> {
    let io = |source| SwfError::Io {
        file: file.to_string(),
        source,
    };
    let mut seen = SeenJobs::default();
    // The block, and PAD bytes after it that are never read into: the
    // fast path loads 8 bytes at a time up to the end of the read bytes.
    let mut buf = vec![0u8; SCAN_BLOCK + PAD];
    // Unread bytes are buf[lo..hi].
    let (mut lo, mut hi) = (0, 0);
    let mut eof = false;
    let mut number = 0usize;
    let mut fields = [0i64; SWF_FIELDS];
    loop {
        // Nearly every line: 18 plain integers, parsed where they lie.
        if let Some(end) = fast_line(&buf, lo, hi, &mut fields) {
            number += 1;
            lo = end + 1;
            handle(
                Ok(&fields),
                number,
                file,
                opts,
                &mut seen,
                skipped,
                &mut sink,
            )?;
            continue;
        }
        let line = match buf[lo..hi].iter().position(|&b| b == b'\n') {
            Some(p) => {
                let l = lo..lo + p;
                lo += p + 1;
                l
            }
            None if eof => {
                if lo == hi {
                    return Ok(());
                }
                let l = lo..hi;
                lo = hi;
                l
            }
            None => {
                buf.copy_within(lo..hi, 0);
                hi -= lo;
                lo = 0;
                if hi == buf.len() - PAD {
                    // A line longer than the block.
                    buf.resize(2 * hi + PAD, 0);
                }
                let end = buf.len() - PAD;
                let n = loop {
                    match reader.read(&mut buf[hi..end]) {
                        Ok(n) => break n,
                        Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                        Err(e) => return Err(io(e)),
                    }
                };
                eof = n == 0;
                hi += n;
                continue;
            }
        };
        number += 1;
        let text = trim_ws(&buf[line]);
        if text.is_empty() {
            continue;
        }
        if !text.is_ascii() {
            // What `str::lines` refused (not UTF-8) stays an error; other
            // text goes the general way (Unicode whitespace).
            let s = std::str::from_utf8(text)
                .map_err(|e| io(std::io::Error::new(std::io::ErrorKind::InvalidData, e)))?;
            let s = s.trim();
            if s.is_empty() {
                continue;
            }
            if let Some(h) = s.strip_prefix(';') {
                header_line(h, header, file, number)?;
                continue;
            }
            let fields = parse_fields_str(s);
            let fields = fields.as_ref().map_err(String::clone);
            handle(fields, number, file, opts, &mut seen, skipped, &mut sink)?;
            continue;
        }
        if let Some(h) = text.strip_prefix(b";") {
            // ASCII, hence UTF-8.
            header_line(std::str::from_utf8(h).unwrap_or(""), header, file, number)?;
            continue;
        }
        let fields = parse_fields(text);
        let fields = fields.as_ref().map_err(String::clone);
        handle(fields, number, file, opts, &mut seen, skipped, &mut sink)?;
    }
}

/// Bytes after the scan block that reads never fill: the fast path looks
/// at [`WINDOW`] bytes (and 16 more for the digits of a last field) from any
/// line start up to the end of the bytes read.
const PAD: usize = WINDOW + 16;

/// The longest line the fast path takes (the archive traces' data lines
/// are 91 to 96 bytes); longer ones go the general way.
const WINDOW: usize = 128;

/// The fast path of [`scan`]: the line starting at `lo` if it is a data
/// line of exactly [`SWF_FIELDS`] numbers separated by ASCII whitespace,
/// whose line feed is within [`WINDOW`] bytes and before `hi`: plain
/// integers (an optional `-` and at most 16 digits) or short decimals
/// ([`rounded_digits`]). Its fields go to `f`; the result is the position of
/// the line feed. Anything else (a header, a blank line, an exponent, a `+`
/// sign, more digits, non-ASCII text, a wrong number of fields, a line not
/// read whole yet) is `None` and goes the general way, which gives exactly
/// these values for the lines taken here.
///
/// The bytes are classified 16 at a time into bit masks (blank, line feed,
/// digit, minus, dot); the fields are then found from the masks and each
/// read with one 8-byte load (two beyond 8 digits). `buf` has [`PAD`]
/// readable bytes after `hi`.
fn fast_line(buf: &[u8], lo: usize, hi: usize, f: &mut [i64; SWF_FIELDS]) -> Option<usize> {
    let w: &[u8; PAD] = buf.get(lo..lo + PAD)?.try_into().ok()?;
    let (mut blank, mut nl, mut digit, mut minus, mut dot) = (0u128, 0u128, 0u128, 0u128, 0u128);
    for k in 0..WINDOW / 16 {
        let chunk: &[u8; 16] = w[16 * k..16 * k + 16].try_into().ok()?;
        let c = classes16(chunk);
        let at = 16 * k;
        blank |= u128::from(c.blank) << at;
        nl |= u128::from(c.nl) << at;
        digit |= u128::from(c.digit) << at;
        minus |= u128::from(c.minus) << at;
        dot |= u128::from(c.dot) << at;
        if c.nl != 0 {
            break;
        }
    }
    // Only the bytes read count (a line feed beyond is stale).
    let avail = hi - lo;
    if avail < WINDOW {
        nl &= (1u128 << avail) - 1;
    }
    if nl == 0 {
        return None;
    }
    let len = nl.trailing_zeros() as usize;
    let line = (1u128 << len) - 1;
    let token = !blank & line;
    let minus = minus & line;
    let dot = dot & line;
    let starts = token & !(token << 1);
    // Every field is digits, after a minus sign that starts it; a dot is
    // between digits.
    if token & !(digit | minus | dot) != 0
        || minus & !starts != 0
        || (minus << 1) & !digit != 0
        || dot & starts != 0
        || (dot >> 1 | dot << 1) & !digit != 0
    {
        return None;
    }
    let decimals = dot != 0;
    let mut n = 0;
    for (mut m, base) in [(starts as u64, 0), ((starts >> 64) as u64, 64)] {
        while m != 0 {
            if n == SWF_FIELDS {
                return None;
            }
            let s = base + m.trailing_zeros() as usize;
            m &= m - 1;
            let neg = w[s] == b'-';
            let at = s + usize::from(neg);
            let v = if decimals {
                rounded_digits(w, at)?
            } else {
                plain_digits(w, at)?.0
            } as i64;
            f[n] = if neg { -v } else { v };
            n += 1;
        }
    }
    (n == SWF_FIELDS).then_some(lo + len)
}

/// A number at `s` that is digits, a dot, digits (`7.38`), rounded as the
/// general way does (parsed as an `f64`, rounded half away from zero), or
/// plain digits. Only a whole part below 10^9 and at most 6 decimals are
/// taken (`None` otherwise): the `f64` is then within 2^-24 of the number,
/// less than its distance to a half unless it is one, so the rounding of
/// the decimal is exact.
fn rounded_digits(w: &[u8; PAD], s: usize) -> Option<u64> {
    let (whole, len) = plain_digits(w, s)?;
    let dot = s + len;
    if w[dot] != b'.' {
        return Some(whole);
    }
    if whole >= 1_000_000_000 {
        return None;
    }
    let d = load8(w, dot + 1).wrapping_sub(BYTES_30);
    let stop = non_digit_bytes(d);
    let decimals = (stop.trailing_zeros() / 8) as usize;
    if decimals == 0 || decimals > 6 || w[dot + 1 + decimals] == b'.' {
        return None;
    }
    let fraction = eight_digits(d << (8 * (8 - decimals)));
    Some(whole + u64::from(2 * fraction >= POW10[decimals]))
}

/// The 1 to 16 decimal digits from `s` up to the first byte that is not a
/// digit, and their count (`None`: more than 16).
#[inline(always)]
fn plain_digits(w: &[u8; PAD], s: usize) -> Option<(u64, usize)> {
    let d = load8(w, s).wrapping_sub(BYTES_30);
    let stop = non_digit_bytes(d);
    if stop != 0 {
        let len = (stop.trailing_zeros() / 8) as usize;
        // The digits in the top bytes, zeros (leading zeros) below.
        let t = d << (8 * (8 - len));
        if len <= 2 {
            // Most fields are short (-1, counts, ids).
            return Some((((t >> 48) & 0xff) * 10 + (t >> 56), len));
        }
        return Some((eight_digits(t), len));
    }
    let d2 = load8(w, s + 8).wrapping_sub(BYTES_30);
    let stop = non_digit_bytes(d2);
    let high = eight_digits(d);
    if stop == 0 {
        if w[s + 16].is_ascii_digit() {
            return None;
        }
        return Some((high * 100_000_000 + eight_digits(d2), 16));
    }
    let len = (stop.trailing_zeros() / 8) as usize;
    if len == 0 {
        return Some((high, 8));
    }
    Some((
        high * POW10[len] + eight_digits(d2 << (8 * (8 - len))),
        8 + len,
    ))
}

/// Which of 16 bytes are what, a bit per byte (the first byte lowest).
#[derive(Debug, PartialEq, Eq)]
struct Classes {
    /// ASCII whitespace but the line feed: space, tab, vertical tab, form
    /// feed, carriage return (what [`is_ws`] accepts but `\n`).
    blank: u16,
    nl: u16,
    digit: u16,
    minus: u16,
    dot: u16,
}

/// [`Classes`] with SSE2 (always there on x86-64).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn classes16(c: &[u8; 16]) -> Classes {
    use std::arch::x86_64::{
        _mm_add_epi8, _mm_cmpeq_epi8, _mm_cmplt_epi8, _mm_loadu_si128, _mm_movemask_epi8,
        _mm_set1_epi8,
    };
    // Bytes `b` with `from <= b < from + n`: shifted to the bottom of the
    // signed range, below -128 + n.
    #[allow(unused_unsafe)]
    // SAFETY: an unaligned 16-byte load from a 16-byte array; SSE2 is part
    // of x86-64 (the other intrinsics are unsafe only before Rust 1.87).
    unsafe {
        let x = _mm_loadu_si128(c.as_ptr().cast());
        let eq = |b: u8| _mm_movemask_epi8(_mm_cmpeq_epi8(x, _mm_set1_epi8(b as i8))) as u16;
        let range = |from: u8, n: u8| {
            let shifted = _mm_add_epi8(x, _mm_set1_epi8(0x80u8.wrapping_sub(from) as i8));
            let below = _mm_set1_epi8(0x80u8.wrapping_add(n) as i8);
            _mm_movemask_epi8(_mm_cmplt_epi8(shifted, below)) as u16
        };
        let nl = eq(b'\n');
        Classes {
            blank: eq(b' ') | (range(b'\t', 5) & !nl),
            nl,
            digit: range(b'0', 10),
            minus: eq(b'-'),
            dot: eq(b'.'),
        }
    }
}

/// [`Classes`] a byte at a time (other targets; the reference in tests).
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
fn classes16_bytes(c: &[u8; 16]) -> Classes {
    let mut out = Classes {
        blank: 0,
        nl: 0,
        digit: 0,
        minus: 0,
        dot: 0,
    };
    for (k, &b) in c.iter().enumerate() {
        out.blank |= u16::from(b != b'\n' && is_ws(b)) << k;
        out.nl |= u16::from(b == b'\n') << k;
        out.digit |= u16::from(b.is_ascii_digit()) << k;
        out.minus |= u16::from(b == b'-') << k;
        out.dot |= u16::from(b == b'.') << k;
    }
    out
}

#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
fn classes16(c: &[u8; 16]) -> Classes {
    classes16_bytes(c)
}

const BYTES_30: u64 = 0x3030_3030_3030_3030;
const BYTES_76: u64 = 0x7676_7676_7676_7676;
const BYTES_80: u64 = 0x8080_8080_8080_8080;
const POW10: [u64; 8] = [1, 10, 100, 1_000, 10_000, 100_000, 1_000_000, 10_000_000];

/// The 8 bytes from `i`, the first one lowest.
#[inline(always)]
fn load8(w: &[u8; PAD], i: usize) -> u64 {
    let mut b = [0u8; 8];
    b.copy_from_slice(&w[i..i + 8]);
    u64::from_le_bytes(b)
}

/// For bytes minus `'0'` (`d`, borrows included): the high bit of every
/// byte above 9, exact up to and including the first one (a borrow or a
/// carry only spoils the bytes after a byte that is not a digit).
#[inline(always)]
fn non_digit_bytes(d: u64) -> u64 {
    (d.wrapping_add(BYTES_76) | d) & BYTES_80
}

/// The number whose 8 decimal digits (values 0-9) are the bytes of `v`,
/// the most significant lowest (leading zero bytes are leading zeros).
#[inline(always)]
fn eight_digits(v: u64) -> u64 {
    const MASK: u64 = 0x0000_00ff_0000_00ff;
    const MUL1: u64 = 100 + (1_000_000 << 32);
    const MUL2: u64 = 1 + (10_000 << 32);
    let v = v.wrapping_mul(10).wrapping_add(v >> 8);
    ((v & MASK)
        .wrapping_mul(MUL1)
        .wrapping_add(((v >> 16) & MASK).wrapping_mul(MUL2)))
        >> 32
}

/// Bytes read (and decompressed) into the scan buffer at a time.
const SCAN_BLOCK: usize = 1 << 20;

/// ASCII whitespace as `str::split_whitespace` sees it (space, tab, line
/// feed, vertical tab, form feed, carriage return).
fn is_ws(b: u8) -> bool {
    b == b' ' || (b'\t'..=b'\r').contains(&b)
}

fn trim_ws(mut t: &[u8]) -> &[u8] {
    while let [first, rest @ ..] = t {
        if !is_ws(*first) {
            break;
        }
        t = rest;
    }
    while let [rest @ .., last] = t {
        if !is_ws(*last) {
            break;
        }
        t = rest;
    }
    t
}

/// What one data line gives: a record, a line to skip (and count), or a
/// malformed line.
fn handle(
    fields: Result<&[i64; SWF_FIELDS], String>,
    number: usize,
    file: &str,
    opts: &SwfOptions,
    seen: &mut SeenJobs,
    skipped: &mut SwfSkipped,
    sink: &mut impl FnMut(SwfRecord),
) -> Result<(), SwfError> {
    let record = fields.and_then(|f| {
        let r = record_of(f);
        if r.status >= 2 && r.status <= 4 {
            return Ok(Line::Partial);
        }
        if f[0] <= 0 || r.submit < 0 {
            return Ok(Line::Unknown);
        }
        in_range(f)?;
        if seen.insert(r.job) {
            Ok(Line::Job(r))
        } else {
            Err(format!("duplicate job number {}", r.job))
        }
    });
    match record {
        Ok(Line::Job(r)) => {
            if opts.min_job_id.is_none_or(|m| r.job >= m) {
                sink(r);
            }
        }
        Ok(Line::Partial) => skipped.partial += 1,
        Ok(Line::Unknown) => skipped.unknown += 1,
        Err(_) if opts.skip_malformed => skipped.malformed += 1,
        Err(what) => {
            return Err(SwfError::Malformed {
                file: file.to_string(),
                line: number,
                what,
            })
        }
    }
    Ok(())
}

enum Line {
    Job(SwfRecord),
    Partial,
    Unknown,
}

/// Job numbers seen so far: a bit per number for the usual dense counters,
/// a set for numbers beyond.
#[derive(Default)]
struct SeenJobs {
    bits: Vec<u64>,
    sparse: std::collections::HashSet<u64>,
}

impl SeenJobs {
    /// Job numbers up to this are kept as bits (at most 32 MB of them).
    const DENSE: u64 = 1 << 28;

    /// Adds `job`; whether it was new.
    fn insert(&mut self, job: u64) -> bool {
        if job >= Self::DENSE {
            return self.sparse.insert(job);
        }
        let (word, bit) = ((job / 64) as usize, job % 64);
        if word >= self.bits.len() {
            self.bits.resize((word + 1).next_power_of_two(), 0);
        }
        let new = self.bits[word] & (1 << bit) == 0;
        self.bits[word] |= 1 << bit;
        new
    }
}

/// A header line of line `number`; a number out of range is an error.
fn header_line(h: &str, header: &mut SwfHeader, file: &str, number: usize) -> Result<(), SwfError> {
    parse_header_line(h, header).map_err(|what| SwfError::Malformed {
        file: file.to_string(),
        line: number,
        what,
    })
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

/// The 18 fields of an ASCII data line, without allocating: whitespace
/// separated integers, or (some archive logs write fractional values, e.g.
/// CPU time) decimal numbers rounded to the nearest integer. One pass over
/// the bytes for plain integers; any other token is parsed as text.
fn parse_fields(text: &[u8]) -> Result<[i64; SWF_FIELDS], String> {
    let mut f = [0i64; SWF_FIELDS];
    let mut n = 0;
    let mut i = 0;
    let len = text.len();
    while i < len {
        if is_ws(text[i]) {
            i += 1;
            continue;
        }
        if n >= SWF_FIELDS {
            return Err(format!("more than {SWF_FIELDS} fields"));
        }
        let start = i;
        let neg = text[i] == b'-';
        if neg || text[i] == b'+' {
            i += 1;
        }
        let digits = i;
        let mut v = 0i64;
        while i < len {
            let d = text[i].wrapping_sub(b'0');
            if d > 9 {
                break;
            }
            v = v.wrapping_mul(10).wrapping_add(i64::from(d));
            i += 1;
        }
        let plain = (i == len || is_ws(text[i])) && i > digits && i - digits <= 18;
        f[n] = if plain {
            if neg {
                -v
            } else {
                v
            }
        } else {
            while i < len && !is_ws(text[i]) {
                i += 1;
            }
            // ASCII, hence UTF-8.
            number_of(std::str::from_utf8(&text[start..i]).unwrap_or(""), n)?
        };
        n += 1;
    }
    if n != SWF_FIELDS {
        return Err(format!("{n} fields, expected {SWF_FIELDS}"));
    }
    Ok(f)
}

/// [`parse_fields`] for text with non-ASCII characters (Unicode whitespace
/// separates fields, as `str::split_whitespace` does).
fn parse_fields_str(text: &str) -> Result<[i64; SWF_FIELDS], String> {
    let mut f = [0i64; SWF_FIELDS];
    let mut n = 0;
    for (i, tok) in text.split_whitespace().enumerate() {
        if i >= SWF_FIELDS {
            return Err(format!("more than {SWF_FIELDS} fields"));
        }
        f[i] = number_of(tok, i)?;
        n = i + 1;
    }
    if n != SWF_FIELDS {
        return Err(format!("{n} fields, expected {SWF_FIELDS}"));
    }
    Ok(f)
}

/// Field `i` (0-based) as an integer: an integer as such, a decimal number
/// rounded to the nearest integer.
fn number_of(tok: &str, i: usize) -> Result<i64, String> {
    match tok.parse::<i64>() {
        Ok(v) => Ok(v),
        Err(_) => match tok.parse::<f64>() {
            // Within ±2^62: the cast cannot saturate.
            Ok(v) if v.is_finite() && v.abs() < 4.6e18 => Ok(v.round() as i64),
            Ok(_) => Err(format!("field {} out of range: '{tok}'", i + 1)),
            _ => Err(format!("field {} is not a number: '{tok}'", i + 1)),
        },
    }
}

/// The times and sizes the replay adds and multiplies are within the
/// limits (-1: unknown).
fn in_range(f: &[i64; SWF_FIELDS]) -> Result<(), String> {
    use arches_core::limits::{check, MAX_TIME, MAX_TOTAL_PROCS, MAX_WALLTIME};
    // One test for the usual line; the checks below name what is wrong.
    let within = |v: i64, lo: i64, hi: i64| v.wrapping_sub(lo) as u64 <= (hi - lo) as u64;
    let procs = i64::from(MAX_TOTAL_PROCS);
    if within(f[1], 0, MAX_TIME)
        & within(f[3], -1, MAX_WALLTIME)
        & within(f[8], -1, MAX_WALLTIME)
        & within(f[4], -1, procs)
        & within(f[7], -1, procs)
    {
        return Ok(());
    }
    check("submit time", f[1], 0..=MAX_TIME)?;
    check("run time", f[3], -1..=MAX_WALLTIME)?;
    check("requested time", f[8], -1..=MAX_WALLTIME)?;
    let procs = -1..=i64::from(MAX_TOTAL_PROCS);
    check("allocated processors", f[4], procs.clone())?;
    check("requested processors", f[7], procs)?;
    Ok(())
}

fn record_of(f: &[i64; SWF_FIELDS]) -> SwfRecord {
    SwfRecord {
        job: f[0].max(0) as u64,
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
    }
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

/// A trace job as the simulator keeps it until its submission: 64 bytes,
/// no allocation; the credentials are numbers (SWF fields 12, 13 and 15,
/// -1 = none) and the processor count is capped at the machine only when
/// the job is submitted ([`TraceJob::procs_on`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TraceJob {
    pub id: u64,
    /// Seconds after the trace start.
    pub submit: i64,
    pub walltime: i64,
    pub runtime: i64,
    pub user: i64,
    pub group: i64,
    pub queue: i64,
    /// Processors as the trace gives them (at least 1).
    pub procs: u32,
    pub placeholder: bool,
}

impl TraceJob {
    /// Processors on a machine of `cap` processors (pyss caps at the
    /// machine size).
    pub fn procs_on(&self, cap: u32) -> u32 {
        self.procs.min(cap.max(1))
    }

    /// The job as [`to_jobs`] gives it for a machine of `cap` processors.
    pub fn to_sim_job(&self, cap: u32) -> SimJob {
        let mut j = SimJob::new(
            self.id,
            self.submit,
            self.procs_on(cap),
            self.walltime,
            self.runtime,
        );
        j.placeholder = self.placeholder;
        if self.user >= 0 {
            j.user = format!("user{}", self.user);
        }
        if self.group >= 0 {
            j.group = format!("group{}", self.group);
        }
        if self.queue >= 0 {
            j.class = Some(format!("queue{}", self.queue));
        }
        j
    }
}

/// A whole trace in compact form, sorted by submit time then job number:
/// what `moab simulate` reads once and replays (also shared by the
/// configurations of a sweep). [`TraceJob::to_sim_job`] of every job gives
/// [`to_jobs`]'s jobs.
#[derive(Debug, Clone, Default)]
pub struct Trace {
    pub header: SwfHeader,
    pub jobs: Vec<TraceJob>,
    /// Lines skipped (malformed ones only with `skip_malformed`).
    pub skipped: SwfSkipped,
    /// Records the sanitising filter dropped.
    pub dropped: usize,
}

impl Trace {
    /// Jobs larger than a machine of `cap` processors (capped at it).
    pub fn capped(&self, cap: u32) -> usize {
        let cap = cap.max(1);
        self.jobs.iter().filter(|j| j.procs > cap).count()
    }
}

/// Reads an SWF file (plain or `.gz`) into the compact [`Trace`].
pub fn read_trace(path: &Path, opts: &SwfOptions) -> Result<Trace, SwfError> {
    let file = path.display().to_string();
    let reader = open_maybe_gz(path).map_err(|source| SwfError::Io {
        file: file.clone(),
        source,
    })?;
    parse_trace(reader, &file, opts)
}

/// Parses SWF text into the compact [`Trace`]; `file` names the source in
/// errors.
pub fn parse_trace(reader: impl BufRead, file: &str, opts: &SwfOptions) -> Result<Trace, SwfError> {
    let mut t = Trace::default();
    let mut jobs = Vec::new();
    let mut dropped = 0;
    scan(
        reader,
        file,
        opts,
        &mut t.header,
        &mut t.skipped,
        |r| match trace_job(&r, opts) {
            Some(j) => jobs.push(j),
            None => dropped += 1,
        },
    )?;
    // Nearly always sorted already (SWF lines are in submit order).
    if !jobs.is_sorted_by_key(|j| (j.submit, j.id)) {
        jobs.sort_by_key(|j| (j.submit, j.id));
    }
    t.jobs = jobs;
    t.dropped = dropped;
    Ok(t)
}

/// [`to_jobs`]'s conversion of one record, before the machine's cap
/// (`None`: the sanitising filter drops it).
fn trace_job(r: &SwfRecord, opts: &SwfOptions) -> Option<TraceJob> {
    let procs = u32::try_from(r.alloc_procs.max(1)).unwrap_or(u32::MAX);
    let (walltime, runtime, placeholder) = if opts.sanitize {
        if r.run <= 0 || r.alloc_procs <= 0 || r.req_time <= 0 {
            return None;
        }
        (r.req_time, r.run.min(r.req_time), false)
    } else if r.run <= 0 || r.alloc_procs <= 0 {
        (1, 1, true)
    } else {
        let estimate = r.req_time.max(r.run).max(1);
        (estimate, r.req_time.min(r.run).max(1).min(estimate), false)
    };
    Some(TraceJob {
        id: r.job,
        submit: r.submit,
        walltime,
        runtime,
        user: r.user,
        group: r.group,
        queue: r.queue,
        procs,
        placeholder,
    })
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

    /// The compact trace gives exactly `to_jobs`'s jobs, for both
    /// conversions and any machine size.
    #[test]
    fn compact_trace_equals_to_jobs() {
        for opts in [
            SwfOptions::default(),
            SwfOptions {
                sanitize: true,
                ..SwfOptions::default()
            },
            SwfOptions {
                min_job_id: Some(3),
                ..SwfOptions::default()
            },
        ] {
            let t = parse_swf(TRACE.as_bytes(), "t.swf", &opts).unwrap();
            let compact = parse_trace(TRACE.as_bytes(), "t.swf", &opts).unwrap();
            assert_eq!(compact.header, t.header);
            for cap in [1, 3, 8, 64] {
                let c = to_jobs(&t.records, cap, &opts);
                let jobs: Vec<SimJob> = compact.jobs.iter().map(|j| j.to_sim_job(cap)).collect();
                assert_eq!(jobs, c.jobs, "{opts:?} on {cap}");
                assert_eq!(compact.capped(cap), c.capped);
                assert_eq!(compact.dropped, c.dropped);
            }
        }
    }

    /// -1 means "unknown" in any SWF field: an unknown job number or submit
    /// time skips the job (counted), status 2-4 partial lines are skipped in
    /// favour of their job's summary line (counted), the other unknowns get
    /// pyss's defaults; nothing of that is an error.
    #[test]
    fn unknown_fields_and_partial_lines_are_skipped_and_counted() {
        let text = "; MaxProcs: 8\n\
            1 0 5 100 4 -1 -1 4 200 -1 1 3 2 -1 1 -1 -1 -1\n\
            2 -1 5 100 4 -1 -1 4 200 -1 1 3 2 -1 1 -1 -1 -1\n\
            -1 7 5 100 4 -1 -1 4 200 -1 1 3 2 -1 1 -1 -1 -1\n\
            3 9 0 300 2 -1 -1 2 400 -1 1 3 2 -1 1 -1 -1 -1\n\
            3 9 0 100 2 -1 -1 2 400 -1 2 3 2 -1 1 -1 -1 -1\n\
            3 9 50 200 2 -1 -1 2 400 -1 3 3 2 -1 1 -1 -1 -1\n\
            4 12 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1\n";
        let t = parse_swf(text.as_bytes(), "u.swf", &SwfOptions::default()).unwrap();
        assert_eq!(
            t.skipped,
            SwfSkipped {
                malformed: 0,
                unknown: 2,
                partial: 2,
            }
        );
        let ids: Vec<u64> = t.records.iter().map(|r| r.job).collect();
        assert_eq!(ids, vec![1, 3, 4]);
        let jobs = to_jobs(&t.records, 8, &SwfOptions::default()).jobs;
        // Job 3 is its summary line; job 4 knows nothing but its submit
        // time: a 1-second placeholder on 1 processor, no credentials.
        assert_eq!((jobs[1].walltime, jobs[1].runtime), (400, 300));
        assert!(jobs[2].placeholder && jobs[2].procs == 1 && jobs[2].user == "u");
        let compact = parse_trace(text.as_bytes(), "u.swf", &SwfOptions::default()).unwrap();
        assert_eq!(compact.skipped, t.skipped);
        assert_eq!(compact.jobs.len(), 3);
    }

    #[test]
    fn fractional_values_signs_and_unicode_whitespace_parse_as_before() {
        let line = "1 0.4 5 99.5 +4 -1 -1 4 2e2 -1 1 3 2 -1 1 -1 -1 -1\n";
        let t = parse_swf(line.as_bytes(), "f.swf", &SwfOptions::default()).unwrap();
        let r = t.records[0];
        assert_eq!(
            (r.submit, r.run, r.alloc_procs, r.req_time),
            (0, 100, 4, 200)
        );
        // A no-break space separates fields like any whitespace.
        let nbsp = "1\u{a0}0 5 100 4 -1 -1 4 200 -1 1 3 2 -1 1 -1 -1 -1\n";
        let t = parse_swf(nbsp.as_bytes(), "n.swf", &SwfOptions::default()).unwrap();
        assert_eq!(t.records[0].run, 100);
        let e = parse_swf(&b"1 0 \xff\n"[..], "b.swf", &SwfOptions::default()).unwrap_err();
        assert!(e.to_string().starts_with("b.swf: "), "{e}");
        let long = "1 0 5 100 4 -1 -1 4 200 -1 1 3 2 -1 1 -1 -1 -1 7\n";
        let e = parse_swf(long.as_bytes(), "l.swf", &SwfOptions::default()).unwrap_err();
        assert_eq!(e.to_string(), "l.swf:1: more than 18 fields");
    }

    /// `text` in a scan buffer (with the padding the fast path reads).
    fn padded(text: &[u8]) -> Vec<u8> {
        let mut buf = text.to_vec();
        buf.resize(text.len() + PAD, 0);
        buf
    }

    /// The fast path on the first line of `text`: `None`, or its fields,
    /// which must then be exactly the general way's, and the line feed.
    fn fast(text: &[u8]) -> Option<[i64; SWF_FIELDS]> {
        let buf = padded(text);
        let mut f = [0i64; SWF_FIELDS];
        let end = fast_line(&buf, 0, text.len(), &mut f)?;
        assert_eq!(text[end], b'\n', "{:?}", String::from_utf8_lossy(text));
        let line = trim_ws(&text[..end]);
        assert!(line.is_ascii() && !line.starts_with(b";"));
        assert_eq!(
            parse_fields(line),
            Ok(f),
            "{:?}",
            String::from_utf8_lossy(text)
        );
        Some(f)
    }

    const LINE: &str = "    1        0 964980  97225   56     -1    -1   56 210000    -1  1   1   1  -1 -1 -1 -1 -1";

    /// The fast path takes the usual data lines (any ASCII whitespace,
    /// signs, up to 16 digits) and gives the general way's fields.
    #[test]
    fn fast_path_takes_plain_lines() {
        let want = [
            1, 0, 964980, 97225, 56, -1, -1, 56, 210000, -1, 1, 1, 1, -1, -1, -1, -1, -1,
        ];
        for text in [
            format!("{LINE}\n"),
            format!("{LINE}   \n"),
            format!("{LINE}\r\n"),
            format!("\t{}\t\n", LINE.trim().replace("  ", "\t")),
            format!(
                "{}\n",
                LINE.split_whitespace().collect::<Vec<_>>().join(" ")
            ),
            format!(
                "{}\n",
                LINE.split_whitespace()
                    .collect::<Vec<_>>()
                    .join(" \x0b\x0c ")
            ),
            format!("{LINE}\nnext line\n"),
        ] {
            assert_eq!(fast(text.as_bytes()), Some(want), "{text:?}");
        }
        // Long numbers, negative ones, leading zeros, -0.
        let big = "1234567890123456 -1234567890123456 12345678 -12345678 123456789 \
            0000000000000007 -0 00 9999999999999999 1 2 3 4 5 6 7 8 -9\n";
        let f = fast(big.as_bytes()).unwrap();
        assert_eq!(f[0], 1_234_567_890_123_456);
        assert_eq!(f[1], -1_234_567_890_123_456);
        assert_eq!((f[2], f[3], f[4]), (12_345_678, -12_345_678, 123_456_789));
        assert_eq!((f[5], f[6], f[7], f[8]), (7, 0, 0, 9_999_999_999_999_999));
        assert_eq!(f[17], -9);
        // Every digit count from 1 to 16, at every alignment.
        for digits in 1..=16usize {
            for indent in 0..16 {
                let v = "9876543210123456"[..digits].to_string();
                let text = format!("{}{v} {}\n", " ".repeat(indent), ["-1"; 17].join(" "));
                let f = fast(text.as_bytes()).unwrap();
                assert_eq!(f[0], v.parse::<i64>().unwrap(), "{text:?}");
            }
        }
    }

    /// Everything else goes the general way (and gives its values or its
    /// error): decimal numbers, exponents, `+`, 17 digits or more, garbage,
    /// headers, blank lines, a wrong number of fields, non-ASCII text, a
    /// line longer than the window or not read whole.
    #[test]
    fn fast_path_leaves_the_rest_to_the_general_way() {
        let rest = ["-1"; 17].join(" ");
        for first in [
            "1e3",
            "1.",
            ".5",
            "-.5",
            "1.2.3",
            "1.1234567",
            "1000000000.5",
            "1..2",
            "1.-2",
            "+4",
            "12345678901234567",
            "123456789012345678",
            "1234567890123456789",
            "x",
            "1x",
            "-",
            "--1",
            "1-2",
            "-x",
            "0x10",
            "\u{a0}1",
        ] {
            let text = format!("{first} {rest}\n");
            assert_eq!(fast(text.as_bytes()), None, "{text:?}");
        }
        let seventeen = format!("{rest}\n");
        let nineteen = format!("1 {rest} 2\n");
        let long = format!("{}{LINE}\n", " ".repeat(WINDOW));
        for text in [
            "; MaxProcs: 8\n",
            "\n",
            "   \n",
            &seventeen,
            &nineteen,
            &long,
            LINE,
            &format!("{LINE}\u{a0}\n"),
            &format!("{LINE}\0\n"),
        ] {
            assert_eq!(fast(text.as_bytes()), None, "{text:?}");
        }
        // Not read whole: the line feed is beyond the bytes read.
        let text = format!("{LINE}\n");
        let buf = padded(text.as_bytes());
        let mut f = [0; SWF_FIELDS];
        assert_eq!(fast_line(&buf, 0, text.len() - 1, &mut f), None);
        assert_eq!(fast_line(&buf, 0, text.len(), &mut f), Some(text.len() - 1));
    }

    /// The same bytes give the same trace, the same errors and the same
    /// line numbers, however the reads split them (lines cut by a block
    /// boundary go the general way, then the fast path again).
    #[test]
    fn values_and_errors_do_not_depend_on_the_fast_path() {
        struct Trickle<'a>(&'a [u8], usize);
        impl Read for Trickle<'_> {
            fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
                let n = self.1.min(self.0.len()).min(out.len());
                out[..n].copy_from_slice(&self.0[..n]);
                self.0 = &self.0[n..];
                Ok(n)
            }
        }
        let good = "; MaxProcs: 100\n\
            1 0 5 100 4 -1 -1 4 200 -1 1 3 2 -1 1 -1 -1 -1\r\n\
            2\t10 0 300 16 -1 -1 16 100 -1 1 3 2 -1 1 -1 -1 -1   \n\
            \n\
            3 10 0.4 1e2 2 -1 -1 2 50.5 -1 5 3 2 -1 1 -1 -1 -1\n\
            4 5 0 -1.0 -1 -1 -1 2 50 -1 1 3 2 -1 1 -1 -1 -1\n\
            5 5 0 30 2 -1 -1 2 -1 -1 3 3 2 -1 1 -1 -1 -1\n\
            -1 5 0 30 2 -1 -1 2 -1 -1 1 3 2 -1 1 -1 -1 -1\n\
            6 7 0 30 2 -1 -1 2 -1 -1 1 3 2 -1 1 -1 -1 -1";
        let whole = parse_swf(good.as_bytes(), "g.swf", &SwfOptions::default()).unwrap();
        assert_eq!(whole.header.max_procs, Some(100));
        let runs: Vec<i64> = whole.records.iter().map(|r| r.run).collect();
        assert_eq!(runs, vec![100, 300, 100, -1, 30]);
        let reqs: Vec<i64> = whole.records.iter().map(|r| r.req_time).collect();
        assert_eq!(reqs, vec![200, 100, 51, 50, -1]);
        assert_eq!((whole.skipped.partial, whole.skipped.unknown), (1, 1));
        for step in [1, 2, 3, 7, 16, 47, 48, 49, 50, 1000] {
            let t = parse_swf(
                BufReader::new(Trickle(good.as_bytes(), step)),
                "g.swf",
                &SwfOptions::default(),
            )
            .unwrap();
            assert_eq!(t.records, whole.records, "reads of {step}");
            assert_eq!(t.skipped, whole.skipped);
        }
        let line = "1 0 5 100 4 -1 -1 4 200 -1 1 3 2 -1 1 -1 -1 -1";
        for (bad, error) in [
            (
                "1 0 5 100 4 -1 -1 4 200 -1 1 3 2 -1 1 -1 -1",
                "17 fields, expected 18",
            ),
            (
                "1 0 x 100 4 -1 -1 4 200 -1 1 3 2 -1 1 -1 -1 -1",
                "field 3 is not a number: 'x'",
            ),
            (
                "1 0 5 100 4 -1 -1 4 200 -1 1 3 2 -1 1 -1 -1 -1 7",
                "more than 18 fields",
            ),
            (
                "1 0 5 1e300 4 -1 -1 4 200 -1 1 3 2 -1 1 -1 -1 -1",
                "field 4 out of range: '1e300'",
            ),
            (
                "1 0 5 12345678901234567890 4 -1 -1 4 200 -1 1 3 2 -1 1 -1 -1 -1",
                "field 4 out of range: '12345678901234567890'",
            ),
            (
                "1 0 5 1234567890123456 4 -1 -1 4 200 -1 1 3 2 -1 1 -1 -1 -1",
                "run time 1234567890123456 out of range (-1..3153600000)",
            ),
            (
                "1 999999999999 5 100 4 -1 -1 4 200 -1 1 3 2 -1 1 -1 -1 -1",
                "submit time 999999999999 out of range (0..253402300799)",
            ),
            (
                "1 0 5 100 -2 -1 -1 4 200 -1 1 3 2 -1 1 -1 -1 -1",
                "allocated processors -2 out of range (-1..2147483648)",
            ),
            (line, "duplicate job number 1"),
        ] {
            let text = format!("{line}\n; comment\n{bad}\n{line}\n");
            for step in [1, 5, 1000] {
                let e = parse_swf(
                    BufReader::new(Trickle(text.as_bytes(), step)),
                    "e.swf",
                    &SwfOptions::default(),
                )
                .unwrap_err();
                assert_eq!(
                    e.to_string(),
                    format!("e.swf:3: {error}"),
                    "reads of {step}"
                );
            }
        }
    }

    /// Random lines of the characters that matter: whatever the fast path
    /// takes, the general way gives the same fields for (checked in
    /// `fast`), and most well-formed lines are taken.
    #[test]
    fn fast_path_agrees_with_the_general_way_on_random_lines() {
        // (Dots too: `fast` checks the values against the general way's.)
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = move |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        let alphabet: &[&[u8]] = &[
            b" ",
            b" ",
            b"  ",
            b"\t",
            b"\r",
            b"-",
            b"+",
            b".",
            b"e",
            b"x",
            b";",
            b"\n",
            b"0",
            b"1",
            b"7",
            b"9",
            b"-1",
            b"123456789",
            b"\xc2\xa0",
            b"\0",
        ];
        let mut taken = 0;
        for _ in 0..20_000 {
            let mut text = Vec::new();
            if next(2) == 0 {
                // Mostly well formed: 17 to 19 fields, some noise.
                for k in 0..17 + next(3) {
                    if k > 0 || next(2) == 0 {
                        text.extend_from_slice(alphabet[next(5) as usize]);
                    }
                    if next(20) == 0 {
                        text.extend_from_slice(alphabet[next(alphabet.len() as u64) as usize]);
                    }
                    if next(3) == 0 {
                        text.push(b'-');
                    }
                    let most = if next(10) == 0 { 20 } else { 6 };
                    for _ in 0..1 + next(most) {
                        text.push(b'0' + next(10) as u8);
                    }
                }
            } else {
                for _ in 0..next(60) {
                    text.extend_from_slice(alphabet[next(alphabet.len() as u64) as usize]);
                }
            }
            text.push(b'\n');
            taken += usize::from(fast(&text).is_some());
        }
        assert!(taken > 500, "{taken}");
    }

    #[test]
    fn byte_classes_and_digit_reading() {
        let all: Vec<u8> = (0..=255).collect();
        for chunk in all.chunks(16) {
            let c: &[u8; 16] = chunk.try_into().unwrap();
            assert_eq!(classes16(c), classes16_bytes(c));
        }
        let mut w = [b' '; PAD];
        for v in [
            0u64,
            1,
            9,
            10,
            99,
            100,
            12345678,
            87654321,
            123456789,
            9999999999999999,
        ] {
            let s = v.to_string();
            w[3..3 + s.len()].copy_from_slice(s.as_bytes());
            assert_eq!(plain_digits(&w, 3), Some((v, s.len())), "{s}");
            w[3..3 + s.len()].fill(b' ');
        }
        w[3..20].fill(b'1');
        assert_eq!(plain_digits(&w, 3), None, "17 digits");
    }

    /// Decimals (SDSC and CTC write one in field 6 on half their lines)
    /// round exactly as `f64` parsing and rounding does.
    #[test]
    fn fast_path_rounds_short_decimals_as_the_general_way() {
        let rest = ["-1"; 17].join(" ");
        for (tok, want) in [
            ("7.38", 7),
            ("259.00", 259),
            ("0.5", 1),
            ("-0.5", -1),
            ("-0.4", 0),
            ("2.5", 3),
            ("-2.5", -3),
            ("2.4999", 2),
            ("2.500001", 3),
            ("999999999.999999", 1_000_000_000),
            ("999999999.499999", 999_999_999),
            ("12345678.5", 12_345_679),
            ("1234567890123456", 1_234_567_890_123_456),
        ] {
            let text = format!("{rest} {tok}\n");
            let f = fast(text.as_bytes()).unwrap_or_else(|| panic!("{tok} not taken"));
            assert_eq!(f[17], want, "{tok}");
            let text = format!("{tok} {rest}\n");
            assert_eq!(fast(text.as_bytes()).map(|f| f[0]), Some(want), "{tok}");
        }
        // Every whole part and decimal count taken, against f64 rounding.
        for whole in ["0", "1", "99", "12345", "99999999", "999999999"] {
            for decimals in [
                "0", "4", "5", "49", "50", "51", "499", "500", "999999", "500000",
            ] {
                let tok = format!("{whole}.{decimals}");
                let text = format!("{tok} {rest}\n");
                let want = tok.parse::<f64>().unwrap().round() as i64;
                assert_eq!(fast(text.as_bytes()).map(|f| f[0]), Some(want), "{tok}");
            }
        }
    }
}
