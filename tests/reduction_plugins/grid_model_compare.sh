#!/bin/sh
# The model's prediction of softmax at few long rows as one grid-persistent
# kernel against the three-kernel plan the segmenter makes without it
# (--schedulers reduction,pointwise): prints both, fails unless the model
# predicts the one kernel faster. A model property, not a timing.
# usage: grid_model_compare.sh SCHEDLAB SIZES DEVICE
cli=$1; sizes=$2; device=$3
sum() { grep -E '^  predicted ' | awk '{ s += $2 } END { printf "%.2f", s }'; }
one=$("$cli" show softmax --size "$sizes" --stage profile --device "$device" | sum) || exit 1
three=$("$cli" show softmax --size "$sizes" --stage profile --device "$device" \
        --schedulers reduction,pointwise | sum) || exit 1
kernels=$("$cli" show softmax --size "$sizes" --segments | grep -c '^segment ')
echo "softmax $sizes on $device: one grid-persistent kernel ($kernels segment) $one us, three kernels $three us (model)"
[ "$kernels" = 1 ] || { echo "expected one segment"; exit 1; }
awk -v a="$one" -v b="$three" 'BEGIN { exit !(a > 0 && a < b) }'
