//! The `mdiag -C` report: diagnostics in line order, a summary, failure on
//! any error, INFO lines when verbose.

use arches_config::{check, Verbosity};

#[test]
fn clean_file_reports_only_the_summary() {
    let r = check(
        "BACKFILLPOLICY FIRSTFIT\n# note\nRMCFG[local] TYPE=LOCAL\n",
        "moab.cfg",
        Verbosity::Normal,
    );
    assert!(r.ok());
    assert_eq!(
        r.render(),
        "moab.cfg: 2 parameter lines, 0 errors, 0 warnings\n"
    );
}

#[test]
fn diagnostics_are_listed_in_line_order_with_a_summary() {
    let text = "LOGLEVEL 99\nBACKFILPOLICY NONE\nRESERVATIONDEPTH 2\n";
    let r = check(text, "/opt/moab/moab.cfg", Verbosity::Normal);
    assert!(!r.ok());
    assert_eq!((r.errors, r.warnings), (1, 1));
    assert_eq!(
        r.render(),
        "/opt/moab/moab.cfg:1: ERROR: LOGLEVEL: value 99 out of range (0–9)\n\
         /opt/moab/moab.cfg:2: WARNING: unknown parameter 'BACKFILPOLICY' (did you mean BACKFILLPOLICY?); line ignored\n\
         /opt/moab/moab.cfg: 3 parameter lines, 1 error, 1 warning\n"
    );
}

#[test]
fn verbose_lists_valid_lines_like_moab_5() {
    let r = check("RMPOLLINTERVAL 0:30\nFOO 1\n", "m.cfg", Verbosity::Verbose);
    assert!(r.ok());
    assert_eq!(
        r.lines,
        [
            "INFO:    line #1 is valid: 'RMPOLLINTERVAL 0:30'",
            "m.cfg:2: WARNING: unknown parameter 'FOO'; line ignored",
            "m.cfg: 2 parameter lines, 0 errors, 1 warning",
        ]
    );
}

#[test]
fn load_file_reads_and_names_the_file() {
    let dir = std::env::temp_dir().join(format!("arches-config-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("moab.cfg");
    std::fs::write(&path, "NODECFG[n1] PROCS=2\nLOGLEVEL x\n").unwrap();
    let parsed = arches_config::load_file(&path).unwrap();
    assert_eq!(parsed.config.nodes[0].procs, 2);
    let e = parsed.errors().next().unwrap().to_string();
    assert_eq!(
        e,
        format!("{}:2: ERROR: LOGLEVEL: invalid integer 'x'", path.display())
    );
    let missing = arches_config::load_file(dir.join("nope.cfg")).unwrap_err();
    assert!(missing.to_string().starts_with("cannot read "), "{missing}");
    std::fs::remove_dir_all(&dir).unwrap();
}
