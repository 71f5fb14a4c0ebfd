"""schedlab.testing: a pytest plugin that benchmarks fusions as `schedlab run` does.

Load it with ``pytest -p schedlab.testing`` or a ``pytest_plugins = ["schedlab.testing"]``
line in a conftest.py. A test asks for the ``schedlab_bench`` fixture and calls it once per
point::

    @pytest.mark.parametrize("n", [32, 128])
    @pytest.mark.parametrize("block", [4, 8])
    def test_softmax(schedlab_bench, n, block):
        fd = ...                                  # a FusionDefinition, scheduled by hand
        x = np.random.rand(n, 256).astype(np.float32)
        schedlab_bench(fd, [x], params={"block": block})          # the hand schedule
        schedlab_bench(fd, [x], scheduler="normalization")        # a plugin, its own choice

Each call validates the point against the f64 reference (a wrong kernel fails the test with
the validation message, as ``schedlab.ValidationError``, and is recorded). A test module is
a sweep: when it ends, its valid points are timed as ``schedlab run`` times a sweep's, each
(fusion, sizes) group together, warm-up launches then interleaved rounds (core/sweep/run),
and their records (schema ``schedlab.sweep.v1``) are appended to the results file, which
``schedlab compare`` and ``schedlab report`` read. docs/python.md, "pytest:
schedlab.testing", is the reference.
"""

import functools
import os
import socket

import pytest

from . import _schedlab

DEFAULT_RESULTS = "schedlab-results/pytest.jsonl"


def pytest_addoption(parser):
    group = parser.getgroup("schedlab", "schedlab benchmarks (schedlab.testing)")
    group.addoption(
        "--schedlab-results",
        metavar="PATH",
        default=None,
        help="the JSONL file the schedlab_bench records are appended to (default: "
        + DEFAULT_RESULTS
        + " under pytest's rootdir); `schedlab compare` and `schedlab report` read it",
    )
    group.addoption(
        "--schedlab-fresh",
        action="store_true",
        default=False,
        help="keep the results file's earlier records as PATH.prev (as `schedlab run` "
        "without --resume does) instead of appending to them",
    )
    group.addoption(
        "--schedlab-repetitions",
        type=int,
        default=10,
        metavar="N",
        help="timed rounds per point (a sweep's measure: repetitions; default 10)",
    )
    group.addoption(
        "--schedlab-warmup",
        type=int,
        default=1,
        metavar="N",
        help="untimed launches before the first round (measure: warmup; default 1)",
    )
    group.addoption(
        "--schedlab-min-time",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="seconds each sample runs at least (measure: min_time; default 0: one launch)",
    )
    group.addoption(
        "--schedlab-seed",
        type=int,
        default=None,
        metavar="SEED",
        help="the seed of the round orders (measure: seed; default a fresh one, recorded)",
    )
    group.addoption(
        "--schedlab-time-each",
        action="store_true",
        default=False,
        help="time each point at its call, a group of its own (its record then has its "
        "times), instead of each (fusion, sizes) group of a test module together in "
        "interleaved rounds when the module ends",
    )
    group.addoption(
        "--schedlab-device",
        default="auto",
        choices=["auto", "cpu", "cuda"],
        help="the backend the points run on (default auto: CUDA where a device answers)",
    )
    group.addoption(
        "--schedlab-baseline",
        default="",
        metavar="SCHEDULER",
        help="the scheduler the records name as baseline (default: the first in the file)",
    )


def _results_path(config):
    path = config.getoption("schedlab_results")
    if path is None:
        path = os.path.join(str(config.rootpath), DEFAULT_RESULTS)
    return os.path.abspath(path)


@pytest.fixture(scope="session")
def schedlab_results(pytestconfig):
    """The session's results file, locked for writing (one writer, as `schedlab run`), with
    the session's measurement settings."""
    option = pytestconfig.getoption
    results = _schedlab.ResultsFile(
        _results_path(pytestconfig),
        fresh=option("schedlab_fresh"),
        repetitions=option("schedlab_repetitions"),
        warmup=option("schedlab_warmup"),
        min_time=option("schedlab_min_time"),
        seed=option("schedlab_seed"),
        interleave=not option("schedlab_time_each"),
    )
    yield results
    results.close()


@pytest.fixture(scope="module")
def _schedlab_module(schedlab_results):
    """A test module is a sweep: its valid points are timed when it ends, each (fusion,
    sizes) group together in interleaved rounds, as `schedlab run` times a sweep's."""
    yield
    schedlab_results.flush()


@pytest.fixture
def schedlab_bench(request, schedlab_results, _schedlab_module):
    """``schedlab_bench(fd, inputs=None, scheduler="manual", params=None, label="",
    fusion="", sizes=None, rtol=None, atol=None, sanitize=True)`` -> the record (a dict).

    ``scheduler``: "manual" runs the definition's hand schedule; a plugin's name
    (`schedlab plugins`) schedules an unscheduled copy, ``params`` overriding its own
    choice (as ``exec --set``): a dict, or the HeuristicParams that
    ``schedule.compute_heuristics`` returned (edited). For "manual", ``params`` are what the record's config
    shows (the parameters the test swept). ``label`` names the scheduler in the tables
    (default: ``scheduler``); ``fusion`` the fusion (default: the fusion file's name, else
    the test function's without ``test_``). Without inputs they are generated at ``sizes``.
    The point is validated now (a failure is recorded and raised); its times come when the
    test module ends (the returned record has none yet), or now with --schedlab-time-each.
    The sweep is the test module's name.
    """
    config = request.config
    name = request.node.originalname or request.node.name
    module = request.node.module.__name__.rpartition(".")[2] if request.node.module else "pytest"
    # A partial of the binding, so that no Python frame of this module sits between the
    # test and the C++ call: an exception names the test's own line.
    return functools.partial(
        _schedlab.bench_point,
        results=schedlab_results,
        device=config.getoption("schedlab_device"),
        baseline=config.getoption("schedlab_baseline"),
        sweep=module,
        host=socket.gethostname(),
        default_fusion=name[len("test_"):] if name.startswith("test_") else name,
    )


def pytest_report_header(config):
    return "schedlab: records to " + _results_path(config)
