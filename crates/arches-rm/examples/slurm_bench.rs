//! Benchmark of the Slurm backend against a running cluster (BENCHMARKS.md):
//! 1. decision → running: `start()` until `squeue` shows the job RUNNING;
//! 2. starts per second: N jobs started at once until Slurm runs them all;
//! 3. one poll (`squeue --json` + parse, as the worker does) with N jobs in
//!    Slurm, and one `sinfo --json`.
//!
//! ```sh
//! ARCHES_SLURM_NAME=bench ARCHES_SLURM_PORT=19817 ARCHES_SLURM_CPUS=256 scripts/slurm-cluster start 4
//! SLURM_CONF=/tmp/arches-slurm-bench/etc/slurm.conf \
//!     cargo run --release -p arches-rm --example slurm_bench -- 1000 10
//! ARCHES_SLURM_NAME=bench scripts/slurm-cluster stop
//! ```

use std::process::Command;
use std::time::{Duration, Instant};

use arches_rm::slurm::{query_jobs, query_nodes, SlurmConfig, SlurmRm};
use arches_rm::{ExecSpec, Launch, LaunchNode, ResourceManager};

fn launch(job: u64, node: &str, script: &str, dir: &str) -> Launch {
    // SAFETY: plain getters.
    let (uid, gid) = unsafe { (libc::geteuid(), libc::getegid()) };
    Launch {
        job,
        name: format!("bench{job}"),
        nodes: vec![LaunchNode {
            name: node.to_string(),
            tasks: 1,
            procs: 1,
            gres: Vec::new(),
        }],
        exec: ExecSpec {
            script: script.to_string(),
            workdir: dir.to_string(),
            stdout: "/dev/null".into(),
            stderr: "/dev/null".into(),
            join: true,
            env: vec![("PATH".into(), "/usr/bin:/bin".into())],
            user: "root".into(),
            uid,
            gid,
            ..ExecSpec::default()
        },
        walltime: Some(3600),
        restarted: false,
    }
}

fn squeue(args: &[&str]) -> String {
    let out = Command::new("squeue").args(args).output().expect("squeue");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let n: u64 = args.get(1).map_or(Ok(1000), |a| a.parse())?;
    let samples: u64 = args.get(2).map_or(Ok(10), |a| a.parse())?;
    let dir = tempfile::tempdir()?;
    let d = dir.path().to_string_lossy().into_owned();
    let mut cfg = SlurmConfig::new(
        "slurm",
        format!("bench{}", std::process::id()),
        dir.path().join("spool"),
    );
    cfg.slurm_conf = std::env::var_os("SLURM_CONF").map(Into::into);
    let mut rm = SlurmRm::new(cfg.clone())?;
    let nodes: Vec<String> = rm.nodes()?.into_iter().map(|n| n.name).collect();
    let cpus: u32 = query_nodes(&cfg)?.iter().map(|n| n.procs).sum();
    println!("cluster: {} nodes, {cpus} CPUs", nodes.len());

    // 1. Decision -> RUNNING in Slurm, one job at a time.
    let mut lat = Vec::new();
    for i in 0..samples {
        let job = 1_000_000 + i;
        let t0 = Instant::now();
        rm.start(&launch(job, &nodes[0], "sleep 1", &d), 0)?;
        let name = format!("bench{job}");
        while !squeue(&["-h", "-t", "all", "-n", &name, "-o", "%T"]).contains("RUNNING") {
            std::thread::sleep(Duration::from_millis(10));
            if t0.elapsed() > Duration::from_secs(30) {
                return Err("job never ran".into());
            }
        }
        lat.push(t0.elapsed());
    }
    lat.sort();
    println!(
        "decision -> RUNNING in Slurm: median {:.2} s, min {:.2} s, max {:.2} s ({samples} jobs)",
        median(lat.clone()).as_secs_f64(),
        lat[0].as_secs_f64(),
        lat[lat.len() - 1].as_secs_f64()
    );

    // 2. N jobs started at once (1 CPU each, spread over the nodes).
    let t0 = Instant::now();
    for i in 0..n {
        let node = &nodes[i as usize % nodes.len()];
        rm.start(&launch(i + 1, node, "sleep 3000", &d), 0)?;
    }
    let handed = t0.elapsed();
    loop {
        let running = squeue(&["-h", "-t", "RUNNING", "-o", "%j"])
            .lines()
            .filter(|l| l.starts_with("bench") && l[5..].parse::<u64>().is_ok_and(|j| j <= n))
            .count() as u64;
        if running >= n {
            break;
        }
        if t0.elapsed() > Duration::from_secs(600) {
            return Err(format!("only {running} of {n} running after 600 s").into());
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let took = t0.elapsed();
    println!(
        "{n} starts: trait calls returned in {:.1} ms; all RUNNING in Slurm after {:.1} s = {:.1} starts/s",
        handed.as_secs_f64() * 1e3,
        took.as_secs_f64(),
        n as f64 / took.as_secs_f64()
    );

    // 3. One poll with N running jobs (the worker's squeue --json + parse).
    let mut polls = Vec::new();
    let mut fulls = Vec::new();
    let mut count = 0;
    for _ in 0..5 {
        let t = Instant::now();
        count = query_jobs(&cfg, false)?;
        polls.push(t.elapsed());
        let t = Instant::now();
        query_jobs(&cfg, true)?;
        fulls.push(t.elapsed());
    }
    let mut infos = Vec::new();
    for _ in 0..5 {
        let t = Instant::now();
        query_nodes(&cfg)?;
        infos.push(t.elapsed());
    }
    let t = Instant::now();
    let _ = rm.observe(0);
    let observe = t.elapsed();
    println!(
        "poll with {count} jobs in squeue: squeue -o text + parse median {:.0} ms; squeue --json + parse (when a job ended) median {:.0} ms; sinfo --json median {:.0} ms; observe() on the scheduler thread {:.3} ms",
        median(polls).as_secs_f64() * 1e3,
        median(fulls).as_secs_f64() * 1e3,
        median(infos).as_secs_f64() * 1e3,
        observe.as_secs_f64() * 1e3
    );

    for i in 0..n {
        rm.cancel(i + 1, 0)?;
    }
    let t = Instant::now();
    while squeue(&["-h", "-t", "RUNNING,COMPLETING", "-o", "%i"])
        .lines()
        .count()
        > 0
        && t.elapsed() < Duration::from_secs(120)
    {
        std::thread::sleep(Duration::from_millis(500));
    }
    Ok(())
}
