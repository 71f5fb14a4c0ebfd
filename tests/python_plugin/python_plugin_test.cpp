// The python plugin serving real heuristic files: what the host sees of
// them (name, description, priority, schema), the IR and `match`, the
// primitives reaching the host, and the examples validated on the CPU
// backend against the reference.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "py_test_util.h"
#include "schedlab/plugin/registry.h"

namespace schedlab::plugin {
namespace {

using py_testing::Heuristic;
using py_testing::reason_on;
using py_testing::schedule_and_run;
using py_testing::schedule_error;
using py_testing::TempFile;

const std::string kExamples = PY_EXAMPLE_DIR;

TEST(PythonPlugin, UnboundItIsThePluginPython) {
  auto p = load_plugin(std::string(BUILTIN_PLUGIN_DIR) + "/python.so");
  EXPECT_EQ(p->name(), "python");
  EXPECT_EQ(p->priority(), SCHEDLAB_PRIORITY_NEVER_OFFERED);
  ASSERT_EQ(p->schema().size(), 1u);
  EXPECT_EQ(p->schema()[0].name, "file");
  EXPECT_EQ(p->schema()[0].kind, ParamKind::String);
  EXPECT_EQ(reason_on(*p, "softmax"),
            "the python plugin serves a heuristic file: write `scheduler: {plugin: python, file: "
            "F.py}` or pass --plugin F.py");
  auto s = sp_testing::segment_of("softmax", {});
  EXPECT_NE(sp_testing::user_error_what_of([&] {
              p->schedule(s.seg, p->defaults());
            }).find("python: the python plugin serves a heuristic file"),
            std::string::npos);
}

// Loading python.so loads libpython, which must stay uninitialized (every
// `schedlab run` loads the built-ins). In a fresh process (a re-executed
// death test), since this test binary binds heuristics elsewhere.
TEST(PythonPlugin, UnboundItStartsNoInterpreter) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        auto p = load_plugin(std::string(BUILTIN_PLUGIN_DIR) + "/python.so");
        reason_on(*p, "softmax");
        void* lib = dlopen("libpython3.11.so.1.0", RTLD_NOW | RTLD_NOLOAD);
        auto initialized =
            lib ? reinterpret_cast<int (*)()>(dlsym(lib, "Py_IsInitialized")) : nullptr;
        std::fprintf(stderr, "loaded %d initialized %d\n", lib != nullptr,
                     initialized ? initialized() : -1);
        std::exit(0);
      },
      ::testing::ExitedWithCode(0), "loaded 1 initialized 0");
}

TEST(PythonPlugin, TheFileDeclaresNameDescriptionPriorityAndSchema) {
  Heuristic h("declares.py", R"("""Blocks of rows, for the test."""
NAME = "declared"
PRIORITY = 7
PARAMS = {
    "block": {"default": 128, "min": 32, "max": 1024, "doc": "threads per block"},
    "vectorize": {"default": True},
    "order": {"default": "inner", "choices": ["inner", "outer"]},
    "label": {"default": "plain", "doc": "a label"},
    "ratio": {"default": 0.5, "min": 0.0, "max": 1.0},
}
def schedule(segment, params):
    pass
)");
  const Plugin& p = h.plugin();
  EXPECT_EQ(p.name(), "declared");
  EXPECT_EQ(p.description(), "Blocks of rows, for the test.");
  EXPECT_EQ(p.priority(), 7);
  ASSERT_EQ(p.schema().size(), 5u);
  EXPECT_EQ(p.schema()[0].domain_str(), "int in [32, 1024]");
  EXPECT_EQ(p.schema()[0].doc, "threads per block");
  EXPECT_EQ(p.schema()[1].kind, ParamKind::Bool);
  EXPECT_EQ(p.schema()[2].kind, ParamKind::Choice);
  EXPECT_EQ(p.schema()[3].kind, ParamKind::String);
  EXPECT_EQ(p.schema()[4].kind, ParamKind::Float);
  EXPECT_EQ(p.format(p.defaults()),
            "block=128, vectorize=true, order=inner, label=\"plain\", ratio=0.5");
}

TEST(PythonPlugin, WithoutNameTheStemWithoutDocstringTheFile) {
  Heuristic h("my_heuristic.py", "def schedule(segment, params):\n    pass\n");
  EXPECT_EQ(h.plugin().name(), "my_heuristic");
  EXPECT_EQ(h.plugin().description(), "a Python heuristic (" + h.path() + ")");
  EXPECT_EQ(h.plugin().priority(), SCHEDLAB_PRIORITY_NEVER_OFFERED);
  EXPECT_TRUE(h.plugin().schema().empty());
}

TEST(PythonPlugin, ComputeParamsAndTheValuesScheduleReads) {
  Heuristic h("choose.py", R"(
PARAMS = {
    "block": {"default": 128, "min": 32, "max": 1024},
    "vectorize": {"default": True},
    "order": {"default": "inner", "choices": ["inner", "outer"]},
    "label": {"default": ""},
}
def compute_params(segment):
    return {"block": 32 * segment.size("K"), "order": "outer", "label": segment.name}
def can_schedule(segment):
    return True
def schedule(segment, params):
    raise RuntimeError(repr(sorted(params.items())))
)");
  const Plugin& p = h.plugin();
  auto s = sp_testing::segment_of("softmax", {{"N", 3}, {"K", 5}});
  ParamValues chosen = p.compute_params(s.seg);
  EXPECT_EQ(p.format(chosen), "block=160, vectorize=true, order=outer, label=\"softmax\"");
  std::string what;
  try {
    p.schedule(s.seg, chosen);
  } catch (const PluginFault& e) {
    what = e.what();
  }
  EXPECT_NE(what.find("RuntimeError: [('block', 160), ('label', 'softmax'), ('order', 'outer'), "
                      "('vectorize', True)]"),
            std::string::npos)
      << what;
}

TEST(PythonPlugin, CanScheduleTrueFalseOrFalseWithAReason) {
  Heuristic h("verdicts.py", R"(
def can_schedule(segment):
    n = segment.size("N")
    return {1: True, 2: False}.get(n, (False, f"N={n} is neither 1 nor 2"))
def schedule(segment, params):
    pass
)");
  EXPECT_EQ(reason_on(h.plugin(), "softmax", {{"N", 1}, {"K", 4}}), "(accepted)");
  EXPECT_EQ(reason_on(h.plugin(), "softmax", {{"N", 2}, {"K", 4}}), "");
  EXPECT_EQ(reason_on(h.plugin(), "softmax", {{"N", 3}, {"K", 4}}), "N=3 is neither 1 nor 2");
}

TEST(PythonIr, OneNodePerExpressionNestedOperands) {
  Heuristic h("ir.py", R"(
def can_schedule(segment):
    return (False, "; ".join(repr(e) for e in segment.exprs[-2:]))
def schedule(segment, params):
    pass
)");
  EXPECT_EQ(reason_on(h.plugin(), "row_sum"),
            "Reduction(op='sum', out=T1, inp=Tensor(out=T0), axes=(1,))");
  std::string softmax = reason_on(h.plugin(), "softmax");
  EXPECT_EQ(softmax.substr(0, softmax.find("; ")),
            "Broadcast(out=T6, inp=Reduction(op='sum', out=T5, inp=Unary(op='exp', out=T4, "
            "inp=Binary(op='sub', out=T3, lhs=Tensor(out=T0), rhs=Broadcast(out=T2, "
            "inp=Reduction(op='max', out=T1, inp=Tensor(out=T0), axes=(1,)), axes=(1,)))), "
            "axes=(1,)), axes=(1,))");
}

TEST(PythonIr, MatchRulesOnTheNodes) {
  Heuristic h("rules.py", R"(
from schedlab_heuristic import Binary, Broadcast, Reduction, Tensor, Unary
def can_schedule(segment):
    found = []
    for e in segment.exprs:
        match e:
            case Reduction("sum", out, Unary("exp", _, x), axes):
                found.append(f"sum of exp at {out!r} over {axes} reading {x.out!r}")
            case Binary("div", y, Unary("exp"), Broadcast(_, Reduction(op="sum"))):
                found.append(f"softmax output {y!r}")
            case Reduction(op, out, Tensor(x), _):
                found.append(f"{op} of input {x.name}")
    return (False, "; ".join(found))
def schedule(segment, params):
    pass
)");
  EXPECT_EQ(reason_on(h.plugin(), "softmax"),
            "max of input x; sum of exp at T5 over (1,) reading T3; softmax output T7");
}

TEST(PythonIr, TensorQueriesAndTheSegment) {
  Heuristic h("queries.py", R"(
from schedlab_heuristic import DataType, IterType, MemoryType
def can_schedule(segment):
    x, y = segment.inputs[0], segment.outputs[0]
    r = segment.reduction_tvs()
    facts = [segment.name, str(segment.size("K")), repr(segment.tensors),
             x.name, str(x.dtype == DataType.Float), str(x.is_input), str(y.is_output),
             str(y.memory_type == MemoryType.global_), str(x.axis(1).extent),
             x.axis(-1).extent_expr, repr(r), str(r[0].axis(1).iter_type == IterType.reduction),
             repr(y.producers()), repr(x.consumers()), str(segment.is_dependency_of(x, y)),
             repr(segment.find_reference()), str(segment.device.sm_count > 0),
             str(len(segment.group_inputs_outputs_by_inner_dim())),
             repr(segment.vals_between([x], [y]))]
    return (False, " | ".join(facts))
def schedule(segment, params):
    pass
)");
  EXPECT_EQ(reason_on(h.plugin(), "softmax", {{"N", 3}, {"K", 5}}),
            "softmax | 5 | [T0, T1, T2, T3, T4, T5, T6, T7] | x | True | True | True | True | 5 | "
            "K | [T1, T5] | True | [T4, T6] | [T1, T3] | True | T1 | True | 1 | "
            "[T0, T1, T2, T3, T4, T5, T6, T7]");
}

// Every primitive, through the host: the heuristic's prints of the
// scheduled tensors show each took effect.
TEST(PythonPrimitives, EachReachesTheHost) {
  Heuristic h("primitives.py", R"(
from schedlab_heuristic import CacheOp, LoopTransform, MemoryType, ParallelType, ScheduleError
def schedule(segment, params):
    x, y = segment.inputs[0], segment.outputs[0]
    xc = x.cache_after(CacheOp.streaming)
    yc = y.cache_before()
    y.split(1, 4).merge(0, 1).reorder({0: 1, 1: 0}).reorder([(0, 1)])
    y.split(1, 2, inner_split=False)
    y.axis(0).parallelize(ParallelType.grid_x)
    y.parallelize(2, ParallelType.block_x)
    y.axis(1).parallelize(ParallelType.unroll)
    segment.transform_like(y)
    segment.parallelize_like(y)
    xc.set_memory_type(MemoryType.shared)
    xc.pad_shared(1)
    try:
        xc.swizzle(3)
    except ScheduleError as e:
        swizzle_error = str(e)
    segment.inline_most()
    segment.inline_selected_at([yc], y, 1)
    y.inline_at(0)
    raise RuntimeError(f"loop {[str(a.parallel_type.name) for a in y.loop()]}; "
                       f"shared {xc.memory_type.name}; swizzle error: {swizzle_error}; "
                       f"max inline {yc.max_inline_position()}; "
                       f"print has T: {'T' in str(y) and 'T' in segment.print()}")
)");
  std::string what = schedule_error<PluginFault>(h.plugin(), "add", {{"N", 8}, {"K", 16}});
  EXPECT_NE(what.find("RuntimeError: loop ['grid_x', 'serial', 'block_x']"), std::string::npos)
      << what;
  EXPECT_NE(what.find("shared shared; swizzle error: swizzle"), std::string::npos) << what;
  EXPECT_NE(what.find("max inline "), std::string::npos) << what;
  EXPECT_NE(what.find("print has T: True"), std::string::npos) << what;
}

TEST(PythonPrimitives, RfactorCacheForkAndRecompute) {
  Heuristic h("rfactor.py", R"(
from schedlab_heuristic import ScheduleError
def schedule(segment, params):
    r = segment.reduction_tvs()[0]
    r.split(1, 4)
    partial = r.rfactor([1])
    copy = segment.tensors[3].recompute()
    try:
        segment.outputs[0].cache_fork()
    except ScheduleError as e:
        fork = str(e)
    raise RuntimeError(f"rfactor {partial!r} of {r!r} {[a.iter_type.name for a in partial.loop()]}; "
                       f"recompute {copy!r} of {segment.tensors[3]!r}; {fork}")
)");
  std::string what = schedule_error<PluginFault>(h.plugin(), "softmax", {{"N", 4}, {"K", 16}});
  EXPECT_NE(what.find("RuntimeError: rfactor T8 of T1 ['iteration', 'reduction', 'iteration']; "
                      "recompute T9 of T3; cache_fork: fusion output T7 (y) has no uses"),
            std::string::npos)
      << what;
  EXPECT_NE(what.find("cache_fork: fusion output"), std::string::npos) << what;
}

TEST(PythonExamples, PointwiseValidatesOnTheCpuBackend) {
  auto h = Heuristic::of_file(kExamples + "/pointwise.py");
  ASSERT_EQ(h->bind().status, SCHEDLAB_OK) << h->bind().error;
  EXPECT_EQ(h->plugin().name(), "py_pointwise");
  EXPECT_EQ(schedule_and_run(h->plugin(), "add", {{"N", 37}, {"K", 29}}), "");
  EXPECT_EQ(schedule_and_run(h->plugin(), "pointwise_add_mul", {{"N", 33}, {"K", 65}}), "");
  EXPECT_EQ(schedule_and_run(h->plugin(), "gelu", {}), "");
  EXPECT_EQ(reason_on(h->plugin(), "softmax"),
            "T1 is a max reduction: py_pointwise schedules none");
}

TEST(PythonExamples, SoftmaxRulesValidateOnTheCpuBackend) {
  auto h = Heuristic::of_file(kExamples + "/softmax.py");
  ASSERT_EQ(h->bind().status, SCHEDLAB_OK) << h->bind().error;
  EXPECT_EQ(h->plugin().name(), "py_softmax");
  EXPECT_EQ(schedule_and_run(h->plugin(), "softmax", {{"N", 7}, {"K", 100}}), "");
  EXPECT_EQ(schedule_and_run(h->plugin(), "softmax", {{"N", 3}, {"K", 3000}}), "");
  EXPECT_EQ(schedule_and_run(h->plugin(), "log_softmax", {{"N", 5}, {"K", 61}}), "");
  EXPECT_EQ(schedule_and_run(h->plugin(), "rmsnorm", {}), "");
  auto s = sp_testing::segment_of("softmax", {{"N", 3}, {"K", 3000}});
  EXPECT_EQ(h->plugin().format(h->plugin().compute_params(s.seg)), "persist=16");
  EXPECT_EQ(reason_on(h->plugin(), "add"), "no reduction: py_softmax schedules row normalizations");
}

// Two heuristic files at once, each in its own copy, each serving its own code.
TEST(PythonPlugin, TwoFilesAtOnceEachServesItsOwn) {
  Heuristic a("first.py",
              "def can_schedule(s):\n    return (False, 'first')\n"
              "def schedule(s, p):\n    pass\n");
  Heuristic b("second.py",
              "def can_schedule(s):\n    return (False, 'second')\n"
              "def schedule(s, p):\n    pass\n");
  EXPECT_EQ(a.plugin().name(), "first");
  EXPECT_EQ(b.plugin().name(), "second");
  EXPECT_EQ(reason_on(a.plugin(), "add"), "first");
  EXPECT_EQ(reason_on(b.plugin(), "add"), "second");
  EXPECT_EQ(reason_on(a.plugin(), "add"), "first");
}

// The host may call a plugin from several threads: each call takes the GIL.
TEST(PythonPlugin, CallsFromSeveralThreads) {
  Heuristic h("threads.py", R"(
def can_schedule(segment):
    return (False, f"{segment.name} N={segment.size('N')}")
def schedule(segment, params):
    pass
)");
  std::vector<std::string> got(4);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 20; ++i)
        got[t] = reason_on(h.plugin(), "softmax", {{"N", t + 1}, {"K", 8}});
    });
  for (std::thread& t : threads) t.join();
  for (int t = 0; t < 4; ++t) EXPECT_EQ(got[t], "softmax N=" + std::to_string(t + 1));
}

// An isolated worker is a fork of the process that bound the heuristic: the
// child takes the GIL its parent released and calls the same heuristic.
TEST(PythonPlugin, AForkedChildCallsTheHeuristic) {
  Heuristic h("forked.py", R"(
import os
def can_schedule(segment):
    return (False, f"pid {os.getpid()} K={segment.size('K')}")
def schedule(segment, params):
    pass
)");
  std::string parent = reason_on(h.plugin(), "softmax", {{"N", 2}, {"K", 9}});
  EXPECT_EQ(parent, "pid " + std::to_string(getpid()) + " K=9");
  GTEST_FLAG_SET(death_test_style, "fast");  // fork() alone, as sweep/run's isolate does
  EXPECT_EXIT(
      {
        std::string child = reason_on(h.plugin(), "softmax", {{"N", 2}, {"K", 11}});
        std::fprintf(stderr, "child: %s\n", child.c_str());
        std::exit(child == "pid " + std::to_string(getpid()) + " K=11" ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "child: pid [0-9]+ K=11");
}

// The host forks while another thread runs Python (holds the GIL): the
// child, which has no such thread, must still get the GIL for its calls.
TEST(PythonPlugin, AForkWhileAnotherThreadRunsPython) {
  int started[2];
  ASSERT_EQ(pipe(started), 0);
  TempFile stop("stop", "");
  std::filesystem::remove(stop.path());
  Heuristic h("busy.py",
              "import os\n"
              "def can_schedule(segment):\n"
              "    if segment.size('N') == 1:\n"
              "        os.write(" +
                  std::to_string(started[1]) +
                  ", b'x')\n"
                  "        n = 0\n"  // bytecode, holding the GIL: os.stat releases it
                  "        while n % 100000 or not os.path.exists('" +
                  stop.path() +
                  "'):\n"
                  "            n += 1\n"
                  "    return (False, f\"N={segment.size('N')}\")\n"
                  "def schedule(segment, params):\n"
                  "    pass\n");
  std::string busy;
  std::thread runner([&] { busy = reason_on(h.plugin(), "softmax", {{"N", 1}, {"K", 4}}); });
  char c = 0;
  ASSERT_EQ(read(started[0], &c, 1), 1);  // the runner is inside the Python loop
  GTEST_FLAG_SET(death_test_style, "fast");
  EXPECT_EXIT(
      {
        alarm(60);  // a child that inherited a held GIL hangs: let it die instead
        std::string child = reason_on(h.plugin(), "softmax", {{"N", 2}, {"K", 4}});
        std::fprintf(stderr, "child: %s\n", child.c_str());
        std::exit(child == "N=2" ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "child: N=2");
  std::ofstream(stop.path()) << "stop";
  runner.join();
  EXPECT_EQ(busy, "N=1");
  close(started[0]);
  close(started[1]);
}

// Through the registry, as exec, run and watch load a .py: a snapshot and a
// copy of python.so in the registry's shadow directory, the file's name in
// errors; the copy has no schedlab_heuristic.py beside it.
TEST(PythonRegistry, AddAPyFileAndScheduleThroughIt) {
  Registry registry({BUILTIN_PLUGIN_DIR});
  auto p = registry.add(kExamples + "/softmax.py");
  EXPECT_EQ(p->name(), "py_softmax");
  EXPECT_EQ(p->path(), kExamples + "/softmax.py");
  EXPECT_EQ(registry.get("py_softmax"), p);
  EXPECT_EQ(schedule_and_run(*p, "softmax", {{"N", 5}, {"K", 700}}), "");
  auto q = registry.add(kExamples + "/pointwise.py");
  EXPECT_EQ(schedule_and_run(*q, "add", {{"N", 6}, {"K", 50}}), "");
  EXPECT_EQ(schedule_and_run(*p, "softmax", {{"N", 2}, {"K", 64}}), "");
}

// python.so bound where it was built imports the module beside it. In a
// process of its own (a re-executed death test): the first bind of a process
// decides which schedlab_heuristic every copy shares.
TEST(PythonPlugin, TheModuleBesidePythonSoIsTheOneImported) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  TempFile file("where.py", R"(
import schedlab_heuristic
def can_schedule(segment):
    return (False, schedlab_heuristic.__file__)
def schedule(segment, params):
    pass
)");
  std::string built = std::string(BUILTIN_PLUGIN_DIR) + "/python.so";
  auto imported = [&] {
    void* lib = dlopen(built.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) return std::string(dlerror());
    using BindFn = int32_t (*)(const char*, const char*, char*, uint32_t);
    auto bind = reinterpret_cast<BindFn>(dlsym(lib, "schedlab_python_bind"));
    char error[1024] = {0};
    if (bind(file.path().c_str(), file.path().c_str(), error, sizeof error) != SCHEDLAB_OK)
      return std::string(error);
    return reason_on(*load_plugin(built), "add");
  };
  EXPECT_EXIT(
      {
        std::string where = imported();
        std::fprintf(stderr, "imported %s\n", where.c_str());
        std::exit(where == std::string(BUILTIN_PLUGIN_DIR) + "/schedlab_heuristic.py" ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "imported .*/plugins/schedlab_heuristic.py");
}

}  // namespace
}  // namespace schedlab::plugin
