//! Table invariants: unique names, and every documented default parses and
//! applies through its own setter.

use super::*;
use crate::config::Config;

#[test]
fn names_and_aliases_are_unique() {
    let mut seen = std::collections::BTreeSet::new();
    for p in all() {
        for n in std::iter::once(p.name).chain(p.aliases.iter().copied()) {
            assert!(
                seen.insert(n.to_ascii_uppercase()),
                "duplicate parameter name {n}"
            );
            assert_eq!(n, n.to_ascii_uppercase(), "{n} is not upper-case");
        }
        if let Shape::Object { attrs, .. } = &p.shape {
            let mut a_seen = std::collections::BTreeSet::new();
            for a in attrs.iter() {
                for n in std::iter::once(a.name).chain(a.aliases.iter().copied()) {
                    assert!(a_seen.insert(n), "{}: duplicate attribute {n}", p.name);
                }
            }
        }
        assert!(
            !p.doc.is_empty() && !p.used_by.is_empty(),
            "{} lacks doc",
            p.name
        );
    }
}

#[test]
fn every_documented_default_parses_and_applies() {
    for p in all() {
        match &p.shape {
            Shape::Scalar { ty, set, .. } => {
                let Some(d) = p.default else { continue };
                let v = ty
                    .parse(d)
                    .unwrap_or_else(|e| panic!("{} default '{d}': {e}", p.name));
                let mut c = Config::default();
                let site = Site {
                    name: p.name,
                    index: "0",
                };
                set(&mut c, site, &v).unwrap_or_else(|e| panic!("{} default '{d}': {e}", p.name));
                // The normalised text parses back to the same value.
                assert_eq!(ty.parse(&v.to_string()).as_ref(), Ok(&v), "{}", p.name);
            }
            Shape::Object { index, attrs } => {
                let idx = if *index == ObjectIndex::Level {
                    "1"
                } else {
                    "x"
                };
                for a in attrs.iter() {
                    let Some(d) = a.default else { continue };
                    let v =
                        a.ty.parse(d)
                            .unwrap_or_else(|e| panic!("{} {}='{d}': {e}", p.name, a.name));
                    let mut c = Config::default();
                    (a.set)(
                        &mut c,
                        Site {
                            name: a.name,
                            index: idx,
                        },
                        &v,
                    )
                    .unwrap_or_else(|e| panic!("{} {}='{d}': {e}", p.name, a.name));
                }
            }
        }
    }
}

#[test]
fn applying_scalar_defaults_leaves_the_default_config() {
    let mut text = String::new();
    for p in all() {
        if let (Shape::Scalar { .. }, Some(d)) = (&p.shape, p.default) {
            text.push_str(&format!("{} {d}\n", p.name));
        }
    }
    let parsed = crate::parse(&text, "defaults.cfg");
    assert!(!parsed.has_errors(), "{:?}", parsed.diagnostics);
    let expected = Config {
        record: parsed.config.record.clone(),
        ..Config::default()
    };
    assert_eq!(parsed.config, expected);
}

#[test]
fn lookup_is_case_insensitive_and_knows_aliases() {
    assert_eq!(
        lookup("backfilltype").map(|p| p.name),
        Some("BACKFILLPOLICY")
    );
    assert_eq!(lookup("rmcfg").map(|p| p.name), Some("RMCFG"));
    assert!(lookup("NOSUCHPARAM").is_none());
    let rm = lookup("RMCFG").unwrap();
    assert_eq!(rm.attr("targetusage").map(|a| a.name), Some("TARGETUSAGE"));
    let class = lookup("CLASSCFG").unwrap();
    assert_eq!(class.attr("FLAGS").map(|a| a.name), Some("JOBFLAGS"));
    assert_eq!(class.attr("MAXPROCS").map(|a| a.name), Some("MAXPROC"));
}

#[test]
fn suggestions_find_close_names_only() {
    let names = || all().map(|p| p.name);
    assert_eq!(suggest("BACKFILPOLICY", names()), Some("BACKFILLPOLICY"));
    assert_eq!(
        suggest("RESERVATIONDEPHT", names()),
        Some("RESERVATIONDEPTH")
    );
    assert_eq!(suggest("ZZZ", names()), None);
}

#[test]
fn the_required_parameters_are_declared() {
    for name in [
        "SCHEDCFG",
        "ADMINCFG",
        "ADMIN1",
        "ADMIN2",
        "ADMIN3",
        "RMCFG",
        "NODECFG",
        "CLASSCFG",
        "QOSCFG",
        "USERCFG",
        "GROUPCFG",
        "ACCOUNTCFG",
        "RMPOLLINTERVAL",
        "NODEALLOCATIONPOLICY",
        "BACKFILLPOLICY",
        "BACKFILLMETRIC",
        "BACKFILLDEPTH",
        "BFCHUNKDURATION",
        "BFCHUNKSIZE",
        "BFPRIORITYPOLICY",
        "BFVIRTUALWALLTIMESCALINGFACTOR",
        "BFVIRTUALWALLTIMECONFLICTPOLICY",
        "RESERVATIONDEPTH",
        "RESERVATIONQOSLIST",
        "RESERVATIONPOLICY",
        "SERVICEWEIGHT",
        "QUEUETIMEWEIGHT",
        "XFACTORWEIGHT",
        "BYPASSWEIGHT",
        "CREDWEIGHT",
        "USERWEIGHT",
        "GROUPWEIGHT",
        "ACCOUNTWEIGHT",
        "CLASSWEIGHT",
        "QOSWEIGHT",
        "XFACTORCAP",
        "PREEMPTPOLICY",
        "JOBPREEMPTMINACTIVETIME",
        "JOBPREEMPTMAXACTIVETIME",
        "GUARANTEEDPREEMPTION",
        "JOBCPURGETIME",
        "JOBPURGETIME",
        "DEFERTIME",
        "DEFERCOUNT",
        "LOGLEVEL",
        "LOGFILE",
        "LOGDIR",
        "CLIENTTIMEOUT",
        "DATASTAGEMODEL",
        "DATASTAGEHOLDTYPE",
        "ENABLEPOSUSERPRIORITY",
        "USEMOABJOBID",
        "DISPLAYFLAGS",
        "SRCFG",
        "RUNTIMEPREDICTION",
        "BFORDER",
        "PREDICTIONGUARD",
        "METRICSPORT",
        "METRICSHOST",
    ] {
        assert!(lookup(name).is_some(), "{name} missing from the table");
    }
    let rm = lookup("RMCFG").unwrap();
    for a in [
        "TYPE",
        "RESOURCETYPE",
        "SERVER",
        "TIMEOUT",
        "DATARM",
        "SYSTEMQUERYURL",
        "CLUSTERQUERYURL",
        "SYSTEMMODIFYURL",
        "TARGETUSAGE",
        "MAXDSOP",
        "BANDWIDTH",
        "SUSPENDSIG",
        "CHECKPOINTSIG",
        "CHECKPOINTTIMEOUT",
        "POLLINTERVAL",
        "PARTITION",
        "FLAGS",
    ] {
        assert!(rm.attr(a).is_some(), "RMCFG {a} missing");
    }
}

#[test]
fn metrics_listener_is_off_by_default_and_loopback_when_on() {
    let p = crate::parse("", "moab.cfg");
    assert_eq!(p.config.metrics_port, None);
    assert_eq!(p.config.metrics_host, "127.0.0.1");
    let p = crate::parse("METRICSPORT 9464\nMETRICSHOST ::\n", "moab.cfg");
    assert!(!p.has_errors(), "{:?}", p.diagnostics);
    assert_eq!(p.config.metrics_port, Some(9464));
    assert_eq!(p.config.metrics_host, "::");
    let p = crate::parse("METRICSHOST example.org\nMETRICSPORT 70000\n", "moab.cfg");
    let errors: Vec<String> = p
        .errors()
        .map(|d| format!("{}: {}", d.line, d.message))
        .collect();
    assert_eq!(errors.len(), 2, "{errors:?}");
    assert!(
        errors[0].starts_with("1: ") && errors[0].contains("invalid address 'example.org'"),
        "{errors:?}"
    );
    assert!(errors[1].starts_with("2: "), "{errors:?}");
}
