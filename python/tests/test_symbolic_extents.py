"""Symbolic (-1) extents: two -1 extents whose axes meet in an operation
are one extent (nvFuser's symbolic extents, unified by its exact map), so
fusions of several -1 inputs build, and a run refuses inputs that disagree
on it, naming the tensor and axis, the expected and the found extent."""
import numpy as np
import pytest

import schedlab
from schedlab import FusionDefinition

RNG = np.random.default_rng(351)


def randn(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def axis_extents(tv):
    return [tv.axis(i).extent() for i in range(tv.nloop())]


def test_two_inputs_added_share_their_extents():
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[-1, -1])
        y = fd.define_tensor(shape=[-1, -1])
        z = fd.ops.exp(x + y)
        fd.add_output(z)
    assert axis_extents(x) == axis_extents(y) == axis_extents(z) == ["S0", "S1"]
    a, b = randn(3, 5), randn(3, 5)
    (out,) = fd.execute([a, b])
    np.testing.assert_allclose(out, np.exp(a + b), rtol=1e-6)
    fd.validate([a, b])


def test_an_inconsistent_input_names_tensor_axis_expected_and_found():
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[-1, -1])
        y = fd.define_tensor(shape=[-1, -1])
        fd.add_output(fd.ops.mul(x, y))
    with pytest.raises(schedlab.Error) as info:
        fd.execute([randn(3, 4), randn(3, 5)])
    e = info.value
    assert e.tensor == "T1" and e.axis == 1 and e.primitive == "execute"
    assert e.message == ("input 1 (T1) axis 1: expected extent 4, found 5 (the axes share size "
                         "S1, which input 0 (T0) axis 1 gives 4)")
    with pytest.raises(schedlab.Error, match=r"input 1 \(T1\) axis 0: expected extent 3, found 2"):
        fd.manual_execute([randn(3, 4), randn(2, 4)])


def test_unrelated_inputs_keep_their_own_extents():
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[-1, -1])
        y = fd.define_tensor(shape=[-1])
        fd.add_output(fd.ops.sum(x, dims=[1]))
        fd.add_output(fd.ops.neg(y))
    assert axis_extents(x) == ["S0", "S1"] and axis_extents(y) == ["S2"]
    a, b = randn(3, 4), randn(7)
    sums, neg = fd.execute([a, b])
    np.testing.assert_allclose(sums, a.sum(axis=1), rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(neg, -b)


def test_a_broadcast_meets_the_inner_axis():
    # y [S2] broadcast to [1, S2] meets x [S0, S1]: S2 is S1, also in the
    # sum over y made before (its reduction axis) and in the broadcast.
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[-1, -1])
        y = fd.define_tensor(shape=[-1])
        total = fd.ops.sum(y)
        by = fd.ops.broadcast(y, [True, False])
        fd.add_output(x * by + total)
    assert axis_extents(y) == ["S1"] and axis_extents(by) == ["1", "S1"]
    assert "rS" in str(total) and "{S1}" in str(total)
    a, b = randn(3, 4), randn(4)
    (out,) = fd.execute([a, b])
    np.testing.assert_allclose(out, a * b + b.sum(), rtol=1e-5, atol=1e-5)
    with pytest.raises(schedlab.Error, match=r"input 1 \(T1\) axis 0: expected extent 4, found 5"):
        fd.execute([a, randn(5)])


def test_a_mean_made_before_the_meeting_counts_the_unified_extent():
    # mean(y)'s count is y's extent, a size scalar: it follows y's rename.
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[-1, -1])
        y = fd.define_tensor(shape=[-1, -1])
        m = fd.ops.mean(y, dims=[1])
        fd.add_output(fd.ops.sum(x, dims=[1]) + m)
        fd.add_output(x - y)
    assert axis_extents(y) == ["S0", "S1"]
    assert "i64(S1)" in fd.fusion.print_math() and "S3" not in fd.fusion.print_math()
    a, b = randn(2, 6), randn(2, 6)
    s, d = fd.execute([a, b])
    np.testing.assert_allclose(s, a.sum(axis=1) + b.mean(axis=1), rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(d, a - b)


def test_where_unifies_its_three_operands():
    with FusionDefinition() as fd:
        c = fd.define_tensor(shape=[-1], dtype=schedlab.DataType.Bool)
        x = fd.define_tensor(shape=[-1])
        y = fd.define_tensor(shape=[-1])
        fd.add_output(fd.ops.where(c, x, y))
    assert axis_extents(c) == axis_extents(x) == axis_extents(y) == ["S0"]
    cond = np.array([True, False, True])
    a, b = randn(3), randn(3)
    (out,) = fd.execute([cond, a, b])
    np.testing.assert_array_equal(out, np.where(cond, a, b))


def test_a_named_size_or_a_constant_wins_over_a_symbolic_extent():
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[-1, "N"])
        y = fd.define_tensor(shape=[4, -1])
        fd.add_output(x + y)
    assert axis_extents(x) == ["4", "N"] and axis_extents(y) == ["4", "N"]
    with pytest.raises(schedlab.Error, match=r"input 0 \(T0\) axis 0: expected extent 4, found 3"):
        fd.execute([randn(3, 2), randn(4, 2)])


def test_two_named_sizes_stay_distinct():
    # Names the user gave are a statement: N and M do not meet.
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=["N"])
        y = fd.define_tensor(shape=["M"])
        fd.add_output(fd.ops.neg(x))
        fd.add_output(fd.ops.neg(y))
        with pytest.raises(schedlab.DefinitionError, match=r"axis 0 has extent N on one side and "
                                                           r"M on the other"):
            fd.ops.add(x, y)


def test_from_pytorch_takes_the_arrays_rank_and_dtype():
    # nvFuser's fd.from_pytorch(t): -1 per axis, size-1 axes Broadcast.
    a, b = randn(3, 1).astype(np.float64), randn(3, 5).astype(np.float64)
    with FusionDefinition() as fd:
        x = fd.from_pytorch(a)
        y = fd.from_pytorch(b)
        two = fd.define_scalar(2, dtype=schedlab.DataType.Int)
        fd.add_output(x * y * two)
    assert x.dtype == schedlab.DataType.Double and axis_extents(x) == ["S0", "1"]
    assert x.axis(1).is_broadcast() and axis_extents(y) == ["S0", "S2"]
    (out,) = fd.execute([a, b])
    assert out.dtype == np.float64
    np.testing.assert_allclose(out, a * b * 2)


def test_from_pytorch_and_define_scalar_refuse_what_they_cannot_take():
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[-1])
        fd.add_output(fd.ops.neg(x))
        with pytest.raises(schedlab.DefinitionError, match=r"from_pytorch: an array of dtype "
                                                           r"complex64; expected float32"):
            fd.from_pytorch(np.zeros(2, dtype=np.complex64))
        with pytest.raises(schedlab.DefinitionError, match=r"from_pytorch: expected an array "
                                                           r"\(shape and dtype\), found <class "
                                                           r"'list'>"):
            fd.from_pytorch([1.0, 2.0])
        with pytest.raises(schedlab.DefinitionError, match=r"define_scalar: expected a number "
                                                           r"\(a constant; schedlab has no "
                                                           r"scalar inputs\), found <class 'str'>"):
            fd.define_scalar("eps")


def test_a_refusal_names_the_axis_whose_named_sizes_differ():
    # Axis 1 meets N against M: add refuses, naming axis 1 (axis 0's -1
    # extents, which did meet, are one).
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[-1, "N"])
        y = fd.define_tensor(shape=[-1, "M"])
        fd.add_output(fd.ops.neg(x))
        fd.add_output(fd.ops.neg(y))
        with pytest.raises(schedlab.DefinitionError, match=r"axis 1 has extent N on one side "
                                                           r"and M on the other"):
            x + y
    assert axis_extents(x) == ["S0", "N"] and axis_extents(y) == ["S0", "M"]


def test_a_lower_rank_operand_meets_the_inner_axes():
    # NumPy's rule, as the operation's: [S2] against [S0, S1] is S1.
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[-1, -1])
        y = fd.define_tensor(shape=[-1])
        fd.add_output(x - y)
    assert axis_extents(y) == ["S1"]
    a, b = randn(2, 3), randn(3)
    (out,) = fd.execute([a, b])
    np.testing.assert_array_equal(out, a - b)
