//! `mrsvctl -r` of several reservations (ids, `ALL`, regular expressions,
//! `-g RSVGROUP`) and `mrsvctl -m`: the time frame (`duration`, `endtime`,
//! `starttime` with `=`, `+=`, `-=`), the hosts (`hostexp`), the processor
//! count (`reqtaskcount`), `flags`, `rsvgroup` and the access list (`-a
//! USER+=john,GROUP-=x,QOS==a:b`). A modified reservation is checked as a
//! new one is (hosts exist, the end after the start and after now, an
//! exclusive one overlaps nothing); a refused change leaves it as it was.

use arches_api::ActionResponse;
use arches_core::timespec::parse_duration;
use arches_core::{Acl, Reservation, Time};
use arches_store::ReservationRecord;

use crate::actor::Actor;

impl Actor {
    /// Releases every administrative reservation `expr` names (or of
    /// `group`); a token that names none is an error, and a standing
    /// reservation's instance is refused by name.
    pub(crate) fn release_reservations(
        &mut self,
        user: &str,
        expr: &str,
        group: Option<&str>,
        resp: &mut ActionResponse,
    ) {
        let ids: Vec<String> = self.state.reservations().map(|r| r.id.clone()).collect();
        let chosen: Vec<String> = match group {
            Some(g) => {
                let v: Vec<String> = self
                    .state
                    .reservations()
                    .filter(|r| r.group.as_deref() == Some(g))
                    .map(|r| r.id.clone())
                    .collect();
                if v.is_empty() {
                    resp.stderr
                        .push(format!("ERROR:  cannot locate reservation group '{g}'"));
                    resp.failed = true;
                    return;
                }
                v
            }
            None => match crate::rsvhosts::select_ids(expr, ids.iter().map(String::as_str)) {
                Ok(v) => v,
                Err(tok) => {
                    let standing = self
                        .cfg
                        .policy
                        .standing
                        .iter()
                        .any(|s| tok.starts_with(&format!("{}.", s.name)));
                    resp.stderr.push(if standing {
                        format!(
                            "ERROR:  reservation {tok} is a standing reservation (change SRCFG[...] in moab.cfg)"
                        )
                    } else {
                        format!("ERROR:  cannot locate reservation '{tok}'")
                    });
                    resp.failed = true;
                    return;
                }
            },
        };
        for id in chosen {
            if self.state.remove_reservation(&id).is_some() {
                self.rsv_changes.1.push(id.clone());
                self.wake = true;
                tracing::info!(rsv = %id, user = %user, "reservation released");
                resp.stdout.push(format!("reservation {id} released"));
            }
        }
    }

    /// `mrsvctl -m CHANGE... RSVID`: every change or none.
    pub(crate) fn modify_reservation(
        &mut self,
        id: &str,
        changes: &[String],
        now: Time,
        resp: &mut ActionResponse,
    ) {
        let Some(old) = self.state.reservation(id).cloned() else {
            let standing = self
                .cfg
                .policy
                .standing
                .iter()
                .any(|s| id.starts_with(&format!("{}.", s.name)));
            resp.stderr.push(if standing {
                format!("ERROR:  reservation {id} is a standing reservation (change SRCFG[...] in moab.cfg)")
            } else {
                format!("ERROR:  cannot locate reservation '{id}'")
            });
            resp.failed = true;
            return;
        };
        let classes = &self.cfg.policy.classes;
        let mut r = old.clone();
        let mut lines = Vec::new();
        for c in changes {
            match apply_change(&mut r, c, &self.state, classes, now) {
                Ok(attr) => lines.push(format!("{attr} for rsv '{id}' changed")),
                Err(e) => {
                    resp.stderr
                        .push(format!("ERROR:  cannot modify reservation {id}: {e}"));
                    resp.failed = true;
                    return;
                }
            }
        }
        if r.end.is_some_and(|e| e <= now) {
            resp.stderr.push(format!(
                "ERROR:  cannot modify reservation {id}: its end would be in the past"
            ));
            resp.failed = true;
            return;
        }
        self.state.remove_reservation(id);
        if let Err(e) = self.state.add_reservation(r.clone()) {
            // Put it back exactly as it was.
            let _ = self.state.add_reservation(old);
            resp.stderr
                .push(format!("ERROR:  cannot modify reservation {id}: {e}"));
            resp.failed = true;
            return;
        }
        self.rsv_changes.0.push(ReservationRecord::from_core(&r));
        self.wake = true;
        tracing::info!(rsv = %id, changes = ?changes, "reservation modified");
        resp.stdout.extend(lines);
    }
}

/// Applies one `ATTR{=,+=,-=}VALUE`; returns the attribute's name.
fn apply_change(
    r: &mut Reservation,
    change: &str,
    state: &arches_core::State,
    classes: &crate::rsvhosts::Classes,
    now: Time,
) -> Result<&'static str, String> {
    let (lhs, value) = change
        .split_once('=')
        .ok_or_else(|| format!("invalid change '{change}' (expected ATTR=VALUE)"))?;
    let (attr, op) = match lhs.strip_suffix('+') {
        Some(a) => (a, '+'),
        None => match lhs.strip_suffix('-') {
            Some(a) => (a, '-'),
            None => (lhs, '='),
        },
    };
    let value = value.trim();
    let dur = |v: &str| parse_duration(v).map_err(|_| format!("invalid duration '{v}'"));
    match attr.trim().to_ascii_lowercase().as_str() {
        "duration" => {
            let cur = r.end.map(|e| e - r.start);
            let new = match op {
                '=' if value.eq_ignore_ascii_case("INFINITY") => None,
                '=' => Some(dur(value)?),
                '+' => cur.map(|c| dur(value).map(|d| c + d)).transpose()?,
                _ => cur.map(|c| dur(value).map(|d| c - d)).transpose()?,
            };
            if new.is_some_and(|d| d <= 0) {
                return Err("the duration must be positive".to_string());
            }
            r.end = new.map(|d| r.start + d);
            Ok("duration")
        }
        "endtime" => {
            r.end = match op {
                '=' if value.eq_ignore_ascii_case("INFINITY") => None,
                '=' => Some(crate::rsvctl::parse_time(value, now)?),
                '+' => Some(r.end.ok_or("the reservation has no end")? + dur(value)?),
                _ => Some(r.end.ok_or("the reservation has no end")? - dur(value)?),
            };
            if r.end.is_some_and(|e| e <= r.start) {
                return Err("the end would not be after the start".to_string());
            }
            Ok("endtime")
        }
        "starttime" => {
            let len = r.end.map(|e| e - r.start);
            r.start = match op {
                '=' => crate::rsvctl::parse_time(value, now)?,
                '+' => r.start + dur(value)?,
                _ => r.start - dur(value)?,
            };
            r.end = len.map(|l| r.start + l);
            Ok("starttime")
        }
        "hostexp" | "hostlist" | "hosts" => {
            let hosts = crate::rsvhosts::host_expr(value, state, classes)?;
            match op {
                '=' => r.hosts = hosts,
                '+' => {
                    for h in hosts {
                        if !r.hosts.contains(&h) {
                            r.hosts.push(h);
                        }
                    }
                }
                _ => r.hosts.retain(|h| !hosts.contains(h)),
            }
            if r.hosts.is_empty() && r.procs == 0 {
                return Err("no host left".to_string());
            }
            Ok("hostexp")
        }
        "reqtaskcount" | "taskcount" | "procs" => {
            let n: u32 = value
                .parse()
                .map_err(|_| format!("invalid task count '{value}'"))?;
            r.procs = match op {
                '=' => n,
                '+' => r.procs.saturating_add(n),
                _ => r
                    .procs
                    .checked_sub(n)
                    .ok_or("the task count would be negative")?,
            };
            if r.hosts.is_empty() && r.procs == 0 {
                return Err("no task left".to_string());
            }
            Ok("reqtaskcount")
        }
        "flags" => {
            let list: Vec<String> = value
                .split([',', ':'])
                .filter(|f| !f.is_empty())
                .map(|f| f.to_ascii_uppercase())
                .collect();
            match op {
                '=' => r.flags = list,
                '+' => {
                    for f in list {
                        if !r.flags.contains(&f) {
                            r.flags.push(f);
                        }
                    }
                }
                _ => r.flags.retain(|f| !list.contains(f)),
            }
            Ok("flags")
        }
        "rsvgroup" => {
            r.group = (op != '-' && !value.is_empty()).then(|| value.to_string());
            Ok("rsvgroup")
        }
        "acl" => {
            modify_acl(&mut r.acl, value)?;
            Ok("ACL")
        }
        "label" => Err("reservation labels are not supported (use the reservation id)".to_string()),
        other => Err(format!("unknown attribute '{other}'")),
    }
}

/// `USER==a:b` replaces the users, `GROUP+=g` adds, `ACCT-=x` removes; a
/// comma separates entries (Moab's `mrsvctl -m -a`).
fn modify_acl(acl: &mut Acl, text: &str) -> Result<(), String> {
    for part in text.split(',').filter(|p| !p.trim().is_empty()) {
        let (kind, op, rest) = if let Some((k, v)) = part.split_once("+=") {
            (k, '+', v)
        } else if let Some((k, v)) = part.split_once("-=") {
            (k, '-', v)
        } else if let Some((k, v)) = part.split_once("==") {
            (k, '=', v)
        } else {
            return Err(format!(
                "invalid access list change '{part}' (expected TYPE==, TYPE+= or TYPE-=)"
            ));
        };
        let names: Vec<String> = rest
            .split(':')
            .map(|n| {
                n.trim_start_matches("==")
                    .trim_end_matches(['+', '-'])
                    .trim()
                    .to_string()
            })
            .filter(|n| !n.is_empty())
            .collect();
        let list = match kind.trim().to_ascii_uppercase().as_str() {
            "USER" => &mut acl.users,
            "GROUP" => &mut acl.groups,
            "ACCT" | "ACCOUNT" => &mut acl.accounts,
            "CLASS" => &mut acl.classes,
            "QOS" => &mut acl.qos,
            other => return Err(format!("unsupported access list type '{other}'")),
        };
        match op {
            '=' => *list = names,
            '+' => {
                for n in names {
                    if !list.contains(&n) {
                        list.push(n);
                    }
                }
            }
            _ => list.retain(|n| !names.contains(n)),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use arches_core::{Node, State};

    fn rsv() -> Reservation {
        Reservation {
            id: "system.1".into(),
            start: 1000,
            end: Some(2000),
            hosts: vec!["n1".into()],
            procs: 0,
            acl: Acl::default(),
            flags: Vec::new(),
            owner: None,
            standing: None,
            group: None,
        }
    }

    #[test]
    fn time_frame_changes() {
        let s = State::new(vec![Node::new("n1", 2, 0), Node::new("n2", 2, 0)]);
        let mut r = rsv();
        let ch = |r: &mut Reservation, c: &str| apply_change(r, c, &s, &Default::default(), 500);
        assert_eq!(ch(&mut r, "duration+=100"), Ok("duration"));
        assert_eq!(r.end, Some(2100));
        assert_eq!(ch(&mut r, "starttime+=50"), Ok("starttime"));
        assert_eq!((r.start, r.end), (1050, Some(2150)));
        assert_eq!(ch(&mut r, "endtime-=150"), Ok("endtime"));
        assert_eq!(r.end, Some(2000));
        assert!(ch(&mut r, "endtime-=2000").is_err());
        assert_eq!(ch(&mut r, "duration=INFINITY"), Ok("duration"));
        assert_eq!(r.end, None);
        assert!(ch(&mut r, "duration=-5").is_err());
        assert_eq!(ch(&mut r, "hostexp+=n2"), Ok("hostexp"));
        assert_eq!(r.hosts, ["n1", "n2"]);
        assert_eq!(ch(&mut r, "hostexp-=n1"), Ok("hostexp"));
        assert_eq!(r.hosts, ["n2"]);
        assert!(ch(&mut r, "hostexp-=n2").is_err());
        assert_eq!(ch(&mut r, "flags+=ignstate"), Ok("flags"));
        assert_eq!(r.flags, ["IGNSTATE"]);
        assert!(ch(&mut r, "colour=red").is_err());
    }

    #[test]
    fn acl_changes() {
        let mut a = Acl::default();
        modify_acl(&mut a, "USER==joe:bob,GROUP+=staff").unwrap();
        assert_eq!(
            (a.users.clone(), a.groups.clone()),
            (
                vec!["joe".to_string(), "bob".to_string()],
                vec!["staff".to_string()]
            )
        );
        modify_acl(&mut a, "USER-=joe,ACCT+=chem").unwrap();
        assert_eq!(
            (a.users.clone(), a.accounts.clone()),
            (vec!["bob".to_string()], vec!["chem".to_string()])
        );
        assert!(modify_acl(&mut a, "JATTR==x").is_err());
        assert!(modify_acl(&mut a, "USER").is_err());
    }
}
