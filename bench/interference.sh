#!/usr/bin/env bash
# Verdicts under interference: repeated checks of identical loop devices
# whose blk-throttle limits move over time (steady, jitter, shared drifts,
# with and without a slow disk). Needs root and cgroup v1 blkio. Prints
# Markdown tables for docs/benchmarks.md. Options go to
# bench/interference.py (--runs N, --disks N, --sample D, --against BINARY,
# --only TEXT).
set -euo pipefail
cd "$(dirname "$0")/.."
command -v openssl >/dev/null || { apt-get update -qq && apt-get install -y -qq openssl >/dev/null; }
cargo build --release --quiet
exec python3 bench/interference.py --binary "$PWD/target/release/arrayburn" "$@"
