"""A small reader of Bicep's declarations of types and parameters, enough to derive a JSON Schema for a template.

It reads ``param`` and ``type`` declarations with their decorators (``@secure``, ``@minLength``/``@maxLength``,
``@minValue``/``@maxValue``, ``@allowed``, ``@description``, ``@discriminator``), type expressions (``string``,
``int``, ``bool``, ``object``, ``array``, named and ``alias.name`` references, string/int/bool literals, unions
``a | b``, arrays ``T[]``, optional ``T?``, object types ``{ name: T }`` with ``*: T`` for any other key) and
literal defaults (strings, numbers, booleans, null, objects, arrays). Every other statement (``var``, ``resource``,
``module``, ``output``, ``func``...) is skipped whole. A default that is an expression is kept as its source text.

Used by tools/gen_ccws_schema.py on Azure/cyclecloud-slurm-workspace's ``bicep/types.bicep`` and
``bicep/mainTemplate.bicep``; :func:`to_json_schema` writes the result in our JSON Schema form.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any


class BicepSyntaxError(ValueError):
    def __init__(self, message: str, line: int) -> None:
        super().__init__(f"line {line}: {message}")
        self.line = line


@dataclass(frozen=True)
class Token:
    kind: str  # "ident", "string", "number", "punct", "newline", "eof"
    text: str
    line: int
    start: int  # offset in the source
    value: Any = None  # a string literal's value (None when it interpolates), a number's int


# -- type expressions ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class TypeRef:
    name: str  # "string", "int", "bool", "object", "array", "any", or a declared type ("types.vnet_t" -> "vnet_t")


@dataclass(frozen=True)
class Literal:
    value: Any  # a string, int or bool literal type: 'new'


@dataclass(frozen=True)
class ArrayOf:
    items: "TypeExpr"


@dataclass(frozen=True)
class Optional_:
    inner: "TypeExpr"


@dataclass(frozen=True)
class Union:
    members: tuple["TypeExpr", ...]


@dataclass(frozen=True)
class Property:
    name: str
    type: "TypeExpr"
    decorators: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ObjectType:
    properties: tuple[Property, ...]
    additional: "TypeExpr | None" = None  # `*: T`


TypeExpr = TypeRef | Literal | ArrayOf | Optional_ | Union | ObjectType


@dataclass(frozen=True)
class Expression:
    """A default or argument that is not a literal: its Bicep source, e.g. ``network.?addressSpace``."""
    source: str


@dataclass(frozen=True)
class Param:
    name: str
    type: TypeExpr
    decorators: dict[str, Any]
    line: int
    has_default: bool = False
    default: Any = None


@dataclass(frozen=True)
class TypeDecl:
    name: str
    type: TypeExpr
    decorators: dict[str, Any]
    line: int


@dataclass
class BicepFile:
    params: dict[str, Param] = field(default_factory=dict)
    types: dict[str, TypeDecl] = field(default_factory=dict)


# -- tokenizer ----------------------------------------------------------------------------------------

_PUNCT = ("...", "??", ".?", "==", "!=", "<=", ">=", "&&", "||", "=>", "::")
_SINGLE = "{}[]()<>,:;.?|=!@*+-/%&"
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_NUMBER = re.compile(r"[0-9]+")


def tokenize(text: str) -> list[Token]:
    tokens: list[Token] = []
    i, line, n = 0, 1, len(text)
    while i < n:
        c = text[i]
        if c == "\n":
            tokens.append(Token("newline", "\n", line, i))
            line += 1
            i += 1
        elif c in " \t\r\ufeff":
            i += 1
        elif text.startswith("//", i):
            end = text.find("\n", i)
            i = n if end < 0 else end
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            if end < 0:
                raise BicepSyntaxError("unterminated /* comment", line)
            line += text.count("\n", i, end)
            i = end + 2
        elif text.startswith("'''", i):
            end = text.find("'''", i + 3)
            if end < 0:
                raise BicepSyntaxError("unterminated ''' string", line)
            tokens.append(Token("string", text[i:end + 3], line, i, text[i + 3:end]))
            line += text.count("\n", i, end)
            i = end + 3
        elif c == "'":
            end, value = _scan_string(text, i, line)
            tokens.append(Token("string", text[i:end], line, i, value))
            line += text.count("\n", i, end)
            i = end
        elif (m := _IDENT.match(text, i)) is not None:
            tokens.append(Token("ident", m.group(), line, i))
            i = m.end()
        elif (m := _NUMBER.match(text, i)) is not None:
            tokens.append(Token("number", m.group(), line, i, int(m.group())))
            i = m.end()
        else:
            punct = next((p for p in _PUNCT if text.startswith(p, i)), c if c in _SINGLE else None)
            if punct is None:
                raise BicepSyntaxError(f"unexpected character {c!r}", line)
            tokens.append(Token("punct", punct, line, i))
            i += len(punct)
    tokens.append(Token("eof", "", line, n))
    return tokens


_ESCAPES = {"n": "\n", "r": "\r", "t": "\t", "\\": "\\", "'": "'", "$": "$"}


def _scan_string(text: str, start: int, line: int) -> tuple[int, str | None]:
    """The end offset of the string literal at ``start`` and its value (None when it has ``${...}``)."""
    i, out, interpolated = start + 1, [], False
    while i < len(text):
        c = text[i]
        if c == "\\" and i + 1 < len(text):
            out.append(_ESCAPES.get(text[i + 1], text[i + 1]))
            i += 2
        elif c == "'":
            return i + 1, None if interpolated else "".join(out)
        elif text.startswith("${", i):
            interpolated = True
            i = _skip_interpolation(text, i + 2, line)
        else:
            out.append(c)
            i += 1
    raise BicepSyntaxError("unterminated string", line)


def _skip_interpolation(text: str, i: int, line: int) -> int:
    depth = 1
    while i < len(text):
        c = text[i]
        if c == "'":
            i, _ = _scan_string(text, i, line)
            continue
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    raise BicepSyntaxError("unterminated ${...} in a string", line)


# -- parser -------------------------------------------------------------------------------------------

_OPEN = {"{": "}", "[": "]", "(": ")"}


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = tokenize(text)
        self.pos = 0

    def peek(self, offset: int = 0) -> Token:
        return self.tokens[min(self.pos + offset, len(self.tokens) - 1)]

    def next(self) -> Token:
        token = self.peek()
        self.pos += 1
        return token

    def expect(self, text: str) -> Token:
        token = self.next()
        if token.text != text:
            raise BicepSyntaxError(f"expected {text!r}, got {token.text or 'end of file'!r}", token.line)
        return token

    def skip_newlines(self) -> None:
        while self.peek().kind == "newline":
            self.pos += 1

    def file(self) -> BicepFile:
        out = BicepFile()
        while True:
            self.skip_newlines()
            if self.peek().kind == "eof":
                return out
            decorators = self.decorators()
            keyword = self.peek()
            if keyword.kind == "ident" and keyword.text == "param" and self.peek(1).kind == "ident":
                param = self.param(decorators)
                out.params[param.name] = param
            elif keyword.kind == "ident" and keyword.text == "type" and self.peek(1).kind == "ident" \
                    and self.peek(2).text == "=":
                self.next()
                name = self.next()
                self.expect("=")
                out.types[name.text] = TypeDecl(name.text, self.type_expr(), decorators, name.line)
                self.end_of_statement()
            else:
                self.skip_statement()

    def decorators(self) -> dict[str, Any]:
        found: dict[str, Any] = {}
        while self.peek().text == "@":
            self.next()
            name = self.next().text
            while self.peek().text == ".":  # @sys.description(...)
                self.next()
                name = self.next().text
            self.expect("(")
            args = []
            self.skip_newlines()
            while self.peek().text != ")":
                args.append(self.value())
                self.skip_newlines()
                if self.peek().text == ",":
                    self.next()
                    self.skip_newlines()
            self.expect(")")
            found[name] = args[0] if len(args) == 1 else args if args else True
            self.skip_newlines()
        return found

    def param(self, decorators: dict[str, Any]) -> Param:
        self.next()
        name = self.next()
        type_ = self.type_expr()
        if self.peek().text == "=":
            self.next()
            default = self.value()
            self.end_of_statement()
            return Param(name.text, type_, decorators, name.line, True, default)
        self.end_of_statement()
        return Param(name.text, type_, decorators, name.line)

    def end_of_statement(self) -> None:
        token = self.peek()
        if token.kind not in ("newline", "eof"):
            raise BicepSyntaxError(f"unexpected {token.text!r} after the declaration", token.line)

    def skip_statement(self) -> None:
        depth = 0
        while True:
            token = self.peek()
            if token.kind == "eof" or (token.kind == "newline" and depth == 0):
                return
            if token.text in _OPEN:
                depth += 1
            elif token.text in _OPEN.values():
                depth -= 1
            self.next()

    # types
    def type_expr(self) -> TypeExpr:
        members = [self.type_postfix()]
        while True:
            save = self.pos
            self.skip_newlines()
            if self.peek().text != "|":
                self.pos = save
                break
            self.next()
            self.skip_newlines()
            members.append(self.type_postfix())
        return members[0] if len(members) == 1 else Union(tuple(members))

    def type_postfix(self) -> TypeExpr:
        type_ = self.type_primary()
        while True:
            if self.peek().text == "[" and self.peek(1).text == "]":
                self.pos += 2
                type_ = ArrayOf(type_)
            elif self.peek().text == "?":
                self.next()
                type_ = Optional_(type_)
            else:
                return type_

    def type_primary(self) -> TypeExpr:
        token = self.next()
        if token.kind == "string":
            if token.value is None:
                raise BicepSyntaxError("an interpolated string is no literal type", token.line)
            return Literal(token.value)
        if token.kind == "number":
            return Literal(token.value)
        if token.text == "-" and self.peek().kind == "number":
            return Literal(-self.next().value)
        if token.kind == "ident":
            if token.text in ("true", "false"):
                return Literal(token.text == "true")
            name = token.text
            while self.peek().text == ".":  # types.vnet_t: an imported alias names the type
                self.next()
                name = self.next().text
            return TypeRef(name)
        if token.text == "(":
            inner = self.type_expr()
            self.skip_newlines()
            self.expect(")")
            return inner
        if token.text == "{":
            return self.object_type()
        raise BicepSyntaxError(f"expected a type, got {token.text or 'end of file'!r}", token.line)

    def object_type(self) -> ObjectType:
        properties: list[Property] = []
        additional: TypeExpr | None = None
        while True:
            self.skip_newlines()
            if self.peek().text == "}":
                self.next()
                return ObjectType(tuple(properties), additional)
            decorators = self.decorators()
            key = self.next()
            if key.kind not in ("ident", "string") and key.text != "*":
                raise BicepSyntaxError(f"expected a property name, got {key.text!r}", key.line)
            self.expect(":")
            type_ = self.type_expr()
            if key.text == "*":
                additional = type_
            else:
                properties.append(Property(key.value if key.kind == "string" else key.text, type_, decorators))
            if self.peek().text == ",":
                self.next()

    # values
    def value(self) -> Any:
        save = self.pos
        literal = self.literal()
        after = self.peek()
        if literal is not _NOT_LITERAL and (after.kind in ("newline", "eof") or after.text in (",", ")", "]", "}")):
            return literal
        self.pos = save
        return Expression(self.expression_source())

    def literal(self) -> Any:
        token = self.next()
        if token.kind == "string":
            return token.value if token.value is not None else _NOT_LITERAL
        if token.kind == "number":
            return token.value
        if token.text == "-" and self.peek().kind == "number":
            return -self.next().value
        if token.kind == "ident" and token.text in ("true", "false", "null"):
            return {"true": True, "false": False, "null": None}[token.text]
        if token.text == "{":
            obj: dict[str, Any] = {}
            while True:
                self.skip_newlines()
                if self.peek().text == "}":
                    self.next()
                    return obj
                key = self.next()
                if key.kind not in ("ident", "string") or self.peek().text != ":":
                    return _NOT_LITERAL
                self.next()
                item = self.literal()
                if item is _NOT_LITERAL:
                    return _NOT_LITERAL
                obj[key.value if key.kind == "string" else key.text] = item
                if self.peek().text == ",":
                    self.next()
        if token.text == "[":
            items: list[Any] = []
            while True:
                self.skip_newlines()
                if self.peek().text == "]":
                    self.next()
                    return items
                item = self.literal()
                if item is _NOT_LITERAL:
                    return _NOT_LITERAL
                items.append(item)
                if self.peek().text == ",":
                    self.next()
        return _NOT_LITERAL

    def expression_source(self) -> str:
        """Consume an expression up to a newline, ',' or a closing bracket at depth 0; its source text."""
        depth, first = 0, self.peek()
        last = first
        while True:
            token = self.peek()
            if token.kind == "eof" or (depth == 0 and (token.kind == "newline" or token.text in (",", ")", "]", "}"))):
                break
            if token.text in _OPEN:
                depth += 1
            elif token.text in _OPEN.values():
                depth -= 1
            last = self.next()
        return self.text[first.start:last.start + len(last.text)].strip()


_NOT_LITERAL = object()


def parse_bicep(text: str) -> BicepFile:
    """The params and types a Bicep file declares. Raises BicepSyntaxError (with its line) on what it cannot read."""
    return _Parser(text).file()


# -- JSON Schema ---------------------------------------------------------------------------------------

_PRIMITIVES = {"string": {"type": "string"}, "int": {"type": "integer"}, "bool": {"type": "boolean"},
               "object": {"type": "object"}, "array": {"type": "array"}, "any": {}}


def to_json_schema(template: BicepFile, types: BicepFile) -> dict[str, Any]:
    """The JSON Schema of the template's parameter values (``{name: value}``), with the types it uses in ``$defs``.

    A parameter without a default is required; a parameter the template does not declare is refused
    (``additionalProperties: false``: ARM refuses a parameters file naming one). Inside object types other keys
    are allowed, as ARM allows them (Bicep only warns, unless the type is ``@sealed()``). A discriminated union
    becomes ``if``/``then`` per discriminator value, so a validator reports the variant's own missing keys.
    """
    declared = {**types.types, **template.types}
    used: dict[str, Any] = {}
    pending: list[str] = []

    def ref(name: str) -> dict[str, Any]:
        if name not in declared:
            raise BicepSyntaxError(f"type {name!r} is not declared", 0)
        if name not in used and name not in pending:
            pending.append(name)
        return {"$ref": f"#/$defs/{name}"}

    def convert(type_: TypeExpr, decorators: dict[str, Any]) -> dict[str, Any]:
        schema = _convert(type_, decorators, ref, declared)
        return schema

    properties = {}
    required = []
    for name, param in template.params.items():
        schema = convert(param.type, param.decorators)
        if param.has_default:
            if isinstance(param.default, Expression):
                schema["x-bicep-default"] = param.default.source
            else:
                schema["default"] = param.default
        else:
            required.append(name)
        properties[name] = schema
    while pending:
        name = pending.pop(0)
        decl = declared[name]
        used[name] = convert(decl.type, decl.decorators)
    return {"type": "object", "properties": properties, "required": required, "additionalProperties": False,
            "$defs": dict(sorted(used.items()))}


def _convert(type_: TypeExpr, decorators: dict[str, Any], ref: Any, declared: dict[str, TypeDecl]) -> dict[str, Any]:
    schema: dict[str, Any]
    if isinstance(type_, Optional_):
        inner = _convert(type_.inner, decorators, ref, declared)
        if isinstance(inner.get("type"), str) and "$ref" not in inner:
            return {**inner, "type": [inner["type"], "null"]}
        return {"if": {"type": "null"}, "else": inner}  # not anyOf: a validator then reports the inner type's errors
    if isinstance(type_, TypeRef):
        schema = dict(_PRIMITIVES[type_.name]) if type_.name in _PRIMITIVES else ref(type_.name)
    elif isinstance(type_, Literal):
        schema = {"const": type_.value}
    elif isinstance(type_, ArrayOf):
        schema = {"type": "array", "items": _convert(type_.items, {}, ref, declared)}
    elif isinstance(type_, ObjectType):
        schema = {"type": "object", "properties": {p.name: _convert(p.type, p.decorators, ref, declared)
                                                   for p in type_.properties}}
        required = [p.name for p in type_.properties if not isinstance(p.type, Optional_)]
        if required:
            schema["required"] = required
        if type_.additional is not None:
            schema["additionalProperties"] = _convert(type_.additional, {}, ref, declared)
    else:
        schema = _union(type_, decorators, ref, declared)
    _apply_decorators(schema, decorators)
    return schema


def _union(type_: Union, decorators: dict[str, Any], ref: Any, declared: dict[str, TypeDecl]) -> dict[str, Any]:
    if all(isinstance(m, Literal) for m in type_.members):
        return {"enum": [m.value for m in type_.members if isinstance(m, Literal)]}
    key = decorators.get("discriminator")
    members = [_convert(m, {}, ref, declared) for m in type_.members]
    if not isinstance(key, str):
        return {"anyOf": members}
    branches = []
    values = []
    for member, schema in zip(type_.members, members):
        value = _discriminator_value(member, key, declared)
        values.append(value)
        branches.append({"if": {"properties": {key: {"const": value}}, "required": [key]}, "then": schema})
    return {"type": "object", "required": [key], "properties": {key: {"enum": values}}, "allOf": branches,
            "x-discriminator": key}


def _discriminator_value(member: TypeExpr, key: str, declared: dict[str, TypeDecl]) -> Any:
    while isinstance(member, TypeRef) and member.name in declared:
        member = declared[member.name].type
    if isinstance(member, ObjectType):
        for prop in member.properties:
            if prop.name == key and isinstance(prop.type, Literal):
                return prop.type.value
    raise BicepSyntaxError(f"a member of a union discriminated by {key!r} has no literal {key!r}", 0)


def _apply_decorators(schema: dict[str, Any], decorators: dict[str, Any]) -> None:
    kind = schema.get("type")
    if "minLength" in decorators:
        schema["minItems" if kind == "array" else "minLength"] = decorators["minLength"]
    if "maxLength" in decorators:
        schema["maxItems" if kind == "array" else "maxLength"] = decorators["maxLength"]
    if "minValue" in decorators:
        schema["minimum"] = decorators["minValue"]
    if "maxValue" in decorators:
        schema["maximum"] = decorators["maxValue"]
    if "allowed" in decorators:
        allowed = decorators["allowed"]
        schema["enum"] = allowed if isinstance(allowed, list) else [allowed]
    if isinstance(decorators.get("description"), str):
        schema["description"] = decorators["description"]
    if decorators.get("secure"):
        schema["x-secure"] = True
