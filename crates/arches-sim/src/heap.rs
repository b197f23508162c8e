//! A replay's heap in huge pages.
//!
//! A replay touches its memory once and keeps it to the end: the trace, the
//! jobs, the records. With the C library's defaults every 4 KiB page of it
//! costs the process a page fault (KTH-SP2 EASY: 2,176 faults, about a
//! twentieth of its CPU time on this project's 2-core VM), and blocks above
//! 128 KiB (the trace and the records as they grow) are mapped apart and
//! faulted again at every move.
//!
//! [`prefer_huge_pages`] asks glibc's allocator to grow its heap ahead by
//! `pad` bytes, to keep blocks up to 32 MiB in that heap and not to give
//! memory back until 256 MiB lie free, and asks the kernel to back the
//! grown heap with transparent huge pages (`madvise(MADV_HUGEPAGE)`, which
//! the kernel honours in its default `madvise` mode and ignores when huge
//! pages are off). The same replay then takes 345 to 900 faults. What glibc's own
//! `glibc.malloc.hugetlb=1` tunable does, from inside the process (a tunable
//! is read from the environment at start-up only).
//!
//! Advice only: nothing here changes what is allocated or computed; on other
//! systems it does nothing. For a process that runs one replay and exits
//! (`moab simulate`), not for the daemon, which must give memory back.

/// Grows the heap by `pad` bytes now and advises the kernel to back it with
/// huge pages; see the module documentation. Returns the advised range, if
/// any: none when the heap could not grow (or grew less than a huge page
/// past its current end), or when called on another thread than the
/// process's first (only that thread allocates from the main heap).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
pub fn prefer_huge_pages(pad: usize) -> Option<std::ops::Range<usize>> {
    const HUGE: usize = 2 << 20;
    let pad_arg = libc::c_int::try_from(pad).ok()?;
    // SAFETY: mallopt only changes the allocator's thresholds (it takes the
    // arena's lock); sbrk(0) reads the current break; the block is
    // allocated and freed through the same allocator, never read or
    // written; madvise only gives advice about a range of the heap mapping
    // that the allocator just grew (a range that is not mapped is refused
    // with an error, which is ignored).
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 32 << 20);
        libc::mallopt(libc::M_TRIM_THRESHOLD, 256 << 20);
        libc::mallopt(libc::M_TOP_PAD, pad_arg);
        let before = libc::sbrk(0) as usize;
        // Larger than what is left at the top of the heap: the allocator
        // grows it by this and the pad. Kept from being optimised away.
        let block = std::hint::black_box(libc::malloc(1 << 20));
        let end = libc::sbrk(0) as usize;
        let start = before.next_multiple_of(HUGE);
        let advised = before != usize::MAX
            && start < end
            && libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE) == 0;
        libc::free(block);
        advised.then_some(start..end)
    }
}

/// Does nothing where the allocator is not glibc's.
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub fn prefer_huge_pages(_pad: usize) -> Option<std::ops::Range<usize>> {
    None
}
