"""runic from Python: compile a runic program, call its entry points on NumPy arrays, and
take gradients of them.

    import numpy as np, runic
    p = runic.compile("entry loss (w: []f64) = f64.sum (map (\\x -> x * x) w)")
    g = runic.grad(p, "loss")(np.array([1.0, 2.0]))      # array([2., 4.])

Arguments: NumPy arrays (C-contiguous; runic reads them in place, without a copy, and
copies one only if the program updates it in place, so your array never changes; do not
write to an array from another thread while a call reads it; a non-contiguous array
raises ArgumentError rather than being copied silently), NumPy
scalars, and Python bool/int/float (which take the parameter's type); a Python tuple for a
tuple parameter and a dict (a key per field) for a record parameter. Results: NumPy arrays
that own runic's result buffer (no copy), NumPy scalars, tuples and dicts; several results
as a tuple.
Errors raise RunicError subclasses carrying runic's located message. Calls release the GIL,
so threads may call one program at once.
"""

import os
import re

from ._runic import (
    ArgumentError,
    CompileError,
    Entry,
    EntryError,
    InternalError,
    Program,
    RunicError,
    RuntimeError,
)

__all__ = [
    "compile",
    "grad",
    "value_and_grad",
    "Program",
    "Entry",
    "RunicError",
    "CompileError",
    "RuntimeError",
    "ArgumentError",
    "EntryError",
    "InternalError",
]


def compile(source_or_path, backend="compiled"):
    """Compile a runic program: a path to a `.fut` file (read, and named by its path in
    diagnostics; imports are resolved relative to it) or the program text itself.
    `backend` is "compiled" (default) or "interpreter". Raises CompileError."""
    text = os.fspath(source_or_path) if isinstance(source_or_path, os.PathLike) else source_or_path
    if isinstance(source_or_path, os.PathLike) or (
        "\n" not in text and text.endswith(".fut")
    ):
        try:
            with open(text, "rb") as f:
                data = f.read()
        except OSError as e:
            raise CompileError(f"Error: cannot read {text}: {e.strerror}") from None
        try:
            source = data.decode("utf-8")
        except UnicodeDecodeError:
            raise CompileError(
                f"{text}: Error: invalid UTF-8 (runic source files must be UTF-8)"
            ) from None
        return Program(source, text, backend)
    return Program(text, "<string>", backend)


_SIZE = re.compile(r"\[([A-Za-z_][A-Za-z0-9_']*)\]")


def _gradient_program(program, entry, wrt, with_value):
    """The program with one more entry point: `vjp2` of `entry` with respect to the
    parameters `wrt`, returning the gradients (after the value if `with_value`)."""
    params = program.entry(entry).params
    n = len(params)
    for i in wrt:
        if not 0 <= i < n:
            raise ArgumentError(
                f'Error: "{entry}" has {n} parameter(s); cannot differentiate with respect '
                f"to parameter {i}"
            )
    sizes = []
    for _, ty in params:
        for s in _SIZE.findall(ty):
            if s not in sizes:
                sizes.append(s)
    name = f"runic_grad_{entry}_" + "_".join(map(str, wrt)) + ("_v" if with_value else "")
    decl = "".join(f"[{s}]" for s in sizes)
    decl += "".join(f" (p{i}: {ty})" for i, (_, ty) in enumerate(params))
    xs = [f"x{i}" for i in wrt]
    call = " ".join(f"x{i}" if i in wrt else f"p{i}" for i in range(n))
    lam = f"\\({', '.join(xs)}) -> {entry} {call}" if len(xs) > 1 else f"\\{xs[0]} -> {entry} {call}"
    primal = f"({', '.join(f'p{i}' for i in wrt)})" if len(wrt) > 1 else f"p{wrt[0]}"
    gs = [f"g{i}" for i in wrt]
    gpat = f"({', '.join(gs)})" if len(gs) > 1 else gs[0]
    out = ", ".join((["v"] if with_value else []) + gs)
    source = (
        program.source
        + f"\n\nentry {name} {decl} =\n"
        + f"  let ({'v' if with_value else '_'}, {gpat}) = vjp2 ({lam}) {primal} 1\n"
        + f"  in ({out})\n"
    )
    return Program(source, program.name, program.backend), name


def grad(program, entry, wrt=0):
    """The gradient of a scalar-valued entry point, as a function of the same arguments.

    `wrt` is a parameter index or a tuple of them; with a tuple the function returns a
    tuple of gradients. The gradient is a new entry point using `vjp2`, compiled once when
    `grad` is called."""
    return _differentiate(program, entry, wrt, with_value=False)


def value_and_grad(program, entry, wrt=0):
    """Like `grad`, but the function returns (value, gradient) (or (value, g0, g1, ...)
    for a tuple `wrt`): one pass for both."""
    return _differentiate(program, entry, wrt, with_value=True)


def _differentiate(program, entry, wrt, with_value):
    if isinstance(program, (str, os.PathLike)):
        program = compile(program)
    indices = tuple(wrt) if isinstance(wrt, (tuple, list)) else (wrt,)
    prog, name = _gradient_program(program, entry, indices, with_value)
    f = prog.entry(name)

    def gradient(*args):
        return f(*args)

    gradient.__name__ = f"grad_{entry}"
    gradient.__doc__ = f"Gradient of runic entry point {entry!r} w.r.t. parameters {indices}."
    gradient.entry = f
    return gradient
