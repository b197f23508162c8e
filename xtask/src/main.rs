//! Generates and checks the committed documentation artefacts:
//! `man/man1/<cmd>.1` for every client command (clap_mangen plus EXAMPLES,
//! EXIT STATUS and ENVIRONMENT sections), shell completions in
//! `completions/{bash,zsh,fish}/` and `docs/commands.md`.
//!
//! `cargo run -p xtask -- generate` writes them; `cargo run -p xtask -- check`
//! regenerates in memory and fails, listing the files, if any committed file
//! differs.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{bail, Context, Result};
use clap_complete::Shell;

mod man;
mod pgo;

/// Every generated file: path relative to the workspace root → contents.
fn artefacts() -> Result<BTreeMap<PathBuf, Vec<u8>>> {
    let mut out = BTreeMap::new();
    // The man page lists real subcommands only (clap's implicit `help`
    // subcommand has no page of its own).
    let moab = arches_server::cli_command()
        .name("moab")
        .bin_name("moab")
        .disable_help_subcommand(true);
    let simulate = moab
        .find_subcommand("simulate")
        .context("moab has no simulate subcommand")?
        .clone()
        .name("moab-simulate")
        .bin_name("moab simulate");
    let clients = arches_cli::commands();
    let all: Vec<String> = ["moab".to_string(), "moab-simulate".to_string()]
        .into_iter()
        .chain(clients.iter().map(|c| c.get_name().to_string()))
        .collect();
    out.insert(
        PathBuf::from("man/man1/moab-simulate.1"),
        man_page(simulate, &all)?,
    );
    out.insert(
        PathBuf::from("man/man5/moab.cfg.5"),
        man::config_page(&all).into_bytes(),
    );
    for cmd in clients.into_iter().chain([moab]) {
        let name = cmd.get_name().to_string();
        out.insert(
            PathBuf::from(format!("man/man1/{name}.1")),
            man_page(cmd.clone(), &all)?,
        );
        for (shell, dir, file) in [
            (Shell::Bash, "bash", name.clone()),
            (Shell::Zsh, "zsh", format!("_{name}")),
            (Shell::Fish, "fish", format!("{name}.fish")),
        ] {
            let mut buf = Vec::new();
            let mut c = cmd.clone();
            clap_complete::generate(shell, &mut c, name.clone(), &mut buf);
            if let Some(kind) = dynamic_kind(&name) {
                buf = with_dynamic(shell, &cmd, kind, String::from_utf8(buf)?).into_bytes();
            }
            out.insert(PathBuf::from(format!("completions/{dir}/{file}")), buf);
        }
    }
    out.insert(
        PathBuf::from("docs/config-reference.md"),
        arches_config::reference_markdown().into_bytes(),
    );
    out.insert(
        PathBuf::from("docs/commands.md"),
        commands_markdown().into_bytes(),
    );
    Ok(out)
}

/// Commands whose operands are daemon objects, completed dynamically by
/// asking the daemon (`<cmd> --complete KIND`, see `arches_cli::complete`).
fn dynamic_kind(cmd: &str) -> Option<&'static str> {
    Some(match cmd {
        "checkjob" | "canceljob" | "mdel" | "mjobctl" | "releasehold" | "sethold" | "runjob"
        | "showstart" | "setspri" => "jobs",
        "checknode" => "nodes",
        "showres" | "releaseres" => "reservations",
        _ => return None,
    })
}

/// Adds the daemon-backed completion of operands to clap's static script:
/// bash wraps clap's function (ids first when the word is an operand),
/// zsh replaces the operand's `_default` action, fish adds an `-a` source.
fn with_dynamic(shell: Shell, cmd: &clap::Command, kind: &str, script: String) -> String {
    let name = cmd.get_name();
    let fname = name.replace('-', "_");
    match shell {
        Shell::Bash => {
            // Options whose next word is their value (never an operand).
            let mut valued: Vec<String> = Vec::new();
            for a in cmd.get_arguments() {
                if !a.get_action().takes_values() || a.is_positional() {
                    continue;
                }
                if let Some(s) = a.get_short() {
                    valued.push(format!("-{s}"));
                }
                if let Some(l) = a.get_long() {
                    valued.push(format!("--{l}"));
                }
            }
            let pattern = if valued.is_empty() {
                "--no-option-takes-a-value".to_string()
            } else {
                valued.join("|")
            };
            let script = script
                .replace(
                    &format!("complete -F _{fname} -o nosort -o bashdefault -o default {name}"),
                    &format!("complete -F _arches_dyn_{fname} -o nosort -o bashdefault -o default {name}"),
                )
                .replace(
                    &format!("complete -F _{fname} -o bashdefault -o default {name}"),
                    &format!("complete -F _arches_dyn_{fname} -o bashdefault -o default {name}"),
                );
            format!(
                "{script}\n# Operands: {kind} known to the running daemon ('{name} --complete {kind}').\n_arches_dyn_{fname}() {{\n    local cur=\"${{COMP_WORDS[COMP_CWORD]}}\" prev=\"\"\n    [[ $COMP_CWORD -gt 0 ]] && prev=\"${{COMP_WORDS[COMP_CWORD-1]}}\"\n    if [[ \"$cur\" != -* ]]; then\n        case \"$prev\" in\n            {pattern}) ;;\n            *)\n                local ids\n                ids=$(\"{name}\" --complete {kind} 2>/dev/null)\n                COMPREPLY=( $(compgen -W \"$ids\" -- \"$cur\") )\n                [[ ${{#COMPREPLY[@]}} -gt 0 ]] && return 0\n                ;;\n        esac\n    fi\n    _{fname} \"$@\"\n}}\n\nif [[ \"${{BASH_VERSINFO[0]}}\" -eq 4 && \"${{BASH_VERSINFO[1]}}\" -ge 4 || \"${{BASH_VERSINFO[0]}}\" -gt 4 ]]; then\n    complete -F _arches_dyn_{fname} -o nosort -o bashdefault -o default {name}\nelse\n    complete -F _arches_dyn_{fname} -o bashdefault -o default {name}\nfi\n"
            )
        }
        Shell::Zsh => {
            let helper = format!(
                "\n# Operands: {kind} known to the running daemon ('{name} --complete {kind}').\n(( $+functions[_arches_{kind}] )) ||\n_arches_{kind}() {{\n    local -a ids\n    ids=(${{(f)\"$({name} --complete {kind} 2>/dev/null)\"}})\n    compadd -a ids\n}}\n"
            );
            let mut out = String::new();
            for (i, line) in script.lines().enumerate() {
                let operand = (line.starts_with("':") || line.starts_with("'*:"))
                    && line.ends_with(":_default' \\");
                if operand {
                    out.push_str(&line.replace(":_default' \\", &format!(":_arches_{kind}' \\")));
                } else {
                    out.push_str(line);
                }
                out.push('\n');
                if i == 0 {
                    out.push_str(&helper);
                }
            }
            out
        }
        Shell::Fish => format!(
            "{script}# Operands: {kind} known to the running daemon.\ncomplete -c {name} -f -n 'not string match -q -- \"-*\" (commandline -ct)' -a '({name} --complete {kind} 2>/dev/null)'\n"
        ),
        _ => script,
    }
}

/// Examples of the daemon's man page.
const MOAB_EXAMPLES: &[(&str, &str)] = &[
    ("moab", "Start the daemon with $MOABHOMEDIR/moab.cfg (or the embedded default) on $MOABHOMEDIR/moab.sock."),
    ("moab --config /etc/arches/moab.cfg --home /var/lib/arches", "Start with an explicit configuration and home directory."),
    ("mschedctl -k", "Stop a running daemon."),
];

/// Examples of `moab simulate`'s man page.
const SIMULATE_EXAMPLES: &[(&str, &str)] = &[
    ("moab simulate --trace SDSC-SP2-1998-4.2-cln.swf.gz --summary -", "Replay a Standard Workload Format trace through the real engine and print the summary JSON (waits, bounded slowdown, utilisation, backfill)."),
    ("moab simulate --trace log.swf --config moab.cfg --report report.html", "Replay under a site's policies and write an HTML report with charts."),
    ("moab simulate --workload jobs.jsonl --procs 8 --until 3600 --serve", "Stop the virtual clock at t=3600 and serve the API: showq, checkjob, showstats... show the simulated cluster; mschedctl -S steps, mschedctl -k stops."),
];

/// EXIT STATUS of `moab simulate`'s man page.
const SIMULATE_EXIT_STATUS: &str =
    "0 when the replay (or the served simulation) ended normally. Non-zero when the trace, workload or configuration cannot be read or is invalid, or the socket cannot be served; the reason is printed on standard error.";

/// EXIT STATUS of the daemon's man page.
const MOAB_EXIT_STATUS: &str =
    "0 after a clean shutdown (mschedctl -k or SIGTERM). Non-zero when the \
configuration has errors, the home directory or socket cannot be set up, or another daemon already \
serves the socket; the reason is printed on standard error.";

/// FILES of the daemon's man page: the system-wide layout (moab.service).
const MOAB_FILES: &[(&str, &str)] = &[
    ("/etc/arches/moab.cfg", "The system service's configuration (moab.cfg(5)); ~/.arches/moab.cfg or $MOABHOMEDIR/moab.cfg for a personal daemon."),
    ("/var/lib/arches", "The system service's home: arches.db (the durable state) and the local jobs' spool."),
    ("/run/arches/moab.sock", "The system service's socket; clients use it when MOAB_SOCKET, MOABHOMEDIR and ~/.arches/moab.sock do not name another."),
    ("/var/log/arches/moab.log", "The system service's log (LOGDIR, LOGFILE); a personal daemon logs to <home>/log/moab.log."),
    ("/usr/lib/systemd/system/moab.service", "The systemd unit (Type=notify: ready once the socket answers)."),
];

/// The man page of one command (see [`man::man_page`]).
fn man_page(cmd: clap::Command, all: &[String]) -> Result<Vec<u8>> {
    let name = cmd.get_name().to_string();
    let page = man::Page {
        examples: match name.as_str() {
            "moab" => MOAB_EXAMPLES,
            "moab-simulate" => SIMULATE_EXAMPLES,
            _ => arches_cli::docs::examples(&name),
        },
        exit_status: match name.as_str() {
            "moab" => MOAB_EXIT_STATUS,
            "moab-simulate" => SIMULATE_EXIT_STATUS,
            _ => arches_cli::docs::EXIT_STATUS,
        },
        environment: arches_cli::docs::ENVIRONMENT,
        files: if name == "moab" { MOAB_FILES } else { &[] },
        all_commands: all,
    };
    man::man_page(cmd, &page)
}

fn commands_markdown() -> String {
    let mut o = String::from(
        "# Arches client commands\n\n\
<!-- Generated by `cargo run -p xtask -- generate`; do not edit. -->\n\n\
Every command prints Moab's exact text formats (see `shared/reference/moab-formats.md`).\n\
Query commands also accept `--xml` / `--format=xml` (Moab's one-line `<Data>` documents)\n\
and `--format=json`.\n\n\
## JSON output (stable schema)\n\n\
`--format=json` prints the daemon's answer, serialised from the `arches-api` wire type\n\
named below, pretty-printed, with its field names unchanged. Times are epoch seconds,\n\
durations seconds, absent values `null`; the filters and the section options of the command\n\
line apply. Fields are only ever added within API version `/v1`. Every field, its type and\n\
unit: [json.md](json.md).\n\n\
| Command | JSON type |\n|---|---|\n\
| showq, mdiag -b | `QueueView` |\n\
| checkjob, mjobctl -q diag, mdiag -j | `JobsView` |\n\
| checknode, mdiag -n, mdiag -t, mdiag -R, showres -f | `NodesView` |\n\
| showbf | `BackfillView` |\n\
| showstart, mjobctl -q starttime | `StartEstimate` |\n\
| showres, mdiag -r, mdiag -s, mrsvctl -q | `ReservationsView` |\n\
| mdiag -S | `SchedulerView` |\n\
| mdiag -p | `PriorityView` |\n\
| mdiag -u/-g/-a/-c/-q, mdiag -L | `CredentialsView` |\n\
| mdiag -f | `FairshareView` |\n\
| showstats | `StatsView` |\n\
| mschedctl -l config | `ConfigView` |\n\
| mdiag -C (no daemon) | `{\"file\", \"exists\", \"lines\", \"errors\", \"warnings\"}` (the arches-config check report) |\n\n\
## Options common to every command\n\n\
- `--socket PATH`: the daemon's socket (default `$MOAB_SOCKET`, else `$MOABHOMEDIR/moab.sock`, else\n  \
`~/.arches/moab.sock` if it exists, else the system service's `/run/arches/moab.sock`).\n\
- `--host HOST`: accepted for Moab compatibility (`--host=<master>`); ignored.\n\
- `--timeout SECONDS`: give up after this long (default 30) with\n  \
`ERROR:  client timed out after N seconds (socket=<socket>)`.\n\n\
Exit status: ",
    );
    o.push_str(arches_cli::docs::EXIT_STATUS);
    o.push_str("\n\n");
    for cmd in arches_cli::commands() {
        let name = cmd.get_name().to_string();
        o.push_str(&format!("## {name}\n\n"));
        if let Some(a) = cmd.get_long_about().or(cmd.get_about()) {
            o.push_str(&format!("{a}\n\n"));
        }
        o.push_str("| Option | Meaning |\n|---|---|\n");
        for arg in cmd.get_arguments() {
            if arg.is_hide_set() {
                continue;
            }
            let mut flag = match (arg.get_short(), arg.get_long()) {
                (Some(s), Some(l)) => format!("-{s}, --{l}"),
                (Some(s), None) => format!("-{s}"),
                (None, Some(l)) => format!("--{l}"),
                (None, None) => arg
                    .get_value_names()
                    .map(|v| {
                        v.iter()
                            .map(|s| s.to_string())
                            .collect::<Vec<_>>()
                            .join(" ")
                    })
                    .unwrap_or_else(|| arg.get_id().to_string()),
            };
            if arg.get_action().takes_values()
                && (arg.get_short().is_some() || arg.get_long().is_some())
            {
                if let Some(v) = arg.get_value_names() {
                    flag.push(' ');
                    flag.push_str(&v.join(" "));
                }
            }
            let help = arg
                .get_help()
                .map(|h| h.to_string().replace('|', "\\|"))
                .unwrap_or_default();
            o.push_str(&format!("| `{}` | {} |\n", flag.replace('|', "\\|"), help));
        }
        let ex = arches_cli::docs::examples(&name);
        if !ex.is_empty() {
            o.push_str("\nExamples:\n\n");
            for (l, w) in ex {
                o.push_str(&format!("- `{l}`: {w}\n"));
            }
        }
        o.push('\n');
    }
    o
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."))
}

fn generate() -> Result<()> {
    let root = root();
    for (rel, bytes) in artefacts()? {
        let p = root.join(&rel);
        if let Some(dir) = p.parent() {
            std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        }
        std::fs::write(&p, bytes).with_context(|| format!("writing {}", p.display()))?;
    }
    Ok(())
}

fn check() -> Result<()> {
    let root = root();
    let mut stale = Vec::new();
    for (rel, bytes) in artefacts()? {
        match std::fs::read(root.join(&rel)) {
            Ok(cur) if cur == bytes => {}
            _ => stale.push(rel.display().to_string()),
        }
    }
    if !stale.is_empty() {
        bail!(
            "generated files are out of date (run `cargo run -p xtask -- generate`):\n  {}",
            stale.join("\n  ")
        );
    }
    Ok(())
}

/// The commands (binaries of the root package, `src/bin/*.rs`).
fn binaries(root: &Path) -> Result<Vec<String>> {
    let mut names: Vec<String> = std::fs::read_dir(root.join("src/bin"))
        .context("reading src/bin")?
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let n = e.file_name().to_string_lossy().to_string();
            n.strip_suffix(".rs").map(str::to_string)
        })
        .collect();
    names.sort();
    Ok(names)
}

/// Copies every file of `root/src` into `dest` with `mode`.
fn copy_dir_into(
    root: &Path,
    src: &str,
    dest: &Path,
    mode: u32,
    out: &mut Vec<PathBuf>,
) -> Result<()> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(root.join(src))
        .with_context(|| format!("reading {src}"))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    for f in files {
        let to = dest.join(f.file_name().expect("a file name"));
        put(&f, &to, mode)?;
        out.push(to);
    }
    Ok(())
}

/// Copies `from` to `to` (parents created) with `mode`.
fn put(from: &Path, to: &Path, mode: u32) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    if let Some(dir) = to.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    std::fs::copy(from, to)
        .with_context(|| format!("copying {} to {}", from.display(), to.display()))?;
    std::fs::set_permissions(to, std::fs::Permissions::from_mode(mode))
        .with_context(|| format!("chmod {}", to.display()))?;
    Ok(())
}

/// Installs the commands from `bin_dir` and the committed man pages,
/// completions, data-staging tools, documentation, systemd unit and default
/// configuration under `prefix` (the configuration under `sysconfdir`):
///
/// ```text
/// <prefix>/bin/<command>                         every command (msub, moab, ...)
/// <prefix>/bin/showhist.moab.pl                 packaging/bin: commands under Moab tool names
/// <prefix>/share/man/man1/<command>.1, man5/moab.cfg.5
/// <prefix>/share/bash-completion/completions/<command>
/// <prefix>/share/zsh/site-functions/_<command>
/// <prefix>/share/fish/vendor_completions.d/<command>.fish
/// <prefix>/share/arches/tools/dstage.*           where the daemon finds $TOOLSDIR
/// <prefix>/share/doc/arches/*.md                 docs/ and the README
/// <prefix>/lib/systemd/system/moab.service       ExecStart=<prefix>/bin/moab
/// <sysconfdir>/arches/moab.cfg                   only if there is none yet
/// ```
///
/// Returns the installed files.
fn install_into(
    root: &Path,
    bin_dir: &Path,
    prefix: &Path,
    sysconfdir: &Path,
) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for name in binaries(root)? {
        let from = bin_dir.join(&name);
        if !from.is_file() {
            bail!(
                "{} is missing (build it first: cargo build --profile PROFILE -p arches --bins)",
                from.display()
            );
        }
        let to = prefix.join("bin").join(&name);
        put(&from, &to, 0o755)?;
        out.push(to);
    }
    // Commands under the names of Moab's tools (showhist.moab.pl), as the
    // Debian package installs them.
    copy_dir_into(root, "packaging/bin", &prefix.join("bin"), 0o755, &mut out)?;
    let copy_dir = |src: &str, dest: &str, mode: u32, out: &mut Vec<PathBuf>| {
        copy_dir_into(root, src, &prefix.join(dest), mode, out)
    };
    copy_dir("man/man1", "share/man/man1", 0o644, &mut out)?;
    copy_dir("man/man5", "share/man/man5", 0o644, &mut out)?;
    copy_dir(
        "completions/bash",
        "share/bash-completion/completions",
        0o644,
        &mut out,
    )?;
    copy_dir(
        "completions/zsh",
        "share/zsh/site-functions",
        0o644,
        &mut out,
    )?;
    copy_dir(
        "completions/fish",
        "share/fish/vendor_completions.d",
        0o644,
        &mut out,
    )?;
    copy_dir("tools", "share/arches/tools", 0o755, &mut out)?;
    copy_dir("docs", "share/doc/arches", 0o644, &mut out)?;
    let readme = prefix.join("share/doc/arches/README.md");
    put(&root.join("README.md"), &readme, 0o644)?;
    out.push(readme);
    // The unit runs this prefix's daemon.
    let unit = std::fs::read_to_string(root.join(UNIT_SOURCE))
        .with_context(|| format!("reading {UNIT_SOURCE}"))?;
    let moab = prefix.join("bin/moab");
    let unit = unit.replace(
        "ExecStart=/usr/bin/moab ",
        &format!("ExecStart={} ", moab.display()),
    );
    let unit_path = prefix.join("lib/systemd/system/moab.service");
    write_file(&unit_path, unit.as_bytes(), 0o644)?;
    out.push(unit_path);
    // The configuration is the administrator's: never overwritten.
    let cfg = sysconfdir.join("arches/moab.cfg");
    if std::fs::symlink_metadata(&cfg).is_err() {
        put(&root.join("packaging/moab.cfg"), &cfg, 0o644)?;
        out.push(cfg);
    } else {
        println!("kept the existing {}", cfg.display());
    }
    Ok(out)
}

/// The systemd unit in the repository (its ExecStart is the Debian
/// package's `/usr/bin/moab`).
const UNIT_SOURCE: &str = "packaging/systemd/moab.service";

/// Writes `bytes` to `to` (parents created) with `mode`.
fn write_file(to: &Path, bytes: &[u8], mode: u32) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    if let Some(dir) = to.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    std::fs::write(to, bytes).with_context(|| format!("writing {}", to.display()))?;
    std::fs::set_permissions(to, std::fs::Permissions::from_mode(mode))
        .with_context(|| format!("chmod {}", to.display()))
}

/// `install [--prefix P] [--sysconfdir D] [--profile NAME] [--no-build]`:
/// builds the binaries of the cargo profile (default `release`; `deb`:
/// the same, stripped) unless `--no-build`, and installs them and everything
/// else under `P` (default `/usr/local`), the configuration under `D`
/// (default `/etc`).
fn install(args: &[String]) -> Result<()> {
    let mut prefix = PathBuf::from("/usr/local");
    let mut sysconfdir = PathBuf::from("/etc");
    let mut build = true;
    let mut profile = "release".to_string();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--prefix" => prefix = PathBuf::from(it.next().context("--prefix needs a directory")?),
            "--sysconfdir" => {
                sysconfdir = PathBuf::from(it.next().context("--sysconfdir needs a directory")?)
            }
            "--profile" => profile = it.next().context("--profile needs a name")?.clone(),
            "--no-build" => build = false,
            other => bail!(
                "unknown install option '{other}' (--prefix DIR, --sysconfdir DIR, --profile NAME, --no-build)"
            ),
        }
    }
    let root = root();
    if build {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
        let st = std::process::Command::new(cargo)
            .args(["build", "--profile", &profile, "-p", "arches", "--bins"])
            .current_dir(&root)
            .status()
            .context("running cargo build")?;
        if !st.success() {
            bail!("cargo build --profile {profile} failed");
        }
    }
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target"));
    // Cargo's directory of a profile: `dev` builds into `debug`.
    let dir = if profile == "dev" {
        "debug"
    } else {
        profile.as_str()
    };
    let files = install_into(&root, &target.join(dir), &prefix, &sysconfdir)?;
    println!(
        "installed {} files under {} (data-staging tools in {}; unit {}; configuration {})",
        files.len(),
        prefix.display(),
        prefix.join("share/arches/tools").display(),
        prefix.join("lib/systemd/system/moab.service").display(),
        sysconfdir.join("arches/moab.cfg").display()
    );
    println!(
        "as a system service: systemctl daemon-reload && systemctl enable --now moab (docs/install.md)"
    );
    Ok(())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let r = match args.first().map(String::as_str) {
        Some("generate") => generate(),
        Some("check") => check(),
        Some("install") => install(&args[1..]),
        Some("pgo") => pgo::pgo(&root()),
        _ => {
            eprintln!(
                "usage: cargo run -p xtask -- generate|check|pgo|install [--prefix DIR] [--sysconfdir DIR] [--profile NAME] [--no-build]"
            );
            return ExitCode::from(2);
        }
    };
    match r {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xtask: {e:#}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn committed_files_are_current() {
        check().unwrap();
    }

    #[test]
    fn install_puts_commands_pages_completions_and_tools_under_the_prefix() {
        use std::os::unix::fs::PermissionsExt;
        let root = root();
        // Stand-in binaries (the real ones need a release build).
        let bins = tempdir("bins");
        for b in binaries(&root).unwrap() {
            std::fs::write(bins.join(&b), b"#!/bin/sh\n").unwrap();
        }
        let prefix = tempdir("prefix");
        let etc = tempdir("etc");
        let files = install_into(&root, &bins, &prefix, &etc).unwrap();
        for want in [
            "bin/msub",
            "bin/moab",
            "bin/showhist",
            "bin/showhist.moab.pl",
            "share/man/man1/checkjob.1",
            "share/bash-completion/completions/showq",
            "share/zsh/site-functions/_mdiag",
            "share/fish/vendor_completions.d/checknode.fish",
            "share/arches/tools/dstage.query",
            "share/arches/tools/dstage.modify",
            "share/arches/tools/dstage.cluster",
            "share/arches/tools/dstage.common",
            "share/man/man5/moab.cfg.5",
            "share/doc/arches/config-reference.md",
            "share/doc/arches/README.md",
            "lib/systemd/system/moab.service",
        ] {
            assert!(files.contains(&prefix.join(want)), "{want} not installed");
        }
        let mode = |p: &str| {
            std::fs::metadata(prefix.join(p))
                .unwrap()
                .permissions()
                .mode()
                & 0o777
        };
        assert_eq!(mode("share/arches/tools/dstage.modify"), 0o755);
        assert_eq!(mode("bin/msub"), 0o755);
        assert_eq!(mode("share/man/man1/checkjob.1"), 0o644);
        // The unit starts this prefix's daemon; the configuration is
        // installed once and then left to the administrator.
        let unit = std::fs::read_to_string(prefix.join("lib/systemd/system/moab.service")).unwrap();
        let exec = format!(
            "ExecStart={} --home /var/lib/arches",
            prefix.join("bin/moab").display()
        );
        assert!(unit.contains(&exec), "{unit}");
        let cfg = etc.join("arches/moab.cfg");
        assert!(files.contains(&cfg));
        std::fs::write(&cfg, "# edited\n").unwrap();
        let again = install_into(&root, &bins, &prefix, &etc).unwrap();
        assert!(!again.contains(&cfg));
        assert_eq!(std::fs::read_to_string(&cfg).unwrap(), "# edited\n");
        // A missing binary is an error naming it.
        std::fs::remove_file(bins.join("msub")).unwrap();
        let e = install_into(&root, &bins, &prefix, &etc)
            .unwrap_err()
            .to_string();
        assert!(e.contains("msub is missing"), "{e}");
        let _ = std::fs::remove_dir_all(&bins);
        let _ = std::fs::remove_dir_all(&prefix);
        let _ = std::fs::remove_dir_all(&etc);
    }

    #[test]
    fn the_service_configuration_parses_cleanly() {
        let path = root().join("packaging/moab.cfg");
        let parsed = arches_config::load_file(&path).unwrap();
        assert!(parsed.diagnostics.is_empty(), "{:?}", parsed.diagnostics);
        assert_eq!(parsed.config.log.dir, "/var/log/arches");
        // The commented metrics lines are valid once uncommented.
        let text = std::fs::read_to_string(&path)
            .unwrap()
            .replace("#METRICS", "METRICS");
        let parsed = arches_config::parse(&text, "moab.cfg");
        assert!(parsed.diagnostics.is_empty(), "{:?}", parsed.diagnostics);
        assert_eq!(parsed.config.metrics_port, Some(9464));
    }

    /// A fresh directory under the system temp dir.
    fn tempdir(what: &str) -> PathBuf {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let p = std::env::temp_dir().join(format!(
            "arches-xtask-{what}-{}-{nanos}",
            std::process::id()
        ));
        std::fs::create_dir_all(&p).unwrap();
        p
    }
}
