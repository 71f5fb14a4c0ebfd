"""Errors (ScheduleError naming the tensor and axis, with the Python line;
DefinitionError; ValidationError; input checks) and both enum spellings."""
import inspect

import numpy as np
import pytest

import schedlab
from schedlab import (CacheOp, DataType, FusionDefinition, LoadStoreOpType, LoopTransform,
                      MemoryType, ParallelType, schedule)


def copy_fusion():
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[-1, -1])
        y = fd.ops.set(x)
        fd.add_output(y)
    return fd, x, y


def test_mis_scheduled_tensor_names_tensor_and_axis():
    fd, x, y = copy_fusion()
    with pytest.raises(schedlab.ScheduleError) as info:
        line = inspect.currentframe().f_lineno + 1
        y.split(5, 4)
    e = info.value
    assert e.tensor == "T1" and e.axis == 5 and e.primitive == "split"
    assert e.filename == __file__ and e.lineno == line
    assert "axis 5 is out of range for T1" in e.message
    assert str(e) == f"{__file__}:{line}: error: {e.message}"
    assert isinstance(e, schedlab.Error) and isinstance(e, RuntimeError)


def test_primitive_rule_keeps_the_scripts_message():
    fd, x, y = copy_fusion()
    with pytest.raises(schedlab.ScheduleError, match=r"split: factor must be positive, got 0") as info:
        y.split(0, 0)
    assert info.value.tensor == "T1" and info.value.axis == 0
    # Vectorizing a non-innermost axis: refused at the call, naming tensor and axis.
    y.split(1, 4)
    with pytest.raises(schedlab.ScheduleError, match=r"T1") as info:
        y.axis(0).parallelize(ParallelType.vectorize)
    assert info.value.tensor == "T1" and info.value.axis == 0


def test_stale_axis_handle():
    fd, x, y = copy_fusion()
    a = y.axis(1)
    y.merge(0)
    with pytest.raises(schedlab.ScheduleError, match="no longer a loop axis of T1"):
        a.parallelize(ParallelType.block_x)


def test_lowering_refusal_is_a_schedule_error():
    # A tensor read by a thread that did not compute it (rule 2): the
    # producer is bound differently from its consumer and not inlined.
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[-1])
        t = fd.ops.exp(x)
        y = fd.ops.set(t)
        fd.add_output(y)
        y.split(0, 32)
        y.axis(1).parallelize(ParallelType.block_x)
        t.split(0, 32)
        t.axis(0).parallelize(ParallelType.block_x)
    with pytest.raises(schedlab.ScheduleError) as info:
        fd.manual_execute([np.ones(64, dtype=np.float32)])
    assert "lower stage" in info.value.primitive


def test_launch_limit_is_a_runtime_error():
    # nvFuser's tutorial: a 1024 x 10 thread block is too large.
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[-1, -1])
        y = fd.ops.sum(x, dims=[1])
        fd.add_output(y)
        y.axis(0).parallelize(ParallelType.block_y)
        y.axis(1).parallelize(ParallelType.block_x)
    with pytest.raises(RuntimeError):
        fd.manual_execute([np.ones((10, 1024), dtype=np.float32)])
    (out,) = fd.manual_execute([np.ones((10, 32), dtype=np.float32)])
    np.testing.assert_array_equal(out, np.full(10, 32, dtype=np.float32))


def test_definition_errors():
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=["N", "K"])
        z = fd.define_tensor(shape=["M"])
        with pytest.raises(schedlab.DefinitionError, match="add") as info:
            fd.ops.add(x, z)
        assert info.value.tensor == "T0"
        with pytest.raises(schedlab.DefinitionError, match="shape entry 0 is 0"):
            fd.define_tensor(shape=[0])
        fd.add_output(fd.ops.exp(x))
        fd.add_output(fd.ops.exp(z))
    # The math is fixed once the block ends (or scheduling begins).
    with pytest.raises(schedlab.DefinitionError, match="math is fixed"):
        fd.ops.exp(x)
    with pytest.raises(schedlab.DefinitionError, match="no tensor named 'nope'"):
        fd.tensor("nope")
    with pytest.raises(schedlab.DefinitionError, match=r"softmaxx.*configs/fusions"):
        schedlab.load_fusion("softmaxx")


def test_input_checks():
    fd, x, y = copy_fusion()
    with pytest.raises(schedlab.Error, match="expected a float32 array for f32, found float64"):
        fd.manual_execute([np.ones((2, 3))])
    with pytest.raises(schedlab.Error, match="expected 2 dimensions, found 1"):
        fd.manual_execute([np.ones(3, dtype=np.float32)])
    with pytest.raises(schedlab.Error, match="expected 1 inputs, found 2"):
        fd.manual_execute([np.ones((2, 3), dtype=np.float32)] * 2)


def test_validation_error():
    fd, x, y = copy_fusion()
    a = np.ones((2, 3), dtype=np.float32)
    fd.manual_validate([a], [a])
    with pytest.raises(schedlab.ValidationError, match="wrong_result") as info:
        fd.manual_validate([a], [a + 1])
    assert isinstance(info.value, AssertionError)


@pytest.mark.parametrize("enum,pairs", [
    (DataType, [("Float", "f32"), ("Double", "f64"), ("Half", "f16"), ("BFloat16", "bf16"),
                ("Int", "i64"), ("Int32", "i32"), ("Bool", "bool")]),
    (ParallelType, [("grid_x", "BIDx"), ("grid_y", "BIDy"), ("grid_z", "BIDz"),
                    ("block_x", "TIDx"), ("block_y", "TIDy"), ("block_z", "TIDz"),
                    ("mesh_x", "DIDx"), ("serial", "Serial"), ("vectorize", "Vectorize"),
                    ("unroll", "Unroll"), ("unswitch", "Unswitch"), ("tma", "Bulk")]),
    (LoopTransform, [("serial", "Serial"), ("vectorize", "Vectorize"), ("unroll", "Unroll"),
                     ("unswitch", "Unswitch"), ("tma", "Bulk")]),
    (MemoryType, [("local", "Local"), ("shared", "Shared"), ("global", "Global")]),
    (LoadStoreOpType, [("set", "Set"), ("cp_async", "CpAsync"), ("load_matrix", "LdMatrix"),
                       ("tma", "Tma")]),
    (CacheOp, [("unspecified", "Unspecified"), ("all_levels", "AllLevels"),
               ("streaming", "Streaming"), ("global", "Global")]),
])
def test_both_spellings(enum, pairs):
    for nv, ours in pairs:
        assert getattr(enum, nv) == getattr(enum, ours)
        assert getattr(enum, nv).name == nv  # repr and .name use nvFuser's
    values = {int(getattr(enum, nv)) for nv, _ in pairs}
    assert len(values) == len(pairs)


def test_both_spellings_schedule_the_same_kernel():
    kernels = []
    for grid, block in ((ParallelType.grid_x, ParallelType.block_x),
                        (ParallelType.BIDx, ParallelType.TIDx)):
        fd, x, y = copy_fusion()
        y.merge(0)
        y.split(0, 64)
        y.axis(0).parallelize(grid)
        y.axis(1).parallelize(block)
        kernels.append(fd.fusion.print_kernel())
    assert kernels[0] == kernels[1] and "blockIdx.x" in kernels[0]


def test_dtype_spellings_define_the_same_input():
    for dt in (DataType.Double, DataType.f64):
        with FusionDefinition() as fd:
            x = fd.define_tensor(shape=[-1], dtype=dt)
            fd.add_output(fd.ops.mul(x, 2.0))
        (out,) = fd.manual_execute([np.arange(4, dtype=np.float64)])
        assert out.dtype == np.float64
        np.testing.assert_array_equal(out, np.arange(4) * 2.0)
