//! Who may see and do what: the daemon's one authorization module.
//!
//! Every request is identified once ([`Caller::identify`], from the socket's
//! peer credentials), and every route decides with the functions here:
//!
//! - [`Caller::admin`]: Moab's level-1 administrators (`ADMINCFG[1]`,
//!   legacy `ADMIN1`), root and the user the daemon runs as (Moab's
//!   primary administrator). They control the scheduler, every job and
//!   reservations.
//! - [`Caller::sees_all`]: administrators of levels 1–3 (Moab's operators
//!   and help desk: "access to all informational commands") see every job
//!   in detail.
//! - [`job_visibility`]: what a caller sees of one job. The owner and
//!   [`Caller::sees_all`] callers see it in [`Visibility::Detail`]
//!   (checkjob, `mdiag -j`, `mjobctl -q`, the XML and JSON forms of them,
//!   the detail route `POST /v1/jobs/detail`): its submit arguments,
//!   directories, files, messages. Everybody else sees it only in
//!   [`Visibility::Summary`]: the fields of showq (id, name, owner,
//!   credentials, state, size, times, priority), as Moab shows every user's
//!   jobs in showq; a detail request for it is refused with Moab's
//!   `user U is not authorized to check status of job 'J'`.
//! - Scripts and environments are never sent by any route: they live in
//!   the store's `payloads` table (a file only the daemon's user reads) and
//!   in the job's spool directory (the script owned by the job's user).
//!
//! A new read route that returns anything of a job beyond the summary must
//! call [`job_visibility`] (or [`Caller::may_see_detail`]) for each job;
//! docs/security.md lists what each route exposes.

use arches_core::Job;

use crate::config::DaemonConfig;
use crate::ident::{self, Peer};

/// An identified caller.
#[derive(Debug, Clone)]
pub struct Caller {
    pub peer: Peer,
    /// User name (`uid<N>` when the uid has no passwd entry).
    pub user: String,
    /// Level-1 administrator: may act on every job and on the scheduler.
    pub admin: bool,
    /// Administrator of level 1 to 3: may see every job in detail.
    pub sees_all: bool,
}

/// How much of a job a caller may see.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Visibility {
    /// Everything the daemon shows of a job (checkjob, mdiag -j...).
    Detail,
    /// The summary every user sees (showq's fields).
    Summary,
}

impl Caller {
    /// The caller behind `peer` as `cfg` grants it rights; `daemon_uid` is
    /// the daemon's own uid (its user is always an administrator).
    pub fn identify(cfg: &DaemonConfig, daemon_uid: u32, peer: Peer) -> Caller {
        let info = ident::user_by_uid(peer.uid);
        let user = info
            .as_ref()
            .map(|u| u.name.clone())
            .unwrap_or_else(|| format!("uid{}", peer.uid));
        let level = admin_level(cfg, info.as_ref(), &user);
        let primary = peer.uid == 0 || peer.uid == daemon_uid;
        let listed = cfg.admins.iter().any(|a| a == &user || a == "ALL");
        let admin = primary || listed || level == Some(1);
        Caller {
            peer,
            user,
            admin,
            sees_all: admin || level.is_some_and(|l| l <= 3),
        }
    }

    /// Whether the caller owns `job`.
    pub fn owns(&self, job: &Job) -> bool {
        job.cred.user == self.user
    }

    /// Whether the caller may see `job` in detail.
    pub fn may_see_detail(&self, job: &Job) -> bool {
        job_visibility(self, job) == Visibility::Detail
    }
}

/// What `caller` may see of `job` (see the module).
/// The `ADMINCFG[1..4]` user lists a caller may read (`mcredctl -q role`):
/// administrators (levels 1–3) read them whole; anyone else reads, per
/// level, only their own name and `ALL` where listed — enough for their own
/// roles, nothing about who else administers (Moab refuses a non-
/// administrator's role query about another user). `None`: unchanged.
pub fn admin_lists_for(caller: &Caller, lists: &[Vec<String>]) -> Option<Vec<Vec<String>>> {
    if caller.sees_all {
        return None;
    }
    Some(
        lists
            .iter()
            .map(|l| {
                l.iter()
                    .filter(|u| {
                        u.eq_ignore_ascii_case(&caller.user) || u.eq_ignore_ascii_case("ALL")
                    })
                    .cloned()
                    .collect()
            })
            .collect(),
    )
}

pub fn job_visibility(caller: &Caller, job: &Job) -> Visibility {
    if caller.sees_all || caller.owns(job) {
        Visibility::Detail
    } else {
        Visibility::Summary
    }
}

/// The caller's `ADMINCFG` level (1–5), by user name or group membership.
fn admin_level(cfg: &DaemonConfig, info: Option<&ident::UserInfo>, user: &str) -> Option<u8> {
    let groups: Vec<String> = if cfg.moab.admin_groups.iter().any(|g| !g.is_empty()) {
        info.map(|u| {
            ident::groups_of(u)
                .into_iter()
                .map(ident::group_name)
                .collect()
        })
        .unwrap_or_default()
    } else {
        Vec::new()
    };
    cfg.moab.admin_level(user, &groups)
}

#[cfg(test)]
mod tests {
    use super::*;
    use arches_core::Request;

    fn cfg(text: &str) -> DaemonConfig {
        let parsed = arches_config::parse(text, "moab.cfg");
        assert!(!parsed.has_errors());
        crate::config::from_moab(std::path::Path::new("/tmp"), parsed.config, None, vec![])
    }

    fn caller(cfg: &DaemonConfig, name: &str) -> Caller {
        // A uid nobody has: the name decides (as for users without passwd
        // entries, whose name is `uid<N>`).
        let mut c = Caller::identify(
            cfg,
            u32::MAX - 1,
            Peer {
                uid: u32::MAX - 2,
                gid: u32::MAX - 2,
            },
        );
        let level = cfg.moab.admin_level(name, &[]);
        c.user = name.to_string();
        c.admin = cfg.admins.iter().any(|a| a == name) || level == Some(1);
        c.sees_all = c.admin || level.is_some_and(|l| l <= 3);
        c
    }

    #[test]
    fn admin_lists_reach_only_administrators_whole() {
        let c = cfg("ADMINCFG[2] USERS=op\nADMINCFG[3] USERS=desk\nADMINCFG[4] USERS=ann,ALL\n");
        let lists = vec![
            vec!["root".to_string(), "boss".into()],
            vec!["op".into()],
            vec!["desk".into(), "Ann".into()],
            vec!["ann".into(), "ALL".into()],
        ];
        // Levels 2 and 3 read everything.
        for who in ["op", "desk"] {
            assert_eq!(admin_lists_for(&caller(&c, who), &lists), None, "{who}");
        }
        // Anyone else: their own name (any case) and ALL, per level.
        assert_eq!(
            admin_lists_for(&caller(&c, "ann"), &lists),
            Some(vec![
                vec![],
                vec![],
                vec!["Ann".into()],
                vec!["ann".into(), "ALL".into()]
            ])
        );
        assert_eq!(
            admin_lists_for(&caller(&c, "eve"), &lists),
            Some(vec![vec![], vec![], vec![], vec!["ALL".into()]])
        );
    }

    #[test]
    fn owners_and_admins_of_levels_one_to_three_see_details() {
        let cfg =
            cfg("ADMINCFG[1] USERS=boss\nADMINCFG[3] USERS=helpdesk\nADMINCFG[4] USERS=four\n");
        let job = Job::new(1, "alice", Request::procs(1), Some(60), 0);
        let see = |name: &str| job_visibility(&caller(&cfg, name), &job);
        assert_eq!(see("alice"), Visibility::Detail);
        assert_eq!(see("boss"), Visibility::Detail);
        assert_eq!(see("helpdesk"), Visibility::Detail);
        assert_eq!(see("four"), Visibility::Summary);
        assert_eq!(see("mallory"), Visibility::Summary);
        assert!(caller(&cfg, "boss").admin);
        assert!(!caller(&cfg, "helpdesk").admin);
    }

    #[test]
    fn root_and_the_daemon_user_are_administrators() {
        let cfg = cfg("");
        let root = Caller::identify(&cfg, 4242, Peer { uid: 0, gid: 0 });
        assert!(root.admin && root.sees_all);
        let me = Caller::identify(&cfg, 4242, Peer { uid: 4242, gid: 1 });
        assert!(me.admin && me.sees_all);
        let other = Caller::identify(&cfg, 4242, Peer { uid: 4243, gid: 1 });
        assert!(!other.admin && !other.sees_all);
    }
}
