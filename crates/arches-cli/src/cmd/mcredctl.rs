//! mcredctl: credential queries. `-q config TYPE[:NAME]` prints what
//! `mdiag -u/-g/-a/-c/-q` prints (Moab answers it with the same
//! functions); `-q accessfrom TYPE:NAME` lists what a credential gives
//! access to, as Moab's `<Data><user ID= AList= QList= CList=/></Data>`
//! (GeBR reads it). `-m config="ATTR=VALUE ..." TYPE:NAME` changes a
//! credential's configuration in the running daemon (administrators only,
//! not written to moab.cfg, as Moab's `MSysReconfigure` without modifying
//! the master file); `-l TYPE` lists the credentials of a type as XML;
//! `-q limit TYPE[:NAME]` shows the active limits and usage as Moab's
//! `MLimitToXML`, `-q policies` every limit as Moab's `<policies>` tree
//! (text: the client's `MDisplayCredLimits`); `-q role`, `-q accessto`;
//! `-r stats|fairshare|all` resets one credential's statistics or
//! fairshare usage. The other queries and options (`-q profile`, `-d`,
//! `-h`) need models Arches does not have and are refused by name with
//! the reason.

use arches_api::{CredentialInfo, CredentialsView};
use clap::{ArgAction, ArgGroup, Parser};

use crate::common::{print, print_json, Connection, Format, Output};
use crate::render::creds;
use crate::render::xml::Element;
use crate::EXIT_OK;

/// Query credentials.
#[derive(Debug, Parser)]
#[command(
    disable_help_flag = true,
    name = "mcredctl",
    about = "Query credentials (users, groups, accounts, classes, QoS)",
    long_about = "-q config TYPE[:NAME] shows the credentials' configuration and usage as mdiag -u/-g/-a/-c/-q \
do (TYPE: user, group, acct, class, qos). -q accessfrom TYPE[:NAME] shows what each credential gives access \
to, as Moab's XML (AList: accounts, QList: QoS, CList: classes; --format=xml, also the default): Arches \
keeps no account or class access lists, so a user may use every configured account and class, and the QoS \
of its QLIST (every QoS without one). -m config=\"ATTR=VALUE ...\" TYPE:NAME (or -m ATTR=VALUE TYPE:NAME) \
changes a known credential's configuration in the running daemon, as the line USERCFG[NAME] ATTR=VALUE ... \
(GROUPCFG, ACCOUNTCFG, CLASSCFG, QOSCFG) would: administrators only, checked like moab.cfg, not written to \
moab.cfg (lost at restart, as Moab's mcredctl -m). -l TYPE lists the credentials of a type as XML (what \
mdiag -u --format=xml shows). -q limit TYPE[:NAME] shows each credential's active limits and usage as \
Moab's XML (<Data><user ID=..><limits .../></user></Data>, in either format): UJobs, UNodes, UProcs, UPS \
(processor-seconds left of the active jobs), HLAJobs/SLAJobs (MAXJOB hard/soft), HLANodes/SLANodes \
(MAXNODE), HLAProcs/SLAProcs (MAXPROC), each when positive. -q policies [TYPE[:NAME]] shows every \
credential limit as Moab's client does (partition ALL, then USERCFG[NAME], GROUPCFG, ACCOUNTCFG, CLASSCFG \
with MAX.NODE/MAX.PROC/MAX.WCLIMIT/MIN.PROC, QOSCFG, each limit as MAXJOB=SOFT[,HARD][ Usage=N]; \
--format=xml: Moab's <policies> tree); open to every user, as in Moab. -q role user:NAME (or user:ALL, \
every known user) shows Moab's roles as <Data><user ID=.. role=\"admin1,admin5\"/></Data> (in either \
format): adminN for each ADMINCFG[N] (1-4) whose USERS names the user or holds ALL (root and the daemon's \
user are level 1), admin5 for everybody. -r stats|fairshare|all TYPE[:NAME] resets a credential's \
statistics (showstats, its profile history) and/or fairshare usage (users and accounts; Moab resets \
fairshare for no other type and says so), or every credential of the type without a name or with ALL: \
administrators only, one INFO line per credential as Moab prints them. -q accessto TYPE[:NAME] shows who may use each credential, \
the inverse of accessfrom (UList, GList, AList, CList, QList; a group's UList is the users whose Unix \
groups include it). Without a name the access queries leave DEFAULT out, as Moab does. -q \
profile, -m profile, hold, message, credits and trigger, and -d, -h, -r are not supported and say why.",
    group(ArgGroup::new("op").required(true).args(["query", "destroy", "hold", "list", "modify", "reset"]))
)]
pub struct Mcredctl {
    /// Print help.
    #[arg(long, action = ArgAction::Help)]
    pub help: Option<bool>,
    /// Query: config, accessfrom, accessto, limit, policies or role (profile: not supported).
    #[arg(short = 'q', value_name = "ATTR")]
    pub query: Option<String>,
    /// Destroy a credential: not supported (credentials are moab.cfg's).
    #[arg(short = 'd', value_name = "TYPE:NAME")]
    pub destroy: Option<String>,
    /// Hold a credential's jobs: not supported.
    #[arg(short = 'h', value_name = "TYPE:NAME")]
    pub hold: Option<String>,
    /// List the credentials of a type (user, group, acct, class, qos) as XML.
    #[arg(short = 'l', value_name = "TYPE")]
    pub list: Option<String>,
    /// Modify a credential's configuration: config="ATTR=VALUE ..." (or ATTR=VALUE); administrators only.
    #[arg(short = 'm', value_name = "ATTR=VALUE")]
    pub modify: Option<String>,
    /// Reset a credential's statistics or fairshare usage: stats, fairshare or all (credits: not
    /// supported); TYPE:NAME, or TYPE (TYPE:ALL) for every one of the type. Administrators only.
    #[arg(short = 'r', value_name = "WHAT")]
    pub reset: Option<String>,
    /// The credential: TYPE or TYPE:NAME.
    #[arg(value_name = "TYPE[:NAME]")]
    pub object: Option<String>,
    #[command(flatten)]
    pub output: Output,
    #[command(flatten)]
    pub conn: Connection,
}

/// `user`, `group`, `acct`/`account`, `class`, `qos` → the API's kind.
fn kind_of(t: &str) -> Option<&'static str> {
    Some(match t.to_ascii_lowercase().as_str() {
        "user" => "user",
        "group" => "group",
        "acct" | "account" => "account",
        "class" | "queue" => "class",
        "qos" => "qos",
        _ => return None,
    })
}

/// Moab's element name of a kind (`MXO`).
fn element_of(kind: &str) -> &'static str {
    match kind {
        "user" => "user",
        "group" => "group",
        "account" => "acct",
        "class" => "class",
        _ => "qos",
    }
}

/// `TYPE[:NAME]` → (kind, name).
pub fn parse_object(o: &str) -> Result<(&'static str, Option<String>), String> {
    let (t, n) = match o.split_once(':') {
        Some((t, n)) => (t, Some(n.to_string()).filter(|n| !n.is_empty())),
        None => (o, None),
    };
    let kind = kind_of(t).ok_or_else(|| {
        format!("ERROR:    invalid credential type '{t}' (user, group, acct, class or qos)")
    })?;
    Ok((kind, n))
}

fn names(v: &CredentialsView, kind: &str) -> Vec<String> {
    let mut n: Vec<String> = v
        .credentials
        .iter()
        .filter(|c| c.kind == kind && c.name != "DEFAULT")
        .map(|c| c.name.clone())
        .collect();
    n.sort();
    n
}

/// What credential `c` gives access to: `(AList, QList, CList)`.
pub fn access_from(
    v: &CredentialsView,
    c: &CredentialInfo,
) -> (Vec<String>, Vec<String>, Vec<String>) {
    let user = c.kind == "user";
    let accounts = if user {
        names(v, "account")
    } else {
        Vec::new()
    };
    let qos = match c.kind.as_str() {
        "qos" => Vec::new(),
        _ if c.qlist.is_empty() => names(v, "qos"),
        _ => {
            let mut q = c.qlist.clone();
            q.sort();
            q.dedup();
            q
        }
    };
    let classes = if user { names(v, "class") } else { Vec::new() };
    (accounts, qos, classes)
}

/// `<Data><user ID=".." AList=".." QList=".." CList=".."/>...</Data>`
/// (empty lists are left out, as Moab does).
pub fn render_access_xml(v: &CredentialsView, shown: &[&CredentialInfo]) -> String {
    let mut data = Element::new("Data");
    for c in shown {
        let (a, q, cl) = access_from(v, c);
        let mut e = Element::new(element_of(&c.kind)).attr("ID", &c.name);
        for (attr, list) in [("AList", a), ("QList", q), ("CList", cl)] {
            if !list.is_empty() {
                e = e.attr(attr, list.join(","));
            }
        }
        data.push(e);
    }
    data.render()
}

/// `-q limit`: Moab's `MLimitToXML` attributes of a credential, in the
/// order of `__MUICredCtlQuery`'s list (the writer sorts them): active
/// usage (`UJobs`, `UNodes`, `UProcs`, `UPS`), hard (`HLA*`) and soft
/// (`SLA*`) active limits; a value is written only when positive. Arches
/// has no MAXPS, MAXIJOB or MAXINODE, so `HLAPS`/`SLAPS`/`*LI*` never
/// appear; MAXWC is not one of the attributes Moab lists here.
pub fn limit_element(c: &CredentialInfo) -> Element {
    let limit = |name: &str| c.limits.iter().find(|(n, _, _)| n == name);
    let mut e = Element::new("limits");
    let mut set = |key: &str, v: u64| {
        if v > 0 {
            e = std::mem::take(&mut e).attr(key, v);
        }
    };
    set("UJobs", u64::from(c.active_jobs));
    set("UNodes", u64::from(c.active_nodes));
    set("UProcs", u64::from(c.active_procs));
    set("UPS", c.active_ps);
    for (limit_name, suffix) in [
        ("MAXJOB", "Jobs"),
        ("MAXNODE", "Nodes"),
        ("MAXPROC", "Procs"),
    ] {
        if let Some((_, soft, hard)) = limit(limit_name) {
            set(&format!("HLA{suffix}"), *hard);
            set(&format!("SLA{suffix}"), *soft);
        }
    }
    e
}

/// `<Data><user ID=".."><limits .../></user>...</Data>`.
pub fn render_limit_xml(shown: &[&CredentialInfo]) -> String {
    let mut data = Element::new("Data");
    for c in shown {
        data.push(
            Element::new(element_of(&c.kind))
                .attr("ID", &c.name)
                .child(limit_element(c)),
        );
    }
    data.render()
}

/// The credential types of `-q policies`, in the order Moab's
/// `__MUIGetLimitsXMLMString` adds them, with the attribute naming each
/// and its moab.cfg parameter (the client's labels).
const POLICY_KINDS: [(&str, &str, &str); 5] = [
    ("class", "NAME", "CLASSCFG"),
    ("qos", "QOS", "QOSCFG"),
    ("user", "User", "USERCFG"),
    ("group", "Group", "GROUPCFG"),
    ("account", "Account", "ACCOUNTCFG"),
];

/// `-q policies`: Moab's `<policies>` tree. Arches's limits are not
/// per partition, so they all sit in partition `ALL`; a credential appears
/// when it has a per-job limit (attributes) or an active-policy limit
/// (`<limits NAME= SLIMIT= [HLIMIT=] [USAGE=]/>` children, in Moab's
/// policy order MAXJOB, MAXNODE, MAXPROC, MAXWC), the partition when a
/// credential does.
pub fn policies_element(v: &CredentialsView) -> Element {
    let mut par = Element::new("par").attr("ID", "ALL");
    let mut any = false;
    for (kind, id, _) in POLICY_KINDS {
        let mut creds: Vec<&CredentialInfo> =
            v.credentials.iter().filter(|c| c.kind == kind).collect();
        creds.sort_by(|a, b| a.name.cmp(&b.name));
        for c in creds {
            let mut e = Element::new(element_of(kind)).attr(id, &c.name);
            let mut shown = false;
            for (k, n) in &c.job_limits {
                if *n > 0 {
                    e = e.attr(k, n);
                    shown = true;
                }
            }
            for (name, usage) in [
                ("MAXJOB", u64::from(c.active_jobs)),
                ("MAXNODE", u64::from(c.active_nodes)),
                ("MAXPROC", u64::from(c.active_procs)),
                ("MAXWC", c.active_wc),
            ] {
                let Some((_, soft, hard)) = c.limits.iter().find(|(n, _, _)| n == name) else {
                    continue;
                };
                let mut l = Element::new("limits")
                    .attr("NAME", name)
                    .attr("SLIMIT", soft);
                if soft != hard {
                    l = l.attr("HLIMIT", hard);
                }
                if usage != 0 {
                    l = l.attr("USAGE", usage);
                }
                e.push(l);
                shown = true;
            }
            if shown {
                par.push(e);
                any = true;
            }
        }
    }
    let policies = Element::new("policies");
    if any {
        policies.child(par)
    } else {
        policies
    }
}

/// Moab's client text of `-q policies` (`MDisplayCredLimits`): per
/// partition its name, then per credential (users, groups, accounts,
/// classes, QoS) `  USERCFG[NAME]` with its per-job limits, and each
/// limit on its own line as `      MAXJOB=SOFT[,HARD][ Usage=N]`.
pub fn render_policies_text(v: &CredentialsView) -> String {
    let policies = policies_element(v);
    let mut out = String::from("\n");
    let Some(par) = policies.children().first() else {
        return out + "\n\n";
    };
    out.push_str("\npartition limits\n-----------------");
    out.push_str(&format!("\n{}\n", par.attribute("ID").unwrap_or_default()));
    let mut first = true;
    for kind in ["user", "group", "account", "class", "qos"] {
        let (_, id, cfg) = POLICY_KINDS
            .iter()
            .find(|k| k.0 == kind)
            .copied()
            .unwrap_or_default();
        for c in par
            .children()
            .iter()
            .filter(|c| c.name() == element_of(kind))
        {
            out.push_str(&format!(
                "{}  {cfg}[{}]",
                if first { "" } else { "\n" },
                c.attribute(id).unwrap_or_default()
            ));
            first = false;
            for (k, val) in c.attributes() {
                if k != id {
                    out.push_str(&format!(" {k}={val}"));
                }
            }
            for l in c.children() {
                out.push_str(&format!(
                    "\n      {}={}",
                    l.attribute("NAME").unwrap_or_default(),
                    l.attribute("SLIMIT").unwrap_or_default()
                ));
                if let Some(h) = l.attribute("HLIMIT") {
                    out.push_str(&format!(",{h}"));
                }
                if let Some(u) = l.attribute("USAGE") {
                    out.push_str(&format!(" Usage={u}"));
                }
            }
        }
    }
    out + "\n\n"
}

/// A user's roles as Moab's `MSysGetAuth` gives them: `adminN` for each
/// of `ADMINCFG[1]`..`[4]` whose user list names it (case-insensitively)
/// or holds `ALL`, and `admin5`, which every user has.
pub fn roles_of(v: &CredentialsView, user: &str) -> String {
    let mut roles: Vec<String> = v
        .admin_users
        .iter()
        .take(4)
        .enumerate()
        .filter(|(_, users)| {
            users
                .iter()
                .any(|u| u.eq_ignore_ascii_case(user) || u.eq_ignore_ascii_case("ALL"))
        })
        .map(|(i, _)| format!("admin{}", i + 1))
        .collect();
    roles.push("admin5".into());
    roles.join(",")
}

/// `-q role user:NAME` (or `user:ALL`): `<Data><user ID=".." role=".."/></Data>`,
/// as Moab's `__MUICredCtlQuery` writes it (the name is taken as a user
/// name whatever the type; `ALL` is every known user; no name, no element).
pub fn render_role_xml(v: &CredentialsView, name: Option<&str>) -> String {
    let mut data = Element::new("Data");
    let users: Vec<String> = match name {
        None => Vec::new(),
        Some("ALL") => names(v, "user"),
        Some(n) => vec![n.to_string()],
    };
    for u in users {
        data.push(
            Element::new("user")
                .attr("ID", &u)
                .attr("role", roles_of(v, &u)),
        );
    }
    data.render()
}

/// `-q accessto`: who may use each credential shown, the inverse of
/// [`access_from`] (Moab's `MUIOShowAccess` with `ShowAccessTo`): every
/// other known credential (not `DEFAULT`) whose account, QoS or class list
/// names it, as `UList`, `GList`, `AList`, `CList`, `QList` (sorted, comma
/// separated, empty lists left out). Nothing grants access to a user; a
/// group is accessed by its members (the users whose Unix groups include it).
pub fn render_accessto_xml(v: &CredentialsView, shown: &[&CredentialInfo]) -> String {
    let mut data = Element::new("Data");
    for t in shown {
        let mut e = Element::new(element_of(&t.kind)).attr("ID", &t.name);
        for (kind, attr) in [
            ("user", "UList"),
            ("group", "GList"),
            ("account", "AList"),
            ("class", "CList"),
            ("qos", "QList"),
        ] {
            if kind == t.kind {
                continue;
            }
            // A group is accessed by its members: the users whose Unix
            // groups include it (Moab reads the same lists).
            if t.kind == "group" {
                if kind == "user" {
                    let mut who: Vec<&str> = v
                        .credentials
                        .iter()
                        .filter(|c| c.kind == "user" && c.name != "DEFAULT")
                        .filter(|c| c.unix_groups.contains(&t.name))
                        .map(|c| c.name.as_str())
                        .collect();
                    who.sort_unstable();
                    who.dedup();
                    if !who.is_empty() {
                        e = e.attr(attr, who.join(","));
                    }
                }
                continue;
            }
            let mut who: Vec<&str> = v
                .credentials
                .iter()
                .filter(|c| c.kind == kind && c.name != "DEFAULT")
                .filter(|c| {
                    let (a, q, cl) = access_from(v, c);
                    let list = match t.kind.as_str() {
                        "account" => a,
                        "qos" => q,
                        "class" => cl,
                        _ => Vec::new(),
                    };
                    list.contains(&t.name)
                })
                .map(|c| c.name.as_str())
                .collect();
            who.sort_unstable();
            who.dedup();
            if !who.is_empty() {
                e = e.attr(attr, who.join(","));
            }
        }
        data.push(e);
    }
    data.render()
}

/// Runs mcredctl.
pub fn exec(a: Mcredctl) -> Result<u8, String> {
    for (given, what) in [
        (
            a.destroy.is_some(),
            "destroying credentials (-d): they are moab.cfg's",
        ),
        (
            a.hold.is_some(),
            "credential holds (-h): hold the jobs with mjobctl -h -w user=NAME",
        ),
    ] {
        if given {
            return Err(format!("ERROR:    {what} not supported by Arches"));
        }
    }
    if let Some(t) = &a.list {
        return list(&a, t);
    }
    if let Some(r) = &a.reset {
        return reset(&a, r);
    }
    if let Some(m) = &a.modify {
        return modify(&a, m);
    }
    let q = a.query.clone().unwrap_or_default().to_ascii_lowercase();
    if q == "policies" {
        return policies(&a);
    }
    if q == "role" {
        let name = match a.object.as_deref() {
            Some(o) => parse_object(o)?.1,
            None => None,
        };
        let client = a.conn.client().map_err(|e| e.to_string())?;
        let v = client.credentials().map_err(|e| e.to_string())?;
        // Not an administrator: only one's own roles (Moab's
        // authorization check refuses the others).
        if let Some(me) = &v.viewer {
            if name.as_ref().is_some_and(|n| n != me) {
                return Err(format!(
                    "ERROR:    user '{me}' is not authorized to run command"
                ));
            }
        }
        match a.output.format() {
            Format::Json => print_json(&v)?,
            _ => print(&format!("{}\n", render_role_xml(&v, name.as_deref()))),
        }
        return Ok(EXIT_OK);
    }
    if !matches!(q.as_str(), "config" | "accessfrom" | "accessto" | "limit") {
        return Err(if q == "profile" {
            format!("ERROR:    'mcredctl -q {q}' is not supported by Arches: use showstats -u/-g/-a/-c/-q -t TIMESPEC, which reads the same statistics profile (config, accessfrom, accessto, limit, policies and role are)")
        } else {
            format!("ERROR:    invalid query '{q}' (config, accessfrom, role, limit, profile, accessto or policies)")
        });
    }
    let Some(obj) = a.object.as_deref() else {
        return Err("ERROR:    no credential specified (TYPE[:NAME])".into());
    };
    let (kind, name) = parse_object(obj)?;
    let client = a.conn.client().map_err(|e| e.to_string())?;
    let mut v = client.credentials().map_err(|e| e.to_string())?;
    if let Some(n) = &name {
        let known = v.credentials.iter().any(|c| c.kind == kind && &c.name == n);
        let historical = v.historical.iter().any(|(k, h)| k == kind && h == n);
        if !known && !historical {
            return Err(format!(
                "ERROR:    cannot locate {} '{n}'",
                element_of(kind)
            ));
        }
        if !known {
            v.credentials.push(CredentialInfo {
                kind: kind.to_string(),
                name: n.clone(),
                ..Default::default()
            });
        }
    }
    let mut shown: Vec<&CredentialInfo> = v
        .credentials
        .iter()
        .filter(|c| c.kind == kind && name.as_ref().is_none_or(|n| n == &c.name))
        .collect();
    shown.sort_by(|a, b| a.name.cmp(&b.name));
    // Moab's access listings of a whole type leave DEFAULT out (its limit
    // listing keeps it).
    if name.is_none() && q.starts_with("access") {
        shown.retain(|c| c.name != "DEFAULT");
    }
    match (q.as_str(), a.output.format()) {
        (_, Format::Json) => {
            let mut j = v.clone();
            j.credentials
                .retain(|c| c.kind == kind && name.as_ref().is_none_or(|n| n == &c.name));
            print_json(&j)?
        }
        ("config", Format::Xml) => print(&format!(
            "{}\n",
            creds::render_xml(&v.credentials, kind, name.as_deref())
        )),
        ("config", Format::Text) => print(&creds::render_credentials(
            &v.credentials,
            kind,
            name.as_deref(),
        )),
        // limit and accessfrom are Moab's XML in either format.
        ("limit", _) => print(&format!("{}\n", render_limit_xml(&shown))),
        ("accessto", _) => print(&format!("{}\n", render_accessto_xml(&v, &shown))),
        _ => print(&format!("{}\n", render_access_xml(&v, &shown))),
    }
    Ok(EXIT_OK)
}

/// `-q policies [TYPE[:NAME]]`: every credential limit (Moab answers the
/// whole tree whatever credential is named; a named one must exist). Open
/// to every user, as Moab skips the authorization check for it.
fn policies(a: &Mcredctl) -> Result<u8, String> {
    let object = a.object.as_deref().map(parse_object).transpose()?;
    let client = a.conn.client().map_err(|e| e.to_string())?;
    let v = client.credentials().map_err(|e| e.to_string())?;
    if let Some((kind, Some(n))) = &object {
        let known = v
            .credentials
            .iter()
            .any(|c| c.kind == *kind && &c.name == n)
            || v.historical.iter().any(|(k, h)| k == kind && h == n);
        if !known {
            return Err(format!(
                "ERROR:    cannot locate {} '{n}'",
                element_of(kind)
            ));
        }
    }
    match a.output.format() {
        Format::Json => print_json(&v)?,
        Format::Xml => print(&format!(
            "{}\n",
            Element::new("Data").child(policies_element(&v)).render()
        )),
        Format::Text => print(&render_policies_text(&v)),
    }
    Ok(EXIT_OK)
}

/// `-l TYPE`: the credentials of a type, as mdiag's XML.
fn list(a: &Mcredctl, t: &str) -> Result<u8, String> {
    if a.object.is_some() {
        return Err("ERROR:    -l takes the credential type only (-l TYPE)".into());
    }
    let (kind, name) = parse_object(t)?;
    if name.is_some() {
        return Err("ERROR:    -l takes the credential type only (-l TYPE)".into());
    }
    let client = a.conn.client().map_err(|e| e.to_string())?;
    let v = client.credentials().map_err(|e| e.to_string())?;
    match a.output.format() {
        Format::Json => {
            let mut j = v.clone();
            j.credentials.retain(|c| c.kind == kind);
            print_json(&j)?
        }
        _ => print(&format!(
            "{}\n",
            creds::render_xml(&v.credentials, kind, None)
        )),
    }
    Ok(EXIT_OK)
}

/// What `-m NAME=VALUE` changes: Moab's set names, or a configuration
/// attribute (`-m PRIORITY=10` = `-m config="PRIORITY=10"`).
pub fn modify_attributes(m: &str) -> Result<String, String> {
    let (set, value) = m
        .split_once('=')
        .ok_or_else(|| format!("ERROR:    invalid modification '{m}' (expected ATTR=VALUE)"))?;
    let value = value.trim().trim_matches('"').trim();
    match set.trim().to_ascii_lowercase().as_str() {
        "config" if value.is_empty() => {
            Err("ERROR:    no configuration specified (config=\"ATTR=VALUE ...\")".into())
        }
        "config" => Ok(value.to_string()),
        "profile" => Err("ERROR:    'profile' not supported by Arches: statistics profiles are kept for every credential (PROFILEDURATION, PROFILECOUNT)".into()),
        "hold" => Err("ERROR:    'hold' not supported by Arches: hold the credential's jobs with mjobctl -h -w TYPE=NAME".into()),
        "message" => Err("ERROR:    'message' not supported by Arches: credentials carry no messages".into()),
        "credits" => Err("ERROR:    'credits' not supported by Arches: there is no allocation manager".into()),
        "trigger" => Err("ERROR:    'trigger' not supported by Arches: credentials have no triggers".into()),
        "" => Err(format!("ERROR:    invalid modification '{m}' (expected ATTR=VALUE)")),
        _ => Ok(m.trim().to_string()),
    }
}

/// `-r stats|fairshare|all TYPE[:NAME]`: resets one credential's (or every
/// one of a type's) statistics and/or fairshare usage; administrators only
/// (the daemon checks). `credits` needs an allocation manager.
fn reset(a: &Mcredctl, what: &str) -> Result<u8, String> {
    let w = what.to_ascii_lowercase();
    if w == "credits" {
        return Err("ERROR:    'mcredctl -r credits' is not supported by Arches: there is no allocation manager".into());
    }
    if !["stats", "stat", "statistics", "fairshare", "all"].contains(&w.as_str()) {
        return Err(format!(
            "ERROR:    invalid reset '{what}' (stats, fairshare or all)"
        ));
    }
    let Some(obj) = a.object.as_deref() else {
        return Err("ERROR:    no credential specified (TYPE[:NAME])".into());
    };
    let (kind, name) = parse_object(obj)?;
    let client = a.conn.client().map_err(|e| e.to_string())?;
    if let Some(n) = name.as_ref().filter(|n| *n != "ALL") {
        let v = client.credentials().map_err(|e| e.to_string())?;
        let known = v.credentials.iter().any(|c| c.kind == kind && &c.name == n)
            || v.historical.iter().any(|(k, h)| k == kind && h == n);
        if !known {
            return Err(format!(
                "ERROR:    cannot locate {} '{n}'",
                element_of(kind)
            ));
        }
    }
    let r = client
        .scheduler_control(&arches_api::SchedulerControl::CredentialReset {
            what: w,
            kind: kind.to_string(),
            name,
        })
        .map_err(|e| e.to_string())?;
    Ok(crate::common::print_action(&r))
}

/// `-m NAME=VALUE TYPE:NAME`.
fn modify(a: &Mcredctl, m: &str) -> Result<u8, String> {
    let attributes = modify_attributes(m)?;
    let Some(obj) = a.object.as_deref() else {
        return Err("ERROR:    no credential specified (TYPE:NAME)".into());
    };
    let (kind, name) = parse_object(obj)?;
    let Some(name) = name else {
        return Err(format!(
            "ERROR:    no {} name specified (TYPE:NAME)",
            element_of(kind)
        ));
    };
    let client = a.conn.client().map_err(|e| e.to_string())?;
    let v = client.credentials().map_err(|e| e.to_string())?;
    let known = v
        .credentials
        .iter()
        .any(|c| c.kind == kind && c.name == name)
        || v.historical.iter().any(|(k, h)| k == kind && *h == name);
    if !known {
        return Err(format!(
            "ERROR:    cannot locate {} '{name}'",
            element_of(kind)
        ));
    }
    let r = client
        .scheduler_control(&arches_api::SchedulerControl::CredentialConfig {
            kind: kind.to_string(),
            name,
            attributes,
        })
        .map_err(|e| e.to_string())?;
    Ok(crate::common::print_action(&r))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cred(kind: &str, name: &str, qlist: &[&str]) -> CredentialInfo {
        CredentialInfo {
            kind: kind.into(),
            name: name.into(),
            qlist: qlist.iter().map(|s| s.to_string()).collect(),
            ..Default::default()
        }
    }

    /// `-q limit`: usage and the hard/soft active limits, zeros left out,
    /// attributes in Moab's (ASCII) order; MAXWC is not listed.
    #[test]
    fn limit_xml() {
        let mut alice = cred("user", "alice", &[]);
        alice.limits = vec![
            ("MAXJOB".into(), 4, 6),
            ("MAXPROC".into(), 16, 16),
            ("MAXWC".into(), 3600, 3600),
        ];
        alice.active_jobs = 2;
        alice.active_procs = 8;
        alice.active_nodes = 1;
        alice.active_ps = 7200;
        let bob = cred("user", "bob", &[]);
        assert_eq!(
            render_limit_xml(&[&alice, &bob]),
            "<Data><user ID=\"alice\"><limits HLAJobs=\"6\" HLAProcs=\"16\" SLAJobs=\"4\" \
SLAProcs=\"16\" UJobs=\"2\" UNodes=\"1\" UPS=\"7200\" UProcs=\"8\"/></user>\
<user ID=\"bob\"><limits/></user></Data>"
        );
    }

    /// `-q policies`: Moab's tree and the client's text, whole.
    #[test]
    fn policies_xml_and_text() {
        let mut alice = cred("user", "alice", &[]);
        alice.limits = vec![("MAXJOB".into(), 3, 4), ("MAXWC".into(), 3600, 3600)];
        alice.active_jobs = 1;
        alice.active_wc = 600;
        let mut batch = cred("class", "batch", &[]);
        batch.job_limits = vec![("MAX.PROC".into(), 8), ("MAX.WCLIMIT".into(), 7200)];
        let mut high = cred("qos", "high", &[]);
        high.limits = vec![("MAXPROC".into(), 16, 16)];
        let v = CredentialsView {
            credentials: vec![alice, cred("user", "bob", &[]), batch, high],
            historical: vec![],
            admin_users: vec![],
            viewer: None,
        };
        assert_eq!(
            Element::new("Data").child(policies_element(&v)).render(),
            "<Data><policies><par ID=\"ALL\"><class MAX.PROC=\"8\" MAX.WCLIMIT=\"7200\" NAME=\"batch\"/>\
<qos QOS=\"high\"><limits NAME=\"MAXPROC\" SLIMIT=\"16\"/></qos>\
<user User=\"alice\"><limits HLIMIT=\"4\" NAME=\"MAXJOB\" SLIMIT=\"3\" USAGE=\"1\"/>\
<limits NAME=\"MAXWC\" SLIMIT=\"3600\" USAGE=\"600\"/></user></par></policies></Data>"
        );
        assert_eq!(
            render_policies_text(&v),
            "\n\npartition limits\n-----------------\nALL\n  USERCFG[alice]\n      MAXJOB=3,4 Usage=1\n      \
MAXWC=3600 Usage=600\n  CLASSCFG[batch] MAX.PROC=8 MAX.WCLIMIT=7200\n  QOSCFG[high]\n      MAXPROC=16\n\n"
        );
        let none = CredentialsView {
            credentials: vec![cred("user", "bob", &[])],
            historical: vec![],
            admin_users: vec![],
            viewer: None,
        };
        assert_eq!(
            Element::new("Data").child(policies_element(&none)).render(),
            "<Data><policies/></Data>"
        );
        assert_eq!(render_policies_text(&none), "\n\n\n");
    }

    /// `-q role`: MSysGetAuth's levels, admin5 for everybody.
    #[test]
    fn role_xml() {
        let v = CredentialsView {
            credentials: vec![cred("user", "ann", &[]), cred("user", "bob", &[])],
            historical: vec![],
            admin_users: vec![
                vec!["root".into(), "Ann".into()],
                vec![],
                vec!["ann".into()],
                vec![],
            ],
            viewer: None,
        };
        assert_eq!(
            render_role_xml(&v, Some("ann")),
            "<Data><user ID=\"ann\" role=\"admin1,admin3,admin5\"/></Data>"
        );
        assert_eq!(
            render_role_xml(&v, Some("ALL")),
            "<Data><user ID=\"ann\" role=\"admin1,admin3,admin5\"/>\
<user ID=\"bob\" role=\"admin5\"/></Data>"
        );
        assert_eq!(render_role_xml(&v, None), "<Data/>");
        let mut all = v.clone();
        all.admin_users[1] = vec!["ALL".into()];
        assert_eq!(
            render_role_xml(&all, Some("nobody")),
            "<Data><user ID=\"nobody\" role=\"admin2,admin5\"/></Data>"
        );
    }

    /// `-q accessto`: the inverse of accessfrom.
    #[test]
    fn accessto_lists() {
        let v = CredentialsView {
            credentials: vec![
                cred("user", "alice", &["high"]),
                cred("user", "bob", &[]),
                cred("group", "staff", &["normal"]),
                cred("account", "chem", &[]),
                cred("class", "batch", &[]),
                cred("qos", "high", &[]),
                cred("qos", "normal", &[]),
                cred("qos", "DEFAULT", &[]),
            ],
            historical: vec![],
            admin_users: vec![],
            viewer: None,
        };
        let shown = [
            &v.credentials[5],
            &v.credentials[6],
            &v.credentials[3],
            &v.credentials[4],
            &v.credentials[0],
        ];
        let mut members = v.clone();
        members.credentials[0].unix_groups = vec!["staff".into(), "wheel".into()];
        members.credentials[1].unix_groups = vec!["users".into()];
        assert_eq!(
            render_accessto_xml(&members, &[&members.credentials[2]]),
            "<Data><group ID=\"staff\" UList=\"alice\"/></Data>"
        );
        assert_eq!(
            render_accessto_xml(&v, &shown),
            "<Data><qos AList=\"chem\" CList=\"batch\" ID=\"high\" UList=\"alice,bob\"/>\
<qos AList=\"chem\" CList=\"batch\" GList=\"staff\" ID=\"normal\" UList=\"bob\"/>\
<acct ID=\"chem\" UList=\"alice,bob\"/><class ID=\"batch\" UList=\"alice,bob\"/>\
<user ID=\"alice\"/></Data>"
        );
    }

    #[test]
    fn access_lists() {
        let v = CredentialsView {
            credentials: vec![
                cred("user", "alice", &["high", "normal", "high"]),
                cred("user", "bob", &[]),
                cred("account", "chem", &[]),
                cred("account", "bio", &[]),
                cred("class", "batch", &[]),
                cred("qos", "high", &[]),
                cred("qos", "normal", &[]),
                cred("qos", "DEFAULT", &[]),
            ],
            historical: vec![],
            admin_users: vec![],
            viewer: None,
        };
        let shown = [&v.credentials[0], &v.credentials[1]];
        assert_eq!(
            render_access_xml(&v, &shown),
            // Attributes in name order, as Moab's XML writer puts them.
            "<Data><user AList=\"bio,chem\" CList=\"batch\" ID=\"alice\" QList=\"high,normal\"/>\
<user AList=\"bio,chem\" CList=\"batch\" ID=\"bob\" QList=\"high,normal\"/></Data>"
        );
        assert_eq!(
            parse_object("acct:chem").unwrap(),
            ("account", Some("chem".into()))
        );
        assert_eq!(parse_object("user").unwrap(), ("user", None));
        assert_eq!(
            modify_attributes("config=\"PRIORITY=10 MAXJOB=4\"").unwrap(),
            "PRIORITY=10 MAXJOB=4"
        );
        assert_eq!(modify_attributes("PRIORITY=10").unwrap(), "PRIORITY=10");
        for bad in ["hold=true", "profile=true", "config=", "nothing", "=3"] {
            assert!(modify_attributes(bad).is_err(), "{bad}");
        }
        assert!(parse_object("node:n1").is_err());
    }
}
