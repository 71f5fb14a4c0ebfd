"""A softmax sweep written with pytest: sizes, the input dtype, a hand schedule's block
count and a plugin parameter, each a stacked ``@pytest.mark.parametrize``; the hand
schedule (configs/schedules/softmax_block.sched, in Python) and the built-in
``normalization`` plugin side by side.

Run it with the schedlab.testing plugin (docs/python.md, "pytest: schedlab.testing"):

    PYTHONPATH=build/python /usr/bin/python3 -m pytest -p schedlab.testing \\
        python/examples/test_softmax_sweep.py --schedlab-results softmax.jsonl
    build/bin/schedlab report softmax.jsonl          # the side-by-side table
    build/bin/schedlab compare before.jsonl softmax.jsonl

Every call of ``schedlab_bench`` validates its point against the f64 reference; when the
module ends, the points of each (fusion, sizes), hand schedules and plugin alike, are timed
together in interleaved rounds as ``schedlab run`` times a sweep's, and one record a point
goes to the results file.
"""

import numpy as np
import pytest

from schedlab import DataType, FusionDefinition, ParallelType, schedule

DTYPES = {"f32": (DataType.Float, np.float32), "f16": (DataType.Half, np.float16)}
SIZES = [(4, 96), (8, 256)]


def softmax(dtype, block=None):
    """Softmax over the rows of an [N, K] input; with `block`, the persistent schedule of
    softmax_block.sched: a row per block, its K elements split over `block` threads."""
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=["N", "K"], dtype=DTYPES[dtype][0])
        m = fd.ops.max(x, dims=[1], keepdim=True)
        e = fd.ops.exp(x - m)
        y = e / fd.ops.sum(e, dims=[1], keepdim=True)
        fd.add_output(y)
        if block is not None:
            y.split(1, block, inner_split=False)  # [N, block, ceilDiv(K, block)]
            y.axis(0).parallelize(ParallelType.grid_x)
            y.axis(2).parallelize(ParallelType.block_x)
            schedule.transform_like(y)
            schedule.parallelize_like(y)
            schedule.inline_most()
    return fd


def rows(n, k, dtype):
    return np.random.default_rng(n * k).standard_normal((n, k)).astype(DTYPES[dtype][1])


@pytest.mark.parametrize("dtype", sorted(DTYPES))
@pytest.mark.parametrize("n,k", SIZES)
@pytest.mark.parametrize("block", [4, 8])
def test_softmax_by_hand(schedlab_bench, dtype, n, k, block):
    record = schedlab_bench(
        softmax(dtype, block), [rows(n, k, dtype)], params={"block": block},
        fusion=f"softmax_{dtype}",
    )
    assert record["status"] == "ok" and record["config"] == {"block": str(block)}


@pytest.mark.parametrize("dtype", sorted(DTYPES))
@pytest.mark.parametrize("n,k", SIZES)
@pytest.mark.parametrize("vector", [1, 2])
def test_softmax_normalization_plugin(schedlab_bench, dtype, n, k, vector):
    record = schedlab_bench(
        softmax(dtype), [rows(n, k, dtype)], scheduler="normalization",
        params={"vector": vector}, fusion=f"softmax_{dtype}",
    )
    assert record["config"]["vector"] == str(vector)
