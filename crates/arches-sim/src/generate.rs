//! Synthetic workloads: the Lublin & Feitelson model ("The workload on
//! parallel supercomputers: modeling the characteristics of rigid jobs",
//! JPDC 63(11), 2003), batch-job parameters, written as SWF.
//!
//! The model, per job:
//! - **size**: serial with probability `SERIAL_PROB`; otherwise log2(size) is
//!   drawn from a two-stage uniform distribution — U(`ULOW`, `UMED`) with
//!   probability `UPROB`, else U(`UMED`, `UHI`), where `UHI` = log2(machine)
//!   and `UMED` = `UHI` − 2.5 — and rounded to a power of two with probability
//!   `POW2_PROB` (the emphasis on powers of two), else 2^u rounded;
//! - **run time**: log(run time) follows a hyper-gamma distribution,
//!   Gamma(`A1`, `B1`) with probability p and Gamma(`A2`, `B2`) otherwise,
//!   where p = `PA` × size + `PB` (clamped to [0, 1]): larger jobs are more
//!   likely to come from the long component (run time correlated with size);
//! - **arrivals**: log(inter-arrival time) follows Gamma(`AARR`, `BARR`) in a
//!   virtual time that runs faster during the day: the arrival intensity of
//!   each half-hour slot of the day is proportional to the Gamma(`ANUM`,
//!   `BNUM`) density at the slot number (peak in the early afternoon) plus a
//!   night floor of `NIGHT_FLOOR` of the peak.
//!
//! The model has no user estimates; the requested time is the run time
//! rounded up to the next of the usual round limits (`REQUEST_STEPS`).
//! Finally all submit times are scaled so that the offered load
//! Σ(run × procs) / (P × submit span) equals the target load.
//!
//! The PRNG is a SplitMix64 generator written here (a dozen lines): the
//! output depends only on the seed, on every platform and every version,
//! which a general-purpose crate does not promise across releases.

use std::fmt::Write as _;

/// Generator inputs.
#[derive(Debug, Clone, PartialEq)]
pub struct GenerateParams {
    pub jobs: usize,
    pub machine_procs: u32,
    /// Offered load to aim for (Σ run × procs / (P × span)), > 0.
    pub target_load: f64,
    pub seed: u64,
}

/// Probability that a job is serial (batch jobs).
pub const SERIAL_PROB: f64 = 0.2927;
/// Probability that a parallel job's size is a power of two.
pub const POW2_PROB: f64 = 0.7528;
/// Lower bound of log2(size) for parallel jobs.
pub const ULOW: f64 = 1.2463;
/// Probability of the first (small) stage of the two-stage uniform.
pub const UPROB: f64 = 0.875;
/// Distance of the stage boundary below log2(machine size).
pub const UMED_OFFSET: f64 = 2.5;
/// Hyper-gamma of log(run time): first component shape and scale.
pub const A1: f64 = 6.57;
pub const B1: f64 = 0.823;
/// Second component shape and scale.
pub const A2: f64 = 639.1;
pub const B2: f64 = 0.0156;
/// Mixing probability p = PA × size + PB.
pub const PA: f64 = -0.003;
pub const PB: f64 = 0.6986;
/// log(inter-arrival time) ~ Gamma(AARR, BARR).
pub const AARR: f64 = 6.0415;
pub const BARR: f64 = 0.8021;
/// Daily cycle: intensity of half-hour slot k ∝ Gamma(ANUM, BNUM) density at k.
pub const ANUM: f64 = 8.1737;
pub const BNUM: f64 = 3.9631;
/// Night-time intensity as a fraction of the peak.
pub const NIGHT_FLOOR: f64 = 0.1;
/// Round requested times (s): 5 min … 48 h.
pub const REQUEST_STEPS: [i64; 11] = [
    300, 900, 1800, 3600, 7200, 14400, 28800, 43200, 86400, 129600, 172800,
];
/// Simulated users (round robin by a uniform draw).
const USERS: u64 = 64;

/// Generates an SWF workload.
pub fn generate(p: &GenerateParams) -> Result<String, String> {
    if p.machine_procs < 2 {
        return Err("the machine needs at least 2 processors".into());
    }
    if !(p.target_load.is_finite() && p.target_load > 0.0) {
        return Err(format!("target load must be > 0, got {}", p.target_load));
    }
    let mut rng = SplitMix64(p.seed);
    let cycle = daily_cycle();
    let uhi = f64::from(p.machine_procs).log2();
    let umed = (uhi - UMED_OFFSET).max(ULOW);
    let mut jobs = Vec::with_capacity(p.jobs);
    let mut t = 0f64;
    for _ in 0..p.jobs {
        let gap = gamma(&mut rng, AARR, BARR).exp();
        // Advance through the day: a slot of intensity w passes w times faster.
        let mut left = gap;
        loop {
            let slot = ((t / 1800.0) as usize) % cycle.len();
            let slot_end = ((t / 1800.0).floor() + 1.0) * 1800.0;
            let w = cycle[slot];
            if (slot_end - t) * w >= left {
                t += left / w;
                break;
            }
            left -= (slot_end - t) * w;
            t = slot_end;
        }
        let size = job_size(&mut rng, p.machine_procs, uhi, umed);
        let pmix = (PA * f64::from(size) + PB).clamp(0.0, 1.0);
        let log_run = if rng.uniform() < pmix {
            gamma(&mut rng, A1, B1)
        } else {
            gamma(&mut rng, A2, B2)
        };
        let run = (log_run.exp().round() as i64).max(1);
        let req = REQUEST_STEPS
            .iter()
            .copied()
            .find(|s| *s >= run)
            .unwrap_or(run);
        let user = 1 + rng.next() % USERS;
        jobs.push((t, size, run, req, user));
    }
    let span = jobs.last().map_or(0.0, |j| j.0).max(1.0);
    let work: f64 = jobs.iter().map(|j| j.2 as f64 * f64::from(j.1)).sum();
    let load = work / (f64::from(p.machine_procs) * span);
    let scale = load / p.target_load;
    let mut out = String::new();
    let _ = writeln!(out, "; Version: 2.2");
    let _ = writeln!(
        out,
        "; Note: synthetic workload, Lublin & Feitelson (2003) model, seed {}, target load {}",
        p.seed, p.target_load
    );
    let _ = writeln!(out, "; UnixStartTime: 0");
    let _ = writeln!(out, "; MaxJobs: {}", p.jobs);
    let _ = writeln!(out, "; MaxRecords: {}", p.jobs);
    let _ = writeln!(out, "; MaxProcs: {}", p.machine_procs);
    let _ = writeln!(out, "; MaxNodes: {}", p.machine_procs);
    for (i, (t, size, run, req, user)) in jobs.iter().enumerate() {
        let submit = (t * scale).round() as i64;
        let _ = writeln!(
            out,
            "{} {submit} -1 {run} {size} -1 -1 {size} {req} -1 1 {user} 1 -1 1 1 -1 -1",
            i + 1
        );
    }
    Ok(out)
}

fn job_size(rng: &mut SplitMix64, machine: u32, uhi: f64, umed: f64) -> u32 {
    if rng.uniform() < SERIAL_PROB {
        return 1;
    }
    let u = if rng.uniform() < UPROB {
        ULOW + (umed - ULOW) * rng.uniform()
    } else {
        umed + (uhi - umed) * rng.uniform()
    };
    let size = if rng.uniform() < POW2_PROB {
        2f64.powf(u.round())
    } else {
        2f64.powf(u).round()
    };
    (size as u32).clamp(1, machine)
}

/// Relative arrival intensity of the 48 half-hour slots, mean 1.
fn daily_cycle() -> Vec<f64> {
    let density = |k: f64| k.powf(ANUM - 1.0) * (-k / BNUM).exp();
    let raw: Vec<f64> = (0..48).map(|k| density(k as f64 + 0.5)).collect();
    let peak = raw.iter().copied().fold(0.0, f64::max);
    let w: Vec<f64> = raw.iter().map(|r| r / peak + NIGHT_FLOOR).collect();
    let mean = w.iter().sum::<f64>() / w.len() as f64;
    w.into_iter().map(|x| x / mean).collect()
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

/// Gamma(shape, scale) by Marsaglia & Tsang (2000).
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
        }
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
        let (jobs, _) = to_jobs(&t.records, 128, &SwfOptions::default());
        assert_eq!(jobs.len(), 5000);
        let span = (jobs.last().unwrap().submit - jobs[0].submit) as f64;
        let work: f64 = jobs
            .iter()
            .map(|j| j.runtime as f64 * f64::from(j.procs))
            .sum();
        let load = work / (128.0 * span);
        assert!((load - 0.7).abs() < 0.02, "offered load {load}");
        let serial = jobs.iter().filter(|j| j.procs == 1).count() as f64 / 5000.0;
        assert!((serial - SERIAL_PROB).abs() < 0.03, "serial share {serial}");
        let parallel: Vec<_> = jobs.iter().filter(|j| j.procs > 1).collect();
        let pow2 = parallel
            .iter()
            .filter(|j| j.procs.is_power_of_two())
            .count() as f64
            / parallel.len() as f64;
        assert!(pow2 > POW2_PROB, "powers of two emphasised: {pow2}");
        assert!(jobs
            .iter()
            .all(|j| j.runtime <= j.walltime && j.procs <= 128));
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
