"""The committed JSON Schema is the spec model's schema, and every example validates against it."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from hpcconf.spec.schema import schema_text
from hpcconf.yamlpos import load_document

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = sorted((REPO / "examples").glob("*.yaml"))


def test_committed_schema_is_current():
    committed = (REPO / "schemas" / "hpcconf-spec.schema.json").read_text(encoding="utf-8")
    assert committed == schema_text(), "schemas/hpcconf-spec.schema.json is stale: run `hpcconf schema -o schemas/hpcconf-spec.schema.json`"


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.name)
def test_example_validates_against_schema_and_has_modeline(example):
    text = example.read_text(encoding="utf-8")
    assert text.startswith("# yaml-language-server: $schema=../schemas/hpcconf-spec.schema.json\n")
    schema = json.loads((REPO / "schemas" / "hpcconf-spec.schema.json").read_text(encoding="utf-8"))
    jsonschema.Draft7Validator(schema).validate(load_document(text, str(example)).data)


def test_schema_rejects_unknown_keys_like_the_loader():
    schema = json.loads(schema_text())
    bad = {"apiVersion": "hpcconf/v1", "kind": "Cluster", "metadata": {"name": "ab", "location": "eastus", "nmae": "x"},
           "platforms": ["aks"], "pools": [{"name": "gpu", "sku": "x", "count": 1}]}
    with pytest.raises(jsonschema.ValidationError, match="nmae"):
        jsonschema.Draft7Validator(schema).validate(bad)
