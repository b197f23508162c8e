//! `msub -I` on the SLURM backend: the session is a step of the job's Slurm
//! allocation, which msub runs itself, as the user, the way Slurm sites do
//! interactive work:
//! `srun --jobid=<id> --overlap --pty --nodes=1 --ntasks=1 --cpus-per-task=<the
//! job's CPUs on its first node> <session>/script`
//! with the batch job's environment (`PBS_*`, `MOAB_*`, the submission's
//! variables; `PBS_ENVIRONMENT=PBS_INTERACTIVE`) and in its working
//! directory. srun puts the user's terminal in raw mode and relays what is
//! typed, the window size and the output. When the session ends msub writes
//! its exit status into the session directory, where the job's batch script
//! waits for it and exits with it: the job completes with the shell's
//! status, and msub exits with the job's completion code. A wall-clock kill
//! or a cancel ends the allocation, and Slurm kills the session with it.

use std::ffi::{OsStr, OsString};
use std::io::{BufRead, Write};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use arches_api::{JobAction, JobActionRequest, Section, SlurmSession};
use arches_client::Client;

use super::msub_interactive::{on_end, on_sigint, say, status_byte, ENDED, INTERRUPTED};

/// How long the batch script may take to record the session's environment
/// once Slurm runs the job.
const SESSION_WITHIN: Duration = Duration::from_secs(30);
/// How long msub waits, after the session, for the daemon to record the
/// job's end (its completion code is msub's exit status).
const COMPLETION_WITHIN: Duration = Duration::from_secs(60);
/// How long msub waits for the daemon to record the end of a job whose
/// session directory is gone.
const ENDED_WITHIN: Duration = Duration::from_secs(15);
/// Written as the session's status when msub is ended by a signal: a hang-up.
const HANGUP: i32 = 128 + libc::SIGHUP;

/// Runs job `id`'s interactive session in its Slurm allocation; msub's exit
/// status.
pub fn run(client: &Client, id: u64, session: &SlurmSession) -> Result<u8, String> {
    let mut previous = Vec::new();
    // SAFETY: the handlers only store to atomics.
    unsafe {
        previous.push((
            libc::SIGINT,
            libc::signal(libc::SIGINT, on_sigint as *const () as libc::sighandler_t),
        ));
        for sig in [libc::SIGTERM, libc::SIGHUP, libc::SIGQUIT] {
            previous.push((
                sig,
                libc::signal(sig, on_end as *const () as libc::sighandler_t),
            ));
        }
    }
    let result = session_run(client, id, session);
    for (sig, handler) in previous {
        // SAFETY: restores the dispositions saved above.
        unsafe { libc::signal(sig, handler) };
    }
    result
}

fn cancel(client: &Client, id: u64) {
    let _ = client.job_action(&JobActionRequest {
        jobs: vec![id.to_string()],
        action: JobAction::Cancel,
        select: Default::default(),
    });
}

fn session_run(client: &Client, id: u64, session: &SlurmSession) -> Result<u8, String> {
    let dir = PathBuf::from(&session.dir);
    let Some(srun) = find_in_path("srun") else {
        cancel(client, id);
        return Err(format!(
            "msub: srun not found in PATH: job {id} runs on a Slurm cluster, whose interactive sessions need the Slurm client commands on this host; job {id} canceled"
        ));
    };
    // The batch script records the job's environment once Slurm runs it.
    let started = Instant::now();
    let mut asked = Instant::now();
    let env = loop {
        match std::fs::read(dir.join("env")) {
            Ok(bytes) => break bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => {
                cancel(client, id);
                return Err(format!(
                    "msub: cannot read job {id}'s session environment {}: {e}; job {id} canceled",
                    dir.join("env").display()
                ));
            }
        }
        if INTERRUPTED.load(Ordering::SeqCst) || ENDED.load(Ordering::SeqCst) {
            cancel(client, id);
            return Err(format!(
                "msub: job {id} canceled (interrupted while waiting)"
            ));
        }
        if asked.elapsed() >= Duration::from_secs(1) {
            asked = Instant::now();
            if let Some(code) = completed(client, id)? {
                say(&format!("msub: job {id} completed"));
                return Ok(status_byte(code.unwrap_or(1)));
            }
        }
        if started.elapsed() >= SESSION_WITHIN {
            cancel(client, id);
            return Err(format!(
                "msub: job {id} runs in Slurm but its session environment {} did not appear within {} s (the spool directory must be visible on the compute nodes and here); job {id} canceled",
                dir.join("env").display(),
                SESSION_WITHIN.as_secs()
            ));
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    let args = std::fs::read(dir.join("args")).unwrap_or_default();
    let mut cmd = session_command(&srun, session, &env, &args);
    // srun's own messages (the session's output comes through the pty).
    cmd.stderr(std::process::Stdio::piped());
    say(&format!("msub: job {id} ready\n"));
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => {
            cancel(client, id);
            return Err(format!(
                "msub: cannot run {}: {e}; job {id} canceled",
                srun.display()
            ));
        }
    };
    let errors = child.stderr.take().map(relay_srun_errors);
    let mut hung_up = false;
    let status = loop {
        match child.try_wait() {
            Ok(Some(st)) => break Some(st),
            Ok(None) => {}
            Err(_) => break None,
        }
        if ENDED.load(Ordering::SeqCst) && !hung_up {
            // msub is going away: the session is hung up, as a closed
            // login is; the batch script exits, Slurm ends the steps.
            hung_up = true;
            let _ = write_status(&dir, session.job_id, HANGUP);
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    if let Some(t) = errors {
        let _ = t.join();
    }
    let code = match status {
        Some(st) => st
            .code()
            .or_else(|| st.signal().map(|s| 128 + s))
            .unwrap_or(1),
        None => 1,
    };
    if hung_up {
        return Err(format!(
            "\nmsub: detached from job {id} by a signal: its session is hung up (checkjob {id} shows how it ended)"
        ));
    }
    if let Err(e) = write_status(&dir, session.job_id, code) {
        // A wall-clock kill or a cancel ends the batch step with the
        // session, and the daemon removes the session directory with the
        // job: nothing waits for the status any more.
        if !ended_meanwhile(client, id)? {
            // The allocation would stay until its wall time: end it.
            cancel(client, id);
            return Err(format!(
                "\nmsub: cannot write job {id}'s session status in {}: {e}; job {id} canceled",
                dir.display()
            ));
        }
    }
    // The job's completion code: the shell's, or how a wall-clock kill
    // ended it (a canceled job has none: then the session's, as srun saw
    // it end).
    let deadline = Instant::now() + COMPLETION_WITHIN;
    let code = loop {
        if let Some(c) = completed(client, id)? {
            break c.unwrap_or(code);
        }
        if Instant::now() >= deadline {
            break code;
        }
        std::thread::sleep(Duration::from_millis(250));
    };
    say(&format!("\nmsub: job {id} completed"));
    Ok(status_byte(code))
}

/// Whether job `id` has ended (or ends within a few seconds: the daemon
/// learns of a Slurm job's end by polling), so that its session's status is
/// no longer awaited.
fn ended_meanwhile(client: &Client, id: u64) -> Result<bool, String> {
    let deadline = Instant::now() + ENDED_WITHIN;
    loop {
        if completed(client, id)?.is_some() {
            return Ok(true);
        }
        if Instant::now() >= deadline {
            return Ok(false);
        }
        std::thread::sleep(Duration::from_millis(250));
    }
}

/// Once the daemon shows the job completed: its completion code (`None`:
/// none, a canceled job).
fn completed(client: &Client, id: u64) -> Result<Option<Option<i32>>, String> {
    let v = super::msub::one_job(client, id)?;
    let Some(job) = v.jobs.first() else {
        return Err(format!("msub: job {id} is gone"));
    };
    Ok((job.summary.section == Section::Completed).then_some(job.summary.exit_code))
}

/// The session's exit status, where the batch script waits for it (written
/// whole, then renamed).
/// The file is named after the Slurm job (`status.<id>`): a requeued job's
/// next Slurm job waits for its own.
fn write_status(dir: &Path, slurm_job: u64, code: i32) -> std::io::Result<()> {
    let tmp = dir.join("status.new");
    std::fs::write(&tmp, format!("{code}\n"))?;
    std::fs::rename(&tmp, dir.join(format!("status.{slurm_job}")))
}

/// Copies srun's messages to msub's standard error, but for its report of
/// the session's exit status (msub's own status says it, as on the LOCAL
/// backend).
fn relay_srun_errors(from: std::process::ChildStderr) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        let mut from = std::io::BufReader::new(from);
        let mut err = std::io::stderr();
        let mut line = Vec::new();
        loop {
            line.clear();
            match from.read_until(b'\n', &mut line) {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
            if !exit_report(&line) {
                let _ = err.write_all(&line);
                let _ = err.flush();
            }
        }
    })
}

/// srun's `srun: error: NODE: task 0: Exited with exit code N` line.
fn exit_report(line: &[u8]) -> bool {
    let line = String::from_utf8_lossy(line);
    line.trim_end()
        .strip_prefix("srun: error: ")
        .and_then(|rest| rest.split_once(": task 0: Exited with exit code "))
        .is_some_and(|(node, code)| {
            !node.is_empty()
                && !node.contains(' ')
                && !code.is_empty()
                && code.bytes().all(|b| b.is_ascii_digit())
        })
}

/// The executable `name` in msub's `PATH`.
fn find_in_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .filter(|d| d.is_absolute())
        .map(|d| d.join(name))
        .find(|p| {
            std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
}

/// The session's environment: the batch job's (`env`, NUL-separated)
/// without Slurm's variables of the batch step (srun sets the step's, and
/// would read `SLURM_*`/`SRUN_*` as options), with
/// `PBS_ENVIRONMENT=PBS_INTERACTIVE`.
fn session_env(env: &[u8]) -> Vec<(OsString, OsString)> {
    let mut out: Vec<(OsString, OsString)> = env
        .split(|b| *b == 0)
        .filter_map(|kv| {
            let at = kv.iter().position(|b| *b == b'=')?;
            let (k, v) = (&kv[..at], &kv[at + 1..]);
            let skip = k.is_empty()
                || k == b"_"
                || k.starts_with(b"SLURM_")
                || k.starts_with(b"SLURMD_")
                || k.starts_with(b"SRUN_");
            (!skip).then(|| {
                (
                    OsString::from_vec(k.to_vec()),
                    OsString::from_vec(v.to_vec()),
                )
            })
        })
        .filter(|(k, _)| k != "PBS_ENVIRONMENT")
        .collect();
    out.push(("PBS_ENVIRONMENT".into(), "PBS_INTERACTIVE".into()));
    out
}

/// `srun` running the session's script on a terminal in the allocation.
fn session_command(srun: &Path, session: &SlurmSession, env: &[u8], args: &[u8]) -> Command {
    // The CPUs the job has on the batch script's node (the first), which is
    // where the one task runs: all of them are the session's, as the
    // first node is a Torque interactive job's (with task/cgroup a step
    // would otherwise get one).
    let cpus = env
        .split(|b| *b == 0)
        .find_map(|kv| kv.strip_prefix(b"SLURM_CPUS_ON_NODE="))
        .and_then(|v| std::str::from_utf8(v).ok()?.parse::<u32>().ok())
        .filter(|n| *n > 0);
    let env = session_env(env);
    let mut cmd = Command::new(srun);
    cmd.arg("--quiet")
        .arg(format!("--jobid={}", session.job_id))
        .args(["--overlap", "--pty", "--nodes=1", "--ntasks=1"]);
    if let Some(n) = cpus {
        cmd.arg(format!("--cpus-per-task={n}"));
    }
    // The batch script's working directory: the job's.
    if let Some((_, pwd)) = env.iter().find(|(k, _)| k == "PWD") {
        let mut chdir = OsString::from("--chdir=");
        chdir.push(pwd);
        cmd.arg(chdir);
    }
    cmd.arg(Path::new(&session.dir).join("script"));
    if !args.is_empty() {
        let args = args.strip_suffix(b"\0").unwrap_or(args);
        cmd.args(args.split(|b| *b == 0).map(OsStr::from_bytes));
    }
    cmd.env_clear().envs(env);
    match &session.slurm_conf {
        Some(conf) => {
            cmd.env("SLURM_CONF", conf);
        }
        None => {
            if let Some(conf) = std::env::var_os("SLURM_CONF") {
                cmd.env("SLURM_CONF", conf);
            }
        }
    }
    cmd
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_sruns_report_of_the_exit_status_is_left_out() {
        assert!(exit_report(
            b"srun: error: n3: task 0: Exited with exit code 3\r\n"
        ));
        assert!(exit_report(
            b"srun: error: n1: task 0: Exited with exit code 130"
        ));
        assert!(!exit_report(b"srun: error: n1: task 0: Killed\n"));
        assert!(!exit_report(
            b"srun: error: Unable to create step for job 58: Access/permission denied\n"
        ));
        assert!(!exit_report(
            b"srun: error: n1: task 0: Exited with exit code 3 and more\n"
        ));
    }

    #[test]
    fn the_session_gets_the_batch_jobs_environment_without_slurms() {
        let env = b"PBS_JOBID=7\0SLURM_JOB_ID=12\0SLURM_CPUS_ON_NODE=4\0SLURM_NTASKS=8\0SRUN_CPUS_PER_TASK=2\0_=/usr/bin/env\0PBS_ENVIRONMENT=PBS_BATCH\0X=a=b\nc\0PWD=/w d\0";
        let session = SlurmSession {
            job_id: 12,
            dir: "/spool/7/session".into(),
            slurm_conf: Some("/etc/s.conf".into()),
        };
        let cmd = session_command(Path::new("/usr/bin/srun"), &session, env, b"a b\0\0c\0");
        let args: Vec<&OsStr> = cmd.get_args().collect();
        assert_eq!(
            args,
            [
                "--quiet",
                "--jobid=12",
                "--overlap",
                "--pty",
                "--nodes=1",
                "--ntasks=1",
                "--cpus-per-task=4",
                "--chdir=/w d",
                "/spool/7/session/script",
                "a b",
                "",
                "c"
            ]
        );
        let mut envs: Vec<(String, String)> = cmd
            .get_envs()
            .filter_map(|(k, v)| Some((k.to_str()?.into(), v?.to_str()?.into())))
            .collect();
        envs.sort();
        assert_eq!(
            envs,
            [
                ("PBS_ENVIRONMENT", "PBS_INTERACTIVE"),
                ("PBS_JOBID", "7"),
                ("PWD", "/w d"),
                ("SLURM_CONF", "/etc/s.conf"),
                ("X", "a=b\nc"),
            ]
            .map(|(k, v)| (k.to_string(), v.to_string()))
        );
        // No arguments: none given to the script.
        let cmd = session_command(Path::new("/usr/bin/srun"), &session, b"", b"");
        assert_eq!(cmd.get_args().last().unwrap(), "/spool/7/session/script");
    }
}
