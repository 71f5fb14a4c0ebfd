"""What tests/cli/half_mul_numpy.py and half_sum_numpy.py share: run
`schedlab exec` on the CPU backend with .npy inputs and saved outputs, and
compare each f16 output with NumPy's bit for bit (NaN equals NaN)."""
import os
import subprocess

import numpy as np


def exec_saving(schedlab, fusion, work, out, args):
    """Runs `schedlab exec FUSION --backend cpu ARGS --save-outputs OUT`, prints
    its output, and asserts it exits 0."""
    run = subprocess.run([schedlab, "exec", fusion, "--backend", "cpu", *args,
                          "--save-outputs", out, "--cache-dir", os.path.join(work, "cache")],
                         capture_output=True, text=True)
    print(run.stdout + run.stderr)
    assert run.returncode == 0, run.returncode


def f16_mismatches(out, name, want):
    """The saved output `name` (an f16 array shaped like `want`) and the flat
    indices where its bits differ from want's; asserts dtype and shape."""
    got = np.load(os.path.join(out, name + ".npy"))
    assert got.dtype == np.float16 and got.shape == want.shape, (name, got.dtype, got.shape)
    same = (got.view(np.uint16) == want.view(np.uint16)) | (np.isnan(got) & np.isnan(want))
    return got, np.flatnonzero(~same.reshape(-1))
