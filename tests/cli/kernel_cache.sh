#!/bin/sh
# The self-checking kernel cache: every way a cached CPU unit can go bad is
# noticed, warned about and rebuilt, and the kernel still validates.
#   truncated .so, random bytes, another kernel's .so (and its seal) copied
#   in, a missing seal, an edited source copy.
# usage: kernel_cache.sh SCHEDLAB WORKDIR
set -eu
schedlab=$1 work=$2
rm -rf "$work" && mkdir -p "$work"
cache=$work/cache
run() {  # run NAME FUSION SIZE: exec on the CPU backend into $work/NAME.txt; must validate
  "$schedlab" exec "$2" --size "$3" --backend cpu --cache-dir "$cache" > "$work/$1.txt" 2>&1 ||
    { cat "$work/$1.txt"; echo "exec $2 failed ($1)"; exit 1; }
  grep -q '^  output 0 .*: ok' "$work/$1.txt" || { cat "$work/$1.txt"; echo "$1: not validated"; exit 1; }
}
expect_warning() {  # expect_warning NAME REASON
  grep -qE "^warning: kernel cache: $cache/[0-9a-f]*\.so $2; rebuilding it$" "$work/$1.txt" ||
    { cat "$work/$1.txt"; echo "$1: no warning '$2'"; exit 1; }
}
run first softmax N=4,K=32
so=$(ls "$cache"/*.so)
[ -f "$so.sum" ] || { echo "no seal beside $so"; exit 1; }
run again softmax N=4,K=32
! grep -q 'warning' "$work/again.txt" || { cat "$work/again.txt"; echo "a sound entry was not trusted"; exit 1; }

head -c 1000 "$so" > "$work/t" && cp "$work/t" "$so"
run truncated softmax N=4,K=32
expect_warning truncated 'does not match its seal \(truncated or overwritten\)'

head -c 20000 /dev/urandom > "$so"
run random softmax N=4,K=32
expect_warning random 'does not match its seal \(truncated or overwritten\)'

# Another kernel's valid unit, with its own seal, copied over this one's.
run other pointwise_add_mul N=4,K=32
other=$(ls -t "$cache"/*.so | head -1)
[ "$other" != "$so" ] || { echo "the second kernel has the first's key"; exit 1; }
cp "$other" "$so" && cp "$other.sum" "$so.sum"
run copied softmax N=4,K=32
expect_warning copied 'was built for another kernel \(key [0-9a-f]*\)'

rm "$so.sum"
run unsealed softmax N=4,K=32
expect_warning unsealed 'has no seal \([0-9a-f]*\.so\.sum\)'

cpp=${so%.so}.cu.cpp
echo '// an edit' >> "$cpp"
run edited softmax N=4,K=32
expect_warning edited 'has an edited or missing source copy [0-9a-f]*\.cu\.cpp'
run healed softmax N=4,K=32
! grep -q 'warning' "$work/healed.txt" || { cat "$work/healed.txt"; echo "the rebuilt entry is not trusted"; exit 1; }
echo "kernel cache: ok"
