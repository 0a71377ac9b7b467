#!/usr/bin/env bash
# DESIGN.md is assembled from the per-layer design sections in docs/design-*.md.
set -euo pipefail
cd "$(dirname "$0")/.."
{
  cat docs/design-core.md
  for part in sim archive plugins cuda; do
    f="docs/design-$part.md"
    [ -f "$f" ] || continue
    echo
    cat "$f"
  done
} > DESIGN.md
