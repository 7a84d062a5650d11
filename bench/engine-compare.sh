#!/usr/bin/env bash
# arrayburn's engines (psync, io_uring at queue depths 1-16) against fio's
# on the same loop devices: one memory-backed, one disk-backed, and eight
# memory-backed read at once (aggregate and max/min disk). Needs root.
# Prints Markdown tables for docs/benchmarks.md. Options go to
# bench/engine_compare.py (--rounds N, --depths 1,2,4,8,16, --block B,
# --shm-size, --disk-size, --disk-dir, --array N, --array-size, --array-only).
set -euo pipefail
cd "$(dirname "$0")/.."
command -v fio >/dev/null || { apt-get update -qq && apt-get install -y -qq fio >/dev/null; }
command -v openssl >/dev/null || { apt-get update -qq && apt-get install -y -qq openssl >/dev/null; }
cargo build --release --quiet
exec python3 bench/engine_compare.py --binary "$PWD/target/release/arrayburn" "$@"
