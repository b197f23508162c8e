//! msub's script handling: reading the script (file or stdin, at most
//! 1 MiB) and extracting the directive words from its header.

use std::io::Read;
use std::path::Path;

use super::msub::fail;

/// Largest script accepted (1 MiB).
pub const MAX_SCRIPT_BYTES: u64 = 1024 * 1024;
/// Directive prefixes recognised by default.
pub const DEFAULT_PREFIXES: &[&str] = &["#PBS", "#MSUB", "#MOAB"];

/// Reads the script (file or stdin), at most [`MAX_SCRIPT_BYTES`].
pub fn read_script(path: Option<&Path>) -> Result<String, String> {
    let mut buf = Vec::new();
    match path {
        Some(p) => {
            let f = std::fs::File::open(p).map_err(|e| {
                fail(format!(
                    "cannot read script '{}' ({})",
                    p.display(),
                    io_reason(&e)
                ))
            })?;
            f.take(MAX_SCRIPT_BYTES + 1)
                .read_to_end(&mut buf)
                .map_err(|e| {
                    fail(format!(
                        "cannot read script '{}' ({})",
                        p.display(),
                        io_reason(&e)
                    ))
                })?;
        }
        None => {
            std::io::stdin()
                .take(MAX_SCRIPT_BYTES + 1)
                .read_to_end(&mut buf)
                .map_err(|e| fail(format!("cannot read script from stdin ({})", io_reason(&e))))?;
        }
    }
    if buf.len() as u64 > MAX_SCRIPT_BYTES {
        return Err(fail(format!(
            "script is larger than {} bytes",
            MAX_SCRIPT_BYTES
        )));
    }
    if buf.contains(&0) {
        return Err(fail("script contains a NUL character"));
    }
    String::from_utf8(buf).map_err(|_| fail("script is not valid UTF-8 text"))
}

fn io_reason(e: &std::io::Error) -> String {
    let s = e.to_string();
    s.split(" (os error").next().unwrap_or(&s).to_string()
}

/// Splits a directive's option text like a shell would (quotes, backslashes).
pub fn shell_split(s: &str) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(x) => cur.push(x),
                        None => return Err("unterminated single quote".into()),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(x) => cur.push(x),
                            None => return Err("unterminated double quote".into()),
                        },
                        Some(x) => cur.push(x),
                        None => return Err("unterminated double quote".into()),
                    }
                }
            }
            '\\' => {
                in_word = true;
                if let Some(x) = chars.next() {
                    cur.push(x);
                }
            }
            c if c.is_whitespace() => {
                if in_word {
                    out.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            '#' if !in_word => break,
            c => {
                in_word = true;
                cur.push(c);
            }
        }
    }
    if in_word {
        out.push(cur);
    }
    Ok(out)
}

/// The directive lines of the script header, as option words. `prefix`:
/// `None` = the default prefixes, `Some("")` = directives disabled.
pub fn directives(script: &str, prefix: Option<&str>) -> Result<Vec<String>, String> {
    let prefixes: Vec<&str> = match prefix {
        Some("") => return Ok(Vec::new()),
        Some(p) => vec![p],
        None => DEFAULT_PREFIXES.to_vec(),
    };
    let mut words = Vec::new();
    for (i, line) in script.lines().enumerate() {
        let t = line.trim();
        if i == 0 && t.starts_with("#!") {
            continue;
        }
        if t.is_empty() {
            continue;
        }
        let hit = prefixes.iter().find_map(|p| {
            t.strip_prefix(p)
                .filter(|rest| rest.is_empty() || rest.starts_with(char::is_whitespace))
        });
        match hit {
            Some(rest) => {
                let w = shell_split(rest)
                    .map_err(|e| fail(format!("invalid directive '{t}' ({e})")))?;
                words.extend(w);
            }
            None if t.starts_with('#') => continue,
            None => break,
        }
    }
    Ok(words)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directives_from_header_only() {
        let s = "#!/bin/bash\n\n#PBS -N dask-worker\n#MOAB -l nodes=1:ppn=4\n# a comment\n#MSUB -l walltime=00:10:00 -j oe\necho hi\n#PBS -q late\n";
        let w = directives(s, None).unwrap();
        assert_eq!(
            w,
            [
                "-N",
                "dask-worker",
                "-l",
                "nodes=1:ppn=4",
                "-l",
                "walltime=00:10:00",
                "-j",
                "oe"
            ]
        );
        assert!(directives(s, Some("")).unwrap().is_empty());
        assert_eq!(
            directives(s, Some("#MOAB")).unwrap(),
            ["-l", "nodes=1:ppn=4"]
        );
        // `#PBSX` is not `#PBS`.
        assert!(directives("#PBSX -N a\n", None).unwrap().is_empty());
    }

    #[test]
    fn shell_split_handles_quotes() {
        assert_eq!(
            shell_split(r#"-o "/path/to/dir\ 1/x.log" -N 'a b'"#).unwrap(),
            ["-o", "/path/to/dir 1/x.log", "-N", "a b"]
        );
        assert_eq!(
            shell_split("-l nodes=1 # trailing").unwrap(),
            ["-l", "nodes=1"]
        );
        assert!(shell_split("-N 'open").is_err());
    }

    #[test]
    fn oversized_and_missing_scripts_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let big = dir.path().join("big.sh");
        std::fs::write(&big, vec![b'#'; (MAX_SCRIPT_BYTES + 1) as usize]).unwrap();
        let e = read_script(Some(&big)).unwrap_err();
        assert!(
            e.starts_with("ERROR:    cannot submit job - script is larger"),
            "{e}"
        );
        let e = read_script(Some(&dir.path().join("none.sh"))).unwrap_err();
        assert!(e.contains("No such file or directory"), "{e}");
    }
}
