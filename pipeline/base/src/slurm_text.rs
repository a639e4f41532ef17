//! What Slurm's job fields mean, for every stage that reads them: dependency lists (`afterok:12`,
//! as `--dependency` takes them), the application a job name stands for, and which job and step
//! states are final. A leaf below the
//! stages: the ingest validates dependencies with it, the workflows follow them, the models and
//! workflows group runs by application.

/// The longest dependency list kept; a longer one is not a list a person or script wrote.
const MAX_DEPENDENCY_CHARS: usize = 4096;

/// What a job with no name is called where an application is needed.
pub const NO_NAME: &str = "(no name)";

/// Whether `text` is a Slurm dependency list: items joined by `,` (all) or `?` (any), each
/// `singleton` or `TYPE:JOB[:JOB...]` with a known type and jobs `ID`, `ID_TASK`, `ID_*`, or
/// `ID+MINUTES` (for `after`).
pub fn is_dependency_list(text: &str) -> bool {
    !text.is_empty()
        && text.len() <= MAX_DEPENDENCY_CHARS
        && text.split([',', '?']).all(|item| {
            if item == "singleton" {
                return true;
            }
            let mut parts = item.split(':');
            let kind = parts.next().unwrap_or_default();
            let known = matches!(
                kind,
                "after" | "afterany" | "afterok" | "afternotok" | "aftercorr" | "afterburstbuffer"
            );
            let mut jobs = parts.peekable();
            known && jobs.peek().is_some() && jobs.all(|job| dependency_job(job).is_some())
        })
}

/// One job of a dependency item: its id and, for one task of an array, the task (`ID_TASK`);
/// `ID_*` and `ID+MINUTES` name the job (every task of an array) itself.
pub fn dependency_job(text: &str) -> Option<(u64, Option<u32>)> {
    let digits = |t: &str| !t.is_empty() && t.len() <= 10 && t.bytes().all(|b| b.is_ascii_digit());
    let (id, rest) = match text.find(['_', '+']) {
        Some(at) => (&text[..at], Some(&text[at..])),
        None => (text, None),
    };
    if !digits(id) {
        return None;
    }
    let id: u64 = id.parse().ok()?;
    match rest {
        None | Some("_*") => Some((id, None)),
        Some(r) if r.starts_with('+') && digits(&r[1..]) => Some((id, None)),
        Some(r) if r.starts_with('_') && digits(&r[1..]) => Some((id, Some(r[1..].parse().ok()?))),
        Some(_) => None,
    }
}

/// The application a job name stands for: the name without a run number at its end
/// (`lammps-42`, `lammps_7` and `lammps.3` are `lammps`; `ExaMiniMD` and `train.py` stay as they
/// are). A name that is only a number stays whole; no name is `(no name)`. What sites put in job
/// names varies; a site whose names say more (`lmp_in.rhodo`) gets finer applications, one whose
/// names say less (`job`) coarser ones.
pub fn application_of(name: &str) -> &str {
    let name = name.trim();
    if name.is_empty() {
        return NO_NAME;
    }
    let without_number = name.trim_end_matches(|c: char| c.is_ascii_digit());
    if without_number.len() == name.len() {
        return name;
    }
    let stem = without_number.trim_end_matches(['-', '_', '.']);
    if stem.is_empty() { name } else { stem }
}

/// Whether a job or step state (sacct's text, e.g. `COMPLETED`, `RUNNING`) is one after which
/// nothing about the job or step changes any more.
pub fn is_final_state(state: &str) -> bool {
    !matches!(
        state,
        "PENDING"
            | "RUNNING"
            | "COMPLETING"
            | "REQUEUED"
            | "REQUEUE_HOLD"
            | "REQUEUE_FED"
            | "SUSPENDED"
            | "CONFIGURING"
            | "RESIZING"
            | "SIGNALING"
            | "STAGE_OUT"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dependency_lists_and_jobs() {
        assert!(is_dependency_list("afterok:12:13,afterany:7_2?singleton"));
        assert!(is_dependency_list("after:5+10"));
        assert!(!is_dependency_list(""));
        assert!(!is_dependency_list("afterok"));
        assert!(!is_dependency_list("afterok:1;rm"));
        assert!(!is_dependency_list(&format!(
            "afterok:{}",
            "1:".repeat(3000)
        )));
        assert_eq!(dependency_job("12_3"), Some((12, Some(3))));
        assert_eq!(dependency_job("12_*"), Some((12, None)));
        assert_eq!(dependency_job("12+5"), Some((12, None)));
        assert_eq!(dependency_job("12_x"), None);
        assert_eq!(dependency_job("x"), None);
    }
}
