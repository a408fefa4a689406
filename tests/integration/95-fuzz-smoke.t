#!/usr/bin/env bash
# 95-fuzz-smoke: proves that every libFuzzer target of tests/fuzz/ builds
# and runs (scripts/fuzz --smoke: 5 s each, two targets at a time, ASan +
# UBSan; each target replays its whole seed corpus first): one test per
# target, ok when the target ran and found no crash. A crash whose signature
# is listed in tests/fuzz/known-crashes (reported, not fixed yet) is a TODO.
# Finding bugs is the job of longer runs (scripts/fuzz --seconds 600, figures
# in docs/reliability.md), not of CI. Skips when clang cannot build
# libFuzzer targets here. Needs no node and no MariaDB. SHOAL_FUZZ_SECONDS
# overrides the 5 s per target. Logs go to $BUILD_TEST/fuzz/ (under
# scripts/test) or a temporary directory.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
cd "$SRCDIR" || exit 1
secs=${SHOAL_FUZZ_SECONDS:-5}

mapfile -t targets < <(scripts/fuzz --list)
if [ ${#targets[@]} -eq 0 ]; then
  skip_all "no fuzz targets in tests/fuzz/"
fi
if ! scripts/fuzz --check >/dev/null 2>&1; then
  skip_all "clang cannot build libFuzzer targets here (clang, libclang-rt-dev)"
fi
plan ${#targets[@]}
# logs and results of this run apart from any other run of scripts/fuzz
if [ -n "${BUILD_TEST:-}" ]; then
  run="$BUILD_TEST/fuzz"
  rm -rf "$run"
else
  run=$(mktemp -d)
  on_exit "rm -rf '$run'"
fi
mkdir -p "$run"
out="$run/fuzz.out"
FUZZ_RUN_DIR="$run" scripts/fuzz --seconds "$secs" --jobs 2 "${targets[@]}" >"$out" 2>&1
rc=$?
sed 's/^/# /' "$out"

for t in "${targets[@]}"; do
  res="$run/results/$t"
  if [ $rc = 2 ] || [ ! -f "$res" ]; then
    not_ok "$t: no result (scripts/fuzz exited $rc)"
    continue
  fi
  execs=$(sed -n 's/^execs=//p' "$res")
  s=$(sed -n 's/^seconds=//p' "$res")
  crashes=$(sed -n 's/^crashes=//p' "$res")
  if [ "${execs:-0}" -gt 0 ] && [ "$crashes" = 0 ]; then
    ok "$t: $execs execs in $s s, no crash"
    continue
  fi
  if [ "${execs:-0}" = 0 ] && [ "$crashes" = 0 ]; then
    not_ok "$t: ran no input"
    continue
  fi
  # known (reported) crash? every signature must match a listed text
  known=""
  sigs=$(sed -n 's/^summary=[0-9]* //p' "$res")
  while IFS=$'\t' read -r kt ktext knote; do
    [ "$kt" = "$t" ] || continue
    if [ -n "$sigs" ] && ! grep -vqF -- "$ktext" <<<"$sigs"; then known=$knote; fi
  done < <(grep -v '^#' tests/fuzz/known-crashes 2>/dev/null || true)
  if [ -n "$known" ]; then
    todo 0 "$t: $crashes crash input(s) in build-fuzz/crashes/$t/" "known: $known"
  else
    not_ok "$t: $crashes crash input(s) in build-fuzz/crashes/$t/"
  fi
  sed -n 's/^summary=/#   /p' "$res"
done
done_testing
