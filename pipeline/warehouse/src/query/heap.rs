//! The process's heap, counted. DataFusion's memory pool bounds what sorts, joins and
//! aggregations hold, not the values a statement's functions build: sixteen `repeat`s joined
//! by `||`, each under the bound of one call ([`super::bounded`]), made 4 GiB together and the
//! allocation of the next one aborted the server. Every allocation of a process that links the
//! warehouse goes through [`HEAP`], which counts the bytes in use (one atomic add per call), so
//! a function that builds a large value can first ask whether the process has room for it.

use std::alloc::System;

use cap::Cap;

/// Every allocation of the process, counted; no limit of its own (an allocation past a limit
/// aborts the process, which is what the count is there to prevent).
#[global_allocator]
pub static HEAP: Cap<System> = Cap::new(System, usize::MAX);

/// The bytes the process has allocated and not freed.
pub fn in_use() -> u64 {
    HEAP.allocated() as u64
}

#[cfg(test)]
mod tests {
    #[test]
    fn an_allocation_is_counted() {
        let block = vec![1u8; 64 << 20];
        let with = super::in_use();
        assert!(with >= 64 << 20, "{with}");
        drop(block);
    }
}
