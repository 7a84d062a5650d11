#!/usr/bin/env bash
# arrayburn iozone vs fio and dd on the same file in the same run: O_DIRECT
# MB/s on the disk-backed filesystem, and CPU per GiB of a cached run on
# tmpfs. Prints Markdown for docs/benchmarks.md. Options go to
# bench/iozone_compare.py (--rounds N, --size-mb N, --tmpfs-mb N, --disk-dir DIR).
set -euo pipefail
cd "$(dirname "$0")/.."
command -v fio >/dev/null || { apt-get update -qq && apt-get install -y -qq fio >/dev/null; }
cargo build --release --quiet
exec python3 bench/iozone_compare.py --binary "$PWD/target/release/arrayburn" "$@"
