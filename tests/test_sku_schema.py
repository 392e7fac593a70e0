"""The committed SKU JSON Schema is the catalog model's schema, and every package SKU file validates."""

from __future__ import annotations

import json

import jsonschema
import pytest
from conftest import REPO

from hpcconf.catalog import sku_schema_text
from hpcconf.resources import resource_dir
from hpcconf.yamlpos import load_document

SCHEMA = REPO / "schemas" / "hpcconf-sku.schema.json"


def test_committed_sku_schema_is_current():
    assert SCHEMA.read_text(encoding="utf-8") == sku_schema_text(), \
        "schemas/hpcconf-sku.schema.json is stale: run `python -m hpcconf.catalog > schemas/hpcconf-sku.schema.json`"


@pytest.mark.parametrize("path", sorted(resource_dir("skus").glob("*.yaml")), ids=lambda p: p.name)
def test_every_sku_file_validates_against_the_schema(path):
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    jsonschema.Draft7Validator(schema).validate(load_document(path.read_text(encoding="utf-8"), str(path)).data)


def test_schema_rejects_unknown_keys_and_unknown_architectures():
    schema = json.loads(sku_schema_text())
    data = load_document((resource_dir("skus") / "Standard_ND96isr_H100_v5.yaml").read_text(), "x").data
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft7Validator(schema).validate({**data, "gpus": 8})
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft7Validator(schema).validate({**data, "cpu": {"arch": "riscv64"}})


def test_a_wrong_sku_file_is_reported_at_file_line_col(tmp_path):
    from hpcconf.catalog import Catalog
    from hpcconf.diagnostics import HpcconfError

    text = (resource_dir("skus") / "Standard_ND96isr_H100_v5.yaml").read_text(encoding="utf-8")
    (tmp_path / "Standard_ND96isr_H100_v5.yaml").write_text(text.replace("name: Standard_ND96isr_H100_v5\n",
                                                                         "name: Standard_ND96isr_H100_v5\ncpu: {arch: riscv64}\n"))
    with pytest.raises(HpcconfError) as caught:
        Catalog.load(extra_dirs=[tmp_path])
    (diag,) = caught.value.diagnostics
    line = text.split("\n").index("name: Standard_ND96isr_H100_v5") + 2
    assert (diag.code, diag.line) == ("HPC100", line) and "cpu.arch" in diag.message, diag
