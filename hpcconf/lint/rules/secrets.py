"""Secrets: private keys, passwords, tokens and connection strings written into files meant to be shared.

Cluster specs, values files and scripts live in git and in CI logs; a credential in one of them
is leaked the moment it is pushed. The scanner is :mod:`hpcconf.secret_scan` (what counts and
what does not: placeholders, references and public keys never do). Findings never quote the
value: messages name the key, and every source line shown under a finding has the value
replaced by ``****`` (hpcconf.diagnostics.SourceCache), in every output format.

Specs are checked by the loader itself (a spec with a secret is refused before anything is
generated from it, so the secret is never copied into out/): these rules look at every other file.
"""

from __future__ import annotations

from collections.abc import Iterator

from ...artifacts import Kind
from ...diagnostics import Diagnostic, Severity
from ...secret_scan import Secret, describe, first_per_block, scan_text
from ..context import LintContext
from ..document import Document
from ..registry import rule

KINDS = tuple(k for k in Kind.all() if k != Kind.SPEC)


def secret_message(secret: Secret) -> tuple[str, str]:
    """(message, hint) for a secret; the value itself is never part of either."""
    message = f"{describe(secret)} is written into this file"
    hint = {
        "private-key": "remove it and rotate the key; give the public key (.pub) where one is needed",
        "password": "reference it instead: an environment variable (${NAME}), a Kubernetes Secret "
                    "(secretKeyRef) or a Key Vault reference; rotate the value, it is in the history",
        "token": "remove it and revoke the token; pass it from the CI secret store at run time",
        "connection-string": "take the credential out of the string (managed identity, or a secret reference); "
                             "rotate it",
    }[secret.kind]
    return message, hint


def _findings(doc: Document, kind: str) -> Iterator[Diagnostic]:
    for secret in first_per_block(scan_text(doc.text)):
        if secret.kind != kind:
            continue
        message, hint = secret_message(secret)
        end = secret.end_column if secret.kind != "private-key" else None
        yield doc.at_line(secret.line, message, hint=hint, column=secret.column, end_column=end)


@rule(code="SEC001", name="private-key", severity=Severity.ERROR, kinds=KINDS)
def private_key(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """A private key (``-----BEGIN ... PRIVATE KEY-----`` with key material, or a PuTTY key file).

    ## What it catches
    A PEM/OpenSSH private key block, or a PuTTY ``.ppk`` key, anywhere in the file, comments
    included. A sample whose body is cut short (``...``) and public keys (``ssh-ed25519 AAAA...``,
    ``-----BEGIN PUBLIC KEY-----``, certificates) are not flagged.

    ## Why is this bad?
    Whoever can read the repository (or the CI log that printed the file) can log in as that key.

    ## Example
    ```yaml
    sshPrivateKey: |
      -----BEGIN OPENSSH PRIVATE KEY-----
      b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW
      ...
    ```

    ## Fix
    Delete it, rotate the key (it stays in git history), and mount it from a secret store.
    """
    yield from _findings(doc, "private-key")


@rule(code="SEC002", name="literal-credential", severity=Severity.ERROR, kinds=KINDS)
def literal_credential(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """A password, secret or key is written as a literal value.

    ## What it catches
    ``key: value``, ``KEY=value`` and ``--password value`` where the key ends in password, passwd,
    passphrase, pwd, secret, token, api key, access key, private key, client secret, auth key, SAS
    key, account key or connection string. Not flagged: placeholders (``<password>``, ``changeme``,
    ``xxxx``, ``****``, ``REDACTED``), references (``${VAR}``, ``$VAR``, ``{{ x }}``,
    ``@Microsoft.KeyVault(...)``, ARM ``[parameters(...)]``), paths, keys that name where a secret
    lives (``*_file``, ``*_path``, ``*_name``, ``secretName``, ``secretKeyRef``), values with spaces
    (labels), and for secret/token/key names lower-case names such as Kubernetes Secret names.
    Comment lines are prose and are not read for assignments.

    ## Why is this bad?
    The file is committed and shared; the value is then readable by everyone with the repository,
    forever (git history).

    ## Example
    ```sh
    export AZURE_CLIENT_SECRET=8Q~d3mo-s3cr3t-value
    ```

    ## Fix
    Reference it (``export AZURE_CLIENT_SECRET="${AZURE_CLIENT_SECRET:?}"`` from the CI secret
    store, a Kubernetes ``secretKeyRef``, a Key Vault reference) and rotate the value.
    """
    yield from _findings(doc, "password")


@rule(code="SEC003", name="access-token", severity=Severity.ERROR, kinds=KINDS)
def access_token(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """An access token in a provider's recognisable format.

    ## What it catches
    GitHub (``ghp_``, ``gho_``, ``ghs_``, ``github_pat_``), GitLab (``glpat-``), AWS access key ids
    (``AKIA``/``ASIA``), Slack (``xox?-``), Google API keys (``AIza``), Hugging Face (``hf_``),
    NVIDIA NGC (``nvapi-``), OpenAI-style ``sk-`` keys, JSON Web Tokens and Azure SAS
    signatures (``sig=`` in a URL), wherever they appear.

    ## Why is this bad?
    Tokens grant API access without a second factor; scanners harvest them from public
    repositories within minutes.

    ## Example
    ```yaml
    imagePullSecret: nvapi-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789abcd
    ```

    ## Fix
    Revoke the token, then pass it at run time from a secret store.
    """
    yield from _findings(doc, "token")


@rule(code="SEC004", name="credential-in-connection-string", severity=Severity.ERROR, kinds=KINDS)
def credential_in_connection_string(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """A URL or connection string carries a password or account key.

    ## What it catches
    ``scheme://user:password@host`` (the password not a placeholder or ``${VAR}``) and Azure
    storage / Service Bus strings with ``AccountKey=``, ``SharedAccessKey=`` or
    ``SharedAccessSignature=``.

    ## Why is this bad?
    The credential travels with every copy of the string: logs, process lists, the repository.

    ## Example
    ```ini
    SLURM_DB_URL=mysql://slurm:Sl4rmPa55@db.internal:3306/slurm_acct_db
    ```

    ## Fix
    Keep the user and host in the string and give the password separately from a secret store
    (or use a managed identity); rotate the exposed one.
    """
    yield from _findings(doc, "connection-string")
