//! A realistic site `moab.cfg` (every family of parameters at once) reads
//! without a diagnostic and lands where the daemon and the scheduler look.

use arches_config::{parse, DataStageModel, ResourceType, RmType, Verbosity};
use arches_core::policy::{BackfillPolicy, Limit, PreemptPolicy, QosFlag, ReservationBucket};
use arches_core::JobFlag;

const SITE: &str = r#"
# moab.cfg for the 'orion' cluster
SCHEDCFG[orion]      SERVER=orion-1:42559 MODE=NORMAL
ADMINCFG[1]          USERS=root,sched
ADMINCFG[3]          GROUPS=helpdesk

RMCFG[orion]         TYPE=SLURM TIMEOUT=00:01:00 SUSPENDSIG=SIGTSTP DATARM=hsm
RMCFG[hsm]           TYPE=NATIVE RESOURCETYPE=STORAGE TARGETUSAGE=80% MAXDSOP=8 BANDWIDTH=1GB
RMCFG[hsm]           SYSTEMQUERYURL=exec://$TOOLSDIR/system.query.dstage.pl
RMCFG[hsm]           CLUSTERQUERYURL=exec://$TOOLSDIR/cluster.query.dstage.pl \
                     SYSTEMMODIFYURL=exec://$TOOLSDIR/system.modify.dstage.pl
DATASTAGEMODEL       LOOSE

RMPOLLINTERVAL       00:00:15
BACKFILLPOLICY       FIRSTFIT
RESERVATIONPOLICY    CURRENTHIGHEST
RESERVATIONDEPTH[0]  4
RESERVATIONQOSLIST[0] high
NODEALLOCATIONPOLICY MINRESOURCE

QUEUETIMEWEIGHT      1
XFACTORWEIGHT        100
CREDWEIGHT           1
QOSWEIGHT            1000
XFACTORCAP           10000

PREEMPTPOLICY        SUSPEND
JOBPREEMPTMINACTIVETIME 00:05:00
GUARANTEEDPREEMPTION TRUE

QOSCFG[high]         PRIORITY=100 QFLAGS=PREEMPTOR MAXJOB=10,20
QOSCFG[low]          QFLAGS=PREEMPTEE
CLASSCFG[batch]      DEFAULT.WCLIMIT=1:00:00 MAX.WCLIMIT=2:00:00:00 QDEF=low QLIST=low,high
CLASSCFG[special]    QDEF=high& JOBFLAGS=SUSPENDABLE
USERCFG[alice]       MAXPROC=64,128
SRCFG[maint]         PERIOD=WEEK DAYS=Sun STARTTIME=0:02:00:00 ENDTIME=0:06:00:00 HOSTLIST=n01,n02

JOBCPURGETIME        2:00:00:00
LOGLEVEL             3
LOGFILE              "moab.log"
"#;

#[test]
fn a_site_file_reads_cleanly() {
    let parsed = parse(SITE, "/opt/moab/moab.cfg");
    assert!(parsed.diagnostics.is_empty(), "{:#?}", parsed.diagnostics);
    let c = parsed.config;
    assert_eq!(c.sched.name, "orion");
    assert_eq!(c.admin_level("sched", &[]), Some(1));
    assert_eq!(c.admin_level("pat", &["helpdesk".to_string()]), Some(3));
    let orion = c.rm("orion").unwrap();
    assert_eq!(
        (orion.rm_type, orion.timeout, orion.suspend_sig),
        (RmType::Slurm, 60, Some(20))
    );
    let hsm = c.rm("hsm").unwrap();
    assert_eq!(hsm.resource_type, ResourceType::Storage);
    assert!(
        hsm.url("SYSTEMMODIFYURL").is_some(),
        "continuation line lost"
    );
    assert_eq!(c.data_stage_model, DataStageModel::Loose);
    assert_eq!(c.policy.rm_poll_interval, 15);
    assert_eq!(c.policy.backfill, BackfillPolicy::FirstFit);
    assert_eq!(
        c.policy.reservation_buckets,
        [ReservationBucket {
            depth: 4,
            qos: Some(vec!["high".to_string()])
        }]
    );
    assert_eq!(
        (c.policy.weights.xfactor, c.policy.weights.qos),
        (100, 1000)
    );
    assert_eq!(Some(c.policy.weights.xfactor_cap), Some(10_000));
    assert_eq!(c.policy.preempt_policy, PreemptPolicy::Suspend);
    assert!(c.policy.guaranteed_preemption);
    assert_eq!(c.policy.qos["high"].flags, [QosFlag::Preemptor]);
    assert_eq!(
        c.policy.qos["high"].limits.max_job,
        Some(Limit { soft: 10, hard: 20 })
    );
    assert_eq!(c.policy.classes["batch"].max_wclimit, Some(172_800));
    assert_eq!(
        c.policy.classes["special"].job_flags,
        [JobFlag::Suspendable]
    );
    assert_eq!(
        c.policy.users["alice"].limits.max_proc,
        Some(Limit {
            soft: 64,
            hard: 128
        })
    );
    assert_eq!(c.standing_reservations[0].days, ["SUN"]);
    assert_eq!(c.job_purge_secs, 172_800);
    assert_eq!((c.log.level, c.log.file.as_str()), (3, "moab.log"));
    // The RM reports the nodes: none are configured here.
    assert!(c.nodes.is_empty());
    let report = arches_config::check(SITE, "moab.cfg", Verbosity::Normal);
    assert_eq!(
        report.render(),
        "moab.cfg: 31 parameter lines, 0 errors, 0 warnings\n"
    );
}
