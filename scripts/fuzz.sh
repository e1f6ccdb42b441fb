#!/usr/bin/env bash
# Build and run each libFuzzer target for SECONDS (default 300; CI uses 60).
# A SwiftPM executable cannot host LLVMFuzzerTestOneInput, so each target is compiled
# directly as one module from the sources it fuzzes. Crashes land in .build-fuzz/ and fail the run.
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_EACH="${1:-300}"
OUT=.build-fuzz
mkdir -p "$OUT"
export PATH="/opt/swift/usr/bin:$PATH"
# Swift's own backtracer trips over ASan (memserver_read) and can hang; libFuzzer prints the stack.
export SWIFT_BACKTRACE=enable=no
declare -A SOURCES=(
  [jsonrpc]="Sources/ParlanceJSON/*.swift Sources/JSONRPC/FrameDecoder.swift Sources/JSONRPC/Message.swift Sources/JSONRPC/ErrorCode.swift"
  [documents]="Sources/ParlanceHash/*.swift Sources/ParlanceDocuments/*.swift"
  [schema]="Sources/ParlanceJSON/*.swift Sources/ParlanceSchema/*.swift"
)
status=0
for target in jsonrpc documents schema; do
  bin="$OUT/fuzz-$target"
  echo "fuzz: building $target" >&2
  # shellcheck disable=SC2086
  swiftc -sanitize=fuzzer,address -suppress-warnings -parse-as-library -module-name "Fuzz_$target" ${SOURCES[$target]} "fuzz/$target/entry.swift" -o "$bin" 2> "$OUT/$target.build.log" || { cat "$OUT/$target.build.log" >&2; exit 1; }
  corpus="$OUT/corpus-$target"
  mkdir -p "$corpus"
  echo "fuzz: running $target for ${SECONDS_EACH}s" >&2
  if ! "$bin" -max_total_time="$SECONDS_EACH" -timeout=10 -rss_limit_mb=4096 -artifact_prefix="$OUT/crash-$target-" \
      -print_final_stats=1 "$corpus" "fuzz/corpus/$target" 2> "$OUT/$target.log"; then
    echo "fuzz: $target FAILED — see $OUT/$target.log and $OUT/crash-$target-*" >&2
    tail -30 "$OUT/$target.log" >&2
    status=1
  fi
  grep -E "stat::number_of_executed_units|stat::peak_rss_mb" "$OUT/$target.log" | sed "s/^/fuzz: $target /" >&2 || true
done
exit $status
