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
    group(ArgGroup::new("op").required(true).args(["kill", "pause", "resume", "stop", "step", "modify", "list"]))
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
    let op = if a.kill {
        SchedulerControl::Kill
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
