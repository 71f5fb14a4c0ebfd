#!/bin/sh
# `schedlab watch` on an out-of-tree plugin with no --source and no --build:
# the plugin is built with schedlab_add_plugin against the installed prefix,
# which records its sources and build command beside the .so; watch reads
# them, rebuilds on an edit of the one constant (block 64 -> 128), reloads,
# re-runs, names the re-run scheduler once, and rewrites the --html report.
# usage: watch_recorded_sources.sh PREFIX PLUGIN_SOURCE WORKDIR CMAKE GENERATOR CXX
set -eu
prefix=$1 src=$2 work=$3 cmake=$4 generator=$5 cxx=$6
rm -rf "$work" && mkdir -p "$work"
cd "$work"
cp "$src" watch_plugin.cpp
cat > CMakeLists.txt <<'CMAKE'
cmake_minimum_required(VERSION 3.20)
project(watched LANGUAGES CXX)
find_package(schedlab REQUIRED)
schedlab_add_plugin(watch_plugin watch_plugin.cpp)
CMAKE
cat > sweep.yaml <<'YAML'
sweep: watch_recorded
fusions:
  - fusion: pointwise_add_mul
    sizes: {N: [64], K: [256]}
schedulers:
  - name: mine
    plugin: watch_plugin
measure: {repetitions: 3, warmup: 0}
backend: cpu
YAML
"$cmake" -S . -B build -G "$generator" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_CXX_COMPILER="$cxx" > configure.log 2>&1 ||
  { cat configure.log; exit 1; }
"$cmake" --build build > build.log 2>&1 || { cat build.log; exit 1; }
"$prefix/bin/schedlab" watch sweep.yaml --plugin-dir build -o results.jsonl --html report.html \
  --max-reruns 1 --cache-dir cache > out.txt 2>&1 &
pid=$!
# Until the banner, or watch ended without it; no time limit of its own (a
# loaded machine is slow, not wrong): CTest's TIMEOUT is the failsafe.
until grep -q '^watching watch_plugin' out.txt; do
  kill -0 $pid 2>/dev/null || grep -q '^watching watch_plugin' out.txt ||
    { echo "watch ended without its banner"; cat out.txt; exit 1; }
  sleep 0.1
done
grep -q "^watching watch_plugin: binary .*, sources $work/watch_plugin.cpp, build: .*--target watch_plugin" out.txt ||
  { echo "watch did not pick up the recorded sources and build command"; cat out.txt; kill $pid; exit 1; }
grep -q 'block=64' report.html || { echo "the first report lacks block=64"; kill $pid; exit 1; }
sleep 1.1  # a new mtime second for file systems with coarse stamps
sed -e 's/#define WATCH_BLOCK 64/#define WATCH_BLOCK 128/' "$src" > watch_plugin.cpp
status=0
wait $pid || status=$?
cat out.txt
[ $status -eq 0 ] || { echo "watch exited with $status"; exit 1; }
grep -q '^watch_plugin changed: building' out.txt || { echo "no rebuild"; exit 1; }
grep -q '^reloaded watch_plugin (generation 2); re-running mine against generation 1$' out.txt ||
  { echo "no reload, or the re-run line does not name mine once"; exit 1; }
grep -q 'block=128' report.html || { echo "the --html report was not rewritten after the re-run"; exit 1; }
echo "watch with recorded sources: ok"
