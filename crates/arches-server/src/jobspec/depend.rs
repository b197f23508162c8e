//! Dependencies as Moab writes them (`-W depend=`, `-l depend=`,
//! `mjobctl -m depend=`): `[TYPE:][{jobname|jobid}.]ID[:...][,TYPE:...]`.
//! No type means `afterok`; `jobname.NAME` names every job of the user with
//! that name; `ID[]` (or an array's `ID`) is a whole array, `ID[INDEX]` one
//! sub-job. The kinds are `after`, `afterok`, `afternotok`, `afterany`,
//! `before`, `beforeok`, `beforenotok`, `beforeany` and the array kinds
//! `afterstartarray`, `afterokarray`, `afternotokarray`, `afteranyarray`
//! (`arches_core::DependencyKind`); `synccount`, `syncwith`, `on` and the
//! `before...array` kinds are refused. How dependencies are evaluated is
//! the core's (`arches_core::eligibility::dependency_status`).

use arches_core::{Dependency, DependencyKind, JobId, State};

use super::{parse_job_id, SubmitError};

/// A dependency whose job is named rather than numbered (resolved against
/// the state at submission: `jobname.NAME`, `ID[INDEX]`, `ID[]`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Named {
    pub kind: DependencyKind,
    pub target: String,
}

const REFUSED: [&str; 7] = [
    "synccount",
    "syncwith",
    "on",
    "beforestartarray",
    "beforeokarray",
    "beforenotokarray",
    "beforeanyarray",
];

/// Parses a dependency list into numbered dependencies and named ones.
pub fn parse(value: &str) -> Result<(Vec<Dependency>, Vec<Named>), SubmitError> {
    let bad = |why: String| SubmitError(format!("invalid dependency '{value}' ({why})"));
    let mut deps = Vec::new();
    let mut named = Vec::new();
    if value.trim().is_empty() {
        return Err(bad("empty".to_string()));
    }
    for group in value.split(',').map(str::trim) {
        if group.is_empty() {
            return Err(bad("empty element".to_string()));
        }
        let mut parts = group.split(':').map(str::trim);
        let first = parts.next().unwrap_or("");
        let low = first.to_ascii_lowercase();
        if low == "synccount" || low == "syncwith" {
            // Torque's synchronized sets start N jobs at the same moment: a
            // co-scheduling the engine does not do. Refused, never run apart.
            return Err(SubmitError(format!(
                "dependency type '{first}' is not supported (synchronized job sets, synccount/syncwith, are not co-scheduled by Arches: submit the set as one job with nodes= or procs=, or as a job array)"
            )));
        }
        if REFUSED.contains(&low.as_str()) {
            return Err(SubmitError(format!(
                "dependency type '{first}' is not supported (supported: after, afterok, afternotok, afterany, before, beforeok, beforenotok, beforeany, afterstartarray, afterokarray, afternotokarray, afteranyarray)"
            )));
        }
        let (kind, ids): (DependencyKind, Vec<&str>) = match low.parse::<DependencyKind>() {
            Ok(k) => (k, parts.collect()),
            // No type: Moab's default.
            Err(_) => (
                DependencyKind::AfterOk,
                std::iter::once(first).chain(parts).collect(),
            ),
        };
        if ids.is_empty() {
            return Err(bad(format!("'{group}' names no job")));
        }
        for id in ids {
            if id.is_empty() {
                return Err(bad(format!("empty job id in '{group}'")));
            }
            let id = id
                .strip_prefix("jobid.")
                .or_else(|| id.strip_prefix("JOBID."))
                .unwrap_or(id);
            if let Some(name) = id
                .strip_prefix("jobname.")
                .or_else(|| id.strip_prefix("JOBNAME."))
            {
                if name.is_empty() {
                    return Err(bad("empty job name".to_string()));
                }
                named.push(Named {
                    kind,
                    target: format!("jobname.{name}"),
                });
            } else if id.contains('[') {
                named.push(Named {
                    kind,
                    target: id.to_string(),
                });
            } else {
                let job = parse_job_id(id)
                    .ok_or_else(|| bad(format!("'{id}' is not a job id or jobname.NAME")))?;
                deps.push(Dependency { kind, job });
            }
        }
    }
    Ok((deps, named))
}

/// Resolves named dependencies for `user`'s job; every numbered one must
/// name a job, an array or a sub-job the state knows.
pub fn resolve(
    state: &State,
    user: &str,
    deps: &[Dependency],
    named: &[Named],
) -> Result<Vec<Dependency>, SubmitError> {
    let mut out = Vec::new();
    for d in deps {
        let known = state.job(d.job).is_some()
            || state.array(d.job).is_some()
            || state.array_of(d.job).is_some();
        if !known {
            return Err(SubmitError(format!(
                "cannot locate dependency job '{}' ({}:{})",
                d.job,
                d.kind.as_str(),
                d.job
            )));
        }
        out.push(*d);
    }
    for n in named {
        let missing = || {
            SubmitError(format!(
                "cannot locate dependency job '{}' ({}:{})",
                n.target,
                n.kind.as_str(),
                n.target
            ))
        };
        if let Some(name) = n.target.strip_prefix("jobname.") {
            let mut ids: Vec<JobId> = state
                .jobs()
                .filter(|j| j.cred.user == user && j.name == name)
                .filter(|j| state.array_of(j.id).is_none())
                .map(|j| j.id)
                .collect();
            ids.extend(
                state
                    .arrays()
                    .filter(|a| a.template.cred.user == user && a.template.name == name)
                    .map(|a| a.id),
            );
            if ids.is_empty() {
                return Err(missing());
            }
            out.extend(ids.into_iter().map(|job| Dependency { kind: n.kind, job }));
            continue;
        }
        use crate::arrays::Target;
        let job = match crate::arrays::resolve(state, &n.target) {
            Some(Target::Array(a)) => a,
            Some(Target::Job(id)) => id,
            Some(Target::Pending(a, pos)) => state
                .array(a)
                .map(|a| a.element_id(pos))
                .ok_or_else(missing)?,
            None => return Err(missing()),
        };
        out.push(Dependency { kind: n.kind, job });
    }
    Ok(out)
}

/// The jobs a `before` dependency changes must be queued and `user`'s:
/// `(target, the after-dependency it gets)`
/// ([`arches_core::eligibility::before_targets`]).
pub fn befores(
    state: &State,
    user: &str,
    deps: &[Dependency],
) -> Result<Vec<(JobId, DependencyKind)>, SubmitError> {
    arches_core::eligibility::before_targets(state, user, deps).map_err(SubmitError)
}

#[cfg(test)]
mod tests {
    use super::*;
    use arches_core::{Event, Job, Node, Request};

    #[test]
    fn moab_forms_parse() {
        let (d, n) = parse("afterok:Moab.4:5,before:6").unwrap();
        assert_eq!(
            d,
            [
                Dependency {
                    kind: DependencyKind::AfterOk,
                    job: 4
                },
                Dependency {
                    kind: DependencyKind::AfterOk,
                    job: 5
                },
                Dependency {
                    kind: DependencyKind::Before,
                    job: 6
                }
            ]
        );
        assert!(n.is_empty());
        // No type: afterok.
        let (d, _) = parse("12").unwrap();
        assert_eq!(d[0].kind, DependencyKind::AfterOk);
        let (d, n) = parse("afterany:jobname.prep:jobid.7,afterokarray:3[]").unwrap();
        assert_eq!(
            d,
            [Dependency {
                kind: DependencyKind::AfterAny,
                job: 7
            }]
        );
        assert_eq!(
            n,
            [
                Named {
                    kind: DependencyKind::AfterAny,
                    target: "jobname.prep".into()
                },
                Named {
                    kind: DependencyKind::AfterOkArray,
                    target: "3[]".into()
                }
            ]
        );
        for bad in [
            "",
            "afterok",
            "afterok:",
            "afterok:x",
            "synccount:2",
            "on:1",
            "a,,b",
        ] {
            assert!(parse(bad).is_err(), "{bad}");
        }
        for sync in ["syncwith:4", "synccount:2"] {
            let e = parse(sync).unwrap_err().0;
            assert!(e.contains("is not supported (synchronized job sets"), "{e}");
        }
    }

    #[test]
    fn names_and_arrays_resolve_against_the_state() {
        let mut s = State::new(vec![Node::new("n1", 4, 0)]);
        let mut j = Job::new(1, "u", Request::procs(1), Some(60), 0);
        j.name = "prep".into();
        s.apply(Event::submit(j), 0).unwrap();
        let t = Job::new(0, "u", Request::procs(1), Some(60), 0);
        let a = arches_core::ArrayJob::new(5, t, arches_core::Indices::parse("1-3").unwrap(), None);
        s.apply(Event::SubmitArray(Box::new(a)), 0).unwrap();
        let (d, n) = parse("afterok:jobname.prep:5[2]:5[]").unwrap();
        let r = resolve(&s, "u", &d, &n).unwrap();
        let jobs: Vec<JobId> = r.iter().map(|d| d.job).collect();
        assert_eq!(jobs, [1, 7, 5]);
        let (d, n) = parse("jobname.nothing").unwrap();
        assert!(resolve(&s, "u", &d, &n).is_err());
        let (d, n) = parse("afterok:jobname.prep").unwrap();
        assert!(
            resolve(&s, "other", &d, &n).is_err(),
            "another user's job names"
        );
        let (d, n) = parse("99").unwrap();
        assert!(resolve(&s, "u", &d, &n).unwrap_err().0.contains("'99'"));
        let (d, _) = parse("beforeok:1").unwrap();
        assert_eq!(
            befores(&s, "u", &d).unwrap(),
            [(1, DependencyKind::AfterOk)]
        );
        assert!(befores(&s, "v", &d).is_err());
    }
}
