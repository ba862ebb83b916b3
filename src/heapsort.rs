//! One in-place heapsort for the modules that keep the standard library's sort out of their
//! wasm (its pattern-defeating quicksort with its helpers is 4 to 7.5 KB per instance): the same
//! order as `sort_unstable`, for the few items they sort (a bucketing config's ranges, the table
//! indexes one lifecycle event touches).

/// Sorts `v` ascending, in place (not stable: equal items may change places, as with
/// `sort_unstable`).
pub(crate) fn heapsort<T: Ord>(v: &mut [T]) {
    /// Sifts `v[root]` down within `v[..end]` (a max-heap).
    fn sift_down<T: Ord>(v: &mut [T], mut root: usize, end: usize) {
        loop {
            let mut child = 2 * root + 1;
            if child >= end {
                return;
            }
            if child + 1 < end && v[child] < v[child + 1] {
                child += 1;
            }
            if v[root] >= v[child] {
                return;
            }
            v.swap(root, child);
            root = child;
        }
    }
    let n = v.len();
    for i in (0..n / 2).rev() {
        sift_down(v, i, n);
    }
    for end in (1..n).rev() {
        v.swap(0, end);
        sift_down(v, 0, end);
    }
}
