//! Site programs the daemon calls: the submit filter, the activation
//! filter, the mail transfer agent and the notification program.

use arches_core::Secs;

/// `SUBMITFILTER`, `ACTIVATIONFILTER`, `MAILPROGRAM`, `NOTIFICATIONPROGRAM`
/// and their timeouts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HooksConfig {
    /// `SUBMITFILTER`: run as the submitting user with the job XML on its
    /// standard input; prints the job XML to submit.
    pub submit_filter: Option<String>,
    /// `SUBMITFILTERTIMEOUT` (Arches).
    pub submit_filter_timeout: Secs,
    /// `ACTIVATIONFILTER` (Arches, after Windows HPC): called just before a
    /// job starts; its exit status lets it start, defers it or holds it.
    pub activation_filter: Option<String>,
    /// `ACTIVATIONFILTERTIMEOUT` (Arches).
    pub activation_filter_timeout: Secs,
    /// `MAILPROGRAM`: the mail transfer agent (`-m`/`-M` notifications).
    pub mail_program: String,
    /// `NOTIFICATIONPROGRAM`: called for every job event.
    pub notification_program: Option<String>,
    /// `RESIZESIGNAL` (Arches): the signal a resized (grown or shrunk)
    /// running job gets; `None`: none.
    pub resize_signal: Option<i32>,
}

impl Default for HooksConfig {
    fn default() -> Self {
        HooksConfig {
            submit_filter: None,
            submit_filter_timeout: 30,
            activation_filter: None,
            activation_filter_timeout: 30,
            mail_program: "/usr/sbin/sendmail".to_string(),
            notification_program: None,
            resize_signal: Some(28),
        }
    }
}
