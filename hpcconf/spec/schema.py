"""The spec's JSON Schema, as committed in schemas/hpcconf-spec.schema.json."""

from __future__ import annotations

import json
from typing import Any

from .model import Cluster

SCHEMA_ID = "https://hpcconf.dev/schemas/hpcconf-spec.schema.json"


def spec_schema() -> dict[str, Any]:
    schema = Cluster.model_json_schema(mode="validation")
    return {"$schema": "http://json-schema.org/draft-07/schema#", "$id": SCHEMA_ID, **schema}


def schema_text() -> str:
    return json.dumps(spec_schema(), indent=2, sort_keys=True) + "\n"
