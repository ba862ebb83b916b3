#!/usr/bin/env bash
# Installs tansu (a Kafka-API-compatible broker, Apache-2.0, from crates.io) for the Kafka broker
# tests (npm run test:kafka), skipping it when ~/.cargo/bin/tansu is already this version built
# with the dynostore feature (the default build has no storage engine). Idempotent: on a machine
# that has it, it does nothing and takes < 1 s. The first install compiles for ~13 min on 2 cores.
set -euo pipefail

TANSU_VERSION="0.6.0"
TANSU_FEATURES="dynostore"

export PATH="$HOME/.cargo/bin:$PATH"
log() { echo "ensure-tansu: $*" >&2; }

if ! command -v cargo >/dev/null 2>&1; then
  log "cargo not found: install Rust with rustup first (https://rustup.rs)"
  exit 1
fi

# cargo records each installed crate's version and features in ~/.cargo/.crates2.json.
installed_ok() {
  [ -x "$HOME/.cargo/bin/tansu" ] || return 1
  node -e '
    const fs = require("fs");
    const [file, version, feature] = process.argv.slice(1);
    const installs = JSON.parse(fs.readFileSync(file, "utf8")).installs || {};
    const ok = Object.entries(installs).some(([k, v]) =>
      k.startsWith(`tansu ${version} `) && (v.features || []).includes(feature) && (v.bins || []).includes("tansu"));
    process.exit(ok ? 0 : 1);
  ' "${CARGO_HOME:-$HOME/.cargo}/.crates2.json" "$TANSU_VERSION" "$TANSU_FEATURES" 2>/dev/null
}

if installed_ok; then
  exit 0
fi

log "installing tansu $TANSU_VERSION --features $TANSU_FEATURES (about 13 minutes on 2 cores)"
cargo install tansu --version "$TANSU_VERSION" --features "$TANSU_FEATURES" --locked --force \
  || cargo install tansu --version "$TANSU_VERSION" --features "$TANSU_FEATURES" --force
installed_ok || { log "tansu $TANSU_VERSION is still missing after the install"; exit 1; }
