//! `heap::prefer_huge_pages` on the process's first thread (no test harness:
//! the harness runs tests on other threads, which allocate from heaps of
//! their own): the heap grows by the pad, the grown range is advised
//! (`hg` in the mapping's `VmFlags`), and a block of several MiB comes from
//! that heap (not mapped apart), from the advised range itself, and is
//! usable.

fn main() {
    let pad = 16 << 20;
    let range =
        arches_sim::heap::prefer_huge_pages(pad).expect("the main heap grew and was advised");
    assert!(
        range.end - range.start >= pad - (2 << 20),
        "advised {range:x?}"
    );
    let smaps = std::fs::read_to_string("/proc/self/smaps").expect("/proc/self/smaps");
    let (name, flags) = mapping(&smaps, range.start).expect("a mapping holds the advised range");
    assert_eq!(name, "[heap]", "the advised range is the heap's");
    assert!(
        flags.split_whitespace().any(|f| f == "hg"),
        "VmFlags of the heap: {flags}"
    );
    let v: Vec<u64> = (0..1_000_000).collect();
    let smaps = std::fs::read_to_string("/proc/self/smaps").expect("/proc/self/smaps");
    let at = v.as_ptr() as usize;
    let (name, _) = mapping(&smaps, at).expect("a mapping holds the block");
    assert_eq!(
        name, "[heap]",
        "an 8 MB block at {at:#x} comes from the heap"
    );
    // Not from the small pages below the advised range: the gap up to it is
    // taken out of use.
    assert!(
        range.contains(&at),
        "the 8 MB block at {at:#x} lies in the advised {range:x?}"
    );
    assert_eq!(v.iter().sum::<u64>(), 999_999 * 1_000_000 / 2);
    println!(
        "huge_heap: advised {:#x}..{:#x}, VmFlags {flags}",
        range.start, range.end
    );
}

/// The name (`[heap]`, a path, or empty) and the `VmFlags` line of the
/// mapping that contains `addr`.
fn mapping(smaps: &str, addr: usize) -> Option<(String, String)> {
    let mut inside: Option<String> = None;
    for line in smaps.lines() {
        let mut words = line.split_whitespace();
        let range = words
            .next()
            .and_then(|r| r.split_once('-'))
            .and_then(|(lo, hi)| {
                Some((
                    usize::from_str_radix(lo, 16).ok()?,
                    usize::from_str_radix(hi, 16).ok()?,
                ))
            });
        if let Some((lo, hi)) = range {
            // address perms offset dev inode [name]
            let name = words.nth(4).unwrap_or("").to_string();
            inside = (lo..hi).contains(&addr).then_some(name);
        } else if let (Some(name), Some(flags)) = (&inside, line.strip_prefix("VmFlags:")) {
            return Some((name.clone(), flags.trim().to_string()));
        }
    }
    None
}
