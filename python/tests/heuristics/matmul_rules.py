"""Matmul by rules on the IR: a sum over K of the product of two broadcast operands."""
# A Python heuristic (docs/python.md, "Python heuristics") that test_matmul_heuristic.py
# serves through the built-in `python` plugin. It needs nothing beyond the IR every heuristic
# sees: matmul(a, b) and linear(x, w, bias) are composites (core/ir/arith.cpp), so the
# contraction is a Reduction "sum" of a Binary "mul" whose operands are Broadcasts of a and b,
# through the Casts that promote bf16 and f16 to f32 (before or after the broadcast).
#
# Its schedule is a CUDA-core one: every output element (batch, M and N merged) a block of
# the grid, its sum over K split among `threads_k` threads of the block (a block reduction),
# the operands' broadcasts, the multiply and any epilogue inlined into it.
from schedlab_heuristic import Binary, Broadcast, Cast, ParallelType, Reduction

NAME = "py_matmul_rules"
PARAMS = {
    "threads_k": {"default": 8, "min": 1, "max": 32,
                  "doc": "threads that share the sum over K of one output element"},
}


def operand(e):
    """What a multiply's operand broadcasts (through casts), or None if it is no broadcast."""
    broadcast = False
    while True:
        match e:
            case Cast(_, inp, _):
                e = inp
            case Broadcast(_, inp, _):
                e, broadcast = inp, True
            case _:
                return e if broadcast else None


def contractions(exprs):
    """(sum, a, b, K's axis of the sum) for each sum over one axis of a product of two
    broadcast operands."""
    found = []
    for e in exprs:
        match e:
            case Reduction("sum", out, Binary("mul", _, lhs, rhs), (k,)) \
                    if operand(lhs) is not None and operand(rhs) is not None:
                found.append((out, operand(lhs), operand(rhs), k))
    return found


def can_schedule(segment):
    found = contractions(segment.exprs)
    if len(found) == 1:
        return True
    if found:
        return (False, f"{len(found)} matmuls ({', '.join(repr(f[0]) for f in found)}); "
                       f"{NAME} schedules one")
    for e in segment.exprs:
        match e:
            case Reduction(op, out, inp, axes):
                what = getattr(inp, "op", type(inp).__name__.lower())  # "mul", "tensor"
                return (False, f"{out!r} is a {op} over axes {list(axes)} of {what} "
                               f"{inp.out!r}, not a sum over K of the product of two "
                               "broadcast operands")
    return (False, f"no reduction: {NAME} schedules a matmul")


def compute_params(segment):
    ((out, a, b, k),) = contractions(segment.exprs)
    extent = out.logical_axis(k).extent
    threads = 1
    while threads * 2 <= min(extent, PARAMS["threads_k"]["max"]):
        threads *= 2
    segment.log(f"{NAME}: {out!r} = sum over axis {k} (K={extent}) of {a.out!r} x {b.out!r}")
    return {"threads_k": threads}


def schedule(segment, params):
    ((out, _, _, k),) = contractions(segment.exprs)
    n = out.nlogical
    out.reorder({k: n - 1})                      # [..., M, N, rK]
    for _ in range(n - 2):
        out.merge(0)                             # [batch * M * N, rK]
    out.split(1, params["threads_k"])            # [batch * M * N, ceilDiv(K, t), rt]
    out.axis(0).parallelize(ParallelType.grid_x)
    out.axis(2).parallelize(ParallelType.block_x)
    segment.transform_like(out)
    segment.parallelize_like(out)
    segment.inline_most()
