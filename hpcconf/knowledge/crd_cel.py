"""A CRD's CEL validation rules (``x-kubernetes-validations``) evaluated offline, as the API server does on a create.

What the API server does (k8s.io/apiextensions-apiserver ``pkg/apiserver/schema/cel/validation.go``,
``validateExpressions``): the object is defaulted first (structural-schema defaults); each rule runs with
``self`` bound to the node it sits on, for every node present and not null; a transition rule (one that
names ``oldSelf``) is skipped when there is no old object, which is every create; a rule that evaluates to
false is reported at the node (plus the rule's ``fieldPath``) with ``messageExpression``'s value when it
evaluates to a non-empty one-line string, else ``message``, else ``failed rule: <rule>``, under the rule's
``reason`` (``Invalid value`` by default). The rules are not run at all when the schema found a wrong type
("some validation rules were not checked because the object was invalid"): the caller checks that.

The evaluator is cel-python (``celpy``), imported only when a rule is to be run (about 0.1 s). Kubernetes
adds CEL libraries cel-python lacks (``lowerAscii``, ``quantity``, ``isURL``, ``format.*``, optionals...), and
it reports a rule that fails to evaluate ("no such key") as a refusal; here a rule cel-python cannot compile
or evaluate is not a finding but a :class:`CelSkipped`, with the reason (a debug line).
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Iterator

from .k8s_validation import is_placeholder

OLD_SELF = re.compile(r"\boldSelf\b")

# reason -> the field.Error type the API server prints (fieldErrorForReason).
_REASONS = {"FieldValueRequired": "Required value", "FieldValueForbidden": "Forbidden",
            "FieldValueDuplicate": "Duplicate value", "FieldValueInvalid": "Invalid value"}


@dataclass(frozen=True)
class CelFailure:
    path: tuple[Any, ...]  # where the API server reports it: the rule's node, plus its fieldPath
    rule: str
    detail: str  # the message, as the API server chooses it
    error_type: str  # "Invalid value", "Required value", ...
    value: str = ""  # the value printed after the type (scalars only; objects and arrays print none)

    def api_server_text(self, dotted_path: str) -> str:
        """``<field>: <type>[: <value>]: <detail>``, as ``field.Error.Error()`` prints it."""
        if self.error_type == "Duplicate value":
            return f"{dotted_path}: Duplicate value: {self.value}" if self.value else f"{dotted_path}: Duplicate value"
        shown = f": {self.value}" if self.value and self.error_type == "Invalid value" else ""
        return f"{dotted_path}: {self.error_type}{shown}: {self.detail}"


@dataclass(frozen=True)
class CelSkipped:
    path: tuple[Any, ...]
    rule: str
    why: str


def rules_in(schema: dict[str, Any]) -> bool:
    """Whether a create can run any rule of this schema (transition rules never run on a create)."""
    if not isinstance(schema, dict):
        return False
    if any(not OLD_SELF.search(str(r.get("rule", ""))) or r.get("optionalOldSelf")
           for r in schema.get("x-kubernetes-validations") or []):
        return True
    children = list((schema.get("properties") or {}).values())
    children += [schema[key] for key in ("items", "additionalProperties") if isinstance(schema.get(key), dict)]
    return any(rules_in(child) for child in children)


def defaulted(value: Any, schema: dict[str, Any]) -> Any:
    """A copy of ``value`` with the schema's ``default`` values set where a field is absent (the API server
    defaults a custom resource before it validates)."""
    value = copy.deepcopy(value)
    _apply_defaults(value, schema)
    return value


def _apply_defaults(value: Any, schema: dict[str, Any]) -> None:
    if isinstance(value, dict):
        for key, child in (schema.get("properties") or {}).items():
            if key not in value and "default" in child:
                value[key] = copy.deepcopy(child["default"])
            if key in value:
                _apply_defaults(value[key], child)
        extra = schema.get("additionalProperties")
        if isinstance(extra, dict):
            for key in value:
                if key not in (schema.get("properties") or {}):
                    _apply_defaults(value[key], extra)
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        for item in value:
            _apply_defaults(item, schema["items"])


def evaluate(value: Any, schema: dict[str, Any]) -> tuple[list[CelFailure], list[CelSkipped]]:
    """The rules of ``schema`` that ``value`` (already defaulted) fails on a create, and those not evaluated."""
    failures: list[CelFailure] = []
    skipped: list[CelSkipped] = []
    if rules_in(schema):
        for outcome in _walk(value, schema, ()):
            if isinstance(outcome, CelFailure):
                failures.append(outcome)
            else:
                skipped.append(outcome)
    return failures, skipped


def _walk(value: Any, schema: dict[str, Any], path: tuple[Any, ...]) -> Iterator[CelFailure | CelSkipped]:
    if value is None or not isinstance(schema, dict) or schema.get("pod-template") or is_placeholder(value):
        return
    for rule in schema.get("x-kubernetes-validations") or []:
        yield from _run(rule, value, schema, path)
    if isinstance(value, dict):
        properties = schema.get("properties") or {}
        extra = schema.get("additionalProperties")
        for key, child in value.items():
            if key in properties:
                yield from _walk(child, properties[key], path + (key,))
            elif isinstance(extra, dict):
                yield from _walk(child, extra, path + (key,))
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        for index, item in enumerate(value):
            yield from _walk(item, schema["items"], path + (index,))


def _has_placeholder(value: Any) -> bool:
    if isinstance(value, dict):
        return any(_has_placeholder(v) for v in value.values())
    if isinstance(value, list):
        return any(_has_placeholder(v) for v in value)
    return is_placeholder(value)


def _run(rule: dict[str, Any], value: Any, schema: dict[str, Any], path: tuple[Any, ...]) -> Iterator[CelFailure | CelSkipped]:
    text = str(rule.get("rule", ""))
    if OLD_SELF.search(text):
        if rule.get("optionalOldSelf"):  # runs on a create with oldSelf = optional.none(): cel-python has no optionals
            yield CelSkipped(path, text, "a transition rule with optionalOldSelf (cel-python has no optional types)")
        return  # a transition rule: nothing to compare on a create
    if _holds_by_its_guard(text, value):
        return
    if _has_placeholder(value):
        yield CelSkipped(path, text, "the value holds a placeholder (envsubst, Helm) to be filled in before apply")
        return
    result = _evaluate(text, value)
    if isinstance(result, str):
        yield CelSkipped(path, text, result)
        return
    if result:
        return
    detail = _message_expression(rule, value) or str(rule.get("message") or "").strip() or f"failed rule: {text.strip()}"
    shown = "" if isinstance(value, (dict, list)) else _printed(value)
    yield CelFailure(path + _field_path(str(rule.get("fieldPath") or "")), text, detail,
                     _REASONS.get(str(rule.get("reason") or ""), "Invalid value"), shown)


_NEGATED_GUARD = re.compile(r"^\s*!\s*\(\s*has\(\s*self\.([A-Za-z_][A-Za-z0-9_]*)\s*\)\s*&&")


def _holds_by_its_guard(text: str, value: Any) -> bool:
    """``!(has(self.x) && ...)`` with no ``x``: true whatever the rest says (``false && anything`` is false in
    CEL, errors included), decided without cel-python, whose import and parser cost about 0.2 s. Only when the
    negated group is the whole rule and ``&&`` binds everything in it (no ``||`` or ``?:`` at its top level)."""
    match = _NEGATED_GUARD.match(text)
    if match is None or not isinstance(value, dict) or match.group(1) in value:
        return False
    depth, quote, index = 0, "", text.index("(")
    while index < len(text):
        char = text[index]
        if quote:
            if char == "\\":
                index += 1
            elif char == quote:
                quote = ""
        elif char in "'\"":
            quote = char
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth == 0:
                return text[index + 1:].strip() == ""
        elif depth == 1 and (text.startswith("||", index) or char == "?"):
            return False
        index += 1
    return False


def _printed(value: Any) -> str:
    """A scalar as ``field.Error`` prints it: strings quoted, numbers and booleans bare."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return str(value)


def _field_path(text: str) -> tuple[Any, ...]:
    """A rule's ``fieldPath`` (``.spec.x``, ``.a['b.c']``, ``.list[0]``) as path keys; what does not parse adds nothing."""
    keys: list[Any] = []
    for match in re.finditer(r"\.([A-Za-z_][A-Za-z0-9_-]*)|\['((?:[^'\\]|\\.)*)'\]|\[(\d+)\]", text):
        name, quoted, index = match.groups()
        keys.append(name if name is not None else quoted if quoted is not None else int(index))
    rebuilt = "".join(f".{k}" if isinstance(k, str) and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_-]*", k) else
                      f"[{k}]" if isinstance(k, int) else f"['{k}']" for k in keys)
    return tuple(keys) if rebuilt == text else ()


def _message_expression(rule: dict[str, Any], value: Any) -> str:
    """``messageExpression``'s value when it is a non-empty string without line breaks (else the API server
    falls back to ``message``)."""
    expression = rule.get("messageExpression")
    if not expression:
        return ""
    result = _evaluate(str(expression), value, want=str)
    if not isinstance(result, tuple):
        return ""
    text = result[0].strip()
    return text if text and "\n" not in text else ""


def _evaluate(text: str, value: Any, want: type = bool) -> Any:
    """The rule's boolean result; for ``want=str``, ``(string,)``; a string saying why not, when cel-python
    cannot compile or evaluate it."""
    program = _program(text)
    if isinstance(program, str):
        return program
    import celpy

    try:
        result = program.evaluate({"self": celpy.json_to_cel(value)})
    except Exception as error:  # cel-python raises CELEvalError, and its own bugs as anything
        return f"cel-python cannot evaluate it: {_short(error)}"
    if isinstance(result, Exception):
        return f"cel-python cannot evaluate it: {_short(result)}"
    if want is str:
        return (str(result),) if isinstance(result, str) else "messageExpression is not a string"
    if not isinstance(result, bool) and type(result).__name__ != "BoolType":
        return f"the rule gives {type(result).__name__}, not a boolean"
    return bool(result)


@lru_cache(maxsize=256)
def _program(text: str) -> Any:
    from importlib.util import find_spec

    if find_spec("celpy") is None:  # a runtime dependency; an install without it judges everything else as before
        return "cel-python is not installed (pip install cel-python)"
    try:
        environment = _environment()
        return environment.program(environment.compile(text))
    except Exception as error:  # CELParseError, and anything lark raises on a grammar it does not know
        return f"cel-python cannot compile it: {_short(error)}"


@lru_cache(maxsize=1)
def _environment() -> Any:
    """One CEL environment: the first builds cel-python's parser (about 0.1 s), import and all."""
    import celpy

    return celpy.Environment()


def _short(error: BaseException) -> str:
    """The first line of the error, without cel-python's dump of the whole activation."""
    text = str(error.args[0] if error.args else error).split("\n")[0]
    return re.sub(r" \(in activation .*", "", text)[:160]
