#!/usr/bin/env bash
# The rehearsal of a GPU visit without a GPU (issue 39; docs/gpu-check.md).
#   gpu_check_test.sh bundle SOURCE BUILD DIR   scripts/device-bundle --no-build
#       --check into DIR/bundle and DIR/bundle.tar.xz: the size lines, packed
#       bundle + source under 48 MiB (the archive's own size), the archive holds
#       device-bundle/ as the folder is (tar, and Python's tarfile for a host
#       without xz), every bundled program starts from the unpacked archive in
#       a clean environment, no python plugin (nor libpython)
#   gpu_check_test.sh dry-run SOURCE BUILD DIR  the bundle's gpu-check --dry-run:
#       the stages in order of value, budgets under 8 minutes, at most 4 result
#       files each under 16 MiB (a 20 MiB fake log cut to fit), the eight
#       acceptance kernels in the generated sweep, which the real CLI parses
#   gpu_check_test.sh resume SOURCE BUILD DIR   a real run of gpu-check over a
#       fake schedlab whose sweeps hang: the stage budget cuts them, the rest is
#       skipped and said so, exit 4; --resume runs only what was skipped or cut
#   gpu_check_test.sh usage SOURCE BUILD DIR    each user error's message and exit
set -uo pipefail
what=$1 src=$2 build=$3 dir=$4
fail() { echo "FAIL: $*"; exit 1; }
# expect CODE REGEX -- CMD...: exit status and output (stdout and stderr).
expect() {
  local want=$1 regex=$2; shift 3
  out=$("$@" 2>&1); got=$?
  if ((got != want)) || ! grep -Eq -e "$regex" <<<"$out"; then
    echo "command: $*"; echo "exit $got (expected $want); output (expected /$regex/):"; echo "$out"
    fail "$what"
  fi
}
mkdir -p "$dir"
bundle=$dir/bundle

case $what in
bundle)
  rm -rf "$bundle"
  expect 0 'check: [0-9]+ ok, 0 failed' -- env SCHEDLAB_BUILD_DIR="$build" "$src/scripts/device-bundle" --no-build --check --dest "$bundle"
  echo "$out"
  grep -Eq '^device-bundle: bundle [0-9.]+ MiB' <<<"$out" || fail "no size line"
  # The packed bundle: its size is what the limit counts, with the source tree's.
  archive=$bundle.tar.xz
  [[ -f $archive ]] || fail "no $archive"
  packed=$(stat -c %s "$archive")
  grep -qF "device-bundle: packed $(awk -v b="$packed" 'BEGIN {printf "%.1f", b / 1048576}') MiB in $archive" <<<"$out" ||
    fail "the packed size line does not give $archive's size ($packed bytes)"
  source=$(sed -n 's/^device-bundle: source tree \([0-9.]*\) MiB.*/\1/p' <<<"$out")
  total=$(sed -n 's/^device-bundle: packed bundle + source tree \([0-9.]*\) MiB.*/\1/p' <<<"$out")
  awk -v t="$total" -v p="$packed" -v s="$source" 'BEGIN {d = t - (p / 1048576 + s); exit !(t > 0 && t < 48 && d < 0.11 && d > -0.11)}' ||
    fail "packed bundle + source tree '$total' MiB: not $packed bytes + $source MiB, or not under 48"
  # One folder, device-bundle/, holding what the bundle's folder holds; the
  # check started everything from it.
  others=$(tar -tJf "$archive" | grep -v '^device-bundle/' | head -3)
  [[ -z $others ]] || fail "$archive holds more than device-bundle/: $others"
  grep -q "ok $archive unpacks to what $bundle holds" <<<"$out" || fail "--check did not compare the archive with the folder"
  grep -Eq "check: [0-9]+ ok, 0 failed, from env -i in $archive unpacked to a temporary folder" <<<"$out" ||
    fail "--check did not run from the unpacked archive"
  grep -q 'ok gpu-check --dry-run --only 1 from the unpacked copy' <<<"$out" || fail "gpu-check not started from the unpacked copy"
  # Where the host has no xz, Python's tarfile unpacks it the same (modes too).
  py=$dir/py-unpacked
  rm -rf "$py"
  /usr/bin/python3 -m tarfile -e "$archive" "$py" || fail "python3 -m tarfile -e $archive failed"
  diff <(cd "$bundle" && find . -type f -printf '%P %s %m\n' | sort) <(cd "$py/device-bundle" && find . -type f -printf '%P %s %m\n' | sort) ||
    fail "python3 -m tarfile -e unpacks $archive differently"
  "$py/device-bundle/bin/schedlab" --version > /dev/null || fail "schedlab from the Python-unpacked copy does not start"
  rm -rf "$py"
  # The python plugin stays out (gpu-check runs no Python heuristic), and with it libpython.
  [[ -e $bundle/lib/schedlab/plugins/python.so ]] && fail "python.so is bundled"
  ls "$bundle"/lib/libpython* > /dev/null 2>&1 && fail "libpython is bundled"
  # Every built *_gpu_test and every built-in plugin is in it, stripped.
  while IFS= read -r -d '' t; do
    readelf -h "$t" > /dev/null 2>&1 || continue
    [[ -x $bundle/tests/$(basename "$t") ]] || fail "$(basename "$t") is not bundled"
    grep -q "ok tests/$(basename "$t") --gtest_list_tests" <<<"$out" || fail "$(basename "$t") not started by --check"
  done < <(find "$build/tests" -type f -executable -name '*_gpu_test' -print0)
  for p in "$build"/plugins/*.so; do
    [[ $(basename "$p") == python.so ]] && continue
    grep -q "ok plugin $(basename "$p") loads" <<<"$out" || fail "plugin $(basename "$p") not loaded by --check"
  done
  for f in "$bundle"/bin/schedlab "$bundle"/tests/* "$bundle"/lib/schedlab/plugins/*.so; do
    readelf -S "$f" | grep -q '\.symtab' && fail "$f is not stripped"
  done
  readelf -d "$bundle/bin/schedlab" | grep -q "$build" && fail "bin/schedlab's rpath names the build tree"
  # Nothing else: no benchmarks, no CPU-only test programs.
  extra=$(find "$bundle/bin" "$bundle/tests" -type f ! -name schedlab ! -name '*_gpu_test')
  [[ -z $extra ]] || fail "bundled beyond what the check runs: $extra"
  ;;

dry-run)
  [[ -x $bundle/gpu-check ]] || fail "no bundle in $bundle (the gpu_check_bundle test makes it)"
  res=$dir/dry-results
  rm -rf "$res"
  expect 0 'budgets: ' -- "$bundle/gpu-check" --dry-run "$res" --fake-log-mib 20 --keep-work
  echo "$out" | grep -E '^(== stage|budgets|results)'
  # The stages, in order of value.
  [[ $(grep -o '^== stage [0-9] ([a-z-]*)' <<<"$out" | tr '\n' ' ') == \
     "== stage 1 (start) == stage 2 (gpu-tests) == stage 3 (speed) == stage 4 (torch) == stage 5 (rest) " ]] ||
    fail "stages out of order"
  sum=$(sed -n 's/^budgets: .* = \([0-9]*\) s of at most 480 s.*/\1/p' <<<"$out")
  [[ -n $sum ]] && ((sum < 480)) || fail "budgets sum to '$sum' s, not under 8 minutes"
  # Every bundled gpu test is in stage 2; the start is checked first.
  for t in "$bundle"/tests/*_gpu_test; do
    grep -Eq "^   \[$(basename "$t")(\.shard[0-9]+-of-[0-9]+)?\]" <<<"$out" || fail "$(basename "$t") not run"
  done
  # A program of many tests runs as GoogleTest shards that cover it.
  grep -q '^   \[lower_matrix_gpu_test.shard1-of-[2-4]\] (gpu-test) GTEST_TOTAL_SHARDS=[2-4] GTEST_SHARD_INDEX=0 ' <<<"$out" ||
    fail "lower_matrix_gpu_test is not sharded"
  grep -q '^   \[device\] .*exec add --backend cuda' <<<"$out" || fail "no device probe in stage 1"
  grep -q '^   \[torch-speed-of-light\] .*torch-baseline.* --schedlab .*speed_of_light_acceptance.jsonl --schedlab-only' <<<"$out" ||
    fail "stage 4 does not time torch at the speed-of-light records' points"
  # At most 4 files, directly in the results folder, each under 16 MiB.
  n=$(find "$res" -mindepth 1 | wc -l)
  ((n <= 4)) || fail "$n entries in the results folder"
  for f in summary.txt logs.tar.gz model-error.txt torch-baseline.txt; do [[ -f $res/$f ]] || fail "no $f"; done
  big=$(find "$res" -type f -size +16M)
  [[ -z $big ]] || fail "over 16 MiB: $big"
  grep -q 'truncated to fit the return: logs/fake-large.log' "$res/summary.txt" || fail "the 20 MiB log is not reported cut"
  tar tzf "$res/logs.tar.gz" | grep -qx 'state.tsv' || fail "no state.tsv in logs.tar.gz"
  # The eight acceptance kernels of the speed-of-light work, as a sweep the CLI reads.
  work=$(sed -n 's/^work folder kept: //p' <<<"$out")
  sweep=$work/sweeps/speed_of_light_acceptance.yaml
  pts=$(awk '/^  - fusion:/ {f = $3} /^    sizes:/ {n = gsub(/,/, ",") + 1; if ($0 ~ /K: \[[0-9]+, [0-9]+\]/) c += 2; else c += 1} END {print c}' "$sweep")
  ((pts == 8)) || fail "$sweep has $pts points, not the eight acceptance kernels"
  grep -q bf16 "$sweep" && fail "$sweep has the bf16 rows"
  expect 2 "has no scheduler named 'no-such-scheduler'" -- "$bundle/bin/schedlab" run "$sweep" --only no-such-scheduler
  expect 2 "has no scheduler named 'no-such-scheduler'" -- "$bundle/bin/schedlab" run "$work/sweeps/speed_of_light_bf16.yaml" --only no-such-scheduler
  rm -rf "$work"
  # Packed bundle + source tree (as device-bundle recorded it) under the limit.
  b=$(stat -c %s "$bundle.tar.xz") s=$(sed -n 's/^source_bytes=//p' "$bundle/BUNDLE")
  [[ -n $s ]] && ((b + s < 48 * 1048576)) || fail "packed bundle $b + source '$s' bytes, not under 48 MiB"
  ;;

resume)
  # A bundle of fakes: schedlab answers at once, except `run` while
  # FAKE_SLOW=1 (it hangs, as a sweep that outlasts its budget).
  fb=$dir/fake-bundle
  rm -rf "$fb" "$dir/res"
  mkdir -p "$fb/bin" "$fb/tests" "$fb/share/schedlab"
  cp -r "$src/configs" "$fb/share/schedlab/configs"
  cp "$src/scripts/gpu-check" "$src/scripts/torch-baseline" "$fb/"
  cat > "$fb/bin/schedlab" <<'EOF'
#!/usr/bin/env bash
case $1 in
  --version) echo "schedlab 0.1.0 (fake)" ;;
  run) [[ ${FAKE_SLOW:-0} == 1 ]] && exec sleep 300
       while (($#)); do [[ $1 == -o ]] && echo '{"fake": true}' > "$2"; shift; done ;;
  report) echo "rank correlation 0.9 (fake)" ;;
  *) echo "fake schedlab $*: ok" ;;
esac
EOF
  printf '#!/bin/sh\necho "[  SKIPPED ] no CUDA device answers (fake)"\n' > "$fb/tests/fake_gpu_test"
  printf '#!/bin/sh\necho "torch-baseline: skipped: fake python"\n' > "$fb/python"
  chmod +x "$fb/bin/schedlab" "$fb/tests/fake_gpu_test" "$fb/python"
  export SCHEDLAB_PYTHON=$fb/python
  expect 4 'to run them: gpu-check --resume RESULTS' -- env FAKE_SLOW=1 "$fb/gpu-check" "$dir/res" --budget 10
  echo "$out"
  st() { awk -F'\t' -v id="$1" '$2 == id {print $3}' "$dir/state/state.tsv"; }
  unpack() { rm -rf "$dir/state"; mkdir -p "$dir/state"; tar -C "$dir/state" -xzf "$dir/res/logs.tar.gz"; }
  unpack
  [[ $(st device) == ok && $(st fake_gpu_test) == "skip(no device)" ]] || fail "stages 1-2: $(st device), $(st fake_gpu_test)"
  [[ $(st quickstart) == cut ]] || fail "the hanging sweep is '$(st quickstart)', not cut at its budget"
  [[ $(st sol-acceptance) == skipped && $(st torch-all) == skipped && $(st model-error-all) == skipped ]] ||
    fail "what the budget left out is not marked skipped"
  grep -Eq '^skipped or cut at their budget \([0-9]+\): quickstart sol-acceptance ' "$dir/res/summary.txt" || fail "summary does not say what it skipped"
  (($(find "$dir/res" -mindepth 1 | wc -l) == 4)) || fail "not 4 files in the results"
  # The resume runs the start again and what was skipped or cut, nothing else.
  expect 0 'totals: [0-9]+ ok, 0 failed, 0 skipped or cut' -- env FAKE_SLOW=0 "$fb/gpu-check" --resume "$dir/res"
  echo "$out"
  line=$(grep '^gpu-check: resuming' <<<"$out")
  grep -q ' quickstart ' <<<"$line" && grep -q ' version ' <<<"$line" || fail "resume does not run the cut sweep and the start: $line"
  grep -q 'fake_gpu_test' <<<"$line" && fail "resume runs the gpu tests again: $line"
  unpack
  [[ $(st sol-acceptance) == ok && $(st fake_gpu_test) == "skip(no device)" && $(st torch-all) == "skip(no torch)" ]] ||
    fail "after resume: $(st sol-acceptance), $(st fake_gpu_test), $(st torch-all)"
  (($(find "$dir/res" -mindepth 1 | wc -l) == 4)) || fail "not 4 files in the results after resume"
  ;;

usage)
  gc=$src/scripts/gpu-check
  r=$dir/usage
  rm -rf "$r"; mkdir -p "$r/full"; touch "$r/full/x"
  expect 2 "gpu-check: error: --only: expected stage numbers 1-5 separated by commas, found '6'" -- "$gc" --dry-run --only 6 "$r/a"
  expect 2 "gpu-check: error: --budget: expected whole seconds from 10 to 450 .*found '600'" -- "$gc" --dry-run --budget 600 "$r/a"
  expect 2 "gpu-check: error: the results folder '$r/full' is not empty" -- "$gc" --dry-run "$r/full"
  expect 2 "gpu-check: error: --resume $r/a: no logs.tar.gz there" -- "$gc" --resume "$r/a"
  expect 2 "gpu-check: error: --resume needs the results folder" -- "$gc" --resume
  expect 2 "gpu-check: error: --fake-log-mib is for --dry-run only" -- "$gc" --fake-log-mib 3 "$r/b"
  expect 2 "gpu-check: error: one results folder, found" -- "$gc" --dry-run "$r/c" "$r/d"
  expect 2 "gpu-check: error: unknown option '--bogus'" -- "$gc" --bogus
  expect 2 "gpu-check: error: no configs at $r/full/share/schedlab/configs" -- env SCHEDLAB_BUNDLE="$r/full" "$gc" --dry-run "$r/e"
  # torch-baseline --schedlab-only (stage 4: only the points schedlab measured),
  # on the NumPy backend.
  tbl=(/usr/bin/python3 "$src/scripts/torch-baseline" --backend numpy --device cpu --reps 1 --warmup 0)
  printf '%s\n' '{"fusion":"row_sum","sizes":{"N":8,"K":32},"size_label":"N=8,K=32","scheduler":"h","status":"ok","times_us":[4]}' \
    '{"fusion":"softmax","sizes":{"N":4,"K":16},"size_label":"N=4,K=16","scheduler":"h","status":"ok","times_us":[4]}' > "$r/recs.jsonl"
  expect 0 'row_sum +N=8,K=32 .* 4\.00 \(h\)' -- "${tbl[@]}" --fusion row_sum --schedlab "$r/recs.jsonl" --schedlab-only --out "$r/tb"
  grep -q softmax <<<"$out" && fail "--schedlab-only --fusion row_sum ran softmax"
  [[ $(grep -c '"size_label"' "$r/tb/torch-baseline.json") == 1 ]] || fail "--schedlab-only: not just the record's point"
  expect 2 "torch-baseline: error: --schedlab-only runs the points of --schedlab records; give --schedlab JSONL" -- "${tbl[@]}" --schedlab-only
  expect 2 "torch-baseline: error: --schedlab-only runs the records' points; drop --size \(N=3\)" -- "${tbl[@]}" --schedlab "$r/recs.jsonl" --schedlab-only --size N=3
  expect 2 "torch-baseline: error: --schedlab-only: no ok records of add in $r/recs.jsonl" -- "${tbl[@]}" --fusion add --schedlab "$r/recs.jsonl" --schedlab-only
  db=$src/scripts/device-bundle
  expect 2 "device-bundle: error: --limit-mib: expected a whole number of MiB, found 'x'" -- "$db" --limit-mib x
  expect 2 "device-bundle: error: unknown argument '--bogus'" -- "$db" --bogus
  expect 1 "device-bundle: error: no bundle in $r/none" -- "$db" --check-only --dest "$r/none"
  # Past the size limit the script fails, naming the sizes.
  [[ -x $bundle/bin/schedlab ]] || fail "no bundle in $bundle (the gpu_check_bundle test makes it)"
  expect 1 "device-bundle: error: packed bundle \+ source tree is [0-9.]+ MiB, over the limit of 1 MiB" -- "$db" --check-only --dest "$bundle" --limit-mib 1
  # A bundle folder without its archive cannot be checked as it travels.
  mkdir -p "$r/noarch/bin"; cp "$bundle/BUNDLE" "$r/noarch/"; printf '#!/bin/sh\n' > "$r/noarch/bin/schedlab"; chmod +x "$r/noarch/bin/schedlab"
  expect 1 "device-bundle: error: no $r/noarch.tar.xz, the packed bundle" -- "$db" --check-only --dest "$r/noarch"
  ;;
*) fail "unknown case '$what'" ;;
esac
echo "ok: $what"
