use arches_core::templates::TemplateMatch;
use arches_core::JobFlag;

use crate::parse::Severity;

#[test]
fn the_windows_hpc_templates_parse() {
    let text = "\
JOBCFG[SmallJob]     SELECT=TRUE WALLTIME=00:01:00 DESCRIPTION=\"short tests\"
JOBCFG[SmallJob.max] WALLTIME=00:01:00
JOBMATCHCFG[SmallJob] JMAX=SmallJob.max
JOBCFG[def]          WCLIMIT=1:00:00 FLAGS=RESTARTABLE RFEATURES=fast,big TASKS=2 NODES=1 MEM=2G
JOBMATCHCFG[default] JDEF=def FLAGS=BREAK
";
    let p = crate::parse(text, "moab.cfg");
    assert!(!p.has_errors(), "{:?}", p.diagnostics);
    let t = &p.config.policy.templates;
    let small = &t.templates["SmallJob"];
    assert!(small.select);
    assert_eq!(small.walltime, Some(60));
    assert_eq!(small.description.as_deref(), Some("short tests"));
    let def = &t.templates["def"];
    assert_eq!(def.walltime, Some(3600));
    assert_eq!(def.flags, [JobFlag::Restartable]);
    assert_eq!(def.features, ["fast", "big"]);
    assert_eq!(
        (def.procs, def.nodes, def.mem_mb),
        (Some(2), Some(1), Some(2048))
    );
    assert_eq!(
        t.matches,
        [
            TemplateMatch {
                name: "SmallJob".into(),
                jmax: Some("SmallJob.max".into()),
                ..TemplateMatch::default()
            },
            TemplateMatch {
                name: "default".into(),
                jdef: Some("def".into()),
                brk: true,
                ..TemplateMatch::default()
            }
        ]
    );
    // mschedctl -l config shows them back.
    let eff = p.config.effective();
    assert!(eff.contains(&(
        "JOBMATCHCFG[default]".to_string(),
        "JDEF=def FLAGS=BREAK".to_string()
    )));
}

#[test]
fn bad_templates_are_errors_naming_the_line() {
    let text = "\
CLASSCFG[short] MAX.WCLIMIT=00:10:00
JOBCFG[long]    CLASS=short WALLTIME=2:00:00
JOBMATCHCFG[a]  JSET=long
JOBMATCHCFG[b]  JMAX=missing
JOBCFG[x]       WALLTIME=0
JOBCFG[y]       PROCS=-2
JOBMATCHCFG[c]  JMIN=two words
JOBMATCHCFG[d]  JSTAT=long
JOBCFG[z]       CLASS=nosuch
JOBMATCHCFG[e]  JDEF=z
";
    let p = crate::parse(text, "moab.cfg");
    let msgs: Vec<String> = p
        .diagnostics
        .iter()
        .map(|d| format!("{}:{}: {}", d.line, d.severity.as_str(), d.message))
        .collect();
    let has = |s: &str| msgs.iter().any(|m| m.contains(s));
    assert!(
        has("2:ERROR: JOBCFG[long] WALLTIME=2:00:00 contradicts CLASSCFG[short] MAX.WCLIMIT=00:10:00"),
        "{msgs:#?}"
    );
    assert!(
        has("4:ERROR: JOBMATCHCFG[b] JMAX=missing: no JOBCFG[missing] defines this template"),
        "{msgs:#?}"
    );
    assert!(has("5:ERROR: JOBCFG[x] WALLTIME"), "{msgs:#?}");
    assert!(has("6:ERROR: JOBCFG[y] PROCS"), "{msgs:#?}");
    assert!(
        has("7:ERROR: JOBMATCHCFG[c]: expected ATTR=VALUE"),
        "{msgs:#?}"
    );
    // JSTAT collects statistics (showstats -j): no diagnostic.
    assert!(!msgs.iter().any(|m| m.starts_with("8:")), "{msgs:#?}");
    assert_eq!(
        p.config.policy.templates.stat_templates(),
        ["long"],
        "{msgs:#?}"
    );
    assert!(
        has("9:WARNING: JOBCFG[z] CLASS=nosuch: no CLASSCFG[nosuch] is configured"),
        "{msgs:#?}"
    );
    assert!(p
        .diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .all(|d| d.line > 0));
}
