"""Autograph, at trace time: the helpers of converted `for` and `while` statements.

In: the iterable or condition of a converted loop, its body as a function, and
the values it carries. Out: a Python loop for Python iterables and conditions;
kiln.for_loop / kiln.while_loop (carried shapes inferred) for traced ones and
for static ranges whose body needs no Python value per iteration.
"""

from __future__ import annotations

from typing import Any, Callable

from kiln.autograph.runtime import (
    _TracedArray,
    _TracedIter,
    _TracedRange,
    _Undefined,
    _as_bool,
    _carry_check,
    _is_traced,
    _rethrow,
    carryable,
    if_stmt,
)
from kiln.errors import KilnError, KilnInternalError, KilnTypeError


def _loop_adapter(body: Callable, count: int) -> Callable:
    """Converted bodies return a tuple; kiln loops want one value, a tuple, or None."""

    def adapted(*args: Any) -> Any:
        out = body(*args)
        if count == 0:
            return None
        return out[0] if count == 1 else tuple(out)

    return adapted


def _loop_result(out: Any, count: int) -> tuple:
    if count == 0:
        return ()
    return (out,) if count == 1 else tuple(out)


def for_stmt(iterable: Any, body: Callable, init: tuple, names: tuple, where: str,
             break_flag: int | None = None, target: str | None = None, python_reason: str | None = None,
             container_effect: str | None = None) -> tuple:
    """A converted `for`: kiln.for_loop over traced ranges and arrays (a
    kiln.while_loop when the body can `break`), and over a Python `range`
    too unless the body needs Python values per iteration (`python_reason`,
    or its trace fails with a traced index); a Python loop (unrolled at
    trace time) over other Python iterables."""
    if _is_traced(iterable):
        if iterable.ndim == 0:
            raise KilnTypeError(f"{where}: iteration over a 0-d traced array")
        iterable = _TracedArray(iterable)
    if isinstance(iterable, range) and python_reason is None and _compiles(iterable, init, names, target):
        try:
            return _compiled_for(_TracedRange(iterable.start, iterable.stop, iterable.step), body, init, names,
                                 where, break_flag, target, static_length=len(iterable))
        except KilnInternalError:
            raise
        except Exception:  # the body needs a Python index: unroll it as Python would run it
            pass
    if not isinstance(iterable, _TracedIter):
        state = tuple(init)
        for item in iterable:
            broke = state[break_flag] if break_flag is not None else False
            if _is_traced(broke):
                # A traced break stops the remaining iterations at run time.
                state = tuple(if_stmt(broke, lambda *s: s, lambda *s, _item=item: body(_item, *s), state, names,
                                      where))
                continue
            state = tuple(body(item, *state))
            if break_flag is not None and not _is_traced(state[break_flag]) and state[break_flag]:
                break
        return state
    _refuse_container_effect(container_effect, where, "runs over a traced range or array")
    return _compiled_for(iterable, body, init, names, where, break_flag, target, static_length=None)


def _refuse_container_effect(effect: str | None, where: str, why: str) -> None:
    """A loop that must compile (its range or condition is traced) cannot change a Python
    list/dict/set once per iteration: refuse it, naming the loop and the fix."""
    if effect is not None:
        raise KilnTypeError(f"{where}: this loop {why}, so it runs as one compiled loop, but {effect}: that "
                            "would happen once, while the loop is traced, not once per iteration. Grow an "
                            "array instead (`a = np.append(a, v)` or np.concatenate), or preallocate one "
                            "(np.zeros) and fill it by index; see docs/autograph.md.")


def _compiles(iterable: range, init: tuple, names: tuple, target: str | None) -> bool:
    """A static range becomes a compiled loop when tracing, for two or more
    iterations, and when every carried value can be carried (the loop target
    may be unbound before the loop: the loop assigns it first)."""
    from kiln.tracing import is_tracing

    if not is_tracing() or len(iterable) < 2:
        return False
    return all(carryable(v) or (isinstance(v, _Undefined) and n == target)
               for n, v in zip(names, init))


def _compiled_for(iterable: _TracedIter, body: Callable, init: tuple, names: tuple, where: str,
                  break_flag: int | None, target: str | None, static_length: int | None) -> tuple:
    from kiln.control_flow import INFER, for_loop, while_loop

    init, unbound = _bind_loop_target(iterable, init, names, target)
    _carry_check(names, init, where, "for-loop")
    try:
        if break_flag is None:
            if isinstance(iterable, _TracedRange):
                loop = for_loop(iterable.start, iterable.stop, iterable.step, allow_array_resizing=INFER)(
                    _loop_adapter(body, len(init)))
            else:
                def indexed(k, *state, _it=iterable):
                    return body(_it.item(k), *state)

                loop = for_loop(0, iterable.length(), 1, allow_array_resizing=INFER)(
                    _loop_adapter(indexed, len(init)))
            state = _loop_result(loop(*init), len(init))
        else:
            state = _while_over(iterable, body, init, names, where, break_flag)
    except KilnError as e:
        raise _rethrow(e, where, names) from None
    if unbound and not static_length:
        _check_ran(iterable, target, where)
    return state


def _while_over(iterable: _TracedIter, body: Callable, init: tuple, names: tuple, where: str,
                break_flag: int) -> tuple:
    """A for loop that can `break`: a while_loop over the item index."""
    from kiln import numpy as knp
    from kiln.control_flow import INFER, while_loop

    length = iterable.length()

    def keep_going(k, *state):
        flag = state[break_flag]
        running = knp.less(k, length)
        if not _is_traced(flag):
            return running if not flag else False
        return knp.logical_and(running, knp.logical_not(flag))

    def step(k, *state):
        return (k + 1, *body(iterable.item(k), *state))

    try:
        out = while_loop(keep_going, allow_array_resizing=INFER)(step)(0, *init)
    except KilnError as e:
        raise _rethrow(e, where, ("<loop index>", *names)) from None
    return tuple(out[1:])


def _bind_loop_target(iterable: _TracedIter, init: tuple, names: tuple, target: str | None) -> tuple:
    """The loop target read after the loop has no value before it: carry a
    placeholder of the item's type, which the first iteration overwrites.
    Returns the initial values and whether a placeholder was needed."""
    from kiln import numpy as knp

    if target is None or target not in names or not isinstance(init[names.index(target)], _Undefined):
        return init, False
    if isinstance(iterable, _TracedRange):
        placeholder = iterable.start
    elif isinstance(iterable, _TracedArray) and _is_traced(iterable.array):
        placeholder = knp.zeros(iterable.array.shape[1:], iterable.array.dtype)
    else:
        return init, False
    k = names.index(target)
    return init[:k] + (placeholder,) + init[k + 1:], True


def _check_ran(iterable: _TracedIter, target: str, where: str) -> None:
    """Python leaves the loop target unbound when the loop runs zero times."""
    from kiln import numpy as knp
    from kiln.numpy._base import check

    length = iterable.length()
    if not _is_traced(length):
        if length == 0:
            raise UnboundLocalError(f"{where}: local variable {target!r} is read after the loop, which ran "
                                    "zero times")
        return
    check(knp.greater(length, 0), "UnboundLocalError",
          f"{where}: cannot access local variable {target!r} where it is not associated with a value (the "
          "loop ran zero times, so its target was never assigned)")


def _probe(cond: Callable, state: tuple) -> Any:
    """Evaluate a while condition to learn whether it is traced, in a scope
    that is thrown away: a traced test is evaluated again inside the loop,
    and its run-time checks must not run before the loop."""
    from kiln.tracing import is_tracing, new_scope

    if not is_tracing():
        return cond(*state)
    with new_scope():
        return cond(*state)


def while_stmt(cond: Callable, body: Callable, init: tuple, names: tuple, where: str,
               container_effect: str | None = None) -> tuple:
    """A converted `while`: a Python loop while the condition is a Python
    value, kiln.while_loop from the first time it is traced."""
    state = tuple(init)
    while True:
        test = _probe(cond, state)
        if _is_traced(test):
            break
        if not test:
            return state
        state = tuple(body(*state))
    _as_bool(test, where, "the while condition")
    _refuse_container_effect(container_effect, where, "has a traced condition")
    _carry_check(names, state, where, "while-loop")
    from kiln.control_flow import INFER, while_loop

    def traced_cond(*carried):
        test = cond(*carried)
        return _as_bool(test, where, "the while condition") if _is_traced(test) else bool(test)

    try:
        out = while_loop(traced_cond, allow_array_resizing=INFER)(_loop_adapter(body, len(state)))(*state)
    except KilnError as e:
        raise _rethrow(e, where, names) from None
    return _loop_result(out, len(state))
