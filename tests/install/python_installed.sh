#!/bin/sh
# The installed `schedlab` Python package (docs/python.md, "Install"): this
# build installed into a private staging prefix and moved (the prefix is
# relocatable), then imported by the pinned interpreter from another
# directory with only the prefix's site-packages on PYTHONPATH (no build
# tree, no SCHEDLAB_* variables). A fusion of two -1 inputs runs with a hand
# schedule (manual_execute) and through the segmenter (execute), whose
# plugins are the prefix's; no file of the build tree is mapped into the
# process. The prefix is this test's own, in a fresh temporary directory
# outside the build tree (removed at exit): the other install tests' prefix
# (install_prefix's fixture) is not touched.
# usage: python_installed.sh CMAKE BUILD_DIR PYTHON PYTHON_DIR
#   PYTHON_DIR: the package's directory in the prefix (lib/python3.11/site-packages)
set -eu
cmake=$1 build=$2 python=$3 pydir=$4
work=$(mktemp -d "${TMPDIR:-/tmp}/schedlab-install-python.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir "$work/elsewhere"
"$cmake" --install "$build" --prefix "$work/staging" > "$work/install.log" ||
  { cat "$work/install.log" >&2; exit 1; }
mv "$work/staging" "$work/prefix"
site="$work/prefix/$pydir"
[ -f "$site/schedlab/__init__.py" ] || { echo "no schedlab package in $site" >&2; exit 1; }
cd "$work/elsewhere"
env -u SCHEDLAB_PLUGIN_PATH -u SCHEDLAB_FUSION_PATH -u SCHEDLAB_DEVICE_PATH -u SCHEDLAB_CLI \
    PYTHONPATH="$site" PYTHONNOUSERSITE=1 \
    "$python" - "$work/prefix" "$build" <<'PY'
import os
import sys

import numpy as np

import schedlab
from schedlab import FusionDefinition, ParallelType, schedule

prefix, build = (os.path.realpath(p) for p in sys.argv[1:3])
assert os.path.realpath(schedlab.__file__).startswith(prefix + "/"), schedlab.__file__

with FusionDefinition() as fd:
    x = fd.define_tensor(shape=[-1, -1])
    y = fd.define_tensor(shape=[-1, -1])
    z = fd.ops.exp(x + y)
    fd.add_output(z)
    z.merge(0, 1)
    z.split(0, 32)
    z.axis(0).parallelize(ParallelType.grid_x)
    z.axis(1).parallelize(ParallelType.block_x)
rng = np.random.default_rng(17)
a, b = (rng.standard_normal((6, 40)).astype(np.float32) for _ in range(2))
want = np.exp(a.astype(np.float64) + b)
(hand,) = fd.manual_execute([a, b])
np.testing.assert_allclose(hand, want, rtol=1e-5)
(auto,) = fd.execute([a, b])
np.testing.assert_allclose(auto, want, rtol=1e-5)
fd.validate([a, b])

# The segmenter's plugins are the prefix's (the search path an unknown
# name's error prints; the registry loads shadow copies of them, so their
# mapped names do not say), and no file of the build tree is mapped.
assert "pointwise" in schedule.find_compatible_schedulers(fd, [a, b])
try:
    schedule.can_schedule(fd, "no_such_plugin", [a, b])
    raise AssertionError("an unknown plugin was accepted")
except schedlab.Error as e:
    searched = str(e).split("searched ", 1)[1]
    assert searched.startswith(prefix + "/lib/schedlab/plugins"), str(e)
    assert build not in str(e), str(e)
with open("/proc/self/maps") as maps:
    mapped = {line.split()[-1] for line in maps if "/" in line}
from_build = sorted(p for p in mapped if os.path.realpath(p).startswith(build + "/"))
assert not from_build, from_build
print("installed schedlab ok:", searched)
PY
