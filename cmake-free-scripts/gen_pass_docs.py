"""Write docs/passes.md from the default pipeline and the pass registry: each
kiln pass's description, options (type, default, doc) and module docstring.

Run after adding or changing a pass: `python cmake-free-scripts/gen_pass_docs.py`.
"""

from __future__ import annotations

import inspect
import sys
from pathlib import Path

from kiln.compiler.passes import load_all, pass_description, pass_options
from kiln.compiler.pipeline import DEFAULT_PIPELINE

HEADER = """# Passes and the pipeline

The default pipeline (`kiln.compiler.pipeline.DEFAULT_PIPELINE`) is data: an
ordered list of `(stage, [pass specs])`. Upstream MLIR and StableHLO passes
are named as in `mlir-opt`; kiln's own passes are Python classes, one file
each (`compiler/passes/kiln_foo.py` holds `kiln-foo`), found by scanning that
package, so `kiln-opt -p NAME{option=value}` and `qjit(pipelines=...)` find
both. Each kiln pass has a lit test in `test/lit/passes/NAME.mlir`. This page
is generated from the registry by `cmake-free-scripts/gen_pass_docs.py`.
"""


def render() -> str:
    passes = load_all()
    lines = [HEADER, "## Default pipeline\n"]
    for stage, specs in DEFAULT_PIPELINE:
        lines.append(f"- **{stage}**: " + ", ".join(f"`{s}`" for s in specs))
    lines.append("\n`jaxpr` and `mlir` come before the pipeline; `llvmir` is code generation after it.\n")
    lines.append("## kiln's passes\n")
    pipeline_names = [spec.partition("{")[0] for _, specs in DEFAULT_PIPELINE for spec in specs]
    in_pipeline_order = sorted(passes, key=lambda n: (pipeline_names.index(n) if n in pipeline_names
                                                      else len(pipeline_names), n))
    for name in in_pipeline_order:
        cls = passes[name]
        doc = inspect.getdoc(sys.modules[cls.__module__]) or name
        title, _, body = doc.partition("\n")
        lines.append(f"### {title.strip()}\n")
        lines.append(f"{pass_description(cls)}\n")
        options = pass_options(cls)
        if options:
            lines.append("| option | type | default | meaning |\n|---|---|---|---|")
            for opt in options.values():
                lines.append(f"| `{opt.spelling}` | {opt.type.__name__} | `{opt.default_text}` | {opt.doc} |")
            lines.append("")
        lines.append(body.strip() + "\n")
    return "\n".join(lines)


def main() -> None:
    target = Path(__file__).resolve().parent.parent / "docs" / "passes.md"
    target.write_text(render())
    print(f"wrote {target}")


if __name__ == "__main__":
    main()
