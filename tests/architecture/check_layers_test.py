#!/usr/bin/python3
"""check_layers.py on small made-up trees: a clean one passes, and each kind of
violation fails naming its file:line. Usage: check_layers_test.py (exit 0: all pass)."""
import os
import subprocess
import sys
import tempfile

CHECK = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'check_layers.py')

DOC = '''# map
<!-- layers:begin -->
| module | layer | owns | may include |
|---|---|---|---|
| `base` | 0 | errors | (nothing) |
| `ir` | 1 | the IR | `base` |
| `lower` | 2 | passes | `base`, `ir` |
| `sweep/spec` | 3 | specs | `base` |
| `sweep/run` | 4 | runs | `sweep/spec`, `ir` |
<!-- layers:end -->
<!-- allowances:begin -->
| file | includes | reason |
|---|---|---|
%s
<!-- allowances:end -->
'''

CLEAN = {
    'core/include/schedlab/base/error.h': '#pragma once\n#include <string>\n',
    'core/base/error.cpp': '#include "schedlab/base/error.h"\n',
    'core/include/schedlab/ir/ir.h': '#pragma once\n#include "schedlab/base/error.h"\n',
    'core/ir/ir.cpp': '#include "schedlab/ir/ir.h"\n#include "private.h"\n',
    'core/ir/private.h': '#pragma once\n#include "../base/missing_is_ignored.h"\n',
    'core/lower/lower.cpp': '#include "schedlab/ir/ir.h"\n#include "schedlab/base/error.h"\n',
    'core/include/schedlab/sweep/spec/spec.h': '#include "schedlab/base/error.h"\n',
    'core/sweep/spec/loader.h': '#pragma once\n#include "../../base/missing_is_ignored.h"\n',
    'core/sweep/run/runner.cpp': ('#include "schedlab/sweep/spec/spec.h"\n#include "schedlab/ir/ir.h"\n'
                                  '#include "../spec/loader.h"\n'),
}


def run(files, allowances=''):
    with tempfile.TemporaryDirectory() as root:
        for path, text in list(CLEAN.items()) + list(files.items()):
            full = os.path.join(root, path)
            os.makedirs(os.path.dirname(full), exist_ok=True)
            with open(full, 'w') as f:
                f.write(text)
        os.makedirs(os.path.join(root, 'docs'))
        with open(os.path.join(root, 'docs', 'architecture.md'), 'w') as f:
            f.write(DOC % allowances)
        p = subprocess.run([sys.executable, CHECK, root], capture_output=True, text=True)
        return p.returncode, p.stdout


CASES = [
    ('clean', {}, '', 0, ['0 errors']),
    ('upward include', {'core/ir/ir.cpp': '#include "schedlab/lower/lower.h"\n'}, '', 1,
     ['core/ir/ir.cpp:1: ir (layer 1) includes "schedlab/lower/lower.h" of lower (layer 2): '
      'a higher layer']),
    ('relative upward include', {'core/base/error.cpp': '#include "../ir/private.h"\n'}, '', 1,
     ['core/base/error.cpp:1: base (layer 0) includes "../ir/private.h" of ir (layer 1)']),
    ('not listed', {'core/sweep/spec/spec.cpp': '#include "schedlab/ir/ir.h"\n'}, '', 1,
     ['core/sweep/spec/spec.cpp:1: sweep/spec (layer 3) includes "schedlab/ir/ir.h" of ir (layer 1): '
      'not listed under may include']),
    ('cycle', {'core/include/schedlab/base/error.h': '#include "schedlab/ir/ir.h"\n'}, '', 1,
     ['include cycle between modules: base <-> ir']),
    ('sweep role up', {'core/include/schedlab/sweep/spec/spec.h':
                       '#include "schedlab/sweep/run/runner.h"\n'},
     '', 1, ['core/include/schedlab/sweep/spec/spec.h:1: sweep/spec (layer 3) includes '
             '"schedlab/sweep/run/runner.h" of sweep/run (layer 4): a higher layer']),
    ('sweep role up, relative', {'core/sweep/spec/loader.h': '#include "../run/runner.h"\n',
                                 'core/sweep/run/runner.h': '#pragma once\n'},
     '', 1, ['core/sweep/spec/loader.h:1: sweep/spec (layer 3) includes "../run/runner.h" of '
             'sweep/run (layer 4): a higher layer']),
    ('allowed', {'core/ir/ir.cpp': '#include "schedlab/lower/lower.h"\n'},
     '| `core/ir/ir.cpp` | `schedlab/lower/lower.h` | moves in issue 99 |', 0,
     ['core/ir/ir.cpp:1: allowed: ir -> lower', '1 allowed, 0 errors']),
    ('stale allowance', {}, '| `core/ir/ir.cpp` | `schedlab/lower/lower.h` | moves in issue 99 |',
     1, ['stale allowance core/ir/ir.cpp includes "schedlab/lower/lower.h"']),
    ('sweep file of no role', {'core/sweep/orphan.cpp': '\n'}, '', 1,
     ['core/sweep/orphan.cpp: a core/sweep file outside a role folder']),
    ('sweep header of no role', {'core/include/schedlab/sweep/orphan.h': '\n'}, '', 1,
     ['core/include/schedlab/sweep/orphan.h: a core/sweep file outside a role folder']),
    ('sweep role of no row', {'core/sweep/misc/a.cpp': '#include "schedlab/base/error.h"\n'}, '', 1,
     ['core/sweep/misc/a.cpp:1: module sweep/misc is not in docs/architecture.md']),
    ('private dependency in a public header',
     {'core/include/schedlab/ir/ir.h': '#pragma once\n#include <yaml-cpp/yaml.h>\n'}, '', 1,
     ['core/include/schedlab/ir/ir.h:2: a public header includes #include <yaml-cpp/yaml.h>']),
    ('MPI in a public header',
     {'core/include/schedlab/runtime/communicator.h': '#pragma once\n#include <mpi.h>\n'}, '', 1,
     ['core/include/schedlab/runtime/communicator.h:2: a public header includes #include <mpi.h>']),
    ('module of no row', {'core/zzz/a.cpp': '#include "schedlab/base/error.h"\n'}, '', 1,
     ['core/zzz/a.cpp:1: module zzz is not in docs/architecture.md']),
]


def main():
    failed = 0
    for name, files, allowances, code, wants in CASES:
        got_code, out = run(files, allowances)
        missing = [w for w in wants if w not in out]
        if got_code != code or missing:
            failed += 1
            print('FAIL %s: exit %d (expected %d), missing %r in:\n%s' % (name, got_code, code,
                                                                          missing, out))
        else:
            print('ok   %s' % name)
    print('%d of %d cases failed' % (failed, len(CASES)))
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
