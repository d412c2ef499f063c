"""Autograph, entry: `convert`, which qjit calls on the user's function.

In: a Python function (and which called modules/functions to convert too).
Out: the function recompiled from its rewritten AST (normalization, then
transform), with the same globals, closure cells, file and line numbers.
"""

from __future__ import annotations

import ast
import inspect
import linecache
import textwrap
import types
import weakref
from typing import Any, Callable, Sequence

from kiln.autograph import loops, runtime
from kiln.autograph.normalization import FreshNames, Normalizer
from kiln.autograph.transform import (
    CONTEXT_NAME,
    CallWrapper,
    Converter,
    ExpressionConverter,
    UnpackWrapper,
    arguments_node,
)
from kiln.errors import KilnTypeError
from kiln.numpy.python_builtins import REPLACEMENTS as TRACED_BUILTINS
from kiln.trace_namespace import function_like, is_library_function
from kiln.unset_values import UNSET


class _Context:
    """The `ag__` object of converted code: the helpers, and the options
    that decide which called functions are converted too."""

    def __init__(self, include: tuple, exclude: tuple):
        self.include = include
        self.exclude = exclude

    ld = staticmethod(runtime.ld)
    and_ = staticmethod(runtime.and_)
    or_ = staticmethod(runtime.or_)
    not_ = staticmethod(runtime.not_)
    compare_chain = staticmethod(runtime.compare_chain)
    py_cond = staticmethod(runtime.py_cond)
    py_iter = staticmethod(runtime.py_iter)
    range_ = staticmethod(runtime.range_)
    enumerate_ = staticmethod(runtime.enumerate_)
    zip_ = staticmethod(runtime.zip_)
    reversed_ = staticmethod(runtime.reversed_)
    for_stmt = staticmethod(loops.for_stmt)
    while_stmt = staticmethod(loops.while_stmt)
    if_stmt = staticmethod(runtime.if_stmt)
    ifexp = staticmethod(runtime.ifexp)
    unpack = staticmethod(runtime.unpack)
    returned_value = staticmethod(runtime.returned_value)
    UNSET = UNSET

    def call(self, fn: Any) -> Any:
        """`fn`, converted when it is a user function."""
        replacement = TRACED_BUILTINS.get(fn) if _hashable(fn) else None
        if replacement is not None:
            return replacement
        if not isinstance(fn, types.FunctionType) or not _should_convert(fn, self.include, self.exclude):
            return fn
        try:
            return _convert(fn, self.include, self.exclude)
        except _NoSource:
            return fn


def _hashable(fn: Any) -> bool:
    try:
        hash(fn)
    except TypeError:
        return False
    return True


_CONVERTED_CODE: "weakref.WeakSet[types.CodeType]" = weakref.WeakSet()


def _matches(module: str, qualname: str, patterns: tuple) -> bool:
    full = f"{module}.{qualname}"
    for p in patterns:
        if module == p or module.startswith(p + ".") or full == p or full.startswith(p + "."):
            return True
    return False


def _should_convert(fn: types.FunctionType, include: tuple, exclude: tuple) -> bool:
    if fn.__code__ in _CONVERTED_CODE or fn.__name__ == "<lambda>":
        return False
    module = fn.__module__ or ""
    if _matches(module, fn.__qualname__, exclude):
        return False
    if _matches(module, fn.__qualname__, include):
        return True
    return not is_library_function(fn)


class _NoSource(KilnTypeError):
    pass


_CACHE: "weakref.WeakKeyDictionary[types.FunctionType, dict]" = weakref.WeakKeyDictionary()


def convert(fn: Callable, include: Sequence[str] = (), exclude: Sequence[str] = ()) -> Callable:
    """Rewrite `fn`'s Python control flow so it works on traced values.

    `include` / `exclude` list modules or qualified function names whose
    functions are (or are not) converted when the converted code calls them;
    by default user functions are converted and library ones are not.

    >>> def f(x, n):
    ...     acc = 0.0
    ...     for i in range(n):
    ...         acc = acc + x[i]
    ...     return acc
    >>> g = convert(f)   # g(x, n) traces a kiln.for_loop when n is traced
    """
    if not isinstance(fn, types.FunctionType):
        raise KilnTypeError(f"autograph can only convert Python functions, got a {type(fn).__name__}; "
                            "pass autograph=False or wrap the callable in a def")
    try:
        return _convert(fn, tuple(include), tuple(exclude))
    except _NoSource as e:
        raise KilnTypeError(str(e)) from None


def convert_if_possible(fn: Callable, include: Sequence[str] = (), exclude: Sequence[str] = ()) -> Callable:
    """`convert(fn)`, or `fn` itself when it cannot be converted (not a
    Python function, or its source is unavailable): qjit's default, so that
    lambdas and functions built by exec keep compiling as plain Python."""
    if not isinstance(fn, types.FunctionType) or fn.__name__ == "<lambda>":
        return fn
    try:
        return _convert(fn, tuple(include), tuple(exclude))
    except _NoSource:
        return fn


def _convert(fn: types.FunctionType, include: tuple, exclude: tuple) -> types.FunctionType:
    if fn.__code__ in _CONVERTED_CODE:
        return fn
    per_options = _CACHE.setdefault(fn, {})
    key = (include, exclude)
    if key not in per_options:
        per_options[key] = _build(fn, _Context(include, exclude))
    return per_options[key]


def _build(fn: types.FunctionType, context: _Context) -> types.FunctionType:
    name = fn.__qualname__
    if fn.__name__ == "<lambda>":
        raise _NoSource(f"autograph cannot convert the lambda {name}; use a def")
    module, lines, first_line = _definition_by_lines(fn) or _definition_by_inspect(fn)
    indent = len(lines[0]) - len(lines[0].lstrip())
    node = module.body[0]
    if not isinstance(node, ast.FunctionDef) or node.name != fn.__name__:
        raise _NoSource(f"autograph could not find the definition of {name} in its source")
    for n in ast.walk(module):
        if hasattr(n, "col_offset") and n.col_offset is not None:
            n.col_offset += indent
            if getattr(n, "end_col_offset", None) is not None:
                n.end_col_offset += indent
    ast.increment_lineno(module, first_line - 1)
    node.decorator_list = []

    filename = fn.__code__.co_filename
    names = FreshNames()
    Normalizer(names).function(node)
    Converter(filename, names).function(node)
    ExpressionConverter(filename).visit(node)
    UnpackWrapper().visit(node)
    CallWrapper().visit(node)

    freevars = fn.__code__.co_freevars
    factory = ast.FunctionDef(name="kiln_autograph_factory__", args=arguments_node([CONTEXT_NAME, *freevars]),
                              body=[node, ast.Return(ast.Name(node.name, ast.Load()))], decorator_list=[],
                              returns=None, type_comment=None)
    ast.copy_location(factory, node)
    module = ast.Module([factory], type_ignores=[])
    ast.fix_missing_locations(module)
    code = compile(module, filename, "exec", dont_inherit=True)
    factory_code = _child_code(code, factory.name)
    fn_code = _child_code(factory_code, node.name)

    cells = dict(zip(freevars, fn.__closure__ or ()))
    cells[CONTEXT_NAME] = types.CellType(context)
    closure = tuple(cells[v] for v in fn_code.co_freevars)
    new = function_like(fn, fn_code, fn.__globals__, closure)
    new.kiln_autograph_source = ast.unparse(node)
    _register(fn_code)
    return new


def _last_line(code: types.CodeType) -> int:
    """The last source line of `code`'s instructions and of the functions,
    lambdas and comprehensions defined in it."""
    last = max((end for _, end, _, _ in code.co_positions() if end is not None), default=code.co_firstlineno)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            last = max(last, _last_line(const))
    return last


def _definition_by_lines(fn: types.FunctionType) -> tuple[ast.Module, list[str], int] | None:
    """The parsed definition of `fn` (decorators included), its source lines
    and its first line number, cut from its file's lines by the lines its
    code spans; None when that does not give exactly `fn`'s definition
    (`inspect.getsourcelines` decides then). `inspect` finds a function's
    end by tokenizing from its first line, and the tokenizer's patterns
    compile on first use: 2-6 ms of the first conversion in a process."""
    code = fn.__code__
    lines = linecache.getlines(code.co_filename, fn.__globals__)
    first = code.co_firstlineno
    if not lines or first < 1 or first > len(lines):
        return None
    cut = lines[first - 1:_last_line(code)]
    try:
        module = ast.parse(textwrap.dedent("".join(cut)))
    except (SyntaxError, ValueError):
        return None
    if len(module.body) != 1 or not isinstance(module.body[0], ast.FunctionDef) or \
            module.body[0].name != fn.__name__:
        return None
    return module, cut, first


def _definition_by_inspect(fn: types.FunctionType) -> tuple[ast.Module, list[str], int]:
    """`_definition_by_lines`'s result through `inspect.getsourcelines`;
    raises _NoSource when there is no source or it does not parse."""
    name = fn.__qualname__
    try:
        lines, first_line = inspect.getsourcelines(fn)
    except (OSError, TypeError):
        raise _NoSource(f"autograph needs the source code of {name}, which is not available (functions "
                        "typed into an interactive prompt or built with exec have none); define it in a "
                        "file or pass autograph=False") from None
    try:
        module = ast.parse(textwrap.dedent("".join(lines)))
    except SyntaxError as e:
        raise _NoSource(f"autograph could not parse the source of {name} ({e.msg}); pass autograph=False") from None
    return module, lines, first_line


def _child_code(code: types.CodeType, name: str) -> types.CodeType:
    for const in code.co_consts:
        if isinstance(const, types.CodeType) and const.co_name == name:
            return const
    raise KilnTypeError(f"autograph: compiled code has no function {name!r} (this is a bug in kiln)")


def _register(code: types.CodeType) -> None:
    _CONVERTED_CODE.add(code)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            _register(const)
