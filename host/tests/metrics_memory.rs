//! The recorder behind `/metrics` does not keep what histograms record when nobody scrapes.
//!
//! A binary of its own: it counts the process's live heap bytes with a global allocator that
//! wraps the system's, and installs the process-wide recorder as `ferry serve` does
//! ([`ferry_host::api::metrics_handle`]).

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicIsize, Ordering};
use std::time::{Duration, Instant};

/// The system allocator, counting the bytes it has handed out and not yet been given back.
struct Counting;

static LIVE_BYTES: AtomicIsize = AtomicIsize::new(0);

// SAFETY: every call is passed to `System` as it came; only a counter is moved besides.
// (A global allocator cannot be written without `unsafe`; the workspace denies it elsewhere.)
#[allow(unsafe_code)]
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract is `System`'s.
        let pointer = unsafe { System.alloc(layout) };
        if !pointer.is_null() {
            LIVE_BYTES.fetch_add(layout.size() as isize, Ordering::Relaxed);
        }
        pointer
    }

    unsafe fn dealloc(&self, pointer: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract is `System`'s.
        unsafe { System.dealloc(pointer, layout) };
        LIVE_BYTES.fetch_sub(layout.size() as isize, Ordering::Relaxed);
    }

    unsafe fn realloc(&self, pointer: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller's contract is `System`'s.
        let moved = unsafe { System.realloc(pointer, layout, new_size) };
        if !moved.is_null() {
            LIVE_BYTES.fetch_add(
                new_size as isize - layout.size() as isize,
                Ordering::Relaxed,
            );
        }
        moved
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

fn live_bytes() -> isize {
    LIVE_BYTES.load(Ordering::Relaxed)
}

const MIB: isize = 1 << 20;

#[test]
fn histogram_samples_are_let_go_though_nobody_reads_the_metrics() {
    let _recorder = ferry_host::api::metrics_handle();
    let histogram = metrics::histogram!("ferry_test_seconds");
    let before = live_bytes();

    // Four million samples, what ~900 000 notes record: ~64 MB while kept (a sample and the
    // instant it was recorded at, 16 bytes).
    let mut most_held = 0;
    for _ in 0..400 {
        for _ in 0..10_000 {
            histogram.record(0.001);
        }
        most_held = most_held.max(live_bytes() - before);
    }
    // The upkeep may have run meanwhile (about once a second), but not often enough to drain
    // these before they were seen held.
    assert!(
        most_held > 32 * MIB,
        "the samples were never seen held ({most_held} bytes at most): the check below would \
         prove nothing"
    );

    // Nothing reads `/metrics`. A serving Ferry goes on recording, and so does this test: the
    // blocks the upkeep drained are freed once the threads that record move on (they are
    // reclaimed by epochs). Up to ~2 MB of them may wait longer, in the upkeep thread's own bag.
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        histogram.record(0.001);
        let held = live_bytes() - before;
        if held < 8 * MIB {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "{held} bytes still held 30 s after the samples were recorded (most: {most_held}): \
             nothing drains them"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}
