"""schedlab.testing, the pytest plugin: python/examples/test_softmax_sweep.py run by pytest
in a subprocess writes records that `schedlab report` and `schedlab compare` read; a point
that fails (a schedule that does not lower, outputs off the reference) fails its test with
the message and is recorded with its status; the results file is locked as `run` locks it."""

import importlib.util
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import schedlab
from schedlab import _schedlab

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLE = os.path.join(HERE, "..", "examples", "test_softmax_sweep.py")
PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(schedlab.__file__)))


def cli():
    path = os.environ.get("SCHEDLAB_CLI")
    if not path:
        pytest.skip("SCHEDLAB_CLI is not set (CTest sets it to the built schedlab)")
    return path


def pytest_run(*args, cwd):
    """pytest in a subprocess with the pinned interpreter and the built package; few rounds."""
    env = dict(os.environ, PYTHONPATH=PACKAGE_DIR)
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
         "--schedlab-repetitions", "3", *args],
        cwd=cwd, env=env, capture_output=True, text=True, timeout=600,
    )


def read(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def test_the_example_writes_records_that_report_and_compare_read(tmp_path):
    base, new = tmp_path / "base.jsonl", tmp_path / "new.jsonl"
    run = pytest_run("-p", "schedlab.testing", "--schedlab-results", str(base), EXAMPLE,
                     cwd=tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "16 passed" in run.stdout
    records = read(base)
    assert len(records) == 16
    assert {r["status"] for r in records} == {"ok"}
    assert all(len(r["times_us"]) == 3 for r in records)
    assert {r["sweep"] for r in records} == {"test_softmax_sweep"}
    assert {r["fusion"] for r in records} == {"softmax_f32", "softmax_f16"}
    assert {r["size_label"] for r in records} == {"N=4,K=96", "N=8,K=256"}
    assert {r["scheduler"] for r in records} == {"manual", "normalization"}
    hand = [r for r in records if r["scheduler"] == "manual"]
    assert sorted({r["config"]["block"] for r in hand}) == ["4", "8"]
    assert all(r["plugin"]["name"] == "manual" and r["kernel_hash"] for r in hand)
    plugin = [r for r in records if r["scheduler"] == "normalization"]
    assert sorted({r["config"]["vector"] for r in plugin}) == ["1", "2"]
    assert all(r["max_abs_error"] is not None and r["measurement"]["launch"] for r in records)
    # Timed as run times a sweep: each (fusion, sizes) group together, in rounds of one seed.
    groups = {}
    for r in records:
        groups.setdefault((r["fusion"], r["size_label"]), set()).add(r["measurement"]["group"])
    assert len(groups) == 4 and all(len(g) == 1 for g in groups.values())
    assert len({r["measurement"]["group"] for r in records}) == 4
    assert len({r["measurement"]["seed"] for r in records}) == 1

    table = subprocess.run([cli(), "report", str(base)], capture_output=True, text=True)
    assert table.returncode == 0, table.stderr
    for name in ("softmax_f32", "softmax_f16", "N=4,K=96", "N=8,K=256", "manual",
                 "normalization", "block="):
        assert name in table.stdout, table.stdout

    # A second run of some of the points: compare pairs them with the first run's by
    # (fusion, sizes, scheduler, config) and names what only the base has.
    run = pytest_run("-p", "schedlab.testing", "--schedlab-results", str(new),
                     "-k", "by_hand and f32", EXAMPLE, cwd=tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    assert len(read(new)) == 4
    out = subprocess.run([cli(), "compare", str(base), str(new)], capture_output=True,
                         text=True)
    assert out.returncode in (0, 1), out.stderr  # 1: a regression, which timing may show
    for name in ("softmax_f32/N=4,K=96/manual/block=4", "softmax_f32/N=8,K=256/manual/block=8"):
        line = next(l for l in out.stdout.splitlines() if l.startswith(name))
        assert "only in" not in line, line
    assert "softmax_f16/N=4,K=96/manual/block=4" in out.stdout
    assert "only in base" in out.stdout


FAILING_TESTS = '''
import numpy as np
from schedlab import DataType, FusionDefinition, ParallelType, schedule


def softmax():
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=["N", "K"], dtype=DataType.Float)
        m = fd.ops.max(x, dims=[1], keepdim=True)
        e = fd.ops.exp(x - m)
        fd.add_output(e / fd.ops.sum(e, dims=[1], keepdim=True))
    return fd


def test_misscheduled(schedlab_bench):
    # The producer is bound differently from its consumer and not inlined: a thread
    # reads what another computed (lowering rule 2).
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[-1])
        t = fd.ops.exp(x)
        y = fd.ops.set(t)
        fd.add_output(y)
        y.split(0, 32)
        y.axis(1).parallelize(ParallelType.block_x)
        t.split(0, 32)
        t.axis(0).parallelize(ParallelType.block_x)
    schedlab_bench(fd, [np.ones(64, dtype=np.float32)], fusion="exp_copy")


def test_off_the_reference(schedlab_bench):
    x = np.random.default_rng(1).standard_normal((4, 64)).astype(np.float32)
    # f32 against the f64 reference with no tolerance at all
    schedlab_bench(softmax(), [x], scheduler="normalization", rtol=0.0, atol=0.0)


def test_valid(schedlab_bench):
    x = np.random.default_rng(1).standard_normal((4, 64)).astype(np.float32)
    record = schedlab_bench(softmax(), [x], scheduler="normalization", label="heuristic")
    assert record["status"] == "ok"
'''


def test_failed_points_fail_their_tests_and_are_recorded(tmp_path):
    # Loaded by a conftest's pytest_plugins line this time (no -p).
    (tmp_path / "conftest.py").write_text('pytest_plugins = ["schedlab.testing"]\n')
    (tmp_path / "test_points.py").write_text(FAILING_TESTS)
    results = tmp_path / "out" / "r.jsonl"
    run = pytest_run("--schedlab-results", str(results), "test_points.py", cwd=tmp_path)
    text = run.stdout + run.stderr
    assert run.returncode == 1, text
    assert "2 failed, 1 passed" in text
    # The exceptions name the test's own line, the scheduler, fusion, sizes and status.
    test_file = str(tmp_path / "test_points.py")
    assert f"ScheduleError: {test_file}:27: error: manual on exp_copy S0=64: compile_error: " \
        "lowering: T2 reads elements of Local T1 computed by other threads" in text
    assert f"ValidationError: {test_file}:33: error: normalization on off_the_reference " \
        "N=4,K=64: wrong_result: output 0 (T7): 256 mismatches" in text

    # One record per call, failures too; the fusion defaults to the test's name.
    records = {r["fusion"] + "/" + r["scheduler"]: r for r in read(results)}
    assert set(records) == {"exp_copy/manual", "off_the_reference/normalization",
                            "valid/heuristic"}
    bad = records["exp_copy/manual"]
    assert bad["status"] == "compile_error" and "lowering: T2 reads" in bad["error"]
    assert bad["times_us"] == []
    off = records["off_the_reference/normalization"]
    assert off["status"] == "wrong_result" and "256 mismatches" in off["error"]
    assert off["tolerance"] == {"mode": "user", "rtol": 0.0, "atol": 0.0}
    assert off["times_us"] == [] and off["max_abs_error"] > 0
    ok = records["valid/heuristic"]
    assert ok["status"] == "ok" and len(ok["times_us"]) == 3
    assert ok["tolerance"]["mode"] == "error_bound"

    # report shows the valid row and why the others have no time.
    table = subprocess.run([cli(), "report", str(results)], capture_output=True, text=True)
    assert table.returncode == 0, table.stderr
    assert "heuristic" in table.stdout and "wrong_result" in table.stdout
    assert "compile_error" in table.stdout


def hand_softmax():
    """The example's hand schedule (softmax_block.sched in Python), 4 threads a row."""
    spec = importlib.util.spec_from_file_location("softmax_sweep_example", EXAMPLE)
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    return example.softmax("f32", 4)


def test_the_results_file_has_one_writer_and_fresh_keeps_the_previous(tmp_path):
    path = str(tmp_path / "r.jsonl")
    first = _schedlab.ResultsFile(path, repetitions=2)
    with pytest.raises(schedlab.Error, match="is being written by another schedlab process"):
        _schedlab.ResultsFile(path)
    fd = hand_softmax()
    x = np.ones((2, 16), dtype=np.float32)
    record = _schedlab.bench_point(fd, [x], results=first, fusion="softmax", params={"block": 4})
    # Held for its group's rounds: validated, not yet timed or written.
    assert record["status"] == "ok" and record["times_us"] == [] and first.held == 1
    assert not os.path.exists(path) or read(path) == []
    # The hand schedule is given back: the definition runs again.
    (out,) = fd.manual_execute([x])
    np.testing.assert_allclose(out, np.full((2, 16), 1 / 16), rtol=1e-6)
    _schedlab.bench_point(fd, [x], results=first, fusion="softmax", label="twin")
    (a, b) = first.flush()
    assert first.held == 0 and len(read(path)) == 2
    assert len(a["times_us"]) == 2 and a["measurement"]["group"] == b["measurement"]["group"]
    assert b["measurement"]["same_kernel_as"] == "softmax/N=2,K=16/manual/block=4"
    assert b["times_us"] == a["times_us"]
    first.close()
    with pytest.raises(schedlab.Error, match="is closed"):
        _schedlab.bench_point(fd, [x], results=first)
    # Timed at each call (--schedlab-time-each); fresh: the earlier records kept as .prev.
    again = _schedlab.ResultsFile(path, fresh=True, repetitions=3, interleave=False)
    assert os.path.exists(path + ".prev") and len(read(path + ".prev")) == 2
    record = _schedlab.bench_point(fd, [x], results=again, fusion="softmax")
    assert len(record["times_us"]) == 3 and again.held == 0
    assert read(path) == [record]
    again.close()


def test_measurement_settings_are_checked():
    with pytest.raises(schedlab.Error, match="expected repetitions >= 1"):
        _schedlab.bench_point(hand_softmax(), [np.ones((2, 16), dtype=np.float32)],
                              repetitions=0)
    with pytest.raises(schedlab.Error, match="expected repetitions >= 1, warmup >= 0"):
        _schedlab.ResultsFile("unused.jsonl", warmup=-1)
    with pytest.raises(schedlab.Error, match="no plugin|not found|unknown"):
        _schedlab.bench_point(hand_softmax(), [np.ones((2, 16), dtype=np.float32)],
                              scheduler="no_such_plugin")


def test_compute_heuristics_params_go_to_the_fixture_as_they_are():
    """What schedule.compute_heuristics returns (edited) is a point's params, as a dict is;
    another plugin's params are refused, naming both plugins."""
    a = np.random.default_rng(3).random((4, 64), dtype=np.float32)
    params = schedlab.schedule.compute_heuristics(schedlab.load_fusion("softmax"),
                                                  "normalization", [a])
    params.vector = "1"
    record = _schedlab.bench_point(schedlab.load_fusion("softmax"), [a],
                                   scheduler="normalization", params=params, repetitions=2)
    assert record["status"] == "ok"
    assert record["config"]["vector"] == "1"
    with pytest.raises(schedlab.Error, match="the parameters are the normalization plugin's; "
                                             "expected the pointwise plugin's"):
        _schedlab.bench_point(schedlab.load_fusion("softmax"), [a], scheduler="pointwise",
                              params=params, repetitions=2)
    with pytest.raises(schedlab.Error,
                       match="expected the parameters as a HeuristicParams or a dict, found list"):
        _schedlab.bench_point(schedlab.load_fusion("softmax"), [a], scheduler="normalization",
                              params=[1], repetitions=2)
