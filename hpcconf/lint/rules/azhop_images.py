"""AzHOP ``config.yml`` image and plan references (AZH010); the judgement is shared with specs."""

from __future__ import annotations

from typing import Iterator

from ...diagnostics import Diagnostic, Severity
from ...knowledge.azhop_view import judge_image_refs
from ...rules_registry import rule
from ..azhop_config import KINDS, config_data, image_refs_view, report
from ..context import LintContext
from ..document import Document

# -- AZH010 --------------------------------------------------------------------------------------------

@rule(code="AZH010", name="azhop-image-reference", severity=Severity.ERROR, kinds=KINDS)
def image_reference(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """An image is neither ``publisher:offer:sku:version`` nor a resource ID, or a plan is not ``publisher:product:name``.

    ## What it catches
    Image strings without exactly four non-empty ``:``-separated parts (and no ``/``), IDs that do
    not start with ``/subscriptions/``, and plans without exactly three parts.

    ## Why is this bad?
    The schema types images and plans as plain strings (G5). Bicep splits marketplace images with
    ``split(image, ':')`` and reads parts 0-3; the CycleCloud template splits plans with
    ``plan.split(':')`` into Publisher/Product/Name. A three-part URN fails the deployment with an
    index error; a four-part plan produces a wrong plan and an unaccepted-terms error.

    ## Example
    ```yaml
    linux_base_image: OpenLogic:CentOS:7_9-gen2
    ```

    ## Fix
    ```yaml
    linux_base_image: OpenLogic:CentOS:7_9-gen2:latest
    ```
    """
    yield from report(doc, judge_image_refs(image_refs_view(config_data(doc))))
