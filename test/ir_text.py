"""Pieces of printed MLIR for tests that look at the IR a stage produced.

In: the text of a stage (kiln.get_compilation_stage). Out: `op_text`, the
text of one op with its regions, so that a test can say what is inside a
loop and not what follows it.
"""


def op_text(text: str, start: int) -> str:
    r"""The op printed at `start`, up to the brace that closes its last region
    (an scf.while has two: its condition, then `do { body }`).

    >>> op_text("scf.while (%a) { c } do { b }\nnext", 0)
    'scf.while (%a) { c } do { b }'
    """
    depth = 0
    for i in range(start, len(text)):
        if text[i] == "{":
            depth += 1
        elif text[i] == "}":
            depth -= 1
            if depth == 0 and not text[i + 1:].lstrip(" ").startswith("do {"):
                return text[start:i + 1]
    return text[start:]
