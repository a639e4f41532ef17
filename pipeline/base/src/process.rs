//! The clock and this process's memory: what commands read once and pass down, so that library
//! functions take the time as a parameter and tests choose it.

use chrono::{DateTime, Utc};

/// The wall clock. Commands call this once and pass the time down; library functions take the
/// time as a parameter so that tests choose it.
pub fn now() -> DateTime<Utc> {
    DateTime::from(std::time::SystemTime::now())
}

/// This process's peak resident memory so far, in MiB (Linux `VmHWM`), for progress reports and
/// benchmarks; `None` where /proc is not available.
pub fn peak_memory_mib() -> Option<u64> {
    status_mib("VmHWM:")
}

/// This process's resident memory now, in MiB (Linux `VmRSS`): with the bytes its heap holds,
/// it tells memory in use from memory the allocator kept after it was freed.
pub fn resident_memory_mib() -> Option<u64> {
    status_mib("VmRSS:")
}

/// A field of `/proc/self/status` given in kB, in MiB.
fn status_mib(field: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with(field))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib / 1024)
}

/// Starts [`peak_memory_mib`] again from the memory in use now (Linux: `5` written to
/// `/proc/self/clear_refs`), so that the peak of one piece of work can be told from the peak of
/// those before it. Returns whether it could.
pub fn reset_peak_memory() -> bool {
    std::fs::write("/proc/self/clear_refs", "5").is_ok()
}
