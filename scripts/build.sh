#!/usr/bin/env bash
# Builds the release binaries, .build/release/transferd and .build/release/transferctl. Each
# carries the Swift runtime, Foundation and Dispatch inside it (--static-swift-stdlib): calls
# into them are direct rather than through the PLT, nothing of Swift's is looked up when a
# command starts, and the binaries run where no Swift toolchain is installed. lld links them
# (the toolchain's own; gold warns about FoundationEssentials' use of mktemp). BENCHMARKS.md
# has what it changed: `transferctl` starts in ~9 ms instead of ~11.5, and the daemon takes
# ~6 % less CPU for a batch of small files.
#   usage: scripts/build.sh   (needs the packages of scripts/deps.sh's BUILD_PACKAGES)
set -euo pipefail
cd "$(dirname "$0")/.."
for product in transferd transferctl; do
    swift build -c release --static-swift-stdlib -Xswiftc -use-ld=lld --product "$product"
done
