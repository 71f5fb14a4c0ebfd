"""print(tv) and print(tv.axis(i)) in nvFuser's format (TensorView::toString,
IterDomain::toString in NVIDIA/Fuser), repr(tv) in schedlab's (print_math's)
(tv.print_detail(), domains, transforms and memory, is in test_execute.py)."""
import pytest

import schedlab
from schedlab import DataType, FusionDefinition, LoadStoreOpType, MemoryType, ParallelType, schedule


def copy_fusion(shape=(-1, -1), dtype=DataType.Float):
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=list(shape), dtype=dtype)
        y = fd.ops.set(x)
        fd.add_output(y)
    return fd, x, y


def test_print_follows_the_memcpy_tutorial():
    # nvFuser prints T1_g_float[iS5{( i0 * i1 )}], then
    # T1_g_float[iS6{( ceilDiv(( i0 * i1 ), 256) )}, iS7{256}]: the same
    # shape of text, with schedlab's numbers and size names.
    fd, x, y = copy_fusion()
    assert str(x) == "T0_g_float[iS0{S0}, iS1{S1}]"
    assert str(y) == "T1_g_float[iS2{S0}, iS3{S1}]"
    y.merge(0, 1)
    assert str(y) == "T1_g_float[iS4{( S0 * S1 )}]"
    y.split(0, 256)
    assert str(y) == "T1_g_float[iS5{( ceilDiv(( S0 * S1 ), 256) )}, iS6{256}]"
    y.axis(1).parallelize(ParallelType.block_x)
    y.axis(0).parallelize(ParallelType.grid_x)
    assert str(y) == "T1_g_float[iblockIdx.x5{( ceilDiv(( S0 * S1 ), 256) )}, ithreadIdx.x6{256}]"
    assert f"{y}" == str(y)


@pytest.mark.parametrize("dtype, name", [
    (DataType.Float, "float"), (DataType.Double, "double"), (DataType.Half, "__half"),
    (DataType.BFloat16, "__bfloat"), (DataType.Int, "int64_t"), (DataType.Int32, "int"),
    (DataType.Bool, "bool")])
def test_dtype_is_spelled_as_nvfuser_does(dtype, name):
    _, x, _ = copy_fusion(shape=(4,), dtype=dtype)
    assert str(x) == f"T0_g_{name}[iS0{{4}}]"
    # repr keeps schedlab's own spelling, the one print_math uses.
    assert repr(x).startswith("T0_g_") and name not in repr(x).replace("bool", "")


def test_iteration_types_memory_and_positions():
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=["N", "K"])
        b = fd.define_tensor(shape=[1, "K"])
        s = fd.ops.sum(x + b, dims=[1], keepdim=True)
        fd.add_output(s)
        assert str(b) == "T1_g_float[bS2{1}, iS3{K}]"
        # sum(keepdim=True): a reduction T3, broadcast back to 2-D as T4.
        assert str(s) == "T4_g_float[iS8{N}, bS9{1}]"
        c = x.cache_after()
        c.set_memory_type(MemoryType.shared)
        s.axis(0).parallelize(ParallelType.grid_x)
        schedule.parallelize_like(s)
        schedule.inline_most()
    # The compute-at position, and produce_pos: the highest of the producers'.
    assert str(c) == "T5_s_float[iblockIdx.x10{N}, iS11{K}] ca_pos( 2 )"
    assert str(fd.tensor("T3")) == "T3_l_float[iblockIdx.x6{N}, rS7{K}] ca_pos( 1 ) produce_pos( 2 )"
    assert str(s) == "T4_g_float[iblockIdx.x8{N}, bS9{1}] produce_pos( 1 )"
    assert repr(c) == "T5_s_f32[iblockIdx.x10{N}, iS11{K}] ca_pos(2)"
def test_rfactor_products_and_reduction_axes():
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[-1])
        y = fd.ops.sum(x, dims=[0])
        fd.add_output(y)
        y.split(0, 1024)
        r = y.rfactor([0])
    # nvFuser: T2_l_float[rS{( ceilDiv(i0, 1024) )}rf, iS{1024}rf] for the
    # new producer, and the consumer reduces the 1024 rfactor outputs.
    assert str(r) == "T2_l_float[rS5{( ceilDiv(S0, 1024) )}rf, iS6{1024}rf]"
    assert str(y) == "T1_g_float[rS7{1024}]"


def test_loop_transforms_print_nvfusers_parallel_letters():
    fd, x, y = copy_fusion()
    y.split(1, 4)
    y.split(0, 2)
    y.axis(-1).parallelize(ParallelType.vectorize)
    y.axis(1).parallelize(ParallelType.unroll)
    y.axis(0).parallelize(ParallelType.unswitch)
    assert str(y) == ("T1_g_float[iUS6{( ceilDiv(S0, 2) )}, iUR7{2}, iS4{( ceilDiv(S1, 4) )}, "
                      "iV5{4}]")
    c = x.cache_after(LoadStoreOpType.tma)
    c.set_memory_type(MemoryType.shared)
    c.axis(1).parallelize(ParallelType.tma)
    assert str(c) == "T2_s_float[iS8{S0}, iB9{S1}]"


def test_axis_prints_like_an_iterdomain():
    fd, x, y = copy_fusion()
    y.split(1, 32)
    y.axis(2).parallelize(ParallelType.block_x)
    assert str(y.axis(2)) == "ithreadIdx.x5{32}"
    assert str(y.axis(1)) == "iS4{( ceilDiv(S1, 32) )}"
    assert repr(y.axis(1)) == "iS4{ceilDiv(S1, 32)}"

