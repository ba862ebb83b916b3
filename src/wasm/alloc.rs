//! The module's allocator: the standard one (dlmalloc), which grows the wasm memory by what each
//! allocation lacks, wrapped so that memory grows geometrically. V8 may collect its whole JS heap
//! when a wasm memory grows, so a call that builds a large view in many small steps paid one
//! collection per step in a process holding a large JS heap: a new epoch of 1,000 tasks × 1,000
//! partitions took 104 s in wasm against 0.9 s natively. Whenever the memory has grown, the
//! allocator at once takes, best effort, a block of half the memory (at most `MAX_AHEAD`) and
//! gives it back: the allocator keeps it for what comes next (wasm memory never shrinks, so the
//! module holds up to half again, at most 256 MiB, more than it used), and the memory grows some
//! twenty times on the way to 4 GiB instead of once per allocation that did not fit.
//!
//! The bucketing module (built with no other domain) has a smaller allocator of its own,
//! `size_classes::SizeClasses`, which grows the memory the same way: dlmalloc was 7 KB of that
//! 80 KB module, and bucketing allocates few blocks per call, of few sizes.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

/// Most memory grown ahead at once.
const MAX_AHEAD: usize = 256 << 20;

struct GrowAhead {
    /// Pages of the memory when last seen (the module is single-threaded; the block grown
    /// ahead goes to `System` directly, not through this wrapper).
    pages: Cell<usize>,
}

// SAFETY: wasm32-unknown-unknown without threads: one thread only.
unsafe impl Sync for GrowAhead {}

impl GrowAhead {
    fn after_alloc(&self) {
        let pages = core::arch::wasm32::memory_size(0);
        if pages <= self.pages.get() {
            return;
        }
        let ahead = (pages.saturating_mul(64 << 10) / 2).min(MAX_AHEAD);
        if let Ok(layout) = Layout::from_size_align(ahead, 1) {
            // SAFETY: a non-zero layout; the block is given back at once
            unsafe {
                let p = System.alloc(layout);
                if !p.is_null() {
                    System.dealloc(p, layout);
                }
            }
        }
        self.pages.set(core::arch::wasm32::memory_size(0));
    }
}

// SAFETY: every call is forwarded to `System` unchanged; `after_alloc` only allocates and frees a
// block of its own through `System`.
//
// The four are not inlined: LLVM copied dlmalloc's free, with its checks, into each drop (some
// 600 in the sync module) and the growth check into every allocation, 2 to 7% of each module
// that uses this allocator, for no speed that the bench rows measure.
unsafe impl GlobalAlloc for GrowAhead {
    #[inline(never)]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = System.alloc(layout);
        self.after_alloc();
        p
    }
    #[inline(never)]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = System.alloc_zeroed(layout);
        self.after_alloc();
        p
    }
    #[inline(never)]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = System.realloc(ptr, layout, new_size);
        self.after_alloc();
        p
    }
    #[inline(never)]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout);
    }
}

#[cfg(not(all(
    feature = "bucketing",
    not(any(
        feature = "objects",
        feature = "imports",
        feature = "lifecycle",
        feature = "sync"
    ))
)))]
#[global_allocator]
static ALLOC: GrowAhead = GrowAhead {
    pages: Cell::new(0),
};

/// The bucketing module's allocator (the module built with no other domain).
#[cfg(all(
    feature = "bucketing",
    not(any(
        feature = "objects",
        feature = "imports",
        feature = "lifecycle",
        feature = "sync"
    ))
))]
mod size_classes {
    use std::alloc::{GlobalAlloc, Layout};
    use std::cell::Cell;

    use super::MAX_AHEAD;

    /// Bytes of a wasm page.
    const PAGE: u64 = 64 << 10;

    /// The bucketing module's allocator: blocks of power-of-two sizes from 16 bytes, each class with
    /// a free list (a free block's first word links the next), carved from the top of the memory,
    /// which grows as `GrowAhead` grows it (by half the memory at once, at most `MAX_AHEAD`, else
    /// by what is lacking). A block of `2^c` bytes is aligned to `min(2^c, 64 KiB)`; a class with
    /// no free block and no room left takes a larger free block and splits it in halves (which keeps
    /// that alignment), so that memory freed in large blocks serves small ones once the memory is
    /// full. Blocks are never merged again: the module holds at most about twice what it uses at a
    /// time. Out of memory is a null pointer (`try_reserve` reports it, the rest traps).
    struct SizeClasses {
        /// Head of each class's free list (0: empty).
        free: [Cell<usize>; 32],
        /// Start of the unused top of the memory, and its end (the memory's size; `u64`: 4 GiB is
        /// 2^32).
        next: Cell<u64>,
        end: Cell<u64>,
    }

    // SAFETY: wasm32-unknown-unknown without threads: one thread only.
    unsafe impl Sync for SizeClasses {}

    impl SizeClasses {
        /// The class (`log2` of the block size) of `layout`; `None` past 2 GiB or 64 KiB alignment.
        fn class(layout: Layout) -> Option<usize> {
            if layout.align() as u64 > PAGE {
                return None;
            }
            let size = layout.size().max(layout.align()).max(16);
            Some(size.checked_next_power_of_two()?.trailing_zeros() as usize)
        }

        /// A block of class `c` from the top of the memory, growing it if `grow`.
        #[inline(never)]
        fn carve(&self, c: usize, grow: bool) -> *mut u8 {
            if self.end.get() == 0 {
                let top = core::arch::wasm32::memory_size(0) as u64 * PAGE;
                self.next.set(top);
                self.end.set(top);
            }
            let size = 1u64 << c;
            let align = size.min(PAGE);
            let start = (self.next.get() + align - 1) & !(align - 1);
            let end = start + size;
            if end > self.end.get() {
                if !grow {
                    return core::ptr::null_mut();
                }
                let lacking = (end - self.end.get()).div_ceil(PAGE) as usize;
                let pages = core::arch::wasm32::memory_size(0);
                let ahead = (pages / 2).min(MAX_AHEAD / PAGE as usize).max(lacking);
                if core::arch::wasm32::memory_grow(0, ahead) == usize::MAX
                    && core::arch::wasm32::memory_grow(0, lacking) == usize::MAX
                {
                    return core::ptr::null_mut();
                }
                self.end
                    .set(core::arch::wasm32::memory_size(0) as u64 * PAGE);
            }
            self.next.set(end);
            start as usize as *mut u8
        }

        /// Pops a block of class `c` (0 when there is none).
        fn pop(&self, c: usize) -> usize {
            let head = self.free[c].get();
            if head != 0 {
                // SAFETY: a block on a free list holds the next block's address in its first word
                self.free[c].set(unsafe { *(head as *const usize) });
            }
            head
        }

        fn push(&self, c: usize, block: usize) {
            // SAFETY: `block` is a free block of class `c` (at least 16 bytes, aligned to 16)
            unsafe { *(block as *mut usize) = self.free[c].get() };
            self.free[c].set(block);
        }
    }

    // SAFETY: blocks are disjoint parts of the memory above what it had when first used, each handed
    // out once until freed; a block of class `c` has `2^c >= layout.size()` bytes and is aligned to
    // `min(2^c, 64 KiB) >= layout.align()`.
    unsafe impl GlobalAlloc for SizeClasses {
        #[inline(never)]
        unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
            let Some(c) = Self::class(layout) else {
                return core::ptr::null_mut();
            };
            let block = self.pop(c);
            if block != 0 {
                return block as *mut u8;
            }
            let p = self.carve(c, false);
            if !p.is_null() {
                return p;
            }
            if let Some(mut k) = (c + 1..32).find(|&k| self.free[k].get() != 0) {
                let block = self.pop(k);
                while k > c {
                    k -= 1;
                    self.push(k, block + (1 << k));
                }
                return block as *mut u8;
            }
            self.carve(c, true)
        }

        #[inline(never)]
        unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
            if let Some(c) = Self::class(layout) {
                self.push(c, ptr as usize);
            }
        }

        #[inline(never)]
        unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
            // SAFETY: the caller's `new_size` with the same alignment is a valid layout
            let new_layout = unsafe { Layout::from_size_align_unchecked(new_size, layout.align()) };
            if Self::class(new_layout) == Self::class(layout) {
                return ptr;
            }
            // SAFETY: forwarded from the caller
            let new = unsafe { self.alloc(new_layout) };
            if !new.is_null() {
                // SAFETY: both blocks hold at least the smaller size; they are disjoint
                unsafe {
                    core::ptr::copy_nonoverlapping(ptr, new, layout.size().min(new_size));
                    self.dealloc(ptr, layout);
                }
            }
            new
        }
    }

    #[global_allocator]
    static ALLOC: SizeClasses = SizeClasses {
        free: [const { Cell::new(0) }; 32],
        next: Cell::new(0),
        end: Cell::new(0),
    };
}
