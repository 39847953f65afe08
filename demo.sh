#!/usr/bin/env bash
# Builds scry and runs it on a bundled fixture: the first command of the README.
set -euo pipefail
cd "$(dirname "$0")"
cargo build --release --quiet
mkdir -p target/demo
cc -g -O0 -o target/demo/loop fixtures/loop.c
./target/release/scry -x examples/demo.js -- target/demo/loop 4 </dev/null
