#!/usr/bin/env bash
# Build and run each libFuzzer target for SECONDS (default 300; make test runs 30).
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
# The three targets are built side by side, then fuzzed side by side: -max_total_time is
# wall time, so on two cores this takes one target's time instead of three, each target
# getting two thirds of a core.
targets=(jsonrpc documents schema)
build() {
  echo "fuzz: building $1" >&2
  # shellcheck disable=SC2086
  swiftc -sanitize=fuzzer,address -suppress-warnings -parse-as-library -module-name "Fuzz_$1" ${SOURCES[$1]} "fuzz/$1/entry.swift" \
    -o "$OUT/fuzz-$1" 2> "$OUT/$1.build.log"
}
run() {
  local corpus="$OUT/corpus-$1"
  mkdir -p "$corpus"
  "$OUT/fuzz-$1" -max_total_time="$SECONDS_EACH" -timeout=10 -rss_limit_mb=4096 -artifact_prefix="$OUT/crash-$1-" \
    -print_final_stats=1 "$corpus" "fuzz/corpus/$1" 2> "$OUT/$1.log"
}
pids=()
for target in "${targets[@]}"; do build "$target" & pids+=($!); done
for i in "${!targets[@]}"; do
  wait "${pids[$i]}" || { cat "$OUT/${targets[$i]}.build.log" >&2; exit 1; }
done
echo "fuzz: running ${targets[*]} for ${SECONDS_EACH}s, side by side" >&2
pids=()
for target in "${targets[@]}"; do run "$target" & pids+=($!); done
status=0
for i in "${!targets[@]}"; do
  target=${targets[$i]}
  if ! wait "${pids[$i]}"; then
    echo "fuzz: $target FAILED — see $OUT/$target.log and $OUT/crash-$target-*" >&2
    tail -30 "$OUT/$target.log" >&2
    status=1
  fi
  grep -E "stat::number_of_executed_units|stat::peak_rss_mb" "$OUT/$target.log" | sed "s/^/fuzz: $target /" >&2 || true
done
exit $status
