#!/bin/sh
# A Python heuristic in a sweep (issue 35): `plugin: python, file: F.py` runs
# next to a built-in plugin, appears in the table and validates, over its
# PARAMS as a space too; `schedlab plugins` lists the unbound `python` plugin
# and a --plugin F.py heuristic; exec --plugin F.py validates. A heuristic
# whose schedule() raises is a plugin_error naming its file and line, isolated
# (the default) and in process (--no-isolate), and the sweep goes on. Without
# a built python.so, a file: key is a user error saying to build it.
# usage: python_sweep.sh SCHEDLAB HEURISTIC WORKDIR
set -eu
schedlab=$1 heuristic=$2 work=$3
rm -rf "$work" && mkdir -p "$work/heuristics"
fail() { echo "$1"; [ -f "$work/out.txt" ] && cat "$work/out.txt"; exit 1; }
cp "$heuristic" "$work/heuristics/good.py"
# The same heuristic under another name, raising in schedule() on its line 2.
sed -e 's/^NAME = .*/NAME = "py_raises"/' -e 's/^def schedule(segment, params):$/&\n    return params["no_such_param"]/' \
  "$heuristic" > "$work/heuristics/raises.py"
line=$(grep -n 'no_such_param' "$work/heuristics/raises.py" | cut -d: -f1)
[ -n "$line" ] || fail "the heuristic has no 'def schedule(segment, params):' line"
name=$(sed -n 's/^NAME = "\(.*\)"$/\1/p' "$heuristic")
[ -n "$name" ] || fail "the heuristic sets no NAME"

"$schedlab" plugins --plugin "$work/heuristics/good.py" > "$work/out.txt" 2>&1 || fail "plugins failed"
grep -Eq '^python [0-9.]+ \(plugin ABI' "$work/out.txt" || fail "plugins does not list the python plugin"
grep -Eq "^$name [0-9.]+ \\(plugin ABI" "$work/out.txt" || fail "plugins does not list $name"
grep -q "^  file: $work/heuristics/good.py$" "$work/out.txt" || fail "plugins does not name the .py file"

"$schedlab" exec softmax --size N=4,K=1024 --plugin "$work/heuristics/good.py" --backend cpu \
  --cache-dir "$work/cache" > "$work/out.txt" 2>&1 || fail "exec --plugin F.py failed"
grep -q '^  output 0 .*: ok' "$work/out.txt" || fail "exec --plugin F.py did not validate"

cat > "$work/sweep.yaml" <<YAML
sweep: python_sweep
fusions:
  - fusion: softmax
    sizes: {N: [8], K: [1024]}
schedulers:
  - plugin: normalization
  - plugin: python
    file: heuristics/good.py
  - name: good-space
    plugin: python
    file: heuristics/good.py
    space: {persist: [2, 4]}
  - plugin: python
    file: heuristics/raises.py
measure: {repetitions: 2, warmup: 0}
backend: cpu
YAML
for mode in isolated in_process; do
  flag=""
  [ $mode = in_process ] && flag=--no-isolate
  status=0
  "$schedlab" run "$work/sweep.yaml" -o "$work/$mode.jsonl" --cache-dir "$work/cache" $flag \
    > "$work/out.txt" 2>&1 || status=$?
  [ $status -eq 1 ] || fail "$mode: expected exit 1 (a point failed), got $status"
  grep -Eq "^ +$name +persist=[0-9]+ " "$work/out.txt" || fail "$mode: the table has no $name row"
  grep -Eq '^ +good-space +persist=[24] ' "$work/out.txt" || fail "$mode: the table has no good-space row"
  for s in normalization "$name" good-space; do
    n=$(grep -c "\"scheduler\":\"$s\".*\"status\":\"ok\"" "$work/$mode.jsonl" || true)
    [ "$n" -ge 1 ] || fail "$mode: no ok (validated) record of $s"
  done
  grep -c '"scheduler":"good-space"' "$work/$mode.jsonl" | grep -qx 2 || fail "$mode: good-space ran other than its 2 points"
  bad=$(grep '"scheduler":"py_raises"' "$work/$mode.jsonl")
  echo "$bad" | grep -q '"status":"plugin_error"' || fail "$mode: py_raises is not a plugin_error: $bad"
  echo "$bad" | grep -q "heuristics/raises.py:$line: in schedule: KeyError: 'no_such_param'" ||
    fail "$mode: the plugin_error does not name raises.py:$line: $bad"
done
# Without python.so: an installed-tree layout (bin/, lib/schedlab/plugins,
# share/schedlab/configs) whose plugin directory lacks it. In process, the
# sweep stops at the file: key with the loader's user error.
prefix="$work/prefix"
mkdir -p "$prefix/bin" "$prefix/lib/schedlab/plugins" "$prefix/share/schedlab"
ln "$schedlab" "$prefix/bin/schedlab" 2>/dev/null || cp "$schedlab" "$prefix/bin/schedlab"
ln -s "$(cd "$(dirname "$0")/../../configs" && pwd)" "$prefix/share/schedlab/configs"
printf 'fusions: [softmax]\nschedulers:\n  - plugin: python\n    file: heuristics/good.py\n' \
  > "$work/no_python.yaml"
status=0
"$prefix/bin/schedlab" run "$work/no_python.yaml" -o "$work/no_python.jsonl" --no-isolate \
  > "$work/out.txt" 2>&1 || status=$?
[ $status -eq 2 ] || fail "without python.so: expected exit 2, got $status"
grep -q "^$work/no_python.yaml:4:11: error: the python plugin (python.so) is not in $prefix/lib/schedlab/plugins; build the \`python\` target$" \
  "$work/out.txt" || fail "without python.so: not the loader's error at the file: key"
echo "python sweep: ok"
