//! Synthetic workloads: the Lublin & Feitelson model ("The workload on
//! parallel supercomputers: modeling the characteristics of rigid jobs",
//! JPDC 63(11), 2003), as its authors' reference program `m_lublin99.c`
//! implements it, written as SWF.
//!
//! Two job streams, batch and interactive (the reference's default,
//! `INCLUDE_JOBS_TYPE 1`; `--gen-batch-only` keeps the batch stream alone),
//! each with its own parameters ([`BATCH`], [`INTERACTIVE`]). Per job:
//! - **size**: one uniform draw u decides: serial when u <= `serial_prob`;
//!   otherwise log2(size) is drawn from a two-stage uniform — U(`ulow`,
//!   `umed`) with probability `uprob`, else U(`umed`, `uhi`) — and rounded to
//!   an integer (a power of two) when u <= `serial_prob` + `pow2_prob` (one
//!   cumulative draw: about 94.5 % of parallel batch jobs are powers of two),
//!   the size being round(2^x). The reference is fitted to a 128-processor
//!   machine (batch `uhi` 7, `umed` 5; interactive `uhi` 5.5, `umed` 3);
//!   other machine sizes shift `umed` and `uhi` by log2(P) − 7 (`ulow` stays:
//!   the smallest parallel job has 2 processors) and sizes are capped at P;
//! - **run time**: log(run time) follows a hyper-gamma distribution,
//!   Gamma(`a1`, `b1`) with probability p and Gamma(`a2`, `b2`) otherwise,
//!   where p = `pa` × size + `pb` clamped to [0, 1] (larger jobs more often
//!   come from the long component: run time grows with size); a draw above
//!   [`MAX_LOG_RUNTIME`] (e^12 s, about 45 hours) is redrawn; run time =
//!   e^x truncated to whole seconds;
//! - **arrivals**: log(inter-arrival time) follows Gamma(`aarr` × `arar`,
//!   `barr`) (`arar` turns the rush-hour fit into an all-day one), redrawn
//!   above [`MAX_LOG_INTERARRIVAL`]; the gap is spent in "points" across the
//!   48 half-hour buckets of the day, bucket k costing its weight: the
//!   Gamma(`anum`, `bnum`) probability of [i − 0.5, i + 0.5] for i = k + 1
//!   (k ≥ 10) or k + 49 (k < 10) — the reference's cyclic day starting at
//!   bucket 11 — normalised to mean 1, so busy buckets receive more jobs.
//!   The replay starts at midnight. The next job is the one of the stream
//!   whose next arrival comes first.
//!
//! **Target load.** The reference changes the load through the arrival
//! parameters; here every inter-arrival gap of both streams is multiplied by
//! one factor (a change of arrival rate: the daily cycle, the burstiness and
//! the job mix stay), found by fixed-point iteration so that the offered
//! load Σ(run × size) / (P × last arrival) — the reference's definition —
//! equals the target.
//!
//! **Additions** (the model has none of these): requested times are the run
//! time rounded up to the next usual limit ([`REQUEST_STEPS`]), users are
//! drawn uniformly from [`USERS`], and the header's `UnixStartTime` is
//! [`START_EPOCH`] (a midnight, UTC) so that served simulations show
//! plausible dates. Interactive jobs are written with queue number 0 and
//! batch jobs with 1 (the SWF convention; the reference writes the same).
//!
//! The PRNG is a SplitMix64 generator written here (a dozen lines), one per
//! stream: the output depends only on the seed, on every platform and every
//! version, which a general-purpose crate does not promise across releases.

use std::fmt::Write as _;

/// Generator inputs.
#[derive(Debug, Clone, PartialEq)]
pub struct GenerateParams {
    pub jobs: usize,
    pub machine_procs: u32,
    /// Offered load to aim for (Σ run × procs / (P × last arrival)), > 0.
    pub target_load: f64,
    pub seed: u64,
    /// Also generate the interactive stream (the reference's default).
    pub interactive: bool,
}

/// One job type's parameters, from `m_lublin99.c`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TypeParams {
    /// Probability that a job is serial.
    pub serial_prob: f64,
    /// Probability (cumulative with `serial_prob`, one draw) that a parallel
    /// job's size is a power of two.
    pub pow2_prob: f64,
    /// log2 of the smallest parallel size (the two-stage uniform's low end).
    pub ulow: f64,
    /// The stage boundary and the high end for a 128-processor machine.
    pub umed_128: f64,
    pub uhi_128: f64,
    /// Probability of the first (small) stage.
    pub uprob: f64,
    /// Hyper-gamma of log(run time): components (`a1`, `b1`) and (`a2`, `b2`).
    pub a1: f64,
    pub b1: f64,
    pub a2: f64,
    pub b2: f64,
    /// Mixing probability p = `pa` × size + `pb`.
    pub pa: f64,
    pub pb: f64,
    /// log(inter-arrival time) ~ Gamma(`aarr` × `arar`, `barr`).
    pub aarr: f64,
    pub barr: f64,
    /// Arrive-rush-to-all ratio.
    pub arar: f64,
    /// Daily cycle: bucket weights from the Gamma(`anum`, `bnum`) cdf.
    pub anum: f64,
    pub bnum: f64,
}

/// Batch jobs (`*_BATCH` in the reference).
pub const BATCH: TypeParams = TypeParams {
    serial_prob: 0.2927,
    pow2_prob: 0.6686,
    ulow: 1.2,
    umed_128: 5.0,
    uhi_128: 7.0,
    uprob: 0.875,
    a1: 6.57,
    b1: 0.823,
    a2: 639.1,
    b2: 0.0156,
    pa: -0.003,
    pb: 0.6986,
    aarr: 6.0415,
    barr: 0.8531,
    arar: 1.0519,
    anum: 6.1271,
    bnum: 5.2740,
};

/// Interactive jobs (`*_ACTIVE` in the reference).
pub const INTERACTIVE: TypeParams = TypeParams {
    serial_prob: 0.1541,
    pow2_prob: 0.625,
    ulow: 1.0,
    umed_128: 3.0,
    uhi_128: 5.5,
    uprob: 0.705,
    a1: 3.8351,
    b1: 0.6605,
    a2: 7.073,
    b2: 0.6856,
    pa: -0.0118,
    pb: 0.9156,
    aarr: 6.5510,
    barr: 0.6621,
    arar: 0.9797,
    anum: 8.9186,
    bnum: 3.6680,
};

/// log(run time) above this is redrawn (e^12 s ≈ 45.2 h; `TOO_MUCH_TIME`).
pub const MAX_LOG_RUNTIME: f64 = 12.0;
/// log(inter-arrival) above this is redrawn (e^13 s ≈ 5 days).
pub const MAX_LOG_INTERARRIVAL: f64 = 13.0;
/// Half-hour buckets of the day.
pub const BUCKETS: usize = 48;
/// Seconds in a bucket.
pub const BUCKET_SECS: f64 = 1800.0;
/// The reference's day runs from this bucket number (`CYCLIC_DAY_START`).
pub const CYCLIC_DAY_START: usize = 11;
/// Round requested times (s): 5 min … 48 h (every run time is below 45.2 h).
pub const REQUEST_STEPS: [i64; 11] = [
    300, 900, 1800, 3600, 7200, 14400, 28800, 43200, 86400, 129600, 172800,
];
/// Simulated users (uniform draw).
pub const USERS: u64 = 64;
/// `UnixStartTime` written in the header: 2026-01-01 00:00:00 UTC (the
/// model starts at midnight).
pub const START_EPOCH: i64 = 1_767_225_600;

/// Generates an SWF workload.
pub fn generate(p: &GenerateParams) -> Result<String, String> {
    let jobs = generate_jobs(p)?;
    let mut out = String::with_capacity(jobs.len() * 64 + 512);
    let _ = writeln!(out, "; Version: 2.2");
    let _ = writeln!(
        out,
        "; Note: synthetic workload, Lublin & Feitelson (2003) model (m_lublin99), seed {}, \
         target load {}, {}",
        p.seed,
        p.target_load,
        if p.interactive {
            "batch and interactive jobs"
        } else {
            "batch jobs only"
        }
    );
    let _ = writeln!(out, "; UnixStartTime: {START_EPOCH}");
    let _ = writeln!(out, "; TimeZoneString: UTC");
    let _ = writeln!(out, "; MaxJobs: {}", p.jobs);
    let _ = writeln!(out, "; MaxRecords: {}", p.jobs);
    let _ = writeln!(out, "; MaxProcs: {}", p.machine_procs);
    let _ = writeln!(out, "; MaxNodes: {}", p.machine_procs);
    let _ = writeln!(out, "; MaxRuntime: {}", MAX_LOG_RUNTIME.exp() as i64);
    let _ = writeln!(out, "; Queues: 0 interactive, 1 batch");
    for (i, j) in jobs.iter().enumerate() {
        let queue = u8::from(!j.interactive);
        let _ = writeln!(
            out,
            "{} {} -1 {} {} -1 -1 {} {} -1 1 {} 1 -1 {queue} 1 -1 -1",
            i + 1,
            j.submit,
            j.run,
            j.size,
            j.size,
            j.request,
            j.user
        );
    }
    Ok(out)
}

/// One generated job.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GenJob {
    /// Seconds after the start (midnight).
    pub submit: i64,
    pub size: u32,
    pub run: i64,
    pub request: i64,
    pub user: u64,
    pub interactive: bool,
}

/// Generates the jobs, in arrival order.
pub fn generate_jobs(p: &GenerateParams) -> Result<Vec<GenJob>, String> {
    if p.machine_procs < 2 {
        return Err("the machine needs at least 2 processors".into());
    }
    if !(p.target_load.is_finite() && p.target_load > 0.0) {
        return Err(format!("target load must be > 0, got {}", p.target_load));
    }
    let mut streams = vec![Stream::new(BATCH, p.machine_procs, p.seed, 1)];
    if p.interactive {
        streams.push(Stream::new(INTERACTIVE, p.machine_procs, p.seed, 2));
    }
    if p.jobs == 0 {
        return Ok(Vec::new());
    }
    // Find the gap factor giving the target load (load ∝ 1 / factor, up to
    // the daily cycle and the stream interleaving).
    let mut factor = 1.0;
    let mut best = (f64::INFINITY, factor);
    for _ in 0..60 {
        let load = offered_load(&mut streams, factor, p);
        let err = (load / p.target_load - 1.0).abs();
        if err < best.0 {
            best = (err, factor);
        }
        if err < 1e-6 || load <= 0.0 {
            break;
        }
        factor *= load / p.target_load;
    }
    let factor = best.1;
    let mut out = Vec::with_capacity(p.jobs);
    merge(&mut streams, factor, p.jobs, |s, k, t| {
        let r = s.draws[k];
        out.push(GenJob {
            submit: t as i64,
            size: r.size,
            run: r.run,
            request: REQUEST_STEPS
                .iter()
                .copied()
                .find(|x| *x >= r.run)
                .unwrap_or(r.run),
            user: r.user,
            interactive: s.interactive,
        });
    });
    Ok(out)
}

/// Offered load of the first `p.jobs` jobs with gaps multiplied by `factor`.
fn offered_load(streams: &mut [Stream], factor: f64, p: &GenerateParams) -> f64 {
    let mut work = 0.0;
    let mut last = 0.0f64;
    merge(streams, factor, p.jobs, |s, k, t| {
        let r = s.draws[k];
        work += r.run as f64 * f64::from(r.size);
        last = last.max(t);
    });
    work / (f64::from(p.machine_procs) * last.max(1.0))
}

/// Replays the arrival processes of `streams` with gaps × `factor` and calls
/// `emit(stream, job index in the stream, arrival time)` for the first `n`
/// jobs in arrival order (ties go to the later stream, as the reference
/// prefers interactive jobs on ties).
fn merge(streams: &mut [Stream], factor: f64, n: usize, mut emit: impl FnMut(&Stream, usize, f64)) {
    let mut clocks: Vec<Clock> = streams.iter().map(|_| Clock::default()).collect();
    let mut next: Vec<usize> = vec![0; streams.len()];
    for (i, s) in streams.iter_mut().enumerate() {
        s.ensure(0);
        clocks[i].advance(&s.weights, s.draws[0].gap * factor);
    }
    for _ in 0..n {
        let mut pick = 0;
        for i in 1..streams.len() {
            if clocks[i].time <= clocks[pick].time {
                pick = i;
            }
        }
        let s = &mut streams[pick];
        let k = next[pick];
        emit(s, k, clocks[pick].time);
        next[pick] = k + 1;
        s.ensure(k + 1);
        clocks[pick].advance(&s.weights, s.draws[k + 1].gap * factor);
    }
}

/// The arrival clock of one stream (the reference's `calc_next_arrive`).
#[derive(Debug, Clone, Copy, Default)]
struct Clock {
    /// Current bucket of the day (the replay starts at midnight, bucket 0).
    bucket: usize,
    /// Points spent in the current bucket.
    points: f64,
    /// Fraction of the current bucket elapsed at the last arrival.
    reminder: f64,
    /// Seconds since the start.
    time: f64,
}

impl Clock {
    fn advance(&mut self, weights: &[f64; BUCKETS], gap_secs: f64) {
        self.points += gap_secs / BUCKET_SECS;
        let mut next = 0.0;
        while self.points > weights[self.bucket] {
            self.points -= weights[self.bucket];
            self.bucket = (self.bucket + 1) % BUCKETS;
            next += BUCKET_SECS;
        }
        let reminder = self.points / weights[self.bucket];
        next += BUCKET_SECS * (reminder - self.reminder);
        self.reminder = reminder;
        self.time += next;
    }
}

/// A job's draws, independent of the arrival rate.
#[derive(Debug, Clone, Copy)]
struct Draw {
    /// Inter-arrival gap before this job (s, before the load factor).
    gap: f64,
    size: u32,
    run: i64,
    user: u64,
}

/// One job stream: its parameters, daily-cycle weights and draws so far.
struct Stream {
    params: TypeParams,
    interactive: bool,
    weights: [f64; BUCKETS],
    ulow: f64,
    umed: f64,
    uhi: f64,
    machine: u32,
    rng: SplitMix64,
    draws: Vec<Draw>,
}

impl Stream {
    fn new(params: TypeParams, machine: u32, seed: u64, stream: u64) -> Stream {
        let shift = f64::from(machine).log2() - 7.0;
        let ulow = params.ulow;
        let uhi = (params.uhi_128 + shift).max(ulow);
        let umed = (params.umed_128 + shift).clamp(ulow, uhi);
        // Each stream's generator starts from the seed mixed with the stream.
        let mut mix = SplitMix64(seed ^ stream.wrapping_mul(0xA076_1D64_78BD_642F));
        Stream {
            params,
            interactive: stream == 2,
            weights: daily_weights(params.anum, params.bnum),
            ulow,
            umed,
            uhi,
            machine,
            rng: SplitMix64(mix.next()),
            draws: Vec::new(),
        }
    }

    /// Draws jobs up to index `k`.
    fn ensure(&mut self, k: usize) {
        while self.draws.len() <= k {
            let d = self.draw();
            self.draws.push(d);
        }
    }

    fn draw(&mut self) -> Draw {
        let p = self.params;
        let gap = loop {
            let g = gamma(&mut self.rng, p.aarr * p.arar, p.barr);
            if g <= MAX_LOG_INTERARRIVAL {
                break g.exp();
            }
        };
        let size = self.size();
        let mix = (p.pa * f64::from(size) + p.pb).clamp(0.0, 1.0);
        let log_run = loop {
            let g = if self.rng.uniform() <= mix {
                gamma(&mut self.rng, p.a1, p.b1)
            } else {
                gamma(&mut self.rng, p.a2, p.b2)
            };
            if g <= MAX_LOG_RUNTIME {
                break g;
            }
        };
        let run = (log_run.exp() as i64).max(1);
        let user = 1 + self.rng.next() % USERS;
        Draw {
            gap,
            size,
            run,
            user,
        }
    }

    /// The reference's `calc_number_of_nodes`, capped at the machine.
    fn size(&mut self) -> u32 {
        let p = self.params;
        let u = self.rng.uniform();
        if u <= p.serial_prob {
            return 1;
        }
        let (a, b) = if self.rng.uniform() <= p.uprob {
            (self.ulow, self.umed)
        } else {
            (self.umed, self.uhi)
        };
        let mut x = a + (b - a) * self.rng.uniform();
        if u <= p.serial_prob + p.pow2_prob {
            x = x.round();
        }
        (2f64.powf(x).round() as u32).clamp(1, self.machine)
    }
}

/// The reference's bucket weights (`arrive_init`): bucket (i − 1) mod 48
/// gets the Gamma(anum, bnum) probability of [i − 0.5, i + 0.5] for i in
/// `CYCLIC_DAY_START` .. `CYCLIC_DAY_START` + 48; normalised to mean 1.
pub fn daily_weights(anum: f64, bnum: f64) -> [f64; BUCKETS] {
    let mut w = [0.0; BUCKETS];
    for i in CYCLIC_DAY_START..CYCLIC_DAY_START + BUCKETS {
        let x = i as f64;
        w[(i - 1) % BUCKETS] = gamma_cdf(x + 0.5, anum, bnum) - gamma_cdf(x - 0.5, anum, bnum);
    }
    let mean = w.iter().sum::<f64>() / BUCKETS as f64;
    w.map(|x| x / mean)
}

/// The Gamma(shape, scale) cumulative distribution at `x`: the regularised
/// lower incomplete gamma function P(shape, x / scale), by its power series
/// below shape + 1 and its continued fraction (modified Lentz) above.
pub fn gamma_cdf(x: f64, shape: f64, scale: f64) -> f64 {
    let x = x / scale;
    if x <= 0.0 {
        return 0.0;
    }
    let log_prefix = -x + shape * x.ln() - ln_gamma(shape);
    if x < shape + 1.0 {
        let (mut term, mut sum, mut a) = (1.0 / shape, 1.0 / shape, shape);
        for _ in 0..10_000 {
            a += 1.0;
            term *= x / a;
            sum += term;
            if term.abs() < sum.abs() * 1e-15 {
                break;
            }
        }
        return (sum * log_prefix.exp()).clamp(0.0, 1.0);
    }
    let tiny = 1e-300;
    let mut b = x + 1.0 - shape;
    let mut c = 1.0 / tiny;
    let mut d = 1.0 / b;
    let mut h = d;
    for i in 1..10_000 {
        let an = -(i as f64) * (i as f64 - shape);
        b += 2.0;
        d = an * d + b;
        if d.abs() < tiny {
            d = tiny;
        }
        c = b + an / c;
        if c.abs() < tiny {
            c = tiny;
        }
        d = 1.0 / d;
        let delta = d * c;
        h *= delta;
        if (delta - 1.0).abs() < 1e-15 {
            break;
        }
    }
    (1.0 - log_prefix.exp() * h).clamp(0.0, 1.0)
}

/// ln Γ(x) for x > 0 (Lanczos, g = 7, 9 terms; relative error < 1e-13).
fn ln_gamma(x: f64) -> f64 {
    const G: f64 = 7.0;
    const C: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        // Reflection: Γ(x) Γ(1 − x) = π / sin(πx).
        let pi = std::f64::consts::PI;
        return (pi / (pi * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let mut a = C[0];
    let t = x + G + 0.5;
    for (i, c) in C.iter().enumerate().skip(1) {
        a += c / (x + i as f64);
    }
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + a.ln()
}

/// SplitMix64 (Steele, Lea & Flood 2014).
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    fn uniform(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Standard normal (Box–Muller).
    fn normal(&mut self) -> f64 {
        let u1 = 1.0 - self.uniform();
        let u2 = self.uniform();
        (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
    }
}

/// Gamma(shape, scale) by Marsaglia & Tsang (2000) (the reference sums
/// exponentials, Jain's method: the same distribution, but 639 logarithms
/// per draw for the batch run-time component).
fn gamma(rng: &mut SplitMix64, shape: f64, scale: f64) -> f64 {
    if shape < 1.0 {
        let u = 1.0 - rng.uniform();
        return gamma(rng, shape + 1.0, scale) * u.powf(1.0 / shape);
    }
    let d = shape - 1.0 / 3.0;
    let c = 1.0 / (9.0 * d).sqrt();
    loop {
        let x = rng.normal();
        let v = (1.0 + c * x).powi(3);
        if v <= 0.0 {
            continue;
        }
        let u = 1.0 - rng.uniform();
        if u.ln() < 0.5 * x * x + d - d * v + d * v.ln() {
            return d * v * scale;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::swf::{parse_swf, to_jobs, SwfOptions};

    fn params(seed: u64) -> GenerateParams {
        GenerateParams {
            jobs: 5000,
            machine_procs: 128,
            target_load: 0.7,
            seed,
            interactive: true,
        }
    }

    fn batch(jobs: usize, seed: u64) -> Vec<GenJob> {
        generate_jobs(&GenerateParams {
            jobs,
            interactive: false,
            ..params(seed)
        })
        .unwrap()
    }

    #[test]
    fn same_seed_same_workload_other_seed_other_workload() {
        assert_eq!(generate(&params(7)), generate(&params(7)));
        assert_ne!(generate(&params(7)), generate(&params(8)));
    }

    #[test]
    fn output_is_valid_swf_with_the_target_load() {
        let text = generate(&params(3)).unwrap();
        let t = parse_swf(text.as_bytes(), "gen", &SwfOptions::default()).unwrap();
        assert_eq!(t.header.max_procs, Some(128));
        assert_eq!(t.header.unix_start_time, Some(START_EPOCH));
        let jobs = to_jobs(&t.records, 128, &SwfOptions::default()).jobs;
        assert_eq!(jobs.len(), 5000);
        // The reference's definition: Σ run × size / (P × last arrival).
        let last = jobs.iter().map(|j| j.submit).max().unwrap() as f64;
        let work: f64 = jobs
            .iter()
            .map(|j| j.runtime as f64 * f64::from(j.procs))
            .sum();
        let load = work / (128.0 * last);
        assert!((load - 0.7).abs() < 0.01, "offered load {load}");
        assert!(jobs
            .iter()
            .all(|j| j.runtime <= j.walltime && j.procs <= 128));
        // Both streams, batch the majority at 128 processors.
        let interactive = t.records.iter().filter(|r| r.queue == 0).count();
        assert!(interactive > 0 && interactive < 5000, "{interactive}");
    }

    #[test]
    fn sizes_follow_the_reference_cumulative_power_of_two_draw() {
        let jobs = batch(20_000, 11);
        let n = jobs.len() as f64;
        let serial = jobs.iter().filter(|j| j.size == 1).count() as f64 / n;
        assert!(
            (serial - BATCH.serial_prob).abs() < 0.015,
            "serial {serial}"
        );
        let parallel: Vec<_> = jobs.iter().filter(|j| j.size > 1).collect();
        let pow2 = parallel.iter().filter(|j| j.size.is_power_of_two()).count() as f64
            / parallel.len() as f64;
        // P(power of two | parallel) = pow2_prob / (1 − serial_prob) = 0.945,
        // plus the non-rounded draws that happen to land on one.
        let expected = BATCH.pow2_prob / (1.0 - BATCH.serial_prob);
        assert!(
            pow2 > expected - 0.01 && pow2 < expected + 0.03,
            "powers of two among parallel jobs: {pow2} (expected ≈ {expected})"
        );
        assert!(jobs.iter().all(|j| j.size <= 128));
        assert!(
            jobs.iter().any(|j| j.size == 128),
            "the high stage reaches P"
        );
    }

    #[test]
    fn run_times_are_capped_at_e12_seconds() {
        let jobs = batch(20_000, 5);
        let cap = MAX_LOG_RUNTIME.exp() as i64;
        let longest = jobs.iter().map(|j| j.run).max().unwrap();
        assert!(longest <= cap, "longest run {longest} s > {cap} s");
        // The long component reaches close to the cap: the cap is real.
        assert!(longest > cap / 2, "longest run {longest} s");
        assert!(jobs.iter().all(|j| j.run >= 1 && j.request >= j.run));
    }

    /// Average log(run time) of jobs in a size range.
    fn mean_log_run(jobs: &[GenJob], lo: u32, hi: u32) -> f64 {
        let sel: Vec<f64> = jobs
            .iter()
            .filter(|j| j.size >= lo && j.size <= hi)
            .map(|j| (j.run as f64).ln())
            .collect();
        assert!(sel.len() > 200, "{lo}..{hi}: {} jobs", sel.len());
        sel.iter().sum::<f64>() / sel.len() as f64
    }

    #[test]
    fn larger_jobs_run_longer() {
        // p = pa × size + pb falls with size: more draws from the long
        // component (mean log run a2 × b2 ≈ 9.97 vs a1 × b1 ≈ 5.41).
        let jobs = generate_jobs(&GenerateParams {
            jobs: 40_000,
            machine_procs: 1024,
            interactive: false,
            ..params(9)
        })
        .unwrap();
        let serial = mean_log_run(&jobs, 1, 1);
        let mid = mean_log_run(&jobs, 8, 64);
        let big = mean_log_run(&jobs, 128, 1024);
        assert!(serial < mid && mid < big, "{serial} {mid} {big}");
        // At size ≥ 233 p is 0: every such job is from the long component.
        let expected_big = BATCH.a2 * BATCH.b2;
        let huge = mean_log_run(&jobs, 256, 1024);
        assert!(
            (huge - expected_big).abs() < 0.1,
            "{huge} vs {expected_big}"
        );
    }

    #[test]
    fn arrivals_follow_the_daily_cycle_at_any_load() {
        for load in [0.3, 0.7, 1.5] {
            let jobs = generate_jobs(&GenerateParams {
                jobs: 30_000,
                target_load: load,
                interactive: false,
                ..params(4)
            })
            .unwrap();
            let last = jobs.last().unwrap().submit;
            assert!(last > 20 * 86_400, "spans many days at load {load}");
            let mut by_hour = [0usize; 24];
            for j in &jobs {
                by_hour[((j.submit % 86_400) / 3600) as usize] += 1;
            }
            // The batch weights peak around bucket 26 (13:00) and are
            // lowest in the early morning.
            let w = daily_weights(BATCH.anum, BATCH.bnum);
            let share = |h: usize| by_hour[h] as f64 / jobs.len() as f64;
            let weight = |h: usize| (w[2 * h] + w[2 * h + 1]) / BUCKETS as f64;
            let peak = (0..24).max_by_key(|h| by_hour[*h]).unwrap();
            assert!(
                (11..=15).contains(&peak),
                "load {load}: peak hour {peak} {by_hour:?}"
            );
            assert!(
                share(13) > 4.0 * share(4),
                "load {load}: afternoon vs early morning {by_hour:?}"
            );
            for h in 0..24 {
                // Each hour's share of arrivals follows its weight.
                assert!(
                    (share(h) - weight(h)).abs() < 0.012,
                    "load {load}: hour {h}: {} vs {}",
                    share(h),
                    weight(h)
                );
            }
        }
    }

    #[test]
    fn daily_weights_match_the_gamma_probabilities() {
        let w = daily_weights(BATCH.anum, BATCH.bnum);
        assert!((w.iter().sum::<f64>() - BUCKETS as f64).abs() < 1e-9);
        // Peak at the mode of Gamma(6.1271, 5.274) ≈ 27.0: i = 27, bucket 26.
        let peak = (0..BUCKETS).max_by(|a, b| w[*a].total_cmp(&w[*b])).unwrap();
        assert_eq!(peak, 26);
        assert!(w.iter().all(|x| *x > 0.0));
    }

    #[test]
    fn gamma_cdf_matches_known_values() {
        // Exponential: P(1, x) = 1 − e^−x.
        assert!((gamma_cdf(2.0, 1.0, 1.0) - (1.0 - (-2.0f64).exp())).abs() < 1e-12);
        // Erlang(3): 1 − e^−x (1 + x + x²/2) at x = 5 (continued fraction side).
        let x: f64 = 5.0;
        let erlang = 1.0 - (-x).exp() * (1.0 + x + x * x / 2.0);
        assert!((gamma_cdf(5.0, 3.0, 1.0) - erlang).abs() < 1e-12);
        assert!((gamma_cdf(2.0, 3.0, 1.0) - (1.0 - (-2.0f64).exp() * 5.0)).abs() < 1e-12);
        // Scale: Gamma(2, 3) at 6 = P(2, 2).
        assert!((gamma_cdf(6.0, 2.0, 3.0) - (1.0 - 3.0 * (-2.0f64).exp())).abs() < 1e-12);
        assert!((ln_gamma(10.0) - 362_880f64.ln()).abs() < 1e-10);
    }

    #[test]
    fn bad_parameters_are_refused() {
        let mut p = params(1);
        p.target_load = 0.0;
        assert!(generate(&p).is_err());
        p.target_load = 0.5;
        p.machine_procs = 1;
        assert!(generate(&p).is_err());
    }

    #[test]
    fn gamma_sampler_has_the_right_mean() {
        let mut rng = SplitMix64(42);
        let n = 20000;
        let mean = (0..n).map(|_| gamma(&mut rng, 4.2, 0.94)).sum::<f64>() / n as f64;
        assert!((mean - 4.2 * 0.94).abs() < 0.05, "{mean}");
    }
}
