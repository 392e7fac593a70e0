"""Keep detect-secrets' network stack out of the command line's start-up.

detect-secrets imports ``requests`` at module level only for its online ``verify`` step, which hpcconf never
calls (it scans files offline). Importing requests (urllib3, http.client, charset_normalizer) cost about 130 ms,
a third of `hpcconf lint FILE` (measured with ``python -X importtime``). A placeholder stands in for it until
something reads one of its attributes; then the real module is imported and answers.

Only the console script (:mod:`hpcconf.entry`) installs the placeholder: the placeholder is no package, so a
later ``import requests.adapters`` in the same process would fail. The command line never imports a submodule
of requests; a program that imports hpcconf as a library may, and gets the real requests.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import sys
import types
from typing import Any


class DeferredModule(types.ModuleType):
    """``import NAME`` succeeds at once; the first attribute read imports the real module (and every later
    read is answered by it). importlib.util.LazyLoader cannot do this: the import statement itself reads
    ``__spec__``, which makes LazyLoader load at once."""

    def __getattr__(self, attribute: str) -> Any:  # only for attributes the placeholder does not have
        name = self.__name__
        if sys.modules.get(name) is self:
            del sys.modules[name]
        return getattr(importlib.import_module(name), attribute)


def defer(name: str) -> None:
    if name not in sys.modules:
        placeholder = DeferredModule(name)
        placeholder.__spec__ = importlib.machinery.ModuleSpec(name, None)
        sys.modules[name] = placeholder


def defer_network_stack() -> None:
    """What the command line defers: detect-secrets' ``requests`` (see the module's docstring)."""
    defer("requests")
