"""schedlab: fusions and user schedules in nvFuser's Python spelling.

    import numpy as np
    from schedlab import FusionDefinition, DataType, ParallelType, schedule

    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[-1, -1], dtype=DataType.Float)
        y = fd.ops.set(x)
        fd.add_output(y)
        y.merge(0)
        y.split(0, 128)
        y.axis(0).parallelize(ParallelType.grid_x)
        y.axis(1).parallelize(ParallelType.block_x)

    (out,) = fd.manual_execute([np.ones((4, 8), dtype=np.float32)])

docs/python.md is the reference: what is bound, how it differs from nvFuser.
"""

from ._schedlab import (  # noqa: F401  (the package's API)
    CacheOp,
    DataType,
    DefinitionError,
    Error,
    FusionDefinition,
    IterDomain,
    LoadStoreOpType,
    LoopTransform,
    MemoryType,
    ParallelType,
    Scalar,
    ScheduleError,
    TensorView,
    ValidationError,
    load_fusion,
    schedule,
)

__all__ = [
    "CacheOp",
    "DataType",
    "DefinitionError",
    "Error",
    "FusionDefinition",
    "IterDomain",
    "LoadStoreOpType",
    "LoopTransform",
    "MemoryType",
    "ParallelType",
    "Scalar",
    "ScheduleError",
    "TensorView",
    "ValidationError",
    "load_fusion",
    "schedule",
]
