#!/usr/bin/env python3
"""Writes the synthetic `compare` and report fixtures in this directory (run it from
anywhere; the outputs are checked in). Deterministic: no randomness, so the
expected verdicts in compare_test.cpp follow from the numbers below.

Google Benchmark files (base.json, new.json) with 10 repetitions each, in
nanoseconds, as `--benchmark_repetitions=10 --benchmark_format=json` writes
them (per-repetition entries with run_type "iteration", then aggregates):

  BM_regressed      base ~100, new ~120: significant, +20%      -> regression
  BM_noise          base ~100, new ~100, interleaved samples     -> unchanged
  BM_improved       base ~100, new ~80                           -> improvement
  BM_boundary       base median 100, new = base x 1.05 (median 105), fully separated:
                    the new/base ratio estimate is exactly 1.05 (every pairwise log
                    difference has its mirror), so
                    significant, exactly +5%: unchanged at 5%, regression at 4%
  BM_small_shift    new ~101.5, separated: significant but +1.5% -> unchanged
  BM_removed        only in base
  BM_added          only in new
"""
import hashlib
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))

# Offsets around a centre: median 0, spread +-2.
JITTER = [-2.0, -1.5, -1.0, -0.5, -0.25, 0.25, 0.5, 1.0, 1.5, 2.0]
# Another noise pattern with the same median, interleaving with JITTER.
JITTER2 = [-1.75, -1.25, -0.75, -0.4, -0.1, 0.1, 0.4, 0.75, 1.25, 1.75]


def reps(centre, jitter=JITTER):
    return [centre + j for j in jitter]


def boundary(median):
    # Median exactly `median`; all values within +-1.
    return [median + j / 2 for j in JITTER]


def gbench(series, host):
    out = {
        "context": {"date": "2026-11-30T19:00:00+00:00", "host_name": host,
                    "executable": "./bin/schedlab_bench", "num_cpus": 2,
                    "library_build_type": "release"},
        "benchmarks": [],
    }
    for name, times in series.items():
        for i, t in enumerate(times):
            out["benchmarks"].append({
                "name": name, "family_index": 0, "per_family_instance_index": 0,
                "run_name": name, "run_type": "iteration", "repetitions": len(times),
                "repetition_index": i, "threads": 1, "iterations": 1000,
                "real_time": t, "cpu_time": t, "time_unit": "ns"})
        srt = sorted(times)
        med = (srt[4] + srt[5]) / 2
        for agg, v in (("mean", sum(times) / len(times)), ("median", med)):
            out["benchmarks"].append({
                "name": f"{name}_{agg}", "run_name": name, "run_type": "aggregate",
                "repetitions": len(times), "threads": 1, "aggregate_name": agg,
                "aggregate_unit": "time", "iterations": 10, "real_time": v, "cpu_time": v,
                "time_unit": "ns"})
    return out


base = {
    "BM_regressed": reps(100), "BM_noise": reps(100), "BM_improved": reps(100),
    "BM_boundary": boundary(100), "BM_small_shift": boundary(100), "BM_removed": reps(50),
}
new = {
    "BM_regressed": reps(120), "BM_noise": reps(100, JITTER2), "BM_improved": reps(80),
    "BM_boundary": [1.05 * t for t in boundary(100)], "BM_small_shift": boundary(101.5), "BM_added": reps(60),
}
clean = {k: v for k, v in base.items()}
clean["BM_noise"] = reps(100, JITTER2)

for fname, series in (("base.json", base), ("new.json", new), ("clean.json", clean)):
    with open(os.path.join(HERE, fname), "w") as f:
        json.dump(gbench(series, "ci-runner"), f, indent=2)
        f.write("\n")


# Sweep JSONL (schema schedlab.sweep.v1): the same kind of pair, one record
# per point, times in microseconds. Point a regresses, b is noise, c now
# fails validation (broken), d improves.
def record(scheduler, config, times, status="ok", error="", kernel_version=""):
    s = sorted(times) if times else None
    # A kernel per (scheduler, config); a planted change of speed is a new
    # kernel (kernel_version), since compare never flags an unchanged one.
    kernel = hashlib.sha1(json.dumps([scheduler, config, kernel_version]).encode()).hexdigest()[:16]
    return {
        "schema": "schedlab.sweep.v1", "sweep": "softmax", "fusion": "softmax",
        "sizes": {"N": 1024, "K": 1024}, "size_label": "N=1024,K=1024",
        "scheduler": scheduler,
        "plugin": {"name": scheduler, "version": "1.0", "hash": "00000000000000aa"},
        "config": config, "config_hash": "00000000000000bb", "kernel_hash": kernel,
        "device": {"name": "cpu (fixture)", "backend": "cpu", "fingerprint": "cpu-fixture",
                   "emulated": True, "peak_gbps": 0},
        "status": status, "error": error, "times_us": times,
        "median_us": (s[4] + s[5]) / 2 if s else None,
        "bytes_moved": 8388608, "max_abs_error": 1e-7 if status == "ok" else None,
        "tolerance": {"rtol": 1e-5, "atol": 1e-6}, "key": "00000000000000dd",
        "timestamp": "2026-11-30T19:00:00Z"}


base_jsonl = [
    record("normalization", {"block": "128"}, reps(100)),
    record("normalization", {"block": "256"}, reps(100)),
    record("normalization", {"block": "512"}, reps(100)),
    record("eager", {}, reps(200)),
]
new_jsonl = [
    record("normalization", {"block": "128"}, reps(130), kernel_version="new"),
    record("normalization", {"block": "256"}, reps(100, JITTER2)),
    record("normalization", {"block": "512"}, [], "wrong_result", "max abs error 0.5 > atol 1e-06"),
    record("eager", {}, reps(150), kernel_version="new"),
]
for fname, recs in (("sweep_base.jsonl", base_jsonl), ("sweep_new.jsonl", new_jsonl)):
    with open(os.path.join(HERE, fname), "w") as f:
        for r in recs:
            f.write(json.dumps(r) + "\n")
# Line 2 is broken in the middle of the file (not a truncated tail).
with open(os.path.join(HERE, "malformed.jsonl"), "w") as f:
    f.write(json.dumps(base_jsonl[0]) + "\n")
    f.write(json.dumps(base_jsonl[1])[:50] + "\n")
    f.write(json.dumps(base_jsonl[2]) + "\n")
# A Google Benchmark file cut short.
with open(os.path.join(HERE, "malformed.json"), "w") as f:
    f.write(json.dumps(gbench({"BM_x": reps(10)}, "ci-runner"), indent=2)[:300] + "\n")


# A sweep for the table and HTML tests (sweep_mixed.jsonl): softmax at two
# sizes on the CPU backend (emulated) and on a GPU; schedulers eager (the
# baseline), normalization (block x vec x unroll; vec=8 gives wrong results
# at block 1024) and pointwise (rejects every reduction).
def point(scheduler, config, size, times, device, status="ok", error=""):
    r = record(scheduler, config, times, status, error)
    r["sweep"] = "softmax_sweep"
    r["sizes"] = {"N": size[0], "K": size[1]}
    r["size_label"] = f"N={size[0]},K={size[1]}"
    r["device"] = device
    r["bytes_moved"] = 2 * 4 * size[0] * size[1]
    return r


CPU = {"name": "cpu (fixture)", "backend": "cpu", "fingerprint": "cpu-fixture", "emulated": True,
       "peak_gbps": 0}
GPU = {"name": "NVIDIA H200 (fixture)", "backend": "cuda", "fingerprint": "h200-fixture",
       "emulated": False, "peak_gbps": 4800}
mixed = []
for device, scale in ((CPU, 50.0), (GPU, 1.0)):
    for size in ((1024, 1024), (4096, 4096)):
        base = scale * size[0] * size[1] / 1024 / 1024 * 10
        mixed.append(point("eager", {}, size, reps(base, [j * base / 200 for j in JITTER]), device))
        for block in (128, 256, 512, 1024):
            for vec in (1, 2, 4, 8):
                for unroll in (1, 2):
                    cfg = {"block": str(block), "vec": str(vec), "unroll": str(unroll)}
                    if block == 1024 and vec == 8:
                        mixed.append(point("normalization", cfg, size, [], device, "wrong_result",
                                           "max abs error 0.25 > atol 1e-06"))
                        continue
                    # Fastest at block 256, vec 4; unroll 2 a little slower.
                    t = base * (0.6 + 0.1 * abs(block.bit_length() - 9) + 0.05 * abs(vec - 4)
                                + 0.02 * (unroll - 1))
                    mixed.append(point("normalization", cfg, size,
                                       reps(t, [j * t / 200 for j in JITTER2]), device))
        mixed.append(point("pointwise", {"block": "128"}, size, [], device, "rejected",
                           "pointwise schedules fusions without reductions"))
with open(os.path.join(HERE, "sweep_mixed.jsonl"), "w") as f:
    for r in mixed:
        f.write(json.dumps(r) + "\n")


# A sweep over four sizes for the report's layout test in headless Chromium
# (chromium_check.py) and the line plots: softmax at N = 256 .. 16384 with
# K = 1024, sizes in the fusion's declaration order (N, K), on the CPU
# backend and on a GPU; eager (the baseline), normalization over block x vec
# with a long configuration (it must wrap in the table), and a scheduler
# with a long name that is rejected at the largest size.
LONG_NAME = "persistent_multi_row_normalization_with_cluster_reduction"
sizes_sweep = []
for device, scale in ((CPU, 50.0), (GPU, 1.0)):
    for n in (256, 1024, 4096, 16384):
        size = (n, 1024)
        base = scale * n * 1024 / 1024 / 1024 * 10
        sizes_sweep.append(point("eager", {}, size, reps(base, [j * base / 200 for j in JITTER]),
                                 device))
        for block in (64, 128, 256, 512):
            for vec in (1, 2, 4):
                cfg = {"block": str(block), "vec": str(vec), "persistent_rows_per_block": "8",
                       "cache_policy": "evict_first_then_stream_through_l2"}
                t = base * (0.5 + 0.1 * abs(block.bit_length() - 8) + 0.05 * abs(vec - 4))
                sizes_sweep.append(point("normalization", cfg, size,
                                         reps(t, [j * t / 200 for j in JITTER2]), device))
        if n == 16384:
            sizes_sweep.append(point(LONG_NAME, {"rows": "4"}, size, [], device, "rejected",
                                     "the row does not fit the cluster's shared memory"))
        else:
            t = base * 0.45
            sizes_sweep.append(point(LONG_NAME, {"rows": "4"}, size,
                                     reps(t, [j * t / 200 for j in JITTER]), device))
for r in sizes_sweep:
    r["sweep"] = "softmax_sizes"
with open(os.path.join(HERE, "sweep_sizes.jsonl"), "w") as f:
    for r in sizes_sweep:
        f.write(json.dumps(r) + "\n")


# A planted 1.3x slowdown (planted*.jsonl; verdict_test.cpp and
# verdict_agreement.py): the new build of scheduler `mine` against its old
# build `mine@old` (as `run --ab` records them: one interleaved group, sample
# k of both from round k). The rounds carry load spikes (rounds 4 and 9)
# that hit both builds alike; every round's ratio is 1.3 within +-2 %.
# planted.jsonl holds both builds; planted_old.jsonl and planted_new.jsonl
# hold one each under the name `mine` (the two halves `compare` reads).
PLANTED_BASE = [100, 102, 98, 180, 101, 99, 103, 97, 250, 100, 101, 99]
PLANTED_NOISE = [0.016, -0.012, 0.008, -0.004, 0.012, -0.016, 0.004, -0.008, 0.0, 0.02, -0.02,
                 0.01]


def planted(scheduler, times, kernel_version):
    r = record(scheduler, {"block": "128"}, times, kernel_version=kernel_version)
    r["sweep"] = "planted"
    r["plugin"]["name"] = "mine"
    s = sorted(times)
    r["median_us"] = (s[5] + s[6]) / 2
    r["measurement"] = {"group": "planted-run-0", "seed": 7, "launch": "grid=8x1x1 block=128x1x1 smem=0",
                        "same_kernel_as": "", "reused": False}
    return r


planted_old = planted("mine@old", [float(t) for t in PLANTED_BASE], "old")
planted_new = planted("mine", [round(1.3 * t * (1 + e), 6) for t, e in zip(PLANTED_BASE, PLANTED_NOISE)],
                      "new")
for fname, recs in (("planted.jsonl", [planted_new, planted_old]),
                    ("planted_old.jsonl", [dict(planted_old, scheduler="mine")]),
                    ("planted_new.jsonl", [planted_new])):
    with open(os.path.join(HERE, fname), "w") as f:
        for r in recs:
            f.write(json.dumps(r) + "\n")
