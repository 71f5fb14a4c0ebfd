"""fd.ops.matmul(arg1, arg2) and fd.ops.linear(arg1, arg2, bias=None), nvFuser's spelling of
the fusion language's matmul and linear (core/ir/arith.cpp): against NumPy at f32, f16 and bf16,
batched, at shapes that are multiples of nothing; the standard matmul fusions; each refusal
with the operand and axis it names; and a hand schedule of a matmul on the CPU backend."""
import inspect

import numpy as np
import pytest

import schedlab
from schedlab import DataType, FusionDefinition, ParallelType, schedule
from test_arrays import bf16_bits

RNG = np.random.default_rng(36)


def rand(shape, dtype=np.float32):
    return RNG.uniform(-1, 1, shape).astype(dtype)


def matmul_fusion(a_shape, b_shape, dtype=DataType.Float):
    with FusionDefinition() as fd:
        a = fd.define_tensor(shape=a_shape, dtype=dtype)
        b = fd.define_tensor(shape=b_shape, dtype=dtype)
        fd.add_output(fd.ops.matmul(a, b))
    return fd


def f32_matmul(a, b):
    """PyTorch's matmul of f16/bf16 operands: exact products, f32 sums (here f64)."""
    return np.matmul(a.astype(np.float64), b.astype(np.float64))


# (a's shape, b's shape): M x N x K = 130 x 70 x 48 and 1 x 1 x 16 (multiples of nothing),
# batched alike, b broadcast over a's batch, and batch axes broadcast against each other.
SHAPES = [
    ((130, 48), (48, 70)),
    ((1, 16), (16, 1)),
    ((3, 5, 16), (3, 16, 7)),
    ((3, 5, 33), (33, 7)),
    ((4, 1, 5, 16), (3, 16, 7)),
]


def symbolic(shape):
    """define_tensor's shape for arrays of `shape`: -1, except a batch axis of 1, which is
    Broadcast (M or N of 1 stays -1: an extent that is 1 at this run)."""
    return [1 if s == 1 and i < len(shape) - 2 else -1 for i, s in enumerate(shape)]


@pytest.mark.parametrize("a_shape,b_shape", SHAPES)
def test_matmul_f32_matches_numpy(a_shape, b_shape):
    fd = matmul_fusion(symbolic(a_shape), symbolic(b_shape))
    a, b = rand(a_shape), rand(b_shape)
    (c,) = fd.execute([a, b])
    want = f32_matmul(a, b)
    assert c.dtype == np.float32 and c.shape == want.shape
    np.testing.assert_allclose(c, want, rtol=1e-5, atol=1e-5)
    fd.validate([a, b])


@pytest.mark.parametrize("a_shape,b_shape", SHAPES[:3])
def test_matmul_f16_sums_in_f32_and_rounds_once(a_shape, b_shape):
    fd = matmul_fusion(symbolic(a_shape), symbolic(b_shape), DataType.Half)
    a, b = rand(a_shape, np.float16), rand(b_shape, np.float16)
    (c,) = fd.execute([a, b])
    assert c.dtype == np.float16
    # One f16 rounding of the f32 sum: the exact value rounded, give or take one f16 ulp
    # where the f32 sum's own error crosses a tie. (NumPy's own f16 `a @ b` is not that:
    # it differs from the once-rounded value in 10 of the 9100 elements of 130 x 70 x 48.)
    np.testing.assert_allclose(c, f32_matmul(a, b).astype(np.float16), rtol=2**-10, atol=1e-6)
    fd.validate([a, b])


def test_matmul_of_sized_operands_keeps_the_names():
    fd = matmul_fusion(["M", "K"], ["K", "N"])
    math = fd.fusion.print_math()
    assert "= reduction(" in math and "op = sum" in math
    assert fd.outputs[0].print_detail().count("{M}") >= 1
    a, b = rand((6, 20)), rand((20, 9))
    (c,) = fd.execute([a, b])
    np.testing.assert_allclose(c, f32_matmul(a, b), rtol=1e-5, atol=1e-5)


def test_symbolic_contracted_axes_unify_and_a_run_checks_them():
    # a's K (-1) and b's K (-1) become one extent; M and N stay apart.
    fd = matmul_fusion([-1, -1], [-1, -1])
    a, b = rand((4, 12)), rand((12, 9))
    (c,) = fd.execute([a, b])
    assert c.shape == (4, 9)
    with pytest.raises(schedlab.Error, match=r"input 1 \(T1\) axis 0: expected extent 12, found 11"):
        fd.execute([a, rand((11, 9))])
    # Batch axes meet batch axes (from the right, before the last two).
    fd = matmul_fusion([-1, -1, -1], [-1, -1, -1])
    assert fd.execute([rand((2, 4, 12)), rand((2, 12, 9))])[0].shape == (2, 4, 9)
    with pytest.raises(schedlab.Error, match=r"input 1 \(T1\) axis 0: expected extent 2, found 3"):
        fd.execute([rand((2, 4, 12)), rand((3, 12, 9))])
    # linear: x's K meets w's K, the bias meets w's N.
    fd = linear_fusion(2, bias=True)
    x, w = rand((4, 12)), rand((9, 12))
    assert fd.execute([x, w, rand((9,))])[0].shape == (4, 9)
    with pytest.raises(schedlab.Error, match=r"input 2 \(T2\) axis 0: expected extent 9, found 4"):
        fd.execute([x, w, rand((4,))])


def linear_fusion(x_rank, bias, dtype=DataType.Float):
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[-1] * x_rank, dtype=dtype)
        w = fd.define_tensor(shape=[-1, -1], dtype=dtype)
        b = fd.define_tensor(shape=[-1], dtype=dtype) if bias else None
        fd.add_output(fd.ops.linear(x, w, b) if bias else fd.ops.linear(x, w))
    return fd


@pytest.mark.parametrize("x_shape", [(130, 48), (2, 5, 16), (16,)])
@pytest.mark.parametrize("bias", [False, True])
def test_linear_matches_numpy(x_shape, bias):
    fd = linear_fusion(len(x_shape), bias)
    n, k = 7, x_shape[-1]
    x, w, b = rand(x_shape), rand((n, k)), rand((n,))
    inputs = [x, w, b] if bias else [x, w]
    (y,) = fd.execute(inputs)
    want = f32_matmul(x, w.T) + (b if bias else 0)
    assert y.shape == x_shape[:-1] + (n,)
    np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-5)
    fd.validate(inputs)


def test_linear_by_keyword_as_nvfuser_spells_it():
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[-1, -1])
        w = fd.define_tensor(shape=[-1, -1])
        b = fd.define_tensor(shape=[-1])
        fd.add_output(fd.ops.linear(arg1=x, arg2=w, bias=b))
        fd.add_output(fd.ops.matmul(arg1=x, arg2=fd.ops.permute(w, [1, 0])))
    x, w, b = rand((3, 10)), rand((4, 10)), rand((4,))
    y, z = fd.execute([x, w, b])
    np.testing.assert_allclose(y, f32_matmul(x, w.T) + b, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(z, f32_matmul(x, w.T), rtol=1e-5, atol=1e-5)


def bf16_values(bits):
    return (bits.astype(np.uint32) << 16).view(np.float32)


def test_load_fusion_matmul_bf16_executes_and_validates():
    fd = schedlab.load_fusion("matmul_bf16")
    a, b = bf16_bits(rand((130, 48))), bf16_bits(rand((48, 70)))
    (c,) = fd.execute([a, b])
    # bf16 out (as float32 values): the f32 sum rounded once to bf16.
    want = f32_matmul(bf16_values(a), bf16_values(b))
    assert c.dtype == np.float32 and c.shape == (130, 70)
    np.testing.assert_array_equal(c, bf16_values(bf16_bits(want.astype(np.float32))))
    fd.validate([a, b], device="cpu")
    fd.validate(sizes={"M": 1, "N": 1, "K": 16}, device="cpu")


@pytest.mark.parametrize("name", ["matmul_f16", "batched_matmul_bf16", "linear_bias_gelu_bf16"])
def test_standard_matmul_fusions_validate_at_odd_sizes(name):
    fd = schedlab.load_fusion(name)
    sizes = {k: {"M": 130, "N": 70, "K": 48}.get(k, 3) for k in fd.default_sizes}
    outs = fd.validate(sizes=sizes)
    assert outs[0].shape[-2:] == (130, 70)


def refusal(build):
    """The DefinitionError that build(fd) raises inside a definition; checks that the
    exception names this file and the line of the refused fd.ops call."""
    with pytest.raises(schedlab.DefinitionError) as info:
        build(FusionDefinition())  # never closed: a closed definition needs an output
    e = info.value
    source, first = inspect.getsourcelines(build)
    calls = [first + i for i, text in enumerate(source) if "fd.ops." in text]
    assert e.filename == __file__ and e.lineno == calls[-1]
    assert str(e) == f"{__file__}:{e.lineno}: error: {e.message}"
    return e


def test_mismatched_k_names_both_operands_and_axes():
    def build(fd):
        a = fd.define_tensor(shape=[4, 16])
        b = fd.define_tensor(shape=[15, 7])
        fd.ops.matmul(a, b)
    e = refusal(build)
    assert e.primitive == "matmul" and e.tensor == "T0"
    assert e.message == ("matmul: the contracted axes differ: axis 1 of T0 (shape [4, 16]) has "
                         "extent 16, axis 0 of T1 (shape [15, 7]) has extent 15; expected equal "
                         "extents")


def test_named_sizes_never_unify_across_k():
    def build(fd):
        a = fd.define_tensor(shape=["M", "K"])
        b = fd.define_tensor(shape=["J", "N"])
        fd.ops.matmul(a, b)
    e = refusal(build)
    assert "axis 1 of T0 (shape [M, K]) has extent K, axis 0 of T1 (shape [J, N]) has extent J" \
        in e.message


def test_linear_mismatched_k():
    def build(fd):
        x = fd.define_tensor(shape=[-1, 16])
        w = fd.define_tensor(shape=[-1, 12])
        fd.ops.linear(x, w)
    e = refusal(build)
    assert e.message.startswith("linear: the contracted axes differ: axis 1 of T0")
    assert "axis 1 of T1 (shape [S1, 12]) has extent 12" in e.message


@pytest.mark.parametrize("dtypes,expected", [
    ((DataType.Float, DataType.Half),
     "matmul: expected operands of one dtype, found T0 of dtype f32 and T1 of dtype f16"),
    ((DataType.Double, DataType.Double),
     "matmul: expected a bf16, f16 or f32 operand, found T0 of dtype f64"),
    ((DataType.Float, DataType.Int),
     "matmul: expected a bf16, f16 or f32 operand, found T1 of dtype i64"),
])
def test_matmul_dtype_refusals(dtypes, expected):
    def build(fd):
        a = fd.define_tensor(shape=[-1, -1], dtype=dtypes[0])
        b = fd.define_tensor(shape=[-1, -1], dtype=dtypes[1])
        fd.ops.matmul(a, b)
    assert refusal(build).message == expected


def test_matmul_rank_refusal_names_the_operand_and_its_shape():
    def build(fd):
        a = fd.define_tensor(shape=[-1])
        b = fd.define_tensor(shape=[-1, -1])
        fd.ops.matmul(a, b)
    assert refusal(build).message == ("matmul: expected T0 to have shape [..., M, K] (rank >= 2), "
                                      "found shape [S0]")


def test_linear_weight_rank_refusal():
    def build(fd):
        x = fd.define_tensor(shape=[-1, -1])
        w = fd.define_tensor(shape=[-1, -1, -1])
        fd.ops.linear(x, w)
    e = refusal(build)
    assert e.message.startswith("linear: expected the weight T1 to have shape [N, K], found shape [")


def test_linear_bias_refusals():
    def wrong_length(fd):
        x = fd.define_tensor(shape=[-1, 16])
        w = fd.define_tensor(shape=[7, 16])
        b = fd.define_tensor(shape=[8])
        fd.ops.linear(x, w, b)
    assert refusal(wrong_length).message == ("linear: expected the bias T2 to have shape [7] (N of "
                                             "the weight), found shape [8]")

    def wrong_dtype(fd):
        x = fd.define_tensor(shape=[-1, -1], dtype=DataType.Half)
        w = fd.define_tensor(shape=[-1, -1], dtype=DataType.Half)
        b = fd.define_tensor(shape=[-1])
        fd.ops.linear(x, w, b)
    assert refusal(wrong_dtype).message == ("linear: expected the bias T2 in f16, the input's dtype, "
                                            "found f32")


def test_an_operand_that_is_not_a_tensor_is_named():
    def build(fd):
        a = fd.define_tensor(shape=[-1, -1])
        fd.ops.matmul(a, 2.0)
    assert refusal(build).message == ("matmul: expected a TensorView as the second operand, found "
                                      "<class 'float'>")

    def scalar_bias(fd):
        x = fd.define_tensor(shape=[-1, -1])
        w = fd.define_tensor(shape=[-1, -1])
        fd.ops.linear(x, w, fd.define_scalar(1.0))
    assert refusal(scalar_bias).message.startswith("linear: expected a TensorView as the bias, found")


def test_operands_of_two_definitions():
    with FusionDefinition() as other:
        b = other.define_tensor(shape=[-1, -1])
        other.add_output(other.ops.set(b))

    def build(fd):
        a = fd.define_tensor(shape=[-1, -1])
        fd.ops.matmul(a, b)
    assert refusal(build).message == "matmul: operands of two FusionDefinitions"


def test_a_hand_scheduled_matmul_validates_on_the_cpu():
    # c = a @ b at f32 is the sum itself: T4 [M, rK, N] of T3 = a[M, K, 1] * b[1, K, N].
    # K split in chunks of 8, one block per row of c, a block reduction of each chunk over
    # block_x, N over block_y; the operands' broadcasts and the multiply inlined into it.
    with FusionDefinition() as fd:
        a = fd.define_tensor(shape=[-1, -1])
        b = fd.define_tensor(shape=[-1, -1])
        c = fd.ops.matmul(a, b)
        fd.add_output(c)
        c.split(1, 8)                                # [M, ceilDiv(K, 8), r8, N]
        c.axis(0).parallelize(ParallelType.grid_x)
        c.axis(2).parallelize(ParallelType.block_x)
        c.axis(3).parallelize(ParallelType.block_y)
        schedule.transform_like(c)
        schedule.parallelize_like(c)
        schedule.inline_most()
    kernel = fd.fusion.print_kernel()
    assert "blockIdx.x" in kernel and "threadIdx.y" in kernel
    for m, n, k in [(5, 7, 45), (130, 70, 48), (1, 1, 16)]:
        a, b = rand((m, k)), rand((k, n))
        (out,) = fd.manual_execute([a, b], device="cpu")
        np.testing.assert_allclose(out, f32_matmul(a, b), rtol=1e-5, atol=1e-5)
        fd.manual_validate([a, b], device="cpu")


def test_fuse_mma_then_split_k_validates_on_the_cpu():
    # The script primitive fuse_mma(tv) as a method: matmul_bf16's sum T7 [M, rK, N] of the
    # f32 product of the bf16 operands' casts becomes one MmaOp reading a and b as they are.
    # Then split-K: K split by 8, the 8 partial sums (rfactor) reduced across block_x.
    with schedlab.load_fusion("matmul_bf16") as fd:
        (mm,) = schedule.get_reduction_tvs()
        assert mm.fuse_mma() == mm                   # the same tensor, for chaining
        math = fd.fusion.print_math()
        assert "= mma(" in math and "= mul(" not in math
        mm.reorder({1: 2})                           # [M, N, rK]
        mm.split(2, 8)                               # [M, N, ceilDiv(K, 8), r8]
        schedule.transform_like(mm)
        mm.rfactor([2])
        mm.axis(0).parallelize(ParallelType.grid_y)
        mm.axis(1).parallelize(ParallelType.grid_x)
        mm.axis(2).parallelize(ParallelType.block_x)
        schedule.parallelize_like(mm)
        schedule.inline_most()
    for m, n, k in [(130, 70, 48), (1, 1, 16), (2, 3, 5)]:
        a, b = bf16_bits(rand((m, k))), bf16_bits(rand((k, n)))
        (c,) = fd.manual_execute([a, b], device="cpu")
        want = f32_matmul(bf16_values(a), bf16_values(b))
        np.testing.assert_allclose(c, want, rtol=2**-8, atol=1e-6)
        fd.manual_validate([a, b], device="cpu")


def test_fuse_mma_refuses_what_is_not_a_matmul_naming_the_tensor():
    with schedlab.load_fusion("row_sum") as fd:
        (s,) = schedule.get_reduction_tvs()
        line = inspect.currentframe().f_lineno + 2
        with pytest.raises(schedlab.ScheduleError, match="which is not a product; expected sum") as info:
            s.fuse_mma()
    e = info.value
    assert e.primitive == "fuse_mma" and e.tensor == "T1 (y)" and e.lineno == line
