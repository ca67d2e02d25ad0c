#!/usr/bin/env bash
# scripts/test-on-image-node.sh - the whole vitest suite again, on the image's Node
# (scripts/image-node.sh): that node first on PATH and running vitest itself, so the servers the
# tests spawn (process.execPath) and every `node` they call are the runtime the image ships.
# Needs dist/ built (npm test's pretest does it).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
node=$(bash scripts/image-node.sh)
echo "vitest on the image's Node: $node ($("$node" --version))"
PATH="$(dirname "$node"):$PATH" exec "$node" node_modules/vitest/vitest.mjs run "$@"
