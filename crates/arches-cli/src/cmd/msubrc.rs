//! Site defaults for every submission: `/etc/msubrc` (Moab: "Sites that
//! wish to automatically add parameters to every job submission can
//! populate the file '/etc/msubrc' with global parameters that every job
//! submission will inherit"). The file holds msub options as on a command
//! line (several lines allowed, `#` starts a comment), e.g.
//! `-W x=GRES:matlab:2` or `-l walltime=1:00:00 -q batch`. They apply under
//! the script's directives and the command line: single-valued options are
//! used when neither gives one, `-l`/`-W`/`-v` lists come first so that
//! later values override. `MSUBRC` names another file (tests, per-site
//! layouts). A file that cannot be read or parsed is an error naming it:
//! a site default is never silently dropped.

use std::path::PathBuf;

use super::msub::{fail, usage_reason, Msub};
use super::msub_script::shell_split;

/// The default location.
pub const DEFAULT_PATH: &str = "/etc/msubrc";

/// The file to read: `$MSUBRC`, else `/etc/msubrc`.
pub fn path() -> PathBuf {
    std::env::var_os("MSUBRC")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(DEFAULT_PATH))
}

/// Splits `text` into words line by line as a shell would for simple
/// quoting ([`shell_split`]: blanks separate, quotes group, `\` escapes,
/// `#` outside a word comments out the rest of the line).
pub fn words(text: &str) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    for line in text.lines() {
        out.extend(shell_split(line)?);
    }
    Ok(out)
}

/// The site defaults (empty when the file does not exist).
pub fn site_defaults() -> Result<Msub, String> {
    let path = path();
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Msub::default()),
        Err(e) => return Err(fail(format!("cannot read {} ({e})", path.display()))),
    };
    let w = words(&text).map_err(|e| fail(format!("{}: {e}", path.display())))?;
    if w.is_empty() {
        return Ok(Msub::default());
    }
    let d = super::msub::parse_words(w).map_err(|e| {
        fail(format!(
            "invalid option in {} ({})",
            path.display(),
            usage_reason(&e)
        ))
    })?;
    if d.script.is_some() {
        return Err(fail(format!("{} names a script operand", path.display())));
    }
    Ok(d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_split_like_a_shell() {
        assert_eq!(
            words("-W x=GRES:matlab:2  # licences\n-l 'walltime=1:00:00' -N \"a b\"").unwrap(),
            vec![
                "-W",
                "x=GRES:matlab:2",
                "-l",
                "walltime=1:00:00",
                "-N",
                "a b"
            ]
        );
        assert!(words("-N 'open").is_err());
        assert_eq!(words("a\\ b").unwrap(), vec!["a b"]);
    }
}
