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

use rayon::prelude::*;

/// The most threads used: beyond this, start-up and memory bandwidth eat
/// the gain on the sizes eksynth sees.
const MAX_WORKERS: usize = 8;

/// Runs `work` on every item, on up to as many threads as the machine has
/// cores, and returns the results in item order. A panic in a worker is
/// resumed on the caller's thread. Work asked for by work already running
/// side by side is shared out in the same pool: an idle thread takes what
/// a busy one has not started.
pub fn map<I: Sync, T: Send>(items: &[I], work: impl Fn(&I) -> T + Sync) -> Vec<T> {
    static POOL: std::sync::Once = std::sync::Once::new();
    POOL.call_once(|| {
        let workers = std::thread::available_parallelism()
            .map_or(1, usize::from)
            .min(MAX_WORKERS);
        // Fails only when the pool already exists, which leaves it as good.
        let _ = rayon::ThreadPoolBuilder::new()
            .num_threads(workers)
            .build_global();
    });
    items.par_iter().map(&work).collect()
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
