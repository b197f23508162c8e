//! The job history: a purged job's record moves here in the commit that
//! purges it (`JOBCPURGETIME`), and is kept for as long as the statistics
//! profile reaches (`PROFILEDURATION` × `PROFILECOUNT`), so showhist.moab.pl
//! answers for jobs the daemon no longer holds. The script and environment
//! (the `payloads` table) do not follow: only what the job record says.

use rusqlite::{params, OptionalExtension, Transaction};

use crate::record::JobRecord;
use crate::{Store, StoreError};

pub(crate) const SCHEMA: &str = "CREATE TABLE IF NOT EXISTS history (
    id INTEGER PRIMARY KEY,
    user TEXT NOT NULL,
    finished_at INTEGER,
    record TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS history_finished ON history(finished_at);";

/// Moves the purged jobs' rows into the history (before they are deleted)
/// and drops history that ended before `before`.
pub(crate) fn record(
    tx: &Transaction<'_>,
    purged: &[u64],
    before: Option<i64>,
) -> Result<(), StoreError> {
    let mut keep = tx.prepare_cached(
        "INSERT OR REPLACE INTO history (id, user, finished_at, record)
         SELECT id, user, finished_at, record FROM jobs WHERE id = ?1",
    )?;
    for id in purged {
        keep.execute([*id as i64])?;
    }
    if let Some(t) = before {
        tx.prepare_cached("DELETE FROM history WHERE finished_at < ?1")?
            .execute(params![t])?;
    }
    Ok(())
}

impl Store {
    /// Opens the database at `path` for reading only (the daemon's request
    /// handlers read the history beside the actor's writing connection).
    pub fn open_read_only(path: &std::path::Path) -> Result<Store, StoreError> {
        let conn = rusqlite::Connection::open_with_flags(
            path,
            rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )?;
        conn.busy_timeout(std::time::Duration::from_secs(5))?;
        Ok(Store { conn })
    }

    /// A purged job's record from the history (`None`: not kept).
    pub fn history_record(&self, id: u64) -> Result<Option<JobRecord>, StoreError> {
        let text: Option<String> = self
            .conn
            .query_row(
                "SELECT record FROM history WHERE id = ?1",
                [id as i64],
                |r| r.get(0),
            )
            .optional()?;
        text.map(|t| {
            serde_json::from_str(&t).map_err(|e| StoreError::Corrupt {
                id,
                why: e.to_string(),
            })
        })
        .transpose()
    }

    /// The highest job id the history holds (ids are never handed out
    /// again).
    pub(crate) fn highest_history_job(&self) -> Result<Option<u64>, StoreError> {
        let max: Option<i64> = self
            .conn
            .query_row("SELECT MAX(id) FROM history", [], |r| r.get(0))?;
        Ok(max.map(|m| m as u64))
    }
}

#[cfg(test)]
mod tests {
    use crate::record::{ExecRecord, JobRecord};
    use crate::{Batch, Store};
    use arches_core::{Completion, CompletionCode, Job, Request};

    fn done(id: u64, at: i64) -> JobRecord {
        let mut job = Job::new(id, "alice", Request::procs(1), Some(60), 0);
        job.state = arches_core::JobState::Completed;
        job.completion = Some(Completion {
            time: at,
            code: CompletionCode::Exit(0),
        });
        JobRecord::new(&job, ExecRecord::default(), &Default::default())
    }

    #[test]
    fn a_purged_job_moves_to_the_history_which_keeps_its_window() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("h.db");
        let mut s = Store::open(&path).unwrap();
        s.commit(&Batch {
            upserts: vec![done(1, 100), done(2, 200), done(3, 300)],
            ..Batch::default()
        })
        .unwrap();
        s.commit(&Batch {
            deletes: vec![1, 2],
            ..Batch::default()
        })
        .unwrap();
        assert!(s.load_jobs().unwrap().iter().all(|r| r.job.id == 3));
        let reader = Store::open_read_only(&path).unwrap();
        assert_eq!(reader.history_record(2).unwrap(), Some(done(2, 200)));
        assert_eq!(reader.history_record(3).unwrap(), None, "not purged");
        // Purging 3 with a window from 150: job 1 (ended at 100) goes.
        s.commit(&Batch {
            deletes: vec![3],
            history_before: Some(150),
            ..Batch::default()
        })
        .unwrap();
        assert_eq!(reader.history_record(1).unwrap(), None);
        assert!(reader.history_record(3).unwrap().is_some());
        // Ids in the history are never handed out again.
        assert_eq!(s.next_id().unwrap(), 4);
        // A read-only connection cannot write.
        assert!(Store::open_read_only(&dir.path().join("none.db")).is_err());
    }
}
