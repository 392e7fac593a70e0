"""`hpcconf --version` and `hpcconf version` start without the heavy libraries.

Start-up is paid on every pre-commit hook and CI step; docs/performance.md has the numbers. pydantic,
ruamel.yaml, jsonschema, lxml and jinja2 load in the commands that use them, never to print a version
(typer itself coerces through pydantic from 0.29: hpcconf.typer_fast keeps that lazy too).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

HEAVY = ("pydantic", "ruamel", "jsonschema", "lxml", "jinja2")
PROBE = """
import json, sys
heavy = set(json.loads(sys.argv[2]))
sys.argv = ["hpcconf", *json.loads(sys.argv[1])]
from hpcconf.cli import main
try:
    main()
except SystemExit:
    pass
print(json.dumps(sorted({m.split(".")[0] for m in sys.modules} & heavy)), file=sys.stderr)
"""


def _heavy_modules_loaded(*args: str) -> list[str]:
    result = subprocess.run([sys.executable, "-c", PROBE, json.dumps(args), json.dumps(HEAVY)],
                            capture_output=True, text=True, check=True)
    assert result.stdout.startswith("hpcconf "), result.stdout
    return json.loads(result.stderr.strip().splitlines()[-1])


@pytest.mark.parametrize("args", [("--version",), ("version",), ("-V",)])
def test_version_imports_none_of_the_heavy_libraries(args):
    assert _heavy_modules_loaded(*args) == []


# detect-secrets imports requests (urllib3, http.client, charset_normalizer: ~130 ms) only for its online
# verification, which hpcconf never runs: the console script's lint and build scan for secrets without importing
# the network stack.
NETWORK = ("urllib3", "charset_normalizer")
PROBE_NETWORK = """
import json, sys
network = set(json.loads(sys.argv[2]))
sys.argv = ["hpcconf", *json.loads(sys.argv[1])]
from hpcconf.entry import main
try:
    main()
except SystemExit:
    pass
real = type(sys.modules.get("requests")).__name__ == "module"
print(json.dumps(sorted({m.split(".")[0] for m in sys.modules} & network | ({"requests"} if real else set()))),
      file=sys.stderr)
"""


@pytest.mark.parametrize("command", ["lint", "build"])
def test_lint_and_build_do_not_import_the_network_stack(command, tmp_path):
    from pathlib import Path

    repo = Path(__file__).resolve().parents[1]
    args = (["lint", str(repo / "out" / "azhop-ncv4" / "azhop" / "config.yml")] if command == "lint" else
            ["build", str(repo / "examples" / "ndmv4-aks-current.yaml"), "-o", str(tmp_path), "-q"])
    result = subprocess.run([sys.executable, "-c", PROBE_NETWORK, json.dumps(args), json.dumps(NETWORK)],
                            capture_output=True, text=True)
    assert json.loads(result.stderr.strip().splitlines()[-1]) == [], result.stderr[-2000:]
    if command == "build":
        assert any(tmp_path.iterdir()), "the build wrote nothing: the probe did not run the command it checks"


LIBRARY_THEN_REQUESTS = """
import importlib.util, sys
import hpcconf.lint.engine, hpcconf.secret_scan
from hpcconf.secret_scan import scan_text
spec = importlib.util.find_spec("requests")  # how a library asks whether requests is installed, and where
print(type(sys.modules.get("requests", sys)).__name__, bool(spec.origin), spec.submodule_search_locations is not None)
import requests.adapters
print(requests.adapters.HTTPAdapter.__name__, "Session" in vars(requests), len(scan_text("password: hunter2x9Q\\n")))
"""


def test_a_library_user_gets_the_real_requests_after_importing_hpcconf():
    """The placeholder for requests is the console script's alone: a program that imports hpcconf's scanner
    or linter sees requests as installed (its spec, its package path) and imports its submodules."""
    done = subprocess.run([sys.executable, "-c", LIBRARY_THEN_REQUESTS], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["module", "True", "True", "HTTPAdapter", "True", "1"], done.stdout


@pytest.mark.parametrize("args", [("--version",), ("version",), ("-V",)])
def test_the_console_script_prints_the_version_without_building_the_command_line(args):
    """The installed `hpcconf` (hpcconf.entry) answers the version before importing typer, the same line."""
    probe = ("import json, sys\nsys.argv = ['hpcconf', *json.loads(sys.argv[1])]\nfrom hpcconf.entry import main\n"
             "main()\nprint(json.dumps(sorted({m.split('.')[0] for m in sys.modules} & {'typer', 'click'})), file=sys.stderr)")
    fast = subprocess.run([sys.executable, "-c", probe, json.dumps(args)], capture_output=True, text=True, check=True)
    typer_way = subprocess.run([sys.executable, "-m", "hpcconf.cli", *args], capture_output=True, text=True)
    assert fast.stdout == typer_way.stdout and typer_way.returncode == 0
    assert json.loads(fast.stderr.strip().splitlines()[-1]) == []


def test_the_console_script_is_the_entry_module():
    from pathlib import Path

    pyproject = (Path(__file__).resolve().parents[1] / "pyproject.toml").read_text(encoding="utf-8")
    assert 'hpcconf = "hpcconf.entry:main"' in pyproject


def test_the_entry_passes_every_other_command_line_on():
    probe = "import sys\nsys.argv = ['hpcconf', 'rules', '--format', 'json']\nfrom hpcconf.entry import main\nmain()"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert done.returncode == 0 and json.loads(done.stdout)


PROBE_GLOBS = """
import json, sys
sys.argv = ["hpcconf", "lint", sys.argv[1]]
from hpcconf.entry import main
try:
    main()
except SystemExit:
    pass
print(json.dumps("pathspec" in sys.modules), file=sys.stderr)
"""


def test_pathspec_is_imported_only_where_settings_have_globs(tmp_path):
    """git's wildmatch (pathspec, ~12 ms to import) serves exclude / per-file-ignores globs: a lint of one file
    under no settings does not load it; under an ``exclude`` it does, and the glob still applies."""
    repo = Path(__file__).resolve().parents[1]
    config = tmp_path / "plain" / "config.yml"
    config.parent.mkdir()
    config.write_text((repo / "out" / "azhop-ncv4" / "azhop" / "config.yml").read_text(encoding="utf-8"), encoding="utf-8")
    plain = subprocess.run([sys.executable, "-c", PROBE_GLOBS, "config.yml"], cwd=config.parent,
                           capture_output=True, text=True)
    assert "1 file checked" in plain.stdout, plain.stdout + plain.stderr[-2000:]
    assert json.loads(plain.stderr.strip().splitlines()[-1]) is False
    configured = tmp_path / "configured"
    configured.mkdir()
    (configured / "pyproject.toml").write_text('[tool.hpcconf]\nexclude = ["skip/**"]\n', encoding="utf-8")
    (configured / "skip").mkdir()
    (configured / "skip" / "config.yml").write_text(config.read_text(encoding="utf-8"), encoding="utf-8")
    excluded = subprocess.run([sys.executable, "-c", PROBE_GLOBS, "."], cwd=configured, capture_output=True, text=True)
    assert "config.yml" not in excluded.stdout, excluded.stdout
    assert json.loads(excluded.stderr.strip().splitlines()[-1]) is True


PROBE_PLAIN_LINT = """
import json, sys
sys.argv = ["hpcconf", *json.loads(sys.argv[1])]
from hpcconf.entry import main
try:
    main()
except SystemExit as exc:
    print(f"exit {exc.code}")
print(json.dumps(sorted({m.split(".")[0] for m in sys.modules} & {"typer", "click"})), file=sys.stderr)
"""


def _console(args: list[str], cwd: Path) -> tuple[str, list[str], list[str]]:
    done = subprocess.run([sys.executable, "-c", PROBE_PLAIN_LINT, json.dumps(args)], cwd=cwd, capture_output=True,
                          text=True, env={**os.environ, "NO_COLOR": "1"})
    *messages, loaded = done.stderr.strip().splitlines()
    return done.stdout, messages, json.loads(loaded)


def test_a_lint_without_options_never_imports_typer_and_says_what_the_typer_app_says(tmp_path):
    """`hpcconf lint FILE...` (the pre-commit hook's command line) runs without typer: the same report, messages
    and exit status as the same lint through the typer app (`--color auto` is the default, and routes it there)."""
    repo = Path(__file__).resolve().parents[1]
    (tmp_path / "nccl.conf").write_text("NCCL_DEBUG=INFO\nNCCL_ALGO=Bogus\n", encoding="utf-8")  # an error
    statuses = []
    for paths in (["nccl.conf", str(repo / "out" / "azhop-ncv4" / "azhop" / "config.yml")], ["missing.yaml"], []):
        plain_out, plain_err, plain_loaded = _console(["lint", *paths], tmp_path)
        typer_out, typer_err, typer_loaded = _console(["lint", "--color", "auto", *paths], tmp_path)
        assert plain_loaded == [] and "typer" in typer_loaded
        assert (plain_out, plain_err) == (typer_out, typer_err), paths
        statuses.append(plain_out.rsplit("exit ", 1)[-1].strip())
    assert statuses == ["1", "2", "1"]  # findings; a missing file; the directory's nccl.conf


def test_the_plain_lint_calls_run_lint_as_the_typer_app_does(monkeypatch):
    from typer.testing import CliRunner

    import hpcconf.lint.command as command
    from hpcconf.cli import app

    calls: list[dict] = []
    monkeypatch.setattr(command, "run_lint", lambda **kwargs: calls.append(kwargs))
    for paths in ([], ["a.yaml", "dir"]):
        assert CliRunner().invoke(app, ["lint", *paths]).exit_code == 0
        command.run_plain_lint(paths)
        typer_call, plain_call = calls[-2:]
        assert plain_call == typer_call and type(plain_call["sku_dir"]) is type(typer_call["sku_dir"])


@pytest.mark.parametrize("argv, paths", [
    (["lint"], []), (["lint", "a.yaml", "b/"], ["a.yaml", "b/"]),
    (["lint", "-"], None), (["lint", "--", "a"], None), (["lint", "a", "-h"], None), (["lint", "-j", "1", "a"], None),
    (["build", "a.yaml"], None), ([], None)])
def test_only_a_lint_without_options_skips_the_typer_app(argv, paths, monkeypatch):
    from hpcconf.entry import plain_lint_paths

    for name in [n for n in os.environ if n.endswith("_COMPLETE")]:
        monkeypatch.delenv(name)
    assert plain_lint_paths(argv) == paths
    monkeypatch.setenv("_HPCCONF_COMPLETE", "bash_complete")  # a completion request is the typer app's
    assert plain_lint_paths(argv) is None


PROBE_COMMAND_IMPORTS = """
import json, sys
heavy = set(json.loads(sys.argv[2]))
sys.argv = ["hpcconf", *json.loads(sys.argv[1])]
from hpcconf.entry import main
try:
    main()
except SystemExit as exc:
    print(f"exit {exc.code}")
print(json.dumps(sorted(m for m in sys.modules if m in heavy or m.split(".")[0] in heavy)), file=sys.stderr)
"""
# hpcconf's own tables for what a lint of config files never reads: the SKU models, the Kubernetes and CRD schemas,
# Volcano's webhook, the health plan, NCCL's algorithm tables; each loads with the first file (or spec) it judges
NOT_FOR_CONFIG_FILES = ("hpcconf.catalog", "hpcconf.knowledge.crd_schemas", "hpcconf.knowledge.k8s_openapi",
                        "hpcconf.knowledge.k8s_validation", "hpcconf.knowledge.volcano_webhook",
                        "hpcconf.knowledge.nhc", "hpcconf.knowledge.nccl_algo")


@pytest.mark.parametrize(("name", "text", "absent"), [
    # the pre-commit hook on an AzHOP config.yml: no SKU models (a health plan, the catalog), no XML, no templates
    ("config.yml", None, ("pydantic", "lxml", "jinja2", *NOT_FOR_CONFIG_FILES)),
    ("nccl.conf", "NCCL_DEBUG=WARN\n", ("pydantic", "lxml", "jinja2", *NOT_FOR_CONFIG_FILES)),
])
def test_a_lint_of_one_file_imports_only_what_it_uses(name, text, absent, tmp_path):
    """Each library a lint of one file does not use stays unimported (a module-level import of the SKU models in a
    knowledge table once cost every lint ~0.2 s of pydantic); the build imports them all, so it is not listed."""
    repo = Path(__file__).resolve().parents[1]
    source = repo / "out" / "azhop-ncv4" / "azhop" / "config.yml"
    (tmp_path / name).write_text(text if text is not None else source.read_text(encoding="utf-8"), encoding="utf-8")
    done = subprocess.run([sys.executable, "-c", PROBE_COMMAND_IMPORTS, json.dumps(["lint", name]), json.dumps(absent)],
                          cwd=tmp_path, capture_output=True, text=True)
    assert "1 file checked" in done.stdout, done.stdout + done.stderr[-2000:]
    assert json.loads(done.stderr.strip().splitlines()[-1]) == []
