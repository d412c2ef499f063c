"""Stage "jaxpr": what the global names of traced code mean while kiln traces it.

In: the function a trace calls, and lazily every user function it reaches through a
global name, a closure cell or an attribute of a user module.
Out: copies of those functions whose globals are a view: a name bound to NumPy (the
module, a submodule, a function, a type) resolves to the meaning kiln declared for
traced code; everything else, and all code outside the trace, sees the real objects.
"""

from __future__ import annotations

import contextlib
import dis
import os
import sys
import types
from typing import Any, Callable, Iterator

# id(original) -> (original, what traced code sees instead).
_REPLACEMENTS: dict[int, tuple[Any, Any]] = {}
# (type, factory): an instance of type is seen as factory(instance) in traced code.
_INSTANCE_REPLACEMENTS: list[tuple[type, Callable[[Any], Any]]] = []
# Root names of the library modules traced code sees through a view (`numpy`).
_VIEWED_MODULE_ROOTS: set[str] = set()

_LIBRARY_ROOTS = {"kiln", "numpy", "scipy", "jax", "jaxlib", "numba", "pytest", "_pytest", "torch_mlir"}
_LIBRARY_DIRS = tuple(
    os.path.normcase(os.path.realpath(p)) + os.sep
    for p in {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix})


def replace_in_traced_code(original: Any, replacement: Any) -> None:
    """Traced code that names `original` (as `np.zeros`, `zeros` after
    `from numpy import zeros`, ...) gets `replacement` instead."""
    _REPLACEMENTS[id(original)] = (original, replacement)
    module = getattr(original, "__module__", None) or ""
    if isinstance(original, types.ModuleType):
        module = original.__name__
    if module:
        _VIEWED_MODULE_ROOTS.add(module.split(".")[0])


def replace_instances_in_traced_code(cls: type, factory: Callable[[Any], Any]) -> None:
    """Traced code that reaches an instance of `cls` through a name gets `factory(instance)`."""
    _INSTANCE_REPLACEMENTS.append((cls, factory))


def is_library_function(fn: types.FunctionType) -> bool:
    """Functions of kiln, NumPy, the standard library or installed packages
    keep their own globals; user code gets the view."""
    root = (fn.__module__ or "").split(".")[0]
    if root in _LIBRARY_ROOTS or root in sys.stdlib_module_names:
        return True
    filename = os.path.normcase(os.path.realpath(fn.__code__.co_filename))
    if "site-packages" in filename or "dist-packages" in filename:
        return True
    return any(filename.startswith(d) for d in _LIBRARY_DIRS)


def function_like(fn: types.FunctionType, code: types.CodeType, globals: dict,
                  closure: tuple | None) -> types.FunctionType:
    """A function running `code` with `globals` and `closure` that otherwise
    looks like `fn`: name, qualname, module, defaults, doc, annotations, attributes."""
    new = types.FunctionType(code, globals, fn.__name__, fn.__defaults__, closure)
    new.__kwdefaults__ = fn.__kwdefaults__
    new.__qualname__ = fn.__qualname__
    new.__module__ = fn.__module__
    new.__doc__ = fn.__doc__
    new.__annotations__ = dict(getattr(fn, "__annotations__", {}))
    new.__dict__.update(fn.__dict__)
    return new


def _is_user_module(module: types.ModuleType) -> bool:
    root = module.__name__.split(".")[0]
    filename = getattr(module, "__file__", None)
    if root in _LIBRARY_ROOTS or root in sys.stdlib_module_names or filename is None:
        return False
    filename = os.path.normcase(os.path.realpath(filename))
    if "site-packages" in filename or "dist-packages" in filename:
        return False
    return not any(filename.startswith(d) for d in _LIBRARY_DIRS)


def _rebound_cell_names(code: types.CodeType) -> set[str]:
    """Names the code (or code nested in it) assigns through a cell (`nonlocal`):
    those cells must stay shared with the enclosing function."""
    names = set()
    for instruction in dis.get_instructions(code):
        if instruction.opname in ("STORE_DEREF", "DELETE_DEREF"):
            names.add(instruction.argval)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _rebound_cell_names(const)
    return names


class _GlobalsView(dict):
    """The globals of traced user code: reads fall through to the module's
    real globals, translated; `global x; x = ...` lands here and is copied
    back to the module when the trace ends."""

    def __init__(self, real: dict, names: "TraceNamespace"):
        super().__init__(__builtins__=real.get("__builtins__", __builtins__))
        self._real = real
        self._names = names

    def __missing__(self, key: str) -> Any:
        return self._names.translate(self._real[key])

    def __setitem__(self, key: str, value: Any) -> None:
        self._real[key] = value
        super().__setitem__(key, value)

    def write_back(self) -> None:
        for key, value in self.items():
            if key != "__builtins__":
                self._real[key] = value


class _ModuleView(types.ModuleType):
    """A module as traced code sees it: its attributes translated."""

    def __init__(self, module: types.ModuleType, names: "TraceNamespace"):
        super().__init__(module.__name__, module.__doc__)
        self.__dict__["_kiln_module"] = module
        self.__dict__["_kiln_names"] = names

    def __getattr__(self, attr: str) -> Any:
        return self._kiln_names.translate(getattr(self._kiln_module, attr))

    def __setattr__(self, attr: str, value: Any) -> None:
        setattr(self._kiln_module, attr, value)

    def __dir__(self) -> list:
        return dir(self._kiln_module)

    def __repr__(self) -> str:
        return f"<module {self.__name__!r} as kiln traces it>"


class TraceNamespace:
    """The views and function copies of one trace (made per trace, so other
    threads and later calls outside the trace never see them)."""

    def __init__(self) -> None:
        self._globals: dict[int, _GlobalsView] = {}
        self._functions: dict[int, tuple[Any, Any]] = {}
        self._modules: dict[int, tuple[Any, _ModuleView]] = {}

    def translate(self, value: Any) -> Any:
        """What traced user code sees for `value`."""
        entry = _REPLACEMENTS.get(id(value))
        if entry is not None and entry[0] is value:
            return entry[1]
        if isinstance(value, types.FunctionType):
            return value if is_library_function(value) else self.function(value)
        if isinstance(value, types.ModuleType):
            root = value.__name__.split(".")[0]
            return self._module(value) if root in _VIEWED_MODULE_ROOTS or _is_user_module(value) else value
        for cls, factory in _INSTANCE_REPLACEMENTS:
            if isinstance(value, cls):
                return factory(value)
        return value

    def _module(self, module: types.ModuleType) -> _ModuleView:
        entry = self._modules.get(id(module))
        if entry is None:
            entry = self._modules[id(module)] = (module, _ModuleView(module, self))
        return entry[1]

    def function(self, fn: Any) -> Any:
        """`fn` running with the view as its globals (other callables unchanged)."""
        if not isinstance(fn, types.FunctionType):
            return fn
        entry = self._functions.get(id(fn))
        if entry is not None:
            return entry[1]
        # A function reached again while its own closure is translated (a
        # recursive closure) keeps its original cells.
        self._functions[id(fn)] = (fn, fn)
        copy = function_like(fn, fn.__code__, self._view(fn.__globals__), self._closure(fn))
        self._functions[id(fn)] = (fn, copy)
        return copy

    def _view(self, real: dict) -> _GlobalsView:
        view = self._globals.get(id(real))
        if view is None:
            view = self._globals[id(real)] = _GlobalsView(real, self)
        return view

    def _closure(self, fn: types.FunctionType) -> tuple | None:
        if not fn.__closure__:
            return fn.__closure__
        rebound = _rebound_cell_names(fn.__code__)
        cells = []
        for name, cell in zip(fn.__code__.co_freevars, fn.__closure__):
            try:
                contents = cell.cell_contents
            except ValueError:  # not assigned yet
                cells.append(cell)
                continue
            seen = contents if name in rebound else self.translate(contents)
            cells.append(cell if seen is contents else types.CellType(seen))
        return tuple(cells)

    def close(self) -> None:
        """Copy `global` assignments made during the trace back to their modules."""
        for view in self._globals.values():
            view.write_back()


@contextlib.contextmanager
def trace_namespace() -> Iterator[TraceNamespace]:
    """The namespace of one trace: `names.function(fn)` is `fn` as it traces."""
    names = TraceNamespace()
    try:
        yield names
    finally:
        names.close()
