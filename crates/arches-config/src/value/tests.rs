//! Tests of every value type: accepted forms, normalised text, error wording.

use super::*;

fn p(ty: ValueType, s: &str) -> Result<Value, String> {
    ty.parse(s)
}

#[test]
fn integers_respect_their_range() {
    let t = ValueType::Integer { min: 0, max: 9 };
    assert_eq!(p(t, " 7 "), Ok(Value::Integer(7)));
    assert_eq!(p(t, "10"), Err("value 10 out of range (0–9)".to_string()));
    assert_eq!(p(t, "x"), Err("invalid integer 'x'".to_string()));
    assert_eq!(p(t, ""), Err("missing value".to_string()));
    let neg = ValueType::Integer {
        min: i64::MIN,
        max: i64::MAX,
    };
    assert_eq!(p(neg, "-5"), Ok(Value::Integer(-5)));
}

#[test]
fn durations_use_moab_timespecs_and_print_back() {
    assert_eq!(p(ValueType::Duration, "1:00:00"), Ok(Value::Duration(3600)));
    assert_eq!(p(ValueType::Duration, "90"), Ok(Value::Duration(90)));
    assert_eq!(
        p(ValueType::Duration, "2:00:00:00"),
        Ok(Value::Duration(172_800))
    );
    assert_eq!(Value::Duration(3600).to_string(), "01:00:00");
    assert_eq!(Value::Duration(90_061).to_string(), "1:01:01:01");
    let e = p(ValueType::Duration, "1h").unwrap_err();
    assert!(e.contains("[[[DD:]HH:]MM:]SS"), "{e}");
    for secs in [0, 59, 3600, 86_399, 86_400, 1_000_000] {
        let text = Value::Duration(secs).to_string();
        assert_eq!(
            p(ValueType::Duration, &text),
            Ok(Value::Duration(secs)),
            "{text}"
        );
    }
}

#[test]
fn booleans_accept_moab_spellings() {
    for t in ["TRUE", "true", "1", "on", "YES"] {
        assert_eq!(p(ValueType::Boolean, t), Ok(Value::Boolean(true)), "{t}");
    }
    for f in ["FALSE", "0", "off", "no"] {
        assert_eq!(p(ValueType::Boolean, f), Ok(Value::Boolean(false)), "{f}");
    }
    assert!(p(ValueType::Boolean, "maybe")
        .unwrap_err()
        .contains("invalid boolean 'maybe'"));
}

#[test]
fn choices_are_case_insensitive_and_list_the_allowed_words() {
    let c = word_choices!("DAY", "WEEK");
    assert_eq!(p(ValueType::Choice(c), "week"), Ok(Value::Choice("WEEK")));
    let e = p(ValueType::Choice(c), "month").unwrap_err();
    assert_eq!(e, "invalid value 'month' (expected one of DAY, WEEK)");
    let core = core_choices!(arches_core::policy::BackfillPolicy);
    assert_eq!(
        p(ValueType::Choice(core), "bestfit"),
        Ok(Value::Choice("BESTFIT"))
    );
    let flags = core_choices!(arches_core::JobFlag);
    assert_eq!(
        p(ValueType::ChoiceList(flags), "suspendable,ignorepolicies"),
        Ok(Value::Choices(vec!["SUSPENDABLE", "IGNPOLICIES"]))
    );
    assert_eq!(
        p(ValueType::ChoiceList(c), "[NONE]"),
        Ok(Value::Choices(vec![]))
    );
}

#[test]
fn lists_split_on_commas_colons_and_spaces() {
    assert_eq!(
        p(ValueType::List, "a,b:c d"),
        Ok(Value::List(vec![
            "a".into(),
            "b".into(),
            "c".into(),
            "d".into()
        ]))
    );
    assert_eq!(p(ValueType::List, "[NONE]"), Ok(Value::List(vec![])));
    assert_eq!(Value::List(vec![]).to_string(), "[NONE]");
}

#[test]
fn percentages_accept_percent_plain_and_fraction() {
    assert_eq!(p(ValueType::Percent, "80%"), Ok(Value::Percent(80.0)));
    assert_eq!(p(ValueType::Percent, "25"), Ok(Value::Percent(25.0)));
    assert_eq!(p(ValueType::Percent, "0.8"), Ok(Value::Percent(80.0)));
    assert!(p(ValueType::Percent, "120%")
        .unwrap_err()
        .contains("invalid percentage '120%'"));
    assert!(p(ValueType::Percent, "-3%").is_err());
    assert_eq!(Value::Percent(80.0).to_string(), "80%");
}

#[test]
fn limits_are_soft_hard_pairs() {
    let l = |soft, hard| Value::Limit(Limit { soft, hard });
    assert_eq!(p(ValueType::Limit, "2,4"), Ok(l(2, 4)));
    assert_eq!(p(ValueType::Limit, "3"), Ok(l(3, 3)));
    assert!(p(ValueType::Limit, "5,4")
        .unwrap_err()
        .contains("soft limit exceeds hard limit"));
    assert!(p(ValueType::Limit, "-1").is_err());
    assert_eq!(l(2, 4).to_string(), "2,4");
    assert_eq!(l(3, 3).to_string(), "3");
    let wc = p(ValueType::DurationLimit, "1:00:00,2:00:00").unwrap();
    assert_eq!(
        wc,
        Value::DurationLimit(Limit {
            soft: 3600,
            hard: 7200
        })
    );
    assert_eq!(wc.to_string(), "01:00:00,02:00:00");
}

#[test]
fn signals_by_number_or_name() {
    assert_eq!(p(ValueType::Signal, "23"), Ok(Value::Signal(23)));
    assert_eq!(p(ValueType::Signal, "SIGTSTP"), Ok(Value::Signal(20)));
    assert_eq!(p(ValueType::Signal, "usr1"), Ok(Value::Signal(10)));
    assert!(p(ValueType::Signal, "0").is_err());
    assert!(p(ValueType::Signal, "SIGFOO")
        .unwrap_err()
        .contains("invalid signal 'SIGFOO'"));
}

#[test]
fn sizes_and_bandwidths_scale_units() {
    assert_eq!(p(ValueType::Size, "2048"), Ok(Value::Size(2048)));
    assert_eq!(p(ValueType::Size, "4GB"), Ok(Value::Size(4096)));
    assert_eq!(p(ValueType::Size, "1t"), Ok(Value::Size(1_048_576)));
    assert!(p(ValueType::Size, "4XB").is_err());
    assert_eq!(
        p(ValueType::Bandwidth, "100"),
        Ok(Value::Bandwidth(102_400))
    );
    assert_eq!(
        p(ValueType::Bandwidth, "1GB/s"),
        Ok(Value::Bandwidth(1_048_576))
    );
    assert_eq!(p(ValueType::Bandwidth, "512KB"), Ok(Value::Bandwidth(512)));
    assert_eq!(Value::Bandwidth(102_400).to_string(), "100MB");
    assert!(p(ValueType::Bandwidth, "fast").is_err());
}

#[test]
fn urls_need_a_scheme() {
    assert_eq!(
        p(ValueType::Url, "exec://$TOOLSDIR/system.query.dstage.pl"),
        Ok(Value::Text(
            "exec://$TOOLSDIR/system.query.dstage.pl".into()
        ))
    );
    assert!(p(ValueType::Url, "/usr/bin/x")
        .unwrap_err()
        .contains("invalid URL"));
    assert!(p(ValueType::Url, "exec://").is_err());
}

#[test]
fn floats_are_non_negative() {
    assert_eq!(p(ValueType::Float, "1.5"), Ok(Value::Float(1.5)));
    assert!(p(ValueType::Float, "-1").is_err());
    assert!(p(ValueType::Float, "NaN").is_err());
}

#[test]
fn accessors_report_type_mismatches_without_panicking() {
    assert!(Value::Text("x".into())
        .integer()
        .unwrap_err()
        .contains("internal error"));
    assert_eq!(
        Value::Integer(-1).u32(),
        Err("value -1 out of range".to_string())
    );
}

#[test]
fn read_accepts_unsupported_moab_words_with_notes() {
    let c = core_choices!(arches_core::policy::BackfillMetric, ["PE"]);
    let r = ValueType::Choice(c).read("pe").unwrap();
    assert_eq!(r.value, None);
    assert_eq!(r.notes.len(), 1);
    assert!(ValueType::Choice(c).parse("PE").is_err());
    let r = ValueType::ChoiceList(c).read("PROCS,PE").unwrap();
    assert_eq!(r.value, Some(Value::Choices(vec!["PROCS"])));
    assert!(ValueType::ChoiceList(c).read("PROCS,XX").is_err());
    assert_eq!(
        ValueType::ChoiceList(c).read(" "),
        Err("missing value".to_string())
    );
}
