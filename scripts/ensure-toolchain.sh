#!/usr/bin/env bash
# Installs what building partkit needs, skipping whatever is already present at the right version:
# a C compiler, the wasm32 target, and the wasm-bindgen CLI matching the version pinned in
# Cargo.toml (scripts/build.mjs runs cargo and wasm-bindgen itself; nothing needs wasm-pack).
# Safe to run on every build; on a machine that has everything it does nothing and takes < 1 s.
set -euo pipefail
cd "$(dirname "$0")/.."

# The CLI must match the `wasm-bindgen = "=X"` pin in Cargo.toml exactly.
WASM_BINDGEN_VERSION="$(sed -n 's/^wasm-bindgen = { *version = "=\([0-9.]*\)".*/\1/p; s/^wasm-bindgen = "=\([0-9.]*\)"/\1/p' Cargo.toml | head -n1)"
if [ -z "$WASM_BINDGEN_VERSION" ]; then
  echo "ensure-toolchain: could not read the wasm-bindgen pin from Cargo.toml" >&2
  exit 1
fi

export PATH="$HOME/.cargo/bin:$PATH"
log() { echo "ensure-toolchain: $*" >&2; }

if ! command -v cargo >/dev/null 2>&1; then
  log "cargo not found: install Rust with rustup first (https://rustup.rs)"
  exit 1
fi

# A C compiler (cargo links build scripts with it) and XZ Utils' xz (the build's LZMA encoder).
if ! command -v cc >/dev/null 2>&1 || ! command -v xz >/dev/null 2>&1; then
  log "installing a C compiler (gcc) and xz-utils"
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -q >/dev/null
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q gcc libc6-dev xz-utils >/dev/null
fi

if ! rustup target list --installed 2>/dev/null | grep -qx wasm32-unknown-unknown; then
  log "adding the wasm32-unknown-unknown target"
  rustup target add wasm32-unknown-unknown
fi

have_version() { # tool expected-version
  command -v "$1" >/dev/null 2>&1 && "$1" --version 2>/dev/null | grep -q " $2\$"
}

if ! have_version wasm-bindgen "$WASM_BINDGEN_VERSION"; then
  # Not --locked: the registry mirror here lacks one of the CLI's locked dependencies.
  log "installing wasm-bindgen-cli $WASM_BINDGEN_VERSION (a few minutes)"
  cargo install wasm-bindgen-cli --version "$WASM_BINDGEN_VERSION" --force
fi
