//! Durable state of the `moab` daemon: SQLite (bundled) in WAL mode with
//! `synchronous=FULL`.
//!
//! Tables: `jobs` (the full record as a JSON blob plus indexed columns),
//! `meta` (the job id counter and scheduler metadata), `reservations`
//! (administrative reservations, `mrsvctl -c`, as JSON by id). Ids are numeric, never
//! reused: the counter survives restarts and purges. Writes are grouped: the
//! daemon collects every change of one actor turn into one [`Batch`] and
//! commits it in one transaction ([`Store::commit`]) before it acknowledges
//! anything (group commit).
//!
//! Core types are not `Serialize`: [`record`] converts them to and from the
//! stored form in one place.

pub mod accounting;
mod array;
mod aside;
mod history;
mod payload;
pub mod record;
mod starts;

use std::path::Path;

use rusqlite::{params, Connection, OptionalExtension};

pub use array::ArrayRecord;
pub use aside::{AsideRecord, RecordKind};
pub use record::{DeferRecord, ExecRecord, JobRecord, Payload, ReservationRecord, StageRecord};

/// Why a store operation failed.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("database error: {0}")]
    Sql(#[from] rusqlite::Error),
    #[error("corrupt job record {id}: {why}")]
    Corrupt { id: u64, why: String },
    #[error("cannot encode job record {id}: {why}")]
    Encode { id: u64, why: String },
    #[error("corrupt reservation record {id}: {why}")]
    CorruptReservation { id: String, why: String },
    #[error("cannot create {path}: {why}")]
    Io { path: String, why: String },
}

impl StoreError {
    /// Whether the database could not be written for lack of space (the
    /// disk or the user's quota is full: SQLite reports `ENOSPC` as
    /// `SQLITE_FULL`).
    pub fn is_disk_full(&self) -> bool {
        matches!(
            self,
            StoreError::Sql(rusqlite::Error::SqliteFailure(e, _))
                if e.code == rusqlite::ErrorCode::DiskFull
        )
    }

    /// Why a write failed, for a user: `no space left on the scheduler's
    /// disk`, or the database's own error.
    pub fn reason(&self) -> String {
        if self.is_disk_full() {
            "no space left on the scheduler's disk".to_string()
        } else {
            format!("the scheduler's database cannot be written ({self})")
        }
    }
}

/// Changes committed together in one transaction.
#[derive(Debug, Default)]
pub struct Batch {
    /// Records inserted or replaced.
    pub upserts: Vec<JobRecord>,
    /// Job ids purged for good.
    pub deletes: Vec<u64>,
    /// New value of the id counter (the next id to hand out), if it moved.
    pub next_id: Option<u64>,
    /// Scheduler metadata `(key, value)` to set.
    pub meta: Vec<(String, String)>,
    /// Administrative reservations inserted or replaced.
    pub rsv_upserts: Vec<ReservationRecord>,
    /// Administrative reservations released.
    pub rsv_deletes: Vec<String>,
    /// Scripts and environments of new jobs (`payloads` table).
    pub payloads: Vec<(u64, Payload)>,
    /// Job arrays inserted or replaced (`arrays` table).
    pub array_upserts: Vec<ArrayRecord>,
    /// Job arrays forgotten.
    pub array_deletes: Vec<u64>,
    /// With purges: the job history keeps only jobs that ended at or after
    /// this time ([`history`]).
    pub history_before: Option<i64>,
}

impl Batch {
    /// Whether the batch changes nothing.
    pub fn is_empty(&self) -> bool {
        self.upserts.is_empty()
            && self.deletes.is_empty()
            && self.next_id.is_none()
            && self.meta.is_empty()
            && self.rsv_upserts.is_empty()
            && self.rsv_deletes.is_empty()
            && self.payloads.is_empty()
            && self.array_upserts.is_empty()
            && self.array_deletes.is_empty()
    }
}

/// The open database.
pub struct Store {
    conn: Connection,
}

const NEXT_ID_KEY: &str = "next_job_id";

impl Store {
    /// Opens (creating if needed) the database at `path`.
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        create_private(path)?;
        let conn = Connection::open(path)?;
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.pragma_update(None, "synchronous", "FULL")?;
        conn.busy_timeout(std::time::Duration::from_secs(5))?;
        conn.execute_batch(
            "CREATE TABLE IF NOT EXISTS jobs (
                 id INTEGER PRIMARY KEY,
                 state TEXT NOT NULL,
                 user TEXT NOT NULL,
                 finished_at INTEGER,
                 record TEXT NOT NULL
             );
             CREATE INDEX IF NOT EXISTS jobs_state ON jobs(state);
             CREATE INDEX IF NOT EXISTS jobs_finished ON jobs(finished_at);
             CREATE TABLE IF NOT EXISTS meta (
                 key TEXT PRIMARY KEY,
                 value TEXT NOT NULL
             );
             CREATE TABLE IF NOT EXISTS reservations (
                 id TEXT PRIMARY KEY,
                 record TEXT NOT NULL
             );",
        )?;
        conn.execute_batch(payload::SCHEMA)?;
        conn.execute_batch(starts::SCHEMA)?;
        conn.execute_batch(array::SCHEMA)?;
        conn.execute_batch(aside::SCHEMA)?;
        conn.execute_batch(history::SCHEMA)?;
        Ok(Store { conn })
    }

    /// The next job id to hand out (1 on a new database).
    pub fn next_id(&self) -> Result<u64, StoreError> {
        let stored = self.meta(NEXT_ID_KEY)?.and_then(|v| v.parse::<u64>().ok());
        let max: Option<i64> = self
            .conn
            .query_row("SELECT MAX(id) FROM jobs", [], |r| r.get(0))?;
        let after_max = max.map_or(1, |m| m as u64 + 1);
        let after_aside = self.highest_aside_job()?.map_or(1, |m| m + 1);
        let after_history = self.highest_history_job()?.map_or(1, |m| m + 1);
        Ok(stored
            .unwrap_or(1)
            .max(after_max)
            .max(after_aside)
            .max(after_history))
    }

    /// A metadata value.
    pub fn meta(&self, key: &str) -> Result<Option<String>, StoreError> {
        Ok(self
            .conn
            .query_row("SELECT value FROM meta WHERE key = ?1", [key], |r| r.get(0))
            .optional()?)
    }

    /// Every stored job, by id.
    pub fn load_jobs(&self) -> Result<Vec<JobRecord>, StoreError> {
        let mut out = Vec::new();
        self.for_each_job(|rec| {
            out.push(rec);
            Ok::<(), StoreError>(())
        })?;
        Ok(out)
    }

    /// Hands every stored job to `f`, by id, one at a time (the daemon's
    /// start-up never holds all the decoded records at once).
    pub fn for_each_job<E: From<StoreError>>(
        &self,
        mut f: impl FnMut(JobRecord) -> Result<(), E>,
    ) -> Result<(), E> {
        self.for_each_job_checked(|rec| f(rec?))
    }

    /// Like [`Store::for_each_job`], handing each record that cannot be
    /// decoded to `f` as its error ([`StoreError::Corrupt`]) instead of
    /// stopping (a salvage start sets such records aside).
    pub fn for_each_job_checked<E: From<StoreError>>(
        &self,
        mut f: impl FnMut(Result<JobRecord, StoreError>) -> Result<(), E>,
    ) -> Result<(), E> {
        let mut stmt = self
            .conn
            .prepare("SELECT id, record FROM jobs ORDER BY id")
            .map_err(StoreError::from)?;
        let rows = stmt
            .query_map([], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?)))
            .map_err(StoreError::from)?;
        let mut legacy = Vec::new();
        for row in rows {
            let (id, text) = row.map_err(StoreError::from)?;
            let decoded: Result<JobRecord, _> = serde_json::from_str(&text);
            let mut rec = match decoded {
                Ok(rec) => rec,
                Err(e) => {
                    f(Err(StoreError::Corrupt {
                        id: id as u64,
                        why: e.to_string(),
                    }))?;
                    continue;
                }
            };
            if rec.exec.legacy_script.is_some() || rec.exec.legacy_env.is_some() {
                let payload = Payload {
                    script: rec.exec.legacy_script.take().unwrap_or_default(),
                    env: rec.exec.legacy_env.take().unwrap_or_default(),
                };
                rec.exec.executable = payload.executable();
                legacy.push((rec.clone(), payload));
            }
            f(Ok(rec))?;
        }
        drop(stmt);
        self.migrate_payloads(&legacy)?;
        Ok(())
    }

    /// Every stored administrative reservation, by id.
    pub fn load_reservations(&self) -> Result<Vec<ReservationRecord>, StoreError> {
        self.load_reservations_checked()?.into_iter().collect()
    }

    /// Every stored administrative reservation, by id, each decoded or
    /// its error ([`StoreError::CorruptReservation`]).
    pub fn load_reservations_checked(
        &self,
    ) -> Result<Vec<Result<ReservationRecord, StoreError>>, StoreError> {
        let mut stmt = self
            .conn
            .prepare("SELECT id, record FROM reservations ORDER BY id")?;
        let rows = stmt.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))?;
        let mut out = Vec::new();
        for row in rows {
            let (id, text) = row?;
            out.push(
                serde_json::from_str(&text).map_err(|e| StoreError::CorruptReservation {
                    id,
                    why: e.to_string(),
                }),
            );
        }
        Ok(out)
    }

    /// Commits a batch in one transaction; on error nothing was written.
    pub fn commit(&mut self, batch: &Batch) -> Result<(), StoreError> {
        if batch.is_empty() {
            return Ok(());
        }
        let tx = self.conn.transaction()?;
        {
            let mut up = tx.prepare_cached(
                "INSERT OR REPLACE INTO jobs (id, state, user, finished_at, record)
                 VALUES (?1, ?2, ?3, ?4, ?5)",
            )?;
            for rec in &batch.upserts {
                let text = serde_json::to_string(rec).map_err(|e| StoreError::Encode {
                    id: rec.job.id,
                    why: e.to_string(),
                })?;
                up.execute(params![
                    rec.job.id as i64,
                    rec.job.state,
                    rec.job.user,
                    rec.job.completion.as_ref().map(|c| c.time),
                    text
                ])?;
            }
            history::record(&tx, &batch.deletes, batch.history_before)?;
            let mut del = tx.prepare_cached("DELETE FROM jobs WHERE id = ?1")?;
            for id in &batch.deletes {
                del.execute([*id as i64])?;
            }
            let mut meta =
                tx.prepare_cached("INSERT OR REPLACE INTO meta (key, value) VALUES (?1, ?2)")?;
            if let Some(n) = batch.next_id {
                meta.execute(params![NEXT_ID_KEY, n.to_string()])?;
            }
            for (k, v) in &batch.meta {
                meta.execute(params![k, v])?;
            }
            let mut rup = tx.prepare_cached(
                "INSERT OR REPLACE INTO reservations (id, record) VALUES (?1, ?2)",
            )?;
            for r in &batch.rsv_upserts {
                let text =
                    serde_json::to_string(r).map_err(|e| StoreError::CorruptReservation {
                        id: r.id.clone(),
                        why: e.to_string(),
                    })?;
                rup.execute(params![r.id, text])?;
            }
            let mut rdel = tx.prepare_cached("DELETE FROM reservations WHERE id = ?1")?;
            for id in &batch.rsv_deletes {
                rdel.execute([id])?;
            }
            payload::commit(&tx, batch)?;
            array::commit(&tx, batch)?;
            starts::commit(&tx, batch)?;
        }
        tx.commit()?;
        Ok(())
    }
}

/// Creates the database file readable and writable by its owner only
/// (whatever the umask): it holds every job's script and environment.
/// SQLite gives the `-wal` and `-shm` files the database file's mode.
fn create_private(path: &Path) -> Result<(), StoreError> {
    use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
    if path.exists() {
        return Ok(());
    }
    let io = |e: std::io::Error| StoreError::Io {
        path: path.display().to_string(),
        why: e.to_string(),
    };
    let f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
        .map_err(io)?;
    f.set_permissions(std::fs::Permissions::from_mode(0o600))
        .map_err(io)
}

#[cfg(test)]
mod tests {
    use super::*;
    use arches_core::{HoldType, Job, Request};

    fn rec(id: u64) -> JobRecord {
        let mut job = Job::new(id, "alice", Request::procs(2), Some(60), 100);
        job.holds.insert(HoldType::User);
        JobRecord::new(&job, ExecRecord::default(), &Default::default())
    }

    #[test]
    fn payloads_are_stored_apart_and_purged_with_their_job() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("p.db");
        let p = Payload {
            script: "#!/bin/sh\necho hi\n".into(),
            env: vec![("A".into(), "1".into())],
        };
        let mut s = Store::open(&path).unwrap();
        s.commit(&Batch {
            upserts: vec![rec(1), rec(2)],
            payloads: vec![(1, p.clone()), (2, p.clone())],
            ..Batch::default()
        })
        .unwrap();
        assert_eq!(s.payload(1).unwrap(), Some(p.clone()));
        assert_eq!(s.payload(3).unwrap(), None);
        s.commit(&Batch {
            deletes: vec![2],
            ..Batch::default()
        })
        .unwrap();
        assert_eq!(s.payload(2).unwrap(), None);
        assert_eq!(p.executable(), "#!/bin/sh");
    }

    #[test]
    fn records_with_inline_scripts_are_migrated_to_payloads() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.db");
        let s = Store::open(&path).unwrap();
        let mut old = serde_json::to_value(rec(7)).unwrap();
        old["exec"]["script"] = "\n  sleep 1\n".into();
        old["exec"]["env"] = serde_json::json!([["X", "y"]]);
        s.conn
            .execute(
                "INSERT INTO jobs (id, state, user, record) VALUES (7, 'Idle', 'alice', ?1)",
                [old.to_string()],
            )
            .unwrap();
        let jobs = s.load_jobs().unwrap();
        assert_eq!(jobs[0].exec.executable, "  sleep 1");
        assert_eq!(jobs[0].exec.legacy_script, None);
        let p = s.payload(7).unwrap().expect("migrated");
        assert_eq!(p.script, "\n  sleep 1\n");
        assert_eq!(p.env, vec![("X".to_string(), "y".to_string())]);
        drop(s);
        let s = Store::open(&path).unwrap();
        let jobs = s.load_jobs().unwrap();
        assert_eq!(jobs[0].exec.legacy_script, None, "record rewritten");
        assert_eq!(jobs[0].exec.executable, "  sleep 1");
    }

    #[test]
    fn start_intents_last_until_their_job_is_written() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.db");
        {
            let mut s = Store::open(&path).unwrap();
            s.record_starts(&[rec(1), rec(2)]).unwrap();
        }
        let mut s = Store::open(&path).unwrap();
        let ids: Vec<u64> = s
            .load_start_intents()
            .unwrap()
            .iter()
            .map(|r| r.job.id)
            .collect();
        assert_eq!(ids, vec![1, 2], "intents survive a crash");
        s.commit(&Batch {
            upserts: vec![rec(1)],
            ..Batch::default()
        })
        .unwrap();
        let ids: Vec<u64> = s
            .load_start_intents()
            .unwrap()
            .iter()
            .map(|r| r.job.id)
            .collect();
        assert_eq!(ids, vec![2], "a commit of the job settles its intent");
    }

    #[test]
    fn reservations_survive_reopen_and_release() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.db");
        let r = arches_core::Reservation {
            id: "system.1".into(),
            start: 10,
            end: Some(100),
            hosts: vec!["n1".into()],
            procs: 0,
            acl: arches_core::Acl {
                users: vec!["alice".into()],
                ..arches_core::Acl::default()
            },
            flags: Vec::new(),
            owner: Some("root".into()),
            standing: None,
            group: None,
        };
        {
            let mut s = Store::open(&path).unwrap();
            let mut two = r.clone();
            two.id = "system.2".into();
            let b = Batch {
                rsv_upserts: vec![
                    ReservationRecord::from_core(&r),
                    ReservationRecord::from_core(&two),
                ],
                ..Batch::default()
            };
            s.commit(&b).unwrap();
            let b = Batch {
                rsv_deletes: vec!["system.2".into()],
                ..Batch::default()
            };
            s.commit(&b).unwrap();
        }
        let s = Store::open(&path).unwrap();
        let v = s.load_reservations().unwrap();
        assert_eq!(v.len(), 1);
        assert_eq!(v[0].to_core(), r);
    }

    #[test]
    fn jobs_and_counter_survive_reopen_and_purge() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.db");
        {
            let mut s = Store::open(&path).unwrap();
            assert_eq!(s.next_id().unwrap(), 1);
            let b = Batch {
                upserts: vec![rec(1), rec(2)],
                next_id: Some(3),
                ..Batch::default()
            };
            s.commit(&b).unwrap();
            let b = Batch {
                deletes: vec![2],
                ..Batch::default()
            };
            s.commit(&b).unwrap();
        }
        let s = Store::open(&path).unwrap();
        assert_eq!(s.next_id().unwrap(), 3, "purged id 2 is never reused");
        let jobs = s.load_jobs().unwrap();
        assert_eq!(jobs.len(), 1);
        let job = jobs[0].to_job(&Default::default()).unwrap();
        assert!(job.holds.contains(HoldType::User));
        assert_eq!(job.req.total_procs(), 2);
    }

    #[test]
    fn an_unreadable_record_is_set_aside_kept_and_its_id_never_reused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.db");
        let mut s = Store::open(&path).unwrap();
        s.commit(&Batch {
            upserts: vec![rec(1)],
            ..Batch::default()
        })
        .unwrap();
        s.conn
            .execute(
                "INSERT INTO jobs (id, state, user, record) VALUES (9, 'Idle', 'u', '{bad')",
                [],
            )
            .unwrap();
        let mut seen = Vec::new();
        s.for_each_job_checked(|r| {
            seen.push(r.map(|r| r.job.id).map_err(|e| e.to_string()));
            Ok::<(), StoreError>(())
        })
        .unwrap();
        assert_eq!(seen.len(), 2);
        assert_eq!(seen[0], Ok(1));
        assert!(seen[1]
            .as_ref()
            .unwrap_err()
            .contains("corrupt job record 9"));
        s.set_aside(RecordKind::Job, "9", "unreadable", 1234)
            .unwrap();
        assert_eq!(s.load_jobs().unwrap().len(), 1, "the rest loads");
        let aside = s.set_aside_records().unwrap();
        assert_eq!(
            aside,
            vec![AsideRecord {
                kind: "job".into(),
                id: "9".into(),
                record: "{bad".into(),
                why: "unreadable".into(),
                at: 1234
            }]
        );
        assert_eq!(s.next_id().unwrap(), 10, "id 9 is never handed out again");
    }

    #[test]
    fn the_database_and_its_wal_are_private_whatever_the_umask() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("private.db");
        // SAFETY: umask(2) cannot fail; restored below.
        let old = unsafe { libc::umask(0) };
        let opened = Store::open(&path);
        // SAFETY: as above.
        unsafe { libc::umask(old) };
        let mut s = opened.unwrap();
        s.commit(&Batch {
            upserts: vec![rec(1)],
            ..Batch::default()
        })
        .unwrap();
        for name in ["private.db", "private.db-wal", "private.db-shm"] {
            let m = std::fs::metadata(dir.path().join(name)).unwrap();
            assert_eq!(m.permissions().mode() & 0o777, 0o600, "{name}");
        }
    }

    #[test]
    fn corrupt_record_is_an_error_not_a_panic() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("b.db");
        let s = Store::open(&path).unwrap();
        s.conn
            .execute(
                "INSERT INTO jobs (id, state, user, record) VALUES (5, 'Idle', 'u', '{bad')",
                [],
            )
            .unwrap();
        assert!(matches!(
            s.load_jobs(),
            Err(StoreError::Corrupt { id: 5, .. })
        ));
    }
}
