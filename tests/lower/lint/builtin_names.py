#!/usr/bin/python3
"""Typed kernel-IR built-ins (docs/kernel-ir.md): two source checks, run by CTest.

  builtin_names.py ROOT names
      No C++ string literal names a CUDA built-in (blockDim, threadIdx,
      blockIdx, gridDim) in core/, plugins/, plugin-api/ or bench/ outside the
      CUDA printer (core/codegen, its header) and the CPU runtime
      (core/runtime, its headers): the kernel IR has nodes for them
      (kir::Builtin), and only those two places spell them. Comments may, and
      so may a literal that is itself a hand-written CUDA kernel (it holds
      __global__: a benchmark's input, device code rather than a name), and
      so may the one function named in EXCEPTIONS (ir::cuda_index_name: the
      fusion IR's display names of bindings, as nvFuser prints them).
  builtin_names.py ROOT simplify-keys
      The simplifier (core/lower/simplify.*) never prints an expression: it
      keys terms and facts on structure (kir_equality.h), not on kir text.

Each finding is printed as FILE:LINE: what; the exit status is 1 if any.
"""
import os
import re
import sys

BUILTIN = re.compile(r"\b(blockDim|threadIdx|blockIdx|gridDim)\b")
SOURCES = (".c", ".cc", ".cpp", ".h", ".hpp", ".cuh", ".inc")
SCANNED = ("core", "plugins", "plugin-api", "bench")
ALLOWED = ("core/codegen/", "core/include/schedlab/codegen/", "core/runtime/",
           "core/include/schedlab/runtime/")
# Named exceptions: (file, function) -> reason. Only literals inside that one
# function's definition are let be; any other literal in the file still fails.
EXCEPTIONS = {
    # The fusion IR printer spells bindings as nvFuser prints them (iblockIdx.x5),
    # for users who read nvFuser's print_math: display text, never code.
    ("core/ir/ir.cpp", "cuda_index_name"): "the fusion IR's printed binding names",
}


def exempt_lines(rel, text):
    """The lines of the excepted functions' definitions in file rel."""
    lines = set()
    source = text.split("\n")
    for (path, function), _ in EXCEPTIONS.items():
        if path != rel:
            continue
        for start, line in enumerate(source):
            if re.search(r"\b" + function + r"\(", line) and line.rstrip().endswith("{"):
                end = start
                while end < len(source) and source[end] != "}":
                    end += 1
                lines.update(range(start + 1, end + 2))  # 1-based, through the brace
    return lines


def string_literals(text):
    """(line, contents) of each string literal, comments and chars skipped."""
    i, line, n = 0, 1, len(text)
    while i < n:
        c = text[i]
        if c == "\n":
            line += 1
            i += 1
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            line += text.count("\n", i, j)
            i = j
        elif c == "R" and text.startswith('R"', i) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            k = text.find("(", i + 2)
            delim = text[i + 2:k]
            end = text.find(")" + delim + '"', k)
            end = n if end < 0 else end
            yield line, text[k + 1:end]
            line += text.count("\n", i, end)
            i = end + len(delim) + 2
        elif c == '"' or c == "'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            if c == '"':
                yield line, text[i + 1:j]
            i = j + 1
        else:
            i += 1


def check_names(root):
    found = []
    for top in SCANNED:
        for dirpath, dirnames, filenames in os.walk(os.path.join(root, top)):
            dirnames.sort()
            for name in sorted(filenames):
                if not name.endswith(SOURCES):
                    continue
                path = os.path.join(dirpath, name)
                rel = os.path.relpath(path, root).replace(os.sep, "/")
                if rel.startswith(ALLOWED):
                    continue
                with open(path, encoding="utf-8", errors="replace") as f:
                    text = f.read()
                exempt = exempt_lines(rel, text)
                for line, s in string_literals(text):
                    m = BUILTIN.search(s)
                    if m and "__global__" not in s and line not in exempt:
                        found.append(f"{rel}:{line}: the string literal \"{s}\" names the CUDA "
                                     f"built-in {m.group(1)}; expected a kir::Builtin node (only "
                                     "core/codegen and core/runtime spell CUDA names)")
    return found


def check_simplify_keys(root):
    found = []
    lower = os.path.join(root, "core", "lower")
    for name in sorted(os.listdir(lower)):
        if not name.startswith("simplify"):
            continue
        rel = f"core/lower/{name}"
        with open(os.path.join(lower, name), encoding="utf-8") as f:
            for number, text in enumerate(f, 1):
                code = text.split("//", 1)[0]
                if "print_expr" in code or "kir_printer.h" in code:
                    found.append(f"{rel}:{number}: the simplifier prints an expression "
                                 f"({code.strip()}); expected keys on structure "
                                 "(kir::equal, kir::ExprMap, kir::OrderedExprMap)")
    return found


def main(argv):
    if len(argv) != 3 or argv[2] not in ("names", "simplify-keys"):
        print(__doc__, file=sys.stderr)
        return 2
    found = check_names(argv[1]) if argv[2] == "names" else check_simplify_keys(argv[1])
    for f in found:
        print(f)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
