#!/usr/bin/python3
"""Checks the includes of core/, plugin-api/, plugins/ and bench/ against the
layers of docs/architecture.md.

The doc holds two tables between HTML comment markers:
  layers      | module | layer | owns | may include |
  allowances  | file | includes | reason |   known violations, each with its reason

A module is a folder of core/ (core/<module>/ and core/include/schedlab/<module>/),
except core/sweep, whose role folders are modules of their own: core/sweep/<role>/
and core/include/schedlab/sweep/<role>/ are the module sweep/<role>.

Every #include "..." that names a file of another module (schedlab/<module>/...,
schedlab/plugin.h(pp) of plugin-api, or a relative path into another module's
folder) is an edge. The check fails, naming file:line, when
  - a file belongs to no module of the table (or a core/sweep file to no role folder),
  - an edge goes to a module its row does not list under "may include",
  - a listed module is not on a lower layer (the table contradicts itself),
  - the edges between modules form a cycle,
  - an allowance matches no include (it is stale: delete it),
  - a public header (core/include) includes a private dependency of libschedlab
    (yaml-cpp, Boost.DLL, NVRTC, XGBoost, MPI).
An include listed under allowances is reported as allowed, not as an error.

Usage: check_layers.py <repository root>    (exit 0: clean, 1: violations)
"""
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')
SOURCE_EXT = ('.h', '.hpp', '.cpp', '.cc', '.cuh', '.inc')
PRIVATE_DEP = re.compile(r'^\s*#\s*include\s*[<"](yaml-cpp/|boost/dll|nvrtc\.h|xgboost/|mpi\.h)')
SCANNED = ('core', 'plugin-api', 'plugins', 'bench')


def cells(line):
    return [c.strip() for c in line.strip().strip('|').split('|')]


def names(cell):
    return re.findall(r'`([^`]+)`', cell)


def section(text, tag, doc):
    m = re.search(r'<!-- %s:begin -->(.*?)<!-- %s:end -->' % (tag, tag), text, re.S)
    if not m:
        sys.exit('%s: no <!-- %s:begin --> ... <!-- %s:end --> table' % (doc, tag, tag))
    rows = [l for l in m.group(1).splitlines() if l.strip().startswith('|')]
    return [cells(l) for l in rows[2:]]  # past the header and the |---| line


def read_doc(root):
    doc = os.path.join(root, 'docs', 'architecture.md')
    text = open(doc, encoding='utf-8').read()
    layers, may = {}, {}
    for c in section(text, 'layers', doc):
        mod = names(c[0])[0]
        layers[mod] = int(c[1])
        may[mod] = set(names(c[3]))
    allowed = {}
    for c in section(text, 'allowances', doc):
        allowed[(names(c[0])[0], names(c[1])[0])] = c[2]
    return layers, may, allowed


def module_of(rel):
    """The module a repository file belongs to, or None when not scanned;
    'sweep?' for a core/sweep file outside a role folder."""
    parts = rel.split('/')
    if parts[0] == 'core':
        if parts[1] == 'include' and len(parts) >= 4 and parts[2] == 'schedlab':
            inside = parts[3:]
        elif len(parts) >= 3:
            inside = parts[1:]
        else:
            return None  # core/CMakeLists.txt
        if inside[0] == 'sweep':
            return 'sweep/' + inside[1] if len(inside) >= 3 else 'sweep?'
        return inside[0]
    if parts[0] in ('plugin-api', 'plugins', 'bench'):
        return parts[0]
    return None


def resolve(root, rel, inc):
    """The repository path an include names, or None (a system or library header)."""
    here = os.path.dirname(rel)
    for base in (here, 'core/include', 'plugin-api/include'):
        cand = os.path.normpath(os.path.join(base, inc))
        if os.path.isfile(os.path.join(root, cand)):
            return cand
    m = re.match(r'schedlab/([a-z_]+)/', inc)
    if m and os.path.isdir(os.path.join(root, 'core', m.group(1))):
        return 'core/include/' + inc  # a header not written yet: still that module's
    return None


def scan(root):
    edges = []  # (from module, to module, file:line, include)
    unknown = []
    for top in SCANNED:
        for dirpath, dirnames, files in os.walk(os.path.join(root, top)):
            dirnames.sort()
            for f in sorted(files):
                if not f.endswith(SOURCE_EXT):
                    continue
                rel = os.path.relpath(os.path.join(dirpath, f), root)
                mod = module_of(rel)
                if mod is None:
                    continue
                if mod == 'sweep?':
                    unknown.append('%s: a core/sweep file outside a role folder (move it into '
                                   'the folder of its role: a sweep/<role> row of docs/architecture.md)'
                                   % rel)
                    continue
                with open(os.path.join(root, rel), encoding='utf-8', errors='replace') as fh:
                    for n, line in enumerate(fh, 1):
                        if rel.startswith('core/include/') and PRIVATE_DEP.match(line):
                            unknown.append('%s:%d: a public header includes %s, a private dependency '
                                           'of libschedlab' % (rel, n, line.strip()))
                        m = INCLUDE.match(line)
                        if not m:
                            continue
                        target = resolve(root, rel, m.group(1))
                        if target is None:
                            continue
                        to = module_of(target)
                        if to is None or to == mod or to == 'sweep?':
                            continue  # a stray core/sweep file is reported as such
                        edges.append((mod, to, '%s:%d' % (rel, n), m.group(1)))
    return edges, unknown


def cycles(graph):
    """Strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else '.')
    layers, may, allowed = read_doc(root)
    errors, notes = [], []
    for mod, deps in sorted(may.items()):
        for d in sorted(deps):
            if d not in layers:
                errors.append('docs/architecture.md: %s may include %s, which has no row' % (mod, d))
            elif layers[d] >= layers[mod]:
                errors.append('docs/architecture.md: %s (layer %d) may include %s (layer %d): '
                              'not a lower layer' % (mod, layers[mod], d, layers[d]))
    edges, unknown = scan(root)
    errors += unknown
    used = set()
    graph = {}
    for frm, to, where, inc in edges:
        key = (where.rsplit(':', 1)[0], inc)
        if frm not in layers or to not in layers:
            errors.append('%s: module %s is not in docs/architecture.md\'s layers table'
                          % (where, frm if frm not in layers else to))
            continue
        if key in allowed:
            used.add(key)
            notes.append('%s: allowed: %s -> %s (%s): %s' % (where, frm, to, inc, allowed[key]))
            continue
        graph.setdefault(frm, set()).add(to)
        if to not in may[frm]:
            why = ('a higher layer' if layers[to] > layers[frm] else
                   'the same layer' if layers[to] == layers[frm] else 'not listed under may include')
            errors.append('%s: %s (layer %d) includes "%s" of %s (layer %d): %s'
                          % (where, frm, layers[frm], inc, to, layers[to], why))
    for comp in cycles(graph):
        errors.append('include cycle between modules: ' + ' <-> '.join(comp) + ' (edges: ' +
                      '; '.join('%s -> %s at %s' % (f, t, w) for f, t, w, i in edges
                                if f in comp and t in comp and (w.rsplit(':', 1)[0], i) not in allowed) + ')')
    for key in sorted(set(allowed) - used):
        errors.append('docs/architecture.md: stale allowance %s includes "%s": no such include '
                      '(delete the row)' % key)
    for n in notes:
        print(n)
    for e in errors:
        print('error: ' + e)
    mods = len({f for f, t, w, i in edges} | {t for f, t, w, i in edges})
    print('%d includes between %d modules checked against %d layers: %d allowed, %d errors'
          % (len(edges), mods, len(set(layers.values())), len(used), len(errors)))
    return 1 if errors else 0


if __name__ == '__main__':
    sys.exit(main())
