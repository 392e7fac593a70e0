"""Which detectors find secret candidates: detect-secrets' plugins, and ours for formats it lacks.

hpcconf.secret_scan runs these on every line and then decides, from the line's context, whether a
candidate is a secret. The detection knowledge (token formats, credential keywords, assignment
shapes) is detect-secrets' (Yelp/detect-secrets, its ``plugins`` package); what is added here is
only what that package does not know: token formats of the platforms hpcconf's users run on
(Hugging Face, NVIDIA NGC, Google API keys, Azure SAS signatures and Service Bus keys, GitHub
fine-grained tokens), credential names it has no keyword for (token, passphrase, access key, SAS
key, connection string) and ``--password VALUE`` command-line flags.

Left out on purpose (each would be a false alarm on ordinary infra files): the high-entropy string
plugins (image digests, checksums and CA bundles are high-entropy and public), the public-IP
plugin (an address is no credential), and the vendor keyword heuristics of Artifactory, Cloudant,
IBM and SoftLayer (short prefixes such as ``AP`` + hex, ``cl_key`` that ordinary words match).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Pattern

from detect_secrets.plugins import keyword as ds_keyword
from detect_secrets.plugins.aws import AWSKeyDetector
from detect_secrets.plugins.azure_storage_key import AzureStorageKeyDetector
from detect_secrets.plugins.base import RegexBasedDetector
from detect_secrets.plugins.basic_auth import BasicAuthDetector
from detect_secrets.plugins.discord import DiscordBotTokenDetector
from detect_secrets.plugins.github_token import GitHubTokenDetector
from detect_secrets.plugins.gitlab_token import GitLabTokenDetector
from detect_secrets.plugins.jwt import JwtTokenDetector
from detect_secrets.plugins.mailchimp import MailchimpDetector
from detect_secrets.plugins.npm import NpmDetector
from detect_secrets.plugins.openai import OpenAIDetector
from detect_secrets.plugins.private_key import PrivateKeyDetector
from detect_secrets.plugins.pypi_token import PypiTokenDetector
from detect_secrets.plugins.sendgrid import SendGridDetector
from detect_secrets.plugins.slack import SlackDetector
from detect_secrets.plugins.square_oauth import SquareOAuthDetector
from detect_secrets.plugins.stripe import StripeDetector
from detect_secrets.plugins.telegram_token import TelegramBotTokenDetector
from detect_secrets.plugins.twilio import TwilioKeyDetector


class HuggingFaceTokenDetector(RegexBasedDetector):
    """Hugging Face user access tokens (``hf_`` and 34 letters; huggingface_hub's token docs)."""

    secret_type = "Hugging Face Token"
    denylist = (re.compile(r"\bhf_[A-Za-z0-9]{30,}\b"),)


class NgcApiKeyDetector(RegexBasedDetector):
    """NVIDIA NGC personal and service API keys (``nvapi-``, NGC user guide, 'Generating API keys')."""

    secret_type = "NVIDIA NGC API Key"
    denylist = (re.compile(r"\bnvapi-[A-Za-z0-9_-]{30,}"),)


class GoogleApiKeyDetector(RegexBasedDetector):
    """Google Cloud API keys (``AIza`` and 35 characters)."""

    secret_type = "Google API Key"
    denylist = (re.compile(r"\bAIza[0-9A-Za-z_-]{35}"),)


class GitHubFineGrainedTokenDetector(RegexBasedDetector):
    """GitHub fine-grained personal access tokens (``github_pat_``); detect-secrets knows the classic ones."""

    secret_type = "GitHub Token"
    denylist = (re.compile(r"\bgithub_pat_[A-Za-z0-9_]{40,}"),)


class AzureSasDetector(RegexBasedDetector):
    """The signature of an Azure shared access signature URL (``sig=``)."""

    secret_type = "Azure Shared Access Signature"
    denylist = (re.compile(r"(?<=[?&])sig=([A-Za-z0-9%+/]{20,}={0,2})"),)


class AzureSharedKeyDetector(RegexBasedDetector):
    """Keys in Azure Storage, Service Bus and Event Hubs connection strings (detect-secrets' storage
    detector wants the full 88-character account key; these strings also carry shorter keys)."""

    secret_type = "Azure Shared Key"
    denylist = (re.compile(r"\b(?:SharedAccessKey|SharedAccessSignature|AccountKey)=([^;\s'\"]{16,})", re.IGNORECASE),)


TOKEN_FORMATS: tuple[RegexBasedDetector, ...] = (
    AWSKeyDetector(), DiscordBotTokenDetector(), GitHubTokenDetector(), GitLabTokenDetector(), JwtTokenDetector(),
    MailchimpDetector(), NpmDetector(), OpenAIDetector(), PypiTokenDetector(), SendGridDetector(), SlackDetector(),
    SquareOAuthDetector(), StripeDetector(), TelegramBotTokenDetector(), TwilioKeyDetector(),
    HuggingFaceTokenDetector(), NgcApiKeyDetector(), GoogleApiKeyDetector(), GitHubFineGrainedTokenDetector(),
)
CONNECTION_STRINGS: tuple[RegexBasedDetector, ...] = (BasicAuthDetector(), AzureStorageKeyDetector(), AzureSasDetector(),
                                                      AzureSharedKeyDetector())
PRIVATE_KEY = PrivateKeyDetector()
# detect-secrets' list lacks ENCRYPTED PRIVATE KEY (PKCS#8) and PuTTY's version 3 files; a .ppk pasted into a YAML
# block or a comment is indented or behind '#', as a PEM block may be.
PUTTY_KEY = re.compile(r"^[\s#\"']*PuTTY-User-Key-File-\d+:")
PRIVATE_KEY_EXTRA = re.compile(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|" + PUTTY_KEY.pattern)


@dataclass(frozen=True)
class Assignment:
    """A shape ``key <sep> value``: the pattern, the group holding the value, and the operator group
    (compared with ``=``/``:`` so that ``==`` and ``!=`` comparisons are no assignments)."""

    pattern: Pattern[str]
    value_group: int
    operator_group: int | None = None


# detect-secrets' keyword shapes for configuration files (its CONFIG/YAML table), without the comparisons
# ("bar" == my_password) that a script's test reads, not assigns: env files, Dockerfiles and scripts
# are configuration-shaped too (KEY=value, key: value).
KEYWORD_ASSIGNMENTS = (
    Assignment(ds_keyword.FOLLOWED_BY_COLON_REGEX, 4),
    Assignment(ds_keyword.FOLLOWED_BY_EQUAL_SIGNS_REGEX, 5, operator_group=3),
    Assignment(ds_keyword.FOLLOWED_BY_QUOTES_AND_SEMICOLON_REGEX, 3),
)
KEYWORD_WORDS = ds_keyword.DENYLIST
# Credential names detect-secrets has no keyword for; the same assignment shapes, our words.
EXTRA_WORDS = ("token", "passphrase", "access_?key", "sas_?key", "connection_?string")
_EXTRA = "|".join(EXTRA_WORDS)
EXTRA_ASSIGNMENTS = (
    Assignment(re.compile(rf"({_EXTRA})s?([\]'\"]{{0,2}}):\s*(['\"`]?)(\w[^\v'\"]*)", re.IGNORECASE), 4),
    Assignment(re.compile(rf"({_EXTRA})s?([\]'\"]{{0,2}})\s*(={{1,3}}|!==?)\s*(['\"`]?)(\w[^\v'\"]*)", re.IGNORECASE),
               5, operator_group=3),
)
_FLAG_WORDS = "|".join((*KEYWORD_WORDS, *EXTRA_WORDS)).replace("_?", "[_-]?")
# mysql --password VALUE, az login --password VALUE: the value is the next word.
FLAG_ASSIGNMENT = Assignment(re.compile(rf"(?<!\S)--?[A-Za-z0-9-]*(?:{_FLAG_WORDS})[ \t]+(['\"]?)([^\s'\"]+)",
                                        re.IGNORECASE), 2)
# A part of every credential word above: a text holding none of them (any case, as the shapes match) holds no
# keyword assignment, so the scanner tries the shapes only where one occurs (tests/test_secret_scan_prefilter.py
# checks every word, and every shape's pattern, against this).
CREDENTIAL_WORD_CORES = ("key", "pass", "pwd", "secret", "contrase", "token", "connection")
ANY_CREDENTIAL_WORD = re.compile("|".join(CREDENTIAL_WORD_CORES), re.IGNORECASE)
# The name must end in a credential word (admin_password, AZURE_CLIENT_SECRET, api_key, SECRET_KEY):
# OIDCPassIDTokenAs, token_count or secretName are something else.
NAME_ENDS_WITH_WORD = re.compile(rf"(?:{'|'.join(KEYWORD_WORDS)}|{_EXTRA}|secret_?key)s?$".replace("_?", "[_-]?"),
                                 re.IGNORECASE)
PASSWORD_NAME = re.compile(r"(?:password|passwd|passphrase|pwd|pass)s?$", re.IGNORECASE)
