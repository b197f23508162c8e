//! The `payloads` table: each job's script and environment ([`Payload`]),
//! apart from its record. The daemon writes a payload with the job's first
//! commit and reads it back only when the job starts, so queued jobs do not
//! keep their scripts in memory.

use rusqlite::{params, Transaction};

use crate::record::Payload;
use crate::{Batch, Store, StoreError};

pub(crate) const SCHEMA: &str = "CREATE TABLE IF NOT EXISTS payloads (
    id INTEGER PRIMARY KEY,
    payload TEXT NOT NULL
);";

impl Store {
    /// The script and environment of a job (`None` when it has none stored).
    pub fn payload(&self, id: u64) -> Result<Option<Payload>, StoreError> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT payload FROM payloads WHERE id = ?1")?;
        let mut rows = stmt.query([id as i64])?;
        let Some(row) = rows.next()? else {
            return Ok(None);
        };
        let text: String = row.get(0)?;
        serde_json::from_str(&text)
            .map(Some)
            .map_err(|e| StoreError::Corrupt {
                id,
                why: format!("payload: {e}"),
            })
    }

    /// Moves the scripts and environments of records written before the
    /// `payloads` table existed into it (one transaction) and rewrites those
    /// records without them.
    pub(crate) fn migrate_payloads(
        &self,
        moved: &[(crate::JobRecord, Payload)],
    ) -> Result<(), StoreError> {
        if moved.is_empty() {
            return Ok(());
        }
        let tx = self.conn.unchecked_transaction()?;
        {
            let mut put =
                tx.prepare_cached("INSERT OR IGNORE INTO payloads (id, payload) VALUES (?1, ?2)")?;
            let mut rec = tx.prepare_cached("UPDATE jobs SET record = ?2 WHERE id = ?1")?;
            for (r, p) in moved {
                let id = r.job.id;
                put.execute(params![id as i64, encode(id, p)?])?;
                let text = serde_json::to_string(r).map_err(|e| StoreError::Encode {
                    id,
                    why: e.to_string(),
                })?;
                rec.execute(params![id as i64, text])?;
            }
        }
        tx.commit()?;
        Ok(())
    }
}

fn encode(id: u64, p: &Payload) -> Result<String, StoreError> {
    serde_json::to_string(p).map_err(|e| StoreError::Encode {
        id,
        why: e.to_string(),
    })
}

/// Writes a batch's payloads and deletes those of purged jobs.
pub(crate) fn commit(tx: &Transaction<'_>, batch: &Batch) -> Result<(), StoreError> {
    let mut put =
        tx.prepare_cached("INSERT OR REPLACE INTO payloads (id, payload) VALUES (?1, ?2)")?;
    for (id, p) in &batch.payloads {
        put.execute(params![*id as i64, encode(*id, p)?])?;
    }
    let mut del = tx.prepare_cached("DELETE FROM payloads WHERE id = ?1")?;
    for id in &batch.deletes {
        del.execute([*id as i64])?;
    }
    Ok(())
}
