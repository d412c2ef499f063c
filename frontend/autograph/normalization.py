"""Autograph, normalization: the first rewrite of a function's AST.

In: a parsed function definition.
Out: the same definition, where `return` inside a loop became a break with a
flag and the value (returned after the loop), break/continue under `if`s flags,
a loop's `else` an `if` after it, and code after an early `return` the other branch.
"""

from __future__ import annotations

import ast
import itertools
from typing import Sequence

from kiln.autograph.analysis import find_first, unconvertible_reason, walk_scope

# The name converted code reaches the helpers by (`ag__.if_stmt`, `ag__.UNSET`).
CONTEXT_NAME = "ag__"


class FreshNames:
    """Names for the variables and functions autograph adds (`skip__1`,
    `for_body__2`): `__` and a counter keep them apart from the user's."""

    def __init__(self):
        self.counter = itertools.count(1)

    def fresh(self, kind: str) -> str:
        return f"{kind}__{next(self.counter)}"


def _assign(name: str, value: bool, at: ast.AST) -> ast.stmt:
    return ast.copy_location(ast.Assign([ast.Name(name, ast.Store())], ast.Constant(value)), at)


def _not_name(name: str, at: ast.AST) -> ast.expr:
    return ast.copy_location(ast.UnaryOp(ast.Not(), ast.Name(name, ast.Load())), at)


def _always_exits(stmts: Sequence[ast.stmt]) -> bool:
    """The block ends in `return` on every path."""
    if not stmts:
        return False
    last = stmts[-1]
    if isinstance(last, ast.Return):
        return True
    if isinstance(last, ast.If):
        return _always_exits(last.body) and _always_exits(last.orelse)
    return False


def _only_under_ifs(stmts: Sequence[ast.stmt]) -> bool:
    """Every `return` of this block sits in it or under `if`s only."""
    for s in stmts:
        if isinstance(s, ast.If):
            if not (_only_under_ifs(s.body) and _only_under_ifs(s.orelse)):
                return False
        elif not isinstance(s, ast.Return) and find_first([s], (ast.Return,)) is not None:
            return False
    return True


def _returns_as_breaks(stmts: Sequence[ast.stmt], flag: str, value: str | None) -> list:
    out: list = []
    for s in stmts:
        if isinstance(s, ast.Return):
            if value is not None:
                result = s.value if s.value is not None else ast.copy_location(ast.Constant(None), s)
                kept = ast.copy_location(ast.Call(ast.Attribute(ast.Name(CONTEXT_NAME, ast.Load()), "returned_value",
                                                                ast.Load()), [result], []), result)
                out.append(ast.copy_location(ast.Assign([ast.Name(value, ast.Store())], kept), s))
            out += [_assign(flag, True, s), ast.copy_location(ast.Break(), s)]
            return out  # what follows a return never runs
        if isinstance(s, ast.If):
            s.body = _returns_as_breaks(s.body, flag, value)
            s.orelse = _returns_as_breaks(s.orelse, flag, value)
        out.append(s)
    return out


def _value_or_none(value: str | None, at: ast.AST) -> ast.expr:
    return ast.copy_location(ast.Name(value, ast.Load()) if value is not None else ast.Constant(None), at)


def _return_if(flag: str, value: str | None, at: ast.AST) -> ast.stmt:
    """`if returned: return value` after a loop whose body returns."""
    check = ast.copy_location(ast.If(ast.Name(flag, ast.Load()),
                                     [ast.copy_location(ast.Return(_value_or_none(value, at)), at)], []), at)
    check.kiln_loop_return = True  # errors of this `if` name the loop's `return`
    return check


def _exits_by_return_only(s: ast.For | ast.While) -> bool:
    """`while True:` without a `break` of its own: it ends only by `return`."""
    return (isinstance(s, ast.While) and isinstance(s.test, ast.Constant) and bool(s.test.value)
            and not s.orelse and find_first(s.body, (ast.Break,), stop_at_loops=True) is None)


class Normalizer:
    """Rewrites a function body so that structured control flow can express it."""

    def __init__(self, names: FreshNames):
        self.names = names
        # (statements before, flag, value) of loops in `if` branches whose `return`
        # the block holding the `if` performs (see `block`).
        self.hoisted: list = []

    def function(self, fn: ast.FunctionDef) -> None:
        body = fn.body
        if find_first(body, (ast.Return,)) is not None and not _always_exits(body):
            body = body + [ast.copy_location(ast.Return(ast.Constant(None)), body[-1])]
        fn.body = self.block(body)

    def block(self, stmts: Sequence[ast.stmt], branch: bool = False) -> list:
        """Normalize a block; `branch`: it is an `if` branch, where a loop's `return`
        skips the rest of the branch and the block around the `if` returns."""
        out: list = []
        stmts = list(stmts)
        k = -1
        while k + 1 < len(stmts):
            k += 1
            s = stmts[k]
            if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.function(s)
                out.append(s)
            elif isinstance(s, ast.If):
                rest = stmts[k + 1:]
                if rest and _always_exits(s.body) and not _always_exits(s.orelse):
                    s.orelse = s.orelse + rest
                    rest = []
                elif rest and _always_exits(s.orelse) and not _always_exits(s.body):
                    s.body = s.body + rest
                    rest = []
                saved, self.hoisted = self.hoisted, []
                s.body = self.block(s.body, branch=True)
                s.orelse = self.block(s.orelse, branch=True)
                hoisted, self.hoisted = self.hoisted, saved
                if hoisted and branch:
                    # This `if` is itself in a branch: the block around that one returns.
                    self.hoisted.extend(hoisted)
                    out.append(s)
                    if rest:
                        out.append(self._skip_when_returned(rest, [flag for _, flag, _ in hoisted]))
                    return out
                for before, _, _ in hoisted:
                    out.extend(before)
                out.append(s)
                returning = [_return_if(flag, value, s) for _, flag, value in hoisted]
                if not rest and not returning:
                    return out
                stmts[k + 1:] = returning + rest
            elif isinstance(s, (ast.For, ast.While)):
                s.body = self.block(s.body)
                s.orelse = self.block(s.orelse)
                exits_by_return_only = _exits_by_return_only(s)
                before, flag, value = self.returns_to_breaks(s)
                loop, after = self.loop(s)
                if flag is not None and branch and not _always_exits(after + stmts[k + 1:]):
                    # The branch may fall through: the block around this `if` branch returns
                    # the loop's value, and the rest of the branch is skipped. (A branch that
                    # returns on every path after the loop checks the flag itself, below, so
                    # both branches of an `if c: return a` guard before the loop still return.)
                    self.hoisted.append((before, flag, value))
                    out.extend(loop)
                    rest = after + stmts[k + 1:]
                    if rest:
                        out.append(self._skip_when_returned(rest, [flag]))
                    return out
                out.extend(before + loop)
                # The `if returned: return value` of a `return` inside the loop and the
                # `if not broke:` standing for the loop's else are normalized with the
                # rest of the block (they end in a `return` / may end in one).
                if flag is None:
                    returning = []
                elif exits_by_return_only:
                    returning = [ast.copy_location(ast.Return(_value_or_none(value, s)), s)]
                else:
                    returning = [_return_if(flag, value, s)]
                stmts[k + 1:k + 1] = returning + after
            elif isinstance(s, (ast.With, ast.AsyncWith)):
                s.body = self.block(s.body)
                out.append(s)
            elif isinstance(s, ast.Try):
                s.body, s.orelse, s.finalbody = self.block(s.body), self.block(s.orelse), self.block(s.finalbody)
                for h in s.handlers:
                    h.body = self.block(h.body)
                out.append(s)
            else:
                out.append(s)
        return out

    def _skip_when_returned(self, rest: list, flags: list) -> ast.stmt:
        """`if not returned: rest` (nested, one `if` per flag), `rest` normalized as a branch."""
        body = self.block(rest, branch=True)
        for flag in reversed(flags):
            body = [ast.copy_location(ast.If(_not_name(flag, rest[0]), body, []), rest[0])]
        return body[0]

    def returns_to_breaks(self, s: ast.For | ast.While) -> tuple[list, str | None, str | None]:
        """`return v` in a loop body (under `if`s only) → `value = v; returned = True;
        break`, with `returned = False; value = UNSET` before the loop; `block`
        puts `if returned: return value` after it (a nested loop's return has
        already become such an `if`, so it breaks out level by level). Returns the
        statements before the loop, the flag's and the value's names (None when
        every return is bare); the loop is unchanged (and the flag None) when it
        has no `return`, or one inside a `with`/`try` or a loop that stays Python."""
        returns = [n for n in walk_scope(s.body) if isinstance(n, ast.Return)]
        if not returns or not _only_under_ifs(s.body):
            return [], None, None
        flag = self.names.fresh("returned")
        valued = any(r.value is not None and not (isinstance(r.value, ast.Constant) and r.value.value is None)
                     for r in returns)
        value = self.names.fresh("retval") if valued else None
        s.body = _returns_as_breaks(s.body, flag, value)
        before = [_assign(flag, False, s)]
        if value is not None:
            unset = ast.Attribute(ast.Name(CONTEXT_NAME, ast.Load()), "UNSET", ast.Load())
            before.append(ast.copy_location(ast.Assign([ast.Name(value, ast.Store())], unset), s))
        return before, flag, value

    def loop(self, s: ast.For | ast.While) -> tuple[list, list]:
        """break/continue → flags (when they only sit under `if`s), loop else → an `if` after.
        Returns the statements up to the loop and the ones that follow it."""
        exits = self._exits(s.body)
        if exits is None or unconvertible_reason(s.body) is not None:
            return [s], []  # stays a Python loop, with its own break/continue/else
        has_break, has_continue = exits
        before: list = []
        after: list = []
        if has_break or has_continue:
            skip = self.names.fresh("skip")
            brk = self.names.fresh("broke") if has_break else None
            s.body = [_assign(skip, False, s)] + self._guard(s.body, skip, brk)
            if brk is not None:
                before.append(_assign(brk, False, s))
                if isinstance(s, ast.While):
                    s.test = ast.copy_location(ast.BoolOp(ast.And(), [_not_name(brk, s), s.test]), s.test)
                else:
                    s.kiln_break_flag = brk
        if s.orelse:
            if has_break:
                after.append(ast.copy_location(ast.If(_not_name(brk, s), s.orelse, []), s.orelse[0]))
            else:
                after.extend(s.orelse)
            s.orelse = []
        return before + [s], after

    def _exits(self, body: Sequence[ast.stmt]) -> tuple | None:
        """(has break, has continue) of this loop, or None when one sits
        somewhere other than under `if`s (then the loop stays Python)."""
        has_break = has_continue = False
        stack = [(s, True) for s in body]
        while stack:
            node, reachable_by_ifs = stack.pop()
            if isinstance(node, (ast.For, ast.While, ast.AsyncFor, ast.FunctionDef, ast.AsyncFunctionDef,
                                 ast.ClassDef, ast.Lambda)):
                continue
            if isinstance(node, (ast.Break, ast.Continue)):
                if not reachable_by_ifs:
                    return None
                has_break |= isinstance(node, ast.Break)
                has_continue |= isinstance(node, ast.Continue)
                continue
            nested_ok = reachable_by_ifs and isinstance(node, ast.If)
            for child in ast.iter_child_nodes(node):
                stack.append((child, nested_ok))
        return has_break, has_continue

    def _guard(self, stmts: Sequence[ast.stmt], skip: str, brk: str | None) -> list:
        out: list = []
        stmts = list(stmts)
        for k, s in enumerate(stmts):
            if isinstance(s, ast.Break):
                out += [_assign(brk, True, s), _assign(skip, True, s)]
                return out
            if isinstance(s, ast.Continue):
                out.append(_assign(skip, True, s))
                return out
            if isinstance(s, ast.If) and find_first([s], (ast.Break, ast.Continue), stop_at_loops=True) is not None:
                s.body = self._guard(s.body, skip, brk)
                s.orelse = self._guard(s.orelse, skip, brk)
                out.append(s)
                rest = self._guard(stmts[k + 1:], skip, brk)
                if rest:
                    out.append(ast.copy_location(ast.If(_not_name(skip, s), rest, []), rest[0]))
                return out
            out.append(s)
        return out
