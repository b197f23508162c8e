//! `mschedctl`: stop, pause, resume, stop/step at an iteration and runtime
//! configuration changes, with Moab 7's messages (moab-formats §12.2).

use std::sync::Arc;

use arches_api::{ActionResponse, SchedulerControl};
use arches_core::Time;

use crate::actor::{Actor, Caller};

impl Actor {
    pub(crate) fn control(
        &mut self,
        caller: &Caller,
        req: &SchedulerControl,
        now: Time,
    ) -> ActionResponse {
        let mut resp = ActionResponse::default();
        if let SchedulerControl::CredentialConfig { kind, name, .. } = req {
            if !caller.admin {
                return refuse(format!(
                    "ERROR:    user '{}' is not authorized to modify {} {name}",
                    caller.user,
                    moab_object(kind)
                ));
            }
        }
        if !caller.admin {
            resp.stderr.push(format!(
                "ERROR:    user '{}' is not authorized to run command",
                caller.user
            ));
            resp.failed = true;
            return resp;
        }
        let iteration = self.stats.iterations;
        match req {
            SchedulerControl::Kill => {
                self.stop = true;
                resp.stdout.push(format!(
                    "{} will be shutdown immediately",
                    self.cfg.scheduler_name.to_lowercase()
                ));
            }
            SchedulerControl::Pause => {
                if self.stats.paused {
                    resp.stdout
                        .push("scheduling was already paused".to_string());
                }
                self.stats.paused = true;
                self.resume_at = None;
                resp.stdout.push(
                    "scheduling will be disabled, cluster information will continue to be updated"
                        .to_string(),
                );
            }
            SchedulerControl::Resume {
                after_secs: Some(secs),
            } if *secs > arches_core::limits::MAX_WALLTIME => {
                return refuse(format!(
                    "ERROR:    invalid resume time {secs} (at most {} seconds)",
                    arches_core::limits::MAX_WALLTIME
                ));
            }
            SchedulerControl::Stop { iteration: Some(n) }
                if *n > arches_core::limits::MAX_ITERATIONS =>
            {
                return refuse(format!(
                    "ERROR:    invalid iteration {n} (at most {})",
                    arches_core::limits::MAX_ITERATIONS
                ));
            }
            SchedulerControl::Step { iterations }
                if *iterations > arches_core::limits::MAX_ITERATIONS =>
            {
                return refuse(format!(
                    "ERROR:    invalid iteration count {iterations} (at most {})",
                    arches_core::limits::MAX_ITERATIONS
                ));
            }
            SchedulerControl::LogLevel { level: Some(l) } if *l > 9 => {
                return refuse(format!("ERROR:    invalid log level {l} (0-9)"));
            }
            SchedulerControl::Resume { after_secs } => match after_secs {
                Some(secs) if *secs > 0 => {
                    self.resume_at = Some(now + secs);
                    resp.stdout
                        .push(format!("scheduling will resume in {secs} seconds"));
                }
                _ => {
                    self.stats.paused = false;
                    self.resume_at = None;
                    self.stop_at = None;
                    self.wake = true;
                    resp.stdout
                        .push("scheduling will resume immediately".to_string());
                }
            },
            SchedulerControl::Stop { iteration: at } => match at {
                Some(n) if *n > iteration => {
                    self.stop_at = Some(*n);
                    resp.stdout.push(self.stop_message(*n));
                }
                _ => {
                    if self.stats.paused {
                        resp.stdout
                            .push("scheduling was already stopped".to_string());
                    }
                    self.stats.paused = true;
                    resp.stdout.push(format!(
                        "scheduling will stop immediately at iteration {iteration}"
                    ));
                }
            },
            SchedulerControl::Step { iterations } => {
                let n = iteration.saturating_add((*iterations).max(1));
                self.stats.paused = false;
                self.stop_at = Some(n);
                self.wake = true;
                resp.stdout.push(self.stop_message(n));
            }
            SchedulerControl::Flush { what } => {
                let w = what.to_ascii_lowercase();
                match w.as_str() {
                    "all" | "usage" | "fairshare" => self.reset_stats(&w, now),
                    "estimates" => {
                        self.predictor =
                            arches_sim::predict::Predictor::new(self.cfg.moab.runtime_prediction);
                    }
                    _ => {
                        resp.stderr
                            .push(format!("ERROR:  unknown statistics type '{what}'"));
                        resp.failed = true;
                        return resp;
                    }
                }
                tracing::info!(what = %w, "statistics reset");
                resp.stdout
                    .push(format!("'{w}' statistics reset successfully"));
            }
            SchedulerControl::Annotate { message } => {
                let message = arches_api::text::escape(message);
                tracing::info!(user = %caller.user, message = %message, "annotation");
                resp.stdout.push(format!("annotation recorded: {message}"));
            }
            SchedulerControl::LogLevel { level } => {
                let level = level.unwrap_or(7);
                crate::set_log_level(level);
                resp.stdout
                    .push(format!("log level set to {level} (log file unchanged)"));
            }
            SchedulerControl::ModifyConfig {
                line,
                evaluate_only,
            } => {
                if self.modify_config(line, *evaluate_only, &mut resp) {
                    resp.stdout.push(format!(
                        "{} '{}'",
                        if *evaluate_only {
                            "valid configuration line"
                        } else {
                            "configuration modified:"
                        },
                        line.trim()
                    ));
                }
            }
            SchedulerControl::CredentialConfig {
                kind,
                name,
                attributes,
            } => {
                let Some(param) = cred_parameter(kind) else {
                    return refuse(format!("ERROR:    cannot modify object type {kind}"));
                };
                if name.is_empty() || name.contains(|c: char| c.is_whitespace() || c == ']') {
                    return refuse(format!(
                        "ERROR:    invalid {} name '{name}'",
                        moab_object(kind)
                    ));
                }
                if attributes.contains(['\n', '\r']) || attributes.trim().is_empty() {
                    return refuse(format!(
                        "ERROR:    invalid attributes '{}' (one line of ATTR=VALUE pairs)",
                        arches_api::text::escape(attributes)
                    ));
                }
                let line = format!("{param}[{name}] {}", attributes.trim());
                if self.modify_config(&line, false, &mut resp) {
                    resp.stdout
                        .push(format!("config adjusted for {} {name}", moab_object(kind)));
                }
            }
            SchedulerControl::CredentialReset { what, kind, name } => {
                return self.credential_reset(what, kind, name.as_deref());
            }
        }
        resp
    }

    /// `mcredctl -r stats|fairshare|all TYPE[:NAME]`, with Moab's messages
    /// (`MUICredCtl`'s reset): per credential `INFO:  profiling statistics
    /// reset for TYPE:NAME`, `INFO:  fairshare reset for TYPE:NAME in
    /// partition ALL` (users and accounts: Moab resets fairshare only for
    /// them), `INFO:  cannot reset fairshare info for ...` (the others).
    /// The credentials of the type are the configured ones and those with
    /// statistics or usage; `DEFAULT` is left out, as Moab does.
    fn credential_reset(&mut self, what: &str, kind: &str, name: Option<&str>) -> ActionResponse {
        use arches_core::accounting::CredKind;
        let w = what.to_ascii_lowercase();
        let (stats, fairshare) = if w.contains("stat") {
            (true, false)
        } else if w.contains("fairshare") {
            (false, true)
        } else if w.contains("all") {
            (true, true)
        } else {
            return refuse(format!(
                "ERROR:    invalid reset '{}' (stats, fairshare or all)",
                arches_api::text::escape(what)
            ));
        };
        let Some(k) = CredKind::parse(kind).filter(|k| *k != CredKind::Template) else {
            return refuse(format!("ERROR:    cannot reset object type {kind}"));
        };
        let name = name.filter(|n| !n.is_empty() && *n != "ALL");
        let p = &self.cfg.policy;
        let mut names: std::collections::BTreeSet<String> = match k {
            CredKind::User => p.users.keys().cloned().collect(),
            CredKind::Group => p.groups.keys().cloned().collect(),
            CredKind::Account => p.accounts.keys().cloned().collect(),
            CredKind::Class => p.classes.keys().cloned().collect(),
            CredKind::Qos => p.qos.keys().cloned().collect(),
            CredKind::Template => Default::default(),
        };
        let acc = &self.accounting;
        names.extend(
            acc.creds
                .keys()
                .chain(acc.fs.keys())
                .filter(|(kk, _)| *kk == k)
                .map(|(_, n)| n.clone()),
        );
        names.retain(|n| n != "DEFAULT" && n != "ALL" && name.is_none_or(|x| x == n));
        if let Some(n) = name {
            names.insert(n.to_string());
        }
        let obj = moab_object(kind);
        let mut resp = ActionResponse::default();
        let a = Arc::make_mut(&mut self.accounting);
        for n in &names {
            if stats {
                a.reset_cred_stats(k, n);
                resp.stdout
                    .push(format!("INFO:  profiling statistics reset for {obj}:{n}"));
            }
            if fairshare {
                if matches!(k, CredKind::User | CredKind::Account) {
                    a.reset_cred_fairshare(k, n);
                    resp.stdout.push(format!(
                        "INFO:  fairshare reset for {obj}:{n} in partition ALL"
                    ));
                } else {
                    resp.stdout.push(format!(
                        "INFO:  cannot reset fairshare info for {obj}:{n} in partition ALL"
                    ));
                }
            }
        }
        self.accounting_dirty = true;
        resp
    }

    /// Applies one moab.cfg line to the running configuration (not to the
    /// file); `false` with the errors in `resp` when it is invalid.
    fn modify_config(
        &mut self,
        line: &str,
        evaluate_only: bool,
        resp: &mut ActionResponse,
    ) -> bool {
        let mut moab = self.cfg.moab.clone();
        match moab.apply_line(line) {
            Ok(warnings) => {
                for w in warnings {
                    resp.stderr.push(format!("WARNING:  {}", w.message));
                }
                if !evaluate_only {
                    let mut cfg = crate::config::from_moab(
                        &self.cfg.home,
                        moab,
                        self.cfg.file.clone(),
                        self.cfg.warnings.clone(),
                    );
                    // Nodes are fixed for the life of the daemon.
                    cfg.nodes = self.cfg.nodes.clone();
                    self.cfg = Arc::new(cfg);
                    self.configure_profile();
                    self.wake = true;
                    tracing::info!(
                        line = %arches_api::text::escape(line),
                        "configuration modified"
                    );
                }
                true
            }
            Err(errors) => {
                for e in errors {
                    resp.stderr.push(format!("ERROR:  {}", e.message));
                }
                resp.failed = true;
                false
            }
        }
    }

    fn stop_message(&self, n: u64) -> String {
        let ahead = n.saturating_sub(self.stats.iterations);
        let secs = ahead.saturating_mul(self.cfg.policy.rm_poll_interval.max(1) as u64);
        format!(
            "scheduling will stop in {:02}:{:02}:{:02} at iteration {n}",
            secs / 3600,
            secs / 60 % 60,
            secs % 60
        )
    }
}

/// The moab.cfg parameter of a credential kind.
fn cred_parameter(kind: &str) -> Option<&'static str> {
    Some(match kind {
        "user" => "USERCFG",
        "group" => "GROUPCFG",
        "account" => "ACCOUNTCFG",
        "class" => "CLASSCFG",
        "qos" => "QOSCFG",
        _ => return None,
    })
}

/// Moab's object name of a credential kind (`MXO`).
fn moab_object(kind: &str) -> &str {
    match kind {
        "account" => "acct",
        k => k,
    }
}

/// A refused control request.
fn refuse(message: String) -> ActionResponse {
    ActionResponse {
        stderr: vec![message],
        failed: true,
        stdout: Vec::new(),
    }
}
