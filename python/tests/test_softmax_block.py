"""The persistent softmax of configs/schedules/softmax_block.sched, written in
Python (issue 35's first acceptance line): run on the CPU backend, compared
with NumPy, and the same kernel as the script's."""
import json
import os
import subprocess

import numpy as np
import pytest

import schedlab
from schedlab import DataType, FusionDefinition, ParallelType, schedule

from script_kernels import CONFIGS, cli_kernel


def softmax_block(persist=8):
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[-1, -1], dtype=DataType.Float)
        m = fd.ops.max(x, dims=[1], keepdim=True)
        e = fd.ops.exp(x - m)
        s = fd.ops.sum(e, dims=[1], keepdim=True)
        y = e / s
        fd.add_output(y)

        y.split(1, persist, inner_split=False)
        y.axis(0).parallelize(ParallelType.grid_x)
        y.axis(2).parallelize(ParallelType.block_x)
        schedule.transform_like(y)
        schedule.parallelize_like(y)
        schedule.inline_most()
    return fd


def numpy_softmax(a):
    e = np.exp(a.astype(np.float64) - a.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


@pytest.mark.parametrize("rows,cols", [(3, 5), (6, 200), (4, 1000)])
def test_matches_numpy(rows, cols):
    fd = softmax_block()
    a = np.random.default_rng(rows * cols).uniform(-4, 4, (rows, cols)).astype(np.float32)
    (out,) = fd.manual_execute([a])
    assert out.dtype == np.float32 and out.shape == (rows, cols)
    np.testing.assert_allclose(out, numpy_softmax(a), rtol=1e-5, atol=1e-7)
    # The same run checked against the f64 reference's error bounds.
    fd.manual_validate([a])


def test_kernel_is_a_block_reduction():
    kernel = softmax_block().fusion.print_kernel()
    assert "blockIdx.x" in kernel and "threadIdx.x" in kernel
    assert "sl_block_reduce" in kernel


def schedule_softmax_block(y):
    y.split(1, 8, inner_split=False)
    y.axis(0).parallelize(ParallelType.BIDx)
    y.axis(2).parallelize(ParallelType.TIDx)
    schedule.transform_like(y)
    schedule.parallelize_like(y)
    schedule.inline_most()


def test_same_kernel_as_the_script():
    # The fusion file scheduled from Python, and the same math defined in
    # Python with the file's size names: both lower to the script's kernel.
    want = cli_kernel("softmax", "softmax_block.sched", {"N": 3, "K": 5})
    with schedlab.load_fusion("softmax") as loaded:
        schedule_softmax_block(loaded.tensor("y"))
    assert loaded.fusion.print_kernel(sizes={"N": 3, "K": 5}) == want

    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=["N", "K"])
        m = fd.ops.max(x, dims=[1], keepdim=True)
        e = fd.ops.exp(x - m)
        y = e / fd.ops.sum(e, dims=[1], keepdim=True)
        fd.add_output(y)
        schedule_softmax_block(y)
    assert fd.fusion.print_kernel(sizes={"N": 3, "K": 5}) == want


def test_profile_is_the_clis():
    # The hand schedule's profile on the h200 model is `schedlab show --stage
    # profile --format json` of the script at the same sizes.
    cli = os.environ.get("SCHEDLAB_CLI")
    if not cli:
        pytest.skip("SCHEDLAB_CLI is not set (CTest sets it to the built schedlab)")
    with schedlab.load_fusion("softmax") as fd:
        schedule_softmax_block(fd.tensor("y"))
    got = fd.profile(sizes={"N": 64, "K": 1024}, device="h200")
    want = json.loads(subprocess.run(
        [cli, "show", "softmax", "--schedule",
         os.path.join(CONFIGS, "schedules", "softmax_block.sched"), "--stage", "profile",
         "--format", "json", "--size", "N=64,K=1024", "--device", "h200"],
        check=True, capture_output=True, text=True).stdout)
    assert got == want
    assert got[0]["block"] == [128, 1, 1] and got[0]["grid"] == [64, 1, 1]
