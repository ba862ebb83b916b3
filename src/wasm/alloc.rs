//! The module's allocator: the standard one (dlmalloc), or with the `talc-alloc` feature (the
//! bucketing module's build turns it on) talc's (`talc::wasm`), where dlmalloc was 7 KB of an 80 KB
//! module. Either grows the wasm memory by what each allocation lacks, and is wrapped so that
//! memory grows geometrically. V8 may collect its whole JS heap when a wasm memory grows, so a call
//! that builds a large view in many small steps paid one collection per step in a process holding a
//! large JS heap: a new epoch of 1,000 tasks × 1,000 partitions took 104 s in wasm against 0.9 s
//! natively. Whenever the memory has grown, the allocator at once takes, best effort, a block of
//! half the memory (at most `MAX_AHEAD`) and gives it back: the allocator keeps it for what comes
//! next (wasm memory never shrinks, so the module holds up to half again, at most 256 MiB, more
//! than it used), and the memory grows some twenty times on the way to 4 GiB instead of once per
//! allocation that did not fit.

use std::alloc::{GlobalAlloc, Layout};
use std::cell::Cell;

/// Most memory grown ahead at once.
const MAX_AHEAD: usize = 256 << 20;

struct GrowAhead<A> {
    inner: A,
    /// Pages of the memory when last seen (the module is single-threaded; the block grown
    /// ahead goes to `inner` directly, not through this wrapper).
    pages: Cell<usize>,
}

// SAFETY: wasm32-unknown-unknown without threads: one thread only.
unsafe impl<A> Sync for GrowAhead<A> {}

impl<A: GlobalAlloc> GrowAhead<A> {
    fn after_alloc(&self) {
        let pages = core::arch::wasm32::memory_size(0);
        if pages <= self.pages.get() {
            return;
        }
        let ahead = (pages.saturating_mul(64 << 10) / 2).min(MAX_AHEAD);
        if let Ok(layout) = Layout::from_size_align(ahead, 1) {
            // SAFETY: a non-zero layout; the block is given back at once
            unsafe {
                let p = self.inner.alloc(layout);
                if !p.is_null() {
                    self.inner.dealloc(p, layout);
                }
            }
        }
        self.pages.set(core::arch::wasm32::memory_size(0));
    }
}

// SAFETY: every call is forwarded to `inner` unchanged; `after_alloc` only allocates and frees a
// block of its own through `inner`.
//
// The four are not inlined: LLVM copied dlmalloc's free, with its checks, into each drop (some
// 600 in the sync module) and the growth check into every allocation, 2 to 7% of each module
// that uses this allocator, for no speed that the bench rows measure.
unsafe impl<A: GlobalAlloc> GlobalAlloc for GrowAhead<A> {
    #[inline(never)]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = self.inner.alloc(layout);
        self.after_alloc();
        p
    }
    #[inline(never)]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = self.inner.alloc_zeroed(layout);
        self.after_alloc();
        p
    }
    #[inline(never)]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = self.inner.realloc(ptr, layout, new_size);
        self.after_alloc();
        p
    }
    #[inline(never)]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        self.inner.dealloc(ptr, layout);
    }
}

#[cfg(not(feature = "talc-alloc"))]
#[global_allocator]
static ALLOC: GrowAhead<std::alloc::System> = GrowAhead {
    inner: std::alloc::System,
    pages: Cell::new(0),
};

#[cfg(feature = "talc-alloc")]
#[global_allocator]
static ALLOC: GrowAhead<talc::wasm::WasmDynamicTalc> = GrowAhead {
    inner: talc::wasm::new_wasm_dynamic_allocator(),
    pages: Cell::new(0),
};
