//! The `set_aside` table: records that could not be read, moved out of
//! their table by a salvage start (`moab --salvage`) so that the daemon can
//! start without them. They are kept as they were (never deleted), with the
//! reason and the time, for an administrator to inspect or repair; a job id
//! set aside is never handed out again.

use rusqlite::params;

use crate::{Store, StoreError};

pub(crate) const SCHEMA: &str = "CREATE TABLE IF NOT EXISTS set_aside (
    kind TEXT NOT NULL,
    id TEXT NOT NULL,
    record TEXT NOT NULL,
    why TEXT NOT NULL,
    at INTEGER NOT NULL,
    PRIMARY KEY (kind, id)
);";

/// Which table a record set aside came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecordKind {
    /// `jobs`.
    Job,
    /// `starts` (a start intent).
    StartIntent,
    /// `reservations`.
    Reservation,
}

impl RecordKind {
    /// The name stored in `set_aside.kind`.
    pub fn as_str(self) -> &'static str {
        match self {
            RecordKind::Job => "job",
            RecordKind::StartIntent => "start intent",
            RecordKind::Reservation => "reservation",
        }
    }

    fn table(self) -> &'static str {
        match self {
            RecordKind::Job => "jobs",
            RecordKind::StartIntent => "starts",
            RecordKind::Reservation => "reservations",
        }
    }
}

/// A record set aside.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AsideRecord {
    pub kind: String,
    pub id: String,
    pub record: String,
    pub why: String,
    pub at: i64,
}

impl Store {
    /// Moves record `id` of `kind` into `set_aside` (one transaction), with
    /// why it could not be read and when.
    pub fn set_aside(
        &mut self,
        kind: RecordKind,
        id: &str,
        why: &str,
        at: i64,
    ) -> Result<(), StoreError> {
        let tx = self.conn.transaction()?;
        let table = kind.table();
        tx.execute(
            &format!(
                "INSERT OR REPLACE INTO set_aside (kind, id, record, why, at)
                 SELECT ?1, CAST(id AS TEXT), record, ?3, ?4 FROM {table} WHERE CAST(id AS TEXT) = ?2"
            ),
            params![kind.as_str(), id, why, at],
        )?;
        tx.execute(
            &format!("DELETE FROM {table} WHERE CAST(id AS TEXT) = ?1"),
            [id],
        )?;
        tx.commit()?;
        Ok(())
    }

    /// Every record set aside, by kind and id.
    pub fn set_aside_records(&self) -> Result<Vec<AsideRecord>, StoreError> {
        let mut stmt = self
            .conn
            .prepare("SELECT kind, id, record, why, at FROM set_aside ORDER BY kind, id")?;
        let rows = stmt.query_map([], |r| {
            Ok(AsideRecord {
                kind: r.get(0)?,
                id: r.get(1)?,
                record: r.get(2)?,
                why: r.get(3)?,
                at: r.get(4)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// The highest job id set aside (ids are never reused).
    pub(crate) fn highest_aside_job(&self) -> Result<Option<u64>, StoreError> {
        let max: Option<i64> = self.conn.query_row(
            "SELECT MAX(CAST(id AS INTEGER)) FROM set_aside WHERE kind = 'job'",
            [],
            |r| r.get(0),
        )?;
        Ok(max.map(|m| m as u64))
    }
}
