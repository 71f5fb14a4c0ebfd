"""Flat pointwise: the reference's loop nest merged into one, blocks of `block` threads."""
# A Python heuristic (docs/python.md, "Python heuristics"): nvFuser's 1D
# pointwise schedule in its simplest form. The reference (the segment's
# largest output) is merged into a single axis and split by the block size,
# the outer part bound to blocks (grid_x), the inner to threads (block_x);
# propagation gives every tensor the same loop nest and inline_most puts the
# whole expression in one loop. It refuses segments with a reduction, which
# the IR says with a `match`.
from schedlab_heuristic import ParallelType, Reduction

NAME = "py_pointwise"
PRIORITY = -1  # never offered by the segmenter: ask for it by name or file
PARAMS = {
    "block": {"default": 128, "min": 32, "max": 1024, "doc": "threads per block"},
}


def can_schedule(segment):
    for e in segment.exprs:
        match e:
            case Reduction(op, out, _, _):
                return (False, f"{out!r} is a {op} reduction: py_pointwise schedules none")
    return True


def compute_params(segment):
    ref = segment.find_reference() or segment.outputs[0]
    elements = 1
    for axis in ref.logical():
        elements *= max(axis.extent, 1)
    # Halve the block (down to a warp) while the grid leaves SMs idle.
    block = 128
    while block > 32 and -(-elements // block) < segment.device.sm_count:
        block //= 2
    return {"block": block}


def schedule(segment, params):
    ref = segment.find_reference() or segment.outputs[0]
    while ref.nloop > 1:
        ref.merge(0)
    ref.split(0, params["block"])
    ref.axis(0).parallelize(ParallelType.grid_x)
    ref.axis(1).parallelize(ParallelType.block_x)
    segment.transform_like(ref)
    segment.parallelize_like(ref)
    segment.inline_most()
