"""Reshapes (issue 37): reshape / view / flatten / squeeze / unsqueeze / expand in
the Python frontend, and propagate_reshape + get_view_ops, on real kernels run on
the CPU backend and compared with NumPy."""
import numpy as np
import pytest

from schedlab import FusionDefinition, ParallelType, schedule

RNG = np.random.default_rng(11)


def chain():
    # exp(x) * 2 flattened over its last two axes, plus 1.
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=["N", "H", "W"])
        t = fd.ops.mul(fd.ops.exp(x), 2.0)
        f = fd.ops.flatten(t, 1, 2)
        y = fd.ops.add(f, 1.0)
        fd.add_output(y)
    return fd, x, t, f, y


@pytest.mark.parametrize("reshape_first", [False, True])
def test_one_schedule_across_a_flatten(reshape_first):
    fd, x, t, f, y = chain()
    with fd:
        if reshape_first:
            schedule.propagate_reshape()
        assert [v.name for v in schedule.get_view_ops()] == [f.name]
        y.merge(0)
        y.split(0, 32)
        y.axis(0).parallelize(ParallelType.BIDx)
        y.axis(1).parallelize(ParallelType.TIDx)
        schedule.transform_like(y)
        schedule.parallelize_like(y)
        schedule.inline_most()
    a = RNG.standard_normal((3, 5, 7)).astype(np.float32)
    (out,) = fd.manual_execute([a])
    np.testing.assert_allclose(out, (np.exp(a) * 2).reshape(3, 35) + 1, rtol=1e-6)


def test_reshape_squeeze_unsqueeze_expand_values():
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=["N", "K"])
        r = fd.ops.reshape(x, ["N", 2, -1])
        u = fd.ops.unsqueeze(r, 0)
        s = fd.ops.squeeze(u, [0])
        b = fd.ops.reshape(fd.ops.sum(x, [1]), ["N", 1])
        e = fd.ops.expand(b, [-1, "K"])
        fd.add_output(fd.ops.add(s, 0.0))
        fd.add_output(fd.ops.add(e, x))
    a = RNG.standard_normal((4, 6)).astype(np.float32)
    out = fd.execute([a])
    np.testing.assert_array_equal(out[0], a.reshape(4, 2, 3))
    np.testing.assert_allclose(out[1], a.sum(1, keepdims=True) + a, rtol=1e-6)


def test_reshape_errors_are_user_errors():
    with pytest.raises(Exception, match="has 24 elements, the shape \\[5, 5\\] has 25"):
        with FusionDefinition() as fd:
            x = fd.define_tensor(shape=[4, 6])
            fd.add_output(fd.ops.reshape(x, [5, 5]))
    with pytest.raises(TypeError, match="a shape entry is an int or a size name"):
        with FusionDefinition() as fd:
            x = fd.define_tensor(shape=[4, 6])
            fd.ops.reshape(x, [4.0, 6])
