"""What whole public repositories showed (issue 20, whole-repository review): a repository without specs, a
compiled `.pp` file pre-commit passes as text, and tracked links whose targets are not checked out."""

from __future__ import annotations

import os

from typer.testing import CliRunner

from hpcconf.cli import app


def _run(*args: str):
    return CliRunner().invoke(app, list(args))


def test_check_hook_passes_in_a_repository_without_specs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "values.yaml").write_text("a: 1\n")
    checked = _run("build", "--check", ".")
    assert checked.exit_code == 0 and "nothing to check" in checked.output
    assert _run("build", ".").exit_code == 2  # writing needs a spec: still a usage error


def test_a_named_binary_file_of_no_linted_kind_does_not_end_the_batch(tmp_path):
    (tmp_path / "mkhomedir.pp").write_bytes(b"\x8f\xff\x7c\xf9SE Linux modular policy")
    (tmp_path / "nccl.conf").write_text("NCCL_ALGO=Foo\n")
    result = _run("lint", str(tmp_path / "mkhomedir.pp"), str(tmp_path / "nccl.conf"))
    assert result.exit_code == 1 and "nccl.conf:1" in result.output  # the other file is still linted


def test_a_named_binary_file_named_like_a_linted_kind_is_refused_at_its_byte(tmp_path):
    (tmp_path / "nccl.conf").write_bytes(b"NCCL_ALGO=R\xe9ing\n")
    result = _run("lint", str(tmp_path / "nccl.conf"))
    assert result.exit_code == 2 and "nccl.conf:1:12: not a UTF-8 text file" in result.output


def test_a_walked_link_to_a_missing_file_is_passed_over(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    os.symlink("external/azurehpc/check_gpu_ecc.py", tmp_path / "check_gpu_ecc.py")
    (tmp_path / "nccl.conf").write_text("NCCL_DEBUG=WARN\n")
    result = _run("lint", "-v", ".")
    assert result.exit_code == 0, result.output
    assert "skipped check_gpu_ecc.py: a symbolic link to a file that does not exist here" in result.output


def test_a_portal_template_of_an_azhop_config_is_not_judged_as_one(tmp_path):
    """az-hop's marketplace_config.yml holds createUiDefinition expressions the Portal evaluates first."""
    path = tmp_path / "marketplace_config.yml"
    path.write_text("location: \"[location()]\"\nlustre:\n  create: \"[steps('lustre').deployLustre]\"\n"
                    "queues:\n  - name: htc\n    vm_size: \"[steps('htc').sku]\"\n    max_count: 10\n")
    result = _run("lint", "-v", str(path))
    assert "error[" not in result.output and "nothing was linted" in result.output


def test_envsubst_templates_are_not_judged_before_substitution(tmp_path):
    path = tmp_path / "job.yaml"
    path.write_text("apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: fio-${RUN_ID}\nspec:\n"
                    "  completions: ${COMPLETIONS}\n  template:\n    spec:\n      restartPolicy: Never\n"
                    "      containers: [{name: fio, image: 'ubuntu:22.04'}]\n")
    route = tmp_path / "route.yaml"
    route.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: r}\n"
                     "data: { path: ${ISVC_PATH}/v1/models }\n")
    result = _run("lint", str(path), str(route))
    assert result.exit_code == 0 and "error[" not in result.output, result.output
    broken = tmp_path / "broken.yaml"
    broken.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: r}\ndata: { path: /v1/models\n")
    assert "error[HPC001]" in _run("lint", str(broken)).output  # no ${...} on the line: a real syntax error
