// The python plugin's errors: what a heuristic's mistakes become at the
// host, each naming the heuristic file and line.
#include <gtest/gtest.h>

#include <string>

#include "py_test_util.h"

namespace schedlab::plugin {
namespace {

using py_testing::Heuristic;
using py_testing::TempFile;

/// The what() of the error scheduling softmax with `h` throws, as `E`.
template <typename E>
std::string schedule_error(const Heuristic& h) {
  return py_testing::schedule_error<E>(h.plugin(), "softmax", {{"N", 3}, {"K", 5}});
}

TEST(PythonErrors, AnExceptionIsAPluginErrorNamingFileAndLine) {
  Heuristic h("raises.py", R"(
def helper(params):
    return params["nope"]

def schedule(segment, params):
    helper(params)
)");
  std::string what = schedule_error<PluginFault>(h);
  EXPECT_NE(what.find("failed with SCHEDLAB_ERR_PLUGIN (-4): " + h.path() +
                      ":3: in schedule: KeyError: 'nope'"),
            std::string::npos)
      << what;
  // The traceback's last lines follow.
  EXPECT_NE(what.find("line 6, in schedule\n    helper(params)"), std::string::npos) << what;
}

TEST(PythonErrors, InCanScheduleAndComputeParamsToo) {
  Heuristic h("both.py", R"(
def can_schedule(segment):
    return 1 / 0
def compute_params(segment):
    return {"unknown": 1}
def schedule(segment, params):
    pass
)");
  auto s = sp_testing::segment_of("softmax", {});
  std::string what;
  try {
    h.plugin().can_schedule(s.seg, {});
  } catch (const PluginFault& e) {
    what = e.what();
  }
  EXPECT_NE(what.find(h.path() + ":3: in can_schedule: ZeroDivisionError: division by zero"),
            std::string::npos)
      << what;
  try {
    h.plugin().compute_params(s.seg);
  } catch (const PluginFault& e) {
    what = e.what();
  }
  EXPECT_NE(what.find(h.path() + ": compute_params chose 'unknown', which PARAMS does not "
                                 "declare (it declares: nothing)"),
            std::string::npos)
      << what;
}

TEST(PythonErrors, ABadAxisIsTheHostsUserErrorWithTheLine) {
  Heuristic h("bad_axis.py", R"(
def schedule(segment, params):
    y = segment.outputs[0]
    y.split(7, 2)
)");
  std::string what = schedule_error<UserError>(h);
  EXPECT_NE(what.find(h.path() + ":4: split: "), std::string::npos) << what;
  EXPECT_NE(what.find("axis 7"), std::string::npos) << what;
}

TEST(PythonErrors, ASyntaxErrorFailsTheBindAsAUserError) {
  TempFile file("broken.py", "def schedule(segment, params):\n    y = (\n");
  auto b = py_testing::bind_copy(file.dir(), file.path(), file.path());
  EXPECT_EQ(b.status, SCHEDLAB_ERR_USER);
  EXPECT_EQ(b.error.rfind(file.path() + ":2: SyntaxError: '(' was never closed", 0), 0u) << b.error;
}

TEST(PythonErrors, ErrorsNameTheDisplayedFileWhileTheSnapshotIsRead) {
  TempFile snapshot("snap.py", "x = 1\nraise ValueError('at load')\n");
  auto b = py_testing::bind_copy(snapshot.dir(), "/home/u/heur.py", snapshot.path());
  EXPECT_EQ(b.status, SCHEDLAB_ERR_USER);
  EXPECT_EQ(b.error, "/home/u/heur.py:2: in <module>: ValueError: at load");
}

TEST(PythonErrors, WhatTheFileDeclaresIsChecked) {
  struct Case {
    const char* text;
    const char* expected;  // after "<file>: "
  };
  for (const Case& c : {
           Case{"PARAMS = {'b': {'default': 8, 'min': 16}}\n",
                "PARAMS['b']: expected integers min <= default <= max, found min=16 default=8 "
                "max=4611686018427387904"},
           Case{"PARAMS = {'o': {'default': 'x', 'choices': ['a', 'b']}}\n",
                "PARAMS['o']: default 'x' is not one of ['a', 'b']"},
           Case{"PARAMS = {'b': 8}\n", "PARAMS['b']: expected a dict with a 'default', found 8"},
           Case{"NAME = 'not a name'\n", "NAME must be an identifier, found 'not a name'"},
           Case{"PRIORITY = 'high'\n", "PRIORITY must be an int, found 'high'"},
           Case{"def can_schedule(s):\n    return True\n",
                "a heuristic defines schedule(segment, params); found no function 'schedule'"},
       }) {
    std::string text = c.text;
    if (text.find("def can_schedule") == std::string::npos)
      text += "def schedule(segment, params):\n    pass\n";
    TempFile file("declared.py", text);
    auto b = py_testing::bind_copy(file.dir(), file.path(), file.path());
    EXPECT_EQ(b.status, SCHEDLAB_ERR_USER);
    EXPECT_EQ(b.error, file.path() + ": " + c.expected);
  }
}

TEST(PythonErrors, ACaughtScheduleErrorLetsTheHeuristicGoOn) {
  Heuristic h("recovers.py", R"(
from schedlab_heuristic import ScheduleError
def schedule(segment, params):
    y = segment.outputs[0]
    try:
        y.merge(0, 5)
    except ScheduleError as e:
        raise RuntimeError(f"caught ({e.status}): {e}")
)");
  std::string what = schedule_error<PluginFault>(h);
  EXPECT_NE(what.find(":8: in schedule: RuntimeError: caught (-1): merge"), std::string::npos)
      << what;
}

}  // namespace
}  // namespace schedlab::plugin
