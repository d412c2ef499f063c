"""kiln's own MLIR passes: one file per pass, discovered and registered by name.

In: a pass spec (`kiln-parallelize{min-work=1}`) from a pipeline or `kiln-opt`.
Out: the configured pass (`parse_pass_spec`), whose `apply(module)` rewrites
the module in place; upstream MLIR specs pass through for the PassManager.

A pass is a small frozen dataclass: its class docstring is the one-line
description, its fields are its typed options (default and doc each):

    @register_pass
    class KilnParallelize(ModulePass):
        \"""Run outermost parallel loops on a thread pool.\"""

        name = "kiln-parallelize"
        min_work: int = option(4096, "constant-bound nests with fewer iterations stay inline", minimum=0)

        def apply(self, module: ir.Module) -> None: ...

The option `min_work` is spelled `min-work` in specs. `load_all` imports
every module of this package whose name does not start with `_` (those are
helpers), so a pass file is found without being listed anywhere.
"""

from __future__ import annotations

import abc
import dataclasses
import functools
import importlib
import pkgutil
import typing
from dataclasses import dataclass
from typing import Any, ClassVar

from kiln.errors import KilnInternalError, KilnValueError

PASSES: dict[str, type[ModulePass]] = {}
OPTION_TYPES = (bool, int, str)
_BOOL_WORDS = {"true": True, "1": True, "false": False, "0": False}


class PassSpecError(KilnValueError):
    """A spec names a kiln pass with an option it does not declare, twice,
    or with a value of the wrong type or range."""


class ModulePass(abc.ABC):
    """A kiln pass: subclasses are frozen dataclasses made by `register_pass`."""

    name: ClassVar[str] = ""

    @abc.abstractmethod
    def apply(self, module: Any) -> None:
        """Rewrite `module` (an `ir.Module`) in place."""


@dataclass(frozen=True)
class PassOption:
    """One option of a pass as a spec spells it (`min-work`)."""

    spelling: str
    field_name: str
    type: type
    default: Any
    doc: str
    minimum: int | None = None

    def accepted(self) -> str:
        if self.type is bool:
            return "true or false (or 1 or 0)"
        if self.type is int:
            return "an integer" if self.minimum is None else f"an integer >= {self.minimum}"
        return "a string"

    @property
    def default_text(self) -> str:
        """The default as a spec spells it (`true`, `4096`)."""
        return str(self.default).lower() if self.type is bool else str(self.default)

    def describe(self) -> str:
        return f"{self.spelling}: {self.type.__name__} = {self.default_text}"


def option(default: Any, doc: str, minimum: int | None = None) -> Any:
    """An option field: its default, a one-line doc, and for integers the
    smallest accepted value."""
    return dataclasses.field(default=default, metadata={"doc": doc, "minimum": minimum})


def pass_options(cls: type[ModulePass]) -> dict[str, PassOption]:
    """The options of a registered pass class, by spelling (a fresh dict;
    the class's options are worked out once: `typing.get_type_hints`
    evaluates the annotations' text, ~0.7 ms a pass, which every compile
    paid for each of its ~60 pass specs)."""
    return dict(_pass_options(cls))


@functools.lru_cache(maxsize=None)
def _pass_options(cls: type[ModulePass]) -> dict[str, PassOption]:
    hints = typing.get_type_hints(cls)
    options = {}
    for f in dataclasses.fields(cls):
        spelling = f.name.replace("_", "-")
        options[spelling] = PassOption(spelling, f.name, hints[f.name], f.default,
                                       f.metadata.get("doc", ""), f.metadata.get("minimum"))
    return options


def register_pass(cls: type[ModulePass]) -> type[ModulePass]:
    """Make `cls` a frozen dataclass and register it under `cls.name`.
    A malformed declaration is a bug in kiln, reported at import."""
    cls = dataclass(frozen=True)(cls)
    if not cls.name:
        raise KilnInternalError(f"pass class {cls.__name__} has no `name`")
    if cls.name in PASSES and PASSES[cls.name] is not cls:
        raise KilnInternalError(f"pass {cls.name!r} is registered twice "
                                f"({PASSES[cls.name].__module__}, {cls.__module__})")
    for opt in pass_options(cls).values():
        if opt.type not in OPTION_TYPES or type(opt.default) is not opt.type or not opt.doc:
            raise KilnInternalError(f"pass {cls.name!r}: option {opt.spelling!r} needs a type among "
                                    f"{', '.join(t.__name__ for t in OPTION_TYPES)}, a default of that type "
                                    "and a doc (`option(default, doc)`)")
    PASSES[cls.name] = cls
    return cls


_LOADED: list[bool] = []


def load_all() -> dict[str, type[ModulePass]]:
    """Import every pass module of this package (once) and return the registry.

    The package is scanned on the first call only: `parse_pass_spec` calls
    this for every spec of a pipeline, and a scan of the folder each time
    cost ~20 ms of every compile."""
    if not _LOADED:
        for module in pkgutil.iter_modules(__path__):
            if not module.name.startswith("_"):
                importlib.import_module(f"{__name__}.{module.name}")
        _LOADED.append(True)
    return PASSES


def pass_description(cls: type[ModulePass]) -> str:
    """The first line of the pass class's docstring."""
    return (cls.__doc__ or "").strip().splitlines()[0] if cls.__doc__ else ""


@dataclass(frozen=True)
class PassSpec:
    """One element of a pipeline: a configured kiln pass, or (when
    `kiln_pass` is None) an upstream MLIR pass spec kept as text."""

    text: str
    name: str
    kiln_pass: ModulePass | None = None


def split_spec(spec: str) -> tuple[str, list[tuple[str, str | None]]]:
    """`name{a=1 b}` -> ("name", [("a", "1"), ("b", None)]): the syntax only."""
    name, brace, rest = spec.strip().partition("{")
    if not brace:
        return name.strip(), []
    items = []
    for item in rest.rstrip().removesuffix("}").split():
        key, equals, value = item.partition("=")
        items.append((key, value if equals else None))
    return name.strip(), items


def _typed_value(pass_name: str, opt: PassOption, text: str | None) -> Any:
    culprit = f"pass '{pass_name}' option '{opt.spelling}'"
    if text is None:
        if opt.type is bool:
            return True
        raise PassSpecError(f"{culprit} needs a value ({opt.accepted()}): write {opt.spelling}=VALUE")
    if opt.type is bool:
        if text.lower() not in _BOOL_WORDS:
            raise PassSpecError(f"{culprit} expects {opt.accepted()}, got {text!r}")
        return _BOOL_WORDS[text.lower()]
    if opt.type is int:
        try:
            value = int(text, 10)
        except ValueError:
            raise PassSpecError(f"{culprit} expects {opt.accepted()}, got {text!r}") from None
        if opt.minimum is not None and value < opt.minimum:
            raise PassSpecError(f"{culprit} expects {opt.accepted()}, got {text!r}")
        return value
    return text


def parse_pass_spec(spec: str) -> PassSpec:
    """Parse one spec; a kiln pass comes back configured with typed options.

    >>> parse_pass_spec("kiln-parallelize{min-work=1}").kiln_pass.min_work
    1

    Raises PassSpecError (a KilnValueError) naming the pass, the option, the
    value and what is accepted, for an undeclared, repeated or bad option.
    """
    name, items = split_spec(spec)
    passes = load_all()
    if name not in passes:
        return PassSpec(spec, name)
    cls = passes[name]
    declared = pass_options(cls)
    unknown = [key for key, _ in items if key not in declared]
    if unknown:
        accepted = ", ".join(sorted(declared)) or "none"
        raise PassSpecError(f"pass '{name}' has no option {', '.join(map(repr, unknown))} "
                            f"(accepted options: {accepted})")
    values: dict[str, Any] = {}
    for key, text in items:
        opt = declared[key]
        if opt.field_name in values:
            raise PassSpecError(f"pass '{name}' option '{key}' is given twice; give it once")
        values[opt.field_name] = _typed_value(name, opt, text)
    return PassSpec(spec, name, cls(**values))
