//! Start-rate benchmark of the local resource manager: starts N trivial jobs
//! (`exit 0`) as fast as `LocalRm::start` allows, then observes until all have
//! finished, and prints both rates.
//!
//! `cargo run --release -p arches-rm --example start_rate -- [N] [spool parent]`
//! (the `supervisor` example must be built: `cargo build --release -p arches-rm --examples`).

use std::process::ExitCode;
use std::time::{Duration, Instant};

use arches_core::Node;
use arches_rm::local::{LocalConfig, LocalRm};
use arches_rm::{ExecSpec, Launch, LaunchNode, Observation, ResourceManager};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let count: u64 = match args.first().map(|a| a.parse()) {
        None => 500,
        Some(Ok(n)) if n > 0 => n,
        Some(_) => {
            eprintln!("usage: start_rate [N > 0] [spool parent directory]");
            return ExitCode::from(2);
        }
    };
    let parent = args.get(1).map_or_else(std::env::temp_dir, Into::into);
    let tmp = match tempfile::tempdir_in(&parent) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("cannot create a directory in {}: {e}", parent.display());
            return ExitCode::FAILURE;
        }
    };
    let Some(supervisor) = std::env::current_exe()
        .ok()
        .and_then(|exe| Some(exe.parent()?.join("supervisor")))
        .filter(|p| p.exists())
    else {
        eprintln!("the supervisor example is not built next to this one");
        return ExitCode::FAILURE;
    };
    let config = LocalConfig::new(
        "local",
        tmp.path().join("spool"),
        vec![supervisor.to_string_lossy().into_owned()],
        vec![Node::new("local", 1, 1024)],
    );
    let mut rm = match LocalRm::new(config) {
        Ok(rm) => rm,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::FAILURE;
        }
    };
    // SAFETY: plain getters.
    let (uid, gid) = unsafe { (libc::geteuid(), libc::getegid()) };
    let out = tmp.path().join("out");
    let launch = |job, script: &str| Launch {
        job,
        name: format!("bench{job}"),
        nodes: vec![LaunchNode {
            name: "local".into(),
            tasks: 1,
            procs: 1,
            gres: Vec::new(),
        }],
        exec: ExecSpec {
            script: script.into(),
            workdir: tmp.path().to_string_lossy().into_owned(),
            stdout: out.to_string_lossy().into_owned(),
            stderr: out.to_string_lossy().into_owned(),
            join: true,
            uid,
            gid,
            ..ExecSpec::default()
        },
        walltime: None,
        restarted: false,
    };

    let t0 = Instant::now();
    let mut finished = 0u64;
    let mut failed = 0u64;
    let mut tally = |obs: Vec<Observation>| {
        for o in obs {
            match o {
                Observation::Finished { code: 0, .. } => finished += 1,
                _ => failed += 1,
            }
        }
    };
    let mut in_start = Duration::ZERO;
    let mut in_observe = Duration::ZERO;
    for job in 1..=count {
        let t = Instant::now();
        let result = rm.start(&launch(job, "exit 0\n"), 0);
        in_start += t.elapsed();
        if let Err(e) = result {
            eprintln!("start {job}: {e}");
            return ExitCode::FAILURE;
        }
        // A daemon observes every ~100 ms; do the same.
        if job % 20 == 0 {
            let t = Instant::now();
            tally(rm.observe(0));
            in_observe += t.elapsed();
        }
    }
    let started = t0.elapsed();
    let deadline = Instant::now() + Duration::from_secs(120);
    while rm.active_jobs() > 0 && Instant::now() < deadline {
        tally(rm.observe(0));
        std::thread::sleep(Duration::from_millis(10));
    }
    tally(rm.observe(0));
    let total = t0.elapsed();
    println!(
        "started {count} jobs in {:.3} s: {:.0} starts/s",
        started.as_secs_f64(),
        count as f64 / started.as_secs_f64()
    );
    println!(
        "time inside start(): {:.3} s, {:.2} ms per start, capacity {:.0} starts/s",
        in_start.as_secs_f64(),
        in_start.as_secs_f64() * 1000.0 / count as f64,
        count as f64 / in_start.as_secs_f64()
    );
    println!(
        "time inside observe() while starting: {:.3} s",
        in_observe.as_secs_f64()
    );
    println!(
        "all {finished} finished (exit 0) in {:.3} s: {:.0} jobs/s end to end; {failed} other outcomes",
        total.as_secs_f64(),
        finished as f64 / total.as_secs_f64()
    );
    if finished != count {
        return ExitCode::FAILURE;
    }

    // Observe and cancel with many jobs running.
    let running = count.min(200);
    let first = count + 1;
    for job in first..first + running {
        if let Err(e) = rm.start(&launch(job, "sleep 60\n"), 0) {
            eprintln!("start {job}: {e}");
            return ExitCode::FAILURE;
        }
    }
    std::thread::sleep(Duration::from_secs(1));
    let t = Instant::now();
    let rounds = 20;
    let mut early = 0;
    for _ in 0..rounds {
        early += rm.observe(0).len();
    }
    let per_observe = t.elapsed() / rounds;
    let t = Instant::now();
    for job in first..first + running {
        if let Err(e) = rm.cancel(job, 0) {
            eprintln!("cancel {job}: {e}");
            return ExitCode::FAILURE;
        }
    }
    let cancelling = t.elapsed();
    let mut cancelled = 0;
    let deadline = Instant::now() + Duration::from_secs(60);
    while rm.active_jobs() > 0 && Instant::now() < deadline {
        cancelled += rm
            .observe(0)
            .iter()
            .filter(|o| matches!(o, Observation::Finished { code: 143, .. }))
            .count();
        std::thread::sleep(Duration::from_millis(10));
    }
    println!(
        "{running} running jobs: observe() takes {:.3} ms; {running} cancels took {:.3} s; \
         {cancelled} reported killed by SIGTERM in {:.3} s; {early} ended early",
        per_observe.as_secs_f64() * 1000.0,
        cancelling.as_secs_f64(),
        t.elapsed().as_secs_f64()
    );
    if cancelled == running as usize {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
