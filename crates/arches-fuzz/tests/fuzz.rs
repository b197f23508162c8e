//! The fuzz targets (see the crate's documentation): moab.cfg, msub's
//! options and script directives through the daemon's submission parser,
//! the daemon's API request decoding (every route, in process), and the
//! simulator's SWF and JSONL readers followed by a replay.

use std::path::Path;
use std::sync::OnceLock;

use arches_core::limits::{MAX_NODE_PROCS, MAX_TOTAL_PROCS, MAX_WALLTIME};
use arches_fuzz::fuzz;
use proptest::collection::vec;
use proptest::prelude::*;
use proptest::sample::select;
use serde::{Deserialize, Serialize};

/// An epoch time inside the range every parser accepts.
const NOW: i64 = 1_700_000_000;

// ---------------------------------------------------------------------------
// Hostile values
// ---------------------------------------------------------------------------

/// Numbers as text: ordinary, at and past every integer type's edge,
/// negative, fractional, exponents, not numbers at all.
fn number_text() -> impl Strategy<Value = String> {
    prop_oneof![
        2 => (0u32..200).prop_map(|n| n.to_string()),
        1 => any::<i64>().prop_map(|n| n.to_string()),
        1 => any::<u64>().prop_map(|n| n.to_string()),
        3 => select(vec![
            "0",
            "-1",
            "-0",
            "+5",
            "2147483647",
            "2147483648",
            "4294967295",
            "4294967296",
            "9223372036854775807",
            "9223372036854775808",
            "-9223372036854775808",
            "18446744073709551615",
            "18446744073709551616",
            "99999999999999999999999",
            "1e300",
            "1.5",
            "NaN",
            "inf",
            "0x10",
            "",
        ])
        .prop_map(str::to_string),
    ]
}

/// Durations: `[[[DD:]HH:]MM:]SS` with any field sizes, and broken ones.
fn duration_text() -> impl Strategy<Value = String> {
    prop_oneof![
        vec("[0-9]{1,14}", 1..5).prop_map(|f| f.join(":")),
        ("[0-9]{1,12}", "[0-9]{1,12}").prop_map(|(d, h)| format!("{d}-{h}")),
        number_text(),
        "[0-9:.\\-]{0,12}",
    ]
}

/// Text a user could type: printable, any Unicode, control characters, NUL.
fn nasty_text() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-zA-Z0-9_.-]{0,12}",
        "[ -~]{0,24}",
        any::<String>(),
        "[\\x00-\\x1f\\x7f]{1,4}",
        "[a-z]{1,4}[\\x00-\\x1f\\x7f\u{202e}\u{85}][a-z]{1,4}",
        select(vec![
            "ALL", "NONE", "[NONE]", "root", "/", "..", "*", "$HOME", "\\"
        ])
        .prop_map(str::to_string),
        "x{200,300}",
    ]
}

/// A value of any kind.
fn any_value() -> impl Strategy<Value = String> {
    prop_oneof![number_text(), duration_text(), nasty_text()]
}

// ---------------------------------------------------------------------------
// moab.cfg
// ---------------------------------------------------------------------------

/// A parameter's name, attribute names and default values.
type ParamWords = (String, Vec<String>, Vec<String>);

/// Every parameter's words.
fn params() -> &'static [ParamWords] {
    static P: OnceLock<Vec<ParamWords>> = OnceLock::new();
    P.get_or_init(|| {
        arches_config::params::all()
            .map(|p| {
                let mut defaults: Vec<String> = p.default.iter().map(|d| d.to_string()).collect();
                let attrs = match &p.shape {
                    arches_config::params::Shape::Object { attrs, .. } => attrs
                        .iter()
                        .map(|a| {
                            defaults.extend(a.default.map(str::to_string));
                            a.name.to_string()
                        })
                        .collect(),
                    arches_config::params::Shape::Scalar { .. } => Vec::new(),
                };
                (p.name.to_string(), attrs, defaults)
            })
            .collect()
    })
}

fn cfg_value() -> impl Strategy<Value = String> {
    let defaults: Vec<String> = params().iter().flat_map(|p| p.2.clone()).collect();
    prop_oneof![
        2 => any_value(),
        1 => select(defaults),
        1 => vec("[A-Za-z0-9]{1,6}", 1..4).prop_map(|v| v.join(",")),
        1 => ("[a-z]{1,6}", any_value()).prop_map(|(k, v)| format!("{k}:{v}")),
    ]
}

fn cfg_line() -> impl Strategy<Value = String> {
    let n = params().len();
    prop_oneof![
        6 => (0..n, proptest::option::of("[A-Za-z0-9_]{0,8}"), vec((any::<prop::sample::Index>(), cfg_value()), 0..4), cfg_value())
            .prop_map(|(i, index, attrs, value)| {
                let (name, names, _) = &params()[i];
                let head = match index {
                    Some(ix) => format!("{name}[{ix}]"),
                    None => name.clone(),
                };
                if names.is_empty() {
                    format!("{head} {value}")
                } else {
                    let parts: Vec<String> = attrs
                        .iter()
                        .map(|(ix, v)| format!("{}={v}", ix.get(names)))
                        .collect();
                    format!("{head} {}", parts.join(" "))
                }
            }),
        1 => nasty_text(),
        1 => ("[A-Z]{1,10}", any_value()).prop_map(|(k, v)| format!("{k} {v}")),
        1 => Just("# comment \\".to_string()),
        1 => ("NODECFG\\[[a-z0-9]{1,4}\\]", number_text()).prop_map(|(n, p)| format!("{n} PROCS={p} MEM={p}")),
    ]
}

#[test]
fn fuzz_moab_cfg() {
    let text = || vec(cfg_line(), 0..12).prop_map(|l| l.join("\n"));
    fuzz("moab_cfg", text, |text: &String| {
        let parsed = arches_config::parse(text, "fuzz.cfg");
        if parsed.has_errors() {
            for d in parsed.errors() {
                if d.message.is_empty() {
                    return Err("an error without a message".into());
                }
            }
            return Ok(());
        }
        let config = parsed.config;
        let _ = config.effective();
        let total: u64 = config.nodes.iter().map(|n| u64::from(n.procs)).sum();
        if config.nodes.iter().any(|n| n.procs > MAX_NODE_PROCS)
            || total > u64::from(MAX_TOTAL_PROCS)
        {
            return Err(format!("processors out of range accepted ({total} in all)"));
        }
        // What the daemon derives from it, and one scheduling pass.
        let mut moab = config.clone();
        moab.fill_local_defaults("fuzzhost", 4, 4096);
        let daemon =
            arches_server::config::from_moab(Path::new("/nonexistent"), moab, None, vec![]);
        let mut state = arches_core::State::new(daemon.moab.nodes.clone());
        for id in 1..=3u64 {
            let mut job = arches_core::Job::new(
                id,
                "u",
                arches_core::Request::procs(id as u32),
                Some(60),
                NOW,
            );
            job.cred.class = daemon
                .policy
                .classes
                .keys()
                .next()
                .map(|k| k.as_str().into());
            let _ = state.apply(arches_core::Event::submit(job), NOW);
        }
        let _ = arches_core::schedule(&state, &daemon.policy, NOW);
        // The fairshare report (mdiag -f) sized by the configuration.
        let window = arches_server::views::fs_window(&daemon, &state);
        let usage =
            arches_core::accounting::Accounting::default().fairshare(state.active(), &window, NOW);
        if usage.total.len() > 32 {
            return Err(format!("{} fairshare intervals", usage.total.len()));
        }
        // mschedctl -m config with each line of the text.
        let mut live = config.clone();
        for line in text.lines() {
            let _ = live.apply_line(line);
        }
        Ok(())
    });
}

// ---------------------------------------------------------------------------
// msub: options, script directives, and the daemon's submission parser
// ---------------------------------------------------------------------------

#[derive(Debug, Clone, Serialize, Deserialize)]
struct MsubInput {
    argv: Vec<String>,
    script: String,
}

fn resource() -> impl Strategy<Value = String> {
    let one = prop_oneof![
        (number_text(), number_text()).prop_map(|(n, p)| format!("nodes={n}:ppn={p}")),
        (number_text(), "[a-z]{1,5}").prop_map(|(n, f)| format!("nodes={n}:{f}")),
        number_text().prop_map(|n| format!("procs={n}")),
        number_text().prop_map(|n| format!("ncpus={n}")),
        duration_text().prop_map(|d| format!("walltime={d}")),
        (
            number_text(),
            select(vec!["", "b", "kb", "mb", "gb", "tb", "w", "x"])
        )
            .prop_map(|(n, u)| format!("mem={n}{u}")),
        (number_text(), select(vec!["kb", "mb", "gb"])).prop_map(|(n, u)| format!("pmem={n}{u}")),
        (number_text(), number_text(), number_text())
            .prop_map(|(a, b, c)| format!("select={a}:ncpus={b}:mem={c}gb")),
        select(vec!["PREEMPTOR", "PREEMPTEE", "RESTARTABLE", "BOGUS", ""])
            .prop_map(|f| format!("flags={f}")),
        number_text().prop_map(|n| format!("depend=afterok:{n}")),
        nasty_text().prop_map(|q| format!("qos={q}")),
        nasty_text().prop_map(|p| format!("partition={p}")),
        nasty_text().prop_map(|x| format!("x={x}")),
        any_value().prop_map(|v| format!("{v}={v}")),
    ];
    vec(one, 1..4).prop_map(|v| v.join(","))
}

fn msub_word() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => select(vec![
            "-N", "-l", "-v", "-V", "-q", "-A", "-a", "-d", "-e", "-o", "-j", "-h", "-p", "-r",
            "-S", "-W", "-M", "-m", "-c", "-k", "-z", "-C", "-E", "-x", "-K", "-t", "-u",
            "--xml", "--format", "-W", "-l",
        ])
        .prop_map(str::to_string),
        3 => resource(),
        1 => (nasty_text(), any_value()).prop_map(|(k, v)| format!("{k}={v}")),
        1 => select(vec!["oe", "eo", "n", "y", "/bin/sh", "/no/shell", "bash", "x=FLAGS:PREEMPTOR"]).prop_map(str::to_string),
        2 => any_value(),
    ]
}

fn msub_input() -> impl Strategy<Value = MsubInput> {
    let directive = prop_oneof![
        (
            select(vec!["#PBS", "#MSUB", "#PBS:", "# PBS", "#msub"]),
            vec(msub_word(), 0..4)
        )
            .prop_map(|(p, w)| format!("{p} {}", w.join(" "))),
        nasty_text(),
        Just("#!/bin/bash".to_string()),
        Just("sleep 1; exit 3".to_string()),
    ];
    (vec(msub_word(), 0..10), vec(directive, 0..6)).prop_map(|(argv, lines)| MsubInput {
        argv,
        script: lines.join("\n"),
    })
}

fn cluster() -> arches_core::State {
    arches_core::State::new(vec![
        arches_core::Node::new("n1", 8, 16_384),
        arches_core::Node::new("n2", 8, 16_384),
        arches_core::Node::new("n3", 4, 0),
    ])
}

#[test]
fn fuzz_msub() {
    use clap::{CommandFactory, FromArgMatches};
    let mut policy = arches_core::Policy::default();
    policy.classes.insert("batch".into(), Default::default());
    let user = arches_server::ident::UserInfo {
        name: "fuzz".into(),
        uid: 4242,
        gid: 4242,
        home: "/home/fuzz".into(),
        shell: "/bin/sh".into(),
    };
    fuzz("msub", msub_input, |i: &MsubInput| {
        use arches_cli::cmd::msub;
        let argv = std::iter::once("msub".to_string()).chain(i.argv.iter().cloned());
        let Ok(cli) = msub::Msub::command()
            .try_get_matches_from(argv)
            .and_then(|m| msub::Msub::from_arg_matches(&m))
        else {
            return Ok(());
        };
        let env = vec![
            ("HOME".to_string(), "/home/fuzz".to_string()),
            ("PATH".to_string(), "/usr/bin:/bin".to_string()),
            ("TOKEN".to_string(), "secret".to_string()),
        ];
        let req = match msub::assemble(cli, i.script.clone(), Path::new("/tmp"), &env, &i.argv, "h")
        {
            Ok((_, req)) => req,
            Err(e) if e.starts_with("ERROR:") => return Ok(()),
            Err(e) => return Err(format!("msub error without Moab's prefix: {e:?}")),
        };
        let sub = match arches_server::jobspec::parse(&req, &user, "fuzz", &policy, NOW) {
            Ok(s) => s,
            Err(e) => {
                let m = e.message();
                return if m.starts_with("ERROR:") && m.contains("cannot submit job - ") {
                    Ok(())
                } else {
                    Err(format!("rejection without Moab's wording: {m:?}"))
                };
            }
        };
        let job = &sub.job;
        if job.walltime.is_some_and(|w| w <= 0 || w > MAX_WALLTIME) {
            return Err(format!("walltime {:?} accepted", job.walltime));
        }
        if arches_api::text::needs_escape(&job.name) || job.name.contains('/') {
            return Err(format!("job name {:?} accepted", job.name));
        }
        if !arches_core::limits::USER_PRIORITY.contains(&job.user_prio) {
            return Err(format!("user priority {} accepted", job.user_prio));
        }
        let _ = sub.check_privileges(false);
        let mut state = cluster();
        if sub.check_against(&state).is_ok() {
            let (job, _exec, payload) = sub.finalize(17, "h");
            if payload
                .env
                .iter()
                .any(|(k, _)| k.is_empty() || k.contains('='))
            {
                return Err("an environment variable execve cannot pass".into());
            }
            state
                .apply(arches_core::Event::submit(job), NOW)
                .map_err(|e| format!("accepted job refused by the core: {e}"))?;
            let _ = arches_core::schedule(&state, &policy, NOW);
        }
        Ok(())
    });
}

// ---------------------------------------------------------------------------
// The daemon's API: every route, in process
// ---------------------------------------------------------------------------

#[derive(Debug, Clone, Serialize, Deserialize)]
struct ApiInput {
    admin: bool,
    post: bool,
    route: String,
    query: Option<String>,
    body: Vec<u8>,
}

/// Valid bodies of each POST route (never `mschedctl -k`: the fuzzed
/// daemon must keep running).
fn templates() -> Vec<(&'static str, serde_json::Value)> {
    use arches_api::*;
    let j = |v: serde_json::Result<serde_json::Value>| v.expect("template");
    let submit = SubmitRequest {
        script: "#!/bin/sh\nsleep 0\n".into(),
        submit_dir: "/tmp".into(),
        name: Some("fz".into()),
        resources: vec!["nodes=1:ppn=1,walltime=60".into()],
        env: vec![("A".into(), "b".into())],
        ..SubmitRequest::default()
    };
    let action = |a: JobAction| {
        j(serde_json::to_value(JobActionRequest {
            jobs: vec!["1".into(), "ALL".into()],
            action: a,
            select: Default::default(),
        }))
    };
    vec![
        (routes::SUBMIT, j(serde_json::to_value(&submit))),
        (
            routes::JOBS_DETAIL,
            j(serde_json::to_value(JobsRequest {
                ids: vec!["ALL".into(), "1".into()],
                completed: true,
                ..Default::default()
            })),
        ),
        (routes::JOB_ACTION, action(JobAction::Cancel)),
        (
            routes::JOB_ACTION,
            action(JobAction::Hold {
                types: vec!["user".into()],
            }),
        ),
        (
            routes::JOB_ACTION,
            action(JobAction::Modify {
                changes: vec!["walltime+=100".into(), "userprio=5".into()],
            }),
        ),
        (
            routes::JOB_ACTION,
            action(JobAction::SystemPriority {
                value: "+10".into(),
                relative: true,
            }),
        ),
        (
            routes::JOB_ACTION,
            action(JobAction::Signal {
                signal: "TERM".into(),
            }),
        ),
        (
            routes::JOB_ACTION,
            action(JobAction::Execute { flags: vec![] }),
        ),
        (
            routes::SCHEDULER_CONTROL,
            j(serde_json::to_value(SchedulerControl::Step {
                iterations: 1,
            })),
        ),
        (
            routes::SCHEDULER_CONTROL,
            j(serde_json::to_value(SchedulerControl::Resume {
                after_secs: Some(5),
            })),
        ),
        (
            routes::SCHEDULER_CONTROL,
            j(serde_json::to_value(SchedulerControl::Stop {
                iteration: Some(3),
            })),
        ),
        (
            routes::SCHEDULER_CONTROL,
            j(serde_json::to_value(SchedulerControl::Annotate {
                message: "m".into(),
            })),
        ),
        (
            routes::SCHEDULER_CONTROL,
            j(serde_json::to_value(SchedulerControl::LogLevel {
                level: Some(3),
            })),
        ),
        (
            routes::SCHEDULER_CONTROL,
            j(serde_json::to_value(SchedulerControl::ModifyConfig {
                line: "RESERVATIONDEPTH 2".into(),
                evaluate_only: false,
            })),
        ),
        (
            routes::BACKFILL,
            j(serde_json::to_value(BackfillQuery::default())),
        ),
        (
            routes::STARTTIME,
            j(serde_json::to_value(StartQuery::Hypothetical {
                procs: 2,
                duration: "60".into(),
                qos: None,
                feedback: false,
            })),
        ),
        (
            routes::STARTTIME,
            j(serde_json::to_value(StartQuery::Job {
                id: "1".into(),
                feedback: true,
            })),
        ),
        (
            routes::RESERVATION_CONTROL,
            j(serde_json::to_value(ReservationRequest::Create {
                specs: vec![
                    "starttime=+60".into(),
                    "duration=100".into(),
                    "procs=1".into(),
                ],
            })),
        ),
        (
            routes::RESERVATION_CONTROL,
            j(serde_json::to_value(ReservationRequest::Release {
                id: "system.1".into(),
                group: None,
            })),
        ),
    ]
}

/// A hostile JSON value.
fn json_value() -> impl Strategy<Value = serde_json::Value> {
    use serde_json::Value;
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>().prop_map(Value::from),
        any_value().prop_map(Value::String),
        resource().prop_map(Value::String),
    ];
    leaf.prop_recursive(2, 8, 4, |inner| {
        prop_oneof![
            vec(inner.clone(), 0..4).prop_map(Value::Array),
            vec(("[a-z_]{1,8}", inner), 0..3)
                .prop_map(|kv| Value::Object(kv.into_iter().collect())),
        ]
    })
}

/// Replaces values at random places of `v` (keys kept: the request stays
/// close to valid and reaches the handlers).
fn mutate(v: &mut serde_json::Value, picks: &[(prop::sample::Index, serde_json::Value)]) {
    for (ix, new) in picks {
        let mut slots = Vec::new();
        collect_slots(v, &mut Vec::new(), &mut slots);
        if slots.is_empty() {
            return;
        }
        let path = ix.get(&slots).clone();
        if let Some(slot) = path_mut(v, &path) {
            *slot = new.clone();
        }
    }
}

fn collect_slots(v: &serde_json::Value, at: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
    if !at.is_empty() {
        out.push(at.clone());
    }
    match v {
        serde_json::Value::Object(m) => {
            for (k, x) in m {
                at.push(k.clone());
                collect_slots(x, at, out);
                at.pop();
            }
        }
        serde_json::Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                at.push(i.to_string());
                collect_slots(x, at, out);
                at.pop();
            }
        }
        _ => {}
    }
}

fn path_mut<'v>(
    v: &'v mut serde_json::Value,
    path: &[String],
) -> Option<&'v mut serde_json::Value> {
    let mut cur = v;
    for p in path {
        cur = match cur {
            serde_json::Value::Object(m) => m.get_mut(p)?,
            serde_json::Value::Array(a) => a.get_mut(p.parse::<usize>().ok()?)?,
            _ => return None,
        };
    }
    Some(cur)
}

/// `attr[+-]=value` as `mjobctl -m` sends it.
fn change() -> impl Strategy<Value = String> {
    let attr = prop_oneof![
        3 => select(vec!["walltime", "userprio", "sysprio"]),
        1 => select(vec![
            "wclimit", "priority", "class", "queue", "qos", "account", "jobname", "name",
            "flags", "hold", "bogus", "",
        ]),
    ];
    (attr, select(vec!["=", "+=", "-="]), any_value()).prop_map(|(a, o, v)| format!("{a}{o}{v}"))
}

/// `-n`/`-w` selections: names and constraints, well-formed or not
/// (regex-looking values, comparisons, unknown attributes).
fn job_select() -> impl Strategy<Value = arches_api::JobSelect> {
    let attr = prop_oneof![
        Just("user"),
        Just("group"),
        Just("acct"),
        Just("class"),
        Just("state"),
        Just("partition"),
        Just("CompletionTime"),
        Just("StartTime"),
        Just("colour"),
    ];
    let cmp = prop_oneof![Just("="), Just(">="), Just("<"), Just("=="), Just("")];
    let constraint = (attr, cmp, any_value()).prop_map(|(a, c, v)| format!("{a}{c}{v}"));
    (proptest::option::of(nasty_text()), vec(constraint, 0..3))
        .prop_map(|(name, constraints)| arches_api::JobSelect { name, constraints })
}

fn job_ids() -> impl Strategy<Value = Vec<String>> {
    vec(
        prop_oneof![
            4 => (1u32..200).prop_map(|n| n.to_string()),
            3 => Just("ALL".to_string()),
            1 => select(vec!["Moab.1", "1.host", "ALL,2", "1.*", "7[4", "1[0-2]", "(a|b)*{1,9}", "jobname:x"]).prop_map(str::to_string),
            1 => number_text(),
            1 => nasty_text(),
        ],
        1..3,
    )
}

/// Typed requests with hostile values in every field.
fn typed_body() -> impl Strategy<Value = (&'static str, Vec<u8>)> {
    use arches_api::*;
    let json = |v: serde_json::Value| v.to_string().into_bytes();
    let action = prop_oneof![
        1 => Just(JobAction::Cancel),
        1 => vec(any_value(), 0..3).prop_map(|types| JobAction::Hold { types }),
        1 => vec(any_value(), 0..3).prop_map(|types| JobAction::Release { types }),
        4 => vec(change(), 1..3).prop_map(|changes| JobAction::Modify { changes }),
        2 => (select(vec!["", "+", "-", "--", "+-"]), number_text(), any::<bool>())
            .prop_map(|(s, v, relative)| JobAction::SystemPriority { value: format!("{s}{v}"), relative }),
        1 => Just(JobAction::Suspend),
        1 => Just(JobAction::Resume),
        1 => Just(JobAction::Requeue),
        1 => Just(JobAction::Checkpoint),
        1 => any_value().prop_map(|signal| JobAction::Signal { signal }),
        1 => vec(any_value(), 0..2).prop_map(|flags| JobAction::Execute { flags }),
    ];
    let control = prop_oneof![
        Just(SchedulerControl::Pause),
        proptest::option::of(any::<i64>())
            .prop_map(|after_secs| SchedulerControl::Resume { after_secs }),
        any::<u64>().prop_map(|iterations| SchedulerControl::Step { iterations }),
        proptest::option::of(any::<u64>())
            .prop_map(|iteration| SchedulerControl::Stop { iteration }),
        (cfg_line(), any::<bool>()).prop_map(|(line, evaluate_only)| {
            SchedulerControl::ModifyConfig {
                line,
                evaluate_only,
            }
        }),
        any_value().prop_map(|what| SchedulerControl::Flush { what }),
        nasty_text().prop_map(|message| SchedulerControl::Annotate { message }),
        proptest::option::of(any::<u32>()).prop_map(|level| SchedulerControl::LogLevel { level }),
    ];
    let spec = (
        select(vec![
            "starttime",
            "duration",
            "endtime",
            "hostlist",
            "procs",
            "taskcount",
            "name",
            "flags",
            "users",
            "acl",
            "bogus",
        ]),
        prop_oneof![any_value(), duration_text().prop_map(|d| format!("+{d}"))],
    )
        .prop_map(|(k, v)| format!("{k}={v}"));
    let rsv = prop_oneof![
        vec(spec, 0..5).prop_map(|specs| ReservationRequest::Create { specs }),
        (any_value(), proptest::option::of(any_value()))
            .prop_map(|(id, group)| ReservationRequest::Release { id, group }),
        (any_value(), vec(any_value(), 0..4))
            .prop_map(|(id, changes)| ReservationRequest::Modify { id, changes }),
    ];
    let start = prop_oneof![
        (any_value(), any::<bool>()).prop_map(|(id, feedback)| StartQuery::Job { id, feedback }),
        (
            any::<u32>(),
            duration_text(),
            proptest::option::of(nasty_text()),
            any::<bool>()
        )
            .prop_map(
                |(procs, duration, qos, feedback)| StartQuery::Hypothetical {
                    procs,
                    duration,
                    qos,
                    feedback
                }
            ),
    ];
    let backfill = (
        proptest::option::of(duration_text()),
        proptest::option::of(any::<u32>()),
        proptest::option::of(any_value()),
        proptest::option::of(nasty_text()),
    )
        .prop_map(|(duration, nodes, memory, user)| BackfillQuery {
            duration,
            nodes,
            memory,
            user,
            ..BackfillQuery::default()
        });
    prop_oneof![
        4 => (job_ids(), action, job_select()).prop_map(move |(jobs, action, select)| (routes::JOB_ACTION, json(serde_json::to_value(JobActionRequest { jobs, action, select }).expect("json")))),
        2 => control.prop_map(move |c| (routes::SCHEDULER_CONTROL, json(serde_json::to_value(c).expect("json")))),
        2 => rsv.prop_map(move |r| (routes::RESERVATION_CONTROL, json(serde_json::to_value(r).expect("json")))),
        1 => start.prop_map(move |q| (routes::STARTTIME, json(serde_json::to_value(q).expect("json")))),
        1 => backfill.prop_map(move |q| (routes::BACKFILL, json(serde_json::to_value(q).expect("json")))),
        1 => (job_ids(), any::<bool>(), job_select()).prop_map(move |(ids, completed, select)| (routes::JOBS_DETAIL, json(serde_json::to_value(JobsRequest { ids, completed, select, history: false }).expect("json")))),
        2 => (vec(resource(), 0..3), vec(("[A-Za-z_=]{0,6}", any_value()), 0..3), proptest::option::of(nasty_text()), proptest::option::of(any_value()), proptest::option::of(nasty_text()), any::<bool>())
            .prop_map(move |(resources, env, name, output, shell, hold)| {
                let req = SubmitRequest {
                    script: "sleep 1\n".into(),
                    submit_dir: "/tmp".into(),
                    resources,
                    env,
                    name,
                    output,
                    shell,
                    hold,
                    ..SubmitRequest::default()
                };
                (routes::SUBMIT, json(serde_json::to_value(req).expect("json")))
            }),
    ]
}

fn api_input() -> impl Strategy<Value = ApiInput> {
    use arches_api::routes;
    let t = templates();
    let n = t.len();
    let gets = vec![
        routes::QUEUE,
        routes::NODES,
        routes::SCHEDULER,
        routes::PRIORITY,
        routes::RESERVATIONS,
        routes::CONFIG,
        routes::CREDENTIALS,
        routes::STATS,
        routes::FAIRSHARE,
        "/v1/nope",
        "/",
    ];
    let query = proptest::option::of(prop_oneof![
        any::<bool>().prop_map(|b| format!("completed={b}")),
        "[a-z%0-9=&]{0,16}",
        Just("name=ALL".to_string()),
        Just("name=n1%00".to_string()),
        Just("completed=maybe".to_string()),
    ]);
    prop_oneof![
        4 => (any::<bool>(), typed_body())
            .prop_map(|(admin, (route, body))| ApiInput { admin, post: true, route: route.to_string(), query: None, body }),
        3 => (any::<bool>(), 0..n, vec((any::<prop::sample::Index>(), json_value()), 0..3))
            .prop_map(move |(admin, i, picks)| {
                let (route, mut body) = t[i].clone();
                mutate(&mut body, &picks);
                ApiInput { admin, post: true, route: route.to_string(), query: None, body: body.to_string().into_bytes() }
            }),
        1 => (any::<bool>(), select(vec![routes::SUBMIT, routes::JOBS_DETAIL, routes::JOB_ACTION, routes::SCHEDULER_CONTROL, routes::BACKFILL, routes::STARTTIME, routes::RESERVATION_CONTROL]), vec(any::<u8>(), 0..64))
            .prop_map(|(admin, route, body)| ApiInput { admin, post: true, route: route.to_string(), query: None, body }),
        2 => (any::<bool>(), select(gets), query, any::<bool>())
            .prop_map(|(admin, route, query, post)| ApiInput { admin, post, route: route.to_string(), query, body: Vec::new() }),
    ]
}

/// A daemon in this process: the real actor and router, the fake backend.
struct InProcess {
    runtime: tokio::runtime::Runtime,
    admin: axum::Router,
    user: axum::Router,
    tx: std::sync::mpsc::Sender<arches_server::actor::Input>,
    /// The non-administrator's user name.
    user_name: String,
    actor: Option<std::thread::JoinHandle<Result<(), String>>>,
    _home: tempfile::TempDir,
}

impl InProcess {
    /// A daemon with three held jobs (1, 2, 3) for the actions to act on.
    fn start() -> InProcess {
        let d = InProcess::empty();
        let held = arches_api::SubmitRequest {
            script: "sleep 1\n".into(),
            submit_dir: "/tmp".into(),
            hold: true,
            ..arches_api::SubmitRequest::default()
        };
        for _ in 0..3 {
            let (status, body) = d.call(&ApiInput {
                admin: true,
                post: true,
                route: arches_api::routes::SUBMIT.into(),
                query: None,
                body: serde_json::to_vec(&held).expect("json"),
            });
            assert_eq!(status, 200, "{}", String::from_utf8_lossy(&body));
        }
        d
    }

    fn empty() -> InProcess {
        use arches_server::{actor, config, http, ident, testing::FakeRm};
        use axum::extract::connect_info::MockConnectInfo;
        let base = if Path::new("/dev/shm").is_dir() {
            "/dev/shm"
        } else {
            "/tmp"
        };
        let home = tempfile::Builder::new()
            .prefix("arches-fuzz")
            .tempdir_in(base)
            .expect("home");
        let nodes = vec![
            arches_core::Node::new("n1", 4, 8192),
            arches_core::Node::new("n2", 4, 8192),
        ];
        let mut moab = arches_config::Config::embedded_default("n1", 4, 8192);
        moab.fill_local_defaults("n1", 4, 8192);
        let mut cfg = config::from_moab(home.path(), moab, None, vec![]);
        cfg.nodes = nodes.clone();
        let cfg = std::sync::Arc::new(cfg);
        let store = arches_store::Store::open(&home.path().join("arches.db")).expect("store");
        let rm = FakeRm::new(home.path().join("fake"), nodes, 1).expect("fake rm");
        let (actor, published) =
            actor::Actor::recover(cfg.clone(), store, Box::new(rm), "fuzz.sock".into())
                .expect("actor");
        let (tx, rx) = std::sync::mpsc::channel();
        let actor = std::thread::spawn(move || actor.run(rx).map_err(|e| format!("{e:#}")));
        let me = ident::current_uid();
        let app = http::AppState {
            tx: tx.clone(),
            published,
            cfg,
            daemon_uid: me,
        };
        let peer = |uid| MockConnectInfo(http::PeerInfo(Some(ident::Peer { uid, gid: uid })));
        let other = if me == 0 { 65534 } else { me.wrapping_add(1) };
        let user_name = ident::user_by_uid(other)
            .map(|u| u.name)
            .unwrap_or_else(|| format!("uid{other}"));
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("runtime");
        InProcess {
            runtime,
            admin: http::router(app.clone()).layer(peer(me)),
            // A user who is not an administrator.
            user: http::router(app).layer(peer(other)),
            tx,
            user_name,
            actor: Some(actor),
            _home: home,
        }
    }

    fn call(&self, i: &ApiInput) -> (u16, Vec<u8>) {
        use tower::ServiceExt;
        let uri = match &i.query {
            Some(q) => format!("{}?{q}", i.route),
            None => i.route.clone(),
        };
        let Ok(req) = axum::http::Request::builder()
            .method(if i.post { "POST" } else { "GET" })
            .uri(uri)
            .header("content-type", "application/json")
            .body(axum::body::Body::from(i.body.clone()))
        else {
            return (400, Vec::new());
        };
        let router = if i.admin {
            self.admin.clone()
        } else {
            self.user.clone()
        };
        self.runtime.block_on(async move {
            let resp = router.oneshot(req).await.expect("infallible");
            let status = resp.status().as_u16();
            let body = axum::body::to_bytes(resp.into_body(), 64 << 20)
                .await
                .map(|b| b.to_vec())
                .unwrap_or_default();
            (status, body)
        })
    }
}

impl Drop for InProcess {
    fn drop(&mut self) {
        let _ = self.tx.send(arches_server::actor::Input::Shutdown);
        if let Some(a) = self.actor.take() {
            let _ = a.join();
        }
    }
}

#[test]
fn fuzz_api() {
    let daemon = InProcess::start();
    fuzz("api", api_input, |i: &ApiInput| {
        let (status, body) = daemon.call(i);
        if status >= 500 {
            return Err(format!(
                "{status} for {} {}: {}",
                if i.post { "POST" } else { "GET" },
                i.route,
                String::from_utf8_lossy(&body)
            ));
        }
        if (400..500).contains(&status) && status != 405 {
            serde_json::from_slice::<arches_api::ApiError>(&body).map_err(|e| {
                format!(
                    "{status} without an ApiError body ({e}): {}",
                    String::from_utf8_lossy(&body)
                )
            })?;
        }
        // Authorization: a detail answer to the non-administrator carries
        // only their own jobs.
        if !i.admin && i.route == arches_api::routes::JOBS_DETAIL && status == 200 {
            let v: arches_api::JobsView = serde_json::from_slice(&body)
                .map_err(|e| format!("undecodable detail answer: {e}"))?;
            if let Some(j) = v.jobs.iter().find(|j| j.summary.user != daemon.user_name) {
                return Err(format!(
                    "job {} of {} shown in detail to {}",
                    j.summary.id, j.summary.user, daemon.user_name
                ));
            }
        }
        if daemon.actor.as_ref().is_some_and(|a| a.is_finished()) {
            return Err("the scheduler thread stopped".into());
        }
        Ok(())
    });
}

// ---------------------------------------------------------------------------
// Workloads: SWF and JSONL, then a replay
// ---------------------------------------------------------------------------

fn swf_field() -> impl Strategy<Value = String> {
    prop_oneof![
        6 => (-1i64..200).prop_map(|n| n.to_string()),
        2 => number_text(),
        1 => "[0-9]{1,6}\\.[0-9]{1,3}",
        1 => select(vec!["1e18", "-1e30", "4.6e18", "9.3e18", "x"]).prop_map(str::to_string),
    ]
}

fn swf_text() -> impl Strategy<Value = String> {
    let record = vec(swf_field(), 16..20).prop_map(|f| f.join(" "));
    let header = prop_oneof![
        number_text().prop_map(|n| format!("; MaxProcs: {n}")),
        number_text().prop_map(|n| format!("; MaxNodes: {n}")),
        number_text().prop_map(|n| format!("; UnixStartTime: {n}")),
        nasty_text().prop_map(|t| format!(";{t}")),
    ];
    (
        vec(header, 0..3),
        vec(prop_oneof![8 => record, 1 => nasty_text()], 0..12),
    )
        .prop_map(|(h, r)| h.into_iter().chain(r).collect::<Vec<_>>().join("\n"))
}

/// Replays `jobs` on a small machine: the engine must neither panic nor
/// loop on anything a reader accepted.
fn replay(jobs: Vec<arches_sim::workload::SimJob>, procs: u32) -> Result<(), String> {
    let procs = procs.clamp(1, 256);
    let nodes = arches_sim::run::machine(procs, procs.min(64));
    let mut sim = arches_sim::run::Simulation::new(nodes, arches_core::Policy::default(), jobs);
    sim.run().map_err(|e| format!("replay failed: {e}"))
}

#[test]
fn fuzz_swf() {
    use arches_sim::swf::{parse_swf, to_jobs, SwfOptions};
    fuzz("swf", swf_text, |text: &String| {
        for opts in [
            SwfOptions::default(),
            SwfOptions {
                sanitize: true,
                skip_malformed: true,
                ..SwfOptions::default()
            },
        ] {
            let Ok(trace) = parse_swf(text.as_bytes(), "fuzz.swf", &opts) else {
                continue;
            };
            let procs = trace.header.max_procs.unwrap_or(16).clamp(1, 256);
            let c = to_jobs(&trace.records, procs, &opts);
            replay(c.jobs, procs)?;
        }
        Ok(())
    });
}

fn jsonl_text() -> impl Strategy<Value = String> {
    let base = serde_json::json!({
        "id": 1, "submit": 0, "procs": 2, "walltime": 100, "runtime": 50,
        "user": "u", "priority": 0, "flags": ["BACKFILL"], "depend": "afterok:1",
        "stagein": 5, "stagein_size": 10
    });
    let line = prop_oneof![
        6 => (any::<u8>(), vec((any::<prop::sample::Index>(), json_value()), 0..3), proptest::option::of((number_text(), number_text())))
            .prop_map(move |(id, picks, layout)| {
                let mut v = base.clone();
                v["id"] = serde_json::Value::from(u64::from(id) + 1);
                mutate(&mut v, &picks);
                if let Some((n, p)) = layout {
                    if let (Ok(n), Ok(p), Some(m)) = (n.parse::<u64>(), p.parse::<u64>(), v.as_object_mut()) {
                        m.remove("procs");
                        m.insert("nodes".into(), n.into());
                        m.insert("ppn".into(), p.into());
                    }
                }
                v.to_string()
            }),
        1 => nasty_text(),
    ];
    vec(line, 0..10).prop_map(|l| l.join("\n"))
}

#[test]
fn fuzz_jsonl() {
    use arches_sim::workload::parse_jsonl_with;
    fuzz("jsonl", jsonl_text, |text: &String| {
        for skip in [false, true] {
            if let Ok(w) = parse_jsonl_with(text.as_bytes(), "fuzz.jsonl", skip) {
                replay(w.jobs, 64)?;
            }
        }
        Ok(())
    });
}
