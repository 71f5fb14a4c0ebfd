"""What a Python heuristic file sees: the segment, its tensors and its IR (docs/python.md).

The `python` plugin (plugins/python) serves a heuristic file through the plugin C ABI. It puts
this module on sys.path (or, in a copy of python.so, runs the text it carries), so a heuristic
writes `from schedlab_heuristic import Reduction, Unary, ParallelType`. Pure Python and the
standard library only: it must never import the `schedlab` package, whose extension is a second
libschedlab in the host's process. It holds

  - the enums, with nvFuser's spelling first and schedlab's as aliases (ParallelType.block_x is
    ParallelType.TIDx);
  - ScheduleError, what a primitive the host refuses raises (the host's message, unchanged);
  - Segment, TensorView and IterDomain: the heuristic's view of the segment, with nvFuser's
    spelling of the primitives, calling the host through the plugin's bridge (functions over
    opaque handles, one table per copy of python.so);
  - the IR: one frozen dataclass per node kind (their __match_args__ make `match` work), built
    from the tensors' definitions (all their operands, plugin ABI 1.7) in `segment.exprs`;
  - the plugin's side of the boundary (_load and _Heuristic.call): reading a heuristic file and
    turning what it returns or raises into the host's statuses and messages.
"""

from __future__ import annotations

import enum
import os
from dataclasses import dataclass, field
from types import SimpleNamespace

OK, ERR_USER, ERR_INTERNAL, ERR_PLUGIN = 0, -1, -2, -4  # statuses of the C ABI (schedlab/plugin.h)
PRIORITY_NEVER_OFFERED = -1
_INT, _FLOAT, _BOOL, _CHOICE, _STRING = 0, 1, 2, 3, 4  # SchedlabParamKind


class ScheduleError(Exception):
    """A scheduling primitive or query the host refused: its message names the tensor and axis.
    Not caught, it fails the call with the host's status (a user error), the file's line first."""

    def __init__(self, message: str, status: int = ERR_USER):
        super().__init__(message)
        self.status = status


# ---- enums (values of schedlab/plugin.h; the first name of each value is nvFuser's, the
# second schedlab's, an alias of the same member)


def _enum(name: str, doc: str, values) -> type:
    e = enum.IntEnum(name, [(n, v) for v, names in values for n in names], module=__name__)
    e.__doc__ = doc
    return e


DataType = _enum("DataType", "Element types.", [
    (0, ("Bool", "bool")), (1, ("Int32", "i32")), (2, ("Int", "i64")), (3, ("Half", "f16")),
    (4, ("BFloat16", "bf16")), (5, ("Float", "f32")), (6, ("Double", "f64"))])
IterType = _enum("IterType", "What an axis does.", [
    (0, ("iteration", "Iteration")), (1, ("reduction", "Reduction")),
    (2, ("broadcast", "Broadcast"))])
ParallelType = _enum(
    "ParallelType", "Hardware bindings and, as in nvFuser, the loop transforms (100 + "
    "LoopTransform).", [
        (0, ("serial", "Serial")), (1, ("mesh_x", "DIDx")), (2, ("grid_x", "BIDx")),
        (3, ("grid_y", "BIDy")), (4, ("grid_z", "BIDz")), (5, ("block_x", "TIDx")),
        (6, ("block_y", "TIDy")), (7, ("block_z", "TIDz")), (101, ("vectorize", "Vectorize")),
        (102, ("unroll", "Unroll")), (103, ("unswitch", "Unswitch")), (104, ("tma", "Bulk"))])
LoopTransform = _enum("LoopTransform", "How a loop is emitted.", [
    (0, ("serial", "Serial")), (1, ("vectorize", "Vectorize")), (2, ("unroll", "Unroll")),
    (3, ("unswitch", "Unswitch")), (4, ("tma", "Bulk"))])
MemoryType = _enum("MemoryType", "Where a tensor lives.", [
    (0, ("local", "Local")), (1, ("shared", "Shared")), (2, ("global_", "Global"))])
LoadStoreOpType = _enum("LoadStoreOpType", "How cache_after's copy moves data.", [
    (0, ("set", "Set")), (1, ("cp_async", "CpAsync")), (2, ("load_matrix", "LdMatrix")),
    (3, ("tma", "Tma"))])
CacheOp = _enum("CacheOp", "The cache policy of cache_after's load.", [
    (0, ("unspecified", "Unspecified")), (1, ("all_levels", "AllLevels")),
    (2, ("streaming", "Streaming")), (3, ("global_", "Global"))])


# ---- the segment and its tensors


@dataclass(frozen=True)
class IterDomain:
    """One axis of a tensor, as the host describes it now (a snapshot: query again after a
    transform). parallelize() binds the loop axis it came from."""

    id: int  # fusion-unique IterDomain number
    iter_type: IterType
    parallel_type: ParallelType
    loop_transform: LoopTransform
    extent: int  # at the segment's sizes; -1 when unknown
    extent_expr: str  # symbolic: "ceilDiv(K, 8)"
    tv: TensorView | None = None  # the tensor, for a loop axis
    index: int = 0  # its position in the loop domain

    def is_reduction(self) -> bool:
        return self.iter_type == IterType.reduction

    def is_broadcast(self) -> bool:
        return self.iter_type == IterType.broadcast

    def parallelize(self, p: ParallelType | LoopTransform) -> None:
        if self.tv is None:
            raise ScheduleError(f"parallelize: axis {self.index} is a logical axis, not a loop axis")
        self.tv.parallelize(self.index, p)


def _handles(tvs) -> list:
    return [tv._h for tv in tvs]


class TensorView:
    """A tensor of the segment, with its queries and the one-tensor primitives. Transforms return
    the tensor so that calls chain; primitives that make a tensor return it. str(tv), and so
    print(tv), is the host's print of the tensor; repr(tv) is "T3"."""

    def __init__(self, seg: "Segment", handle: int):
        self._seg, self._h = seg, handle

    def __eq__(self, other) -> bool:
        return isinstance(other, TensorView) and other._h == self._h

    def __hash__(self) -> int:
        return hash(self._h)

    def __repr__(self) -> str:
        return f"T{self.number}"

    def __str__(self) -> str:
        return self._call("print_tensor")

    def _call(self, fn: str, *args):
        return getattr(self._seg._host, fn)(self._seg._h, self._h, *args)

    def _wrap(self, handle: int) -> "TensorView":
        return TensorView(self._seg, handle)

    # ---- queries
    def _info(self) -> dict:
        return self._call("tensor_info")

    number = property(lambda self: self._info()["number"])
    name = property(lambda self: self._info()["name"], doc='the user\'s name ("x"), or ""')
    dtype = property(lambda self: DataType(self._info()["dtype"]))
    op_name = property(lambda self: self._info()["op_name"])
    memory_type = property(lambda self: MemoryType(self._info()["memory_type"]))
    is_input = property(lambda self: self._info()["is_input"])
    is_output = property(lambda self: self._info()["is_output"])
    has_reduction = property(lambda self: self._info()["has_reduction"])
    nlogical = property(lambda self: self._info()["nlogical"])
    nloop = property(lambda self: self._info()["nloop"])
    compute_at_pos = property(lambda self: self._info()["compute_at_pos"])

    def _axis(self, domain: int, i: int) -> IterDomain:
        a = self._call("tensor_axis", domain, i)
        n = self.nloop
        index = i + n if i < 0 else i
        return IterDomain(a[0], IterType(a[1]), ParallelType(a[2]), LoopTransform(a[3]), a[4],
                          a[5], self if domain == 1 else None, index)

    def axis(self, i: int) -> IterDomain:
        """Loop axis i (negative counts from the end)."""
        return self._axis(1, i)

    def logical_axis(self, i: int) -> IterDomain:
        return self._axis(0, i)

    def loop(self) -> list:
        return [self._axis(1, i) for i in range(self.nloop)]

    def logical(self) -> list:
        return [self._axis(0, i) for i in range(self.nlogical)]

    def producers(self) -> list:
        return [self._wrap(h) for h in self._call("producers")]

    def consumers(self) -> list:
        return [self._wrap(h) for h in self._call("consumers")]

    def max_inline_position(self) -> int:
        return self._call("max_inline_position")

    # ---- loop transforms
    def split(self, axis: int, factor: int, inner_split: bool = True) -> "TensorView":
        self._call("split", axis, factor, inner_split)
        return self

    def merge(self, axis_o: int, axis_i: int | None = None) -> "TensorView":
        self._call("merge", axis_o, axis_o + 1 if axis_i is None else axis_i)
        return self

    def reorder(self, old2new) -> "TensorView":
        """{old: new} as nvFuser writes it, or (old, new) pairs."""
        pairs = list(old2new.items()) if isinstance(old2new, dict) else list(old2new)
        self._call("reorder", pairs)
        return self

    def parallelize(self, axis: int, p: ParallelType | LoopTransform) -> "TensorView":
        if isinstance(p, LoopTransform):
            self._call("set_loop_transform", axis, int(p))
        elif int(p) >= 100:
            self._call("set_loop_transform", axis, int(p) - 100)
        else:
            self._call("parallelize", axis, int(p))
        return self

    # ---- memory
    def set_memory_type(self, m: MemoryType) -> "TensorView":
        self._call("set_memory_type", int(m))
        return self

    def pad_shared(self, elements: int) -> "TensorView":
        self._call("pad_shared", elements)
        return self

    def swizzle(self, width: int) -> "TensorView":
        self._call("swizzle", width)
        return self

    def cache_after(self, cache_op: CacheOp = CacheOp.unspecified,
                    load_store: LoadStoreOpType | None = None) -> "TensorView":
        if load_store is None:
            return self._wrap(self._call("cache_after", int(cache_op)))
        return self._wrap(self._call("cache_after_path", int(load_store), int(cache_op)))

    def cache_before(self) -> "TensorView":
        return self._wrap(self._call("cache_before"))

    def cache_fork(self) -> "TensorView":
        return self._wrap(self._call("cache_fork"))

    def recompute(self, consumers=()) -> "TensorView":
        return self._wrap(self._call("recompute", _handles(consumers)))

    def rfactor(self, axes) -> "TensorView":
        return self._wrap(self._call("rfactor", list(axes)))

    # ---- inlining
    def inline_at(self, pos: int, best_effort: bool = False) -> "TensorView":
        self._call("inline_at", pos, best_effort)
        return self


class Segment:
    """The segment being scheduled: its tensors, sizes, device and IR, the queries over several
    tensors, propagation and inlining (nvFuser's `schedule.*` functions as methods)."""

    def __init__(self, host, handle: int):
        self._host, self._h = host, handle

    def _wrap(self, handles) -> list:
        return [TensorView(self, h) for h in handles]

    name = property(lambda self: self._host.segment_name(self._h))
    tensors = property(lambda self: self._wrap(self._host.segment_tensors(self._h, 0)))
    inputs = property(lambda self: self._wrap(self._host.segment_tensors(self._h, 1)))
    outputs = property(lambda self: self._wrap(self._host.segment_tensors(self._h, 2)))
    device = property(lambda self: SimpleNamespace(**self._host.device(self._h)),
                      doc="the target device (sm_count, max_threads_per_block, ...)")
    offered_by_segmenter = property(lambda self: self._host.offered_by_segmenter(self._h))

    def size(self, name: str) -> int:
        """The concrete value of a named size ("N")."""
        return self._host.segment_size(self._h, name)

    @property
    def exprs(self) -> list:
        """The segment's IR, one node per tensor defined inside it, in topological order."""
        return build_ir(self)

    # ---- queries
    def reduction_tvs(self) -> list:
        return self._wrap(self._host.reduction_tvs(self._h))

    def find_reference(self) -> TensorView | None:
        h = self._host.find_reference(self._h)
        return TensorView(self, h) if h else None

    def group_inputs_outputs_by_inner_dim(self) -> list:
        return [self._wrap(g) for g in self._host.group_inputs_outputs_by_inner_dim(self._h)]

    def is_dependency_of(self, v: TensorView, of: TensorView) -> bool:
        return self._host.is_dependency_of(self._h, v._h, of._h)

    def vals_between(self, from_, to) -> list:
        return self._wrap(self._host.vals_between(self._h, _handles(from_), _handles(to)))

    # ---- propagation and inlining (empty `selected`: every tensor)
    def transform_like(self, reference: TensorView, selected=()) -> None:
        self._host.propagate_transformation(self._h, reference._h, _handles(selected))

    propagate_transformation = transform_like

    def parallelize_like(self, reference: TensorView, pos: int = -1, selected=(),
                         types=(), transforms=None) -> None:
        t = None if transforms is None else [int(x) for x in transforms]
        self._host.parallelize_all_like(self._h, reference._h, pos, _handles(selected),
                                        [int(x) for x in types], t)

    parallelize_all_like = parallelize_like

    def inline_most(self, selected=()) -> None:
        self._host.inline_most(self._h, _handles(selected))

    def inline_selected_at(self, selected, reference: TensorView, pos: int) -> None:
        self._host.inline_selected_at(self._h, _handles(selected), reference._h, pos)

    def inline_at(self, reference: TensorView, pos: int, best_effort: bool = False) -> None:
        reference.inline_at(pos, best_effort)

    def apply_schedule_script(self, path: str, args: str = "") -> str:
        return self._host.apply_schedule_script(self._h, path, args)

    def print(self) -> str:
        """The host's print of the whole scheduled segment."""
        return self._host.print_segment(self._h)

    def log(self, message: str, level: int = 1) -> None:
        self._host.log(level, message)


# ---- the IR: one node per kind; operands are nodes too (a Tensor leaf for a value defined
# outside the segment, a Scalar for a constant or a size), so patterns nest. Operands are the
# definition's, in order (plugin ABI 1.7): x * x is Binary("mul", out, x, x), the same node
# twice; x * 0.5 is Binary("mul", out, x, Scalar(0.5, DataType.f64)).


@dataclass(frozen=True, eq=False)
class Expr:
    """Base of the nodes; `out` is the tensor the node defines (a Scalar has none)."""

    @property
    def inputs(self) -> list:
        return [getattr(self, f) for f in self.__match_args__ if isinstance(getattr(self, f), Expr)]


@dataclass(frozen=True, eq=False)
class Tensor(Expr):
    """A value the segment reads but does not define (an input of the segment)."""
    out: TensorView


@dataclass(frozen=True)
class Scalar(Expr):
    """A constant (x * 0.5) or a named size (w / K: "K" at the segment's sizes); equal by value."""
    value: float
    dtype: DataType
    text: str = field(default="", compare=False)  # as the fusion prints it: "0.5", "K"


@dataclass(frozen=True, eq=False)
class Unary(Expr):
    op: str  # "exp", "neg", "relu", ...
    out: TensorView
    inp: Expr


@dataclass(frozen=True, eq=False)
class Binary(Expr):
    op: str  # "add", "sub", "mul", "div", "max", ...
    out: TensorView
    lhs: Expr
    rhs: Expr


@dataclass(frozen=True, eq=False)
class Where(Expr):
    out: TensorView
    cond: Expr
    a: Expr
    b: Expr


@dataclass(frozen=True, eq=False)
class Cast(Expr):
    out: TensorView
    inp: Expr
    dtype: DataType  # the output's


@dataclass(frozen=True, eq=False)
class Reduction(Expr):
    op: str  # "sum", "max", "min", ...
    out: TensorView
    inp: Expr
    axes: tuple  # the output's logical axes that are reductions


@dataclass(frozen=True, eq=False)
class Broadcast(Expr):
    out: TensorView
    inp: Expr
    axes: tuple  # the output's axes that are new


@dataclass(frozen=True, eq=False)
class LoadStore(Expr):
    out: TensorView
    inp: Expr
    path: LoadStoreOpType  # the copy's data path
    cache_op: CacheOp  # its load's cache policy


@dataclass(frozen=True, eq=False)
class Permute(Expr):
    out: TensorView
    inp: Expr
    perm: tuple  # new2old: output axis k is input axis perm[k]


def build_ir(seg: Segment) -> list:
    """The nodes of the tensors defined in `seg`, each after its operands' (topological, also
    when a schedule has added caches), otherwise in the host's creation order."""
    nodes, exprs = {}, []

    def node(tv: TensorView) -> Expr:
        if tv._h not in nodes:
            info = tv._info()
            if info["op_kind"] == 0 or info["is_input"]:
                nodes[tv._h] = Tensor(tv)
                return nodes[tv._h]
            ops = [node(tv._wrap(h)) if h else Scalar(v, DataType(dt), text)
                   for _, h, v, text, dt in tv._call("operands")]
            nodes[tv._h] = _node(info["op_kind"], info["op_name"], tv, ops, tv._call("definition"))
            exprs.append(nodes[tv._h])
        return nodes[tv._h]

    for tv in seg.tensors:
        node(tv)
    return exprs


def _node(kind: int, op: str, out: TensorView, ops: list, definition: tuple) -> Expr:
    first, (path, cache_op, axes) = ops[0], definition
    if kind in (1, 2):
        return (Unary, Binary)[kind - 1](op, out, *ops)
    if kind == 3:
        return Where(out, *ops)
    if kind == 4:
        return Cast(out, first, out.dtype)
    if kind == 5:
        axes = tuple(i for i, a in enumerate(out.logical()) if a.is_reduction())
        return Reduction(op, out, first, axes)
    if kind == 6:
        return Broadcast(out, first, tuple(i for i, new in enumerate(axes) if new))
    if kind == 8:
        return Permute(out, first, tuple(axes))
    return LoadStore(out, first, LoadStoreOpType(path), CacheOp(cache_op))


# ---- the plugin's side: loading a heuristic file, calling it, and its errors


def _where_in(exc: BaseException, path: str, lines: list) -> tuple:
    """(line, text, frames): the innermost frame of `exc` in the file `path`, and the last
    frames from the first one in that file on, showing `lines` (the snapshot's text, not a later
    save). Imports traceback only now: every import delays the interpreter's start."""
    import linecache
    import traceback

    linecache.cache[path] = (sum(map(len, lines)), None, lines, path)
    frames = traceback.extract_tb(exc.__traceback__)
    mine = [i for i, f in enumerate(frames) if f.filename == path]
    line = frames[mine[-1]].lineno if mine else 0
    shown = frames[mine[0]:] if mine else frames
    text = "".join(traceback.format_exception_only(type(exc), exc)).strip()
    return line, text, "".join(traceback.format_list(shown[-3:])).rstrip()


class _Failure(Exception):
    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status


def _schema_entry(path: str, name: str, spec) -> tuple:
    """(kind, name, doc, default, min, max, choices) of one PARAMS entry."""
    where = f"{path}: PARAMS['{name}']"
    if not isinstance(spec, dict) or "default" not in spec:
        raise _Failure(ERR_USER, f"{where}: expected a dict with a 'default', found {spec!r}")
    d, doc = spec["default"], str(spec.get("doc", ""))
    if "choices" in spec:
        choices = [str(c) for c in spec["choices"]]
        if d not in choices:
            raise _Failure(ERR_USER, f"{where}: default {d!r} is not one of {choices}")
        return (_CHOICE, name, doc, d, 0, 0, choices)
    if isinstance(d, bool):
        return (_BOOL, name, doc, d, 0, 1, [])
    if isinstance(d, int):
        lo, hi = spec.get("min", min(0, d)), spec.get("max", 2**62)
        if not (isinstance(lo, int) and isinstance(hi, int) and lo <= d <= hi):
            raise _Failure(ERR_USER, f"{where}: expected integers min <= default <= max, "
                                     f"found min={lo!r} default={d!r} max={hi!r}")
        return (_INT, name, doc, d, lo, hi, [])
    if isinstance(d, float):
        lo, hi = float(spec.get("min", min(0.0, d))), float(spec.get("max", 1e300))
        return (_FLOAT, name, doc, d, lo, hi, [])
    if isinstance(d, str):
        return (_STRING, name, doc, d, 0, 0, [])
    raise _Failure(ERR_USER, f"{where}: default {d!r} is none of int, bool, float, str "
                             "(or a 'choices' list)")


class _Heuristic:
    """One loaded heuristic file, bound to one copy of python.so (its `host` bridge)."""

    def __init__(self, path: str, lines: list, ns: dict, host):
        self.path, self.lines, self.ns, self.host = path, lines, ns, host
        stem = os.path.splitext(os.path.basename(path))[0]
        self.name = ns.get("NAME", stem)
        if not isinstance(self.name, str) or not self.name.isidentifier():
            what = "NAME" if "NAME" in ns else "the file's stem (set NAME = \"...\")"
            raise _Failure(ERR_USER, f"{path}: {what} must be an identifier, found {self.name!r}")
        doc = (ns.get("__doc__") or "").strip()
        self.description = doc.splitlines()[0] if doc else f"a Python heuristic ({path})"
        self.priority = ns.get("PRIORITY", PRIORITY_NEVER_OFFERED)
        if not isinstance(self.priority, int) or isinstance(self.priority, bool):
            raise _Failure(ERR_USER, f"{path}: PRIORITY must be an int, found {self.priority!r}")
        params = ns.get("PARAMS", {})
        if not isinstance(params, dict):
            raise _Failure(ERR_USER, f"{path}: PARAMS must be a dict, found {params!r}")
        self.schema = [_schema_entry(path, str(k), v) for k, v in params.items()]
        if not callable(ns.get("schedule")):
            raise _Failure(ERR_USER, f"{path}: a heuristic defines schedule(segment, params); "
                                     "found no function 'schedule'")

    def call(self, where: str, seg_handle: int, values: dict) -> tuple:
        """(status, message, result) of can_schedule, compute_params or schedule."""
        try:
            return (OK, "", getattr(self, "_" + where)(Segment(self.host, seg_handle), values))
        except _Failure as f:
            return (f.status, str(f), None)
        except ScheduleError as e:
            line, _, _ = _where_in(e, self.path, self.lines)
            return (e.status, f"{self.path}:{line}: {e}", None)
        except Exception as e:  # the heuristic's own fault: a plugin error, with its line
            line, text, frames = _where_in(e, self.path, self.lines)
            return (ERR_PLUGIN, f"{self.path}:{line}: in {where}: {text}\n{frames}", None)

    def _can_schedule(self, seg: Segment, values: dict):
        fn = self.ns.get("can_schedule")
        r = True if fn is None else fn(seg)
        if isinstance(r, bool):
            return (r, "")
        if isinstance(r, tuple) and len(r) == 2 and isinstance(r[0], bool):
            return (r[0], str(r[1]))
        raise _Failure(ERR_PLUGIN, f"{self.path}: can_schedule returned {r!r}; expected True, "
                                   "False or (False, reason)")

    def _compute_params(self, seg: Segment, values: dict) -> list:
        """The chosen values as (name, kind, value), checked against PARAMS."""
        fn = self.ns.get("compute_params")
        chosen = {} if fn is None else (fn(seg) or {})
        if not isinstance(chosen, dict):
            raise _Failure(ERR_PLUGIN, f"{self.path}: compute_params returned {chosen!r}; "
                                       "expected a dict of parameter values")
        kinds = {e[1]: e for e in self.schema}
        out = []
        for k, v in chosen.items():
            if k not in kinds:
                raise _Failure(ERR_PLUGIN, f"{self.path}: compute_params chose '{k}', which "
                                           f"PARAMS does not declare (it declares: "
                                           f"{', '.join(kinds) or 'nothing'})")
            kind, choices = kinds[k][0], kinds[k][6]
            ok = {_INT: isinstance(v, int) and not isinstance(v, bool),
                  _BOOL: isinstance(v, bool), _FLOAT: isinstance(v, (int, float)),
                  _STRING: isinstance(v, str), _CHOICE: v in choices}[kind]
            if not ok:
                raise _Failure(ERR_PLUGIN, f"{self.path}: compute_params chose {k}={v!r}, "
                                           f"which is not a value of its kind (default "
                                           f"{kinds[k][3]!r})")
            out.append((k, kind, v))
        return out

    def _schedule(self, seg: Segment, values: dict) -> None:
        self.ns["schedule"](seg, dict(values))


def _load(path: str, source_path: str, host) -> tuple:
    """(status, message, heuristic): runs the heuristic file read from `source_path` (the
    snapshot), naming `path` (the user's file) in its code objects and every error."""
    try:
        with open(source_path, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        return (ERR_USER, f"{path}: cannot read '{source_path}': {e.strerror}", None)
    lines = text.splitlines(True)
    try:
        code = compile(text, path, "exec")
    except SyntaxError as e:
        col = f" (column {e.offset})" if e.offset else ""
        return (ERR_USER, f"{path}:{e.lineno}: SyntaxError: {e.msg}{col}", None)
    ns = {"__name__": "schedlab_heuristic_file", "__file__": path}
    try:
        exec(code, ns)
        return (OK, "", _Heuristic(path, lines, ns, host))
    except _Failure as f:
        return (f.status, str(f), None)
    except Exception as e:
        line, text, _ = _where_in(e, path, lines)
        return (ERR_USER, f"{path}:{line}: in <module>: {text}", None)
