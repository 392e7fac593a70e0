"""Find credentials in text, so hpcconf can flag them and never repeat them.

One scanner serves the spec loader (a spec holding a secret is refused before anything is
generated from it), the lint rules SEC001-SEC004 (hpcconf.lint.rules.secrets) and redaction of
every output (source lines quoted under findings, messages). It works line by line on raw text,
so it reads specs, YAML, env files, Dockerfiles and shell scripts alike.

What counts as a secret, and what does not (false alarms are worse than none here):
- SEC001 a private key block (``-----BEGIN ... PRIVATE KEY-----``, PuTTY key files). Public keys pass.
- SEC002 a literal value assigned to a credential-named key (password, passwd, secret, token,
  api key, access key, client secret, ...), in ``key: value``, ``KEY=value``, ``--password value``.
  Not flagged: references and placeholders (``${VAR}``, ``$VAR``, ``{{ x }}``, ``<password>``,
  ``changeme``, ``xxxx``, ``****``, ``REDACTED``, ``example``...), values that name where a secret
  lives (keys ending in _file, _path, _name, _ref, _id, secretName, secretKeyRef, valueFrom; values
  that are paths or Key Vault references), booleans and numbers shorter than 6 digits.
- SEC003 a token in a provider's recognisable format (GitHub, AWS access key id, Slack, Google
  API key, Hugging Face, NVIDIA NGC ``nvapi-``, JSON Web Tokens, Azure SAS signatures).
- SEC004 a connection string with a credential: ``scheme://user:password@host``, Azure storage
  ``AccountKey=``/``SharedAccessKey=``.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

_PRIVATE_KEY = re.compile(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|^PuTTY-User-Key-File-\d+:")
_NAME_WORDS = (r"password|passwd|passphrase|pwd|secret|token|api[_-]?key|apikey|access[_-]?key|private[_-]?key|"
               r"client[_-]?secret|auth[_-]?key|sas[_-]?key|account[_-]?key|connection[_-]?string")
# key: value | KEY=value | "key": "value" | --password value | --password=value
_ASSIGNMENT = re.compile(
    rf"""(?P<key>["']?(?:--)?[A-Za-z0-9_.-]*(?:{_NAME_WORDS})[A-Za-z0-9_.-]*["']?)"""
    r"""(?P<sep>\s*[:=]\s*|\s+)(?P<value>"[^"]*"|'[^']*'|\$\{[^}]*\}\S*|\{\{.*?\}\}|[^\s,;#}\]]+)""", re.IGNORECASE)
_REFERENCE_KEY = re.compile(r"(_|-|\b)(file|path|name|ref|id|dir|env|type|mode|length|policy|secretname|enabled|"
                            r"required|hash|algorithm|key_?vault|vault|source|url|uri|expir\w*|ttl|rotation)[\"']?$"
                            r"|secretname|secretkeyref|valuefrom|ssh[_-]?public[_-]?key|public[_-]?key", re.IGNORECASE)
_PLACEHOLDER = re.compile(
    r"""^(?:|<[^>]*>|\$\{[^}]*\}|\$[A-Za-z_][A-Za-z0-9_]*|\$\([^)]*\)|\{\{.*\}\}|%\([^)]*\)s?|@Microsoft\.KeyVault\(.*\)|"""
    r"""(?:change[-_]?me|changeit|password|passwd|secret|token|example|sample|placeholder|redacted|dummy|test|none|null|"""
    r"""nil|true|false|yes|no|on|off|todo|fixme|tbd|your[-_a-z]*|my[-_]?(?:password|secret|token))|"""
    r"""(?P<rep>.)(?P=rep){2,}|\*+|x+|\.+|-+|~|\d{1,5}|/.*|\./.*|~/.*|[A-Za-z]:\\.*)$""", re.IGNORECASE)
_TOKENS = re.compile(
    r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{40,}|AKIA[0-9A-Z]{16}|ASIA[0-9A-Z]{16}|"
    r"xox[abprs]-[A-Za-z0-9-]{10,}|AIza[0-9A-Za-z_-]{35}|hf_[A-Za-z0-9]{30,}|nvapi-[A-Za-z0-9_-]{30,}|"
    r"glpat-[A-Za-z0-9_-]{20,}|sk-[A-Za-z0-9_-]{32,}|"
    r"eyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,})\b"
    r"|(?<=[?&])sig=[A-Za-z0-9%+/]{20,}={0,2}")
_URL_CREDENTIAL = re.compile(r"\b[a-z][a-z0-9+.-]*://[^\s:/@'\"]+:(?P<secret>[^\s@/'\"]+)@[^\s'\"]+", re.IGNORECASE)
_ACCOUNT_KEY = re.compile(r"\b(?:AccountKey|SharedAccessKey|SharedAccessSignature)=(?P<secret>[^;\s'\"]{16,})", re.IGNORECASE)

CODES = {"private-key": "SEC001", "password": "SEC002", "token": "SEC003", "connection-string": "SEC004"}
DESCRIPTIONS = {"private-key": "a private key", "password": "a literal credential (password, secret or key)",
                "token": "an access token", "connection-string": "a connection string with a "
                "credential in it"}


@dataclass(frozen=True)
class Secret:
    kind: str  # a key of CODES
    line: int  # 1-based
    column: int  # 1-based, the first character of the secret value
    end_column: int  # exclusive
    key: str = ""  # the name it was assigned to, when there is one (never the value)

    @property
    def code(self) -> str:
        return CODES[self.kind]


def _unquote(value: str, start: int) -> tuple[str, int]:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        return value[1:-1], start + 1
    return value, start


_PASSWORD_KEY = re.compile(r"(password|passwd|passphrase|pwd)[\"']?$", re.IGNORECASE)
# The credential word must end the key (admin_password, AZURE_CLIENT_SECRET, api_key): OIDCPassIDTokenAs,
# token_count or secretName are something else.
_KEY_ENDS_WITH_WORD = re.compile(rf"(?:{_NAME_WORDS})s?[\"']?$", re.IGNORECASE)


def _looks_secret(key: str, value: str) -> bool:
    value = value.strip()
    if not _KEY_ENDS_WITH_WORD.search(key) or _PLACEHOLDER.match(value) or len(value) < 6:
        return False
    if any(ch.isspace() for ch in value) or value.startswith("[") and value.endswith("]"):
        return False  # prose or a label ("Admin Password"), an ARM template expression
    if _PASSWORD_KEY.search(key):
        return True  # a password can be any word
    # secret/token/key names: Kubernetes Secret names and plain words (ufmSecret: ufm-secret) are references
    return not re.fullmatch(r"[a-z][a-z0-9.-]*", value)


def _assignments(line: str, number: int) -> Iterator[Secret]:
    if line.lstrip().startswith(("#", "//", ";")):  # prose in comments ("token: ...") is no assignment
        return
    for match in _ASSIGNMENT.finditer(line):
        key = match.group("key").strip("\"'")
        if _REFERENCE_KEY.search(key) or match.group("sep").strip() == "" and not key.startswith("--"):
            continue
        value, start = _unquote(match.group("value"), match.start("value"))
        if not _looks_secret(key, value):
            continue
        yield Secret("password", number, start + 1, start + 1 + len(value), key)


def scan_line(line: str, number: int, in_private_key: bool = False) -> list[Secret]:
    found: list[Secret] = []
    if in_private_key or _PRIVATE_KEY.search(line):
        found.append(Secret("private-key", number, 1, len(line) + 1))
        return found
    for match in _TOKENS.finditer(line):
        found.append(Secret("token", number, match.start() + 1, match.end() + 1))
    for pattern in (_URL_CREDENTIAL, _ACCOUNT_KEY):
        for match in pattern.finditer(line):
            value = match.group("secret")
            if not _PLACEHOLDER.match(value):
                found.append(Secret("connection-string", number, match.start("secret") + 1, match.end("secret") + 1))
    covered = [(s.column, s.end_column) for s in found]
    for secret in _assignments(line, number):
        if not any(a <= secret.column < b or secret.column <= a < secret.end_column for a, b in covered):
            found.append(secret)
    return found


_KEY_BODY = re.compile(r"^[\s#\"']*(?:[A-Za-z0-9+/=]{16,}|[A-Za-z-]+: .*|-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----.*)[\s\"',]*$")
_KEY_MATERIAL = re.compile(r"[A-Za-z0-9+/=]{16,}")


def _is_key_block(lines: list[str], index: int) -> bool:
    """A BEGIN line with key material after it (on the line or the next); "..." samples are not keys."""
    rest = _PRIVATE_KEY.split(lines[index], maxsplit=1)[-1]
    if _KEY_MATERIAL.search(rest) or lines[index].startswith("PuTTY-User-Key-File"):
        return True
    body = lines[index + 1:index + 3]  # two lines of material (or material then END): samples show one, then "..."
    return len(body) == 2 and _KEY_MATERIAL.search(body[0]) is not None and "-----END" not in body[0] \
        and all(_KEY_BODY.match(line) for line in body)


def scan_text(text: str) -> list[Secret]:
    """Every secret in ``text``; a private key block counts on each of its lines (all are redacted)."""
    return list(_scan_text(text))


@functools.lru_cache(maxsize=4096)
def _scan_text(text: str) -> tuple[Secret, ...]:
    """Scanned once per text and process: the secrets rule, the spec loader and the scrubbing of every
    message each ask, and a line scan costs ~0.1 ms (Secret is frozen, so the tuple is shared safely)."""
    found: list[Secret] = []
    lines = text.splitlines()
    in_key = False
    for index, line in enumerate(lines):
        number = index + 1
        if in_key and line.strip() and _KEY_BODY.match(line):
            found.append(Secret("private-key", number, 1, len(line) + 1))
            in_key = "-----END" not in line
            continue
        in_key = False
        line_secrets = [s for s in scan_line(line, number) if s.kind != "private-key" or _is_key_block(lines, index)]
        found.extend(line_secrets)
        if any(s.kind == "private-key" for s in line_secrets):
            in_key = not re.search(r"-----END [A-Z0-9 ]*PRIVATE KEY", line)
    return tuple(found)


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
