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

/// Runs `work` on every item, on up to as many threads as the machine has
/// cores (and at most one per item), and returns the results in item
/// order. A panic in a worker is resumed on the caller's thread.
pub fn map<I: Sync, T: Send>(items: &[I], work: impl Fn(&I) -> T + Sync) -> Vec<T> {
    let workers = std::thread::available_parallelism()
        .map_or(1, usize::from)
        .min(MAX_WORKERS)
        .min(items.len());
    if workers <= 1 {
        return items.iter().map(work).collect();
    }
    let next = AtomicUsize::new(0);
    let run = || {
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
