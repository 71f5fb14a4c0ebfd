"""Reductions of an f16 tensor (tests/cli/half_sum.yaml) through `schedlab exec`
on the CPU backend, against NumPy, bit for bit: PyTorch's sum / mean / amax of
an f16 tensor are f16, accumulated in f32 and rounded once at the end (mean: the
sum and the division in f32, then one rounding). NumPy spells that
x.astype(float32).sum(axis=1).astype(float16). The inputs make every f32 sum
exact whatever the order the kernel adds in (rows of multiples of 2**-10 below 8,
and rows of large values, multiples of 16, whose sums overflow f16 to inf), so
the one rounding at the end decides the result: an f32 output, or a sum rounded
to f16 after each addition, fails.
usage: half_sum_numpy.py SCHEDLAB FUSION WORKDIR"""
import os
import sys

import numpy as np

from half_exec import exec_saving, f16_mismatches

schedlab, fusion, work = sys.argv[1:4]
os.makedirs(work, exist_ok=True)
rng = np.random.default_rng(37)


def halves(n, k):
    """n rows of k f16 values: even rows multiples of 2**-10 in (-8, 8), odd rows
    of magnitude 2**14 .. 65504 with random signs (multiples of 16)."""
    x = (rng.integers(-8 * 1024 + 1, 8 * 1024, size=(n, k)) / 1024.0).astype(np.float16)
    big = rng.uniform(2.0**14, 65504, size=(n, k)) * rng.choice([-1.0, 1.0], size=(n, k))
    x[1::2] = big[1::2].astype(np.float16)
    return x


per_add_differs = 0
for n, k in ((1, 1), (3, 7), (6, 257), (4, 2048)):
    x = halves(n, k)
    f = os.path.join(work, f"x{n}_{k}.npy")
    np.save(f, x)
    s32 = x.astype(np.float32).sum(axis=1)
    with np.errstate(over="ignore", invalid="ignore"):
        want = {"s": s32.astype(np.float16),
                "a": (s32 / np.float32(k)).astype(np.float16),
                "y": x - x.max(axis=1, keepdims=True)}
        per_add = np.add.accumulate(x, axis=1, dtype=np.float16)[:, -1]
    per_add_differs += int(np.sum(per_add.view(np.uint16) != want["s"].view(np.uint16)))
    out = os.path.join(work, f"out{n}_{k}")
    exec_saving(schedlab, fusion, work, out,
                ["--sanitize", "--size", f"N={n},K={k}", "--inputs", f])
    for name, w in want.items():
        got, bad = f16_mismatches(out, name, w)
        assert bad.size == 0, (n, k, name, [(got.reshape(-1)[i], w.reshape(-1)[i]) for i in bad[:5]])
        print(f"N={n} K={k} {name}: {w.size} of {w.size} equal to NumPy bit for bit")
# The inputs tell one rounding at the end from rounding after every addition.
assert per_add_differs > 0, per_add_differs
print(f"{per_add_differs} row sums differ when rounded to f16 after every addition")
