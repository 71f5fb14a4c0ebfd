"""`x * y` and `x * y + x` on f16 tensors (tests/cli/half_mul.yaml) through
`schedlab exec` on the CPU backend, against NumPy's float16, bit for bit:
NumPy computes a float16 +, - or * in float32 and rounds once, which is
PyTorch's rounding of these ops on f16 (its opmath is f32; PyTorch itself is
not installed here and must not be). Inputs: random bit patterns across the
whole f16 range (subnormals, infinities and overflow included, NaN left out)
at several sizes, and both `--math default` and `--math native` (__hmul2).
usage: half_mul_numpy.py SCHEDLAB FUSION WORKDIR"""
import os
import sys

import numpy as np

from half_exec import exec_saving, f16_mismatches

schedlab, fusion, work = sys.argv[1:4]
os.makedirs(work, exist_ok=True)
rng = np.random.default_rng(37)


def halves(n):
    """n random f16 values: uniform bit patterns without NaN, then values of
    moderate size (products that neither overflow nor underflow)."""
    bits = rng.integers(0, 1 << 16, size=n, dtype=np.uint16)
    nan = (bits & 0x7C00) == 0x7C00
    bits[nan & ((bits & 0x3FF) != 0)] &= 0xFC00  # NaN -> inf of the same sign
    x = bits.view(np.float16)
    x[: n // 2] = rng.uniform(-8, 8, size=n // 2).astype(np.float16)
    return x


for n in (1, 7, 1000, 4099):
    x, y = halves(n), halves(n)
    files = [os.path.join(work, f"{v}{n}.npy") for v in ("x", "y")]
    np.save(files[0], x)
    np.save(files[1], y)
    with np.errstate(over="ignore", invalid="ignore"):
        want = {"p": x * y, "q": x * y + x}
    for math in ("default", "native"):
        out = os.path.join(work, f"out{n}_{math}")
        exec_saving(schedlab, fusion, work, out,
                    ["--size", f"N={n}", "--math", math, "--inputs", ",".join(files)])
        for name, w in want.items():
            got, bad = f16_mismatches(out, name, w)
            assert bad.size == 0, (n, math, name, [(x[i], y[i], got[i], w[i]) for i in bad[:5]])
            print(f"N={n} --math {math} {name}: {n} of {n} equal to NumPy float16 bit for bit")
