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
//! pages are off), from its first huge page that nothing touched yet, and
//! takes the heap below that page out of use so that allocations start in
//! it. A replay of the public logs then takes 256 to 294 faults (345 to 1,031 while
//! the gap below the advised range, up to 2 MiB after address
//! randomisation, was filled first in small pages). What glibc's own
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
        const PROBE: usize = 1 << 20;
        let block = std::hint::black_box(libc::malloc(PROBE));
        let end = libc::sbrk(0) as usize;
        // The first huge page of the grown heap that nothing touched yet:
        // the allocator wrote its free top's header right after the block,
        // before the advice, and a range with a small page in it is never
        // made a huge page at a fault.
        // None when sbrk failed (all ones) or the block did not come.
        let start = (before != usize::MAX && !block.is_null())
            .then(|| before.max(block as usize + PROBE + 16))
            .and_then(|b| b.checked_next_multiple_of(HUGE));
        let advised = start.filter(|&start| {
            start < end
                && libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE) == 0
        });
        libc::free(block);
        if let Some(start) = advised {
            fill_gap(block as usize, start);
        }
        advised.map(|start| start..end)
    }
}

/// Below this, the gap before the advised range is left as it is (a page
/// or so of small pages).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const GAP_MIN: usize = 16 << 10;

/// Takes the heap between the free top's first block at `block` and the
/// advised range's `start` out of use, for the process's life.
///
/// The freed block merged back into the heap's free top, which now begins
/// where it did, below `start`: the next allocations would fill that gap
/// first, in small pages, and its length (up to 2 MiB, as the break
/// happened to lie after address randomisation) made a replay take
/// anywhere between 0 and 512 more faults. A block that ends exactly at
/// `start` is allocated there and never freed nor written (only its
/// header is: the gap costs address space, not memory). It is glibc's
/// chunk layout: a chunk begins two words before its block, and a request
/// of `n` bytes takes `n + 8` rounded up to 16. If the block comes from
/// elsewhere (a free chunk that fits), it is given back and nothing
/// changes.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn fill_gap(block: usize, start: usize) {
    let word = std::mem::size_of::<usize>();
    let chunk = block - 2 * word;
    if start < chunk + GAP_MIN || (start - chunk) % 16 != 0 {
        return;
    }
    // SAFETY: a plain allocation, freed at once when it is not where the
    // gap is (only its address is compared).
    unsafe {
        let filler = libc::malloc(start - chunk - word);
        if filler as usize != block {
            libc::free(filler);
        }
    }
}

/// Does nothing where the allocator is not glibc's.
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub fn prefer_huge_pages(_pad: usize) -> Option<std::ops::Range<usize>> {
    None
}
