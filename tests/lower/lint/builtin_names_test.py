#!/usr/bin/python3
"""builtin_names.py on small trees: it finds what it must, names FILE:LINE,
and lets comments, the CUDA printer, the CPU runtime and hand-written
kernels be."""
import os
import subprocess
import sys
import tempfile

CHECK = os.path.join(os.path.dirname(os.path.abspath(__file__)), "builtin_names.py")


def run(files, mode):
    with tempfile.TemporaryDirectory() as root:
        for rel, text in files.items():
            path = os.path.join(root, rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w") as f:
                f.write(text)
        r = subprocess.run([sys.executable, CHECK, root, mode], capture_output=True, text=True)
        return r.returncode, r.stdout.splitlines()


def expect(cond, what):
    if not cond:
        print("FAIL:", what)
        sys.exit(1)


tree = {
    "core/lower/a.cpp": '// "threadIdx.x" in a comment\n/* blockDim */ int x;\nauto s = "gridDim.y";\n',
    "core/codegen/p.cpp": 'auto t = "threadIdx.x";\n',
    "core/runtime/r.cpp": '#define threadIdx (x)\nauto u = "blockDim.x";\n',
    "bench/k.cpp": 'auto k = R"(__global__ void f() { int i = blockIdx.x; })";\n',
    "plugins/p/p.cpp": 'int a;\n\nmsg("needs blockIdx.z");\n',
    # The one excepted function may spell them; the rest of its file may not.
    "core/ir/ir.cpp": 'std::string_view cuda_index_name(P t) {\n  return "threadIdx.x";\n}\n'
                      'std::string f() {\n  return "blockDim.x";\n}\n',
    "core/lower/simplify.cpp": '// print_expr is for people\n#include "x.h"\nauto k = kir::print_expr(e);\n',
    "core/lower/unswitch.cpp": 'auto k = kir::print_expr(e);\n',
}
rc, out = run(tree, "names")
expect(rc == 1, f"names: exit 1, got {rc}")
expect(len(out) == 3, f"names: three findings, got {out}")
expect(out[0].startswith("core/ir/ir.cpp:5: ") and "blockDim" in out[0], out[0])
expect(out[1].startswith("core/lower/a.cpp:3: ") and "gridDim" in out[1], out[1])
expect(out[2].startswith("plugins/p/p.cpp:3: ") and "blockIdx" in out[2], out[2])
rc, out = run(tree, "simplify-keys")
expect(rc == 1 and len(out) == 1 and out[0].startswith("core/lower/simplify.cpp:3: "), f"keys: {out}")
clean = {k: v for k, v in tree.items() if k in ("core/codegen/p.cpp", "core/runtime/r.cpp", "bench/k.cpp")}
clean["core/lower/simplify.cpp"] = "int x;\n"
expect(run(clean, "names") == (0, []), "a clean tree passes names")
expect(run(clean, "simplify-keys") == (0, []), "a clean tree passes simplify-keys")
print("ok")
