//! mschedctl: stop, pause, resume, step the scheduler; change or list the
//! configuration at run time.

use arches_api::SchedulerControl;
use clap::{ArgGroup, Parser};

use crate::common::{no_xml, print, print_action, print_json, Connection, Format, Output};
use crate::render::mdiag;
use crate::EXIT_OK;

/// Control the scheduler.
#[derive(Debug, Parser)]
#[command(
    name = "mschedctl",
    about = "Control the scheduler: kill, pause, resume, step, modify or list the configuration",
    long_about = "Administrative control of the moab daemon: -k stops it, -p pauses scheduling \
(state keeps being updated), -r resumes it, -s stops at an iteration, -S steps iterations, \
-m config changes a parameter at run time, -l config lists the configuration in effect.",
    group(ArgGroup::new("op").required(true).args([
        "kill", "pause", "resume", "stop", "step", "modify", "list", "flush", "annotate",
        "log_level", "recycle", "trace", "create", "destroy"
    ]))
)]
pub struct Mschedctl {
    /// Kill: stop scheduling and exit.
    #[arg(short = 'k')]
    pub kill: bool,
    /// Pause scheduling; cluster and workload state keep being updated.
    #[arg(short = 'p')]
    pub pause: bool,
    /// Resume scheduling, now or after SECONDS.
    #[arg(short = 'r', value_name = "SECONDS", num_args = 0..=1, default_missing_value = "")]
    pub resume: Option<String>,
    /// Stop scheduling at iteration N (default: the end of the current one).
    #[arg(short = 's', value_name = "ITERATION", num_args = 0..=1, default_missing_value = "")]
    pub stop: Option<String>,
    /// Step N scheduling iterations (default 1), then stop.
    #[arg(short = 'S', value_name = "COUNT", num_args = 0..=1, default_missing_value = "1")]
    pub step: Option<String>,
    /// Modify: `-m config "PARAMETER VALUE"`.
    #[arg(short = 'm', value_names = ["OBJECT", "STRING"], num_args = 1..=2)]
    pub modify: Option<Vec<String>>,
    /// With -m: only evaluate the change, do not apply it.
    #[arg(short = 'e')]
    pub evaluate: bool,
    /// List: `-l config`.
    #[arg(short = 'l', value_name = "OBJECT", num_args = 0..=1, default_missing_value = "config")]
    pub list: Option<String>,
    /// Flush (reset) statistics: all (default), usage, fairshare or estimates.
    #[arg(short = 'f', value_name = "TYPE", num_args = 0..=1, default_missing_value = "all")]
    pub flush: Option<String>,
    /// Annotate: record MESSAGE in the daemon's log.
    #[arg(short = 'A', value_name = "MESSAGE")]
    pub annotate: Option<String>,
    /// Change the daemon's log level (0-9, default 7) at run time.
    #[arg(short = 'L', value_name = "LOGLEVEL", num_args = 0..=1, default_missing_value = "7")]
    pub log_level: Option<String>,
    /// Recycle (restart) the daemon: not supported, restart it with the service manager.
    #[arg(short = 'R', value_name = "SAVESTATE", num_args = 0..=1, default_missing_value = "")]
    pub recycle: Option<String>,
    /// Write a resource trace: not supported (use 'mdiag -n --format=json').
    #[arg(short = 'n')]
    pub trace: bool,
    /// Create a message, trigger or VPC: not supported (Arches has none of them).
    #[arg(short = 'c', value_names = ["OBJECT", "ARGS"], num_args = 1..)]
    pub create: Option<Vec<String>>,
    /// Destroy a message, trigger or VPC: not supported (Arches has none of them).
    #[arg(short = 'd', value_name = "OBJECT", num_args = 1..)]
    pub destroy: Option<Vec<String>>,
    #[command(flatten)]
    pub output: Output,
    #[command(flatten)]
    pub conn: Connection,
}

fn number<T: std::str::FromStr>(s: &str, what: &str) -> Result<Option<T>, String> {
    if s.is_empty() {
        return Ok(None);
    }
    let digits = s.trim_end_matches(['I', 'i']);
    digits
        .parse()
        .map(Some)
        .map_err(|_| format!("ERROR:    invalid {what} '{s}'"))
}

/// Runs mschedctl.
pub fn exec(a: Mschedctl) -> Result<u8, String> {
    let client = a.conn.client().map_err(|e| e.to_string())?;
    if let Some(obj) = &a.list {
        if !obj.eq_ignore_ascii_case("config") {
            return Err(format!(
                "ERROR:    cannot list '{obj}' (only 'config' is supported)"
            ));
        }
        let c = client.config().map_err(|e| e.to_string())?;
        match a.output.format() {
            Format::Json => print_json(&c)?,
            Format::Xml => return Err(no_xml("mschedctl -l")),
            Format::Text => print(&mdiag::render_config(&c)),
        }
        return Ok(EXIT_OK);
    }
    if a.recycle.is_some() {
        return Err("ERROR:    'mschedctl -R' (recycle) is not supported by Arches: restart the daemon with its service manager; running jobs keep running and are re-adopted".into());
    }
    if a.trace {
        return Err("ERROR:    'mschedctl -n' (resource trace) is not supported by Arches: 'mdiag -n --format=json' gives every node's resources".into());
    }
    if let Some(c) = &a.create {
        return Err(format!(
            "ERROR:    cannot create '{}': Arches has no scheduler messages, triggers or VPCs",
            c[0]
        ));
    }
    if let Some(d) = &a.destroy {
        return Err(format!(
            "ERROR:    cannot destroy '{}': Arches has no scheduler messages, triggers or VPCs",
            d[0]
        ));
    }
    let op = if a.kill {
        SchedulerControl::Kill
    } else if let Some(f) = &a.flush {
        SchedulerControl::Flush { what: f.clone() }
    } else if let Some(l) = &a.log_level {
        SchedulerControl::LogLevel {
            level: number(l, "log level")?,
        }
    } else if let Some(m) = &a.annotate {
        SchedulerControl::Annotate { message: m.clone() }
    } else if a.pause {
        SchedulerControl::Pause
    } else if let Some(r) = &a.resume {
        SchedulerControl::Resume {
            after_secs: number(r, "resume time")?,
        }
    } else if let Some(s) = &a.stop {
        SchedulerControl::Stop {
            iteration: number(s, "iteration")?,
        }
    } else if let Some(s) = &a.step {
        SchedulerControl::Step {
            iterations: number(s, "iteration count")?.unwrap_or(1),
        }
    } else if let Some(m) = &a.modify {
        if !m[0].eq_ignore_ascii_case("config") {
            return Err(format!(
                "ERROR:    cannot modify '{}' (only 'config' is supported)",
                m[0]
            ));
        }
        let line = match m.get(1) {
            Some(l) => l.clone(),
            None => {
                let mut s = String::new();
                std::io::Read::read_to_string(&mut std::io::stdin(), &mut s)
                    .map_err(|e| format!("ERROR:    cannot read configuration from stdin ({e})"))?;
                s.trim().to_string()
            }
        };
        SchedulerControl::ModifyConfig {
            line,
            evaluate_only: a.evaluate,
        }
    } else {
        return Err("ERROR:    no operation specified".into());
    };
    let r = client.scheduler_control(&op).map_err(|e| e.to_string())?;
    Ok(print_action(&r))
}
