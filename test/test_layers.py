"""The layers of kiln's source: no import cycles (function-level imports
included), no back-edges from the compiler or runtime into the tracer, and
no source file over 600 lines.

The import graph is read from the sources with `ast` (every `import` and
`from ... import`, at any depth), so an import hidden inside a function
counts like one at the top of the module; only imports under
`if TYPE_CHECKING:` (annotations, never run) are left out.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# Source folder -> import name (pyproject.toml's package-dir).
PACKAGES = {"frontend": "kiln", "compiler": "kiln.compiler", "dialects": "kiln.dialects", "runtime": "kiln.runtime"}
MAX_LINES = 600
# Frontend modules the compiler, the dialects and the runtime may import: the
# error classes, the IR vocabulary (avals, jaxprs) and the primitives whose
# rules the lowering registers. Everything else in the frontend is the tracer.
FRONTEND_FOR_LOWER_LAYERS = ("kiln.errors", "kiln.core", "kiln.tree", "kiln.primitives")
# What each lower layer may import from the frontend.
ALLOWED_FRONTEND = {
    "kiln.compiler": FRONTEND_FOR_LOWER_LAYERS,
    "kiln.dialects": ("kiln.errors",),
    "kiln.runtime": ("kiln.errors", "kiln.tree"),
}


def source_modules() -> dict[str, Path]:
    """Import name -> file, for every module of the kiln package."""
    modules = {}
    for folder, package in PACKAGES.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            parts = list(path.relative_to(ROOT / folder).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            modules[".".join([package, *parts])] = path
    return modules


def _resolve(name: str, modules: dict[str, Path]) -> str | None:
    while name not in modules and "." in name:
        name = name.rsplit(".", 1)[0]
    return name if name in modules else None


def _runtime_nodes(tree: ast.AST):
    """Every node of `tree` except those under `if TYPE_CHECKING:` (imports
    for annotations only, never executed)."""
    stack = [tree]
    while stack:
        node = stack.pop()
        yield node
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and isinstance(child.test, ast.Name) and child.test.id == "TYPE_CHECKING":
                stack.extend(child.orelse)
                continue
            stack.append(child)


def import_graph() -> dict[str, set[str]]:
    """Module -> the kiln modules it imports anywhere in its source.
    `from kiln.x import y` is an edge to `kiln.x.y` when that is a module,
    else to `kiln.x`."""
    modules = source_modules()
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in _runtime_nodes(ast.parse(path.read_text(), str(path))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                    base = f"{anchor}.{base}" if base else anchor
                targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base
                           for alias in node.names]
            for target in targets:
                resolved = _resolve(target, modules) if target.startswith("kiln") else None
                if resolved and resolved != name:
                    graph[name].add(resolved)
    return graph


def import_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, successors = work[-1]
            advanced = False
            for succ in successors:
                if succ not in index:
                    index[succ] = low[succ] = len(index)
                    stack.append(succ)
                    on_stack.add(succ)
                    work.append((succ, iter(sorted(graph[succ]))))
                    advanced = True
                    break
                if succ in on_stack:
                    low[node] = min(low[node], index[succ])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    cycles.append(sorted(component))
    return cycles


def _cycle_path(graph: dict[str, set[str]], component: list[str]) -> str:
    """One concrete cycle inside a component, for the failure message."""
    members = set(component)
    start = component[0]
    path = [start]
    seen = {start}
    node = start
    while True:
        node = sorted(graph[node] & members)[0]
        path.append(node)
        if node in seen:
            return " -> ".join(path[path.index(node):])
        seen.add(node)


def test_no_import_cycles():
    graph = import_graph()
    cycles = import_cycles(graph)
    assert not cycles, "import cycles (function-level imports count):\n" + "\n".join(
        _cycle_path(graph, c) for c in cycles)


def test_cycle_finder_sees_function_level_imports(tmp_path):
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert import_cycles(graph) == [["a", "b", "c"]]
    assert import_cycles({"a": {"b"}, "b": set()}) == []


@pytest.mark.parametrize("layer", sorted(ALLOWED_FRONTEND))
def test_lower_layers_do_not_import_the_tracer(layer):
    frontend = {name for name in source_modules() if name.split(".")[1:2] not in (["compiler"], ["dialects"],
                                                                                      ["runtime"])}
    allowed = ALLOWED_FRONTEND[layer]
    bad = sorted(
        f"{module} imports {target}"
        for module, targets in import_graph().items()
        if module == layer or module.startswith(layer + ".")
        for target in targets
        if target in frontend and not any(target == a or target.startswith(a + ".") for a in allowed)
    )
    assert not bad, f"{layer} may import only {', '.join(allowed)} from the frontend:\n" + "\n".join(bad)


@pytest.mark.parametrize("statement", [
    "import kiln.compiler.opt",
    "import kiln.runtime.aot",
    "import kiln.compiler.pipeline",
])
def test_tools_do_not_import_the_tracer(statement):
    code = (f"import sys; {statement}; "
            "loaded = sorted(m for m in sys.modules if m in ('kiln.tracing', 'kiln.numpy', 'kiln.autograph'));"
            "print(','.join(loaded))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=os.environ.copy())
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "", f"{statement!r} imports the tracer: {out.stdout.strip()}"


def test_kiln_load_does_not_import_the_tracer():
    code = ("import sys, kiln; kiln.load; "
            "print(','.join(sorted(m for m in sys.modules if m in ('kiln.tracing', 'kiln.numpy'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "", f"kiln.load imports the tracer: {out.stdout.strip()}"


def test_no_source_file_over_the_limit():
    long = sorted(f"{path.relative_to(ROOT)}: {n} lines" for path in source_modules().values()
                  if (n := len(path.read_text().splitlines())) > MAX_LINES)
    assert not long, f"source files over {MAX_LINES} lines (split them along their seams):\n" + "\n".join(long)
