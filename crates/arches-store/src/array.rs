//! The `arrays` table: one row per job array (`msub -t`), whatever its
//! size — the template every sub-job is made from, the index list as
//! written, the slot limit and which sub-jobs were made jobs so far
//! ([`arches_core::array`]). Sub-jobs that were made jobs are ordinary rows
//! of the `jobs` table; the script and environment are stored once, in the
//! `payloads` row of the array's id.

use arches_core::array::{ArrayJob, Indices};
use arches_core::GresTable;
use rusqlite::{params, Transaction};
use serde::{Deserialize, Serialize};

use crate::record::{ExecRecord, StoredJob};
use crate::{Batch, Store, StoreError};

pub(crate) const SCHEMA: &str = "CREATE TABLE IF NOT EXISTS arrays (
    id INTEGER PRIMARY KEY,
    record TEXT NOT NULL
);";

/// One array as stored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ArrayRecord {
    pub template: StoredJob,
    /// The array's execution record; each sub-job's output paths come from
    /// `output`/`error` below.
    pub exec: ExecRecord,
    /// The index list (`1-100`, `1-9:2,20`).
    pub indices: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slot_limit: Option<u32>,
    pub next: u32,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub extra: Vec<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cancelled: Option<i64>,
    /// Sub-jobs purged after succeeding, and otherwise.
    #[serde(default)]
    pub purged_ok: u32,
    #[serde(default)]
    pub purged_failed: u32,
    /// `-o` and `-e` as written (patterns: `%I`, `%J`, `$PBS_ARRAYID`...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// `-j eo`: both streams into the error file.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub join_to_error: bool,
}

impl ArrayRecord {
    /// Stores a core array with its execution record; `output`, `error`
    /// and `join_to_error` stay as they were (`table` names the generic
    /// resources of the template).
    pub fn refresh(&mut self, a: &ArrayJob, table: &GresTable) {
        self.template = StoredJob::from_job(&a.template, table);
        self.indices = a.indices.format();
        self.slot_limit = a.slot_limit;
        self.next = a.next;
        self.extra = a.extra.iter().copied().collect();
        self.cancelled = a.cancelled;
        self.purged_ok = a.purged_ok;
        self.purged_failed = a.purged_failed;
    }

    /// A record for a new array.
    pub fn new(a: &ArrayJob, exec: ExecRecord, table: &GresTable) -> Self {
        let mut r = ArrayRecord {
            template: StoredJob::from_job(&a.template, table),
            exec,
            indices: String::new(),
            slot_limit: None,
            next: 0,
            extra: Vec::new(),
            cancelled: None,
            purged_ok: 0,
            purged_failed: 0,
            output: None,
            error: None,
            join_to_error: false,
        };
        r.refresh(a, table);
        r
    }

    pub fn id(&self) -> u64 {
        self.template.id
    }

    /// Back to a core array, generic resources resolved against `table`.
    pub fn to_core(&self, table: &GresTable) -> Result<ArrayJob, StoreError> {
        let corrupt = |why: String| StoreError::Corrupt { id: self.id(), why };
        let indices =
            Indices::parse(&self.indices).map_err(|e| corrupt(format!("indices: {e}")))?;
        let mut a = ArrayJob::new(
            self.id(),
            self.template.to_job(table)?,
            indices,
            self.slot_limit,
        );
        if self.next > a.count() || self.extra.iter().any(|p| *p >= a.count()) {
            return Err(corrupt("sub-job positions beyond the array".to_string()));
        }
        a.next = self.next;
        a.extra = self.extra.iter().copied().collect();
        a.cancelled = self.cancelled;
        a.purged_ok = self.purged_ok;
        a.purged_failed = self.purged_failed;
        Ok(a)
    }
}

impl Store {
    /// Every stored array, by id.
    pub fn load_arrays(&self) -> Result<Vec<ArrayRecord>, StoreError> {
        let mut stmt = self
            .conn
            .prepare("SELECT id, record FROM arrays ORDER BY id")?;
        let rows = stmt.query_map([], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?)))?;
        let mut out = Vec::new();
        for row in rows {
            let (id, text) = row?;
            let rec: ArrayRecord =
                serde_json::from_str(&text).map_err(|e| StoreError::Corrupt {
                    id: id as u64,
                    why: format!("array: {e}"),
                })?;
            out.push(rec);
        }
        Ok(out)
    }
}

/// Writes a batch's arrays and deletes the purged ones.
pub(crate) fn commit(tx: &Transaction<'_>, batch: &Batch) -> Result<(), StoreError> {
    let mut put =
        tx.prepare_cached("INSERT OR REPLACE INTO arrays (id, record) VALUES (?1, ?2)")?;
    for r in &batch.array_upserts {
        let text = serde_json::to_string(r).map_err(|e| StoreError::Encode {
            id: r.id(),
            why: e.to_string(),
        })?;
        put.execute(params![r.id() as i64, text])?;
    }
    let mut del = tx.prepare_cached("DELETE FROM arrays WHERE id = ?1")?;
    for id in &batch.array_deletes {
        del.execute([*id as i64])?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use arches_core::{Job, Request};

    #[test]
    fn arrays_survive_reopen_and_purge() {
        let dir = std::env::temp_dir().join(format!("arches-store-array-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("a.db");
        let t = Job::new(0, "u", Request::procs(2), Some(60), 5);
        let mut a = ArrayJob::new(7, t, Indices::parse("1-9:2,20").unwrap(), Some(3));
        a.next = 2;
        a.extra.insert(4);
        let mut rec = ArrayRecord::new(&a, ExecRecord::default(), &GresTable::default());
        rec.output = Some("out.%I".into());
        {
            let mut s = Store::open(&path).unwrap();
            let batch = Batch {
                array_upserts: vec![rec.clone()],
                ..Batch::default()
            };
            s.commit(&batch).unwrap();
        }
        let s = Store::open(&path).unwrap();
        let back = s.load_arrays().unwrap();
        assert_eq!(back, [rec.clone()]);
        let b = back[0].to_core(&GresTable::default()).unwrap();
        assert_eq!((b.id, b.count(), b.slot_limit, b.next), (7, 6, Some(3), 2));
        assert!(b.materialized(4) && !b.materialized(3));
        assert_eq!(b.template.req.tasks, 2);
        let mut s = s;
        let batch = Batch {
            array_deletes: vec![7],
            ..Batch::default()
        };
        s.commit(&batch).unwrap();
        assert!(s.load_arrays().unwrap().is_empty());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
