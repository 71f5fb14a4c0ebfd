"""A Python heuristic recognises a matmul in the IR it is given (issue 36): the IR of
plugins/python/schedlab_heuristic.py already has what it takes, a Reduction "sum" whose operand is
a Binary "mul" of two Broadcasts (through Casts at bf16 and f16). heuristics/matmul_rules.py,
served by the built-in `python` plugin in this process, finds it in every standard matmul
fusion, refuses the reductions that are not one with its reason, and its schedule validates."""
import os

import numpy as np
import pytest

import schedlab
from schedlab import FusionDefinition, schedule

HEURISTIC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "heuristics", "matmul_rules.py")
RNG = np.random.default_rng(361)
ODD = {"M": 130, "N": 70, "K": 48, "B": 3}


def generated_inputs(fd, sizes):
    """Float32 inputs of fd at `sizes` (bf16 and f16 inputs take them rounded)."""
    return [RNG.uniform(-1, 1, tuple(sizes[t.axis(i).extent()] for i in range(t.ndim())))
            .astype(np.float32) for t in fd.inputs]


@pytest.mark.parametrize("name,sum_tensor,k_axis", [
    ("matmul_bf16", "T7", 1), ("matmul_f16", "T7", 1), ("batched_matmul_bf16", "T7", 2),
    ("linear_bias_gelu_bf16", "T8", 2)])
def test_the_heuristic_finds_the_matmul_and_its_schedule_validates(name, sum_tensor, k_axis, capfd):
    fd = schedlab.load_fusion(name)
    inputs = generated_inputs(fd, {k: ODD[k] for k in fd.default_sizes})
    assert schedule.can_schedule(fd, HEURISTIC, inputs) == (True, "")
    params = schedule.compute_heuristics(fd, HEURISTIC, inputs)
    assert params.threads_k == 32  # the largest power of two in K = 48, at most 32
    # What it recognised, in its log: the sum, K's axis and extent, the two operands.
    assert (f"py_matmul_rules: {sum_tensor} = sum over axis {k_axis} (K=48) of T0 x T1"
            in capfd.readouterr().err)
    schedule.schedule(fd, HEURISTIC, params)
    assert "blockIdx.x" in fd.fusion.print_kernel() and "threadIdx.x" in fd.fusion.print_kernel()
    fd.manual_validate(inputs, device="cpu")


def test_a_python_definition_of_a_linear_is_recognised_too():
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[-1, -1, -1])
        w = fd.define_tensor(shape=[-1, -1])
        fd.add_output(fd.ops.relu(fd.ops.linear(x, w)))
    x, w = RNG.uniform(-1, 1, (2, 5, 9)).astype(np.float32), RNG.uniform(-1, 1, (4, 9)).astype(np.float32)
    params = schedule.compute_heuristics(fd, HEURISTIC, [x, w])
    assert params.threads_k == 8
    schedule.schedule(fd, HEURISTIC, params)
    (y,) = fd.manual_execute([x, w], device="cpu")
    np.testing.assert_allclose(y, np.maximum(x.astype(np.float64) @ w.T.astype(np.float64), 0),
                               rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name,reason", [
    ("row_sum", "T1 is a sum over axes [1] of tensor T0, not a sum over K of the product of two "
                "broadcast operands"),
    ("rmsnorm", "T3 is a sum over axes [1] of mul T2, not a sum over K of the product of two "
                "broadcast operands"),
    ("softmax", "T1 is a max over axes [1] of tensor T0, not a sum over K"),
    ("add", "no reduction: py_matmul_rules schedules a matmul"),
])
def test_what_is_not_a_matmul_is_refused_with_its_reason(name, reason):
    fd = schedlab.load_fusion(name)
    ok, why = schedule.can_schedule(fd, HEURISTIC, generated_inputs(fd, fd.default_sizes))
    assert not ok and why.startswith(reason)
