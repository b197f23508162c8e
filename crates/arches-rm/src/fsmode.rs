//! Files and directories with explicit modes, whatever the umask the daemon
//! was started with: `mkdir(2)` and `open(2)` apply the umask, so a spool
//! directory created `0711` under umask 077 would be `0700` and the jobs of
//! other users could not reach their scripts. Every directory the daemon
//! and its backends create gets its mode set after creation.

use std::fs::{self, DirBuilder, File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::Path;

/// Creates directory `path` (and, with `recursive`, its missing parents,
/// which get the same mode) and sets its mode to exactly `mode`.
pub fn create_dir(path: &Path, mode: u32, recursive: bool) -> io::Result<()> {
    if recursive {
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            if !parent.exists() {
                create_dir(parent, mode, true)?;
            }
        }
        if path.is_dir() {
            return Ok(());
        }
    }
    DirBuilder::new().mode(mode).create(path)?;
    set_mode(path, mode)
}

/// Sets the mode of `path` to exactly `mode`.
pub fn set_mode(path: &Path, mode: u32) -> io::Result<()> {
    fs::set_permissions(path, fs::Permissions::from_mode(mode))
}

/// Creates (or truncates) file `path` with exactly `mode` and writes `bytes`.
pub fn write_file(path: &Path, bytes: &[u8], mode: u32) -> io::Result<()> {
    let mut f = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(mode)
        .open(path)?;
    f.set_permissions(fs::Permissions::from_mode(mode))?;
    f.write_all(bytes)
}

/// Opens `path` for appending, creating it with exactly `mode` (an existing
/// file keeps its mode).
pub fn open_append(path: &Path, mode: u32) -> io::Result<File> {
    let existed = path.exists();
    let f = OpenOptions::new()
        .append(true)
        .create(true)
        .mode(mode)
        .open(path)?;
    if !existed {
        f.set_permissions(fs::Permissions::from_mode(mode))?;
    }
    Ok(f)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mode(p: &Path) -> u32 {
        fs::metadata(p).unwrap().permissions().mode() & 0o7777
    }

    #[test]
    fn modes_are_exact_whatever_the_umask() {
        let dir = tempfile::tempdir().unwrap();
        // SAFETY: umask(2) cannot fail; restored below.
        let old = unsafe { libc::umask(0o077) };
        let deep = dir.path().join("a/b/c");
        create_dir(&deep, 0o711, true).unwrap();
        let file = dir.path().join("f");
        write_file(&file, b"x", 0o644).unwrap();
        // SAFETY: as above.
        unsafe { libc::umask(0o000) };
        let open = dir.path().join("log");
        drop(open_append(&open, 0o600).unwrap());
        // SAFETY: as above.
        unsafe { libc::umask(old) };
        assert_eq!(mode(&deep), 0o711);
        assert_eq!(mode(&dir.path().join("a")), 0o711);
        assert_eq!(mode(&file), 0o644);
        assert_eq!(mode(&open), 0o600);
        assert!(create_dir(&deep, 0o711, true).is_ok(), "existing: fine");
        assert!(create_dir(&deep, 0o711, false).is_err());
    }
}
