use super::*;

fn tpl(f: impl FnOnce(&mut JobTemplate)) -> JobTemplate {
    let mut t = JobTemplate::default();
    f(&mut t);
    t
}

fn rule(name: &str, f: impl FnOnce(&mut TemplateMatch)) -> TemplateMatch {
    let mut m = TemplateMatch {
        name: name.to_string(),
        ..TemplateMatch::default()
    };
    f(&mut m);
    m
}

fn subject() -> Subject {
    Subject {
        user: "alice".into(),
        group: "staff".into(),
        ..Subject::default()
    }
}

/// The Windows HPC seed: BigJob, MediumJob and SmallJob with maximum run
/// times of one day, one hour and one minute.
fn hpc() -> Templates {
    let mut t = Templates::default();
    for (name, max) in [("BigJob", 86_400), ("MediumJob", 3_600), ("SmallJob", 60)] {
        t.templates.insert(
            name.to_string(),
            tpl(|x| {
                x.select = true;
                x.walltime = Some(max);
            }),
        );
        t.templates
            .insert(format!("{name}.max"), tpl(|x| x.walltime = Some(max)));
        t.matches
            .push(rule(name, |m| m.jmax = Some(format!("{name}.max"))));
    }
    t
}

#[test]
fn selected_template_gives_its_run_time_and_enforces_its_maximum() {
    let t = hpc();
    // No run time: the template's.
    let mut s = subject();
    let a = apply(&t, &mut s, Some("SmallJob")).unwrap();
    assert_eq!(s.walltime, Some(60));
    assert_eq!(a.names, ["SmallJob"]);
    assert_eq!(
        a.origin.get("WALLTIME").map(String::as_str),
        Some("SmallJob")
    );
    // Within the maximum: kept.
    let mut s = Subject {
        walltime: Some(1800),
        ..subject()
    };
    apply(&t, &mut s, Some("MediumJob")).unwrap();
    assert_eq!(s.walltime, Some(1800));
    // Beyond it: rejected, naming the template.
    let mut s = Subject {
        walltime: Some(1800),
        ..subject()
    };
    let e = apply(&t, &mut s, Some("SmallJob")).unwrap_err();
    assert_eq!(
        e,
        "job exceeds template 'SmallJob.max' (JOBMATCHCFG[SmallJob] JMAX): walltime 00:30:00 > 00:01:00"
    );
    // The other templates' limits do not apply to a job that did not pick them.
    let mut s = Subject {
        walltime: Some(7200),
        ..subject()
    };
    apply(&t, &mut s, Some("BigJob")).unwrap();
    let mut s = Subject {
        walltime: Some(7200),
        ..subject()
    };
    apply(&t, &mut s, None).unwrap();
    assert_eq!(s.walltime, Some(7200));
}

#[test]
fn only_selectable_templates_can_be_requested() {
    let t = hpc();
    let e = apply(&t, &mut subject(), Some("SmallJob.max")).unwrap_err();
    assert_eq!(
        e,
        "job template 'SmallJob.max' cannot be requested (it does not have SELECT=TRUE)"
    );
    let e = apply(&t, &mut subject(), Some("Huge")).unwrap_err();
    assert_eq!(e, "job template 'Huge' does not exist");
}

#[test]
fn a_site_default_gives_every_job_without_a_run_time_one() {
    let mut t = Templates::default();
    t.templates
        .insert("def".into(), tpl(|x| x.walltime = Some(3600)));
    t.matches
        .push(rule("default", |m| m.jdef = Some("def".into())));
    let mut s = subject();
    let a = apply(&t, &mut s, None).unwrap();
    assert_eq!(s.walltime, Some(3600));
    assert_eq!(a.names, ["default"]);
    let mut s = Subject {
        walltime: Some(60),
        ..subject()
    };
    let a = apply(&t, &mut s, None).unwrap();
    assert_eq!(
        s.walltime,
        Some(60),
        "JDEF never overrides what the user gave"
    );
    assert!(a.origin.is_empty());
    assert!(
        a.names.is_empty(),
        "a default that changed nothing did not apply"
    );
}

#[test]
fn jset_forces_and_jmin_jmax_filter_with_break() {
    // Moab's example: small and large ranges; BREAK stops at the first match.
    let mut t = Templates::default();
    t.templates
        .insert("small.min".into(), tpl(|x| x.procs = Some(1)));
    t.templates
        .insert("small.max".into(), tpl(|x| x.procs = Some(4)));
    t.templates
        .insert("small.set".into(), tpl(|x| x.qos = vec!["fast".into()]));
    t.templates
        .insert("large.min".into(), tpl(|x| x.procs = Some(2)));
    t.templates.insert(
        "large.set".into(),
        tpl(|x| {
            x.qos = vec!["bulk".into()];
            x.flags = vec![JobFlag::Preemptee];
        }),
    );
    t.matches.push(rule("small", |m| {
        m.jmin = Some("small.min".into());
        m.jmax = Some("small.max".into());
        m.jset = Some("small.set".into());
        m.brk = true;
    }));
    t.matches.push(rule("large", |m| {
        m.jmin = Some("large.min".into());
        m.jset = Some("large.set".into());
    }));
    // 2 procs matches both: small only (BREAK).
    let mut s = Subject {
        procs: Some(2),
        qos: Some("mine".into()),
        ..subject()
    };
    let a = apply(&t, &mut s, None).unwrap();
    assert_eq!(a.names, ["small"]);
    assert_eq!(
        s.qos.as_deref(),
        Some("fast"),
        "JSET overrides the user's value"
    );
    // 8 procs exceeds small's JMAX: a filter, not a rejection (it has a JSET).
    let mut s = Subject {
        procs: Some(8),
        ..subject()
    };
    let a = apply(&t, &mut s, None).unwrap();
    assert_eq!(a.names, ["large"]);
    assert_eq!(s.qos.as_deref(), Some("bulk"));
    assert_eq!(s.flags, [JobFlag::Preemptee]);
    // 1 proc: small only (large's JMIN is not met).
    let mut s = subject();
    assert_eq!(apply(&t, &mut s, None).unwrap().names, ["small"]);
}

#[test]
fn limits_reject_with_the_reason() {
    let mut t = Templates::default();
    t.templates.insert(
        "batch.min".into(),
        tpl(|x| {
            x.classes = vec!["batch".into()];
            x.procs = Some(2);
        }),
    );
    t.templates.insert(
        "nointeractive".into(),
        tpl(|x| x.flags = vec![JobFlag::Interactive]),
    );
    t.matches
        .push(rule("minimum", |m| m.jmin = Some("batch.min".into())));
    t.matches
        .push(rule("nointer", |m| m.jmax = Some("nointeractive".into())));
    let e = apply(&t, &mut subject(), None).unwrap_err();
    assert_eq!(
        e,
        "job does not meet template 'batch.min' (JOBMATCHCFG[minimum] JMIN): class (none) is not batch"
    );
    let mut s = Subject {
        class: Some("batch".into()),
        ..subject()
    };
    let e = apply(&t, &mut s, None).unwrap_err();
    assert!(e.ends_with("procs 1 < 2"), "{e}");
    let mut s = Subject {
        class: Some("batch".into()),
        procs: Some(2),
        flags: vec![JobFlag::Interactive],
        ..subject()
    };
    let e = apply(&t, &mut s, None).unwrap_err();
    assert_eq!(
        e,
        "job exceeds template 'nointeractive' (JOBMATCHCFG[nointer] JMAX): flag INTERACTIVE is excluded"
    );
    s.flags.clear();
    assert_eq!(
        apply(&t, &mut s, None).unwrap().names,
        ["minimum", "nointer"]
    );
}

#[test]
fn unlimited_walltime_exceeds_every_maximum() {
    let t = hpc();
    let e = apply(&t, &mut subject(), None);
    assert!(e.is_ok(), "no template selected: no limit applies");
    let mut t = Templates::default();
    t.templates
        .insert("max".into(), tpl(|x| x.walltime = Some(60)));
    t.matches.push(rule("all", |m| m.jmax = Some("max".into())));
    let e = apply(&t, &mut subject(), None).unwrap_err();
    assert!(
        e.ends_with("walltime no wall-clock limit > 00:01:00"),
        "{e}"
    );
}

#[test]
fn undefined_references_are_listed() {
    let mut t = Templates::default();
    t.matches.push(rule("r", |m| {
        m.jmax = Some("nope".into());
        m.jset = Some("nope2".into());
    }));
    assert_eq!(
        t.undefined_references(),
        [
            ("r".to_string(), "JMAX", "nope".to_string()),
            ("r".to_string(), "JSET", "nope2".to_string())
        ]
    );
    assert!(t.match_mut("r").jmax.is_some());
    t.match_mut("s").brk = true;
    assert_eq!(t.matches.len(), 2);
}

#[test]
fn jstat_collects_the_jobs_its_rule_matches_without_rejecting_others() {
    let mut t = Templates::default();
    t.templates
        .insert("big.min".into(), tpl(|x| x.procs = Some(4)));
    t.templates
        .insert("long.set".into(), tpl(|x| x.qos = vec!["bulk".into()]));
    t.matches.push(rule("big", |m| {
        m.jmin = Some("big.min".into());
        m.jstat = vec!["bigstats".into(), "all".into()];
    }));
    t.matches
        .push(rule("every", |m| m.jstat = vec!["all".into()]));
    t.matches.push(rule("bulk", |m| {
        m.jset = Some("long.set".into());
        m.jstat = vec!["bulkstats".into()];
    }));
    assert_eq!(t.stat_templates(), ["all", "bigstats", "bulkstats"]);
    // 8 procs meets big.min: counted in bigstats and all (once), bulkstats.
    let mut s = Subject {
        procs: Some(8),
        ..subject()
    };
    let a = apply(&t, &mut s, None).unwrap();
    assert_eq!(a.stats, ["bigstats", "all", "bulkstats"]);
    assert_eq!(a.names, ["bulk"], "statistics rules change nothing");
    // 1 proc does not meet big.min: not rejected (JSTAT makes it a filter).
    let mut s = subject();
    let a = apply(&t, &mut s, None).unwrap();
    assert_eq!(a.stats, ["all", "bulkstats"]);
    assert_eq!(s.qos.as_deref(), Some("bulk"));
}
