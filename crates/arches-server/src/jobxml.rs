//! Moab's job XML ("Submitting Jobs via msub in XML"): the form a submission
//! takes for a `SUBMITFILTER` and the form `msub` accepts as input.
//!
//! ```xml
//! <job>
//!   <Owner>alice</Owner><UserId>alice</UserId><GroupId>staff</GroupId>
//!   <InitialWorkingDirectory>/home/alice/run</InitialWorkingDirectory>
//!   <Executable>/home/alice/run/job.sh</Executable>
//!   <SubmitLanguage>PBS</SubmitLanguage>
//!   <SubmitString>\START\23!/bin/sh\0asleep\2060\0a</SubmitString>
//!   <JobName>job.sh</JobName>
//!   <Environment>A=1~rs;B=2~rs;</Environment>
//!   <RequestedResources>
//!     <Nodes>2:ppn=4</Nodes><WallclockDuration>3600</WallclockDuration>
//!     <Resource Name="pmem">1gb</Resource>
//!   </RequestedResources>
//!   <Extension>x=STAGEIN:file:///archive/in.dat,file:///scratch/</Extension>
//! </job>
//! ```
//!
//! - `SubmitString` is packed as Moab packs it (`MUStringPack`): `\START`,
//!   then every white-space, non-printable, `\`, `;`, `<`, `>`, `"` and `#`
//!   byte as `\` and two lower-case hexadecimal digits. Unpacked input is
//!   taken as it is.
//! - `Environment` is `NAME=VALUE` pairs each ended by `~rs;` (Moab's
//!   record separator).
//! - `RequestedResources` (also `Requested`) holds the `-l` resources in
//!   order: `WallclockDuration` (seconds), `Processors` (`procs=`), `Nodes`
//!   (the `nodes=` specification), `Memory` (`mem=`), `Feature`, and
//!   `<Resource Name="k">v</Resource>` for every other `k=v` (`gres=`,
//!   `naccesspolicy=`, `hostlist=`, `trl=`... as written).
//! - Each `Extension` is one `-W` attribute as written (`x=...`,
//!   `depend=...`).
//! - Moab elements: `Owner`, `UserId`, `GroupId`, `InitialWorkingDirectory`,
//!   `Executable`, `Arguments` (the script's arguments, each packed like
//!   `SubmitString`, separated by spaces; unpacked words taken as they
//!   are), `SubmitLanguage` (`PBS`), `SubmitString`,
//!   `JobName`, `Environment`, `EligibleTime` (`msub -a`), `Hold` (`User`),
//!   `Queue` (class), `ProjectId` (account), `OutputFile`, `ErrorFile`,
//!   `ShellName`, `NotificationList` (`URI=` the `-M` list, the text the
//!   events `JobStart`, `JobEnd`, `JobFail` or `None`), `SubmitHost`,
//!   `UMask` (`-W umask=`; decimal as Moab writes it, octal with a leading 0), `IsInteractive` (written for
//!   `msub -I` jobs; true is refused unless the submission is one).
//!   Arches elements for what msub has besides: `SubmitDir`, `Join` (`oe`,
//!   `eo`), `Priority`, `Rerunable` (`y`/`n`), `SubmitArgs`, `MoabVariables`,
//!   `JobArray` (`msub -t` as written: `1-100%5`).
//!
//! Anything else — another root element, an unknown element, a malformed
//! value — is an error: a filter's typo must not silently drop what it
//! meant to set.

use arches_api::SubmitRequest;
use arches_core::timespec::parse_duration;

/// The identity a job XML claims (`Owner`/`UserId`, `GroupId`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Identity {
    pub user: Option<String>,
    pub group: Option<String>,
}

/// Largest job XML accepted (a packed script may triple in size).
pub const MAX_XML_BYTES: usize = 4 * crate::jobspec::MAX_SCRIPT_BYTES + 65536;

/// Moab's `MUStringPack`.
pub fn pack(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 16);
    out.push_str("\\START");
    for &b in text.as_bytes() {
        let special = b.is_ascii_whitespace()
            || !(0x20..0x7f).contains(&b)
            || matches!(b, b'\\' | b';' | b'<' | b'>' | b'"' | b'#');
        if special {
            out.push_str(&format!("\\{b:02x}"));
        } else {
            out.push(b as char);
        }
    }
    out
}

/// Moab's `MUStringUnpack`: `\START...` decoded; any other text as it is.
pub fn unpack(text: &str) -> Result<String, String> {
    let Some(body) = text.strip_prefix("\\START") else {
        return Ok(text.to_string());
    };
    let bytes = body.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\\' {
            let hex = bytes
                .get(i + 1..i + 3)
                .and_then(|h| std::str::from_utf8(h).ok())
                .and_then(|h| u8::from_str_radix(h, 16).ok())
                .ok_or_else(|| format!("invalid escape at byte {} of a packed string", i + 6))?;
            out.push(hex);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| "a packed string is not UTF-8 text".to_string())
}

fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&apos;"),
            c if (c as u32) < 0x20 && c != '\t' && c != '\n' && c != '\r' => {
                // Not representable in XML 1.0: dropped (only in names and
                // paths; the script itself is packed).
            }
            c => o.push(c),
        }
    }
    o
}

fn el(out: &mut String, indent: &str, name: &str, value: &str) {
    out.push_str(&format!("{indent}<{name}>{}</{name}>\n", esc(value)));
}

/// Mail options as Moab's notification event names.
fn notification_events(opts: &str) -> String {
    if opts.trim() == "n" {
        return "None".to_string();
    }
    let mut ev = Vec::new();
    for (c, name) in [('b', "JobStart"), ('e', "JobEnd"), ('a', "JobFail")] {
        if opts.contains(c) {
            ev.push(name);
        }
    }
    ev.join(",")
}

/// The job XML of a submission by `user` (group `group`).
pub fn to_xml(req: &SubmitRequest, user: &str, group: &str) -> String {
    let mut o = String::from("<job>\n");
    let i = "  ";
    el(&mut o, i, "Owner", user);
    el(&mut o, i, "UserId", user);
    el(&mut o, i, "GroupId", group);
    let iwd = req.workdir.as_deref().unwrap_or(&req.submit_dir);
    el(&mut o, i, "InitialWorkingDirectory", iwd);
    el(&mut o, i, "SubmitDir", &req.submit_dir);
    if let Some(p) = &req.script_path {
        el(&mut o, i, "Executable", p);
    }
    if !req.args.is_empty() {
        let args: Vec<String> = req.args.iter().map(|a| pack(a)).collect();
        el(&mut o, i, "Arguments", &args.join(" "));
    }
    el(&mut o, i, "SubmitLanguage", "PBS");
    if req.interactive {
        el(&mut o, i, "IsInteractive", "TRUE");
    }
    el(&mut o, i, "SubmitString", &pack(&req.script));
    if let Some(n) = &req.name {
        el(&mut o, i, "JobName", n);
    }
    if let Some(a) = &req.array {
        el(&mut o, i, "JobArray", a);
    }
    if !req.env.is_empty() {
        let env: String = req
            .env
            .iter()
            .map(|(k, v)| format!("{k}={v}~rs;"))
            .collect();
        el(&mut o, i, "Environment", &env);
    }
    if let Some(a) = &req.start_after {
        el(&mut o, i, "EligibleTime", a);
    }
    if req.hold {
        el(&mut o, i, "Hold", "User");
    }
    if let Some(c) = &req.class {
        el(&mut o, i, "Queue", c);
    }
    if let Some(a) = &req.account {
        el(&mut o, i, "ProjectId", a);
    }
    if let Some(p) = &req.output {
        el(&mut o, i, "OutputFile", p);
    }
    if let Some(p) = &req.error {
        el(&mut o, i, "ErrorFile", p);
    }
    if req.join {
        el(
            &mut o,
            i,
            "Join",
            if req.join_to_error { "eo" } else { "oe" },
        );
    }
    if let Some(s) = &req.shell {
        el(&mut o, i, "ShellName", s);
    }
    if req.mail_options.is_some() || req.mail_list.is_some() {
        let events = req
            .mail_options
            .as_deref()
            .map(notification_events)
            .unwrap_or_default();
        match &req.mail_list {
            Some(l) => o.push_str(&format!(
                "{i}<NotificationList URI=\"{}\">{}</NotificationList>\n",
                esc(l),
                esc(&events)
            )),
            None => el(&mut o, i, "NotificationList", &events),
        }
    }
    if let Some(p) = req.priority {
        el(&mut o, i, "Priority", &p.to_string());
    }
    if let Some(r) = req.rerunable {
        el(&mut o, i, "Rerunable", if r { "y" } else { "n" });
    }
    if req.moab_env {
        el(&mut o, i, "MoabVariables", "true");
    }
    let items: Vec<&str> = req
        .resources
        .iter()
        .flat_map(|l| l.split(',').map(str::trim).filter(|s| !s.is_empty()))
        .collect();
    if !items.is_empty() {
        o.push_str(&format!("{i}<RequestedResources>\n"));
        let ii = "    ";
        for item in items {
            let (k, v) = item.split_once('=').unwrap_or((item, ""));
            let key = k.trim().to_ascii_lowercase();
            let v = v.trim();
            match key.as_str() {
                "walltime" | "wclimit" if parse_duration(v).is_ok() => {
                    let secs = parse_duration(v).unwrap_or_default();
                    el(&mut o, ii, "WallclockDuration", &secs.to_string());
                }
                "procs" => el(&mut o, ii, "Processors", v),
                "nodes" => el(&mut o, ii, "Nodes", v),
                "mem" => el(&mut o, ii, "Memory", v),
                "feature" | "features" => el(&mut o, ii, "Feature", v),
                _ => o.push_str(&format!(
                    "{ii}<Resource Name=\"{}\">{}</Resource>\n",
                    esc(k.trim()),
                    esc(v)
                )),
            }
        }
        o.push_str(&format!("{i}</RequestedResources>\n"));
    }
    for e in &req.extensions {
        el(&mut o, i, "Extension", e);
    }
    el(&mut o, i, "SubmitHost", &req.submit_host);
    el(&mut o, i, "SubmitArgs", &req.submit_args);
    o.push_str("</job>\n");
    o
}

/// Reads a job XML. `base` supplies what the XML does not say (the
/// directory msub ran in, its host and command line).
pub fn from_xml(xml: &str, base: &SubmitRequest) -> Result<(SubmitRequest, Identity), String> {
    if xml.len() > MAX_XML_BYTES {
        return Err(format!(
            "job XML too large ({} bytes, limit {MAX_XML_BYTES})",
            xml.len()
        ));
    }
    let doc = roxmltree::Document::parse(xml).map_err(|e| format!("invalid job XML: {e}"))?;
    let root = doc.root_element();
    if !root.has_tag_name("job") {
        return Err(format!(
            "invalid job XML: the root element is <{}>, not <job>",
            root.tag_name().name()
        ));
    }
    let mut req = SubmitRequest {
        submit_dir: base.submit_dir.clone(),
        submit_host: base.submit_host.clone(),
        submit_args: base.submit_args.clone(),
        ..SubmitRequest::default()
    };
    let mut id = Identity::default();
    let mut iwd: Option<String> = None;
    let mut script: Option<String> = None;
    for e in root.children().filter(|n| n.is_element()) {
        let name = e.tag_name().name();
        let text = e.text().unwrap_or("").to_string();
        let t = text.trim().to_string();
        let opt = |t: &str| (!t.is_empty()).then(|| t.to_string());
        match name {
            "Owner" | "UserId" => {
                if let Some(prev) = id.user.as_ref().filter(|p| **p != t) {
                    return Err(format!(
                        "invalid job XML: <Owner> and <UserId> disagree ({prev}, {t})"
                    ));
                }
                id.user = opt(&t);
            }
            "GroupId" => id.group = opt(&t),
            "InitialWorkingDirectory" => iwd = opt(&t),
            "SubmitDir" => {
                if let Some(d) = opt(&t) {
                    req.submit_dir = d;
                }
            }
            "Executable" => req.script_path = opt(&t).filter(|p| p.starts_with('/')),
            "Arguments" => {
                req.args = t.split_whitespace().map(unpack).collect::<Result<_, _>>()?;
            }
            "JobArray" => req.array = opt(&t),
            "SubmitLanguage" => {
                if !["PBS", "TORQUE", "MOAB", ""].contains(&t.to_ascii_uppercase().as_str()) {
                    return Err(format!(
                        "submit language '{t}' is not supported (PBS job scripts only)"
                    ));
                }
            }
            "SubmitString" => script = Some(unpack(&text)?),
            "JobName" => req.name = opt(&t),
            "Environment" => {
                for pair in text.split("~rs;").filter(|p| !p.trim().is_empty()) {
                    let (k, v) = pair.split_once('=').ok_or_else(|| {
                        format!("invalid job XML: environment entry '{pair}' is not NAME=VALUE")
                    })?;
                    let k = k.trim();
                    if k.is_empty() {
                        return Err(format!("invalid job XML: environment entry '{pair}'"));
                    }
                    req.env.push((k.to_string(), v.to_string()));
                }
            }
            "EligibleTime" => req.start_after = opt(&t),
            "Hold" => match t.to_ascii_lowercase().as_str() {
                "" | "none" => {}
                "user" | "u" => req.hold = true,
                _ => return Err(format!("invalid job XML: hold '{t}' (only User)")),
            },
            "Queue" | "Class" => req.class = opt(&t),
            "ProjectId" | "Account" => req.account = opt(&t),
            "OutputFile" => req.output = opt(&t),
            "ErrorFile" => req.error = opt(&t),
            "Join" => match t.as_str() {
                "" | "n" => {}
                "oe" => req.join = true,
                "eo" => {
                    req.join = true;
                    req.join_to_error = true;
                }
                _ => return Err(format!("invalid job XML: join '{t}' (oe, eo or n)")),
            },
            "ShellName" => req.shell = opt(&t),
            "NotificationList" => {
                req.mail_list = e.attribute("URI").and_then(opt);
                let mut letters = String::new();
                for ev in t.split(',').map(str::trim).filter(|s| !s.is_empty()) {
                    match ev.to_ascii_lowercase().as_str() {
                        "jobstart" => letters.push('b'),
                        "jobend" => letters.push('e'),
                        "jobfail" => letters.push('a'),
                        "none" => letters.push('n'),
                        _ => {
                            return Err(format!(
                                "invalid job XML: notification event '{ev}' (JobStart, JobEnd, JobFail or None)"
                            ))
                        }
                    }
                }
                req.mail_options = opt(&letters);
            }
            "Priority" => {
                req.priority = Some(
                    t.parse()
                        .map_err(|_| format!("invalid job XML: priority '{t}'"))?,
                )
            }
            "Rerunable" => {
                req.rerunable = match t.to_ascii_lowercase().as_str() {
                    "y" | "yes" | "true" => Some(true),
                    "n" | "no" | "false" => Some(false),
                    _ => return Err(format!("invalid job XML: rerunable '{t}' (y or n)")),
                }
            }
            "MoabVariables" => req.moab_env = t.eq_ignore_ascii_case("true"),
            "RequestedResources" | "Requested" => {
                let mut items = Vec::new();
                for r in e.children().filter(|n| n.is_element()) {
                    let v = r.text().unwrap_or("").trim().to_string();
                    let item = match r.tag_name().name() {
                        "WallclockDuration" => format!("walltime={v}"),
                        "Processors" => format!("procs={v}"),
                        "Nodes" => format!("nodes={v}"),
                        "Memory" => format!("mem={v}"),
                        "Feature" => format!("feature={v}"),
                        "Resource" => {
                            let k = r.attribute("Name").unwrap_or("").trim();
                            if k.is_empty() {
                                return Err(
                                    "invalid job XML: <Resource> without a Name".to_string()
                                );
                            }
                            format!("{k}={v}")
                        }
                        other => {
                            return Err(format!(
                                "invalid job XML: unknown resource element <{other}>"
                            ))
                        }
                    };
                    if item.contains(',') {
                        return Err(format!("invalid job XML: resource '{item}' contains ','"));
                    }
                    items.push(item);
                }
                if !items.is_empty() {
                    req.resources.push(items.join(","));
                }
            }
            "Extension" => {
                if !t.is_empty() {
                    req.extensions.push(t);
                }
            }
            "SubmitHost" => {
                if !t.is_empty() {
                    req.submit_host = t;
                }
            }
            "SubmitArgs" => req.submit_args = t,
            "UMask" => {
                // Moab writes the mask as a decimal number (022 is `18`);
                // a leading 0 is read as octal.
                if !t.is_empty() {
                    let octal = if t.starts_with('0') {
                        t.clone()
                    } else {
                        let m: u32 = t
                            .parse()
                            .map_err(|_| format!("invalid job XML: <UMask>{t}</UMask>"))?;
                        format!("0{m:o}")
                    };
                    req.extensions.push(format!("umask={octal}"));
                }
            }
            "IsInteractive" => {
                // Only msub -I makes a job interactive (its client waits
                // for the terminal): a job XML or a filter cannot.
                if (t.eq_ignore_ascii_case("true") || t == "1") && !base.interactive {
                    return Err(
                        "interactive jobs (IsInteractive) are submitted with msub -I".to_string(),
                    );
                }
            }
            other => return Err(format!("invalid job XML: unknown element <{other}>")),
        }
    }
    req.script = script.ok_or("invalid job XML: no <SubmitString> (the job's script)")?;
    req.workdir = iwd.filter(|w| *w != req.submit_dir);
    Ok((req, id))
}

/// The submission `top` (what msub's command line said explicitly) laid
/// over `base` (what a job XML said): the command line wins, lists add up.
pub fn overlay(mut base: SubmitRequest, top: &SubmitRequest) -> SubmitRequest {
    fn pick<T: Clone>(b: &mut Option<T>, t: &Option<T>) {
        if t.is_some() {
            b.clone_from(t);
        }
    }
    pick(&mut base.name, &top.name);
    pick(&mut base.class, &top.class);
    pick(&mut base.account, &top.account);
    pick(&mut base.start_after, &top.start_after);
    pick(&mut base.rerunable, &top.rerunable);
    pick(&mut base.priority, &top.priority);
    pick(&mut base.workdir, &top.workdir);
    pick(&mut base.output, &top.output);
    pick(&mut base.error, &top.error);
    pick(&mut base.shell, &top.shell);
    pick(&mut base.mail_options, &top.mail_options);
    pick(&mut base.mail_list, &top.mail_list);
    pick(&mut base.array, &top.array);
    if !top.args.is_empty() {
        base.args.clone_from(&top.args);
    }
    base.hold |= top.hold;
    base.moab_env |= top.moab_env;
    if top.join {
        base.join = true;
        base.join_to_error = top.join_to_error;
    }
    base.resources.extend(top.resources.iter().cloned());
    base.extensions.extend(top.extensions.iter().cloned());
    for (k, v) in &top.env {
        match base.env.iter_mut().find(|(bk, _)| bk == k) {
            Some(e) => e.1.clone_from(v),
            None => base.env.push((k.clone(), v.clone())),
        }
    }
    base.submit_args.clone_from(&top.submit_args);
    base.submit_host.clone_from(&top.submit_host);
    base
}

#[cfg(test)]
mod tests;
