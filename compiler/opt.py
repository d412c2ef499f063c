"""`kiln-opt`: run passes on MLIR text, like `mlir-opt`, with kiln's passes.

In: an MLIR file (or stdin) plus pass specs (`-p`, `--pass-pipeline`) or a
stage of the default pipeline (`--stage`, `--pipeline`).
Out: the transformed module on stdout (or `-o`); MLIR diagnostics with
their `file:line:col` on stderr and exit status 1 on any failure.

    kiln-opt in.mlir -p 'kiln-legalize-dynamic,func.func(stablehlo-legalize-to-linalg)'
    kiln-opt in.mlir --pass-pipeline='builtin.module(canonicalize,cse)'
    kiln-opt in.mlir --stage linalg
    kiln-opt in.mlir --split-input-file -p canonicalize

With --split-input-file each chunk between `// -----` lines is parsed and
transformed on its own; diagnostics keep the line numbers of the whole file,
the chunks that succeed are printed joined by `// -----`, and the exit status
is 1 if any chunk failed.
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass
from typing import Sequence, TextIO

from kiln.compiler.mlir import ir, passmanager
from kiln.dialects import new_context
from kiln.compiler.passes import PassSpecError, load_all, parse_pass_spec, pass_description, pass_options
from kiln.compiler.pipeline import DEFAULT_PIPELINE, PipelineError, is_kiln_pass, run_passes

SPLIT_MARKER = "// -----"
# `--stage mlir` is the input of the default pipeline: it runs no pass.
INPUT_STAGE = "mlir"
# Deeper nesting than this is refused: the native stack would overflow at
# around 10,000 levels, and real IR nests a few dozen.
MAX_NESTING = 1000
_NESTING_TOKENS = re.compile(r'"(?:[^"\\\n]|\\.)*"|//[^\n]*|->|[()\[\]{}<>\n]')
# The name MLIR gives the text passed to `Module.parse`.
PARSE_BUFFER_NAME = "-"
# A location of the parsed text as printed inside a pass's message.
_PARSED_LOC = re.compile(r'loc\("-":(\d+):(\d+)\)(: )?')
_FILE_LOC = re.compile(r'"((?:[^"\\]|\\.)*)":(\d+):(\d+)')


class OptError(Exception):
    """A failure already worded for the user: one or more diagnostic lines."""


# --------------------------------------------------------------------------
# Pass specs


def split_top_level(text: str) -> list[str]:
    """Split a comma-separated pass list, keeping commas inside `{}` and `()`.

    >>> split_top_level("a,func.func(b,c),d{x=1,2}")
    ['a', 'func.func(b,c)', 'd{x=1,2}']
    """
    if not text.strip():
        return []
    items: list[str] = []
    depth = 0
    current: list[str] = []
    for ch in text:
        if ch in "({":
            depth += 1
        elif ch in ")}":
            depth -= 1
            if depth < 0:
                raise OptError(f"error: unbalanced '{ch}' in pass list {text!r}")
        if ch == "," and depth == 0:
            items.append("".join(current).strip())
            current = []
            continue
        current.append(ch)
    if depth != 0:
        raise OptError(f"error: unclosed '(' or '{{' in pass list {text!r}")
    items.append("".join(current).strip())
    if any(not item for item in items):
        raise OptError(f"error: empty pass name in pass list {text!r}")
    return items


def specs_from_pass_pipeline(text: str) -> list[str]:
    """`builtin.module(a,b)` -> ["a", "b"]; kiln passes may appear at that level."""
    text = text.strip()
    head = "builtin.module("
    if not (text.startswith(head) and text.endswith(")")):
        raise OptError(f"error: --pass-pipeline must have the form 'builtin.module(...)', got {text!r}")
    body = text[len(head):-1]
    return split_top_level(body) if body.strip() else []


def _kiln_pass_inside(spec: str) -> str | None:
    """A kiln pass named inside an upstream spec, e.g. `func.func(kiln-x)`."""
    passes = load_all()
    return next((name for name in re.findall(r"[\w.-]+", spec) if name in passes), None)


def check_pipeline(specs: Sequence[str], ctx: ir.Context) -> None:
    """Reject unknown passes and bad options before reading any input."""
    for spec in specs:
        try:
            parse_pass_spec(spec)
        except PassSpecError as e:
            raise OptError(f"error: {e}") from None
    upstream = [spec for spec in specs if not is_kiln_pass(spec)]
    if not upstream:
        return
    text = "builtin.module(" + ",".join(upstream) + ")"
    try:
        passmanager.PassManager.parse(text, context=ctx)
    except ValueError as e:
        detail = "\n".join(line.rstrip() for line in str(e).splitlines() if line.strip())
        message = f"error: bad pass pipeline {text!r}:\n{detail}"
        nested = next(filter(None, map(_kiln_pass_inside, upstream)), None)
        if nested:
            message += (f"\nnote: kiln pass '{nested}' runs on the whole module; "
                        "list it at the top level, not inside an op-anchored pipeline")
        raise OptError(message) from None


def stage_specs(stage: str) -> list[tuple[str, list[str]]]:
    """The default pipeline up to and including `stage`."""
    names = [name for name, _ in DEFAULT_PIPELINE]
    if stage == INPUT_STAGE:
        return []
    if stage not in names:
        raise OptError(f"error: unknown stage {stage!r}; stages are {', '.join([INPUT_STAGE, *names])}")
    return DEFAULT_PIPELINE[: names.index(stage) + 1]


# --------------------------------------------------------------------------
# Diagnostics


def _where(loc: ir.Location, filename: str) -> str:
    """`file:line:col` of a location (the first file position inside fused or
    call-site locations), or just the input's name when it has none.
    Positions in the parsed buffer (named "-") are positions in `filename`;
    locations the IR itself carries keep their own file."""
    match = _FILE_LOC.search(str(loc))
    if not match:
        return filename
    source = filename if match.group(1) == PARSE_BUFFER_NAME else match.group(1)
    return f"{source}:{match.group(2)}:{match.group(3)}"


def _severity_word(severity: ir.DiagnosticSeverity) -> str:
    return {
        ir.DiagnosticSeverity.ERROR: "error",
        ir.DiagnosticSeverity.WARNING: "warning",
        ir.DiagnosticSeverity.NOTE: "note",
        ir.DiagnosticSeverity.REMARK: "remark",
    }.get(severity, "error")


def format_diagnostic(diag: ir.DiagnosticInfo, filename: str) -> str:
    lines = [f"{_where(diag.location, filename)}: {_severity_word(diag.severity)}: {diag.message}"]
    for note in diag.notes:
        lines.append(f"{_where(note.location, filename)}: note: {note.message}")
    return "\n".join(lines)


def _format_mlir_error(err: ir.MLIRError, filename: str, context: str = "") -> str:
    diags = [format_diagnostic(d, filename) for d in err.error_diagnostics]
    if not diags:
        diags = [f"{filename}: error: {err}"]
    if context:
        diags.append(f"{filename}: note: {context}")
    return "\n".join(diags)


# --------------------------------------------------------------------------
# Running one module


@dataclass
class Job:
    """What to do with every input chunk: groups of (stage, specs)."""

    groups: list[tuple[str, list[str]]]
    allow_unregistered: bool = False
    print_generic: bool = False


def _run_group(module: ir.Module, stage: str, specs: list[str], filename: str) -> None:
    """Run specs, one kiln pass or one run of upstream passes at a time, so a
    failure names the pass that failed."""
    chunks: list[list[str]] = []
    for spec in specs:
        if is_kiln_pass(spec) or not chunks or is_kiln_pass(chunks[-1][0]):
            chunks.append([spec])
        else:
            chunks[-1].append(spec)
    for chunk in chunks:
        where = f"in stage {stage!r}, " if stage != "kiln-opt" else ""
        what = f"{where}while running {', '.join(chunk)}"
        try:
            run_passes(module, chunk, stage)
        except ir.MLIRError as e:
            raise OptError(_format_mlir_error(e, filename, what)) from None
        except PipelineError as e:
            cause = e.__context__
            if isinstance(cause, ir.MLIRError):
                raise OptError(_format_mlir_error(cause, filename, what)) from None
            raise OptError(f"{filename}: error: {e}") from None
        except (ValueError, TypeError) as e:
            # A kiln pass rejected its input on purpose (internal errors are
            # AssertionErrors, handled below).
            raise OptError(f"{_rejection(str(e), filename)}\n{filename}: note: {what}") from None
        except Exception as e:  # a kiln pass broke on this input: report, do not crash
            raise OptError(_internal_error(e, filename, what)) from None


def _rejection(message: str, filename: str) -> str:
    """A kiln pass's message as a diagnostic, placed at the first location of
    the input it names (`loc("-":3:8)`)."""
    loc = _PARSED_LOC.search(message)
    if not loc:
        return f"{filename}: error: {message}"
    message = message[:loc.start()] + message[loc.end():]
    return f"{filename}:{loc.group(1)}:{loc.group(2)}: error: {message}"


def _internal_error(e: Exception, filename: str, what: str) -> str:
    return (f"{filename}: error: internal error {what}: {type(e).__name__}: {e}\n"
            f"{filename}: note: this is a bug in the pass; please report it with this input")


def configure_context(ctx: ir.Context, job: Job, filename: str) -> None:
    """One context serves every chunk of the input (creating one costs ~50 ms)."""
    ctx.allow_unregistered_dialects = job.allow_unregistered

    def on_diagnostic(diag: ir.DiagnosticInfo) -> bool:
        # Errors of failing calls arrive inside MLIRError; warnings, remarks
        # and errors emitted outside such a call arrive here.
        print(format_diagnostic(diag, filename), file=sys.stderr)
        return True

    ctx.attach_diagnostic_handler(on_diagnostic)


def process_module(text: str, filename: str, job: Job, ctx: ir.Context, line_offset: int = 0) -> str:
    """Parse `text`, run the job's passes, return the printed module."""
    check_nesting(text, filename, line_offset)
    try:
        # Leading newlines keep line numbers those of the whole file.
        module = ir.Module.parse("\n" * line_offset + text, context=ctx)
    except ir.MLIRError as e:
        raise OptError(_format_mlir_error(e, filename)) from None
    for stage, specs in job.groups:
        _run_group(module, stage, specs, filename)
    try:
        module.operation.verify()
    except ir.MLIRError as e:
        raise OptError(_format_mlir_error(e, filename, "the module does not verify after the passes")) from None
    asm = module.operation.get_asm(print_generic_op_form=job.print_generic, assume_verified=True)
    return asm if asm.endswith("\n") else asm + "\n"


# --------------------------------------------------------------------------
# Input and output


def read_source(path: str) -> tuple[str, str]:
    """Text and display name of the input; binary or non-UTF-8 input is an error."""
    name = "<stdin>" if path == "-" else path
    try:
        data = sys.stdin.buffer.read() if path == "-" else open(path, "rb").read()
    except OSError as e:
        raise OptError(f"{name}: error: cannot read input: {e.strerror or e}") from None
    nul = data.find(b"\0")
    if nul >= 0:
        line = data.count(b"\n", 0, nul) + 1
        raise OptError(f"{name}:{line}: error: input looks binary (NUL byte at offset {nul}); "
                       "kiln-opt reads MLIR text")
    try:
        return data.decode("utf-8"), name
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        raise OptError(f"{name}:{line}: error: input is not valid UTF-8 "
                       f"(byte 0x{data[e.start]:02x} at offset {e.start}); kiln-opt reads MLIR text") from None


def nesting_depth(text: str) -> tuple[int, int]:
    """Deepest nesting of `( [ { <` outside strings and `//` comments, and the
    line where it is reached. An arrow `->` closes nothing."""
    depth = deepest = deepest_line = 0
    line = 1
    for token in _NESTING_TOKENS.finditer(text):
        tok = token.group()
        if tok == "\n":
            line += 1
        elif tok in "([{<":
            depth += 1
            if depth > deepest:
                deepest, deepest_line = depth, line
        elif tok in ")]}>":
            depth = max(depth - 1, 0)
    return deepest, deepest_line


def check_nesting(text: str, filename: str, line_offset: int = 0) -> None:
    """MLIR's parser and passes recurse per nesting level: absurdly deep input
    would overflow the native stack and kill the process, so refuse it."""
    deepest, line = nesting_depth(text)
    if deepest > MAX_NESTING:
        raise OptError(f"{filename}:{line + line_offset}: error: brackets nest {deepest} levels deep; "
                       f"kiln-opt accepts at most {MAX_NESTING}")


def split_chunks(text: str) -> list[tuple[str, int]]:
    """Split on lines `// -----`; each chunk with the number of lines before it."""
    chunks: list[tuple[str, int]] = []
    current: list[str] = []
    start = 0
    for number, line in enumerate(text.splitlines(keepends=True)):
        if line.strip() == SPLIT_MARKER:
            chunks.append(("".join(current), start))
            current = []
            start = number + 1
            continue
        current.append(line)
    chunks.append(("".join(current), start))
    return chunks


def list_passes(out: TextIO) -> None:
    passes = load_all()
    width = max(map(len, passes), default=0)
    print("kiln passes:", file=out)
    for name in sorted(passes):
        print(f"  {name:<{width}}  {pass_description(passes[name])}", file=out)
        for opt in pass_options(passes[name]).values():
            print(f"  {'':<{width}}    {opt.describe()}  {opt.doc}", file=out)
    print("\nUpstream MLIR and StableHLO passes are accepted by name too "
          "(e.g. canonicalize, cse, func.func(stablehlo-legalize-to-linalg)).", file=out)
    print("\nStages of the default pipeline (--stage NAME runs up to and including NAME):", file=out)
    print(f"  {INPUT_STAGE:<14}  (the input: no passes)", file=out)
    for stage, specs in DEFAULT_PIPELINE:
        print(f"  {stage:<14}  {', '.join(specs) or '(no passes yet)'}", file=out)


class _Parser(argparse.ArgumentParser):
    """Usage errors exit with 1 like every other kiln-opt failure."""

    def error(self, message: str):
        self.print_usage(sys.stderr)
        self.exit(1, f"kiln-opt: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="kiln-opt",
        description="Run MLIR passes (upstream, StableHLO and kiln's own) on an MLIR file.",
    )
    parser.add_argument("input", nargs="?", default="-", help="input .mlir file ('-' or none: stdin)")
    parser.add_argument("-p", "--passes", action="append", default=[], metavar="SPECS",
                        help="comma-separated pass specs, e.g. 'kiln-legalize-dynamic,func.func(cse)'")
    parser.add_argument("--pass-pipeline", action="append", default=[], metavar="PIPELINE",
                        help="a textual pipeline 'builtin.module(...)'")
    parser.add_argument("--stage", metavar="NAME", help="run the default pipeline up to and including NAME")
    parser.add_argument("--pipeline", action="store_true", help="run the whole default pipeline")
    parser.add_argument("-o", "--output", default="-", metavar="FILE", help="output file (default: stdout)")
    parser.add_argument("--split-input-file", action="store_true",
                        help=f"process each chunk between '{SPLIT_MARKER}' lines separately")
    parser.add_argument("--list-passes", action="store_true", help="list kiln passes and pipeline stages")
    parser.add_argument("--allow-unregistered-dialect", action="store_true",
                        help="accept operations of unknown dialects")
    parser.add_argument("--mlir-print-op-generic", action="store_true", help="print ops in generic form")
    return parser


def make_job(args: argparse.Namespace, ctx: ir.Context) -> Job:
    explicit: list[str] = []
    for text in args.passes:
        explicit += split_top_level(text)
    for text in args.pass_pipeline:
        explicit += specs_from_pass_pipeline(text)
    if (args.stage or args.pipeline) and explicit:
        raise OptError("error: use either --stage/--pipeline or -p/--pass-pipeline, not both")
    if args.stage and args.pipeline:
        raise OptError("error: use either --stage NAME or --pipeline, not both")
    if args.pipeline:
        groups = [(stage, list(specs)) for stage, specs in DEFAULT_PIPELINE]
    elif args.stage:
        groups = [(stage, list(specs)) for stage, specs in stage_specs(args.stage)]
    else:
        groups = [("kiln-opt", explicit)]
    for _, specs in groups:
        check_pipeline(specs, ctx)
    return Job(groups, args.allow_unregistered_dialect, args.mlir_print_op_generic)


def _write_output(path: str, text: str) -> None:
    if path == "-":
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    try:
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
    except OSError as e:
        raise OptError(f"{path}: error: cannot write output: {e.strerror or e}") from None


def run(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.list_passes:
        list_passes(sys.stdout)
        return 0
    ctx = new_context()
    job = make_job(args, ctx)
    text, name = read_source(args.input)
    chunks = split_chunks(text) if args.split_input_file else [(text, 0)]
    configure_context(ctx, job, name)
    outputs: list[str] = []
    failed = False
    for chunk, offset in chunks:
        try:
            outputs.append(process_module(chunk, name, job, ctx, offset))
        except OptError as e:
            print(e, file=sys.stderr)
            failed = True
    if outputs:
        _write_output(args.output, f"\n{SPLIT_MARKER}\n".join(outputs))
    return 1 if failed else 0


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `kiln-opt` console script and `python -m kiln.compiler.opt`."""
    try:
        return run(argv)
    except OptError as e:
        print(f"kiln-opt: {e}" if str(e).startswith("error:") else e, file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # The reader went away (e.g. `| head`); nothing more to say.
        return 1


if __name__ == "__main__":
    sys.exit(main())
