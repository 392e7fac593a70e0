"""deployment_dir answers once per directory in a run: the same answer as walking up for every document."""

from __future__ import annotations

from pathlib import Path

from hpcconf.lint import engine
from hpcconf.lint.engine import deployment_dir


def _tree(root: Path) -> list[Path]:
    (root / "app" / "overlays" / "prod").mkdir(parents=True)
    (root / "app" / "kustomization.yaml").write_text("resources: []\n", encoding="utf-8")
    (root / "plain" / "deep").mkdir(parents=True)
    files = [root / "app" / "overlays" / "prod" / f"f{i}.yaml" for i in range(3)] + \
            [root / "plain" / "deep" / f"g{i}.yaml" for i in range(3)] + [root / "top.yaml"]
    for file in files:
        file.write_text("a: 1\n", encoding="utf-8")
    return files


def test_memo_gives_the_walks_answers(tmp_path):
    files = _tree(tmp_path)
    memo: dict = {}
    for top in (tmp_path, tmp_path / "plain", Path(str(tmp_path) + "/./")):
        assert [deployment_dir(f, top, memo) for f in files] == [deployment_dir(f, top) for f in files]
    assert deployment_dir(files[0], tmp_path) == str(tmp_path / "app")
    assert deployment_dir(files[3], tmp_path) == str(tmp_path / "plain" / "deep")


def test_a_directory_is_walked_once_per_run(tmp_path, monkeypatch):
    files = _tree(tmp_path)
    probes: list[Path] = []
    real = Path.is_file

    def counting(self):
        if self.name in engine.DEPLOYMENT_MARKERS:
            probes.append(self)
        return real(self)

    monkeypatch.setattr(Path, "is_file", counting)
    memo: dict = {}
    deployment_dir(files[3], tmp_path, memo)
    walked = len(probes)
    for file in files[3:6] * 10:  # three files of one directory, many documents each
        deployment_dir(file, tmp_path, memo)
    assert walked > 0 and len(probes) == walked


def test_directories_above_are_not_probed_again_for_a_sibling(tmp_path, monkeypatch):
    (tmp_path / "a" / "b" / "c1").mkdir(parents=True)
    (tmp_path / "a" / "b" / "c2").mkdir()
    probes: list[Path] = []
    real = Path.is_file
    monkeypatch.setattr(Path, "is_file", lambda self: (probes.append(self.parent), real(self))[1])
    memo: dict = {}
    assert deployment_dir(tmp_path / "a" / "b" / "c1" / "f.yaml", tmp_path, memo) == str(tmp_path / "a" / "b" / "c1")
    probes.clear()
    assert deployment_dir(tmp_path / "a" / "b" / "c2" / "f.yaml", tmp_path, memo) == str(tmp_path / "a" / "b" / "c2")
    assert set(probes) == {tmp_path / "a" / "b" / "c2"}
