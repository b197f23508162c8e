//! The `starts` table: start intents. Before the daemon hands jobs to the
//! backend it commits, for each, the record the job will have once started
//! ([`Store::record_starts`]); the next commit that writes the job's record
//! (the confirmed start, or the failure) removes the intent. An intent still
//! present at start-up is a start decided but not confirmed before a crash:
//! the job may be running, so the daemon recovers it as started and lets the
//! backend tell whether it really is ([`Store::load_start_intents`]).

use rusqlite::{params, Transaction};

use crate::{Batch, JobRecord, Store, StoreError};

pub(crate) const SCHEMA: &str = "CREATE TABLE IF NOT EXISTS starts (
    id INTEGER PRIMARY KEY,
    record TEXT NOT NULL
);";

impl Store {
    /// Durably records that these jobs are about to be started, each with
    /// the record it will have once started (one transaction).
    pub fn record_starts(&mut self, intents: &[JobRecord]) -> Result<(), StoreError> {
        if intents.is_empty() {
            return Ok(());
        }
        let tx = self.conn.transaction()?;
        {
            let mut put =
                tx.prepare_cached("INSERT OR REPLACE INTO starts (id, record) VALUES (?1, ?2)")?;
            for rec in intents {
                let text = serde_json::to_string(rec).map_err(|e| StoreError::Encode {
                    id: rec.job.id,
                    why: e.to_string(),
                })?;
                put.execute(params![rec.job.id as i64, text])?;
            }
        }
        tx.commit()?;
        Ok(())
    }

    /// Start intents not yet superseded by a commit of their job, by id.
    pub fn load_start_intents(&self) -> Result<Vec<JobRecord>, StoreError> {
        self.load_start_intents_checked()?.into_iter().collect()
    }

    /// Start intents, each decoded or its error ([`StoreError::Corrupt`]).
    pub fn load_start_intents_checked(
        &self,
    ) -> Result<Vec<Result<JobRecord, StoreError>>, StoreError> {
        let mut stmt = self
            .conn
            .prepare("SELECT id, record FROM starts ORDER BY id")?;
        let rows = stmt.query_map([], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?)))?;
        let mut out = Vec::new();
        for row in rows {
            let (id, text) = row?;
            out.push(
                serde_json::from_str(&text).map_err(|e| StoreError::Corrupt {
                    id: id as u64,
                    why: format!("start intent: {e}"),
                }),
            );
        }
        Ok(out)
    }
}

/// A batch that writes or deletes a job's record settles its intent.
pub(crate) fn commit(tx: &Transaction<'_>, batch: &Batch) -> Result<(), StoreError> {
    let mut del = tx.prepare_cached("DELETE FROM starts WHERE id = ?1")?;
    for id in batch
        .upserts
        .iter()
        .map(|r| r.job.id)
        .chain(batch.deletes.iter().copied())
    {
        del.execute([id as i64])?;
    }
    Ok(())
}
