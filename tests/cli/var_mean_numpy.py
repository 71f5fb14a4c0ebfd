"""nvFuser's var_mean user schedule (configs/schedules/var_mean_user.sched)
at N=5, K=1000 against NumPy: x drawn by NumPy, run through `schedlab exec`
on the CPU backend, the three outputs compared with np.mean / np.var.
usage: var_mean_numpy.py SCHEDLAB SCHEDULE WORKDIR"""
import os
import subprocess
import sys

import numpy as np

schedlab, schedule, work = sys.argv[1:4]
os.makedirs(work, exist_ok=True)
rng = np.random.default_rng(5)
x = rng.uniform(-2, 2, size=(5, 1000)).astype(np.float32)
np.save(os.path.join(work, "x.npy"), x)
out = os.path.join(work, "out")
run = subprocess.run([schedlab, "exec", "var_mean", "--backend", "cpu", "--schedule", schedule,
                      "--size", "N=5,K=1000", "--inputs", os.path.join(work, "x.npy"),
                      "--save-outputs", out, "--cache-dir", os.path.join(work, "cache")],
                     capture_output=True, text=True)
print(run.stdout + run.stderr)
assert run.returncode == 0, run.returncode
x64 = x.astype(np.float64)
mean = x64.mean(axis=1, keepdims=True)
invstd = 1 / np.sqrt(x64.var(axis=1, keepdims=True) + 1e-6)
want = {"mean": mean, "invstd": invstd, "y": (x64 - mean) * invstd}
for name, w in want.items():
    got = np.load(os.path.join(out, name + ".npy"))
    assert got.dtype == np.float32 and got.shape == w.shape, (name, got.dtype, got.shape)
    err = np.abs(got - w).max()
    print(f"{name}: max abs error against NumPy {err:.3g}")
    assert np.allclose(got, w, rtol=1e-5, atol=1e-6), (name, err)
