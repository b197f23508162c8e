//! The daemon's `--help` and `moab simulate --help` list the same options as
//! their committed man pages (`man/man1/moab.1`, `man/man1/moab-simulate.1`),
//! and `man moab` names the simulate subcommand (the client commands are
//! checked by crates/arches-cli/tests/manpages.rs).

mod common;

use std::collections::BTreeSet;
use std::path::PathBuf;

use common::{bin, text};

fn man(name: &str) -> String {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("man/man1/{name}.1"));
    std::fs::read_to_string(&p).unwrap_or_else(|e| {
        panic!(
            "{}: {e} (run `cargo run -p xtask -- generate`)",
            p.display()
        )
    })
}

/// Flags at the start of the help's option lines.
fn help_flags(help: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut in_opts = false;
    for l in help.lines() {
        if l.starts_with("Options:") {
            in_opts = true;
            continue;
        }
        let t = l.trim_start();
        if !in_opts || !t.starts_with('-') || l.len() - t.len() > 8 {
            continue;
        }
        for part in t.split(", ") {
            let f = part.split([' ', '=', '[', '<']).next().unwrap_or("");
            if f.starts_with('-') {
                out.insert(f.to_string());
            }
            if !part.starts_with('-') {
                break;
            }
        }
    }
    out
}

/// Flags of the man page's OPTIONS section.
fn man_flags(man: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let (mut in_opts, mut after_tp) = (false, false);
    for l in man.lines() {
        if l.starts_with(".SH") {
            in_opts = l.starts_with(".SH OPTIONS");
            continue;
        }
        if !in_opts {
            continue;
        }
        if l == ".TP" {
            after_tp = true;
            continue;
        }
        if after_tp {
            after_tp = false;
            let plain = l
                .replace("\\-", "-")
                .replace("\\fB", "")
                .replace("\\fR", "")
                .replace("\\fI", "");
            for part in plain.split(", ") {
                let f = part.split([' ', '=', '[', '<']).next().unwrap_or("");
                if f.starts_with('-') {
                    out.insert(f.to_string());
                }
            }
        }
    }
    out
}

#[test]
fn daemon_and_simulate_help_match_their_man_pages() {
    for (page, args) in [
        ("moab", vec!["--help"]),
        ("moab-simulate", vec!["simulate", "--help"]),
    ] {
        let out = std::process::Command::new(bin("moab"))
            .args(&args)
            .output()
            .expect("moab --help");
        assert!(out.status.success());
        let help = text(&out.stdout);
        let m = man(page);
        let h = help_flags(&help);
        assert!(h.len() >= 3, "{page}: too few options in --help: {h:?}");
        assert_eq!(h, man_flags(&m), "{page}: --help and man page differ");
        for section in [".SH DESCRIPTION", ".SH EXAMPLES", ".SH \"EXIT STATUS\""] {
            assert!(m.contains(section), "{page}: no {section}");
        }
    }
    let moab = man("moab");
    assert!(
        moab.contains("moab\\-simulate(1)"),
        "man moab does not mention moab simulate"
    );
    assert!(man("moab-simulate").contains("\\-\\-trace"));
}
