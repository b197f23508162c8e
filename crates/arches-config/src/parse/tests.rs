//! Reader tests: syntax, diagnostics wording with file:line, and how each
//! kind of parameter lands in the typed configuration.

use arches_core::policy::{
    BackfillPolicy, Limit, NodeAllocationPolicy, PreemptPolicy, QosFlag, QosListKind,
    ReservationBucket,
};
use arches_core::{JobFlag, NodeAdminState};

use super::*;
use crate::enums::{DataStageModel, ResourceType, RmType};

fn ok(text: &str) -> Config {
    let p = parse(text, "moab.cfg");
    assert!(
        p.diagnostics.is_empty(),
        "unexpected diagnostics: {:#?}",
        p.diagnostics
    );
    p.config
}

fn messages(text: &str) -> Vec<String> {
    parse(text, "moab.cfg")
        .diagnostics
        .iter()
        .map(ToString::to_string)
        .collect()
}

#[test]
fn comments_blank_lines_case_and_continuations() {
    let c =
        ok("# header\n\nbackfillpolicy  bestfit   # trailing comment\nRESERVATIONDEPTH \\\n  4\n");
    assert_eq!(c.policy.backfill, BackfillPolicy::BestFit);
    assert_eq!(
        c.policy.reservation_buckets,
        vec![ReservationBucket {
            depth: 4,
            qos: None
        }]
    );
}

#[test]
fn hash_inside_a_word_or_quotes_is_not_a_comment() {
    let c = ok("RMCFG[x] TYPE=NATIVE CLUSTERQUERYURL=exec://a#b DESCRIPTION=\"my # rm\"\n");
    let rm = c.rm("x").unwrap();
    assert_eq!(rm.url("CLUSTERQUERYURL"), Some("exec://a#b"));
    assert_eq!(rm.description.as_deref(), Some("my # rm"));
}

#[test]
fn unknown_parameter_is_a_warning_with_a_suggestion() {
    let p = parse("BACKFILPOLICY BESTFIT\nFOO 1\n", "site.cfg");
    assert!(!p.has_errors());
    let m: Vec<String> = p.diagnostics.iter().map(ToString::to_string).collect();
    assert_eq!(
        m,
        [
            "site.cfg:1: WARNING: unknown parameter 'BACKFILPOLICY' (did you mean BACKFILLPOLICY?); line ignored",
            "site.cfg:2: WARNING: unknown parameter 'FOO'; line ignored",
        ]
    );
    assert_eq!(p.config.policy.backfill, BackfillPolicy::FirstFit);
}

#[test]
fn unknown_attribute_is_a_warning_and_the_rest_of_the_line_applies() {
    let m = messages("NODECFG[n1] PROCS=4 PROCZ=8 MEM=1024\n");
    assert_eq!(
        m,
        ["moab.cfg:1: WARNING: NODECFG[n1]: unknown attribute 'PROCZ' (did you mean PROCS?); attribute ignored"]
    );
    let c = parse("NODECFG[n1] PROCS=4 PROCZ=8 MEM=1024\n", "moab.cfg").config;
    assert_eq!((c.nodes[0].procs, c.nodes[0].mem_mb), (4, 1024));
}

#[test]
fn invalid_values_are_errors_naming_file_line_and_parameter() {
    let text =
        "LOGLEVEL 12\nBACKFILLPOLICY SOMETIMES\nRMCFG[hsm] TARGETUSAGE=180%\nDEFERTIME soon\n";
    let m = messages(text);
    assert_eq!(
        m[0],
        "moab.cfg:1: ERROR: LOGLEVEL: value 12 out of range (0–9)"
    );
    assert_eq!(
        m[1],
        "moab.cfg:2: ERROR: BACKFILLPOLICY: invalid value 'SOMETIMES' (expected one of FIRSTFIT, BESTFIT, GREEDY, PREEMPT, NONE)"
    );
    assert_eq!(
        m[2],
        "moab.cfg:3: ERROR: RMCFG[hsm] TARGETUSAGE: invalid percentage '180%' (expected 0–100%, or a fraction 0–1)"
    );
    assert_eq!(
        m[3],
        "moab.cfg:4: ERROR: DEFERTIME: invalid time specification 'soon' (expected [[[DD:]HH:]MM:]SS)"
    );
    assert_eq!(m.len(), 4);
    // Invalid values leave the defaults in place.
    let c = parse(text, "moab.cfg").config;
    assert_eq!(c.log.level, 0);
    assert_eq!(c.defer_time, 3600);
}

#[test]
fn malformed_lines_are_errors() {
    let m = messages("RMCFG[x TYPE=PBS\nRMCFG[x] TYPE\nCLASSCFG PRIORITY=1\nLOGLEVEL\nLOGLEVEL[2] 3\nADMINCFG[7] USERS=a\nX \"open\n");
    assert_eq!(
        m,
        [
            "moab.cfg:1: ERROR: RMCFG[x: malformed index (expected NAME[INDEX])",
            "moab.cfg:2: ERROR: RMCFG[x]: expected ATTR=VALUE, found 'TYPE'",
            "moab.cfg:3: ERROR: CLASSCFG: an index is required (CLASSCFG[<name>] ATTR=VALUE ...)",
            "moab.cfg:4: ERROR: LOGLEVEL: missing value",
            "moab.cfg:5: ERROR: LOGLEVEL[2]: LOGLEVEL takes no index",
            "moab.cfg:6: ERROR: ADMINCFG[7]: invalid level '7' (expected 1–5)",
            "moab.cfg:7: ERROR: unterminated quote",
        ]
    );
    assert_eq!(
        messages("SRCFG[\"a b\"] PERIOD=DAY\n"),
        ["moab.cfg:1: ERROR: SRCFG[a b]: invalid index 'a b' (no spaces, '#', '=' or quotes)"]
    );
}

#[test]
fn duplicates_warn_and_the_last_value_wins() {
    let p = parse(
        "RESERVATIONDEPTH 2\nRESERVATIONDEPTH 5\nRMCFG[a] TYPE=PBS\nRMCFG[a] TYPE=SLURM\n",
        "m.cfg",
    );
    let m: Vec<String> = p.diagnostics.iter().map(ToString::to_string).collect();
    assert_eq!(
        m,
        [
            "m.cfg:2: WARNING: RESERVATIONDEPTH[0] was already set on line 1; the last value wins",
            "m.cfg:4: WARNING: RMCFG[a] TYPE was already set on line 3; the last value wins",
        ]
    );
    assert_eq!(p.config.policy.reservation_buckets[0].depth, 5);
    assert_eq!(p.config.rm("a").unwrap().rm_type, RmType::Slurm);
}

#[test]
fn per_partition_values_for_the_default_partition_apply() {
    let c = ok("QUEUETIMEWEIGHT[0] 20\nBACKFILLPOLICY[DEFAULT] NONE\n");
    assert_eq!(c.policy.weights.queuetime, 20);
    assert_eq!(c.policy.backfill, BackfillPolicy::None);
    let m = messages("BACKFILLPOLICY[gpu] NONE\n");
    assert!(m[0].starts_with(
        "moab.cfg:1: WARNING: BACKFILLPOLICY[gpu]: per-partition values are not supported"
    ));
}

#[test]
fn reservation_buckets_pair_depths_and_qos_lists() {
    let c = ok("RESERVATIONDEPTH[0] 4\nRESERVATIONQOSLIST[0] 1 3 5\nRESERVATIONDEPTH[1] 2\nRESERVATIONQOSLIST[1] [ALL]\n");
    assert_eq!(
        c.policy.reservation_buckets,
        vec![
            ReservationBucket {
                depth: 4,
                qos: Some(vec!["1".into(), "3".into(), "5".into()])
            },
            ReservationBucket {
                depth: 2,
                qos: None
            },
        ]
    );
    assert!(messages("RESERVATIONDEPTH[99] 1\n")[0]
        .contains("invalid bucket index '99' (expected 0–15)"));
}

#[test]
fn credential_limits_priorities_and_flags() {
    let c = ok(concat!(
        "CLASSCFG[batch] PRIORITY=10 MAXJOB=2,4 MAXPROCS=80 MAXWC=1:00:00,2:00:00 MAX.WCLIMIT=10:00:00 DEFAULT.WCLIMIT=1:00:00\n",
        "CLASSCFG[special] QDEF=high& QLIST=high,low JOBFLAGS=SUSPENDABLE,RESTARTABLE\n",
        "QOSCFG[high] PRIORITY=1000 QFLAGS=PREEMPTOR,NOBF MAXNODE=3\n",
        "QOSCFG[low] QFLAGS=PREEMPTEE\n",
        "USERCFG[alice] PRIORITY=-5 MAXJOB=1 QDEF=low\n",
        "GROUPCFG[staff] MAXPROC=16,32 QLIST=low,high^\n",
        "ACCOUNTCFG[it] PRIORITY=3 QLIST=high\n",
    ));
    let batch = &c.policy.classes["batch"];
    assert_eq!(batch.priority, 10);
    assert_eq!(batch.limits.max_job, Some(Limit { soft: 2, hard: 4 }));
    assert_eq!(batch.limits.max_proc, Some(Limit { soft: 80, hard: 80 }));
    assert_eq!(
        batch.limits.max_wc,
        Some(Limit {
            soft: 3600,
            hard: 7200
        })
    );
    assert_eq!(
        (batch.max_wclimit, batch.default_wclimit),
        (Some(36_000), Some(3600))
    );
    let special = &c.policy.classes["special"];
    assert_eq!(special.qdef.as_deref(), Some("high"));
    assert_eq!(special.qlist, ["high", "low"]);
    // `&` binds the class's jobs to its list, `^` makes a list exclusive.
    assert_eq!(special.qlist_kind, QosListKind::And);
    assert_eq!(c.policy.groups["staff"].qlist, ["low", "high"]);
    assert_eq!(c.policy.groups["staff"].qlist_kind, QosListKind::Only);
    assert_eq!(c.policy.users["alice"].qlist_kind, QosListKind::Or);
    assert_eq!(
        special.job_flags,
        [JobFlag::Suspendable, JobFlag::Restartable]
    );
    let high = &c.policy.qos["high"];
    assert_eq!(
        (high.priority, high.flags.as_slice()),
        (1000, [QosFlag::Preemptor, QosFlag::NoBf].as_slice())
    );
    assert_eq!(high.limits.max_node, Some(Limit { soft: 3, hard: 3 }));
    assert_eq!(c.policy.qos["low"].flags, [QosFlag::Preemptee]);
    assert_eq!(c.policy.users["alice"].priority, -5);
    assert_eq!(c.policy.users["alice"].qdef.as_deref(), Some("low"));
    assert_eq!(
        c.policy.groups["staff"].limits.max_proc,
        Some(Limit { soft: 16, hard: 32 })
    );
    assert_eq!(c.policy.accounts["it"].qlist, ["high"]);
}

#[test]
fn bad_flags_and_limits_are_errors() {
    let m = messages(
        "CLASSCFG[a] JOBFLAGS=FLY\nQOSCFG[b] QFLAGS=PREEMPTOR,SOMETIMES\nUSERCFG[c] MAXJOB=4,2\n",
    );
    assert!(m[0].starts_with("moab.cfg:1: ERROR: CLASSCFG[a] JOBFLAGS: invalid value 'FLY' (expected one of BACKFILL,"), "{}", m[0]);
    assert!(
        m[1].starts_with("moab.cfg:2: ERROR: QOSCFG[b] QFLAGS: invalid value 'SOMETIMES'"),
        "{}",
        m[1]
    );
    assert!(
        m[2].starts_with("moab.cfg:3: ERROR: USERCFG[c] MAXJOB: soft limit exceeds hard limit"),
        "{}",
        m[2]
    );
}

#[test]
fn nodecfg_default_supplies_missing_attributes_in_any_order() {
    let c = ok(concat!(
        "NODECFG[n1] PROCS=16\n",
        "NODECFG[DEFAULT] PROCS=8 MEM=32GB FEATURES=fast,ib PARTITION=A\n",
        "NODECFG[n2] MEM=1024 STATE=DRAINED PREEMPTPOLICY=SUSPEND\n",
    ));
    assert_eq!(c.nodes.len(), 2);
    let (n1, n2) = (&c.nodes[0], &c.nodes[1]);
    assert_eq!((n1.name.as_str(), n1.procs, n1.mem_mb), ("n1", 16, 32_768));
    assert_eq!(n1.features, ["fast", "ib"]);
    assert_eq!(n1.partition, "A");
    assert_eq!(
        (n2.procs, n2.mem_mb, n2.admin),
        (8, 1024, NodeAdminState::Drained)
    );
    assert_eq!(
        c.node_preempt_policy.get("n2"),
        Some(&PreemptPolicy::Suspend)
    );
    assert_eq!(c.node_preempt_policy.get("n1"), None);
}

#[test]
fn admins_from_admincfg_and_legacy_keep_root_at_level_one() {
    let c = ok("ADMINCFG[1] USERS=sys\nADMINCFG[2] USERS=op1,op2 GROUPS=ops\nADMIN3 viewer\n");
    assert_eq!(c.admins[0], ["root", "sys"]);
    assert_eq!(c.admins[1], ["op1", "op2"]);
    assert_eq!(c.admins[2], ["viewer"]);
    assert_eq!(c.admin_groups[1], ["ops"]);
    assert_eq!(c.admin_level("root", &[]), Some(1));
    assert_eq!(c.admin_level("eve", &["ops".to_string()]), Some(2));
    assert_eq!(c.admin_level("eve", &[]), None);
}

#[test]
fn scheduler_settings_from_schedcfg_and_legacy_names() {
    let c = ok("SCHEDCFG[source] MODE=NORMAL SERVER=gridhead:5353\n");
    assert_eq!(c.sched.name, "source");
    assert_eq!(c.sched.server.as_deref(), Some("gridhead:5353"));
    let c = ok("SERVERHOST head\nSERVERPORT 42559\nSERVERMODE TEST\n");
    assert_eq!(c.sched.server.as_deref(), Some("head:42559"));
    assert_eq!(c.sched.mode, crate::enums::SchedMode::Test);
    assert_eq!(c.sched.name, "Moab");
}

#[test]
fn data_staging_seed_configurations_parse() {
    // Moab 5 §17.12 example 2 (HSM with TARGETUSAGE and MAXDSOP).
    let c = ok(concat!(
        "RMCFG[smp] TYPE=PBS DATARM=hsm\n",
        "DATASTAGEMODEL LOOSE\n",
        "RMCFG[hsm] TYPE=NATIVE RESOURCETYPE=STORAGE\n",
        "RMCFG[hsm] TARGETUSAGE=80%  MAXDSOP=8 BANDWIDTH=100MB\n",
        "RMCFG[hsm] SYSTEMQUERYURL=exec://$TOOLSDIR/system.query.dstage.pl\n",
        "RMCFG[hsm] CLUSTERQUERYURL=exec://$TOOLSDIR/cluster.query.dstage.pl\n",
        "RMCFG[hsm] SYSTEMMODIFYURL=exec://$TOOLSDIR/system.modify.dstage.pl\n",
    ));
    assert_eq!(c.data_stage_model, DataStageModel::Loose);
    assert_eq!(c.rms.len(), 2);
    let hsm = c.rm("hsm").unwrap();
    assert_eq!(
        (hsm.rm_type, hsm.resource_type),
        (RmType::Native, ResourceType::Storage)
    );
    assert_eq!(
        (hsm.target_usage, hsm.max_dsop, hsm.bandwidth_kbps),
        (Some(80.0), Some(8), Some(102_400))
    );
    assert_eq!(
        hsm.url("SYSTEMMODIFYURL"),
        Some("exec://$TOOLSDIR/system.modify.dstage.pl")
    );
    assert_eq!(c.rm("smp").unwrap().data_rm.as_deref(), Some("hsm"));
}

#[test]
fn loose_without_cluster_query_is_valid() {
    // The seed's LOOSE configuration without CLUSTERQUERYURL (optional:
    // "if data manager throttling is desired ... should be set").
    let m = messages(concat!(
        "RMCFG[local] TYPE=LOCAL DATARM=data\n",
        "DATASTAGEMODEL LOOSE\n",
        "RMCFG[data] TYPE=NATIVE RESOURCETYPE=STORAGE\n",
        "RMCFG[data] SYSTEMQUERYURL=exec://$TOOLSDIR/system.query.dstage.pl\n",
        "RMCFG[data] SYSTEMMODIFYURL=exec://$TOOLSDIR/system.modify.dstage.pl\n",
    ));
    assert!(m.is_empty(), "{m:#?}");
    // TARGETUSAGE needs the configured disk from the cluster query.
    let m = messages(concat!(
        "RMCFG[local] TYPE=LOCAL DATARM=data\n",
        "DATASTAGEMODEL LOOSE\n",
        "RMCFG[data] TYPE=NATIVE RESOURCETYPE=STORAGE SYSTEMQUERYURL=exec://q SYSTEMMODIFYURL=exec://m\n",
        "RMCFG[data] TARGETUSAGE=50%\n",
    ));
    assert_eq!(
        m,
        ["moab.cfg:4: WARNING: RMCFG[data] TARGETUSAGE: has no effect without CLUSTERQUERYURL (the configured disk is unknown); only MAXDSOP throttles staging"]
    );
}

#[test]
fn data_staging_cross_checks() {
    let m = messages("RMCFG[torque] TYPE=PBS DATARM=data\n");
    assert_eq!(
        m,
        ["moab.cfg:1: ERROR: RMCFG[torque] DATARM: no resource manager named 'data' (add RMCFG[data] TYPE=NATIVE RESOURCETYPE=STORAGE ...)"]
    );
    let m = messages("DATASTAGEMODEL TIGHT\nRMCFG[d] TYPE=PBS RESOURCETYPE=STORAGE\n");
    assert_eq!(m.len(), 4, "{m:#?}");
    assert!(m[0]
        .contains("RMCFG[d] TYPE: a storage resource manager must have TYPE=NATIVE (found PBS)"));
    assert!(m[1].contains("RMCFG[d] SYSTEMQUERYURL: required"));
    assert!(m[2].contains("RMCFG[d] SYSTEMMODIFYURL: required for a storage resource manager with DATASTAGEMODEL TIGHT"));
    assert!(m[3].contains(
        "WARNING: RMCFG[d]: no resource manager names this storage resource manager with DATARM="
    ));
    // LOCAL initiates transfers too.
    let m = messages(
        "DATASTAGEMODEL LOCAL\nRMCFG[c] TYPE=LOCAL DATARM=d\nRMCFG[d] TYPE=NATIVE RESOURCETYPE=STORAGE SYSTEMQUERYURL=exec://q\n",
    );
    assert_eq!(
        m,
        ["moab.cfg:3: ERROR: RMCFG[d] SYSTEMMODIFYURL: required for a storage resource manager with DATASTAGEMODEL LOCAL"]
    );
    // Only exec:// interfaces, named at their own line.
    let m = messages(
        "RMCFG[c] TYPE=LOCAL DATARM=d\nRMCFG[d] TYPE=NATIVE RESOURCETYPE=STORAGE\nRMCFG[d] SYSTEMQUERYURL=http://x/y\n",
    );
    assert_eq!(
        m,
        ["moab.cfg:3: ERROR: RMCFG[d] SYSTEMQUERYURL: 'http://x/y' is not supported (a storage interface is an exec:// script, e.g. exec://$TOOLSDIR/dstage.query)"]
    );
    let m = messages("RMCFG[c] DATARM=c2\nRMCFG[c2] TYPE=SLURM\n");
    assert!(
        m[0].contains("resource manager 'c2' is not a storage RM"),
        "{m:?}"
    );
}

#[test]
fn rm_types_signals_and_timeouts() {
    let c = ok("RMCFG[s] TYPE=SLURM SUSPENDSIG=SIGTSTP CHECKPOINTSIG=USR2 CHECKPOINTTIMEOUT=5:00 TIMEOUT=60 POLLINTERVAL=10 PARTITION=p FLAGS=autosync\nRMCFG[m] TYPE=NATIVE:msm RESOURCETYPE=PROV\n");
    let s = c.rm("s").unwrap();
    assert_eq!(
        (s.rm_type, s.suspend_sig, s.checkpoint_sig),
        (RmType::Slurm, Some(20), Some(12))
    );
    assert_eq!(
        (s.checkpoint_timeout, s.timeout, s.poll_interval),
        (Some(300), 60, Some(10))
    );
    assert_eq!(
        (s.partition.as_deref(), s.flags.as_slice()),
        (Some("p"), ["autosync".to_string()].as_slice())
    );
    let m = c.rm("m").unwrap();
    assert_eq!(
        (m.rm_type, m.subtype.as_deref()),
        (RmType::Native, Some("msm"))
    );
    let e = messages("RMCFG[x] TYPE=CONDOR\n");
    assert!(e[0].starts_with("moab.cfg:1: ERROR: RMCFG[x] TYPE: invalid value 'CONDOR' (expected one of LOCAL, SLURM, NATIVE"), "{e:?}");
}

#[test]
fn standing_reservations_are_typed() {
    let c = ok("SRCFG[maint] PERIOD=WEEK STARTTIME=1:08:00:00 ENDTIME=1:12:00:00 DAYS=Mon,Tue HOSTLIST=n1,n2 TASKCOUNT=4 USERLIST=bob FLAGS=IGNSTATE\n");
    let sr = &c.standing_reservations[0];
    assert_eq!(sr.name, "maint");
    assert_eq!(sr.period, crate::enums::SrPeriod::Week);
    assert_eq!((sr.start_time, sr.end_time), (Some(115_200), Some(129_600)));
    assert_eq!(sr.days, ["MON", "TUE"]);
    assert_eq!(
        (sr.hosts.len(), sr.task_count, sr.users.as_slice()),
        (2, 4, ["bob".to_string()].as_slice())
    );
    assert_eq!(sr.depth, 2);
    // The core's policy carries it for the scheduler.
    let st = &c.policy.standing[0];
    assert_eq!(st.name, "maint");
    assert_eq!(st.period, arches_core::Period::Week);
    assert_eq!(st.days, [1, 2]);
    assert_eq!(
        (st.tasks, st.acl.users.as_slice()),
        (4, ["bob".to_string()].as_slice())
    );
    let c = ok("SRCFG[x] TASKCOUNT=3 RESOURCES=PROCS:2;MEM:512 ACCOUNTLIST=a1\n");
    assert_eq!(c.policy.standing[0].tasks, 6);
    assert_eq!(c.policy.standing[0].acl.accounts, ["a1"]);
    let e = messages("SRCFG[x] RESOURCES=PROCS\n");
    assert!(e[0].contains("RESOURCES"), "{e:?}");
}

#[test]
fn the_other_policy_parameters_fill_the_core_policy() {
    let c = ok(concat!(
        "NODEALLOCATIONPOLICY PRIORITY\nPREEMPTPOLICY SUSPEND\nJOBPREEMPTMINACTIVETIME 5:00\n",
        "JOBPREEMPTMAXACTIVETIME 1:00:00\nGUARANTEEDPREEMPTION TRUE\nJOBRETRYTIME 2:00\nBFVIRTUALWALLTIMESCALINGFACTOR 0.5\n",
        "BFVIRTUALWALLTIMECONFLICTPOLICY PREEMPT\nRMPOLLINTERVAL 00:01:00\nBACKFILLDEPTH 100\n",
        "XFACTORWEIGHT 10\nXFACTORCAP 1000\nFSWEIGHT 2\nJOBCPURGETIME 1:00:00\nRUNTIMEPREDICTION usermean2\n",
        "BFORDER SHORTESTPREDICTEDFIRST\nDISPLAYFLAGS NODECENTRIC,HIDEBLOCKED\n",
        "PREDICTIONCORRECTION walltime\nPREDICTIONSCOPE RUNNING\nPREDICTIONGUARD 1:00:00:00\n",
    ));
    assert_eq!(c.policy.node_allocation, NodeAllocationPolicy::Priority);
    assert_eq!(c.policy.preempt_policy, PreemptPolicy::Suspend);
    assert_eq!(
        (
            c.policy.job_preempt_min_active,
            c.policy.job_preempt_max_active
        ),
        (300, 3600)
    );
    assert!(c.policy.guaranteed_preemption);
    assert_eq!(c.policy.job_retry_time, 120);
    assert_eq!(c.policy.bf_virtual_walltime_factor, Some(0.5));
    assert_eq!(
        (c.policy.rm_poll_interval, c.policy.backfill_depth),
        (60, 100)
    );
    assert_eq!(c.policy.weights.xfactor, 10);
    assert_eq!(Some(c.policy.weights.xfactor_cap), Some(1000));
    assert_eq!(c.policy.weights.fs, 2);
    assert_eq!(c.job_purge_secs, 3600);
    assert_eq!(
        c.runtime_prediction,
        crate::enums::RuntimePrediction::UserMean2
    );
    assert_eq!(c.bf_order, crate::enums::BfOrder::ShortestPredictedFirst);
    assert_eq!(
        c.prediction_correction,
        crate::enums::PredictionCorrection::Walltime
    );
    assert!(c.policy.estimates_running_only);
    assert_eq!(c.policy.prediction_guard, Some(86_400));
    assert_eq!(ok("PREDICTIONGUARD 0\n").policy.prediction_guard, None);
    assert_eq!(ok("").policy.prediction_guard, None);
    assert_eq!(c.display_flags, ["NODECENTRIC", "HIDEBLOCKED"]);
}

#[test]
fn logical_lines_track_first_line_numbers() {
    let l = logical_lines("A 1\n\n# c\nB \\\n 2 \\\n 3\nC 4 \\\n");
    assert_eq!(
        l,
        [
            Line {
                number: 1,
                text: "A 1".into()
            },
            Line {
                number: 4,
                text: "B 2 3".into()
            },
            Line {
                number: 7,
                text: "C 4".into()
            },
        ]
    );
}

#[test]
fn moab_values_arches_does_not_support_are_warnings_not_errors() {
    let text = "NODEALLOCATIONPOLICY FASTEST\nQOSCFG[hi] QFLAGS=PREEMPTOR,DEDICATED\nCLASSCFG[b] JOBFLAGS=ADVRES,SUSPENDABLE\n";
    let p = parse(text, "moab.cfg");
    let m: Vec<String> = p.diagnostics.iter().map(ToString::to_string).collect();
    assert_eq!(
        m,
        [
            "moab.cfg:1: WARNING: NODEALLOCATIONPOLICY: 'FASTEST' is a Moab value Arches does not support; the setting is ignored",
            "moab.cfg:2: WARNING: QOSCFG[hi] QFLAGS: 'DEDICATED' is a Moab value Arches does not support; it is ignored",
            "moab.cfg:3: WARNING: CLASSCFG[b] JOBFLAGS: 'ADVRES' is a Moab value Arches does not support; it is ignored",
        ]
    );
    assert_eq!(
        p.config.policy.node_allocation,
        NodeAllocationPolicy::LastAvailable
    );
    assert_eq!(p.config.policy.qos["hi"].flags, [QosFlag::Preemptor]);
    assert_eq!(
        p.config.policy.classes["b"].job_flags,
        [JobFlag::Suspendable]
    );
}

#[test]
fn node_access_match_and_fairshare_settings() {
    let c = ok("NODEACCESSPOLICY singlejob\nJOBNODEMATCHPOLICY EXACTNODE\nFSPOLICY DEDICATEDPS\nFSDEPTH 6\nFSINTERVAL 00:20:00\nFSDECAY 0.5\n");
    assert_eq!(
        c.node_access_policy,
        crate::enums::NodeAccessPolicy::SingleJob
    );
    assert_eq!(
        c.job_node_match_policy,
        Some(crate::enums::JobNodeMatchPolicy::ExactNode)
    );
    assert_eq!(
        c.fairshare.policy,
        Some(crate::enums::FsPolicy::DedicatedPs)
    );
    assert_eq!(
        (c.fairshare.depth, c.fairshare.interval, c.fairshare.decay),
        (6, 1200, 0.5)
    );
    let d = Config::default();
    assert_eq!(
        (d.fairshare.policy, d.fairshare.depth, d.fairshare.interval),
        (None, 8, 43_200)
    );
    assert!(messages("FSDEPTH 0\n")[0].contains("FSDEPTH: value 0 out of range"));
    assert_eq!(
        messages("FSDECAY 1.5\n"),
        ["moab.cfg:1: ERROR: FSDECAY: value 1.5 out of range (0–1)"]
    );
}

#[test]
fn moab_5_data_staging_examples_1_and_3_parse() {
    // §17.12 example 1: verified (external) staging needs only SYSTEMQUERYURL.
    let c = ok(concat!(
        "RMCFG[torque] TYPE=PBS DATARM=data\n",
        "DATASTAGEMODEL EXTERNAL\n",
        "RMCFG[data] TYPE=NATIVE  RESOURCETYPE=STORAGE\n",
        "RMCFG[data] SYSTEMQUERYURL=exec://$TOOLSDIR/system.query.dstage.pl\n",
    ));
    assert_eq!(c.data_stage_model, DataStageModel::External);
    // Example 3: grid data staging through a peer Moab.
    let c = ok(concat!(
        "SCHEDCFG[source] MODE=NORMAL SERVER=gridhead:5353\n",
        "ADMINCFG[1] USERS=sys\n",
        "RMCFG[base] TYPE=PBS\n",
        "RMCFG[cluster3] SERVER=moab://gridcluster3:5353 DATARM=c3storage\n",
        "DATASTAGEMODEL LOOSE\n",
        "RMCFG[c3storage] TYPE=NATIVE RESOURCETYPE=STORAGE\n",
        "RMCFG[c3storage] SYSTEMQUERYURL=exec://$TOOLSDIR/dstage-ssh.systemquery.pl\n",
        "RMCFG[c3storage] CLUSTERQUERYURL=exec://$TOOLSDIR/dstage-ssh.clusterquery.pl\n",
        "RMCFG[c3storage] SYSTEMMODIFYURL=exec://$TOOLSDIR/dstage-ssh.systemmodify.pl\n",
    ));
    let peer = c.rm("cluster3").unwrap();
    assert_eq!(
        (peer.rm_type, peer.data_rm.as_deref()),
        (RmType::Moab, Some("c3storage"))
    );
    assert_eq!(c.rm("base").unwrap().rm_type, RmType::Pbs);
    // An explicit TYPE wins over the moab:// scheme, in either order.
    let c = ok("RMCFG[a] TYPE=NATIVE SERVER=moab://x:1\nRMCFG[b] SERVER=moab://y:1 TYPE=SLURM\n");
    assert_eq!(
        (c.rm("a").unwrap().rm_type, c.rm("b").unwrap().rm_type),
        (RmType::Native, RmType::Slurm)
    );
}

#[test]
fn byte_order_mark_crlf_and_tabs_are_tolerated() {
    let c = ok("\u{feff}BACKFILLPOLICY\tNONE\r\nNODECFG[n1]\tPROCS=2\r\n");
    assert_eq!(c.policy.backfill, BackfillPolicy::None);
    assert_eq!(c.nodes[0].procs, 2);
}

#[test]
fn into_result_separates_usable_configs_from_invalid_ones() {
    let (c, warnings) = parse("FOO 1\nLOGLEVEL 3\n", "m").into_result().unwrap();
    assert_eq!((c.log.level, warnings.len()), (3, 1));
    let errors = parse("FOO 1\nLOGLEVEL 30\n", "m")
        .into_result()
        .unwrap_err();
    assert_eq!(errors.len(), 1);
    let e: &dyn std::error::Error = &errors[0];
    assert_eq!(
        e.to_string(),
        "m:2: ERROR: LOGLEVEL: value 30 out of range (0–9)"
    );
}

#[test]
fn undefined_qos_references_are_warnings() {
    let m = messages("QOSCFG[high] PRIORITY=10\nCLASSCFG[special] QDEF=high& QLIST=high,low\nUSERCFG[bob] QDEF=gold\n");
    assert_eq!(
        m,
        [
            "moab.cfg:2: WARNING: CLASSCFG[special] QLIST: QoS 'low' is not defined (no QOSCFG[low] line); it has no priority, limits or flags",
            "moab.cfg:3: WARNING: USERCFG[bob] QDEF: QoS 'gold' is not defined (no QOSCFG[gold] line); it has no priority, limits or flags",
        ]
    );
}

#[test]
fn nodes_without_a_processor_count_are_warned_about_unless_an_rm_reports_them() {
    let m = messages("NODECFG[n1] FEATURES=gpu\nNODECFG[n2] PROCS=4\n");
    assert_eq!(
        m,
        ["moab.cfg:1: WARNING: NODECFG[n1]: PROCS is set neither here nor in NODECFG[DEFAULT]; the node has 1 processor"]
    );
    assert_eq!(
        parse("NODECFG[n1] FEATURES=gpu\n", "m").config.nodes[0].procs,
        1
    );
    assert!(messages("NODECFG[DEFAULT] PROCS=2\nNODECFG[n1] FEATURES=gpu\n").is_empty());
    assert!(messages("RMCFG[s] TYPE=SLURM\nNODECFG[n1] FEATURES=gpu\n").is_empty());
}

#[test]
fn node_priority_and_allocation_policies_without_data_warn() {
    let c =
        ok("NODECFG[a] PROCS=2 PRIORITY=7\nNODECFG[b] PROCS=2\nNODEALLOCATIONPOLICY PRIORITY\n");
    let prio: Vec<i64> = c.nodes.iter().map(|n| n.priority).collect();
    assert_eq!(prio, [7, 0]);
    assert_eq!(c.policy.node_allocation, NodeAllocationPolicy::Priority);
    let m = messages("NODECFG[a] PROCS=2\nNODEALLOCATIONPOLICY MAXBALANCE\n");
    assert_eq!(
        m,
        ["moab.cfg:2: WARNING: NODEALLOCATIONPOLICY MAXBALANCE: Moab's policy balances node processor speeds, which Arches does not track; nodes are allocated as FIRSTAVAILABLE"]
    );
    let m = messages("NODECFG[a] PROCS=2\nNODEALLOCATIONPOLICY CPULOAD\n");
    assert_eq!(m.len(), 1, "{m:?}");
    assert!(messages("NODECFG[a] PROCS=2\nNODEALLOCATIONPOLICY MINRESOURCE\n").is_empty());
}

#[test]
fn generic_resources_access_policies_and_class_limits() {
    let c = ok("NODEACCESSPOLICY SINGLEUSER\n\
        NODECFG[DEFAULT] PROCS=8\n\
        NODECFG[g1] GRES=gpu:4,matlab:2 ACCESS=SINGLEJOB\n\
        NODECFG[c1] FEATURES=fast\n\
        RMCFG[local] TYPE=LOCAL DEFAULTCLASS=batch\n\
        CLASSCFG[batch] DEFAULT.NODES=2 DEFAULT.PROC=4 DEFAULT.MEM=1G DEFAULT.FEATURES=fast \
        MAX.PROC=16 MAX.NODE=4 MIN.PROC=2 MIN.WCLIMIT=0:10:00 HOSTLIST=c1,g1 PARTITION=p1\n");
    assert_eq!(
        c.policy.node_access,
        arches_core::NodeAccessPolicy::SingleUser
    );
    let g1 = c.nodes.iter().find(|n| n.name == "g1").unwrap();
    assert_eq!(
        g1.gres,
        vec![("gpu".to_string(), 4), ("matlab".to_string(), 2)]
    );
    assert_eq!(g1.access, Some(arches_core::NodeAccessPolicy::SingleJob));
    let c1 = c.nodes.iter().find(|n| n.name == "c1").unwrap();
    assert!(c1.gres.is_empty() && c1.access.is_none());
    assert_eq!(c.policy.default_class.as_deref(), Some("batch"));
    let j = &c.policy.classes["batch"].job;
    assert_eq!(
        (j.default_nodes, j.default_procs, j.default_mem_mb),
        (Some(2), Some(4), Some(1024))
    );
    assert_eq!(j.default_features, vec!["fast".to_string()]);
    assert_eq!(
        (j.max_procs, j.max_nodes, j.min_procs, j.min_wclimit),
        (Some(16), Some(4), Some(2), Some(600))
    );
    assert_eq!(j.hosts, vec!["c1".to_string(), "g1".to_string()]);
    assert_eq!(j.partition.as_deref(), Some("p1"));
    // Bad values are errors naming the line.
    assert!(messages("NODECFG[n] GRES=gpu:x\n")[0].contains("gpu"));
    assert!(messages("NODECFG[n] ACCESS=LONELY\n")[0].contains("ACCESS"));
    assert!(messages("CLASSCFG[b] MAX.PROC=0\n")[0].contains("MAX.PROC"));
    let many: String = (0..9)
        .map(|i| format!("NODECFG[n{i}] GRES=g{i}:1\n"))
        .collect();
    assert!(messages(&many)
        .iter()
        .any(|m| m.contains("at most 8 kinds")));
    assert!(
        messages("RMCFG[x] TYPE=LOCAL DEFAULTCLASS=none\nCLASSCFG[batch] PRIORITY=1\n")
            .iter()
            .any(|m| m.contains("DEFAULTCLASS: class 'none' is not defined"))
    );
}

#[test]
fn fairshare_targets_weights_and_policy() {
    use arches_core::fairshare::{FsTarget, FsTargetKind};
    let c = ok(concat!(
        "FSPOLICY DEDICATEDPS\nFSWEIGHT 10\nFSUSERWEIGHT 2\nFSGROUPWEIGHT 3\n",
        "FSACCOUNTWEIGHT 4\nFSQOSWEIGHT 5\nFSCLASSWEIGHT 6\n",
        "USERCFG[a] FSTARGET=25\nGROUPCFG[b] FSTARGET=12.5+\nACCOUNTCFG[c] FSTARGET=30-\n",
        "QOSCFG[d] FSTARGET=40%\nCLASSCFG[e] FSTARGET=500000^\n",
    ));
    assert!(c.policy.fairshare.enabled);
    let w = &c.policy.weights;
    assert_eq!(
        (
            w.fs,
            w.fs_user,
            w.fs_group,
            w.fs_account,
            w.fs_qos,
            w.fs_class
        ),
        (10, 2, 3, 4, 5, 6)
    );
    let t = |h, kind| {
        Some(FsTarget {
            hundredths: h,
            kind,
        })
    };
    assert_eq!(c.policy.users["a"].fs_target, t(2500, FsTargetKind::Target));
    assert_eq!(c.policy.groups["b"].fs_target, t(1250, FsTargetKind::Floor));
    assert_eq!(
        c.policy.accounts["c"].fs_target,
        t(3000, FsTargetKind::Ceiling)
    );
    assert_eq!(
        c.policy.qos["d"].fs_target,
        t(4000, FsTargetKind::CapRelative)
    );
    assert_eq!(
        c.policy.classes["e"].fs_target,
        t(50_000_000, FsTargetKind::CapAbsolute)
    );
    // Without FSPOLICY fairshare is off; FSWEIGHT defaults to 1 (Moab).
    let c = ok("USERCFG[a] FSTARGET=25\n");
    assert!(!c.policy.fairshare.enabled);
    assert_eq!(c.policy.weights.fs, 1);
}

#[test]
fn bad_fairshare_targets_are_errors_naming_file_and_line() {
    let m = messages(concat!(
        "USERCFG[a] FSTARGET=150\nGROUPCFG[b] FSTARGET=lots\nQOSCFG[c] FSTARGET=-5\n",
        "CLASSCFG[d] FSTARGET=10*\nACCOUNTCFG[e] FSTARGET=\n",
    ));
    let expected = "(expected a percentage 0-100, optionally followed by + (floor), - (ceiling) or % (cap), or a usage cap in processor-seconds followed by ^)";
    assert_eq!(
        m,
        [
            format!("moab.cfg:1: ERROR: USERCFG[a] FSTARGET: invalid fairshare target '150' {expected}"),
            format!("moab.cfg:2: ERROR: GROUPCFG[b] FSTARGET: invalid fairshare target 'lots' {expected}"),
            format!("moab.cfg:3: ERROR: QOSCFG[c] FSTARGET: invalid fairshare target '-5' {expected}"),
            format!("moab.cfg:4: ERROR: CLASSCFG[d] FSTARGET: invalid fairshare target '10*' {expected}"),
            "moab.cfg:5: ERROR: ACCOUNTCFG[e] FSTARGET: missing value".to_string(),
        ]
    );
}

#[test]
fn priority_weights_without_a_factor_are_said_not_applied() {
    let (c, warnings) = parse("PROCWEIGHT 10\nRESWEIGHT 0\nXFACTORCAP 5\n", "m")
        .into_result()
        .unwrap();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0]
            .to_string()
            .contains("PROCWEIGHT: accepted but not applied"),
        "{warnings:?}"
    );
    assert_eq!(c.policy.weights.xfactor_cap, 5);
}

#[test]
fn qos_service_weights_and_targets() {
    let (c, warnings) = parse(
        "QOSCFG[high] PRIORITY=10 QTWEIGHT=2 XFWEIGHT=-3 QTTARGET=1:00:00 XFTARGET=2.5\nQOSCFG[low] QTTARGET=0\n",
        "m",
    )
    .into_result()
    .unwrap();
    let q = &c.policy.qos["high"];
    assert_eq!((q.qt_weight, q.xf_weight), (2, -3));
    assert_eq!(q.qt_target, Some(3600));
    assert_eq!(q.xf_target_hundredths, Some(250));
    // Targets feed no priority factor in Arches: said for each non-zero one.
    let w: Vec<String> = warnings.iter().map(|w| w.to_string()).collect();
    assert_eq!(w.len(), 2, "{w:?}");
    assert!(
        w[0].contains("m:1: WARNING: QOSCFG[high] QTTARGET: accepted but not applied"),
        "{w:?}"
    );
    assert!(
        w[1].contains("QOSCFG[high] XFTARGET: accepted but not applied"),
        "{w:?}"
    );
    let bad = parse("QOSCFG[x] XFTARGET=-1\n", "m")
        .into_result()
        .unwrap_err();
    assert!(bad[0].to_string().contains("QOSCFG[x] XFTARGET"), "{bad:?}");
}

#[test]
fn fairshare_tree_is_built_from_fstree_lines() {
    use arches_core::accounting::CredKind;
    let c = ok(concat!(
        "FSPOLICY DEDICATEDPS\nFSUSERWEIGHT 1\nFSTREETIERMULTIPLIER -2\n",
        // Declared before it is listed: moves below eng.
        "FSTREE[hw] SHARES=30 MEMBERLIST=user:ann\n",
        "FSTREE[root] SHARES=100 MEMBERLIST=eng,sales\n",
        "FSTREE[eng] SHARES=60,10@p2 MEMBERLIST=hw,user:bob\n",
        "FSTREE[sales] SHARES=40 MEMBERLIST=user:bob\n",
        "FSTREE[user:ann] SHARES=5\n",
        "FSJPUWEIGHT -7\nFSPPUWEIGHT -3\nFSPSPUWEIGHT -1\nFSCAP 500\n",
    ));
    let t = c.policy.fairshare.tree.as_ref().expect("a tree");
    assert_eq!(c.policy.fairshare.tier_multiplier, -2.0);
    let shown: Vec<String> = t
        .preorder()
        .into_iter()
        .map(|i| {
            let n = &t.nodes[i];
            format!("{}{}:{}", "-".repeat(t.depth(i)), n.type_name(), n.name)
        })
        .collect();
    assert_eq!(
        shown,
        [
            "node:root",
            "-node:eng",
            "--node:hw",
            "---user:ann",
            "--user:bob",
            "-node:sales",
            "--user:bob"
        ]
    );
    let eng = t.find(None, "eng").unwrap();
    assert_eq!(t.nodes[eng].shares, 60.0);
    assert_eq!(t.nodes[eng].par_shares["p2"], 10.0);
    let ann = t.find(Some(CredKind::User), "ann").unwrap();
    assert_eq!(t.nodes[ann].shares, 5.0);
    let w = &c.policy.weights;
    assert_eq!((w.fs_jpu, w.fs_ppu, w.fs_pspu, w.fs_cap), (-7, -3, -1, 500));
    // No FSTREE line: no tree.
    assert!(ok("FSPOLICY DEDICATEDPS\n").policy.fairshare.tree.is_none());
}

#[test]
fn bad_fstree_lines_are_errors_naming_file_and_line() {
    let m = messages(concat!(
        "FSTREE[a] MEMBERLIST=b\n",
        "FSTREE[b] MEMBERLIST=a\n",
        "FSTREE[c] MEMBERLIST=b\n",
        "FSTREE[d] SHARES=lots\n",
        "FSTREE[d] MEMBERLIST=project:x\n",
        "FSTREE[e] SHARES=5@\n",
        "FSTREETIERMULTIPLIER big\n",
        "FSTREE[f]\n",
    ));
    assert_eq!(
        m,
        [
            "moab.cfg:2: ERROR: FSTREE[b] MEMBERLIST: member 'a' of 'b' would make the tree a cycle",
            "moab.cfg:3: ERROR: FSTREE[c] MEMBERLIST: node 'b' is already a member of 'a'",
            "moab.cfg:4: ERROR: FSTREE[d] SHARES: invalid share count 'lots' (expected a number >= 0)",
            "moab.cfg:5: ERROR: FSTREE[d] MEMBERLIST: invalid member type 'project' in 'project:x' (expected user, group, acct, class or qos)",
            "moab.cfg:6: ERROR: FSTREE[e] SHARES: missing partition after '@' in '5@'",
            "moab.cfg:7: ERROR: FSTREETIERMULTIPLIER: invalid multiplier 'big' (expected a number)",
            "moab.cfg:8: ERROR: FSTREE[f]: expected ATTR=VALUE after FSTREE[f]",
        ]
    );
}

#[test]
fn applied_fairshare_weights_are_no_longer_warned() {
    let (_, warnings) = parse(
        "FSJPUWEIGHT 1\nFSPPUWEIGHT 1\nFSPSPUWEIGHT 1\nFSCAP 10\nFSGUSERWEIGHT 2\nFSTREEISPROPORTIONAL TRUE\n",
        "m",
    )
    .into_result()
    .unwrap();
    let w: Vec<String> = warnings.iter().map(|w| w.to_string()).collect();
    assert_eq!(w.len(), 2, "{w:?}");
    assert!(
        w[0].contains("FSGUSERWEIGHT: accepted but not applied"),
        "{w:?}"
    );
    assert!(
        w[1].contains("FSTREEISPROPORTIONAL: accepted but not applied"),
        "{w:?}"
    );
}

#[test]
fn deadline_qos_policy_and_weight() {
    let (c, warnings) = parse(
        "QOSCFG[dl] QFLAGS=DEADLINE QTTARGET=1:00:00\nDEADLINEPOLICY hold\nDEADLINEWEIGHT 7\n",
        "m",
    )
    .into_result()
    .unwrap();
    let q = &c.policy.qos["dl"];
    assert!(q.flags.contains(&arches_core::policy::QosFlag::Deadline));
    assert_eq!(q.qt_target, Some(3600));
    // With QFLAGS=DEADLINE the QTTARGET is applied (the relative deadline):
    // no "accepted but not applied" warning.
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_eq!(
        c.policy.deadline_policy,
        arches_core::policy::DeadlinePolicy::Hold
    );
    assert_eq!(c.policy.weights.deadline, 7);
    assert!(!c.extra_weights.contains_key("DEADLINEWEIGHT"));
    let bad = parse("DEADLINEPOLICY SOMETIMES\n", "m")
        .into_result()
        .unwrap_err();
    assert!(bad[0].to_string().contains("DEADLINEPOLICY"), "{bad:?}");
}
