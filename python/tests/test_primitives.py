"""The primitives the script-equivalence tests do not reach, each on a real
kernel run on the CPU backend and compared with NumPy."""
import numpy as np
import pytest

import schedlab
from schedlab import FusionDefinition, LoopTransform, MemoryType, ParallelType, schedule

RNG = np.random.default_rng(7)


def pointwise_add():
    with FusionDefinition() as fd:
        a = fd.define_tensor(shape=["N", "K"])
        b = fd.define_tensor(shape=["N", "K"])
        c = fd.ops.add(a, b)
        fd.add_output(c)
    return fd, a, b, c


def inputs(n=6, k=40):
    return [RNG.standard_normal((n, k)).astype(np.float32) for _ in range(2)]


@pytest.mark.parametrize("layout", ["pad", "swizzle"])
def test_shared_caches(layout):
    # nvFuser's pointwise example: both inputs cached in shared memory. Each
    # block's rows [ceilDiv(K, 32), 32] stay two allocation axes, the rows
    # that pad_shared pads and swizzle permutes.
    fd, a, b, c = pointwise_add()
    with fd:
        caches = [a.cache_after(), b.cache_after()]
        for t in caches:
            t.set_memory_type(MemoryType.shared)
            if layout == "pad":
                t.pad_shared(1)
            else:
                t.swizzle(8)
        for t in caches + [c]:
            t.split(axis=1, factor=32)
            t.axis(0).parallelize(ParallelType.grid_x)
            t.axis(2).parallelize(ParallelType.block_x)
    x, y = inputs(5, 96)
    (out,) = fd.manual_execute([x, y])
    np.testing.assert_array_equal(out, x + y)
    assert "sl_smem" in fd.fusion.print_kernel()


def test_merge_with_axis_i_and_unroll():
    fd, a, b, c = pointwise_add()
    with fd:
        c.split(1, 8)            # [N, ceilDiv(K, 8), 8]
        c.merge(0, 1)            # [N * ceilDiv(K, 8), 8]
        c.axis(0).parallelize(ParallelType.BIDx)
        c.parallelize(1, ParallelType.unroll)
    assert "#pragma unroll" in fd.fusion.print_kernel()
    x, y = inputs()
    np.testing.assert_array_equal(fd.manual_execute([x, y])[0], x + y)


def test_inline_at_and_inline_selected_at():
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=["N", "K"])
        e = fd.ops.exp(x)
        r = fd.ops.relu(e)
        y = fd.ops.mul(r, 2.0)
        fd.add_output(y)
        y.split(1, 32)
        schedule.transform_like(y)
        y.axis(0).parallelize(ParallelType.grid_x)
        y.axis(2).parallelize(ParallelType.block_x)
        schedule.parallelize_like(y, selected_parallel_types={ParallelType.grid_x,
                                                              ParallelType.block_x})
        e.inline_at(-1)
        schedule.inline_selected_at([r], y, 1)
    assert "ca_pos(3)" in repr(e)
    assert "ca_pos(1)" in repr(r)
    v = RNG.standard_normal((5, 70)).astype(np.float32)
    (out,) = fd.manual_execute([v])
    np.testing.assert_allclose(out, np.maximum(np.exp(v), 0) * 2, rtol=1e-6)


def test_schedule_inline_at_all_tensors():
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=["N"])
        y = fd.ops.neg(fd.ops.exp(x))
        fd.add_output(y)
        y.split(0, 16)
        schedule.transform_like(y)
        y.axis(1).parallelize(ParallelType.TIDx)
        schedule.parallelize_like(y)
        schedule.inline_at(y, 1)
    assert "ca_pos(1)" in fd.fusion.print_math()
    v = RNG.standard_normal(50).astype(np.float32)
    np.testing.assert_allclose(fd.manual_execute([v])[0], -np.exp(v), rtol=1e-6)


def test_group_inputs_outputs_by_inner_dim():
    with schedlab.load_fusion("transpose2d") as fd:
        groups = schedule.group_inputs_outputs_by_inner_dim()
    names = [[t.name for t in g] for g in groups]
    assert names == [["T0 (x)"], ["T1 (y)"]]


def test_queries_need_a_fusion():
    with pytest.raises(schedlab.ScheduleError, match="no fusion to act on"):
        schedule.get_reduction_tvs()
    fd = schedlab.load_fusion("softmax")
    assert [t.name for t in schedule.get_reduction_tvs(fd)] == ["T1", "T5"]


def test_scalars_and_operators():
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[-1])
        y = 2 - x * 3 + x / 4 - (-x) ** 2
        fd.add_output(y)
    v = RNG.standard_normal(9).astype(np.float32)
    (out,) = fd.manual_execute([v])
    np.testing.assert_allclose(out, 2 - v * 3 + v / 4 - v ** 2, rtol=1e-5, atol=1e-6)


def test_unused_input_is_refused():
    with pytest.raises(schedlab.DefinitionError, match="T1 is read by no output"):
        with FusionDefinition() as fd:
            x = fd.define_tensor(shape=[-1])
            fd.define_tensor(shape=[-1])
            fd.add_output(fd.ops.exp(x))


def test_cache_before_and_the_loop_transform_enum():
    fd, a, b, c = pointwise_add()
    with fd:
        cached = c.cache_before()          # c becomes a copy of cached, which vectorizes
        c.split(1, 4)
        c.axis(0).parallelize(ParallelType.BIDx)
        c.axis(2).parallelize(LoopTransform.vectorize)
        cached.split(1, 4)
        cached.axis(0).parallelize(ParallelType.BIDx)
    assert cached.name == "T3" and "add(" in fd.fusion.print_math()
    x, y = inputs(3, 16)
    np.testing.assert_array_equal(fd.manual_execute([x, y])[0], x + y)


def test_circular_buffer():
    # The caches of a pointwise add, Shared tiles of 32 in a serial loop over
    # each row's tiles, double-buffered: the next tile is stored while this
    # one is read (the script's circular_buffer(tv, 2)).
    fd, a, b, c = pointwise_add()
    with fd:
        caches = [a.cache_after(), b.cache_after()]
        for t in caches:
            t.set_memory_type(MemoryType.shared)
        for t in caches + [c]:
            t.split(axis=1, factor=32)
            t.axis(0).parallelize(ParallelType.grid_x)
            t.axis(2).parallelize(ParallelType.block_x)
        schedule.inline_most()
        for t in caches:
            t.circular_buffer(2)
        with pytest.raises(schedlab.ScheduleError, match="prefetch"):
            caches[0].circular_buffer(2, 2)
    x, y = inputs(5, 100)
    (out,) = fd.manual_execute([x, y])
    np.testing.assert_array_equal(out, x + y)
    assert "% 2)" in fd.fusion.print_kernel()


def test_grid_persistent():
    # A row sum split over blocks (BIDx) and threads: a grid reduction, made
    # an allreduce through a grid barrier (the script's grid_persistent(tv));
    # every block stores the row's sum.
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=["N", "K"])
        y = fd.ops.sum(x, dims=[1])
        fd.add_output(y)
        y.split(axis=1, factor=32)
        y.axis(0).parallelize(ParallelType.grid_y)
        y.axis(1).parallelize(ParallelType.grid_x)
        y.axis(2).parallelize(ParallelType.block_x)
        y.grid_persistent()
        with pytest.raises(schedlab.ScheduleError, match="expected a tensor defined by a reduction"):
            x.grid_persistent()
    assert "sl_grid_sync" in fd.fusion.print_kernel()
    v = RNG.standard_normal((3, 1000)).astype(np.float32)
    (out,) = fd.manual_execute([v])
    np.testing.assert_allclose(out, v.astype(np.float64).sum(axis=1), rtol=1e-5, atol=1e-4)
