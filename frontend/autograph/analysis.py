"""Autograph, analysis: facts about a function's AST that the rewriting needs.

In: statements of one function body (ast nodes).
Out: the names a statement binds or reads, liveness annotations on each
if/for/while (`kiln_live_out`, `kiln_live_head`, `kiln_exposed`), and why a
statement must stay Python (`unconvertible_reason`).
"""

from __future__ import annotations

import ast
from collections import deque
from typing import Sequence


def stored_names(nodes: Sequence[ast.AST]) -> set:
    """Names bound in this scope by `nodes` (not inside nested functions,
    lambdas, classes or comprehensions)."""
    found: set = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            found.add(node.id)
            return
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found.add(node.name)
            return
        if isinstance(node, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            return
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            found.update((a.asname or a.name).split(".")[0] for a in node.names)
            return
        if isinstance(node, ast.ExceptHandler) and node.name:
            found.add(node.name)
        if isinstance(node, ast.NamedExpr):
            found.add(node.target.id)
        for child in ast.iter_child_nodes(node):
            visit(child)

    for n in nodes:
        visit(n)
    return found


def loaded_names(node: ast.AST | None) -> set:
    """Names read anywhere in `node` (nested scopes included: an over-approximation)."""
    if node is None:
        return set()
    found = set()
    for n in ast.walk(node):
        if isinstance(n, ast.Name):
            if isinstance(n.ctx, ast.Load):
                found.add(n.id)
        elif isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Name):
            found.add(n.target.id)
    return found


def _kills(stmt: ast.stmt) -> set:
    """Names an unconditional simple statement surely overwrites."""
    targets: list = []
    if isinstance(stmt, ast.Assign):
        targets = stmt.targets
    elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
        targets = [stmt.target]
    names = set()
    for t in targets:
        for n in ast.walk(t):
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                names.add(n.id)
    return names


class Liveness:
    """Backward liveness over one function body. Annotates each If/For/While
    with `kiln_live_out` (names read after it) and loops with
    `kiln_live_head` (names live at the top of each iteration)."""

    def __init__(self, annotate: bool):
        self.annotate = annotate
        self.loops: list = []  # (live after the loop, live at its head)
        # A loop's fixpoint analyses its body two or three times, so nested
        # loops multiplied: 8 nested loops (scattering_self_energies) ran the
        # innermost body 3**8 times, ~2 s of tracing. A loop's head depends
        # only on the names live after it (its own break and continue
        # targets are pushed inside), so an analysis without annotations
        # computes it once per such set; the annotating analysis asks it
        # for each loop's head and then walks every statement once.
        self._heads: dict = {}
        self._loaded: dict = {}
        self._quiet: Liveness | None = None

    def _analysis(self) -> "Liveness":
        """The non-annotating analysis whose loop heads this one reuses."""
        if not self.annotate:
            return self
        if self._quiet is None:
            self._quiet = type(self)(annotate=False)
        return self._quiet

    def loaded(self, node: ast.AST | None) -> set:
        """`loaded_names(node)`, computed once per node."""
        if node is None:
            return set()
        found = self._loaded.get(id(node))
        if found is None:
            found = self._loaded[id(node)] = frozenset(loaded_names(node))
        return set(found)

    def block(self, stmts: Sequence[ast.stmt], live_out: set) -> set:
        live = set(live_out)
        for s in reversed(stmts):
            live = self.stmt(s, live)
        return live

    def stmt(self, s: ast.stmt, live: set) -> set:
        if isinstance(s, ast.If):
            if self.annotate:
                s.kiln_live_out = set(live)
                quiet = self._analysis()
                s.kiln_exposed = quiet.block(s.body, set()) | quiet.block(s.orelse, set())
            return self.loaded(s.test) | self.block(s.body, live) | self.block(s.orelse, live)
        if isinstance(s, (ast.For, ast.While)):
            return self.loop(s, live)
        if isinstance(s, ast.Break):
            return set(self.loops[-1][0]) if self.loops else set(live)
        if isinstance(s, ast.Continue):
            return set(self.loops[-1][1]) if self.loops else set(live)
        if isinstance(s, (ast.Return, ast.Raise)):
            return self.loaded(s)
        if isinstance(s, ast.Try):
            final = self.block(s.finalbody, live)
            handlers = set()
            for h in s.handlers:
                handlers |= self.block(h.body, final) | self.loaded(h.type)
            body = self.block(s.body, self.block(s.orelse, final) | handlers)
            return body | handlers
        if isinstance(s, (ast.With, ast.AsyncWith)):
            inner = self.block(s.body, live) - stored_names([i.optional_vars for i in s.items if i.optional_vars])
            return inner | set().union(*(self.loaded(i.context_expr) for i in s.items))
        if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            return (live - {s.name}) | self.loaded(s)
        return (live - _kills(s)) | self.loaded(s)

    def loop(self, s: ast.For | ast.While, live: set) -> set:
        head = self._analysis().head(s, live)
        if self.annotate:
            s.kiln_live_out = set(live)
            s.kiln_live_head = set(head)
            # Once with the final head, so nested statements carry it.
            self.loops.append((live, head))
            self.block(s.body, head)
            self.loops.pop()
        return head | (self.loaded(s.iter) if isinstance(s, ast.For) else set())

    def head(self, s: ast.For | ast.While, live: set) -> set:
        """Names live at the top of each iteration of `s` when `live` are
        live after it: the loop's fixpoint, computed once per `live`."""
        key = (id(s), frozenset(live))
        head = self._heads.get(key)
        if head is None:
            head = self._heads[key] = frozenset(self._fixpoint(s, live))
        return set(head)

    def _fixpoint(self, s: ast.For | ast.While, live: set) -> set:
        exit_live = self.block(s.orelse, live) | live
        head = set(exit_live)
        if isinstance(s, ast.While):
            head |= self.loaded(s.test)
        if getattr(s, "kiln_break_flag", None):
            head.add(s.kiln_break_flag)  # read by for_stmt after every iteration
        while True:
            self.loops.append((live, head))
            body_in = self.block(s.body, head)
            self.loops.pop()
            if isinstance(s, ast.For):
                body_in = (body_in - stored_names([s.target])) | self.loaded(s.target)
            new_head = head | body_in
            if new_head == head:
                return head
            head = new_head


def definitely_assigned(s: ast.stmt) -> set:
    """Names surely bound after `s` runs (conservative)."""
    if isinstance(s, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Import, ast.ImportFrom,
                      ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return stored_names([s])
    if isinstance(s, (ast.With, ast.AsyncWith)):
        return stored_names([i.optional_vars for i in s.items if i.optional_vars]) | _block_assigned(s.body)
    if isinstance(s, ast.If):
        return _block_assigned(s.body) & _block_assigned(s.orelse)
    return set()


def _block_assigned(stmts: Sequence[ast.stmt]) -> set:
    out: set = set()
    for s in stmts:
        out |= definitely_assigned(s)
    return out


def walk_scope(nodes: Sequence[ast.AST]):
    """ast.walk over statements, not entering nested functions or classes."""
    stack = list(nodes)
    while stack:
        node = stack.pop()
        yield node
        for child in ast.iter_child_nodes(node):
            if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
                stack.append(child)


def find_first(nodes: Sequence[ast.AST], kinds: tuple, stop_at_loops: bool = False) -> ast.AST | None:
    """The first node of `kinds` in this scope (optionally not inside nested loops)."""
    queue = deque(nodes)  # breadth first: the outermost match
    while queue:
        node = queue.popleft()
        if isinstance(node, kinds):
            return node
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
                continue
            if stop_at_loops and isinstance(child, (ast.For, ast.While, ast.AsyncFor)):
                continue
            queue.append(child)
    return None


def unconvertible_reason(body: Sequence[ast.stmt]) -> str | None:
    """Why a statement with this body must stay Python, or None."""
    found = {type(node) for node in walk_scope(body)}  # one walk for every check
    for kinds, reason in _UNCONVERTIBLE:
        if any(kind in found for kind in kinds):
            return reason
    return None


# (node kinds, reason) in the order unconvertible_reason reports them.
_UNCONVERTIBLE = (((ast.Return,), "it contains `return`"), ((ast.Raise,), "it contains `raise`"),
                  ((ast.Yield, ast.YieldFrom), "it contains `yield`"),
                  ((ast.Global, ast.Nonlocal), "it declares global/nonlocal names"),
                  ((ast.Try,), "it contains `try`"))


def tail_returns(stmts: Sequence[ast.stmt]) -> bool:
    """Every path ends in a `return`, and `return` appears nowhere else."""
    if not stmts:
        return False
    *rest, last = stmts
    if find_first(rest, (ast.Return,)) is not None:
        return False
    if isinstance(last, ast.Return):
        return True
    return isinstance(last, ast.If) and tail_returns(last.body) and tail_returns(last.orelse)


def tail_returns_bodies(s: ast.If) -> list:
    """The statements of a returning `if` other than its tail returns/ifs."""
    out: list = []
    for block in (s.body, s.orelse):
        *rest, last = block
        out.extend(rest)
        if isinstance(last, ast.If):
            out.extend(tail_returns_bodies(last))
    return out


# Methods that change a Python container in place: a loop body calling one
# keeps its per-iteration Python meaning only when unrolled.
_CONTAINER_MUTATORS = frozenset({"append", "extend", "insert", "pop", "remove", "clear", "update", "add",
                                 "discard", "setdefault", "popitem", "appendleft", "extendleft", "popleft"})
_CONTAINER_BUILDERS = frozenset({"list", "dict", "set", "defaultdict", "OrderedDict", "deque", "Counter"})


def python_containers(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> set:
    """Names of `fn` bound to Python lists, dicts or sets (literals,
    comprehensions, list()/dict()/...)."""
    found = set()
    for node in walk_scope(fn.body):
        if not isinstance(node, (ast.Assign, ast.AnnAssign)) or node.value is None:
            continue
        value = node.value
        is_container = isinstance(value, (ast.List, ast.Dict, ast.Set, ast.ListComp, ast.DictComp, ast.SetComp))
        if isinstance(value, ast.Call):
            func = value.func
            called = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
            is_container = called in _CONTAINER_BUILDERS
        if is_container:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            found |= {t.id for t in targets if isinstance(t, ast.Name)}
    return found


def python_side_effect(body: Sequence[ast.stmt], containers: set) -> str | None:
    """Why a loop body must run once per iteration in Python (it changes
    Python state: a container, an attribute, the output), or None."""
    for node in walk_scope(body):
        if isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Name) and func.id == "print":
                return "it prints"
            if isinstance(func, ast.Attribute) and func.attr in _CONTAINER_MUTATORS:
                return f"it calls .{func.attr}()"
        targets: list = []
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Delete)):
            targets = node.targets if isinstance(node, (ast.Assign, ast.Delete)) else [node.target]
        for t in targets:
            for part in ast.walk(t):
                if isinstance(part, ast.Attribute) and isinstance(part.ctx, (ast.Store, ast.Del)):
                    return "it assigns an attribute"
                if (isinstance(part, ast.Subscript) and isinstance(part.value, ast.Name)
                        and part.value.id in containers):
                    return f"it stores into the Python container {part.value.id!r}"
    return None
