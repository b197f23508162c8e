//! Every committed man page renders with `man -l` (man-db + groff) without a
//! single groff warning and reads like a real page: NAME, SYNOPSIS naming the
//! value of every option (`[-a ACCOUNT]`, never `[-a ]`), DESCRIPTION,
//! OPTIONS, a non-empty EXAMPLES, EXIT STATUS and SEE ALSO; `moab.cfg(5)`
//! documents every parameter of the table.
//!
//! `man` comes from the Debian package man-db (`.ci/run` installs it when it
//! is missing). Without it the test fails when `CI` is set and is skipped
//! with a notice otherwise.

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `man -l` of one page as plain text (80 columns), or the failure.
fn render(page: &Path) -> String {
    let out = Command::new("man")
        .args(["--warnings", "-E", "UTF-8", "-l"])
        .arg(page)
        .env("MANWIDTH", "80")
        .env("MAN_KEEP_FORMATTING", "0")
        .env("LC_ALL", "C.UTF-8")
        .env_remove("MANPAGER")
        .env_remove("PAGER")
        .output()
        .expect("run man");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "man -l {}: {err}", page.display());
    assert!(
        err.trim().is_empty(),
        "man -l {} printed warnings:\n{err}",
        page.display()
    );
    // No formatting is left when the output is not a terminal; strip any
    // overstrike a `col -b` would remove, to be safe.
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let mut clean = String::with_capacity(text.len());
    for c in text.chars() {
        if c == '\u{8}' {
            clean.pop();
        } else {
            clean.push(c);
        }
    }
    clean
}

/// The rendered sections: heading → body with whitespace collapsed.
fn sections(text: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for line in text.lines() {
        let is_heading = !line.is_empty()
            && !line.starts_with(' ')
            && line.chars().all(|c| c.is_ascii_uppercase() || c == ' ');
        if is_heading {
            out.push((line.trim().to_string(), String::new()));
        } else if let Some((_, body)) = out.last_mut() {
            body.push(' ');
            body.push_str(line.trim());
        }
    }
    for (_, body) in &mut out {
        *body = body.split_whitespace().collect::<Vec<_>>().join(" ");
    }
    out
}

fn man_available() -> bool {
    let ok = Command::new("man")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI is set but `man` is missing: install man-db (as .ci/run does)"
        );
        eprintln!("NOTICE: man page render test SKIPPED: `man` (man-db) is not installed");
    }
    ok
}

/// What a synopsis must show for one option: `-a ACCOUNT`, `--help`.
fn expected_forms(arg: &clap::Arg) -> Vec<String> {
    let mut flags = Vec::new();
    if let Some(s) = arg.get_short() {
        flags.push(format!("-{s}"));
    }
    if let Some(l) = arg.get_long() {
        flags.push(format!("--{l}"));
    }
    let flag = flags.join("|");
    if !arg.get_action().takes_values() {
        return vec![flag];
    }
    let value = arg
        .get_value_names()
        .and_then(|v| v.first().map(|s| s.to_string()))
        .unwrap_or_else(|| arg.get_id().as_str().to_ascii_uppercase().replace('-', "_"));
    let optional = arg.get_num_args().is_some_and(|r| r.min_values() == 0);
    vec![if optional {
        format!("{flag} [{value}")
    } else {
        format!("{flag} {value}")
    }]
}

#[test]
fn every_man_page_renders_with_all_sections_and_value_names() {
    if !man_available() {
        return;
    }
    let moab = arches_server::cli_command().name("moab").bin_name("moab");
    let mut simulate = moab
        .find_subcommand("simulate")
        .expect("simulate")
        .clone()
        .name("moab-simulate")
        .bin_name("moab simulate");
    simulate.build();
    let mut commands: Vec<clap::Command> = arches_cli::commands();
    commands.push(moab);
    commands.push(simulate);
    let mut checked = 0;
    for mut cmd in commands {
        cmd.build();
        let name = cmd.get_name().to_string();
        let page = root().join(format!("man/man1/{name}.1"));
        assert!(
            page.exists(),
            "{} missing (cargo run -p xtask -- generate)",
            page.display()
        );
        let text = render(&page);
        let secs = sections(&text);
        let get = |h: &str| {
            secs.iter()
                .find(|(s, _)| s == h)
                .map(|(_, b)| b.as_str())
                .unwrap_or_else(|| panic!("{name}(1) has no {h} section:\n{text}"))
        };
        for h in [
            "NAME",
            "SYNOPSIS",
            "DESCRIPTION",
            "OPTIONS",
            "EXAMPLES",
            "EXIT STATUS",
            "ENVIRONMENT",
            "SEE ALSO",
        ] {
            get(h);
        }
        assert!(
            get("NAME").starts_with(&format!("{name} - ")),
            "{name}: NAME {}",
            get("NAME")
        );
        assert!(get("EXAMPLES").len() > 10, "{name}(1): EXAMPLES is empty");
        assert!(
            get("EXIT STATUS").starts_with('0'),
            "{name}(1): EXIT STATUS"
        );
        assert!(
            get("SEE ALSO").contains("moab.cfg(5)"),
            "{name}(1): SEE ALSO"
        );
        // A long A|B|C list may break after a '|' (rejoined here).
        let synopsis = get("SYNOPSIS").replace("| ", "|");
        let synopsis = synopsis.as_str();
        let bin = cmd.get_bin_name().unwrap_or(&name).to_string();
        assert!(synopsis.starts_with(&bin), "{name}: {synopsis}");
        assert!(
            !synopsis.contains(" ]"),
            "{name}: an empty value in {synopsis}"
        );
        for arg in cmd
            .get_arguments()
            .filter(|a| !a.is_hide_set() && !a.is_positional())
        {
            for form in expected_forms(arg) {
                assert!(
                    synopsis.contains(&form),
                    "{name}(1) SYNOPSIS lacks '{form}':\n{synopsis}"
                );
            }
        }
        for arg in cmd.get_positionals().filter(|a| !a.is_hide_set()) {
            let v = arg
                .get_value_names()
                .and_then(|v| v.first().map(|s| s.to_string()))
                .unwrap_or_else(|| arg.get_id().as_str().to_ascii_uppercase());
            assert!(
                synopsis.contains(&v),
                "{name}(1) SYNOPSIS lacks operand {v}: {synopsis}"
            );
        }
        checked += 1;
    }
    assert!(checked >= 19, "only {checked} pages checked");

    let text = render(&root().join("man/man5/moab.cfg.5"));
    let secs = sections(&text);
    for h in [
        "NAME",
        "SYNOPSIS",
        "DESCRIPTION",
        "PARAMETERS",
        "OBJECTS",
        "EXAMPLES",
        "FILES",
        "SEE ALSO",
    ] {
        assert!(
            secs.iter().any(|(s, _)| s == h),
            "moab.cfg(5) has no {h}:\n{text}"
        );
    }
    let params = &secs
        .iter()
        .find(|(s, _)| s == "PARAMETERS")
        .expect("PARAMETERS")
        .1;
    for p in [
        "BACKFILLPOLICY",
        "RESERVATIONDEPTH",
        "JOBCPURGETIME",
        "LOGDIR",
    ] {
        assert!(params.contains(p), "moab.cfg(5) lacks {p}");
    }
    let objects = &secs
        .iter()
        .find(|(s, _)| s == "OBJECTS")
        .expect("OBJECTS")
        .1;
    for o in [
        "NODECFG[name]",
        "RMCFG[name]",
        "QOSCFG[name]",
        "PROCS=",
        "QFLAGS=",
    ] {
        assert!(objects.contains(o), "moab.cfg(5) lacks {o}");
    }
}
