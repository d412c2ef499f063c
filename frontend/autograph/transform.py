"""Autograph, transform: statements and expressions become calls of the helpers.

In: a normalized function definition.
Out: the same definition where each if/for/while is nested functions plus an
`ag__.if_stmt` / `for_stmt` / `while_stmt` call, `and`/`or`/`not`/`a if c else b`
call `ag__.and_` / ..., and every call `f(...)` is `ag__.call(f)(...)`.
"""

from __future__ import annotations

import ast
from typing import Sequence

from kiln.autograph.analysis import (
    Liveness,
    definitely_assigned,
    find_first,
    python_containers,
    python_side_effect,
    stored_names,
    tail_returns,
    tail_returns_bodies,
    unconvertible_reason,
    walk_scope,
)
from kiln.autograph.normalization import CONTEXT_NAME, FreshNames


def _ag(attr: str) -> ast.expr:
    return ast.Attribute(ast.Name(CONTEXT_NAME, ast.Load()), attr, ast.Load())


def _call(attr: str, *args: ast.expr, **keywords: ast.expr) -> ast.Call:
    return ast.Call(_ag(attr), list(args), [ast.keyword(k, v) for k, v in keywords.items()])


def _str_tuple(names: Sequence[str]) -> ast.expr:
    return ast.Tuple([ast.Constant(n) for n in names], ast.Load())


def arguments_node(names: Sequence[str]) -> ast.arguments:
    return ast.arguments(posonlyargs=[], args=[ast.arg(n) for n in names], vararg=None, kwonlyargs=[],
                         kw_defaults=[], kwarg=None, defaults=[])


def _function(name: str, params: Sequence[str], body: list, at: ast.AST) -> ast.FunctionDef:
    fn = ast.FunctionDef(name=name, args=arguments_node(params), body=body or [ast.Pass()], decorator_list=[],
                         returns=None, type_comment=None)
    return ast.copy_location(fn, at)


def _return_tuple(names: Sequence[str], at: ast.AST) -> ast.stmt:
    return ast.copy_location(ast.Return(ast.Tuple([ast.Name(n, ast.Load()) for n in names], ast.Load())), at)


def _unpack(names: Sequence[str], value: ast.expr, at: ast.AST) -> ast.stmt:
    if not names:
        return ast.copy_location(ast.Expr(value), at)
    target = ast.Tuple([ast.Name(n, ast.Store()) for n in names], ast.Store())
    assign = ast.copy_location(ast.Assign([target], value), at)
    assign.kiln_generated = True  # unpacks the helpers' own tuples: UnpackWrapper leaves it alone
    return assign


class ExpressionConverter(ast.NodeTransformer):
    """`and` / `or` / `not` / `a if c else b` / `a < b < c` → ag__.and_ / or_ /
    not_ / ifexp / compare_chain."""

    def __init__(self, filename: str):
        self.filename = filename

    def visit_BoolOp(self, node):
        self.generic_visit(node)
        helper = "and_" if isinstance(node.op, ast.And) else "or_"
        result = node.values[-1]
        for value in reversed(node.values[:-1]):
            result = _call(helper, _thunk(value), _thunk(result))
        return ast.copy_location(result, node)

    def visit_Compare(self, node):
        """`a < b <= c` → ag__.compare_chain: Python evaluates `b` once and
        stops at the first false link; a traced link joins the rest as `and`."""
        self.generic_visit(node)
        if len(node.ops) == 1:
            return node
        operands = ast.Tuple([_thunk(e) for e in [node.left, *node.comparators]], ast.Load())
        ops = _str_tuple([type(op).__name__ for op in node.ops])
        return ast.copy_location(_call("compare_chain", operands, ops), node)

    def visit_UnaryOp(self, node):
        self.generic_visit(node)
        if isinstance(node.op, ast.Not):
            return ast.copy_location(_call("not_", node.operand), node)
        return node

    def visit_IfExp(self, node):
        self.generic_visit(node)
        where = ast.Constant(f"{self.filename}:{node.lineno}")
        return ast.copy_location(_call("ifexp", node.test, _thunk(node.body), _thunk(node.orelse), where), node)


def _thunk(expr: ast.expr) -> ast.expr:
    return ast.copy_location(ast.Lambda(arguments_node([]), expr), expr)


def _convert_iter(expr: ast.expr) -> ast.expr:
    """range / enumerate / zip / reversed calls of a for statement → ag__.range_ / ..."""
    helpers = {"range": "range_", "enumerate": "enumerate_", "zip": "zip_", "reversed": "reversed_"}
    if not (isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and expr.func.id in helpers):
        return expr
    if any(isinstance(a, ast.Starred) for a in expr.args):
        return expr
    args = [_convert_iter(a) for a in expr.args] if expr.func.id != "range" else expr.args
    call = _call(helpers[expr.func.id], ast.Name(expr.func.id, ast.Load()), *args)
    call.keywords = expr.keywords
    return ast.copy_location(call, expr)


class UnpackWrapper(ast.NodeTransformer):
    """`a, b, c = v` → `a, b, c = ag__.unpack(v, 3)`: a traced row whose
    length is only known at run time unpacks with a run-time check (nested
    targets `(a, b), c = v` → `ag__.unpack(v, ((None, None), None))`)."""

    def visit_Assign(self, node):
        self.generic_visit(node)
        if (len(node.targets) != 1 or not isinstance(node.targets[0], (ast.Tuple, ast.List))
                or getattr(node, "kiln_generated", False)):
            return node
        elts = node.targets[0].elts
        nested = any(isinstance(e, (ast.Tuple, ast.List)) for e in elts)
        if any(isinstance(e, ast.Starred) for e in elts) or (isinstance(node.value, (ast.Tuple, ast.List))
                                                             and not nested):
            return node
        targets = _unpack_targets(node.targets[0]) if nested else ast.Constant(len(elts))
        node.value = ast.copy_location(_call("unpack", node.value, targets), node.value)
        return node


def _unpack_targets(target: ast.expr) -> ast.expr:
    """`(a, b), c` → `((None, None), None)`: ag__.unpack's picture of nested targets
    (a starred one stays Python's: None, as a plain name)."""
    if isinstance(target, (ast.Tuple, ast.List)) and not any(isinstance(e, ast.Starred) for e in target.elts):
        return ast.Tuple([_unpack_targets(e) for e in target.elts], ast.Load())
    return ast.Constant(None)


class CallWrapper(ast.NodeTransformer):
    """`f(...)` → `ag__.call(f)(...)` so user functions are converted when called."""

    def visit_Call(self, node):
        self.generic_visit(node)
        func = node.func
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == CONTEXT_NAME:
            return node
        node.func = ast.copy_location(_call("call", func), func)
        return node


class Converter:
    """Rewrites each if/for/while of a function body (and of nested defs)
    into nested functions and an `ag__` call that carries the live names."""

    def __init__(self, filename: str, names: FreshNames):
        self.filename = filename
        self.names = names
        self.scoped: set = set()  # global/nonlocal names of the function being converted
        self.containers: set = set()  # names bound to Python lists/dicts/sets here or in enclosing defs

    def where(self, node: ast.AST) -> str:
        return f"{self.filename}:{node.lineno}"

    def function(self, fn: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        Liveness(annotate=True).block(fn.body, set())
        a = fn.args
        params = {x.arg for x in a.posonlyargs + a.args + a.kwonlyargs}
        params |= {x.arg for x in (a.vararg, a.kwarg) if x is not None}
        scoped = set()
        for node in walk_scope(fn.body):
            if isinstance(node, (ast.Global, ast.Nonlocal)):
                scoped.update(node.names)
        saved, self.scoped = self.scoped, scoped
        saved_containers, self.containers = self.containers, self.containers | python_containers(fn)
        fn.body = self.block(fn.body, params)
        self.scoped, self.containers = saved, saved_containers

    def block(self, stmts: Sequence[ast.stmt], defined: set) -> list:
        out: list = []
        defined = set(defined)
        for s in stmts:
            new, assigned = self.stmt(s, defined)
            out.extend(new)
            defined |= assigned
        return out

    def stmt(self, s: ast.stmt, defined: set) -> tuple[list, set]:
        if isinstance(s, ast.If):
            return self.if_stmt(s, defined)
        if isinstance(s, ast.For):
            return self.for_stmt(s, defined)
        if isinstance(s, ast.While):
            return self.while_stmt(s, defined)
        if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)):
            self.function(s)
            return [s], {s.name}
        if isinstance(s, (ast.With, ast.AsyncWith)):
            s.body = self.block(s.body, defined)
        elif isinstance(s, ast.Try):
            s.body = self.block(s.body, defined)
            s.orelse = self.block(s.orelse, defined)
            s.finalbody = self.block(s.finalbody, defined)
            for h in s.handlers:
                h.body = self.block(h.body, defined)
        return [s], definitely_assigned(s)

    # --- helpers
    def load(self, name: str, defined: set, at: ast.AST) -> ast.expr:
        if name in defined:
            return ast.Name(name, ast.Load())
        read = ast.Lambda(arguments_node([]), ast.Name(name, ast.Load()))
        return ast.copy_location(_call("ld", read, ast.Constant(name)), at)

    def loads(self, names: Sequence[str], defined: set, at: ast.AST) -> ast.expr:
        return ast.Tuple([self.load(n, defined, at) for n in names], ast.Load())

    # --- if
    def if_stmt(self, s: ast.If, defined: set) -> tuple[list, set]:
        where = self.where(s)
        returning = tail_returns(s.body) and tail_returns(s.orelse)
        reason = None
        if not returning:
            reason = unconvertible_reason(s.body + s.orelse)
            if reason is None and find_first(s.body + s.orelse, (ast.Break, ast.Continue), stop_at_loops=True):
                reason = "it contains break/continue that autograph could not turn into flags"
        else:
            rest = tail_returns_bodies(s)
            reason = unconvertible_reason(rest)
            if reason is None and find_first(rest, (ast.Break, ast.Continue), stop_at_loops=True):
                reason = "it contains break/continue"
        if reason is not None:
            s.test = ast.copy_location(_call("py_cond", s.test, ast.Constant(where), ast.Constant(reason)), s.test)
            s.body = self.block(s.body, defined)
            s.orelse = self.block(s.orelse, defined)
            return [s], definitely_assigned(s)
        assigned = (stored_names(s.body) | stored_names(s.orelse)) - self.scoped
        outputs = [] if returning else sorted(assigned & s.kiln_live_out)
        inputs = sorted(set(outputs) | (assigned & s.kiln_exposed))
        inner = defined | set(inputs)
        true_name, false_name = self.names.fresh("if_true"), self.names.fresh("if_false")
        true_body = self.block(s.body, inner)
        false_body = self.block(s.orelse, inner)
        if not returning:
            true_body.append(_return_tuple(outputs, s))
            false_body.append(_return_tuple(outputs, s))
        call = _call("if_stmt", s.test, ast.Name(true_name, ast.Load()),
                     ast.Name(false_name, ast.Load()), self.loads(inputs, defined, s), _str_tuple(outputs),
                     ast.Constant(where))
        # Where the call runs is the `if` line: kiln names it in messages.
        ast.copy_location(call, s.test)
        if returning:
            call.keywords.append(ast.keyword("returns", ast.Constant(True)))
            if getattr(s, "kiln_loop_return", False):
                call.keywords.append(ast.keyword("loop_return", ast.Constant(True)))
            last = ast.copy_location(ast.Return(call), s)
        else:
            last = _unpack(outputs, call, s)
        return [_function(true_name, inputs, true_body, s), _function(false_name, inputs, false_body, s),
                last], set(outputs)

    # --- loops
    def loop_reason(self, s: ast.For | ast.While) -> str | None:
        reason = unconvertible_reason(s.body)
        if reason is None and find_first(s.body, (ast.Break, ast.Continue), stop_at_loops=True) is not None:
            reason = "it uses break/continue inside a `with`/`try` block"
        return reason

    def for_stmt(self, s: ast.For, defined: set) -> tuple[list, set]:
        where = self.where(s)
        reason = self.loop_reason(s)
        if reason is not None:
            s.iter = ast.copy_location(_call("py_iter", _convert_iter(s.iter), ast.Constant(where), ast.Constant(reason)), s.iter)
            s.body = self.block(s.body, defined)
            s.orelse = self.block(s.orelse, defined)
            return [s], set()
        brk = getattr(s, "kiln_break_flag", None)
        assigned = (stored_names(s.body) | stored_names([s.target])) - self.scoped
        carried = sorted(assigned & s.kiln_live_head)
        if brk is not None and brk not in carried:
            carried.append(brk)
        item = self.names.fresh("item")
        body_name = self.names.fresh("for_body")
        target_assign = ast.copy_location(ast.Assign([s.target], ast.Name(item, ast.Load())), s.target)
        body = [target_assign] + self.block(s.body, defined | set(carried) | stored_names([s.target]))
        body.append(_return_tuple(carried, s))
        call = _call("for_stmt", _convert_iter(s.iter), ast.Name(body_name, ast.Load()),
                     self.loads(carried, defined, s), _str_tuple(carried), ast.Constant(where))
        ast.copy_location(call, s.iter)
        call.keywords.append(ast.keyword("break_flag", ast.Constant(carried.index(brk) if brk is not None else None)))
        if isinstance(s.target, ast.Name):
            call.keywords.append(ast.keyword("target", ast.Constant(s.target.id)))
        effect = python_side_effect(s.body, self.containers)
        if effect is not None:
            call.keywords.append(ast.keyword("python_reason", ast.Constant(effect)))
        _add_container_effect(call, s, self.containers)
        return [_function(body_name, [item] + carried, body, s), _unpack(carried, call, s)], set(carried)

    def while_stmt(self, s: ast.While, defined: set) -> tuple[list, set]:
        where = self.where(s)
        reason = self.loop_reason(s)
        if reason is None and any(isinstance(n, ast.NamedExpr) for n in ast.walk(s.test)):
            reason = "its condition assigns a variable with `:=`"
        if reason is not None or s.orelse:
            s.test = ast.copy_location(_call("py_cond", s.test, ast.Constant(where),
                                             ast.Constant(reason or "it has an `else` clause")), s.test)
            s.body = self.block(s.body, defined)
            s.orelse = self.block(s.orelse, defined)
            return [s], set()
        assigned = stored_names(s.body) - self.scoped
        carried = sorted(assigned & s.kiln_live_head)
        cond_name, body_name = self.names.fresh("while_cond"), self.names.fresh("while_body")
        cond_fn = _function(cond_name, carried, [ast.copy_location(ast.Return(s.test), s.test)], s)
        body = self.block(s.body, defined | set(carried))
        body.append(_return_tuple(carried, s))
        call = _call("while_stmt", ast.Name(cond_name, ast.Load()), ast.Name(body_name, ast.Load()),
                     self.loads(carried, defined, s), _str_tuple(carried), ast.Constant(where))
        ast.copy_location(call, s.test)
        _add_container_effect(call, s, self.containers)
        return [cond_fn, _function(body_name, carried, body, s), _unpack(carried, call, s)], set(carried)


# Methods of list, dict and set that change the container in place.
_MUTATORS = frozenset({"append", "extend", "insert", "pop", "remove", "clear", "update", "add", "discard",
                       "setdefault", "popitem"})


def _container_effect(body: Sequence[ast.stmt], containers: set) -> str | None:
    """How a loop body changes one of the function's Python containers (`out.append(v)`,
    `d[k] = v` on a name bound to a list/dict/set literal), or None: a compiled loop
    would do that once, while tracing, not once per iteration."""
    for node in walk_scope(body):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and isinstance(node.func.value, ast.Name) and node.func.value.id in containers
                and node.func.attr in _MUTATORS):
            return f"it calls {node.func.value.id}.{node.func.attr}() on a Python container"
        if isinstance(node, (ast.Assign, ast.AugAssign)):
            for t in (node.targets if isinstance(node, ast.Assign) else [node.target]):
                if isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name) and t.value.id in containers:
                    return f"it stores into the Python container {t.value.id!r}"
    return None


def _add_container_effect(call: ast.Call, s: ast.stmt, containers: set) -> None:
    effect = _container_effect(s.body, containers)
    if effect is not None:
        call.keywords.append(ast.keyword("container_effect", ast.Constant(effect)))
