//! The on-disk spool of one local job, shared by the daemon side
//! ([`super::LocalRm`]) and the supervisor: `launch.json` (what to run),
//! `pid` (the supervisor and the job's process group), `ctl` (control
//! commands appended by the daemon), `status` (the recorded outcome), and the
//! files the supervisor prepares for the job (`script`, `nodefile`).
//!
//! Every format here is private to the local backend.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use arches_core::{JobId, Secs, Time};
use serde::{Deserialize, Serialize};

use crate::Launch;

/// The launch description spooled by `start` and read by the supervisor.
pub(crate) const LAUNCH: &str = "launch.json";
/// The supervisor's pid and the job's process group ([`Pids`]).
pub(crate) const PID: &str = "pid";
/// Control commands, one per line, appended by the daemon.
pub(crate) const CTL: &str = "ctl";
/// The outcome, written once, atomically and durably.
pub(crate) const STATUS: &str = "status";
/// The job script as executed.
pub(crate) const SCRIPT: &str = "script";
/// `PBS_NODEFILE`: one line per allocated processor.
pub(crate) const NODEFILE: &str = "nodefile";
/// `PBS_GPUFILE`: one line per GPU given, `<host>-gpu<index>` (Torque).
pub(crate) const GPUFILE: &str = "gpufile";
/// The job's cgroup, if it has one (`<v1|v2> <path>`, see `freezer`).
pub(crate) const CGROUP: &str = "cgroup";

/// `launch.json`: a [`Launch`] plus the backend settings the supervisor needs.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub(crate) struct LaunchFile {
    pub job: JobId,
    pub name: String,
    pub nodes: Vec<NodeEntry>,
    pub script: String,
    pub shell: Option<String>,
    pub workdir: String,
    pub stdout: String,
    pub stderr: String,
    pub join: bool,
    pub env: Vec<(String, String)>,
    pub user: String,
    pub uid: u32,
    pub gid: u32,
    pub groups: Vec<u32>,
    pub walltime: Option<Secs>,
    pub restarted: bool,
    pub kill_grace_secs: u64,
    /// Arguments the script runs with.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    /// The job's file-creation mask (`-W umask=`); `None`: the daemon's
    /// with group and other write removed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub umask: Option<u32>,
    /// An interactive job: run on a pty relayed through [`TTY_SOCKET`].
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub interactive: bool,
}

/// The socket an interactive job's owner attaches to (mode 0600, the
/// owner's), in the job directory.
pub const TTY_SOCKET: &str = "tty.sock";

/// One allocated node in `launch.json`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub(crate) struct NodeEntry {
    pub name: String,
    pub tasks: u32,
    pub procs: u32,
    /// Generic resources given here: `(name, count, unit indices)`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gres: Vec<(String, u32, Vec<u32>)>,
}

impl LaunchFile {
    pub(crate) fn new(launch: &Launch, kill_grace_secs: u64) -> Self {
        let exec = &launch.exec;
        LaunchFile {
            job: launch.job,
            name: launch.name.clone(),
            nodes: launch
                .nodes
                .iter()
                .map(|n| NodeEntry {
                    name: n.name.clone(),
                    tasks: n.tasks,
                    procs: n.procs,
                    gres: n.gres.clone(),
                })
                .collect(),
            script: exec.script.clone(),
            shell: exec.shell.clone(),
            workdir: exec.workdir.clone(),
            stdout: exec.stdout.clone(),
            stderr: exec.stderr.clone(),
            join: exec.join,
            env: exec.env.clone(),
            user: exec.user.clone(),
            uid: exec.uid,
            gid: exec.gid,
            groups: exec.groups.clone(),
            walltime: launch.walltime,
            restarted: launch.restarted,
            kill_grace_secs,
            args: exec.args.clone(),
            umask: exec.umask,
            interactive: exec.interactive,
        }
    }
}

/// The recorded outcome of one launch, with when it happened (epoch seconds,
/// the supervisor's clock): a job that ends while the daemon is down is
/// recorded with its real end, not the time the daemon finds out. Files
/// written before the time was recorded have none (`None`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Status {
    /// The job ran and ended: exit code, 128+signal for a signal death.
    Exited {
        code: i32,
        walltime_exceeded: bool,
        at: Option<Time>,
        /// Processor time its processes used (ms); `None` in files written
        /// before it was measured.
        cpu_ms: Option<u64>,
    },
    /// The job could not be started.
    Failed { message: String, at: Option<Time> },
}

impl Status {
    /// When the outcome was recorded, if known.
    pub(crate) fn at(&self) -> Option<Time> {
        match self {
            Status::Exited { at, .. } | Status::Failed { at, .. } => *at,
        }
    }

    /// The text written to the `status` file.
    pub(crate) fn render(&self) -> String {
        let mut text = match self {
            Status::Exited {
                code,
                walltime_exceeded,
                cpu_ms,
                ..
            } => {
                let mut t = format!(
                    "exit {code}\nwalltime {}\n",
                    if *walltime_exceeded { "exceeded" } else { "ok" }
                );
                if let Some(ms) = cpu_ms {
                    t.push_str(&format!("cpu_ms {ms}\n"));
                }
                t
            }
            Status::Failed { message, .. } => {
                format!("failed {}\n", message.replace(['\n', '\r'], " "))
            }
        };
        if let Some(at) = self.at() {
            text.push_str(&format!("at {at}\n"));
        }
        text
    }

    /// Parse a `status` file.
    pub(crate) fn parse(text: &str) -> Result<Status, String> {
        let mut lines = text.lines();
        let first = lines.next().ok_or("empty status file")?;
        let mut walltime_exceeded = None;
        let mut at = None;
        let mut cpu_ms = None;
        for line in lines.map(str::trim).filter(|l| !l.is_empty()) {
            match line.split_once(' ') {
                Some(("walltime", "exceeded")) => walltime_exceeded = Some(true),
                Some(("walltime", "ok")) => walltime_exceeded = Some(false),
                Some(("cpu_ms", ms)) => {
                    cpu_ms = Some(
                        ms.trim()
                            .parse::<u64>()
                            .map_err(|_| format!("bad status line {line:?}"))?,
                    )
                }
                Some(("at", t)) => {
                    at = Some(
                        t.trim()
                            .parse::<Time>()
                            .map_err(|_| format!("bad status line {line:?}"))?,
                    )
                }
                _ => return Err(format!("bad status line {line:?}")),
            }
        }
        if let Some(message) = first.strip_prefix("failed ") {
            return Ok(Status::Failed {
                message: message.to_string(),
                at,
            });
        }
        let code = first
            .strip_prefix("exit ")
            .and_then(|c| c.trim().parse::<i32>().ok())
            .ok_or_else(|| format!("bad status line {first:?}"))?;
        Ok(Status::Exited {
            code,
            walltime_exceeded: walltime_exceeded.unwrap_or(false),
            at,
            cpu_ms,
        })
    }

    /// Read `<dir>/status`: `Ok(None)` when it does not exist yet, `Err`
    /// when it could not be read (out of descriptors, an I/O error: the
    /// outcome is unknown, not absent). A file that does not parse (it is
    /// written atomically, so only a damaged disk makes one) reads as
    /// `Ok(Some(Err(why)))`.
    pub(crate) fn read(dir: &Path) -> io::Result<Option<Result<Status, String>>> {
        match fs::read_to_string(dir.join(STATUS)) {
            Ok(text) => Ok(Some(Status::parse(&text))),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }
}

/// Whether `<dir>/status` exists; `Err` when that cannot be told.
pub(crate) fn has_status(dir: &Path) -> io::Result<bool> {
    dir.join(STATUS).try_exists()
}

/// A control command from the daemon to a supervisor (one `ctl` line).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Control {
    /// Terminate (SIGTERM, SIGKILL after the grace period).
    Cancel,
    /// Terminate for requeue (the daemon reports no completion).
    Requeue,
    /// Send a signal to the job's process group.
    Signal(i32),
    /// Stop the job with this signal and pause the wall-clock.
    Suspend(i32),
    /// SIGCONT and restart the wall-clock.
    Resume,
    /// Send `signal`, then terminate after `timeout` seconds.
    Checkpoint { signal: i32, timeout: Secs },
    /// A new wall-clock limit (total run time, `None`: none).
    Walltime(Option<Secs>),
}

impl Control {
    pub(crate) fn render(&self) -> String {
        match self {
            Control::Cancel => "cancel\n".to_string(),
            Control::Requeue => "requeue\n".to_string(),
            Control::Signal(s) => format!("signal {s}\n"),
            Control::Suspend(s) => format!("suspend {s}\n"),
            Control::Resume => "resume\n".to_string(),
            Control::Checkpoint { signal, timeout } => format!("checkpoint {signal} {timeout}\n"),
            Control::Walltime(Some(secs)) => format!("walltime {secs}\n"),
            Control::Walltime(None) => "walltime none\n".to_string(),
        }
    }

    pub(crate) fn parse(line: &str) -> Result<Control, String> {
        let words: Vec<&str> = line.split_whitespace().collect();
        let num = |w: &str| {
            w.parse::<i64>()
                .map_err(|_| format!("bad number {w:?} in control line {line:?}"))
        };
        let sig = |w: &str| -> Result<i32, String> {
            i32::try_from(num(w)?).map_err(|_| format!("bad signal in {line:?}"))
        };
        match words.as_slice() {
            ["cancel"] => Ok(Control::Cancel),
            ["requeue"] => Ok(Control::Requeue),
            ["signal", s] => Ok(Control::Signal(sig(s)?)),
            ["suspend", s] => Ok(Control::Suspend(sig(s)?)),
            ["resume"] => Ok(Control::Resume),
            ["checkpoint", s, t] => Ok(Control::Checkpoint {
                signal: sig(s)?,
                timeout: num(t)?,
            }),
            ["walltime", "none"] => Ok(Control::Walltime(None)),
            ["walltime", w] => Ok(Control::Walltime(Some(num(w)?))),
            _ => Err(format!("unknown control line {line:?}")),
        }
    }

    /// Append this command to `<dir>/ctl` in one write.
    pub(crate) fn append(&self, dir: &Path) -> io::Result<()> {
        let mut f = OpenOptions::new()
            .append(true)
            .create(true)
            .mode(0o600)
            .open(dir.join(CTL))?;
        f.write_all(self.render().as_bytes())
    }
}

/// Write `dir/name` atomically and durably: temp file, fsync, rename, fsync dir.
pub(crate) fn write_durable(dir: &Path, name: &str, bytes: &[u8]) -> io::Result<()> {
    let tmp = dir.join(format!(".{name}.tmp"));
    let mut f = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(&tmp)?;
    f.write_all(bytes)?;
    f.sync_all()?;
    drop(f);
    fs::rename(&tmp, dir.join(name))?;
    File::open(dir)?.sync_all()
}

/// Room reserved for `status` (its text is well under this).
pub(crate) const STATUS_ROOM: usize = 4096;

/// The temporary file `status` is written through.
fn status_tmp() -> String {
    format!(".{STATUS}.tmp")
}

/// Reserves the disk space of `dir/status` (a temporary file of
/// [`STATUS_ROOM`] bytes, written and flushed) so that the outcome can be
/// recorded later even if the disk is full by then ([`write_status`]).
pub(crate) fn reserve_status(dir: &Path) -> io::Result<()> {
    let mut f = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(dir.join(status_tmp()))?;
    f.write_all(&[b' '; STATUS_ROOM])?;
    f.sync_all()
}

/// Writes `dir/status` atomically and durably through the file
/// [`reserve_status`] prepared: its blocks are overwritten in place (and
/// the tail cut off), which needs no new space on a full disk. Without a
/// reservation it is written like [`write_durable`].
pub(crate) fn write_status(dir: &Path, bytes: &[u8]) -> io::Result<()> {
    let tmp = dir.join(status_tmp());
    let mut f = match OpenOptions::new().write(true).open(&tmp) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return write_durable(dir, STATUS, bytes);
        }
        Err(e) => return Err(e),
    };
    f.write_all(bytes)?;
    f.set_len(bytes.len() as u64)?;
    f.sync_all()?;
    drop(f);
    fs::rename(&tmp, dir.join(STATUS))?;
    File::open(dir)?.sync_all()
}

/// Write a new file `dir/name` (readable by its owner only) in one write.
pub(crate) fn write_private(dir: &Path, name: &str, bytes: &[u8]) -> io::Result<()> {
    OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(dir.join(name))?
        .write_all(bytes)
}

/// The `pid` file: written once, in one write, after the job is forked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Pids {
    pub supervisor: i32,
    /// The job leader's pid, also its process group id.
    pub job: i32,
}

impl Pids {
    pub(crate) fn render(&self) -> String {
        format!("supervisor {}\njob {}\n", self.supervisor, self.job)
    }

    pub(crate) fn parse(text: &str) -> Option<Pids> {
        let mut supervisor = None;
        let mut job = None;
        for line in text.lines() {
            match line.split_once(' ') {
                Some(("supervisor", p)) => supervisor = p.trim().parse::<i32>().ok(),
                Some(("job", p)) => job = p.trim().parse::<i32>().ok(),
                _ => return None,
            }
        }
        Some(Pids {
            supervisor: supervisor.filter(|&p| p > 0)?,
            job: job.filter(|&p| p > 1)?,
        })
    }

    /// Read `<dir>/pid`: `Ok(None)` when absent, incomplete or malformed;
    /// `Err` when it could not be read.
    pub(crate) fn read(dir: &Path) -> io::Result<Option<Pids>> {
        match fs::read_to_string(dir.join(PID)) {
            Ok(text) => Ok(Pids::parse(&text)),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_round_trips() {
        for s in [
            Status::Exited {
                code: 3,
                walltime_exceeded: false,
                at: Some(1_700_000_000),
                cpu_ms: Some(1234),
            },
            Status::Exited {
                code: 143,
                walltime_exceeded: true,
                at: Some(1_700_000_001),
                cpu_ms: Some(0),
            },
            Status::Exited {
                code: 0,
                walltime_exceeded: false,
                at: None,
                cpu_ms: None,
            },
            Status::Failed {
                message: "cannot chdir to /x: No such file".into(),
                at: Some(1_700_000_002),
            },
        ] {
            assert_eq!(Status::parse(&s.render()), Ok(s));
        }
        assert_eq!(
            Status::parse("exit 7\nwalltime ok\nat 1700000123\n").map(|s| s.at()),
            Ok(Some(1_700_000_123))
        );
        // Files written before the end time was recorded still read.
        assert_eq!(
            Status::parse("exit 7\nwalltime exceeded\n"),
            Ok(Status::Exited {
                code: 7,
                walltime_exceeded: true,
                at: None,
                cpu_ms: None,
            })
        );
        assert!(Status::parse("exit 1\ncpu_ms lots\n").is_err());
        assert!(Status::parse("exit 1\ncpu_ms -3\n").is_err());
        assert!(Status::parse("").is_err());
        assert!(Status::parse("exit x\n").is_err());
        assert!(Status::parse("exit 1\nwalltime maybe\n").is_err());
        assert!(Status::parse("exit 1\nat soon\n").is_err());
    }

    #[test]
    fn failure_messages_stay_on_one_line() {
        let s = Status::Failed {
            message: "a\nb".into(),
            at: None,
        };
        assert_eq!(s.render(), "failed a b\n");
    }

    #[test]
    fn a_reserved_status_is_written_in_place() {
        let dir = tempfile::tempdir().unwrap();
        reserve_status(dir.path()).unwrap();
        assert_eq!(
            fs::metadata(dir.path().join(status_tmp())).unwrap().len(),
            STATUS_ROOM as u64
        );
        write_status(dir.path(), b"exit 3\nwalltime ok\n").unwrap();
        assert_eq!(
            fs::read_to_string(dir.path().join(STATUS)).unwrap(),
            "exit 3\nwalltime ok\n"
        );
        assert!(!dir.path().join(status_tmp()).exists());
        // Without a reservation: written anew.
        let other = tempfile::tempdir().unwrap();
        write_status(other.path(), b"exit 1\n").unwrap();
        assert_eq!(
            fs::read_to_string(other.path().join(STATUS)).unwrap(),
            "exit 1\n"
        );
    }

    #[test]
    fn pids_round_trip() {
        let p = Pids {
            supervisor: 10,
            job: 11,
        };
        assert_eq!(Pids::parse(&p.render()), Some(p));
        assert_eq!(Pids::parse("supervisor 10\n"), None);
        assert_eq!(Pids::parse("supervisor 10\njob 1\n"), None);
        assert_eq!(Pids::parse("supervisor x\njob 11\n"), None);
    }

    #[test]
    fn control_round_trips() {
        for c in [
            Control::Cancel,
            Control::Requeue,
            Control::Signal(10),
            Control::Suspend(19),
            Control::Resume,
            Control::Checkpoint {
                signal: 12,
                timeout: 30,
            },
            Control::Walltime(Some(90)),
            Control::Walltime(None),
        ] {
            assert_eq!(Control::parse(c.render().trim_end()), Ok(c));
        }
        assert!(Control::parse("signal").is_err());
        assert!(Control::parse("signal x").is_err());
        assert!(Control::parse("reboot").is_err());
        assert!(Control::parse("walltime soon").is_err());
    }
}
