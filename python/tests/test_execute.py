"""execute / validate (the segmenter and the built-in plugins, on a copy of
the fusion), load_fusion, and the printers, on the standard fusions."""
import glob
import json
import os

import numpy as np
import pytest

import schedlab
from schedlab import FusionDefinition

FUSIONS = sorted(
    os.path.splitext(os.path.basename(p))[0]
    for p in glob.glob(os.path.join(os.path.dirname(__file__), "..", "..", "configs", "fusions",
                                    "*.yaml")))


def test_every_standard_fusion_is_listed():
    assert len(FUSIONS) >= 20 and "softmax" in FUSIONS and "layernorm" in FUSIONS


@pytest.mark.parametrize("name", FUSIONS)
def test_validate_standard_fusion(name):
    fd = schedlab.load_fusion(name)
    # Generated inputs at the file's default sizes, then at larger ones:
    # validate() raises ValidationError unless every output is within its
    # error bound of the f64 reference.
    outs = fd.validate()
    assert len(outs) == len(fd.outputs)
    bigger = {k: v * 7 for k, v in fd.default_sizes.items()}
    outs = fd.validate(sizes=bigger)
    assert all(o.size > 0 for o in outs)


def test_execute_matches_numpy():
    fd = schedlab.load_fusion("softmax")
    a = np.random.default_rng(1).uniform(-4, 4, (9, 33)).astype(np.float32)
    (y,) = fd.execute([a])
    e = np.exp(a.astype(np.float64) - a.max(axis=1, keepdims=True))
    np.testing.assert_allclose(y, e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-7)
    # execute() scheduled a copy: the definition itself is still unscheduled.
    assert "blockIdx" not in fd.fusion.print_math()


def test_execute_python_definition():
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=["N", "K"])
        b = fd.define_tensor(shape=["K"])
        y = fd.ops.relu(x + b)
        fd.add_output(fd.ops.sum(y, dims=[1]))
        fd.add_output(y)
    x = np.random.default_rng(2).standard_normal((5, 70)).astype(np.float32)
    b = np.random.default_rng(3).standard_normal(70).astype(np.float32)
    s, y = fd.execute([x, b])
    want = np.maximum(x + b, 0)
    np.testing.assert_allclose(y, want, rtol=1e-6)
    np.testing.assert_allclose(s, want.astype(np.float64).sum(axis=1), rtol=1e-5, atol=1e-5)
    fd.validate([x, b])


def test_print_math_and_kernel():
    fd = schedlab.load_fusion("row_sum")
    math = fd.fusion.print_math()
    assert "T1_g_f32[iS2{N}, rS3{K}]   # y" in math
    assert "= reduction(T0_g_f32[iS0{N}, iS1{K}], op = sum, init = 0)" in math
    kernel = fd.fusion.print_kernel()
    assert "__global__" in kernel and "schedlab_kernel" in kernel
    # Unscheduled: one serial kernel, sizes read at run time.
    assert "blockIdx" not in kernel and "T0.size[1]" in kernel
    fixed = fd.fusion.print_kernel(sizes={"N": 3, "K": 5})
    assert "T0.size[1]" not in fixed


def test_print_detail_of_a_tensor_shows_its_schedule():
    with schedlab.load_fusion("add") as fd:
        out = fd.outputs[0]
        out.merge(0)
        out.split(0, 64)
    text = out.print_detail()
    assert "Merge:" in text and "Split:" in text and "loop domain" in text
    assert repr(out).startswith("T") and str(out).startswith("T")


def test_can_schedule_and_find_compatible_schedulers():
    fd = schedlab.load_fusion("softmax")
    a = np.ones((4, 64), dtype=np.float32)
    ok, reason = schedlab.schedule.can_schedule(fd, "normalization", [a])
    assert ok and reason == ""
    ok, reason = schedlab.schedule.can_schedule(fd, "pointwise", [a])
    assert not ok and reason  # the plugin's own reason
    found = schedlab.schedule.find_compatible_schedulers(fd, [a])
    assert "normalization" in found and "pointwise" not in found
    with pytest.raises(schedlab.Error, match="nosuchplugin"):
        schedlab.schedule.can_schedule(fd, "nosuchplugin", [a])


def test_print_kernel_ir():
    with schedlab.load_fusion("row_sum") as fd:
        y = fd.tensor("y")
        y.axis(1).parallelize(schedlab.ParallelType.block_x)
    kir = fd.fusion.print_kernel_ir()
    assert kir and kir != fd.fusion.print_kernel()
    assert "threadIdx.x" in kir or "TIDx" in kir


def test_definition_survives_a_failed_run():
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[-1, -1])
        y = fd.ops.sum(x, dims=[1])
        fd.add_output(y)
        y.axis(0).parallelize(schedlab.ParallelType.block_y)
        y.axis(1).parallelize(schedlab.ParallelType.block_x)
    with pytest.raises(RuntimeError):
        fd.manual_execute([np.ones((10, 1024), dtype=np.float32)])
    # The fusion the point borrowed is back: print it, run it at a legal size.
    assert "threadIdx.y" in fd.fusion.print_kernel()
    (out,) = fd.manual_execute([np.ones((4, 8), dtype=np.float32)])
    np.testing.assert_array_equal(out, np.full(4, 8, dtype=np.float32))


class DLPackOnly:
    """A producer that speaks only DLPack (as a CPU torch.Tensor does)."""

    def __init__(self, array):
        self._array = array

    def __dlpack__(self, stream=None):
        return self._array.__dlpack__()

    def __dlpack_device__(self):
        return self._array.__dlpack_device__()


def test_dlpack_inputs():
    fd = schedlab.load_fusion("add")
    a, b = (np.random.default_rng(s).standard_normal((3, 7)).astype(np.float32) for s in (4, 5))
    (out,) = fd.execute([DLPackOnly(a), DLPackOnly(b)])
    np.testing.assert_array_equal(out, a + b)


def test_compute_heuristics_then_schedule_with_edited_params():
    fd = schedlab.load_fusion("softmax")
    a = np.random.default_rng(6).uniform(-4, 4, (4, 256)).astype(np.float32)
    params = schedlab.schedule.compute_heuristics(fd, "normalization", [a])
    assert "vector" in params and "persist" in params
    params["vector"] = "1"
    applied = schedlab.schedule.schedule(fd, "normalization", [a], params)
    assert applied["vector"] == "1"
    assert "blockIdx.x" in fd.fusion.print_kernel()
    (y,) = fd.manual_execute([a])
    e = np.exp(a.astype(np.float64) - a.max(axis=1, keepdims=True))
    np.testing.assert_allclose(y, e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-7)
    fd.manual_validate([a])


def test_schedule_with_an_unknown_parameter():
    fd = schedlab.load_fusion("softmax")
    a = np.ones((2, 64), dtype=np.float32)
    with pytest.raises(schedlab.ScheduleError, match="nosuchparam"):
        schedlab.schedule.schedule(fd, "normalization", [a], {"nosuchparam": 1})
    # Nothing was applied; the definition is usable.
    assert "blockIdx" not in fd.fusion.print_kernel()


def test_the_point_trace_names_a_hand_schedule(tmp_path, monkeypatch):
    # A hand schedule reaches the kernel through core/point, as every other
    # does (docs/point.md): from Lower on, under the name "manual python".
    trace = tmp_path / "trace.jsonl"
    monkeypatch.setenv("SCHEDLAB_POINT_TRACE", str(trace))
    fd = schedlab.load_fusion("row_sum")
    x = np.random.default_rng(4).standard_normal((4, 8)).astype(np.float32)
    (s,) = fd.manual_execute([x])
    np.testing.assert_allclose(s, x.astype(np.float64).sum(axis=1), rtol=1e-5, atol=1e-6)
    events = [json.loads(line) for line in trace.read_text().splitlines()]
    assert {e["scheduler"] for e in events} == {"manual python"}
    ends = [e["stage"] for e in events if e["event"] == "end"]
    assert ends[0] == "lower" and "schedule" not in ends and "run" in ends
