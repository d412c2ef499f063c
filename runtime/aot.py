"""Runtime: ahead-of-time libraries (`kiln.export` / `kiln.load`).

In: the metadata of a function compiled from annotated parameters (kernel
symbol, parameters with dtypes and named/static dims, where each implicit
dim comes from, results, writes to arguments).
Out: the C header and C wrapper source of an exported library (a plain C
entry point `<name>(results, args..., failure)` that checks shapes, passes
implicit dims, hands every result buffer to the caller and writes argument
updates back), and `LoadedFunction`, which calls such a library from NumPy
without importing MLIR.
"""

from __future__ import annotations

import hashlib
import json
import os
from typing import Any, Sequence

import numpy as np

from kiln import tree
from kiln.errors import KilnTypeError, KilnValueError
from kiln.runtime import cache
from kiln.runtime.executable import Executable, ValueSpec

FORMAT_VERSION = 3
# Return codes of an exported entry point besides run-time check kinds (> 0):
# an allocation failed (support.c's KILN_OUT_OF_MEMORY; failure->values[0]
# holds the size), or argument shapes disagree with the annotations.
OUT_OF_MEMORY = -1
SHAPE_MISMATCH = -2

_C_TYPES = {
    "float32": "float", "float64": "double", "int8": "int8_t", "int16": "int16_t", "int32": "int32_t",
    "int64": "int64_t", "uint8": "uint8_t", "uint16": "uint16_t", "uint32": "uint32_t", "uint64": "uint64_t",
    "bool": "bool",
}


_C_RESERVED = frozenset("""auto break case char const continue default do double else enum extern float for goto if
inline int long register restrict return short signed sizeof static struct switch typedef union unsigned void
volatile while bool true false results failure""".split())


def c_parameter_name(name: str) -> str:
    """`name` as a C parameter name of an exported prototype (C keywords and
    the prototype's own `results` / `failure` get a trailing underscore)."""
    return name + "_" if name in _C_RESERVED else name


def c_type(dtype: str) -> str:
    try:
        return _C_TYPES[np.dtype(dtype).name]
    except KeyError:
        raise KilnTypeError(f"kiln.export: dtype {dtype} has no C type; export functions of "
                            + ", ".join(sorted(_C_TYPES))) from None


def _memref_typedef(rank: int) -> str:
    fields = "void *allocated; void *aligned; int64_t offset;"
    if rank:
        fields += f" int64_t sizes[{rank}]; int64_t strides[{rank}];"
    return (f"#ifndef KILN_MEMREF_{rank}D_DEFINED\n#define KILN_MEMREF_{rank}D_DEFINED\n"
            f"typedef struct {{ {fields} }} kiln_memref_{rank}d;\n#endif\n")


def _describe(dtype: str, shape: Sequence) -> str:
    return f"{np.dtype(dtype).name}[{', '.join(str(d) for d in shape)}]"


def _param_decl(param: dict) -> str:
    if param["shape"]:
        return f"const kiln_memref_{len(param['shape'])}d *{param['name']}"
    return f"{c_type(param['dtype'])} {param['name']}"


def c_header(meta: dict) -> str:
    """The C header of an exported function."""
    name = meta["name"]
    guard = f"KILN_EXPORT_{name.upper()}_H"
    # Rank 0 always: the wrapper passes implicit dims as 0-d descriptors.
    ranks = sorted({0} | {len(p["shape"]) for p in meta["params"]} | {r["rank"] for r in meta["results"]})
    lines = [f"/* {name}: exported by kiln. */", f"#ifndef {guard}", f"#define {guard}", "",
             "#include <stdbool.h>", "#include <stdint.h>", "", '#ifdef __cplusplus', 'extern "C" {', "#endif", "",
             "/* MLIR's ranked memref descriptor: element [i0, i1, ...] is at",
             " * aligned + offset + sum(ik * strides[k]) (in elements). Arguments must be",
             " * row-major contiguous; their strides are not read. */"]
    lines += [_memref_typedef(r) for r in ranks]
    lines += ["#ifndef KILN_FAILURE_DEFINED", "#define KILN_FAILURE_DEFINED",
              "/* kind: 1 + the position of the check's exception in (ValueError, IndexError,",
              " * OverflowError, UnboundLocalError, LinAlgError); message: its text in Python format syntax, whose {}s take",
              " * `values`, ending with the source line of the check; a constant of the library. */",
              "typedef struct { int64_t kind; int64_t values[2]; const char *message; } kiln_failure;",
              "#endif", "",
              f"#define {name.upper()}_OUT_OF_MEMORY ({OUT_OF_MEMORY})",
              f"#define {name.upper()}_SHAPE_MISMATCH ({SHAPE_MISMATCH})", ""]
    fields = " ".join(f"kiln_memref_{r['rank']}d r{i};" for i, r in enumerate(meta["results"]))
    lines += [f"/* Results, each owned by the caller (free `allocated`, or call {name}_free_results):"]
    lines += [f" *   r{i}: {_describe(r['dtype'], ['?'] * r['rank'])} ({c_type(r['dtype'])})"
              for i, r in enumerate(meta["results"])]
    lines += [" */", f"typedef struct {{ {fields or 'char unused;'} }} {name}_results;", ""]
    params = [f"{name}_results *results"] + [_param_decl(p) for p in meta["params"]] + ["kiln_failure *failure"]
    lines += [f"/* {name}({', '.join(p['name'] + ': ' + _describe(p['dtype'], p['shape']) for p in meta['params'])})",
              " * Returns 0 on success; the positive kind of a failed run-time check",
              " * (`failure`, if not NULL, receives its kind, values and message),",
              f" * {name.upper()}_OUT_OF_MEMORY when an allocation failed (its size in",
              f" * failure->values[0]), or {name.upper()}_SHAPE_MISMATCH when argument shapes",
              " * disagree with the annotations."]
    if meta["writeback"]:
        written = ", ".join(meta["params"][i]["name"] for i in meta["writeback"])
        lines.append(f" * Writes to {written} go directly into the caller's arrays.")
    lines += [" */", f"int64_t {name}({', '.join(params)});", "",
              f"/* Frees every result buffer of a successful call. */",
              f"void {name}_free_results({name}_results *results);", "",
              "#ifdef __cplusplus", "}", "#endif", f"#endif /* {guard} */", ""]
    return "\n".join(lines)


def c_wrapper(meta: dict, header_name: str) -> str:
    """C source of the exported entry point around the kernel."""
    name, kernel = meta["name"], meta["kernel_symbol"]
    # The definition names its parameters p0, p1, ... so that no Python
    # parameter name can collide with the wrapper's locals.
    params = [{**p, "name": f"p{i}"} for i, p in enumerate(meta["params"])]
    kernel_results = meta["kernel_results"]
    out = [f'#include "{header_name}"', "#include <stdlib.h>", "#include <string.h>", "",
           "int64_t kiln_invoke(void (*packed)(void **), void **args, int64_t *failure);",
           f"void _mlir__mlir_ciface_{kernel}(void **args);", ""]
    for r in sorted({r["rank"] for r in kernel_results} - {r["rank"] for r in meta["results"]}
                    - {len(p["shape"]) for p in params}):
        out.append(_memref_typedef(r))
    fields = " ".join(f"kiln_memref_{r['rank']}d r{i};" for i, r in enumerate(kernel_results))
    out += [f"typedef struct {{ {fields or 'char unused;'} }} {kernel}_results;", "",
            "static int kiln_seen(void *p, void *const *seen, int n) {",
            "  for (int i = 0; i < n; ++i) if (seen[i] == p) return 1;",
            "  return p == (void *)0xDEADBEEF; /* a constant inside the library */",
            "}", "",
            "/* Make `allocated` a buffer the caller owns: copy it when it is an",
            " * argument, another result or a constant. */",
            "static void kiln_take(void **allocated, void **aligned, int64_t *offset, const int64_t *sizes,",
            "                      int rank, size_t itemsize, void **seen, int *nseen) {",
            "  if (kiln_seen(*allocated, seen, *nseen)) {",
            "    size_t n = itemsize;",
            "    for (int k = 0; k < rank; ++k) n *= (size_t)sizes[k];",
            "    void *copy = malloc(n ? n : 1);",
            "    memcpy(copy, (char *)*aligned + *offset * (int64_t)itemsize, n);",
            "    *allocated = *aligned = copy;",
            "    *offset = 0;",
            "  }",
            "  seen[(*nseen)++] = *allocated;",
            "}", "",
            "static void kiln_canonical_strides(int64_t *strides, const int64_t *sizes, int rank) {",
            "  int64_t step = 1;",
            "  for (int k = rank - 1; k >= 0; --k) { strides[k] = step; step *= sizes[k]; }",
            "}", ""]
    signature = [f"{name}_results *results"] + [_param_decl(p) for p in params] + ["kiln_failure *failure"]
    out.append(f"int64_t {name}({', '.join(signature)}) {{")
    # Implicit dims, and the shape checks that keep the kernel in bounds.
    dim_names: dict[str, str] = {}
    for k, (arg, axis) in enumerate(meta["dim_sources"]):
        out.append(f"  int64_t dim{k} = {params[arg]['name']}->sizes[{axis}];")
        dim_names[params[arg]["shape"][axis]] = f"dim{k}"
    sources = {tuple(s) for s in meta["dim_sources"]}
    for i, p in enumerate(params):
        for axis, d in enumerate(p["shape"]):
            expected = str(d) if isinstance(d, int) else dim_names.get(d)
            if expected is not None and (i, axis) not in sources:
                out.append(f"  if ({p['name']}->sizes[{axis}] != {expected}) return {SHAPE_MISMATCH};")
    nseen_max = len(params) + len(kernel_results) + len(meta["dim_sources"])
    out.append(f"  void *seen[{max(nseen_max, 1)}];")
    out.append("  int nseen = 0;")
    slots = []
    for k in range(len(meta["dim_sources"])):
        out.append(f"  kiln_memref_0d dim{k}_desc = {{&dim{k}, &dim{k}, 0}};")
        out.append(f"  seen[nseen++] = &dim{k};")
        slots.append(f"dim{k}_desc")
    for i, p in enumerate(params):
        rank = len(p["shape"])
        if rank == 0:
            out.append(f"  {c_type(p['dtype'])} arg{i}_value = {p['name']};")
            out.append(f"  kiln_memref_0d arg{i} = {{&arg{i}_value, &arg{i}_value, 0}};")
            out.append(f"  seen[nseen++] = &arg{i}_value;")
        else:
            out.append(f"  kiln_memref_{rank}d arg{i} = *{p['name']};")
            out.append(f"  kiln_canonical_strides(arg{i}.strides, arg{i}.sizes, {rank});")
            out.append(f"  seen[nseen++] = arg{i}.allocated;")
        slots.append(f"arg{i}")
    out.append(f"  {kernel}_results out;")
    pointers = (["&out"] if kernel_results else []) + [f"&{s}" for s in slots]
    for k, ptr in enumerate(pointers):
        out.append(f"  void *slot{k} = {ptr};")
    packed = ", ".join(f"&slot{k}" for k in range(len(pointers))) or "0"
    out.append(f"  void *packed[] = {{{packed}}};")
    out.append("  int64_t fail[4] = {0, 0, 0, 0};")
    out.append(f"  int64_t code = kiln_invoke(_mlir__mlir_ciface_{kernel}, packed, fail);")
    out.append("  if (code) {")
    out.append("    if (failure) { failure->kind = fail[0]; failure->values[0] = fail[1]; "
               "failure->values[1] = fail[2]; failure->message = (const char *)(intptr_t)fail[3]; }")
    out.append("    return code;")
    out.append("  }")
    implicit = meta["num_implicit_out"]
    explicit = len(meta["results"])
    # Explicit results first (they join `seen`), then dim results, freed
    # unless a result still uses their buffer. Written arguments are not
    # results: the kernel writes them in place (kiln-store-written-arguments).
    order = list(range(implicit, len(kernel_results))) + list(range(implicit))
    for j in order:
        r = kernel_results[j]
        field = f"out.r{j}"
        itemsize = np.dtype(r["dtype"]).itemsize
        sizes = f"{field}.sizes" if r["rank"] else "0"
        release = [f"  if (!kiln_seen({field}.allocated, seen, nseen)) {{ free({field}.allocated); "
                   f"seen[nseen++] = {field}.allocated; }}"]
        if j < implicit:  # a dim result: the caller has it in the results' sizes
            out += release
        else:
            out.append(f"  kiln_take(&{field}.allocated, &{field}.aligned, &{field}.offset, {sizes}, "
                       f"{r['rank']}, {itemsize}, seen, &nseen);")
            out.append(f"  results->r{j - implicit} = {field};")
    out += ["  return 0;", "}", ""]
    out += [f"void {name}_free_results({name}_results *results) {{"]
    out += [f"  free(results->r{i}.allocated);" for i in range(explicit)]
    out += ["}", ""]
    return "\n".join(out)


class LoadedFunction:
    """A function exported by `kiln.export`, loaded back with `kiln.load`:
    call it with NumPy arrays and scalars matching its annotations.

    >>> f = kiln.load("out/saxpy")      # doctest: +SKIP
    >>> f(2.0, np.ones(3), np.ones(3))  # doctest: +SKIP
    array([3., 3., 3.])
    """

    def __init__(self, directory: str, meta: dict):
        self.directory = directory
        self.meta = meta
        self.__name__ = meta["name"]
        self.params = meta["params"]
        library = os.path.join(directory, meta["library"])
        specs = [ValueSpec(np.dtype(a["dtype"]), a["rank"]) for a in meta["kernel_args"]]
        results = [ValueSpec(np.dtype(r["dtype"]), r["rank"]) for r in meta["kernel_results"]]
        written = [len(meta["dim_sources"]) + position for position in meta["writeback"]]
        self.executable = Executable(library, meta["kernel_symbol"], specs, results, written)
        self._dtypes = [np.dtype(p["dtype"]) for p in self.params]

    def __call__(self, *args: Any) -> Any:
        if len(args) != len(self.params):
            raise KilnTypeError(f"{self.__name__} takes {len(self.params)} arguments "
                                f"({', '.join(p['name'] for p in self.params)}), got {len(args)}")
        leaves = [self._check_arg(i, x) for i, x in enumerate(args)]
        self._check_dims(leaves)
        values = [leaves[i].shape[axis] for i, axis in self.meta["dim_sources"]] + leaves
        results = self.executable(values)[self.meta["num_implicit_out"]:]
        return tree.unflatten(self.meta["out_tree"], results)

    def _check_arg(self, i: int, x: Any) -> Any:
        param, dtype = self.params[i], self._dtypes[i]
        where = f"{self.__name__}: argument {param['name']!r}"
        if not param["shape"]:
            if isinstance(x, np.ndarray) and x.ndim:
                raise KilnValueError(f"{where}: expected a scalar {dtype}, got an array of shape {x.shape}")
            return x
        if i in self.meta["writeback"]:
            if not (isinstance(x, np.ndarray) and x.dtype == dtype and x.flags.writeable):
                raise KilnTypeError(f"{where} is written by the function: pass a writable {dtype} NumPy array")
            arr = x
        else:
            arr = np.asarray(x)
        if arr.dtype != dtype:
            raise KilnTypeError(f"{where}: expected dtype {dtype}, got {arr.dtype}; convert with .astype({dtype.name!r})")
        if arr.ndim != len(param["shape"]):
            raise KilnValueError(f"{where}: expected {_describe(dtype, param['shape'])}, got shape {arr.shape}")
        return arr

    def _check_dims(self, leaves: list) -> None:
        named: dict[str, tuple[str, int]] = {}
        for param, x in zip(self.params, leaves):
            for axis, d in enumerate(param["shape"]):
                size = x.shape[axis]
                culprit = f"{self.__name__}: argument {param['name']!r} has shape {x.shape}"
                if isinstance(d, int) and size != d:
                    raise KilnValueError(f"{culprit} but axis {axis} is annotated as {d}")
                if isinstance(d, str):
                    if d in named and named[d][1] != size:
                        raise KilnValueError(f"{culprit}: dim {d!r} (axis {axis}) is {size} here but "
                                             f"{named[d][1]} in argument {named[d][0]!r}; annotated dims "
                                             "with one name must agree")
                    named.setdefault(d, (param["name"], size))

    def __reduce__(self):
        """Pickled as the library's bytes, the metadata and the bundled
        libraries it needs: the receiving process writes them under its
        cache folder and loads the library."""
        with open(os.path.join(self.directory, self.meta["library"]), "rb") as f:
            library = f.read()
        bundled = {}
        for name in self.meta.get("bundled", ()):
            with open(os.path.join(self.directory, name), "rb") as f:
                bundled[name] = f.read()
        return rebuild_loaded, (library, self.meta, bundled)

    def __repr__(self) -> str:
        return f"<kiln exported function {self.__name__} from {self.directory}>"


def received_library_path(data: bytes, filename: str) -> str:
    """A library received as bytes (a pickled function), written once under
    `<cache dir>/received/<sha256>/filename`; returns its path."""
    digest = hashlib.sha256(data).hexdigest()
    folder = os.path.join(cache.cache_dir(), "received", digest[:32])
    path = os.path.join(folder, filename)
    try:
        with open(path, "rb") as f:
            if hashlib.sha256(f.read()).hexdigest() == digest:
                return path
    except OSError:
        pass
    return cache.write_atomically(path, lambda tmp: _write_bytes(tmp, data))


def _write_bytes(path: str, data: bytes) -> None:
    with open(path, "wb") as f:
        f.write(data)


def rebuild_loaded(library: bytes, meta: dict, bundled: dict[str, bytes] | None = None) -> LoadedFunction:
    """The receiving side of a pickled `LoadedFunction`: the bundled
    libraries go beside the library, where its rpath finds them."""
    path = received_library_path(library, meta["library"])
    folder = os.path.dirname(path)
    for name, data in (bundled or {}).items():
        target = os.path.join(folder, name)
        if not os.path.exists(target) or os.path.getsize(target) != len(data):
            cache.write_atomically(target, lambda tmp: _write_bytes(tmp, data))
    return LoadedFunction(folder, meta)


def read_metadata(directory: str, name: str | None = None) -> dict:
    """The metadata JSON of the export in `directory` (the only one, or `name`)."""
    if name is None:
        found = sorted(f for f in os.listdir(directory) if f.endswith(".kiln.json"))
        if len(found) != 1:
            raise KilnValueError(f"kiln.load: expected one *.kiln.json in {directory}, found {found or 'none'}; "
                                 "pass name=...")
        path = os.path.join(directory, found[0])
    else:
        path = os.path.join(directory, f"{name}.kiln.json")
    with open(path) as f:
        meta = json.load(f)
    if meta.get("format") != FORMAT_VERSION:
        raise KilnValueError(f"kiln.load: {path} has format {meta.get('format')}, this kiln reads {FORMAT_VERSION}")
    return meta


def load(path: str, name: str | None = None) -> LoadedFunction:
    """Load a function exported with `kiln.export` from the folder `path`
    (no tracing, no MLIR): a callable taking NumPy arrays and scalars.

    >>> saxpy = kiln.load("out")  # doctest: +SKIP
    >>> saxpy(2.0, np.ones(3), np.ones(3))  # doctest: +SKIP
    array([3., 3., 3.])
    """
    return LoadedFunction(path, read_metadata(path, name))
