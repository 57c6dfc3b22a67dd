"""Parser of set and relation text into the syntax tree of ``syntax.py``.

The language is a superset of IEGenLib's set syntax::

    [N] -> { [i, k] -> [i, 0, k] : 0 <= i < N && rowptr(i) <= k < rowptr(i+1) }
        union { [i] : exists a : i = 2a }

A document is one or more braced *pieces* joined by ``union`` (``||`` and ``or`` are accepted
too). Formulas combine comparisons (chains like ``0 <= i < N`` included) with ``&&``/``and``,
``||``/``or`` (``and`` binds tighter), parentheses, ``true``/``false`` and ``exists``.
Expressions have ``+ - * / %``, unary minus, integers, names, uninterpreted-function calls
``f(e, ...)``, ``floor(e)``/``ceil(e)`` and implicit coefficients (``2i``, ``3f(k)``,
``2(i+1)``).

The grammar is LALR(1) (lark). A parenthesis can open either a formula ``(i < N || j > 0)`` or
an arithmetic expression ``(i + 1) * 2``; the grammar parses the contents of every
parenthesis as a formula, and the tree walker below decides from the context which one it was
(a bare expression used as a formula, or a comparison used as a value, is an error there).

Every failure is a :class:`spf.errors.ParseError` whose ``span`` points at the offending token.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import io
import os
import pickle
import sys
import tempfile
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Final, NoReturn, TypeAlias

from spf._cachedir import default_cache_dir
from spf.errors import ParseError
from spf.sets import fast_parse, syntax
from spf.sets.memo import memo

if TYPE_CHECKING:
    import lark
    from lark import Lark, Token, Tree
    from lark.exceptions import UnexpectedCharacters, UnexpectedToken
else:  # loaded when text first needs it (fast_parse.py reads well-formed text)
    from spf._lazy import lark

__all__ = ["MAX_DEPTH", "caret_error", "parse_document"]

#: Deepest nesting (parentheses, operators, formulas) accepted; deeper text is a ParseError.
MAX_DEPTH: Final = 200

# Shift/reduce conflicts exist only after the body of a bare ``exists a : body`` (on ``&&``,
# ``and``, ``||``, ``or``); lark resolves them as shift, so the body extends as far as
# possible, as in isl. tests/unit/sets/test_parse.py checks that no other conflict appears.
_GRAMMAR: Final = r"""
start: piece ((_UNION | _OROR | _ORKW) piece)*
piece: params? _LBRACE part (_SEMI part)* _RBRACE
part: tuple (_ARROW tuple)? (_COLON disj)?
    | _COLON disj           -> bare
params: _LSQB (NAME (_COMMA NAME)*)? _RSQB _ARROW
tuple: _LSQB (entry (_COMMA entry)*)? _RSQB
?entry: sum
      | sum CMP sum         -> fixed

?disj: conj ((_OROR | _ORKW) conj)*
?conj: unit ((_ANDAND | _ANDKW) unit)*
?unit: chain
     | _EXISTS _LPAR binding (_COMMA binding)* _COLON disj _RPAR  -> exists
     | _EXISTS NAME (_COMMA NAME)* _COLON disj                    -> exists
     | TRUE
     | FALSE
?chain: sum (CMP sum)*
binding: NAME (CMP sum)?

?sum: term ((PLUS | MINUS) term)*
?term: factor ((MULOP | MOD) factor)*
?factor: MINUS factor       -> neg
       | NUMBER target      -> coef
       | primary
?primary: NUMBER | target
?target: NAME | call | paren | floor
call: NAME _LPAR sum (_COMMA sum)* _RPAR component?
component: _LSQB NUMBER _RSQB
paren: _LPAR disj _RPAR
floor: (FLOOR | CEIL) _LPAR sum _RPAR

PLUS: "+"
MULOP: "*" | "/" | "%"
MOD: "mod"
MINUS: "-"
CMP: "<=" | ">=" | "==" | "!=" | "<" | ">" | "="
_LBRACE: "{"
_RBRACE: "}"
_LSQB: "["
_RSQB: "]"
_LPAR: "("
_RPAR: ")"
_COMMA: ","
_SEMI: ";"
_COLON: ":"
_ARROW: "->"
_UNION: "union"
_OROR: "||"
_ORKW: "or"
_ANDAND: "&&"
_ANDKW: "and"
_EXISTS: "exists"
TRUE: "true"
FALSE: "false"
FLOOR: "floor"
CEIL: "ceil"
NAME: /[A-Za-z_][A-Za-z0-9_]*/
NUMBER: /[0-9]+/
%ignore /\s+/
"""

#: How each terminal is named in error messages, in the order messages list them.
_DESCRIPTIONS: Final[tuple[tuple[str, str], ...]] = (
    ("NAME", "a name"),
    ("NUMBER", "a number"),
    ("_LPAR", "'('"),
    ("MINUS", "'-'"),
    ("FLOOR", "'floor'"),
    ("CEIL", "'ceil'"),
    ("_EXISTS", "'exists'"),
    ("TRUE", "'true'"),
    ("FALSE", "'false'"),
    ("_LSQB", "'['"),
    ("_LBRACE", "'{'"),
    ("CMP", "a comparison operator"),
    ("PLUS", "an arithmetic operator"),
    ("MULOP", "an arithmetic operator"),
    ("MOD", "an arithmetic operator"),
    ("_COMMA", "','"),
    ("_SEMI", "';'"),
    ("_COLON", "':'"),
    ("_ARROW", "'->'"),
    ("_ANDAND", "'&&'"),
    ("_ANDKW", "'&&'"),
    ("_OROR", "'||'"),
    ("_ORKW", "'||'"),
    ("_UNION", "'union'"),
    ("_RPAR", "')'"),
    ("_RSQB", "']'"),
    ("_RBRACE", "'}'"),
    ("$END", "end of text"),
)
_ORDER: Final = {name: index for index, (name, _) in enumerate(_DESCRIPTIONS)}
_TEXT: Final = dict(_DESCRIPTIONS)
#: Left out of an expected-list that already says "a name" (they start expressions too).
_IMPLIED_BY_NAME: Final = frozenset({"MINUS", "FLOOR", "CEIL", "TRUE", "FALSE"})
#: Reserved words: never names.
_KEYWORDS: Final = frozenset(
    {"_UNION", "_ORKW", "_ANDKW", "_EXISTS", "TRUE", "FALSE", "FLOOR", "CEIL", "MOD"}
)
_TOKEN_SHOWN: Final = 24  # longest token text quoted whole in a message

_Node: TypeAlias = "Tree[Token] | Token"


# ----------------------------------------------------------------------------- public API
@memo(4096)
def parse_document(text: str) -> syntax.Document:
    """Parse set or relation text into a :class:`syntax.Document`.

    Raises :class:`ParseError` (with ``text`` and a ``span`` pointing at the offending token)
    for any text that is not in the language, including nesting deeper than ``MAX_DEPTH``.
    Syntax trees are immutable, so one parse serves every request for the same text (the
    same text is read under different UF declarations; errors are raised afresh).
    """
    _check_paren_depth(text)
    read = fast_parse.read(text, MAX_DEPTH)  # well-formed text without lark (fast_parse.py)
    if read is not None:
        return read
    tree = _parse_tree(text)
    try:
        return _Builder(text).document(tree)
    except RecursionError:  # a safety net: MAX_DEPTH keeps the walker well inside the limit
        raise caret_error(text, (0, len(text)), "nested too deeply") from None


def caret_error(text: str, span: syntax.Span, message: str) -> ParseError:
    """A :class:`ParseError` for ``message`` that shows ``text`` with a caret under ``span``."""
    return ParseError(message, text=text, span=span)


# ----------------------------------------------------------------------------- lark layer
_OPTIONS: Final = {
    "parser": "lalr",
    "lexer": "basic",
    "propagate_positions": True,
    "maybe_placeholders": False,
}


SHIPPED_TABLES: Final = os.path.join(os.path.dirname(os.path.abspath(__file__)), "tables.lark")
"""The tables built when spf was released, shipped inside the package (a pickle of
``Lark.save``'s data with the :func:`_tables_key` they were built for): a process with an
empty cache loads them (~3 ms) instead of building them (~80 ms). Rebuild it after changing
the grammar with :func:`ship_tables`; tests/unit/sets/test_parser_tables.py fails until
then."""


def _grammar_key() -> str:
    """The grammar and the parser options the tables are built from."""
    return hashlib.sha256(repr((_GRAMMAR, sorted(_OPTIONS.items()))).encode()).hexdigest()[:24]


def _tables_key() -> str:
    """What the LALR tables depend on: the grammar, the options, lark's and Python's versions."""
    return hashlib.sha256(
        repr((_grammar_key(), lark.__version__, sys.version_info[:2])).encode()
    ).hexdigest()[:24]


def _load_tables(path: str | os.PathLike[str], key: str) -> Lark | None:
    """The parser stored at ``path`` for ``key``; None when it is missing, damaged, foreign
    or was built for another key (the caller builds the tables then)."""
    try:
        with open(path, "rb") as fh:
            stored = pickle.load(fh)  # spf's own file, like its bytecode
        if not isinstance(stored, dict) or stored.get("key") != key:
            return None
        return lark.Lark.load(stored)  # lark loads a dict as it is
    except Exception:  # missing, partial or foreign: build the tables
        return None


def _store_tables(parser: Lark, path: str | os.PathLike[str], key: str) -> None:
    """Write ``parser``'s tables to ``path`` atomically (readers see the whole file or none);
    an unwritable place only costs the next process the build."""
    folder = os.path.dirname(os.fspath(path))
    with contextlib.suppress(OSError):
        os.makedirs(folder, exist_ok=True)
        buffer = io.BytesIO()
        parser.save(buffer)
        stored = {"key": key, "grammar": _grammar_key(), **pickle.loads(buffer.getvalue())}
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tables.", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as fh:
                pickle.dump(stored, fh, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(tmp, path)
        finally:
            with contextlib.suppress(OSError):
                os.unlink(tmp)


def ship_tables() -> None:
    """Rebuild :data:`SHIPPED_TABLES` for this grammar, lark and Python (after a grammar
    change: ``python -c "from spf.sets.parse import ship_tables; ship_tables()"``)."""
    _store_tables(lark.Lark(_GRAMMAR, **_OPTIONS), SHIPPED_TABLES, _tables_key())
    os.chmod(SHIPPED_TABLES, 0o644)


@functools.cache
def _lark() -> Lark:
    """The LALR parser, built once per process. Building its tables costs ~80 ms, so they
    ship with the package (:data:`SHIPPED_TABLES`) and, when those were built for another
    lark or Python, are kept on disk (``<cache>/parser/sets-<key>.lark``) for later
    processes; an unreadable or damaged file is built again."""
    key = _tables_key()
    shipped = _load_tables(SHIPPED_TABLES, key)
    if shipped is not None:
        return shipped
    path = default_cache_dir() / "parser" / f"sets-{key}.lark"
    cached = _load_tables(path, key)
    if cached is not None:
        return cached
    parser = lark.Lark(_GRAMMAR, **_OPTIONS)
    _store_tables(parser, path, key)
    return parser


def _parse_tree(text: str) -> Tree[Token]:
    """Run lark on ``text``, turning its exceptions into :class:`ParseError`."""
    errors = lark.exceptions
    try:
        return _lark().parse(text)
    except errors.UnexpectedToken as exc:
        raise _token_error(text, exc) from None
    except errors.UnexpectedCharacters as exc:
        raise _character_error(text, exc) from None
    except errors.UnexpectedInput as exc:  # UnexpectedEOF and future kinds
        position = exc.pos_in_stream if exc.pos_in_stream is not None else len(text)
        raise caret_error(text, (position, position + 1), "unexpected input") from None
    except errors.LarkError as exc:
        message = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise caret_error(text, (0, len(text)), message) from None


def _token_error(text: str, exc: UnexpectedToken) -> ParseError:
    """Message for a token the grammar does not allow here."""
    token: Token = exc.token
    expected = _expected(exc)
    if token.type == "$END":
        position = len(text.rstrip())
        return caret_error(
            text, (position, position), f"unexpected end of text; expected {expected}"
        )
    message = f"unexpected {_quote(str(token))}; expected {expected}"
    if token.type in _KEYWORDS and "NAME" in (exc.expected or ()):
        message += f" ({_quote(str(token))} is a reserved word, not a name)"
    return caret_error(text, _token_span(token), message)


def _character_error(text: str, exc: UnexpectedCharacters) -> ParseError:
    """Message for a character that starts no token (the lexer knows no context to list)."""
    position = exc.pos_in_stream if exc.pos_in_stream is not None else 0
    char = text[position] if position < len(text) else ""
    message = f"unexpected character {char!r} (not part of any name, number or operator)"
    return caret_error(text, (position, position + 1), message)


def _expected(exc: UnexpectedToken) -> str:
    """The readable list of what the parser could have accepted instead."""
    try:
        accepts: Iterable[str] = exc.accepts or exc.expected or ()
    except (
        lark.exceptions.LarkError
    ):  # accepts replays the parser; never let that mask the real error
        accepts = exc.expected or ()
    return _describe_expected(accepts) or "something else"


def _describe_expected(names: Iterable[str]) -> str:
    """``{'NAME', 'NUMBER', '_LPAR'}`` -> ``"a name, a number or '('"``."""
    wanted = set(names)
    if "NAME" in wanted:
        wanted -= _IMPLIED_BY_NAME
    if "PLUS" in wanted:  # "an arithmetic operator" covers binary minus
        wanted.discard("MINUS")
    if "_RBRACE" in wanted:  # isl's ';' between parts: rarely what was meant
        wanted.discard("_SEMI")
    ordered = sorted(wanted, key=lambda name: (_ORDER.get(name, len(_ORDER)), name))
    words: list[str] = []
    for name in ordered:
        word = _TEXT.get(name)
        if word is not None and word not in words:
            words.append(word)
    if len(words) <= 1:
        return "".join(words)
    return ", ".join(words[:-1]) + " or " + words[-1]


def _quote(token_text: str) -> str:
    """A token's text, quoted (control characters escaped, very long text shortened)."""
    if len(token_text) > _TOKEN_SHOWN:
        token_text = token_text[: _TOKEN_SHOWN - 3] + "..."
    return repr(token_text)


def _check_paren_depth(text: str) -> None:
    """Reject absurd parenthesis nesting before lark builds a tree for it."""
    if text.count("(") <= MAX_DEPTH:
        return
    depth = 0
    for position, char in enumerate(text):
        if char == "(":
            depth += 1
            if depth > MAX_DEPTH:
                raise caret_error(text, (position, position + 1), _too_deep_message())
        elif char == ")":
            depth = max(0, depth - 1)


def _too_deep_message() -> str:
    return f"nested too deeply (more than {MAX_DEPTH} levels)"


def _token_span(token: Token) -> syntax.Span:
    """The ``(start, end)`` offsets of a token."""
    start = token.start_pos if token.start_pos is not None else 0
    end = token.end_pos if token.end_pos is not None else start + len(token)
    return (start, end)


def _span(node: _Node) -> syntax.Span:
    """The offsets of a token or of everything a tree covers (its parentheses included)."""
    if isinstance(node, lark.Token):
        return _token_span(node)
    return (node.meta.start_pos, node.meta.end_pos)


# ----------------------------------------------------------------------------- tree walker
_ExprRule: TypeAlias = "Callable[[Tree[Token], int], syntax.Expr]"
_FormulaRule: TypeAlias = "Callable[[Tree[Token], int], syntax.Formula]"


class _Builder:
    """Turns lark's tree into ``syntax`` nodes; ``depth`` arguments bound the recursion."""

    def __init__(self, text: str) -> None:
        self._text = text
        self._expr_rules: dict[str, _ExprRule] = {
            "sum": self._binary,
            "term": self._binary,
            "neg": self._neg,
            "coef": self._coef,
            "call": self._call,
            "floor": self._floor,
            "paren": self._paren_expr,
        }
        self._formula_rules: dict[str, _FormulaRule] = {
            "disj": self._disj,
            "conj": self._conj,
            "chain": self._chain,
            "exists": self._exists,
            "paren": self._paren_formula,
        }

    # --------------------------------------------------------------------- helpers
    def _fail(self, message: str, span: syntax.Span) -> NoReturn:
        raise caret_error(self._text, span, message)

    def _enter(self, node: _Node, depth: int) -> None:
        """Fail once the nesting passes ``MAX_DEPTH``."""
        if depth > MAX_DEPTH:
            start = _span(node)[0]
            self._fail(_too_deep_message(), (start, start + 1))

    def _name(self, token: Token) -> syntax.Name:
        return syntax.Name(name=str(token), span=_token_span(token))

    # --------------------------------------------------------------------- top level
    def document(self, tree: Tree[Token]) -> syntax.Document:
        """``start`` -> Document (each ``;`` part of a braced piece is one piece)."""
        pieces = tuple(
            piece
            for child in tree.children
            if isinstance(child, lark.Tree)
            for piece in self._pieces(child)
        )
        return syntax.Document(pieces=pieces, text=self._text)

    def _pieces(self, tree: Tree[Token]) -> list[syntax.Piece]:
        """``piece`` -> Pieces: optional params shared by the ``;``-separated parts."""
        params: tuple[syntax.Name, ...] | None = None
        trees: list[Tree[Token]] = []
        for child in tree.children:
            if isinstance(child, lark.Tree) and child.data == "params":
                params = tuple(
                    self._name(tok) for tok in child.children if isinstance(tok, lark.Token)
                )
            elif isinstance(child, lark.Tree) and child.data in ("part", "bare"):
                trees.append(child)
        whole = _span(tree) if len(trees) == 1 else None
        return [self._part(part, params, whole) for part in trees]

    def _part(
        self,
        tree: Tree[Token],
        params: tuple[syntax.Name, ...] | None,
        whole: syntax.Span | None,
    ) -> syntax.Piece:
        """``part`` -> Piece: one or two tuples, optional formula (``whole``: the span of
        the braced piece when this is its only part)."""
        children = list(tree.children)
        tuples = [c for c in children if isinstance(c, lark.Tree) and c.data == "tuple"]
        rest = children[len(tuples) :]
        fixed: list[syntax.Formula] = []
        if not tuples:  # isl's '{ : N > 0 }': no tuple, a set of zero-tuples
            return syntax.Piece(
                params=params,
                in_tuple=(),
                out_tuple=None,
                formula=self.formula(rest[0], 1),
                span=whole or _span(tree),
                in_span=(_span(tree)[0], _span(tree)[0]),
                out_span=None,
            )
        in_tuple, out_tuple = tuples[0], (tuples[1] if len(tuples) > 1 else None)
        ins = self._tuple(in_tuple, fixed)
        outs = None if out_tuple is None else self._tuple(out_tuple, fixed)
        formula = self.formula(rest[0], 1) if rest else None
        if fixed:
            items = (*fixed, formula) if formula is not None else tuple(fixed)
            formula = syntax.And(items=items, span=_span(tree))
        return syntax.Piece(
            params=params,
            in_tuple=ins,
            out_tuple=outs,
            formula=formula,
            span=whole or _span(tree),
            in_span=_span(in_tuple),
            out_span=None if out_tuple is None else _span(out_tuple),
        )

    def _tuple(self, tree: Tree[Token], fixed: list[syntax.Formula]) -> tuple[syntax.Expr, ...]:
        """Tuple entries; an entry ``i = e`` (isl's ``[i = 100]``) is the name ``i`` and the
        equality ``i = e``, appended to ``fixed``."""
        entries: list[syntax.Expr] = []
        for child in tree.children:
            if isinstance(child, lark.Tree) and child.data == "fixed":
                left, op, right = child.children
                name = self.expr(left, 1)
                if not isinstance(name, syntax.Name) or str(op) not in ("=", "=="):
                    self._fail(
                        "a tuple entry with a comparison must fix a name, e.g. [i = 0]",
                        _span(child),
                    )
                value = self.expr(right, 1)
                fixed.append(syntax.Compare(op="=", left=name, right=value, span=_span(child)))
                entries.append(name)
            else:
                entries.append(self.expr(child, 1))
        return tuple(entries)

    # --------------------------------------------------------------------- formulas
    def formula(self, node: _Node, depth: int) -> syntax.Formula:
        """A node in formula position -> Formula (a bare expression there is an error)."""
        self._enter(node, depth)
        if isinstance(node, lark.Tree):
            rule = self._formula_rules.get(node.data)
            if rule is not None:
                return rule(node, depth)
        elif node.type in ("TRUE", "FALSE"):
            return syntax.Bool(value=node.type == "TRUE", span=_token_span(node))
        self._fail(
            "expected a comparison operator after this expression "
            "(a constraint must compare, e.g. 'i < N')",
            _span(node),
        )

    def _disj(self, tree: Tree[Token], depth: int) -> syntax.Formula:
        items = tuple(self.formula(child, depth + 1) for child in tree.children)
        return syntax.Or(items=items, span=_span(tree))

    def _conj(self, tree: Tree[Token], depth: int) -> syntax.Formula:
        items = tuple(self.formula(child, depth + 1) for child in tree.children)
        return syntax.And(items=items, span=_span(tree))

    def _chain(self, tree: Tree[Token], depth: int) -> syntax.Formula:
        """``a op b op c ...`` -> Compare, or And of the consecutive Compares."""
        nodes = tree.children[0::2]
        ops = tree.children[1::2]
        exprs = [self.expr(node, depth + 2) for node in nodes]
        compares = tuple(
            syntax.Compare(
                op="=" if op == "==" else str(op),
                left=exprs[k],
                right=exprs[k + 1],
                span=(_span(nodes[k])[0], _span(nodes[k + 1])[1]),
            )
            for k, op in enumerate(ops)
        )
        if len(compares) == 1:
            return compares[0]
        return syntax.And(items=compares, span=_span(tree))

    def _exists(self, tree: Tree[Token], depth: int) -> syntax.Formula:
        """``exists(a, b: body)``; isl's ``exists (e0 = floor((i)/2): body)`` binds ``e0``
        and adds ``e0 = floor((i)/2)`` to the body."""
        *bindings, body = tree.children
        names: list[syntax.Name] = []
        defined: list[syntax.Formula] = []
        for item in bindings:
            if isinstance(item, lark.Token):
                names.append(self._name(item))
                continue
            name_tok, *definition = item.children
            assert isinstance(name_tok, lark.Token)
            name = self._name(name_tok)
            names.append(name)
            if definition:
                op, value = definition
                if str(op) not in ("=", "=="):
                    self._fail(
                        "an exists variable may only be defined with '=', e.g. "
                        "exists (e0 = floor(i/2): ...)",
                        _span(op),
                    )
                expr = self.expr(value, depth + 2)
                defined.append(syntax.Compare(op="=", left=name, right=expr, span=_span(item)))
        formula = self.formula(body, depth + 1)
        if defined:
            formula = syntax.And(items=(*defined, formula), span=_span(tree))
        return syntax.Exists(names=tuple(names), body=formula, span=_span(tree))

    def _paren_formula(self, tree: Tree[Token], depth: int) -> syntax.Formula:
        return self.formula(tree.children[0], depth + 1)

    # --------------------------------------------------------------------- expressions
    def expr(self, node: _Node, depth: int) -> syntax.Expr:
        """A node in expression position -> Expr (a formula there is an error)."""
        self._enter(node, depth)
        if isinstance(node, lark.Token):
            return self._leaf(node)
        rule = self._expr_rules.get(node.data)
        if rule is None:
            self._fail("expected an arithmetic expression, found a condition", _span(node))
        return rule(node, depth)

    def _leaf(self, token: Token) -> syntax.Expr:
        if token.type == "NAME":
            return self._name(token)
        if token.type == "NUMBER":
            return self._number(token)
        self._fail(
            f"expected an arithmetic expression, found {_quote(str(token))}", _token_span(token)
        )

    def _number(self, token: Token) -> syntax.Num:
        try:
            value = int(token)
        except ValueError:  # more digits than int() converts
            self._fail("number too large", _token_span(token))
        return syntax.Num(value=value, span=_token_span(token))

    def _binary(self, tree: Tree[Token], depth: int) -> syntax.Expr:
        """``a op b op c`` (one precedence level) -> left-nested BinOps."""
        nodes = tree.children[0::2]
        ops = tree.children[1::2]
        count = len(nodes)
        start = _span(nodes[0])[0]
        # the k-th operand ends up count - k levels below this node (the first count - 1)
        result = self.expr(nodes[0], depth + count - 1)
        for k in range(1, count):
            op, right_node = ops[k - 1], nodes[k]
            if not isinstance(op, lark.Token):  # pragma: no cover - the grammar forbids it
                self._fail("malformed operator", _span(op))
            result = syntax.BinOp(
                op="%" if op.type == "MOD" else str(op),
                left=result,
                right=self.expr(right_node, depth + count - k),
                span=(start, _span(right_node)[1]),
                op_span=_token_span(op),
            )
        return result

    def _neg(self, tree: Tree[Token], depth: int) -> syntax.Expr:
        operand = self.expr(tree.children[1], depth + 1)
        return syntax.Neg(operand=operand, span=_span(tree))

    def _coef(self, tree: Tree[Token], depth: int) -> syntax.Expr:
        """``2i`` / ``2 (i+1)`` / ``3f(k)`` -> BinOp('*') whose op_span is the number."""
        number, target = tree.children
        if not isinstance(number, lark.Token):  # pragma: no cover - the grammar forbids it
            self._fail("malformed coefficient", _span(number))
        return syntax.BinOp(
            op="*",
            left=self._number(number),
            right=self.expr(target, depth + 1),
            span=_span(tree),
            op_span=_token_span(number),
        )

    def _call(self, tree: Tree[Token], depth: int) -> syntax.Expr:
        name, *args = tree.children
        if not isinstance(name, lark.Token):  # pragma: no cover - the grammar forbids it
            self._fail("malformed call", _span(name))
        component: int | None = None
        last = args[-1] if args else None
        if isinstance(last, lark.Tree) and last.data == "component":
            args.pop()
            number = last.children[0]
            assert isinstance(number, lark.Token)
            component = self._number(number).value
        return syntax.Call(
            name=str(name),
            args=tuple(self.expr(arg, depth + 1) for arg in args),
            span=_span(tree),
            name_span=_token_span(name),
            component=component,
        )

    def _floor(self, tree: Tree[Token], depth: int) -> syntax.Expr:
        keyword, operand = tree.children
        return syntax.Floor(
            operand=self.expr(operand, depth + 1),
            span=_span(tree),
            ceil=isinstance(keyword, lark.Token) and keyword.type == "CEIL",
        )

    def _paren_expr(self, tree: Tree[Token], depth: int) -> syntax.Expr:
        return self.expr(tree.children[0], depth + 1)
