//! msub: submit a job script. The script comes from the file operand or
//! stdin and is copied at submit time; `#PBS`, `#MSUB` and `#MOAB`
//! directives in the script header are parsed with the same options as the
//! command line, and the command line wins.

use std::path::{Path, PathBuf};
use std::time::Duration;

use arches_api::{JobsRequest, Section, SubmitRequest};
use clap::{ArgAction, Parser};

use crate::common::{print, Connection};
use crate::render::xml::Element;
use crate::EXIT_OK;

/// Seconds between completion checks of `msub -K` (Moab's MSUBQUERYINTERVAL).
pub const QUERY_INTERVAL_SECS: u64 = 5;

/// Submit a job.
#[derive(Debug, Clone, Parser, Default)]
#[command(
    name = "msub",
    about = "Submit a batch job",
    long_about = "Submit a job script (the SCRIPT operand, or standard input) to the scheduler. \
Options may also be given in the script header as `#PBS`, `#MSUB` or `#MOAB` directive lines \
(before the first command); command-line options override directives. On success the job id is \
printed after an empty line; any rejection prints `ERROR:    cannot submit job - <reason>` on stderr, \
exits 1 and queues nothing. \
The input may also be a Moab job XML (`<job>...</job>`, as a SUBMITFILTER sees it): the job is \
what it says, with the options given on the command line laid over it. \
Output files: without -o/-e, stdout and stderr go to `<name>.o<id>` and `<name>.e<id>` in the \
directory msub ran in (the submission directory, Moab's `$SUBMISSIONDIR` and Torque's qsub \
behaviour), also when -d sets another working directory; relative -o/-e paths are resolved \
against the submission directory too. -j oe writes both streams to the output file, -j eo to the \
error file. -E is accepted for compatibility: the MOAB_* variables are always set. \
Job arrays (-t): the job id printed is the array's; sub-job INDEX is ID[INDEX], sees PBS_ARRAYID, \
MOAB_JOBARRAYINDEX and MOAB_JOBARRAYRANGE (the sub-job count), and writes <name>.o<id>-<index> \
(in -o/-e, %I is the index, %J the array id, $PBS_ARRAYID works too). Dependencies \
(-W depend=): [TYPE:][jobname.NAME|ID][:...][,...], afterok when no type is given; after, afterok, \
afternotok, afterany, before, beforeok, beforenotok, beforeany, and for a whole array ID[] \
afterstartarray, afterokarray, afternotokarray, afteranyarray. Script arguments: -F \"a b\" or the \
words after SCRIPT (-- before arguments that start with -). \
Site defaults: options in /etc/msubrc (or the file $MSUBRC names) apply to every script submission \
(not to a job XML input), under the directives and the command line. \
Interactive jobs (-I): msub prints `msub: waiting for job N to start`, \
waits for the allocation, prints `msub: job N ready` and becomes the terminal of a shell ($SHELL, \
or -S) running on the job's first node with the job's environment (PBS_JOBID, PBS_NODEFILE, \
PBS_O_WORKDIR...); with -x it runs the script there instead (without -x a script gives only its \
directives). Typed keys go to the job (Ctrl-C interrupts its foreground command), window size \
changes follow; the allocation ends when the shell exits (or is hung up at the wall-clock limit, \
or when msub goes away), msub prints `msub: job N completed`, restores the terminal and exits \
with the shell's status. Ctrl-C while waiting cancels the job. Only the job's owner can attach. \
On a Slurm resource manager the session is a step of the job's Slurm allocation that msub runs \
itself (srun --jobid=ID --overlap --pty, with the job's environment): srun must be in msub's PATH \
(else the job is canceled with an error), and a cancel or the wall-clock limit ends the session \
(msub then exits with its status). \
-X (X11 forwarding) is refused.",
    disable_help_flag = true,
    args_override_self = true
)]
pub struct Msub {
    /// Job is not eligible before this time: [[[[CC]YY]MM]DD]hhmm[.SS].
    #[arg(short = 'a', value_name = "DATETIME")]
    pub start_after: Option<String>,
    /// Account to charge.
    #[arg(short = 'A', value_name = "ACCOUNT")]
    pub account: Option<String>,
    /// Checkpoint interval: n, s, c or c=<minutes> (passed to the daemon as checkpoint=...).
    #[arg(short = 'c', value_name = "INTERVAL")]
    pub checkpoint: Option<String>,
    /// Directive prefix to look for instead of #PBS/#MSUB/#MOAB; '' disables directives.
    #[arg(short = 'C', value_name = "PREFIX")]
    pub prefix: Option<String>,
    /// Working directory of the job (relative paths are resolved against the current directory); default: the directory msub runs in (PBS_O_WORKDIR). The job sees PBS_O_INITDIR when -d is given.
    #[arg(short = 'd', value_name = "PATH")]
    pub workdir: Option<String>,
    /// Standard error path: [host:]path (file or directory).
    #[arg(short = 'e', value_name = "PATH")]
    pub error: Option<String>,
    /// Arguments for the script, as one shell-quoted string: -F "a 'b c'".
    #[arg(short = 'F', value_name = "ARGUMENTS", allow_hyphen_values = true)]
    pub arguments: Option<String>,
    /// Add the MOAB_* variables to the job's environment (accepted for compatibility: Arches always sets MOAB_JOBID, MOAB_NODELIST, ...).
    #[arg(short = 'E')]
    pub moab_env: bool,
    /// Submit with a user hold.
    #[arg(short = 'h')]
    pub hold: bool,
    /// Interactive job: wait for the allocation, then run a shell (or, with -x, the script) on a terminal on its first node; the job ends when the shell exits (msub exits with its status).
    #[arg(short = 'I')]
    pub interactive: bool,
    /// With -I: run the script on the job's terminal instead of a shell (without -x an interactive job's script is read only for its directives).
    #[arg(short = 'x')]
    pub run_script: bool,
    /// X11 forwarding (not supported: refused).
    #[arg(short = 'X')]
    pub x11: bool,
    /// Join streams: oe merges both into the output file, eo into the error file, n keeps them apart.
    #[arg(short = 'j', value_name = "JOIN")]
    pub join: Option<String>,
    /// Keep streams on the execution host: e, o, eo, oe or n (passed as keep_files=...).
    #[arg(short = 'k', value_name = "KEEP")]
    pub keep: Option<String>,
    /// Wait until the job completes, then print `Job <id> completed`.
    #[arg(short = 'K')]
    pub wait: bool,
    /// Resource list, e.g. nodes=2:ppn=4,walltime=1:00:00 (repeatable, -lname=value works; for the same resource the last one wins, and the command line wins over directives; nodes= and select= are one resource); template=NAME requests a job template (JOBCFG[NAME] SELECT=TRUE); procs=MIN-MAX makes a malleable job (it starts on MIN processors and may grow to MAX); deadline=HH:MM[:SS][_MO/DD[/YY]] or deadline=+DURATION (after submission) asks the job to complete by then: guaranteed with a reservation when its QoS has QFLAGS=DEADLINE (DEADLINEPOLICY decides if it cannot be met), otherwise kept for the priority (DEADLINEWEIGHT) with a warning.
    #[arg(short = 'l', value_name = "RESOURCES", action = ArgAction::Append)]
    pub resources: Vec<String>,
    /// Mail options: n, or any of a (abort), b (begin), e (end).
    #[arg(short = 'm', value_name = "MAILOPTIONS")]
    pub mail_options: Option<String>,
    /// Mail recipients: user[@host][,...].
    #[arg(short = 'M', value_name = "USERLIST")]
    pub mail_list: Option<String>,
    /// Job name (default: the script's file name, or STDIN).
    #[arg(short = 'N', value_name = "NAME")]
    pub name: Option<String>,
    /// Standard output path: [host:]path (file or directory).
    #[arg(short = 'o', value_name = "PATH")]
    pub output: Option<String>,
    /// User priority (-1024..0; positive values need ENABLEPOSUSERPRIORITY).
    #[arg(short = 'p', value_name = "PRIORITY", allow_hyphen_values = true)]
    pub priority: Option<String>,
    /// Destination class/queue: [queue][@server].
    #[arg(short = 'q', value_name = "QUEUE")]
    pub queue: Option<String>,
    /// Rerunable: y or n.
    #[arg(short = 'r', value_name = "y|n")]
    pub rerunable: Option<String>,
    /// Job array: [NAME][INDEXES][%LIMIT], e.g. 1-100, myarray[1-100]%5, 1-9:2, 1,5,7.
    #[arg(short = 't', value_name = "ARRAY")]
    pub array: Option<String>,
    /// Shell of the job: path[@host][,...].
    #[arg(short = 'S', value_name = "SHELL")]
    pub shell: Option<String>,
    /// Users the job may run as: user[@host][,...] (passed as user_list=...).
    #[arg(short = 'u', value_name = "USERLIST")]
    pub user_list: Option<String>,
    /// Variables to export: VAR[=value][,VAR...] (a bare VAR takes its current value).
    #[arg(short = 'v', value_name = "VARIABLES", action = ArgAction::Append)]
    pub variables: Vec<String>,
    /// Export the whole current environment.
    #[arg(short = 'V')]
    pub all_env: bool,
    /// Additional attributes, e.g. x=FLAGS:RESTARTABLE, depend=afterok:12 or umask=077 (the job's file-creation mask, octal) (repeatable).
    #[arg(short = 'W', value_name = "ATTRIBUTES", action = ArgAction::Append)]
    pub extensions: Vec<String>,
    /// Silent: do not print the job id.
    #[arg(short = 'z')]
    pub silent: bool,
    /// Print the answer as `<Data><job JobID="..."/></Data>`.
    #[arg(long)]
    pub xml: bool,
    /// Output format; xml is the same as --xml.
    #[arg(long, value_name = "FORMAT")]
    pub format: Option<String>,
    /// Print help.
    #[arg(long, action = ArgAction::Help)]
    pub help: Option<bool>,
    /// Job script (default: standard input).
    #[arg(value_name = "SCRIPT")]
    pub script: Option<PathBuf>,
    /// Arguments for the script (after SCRIPT; put `--` before arguments that start with `-`).
    #[arg(value_name = "ARG")]
    pub script_args: Vec<String>,
    #[command(flatten)]
    pub conn: ConnectionOpt,
}

/// [`Connection`] made `Default` for directive parsing.
#[derive(Debug, Clone, clap::Args, Default)]
pub struct ConnectionOpt {
    #[command(flatten)]
    pub inner: Option<Connection>,
}

pub use super::msub_script::{directives, read_script, shell_split, MAX_SCRIPT_BYTES};

/// `ERROR:    cannot submit job - <reason>`.
pub(crate) fn fail(reason: impl std::fmt::Display) -> String {
    format!("ERROR:    cannot submit job - {reason}")
}

/// The reason of a command-line (or directive) parse error, in words that
/// fit after `cannot submit job - `: `unknown option '-Z'`, `option '-N'
/// requires a value`...
pub(crate) fn usage_reason(e: &clap::Error) -> String {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    let arg = || match e.get(ContextKind::InvalidArg) {
        Some(ContextValue::String(s)) => s.split_whitespace().next().unwrap_or(s).to_string(),
        _ => String::new(),
    };
    match e.kind() {
        ErrorKind::UnknownArgument => format!("unknown option '{}'", arg()),
        ErrorKind::InvalidValue if matches!(e.get(ContextKind::InvalidValue), Some(ContextValue::String(v)) if v.is_empty()) =>
        {
            format!("option '{}' requires a value", arg())
        }
        ErrorKind::ArgumentConflict => format!("option '{}' given more than once", arg()),
        _ => e
            .to_string()
            .lines()
            .next()
            .unwrap_or("invalid arguments")
            .trim_start_matches("error: ")
            .to_string(),
    }
}

/// Merges directive options under command-line options (command line wins;
/// list options keep directive entries first so later ones override).
pub fn merge(dir: Msub, cli: Msub) -> Msub {
    fn pick<T>(c: Option<T>, d: Option<T>) -> Option<T> {
        c.or(d)
    }
    let cat = |d: Vec<String>, c: Vec<String>| -> Vec<String> { d.into_iter().chain(c).collect() };
    Msub {
        start_after: pick(cli.start_after, dir.start_after),
        account: pick(cli.account, dir.account),
        checkpoint: pick(cli.checkpoint, dir.checkpoint),
        prefix: cli.prefix,
        workdir: pick(cli.workdir, dir.workdir),
        error: pick(cli.error, dir.error),
        arguments: pick(cli.arguments, dir.arguments),
        moab_env: cli.moab_env || dir.moab_env,
        hold: cli.hold || dir.hold,
        interactive: cli.interactive || dir.interactive,
        run_script: cli.run_script || dir.run_script,
        x11: cli.x11 || dir.x11,
        join: pick(cli.join, dir.join),
        keep: pick(cli.keep, dir.keep),
        wait: cli.wait || dir.wait,
        resources: cat(dir.resources, cli.resources),
        mail_options: pick(cli.mail_options, dir.mail_options),
        mail_list: pick(cli.mail_list, dir.mail_list),
        name: pick(cli.name, dir.name),
        output: pick(cli.output, dir.output),
        priority: pick(cli.priority, dir.priority),
        queue: pick(cli.queue, dir.queue),
        rerunable: pick(cli.rerunable, dir.rerunable),
        array: pick(cli.array, dir.array),
        shell: pick(cli.shell, dir.shell),
        user_list: pick(cli.user_list, dir.user_list),
        variables: cat(dir.variables, cli.variables),
        all_env: cli.all_env || dir.all_env,
        extensions: cat(dir.extensions, cli.extensions),
        silent: cli.silent || dir.silent,
        xml: cli.xml || dir.xml,
        format: cli.format,
        help: None,
        script: cli.script,
        script_args: cli.script_args,
        conn: cli.conn,
    }
}

/// Resolves `-v` and `-V` into the environment list (`env` = the current
/// environment, sorted by name for determinism).
pub fn resolve_env(a: &Msub, env: &[(String, String)]) -> Result<Vec<(String, String)>, String> {
    let mut out: Vec<(String, String)> = Vec::new();
    let mut set = |k: String, v: String| {
        if let Some(e) = out.iter_mut().find(|e| e.0 == k) {
            e.1 = v;
        } else {
            out.push((k, v));
        }
    };
    if a.all_env {
        for (k, v) in env {
            set(k.clone(), v.clone());
        }
    }
    for list in &a.variables {
        for item in list.split(',') {
            let item = item.trim();
            if item.is_empty() {
                continue;
            }
            match item.split_once('=') {
                Some((k, v)) if !k.is_empty() => {
                    let v = v.trim_matches(|c| c == '\'' || c == '"');
                    set(k.to_string(), v.to_string())
                }
                Some(_) => return Err(fail(format!("invalid variable '{item}'"))),
                None => {
                    let v = env
                        .iter()
                        .find(|(k, _)| k == item)
                        .map(|(_, v)| v.clone())
                        .unwrap_or_default();
                    set(item.to_string(), v);
                }
            }
        }
    }
    Ok(out)
}

/// Builds the submission from merged options.
pub fn build_request(
    a: &Msub,
    script: String,
    cwd: &Path,
    env: &[(String, String)],
    argv: &[String],
    host: &str,
) -> Result<SubmitRequest, String> {
    if a.x11 {
        return Err(fail(
            "X11 forwarding (-X) is not supported: an interactive job (-I) gets a terminal only",
        ));
    }
    if a.run_script && !a.interactive {
        return Err(fail(
            "-x runs the script of an interactive job: it needs -I",
        ));
    }
    if a.run_script && a.script.is_none() {
        return Err(fail("-x needs a script file to run (none given)"));
    }
    if a.interactive && a.wait {
        return Err(fail(
            "-K cannot be combined with -I (msub -I already waits for the job)",
        ));
    }
    let priority = match &a.priority {
        Some(p) => Some(
            p.parse::<i64>()
                .map_err(|_| fail(format!("invalid priority '{p}'")))?,
        ),
        None => None,
    };
    let rerunable = match a.rerunable.as_deref() {
        None => None,
        Some(v) if v.eq_ignore_ascii_case("y") || v.eq_ignore_ascii_case("yes") => Some(true),
        Some(v) if v.eq_ignore_ascii_case("n") || v.eq_ignore_ascii_case("no") => Some(false),
        Some(v) => {
            return Err(fail(format!(
                "invalid rerunable value '{v}' (expected y or n)"
            )))
        }
    };
    // Torque: `oe` merges both streams into the output file, `eo` into the
    // error file.
    let (join, join_to_error) = match a.join.as_deref() {
        None | Some("n") => (false, false),
        Some("oe") => (true, false),
        Some("eo") => (true, true),
        Some(v) => {
            return Err(fail(format!(
                "invalid join value '{v}' (expected oe, eo or n)"
            )))
        }
    };
    let workdir = a.workdir.as_ref().map(|d| {
        let p = Path::new(d);
        if p.is_absolute() {
            d.clone()
        } else {
            cwd.join(p).display().to_string()
        }
    });
    let name = a.name.clone().or_else(|| {
        a.script
            .as_ref()
            .and_then(|p| p.file_name())
            .map(|f| f.to_string_lossy().to_string())
    });
    let args = match (&a.arguments, a.script_args.is_empty()) {
        (Some(_), false) => {
            return Err(fail(
                "script arguments given both with -F and after the script",
            ))
        }
        (Some(f), true) => {
            shell_split(f).map_err(|e| fail(format!("invalid -F arguments ({e})")))?
        }
        (None, _) => a.script_args.clone(),
    };
    if !args.is_empty() && a.script.is_none() {
        return Err(fail(
            "script arguments need a script file (none given: standard input)",
        ));
    }
    if a.array.is_some() && a.interactive {
        return Err(fail("an interactive job cannot be a job array"));
    }
    let mut extensions = a.extensions.clone();
    if let Some(c) = &a.checkpoint {
        extensions.push(format!("checkpoint={c}"));
    }
    if let Some(k) = &a.keep {
        extensions.push(format!("keep_files={k}"));
    }
    if let Some(u) = &a.user_list {
        extensions.push(format!("user_list={u}"));
    }
    let mut env_out = resolve_env(a, env)?;
    // Torque's qsub: these of the submitting environment, as PBS_O_<NAME>.
    for name in ["HOME", "LANG", "LOGNAME", "PATH", "MAIL", "SHELL", "TZ"] {
        let key = format!("PBS_O_{name}");
        if env_out.iter().any(|(k, _)| *k == key) {
            continue;
        }
        if let Some((_, v)) = env.iter().find(|(k, _)| k == name) {
            env_out.push((key, v.clone()));
        }
    }
    Ok(SubmitRequest {
        script,
        script_path: a.script.as_ref().map(|p| {
            if p.is_absolute() {
                p.display().to_string()
            } else {
                cwd.join(p).display().to_string()
            }
        }),
        name: Some(name.unwrap_or_else(|| "STDIN".to_string())),
        resources: a.resources.clone(),
        extensions,
        class: a
            .queue
            .as_deref()
            .map(|q| q.split('@').next().unwrap_or(q).to_string())
            .filter(|q| !q.is_empty()),
        account: a.account.clone(),
        start_after: a.start_after.clone(),
        hold: a.hold,
        rerunable,
        priority,
        workdir,
        submit_dir: cwd.display().to_string(),
        output: a.output.clone(),
        error: a.error.clone(),
        join,
        join_to_error,
        shell: a.shell.clone(),
        env: env_out,
        moab_env: a.moab_env,
        mail_options: a.mail_options.clone(),
        mail_list: a.mail_list.clone(),
        submit_args: argv.join(" "),
        submit_host: host.to_string(),
        job_xml: None,
        array: a.array.clone(),
        args,
        interactive: a.interactive,
    })
}

/// Whether msub's input is a Moab job XML (`<job>...</job>`, optionally
/// after an XML declaration) rather than a job script.
pub fn is_job_xml(text: &str) -> bool {
    let mut t = text.trim_start_matches('\u{feff}').trim_start();
    if let Some(rest) = t.strip_prefix("<?xml") {
        t = rest.split_once("?>").map_or("", |(_, r)| r).trim_start();
    }
    t.strip_prefix("<job")
        .and_then(|r| r.chars().next())
        .is_some_and(|c| c == '>' || c.is_whitespace())
}

/// What msub prints after a successful submission: `\n<id>\n`, or the
/// XML answer `<Data><job JobID="<id>"/></Data>`, or nothing with `-z`.
pub fn render_submitted(id: u64, xml: bool, silent: bool) -> String {
    if xml {
        format!(
            "{}\n",
            Element::new("Data")
                .child(Element::new("job").attr("JobID", id))
                .render()
        )
    } else if silent {
        String::new()
    } else {
        format!("\n{id}\n")
    }
}

/// The line `msub -K` prints when the job has finished.
pub fn render_completed(id: u64) -> String {
    format!("Job {id} completed\n")
}

fn hostname() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: the buffer is valid for its whole length; gethostname writes
    // at most that many bytes.
    let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    if rc != 0 {
        return "localhost".into();
    }
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..end]).to_string()
}

pub(crate) fn parse_words(words: Vec<String>) -> Result<Msub, clap::Error> {
    use clap::{CommandFactory, FromArgMatches};
    let argv = std::iter::once("msub".to_string()).chain(words);
    let m = Msub::command().try_get_matches_from(argv)?;
    Msub::from_arg_matches(&m)
}

/// The submission msub sends, from its command line `cli` (as given in
/// `argv`), the script text and its surroundings: the script's directives
/// merged under the command line, `-v`/`-V` resolved against `env`. No I/O:
/// the whole of msub's parsing (fuzzed by `arches-fuzz`). A job XML input
/// (`<job>...</job>`) is passed on as is, with only what the command line
/// set explicitly (the daemon reads the XML).
pub fn assemble(
    cli: Msub,
    script: String,
    cwd: &Path,
    env: &[(String, String)],
    argv: &[String],
    host: &str,
) -> Result<(Msub, SubmitRequest), String> {
    assemble_with(Msub::default(), cli, script, cwd, env, argv, host)
}

/// [`assemble`] with the site defaults `site` (`/etc/msubrc`, read by the
/// caller) under the directives and the command line. A job XML input
/// takes no site defaults: everything the request carries besides the XML
/// overrides it in the daemon, and a default must not override the XML.
pub fn assemble_with(
    site: Msub,
    cli: Msub,
    script: String,
    cwd: &Path,
    env: &[(String, String)],
    argv: &[String],
    host: &str,
) -> Result<(Msub, SubmitRequest), String> {
    let xml_input = is_job_xml(&script);
    let words = if xml_input {
        Vec::new()
    } else {
        directives(&script, cli.prefix.as_deref())?
    };
    let dir = if words.is_empty() {
        Msub::default()
    } else {
        let d = parse_words(words).map_err(|e| {
            fail(format!(
                "invalid directive in script ({})",
                usage_reason(&e)
            ))
        })?;
        if d.script.is_some() {
            return Err(fail("a directive names a script operand"));
        }
        d
    };
    // Site defaults (/etc/msubrc) under the directives and the command line.
    let site = if xml_input { Msub::default() } else { site };
    let a = merge(merge(site, dir), cli);
    let mut req = build_request(&a, script, cwd, env, argv, host)?;
    if a.interactive && !a.run_script {
        // Torque: the script of an interactive job gives directives only;
        // the job runs the user's shell (-S, else $SHELL, else /bin/sh).
        let shell = a
            .shell
            .as_deref()
            .and_then(|s| s.split(',').next())
            .map(|s| s.split('@').next().unwrap_or(s).to_string())
            .filter(|s| !s.is_empty())
            .or_else(|| {
                env.iter()
                    .find(|(k, _)| k == "SHELL")
                    .map(|(_, v)| v.clone())
                    .filter(|v| !v.is_empty())
            })
            .unwrap_or_else(|| "/bin/sh".to_string());
        req.script = super::msub_interactive::shell_script(&shell);
        req.shell = None;
        req.args.clear();
    }
    if xml_input {
        req.job_xml = Some(std::mem::take(&mut req.script));
        req.script_path = None;
        req.name = a.name.clone();
    }
    Ok((a, req))
}

/// Runs msub.
pub fn exec(cli: Msub) -> Result<u8, String> {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    // An interactive job without a script file reads nothing: standard
    // input is the user's terminal.
    let script = if cli.interactive && cli.script.is_none() {
        String::new()
    } else {
        read_script(cli.script.as_deref())?
    };
    let site = super::msubrc::site_defaults()?;
    let cwd = std::env::current_dir()
        .map_err(|e| fail(format!("cannot determine current directory ({e})")))?;
    let mut env: Vec<(String, String)> = std::env::vars().collect();
    env.sort();
    let (a, req) = assemble_with(site, cli, script, &cwd, &env, &argv, &hostname())?;
    let conn = a.conn.inner.clone().unwrap_or(Connection {
        socket: None,
        host: None,
        timeout: arches_client::DEFAULT_TIMEOUT_SECS,
    });
    let client = conn.client().map_err(|e| e.to_string())?;
    let answer = client.submit(&req).map_err(|e| e.to_string())?;
    let id = answer.id;
    for w in &answer.warnings {
        eprintln!("WARNING:  {w}");
    }
    if a.interactive {
        return super::msub_interactive::run(&client, id);
    }
    let xml = a.xml
        || a.format
            .as_deref()
            .is_some_and(|f| f.eq_ignore_ascii_case("xml"));
    print(&render_submitted(id, xml, a.silent));
    if a.wait {
        loop {
            std::thread::sleep(Duration::from_secs(QUERY_INTERVAL_SECS));
            let v = one_job(&client, id)?;
            let done = v.jobs.is_empty()
                || v.jobs
                    .iter()
                    .all(|j| j.summary.section == Section::Completed);
            if done {
                print(&render_completed(id));
                break;
            }
        }
    }
    Ok(EXIT_OK)
}

/// The daemon's view of the job msub just submitted, completed or not
/// (`msub -K` and `msub -I` poll it).
pub(super) fn one_job(
    client: &arches_client::Client,
    id: u64,
) -> Result<arches_api::JobsView, String> {
    client
        .jobs(&JobsRequest {
            ids: vec![id.to_string()],
            completed: true,
            ..Default::default()
        })
        .map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(words: &[&str]) -> Msub {
        parse_words(words.iter().map(|s| s.to_string()).collect()).unwrap()
    }

    #[test]
    fn job_xml_input_is_recognised() {
        assert!(is_job_xml("<job><SubmitString>x</SubmitString></job>"));
        assert!(is_job_xml(
            "\u{feff}  <?xml version=\"1.0\"?>\n<job>\n</job>"
        ));
        assert!(is_job_xml("<job\n>"));
        assert!(!is_job_xml("#!/bin/sh\n<job>"));
        assert!(!is_job_xml("<jobs>"));
        assert!(!is_job_xml("echo <job>"));
    }

    #[test]
    fn site_defaults_apply_to_scripts_not_to_a_job_xml() {
        let site = || p(&["-q", "sitewide", "-l", "walltime=60"]);
        let run = |script: &str| {
            assemble_with(
                site(),
                Msub::default(),
                script.to_string(),
                Path::new("/home/alice"),
                &[],
                &[],
                "login1",
            )
            .unwrap()
            .1
        };
        let r = run("#!/bin/sh\ntrue\n");
        assert_eq!(r.class.as_deref(), Some("sitewide"));
        assert_eq!(r.resources, ["walltime=60"]);
        // The XML says what the job is; a default must not override it.
        let r = run("<job><Queue>mine</Queue></job>");
        assert!(r.job_xml.is_some());
        assert_eq!(r.class, None);
        assert!(r.resources.is_empty());
    }

    #[test]
    fn attached_l_and_repeats() {
        let a = p(&["-los=CLE_quad_cache", "-l", "nodes=2", "-lwalltime=60"]);
        assert_eq!(a.resources, ["os=CLE_quad_cache", "nodes=2", "walltime=60"]);
    }

    #[test]
    fn usage_errors_read_as_submission_errors() {
        let e = |words: &[&str]| {
            let words = words.iter().map(|s| s.to_string()).collect();
            usage_reason(&parse_words(words).unwrap_err())
        };
        assert_eq!(e(&["-Z"]), "unknown option '-Z'");
        assert_eq!(e(&["--bogus", "x"]), "unknown option '--bogus'");
        assert_eq!(e(&["-N"]), "option '-N' requires a value");
        assert_eq!(e(&["job.sh", "-l"]), "option '-l' requires a value");
        // Repeated options: the last one wins, as with getopt.
        let a = p(&["-N", "a", "-N", "b", "-h", "-h"]);
        assert_eq!(a.name.as_deref(), Some("b"));
        assert!(a.hold);
    }

    #[test]
    fn command_line_wins() {
        let d = p(&["-N", "fromscript", "-q", "batch", "-l", "walltime=10"]);
        let c = p(&["-N", "fromcli", "-l", "walltime=20", "job.sh"]);
        let m = merge(d, c);
        assert_eq!(m.name.as_deref(), Some("fromcli"));
        assert_eq!(m.queue.as_deref(), Some("batch"));
        assert_eq!(m.resources, ["walltime=10", "walltime=20"]);
    }

    #[test]
    fn env_resolution() {
        let env = vec![
            ("HOME".to_string(), "/home/u".to_string()),
            ("PATH".to_string(), "/bin".to_string()),
        ];
        let a = p(&["-v", "K=V,HOME", "-v", "X='q'"]);
        assert_eq!(
            resolve_env(&a, &env).unwrap(),
            [
                ("K".to_string(), "V".to_string()),
                ("HOME".to_string(), "/home/u".to_string()),
                ("X".to_string(), "q".to_string())
            ]
        );
        let all = p(&["-V", "-v", "PATH=/x"]);
        assert_eq!(
            resolve_env(&all, &env).unwrap(),
            [
                ("HOME".to_string(), "/home/u".to_string()),
                ("PATH".to_string(), "/x".to_string())
            ]
        );
    }

    #[test]
    fn request_fields() {
        let a = p(&[
            "-d",
            "sub",
            "-r",
            "y",
            "-j",
            "oe",
            "-q",
            "batch@server",
            "-p",
            "-5",
            "-h",
            "job.sh",
        ]);
        let r = build_request(
            &a,
            "echo".into(),
            Path::new("/work"),
            &[],
            &["-h".into()],
            "h1",
        )
        .unwrap();
        assert_eq!(r.workdir.as_deref(), Some("/work/sub"));
        assert_eq!(r.rerunable, Some(true));
        assert!(r.join && r.hold);
        assert_eq!(r.class.as_deref(), Some("batch"));
        assert_eq!(r.priority, Some(-5));
        assert_eq!(r.name.as_deref(), Some("job.sh"));
        assert_eq!(r.submit_dir, "/work");
        let stdin = p(&[]);
        let r = build_request(&stdin, "x".into(), Path::new("/"), &[], &[], "h").unwrap();
        assert_eq!(r.name.as_deref(), Some("STDIN"));
        assert!(!r.join_to_error);
        let eo = p(&["-j", "eo"]);
        let r = build_request(&eo, "x".into(), Path::new("/"), &[], &[], "h").unwrap();
        assert!(r.join && r.join_to_error);
        let bad = p(&["-j", "xy"]);
        let e = build_request(&bad, "x".into(), Path::new("/"), &[], &[], "h").unwrap_err();
        assert!(e.contains("invalid join value 'xy'"), "{e}");
        let bad = p(&["-r", "maybe"]);
        let e = build_request(&bad, "x".into(), Path::new("/"), &[], &[], "h").unwrap_err();
        assert!(e.starts_with("ERROR:    cannot submit job - "), "{e}");
        let inter = p(&["-I"]);
        assert!(
            build_request(&inter, "x".into(), Path::new("/"), &[], &[], "h")
                .unwrap()
                .interactive
        );
        let x11 = p(&["-I", "-X"]);
        let e = build_request(&x11, "x".into(), Path::new("/"), &[], &[], "h").unwrap_err();
        assert!(
            e.starts_with("ERROR:    cannot submit job - X11 forwarding (-X) is not supported"),
            "{e}"
        );
        let x = p(&["-x", "job.sh"]);
        let e = build_request(&x, "x".into(), Path::new("/"), &[], &[], "h").unwrap_err();
        assert!(e.contains("it needs -I"), "{e}");
    }
}
