"""Persistent row normalization (softmax, log-softmax, RMS norm): rules on the IR."""
# A Python heuristic (docs/python.md, "Python heuristics") written as rewrite
# rules: `match` statements over the segment's IR recognize what it is,
# and the schedule is the persistent one of configs/schedules/
# softmax_block.sched: one row per block (grid_x), the row split into
# `persist` chunks of ceilDiv(K, persist) elements, one element of each
# chunk per thread (block_x). Each thread keeps its `persist` values in
# registers across the reductions, which become block reductions over
# block_x after propagation.
#
# It takes segments whose reductions all reduce the innermost axis of a 2-D
# output, and names the pattern it found in `schedlab show`'s log.
from schedlab_heuristic import Binary, Broadcast, ParallelType, Reduction, Tensor, Unary

NAME = "py_softmax"
PRIORITY = -1
PARAMS = {
    "persist": {"default": 8, "min": 1, "max": 64, "doc": "values each thread keeps per row"},
}
MAX_THREADS = 1024


def pattern(exprs):
    """What the segment computes, by the first rule that matches, or None."""
    for e in exprs:
        match e:
            case Binary("div", _, Unary("exp", _, _), Broadcast(_, Reduction("sum", _, Unary("exp", _, _), _))):
                return "softmax"
            case Binary("sub", _, _, Unary("log", _, Broadcast(_, Reduction("sum", _, Unary("exp"), _)))):
                return "log_softmax"
            case Reduction("sum", _, Binary("mul", _, Tensor() as x, y), _) if x == y:
                return "rms_norm"  # a sum of an input's squares (x * x: the same node twice)
    return None


def can_schedule(segment):
    reductions = [e for e in segment.exprs if isinstance(e, Reduction)]
    if not reductions:
        return (False, "no reduction: py_softmax schedules row normalizations")
    for r in reductions:
        match r:
            case Reduction(op, out, _, axes) if axes != (out.nlogical - 1,) or out.nlogical != 2:
                return (False, f"{out!r}: a {op} over axes {list(axes)} of {out.nlogical}; "
                               "py_softmax reduces the innermost axis of 2-D rows")
    k = segment.outputs[0].logical_axis(-1).extent
    if k > MAX_THREADS * PARAMS["persist"]["max"]:
        return (False, f"rows of {k} elements need more than {MAX_THREADS} threads")
    return True


def compute_params(segment):
    k = segment.outputs[0].logical_axis(-1).extent
    persist = 1
    while -(-k // persist) > 256 and persist < PARAMS["persist"]["max"]:
        persist *= 2  # about 256 threads a row, at most MAX_THREADS
    segment.log(f"py_softmax: {pattern(segment.exprs) or 'a row reduction'}, K={k}, persist={persist}")
    return {"persist": persist}


def schedule(segment, params):
    y = segment.outputs[0]
    y.split(1, params["persist"], inner_split=False)  # [N, persist, ceilDiv(K, persist)]
    y.axis(0).parallelize(ParallelType.grid_x)
    y.axis(2).parallelize(ParallelType.block_x)
    segment.transform_like(y)
    segment.parallelize_like(y)
    segment.inline_most()
