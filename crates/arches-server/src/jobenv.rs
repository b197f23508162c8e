//! The job's environment at start: what depends on the moment and place
//! it starts (Torque's and Moab's variables), over what the submission
//! fixed (`jobspec::Submission::finalize`) and under what the backend adds
//! for the allocation (`PBS_NODEFILE`, `PBS_NP`, `MOAB_NODELIST`...,
//! `arches_rm::local::environment`).

use arches_core::{JobId, State};

/// Sets `key` to `value`, replacing an earlier value.
fn set(env: &mut Vec<(String, String)>, key: &str, value: String) {
    match env.iter_mut().find(|(k, _)| k == key) {
        Some(slot) => slot.1 = value,
        None => env.push((key.to_string(), value)),
    }
}

/// `PBS_WALLTIME` (seconds, the limit it runs under), `MOAB_QOS`,
/// `MOAB_PARTITION` (of its first node), `MOAB_MACHINE` (the resource
/// manager), `MOAB_DEPEND`, and a sub-job's array variables.
pub fn at_start(state: &State, rm: &str, id: JobId, env: &mut Vec<(String, String)>) {
    let Some(j) = state.job(id) else {
        return;
    };
    if let Some(w) = j.walltime {
        set(env, "PBS_WALLTIME", w.to_string());
    }
    set(
        env,
        "MOAB_QOS",
        j.cred.qos.as_deref().unwrap_or_default().into(),
    );
    let partition = j
        .run
        .as_ref()
        .and_then(|r| r.alloc.first())
        .and_then(|a| state.node(a.node))
        .map(|n| n.partition.clone())
        .or_else(|| j.req.partition.clone())
        .unwrap_or_else(|| "DEFAULT".to_string());
    set(env, "MOAB_PARTITION", partition);
    set(env, "MOAB_MACHINE", rm.to_string());
    let depend: Vec<String> = j
        .depend
        .iter()
        .map(|d| {
            format!(
                "{}:{}",
                d.kind.as_str(),
                crate::arrays::display_id(state, d.job)
            )
        })
        .collect();
    if !depend.is_empty() {
        set(env, "MOAB_DEPEND", depend.join(","));
    }
    crate::arrays::element_env(state, id, env);
}
