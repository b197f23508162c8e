//! `mdiag -u/-g/-a` (credentials), `mdiag -c` (classes) and `mdiag -q`
//! (QoS) in the Maui/Moab layouts of `data/moab-golden/mdiag-{u,a,c,q}-1.txt`.
//!
//! Decisions where the samples disagree or are silent (also in docs/formats.md):
//! - `mdiag -a`'s sample was edited by hand (its QOSList column is left
//!   aligned in some rows and not in others); accounts use the user/group
//!   layout (`MUserShow`'s `"%-12s %8ld %12s %12s %12s%c %20s %6.2f %7s"`),
//!   which the `-u` sample matches exactly.
//! - Limits print as `NAME=SOFT[,HARD]` (hard only when it differs); classes
//!   show the current usage first for the limits Arches counts
//!   (`MAXJOB=33:200,250`, Moab's "U:S[,H]"), as the `-c` sample does.
//! - The `[ALL]` pseudo-QoS row of the Maui sample is not printed; the
//!   `DEFAULT` QoS always is.

use arches_api::CredentialInfo;

/// `mdiag -u/-g/-a/-c/-q`: credentials of one kind (`name` restricts).
pub fn render_credentials(creds: &[CredentialInfo], kind: &str, name: Option<&str>) -> String {
    let shown: Vec<&CredentialInfo> = creds
        .iter()
        .filter(|c| c.kind == kind && name.is_none_or(|n| n == c.name))
        .collect();
    match kind {
        "class" => render_classes(&shown),
        "qos" => render_qos(&shown, creds),
        _ => render_users(&shown, kind),
    }
}

/// `NAME=SOFT[,HARD]` or, with `usage`, `NAME=USED:SOFT[,HARD]`.
fn limit_text(c: &CredentialInfo, usage: bool) -> String {
    c.limits
        .iter()
        .map(|(l, soft, hard)| {
            let used = match l.as_str() {
                "MAXJOB" if usage => Some(c.active_jobs),
                "MAXPROC" if usage => Some(c.active_procs),
                _ => None,
            };
            let mut t = format!("{l}=");
            if let Some(u) = used {
                t.push_str(&format!("{u}:"));
            }
            t.push_str(&soft.to_string());
            if hard != soft {
                t.push_str(&format!(",{hard}"));
            }
            t
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// A list joined by `,`, or `none` when empty.
fn list_or(v: &[String], none: &str) -> String {
    if v.is_empty() {
        none.to_string()
    } else {
        v.join(",")
    }
}

/// Partitions as Moab prints them: `[A][B]`.
fn partitions(v: &[String], none: &str) -> String {
    if v.is_empty() {
        none.to_string()
    } else {
        v.iter().map(|p| format!("[{p}]")).collect()
    }
}

/// `mdiag -u`, `-g`, `-a`.
fn render_users(creds: &[&CredentialInfo], kind: &str) -> String {
    let word = match kind {
        "account" => "acct",
        other => other,
    };
    let mut o = format!("evaluating {word} information\n");
    o.push_str(
        "Name         Priority        Flags         QDef      QOSList*        PartitionList Target  Limits\n\n",
    );
    const NONE: &str = "[NONE]";
    for c in creds {
        let limits = limit_text(c, false);
        o.push_str(&format!(
            "{:<12} {:>8} {:>12} {:>12} {:>12}{} {:>20} {:>6.2} {:>7}\n",
            c.name,
            c.priority,
            list_or(&c.flags, NONE),
            c.qdef.as_deref().unwrap_or(NONE),
            list_or(&c.qlist, NONE),
            ' ',
            partitions(&c.partitions, NONE),
            c.fs_target,
            if limits.is_empty() { NONE } else { &limits },
        ));
        attributes(&mut o, c);
    }
    o
}

/// The two-space-indented `ATTR=value` continuation line, if any.
fn attributes(o: &mut String, c: &CredentialInfo) {
    if c.attributes.is_empty() {
        return;
    }
    let parts: Vec<String> = c
        .attributes
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    o.push_str(&format!("  {}\n", parts.join("  ")));
}

/// `mdiag -c`.
fn render_classes(creds: &[&CredentialInfo]) -> String {
    let mut o = String::from("Class/Queue Status\n\n");
    o.push_str(
        "ClassID        Priority Flags        QDef              QOSList* PartitionList        Target Limits\n\n",
    );
    const NONE: &str = "---";
    for c in creds {
        let limits = limit_text(c, true);
        o.push_str(&format!(
            "{:<14} {:>8} {:<12} {:<12} {:>12}{} {:<20}{:>6.2}  {}\n",
            c.name,
            c.priority,
            list_or(&c.job_flags, NONE),
            c.qdef.as_deref().unwrap_or(NONE),
            list_or(&c.qlist, NONE),
            ' ',
            partitions(&c.partitions, NONE),
            c.fs_target,
            if limits.is_empty() { NONE } else { &limits },
        ));
        attributes(&mut o, c);
    }
    o
}

/// `mdiag -q`: QoS rows (Moab's `MQOSShow`: priority, the QoS's
/// `QTWEIGHT`, `QTTARGET` in seconds, `XFWEIGHT`, `XFTARGET`, QoS flags, job
/// flags, limits), each followed by the users, groups, accounts and classes
/// that may use it (its `QLIST`/`QDEF` members).
fn render_qos(creds: &[&CredentialInfo], all: &[CredentialInfo]) -> String {
    let names: Vec<&str> = all
        .iter()
        .filter(|c| c.kind == "qos")
        .map(|c| c.name.as_str())
        .collect();
    let mut o = String::from("QOS Status\n\n");
    o.push_str(&format!(
        "System QOS Settings:  QList: {} (Def: DEFAULT)  Flags: 0\n\n",
        names.join(",")
    ));
    o.push_str(
        "Name                * Priority QTWeight QTTarget XFWeight XFTarget     QFlags   JobFlags Limits\n\n",
    );
    const NONE: &str = "[NONE]";
    for q in creds {
        let limits = limit_text(q, false);
        // MQOSShow's "%-20s%c %8ld %8ld %8ld %8ld %8.2lf %10s %10s %s": the
        // character after the name is the QoS's own list marker, which a
        // QoS never has in Arches.
        o.push_str(&format!(
            "{:<20}{} {:>8} {:>8} {:>8} {:>8} {:>8.2} {:>10} {:>10} {}\n",
            q.name,
            ' ',
            q.priority,
            q.qt_weight,
            q.qt_target,
            q.xf_weight,
            q.xf_target,
            list_or(&q.flags, NONE),
            list_or(&q.job_flags, NONE),
            if limits.is_empty() { NONE } else { &limits },
        ));
        // The credentials whose QoS access list holds it (QLIST or QDEF),
        // each name followed by its list's marker (`&`, `^`).
        for (kind, label) in [
            ("user", "  Users:    "),
            ("group", "  Groups:   "),
            ("account", "  Accounts: "),
            ("class", "  Classes: "),
        ] {
            let members: String = all
                .iter()
                .filter(|c| {
                    c.kind == kind
                        && (c.qlist.contains(&q.name) || c.qdef.as_deref() == Some(q.name.as_str()))
                })
                .map(|c| format!(" {}{}", c.name, c.qlist_marker))
                .collect();
            if !members.is_empty() {
                o.push_str(&format!("{label}{members}\n"));
            }
        }
        for p in &q.preemption {
            o.push_str(&format!("  {p}\n"));
        }
    }
    o
}

/// `mdiag -u/-g/-a/-c/-q --xml`: one element per credential (`<user>`,
/// `<group>`, `<acct>`, `<class>`, `<qos>`) with `ID`, `PRIORITY`,
/// `FSTARGET`, `QDEF`, `QLIST`, `PLIST`, `FLAGS`, `JOBFLAGS`, a QoS's
/// `QTWEIGHT`/`QTTARGET`/`XFWEIGHT`/`XFTARGET`, each limit
/// (`MAXJOB="SOFT,HARD"`), and the active usage (`ACTIVEJOBS`,
/// `ACTIVEPROCS`); explicit end tags as in mdiag -n (docs/formats.md).
pub fn render_xml(creds: &[CredentialInfo], kind: &str, name: Option<&str>) -> String {
    use super::xml::Element;
    let tag = match kind {
        "account" => "acct",
        k => k,
    };
    let mut d = Element::new("Data");
    for c in creds
        .iter()
        .filter(|c| c.kind == kind && name.is_none_or(|n| n == c.name))
    {
        let mut e = Element::new(tag)
            .attr("ID", &c.name)
            .attr("PRIORITY", c.priority)
            .attr("ACTIVEJOBS", c.active_jobs)
            .attr("ACTIVEPROCS", c.active_procs)
            .attr_opt("QDEF", c.qdef.as_ref())
            .attr_opt("QLIST", (!c.qlist.is_empty()).then(|| c.qlist.join(",")))
            .attr_opt(
                "PLIST",
                (!c.partitions.is_empty()).then(|| c.partitions.join(",")),
            )
            .attr_opt("FLAGS", (!c.flags.is_empty()).then(|| c.flags.join(",")))
            .attr_opt(
                "JOBFLAGS",
                (!c.job_flags.is_empty()).then(|| c.job_flags.join(",")),
            )
            .attr_opt(
                "FSTARGET",
                (c.fs_target > 0.0).then(|| format!("{:.2}", c.fs_target)),
            );
        if kind == "qos" {
            e = e
                .attr("QTWEIGHT", c.qt_weight)
                .attr("QTTARGET", c.qt_target)
                .attr("XFWEIGHT", c.xf_weight)
                .attr("XFTARGET", format!("{:.2}", c.xf_target));
        }
        for (l, soft, hard) in &c.limits {
            e = e.attr(l, format!("{soft},{hard}"));
        }
        for (k, v) in &c.attributes {
            e = e.attr(k, v);
        }
        d.push(e.explicit_close());
    }
    d.render()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cred(kind: &str, name: &str) -> CredentialInfo {
        CredentialInfo {
            kind: kind.into(),
            name: name.into(),
            ..CredentialInfo::default()
        }
    }

    #[test]
    fn limits_show_hard_only_when_different_and_usage_for_classes() {
        let mut c = cred("class", "batch");
        c.limits = vec![("MAXJOB".into(), 200, 250), ("MAXNODE".into(), 4, 4)];
        c.active_jobs = 33;
        assert_eq!(limit_text(&c, true), "MAXJOB=33:200,250 MAXNODE=4");
        assert_eq!(limit_text(&c, false), "MAXJOB=200,250 MAXNODE=4");
    }

    #[test]
    fn qos_members_come_from_qlist_and_qdef() {
        let mut a = cred("account", "it");
        a.qlist = vec!["high".into()];
        let mut c = cred("class", "fast");
        c.qdef = Some("high".into());
        let q = cred("qos", "high");
        let all = vec![a, c, q];
        let out = render_credentials(&all, "qos", None);
        assert!(out.contains("  Accounts:  it\n  Classes:  fast\n"), "{out}");
        assert!(out.contains("QList: high (Def: DEFAULT)"), "{out}");
    }

    #[test]
    fn name_restricts_the_rows() {
        let all = vec![cred("user", "a"), cred("user", "b"), cred("group", "a")];
        let out = render_credentials(&all, "user", Some("b"));
        assert_eq!(out.lines().filter(|l| l.starts_with("b ")).count(), 1);
        assert!(!out.lines().any(|l| l.starts_with("a ")));
    }
}
