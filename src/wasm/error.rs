//! Errors across the boundary: a real JS `Error` with `code` and `domain` properties, which
//! `js/errors.mjs` turns into the domain's `Error` subclass.

use js_sys::Reflect;
use wasm_bindgen::JsValue;

/// Builds (does not throw) the JS error value that a binding returns as `Err(..)`, which
/// wasm-bindgen then throws: `message`, plus own properties `code` and `domain` (`bucketing`,
/// `partition`, `import`, `lifecycle`, `sync`).
pub(crate) fn error_value(domain: &str, code: &str, message: &str) -> JsValue {
    let error = js_sys::Error::new(message);
    // Setting a property on a fresh, ordinary Error object cannot fail.
    let _ = Reflect::set(&error, &JsValue::from_str("code"), &JsValue::from_str(code));
    let _ = Reflect::set(
        &error,
        &JsValue::from_str("domain"),
        &JsValue::from_str(domain),
    );
    error.into()
}

impl From<crate::bucketing::BucketingError> for BoundaryError {
    fn from(e: crate::bucketing::BucketingError) -> Self {
        BoundaryError(error_value("bucketing", e.code(), &e.to_string()))
    }
}

/// The error every binding returns: a JS `Error` value built by [`error_value`], so that `?`
/// converts any domain error that has a `From` impl. (Named apart from wasm-bindgen's own
/// `JsError`, which carries no `code`.)
pub struct BoundaryError(pub(crate) JsValue);

impl From<BoundaryError> for JsValue {
    fn from(e: BoundaryError) -> Self {
        e.0
    }
}

/// The error of a call that could not get the memory it needs: `OUT_OF_MEMORY` in `domain`.
/// Nothing was changed; the same call can succeed once memory is freed.
pub(crate) fn out_of_memory(domain: &str) -> BoundaryError {
    BoundaryError(error_value(
        domain,
        "OUT_OF_MEMORY",
        "partkit: out of WebAssembly memory (wasm32 has at most 4 GiB); free objects or pass a smaller batch",
    ))
}

/// Makes sure `bytes` more can be allocated before a call starts work that allocates
/// infallibly (parsing, maps that grow): a block that size is reserved fallibly and given back,
/// so the allocator keeps it for the call. `OUT_OF_MEMORY` when it cannot be had.
pub(crate) fn headroom(domain: &str, bytes: usize) -> Result<(), BoundaryError> {
    let mut block: Vec<u8> = Vec::new();
    block
        .try_reserve_exact(bytes)
        .map_err(|_| out_of_memory(domain))
}

/// `INPUT_TOO_LARGE` in `domain`, worded as `tooLarge` in `js/errors.mjs` words it.
pub(crate) fn too_large(
    domain: &str,
    what: &str,
    size: usize,
    bound: usize,
    unit: &str,
) -> BoundaryError {
    BoundaryError(error_value(
        domain,
        "INPUT_TOO_LARGE",
        &format!("{what} has {size} {unit}, more than the bound of {bound} {unit}"),
    ))
}
