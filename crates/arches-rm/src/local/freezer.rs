//! A cgroup for each job, so that suspending and killing it reach its whole
//! process tree, also the processes that left its process group (`setsid`,
//! daemonising helpers) — signals to the process group miss those.
//!
//! Best effort: the supervisor creates `arches-job<id>-<pid>` under its own
//! cgroup in the cgroup v2 hierarchy (`cgroup.freeze`, `cgroup.kill`), else
//! in the v1 `freezer` hierarchy (`freezer.state`); the job leader joins it
//! in the forked child before it execs (it writes `0` to `cgroup.procs`, so
//! every descendant is born inside). Without either (not root, no cgroup
//! file system, no permission) the job runs without one and suspension falls
//! back to SIGSTOP/SIGCONT on the process group. Its path is recorded in the
//! job directory (`cgroup`) so a daemon that finds the supervisor killed can
//! still clean up.

use std::fs::{self, OpenOptions};
use std::io;
use std::os::fd::OwnedFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Which interface the cgroup has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// cgroup v2: `cgroup.freeze`, `cgroup.kill`.
    V2,
    /// cgroup v1 freezer: `freezer.state`.
    V1,
}

/// A job's cgroup.
#[derive(Debug)]
pub(crate) struct Freezer {
    pub dir: PathBuf,
    pub kind: Kind,
}

impl Freezer {
    /// Creates a cgroup named `name` next to the calling process's, if the
    /// system lets us; `None` otherwise.
    pub(crate) fn create(name: &str) -> Option<Freezer> {
        let mounts = fs::read_to_string("/proc/self/mountinfo").ok()?;
        let own = fs::read_to_string("/proc/self/cgroup").ok()?;
        for kind in [Kind::V2, Kind::V1] {
            let Some(base) = hierarchy(&mounts, &own, kind) else {
                continue;
            };
            let dir = base.join(name);
            let made = fs::create_dir(&dir)
                .or_else(|e| {
                    if e.kind() == io::ErrorKind::AlreadyExists {
                        Ok(())
                    } else {
                        Err(e)
                    }
                })
                .is_ok();
            let usable = match kind {
                Kind::V2 => dir.join("cgroup.freeze").exists(),
                Kind::V1 => dir.join("freezer.state").exists(),
            };
            if made && usable && dir.join("cgroup.procs").exists() {
                return Some(Freezer { dir, kind });
            }
            let _ = fs::remove_dir(&dir);
        }
        None
    }

    /// `cgroup.procs` opened for writing (close-on-exec): the forked child
    /// writes `0` to it to join before it execs.
    pub(crate) fn procs_file(&self) -> io::Result<OwnedFd> {
        let f = OpenOptions::new()
            .write(true)
            .custom_flags(libc::O_CLOEXEC)
            .open(self.dir.join("cgroup.procs"))?;
        Ok(f.into())
    }

    /// Whether `pid` is in the cgroup (the leader joined).
    pub(crate) fn contains(&self, pid: i32) -> bool {
        self.pids().contains(&pid)
    }

    /// The processes in the cgroup now.
    pub(crate) fn pids(&self) -> Vec<i32> {
        fs::read_to_string(self.dir.join("cgroup.procs"))
            .unwrap_or_default()
            .lines()
            .filter_map(|l| l.trim().parse().ok())
            .collect()
    }

    /// The processes in the cgroup that are not in process group `pgid`
    /// (left it with `setsid` and the like): a signal to the group misses
    /// them, and a second copy to a member would run its handler twice.
    pub(crate) fn outside_group(&self, pgid: i32) -> Vec<i32> {
        self.pids()
            .into_iter()
            .filter(|&pid| super::sys::process_group(pid).ok().flatten() != Some(pgid))
            .collect()
    }

    /// Freezes (`true`) or thaws every process of the job.
    pub(crate) fn freeze(&self, on: bool) -> io::Result<()> {
        match self.kind {
            Kind::V2 => fs::write(self.dir.join("cgroup.freeze"), if on { "1" } else { "0" }),
            Kind::V1 => fs::write(
                self.dir.join("freezer.state"),
                if on { "FROZEN" } else { "THAWED" },
            ),
        }
    }

    /// SIGKILLs every process of the job (thawed first, so a v1-frozen one
    /// dies at once).
    pub(crate) fn kill_all(&self) {
        let _ = self.freeze(false);
        if self.kind == Kind::V2 && fs::write(self.dir.join("cgroup.kill"), "1").is_ok() {
            return;
        }
        for pid in self.pids() {
            // SAFETY: plain kill(2) of a process of this job's cgroup.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
            }
        }
    }

    /// Processor time (user + system, ms) the cgroup's processes used so
    /// far: cgroup v2's `cpu.stat` `usage_usec` (always there); `None` for a
    /// v1 freezer or an unreadable file.
    pub(crate) fn cpu_ms(&self) -> Option<u64> {
        if self.kind != Kind::V2 {
            return None;
        }
        let text = fs::read_to_string(self.dir.join("cpu.stat")).ok()?;
        usage_ms(&text)
    }

    /// Kills what is left and removes the cgroup once empty (waits briefly
    /// for the killed processes to go).
    pub(crate) fn remove(&self) {
        remove_dir(&self.dir, self.kind);
    }
}

/// `usage_usec` of a cgroup v2 `cpu.stat`, in milliseconds.
fn usage_ms(cpu_stat: &str) -> Option<u64> {
    cpu_stat
        .lines()
        .find_map(|l| l.strip_prefix("usage_usec "))
        .and_then(|v| v.trim().parse::<u64>().ok())
        .map(|us| us / 1000)
}

/// Kills whatever is left in a job's cgroup directory and removes it (used
/// by the daemon when a supervisor died before cleaning up).
pub(crate) fn remove_dir(dir: &Path, kind: Kind) {
    let f = Freezer {
        dir: dir.to_path_buf(),
        kind,
    };
    let deadline = Instant::now() + Duration::from_secs(2);
    loop {
        if f.pids().is_empty() && fs::remove_dir(dir).is_ok() {
            return;
        }
        if !dir.exists() || Instant::now() >= deadline {
            let _ = fs::remove_dir(dir);
            return;
        }
        f.kill_all();
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The record written to the job directory: `<v1|v2> <path>`.
pub(crate) fn render(f: &Freezer) -> String {
    let kind = match f.kind {
        Kind::V2 => "v2",
        Kind::V1 => "v1",
    };
    format!("{kind} {}\n", f.dir.display())
}

/// Reads a job directory's `cgroup` record.
pub(crate) fn read_record(text: &str) -> Option<(Kind, PathBuf)> {
    let (kind, path) = text.trim().split_once(' ')?;
    let kind = match kind {
        "v2" => Kind::V2,
        "v1" => Kind::V1,
        _ => return None,
    };
    let path = PathBuf::from(path);
    // Only ever a cgroup this code created.
    let name = path.file_name()?.to_str()?;
    name.starts_with("arches-job").then_some((kind, path))
}

/// Where the calling process's cgroup is in the hierarchy of `kind`.
fn hierarchy(mountinfo: &str, own: &str, kind: Kind) -> Option<PathBuf> {
    let mount = mountinfo.lines().find_map(|l| {
        let (pre, post) = l.split_once(" - ")?;
        let mut post = post.split_whitespace();
        let fstype = post.next()?;
        let _source = post.next()?;
        let opts = post.next().unwrap_or("");
        let point = pre.split_whitespace().nth(4)?;
        let ok = match kind {
            Kind::V2 => fstype == "cgroup2",
            Kind::V1 => fstype == "cgroup" && opts.split(',').any(|o| o == "freezer"),
        };
        ok.then(|| PathBuf::from(unescape(point)))
    })?;
    let path = own.lines().find_map(|l| {
        let mut parts = l.splitn(3, ':');
        let _id = parts.next()?;
        let controllers = parts.next()?;
        let path = parts.next()?;
        let ok = match kind {
            Kind::V2 => controllers.is_empty(),
            Kind::V1 => controllers.split(',').any(|c| c == "freezer"),
        };
        ok.then(|| path.trim_start_matches('/').to_string())
    })?;
    Some(mount.join(path))
}

/// Mount points in `mountinfo` escape spaces and the like as `\040`.
fn unescape(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\' && i + 3 < b.len() {
            if let Ok(v) = u8::from_str_radix(&s[i + 1..i + 4], 8) {
                out.push(v);
                i += 4;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    const MOUNTS: &str = "\
25 30 0:22 / /sys/fs/cgroup rw - tmpfs tmpfs rw\n\
31 25 0:27 / /sys/fs/cgroup/freezer rw - cgroup cgroup rw,freezer\n\
35 25 0:31 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n";

    #[test]
    fn outside_group_leaves_out_the_members_of_the_group() {
        // SAFETY: plain getter.
        assert_eq!(unsafe { libc::geteuid() }, 0, "needs root for cgroups");
        let name = format!("arches-job-test-{}", std::process::id());
        let f = Freezer::create(&name).expect("a cgroup (CI runs as root)");
        // Killed, and the cgroup removed, even when an assertion fails.
        struct Procs<'f>(Vec<std::process::Child>, &'f Freezer);
        impl Drop for Procs<'_> {
            fn drop(&mut self) {
                for c in &mut self.0 {
                    let _ = c.kill();
                    let _ = c.wait();
                }
                self.1.remove();
            }
        }
        let spawn = |group: i32| {
            use std::os::unix::process::CommandExt;
            std::process::Command::new("sleep")
                .arg("30")
                .process_group(group)
                .spawn()
                .unwrap()
        };
        // Two group leaders, and a member of the first's group.
        let mut procs = Procs(vec![spawn(0), spawn(0)], &f);
        let pid = |c: &std::process::Child| i32::try_from(c.id()).unwrap();
        let pgid = pid(&procs.0[0]);
        procs.0.push(spawn(pgid));
        for c in &procs.0 {
            fs::write(f.dir.join("cgroup.procs"), c.id().to_string()).unwrap();
        }
        let mut all = f.pids();
        all.sort_unstable();
        let mut want: Vec<i32> = procs.0.iter().map(pid).collect();
        want.sort_unstable();
        assert_eq!(all, want);
        assert_eq!(f.outside_group(pgid), vec![pid(&procs.0[1])]);
        drop(procs);
        assert!(!f.dir.exists());
    }

    #[test]
    fn cpu_stat_usage_is_read_in_milliseconds() {
        let stat = "usage_usec 2503911\nuser_usec 2400000\nsystem_usec 103911\n";
        assert_eq!(usage_ms(stat), Some(2503));
        assert_eq!(usage_ms("user_usec 5\n"), None);
        assert_eq!(usage_ms("usage_usec x\n"), None);
    }

    #[test]
    fn finds_both_hierarchies_from_mountinfo_and_own_cgroup() {
        let own = "6:freezer:/batch\n4:memory:/x\n0::/system.slice/moab.service\n";
        assert_eq!(
            hierarchy(MOUNTS, own, Kind::V2),
            Some(PathBuf::from(
                "/sys/fs/cgroup/unified/system.slice/moab.service"
            ))
        );
        assert_eq!(
            hierarchy(MOUNTS, own, Kind::V1),
            Some(PathBuf::from("/sys/fs/cgroup/freezer/batch"))
        );
        assert_eq!(hierarchy("", own, Kind::V2), None);
        assert_eq!(unescape("/a\\040b"), "/a b");
    }

    #[test]
    fn records_round_trip_and_refuse_foreign_paths() {
        let f = Freezer {
            dir: PathBuf::from("/sys/fs/cgroup/arches-job7-99"),
            kind: Kind::V2,
        };
        assert_eq!(read_record(&render(&f)), Some((Kind::V2, f.dir.clone())));
        assert_eq!(read_record("v2 /sys/fs/cgroup/system.slice"), None);
        assert_eq!(read_record("v3 /x/arches-job1"), None);
    }
}
