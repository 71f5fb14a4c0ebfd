"""The example schedules of configs/schedules written in Python: each lowers
to the script's kernel (the same C++ primitives, the same checks) and
validates against the f64 reference on the CPU backend. Together they use
every primitive and query the scripts have."""
import schedlab
from schedlab import CacheOp, LoadStoreOpType, MemoryType, ParallelType, schedule

from script_kernels import cli_kernel


def propagate_and_inline(reference):
    """The scripts' common ending: propagate_transformation, parallelize_all_like, inline_most."""
    schedule.transform_like(reference)
    schedule.parallelize_like(reference)
    schedule.inline_most()


def check(fd, fusion, script):
    sizes = fd.default_sizes
    assert fd.fusion.print_kernel(sizes=sizes) == cli_kernel(fusion, script, sizes)
    fd.manual_validate()
    fd.manual_validate(sizes={k: v * 8 for k, v in sizes.items()})


def test_transpose2d():  # reorder, merge
    with schedlab.load_fusion("transpose2d") as fd:
        y = fd.tensor("y")
        y.reorder({0: 1, 1: 0})
        y.merge(0)
        y.split(0, 128)
        y.parallelize(0, ParallelType.BIDx)
        y.parallelize(1, ParallelType.TIDx)
        propagate_and_inline(y)
    check(fd, "transpose2d", "transpose2d.sched")


def test_row_sum_grid():  # a grid reduction: a Reduction axis on BIDx
    with schedlab.load_fusion("row_sum") as fd:
        y = fd.tensor("y")
        y.split(1, 4096)
        y.split(2, 128)
        y.axis(0).parallelize(ParallelType.grid_y)
        y.axis(1).parallelize(ParallelType.grid_x)
        y.axis(3).parallelize(ParallelType.block_x)
        propagate_and_inline(y)
    check(fd, "row_sum", "row_sum_grid.sched")


def test_softmax_multipass():  # recompute
    with schedlab.load_fusion("softmax") as fd:
        y = fd.tensor("y")
        e2 = fd.tensor("e").recompute([y])
        d2 = fd.tensor("T3").recompute([e2])
        fd.tensor("m").recompute([d2])
        y.split(1, 256)
        y.axis(0).parallelize(ParallelType.BIDx)
        y.axis(2).parallelize(ParallelType.TIDx)
        propagate_and_inline(y)
    check(fd, "softmax", "softmax_multipass.sched")


def test_var_mean_rfactor():  # caches, memory types, queries, rfactor, Vectorize
    with schedlab.load_fusion("var_mean") as fd:
        x, y = fd.tensor("x"), fd.tensor("y")
        xc = x.cache_after()
        xc.set_memory_type(MemoryType.shared)
        y.cache_before()
        fd.tensor("mean").cache_fork()
        fd.tensor("invstd").cache_fork()
        ref = schedule.find_reference_for()
        ref.split(1, 4)
        ref.split(1, 256)
        schedule.transform_like(ref)
        r = schedule.get_reduction_tvs()
        r[0].rfactor([-1])
        r[1].rfactor([-1])
        y.axis(0).parallelize(ParallelType.BIDx)
        y.axis(-2).parallelize(ParallelType.TIDx)
        schedule.parallelize_like(y)
        xc.axis(-1).parallelize(ParallelType.Vectorize)
        y.axis(-1).parallelize(ParallelType.vectorize)
        fd.tensor("mean").set_memory_type(MemoryType.Shared)
        fd.tensor("invstd").set_memory_type(MemoryType.shared)
        schedule.inline_most()
    check(fd, "var_mean", "var_mean_rfactor.sched")


def test_max_sub_add_partial():  # all_tvs_except, selected propagation, partial rfactor
    with schedlab.load_fusion("max_sub_add") as fd:
        x, b, y, m = (fd.tensor(n) for n in ("x", "b", "y", "m"))
        xc = x.cache_after(LoadStoreOpType.set, CacheOp.unspecified)
        bc = b.cache_after()
        yc = y.cache_before()
        for t in (xc, bc, yc, fd.tensor("d")):
            t.set_memory_type(MemoryType.shared)
        # mb stays Local, as in nvFuser (a block broadcast: lowering rule 2)
        rest = schedule.all_tvs_except([x, b, xc])
        y.split(1, 128)
        schedule.transform_like(y, rest)
        m.split(1, 128)
        m.rfactor([1])
        sel = schedule.all_tvs_except([x, b, xc])
        y.axis(0).parallelize(ParallelType.BIDx)
        y.axis(-1).parallelize(ParallelType.TIDx)
        schedule.parallelize_like(y, -1, sel)
        m.axis(0).parallelize(ParallelType.BIDx)
        m.axis(-1).parallelize(ParallelType.TIDx)
        schedule.parallelize_like(m, -1, sel)
        xc.split(1, 4)
        xc.axis(0).parallelize(ParallelType.BIDx)
        xc.axis(1).parallelize(ParallelType.TIDx)
        xc.axis(2).parallelize(ParallelType.Vectorize)
        # (the script inlines nothing: every tensor is its own loop nest)
    check(fd, "max_sub_add", "max_sub_add_partial.sched")
