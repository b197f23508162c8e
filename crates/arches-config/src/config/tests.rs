//! Tests of the typed configuration: embedded default, runtime changes and
//! effective values.

use arches_core::policy::BackfillPolicy;
use arches_core::Policy;

use super::*;
use crate::parse::Severity;

#[test]
fn default_config_has_moab_defaults_and_arches_purge_time() {
    let c = Config::default();
    assert_eq!(c.policy, Policy::default());
    assert_eq!(c.job_purge_secs, 24 * 3600);
    assert_eq!(c.admins[0], ["root"]);
    assert_eq!(c.sched.name, "Moab");
    assert!(c.nodes.is_empty() && c.rms.is_empty());
    assert_eq!(c.poll_interval(), 30);
}

#[test]
fn embedded_default_is_one_local_node_and_a_local_rm() {
    let c = Config::embedded_default("hopper", 8, 16_000);
    assert_eq!(c.nodes.len(), 1);
    let n = &c.nodes[0];
    assert_eq!((n.name.as_str(), n.procs, n.mem_mb), ("hopper", 8, 16_000));
    assert_eq!(n.partition, arches_core::node::DEFAULT_PARTITION);
    assert_eq!(c.rms.len(), 1);
    assert_eq!(
        (c.rms[0].name.as_str(), c.rms[0].rm_type),
        ("local", RmType::Local)
    );
    assert_eq!(c.policy, Policy::default());
    let eff = c.effective();
    assert!(
        eff.contains(&("RMCFG[local]".to_string(), "TYPE=LOCAL".to_string())),
        "{eff:?}"
    );
    assert!(eff.contains(&(
        "NODECFG[hopper]".to_string(),
        "PROCS=8 MEM=16000".to_string()
    )));
}

#[test]
fn apply_line_changes_a_running_config() {
    let mut c = Config::embedded_default("h", 4, 1000);
    let warnings = c.apply_line("BACKFILLPOLICY NONE").unwrap();
    assert!(warnings.is_empty());
    assert_eq!(c.policy.backfill, BackfillPolicy::None);
    // A node added at run time appears in the derived node list.
    c.apply_line("NODECFG[h2] PROCS=2").unwrap();
    assert_eq!(
        c.nodes.iter().map(|n| n.name.as_str()).collect::<Vec<_>>(),
        ["h", "h2"]
    );
    // Unknown names are warnings; the config is kept.
    let w = c.apply_line("BOGUS 1").unwrap();
    assert_eq!(w[0].severity, Severity::Warning);
    assert_eq!(
        w[0].to_string(),
        "mschedctl:1: WARNING: unknown parameter 'BOGUS'; line ignored"
    );
}

#[test]
fn apply_line_errors_leave_the_config_unchanged() {
    let mut c = Config::embedded_default("h", 4, 1000);
    let before = c.clone();
    let e = c
        .apply_line("RMCFG[local] TIMEOUT=30 TARGETUSAGE=2000%")
        .unwrap_err();
    assert_eq!(e.len(), 1);
    assert_eq!(
        e[0].to_string(),
        "mschedctl:1: ERROR: RMCFG[local] TARGETUSAGE: invalid percentage '2000%' (expected 0–100%, or a fraction 0–1)"
    );
    assert_eq!(c, before);
    assert!(apply_line(&mut c, "RESERVATIONDEPTH lots").is_err());
    assert_eq!(c, before);
}

#[test]
fn effective_lists_every_parameter_with_set_values_and_defaults() {
    let parsed = crate::parse("BACKFILLPOLICY bestfit\nRESERVATIONDEPTH[1] 3\nRMCFG[x] TYPE=NATIVE DESCRIPTION=\"two words\"\n", "m");
    let eff = parsed.config.effective();
    let get = |k: &str| eff.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
    assert_eq!(get("BACKFILLPOLICY"), Some("BESTFIT"));
    assert_eq!(get("RESERVATIONDEPTH[1]"), Some("3"));
    assert_eq!(get("JOBCPURGETIME"), Some("24:00:00"));
    assert_eq!(get("ADMINCFG[1]"), Some("USERS=root"));
    assert_eq!(
        get("RMCFG[x]"),
        Some("TYPE=NATIVE DESCRIPTION=\"two words\"")
    );
    for p in crate::params::all() {
        if matches!(p.shape, crate::params::Shape::Scalar { .. }) {
            assert!(
                eff.iter()
                    .any(|(n, _)| n == p.name || n.starts_with(&format!("{}[", p.name))),
                "{}",
                p.name
            );
        }
    }
}

#[test]
fn effective_values_parse_back_to_the_same_config() {
    let text = concat!(
        "BACKFILLPOLICY BESTFIT\nRESERVATIONDEPTH[0] 3\nRESERVATIONQOSLIST[0] high,low\nJOBCPURGETIME 2:00:00:00\n",
        "CLASSCFG[batch] MAXJOB=2,4 MAXWC=1:00:00,2:00:00 QDEF=high& JOBFLAGS=SUSPENDABLE\n",
        "QOSCFG[high] QFLAGS=PREEMPTOR PRIORITY=100\nNODECFG[DEFAULT] PROCS=4\nNODECFG[n1] MEM=2GB FEATURES=a:b\n",
        "RMCFG[hsm] TYPE=NATIVE RESOURCETYPE=STORAGE TARGETUSAGE=0.25 SYSTEMQUERYURL=exec://q CLUSTERQUERYURL=exec://c BANDWIDTH=1GB\n",
        "RMCFG[pbs] DATARM=hsm\n",
        "SRCFG[s] PERIOD=DAY STARTTIME=8:00:00\nXFACTORCAP 9\nADMINCFG[2] USERS=ops\n",
    );
    let first = crate::parse(text, "a");
    assert!(first.diagnostics.is_empty(), "{:#?}", first.diagnostics);
    let again: String = first
        .config
        .effective()
        .iter()
        .filter(|(_, v)| !v.is_empty())
        .map(|(n, v)| format!("{n} {v}\n"))
        .collect();
    let second = crate::parse(&again, "b");
    assert!(!second.has_errors(), "{:#?}\n{again}", second.diagnostics);
    let (mut a, mut b) = (first.config, second.config);
    a.record = Record::default();
    b.record = Record::default();
    assert_eq!(a, b, "{again}");
}

#[test]
fn fill_local_defaults_completes_a_policy_only_file() {
    let mut c = crate::parse("BACKFILLPOLICY NONE\nNODECFG[DEFAULT] FEATURES=ssd\n", "m").config;
    assert!(c.nodes.is_empty());
    c.fill_local_defaults("h", 4, 512);
    assert_eq!(c.rms.len(), 1);
    assert_eq!(
        (c.rms[0].name.as_str(), c.rms[0].rm_type),
        ("local", RmType::Local)
    );
    assert_eq!(c.nodes.len(), 1);
    assert_eq!(
        (
            c.nodes[0].name.as_str(),
            c.nodes[0].procs,
            c.nodes[0].mem_mb
        ),
        ("h", 4, 512)
    );
    assert_eq!(c.nodes[0].features, ["ssd"]);
    assert_eq!(c.policy.backfill, BackfillPolicy::None);
}

#[test]
fn fill_local_defaults_leaves_configured_clusters_alone() {
    let text = "RMCFG[slurm] TYPE=SLURM\nNODECFG[n1] PROCS=2\n";
    let mut c = crate::parse(text, "m").config;
    let before = c.clone();
    c.fill_local_defaults("h", 4, 512);
    assert_eq!(c, before);
    // A storage RM alone is not a compute RM: the local one is added.
    let mut c = crate::parse(
        "RMCFG[d] TYPE=NATIVE RESOURCETYPE=STORAGE SYSTEMQUERYURL=exec://q\n",
        "m",
    )
    .config;
    c.fill_local_defaults("h", 1, 1);
    assert_eq!(
        c.rms.iter().map(|r| r.name.as_str()).collect::<Vec<_>>(),
        ["d", "local"]
    );
    assert_eq!(c.nodes.len(), 1);
}

#[test]
fn runtime_changes_replace_file_settings_without_duplicate_warnings() {
    let mut c = crate::parse("BACKFILLPOLICY FIRSTFIT\nRMCFG[a] TYPE=PBS\n", "m").config;
    assert_eq!(c.apply_line("BACKFILLPOLICY BESTFIT").unwrap(), vec![]);
    assert_eq!(c.apply_line("RMCFG[a] TYPE=SLURM").unwrap(), vec![]);
    assert_eq!(c.apply_line("RMCFG[a] TYPE=LOCAL").unwrap(), vec![]);
    assert_eq!(c.rm("a").unwrap().rm_type, RmType::Local);
    let eff = c.effective();
    assert!(eff.contains(&("BACKFILLPOLICY".to_string(), "BESTFIT".to_string())));
    assert!(eff.contains(&("RMCFG[a]".to_string(), "TYPE=LOCAL".to_string())));
}

#[test]
fn effective_values_with_spaces_hashes_and_quotes_parse_back() {
    let text =
        "LOGFILE \"my #log\"\nLOGDIR \"d\\\"\nRMCFG[x] TYPE=NATIVE DESCRIPTION='say \"hi\"'\n";
    let first = crate::parse(text, "a");
    assert!(first.diagnostics.is_empty(), "{:#?}", first.diagnostics);
    assert_eq!(first.config.log.file, "my #log");
    assert_eq!(
        first.config.rm("x").unwrap().description.as_deref(),
        Some("say \"hi\"")
    );
    let again: String = first
        .config
        .effective()
        .iter()
        .filter(|(_, v)| !v.is_empty())
        .map(|(n, v)| format!("{n} {v}\n"))
        .collect();
    let second = crate::parse(&again, "b");
    assert!(second.diagnostics.is_empty(), "{:#?}", second.diagnostics);
    assert_eq!(second.config.log.file, "my #log");
    assert_eq!(second.config.log.dir, "d\\");
    assert_eq!(
        second.config.rm("x").unwrap().description.as_deref(),
        Some("say \"hi\"")
    );
}

mod round_trip {
    //! Property: the effective values, written back as a file, give the same
    //! configuration (what `mschedctl -m --flags=persistent` relies on).

    use proptest::prelude::*;

    use crate::config::{Config, Record};

    fn line() -> impl Strategy<Value = String> {
        let names: Vec<String> = crate::params::all().map(|p| p.name.to_string()).collect();
        let words = prop_oneof![
            4 => proptest::sample::select(vec![
                "1", "0", "5", "2,4", "1:00:00", "0.5", "80%", "TRUE", "NONE", "BESTFIT", "SUSPEND",
                "LOCAL", "STORAGE", "SIGTSTP", "4GB", "exec://q", "a,b", "high&", "PREEMPTOR", "DAY",
                "moab://h:1", "[ALL]", "x y",
            ])
            .prop_map(str::to_string),
            1 => "[A-Za-z0-9:,.%&\"' #\\-]{0,8}",
        ];
        let attrs = proptest::sample::select(vec![
            "TYPE",
            "PROCS",
            "MEM",
            "PRIORITY",
            "MAXJOB",
            "MAXWC",
            "QDEF",
            "QFLAGS",
            "JOBFLAGS",
            "SERVER",
            "MODE",
            "USERS",
            "PERIOD",
            "TARGETUSAGE",
            "SUSPENDSIG",
            "SYSTEMQUERYURL",
            "RESOURCETYPE",
            "FEATURES",
            "STARTTIME",
            "DEFAULT.WCLIMIT",
        ]);
        (
            proptest::sample::select(names),
            proptest::option::of(proptest::sample::select(vec![
                "0", "1", "2", "a", "DEFAULT",
            ])),
            proptest::collection::vec((attrs, words.clone()), 1..4),
            words,
        )
            .prop_map(|(name, index, pairs, word)| {
                let head = match index {
                    Some(i) => format!("{name}[{i}]"),
                    None => name,
                };
                let is_object = matches!(
                    crate::params::lookup(&head[..head.find('[').unwrap_or(head.len())])
                        .map(|p| &p.shape),
                    Some(crate::params::Shape::Object { .. })
                );
                if is_object {
                    let attrs: Vec<String> =
                        pairs.iter().map(|(a, w)| format!("{a}={w}")).collect();
                    format!("{head} {}", attrs.join(" "))
                } else {
                    format!("{head} {word}")
                }
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        #[test]
        fn effective_values_round_trip(lines in proptest::collection::vec(line(), 0..25)) {
            // Whole-file checks (a storage RM without its URLs, ...) may
            // reject what the generator wrote; the effective values must
            // still re-read to the same configuration, and a file accepted
            // without errors must re-read without errors.
            let parsed = crate::parse(&lines.join("\n"), "a");
            let first_ok = !parsed.has_errors();
            let first = parsed.config;
            let text: String = first
                .effective()
                .iter()
                .filter(|(_, v)| !v.is_empty())
                .map(|(n, v)| format!("{n} {v}\n"))
                .collect();
            let second = crate::parse(&text, "b");
            prop_assert!(!first_ok || !second.has_errors(), "{:#?}\n{}", second.diagnostics, text);
            let strip = |c: Config| Config { record: Record::default(), ..c };
            prop_assert_eq!(strip(first), strip(second.config), "{}", text);
        }
    }
}

#[test]
fn nodecfg_is_laid_on_top_of_nodes_a_resource_manager_reports() {
    let text = "RMCFG[slurm] TYPE=SLURM\nNODECFG[DEFAULT] FEATURES=ib\n\
                NODECFG[n1] FEATURES=gpu,fast PARTITION=gpu PROCS=2\n\
                NODECFG[n2] STATE=Drained MEM=100\n";
    let parsed = crate::parse(text, "moab.cfg");
    let c = &parsed.config;
    let reported = |name: &str| {
        let mut n = Node::new(name, 8, 4096);
        n.features = vec!["fast".into()];
        n.partition = "batch".into();
        n
    };
    let mut n1 = reported("n1");
    c.overlay_node(&mut n1);
    assert_eq!((n1.procs, n1.mem_mb), (8, 4096), "Slurm's size stays");
    assert_eq!(n1.features, ["fast", "gpu"]);
    assert_eq!(n1.partition, "gpu");
    assert_eq!(n1.admin, NodeAdminState::Up);
    let mut n2 = reported("n2");
    c.overlay_node(&mut n2);
    assert_eq!(n2.features, ["fast", "ib"], "NODECFG[DEFAULT]");
    assert_eq!(
        (n2.partition.as_str(), n2.admin),
        ("batch", NodeAdminState::Drained)
    );
    let mut n2 = reported("n2");
    n2.admin = NodeAdminState::Down;
    c.overlay_node(&mut n2);
    assert_eq!(n2.admin, NodeAdminState::Down, "a reported Down stays Down");
    assert_eq!(c.configured_node_names().collect::<Vec<_>>(), ["n1", "n2"]);
    // PROCS= and MEM= are reported at their own lines.
    let warnings: Vec<String> = parsed
        .diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Warning)
        .map(|d| format!("{}:{}: {}", d.file, d.line, d.message))
        .collect();
    assert_eq!(
        warnings,
        [
            "moab.cfg:3: NODECFG[n1] PROCS: ignored with RMCFG[slurm] TYPE=SLURM (Slurm reports each node's processors and memory)",
            "moab.cfg:4: NODECFG[n2] MEM: ignored with RMCFG[slurm] TYPE=SLURM (Slurm reports each node's processors and memory)",
        ]
    );
    // Without a Slurm RM nothing is said.
    let local = crate::parse("NODECFG[n1] PROCS=2 MEM=10\n", "moab.cfg");
    assert!(local.diagnostics.is_empty(), "{:?}", local.diagnostics);
}
