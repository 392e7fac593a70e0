"""version, schema, skus: the small commands a user tries first."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from hpcconf import __version__
from hpcconf.cli import app

runner = CliRunner()


def test_version():
    result = runner.invoke(app, ["version"])
    assert result.exit_code == 0 and result.output.strip() == f"hpcconf {__version__}"


def test_schema_prints_json_schema():
    result = runner.invoke(app, ["schema"])
    schema = json.loads(result.output)
    assert schema["title"] == "hpcconf cluster spec" and "pools" in schema["properties"]


def test_skus_lists_the_catalog():
    result = runner.invoke(app, ["skus"])
    assert result.exit_code == 0
    for name in ("Standard_ND96amsr_A100_v4", "Standard_NC48ads_A100_v4", "Standard_ND96isr_H200_v5", "h100-80gb-sxm-ib.8x"):
        assert name in result.output


def test_skus_show_one_accepts_short_name():
    result = runner.invoke(app, ["skus", "nc48ads_a100_v4", "--format", "json"])
    data = json.loads(result.output)
    assert data["name"] == "Standard_NC48ads_A100_v4" and data["gpu"]["count"] == 2


def test_skus_unknown_suggests():
    result = runner.invoke(app, ["skus", "Standard_NC48ads_A100_v5"])
    assert result.exit_code == 2
    assert "Standard_NC48ads_A100_v4" in result.output
