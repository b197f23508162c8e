//! Refusals of jobs that could never start: a name the job's output files
//! cannot carry, paths the operating system cannot use, environment
//! variables `execve` cannot pass, a shell that does not exist, a class the
//! configuration does not define. Refused at submission with a clear reason
//! rather than retried and deferred for a day (docs/security.md).

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use arches_api::SubmitRequest;
use arches_core::Policy;

use super::{err, SubmitError};

/// Longest job name: `<name>.o<id>` must fit a file name (255 bytes) with
/// any job id.
pub const MAX_NAME_BYTES: usize = 230;

/// Longest path (Linux `PATH_MAX` less its NUL).
pub const MAX_PATH_BYTES: usize = 4095;

/// Longest path component (Linux `NAME_MAX`).
pub const MAX_COMPONENT_BYTES: usize = 255;

/// Checks what needs no daemon state (called by [`super::parse`]).
pub(super) fn check(req: &SubmitRequest, policy: &Policy) -> Result<(), SubmitError> {
    if let Some(name) = req.name.as_deref().filter(|n| !n.is_empty()) {
        job_name(name)?;
    }
    let paths = [
        ("working directory", req.workdir.as_deref()),
        ("output path", req.output.as_deref()),
        ("error path", req.error.as_deref()),
        ("submit directory", Some(req.submit_dir.as_str())),
    ];
    for (what, p) in paths {
        if let Some(p) = p {
            path(what, p)?;
        }
    }
    for (k, _) in &req.env {
        if k.is_empty() || k.contains('=') {
            return err(format!(
                "invalid environment variable name '{}'",
                arches_api::text::escape(k)
            ));
        }
    }
    if let Some(shell) = req.shell.as_deref().filter(|s| !s.is_empty()) {
        if !shell.starts_with('/') {
            return err(format!(
                "shell '{}' is not an absolute path",
                arches_api::text::escape(shell)
            ));
        }
        path("shell", shell)?;
    }
    if let Some(class) = req.class.as_deref().filter(|c| !c.is_empty()) {
        if !policy.classes.is_empty() && !policy.classes.contains_key(class) {
            let known: Vec<&str> = policy.classes.keys().map(String::as_str).collect();
            return err(format!(
                "unknown class '{}' (configured classes: {})",
                arches_api::text::escape(class),
                known.join(",")
            ));
        }
    }
    Ok(())
}

/// An interactive job (`msub -I`) needs a resource manager that can give
/// its owner a terminal (`rm_kind`: the compute RM's `TYPE`): LOCAL (the
/// job's supervisor relays its pty) or SLURM (msub runs the session as a
/// step of the job's allocation, `srun --jobid --overlap --pty`).
pub fn interactive_allowed(req: &SubmitRequest, rm_kind: &str) -> Result<(), SubmitError> {
    if req.interactive && !matches!(rm_kind, "LOCAL" | "SLURM") {
        return err(format!(
            "interactive jobs (-I) run only on the LOCAL and SLURM resource managers (this one is {rm_kind})"
        ));
    }
    Ok(())
}

/// Whether the `-S` shell exists and is executable on this host (the local
/// resource manager runs it here; a Slurm cluster's nodes may have others).
pub fn shell_exists(req: &SubmitRequest) -> Result<(), SubmitError> {
    let Some(shell) = req.shell.as_deref().filter(|s| !s.is_empty()) else {
        return Ok(());
    };
    match std::fs::metadata(shell) {
        Ok(m) if m.is_file() && m.permissions().mode() & 0o111 != 0 => Ok(()),
        Ok(_) => err(format!(
            "shell '{}' is not an executable file",
            arches_api::text::escape(shell)
        )),
        Err(e) => {
            let why = e.to_string();
            let why = why.split(" (os error").next().unwrap_or(&why).to_string();
            err(format!(
                "shell '{}' cannot be used ({why})",
                arches_api::text::escape(shell)
            ))
        }
    }
}

/// A job name: printable, no `/` (it names the output files), not too long
/// (also `mjobctl -m jobname=`).
pub fn job_name(name: &str) -> Result<(), SubmitError> {
    if arches_api::text::needs_escape(name) {
        return err(format!(
            "invalid job name '{}' (control characters)",
            arches_api::text::escape(name)
        ));
    }
    if name.contains('/') {
        return err(format!("invalid job name '{name}' (contains '/')"));
    }
    if name.len() > MAX_NAME_BYTES {
        return err(format!(
            "job name too long ({} bytes, limit {MAX_NAME_BYTES})",
            name.len()
        ));
    }
    Ok(())
}

/// A path the operating system can open: no component longer than
/// `NAME_MAX`, not longer than `PATH_MAX`.
fn path(what: &str, p: &str) -> Result<(), SubmitError> {
    let shown = || {
        let mut s = arches_api::text::escape(p).into_owned();
        if s.len() > 64 {
            let cut = (0..=61).rev().find(|i| s.is_char_boundary(*i)).unwrap_or(0);
            s.truncate(cut);
            s.push_str("...");
        }
        s
    };
    if p.len() > MAX_PATH_BYTES {
        return err(format!(
            "{what} '{}' too long ({} bytes, limit {MAX_PATH_BYTES})",
            shown(),
            p.len()
        ));
    }
    if Path::new(p)
        .components()
        .any(|c| c.as_os_str().len() > MAX_COMPONENT_BYTES)
    {
        return err(format!(
            "{what} '{}' has a component longer than {MAX_COMPONENT_BYTES} bytes",
            shown()
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn interactive_jobs_need_a_local_or_slurm_rm() {
        let req = SubmitRequest {
            interactive: true,
            ..SubmitRequest::default()
        };
        assert!(interactive_allowed(&req, "LOCAL").is_ok());
        assert!(interactive_allowed(&req, "SLURM").is_ok());
        let e = interactive_allowed(&req, "PBS").unwrap_err().0;
        assert!(
            e.contains("run only on the LOCAL and SLURM resource managers (this one is PBS)"),
            "{e}"
        );
        assert!(interactive_allowed(&SubmitRequest::default(), "PBS").is_ok());
    }

    use super::*;

    fn req() -> SubmitRequest {
        SubmitRequest {
            script: "true\n".into(),
            submit_dir: "/tmp".into(),
            ..SubmitRequest::default()
        }
    }

    fn why(r: &SubmitRequest, p: &Policy) -> String {
        check(r, p).unwrap_err().0
    }

    #[test]
    fn names_and_paths_the_os_cannot_use_are_refused() {
        let p = Policy::default();
        assert!(check(&req(), &p).is_ok());
        let mut r = req();
        r.name = Some("a\x1b[2Jb".into());
        assert_eq!(
            why(&r, &p),
            "invalid job name 'a\\x1b[2Jb' (control characters)"
        );
        r.name = Some("../../etc/x".into());
        assert!(why(&r, &p).contains("contains '/'"));
        r.name = Some("n".repeat(231));
        assert!(why(&r, &p).starts_with("job name too long (231 bytes"));
        let mut r = req();
        r.output = Some(format!("/tmp/{}", "x".repeat(256)));
        assert!(why(&r, &p).contains("component longer than 255"));
        r.output = Some(format!("/{}", "d/".repeat(2100)));
        assert!(why(&r, &p).contains("too long (4201 bytes"));
        let mut r = req();
        r.env = vec![("A=B".into(), "c".into())];
        assert_eq!(why(&r, &p), "invalid environment variable name 'A=B'");
    }

    #[test]
    fn shells_and_classes() {
        let mut p = Policy::default();
        let mut r = req();
        r.shell = Some("bash".into());
        assert_eq!(why(&r, &p), "shell 'bash' is not an absolute path");
        r.shell = Some("/no/such/shell".into());
        assert!(check(&r, &p).is_ok());
        assert!(shell_exists(&r)
            .unwrap_err()
            .0
            .starts_with("shell '/no/such/shell' cannot be used (No such file"));
        r.shell = Some("/bin/sh".into());
        assert!(shell_exists(&r).is_ok());
        r.shell = Some("/etc/passwd".into());
        assert_eq!(
            shell_exists(&r).unwrap_err().0,
            "shell '/etc/passwd' is not an executable file"
        );
        let mut r = req();
        r.class = Some("gpu".into());
        assert!(check(&r, &p).is_ok(), "no classes defined: any class");
        p.classes.insert("batch".into(), Default::default());
        p.classes.insert("long".into(), Default::default());
        assert_eq!(
            why(&r, &p),
            "unknown class 'gpu' (configured classes: batch,long)"
        );
        r.class = Some("long".into());
        assert!(check(&r, &p).is_ok());
    }
}
