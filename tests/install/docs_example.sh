#!/bin/sh
# The docs/plugins.md example, exactly as written: extract its files, build
# the plugin out of tree against the installed prefix, list it with the
# installed CLI from the example's own directory, and run its sweep (the
# plugin against the built-in heuristic, validated on the CPU backend).
# usage: docs_example.sh PREFIX DOC WORKDIR CMAKE GENERATOR CXX
set -eu
prefix=$1 doc=$2 work=$3 cmake=$4 generator=$5 cxx=$6
here=$(dirname "$0")
rm -rf "$work" && mkdir -p "$work"
python3 "$here/extract_md_files.py" "$doc" "$work"
cd "$work"
"$cmake" -S . -B build -G "$generator" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_CXX_COMPILER="$cxx" > configure.log 2>&1 ||
  { cat configure.log; exit 1; }
"$cmake" --build build > build.log 2>&1 || { cat build.log; exit 1; }
[ -f build/my_pointwise.so.sources ] || { echo "no my_pointwise.so.sources beside the plugin"; exit 1; }
"$prefix/bin/schedlab" plugins --plugin-dir build > plugins.txt 2>&1 || { cat plugins.txt; exit 1; }
grep -q '^my_pointwise 0\.1 (plugin ABI ' plugins.txt || { echo "my_pointwise not listed"; cat plugins.txt; exit 1; }
grep -q '^pointwise 1\.0 (plugin ABI ' plugins.txt || { echo "the built-ins not listed"; cat plugins.txt; exit 1; }
status=0
"$prefix/bin/schedlab" run my_sweep.yaml --plugin-dir build --cache-dir cache > run.txt 2>&1 || status=$?
cat run.txt
[ "$status" -eq 0 ] || { echo "schedlab run exited $status"; exit 1; }
# Both schedulers' rows, for both sizes; every point validated (exit 0).
n=$(grep -c ' mine .*block=' run.txt || true)
[ "$n" -ge 2 ] || { echo "expected a row of mine per size, found $n"; exit 1; }
grep -q 'records in schedlab-results/my_sweep.jsonl' run.txt || { echo "no records"; exit 1; }
[ "$(grep -c '"scheduler":"mine"' schedlab-results/my_sweep.jsonl)" -eq 6 ] ||
  { echo "expected 6 records of mine (2 sizes x 3 blocks)"; exit 1; }
echo "docs example: ok"
