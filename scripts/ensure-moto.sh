#!/usr/bin/env bash
# Installs moto's S3-compatible server (PyPI `moto[server]`, Apache-2.0) into a virtualenv for the
# S3 listing tests (tests/s3.test.js start `moto_server -p PORT` on loopback). Idempotent: when
# the venv already has this version it does nothing (< 1 s); the first install takes about a
# minute. The venv lives in $PARTKIT_MOTO_VENV (default ~/.cache/partkit/moto); the tests look
# for moto_server there (or on PATH, or at $PARTKIT_MOTO_SERVER).
set -euo pipefail

MOTO_VERSION="5.2.1"
VENV="${PARTKIT_MOTO_VENV:-$HOME/.cache/partkit/moto}"
log() { echo "ensure-moto: $*" >&2; }

installed_ok() {
  [ -x "$VENV/bin/moto_server" ] && [ -x "$VENV/bin/python" ] || return 1
  "$VENV/bin/python" - "$MOTO_VERSION" <<'PY' 2>/dev/null
import sys
from importlib.metadata import version
sys.exit(0 if version("moto") == sys.argv[1] else 1)
PY
}

if installed_ok; then
  exit 0
fi

command -v python3 >/dev/null 2>&1 || { log "python3 is required (with the venv module)"; exit 1; }
log "installing moto[server]==$MOTO_VERSION into $VENV (about a minute)"
mkdir -p "$(dirname "$VENV")"
[ -x "$VENV/bin/pip" ] || python3 -m venv "$VENV"
"$VENV/bin/pip" install --quiet --disable-pip-version-check "moto[server]==$MOTO_VERSION"
installed_ok || { log "moto_server $MOTO_VERSION is still missing after the install"; exit 1; }
