//! Spool housekeeping off the daemon's thread: removing the directories of
//! jobs that are done.
//!
//! File-system metadata operations are slow on many disks (several ms per
//! unlink on a busy ext4), so doing them inline would cap the start rate.
//!
//! Nothing here flushes the spool: a launch (`launch.json`, the job
//! directory) need not be on disk before its supervisor starts, because a
//! machine crash kills the job anyway and a daemon crash loses nothing from
//! the page cache. What must survive — the job's outcome — is written
//! durably by the supervisor itself (`status`: temp file, fsync, rename,
//! fsync of the job directory and of the spool directory) before it exits.
//! (An earlier version flushed the whole file system with `syncfs` after
//! every batch of starts, which on a shared disk also waited for everyone
//! else's dirty data.)

use std::collections::BTreeSet;
use std::fs::{self, File};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex, MutexGuard};

/// Handle to the housekeeping thread. Dropping it lets the thread finish its
/// queue and exit.
pub(crate) struct Housekeeper {
    tasks: Sender<Task>,
    /// Directories queued for removal and not removed yet.
    doomed: Arc<Mutex<BTreeSet<PathBuf>>>,
}

enum Task {
    Remove(PathBuf),
}

impl Housekeeper {
    /// Start the thread for the spool at `spool`.
    pub(crate) fn start(spool: &Path) -> io::Result<Housekeeper> {
        // Fail early (as before) on a spool that cannot be opened.
        File::open(spool)?;
        let (tasks, queue) = mpsc::channel();
        let doomed = Arc::new(Mutex::new(BTreeSet::new()));
        let shared = Arc::clone(&doomed);
        std::thread::Builder::new()
            .name("local-rm-spool".into())
            .spawn(move || run(&queue, &shared))?;
        Ok(Housekeeper { tasks, doomed })
    }

    /// Remove a job directory, soon.
    pub(crate) fn remove(&self, dir: PathBuf) {
        lock(&self.doomed).insert(dir.clone());
        if self.tasks.send(Task::Remove(dir.clone())).is_err() {
            let _ = fs::remove_dir_all(&dir);
        }
    }

    /// Make sure `dir` does not exist and will not be removed later: before
    /// a job directory is created again.
    pub(crate) fn reclaim(&self, dir: &Path) -> io::Result<()> {
        let mut doomed = lock(&self.doomed);
        doomed.remove(dir);
        match fs::remove_dir_all(dir) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        }
    }
}

fn lock(set: &Mutex<BTreeSet<PathBuf>>) -> MutexGuard<'_, BTreeSet<PathBuf>> {
    // The set stays consistent even if a holder panicked.
    set.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn run(queue: &Receiver<Task>, doomed: &Mutex<BTreeSet<PathBuf>>) {
    let mut removed = 0u64;
    while let Ok(first) = queue.recv() {
        let removals = std::iter::once(first)
            .chain(queue.try_iter())
            .map(|Task::Remove(dir)| dir);
        for dir in removals {
            // Moved aside under the lock, so that `reclaim` cannot interleave;
            // removed outside it.
            let trash = {
                let mut set = lock(doomed);
                if !set.remove(&dir) {
                    continue;
                }
                removed += 1;
                let trash = trash_name(&dir, removed);
                match fs::rename(&dir, &trash) {
                    Ok(()) => trash,
                    Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
                    Err(e) => {
                        tracing::warn!("local RM: cannot remove {}: {e}", dir.display());
                        continue;
                    }
                }
            };
            if let Err(e) = fs::remove_dir_all(&trash) {
                tracing::warn!("local RM: cannot remove {}: {e}", trash.display());
            }
        }
    }
}

/// Prefix of the hidden names of directories being removed.
pub(crate) const TRASH_PREFIX: &str = ".trash-";

/// A hidden sibling name for a directory about to be removed.
fn trash_name(dir: &Path, n: u64) -> PathBuf {
    let name = dir
        .file_name()
        .map_or_else(Default::default, |n| n.to_string_lossy().into_owned());
    dir.with_file_name(format!("{TRASH_PREFIX}{name}-{}-{n}", std::process::id()))
}
