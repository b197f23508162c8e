//! The daemon's home directory and the modes of everything in it.
//!
//! Whatever umask the daemon is started with, what it writes is private:
//!
//! | path | mode | why |
//! |---|---|---|
//! | the home (created by the daemon) | `0711` | others reach the socket and the spool, cannot list |
//! | `arches.db`, `-wal`, `-shm` | `0600` | every job's script and environment |
//! | `log/`, `log/moab.log` | `0700`, `0600` | names, paths and messages of every job |
//! | `spool/`, `slurm-spool/` and each job's directory | `0711` | a job's user reaches its script, lists nothing |
//! | `launch.json`, `ctl`, `status`, `pid`, `cgroup` in a job directory | `0600` | the daemon's and supervisor's files |
//! | `script` in a job directory | `0700`, owned by the job's user | the job runs it |
//! | `nodefile` | `0644` | `PBS_NODEFILE`: host names only |
//! | `session/` in a Slurm job directory (`msub -I`) | `0700`, owned by the job's user | the session's script, environment and status: between the job and msub |
//! | the socket | `0666` | every user talks to the daemon |
//!
//! New files get these modes when they are created ([`prepare`],
//! `arches_store::Store::open`, `arches_rm::fsmode`); at every start
//! [`secure`] checks the files already there and fixes any that is too
//! open, with a warning in the log (a home written by an older version, a
//! file an administrator copied in).

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use anyhow::Context;

/// Files of a job directory only the daemon (and its supervisors) read.
const PRIVATE_SPOOL_FILES: [&str; 5] = ["launch.json", "ctl", "status", "pid", "cgroup"];

/// Creates the home (`0711`) and its `log/` (`0700`) when missing.
pub fn prepare(home: &Path) -> anyhow::Result<()> {
    if !home.exists() {
        arches_rm::fsmode::create_dir(home, 0o711, true)
            .with_context(|| format!("cannot create {}", home.display()))?;
    }
    let log = home.join("log");
    if !log.exists() {
        arches_rm::fsmode::create_dir(&log, 0o700, false)
            .with_context(|| format!("cannot create {}", log.display()))?;
    }
    Ok(())
}

/// Checks the modes of the home's files and directories, fixes those that
/// are too open, and returns a warning for each fix (and for a socket other
/// users cannot reach).
pub fn secure(home: &Path, socket: &Path) -> Vec<String> {
    let mut warnings = Vec::new();
    // The home itself: nobody else may write into it (replace the database,
    // plant a link where the daemon writes). Reported, never changed: it
    // may be a directory the daemon does not own.
    if let Ok(m) = std::fs::metadata(home) {
        let mode = m.mode() & 0o7777;
        if mode & 0o022 != 0 {
            warnings.push(format!(
                "{} is mode {mode:04o}: other users may replace the daemon's files in it (make it 0711 or 0755)",
                home.display()
            ));
        }
    }
    for name in [
        "arches.db",
        "arches.db-wal",
        "arches.db-shm",
        "arches.db-journal",
    ] {
        restrict(&home.join(name), 0o077, &mut warnings);
    }
    let log = home.join("log");
    restrict(&log, 0o077, &mut warnings);
    for f in entries(&log) {
        restrict(&f, 0o077, &mut warnings);
    }
    for spool in [crate::rm::SPOOL_DIR, crate::rm::SLURM_SPOOL_DIR] {
        let dir = home.join(spool);
        traversable(&dir, &mut warnings);
        for job in entries(&dir).into_iter().filter(|p| p.is_dir()) {
            traversable(&job, &mut warnings);
            for name in PRIVATE_SPOOL_FILES {
                restrict(&job.join(name), 0o077, &mut warnings);
            }
            if spool == crate::rm::SLURM_SPOOL_DIR {
                restrict(&job.join("script"), 0o077, &mut warnings);
            }
        }
    }
    if let Some(w) = unreachable_by_others(socket) {
        warnings.push(w);
    }
    warnings
}

/// Removes the `bits` from the mode of `path` (if it exists, is not a
/// symbolic link and belongs to the daemon's user), with a warning.
fn restrict(path: &Path, bits: u32, warnings: &mut Vec<String>) {
    let Ok(m) = std::fs::symlink_metadata(path) else {
        return;
    };
    if m.file_type().is_symlink() || !ours(&m) {
        return;
    }
    let mode = m.mode() & 0o7777;
    if mode & bits == 0 {
        return;
    }
    set(path, mode, mode & !bits, warnings);
}

/// A spool directory: exactly `0711` (others traverse, never list or write).
fn traversable(dir: &Path, warnings: &mut Vec<String>) {
    let Ok(m) = std::fs::symlink_metadata(dir) else {
        return;
    };
    if !m.is_dir() || !ours(&m) {
        return;
    }
    let mode = m.mode() & 0o7777;
    if mode != 0o711 {
        set(dir, mode, 0o711, warnings);
    }
}

/// Whether the daemon's user owns the file (only its own files are fixed).
fn ours(m: &std::fs::Metadata) -> bool {
    // SAFETY: geteuid(2) cannot fail.
    m.uid() == unsafe { libc::geteuid() }
}

fn set(path: &Path, from: u32, to: u32, warnings: &mut Vec<String>) {
    match std::fs::set_permissions(path, std::fs::Permissions::from_mode(to)) {
        Ok(()) => warnings.push(format!(
            "mode of {} was {from:04o}: changed to {to:04o}",
            path.display()
        )),
        Err(e) => warnings.push(format!(
            "mode of {} is {from:04o} (should be {to:04o}) and cannot be changed: {e}",
            path.display()
        )),
    }
}

fn entries(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .map(|rd| rd.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default()
}

/// A warning when some directory above `socket` keeps other users from
/// reaching it (no search permission for others).
pub fn unreachable_by_others(socket: &Path) -> Option<String> {
    let abs = if socket.is_absolute() {
        socket.to_path_buf()
    } else {
        std::env::current_dir().ok()?.join(socket)
    };
    let mut dir = abs.parent();
    while let Some(d) = dir {
        if let Ok(m) = std::fs::metadata(d) {
            if m.mode() & 0o001 == 0 {
                return Some(format!(
                    "other users cannot reach the socket {}: {} is mode {:04o} (they need search permission, o+x)",
                    socket.display(),
                    d.display(),
                    m.mode() & 0o7777
                ));
            }
        }
        dir = d.parent();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mode(p: &Path) -> u32 {
        std::fs::metadata(p).unwrap().mode() & 0o7777
    }

    #[test]
    fn too_open_files_are_fixed_with_a_warning() {
        let t = tempfile::tempdir().unwrap();
        std::fs::set_permissions(t.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        let home = t.path().join("home");
        prepare(&home).unwrap();
        assert_eq!(mode(&home), 0o711);
        assert_eq!(mode(&home.join("log")), 0o700);
        let db = home.join("arches.db");
        std::fs::write(&db, "x").unwrap();
        std::fs::set_permissions(&db, std::fs::Permissions::from_mode(0o644)).unwrap();
        let job = home.join("spool/17");
        std::fs::create_dir_all(&job).unwrap();
        std::fs::set_permissions(home.join("spool"), std::fs::Permissions::from_mode(0o755))
            .unwrap();
        std::fs::set_permissions(&job, std::fs::Permissions::from_mode(0o700)).unwrap();
        std::fs::write(job.join("status"), "exit 0\n").unwrap();
        std::fs::set_permissions(job.join("status"), std::fs::Permissions::from_mode(0o664))
            .unwrap();
        std::fs::write(job.join("nodefile"), "n1\n").unwrap();
        std::fs::set_permissions(job.join("nodefile"), std::fs::Permissions::from_mode(0o644))
            .unwrap();
        let w = secure(&home, &home.join("moab.sock"));
        assert_eq!(mode(&db), 0o600);
        assert_eq!(mode(&home.join("spool")), 0o711);
        assert_eq!(mode(&job), 0o711);
        assert_eq!(mode(&job.join("status")), 0o600);
        assert_eq!(mode(&job.join("nodefile")), 0o644, "left readable");
        assert!(
            w.iter()
                .any(|w| w.contains("arches.db was 0644: changed to 0600")),
            "{w:?}"
        );
        assert_eq!(w.len(), 4, "{w:?}");
        assert!(secure(&home, &home.join("moab.sock")).is_empty(), "fixed");
        std::fs::set_permissions(&home, std::fs::Permissions::from_mode(0o777)).unwrap();
        let w = secure(&home, &home.join("moab.sock"));
        assert!(w[0].ends_with("is mode 0777: other users may replace the daemon's files in it (make it 0711 or 0755)"), "{w:?}");
        assert_eq!(mode(&home), 0o777, "reported, not changed");
    }

    #[test]
    fn a_socket_behind_a_closed_directory_is_reported() {
        let t = tempfile::tempdir().unwrap();
        let closed = t.path().join("closed");
        std::fs::create_dir(&closed).unwrap();
        std::fs::set_permissions(&closed, std::fs::Permissions::from_mode(0o700)).unwrap();
        let w = unreachable_by_others(&closed.join("moab.sock")).unwrap();
        assert!(w.contains("is mode 0700"), "{w}");
    }
}
