"""Load a spec file: YAML with positions → pydantic validation → diagnostics with file:line:col.

Pydantic reports errors by path (``loc``); the YAML document knows the line and column
of every path, so each validation error becomes a :class:`Diagnostic` pointing at the
offending key or value, with a hint on how to fix it.
"""

from __future__ import annotations

import difflib
import types
import typing
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Union

from pydantic import BaseModel, ValidationError

from ..diagnostics import Diagnostic, HpcconfError
from ..safe_io import LIMITS
from ..yamlpos import YamlDocument, load_document
from .model import API_VERSION, Cluster
from .text_safety import unsafe_strings


@dataclass(frozen=True)
class LoadedSpec:
    cluster: Cluster
    document: YamlDocument
    path: Path
    text: str | None = None  # what was parsed: the build's lint reads it from here, not the file again

    @property
    def file(self) -> str:
        return self.document.file


MAX_SPEC_BYTES = LIMITS["spec"]  # 1 MiB: a real spec is a few KiB; parsing is ~1,000x the text in memory


def _unreadable(path: Path, message: str, hint: str, line: int | None = None, column: int | None = None) -> HpcconfError:
    diag = Diagnostic(code="HPC000", name="unreadable-file", message=message, hint=hint, file=str(path))
    return HpcconfError([diag.at(str(path), line, column) if line else diag])


def read_spec_text(path: Path) -> str:
    """The spec's text through the safe reader (hpcconf.safe_io): refused, located, when missing, not a regular
    file, a link out of the tree, over :data:`MAX_SPEC_BYTES` (HPC094) or not UTF-8 (HPC000 at the byte)."""
    from ..safe_io import UnsafeFile, read_text

    try:
        return read_text(path, "spec", hint="Save the spec as UTF-8 (most editors: 'Save with encoding').")
    except UnsafeFile as exc:
        if exc.code == "HPC000" and not path.exists() and not path.is_symlink():
            raise _unreadable(path, f"spec file not found: {path}",
                              "Check the path, or write a spec there with `hpcconf init --sku SIZE -o PATH` (init writes "
                              "nothing for a size it refuses, and says why).") from None
        raise


def secret_diagnostics(text: str, file: str) -> list[Diagnostic]:
    """A spec holding a credential is refused: everything in it is copied into generated files."""
    from ..secret_scan import CODES, describe, first_per_block, scan_text

    found = []
    for secret in first_per_block(scan_text(text)):
        found.append(Diagnostic(
            code=CODES[secret.kind], name=_SECRET_NAMES[secret.kind],
            message=f"{describe(secret)}: a spec is copied into generated, committed files, "
                    "so hpcconf refuses it",
            hint="reference it instead (${NAME} in the job's environment, a Kubernetes Secret, a Key Vault "
                 "reference) and rotate the value; it is in the spec's history").at(
            file, secret.line, secret.column, secret.line, secret.end_column if secret.kind != "private-key" else None))
    return found


_SECRET_NAMES = {"private-key": "private-key", "password": "literal-credential", "token": "access-token",
                 "connection-string": "credential-in-connection-string"}


def load_spec(path: Path | str, display_name: str | None = None, text: str | None = None) -> LoadedSpec:
    """Parse and validate a spec; raise :class:`HpcconfError` with every problem found.

    ``text`` stands in for the file's content (an earlier version from git, say); ``path`` then
    only anchors relative paths such as ``sku_dirs``.
    """
    path = Path(path)
    file = display_name or str(path)
    text = read_spec_text(path) if text is None else text
    secrets = secret_diagnostics(text, file)
    if secrets:  # before parsing: no message (a YAML error quoting a value) may repeat the secret
        raise HpcconfError(secrets)
    document = load_document(text, file)
    if not isinstance(document.data, dict):
        raise HpcconfError([Diagnostic(
            code="HPC005", name="invalid-value", message="the spec must be a YAML mapping (key: value pairs)",
            hint=f"Start the file with 'apiVersion: {API_VERSION}' and 'kind: Cluster'.").at(file, document.start_line, 1)])
    unsafe = unsafe_strings(document)
    if unsafe:
        raise HpcconfError(unsafe)
    try:
        cluster = Cluster.model_validate(document.data)
    except ValidationError as exc:
        raise HpcconfError(_diagnostics(exc, document)) from None
    return LoadedSpec(cluster=cluster, document=document, path=path, text=text)


# -- pydantic errors → diagnostics ---------------------------------------------------------------

def _diagnostics(exc: ValidationError, document: YamlDocument) -> list[Diagnostic]:
    diags = []
    for error in exc.errors(include_url=False):
        loc = _data_path(error["loc"], document.data)
        details: dict[str, Any] = dict(error)
        if error["loc"] and error["loc"][-1] == "[key]":  # a bad mapping key: point at the key itself
            details["_key_error"] = True
        diags.append(_diagnostic(details, loc, document))
    return _dedupe(diags)


def _data_path(loc: tuple[Any, ...], data: Any) -> tuple[Any, ...]:
    """Pydantic may insert union branch names into ``loc``; keep only steps that exist in the data."""
    path: list[Any] = []
    node = data
    for step in loc:
        if isinstance(node, dict) and step in node:
            path.append(step)
            node = node[step]
        elif isinstance(node, list) and isinstance(step, int) and 0 <= step < len(node):
            path.append(step)
            node = node[step]
        elif isinstance(node, dict) and isinstance(step, str) and step not in node and step == loc[-1]:
            path.append(step)  # a missing or unknown key at the end
            break
    return tuple(path)


def _dotted(path: tuple[Any, ...]) -> str:
    out = ""
    for step in path:
        out += f"[{step}]" if isinstance(step, int) else (f".{step}" if out else str(step))
    return out or "(top level)"


def _diagnostic(error: dict[str, Any], path: tuple[Any, ...], document: YamlDocument) -> Diagnostic:
    kind = error["type"]
    where = _dotted(path)
    if kind == "extra_forbidden":
        key = str(path[-1]) if path else "?"
        allowed = _allowed_keys(path[:-1])
        close = difflib.get_close_matches(key, allowed, n=1, cutoff=0.6)
        hint = f"did you mean '{close[0]}'?" if close else (
            f"allowed keys here: {', '.join(allowed)}" if allowed else "remove this key")
        return document.diagnostic(Diagnostic(
            code="HPC003", name="unknown-key", message=f"unknown key '{key}' in {_dotted(path[:-1])}", hint=hint), path)
    if kind == "missing":
        parent = path[:-1]
        return document.diagnostic(Diagnostic(
            code="HPC004", name="missing-field", message=f"required field '{path[-1]}' is missing in {_dotted(parent)}",
            hint=f"add '{path[-1]}:' here; `hpcconf schema` lists every field"), parent)
    if path and path[-1:] == ("apiVersion",) and kind == "literal_error":
        return document.diagnostic(Diagnostic(
            code="HPC007", name="unsupported-api-version",
            message=f"apiVersion '{error.get('input')}' is not supported; this hpcconf reads {API_VERSION}",
            hint=f"set 'apiVersion: {API_VERSION}'; `hpcconf migrate SPEC` converts specs of other versions once they exist"), path, True)
    message, hint = _value_message(error, _field_description(path))
    return document.diagnostic(Diagnostic(
        code="HPC005", name="invalid-value", message=f"{where}: {message}", hint=hint), path,
        prefer_value=not error.get("_key_error"))


def _value_message(error: dict[str, Any], description: str) -> tuple[str, str]:
    kind = error["type"]
    msg = error["msg"]
    given = error.get("input")
    ctx = error.get("ctx") or {}
    if kind == "literal_error":
        expected = [v.strip().strip("'") for v in str(ctx.get("expected", "")).replace(" or ", ",").split(",") if v.strip()]
        close = difflib.get_close_matches(str(given), expected, n=1, cutoff=0.5)
        hint = f"did you mean '{close[0]}'?" if close else f"use one of: {', '.join(expected)}"
        return f"'{given}' is not allowed", hint
    if kind == "string_pattern_mismatch":
        return f"'{given}' has the wrong format", description or f"it must match {ctx.get('pattern')}"
    if kind == "value_error":
        # Validators write "what is wrong; how to fix it".
        text = msg.removeprefix("Value error, ")
        problem, _, fix = text.rpartition("; ")
        return (problem, fix) if problem else (text, description or "see `hpcconf schema` for what this field accepts")
    if kind in {"greater_than_equal", "greater_than", "less_than_equal", "less_than"}:
        bound = {"greater_than_equal": "at least", "greater_than": "more than", "less_than_equal": "at most",
                 "less_than": "less than"}[kind]
        limit = next(iter(ctx.values()), "?")
        return f"{given!r} is out of range: it must be {bound} {limit}", description or "use a value in the allowed range"
    if kind.endswith("_type") or kind.endswith("_parsing") or kind in {"finite_number"}:
        return _type_message(kind, given, description)
    if kind == "too_short":
        return f"needs at least {ctx.get('min_length', 1)} entr{'y' if ctx.get('min_length', 1) == 1 else 'ies'}, has {ctx.get('actual_length', 0)}", \
            description or "add an entry"
    if kind == "too_long":
        return f"has {ctx.get('actual_length')} entries, at most {ctx.get('max_length')} are allowed", description or "remove entries"
    return msg, "see `hpcconf schema` for the expected value"


_TYPE_NAMES = {"int": "a whole number", "float": "a number", "bool": "true or false", "string": "text",
               "list": "a list", "dict": "a mapping (key: value pairs)", "model": "a mapping (key: value pairs)",
               "literal": "one of the listed values", "finite_number": "a finite number"}


def _type_message(kind: str, given: Any, description: str) -> tuple[str, str]:
    expected = next((name for key, name in _TYPE_NAMES.items() if kind.startswith(key)), "another type")
    if kind.startswith("dataclass") or kind.startswith("model_attributes"):
        expected = _TYPE_NAMES["model"]
    if given is None:
        return f"is empty (null), but must be {expected}", "give it a value, or delete the key to use its default"
    shown = "true" if given is True else "false" if given is False else repr(given)
    hint = "remove the quotes" if isinstance(given, str) and expected in ("a whole number", "a number", "true or false") \
        else "quote it to make it text" if expected == "text" else description or "see `hpcconf schema`"
    return f"{shown} must be {expected}", hint


def _dedupe(diags: list[Diagnostic]) -> list[Diagnostic]:
    seen = set()
    out = []
    for d in diags:
        key = (d.code, d.line, d.column, d.message)
        if key not in seen:
            seen.add(key)
            out.append(d)
    return out


def _allowed_keys(path: tuple[Any, ...]) -> list[str]:
    """Field names of the model found at ``path`` in the spec (for did-you-mean)."""
    model: Any = Cluster
    for step in path:
        model = _step_into(model, step)
        if model is None:
            return []
    return list(model.model_fields) if _is_model(model) else []


def _field_description(path: tuple[Any, ...]) -> str:
    """The description of the field at ``path`` (our schema's words, a better hint than a regex)."""
    model: Any = Cluster
    for step in path[:-1]:
        model = _step_into(model, step)
        if model is None:
            return ""
    last = path[-1] if path else None
    if isinstance(last, int):  # an item of a list field: describe the list's field
        return ""
    for tp in _unwrap(model):
        if _is_model(tp) and last in tp.model_fields:
            return tp.model_fields[last].description or ""
    return ""


def _is_model(tp: Any) -> bool:
    return isinstance(tp, type) and issubclass(tp, BaseModel)


def _unwrap(tp: Any) -> list[Any]:
    origin = typing.get_origin(tp)
    if origin in (Union, types.UnionType):
        return [t for t in typing.get_args(tp) if t is not type(None)]
    return [tp]


def _step_into(model: Any, step: Any) -> Any:
    for tp in _unwrap(model):
        if _is_model(tp) and isinstance(step, str) and step in tp.model_fields:
            return _unwrap(tp.model_fields[step].annotation)[0]
        origin = typing.get_origin(tp)
        if origin in (list, tuple) and isinstance(step, int):
            return _unwrap(typing.get_args(tp)[0])[0]
        if origin is dict and isinstance(step, str):
            return _unwrap(typing.get_args(tp)[1])[0]
    return None
