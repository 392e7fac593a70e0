"""The node installers keep hpcconf's nccl.conf across reboots.

Azure's HPC images rewrite /etc/nccl.conf at every boot (sku-customizations.service, Azure/azhpc-images
components/setup_sku_customizations.sh); both installers (AzHOP cluster-init, plain Slurm) therefore
keep the conf at /etc/hpcconf/nccl.conf and enable hpcconf-nccl-conf.service, ordered after Azure's
unit, to copy it back. The installers are run for real (twice) under a temporary root.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from hpcconf.pipeline import compile_spec
from hpcconf.targets._common import KEPT_NCCL_CONF, NCCL_BOOT_UNIT

REPO = Path(__file__).resolve().parents[1]
NDV2 = REPO / "examples" / "nd40rs-v2-ucx.yaml"
AZHOP = REPO / "examples" / "azhop-ncv4.yaml"
SLURM_INSTALLER = "slurm/ndv2/install-nccl-files.sh"
AZHOP_QUEUES = ("ndv4", "nc48v4", "nc96v4")
UNIT_PATH = f"etc/systemd/system/{NCCL_BOOT_UNIT}"
AZURE_CONF = "NCCL_IB_PCI_RELAXED_ORDERING=1\nNCCL_TOPO_FILE=/opt/microsoft/ndv2/topo.xml\n"  # what the image writes
BASH = shutil.which("bash")
needs_bash = pytest.mark.skipif(BASH is None, reason="needs bash to run the installers")


def _artifacts(spec: Path) -> dict[str, str]:
    return {a.path: a.content for a in compile_spec(spec).artifacts}


def _installers() -> list[tuple[str, str, str]]:
    """(installer path, its text, the nccl.conf artifact it installs) for every generated installer."""
    slurm = _artifacts(NDV2)
    azhop = _artifacts(AZHOP)
    found = [(SLURM_INSTALLER, slurm[SLURM_INSTALLER], slurm["nccl/ndv2/nccl.conf"])]
    for queue in AZHOP_QUEUES:
        path = f"azhop/cluster-init/files/hpcconf/{queue}/install-nccl-files.sh"
        found.append((path, azhop[path], azhop[f"nccl/{queue}/nccl.conf"]))
    return found


INSTALLERS = _installers()


def _unit(text: str) -> dict[str, list[str]]:
    """``Section.Key`` -> values (systemd allows a key more than once)."""
    parsed: dict[str, list[str]] = {}
    section = ""
    for line in text.splitlines():
        if line.startswith("[") and line.endswith("]"):
            section = line[1:-1]
        elif "=" in line and not line.startswith("#"):
            key, value = line.split("=", 1)
            parsed.setdefault(f"{section}.{key}", []).append(value)
    return parsed


def _unit_in_script(script: str) -> str:
    marker = f'cat > "$root/{UNIT_PATH}" <<\'HPCCONF_EOF\'\n'
    assert script.count(marker) == 1
    return script.split(marker, 1)[1].split("\nHPCCONF_EOF\n", 1)[0] + "\n"


def _tree(root: Path) -> dict[str, str]:
    """Every file and link under ``root`` with its content or link target (what a rerun must not change)."""
    return {p.relative_to(root).as_posix(): (f"-> {os.readlink(p)}" if p.is_symlink() else p.read_text(encoding="utf-8"))
            for p in sorted(root.rglob("*")) if p.is_symlink() or p.is_file()}


def _run(script: Path, root: Path, path: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HPCCONF_ROOT": str(root)}
    if path is not None:
        env["PATH"] = path
    assert BASH is not None
    run = subprocess.run([BASH, str(script)], env=env, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    return run


def _lay_out(tmp_path: Path, spec: Path, installer: str) -> Path:
    """Write the build as `hpcconf build` does; return the installer's path in it."""
    out = tmp_path / "out"
    for path, text in _artifacts(spec).items():
        file = out / path
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_text(text, encoding="utf-8")
    return out / installer


@pytest.mark.parametrize("path,script,conf", INSTALLERS, ids=[i[0] for i in INSTALLERS])
def test_unit_runs_after_azure_sku_customizations_and_restores_the_kept_conf(path, script, conf):
    unit = _unit(_unit_in_script(script))
    assert unit["Unit.After"] == ["sku-customizations.service"]
    assert "Unit.Wants" not in unit and "Unit.Requires" not in unit  # never pulls Azure's unit in
    assert unit["Unit.PartOf"] == ["sku-customizations.service"]  # its restart reruns the copy
    assert unit["Unit.Before"] == ["slurmd.service"]
    assert unit["Unit.ConditionPathExists"] == [KEPT_NCCL_CONF]
    assert unit["Service.Type"] == ["oneshot"] and unit["Service.RemainAfterExit"] == ["yes"]
    assert unit["Service.ExecStart"] == [f"/usr/bin/install -m 0644 {KEPT_NCCL_CONF} /etc/nccl.conf"]
    assert unit["Install.WantedBy"] == ["multi-user.target"]
    assert "systemctl enable hpcconf-nccl-conf.service" in script and "systemctl daemon-reload" in script
    assert "Azure/azhpc-images@" in script and "NVIDIA/nccl@" in script  # the evidence, at a commit


@needs_bash
@pytest.mark.parametrize("path,script,conf", INSTALLERS, ids=[i[0] for i in INSTALLERS])
def test_installer_is_valid_bash(path, script, conf, tmp_path):
    file = tmp_path / "install.sh"
    file.write_text(script, encoding="utf-8")
    assert BASH is not None
    result = subprocess.run([BASH, "-n", str(file)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="needs systemd-analyze to check the unit")
def test_unit_file_passes_systemd_analyze_verify(tmp_path):
    unit = tmp_path / NCCL_BOOT_UNIT
    unit.write_text(_unit_in_script(INSTALLERS[0][1]), encoding="utf-8")
    result = subprocess.run(["systemd-analyze", "verify", str(unit)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def _check_installed(root: Path, conf: str) -> None:
    assert (root / "etc/nccl.conf").read_text(encoding="utf-8") == conf
    assert (root / KEPT_NCCL_CONF.lstrip("/")).read_text(encoding="utf-8") == conf
    unit = _unit((root / UNIT_PATH).read_text(encoding="utf-8"))
    assert unit["Unit.After"] == ["sku-customizations.service"]
    if shutil.which("systemctl"):  # `systemctl --root` enables offline
        wanted = root / "etc/systemd/system/multi-user.target.wants" / NCCL_BOOT_UNIT
        assert wanted.is_symlink() and os.readlink(wanted).endswith(f"/{NCCL_BOOT_UNIT}")


def _boot(root: Path) -> None:
    """What the next boot does under ``root``: Azure's unit rewrites /etc/nccl.conf, then ours copies back."""
    (root / "etc/nccl.conf").write_text(AZURE_CONF, encoding="utf-8")
    command = _unit((root / UNIT_PATH).read_text(encoding="utf-8"))["Service.ExecStart"][0].split()
    rooted = [f"{root}{arg}" if arg.startswith("/etc/") else arg for arg in command]
    subprocess.run(rooted, check=True)


@needs_bash
def test_slurm_installer_twice_changes_nothing_and_survives_a_reboot(tmp_path):
    script = _lay_out(tmp_path, NDV2, SLURM_INSTALLER)
    conf = _artifacts(NDV2)["nccl/ndv2/nccl.conf"]
    root = tmp_path / "root"
    (root / "etc").mkdir(parents=True)
    (root / "etc/nccl.conf").write_text(AZURE_CONF, encoding="utf-8")
    _run(script, root)
    _check_installed(root, conf)
    assert (root / "etc/nccl.conf.~1~").read_text(encoding="utf-8") == AZURE_CONF  # the image's, kept
    first = _tree(root)
    _run(script, root)
    assert _tree(root) == first  # idempotent: no second backup, same unit, same link
    _boot(root)
    assert (root / "etc/nccl.conf").read_text(encoding="utf-8") == conf


@needs_bash
@pytest.mark.parametrize("queue", AZHOP_QUEUES)
def test_azhop_installer_twice_changes_nothing_and_survives_a_reboot(tmp_path, queue):
    installer = f"azhop/cluster-init/files/hpcconf/{queue}/install-nccl-files.sh"
    script = _lay_out(tmp_path, AZHOP, installer)
    conf = _artifacts(AZHOP)[f"nccl/{queue}/nccl.conf"]
    root = tmp_path / "root"
    _run(script, root)
    _check_installed(root, conf)
    first = _tree(root)
    _run(script, root)
    assert _tree(root) == first
    _boot(root)
    assert (root / "etc/nccl.conf").read_text(encoding="utf-8") == conf


@needs_bash
def test_without_systemctl_the_conf_is_still_installed_and_the_gap_reported(tmp_path):
    script = _lay_out(tmp_path, NDV2, SLURM_INSTALLER)
    tools = tmp_path / "bin"  # a PATH with the installer's tools but no systemctl
    tools.mkdir()
    for tool in ("install", "cat", "chmod", "cmp", "dirname", "hostname"):
        found = shutil.which(tool)
        if found is None:
            pytest.skip(f"needs {tool}")
        (tools / tool).symlink_to(found)
    root = tmp_path / "root"
    run = _run(script, root, path=str(tools))
    assert (root / "etc/nccl.conf").read_text(encoding="utf-8") == _artifacts(NDV2)["nccl/ndv2/nccl.conf"]
    assert (root / UNIT_PATH).is_file()
    assert "no systemctl; /etc/nccl.conf is not restored at boot" in run.stderr
