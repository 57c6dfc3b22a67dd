"""The exceptions spf raises (docs/api.md).

Every error a user can cause is an :class:`SpfError`; messages say what failed, where, and
what to do. ``ParseError`` renders the offending text with a caret under the position::

    >>> try:
    ...     raise ParseError("expected ']'", text="{[i : i < N}", span=(3, 4))
    ... except ParseError as err:
    ...     print(err)
    expected ']'
      {[i : i < N}
         ^
"""

from __future__ import annotations

from collections.abc import Iterable


class SpfError(Exception):
    """Base class of every error spf raises on purpose."""


class ParseError(SpfError, ValueError):
    """Bad set, relation or statement text.

    ``text`` is the text parsed, ``span`` the ``(start, end)`` offsets of the offending part
    (``end`` exclusive; equal to ``start`` at the end of the text) and ``message`` what was
    expected.
    """

    def __init__(self, message: str, *, text: str = "", span: tuple[int, int] | None = None):
        self.message = message
        self.text = text
        self.span = span
        super().__init__(self._render())

    def _render(self) -> str:
        if self.span is None or not self.text:
            return self.message
        start, end = self.span
        start = max(0, min(start, len(self.text)))
        end = max(start + 1, min(end, len(self.text)))
        # show the line holding the error, with carets under the span
        line_start = self.text.rfind("\n", 0, start) + 1
        line_end = self.text.find("\n", start)
        if line_end < 0:
            line_end = len(self.text)
        if line_end - line_start > _LONG:  # a long line: the part around the error
            line_start = max(line_start, start - _WINDOW // 2)
            line_end = min(line_end, line_start + _WINDOW)
        line = self.text[line_start:line_end]
        width = max(1, min(end, line_end) - start)
        before = "".join(c if c == "\t" else " " for c in line[: start - line_start])
        caret = before + "^" * width  # a tab under a tab: the caret stays under the span
        return f"{self.message}\n  {line}\n  {caret}"


_LONG = 1000
"""A line longer than this is shown in part around a parse error: :data:`_WINDOW`."""
_WINDOW = 400
"""The characters of a long line shown around a parse error."""


class VerifyError(SpfError):
    """An ill-formed computation: a name declared twice or clashing with another kind of name,
    an access that uses a non-iterator, a source or declaration the IR cannot hold. The
    message names the statement, data space or UF and says what to rename or declare."""


class ArityError(VerifyError, ValueError):
    """Tuple arity mismatch: schedule vs domain, access vs data space rank, UF arity."""


class UndeclaredError(SpfError, KeyError):
    """Unknown statement, loop, data space, buffer or UF name; lists the known names."""

    def __init__(self, kind: str, name: str, known: Iterable[str] = (), hint: str = ""):
        self.kind = kind
        self.name = name
        self.known = tuple(sorted(known))
        listing = ", ".join(repr(k) for k in self.known) if self.known else "none"
        message = f"unknown {kind} {name!r}; known {kind}s: {listing}"
        if hint:
            message += f". {hint}"
        self.message = message
        super().__init__(message)

    def __str__(self) -> str:  # KeyError would quote the whole message
        return self.message


class ScheduleError(SpfError):
    """A scheduling command that cannot apply: a malformed argument (a tile size of 0, a loop
    named twice), a loop or statement it cannot act on, or a trace entry that is not a command.
    The message names the command, the statement and the loop; as the error rises through the
    command runner a note ``During: applying <command>`` is added."""


class IllegalScheduleError(ScheduleError):
    """A schedule or tag that violates a dependence; the message names the dependence."""


class CodegenError(SpfError):
    """A computation that cannot be generated for the chosen target."""


class CompileError(SpfError):
    """The C/CUDA/MPI/HLS compiler failed."""

    def __init__(self, message: str, *, command: str = "", source_path: str = "", stderr: str = ""):
        self.command = command
        self.source_path = source_path
        self.stderr = stderr
        parts = [message]
        if command:
            parts.append(f"command: {command}")
        if source_path:
            parts.append(f"source: {source_path}")
        if stderr:
            parts.append(f"compiler output:\n{stderr}")
        super().__init__("\n".join(parts))


class ToolchainError(CompileError):
    """A tool or runtime spf needs is missing or failed outside the compiler proper: Graphviz's
    ``dot``, mpi4py, libgomp, a GPU runtime, cffi declaring a kernel, scipy. The message says
    what to install or set; ``command`` and ``stderr`` are there when a tool ran."""


class FormatError(SpfError):
    """A sparse format (``spf.Format``) whose definition is inconsistent (storage relation not a
    function of the coordinates, undeclared UFs, bad sizes), or a conversion between formats
    spf cannot synthesize; the message names the format and what to change."""


class ArgumentError(SpfError, TypeError):
    """Bad kernel arguments: missing, unknown, wrong dtype or shape, non-contiguous, read-only."""

    @classmethod
    def positional(
        cls, where: str, count: int, call: str, names: Iterable[str], note: str = ""
    ) -> ArgumentError:
        """The error of a call of ``call`` that passed ``count`` arguments by position: every
        compiled callable takes its arguments by name, and the message lists them.

        >>> for part in str(ArgumentError.positional("kernel f", 2, "f", ["N", "x"])).split("; "):
        ...     print(part)
        kernel f: got 2 positional argument(s)
        arguments are passed by name: call f(N=..., x=...)
        the arguments are N, x
        """
        listed = list(names)
        keywords = ", ".join(f"{n}=..." for n in listed)
        return cls(
            f"{where}: got {count} positional argument(s); arguments are passed by name: "
            f"call {call}({keywords}){note}; the arguments are {', '.join(listed) or 'none'}"
        )


class InternalError(SpfError):
    """An spf bug, not a misuse: an internal invariant failed (a text spf built that it cannot
    read back, a command class without ``perform``), or a generated kernel computed a result
    that differs from the reference beyond round-off. The message starts ``spf bug`` or asks
    for a report with what reproduces it; nothing the caller changes avoids it."""


class PreconditionWarning(UserWarning):
    """An access stays inside its data space only for some parameter values (PolyBench's
    ``durbin`` reads ``r(0)``: fine unless ``N = 0``). ``codegen`` and ``compile`` warn once,
    naming the condition and the access; the kernel lists it in ``kernel.preconditions`` and a
    call with ``check=True`` refuses parameters outside it. ``comp.assume(<condition>)``
    removes the warning."""


class DroppedTagWarning(UserWarning):
    """A loop directive (``pipeline``, ``unroll``) on a loop that code generation removes (a
    loop of one iteration, which isl prints as its value): the target source has no pragma
    for it. ``codegen("hls")`` and ``compile(target="hls")`` warn, naming the statement, the
    loop and the tag."""


class CostWarning(UserWarning):
    """A computation whose generated loops cost more than its input and output call for,
    where another formulation does not: ``spf.einsum("C(i,j) = A(i,k) * B(j,k)", A=CSR,
    B=CSR, C=CSR)`` merges a row of ``A`` with every row of ``B`` (``I * J`` merges however
    few products exist). ``spf.einsum`` warns when it binds such a formula, naming the loop
    and the operand, and saying what scans only the products that exist."""


def add_context(err: BaseException, note: str) -> None:
    """Add ``note`` (``During: applying tile(...)``) to ``err`` as it rises, once: an error
    raised again through the same place keeps one copy.

    >>> err = ScheduleError("tile: size must be positive")
    >>> add_context(err, "During: applying tile('i', 'j', 0, 4)")
    >>> add_context(err, "During: applying tile('i', 'j', 0, 4)")
    >>> err.__notes__
    ["During: applying tile('i', 'j', 0, 4)"]
    """
    if note not in getattr(err, "__notes__", ()):
        err.add_note(note)


__all__ = [
    "ArgumentError",
    "ArityError",
    "CodegenError",
    "CompileError",
    "CostWarning",
    "DroppedTagWarning",
    "FormatError",
    "IllegalScheduleError",
    "InternalError",
    "ParseError",
    "PreconditionWarning",
    "ScheduleError",
    "SpfError",
    "ToolchainError",
    "UndeclaredError",
    "VerifyError",
    "add_context",
]
