#!/usr/bin/env python3
"""Tests of scripts/torch-baseline (the PyTorch-eager comparison of gpu-check).

The translator (fusion text -> one backend call per operation) is checked
against schedlab's reference evaluator: `schedlab exec --unscheduled
--save-outputs` writes <output>.ref.npy for the same generated inputs (same
generator and seed) or the same --inputs files, and torch-baseline --check
compares its outputs with them, with schedlab's tolerances. Here that runs on
the NumPy backend, which shares every line of the translator with the torch
backend; where /usr/bin/python3 imports torch, the torch backend on the CPU is
checked the same way, and otherwise the tests check that the script exits 0
with its one "PyTorch is not importable" line.

Usage (tests/torch_baseline/CMakeLists.txt registers one CTest each):
  torch_baseline_test.py SCHEDLAB TORCH_BASELINE FUSION_DIR ref FUSION
  torch_baseline_test.py SCHEDLAB TORCH_BASELINE FUSION_DIR unit TEST_NAME
"""

import json
import os
import subprocess
import sys
import tempfile
import unittest

import numpy as np

SCHEDLAB, SCRIPT, FUSION_DIR = sys.argv[1:4]


def has_torch():
    return subprocess.run([sys.executable, "-c", "import torch"], capture_output=True).returncode == 0


def run(*args, expect=0):
    """Runs a command; fails (naming it and its output) unless it exits with `expect`."""
    p = subprocess.run(list(args), capture_output=True, text=True)
    if p.returncode != expect:
        raise AssertionError(f"exit {p.returncode}, expected {expect}: {' '.join(args)}\n"
                             f"--- stdout ---\n{p.stdout}--- stderr ---\n{p.stderr}")
    return p.stdout + p.stderr


def baseline(*args, expect=0):
    return run(sys.executable, SCRIPT, "--fusion-dir", FUSION_DIR, *args, expect=expect)


def save_reference(tmp, fusion, sizes, *extra):
    """schedlab's reference outputs for `fusion` in tmp/ref/<fusion>/<output>.ref.npy."""
    out = run(SCHEDLAB, "exec", fusion, "--backend", "cpu", "--unscheduled", "--size", sizes,
              "--save-outputs", os.path.join(tmp, "ref", fusion), *extra)
    assert "saved output 0" in out, out
    return os.path.join(tmp, "ref")


def check_rows(test, out, fusion, count):
    """The table has `count` rows for `fusion`, each with check 'ok'."""
    rows = [line.split() for line in out.splitlines() if line.split()[:1] == [fusion]]
    test.assertEqual(len(rows), count, out)
    for row in rows:
        test.assertEqual(row[-1], "ok", out)


def read_fusion(fusion):
    import yaml
    with open(os.path.join(FUSION_DIR, fusion + ".yaml")) as fh:
        return yaml.safe_load(fh)


# Odd sizes (no vector-width luck), then one with a single row (N=1; a matmul's
# single column, its M=2 rows, a batch of one). The first point is the torch
# case's --size below (N=9,K=67,B=3,M=5).
POINTS = [{"B": 3, "M": 5, "N": 9, "K": 67}, {"B": 1, "M": 2, "N": 1, "K": 130}]


def sizes_for(fusion):
    """The two --size labels of `fusion`: its size names in the order of their first use in
    its input shapes (the order of torch-baseline's size_label)."""
    if fusion == "batched_transpose":
        return ["B=3,M=5,N=7", "B=1,M=17,N=2"]
    if fusion in ("reshape_add", "rmsnorm_reshape"):  # reshapes (issue 37)
        return ["N=9,H=5,W=67", "N=1,H=2,W=130"]
    if fusion == "split_heads":  # E splits into 8 heads
        return ["B=3,S=5,E=72", "B=1,S=2,E=128"]
    names = []
    for spec in read_fusion(fusion)["inputs"].values():
        names += [e for e in spec["shape"] if isinstance(e, str) and e not in names]
    return [",".join(f"{k}={point[k]}" for k in names) for point in POINTS]


class Reference(unittest.TestCase):
    """One standard fusion, NumPy backend, against schedlab's reference."""

    fusion = None

    def test_generated_inputs(self):
        with tempfile.TemporaryDirectory() as tmp:
            for i, sizes in enumerate(sizes_for(self.fusion)):
                seed = str(1 + 6 * i)  # the default seed, and another one
                ref = save_reference(tmp, self.fusion, sizes, "--seed", seed)
                out = baseline("--backend", "numpy", "--device", "cpu", "--fusion", self.fusion,
                               "--size", sizes, "--seed", seed, "--check", ref,
                               "--warmup", "0", "--reps", "1", "--out", os.path.join(tmp, "out"))
                check_rows(self, out, self.fusion, 1)
                with open(os.path.join(tmp, "out", "torch-baseline.json")) as fh:
                    rec = json.load(fh)["records"][0]
                self.assertEqual(rec["status"], "ok")
                self.assertEqual(rec["size_label"], sizes)
                self.assertEqual(len(rec["times_us"]), 1)

    def test_npy_inputs(self):
        """--inputs: the same .npy files given to schedlab exec and to torch-baseline."""
        doc = read_fusion(self.fusion)
        size_arg = sizes_for(self.fusion)[0]
        sizes = dict(kv.split("=") for kv in size_arg.split(","))
        rng = np.random.default_rng(len(self.fusion))
        np_dtype = {"f32": np.float32, "f16": np.float16, "f64": np.float64, "i32": np.int32,
                    "i64": np.int64, "bool": np.bool_}
        with tempfile.TemporaryDirectory() as tmp:
            paths = []
            for name, spec in doc["inputs"].items():
                shape = [int(sizes[e]) if isinstance(e, str) else int(e) for e in spec["shape"]]
                lo, hi = spec.get("range", [-3, 3])
                if spec["dtype"] == "bool":
                    a = rng.random(shape) < 0.3
                elif spec["dtype"] in ("i32", "i64"):
                    a = rng.integers(lo, hi + 1, shape)
                else:
                    a = rng.uniform(lo, hi, shape)
                paths.append(os.path.join(tmp, name + ".npy"))
                if spec["dtype"] == "bf16":  # NumPy has no bf16: its raw bits, as <u2
                    a = (np.asarray(a, dtype=np.float32).view(np.uint32) >> 16).astype(np.uint16)
                else:
                    a = np.asarray(a).astype(np_dtype[spec["dtype"]])
                np.save(paths[-1], a)
            inputs = ",".join(paths)
            out = run(SCHEDLAB, "exec", self.fusion, "--backend", "cpu", "--unscheduled",
                      "--size", size_arg, "--inputs", inputs,
                      "--save-outputs", os.path.join(tmp, "ref", self.fusion))
            self.assertIn("saved output 0", out)
            out = baseline("--backend", "numpy", "--device", "cpu", "--fusion", self.fusion,
                           "--inputs", inputs, "--check", os.path.join(tmp, "ref"),
                           "--warmup", "0", "--reps", "1")
            check_rows(self, out, self.fusion, 1)


class Script(unittest.TestCase):
    def test_torch_or_skip_line(self):
        """With torch: the torch backend on the CPU matches the reference. Without: one line, exit 0."""
        if not has_torch():
            for device in ("cuda", "cpu"):
                out = baseline("--device", device)
                self.assertRegex(out, r"^torch-baseline: skipped: PyTorch is not importable by "
                                      r"\S+ \(ModuleNotFoundError: No module named 'torch'\)\n$")
            return
        with tempfile.TemporaryDirectory() as tmp:
            names = sorted(f[:-5] for f in os.listdir(FUSION_DIR) if f.endswith(".yaml"))
            for n in names:
                save_reference(tmp, n, sizes_for(n)[0])
            out = baseline("--backend", "torch", "--device", "cpu", "--size", "N=9,K=67,B=3,M=5",
                           "--check", os.path.join(tmp, "ref"), "--warmup", "0", "--reps", "1",
                           expect=1)  # batched_transpose runs at N=9 there, not 7: one mismatch
            for n in names:
                if n != "batched_transpose":
                    check_rows(self, out, n, 1)
            out = baseline("--backend", "torch", "--device", "cpu", "--fusion", "batched_transpose",
                           "--size", "B=3,M=5,N=7", "--check", os.path.join(tmp, "ref"),
                           "--warmup", "0", "--reps", "1")
            check_rows(self, out, "batched_transpose", 1)

    def test_reader_without_pyyaml(self):
        """The fallback fusion-file reader (for a GPU host without PyYAML) reads every
        standard fusion as PyYAML does, body lines up to comments and blank lines."""
        import importlib.machinery
        import yaml
        tb = importlib.machinery.SourceFileLoader("torch_baseline", SCRIPT).load_module()
        body = lambda d: [l.split("#")[0].strip() for l in d["body"].splitlines() if l.split("#")[0].strip()]
        names = sorted(f for f in os.listdir(FUSION_DIR) if f.endswith(".yaml"))
        self.assertGreater(len(names), 0)
        os.environ["TORCH_BASELINE_NO_PYYAML"] = "1"
        try:
            for n in names:
                path = os.path.join(FUSION_DIR, n)
                with open(path) as fh:
                    want = yaml.safe_load(fh)
                got = tb.read_fusion_yaml(path)
                self.assertEqual(body(got), body(want), n)
                got.pop("body"), want.pop("body")
                self.assertEqual(got, want, n)
        finally:
            del os.environ["TORCH_BASELINE_NO_PYYAML"]

    def test_check_catches_a_wrong_reference(self):
        """--check is not vacuous: a reference from other inputs (another seed) fails it."""
        with tempfile.TemporaryDirectory() as tmp:
            ref = save_reference(tmp, "softmax", "N=4,K=16", "--seed", "2")
            out = baseline("--backend", "numpy", "--device", "cpu", "--fusion", "softmax",
                           "--size", "N=4,K=16", "--check", ref, "--reps", "1", expect=1)
            self.assertRegex(out, r"softmax +N=4,K=16 .* y: \d+ of 64 elements differ; first at \[")

    def test_unsupported_operation(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "odd.yaml")
            with open(path, "w") as fh:
                fh.write("fusion: odd\ninputs:\n  x: {dtype: f32, shape: [N]}\nsizes: {N: 4}\n"
                         "body: |\n  a = exp(x)\n  y = cumsum(a, axis=0)\noutputs: [y]\n")
            out = baseline("--backend", "numpy", "--device", "cpu", "--fusion", path, expect=2)
            self.assertRegex(out, r"^torch-baseline: error: .*odd\.yaml: body line 2:5: unsupported "
                                  r"function 'cumsum'; torch-baseline translates: abs, add, broadcast")

    def test_contraction_variants(self):
        """matmul and linear beyond the standard fusions' forms, against the reference: a
        batch on either side only (broadcast), f32 and f16, a rank-3 linear without bias;
        then a contracted-axis mismatch, which names the shapes."""
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "contractions.yaml")
            with open(path, "w") as fh:
                fh.write("fusion: contractions\ninputs:\n"
                         "  a: {dtype: f16, shape: [B, M, K]}\n  b: {dtype: f16, shape: [K, N]}\n"
                         "  w: {dtype: f16, shape: [N, K]}\n  x: {dtype: f32, shape: [M, K]}\n"
                         "  y: {dtype: f32, shape: [B, K, N]}\n"
                         "body: |\n  p = matmul(a, b)\n  q = linear(a, w)\n  r = matmul(x, y)\n"
                         "outputs: [p, q, r]\n")
            sizes = "B=3,M=5,K=67,N=9"
            run(SCHEDLAB, "exec", path, "--backend", "cpu", "--unscheduled", "--size", sizes,
                "--save-outputs", os.path.join(tmp, "ref", "contractions"))
            out = baseline("--backend", "numpy", "--device", "cpu", "--fusion", path, "--size", sizes,
                           "--check", os.path.join(tmp, "ref"), "--warmup", "0", "--reps", "1")
            check_rows(self, out, "contractions", 1)
            with open(path) as fh:
                text = fh.read().replace("q = linear(a, w)", "q = matmul(a, w)")
            with open(path, "w") as fh:
                fh.write(text)
            out = baseline("--backend", "numpy", "--device", "cpu", "--fusion", path, "--size", sizes,
                           expect=2)
            self.assertIn("body line 2:5: matmul: shapes [3, 5, 67] and [9, 67]; expected "
                          "[..., M, K] and [..., K, N]", out)

    def test_half_reductions(self):
        """Reductions of f16/bf16 give the half type, accumulated in f32 and rounded once
        (mean: after the division), as schedlab's (docs/fusion-text.md, "Half types")."""
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "half_reductions.yaml")
            with open(path, "w") as fh:
                fh.write("fusion: half_reductions\ninputs:\n"
                         "  x: {dtype: f16, shape: [N, K]}\n  h: {dtype: bf16, shape: [N, K]}\n"
                         "body: |\n  s = sum(x, axis=1)\n  a = mean(h, axis=1, keepdim=true)\n"
                         "  y = cast(x, f32) - max(x, axis=1, keepdim=true)\n  p = min(h, axis=0)\n"
                         "outputs: [s, a, y, p]\n")
            sizes = "N=9,K=67"
            run(SCHEDLAB, "exec", path, "--backend", "cpu", "--unscheduled", "--size", sizes,
                "--save-outputs", os.path.join(tmp, "ref", "half_reductions"))
            out = baseline("--backend", "numpy", "--device", "cpu", "--fusion", path, "--size", sizes,
                           "--check", os.path.join(tmp, "ref"), "--warmup", "0", "--reps", "1")
            check_rows(self, out, "half_reductions", 1)

    def test_half_pointwise(self):
        """Pointwise math on f16 gives f16, rounded after every op (PyTorch's result_type and
        opmath), bit for bit what NumPy's float16 gives one op at a time; carried in f32 to the
        end, (x + 2048) - 2048 would give x back instead of x rounded to a multiple of 2."""
        import importlib.machinery
        import numpy as np
        tb = importlib.machinery.SourceFileLoader("torch_baseline", SCRIPT).load_module()
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "half_chain.yaml")
            with open(path, "w") as fh:
                fh.write("fusion: half_chain\ninputs:\n  x: {dtype: f16, shape: [N]}\n"
                         "body: |\n  y = (x + 2048.0) - 2048.0\n  z = x * x * x\n"
                         "outputs: [y, z]\n")
            tr = tb.Translator(tb.Fusion(path, {"N": 64}), tb.NumpyBackend())
            fn = tr.build()
            x = np.linspace(-3.7, 3.9, 64).astype(np.float16)
            y, z = fn([x])
            self.assertEqual(tr.out_dtypes, ["f16", "f16"])
            two = np.float16(2048.0)
            want_y = (x + two) - two
            want_z = (x * x) * x
            self.assertEqual(y.dtype, np.float16)
            self.assertTrue(np.array_equal(y, want_y), f"{y} != {want_y}")
            self.assertTrue(np.array_equal(z, want_z), f"{z} != {want_z}")
            self.assertFalse(np.array_equal(y, x))  # the rounding is visible at this size

    def test_usage_errors(self):
        out = baseline("--backend", "numpy", "--device", "cpu", "--fusion", "softmax",
                       "--size", "N=4,K=x", expect=2)
        self.assertIn("torch-baseline: error: --size N=4,K=x: expected NAME=VALUE", out)
        out = baseline("--backend", "numpy", "--device", "cpu", "--fusion", "nope", expect=2)
        self.assertIn("torch-baseline: error: unknown fusion 'nope' (searched " + FUSION_DIR, out)
        out = baseline("--backend", "numpy", "--fusion", "softmax", expect=2)
        self.assertIn("torch-baseline: error: --backend numpy runs on the CPU; add --device cpu", out)
        with tempfile.TemporaryDirectory() as tmp:
            x = os.path.join(tmp, "x.npy")
            np.save(x, np.zeros((2, 3), np.float32))
            out = baseline("--backend", "numpy", "--device", "cpu", "--fusion", "add",
                           "--inputs", x, expect=2)
            self.assertIn("--inputs: fusion 'add' has 2 inputs (x, y), found 1 files", out)
            out = baseline("--backend", "numpy", "--device", "cpu", "--fusion", "bias_relu",
                           "--inputs", x + "," + x, expect=2)
            self.assertIn(f"--inputs: {x} has shape [2, 3]; input b has rank 1", out)

    def test_schedlab_records_side_by_side(self):
        """--schedlab: each record's point is run, and the best ok median stands next to it."""
        recs = [("heuristic", "ok", [30.0, 10.0, 20.0]), ("sweep", "ok", [9.0, 50.0, 8.0, 60.0]),
                ("bad", "wrong_result", [1.0])]
        with tempfile.TemporaryDirectory() as tmp:
            jsonl = os.path.join(tmp, "q.jsonl")
            with open(jsonl, "w") as fh:
                for sched, status, times in recs:
                    fh.write(json.dumps({"fusion": "row_sum", "sizes": {"N": 8, "K": 32},
                                         "size_label": "N=8,K=32", "scheduler": sched,
                                         "status": status, "times_us": times}) + "\n")
            out = baseline("--backend", "numpy", "--device", "cpu", "--fusion", "row_sum",
                           "--size", "N=4,K=4", "--schedlab", jsonl, "--reps", "3",
                           "--out", os.path.join(tmp, "o"))
            with open(os.path.join(tmp, "o", "torch-baseline.json")) as fh:
                by_label = {r["size_label"]: r for r in json.load(fh)["records"]}
            self.assertEqual(sorted(by_label), ["N=4,K=4", "N=8,K=32"])
            self.assertNotIn("schedlab_best_us", by_label["N=4,K=4"])
            best = by_label["N=8,K=32"]
            self.assertEqual(best["schedlab_best_us"], 20.0)  # medians: heuristic 20, sweep 29
            self.assertEqual(best["schedlab_best_scheduler"], "heuristic")
            self.assertRegex(out, r"row_sum +N=8,K=32 +[\d.]+ +[\d.]+ +20\.00 \(heuristic\) +[\d.]+x")


if __name__ == "__main__":
    mode, name = sys.argv[4], sys.argv[5]
    if mode == "ref":
        Reference.fusion = name
        suite = unittest.defaultTestLoader.loadTestsFromTestCase(Reference)
    else:
        suite = unittest.defaultTestLoader.loadTestsFromName(name, sys.modules[__name__])
    result = unittest.TextTestRunner(verbosity=2).run(suite)
    sys.exit(0 if result.wasSuccessful() and result.testsRun > 0 else 1)
