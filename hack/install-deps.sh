#!/usr/bin/env bash
# Installs, idempotently, the host packages ectest needs (make deps). The
# list lives in one place, internal/hostdeps; every entry point also
# installs what it is about to use, so this is only a warm start.
set -euo pipefail
cd "$(dirname "$0")/.."
exec ${GO:-go} run ./cmd/ectest-deps "$@"
