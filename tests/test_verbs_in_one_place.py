"""Every verb's typer face is hpcconf/commands/<verb>.py (issue #23 item 6); its package does the work."""

from __future__ import annotations

from pathlib import Path

from hpcconf.cli import app

ROOT = Path(__file__).resolve().parents[1] / "hpcconf"


def test_each_verb_is_defined_in_its_own_commands_module():
    faces = {info.name: info.callback.__module__ for info in app.registered_commands}
    faces.update({info.name: info.typer_instance.registered_commands[0].callback.__module__
                  for info in app.registered_groups})
    assert faces and all(module == f"hpcconf.commands.{name.replace('-', '_')}" for name, module in faces.items()), faces


def test_options_are_declared_only_by_the_faces():
    """cli.py declares the app's own --version; sku_dirs.py the --sku-dir option the faces share."""
    declaring = sorted(p.relative_to(ROOT).as_posix() for p in ROOT.rglob("*.py")
                       if "typer.Option(" in p.read_text(encoding="utf-8") or "typer.Argument(" in p.read_text(encoding="utf-8"))
    assert [p for p in declaring if not p.startswith("commands/")] == ["cli.py", "sku_dirs.py"]
