"""Secrets: private keys, passwords, tokens and connection strings written into files meant to be shared.

Cluster specs, values files and scripts live in git and in CI logs; a credential in one of them
is leaked the moment it is pushed. The scanner is :mod:`hpcconf.secret_scan`: candidates come
from detect-secrets' plugins (Yelp/detect-secrets), then its heuristic filters and the file's
context decide (placeholders, references, substitutions and public keys never count). Findings never quote the
value: messages name the key, and every source line shown under a finding has the value
replaced by ``****`` (hpcconf.diagnostic_text.SourceCache), in every output format.

Specs are checked by the loader itself (a spec with a secret is refused before anything is
generated from it, so the secret is never copied into out/): these rules look at every other file.
Severity follows what the consumer does (each page says which): a token in a provider's format is
blocked at push and revoked by its provider (error); any other credential is exposed, not refused
(warning).
"""

from __future__ import annotations

from collections.abc import Iterator

from ...artifacts import Kind
from ...diagnostics import Diagnostic, Severity
from ...rules_registry import rule
from ...secret_scan import Secret, describe, first_per_block, scan_text
from ..context import LintContext
from ..document import Document

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


@rule(code="SEC001", name="private-key", severity=Severity.WARNING, kinds=KINDS)
def private_key(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """A private key (``-----BEGIN ... PRIVATE KEY-----`` with key material, or a PuTTY key file).

    ## What it catches
    A PEM/OpenSSH private key block, or a PuTTY ``.ppk`` key, anywhere in the file, comments
    included; also a PEM private key written base64-encoded, as a Kubernetes Secret's ``data:``
    holds it (``tls.key``, ``ssh-privatekey``: the API server stores ``data`` values base64-decoded,
    Kubernetes "Secrets" concept page) and a kubeconfig's ``client-key-data``: the value is decoded and
    the key's type named (RSA, EC, OPENSSH, or none for PKCS#8). A sample whose body is cut short
    (``...``) and public keys (``ssh-ed25519 AAAA...``, ``-----BEGIN PUBLIC KEY-----``, certificates,
    also base64-encoded as a Secret's ``tls.crt``) are not flagged. A YAML file that does not parse
    (HPC001) is still read for secrets: it is committed all the same.

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

    ## Severity
    Warning: whoever can read the repository or a CI log that printed the file holds the
    credential, a loss the owner can measure, but no consumer refuses the file and the job still
    runs (GitHub reports generic secrets such as private keys and connection strings as alerts,
    without blocking the push: "Supported secret scanning patterns", non-provider patterns). In an
    hpcconf spec it is an error: ``hpcconf build`` refuses a spec holding a secret, since the spec
    is copied into generated, committed files. ``fail_level = "warning"`` in the settings makes
    these fail a commit.
    """
    yield from _findings(doc, "private-key")


@rule(code="SEC002", name="literal-credential", severity=Severity.WARNING, kinds=KINDS)
def literal_credential(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """A password, secret or key is written as a literal value.

    ## What it catches
    ``key: value``, ``KEY=value``, ``--password value`` and Kubernetes env entries
    (``- name: DB_PASSWORD`` / ``value: ...``) where the name ends in one of detect-secrets'
    credential keywords (password, passwd, pwd, secret, api key, auth key, private key, client
    key, account key...) or in token, passphrase, access key, SAS key or connection string.
    The finding names the variable and the kind of credential; the value is masked.

    Never flagged, whatever the name: a reference or expansion (``$X``, ``${X}``, Kubernetes'
    ``$(X)``, ``$(curl ...)``, backticks, ``$((a+b))``, ``{{ x }}``, ``@Microsoft.KeyVault(...)``,
    ARM ``[parameters(...)]``), a value read from a Kubernetes Secret (``valueFrom:
    secretKeyRef``), an empty string, a placeholder (``<password>``, ``changeme``, ``xxxx``,
    ``hf_xxxxxx``, ``****``, ``your-...``, ``REDACTED``), sequential or UUID-shaped strings
    (detect-secrets' filters), a variable's name (``CLUSTER_PRIVATE_KEY``), code (``get_token()``),
    paths, names that say where a secret lives (``*_file``, ``*_path``, ``*_name``, ``secretName``),
    ``==``/``!=`` comparisons, values with spaces (labels), for secret/token/key names a lower-case
    name such as a Kubernetes Secret's, comment lines, and the help text a script prints
    (``cat <<EOF`` to the terminal).

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

    ## Severity
    Warning: whoever can read the repository or a CI log that printed the file holds the
    credential, a loss the owner can measure, but no consumer refuses the file and the job still
    runs (GitHub reports generic secrets such as private keys and connection strings as alerts,
    without blocking the push: "Supported secret scanning patterns", non-provider patterns). In an
    hpcconf spec it is an error: ``hpcconf build`` refuses a spec holding a secret, since the spec
    is copied into generated, committed files. ``fail_level = "warning"`` in the settings makes
    these fail a commit.
    """
    yield from _findings(doc, "password")


@rule(code="SEC003", name="access-token", severity=Severity.ERROR, kinds=KINDS)
def access_token(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """An access token in a provider's recognisable format.

    ## What it catches
    The token formats of detect-secrets' plugins: GitHub (``ghp_``, ``gho_``, ``ghs_``...), GitLab
    (``glpat-``...), AWS access key ids (``AKIA``/``ASIA``), Slack, OpenAI, Stripe, npm, PyPI,
    Discord, Telegram, Twilio, SendGrid, Mailchimp, Square and JSON Web Tokens; and, added by
    hpcconf, Hugging Face (``hf_``), NVIDIA NGC (``nvapi-``), Google API keys (``AIza``) and GitHub
    fine-grained tokens (``github_pat_``), wherever they appear. The finding names the format and
    the variable it is assigned to.

    ## Why is this bad?
    Tokens grant API access without a second factor; scanners harvest them from public
    repositories within minutes.

    ## Example
    ```yaml
    imagePullSecret: nvapi-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789abcd
    ```

    ## Fix
    Revoke the token, then pass it at run time from a secret store.

    ## Severity
    Error: the job stops working. GitHub blocks a push holding a token of a supported provider
    format where push protection is on (the default for public repositories; "Working with push
    protection", docs.github.com), and partner providers revoke or quarantine a token found in a
    public repository (AWS attaches its ``AWSCompromisedKeyQuarantineV2`` policy to the leaked key;
    GitHub's secret scanning partner program). A spec holding one is refused by ``hpcconf build``.
    """
    yield from _findings(doc, "token")


@rule(code="SEC004", name="credential-in-connection-string", severity=Severity.WARNING, kinds=KINDS)
def credential_in_connection_string(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """A URL or connection string carries a password or account key.

    ## What it catches
    ``scheme://user:password@host`` (detect-secrets' basic-auth plugin; the password not a
    placeholder or ``${VAR}``), Azure storage / Service Bus strings with ``AccountKey=``,
    ``SharedAccessKey=`` or ``SharedAccessSignature=``, and the ``sig=`` of an Azure SAS URL.

    ## Why is this bad?
    The credential travels with every copy of the string: logs, process lists, the repository.

    ## Example
    ```ini
    SLURM_DB_URL=mysql://slurm:Sl4rmPa55@db.internal:3306/slurm_acct_db
    ```

    ## Fix
    Keep the user and host in the string and give the password separately from a secret store
    (or use a managed identity); rotate the exposed one.

    ## Severity
    Warning: whoever can read the repository or a CI log that printed the file holds the
    credential, a loss the owner can measure, but no consumer refuses the file and the job still
    runs (GitHub reports generic secrets such as private keys and connection strings as alerts,
    without blocking the push: "Supported secret scanning patterns", non-provider patterns). In an
    hpcconf spec it is an error: ``hpcconf build`` refuses a spec holding a secret, since the spec
    is copied into generated, committed files. ``fail_level = "warning"`` in the settings makes
    these fail a commit.
    """
    yield from _findings(doc, "connection-string")
