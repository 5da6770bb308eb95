//! Independent pieces of work run on the machine's cores: the files of one
//! `validate` invocation, the checks of one template, and the pieces of a
//! large template as it is read.
//!
//! The work goes to one pool of threads, started on first use and kept for
//! the life of the process (rayon's): each call hands its pieces to threads
//! that are already running, instead of starting threads of its own and
//! waiting for the scheduler to place them. Results come back in the order
//! of the pieces, so output stays the same byte for byte whatever the number
//! of cores and however the work was shared.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};

use rayon::prelude::*;

/// The most threads used: beyond this, start-up and memory bandwidth eat
/// the gain on the sizes eksynth sees.
const MAX_WORKERS: usize = 8;

/// Runs `work` on every item, on up to as many threads as the machine has
/// cores (one item: on the caller's), and returns the results in item
/// order. A panic in a worker is resumed on the caller's thread. Work asked
/// for by work already running side by side is shared out in the same
/// pool: an idle thread takes what a busy one has not started.
pub fn map<I: Sync, T: Send>(items: &[I], work: impl Fn(&I) -> T + Sync) -> Vec<T> {
    if items.len() == 1 {
        return vec![work(&items[0])];
    }
    start();
    // Every piece is a job of its own, which any thread can take: the
    // pieces are coarse, and one left behind another on a thread's list
    // would wait for it.
    items.par_iter().with_max_len(1).map(&work).collect()
}

/// Starts the threads, if not started yet, to be ready when work comes:
/// a thread takes a moment to start, which the caller can spend reading
/// its input.
pub fn start() {
    static POOL: std::sync::Once = std::sync::Once::new();
    POOL.call_once(|| {
        let workers = std::thread::available_parallelism()
            .map_or(1, usize::from)
            .min(MAX_WORKERS);
        // Fails only when the pool already exists, which leaves it as good.
        // The YAML reader recurses once per level of nesting, up to its
        // limit of 64; a worker needs the main thread's room for that
        // (address space, not memory, until used).
        let _ = rayon::ThreadPoolBuilder::new()
            .num_threads(workers)
            .stack_size(8 << 20)
            .build_global();
    });
}

/// A value worked out once and shared between threads, like `OnceLock`,
/// except that a thread wanting it while another works it out takes other
/// pieces of [`map`]'s work in the meantime instead of sleeping (a schema
/// part two checks need at once is compiled by one while the other goes
/// on).
///
/// Nothing may wait for a `Once` while it fills a cell of its own (another
/// `Once`, a `OnceLock`, a `LazyLock`): the thread, taking other pieces of
/// work while it waits, could take one that wants that same cell, which it
/// is itself filling further down its stack.
pub struct Once<T> {
    value: OnceLock<T>,
    /// Whether a thread has begun to work the value out.
    claimed: AtomicBool,
}

impl<T> Default for Once<T> {
    fn default() -> Self {
        Once::new()
    }
}

impl<T> Once<T> {
    pub const fn new() -> Once<T> {
        Once {
            value: OnceLock::new(),
            claimed: AtomicBool::new(false),
        }
    }

    pub fn get(&self) -> Option<&T> {
        self.value.get()
    }

    /// The value, worked out by `init` if no thread has begun to.
    pub fn get_or_init(&self, init: impl FnOnce() -> T) -> &T {
        let mut init = Some(init);
        loop {
            if let Some(value) = self.value.get() {
                return value;
            }
            if !self.claimed.swap(true, Ordering::Acquire) {
                // A panic in `init` leaves the value to the next thread.
                let unclaim = Unclaim(&self.claimed);
                let init = init.take().expect("a thread claims a value once");
                let value = self.value.get_or_init(init);
                std::mem::forget(unclaim);
                return value;
            }
            if rayon::yield_now() != Some(rayon::Yield::Executed) {
                std::thread::yield_now();
            }
        }
    }
}

/// Gives up a claim on a [`Once`] when dropped (by a panic).
struct Unclaim<'a>(&'a AtomicBool);

impl Drop for Unclaim<'_> {
    fn drop(&mut self) {
        self.0.store(false, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::{Once, map};

    #[test]
    fn results_come_back_in_item_order() {
        let items: Vec<u64> = (0..1000).collect();
        let squares = map(&items, |n| {
            // Uneven work, so that workers finish out of order.
            if n % 7 == 0 {
                std::thread::yield_now();
            }
            n * n
        });
        assert_eq!(squares, items.iter().map(|n| n * n).collect::<Vec<_>>());
    }

    #[test]
    fn work_inside_work_comes_back_in_order() {
        let outer: Vec<u64> = (0..16).collect();
        let sums = map(&outer, |n| {
            let inner: Vec<u64> = (0..*n).collect();
            let doubled = map(&inner, |m| m * 2);
            assert_eq!(doubled, inner.iter().map(|m| m * 2).collect::<Vec<_>>());
            doubled.iter().sum::<u64>()
        });
        assert_eq!(
            sums,
            outer
                .iter()
                .map(|n| n * n.saturating_sub(1))
                .collect::<Vec<_>>()
        );
    }

    #[test]
    fn a_value_wanted_at_once_is_worked_out_once() {
        let shared: Once<u64> = Once::new();
        let runs = std::sync::atomic::AtomicUsize::new(0);
        let items: Vec<u64> = (0..64).collect();
        let sums = map(&items, |n| {
            let value = shared.get_or_init(|| {
                runs.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                std::thread::sleep(std::time::Duration::from_millis(20));
                1000
            });
            value + n
        });
        assert_eq!(runs.into_inner(), 1);
        assert_eq!(sums, items.iter().map(|n| n + 1000).collect::<Vec<_>>());
    }

    #[test]
    fn threads_waiting_for_a_value_do_other_work_meanwhile() {
        // One thread alone has nobody to wait for.
        if std::thread::available_parallelism().map_or(1, usize::from) < 2 {
            return;
        }
        use std::sync::atomic::{AtomicUsize, Ordering};
        let shared: Once<usize> = Once::new();
        let others_done = AtomicUsize::new(0);
        let items: Vec<usize> = (0..64).collect();
        let wanting = items.iter().filter(|n| *n % 2 == 0).count();
        let seen = map(&items, |n| {
            if n % 2 == 1 {
                others_done.fetch_add(1, Ordering::Relaxed);
                return None;
            }
            // The value is the work done while it was worked out: all of it
            // when the threads waiting for it took the rest meanwhile.
            Some(*shared.get_or_init(|| {
                let start = std::time::Instant::now();
                while others_done.load(Ordering::Relaxed) < items.len() - wanting
                    && start.elapsed() < std::time::Duration::from_secs(5)
                {
                    std::thread::sleep(std::time::Duration::from_millis(1));
                }
                others_done.load(Ordering::Relaxed)
            }))
        });
        assert!(
            seen.iter()
                .flatten()
                .all(|done| *done == items.len() - wanting),
            "{seen:?} {}",
            others_done.load(Ordering::Relaxed)
        );
    }

    #[test]
    fn a_panic_while_working_a_value_out_leaves_it_to_the_next() {
        let shared: Once<u8> = Once::new();
        let first = std::panic::catch_unwind(|| *shared.get_or_init(|| panic!("no value")));
        assert!(first.is_err());
        assert_eq!(shared.get(), None);
        assert_eq!(*shared.get_or_init(|| 7), 7);
    }

    #[test]
    fn no_items_no_results() {
        let items: Vec<u8> = Vec::new();
        assert!(map(&items, |n| *n).is_empty());
    }

    #[test]
    #[should_panic(expected = "item 3")]
    fn a_panic_in_a_worker_reaches_the_caller() {
        let items: Vec<u8> = (0..8).collect();
        map(&items, |n| assert_ne!(*n, 3, "item 3"));
    }
}
