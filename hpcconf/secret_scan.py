"""Find credentials in text, so hpcconf can flag them and never repeat them.

One scanner serves the spec loader (a spec holding a secret is refused before anything is
generated from it), the lint rules SEC001-SEC004 (hpcconf.lint.rules.secrets) and redaction of
every output (source lines quoted under findings, messages). It works line by line on raw text,
so it reads specs, YAML, env files, Dockerfiles and shell scripts alike.

Candidates come from detect-secrets' plugins (:mod:`hpcconf.secret_detectors` lists them and the few
formats added); its heuristic filters and our own context then decide. Never a secret:
- a reference: ``$X``, ``${X}``, ``$(X)`` (Kubernetes' own expansion), command or arithmetic
  substitution (``$(curl ...)``, backticks, ``$((a+b))``), Go/Jinja templates (``{{ x }}``), Key Vault
  and ARM references, a Kubernetes Secret (keys such as ``secretName``, ``secretKeyRef``, ``valueFrom``);
- an empty string, or a placeholder (``<password>``, ``changeme``, ``xxx``, ``****``, ``your-...``,
  ``REDACTED``, ``example``...), a sequential or UUID-shaped string, a value with no letter;
- a value that names where a secret lives (keys ending in _file, _path, _name, _ref, _id...; paths);
- for names that are not passwords (secret, token, key), a lower-case name such as a Kubernetes
  Secret's (``ufmSecret: ufm-secret``); prose (a value with spaces) and comment lines for assignments.

What is a secret, by code:
- SEC001 a private key block (``-----BEGIN ... PRIVATE KEY-----`` with key material, PuTTY key files), also
  base64-encoded (a Kubernetes Secret's ``data:``, a kubeconfig's ``client-key-data``).
- SEC002 a literal value assigned to a credential-named key (detect-secrets' keywords: password,
  secret, api key, private key...; ours: token, passphrase, access key, SAS key, connection string),
  in ``key: value``, ``KEY=value``, ``--password value``.
- SEC003 a token in a provider's recognisable format (AWS, GitHub, GitLab, Slack, JWT, OpenAI,
  Stripe, npm, PyPI...; ours: Hugging Face, NVIDIA NGC ``nvapi-``, Google API keys).
- SEC004 a connection string with a credential: ``scheme://user:password@host``, Azure storage
  ``AccountKey=``, ``SharedAccessKey=``, SAS ``sig=``.

Linear time: a line longer than :data:`WINDOW` characters is scanned in overlapping windows, so no
pattern ever sees more than a window (Python's regexes backtrack; a 20,000-character line must not
take minutes). A candidate longer than the overlap on such a line may be missed.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from detect_secrets.filters import heuristic

from . import secret_detectors as det

CODES = {"private-key": "SEC001", "password": "SEC002", "token": "SEC003", "connection-string": "SEC004"}
DESCRIPTIONS = {"private-key": "a private key", "password": "a literal credential",
                "token": "an access token", "connection-string": "a connection string with a "
                "credential in it"}

WINDOW = 512
OVERLAP = 160


@dataclass(frozen=True)
class Secret:
    kind: str  # a key of CODES
    line: int  # 1-based
    column: int  # 1-based, the first character of the secret value
    end_column: int  # exclusive
    key: str = ""  # the name it was assigned to, when there is one (never the value)
    detector: str = ""  # what kind of secret, as the detector names it ("GitHub Token", "Secret Keyword")

    @property
    def code(self) -> str:
        return CODES[self.kind]


_REFERENCE_KEY = re.compile(r"(_|-|\b)(file|path|name|ref|id|dir|env|type|mode|length|policy|secretname|enabled|"
                            r"required|hash|algorithm|key_?vault|vault|source|url|uri|expir\w*|ttl|rotation)[\"']?$"
                            r"|secretname|secretkeyref|valuefrom|ssh[_-]?public[_-]?key|public[_-]?key", re.IGNORECASE)
_PLACEHOLDER = re.compile(
    r"""^(?:|<[^>]*>|\{\{.*\}\}|\{%.*%\}|%\([^)]*\)s?|@Microsoft\.KeyVault\(.*\)|\[[a-z]+\(.*\)\]|"""
    r"""(?:change[-_]?me|changeit|password|passwd|secret|token|example|sample|placeholder|redacted|dummy|test|none|null|"""
    r"""nil|true|false|yes|no|on|off|todo|fixme|tbd|your.*|my[-_]?(?:password|secret|token))|"""
    r"""(?P<rep>.)(?P=rep){2,}|\*+|x+|\.+|-+|~|\d{1,5}|/.*|\./.*|~/.*|[A-Za-z]:\\.*)$""", re.IGNORECASE)
# A shell, Kubernetes or Compose expansion anywhere in the value: $X, ${X}, $(X), $(cmd), $((a+b)), `cmd`;
# a placeholder inside a value (hf_xxxxxx, sk-****, <token>); code: a call, a subscript (get_token(), cfg["x"]).
_EXPANSION = re.compile(r"\$[A-Za-z_{(]|`|[xX]{4}|\*{3}|\.\.\.|<[A-Za-z_ -]+>|^[A-Za-z_][\w.]*[(\[]|^[A-Za-z_]\w*\)$")
_NAMES_SOMETHING = re.compile(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+")
_CREDENTIAL_SEGMENT = re.compile(r"(?:^|[-_.])(?:token|secret|password|passwd|key|apikey|credentials?)(?:$|[-_.])",
                                 re.IGNORECASE)
_KEY_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")
_KEY_STARTS_AFTER = frozenset(" \t\"'{[(,;$")


def _name_before(text: str, start: int) -> tuple[str, bool]:
    """The identifier that contains ``start`` (bounded, so long runs stay linear) and whether it begins
    a token: an assignment's name follows a space, a quote or a bracket, never a ``/`` (an image path)."""
    left = start
    while left > 0 and start - left < 128 and text[left - 1] in _KEY_CHARS:
        left -= 1
    right = start
    while right < len(text) and right - start < 128 and text[right] in _KEY_CHARS:
        right += 1
    begins = left == 0 or text[left - 1] in _KEY_STARTS_AFTER
    return text[left:right].lstrip("-"), begins


def _name_of_value(text: str, start: int) -> str:
    """The name a value at ``start`` is assigned to (``NAME=value``, ``name: "value"``), else ''."""
    index = start
    while index > 0 and start - index < 4 and text[index - 1] in " \t\"'":
        index -= 1
    if index == 0 or text[index - 1] not in "=:":
        return ""
    index -= 1
    while index > 0 and start - index < 8 and text[index - 1] in " \t\"'":
        index -= 1
    if index == 0 or text[index - 1] not in _KEY_CHARS:
        return ""
    return _name_before(text, index - 1)[0]


_WORD_NAMES = (("client_?secret", "client secret"), ("secret_?key", "secret key"), ("api_?key", "API key"),
               ("access_?key", "access key"), ("account_?key", "account key"), ("private_?key", "private key"),
               ("sas_?key", "SAS key"), ("connection_?string", "connection string"), ("passphrase", "passphrase"),
               ("pass(?:word|wd)?|pwd", "password"), ("token", "token"), ("secret", "secret"), ("key", "key"))


def credential_word(name: str) -> str:
    """What kind of credential a name says it holds: 'password', 'client secret', 'API key'..."""
    for pattern, word in _WORD_NAMES:
        if re.search(f"(?:{pattern.replace('_?', '[_-]?')})s?$", name, re.IGNORECASE):
            return word
    return "credential"


def _plain_end(text: str, start: int, end: int, quoted: bool, colon: bool) -> int:
    """Where an unquoted value really ends. After ``=`` (shell, env, Dockerfile): at whitespace or a
    shell operator. After ``:`` (YAML): a plain scalar runs to a comment or a flow collection's end,
    spaces included, so ``key: Retrieves the secret`` stays prose."""
    if quoted:
        return end
    stops = ",}]" if colon else " \t;,)}]#&|"
    for index in range(start, end):
        if text[index] in stops or colon and text[index] == "#" and text[index - 1] in " \t":
            return index
    return len(text[:end].rstrip()) if colon else end


def is_reference_or_placeholder(value: str) -> bool:
    """Never a secret: a reference, an expansion, an empty string, a placeholder (see the module doc)."""
    value = value.strip()
    return (not value or bool(_EXPANSION.search(value)) or bool(_PLACEHOLDER.match(value))
            or heuristic.is_templated_secret(value) or heuristic.is_prefixed_with_dollar_sign(value)
            or heuristic.is_sequential_string(value) or heuristic.is_not_alphanumeric_string(value))


def _credential(key: str, value: str, line: str) -> bool:
    """A literal value under a credential name is a secret, unless the context says otherwise."""
    if not det.NAME_ENDS_WITH_WORD.search(key) or _REFERENCE_KEY.search(key) or len(value) < 6:
        return False
    if is_reference_or_placeholder(value) or heuristic.is_potential_uuid(value) \
            or heuristic.is_likely_id_string(value, line) or heuristic.is_indirect_reference(f"{key}={value}"):
        return False
    if any(ch.isspace() for ch in value):
        return False  # prose or a label ("Admin Password")
    if _NAMES_SOMETHING.fullmatch(value) or _CREDENTIAL_SEGMENT.search(value):
        return False  # a variable's name (CLUSTER_PRIVATE_KEY), or a thing named after one (X-aws-ec2-metadata-token)
    if det.PASSWORD_NAME.search(key):
        return True  # a password can be any word
    # secret/token/key names: Kubernetes Secret names and plain words (ufmSecret: ufm-secret) are references
    # (a lower-case identifier, a Kubernetes name, an attribute path: model_args.token); a long run of
    # hex digits is a key, whatever its case
    return not re.fullmatch(r"[a-z][a-z0-9_.-]*", value) or bool(re.fullmatch(r"[0-9a-f]{16,}", value))


def _value_span(match: re.Match[str], group: int) -> tuple[int, int]:
    return match.start(group), match.end(group)


def _assignments(text: str, offset: int, number: int) -> Iterator[Secret]:
    """Keyword assignments (detect-secrets' shapes and words, then ours, then ``--flag value``)."""
    if text.lstrip().startswith(("#", "//", ";")):  # prose in comments ("token: ...") is no assignment
        return
    if det.ANY_CREDENTIAL_WORD.search(text) is None:  # every shape's key holds a credential word
        return
    shapes = (*det.KEYWORD_ASSIGNMENTS, *det.EXTRA_ASSIGNMENTS) if "=" in text or ":" in text or ";" in text else ()
    for shape in (*shapes, det.FLAG_ASSIGNMENT):
        position = 0
        while position < len(text):
            match = shape.pattern.search(text, position)
            if match is None:
                break
            start, end = _value_span(match, shape.value_group)
            position = max(match.start() + 1, start)
            if shape.operator_group is not None and match.group(shape.operator_group) != "=":
                continue  # == and != compare; they assign nothing
            quoted = start > 0 and text[start - 1] in "\"'"
            if start > 0 and text[start - 1] == "`":
                continue  # command substitution
            end = _plain_end(text, start, end, quoted, colon=":" in text[match.end(1):start])
            position = max(position, end)
            key, begins = _name_before(text, match.start())
            if not begins:
                continue
            key = key.strip("\"'")
            if _credential(key, text[start:end], text):
                yield Secret("password", number, offset + start + 1, offset + end + 1, key, credential_word(key))


_FORMAT_KINDS = (("token", det.TOKEN_FORMATS), ("connection-string", det.CONNECTION_STRINGS))
# Zero-width assertions look at characters outside a match: anchors, word boundaries, lookarounds (a pattern
# that merely looks like it has one, such as a literal `$` in a class, is only kept out of the shortcut).
_CONTEXT_ASSERTION = re.compile(r"\\[bBAZ]|\(\?<?[=!]|[\^$]")
# A pattern without them matches a line only where it matches the whole text too (the same characters).
_CONTEXT_FREE_FORMATS = tuple(pattern for _, plugins in _FORMAT_KINDS for plugin in plugins
                              for pattern in plugin.denylist if _CONTEXT_ASSERTION.search(pattern.pattern) is None)


def _absent_formats(text: str) -> frozenset[int]:
    """The format patterns no line of ``text`` can match (by id): one search of the whole text each, where
    every line of a long file ran every pattern before (most of a big build's post-build lint)."""
    return frozenset(id(pattern) for pattern in _CONTEXT_FREE_FORMATS if pattern.search(text) is None)


_ALL_FORMATS = tuple((kind, plugin, pattern) for kind, plugins in _FORMAT_KINDS for plugin in plugins
                     for pattern in plugin.denylist)


@functools.lru_cache(maxsize=64)
def _present_formats(absent: frozenset[int]) -> tuple[tuple[str, Any, re.Pattern[str]], ...]:
    """The format patterns left to try once ``absent`` ones are dropped, in their order: one tuple per text, where
    each of its lines skipped the absent ones one by one before."""
    return tuple(entry for entry in _ALL_FORMATS if id(entry[2]) not in absent)


def _formats(text: str, offset: int, number: int, absent: frozenset[int] = frozenset()) -> Iterator[Secret]:
    for kind, plugin, pattern in _present_formats(absent):
        for match in pattern.finditer(text):
            group = 1 if pattern.groups and len(match.group(1) or "") >= 8 else 0
            start, end = match.span(group)
            if is_reference_or_placeholder(text[start:end]) or "{{" in text[start:end]:
                continue
            key = _name_of_value(text, match.start())
            yield Secret(kind, number, offset + start + 1, offset + end + 1, key, plugin.secret_type)


def _windows(line: str) -> Iterator[tuple[int, str]]:
    if len(line) <= WINDOW:
        yield 0, line
        return
    for start in range(0, len(line), WINDOW - OVERLAP):
        yield start, line[start:start + WINDOW]
        if start + WINDOW >= len(line):
            return


# Every private-key marker pattern (detect-secrets' and PRIVATE_KEY_EXTRA) needs one of these literally
# (tests/test_secret_scan_prefilter.py): a text without them has no marker on any line.
PRIVATE_KEY_MARKER_WORDS = ("PRIVATE KEY", "PuTTY-User-Key-File-")


def may_hold_private_key_marker(text: str) -> bool:
    return any(word in text for word in PRIVATE_KEY_MARKER_WORDS)


def has_private_key_marker(line: str) -> bool:
    return bool(det.PRIVATE_KEY_EXTRA.search(line)) or any(p.search(line) for p in det.PRIVATE_KEY.denylist)


def scan_line(line: str, number: int, in_private_key: bool = False,
              absent: frozenset[int] = frozenset(), key_markers: bool = True) -> list[Secret]:
    """The secrets of one line; ``absent``: format patterns known not to match it (:func:`_absent_formats`);
    ``key_markers`` False: its text was found to hold no private-key marker (:func:`may_hold_private_key_marker`)."""
    if in_private_key or (key_markers and has_private_key_marker(line)):
        return [Secret("private-key", number, 1, len(line) + 1, "", "Private Key")]
    found: dict[tuple[int, int], Secret] = {}
    for offset, window in _windows(line):
        for secret in _formats(window, offset, number, absent):
            found.setdefault((secret.column, secret.end_column), secret)
    covered = [(s.column, s.end_column) for s in found.values()]
    for offset, window in _windows(line):
        for secret in _assignments(window, offset, number):
            if not any(a <= secret.column < b or secret.column <= a < secret.end_column for a, b in covered):
                found.setdefault((secret.column, secret.end_column), secret)
    return sorted(_outermost(found.values()), key=lambda s: s.column)


def _outermost(secrets: Iterable[Secret]) -> list[Secret]:
    """One finding per span: a span inside another (a JWT inside a connection string) is the same secret."""
    items = sorted(secrets, key=lambda s: (s.column, -s.end_column))
    kept: list[Secret] = []
    for secret in items:
        if kept and secret.column < kept[-1].end_column:
            continue
        kept.append(secret)
    return kept


# A Kubernetes env entry over two lines (`- name: DB_PASSWORD` then `value: ...`, aligned); a value read
# from a Secret (`valueFrom: {secretKeyRef: ...}`) has no `value:` line, so it is never flagged.
_ENV_NAME = re.compile(r"^(\s*)-\s+name:\s*['\"]?([A-Za-z_][A-Za-z0-9_.-]*)['\"]?\s*$")
_ENV_VALUE = re.compile(r"^(\s*)value:\s*(['\"]?)(.*?)\2\s*(?:#.*)?$")


def _env_pair_name(previous: str, value_match: re.Match[str]) -> str:
    name_match = _ENV_NAME.match(previous)
    if name_match is None or len(name_match.group(1)) + 2 != len(value_match.group(1)):
        return ""
    return name_match.group(2)


def _env_value(name: str, line: str, match: re.Match[str], number: int,
               absent: frozenset[int] = frozenset(), key_markers: bool = True) -> list[Secret]:
    """The secrets of an env entry's value line: a token format under any name, a literal under a credential name."""
    found = [dataclasses.replace(s, key=name) if s.key in ("", "value") else s
             for s in scan_line(line, number, absent=absent, key_markers=key_markers)]
    start, end = match.span(3)
    if not found and _credential(name, match.group(3), line):
        found.append(Secret("password", number, start + 1, end + 1, name, credential_word(name)))
    return found


# `cat <<EOF` to the terminal (no redirection, no pipe): the text a script prints, such as its usage.
_HELP_HEREDOC = re.compile(r"""^\s*cat\s+<<-?\s*['"]?(\w+)['"]?\s*$""")
_KEY_BODY = re.compile(r"^[\s#\"']*(?:[A-Za-z0-9+/=]{16,}|[A-Za-z-]+: .*|-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----.*)[\s\"',]*$")
_KEY_MATERIAL = re.compile(r"[A-Za-z0-9+/=]{16,}")


def _is_key_block(lines: list[str], index: int) -> bool:
    """A BEGIN line with key material after it (on the line or the next); "..." samples are not keys."""
    rest = det.PRIVATE_KEY_EXTRA.split(lines[index], maxsplit=1)[-1]
    if _KEY_MATERIAL.search(rest) or det.PUTTY_KEY.match(lines[index]):
        return True
    body = lines[index + 1:index + 3]  # two lines of material (or material then END): samples show one, then "..."
    return len(body) == 2 and _KEY_MATERIAL.search(body[0]) is not None and "-----END" not in body[0] \
        and all(_KEY_BODY.match(line) for line in body)


# "-----BEGIN " in base64, at each of the three byte alignments a PEM block can start at in a base64 value:
# Kubernetes Secret `data:` (tls.key, ssh-privatekey) and kubeconfig `client-key-data` hold PEM this way.
_ENCODED_PEM = re.compile(r"(?<![A-Za-z0-9+/])LS0tLS1CRUdJTi[A-Za-z0-9+/]{16,}={0,2}")
_DECODED_KEY_HEADER = re.compile(r"-----BEGIN ((?:[A-Z0-9]+ )*)PRIVATE KEY(?: BLOCK)?-----")


def _encoded_private_keys(line: str, number: int) -> Iterator[Secret]:
    """Private keys written base64-encoded (a PEM block with key material after its BEGIN line)."""
    import base64
    import binascii

    for match in _ENCODED_PEM.finditer(line):
        token = match.group(0)
        try:
            decoded = base64.b64decode(token + "=" * (-len(token) % 4), validate=True).decode("ascii", "replace")
        except (binascii.Error, ValueError):
            continue
        header = _DECODED_KEY_HEADER.search(decoded)
        if header is None:
            continue  # a certificate or a public key
        key_lines = decoded[header.start():].splitlines()
        if not _is_key_block(key_lines, 0):
            continue  # a sample cut short ("...")
        kind = header.group(1).strip()
        yield Secret("private-key", number, match.start() + 1, match.end() + 1, _name_of_value(line, match.start()),
                     f"{kind + ', ' if kind else ''}base64-encoded")


def scan_text(text: str) -> list[Secret]:
    """Every secret in ``text``; a private key block counts on each of its lines (all are redacted)."""
    return list(_scan_text(text))


@functools.lru_cache(maxsize=4096)
def _scan_text(text: str) -> tuple[Secret, ...]:
    """Scanned once per text and process: the secrets rule, the spec loader and the scrubbing of every
    message each ask, and a line scan costs ~0.1 ms (Secret is frozen, so the tuple is shared safely)."""
    found: list[Secret] = []
    lines = text.splitlines()
    absent = _absent_formats(text)
    markers = may_hold_private_key_marker(text)
    in_key = False
    help_end: str | None = None  # the delimiter of a heredoc printed as help text
    for index, line in enumerate(lines):
        number = index + 1
        if help_end is not None:
            if line.strip() == help_end:
                help_end = None
            else:  # usage examples (--password 'YourP@ss'): prose, read only for tokens and keys
                found.extend(s for s in scan_line(line, number, absent=absent, key_markers=markers)
                             if s.kind != "password" and s.kind != "private-key")
                continue
        env = _ENV_VALUE.match(line)
        if env and index > 0:
            named = _env_pair_name(lines[index - 1], env)
            if named:  # a Kubernetes env entry: the name is on the line above, the value here
                found.extend(_env_value(named, line, env, number, absent, markers))
                continue
        opening = _HELP_HEREDOC.match(line)
        if opening:
            help_end = opening.group(1)
        if in_key and line.strip() and _KEY_BODY.match(line):
            found.append(Secret("private-key", number, 1, len(line) + 1))
            in_key = "-----END" not in line
            continue
        in_key = False
        line_secrets = [s for s in scan_line(line, number, absent=absent, key_markers=markers) if s.kind != "private-key" or _is_key_block(lines, index)]
        if "LS0tLS1CRUdJTi" in line and not any(s.kind == "private-key" for s in line_secrets):
            encoded = list(_encoded_private_keys(line, number))
            line_secrets = [s for s in line_secrets  # the encoded key, not a "high-entropy" reading of it
                            if not any(e.column <= s.column < e.end_column for e in encoded)] + encoded
            found.extend(line_secrets)
            continue
        found.extend(line_secrets)
        if any(s.kind == "private-key" for s in line_secrets):
            in_key = not re.search(r"-----END [A-Z0-9 ]*PRIVATE KEY", line)
    return tuple(found)


def describe(secret: Secret) -> str:
    """What the secret is and the name it is assigned to; never the value. ``a literal credential
    (client secret) in 'AZURE_CLIENT_SECRET'``, ``an access token (GitHub Token) in 'GH_TOKEN'``."""
    encoded = secret.kind == "private-key" and secret.detector.endswith("base64-encoded")
    what = f" ({secret.detector})" if secret.detector and (secret.kind != "private-key" or encoded) else ""
    named = f" in '{secret.key}'" if secret.key else ""
    return f"{DESCRIPTIONS[secret.kind]}{what}{named}"


def first_per_block(secrets: Iterable[Secret]) -> list[Secret]:
    """One finding per private key block (its first line), every other secret as it is."""
    out: list[Secret] = []
    previous_key_line = -2
    for secret in secrets:
        if secret.kind == "private-key":
            if secret.line != previous_key_line + 1:
                out.append(secret)
            previous_key_line = secret.line
        else:
            out.append(secret)
    return out


MASK = "****"


def redact(text: str) -> str:
    """``text`` with every secret value replaced by ``****`` (line structure kept)."""
    secrets = scan_text(text)
    if not secrets:
        return text
    by_line: dict[int, list[Secret]] = {}
    for secret in secrets:
        by_line.setdefault(secret.line, []).append(secret)
    lines = text.splitlines(keepends=True)
    for number, line_secrets in by_line.items():
        line = lines[number - 1]
        body = line.rstrip("\r\n")
        ending = line[len(body):]
        for secret in sorted(line_secrets, key=lambda s: -s.column):
            body = body[:secret.column - 1] + MASK + body[secret.end_column - 1:]
        lines[number - 1] = body + ending
    redacted = "".join(lines)
    # The same value used again where nothing names it a secret (NCCL_DEBUG=<the password>) is masked too.
    return scrub(redacted, {v for v in secret_values(text) if len(v) >= 6})


def secret_values(text: str) -> set[str]:
    """The secret strings themselves (to scrub them from messages that might quote them)."""
    lines = text.splitlines()
    values = set()
    for secret in scan_text(text):
        value = lines[secret.line - 1][secret.column - 1:secret.end_column - 1]
        if len(value) >= 4:
            values.add(value)
    return values


def scrub(message: str, values: Iterable[str]) -> str:
    for value in sorted(values, key=len, reverse=True):
        if value in message:
            message = message.replace(value, MASK)
    return message
