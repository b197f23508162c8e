//! Options shared by every client (`--socket`, `--host`, `--timeout`,
//! `--xml`, `--format`), argv normalisation, and output helpers.

use std::ffi::OsString;
use std::io::Write;
use std::path::PathBuf;

use arches_api::ActionResponse;
use arches_client::{Client, ClientError};
use clap::{Args, ValueEnum};

/// Connection options accepted by every client command.
#[derive(Debug, Clone, Args)]
pub struct Connection {
    /// Unix socket of the moab daemon (default: $MOAB_SOCKET, else
    /// $MOABHOMEDIR/moab.sock, else ~/.arches/moab.sock if it exists, else the
    /// system service's /run/arches/moab.sock).
    #[arg(long, value_name = "PATH")]
    pub socket: Option<PathBuf>,
    /// Server host. Accepted for compatibility with Moab clients
    /// (`--host=<master>`); Arches clients always talk to the local socket.
    #[arg(long, value_name = "HOST")]
    pub host: Option<String>,
    /// Seconds to wait for the daemon's answer before failing with
    /// `ERROR:  client timed out after N seconds` (Moab's CLIENTTIMEOUT, default 30).
    #[arg(long, value_name = "SECONDS", default_value_t = arches_client::DEFAULT_TIMEOUT_SECS)]
    pub timeout: u64,
}

impl Connection {
    /// Opens the connection (fails fast when no daemon listens).
    pub fn client(&self) -> Result<Client, ClientError> {
        Client::connect_with_timeout(self.socket.as_deref(), self.timeout)
    }
}

/// Output format selectable with `--format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
#[value(rename_all = "lower")]
pub enum Format {
    /// Moab's human-readable text (the default).
    Text,
    /// Moab's one-line XML document (`<Data>...</Data>`), same as `--xml`.
    Xml,
    /// The daemon's answer as JSON (the arches-api type; stable schema).
    Json,
}

/// `--xml` and `--format` for query commands.
#[derive(Debug, Clone, Args)]
pub struct Output {
    /// Print Moab's XML document instead of text.
    #[arg(long)]
    pub xml: bool,
    /// Output format: text, xml or json (case-insensitive, `--format=XML` works).
    #[arg(long, value_enum, ignore_case = true, value_name = "FORMAT")]
    pub format: Option<Format>,
}

impl Output {
    /// The effective format.
    pub fn format(&self) -> Format {
        match (self.format, self.xml) {
            (Some(f), _) => f,
            (None, true) => Format::Xml,
            (None, false) => Format::Text,
        }
    }
}

/// The error for a report that has no Moab XML form.
pub fn no_xml(what: &str) -> String {
    format!("ERROR:    XML output is not available for {what} (use --format=json)")
}

/// Splits argv elements such as `"-s -u"` (one element holding several
/// flags, as abipy passes to showq) into separate elements. Only elements
/// that start with `-` are split; values are never touched.
pub fn split_compound_flags(args: Vec<OsString>) -> Vec<OsString> {
    let mut out = Vec::with_capacity(args.len());
    for (i, a) in args.into_iter().enumerate() {
        match a.to_str() {
            Some(s) if i > 0 && s.starts_with('-') && s.contains(char::is_whitespace) => {
                out.extend(s.split_whitespace().map(OsString::from));
            }
            _ => out.push(a),
        }
    }
    out
}

/// Prints text exactly (no added newline).
pub fn print(text: &str) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes());
    let _ = out.flush();
}

/// Prints a JSON document (pretty, one trailing newline).
pub fn print_json<T: serde::Serialize>(value: &T) -> Result<(), String> {
    let s = serde_json::to_string_pretty(value).map_err(|e| format!("ERROR:    {e}"))?;
    print(&s);
    print("\n");
    Ok(())
}

/// Prints an action's lines (stdout lines to stdout, stderr lines to
/// stderr) and returns the exit status.
pub fn print_action(r: &ActionResponse) -> u8 {
    {
        let mut out = std::io::stdout().lock();
        for l in &r.stdout {
            let _ = writeln!(out, "{l}");
        }
        let _ = out.flush();
    }
    {
        let mut err = std::io::stderr().lock();
        for l in &r.stderr {
            let _ = writeln!(err, "{l}");
        }
    }
    if r.failed {
        crate::EXIT_ERROR
    } else {
        crate::EXIT_OK
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compound_flags_are_split_but_values_are_not() {
        let v: Vec<OsString> = ["showq", "-s -u", "bob", "a b"]
            .iter()
            .map(OsString::from)
            .collect();
        let got: Vec<String> = split_compound_flags(v)
            .into_iter()
            .map(|s| s.into_string().unwrap())
            .collect();
        assert_eq!(got, ["showq", "-s", "-u", "bob", "a b"]);
    }
}
