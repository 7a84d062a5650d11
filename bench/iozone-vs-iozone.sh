#!/usr/bin/env bash
# Real iozone 3.487 against `arrayburn iozone` on the same filesystem,
# alternating, several rounds; prints the Markdown table for
# docs/benchmarks.md. Needs a built iozone: from the iozone3_487 source
# (iozone.org's tarball, or a mirror of it such as the hfzhbq/iozone
# repository at commit 1c3b3dc), `make CC='cc -fcommon' linux-AMD64` in its
# src/current folder. Never commit iozone's code.
#
#   bench/iozone-vs-iozone.sh --iozone /path/to/iozone [--dir /var/tmp] [--rounds 4] [--huge-pages]
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet
exec python3 bench/iozone_vs_iozone.py --arrayburn "$PWD/target/release/arrayburn" "$@"
