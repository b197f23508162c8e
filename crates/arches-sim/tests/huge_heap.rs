//! `heap::prefer_huge_pages` on the process's first thread (no test harness:
//! the harness runs tests on other threads, which allocate from heaps of
//! their own): the heap grows by the pad, the grown range is advised
//! (`hg` in the mapping's `VmFlags`), and allocation goes on as before.

fn main() {
    let pad = 16 << 20;
    let range =
        arches_sim::heap::prefer_huge_pages(pad).expect("the main heap grew and was advised");
    assert!(
        range.end - range.start >= pad - (2 << 20),
        "advised {range:x?}"
    );
    let smaps = std::fs::read_to_string("/proc/self/smaps").expect("/proc/self/smaps");
    let flags = mapping_flags(&smaps, range.start).expect("a mapping holds the advised range");
    assert!(
        flags.split_whitespace().any(|f| f == "hg"),
        "VmFlags of the heap: {flags}"
    );
    // Blocks up to 32 MiB come from the grown heap now (not mapped apart;
    // the advised range begins at the first huge page boundary in it), and
    // are usable.
    let v: Vec<u64> = (0..1_000_000).collect();
    let at = v.as_ptr() as usize;
    assert!(
        (range.start - (2 << 20)..range.end).contains(&at),
        "{at:x} outside the grown heap {range:x?}"
    );
    assert_eq!(v.iter().sum::<u64>(), 999_999 * 1_000_000 / 2);
    println!(
        "huge_heap: advised {:#x}..{:#x}, VmFlags {flags}",
        range.start, range.end
    );
}

/// The `VmFlags` line of the mapping that contains `addr`.
fn mapping_flags(smaps: &str, addr: usize) -> Option<String> {
    let mut inside = false;
    for line in smaps.lines() {
        if let Some((lo, hi)) = line
            .split_whitespace()
            .next()
            .and_then(|r| r.split_once('-'))
            .and_then(|(lo, hi)| {
                Some((
                    usize::from_str_radix(lo, 16).ok()?,
                    usize::from_str_radix(hi, 16).ok()?,
                ))
            })
        {
            inside = (lo..hi).contains(&addr);
        } else if inside {
            if let Some(flags) = line.strip_prefix("VmFlags:") {
                return Some(flags.trim().to_string());
            }
        }
    }
    None
}
