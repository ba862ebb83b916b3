//! A reusable buffer that JavaScript fills with strings (see `js/packed.mjs`): every string's
//! UTF-16 code units, written straight into wasm memory, and their lengths. Domains take a
//! `&PackedStrings` and read it as a [`Utf16Batch`].

use wasm_bindgen::prelude::*;

use super::error::{headroom, out_of_memory, BoundaryError};
use crate::packed::{PackedError, Utf16Batch};

/// Code units and lengths of a batch of strings, written by JavaScript.
#[wasm_bindgen]
#[derive(Default)]
pub struct PackedStrings {
    units: Vec<u16>,
    lens: Vec<u32>,
}

#[wasm_bindgen]
impl PackedStrings {
    /// `OUT_OF_MEMORY` (domain `partition`) when not even the object itself can be had (the
    /// box wasm-bindgen puts it in is allocated after this returns: a block is reserved and
    /// given back first, so that allocation cannot abort the instance).
    #[wasm_bindgen(constructor)]
    pub fn new() -> Result<PackedStrings, BoundaryError> {
        headroom("partition", 4096)?;
        Ok(PackedStrings::default())
    }

    /// Sizes the buffers for `units` code units and `items` strings (contents unspecified
    /// until JavaScript writes them). Wasm memory may grow: views of it must be re-made.
    /// `OUT_OF_MEMORY` (domain `partition`, the only user) when the memory cannot be had.
    pub fn reset(&mut self, units: usize, items: usize) -> Result<(), BoundaryError> {
        self.units.clear();
        self.lens.clear();
        let oom = |_| out_of_memory("partition");
        self.units.try_reserve_exact(units).map_err(oom)?;
        self.lens.try_reserve_exact(items).map_err(oom)?;
        self.units.resize(units, 0);
        self.lens.resize(items, 0);
        Ok(())
    }

    /// Gives memory back after an unusually large batch.
    pub fn shrink(&mut self) {
        self.units = Vec::new();
        self.lens = Vec::new();
    }

    /// Byte offset of the code units in wasm memory.
    #[wasm_bindgen(js_name = unitsPtr)]
    pub fn units_ptr(&self) -> usize {
        self.units.as_ptr() as usize
    }

    /// Byte offset of the lengths in wasm memory.
    #[wasm_bindgen(js_name = lensPtr)]
    pub fn lens_ptr(&self) -> usize {
        self.lens.as_ptr() as usize
    }
}

impl PackedStrings {
    /// The number of strings.
    pub(crate) fn len(&self) -> usize {
        self.lens.len()
    }

    /// The number of code units of all the strings.
    pub(crate) fn units_len(&self) -> usize {
        self.units.len()
    }

    /// The batch JavaScript wrote.
    ///
    /// # Errors
    /// [`PackedError`] when the lengths do not add up to the code units.
    pub(crate) fn batch(&self) -> Result<Utf16Batch<'_>, PackedError> {
        Utf16Batch::new(&self.units, &self.lens)
    }
}

/// The wasm module's `WebAssembly.Memory`, for writing into a [`PackedStrings`].
#[wasm_bindgen(js_name = wasmMemory)]
pub fn wasm_memory() -> JsValue {
    wasm_bindgen::memory()
}

/// Whether `bytes` more can be allocated now: a block that size is reserved fallibly and given
/// back, so the allocator keeps it for the next call. JS calls this before handing a large
/// string to a stateful object's method, so that copying it into wasm cannot trap.
#[wasm_bindgen(js_name = reserveMemory)]
pub fn reserve_memory(bytes: f64) -> bool {
    let bytes = if bytes.is_finite() && bytes >= 0.0 {
        bytes.min(usize::MAX as f64) as usize
    } else {
        usize::MAX
    };
    super::error::headroom("partkit", bytes).is_ok()
}
