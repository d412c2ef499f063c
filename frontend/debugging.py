"""Tracing: `kiln.debug_print`, printing traced values when the code runs.

In: a `str.format` text and its arguments, some of them traced.
Out: one `debug_print` equation whose format has one numbered field per
traced value (untraced arguments are rendered into the text at trace
time); outside a trace, the line printed at once. `traced_print` is what
autograph gives `print`.
"""

from __future__ import annotations

import _string  # str.format's own field-name parser
import sys
from typing import Any

import numpy as np

from kiln.errors import KilnTypeError, KilnValueError
from kiln.primitives.debugging import debug_print_p
from kiln.runtime.debug_print import FORMATTER, print_formatted
from kiln.tracing import Tracer, bind, is_tracing


def _escape(text: str) -> str:
    return text.replace("{", "{{").replace("}", "}}")


class _Fields:
    """Resolves the fields of a format against the call's arguments, the
    way `str.format` does (automatic or manual numbering, keywords)."""

    def __init__(self, format: str, args: tuple, kwargs: dict):
        self.format, self.args, self.kwargs = format, args, kwargs
        self.next_automatic: int | None = 0  # None once a field is numbered by hand

    def _argument(self, key: str) -> Any:
        if key == "":
            if self.next_automatic is None:
                raise KilnValueError(f"kiln.debug_print({self.format!r}): cannot switch from manual field "
                                     "numbering to automatic field numbering; number every field or none")
            key, self.next_automatic = self.next_automatic, self.next_automatic + 1
        elif key.isdigit():
            if self.next_automatic not in (0, None):
                raise KilnValueError(f"kiln.debug_print({self.format!r}): cannot switch from automatic field "
                                     "numbering to manual field specification; number every field or none")
            key, self.next_automatic = int(key), None
        try:
            return self.args[key] if isinstance(key, int) else self.kwargs[key]
        except (IndexError, KeyError):
            raise KilnValueError(f"kiln.debug_print({self.format!r}): the field {{{key}}} has no argument "
                                 f"({len(self.args)} positional, keywords {sorted(self.kwargs)}); pass one "
                                 "argument per field") from None

    def resolve(self, field_name: str) -> Any:
        """The value a field names, attribute and index lookups included
        (`{0.shape}`, `{x[1]}`) when the argument is not traced."""
        first, rest = _string.formatter_field_name_split(field_name)
        value = self._argument(str(first))
        for is_attribute, key in rest:
            if isinstance(value, Tracer):
                raise KilnTypeError(f"kiln.debug_print({self.format!r}): the field {{{field_name}}} looks up "
                                    "an attribute or item of a traced value, which exists only at run time; "
                                    "compute it first and pass it as an argument")
            value = getattr(value, key) if is_attribute else value[key]
        return value


def _holds_tracer(value: Any) -> bool:
    if isinstance(value, Tracer):
        return True
    return isinstance(value, (tuple, list)) and any(_holds_tracer(v) for v in value)


def _field_text(value: Any, spec: str, conversion: str, traced: list) -> str:
    """The format text of one field: a numbered field for a traced value
    (appended to `traced` unless already there), the rendered text of an
    untraced one; a tuple or list holding traced values (`x.shape` with
    dynamic dims) prints as Python prints it, traced items as their values."""
    if isinstance(value, Tracer):
        index = next((i for i, t in enumerate(traced) if t is value), None)
        if index is None:
            index = len(traced)
            traced.append(value)
        return "{" + str(index) + (f"!{conversion}" if conversion else "") + (f":{spec}" if spec else "") + "}"
    if not _holds_tracer(value):
        return _escape(FORMATTER.format_field(FORMATTER.convert_field(value, conversion or None), spec))
    if spec or conversion:
        raise KilnTypeError(f"kiln.debug_print: a conversion or format spec ({conversion!r}, {spec!r}) on a "
                            f"{type(value).__name__} holding traced values; format its items one by one")
    items = [_field_text(v, "", "", traced) if _holds_tracer(v) else _escape(repr(v)) for v in value]
    if isinstance(value, list):
        return "[" + ", ".join(items) + "]"
    return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"


def normalize_format(format: str, args: tuple, kwargs: dict) -> tuple[str, list]:
    """`(text, traced)`: `format` with untraced fields rendered and one field
    `{i...}` per distinct traced value `traced[i]`, keeping its conversion
    and format spec."""
    fields = _Fields(format, args, kwargs)
    pieces: list[str] = []
    traced: list = []
    for literal_text, field_name, spec, conversion in FORMATTER.parse(format):
        pieces.append(_escape(literal_text))
        if field_name is None:
            continue
        if "{" in (spec or ""):
            raise KilnValueError(f"kiln.debug_print({format!r}): nested fields in a format spec are not "
                                 "supported; write the spec out (`{:8.3f}`)")
        pieces.append(_field_text(fields.resolve(field_name), spec or "", conversion or "", traced))
    return "".join(pieces), traced


def debug_print(format: str, *args: Any, **kwargs: Any) -> None:
    """Print `format.format(*args, **kwargs)` each time the compiled code
    runs this line, traced values as NumPy prints them, in program order
    (once per iteration inside a loop). Outside a trace it prints at once.

    >>> @kiln.qjit
    ... def f(x):
    ...     kiln.debug_print("x = {}, sum = {:.2f}", x, x.sum())
    ...     return x * 2
    >>> f(np.arange(3.0))   # prints: x = [0. 1. 2.], sum = 3.00
    """
    if not isinstance(format, str):
        raise KilnTypeError(f"kiln.debug_print: the format must be a str, got {type(format).__name__}; "
                            "write kiln.debug_print('{}', value)")
    text, traced = normalize_format(format, args, kwargs)
    if not is_tracing():
        print_formatted(text, [])
        return
    # Check the specs against the values' kinds now, not when the code runs.
    try:
        FORMATTER.format(text, *[_placeholder(t) for t in traced])
    except (ValueError, TypeError) as e:
        raise KilnValueError(f"kiln.debug_print({format!r}): {e}; fix the field's conversion or format spec "
                             "for the value's dtype") from None
    bind(debug_print_p, *traced, format=text)


def _placeholder(value: Tracer) -> Any:
    """A NumPy value of the tracer's dtype and rank (what the field receives)."""
    aval = value.aval
    zeros = np.zeros((1,) * len(aval.shape), aval.dtype)
    return zeros[()] if zeros.ndim == 0 else zeros


def traced_print(*args: Any, sep: str | None = " ", end: str | None = "\n", file: Any = None,
                 flush: bool = False) -> None:
    """`print` in code autograph converts: with a traced argument, a
    `debug_print` of the same line (printed when the code runs, each time);
    without one, Python's print, which runs while kiln traces the function
    (once per compile, as under jax.jit)."""
    if not any(_holds_tracer(a) for a in args):
        print(*args, sep=sep, end=end, file=file, flush=flush)
        return
    sep = " " if sep is None else sep
    end = "\n" if end is None else end
    if file is not None and file is not sys.stdout:
        raise KilnTypeError("print(..., file=...) of a traced value: kiln prints traced values when the code "
                            "runs, to sys.stdout only; drop file= (or print with kiln.debug_print)")
    if not end.endswith("\n"):
        raise KilnTypeError(f"print(..., end={end!r}) of a traced value: kiln prints whole lines when the code "
                            "runs; end the line with a newline, or build the line with kiln.debug_print")
    debug_print(_escape(sep).join("{}" for _ in args) + _escape(end[:-1]), *args)
