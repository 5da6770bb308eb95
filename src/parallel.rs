//! Independent pieces of work run on the machine's cores: the files of one
//! `validate` invocation, and the checks of one template.
//!
//! Workers take the next piece in order until none is left; results come
//! back in the order of the pieces, so output stays the same byte for byte
//! whatever the number of cores and however the work was shared.

use std::sync::atomic::{AtomicUsize, Ordering};

/// The most workers used: beyond this, start-up and memory bandwidth eat
/// the gain on the sizes eksynth sees.
const MAX_WORKERS: usize = 8;

thread_local! {
    /// Whether this thread is running a piece of [`map`]'s work.
    static IN_WORKER: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Marks the thread as running [`map`]'s work until dropped (a panic
/// included).
struct Worker(bool);

impl Worker {
    fn enter() -> Worker {
        Worker(IN_WORKER.replace(true))
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        IN_WORKER.set(self.0);
    }
}

/// Runs `work` on every item, on up to as many threads as the machine has
/// cores (and at most one per item), and returns the results in item
/// order. A panic in a worker is resumed on the caller's thread.
///
/// Work already running side by side runs what it asks for in turn: the
/// cores are taken, and more threads would only add the cost of starting
/// them (the files of one `validate` each validate their checks in turn).
pub fn map<I: Sync, T: Send>(items: &[I], work: impl Fn(&I) -> T + Sync) -> Vec<T> {
    let workers = std::thread::available_parallelism()
        .map_or(1, usize::from)
        .min(MAX_WORKERS)
        .min(items.len());
    if workers <= 1 || IN_WORKER.get() {
        return items.iter().map(work).collect();
    }
    let next = AtomicUsize::new(0);
    let run = || {
        let _worker = Worker::enter();
        let mut done = Vec::new();
        loop {
            let index = next.fetch_add(1, Ordering::Relaxed);
            let Some(item) = items.get(index) else {
                return done;
            };
            done.push((index, work(item)));
        }
    };
    let mut results: Vec<(usize, T)> = std::thread::scope(|scope| {
        let helpers: Vec<_> = (1..workers).map(|_| scope.spawn(run)).collect();
        let mut results = run();
        for helper in helpers {
            match helper.join() {
                Ok(done) => results.extend(done),
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }
        results
    });
    results.sort_unstable_by_key(|(index, _)| *index);
    results.into_iter().map(|(_, result)| result).collect()
}

#[cfg(test)]
mod tests {
    use super::map;

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
    fn work_inside_work_runs_in_turn_with_the_same_results() {
        let outer: Vec<u64> = (0..16).collect();
        let sums = map(&outer, |n| {
            let inner: Vec<u64> = (0..*n).collect();
            let threads: std::collections::HashSet<_> =
                map(&inner, |_| std::thread::current().id())
                    .into_iter()
                    .collect();
            assert!(
                threads.len() <= 1,
                "nested work ran on {} threads",
                threads.len()
            );
            map(&inner, |m| m * 2).iter().sum::<u64>()
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
