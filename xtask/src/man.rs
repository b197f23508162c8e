//! Man pages: every command's `man/man1/<cmd>.1` (clap_mangen for NAME,
//! DESCRIPTION and OPTIONS; our own title and SYNOPSIS, which name every
//! option's value, plus EXAMPLES, EXIT STATUS, ENVIRONMENT, FILES and SEE
//! ALSO) and `man/man5/moab.cfg.5`, the configuration reference rendered from
//! arches-config's parameter table.
//!
//! Everything here is generic over clap: a command or option added anywhere
//! gets its synopsis entry without a change in this file.

use anyhow::Result;
use arches_config::params::{self, IndexKind, ObjectIndex, Shape};

/// The `source` field of every page's title line.
fn source() -> String {
    format!("Arches {}", env!("CARGO_PKG_VERSION"))
}

/// Escapes text for roff (hyphens as `\-`, a leading control character
/// protected); a long `A|B|C` list may break after each `|`.
pub fn roff(s: &str) -> String {
    let s = s
        .replace('\\', "\\\\")
        .replace('-', "\\-")
        .replace('|', "|\\:");
    if s.starts_with('.') || s.starts_with('\'') {
        format!("\\&{s}")
    } else {
        s
    }
}

fn bold(s: &str) -> String {
    format!("\\fB{}\\fR", roff(s))
}

fn italic(s: &str) -> String {
    format!("\\fI{}\\fR", roff(s))
}

/// The value name(s) of an argument as the synopsis shows them: clap's
/// `value_name`, else its id in upper case.
fn value_names(arg: &clap::Arg) -> Vec<String> {
    match arg.get_value_names() {
        Some(v) if !v.is_empty() => v.iter().map(|s| s.to_string()).collect(),
        _ => vec![arg.get_id().as_str().to_ascii_uppercase().replace('-', "_")],
    }
}

/// One synopsis element of an argument: `[\-a \fIACCOUNT\fR]`,
/// `[\-h|\-\-help]`, `\fIJOBID\fR...`.
pub fn synopsis_item(arg: &clap::Arg) -> Option<String> {
    let takes = arg.get_action().takes_values();
    let range = arg.get_num_args();
    let (min, max) = range.map_or((1, 1), |r| (r.min_values(), r.max_values()));
    let many =
        max > 1 || matches!(arg.get_action(), clap::ArgAction::Append) && arg.is_positional();
    let values = |names: Vec<String>| -> String {
        let mut v = names
            .iter()
            .map(|n| italic(n))
            .collect::<Vec<_>>()
            .join("\\ ");
        if many {
            v.push_str("...");
        }
        if min == 0 {
            v = format!("[{v}]");
        }
        v
    };
    let body = if arg.is_positional() {
        values(value_names(arg))
    } else {
        let flag = match (arg.get_short(), arg.get_long()) {
            (Some(s), Some(l)) => format!("{}|{}", bold(&format!("-{s}")), bold(&format!("--{l}"))),
            (Some(s), None) => bold(&format!("-{s}")),
            (None, Some(l)) => bold(&format!("--{l}")),
            (None, None) => return None,
        };
        let mut b = flag;
        if takes {
            // An unbreakable space: a line never breaks between a flag and its value.
            b.push_str("\\ ");
            b.push_str(&values(value_names(arg)));
        }
        if matches!(arg.get_action(), clap::ArgAction::Count) {
            b.push_str("...");
        }
        b
    };
    Some(if arg.is_required_set() {
        body
    } else {
        format!("[{body}]")
    })
}

/// The SYNOPSIS section: options (short ones first, like clap's help),
/// then operands, then the subcommand; hanging indent under the name.
pub fn synopsis(cmd: &clap::Command) -> String {
    let name = cmd.get_bin_name().unwrap_or_else(|| cmd.get_name());
    let mut items = Vec::new();
    for a in cmd
        .get_arguments()
        .filter(|a| !a.is_hide_set() && !a.is_positional())
    {
        items.extend(synopsis_item(a));
    }
    for a in cmd.get_positionals().filter(|a| !a.is_hide_set()) {
        items.extend(synopsis_item(a));
    }
    let hang = format!(".HP {}n\n", name.len() + 1);
    let mut out = format!(".SH SYNOPSIS\n.nh\n.ad l\n{hang}{}", bold(name));
    for i in items {
        out.push(' ');
        out.push_str(&i);
    }
    if cmd.has_subcommands() {
        out.push_str(&format!(" [{} ...]", italic("COMMAND")));
    }
    out.push('\n');
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        out.push_str(&format!(
            "{hang}{} {} [{}]\n",
            bold(name),
            bold(sub.get_name()),
            italic("OPTIONS")
        ));
    }
    out.push_str(".ad\n.hy\n");
    out
}

/// The page of one command.
pub struct Page<'a> {
    pub examples: &'a [(&'a str, &'a str)],
    pub exit_status: &'a str,
    pub environment: &'a str,
    /// `(path, what)` entries of a FILES section (none: no section).
    pub files: &'a [(&'a str, &'a str)],
    /// Every command that has a page (SEE ALSO lists the others).
    pub all_commands: &'a [String],
}

/// Renders `man/man1/<name>.1`.
pub fn man_page(mut cmd: clap::Command, page: &Page<'_>) -> Result<Vec<u8>> {
    // Adds clap's generated -h/--help and -V/--version to the arguments.
    cmd.build();
    let name = cmd.get_name().to_string();
    let man = clap_mangen::Man::new(cmd.clone()).manual("Arches Manual");
    let mut buf = format!(
        ".TH {} 1 \"\" \"{}\" \"Arches Manual\"\n",
        name.to_ascii_uppercase().replace('-', "\\-"),
        source()
    )
    .into_bytes();
    man.render_name_section(&mut buf)?;
    buf.extend_from_slice(synopsis(&cmd).as_bytes());
    man.render_description_section(&mut buf)?;
    man.render_options_section(&mut buf)?;
    if cmd.has_subcommands() {
        man.render_subcommands_section(&mut buf)?;
    }
    let mut extra = String::from(".SH EXAMPLES\n");
    for (line, what) in page.examples {
        extra.push_str(&format!(".TP\n\\fB{}\\fR\n{}\n", roff(line), roff(what)));
    }
    extra.push_str(&format!(
        ".SH \"EXIT STATUS\"\n{}\n",
        roff(page.exit_status)
    ));
    extra.push_str(&format!(".SH ENVIRONMENT\n{}\n", roff(page.environment)));
    if !page.files.is_empty() {
        extra.push_str(".SH FILES\n");
        for (path, what) in page.files {
            extra.push_str(&format!(".TP\n{}\n{}\n", italic(path), roff(what)));
        }
    }
    let mut others: Vec<String> = page
        .all_commands
        .iter()
        .filter(|c| **c != name)
        .map(|c| format!("\\fB{}\\fR(1)", roff(c)))
        .collect();
    others.push("\\fBmoab.cfg\\fR(5)".to_string());
    extra.push_str(&format!(".SH \"SEE ALSO\"\n{}\n", others.join(",\n")));
    buf.extend_from_slice(extra.as_bytes());
    Ok(buf)
}

/// `man/man5/moab.cfg.5`: the configuration file format and every
/// parameter of arches-config's table (the same table the parser uses).
pub fn config_page(all_commands: &[String]) -> String {
    let mut o = format!(".TH MOAB.CFG 5 \"\" \"{}\" \"Arches Manual\"\n", source());
    o.push_str(
        ".SH NAME\nmoab.cfg \\- configuration file of the Arches (Moab compatible) scheduler\n",
    );
    o.push_str(".SH SYNOPSIS\n");
    o.push_str(&format!(
        "{}\n.br\n{}\n",
        italic("$MOABHOMEDIR/moab.cfg"),
        italic("/etc/arches/moab.cfg")
    ));
    o.push_str(".SH DESCRIPTION\n");
    o.push_str(&roff(
        "The daemon moab reads its configuration from moab.cfg in its home directory (MOABHOMEDIR, \
         else ~/.arches), or from the file given with moab --config; the system service reads \
         /etc/arches/moab.cfg. Without a file the embedded default applies: one node named after \
         the host with all its processors and memory, jobs run on this machine.",
    ));
    o.push_str("\n.PP\n");
    o.push_str(&roff(
        "One parameter per line: PARAM value, or PARAM[index] ATTR=VALUE ATTR=VALUE ... for \
         objects (credentials, nodes, resource managers, reservations); lines naming the same \
         object add attributes. Names are case-insensitive; # starts a comment; a trailing \
         backslash continues a line. Durations are [[[DD:]HH:]MM:]SS. An unknown name is a \
         warning; an invalid value of a known parameter is an error naming the file and line, and \
         the daemon does not start. mdiag -C checks a file without a daemon; mschedctl -l config \
         shows the effective values; mschedctl -m config changes one at run time.",
    ));
    o.push('\n');
    // Long value lists (A|B|C...) leave too few spaces to justify.
    o.push_str(".SH PARAMETERS\n.ad l\n");
    for p in params::all() {
        let Shape::Scalar { ty, index, .. } = &p.shape else {
            continue;
        };
        let mut head = bold(p.name);
        match index {
            IndexKind::None => {}
            IndexKind::Partition => head.push_str(&format!("[{}]", italic("partition"))),
            IndexKind::Bucket => head.push_str(&format!("[{}]", italic("0\u{2013}15"))),
        }
        o.push_str(&format!(
            ".TP\n{head}\n{}\n",
            roff(&with_ignored(p.doc, ty))
        ));
        o.push_str(&format!(
            ".br\nType: {}. Default: {}.{} Used by: {}.\n",
            roff(&ty.describe().replace('`', "")),
            default_text(p.default),
            if p.aliases.is_empty() {
                String::new()
            } else {
                format!(" Alias: {}.", roff(&p.aliases.join(", ")))
            },
            roff(p.used_by)
        ));
    }
    o.push_str(".SH OBJECTS\n");
    for p in params::all() {
        let Shape::Object { index, attrs } = &p.shape else {
            continue;
        };
        let form = match index {
            ObjectIndex::Name => format!("{}[{}]", bold(p.name), italic("name")),
            ObjectIndex::OptionalName => format!(
                "{}[{}] (or {} alone)",
                bold(p.name),
                italic("name"),
                bold(p.name)
            ),
            ObjectIndex::Level => format!("{}[{}]", bold(p.name), italic("1..5")),
        };
        o.push_str(&format!(
            ".SS \"{}\"\n{} Used by: {}.\n",
            form.replace('"', "\\(dq"),
            roff(p.doc),
            roff(p.used_by)
        ));
        for a in attrs.iter() {
            let mut head = format!("{}=", bold(a.name));
            if !a.aliases.is_empty() {
                head.push_str(&format!(" (alias {})", roff(&a.aliases.join(", "))));
            }
            o.push_str(&format!(
                ".TP\n{head}\n{}\n.br\nType: {}. Default: {}.\n",
                roff(&with_ignored(a.doc, &a.ty)),
                roff(&a.ty.describe().replace('`', "")),
                default_text(a.default)
            ));
        }
    }
    o.push_str(".SH EXAMPLES\n.PP\n.nf\n");
    for l in CONFIG_EXAMPLE.lines() {
        o.push_str(&roff(l));
        o.push('\n');
    }
    o.push_str(".fi\n");
    o.push_str(".SH FILES\n");
    for (path, what) in [
        (
            "/etc/arches/moab.cfg",
            "The system service's configuration (moab.service).",
        ),
        (
            "~/.arches/moab.cfg",
            "A personal daemon's configuration (MOABHOMEDIR unset).",
        ),
        (
            "/usr/share/doc/arches/config-reference.md",
            "This reference as Markdown (docs/config-reference.md in the source).",
        ),
    ] {
        o.push_str(&format!(".TP\n{}\n{}\n", italic(path), roff(what)));
    }
    o.push_str(".SH \"SEE ALSO\"\n");
    let mut see: Vec<String> = ["moab", "mdiag", "mschedctl"]
        .iter()
        .filter(|c| all_commands.iter().any(|a| a == *c))
        .map(|c| format!("\\fB{c}\\fR(1)"))
        .collect();
    see.push("\\fBmoab.service\\fR (systemd.unit(5))".to_string());
    o.push_str(&see.join(",\n"));
    o.push('\n');
    o
}

/// The EXAMPLES of moab.cfg(5).
const CONFIG_EXAMPLE: &str = "# Two nodes, EASY backfill, a high-priority QoS that preempts.
SCHEDCFG[arches]   MODE=NORMAL
ADMINCFG[1]        USERS=root,alice
RMCFG[local]       TYPE=LOCAL
NODECFG[n01]       PROCS=16 MEMORY=64000
NODECFG[n02]       PROCS=16 MEMORY=64000
RESERVATIONDEPTH   1
BACKFILLPOLICY     FIRSTFIT
QOSCFG[hi]         QFLAGS=PREEMPTOR PRIORITY=1000
QOSCFG[lo]         QFLAGS=PREEMPTEE
PREEMPTPOLICY      REQUEUE
LOGDIR             /var/log/arches";

/// The doc plus the Moab values that are accepted but ignored, if any.
fn with_ignored(doc: &str, ty: &arches_config::value::ValueType) -> String {
    match ty.unsupported() {
        [] => doc.to_string(),
        words => format!(
            "{doc} Moab values accepted and ignored: {}.",
            words.join(", ")
        ),
    }
}

fn default_text(d: Option<&str>) -> String {
    match d {
        Some("") => "empty".to_string(),
        Some(d) => bold(d),
        None => "unset".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::{Arg, ArgAction, Command};

    #[test]
    fn roff_escapes() {
        assert_eq!(roff("-a"), "\\-a");
        assert_eq!(roff(".x"), "\\&.x");
    }

    #[test]
    fn synopsis_names_every_value() {
        let cmd = Command::new("showbf")
            .arg(Arg::new("all").short('A').action(ArgAction::SetTrue))
            .arg(Arg::new("account").short('a').value_name("ACCOUNT"))
            .arg(Arg::new("format").long("format"))
            .arg(Arg::new("verbose").short('v').action(ArgAction::Count))
            .arg(
                Arg::new("level")
                    .long("level")
                    .num_args(0..=1)
                    .value_name("N"),
            )
            .arg(
                Arg::new("jobs")
                    .value_name("JOBID")
                    .num_args(1..)
                    .required(true),
            );
        let s = synopsis(&cmd);
        assert!(s.contains("[\\fB\\-A\\fR]"), "{s}");
        assert!(s.contains("[\\fB\\-a\\fR\\ \\fIACCOUNT\\fR]"), "{s}");
        assert!(s.contains("[\\fB\\-\\-format\\fR\\ \\fIFORMAT\\fR]"), "{s}");
        assert!(s.contains("[\\fB\\-v\\fR...]"), "{s}");
        assert!(s.contains("[\\fB\\-\\-level\\fR\\ [\\fIN\\fR]]"), "{s}");
        assert!(s.contains(" \\fIJOBID\\fR...\n"), "{s}");
    }

    #[test]
    fn config_page_lists_every_parameter_and_attribute() {
        let page = config_page(&["moab".to_string()]);
        for p in params::all() {
            assert!(page.contains(&bold(p.name)), "{} missing", p.name);
            if let Shape::Object { attrs, .. } = &p.shape {
                for a in attrs.iter() {
                    assert!(page.contains(&format!("{}=", bold(a.name))), "{}", a.name);
                }
            }
        }
    }
}
