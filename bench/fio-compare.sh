#!/usr/bin/env bash
# arrayburn vs fio on the same loop devices (memory-backed and disk-backed),
# alternating runs, plus a block-size sweep. Needs root. Prints a Markdown
# table for docs/benchmarks.md. Options are passed to bench/fio_compare.py
# (--rounds N, --shm-size BYTES, --disk-size BYTES, --disk-dir DIR, --block B).
set -euo pipefail
cd "$(dirname "$0")/.."
command -v fio >/dev/null || { apt-get update -qq && apt-get install -y -qq fio >/dev/null; }
command -v openssl >/dev/null || { apt-get update -qq && apt-get install -y -qq openssl >/dev/null; }
cargo build --release --quiet
exec python3 bench/fio_compare.py --binary "$PWD/target/release/arrayburn" "$@"
