"""``catches:`` and ``spares:`` cover the rule page: every item of "What it catches" (parsed by
page_items.py from the docstring's structure) has an entry, each atom of it (code span, number, listed
word) is named by one, each alternative of a bundled phrase by an entry of its own, each number also
by a ``spares:`` entry (the other side of the threshold), and each "not reported"/"skipped"/"passes"
clause by a ``spares:`` entry at a fixture line where nothing is reported (a good fixture, or an
unpinned line of a bad one). Atoms, or whole clauses, that name no form are declared under
``context:`` with why. Gaps not yet closed are listed in not_yet_covered.txt, which only shrinks."""

from __future__ import annotations

from pathlib import Path

import pytest
from page_items import Item, items, mentions, words
from ruamel.yaml import YAML

from hpcconf.lint.rule_loading import load_rules

HERE = Path(__file__).resolve().parent
CODES = sorted(p.name for p in HERE.iterdir() if p.is_dir() and (p / "expect.yaml").exists())
ALLOWED = HERE / "not_yet_covered.txt"


def _expect(code: str) -> dict:
    return YAML(typ="safe").load((HERE / code / "expect.yaml").read_text(encoding="utf-8")) or {}


def _page(code: str) -> str:
    return load_rules()[code].section("What it catches")


def _entries(expect: dict, key: str) -> list[tuple[str, tuple[str, int]]]:
    return [(words(e["form"]), (e.get("file", ""), e.get("line", 0))) for e in expect.get(key) or []]


def _own(item: Item, entries: list[tuple[str, tuple[str, int]]]) -> list[tuple[str, tuple[str, int]]]:
    """The entries quoting this item (a part of it, or the whole of it inside a longer quote)."""
    return [(form, where) for form, where in entries if form in item.text or item.text in form]


def gaps(code: str, page: str, expect: dict) -> set[str]:
    catches, spares = _entries(expect, "catches"), _entries(expect, "spares")
    context = {words(e["form"]) for e in expect.get("context") or []}
    found: set[str] = set()
    for item in items(page):
        if words(item.text).rstrip(".") in context:
            continue  # a clause that names no form (a note on the rule's history), declared under context:
        own, own_spares = _own(item, spares if item.spare else catches), _own(item, spares)
        kind = "spare" if item.spare else "catch"
        if not own and not own_spares:  # a catching clause may say what passes in words the parser does not know
            found.add(f"{code}\t{kind}-clause\t{item.text[:80]}")
            continue
        for atom in item.atoms:  # in a catching clause, a form shown on a good line counts too ("the mpi plugin adds both")
            if atom not in context and not any(mentions(form, atom) for form, _ in own + own_spares):
                found.add(f"{code}\t{kind}\t{atom}")
        for group in item.groups:  # an alternative that spares the file (``cp`` as well as ``ln -sf``): a good line
            for atom in group:
                others = [o for o in group if o != atom]
                solo = [form for form, _ in own + own_spares
                        if mentions(form, atom) and not any(mentions(form, o) for o in others)]
                if atom not in context and not solo:
                    found.add(f"{code}\talternative\t{atom}")
        if not item.spare:
            for number in item.numbers:
                if number not in context and not any(mentions(form, number) for form, _ in own_spares):
                    found.add(f"{code}\tother-side\t{number}")
    return found


def _allowed() -> set[str]:
    return {line for line in ALLOWED.read_text(encoding="utf-8").splitlines() if line and not line.startswith("#")}


def test_pages_are_covered_and_the_allow_list_only_shrinks():
    found = set().union(*(gaps(code, _page(code), _expect(code)) for code in CODES))
    allowed = _allowed()
    new, closed = sorted(found - allowed), sorted(allowed - found)
    assert not new, "page items without a fixture entry (add catches:/spares:/context: in expect.yaml):\n" + "\n".join(new)
    assert not closed, f"covered now, remove from {ALLOWED.name}:\n" + "\n".join(closed)


def _spared_file(code: str, expect: dict, file: str, line: int) -> Path | None:
    """The fixture a ``spares:`` entry names, when it proves nothing is reported there: a good fixture
    (``good.*``, a ``good-*`` case, a file of ``good/``), or a bad one at a line where expect.yaml pins
    no finding (a bad fixture's findings are exact)."""
    directory = HERE / code
    if not file:
        found = [p for p in directory.iterdir() if p.name.split(".")[0] == "good" and p.is_file()]
        return found[0] if len(found) == 1 else None
    path = directory / file
    for sub in ("good", "bad"):
        if not path.exists() and (directory / sub / file).is_file():
            path = directory / sub / file
    top = path.relative_to(directory).parts[0]
    cases = {c["file"]: c for c in expect.get("cases") or []}
    if top.split(".")[0] == "bad":
        pinned = [e for e in expect["findings"] if e.get("file", path.name) == path.name]
    elif top in cases:
        pinned = cases[top].get("findings") or []
    elif top.split(".")[0] == "good":
        pinned = []
    else:
        return None
    return path if path.is_file() and all(e["line"] != line for e in pinned) else None


@pytest.mark.parametrize("code", [c for c in CODES if _expect(c).get("spares") or _expect(c).get("context")])
def test_spares_point_at_good_fixture_lines_and_context_names_one_atom(code):
    expect, page = _expect(code), words(_page(code))
    for entry in expect.get("spares") or []:
        form = words(entry["form"])
        assert form in page, f"{code}: spares form {form!r} is not in its page's 'What it catches'"
        path = _spared_file(code, expect, entry.get("file", ""), entry["line"])
        assert path is not None, \
            f"{code}: spares form {form!r} names {entry.get('file')!r}:{entry['line']}, where a finding may be reported"
        lines = path.read_text(encoding="utf-8").splitlines()
        assert 1 <= entry["line"] <= len(lines) and lines[entry["line"] - 1].strip(), \
            f"{code}: spares form {form!r} points at {path.name}:{entry['line']}, no line there"
    atoms = {atom for item in items(_page(code)) for atom in item.atoms}
    clauses = {words(item.text).rstrip(".") for item in items(_page(code))}
    for entry in expect.get("context") or []:
        form = words(entry["form"])
        assert form in atoms or form in clauses, \
            f"{code}: context {form!r} is neither one atom nor one whole clause of the page (atoms: {sorted(atoms)})"
        assert entry.get("why"), f"{code}: context {form!r} says why it names no form (why:)"


def test_the_parser_splits_bundles_and_finds_exemptions():
    """The forms review r27 found unexercised are items the parser yields (so the coverage test sees them)."""
    k8s031 = items("In a pod spec's own ``resources``: an aggregate limit (cpu, memory, hugepages) below a container's.")
    assert [["cpu", "memory", "hugepages"]] == k8s031[0].groups
    mpi010 = items("``#SBATCH --nodes=K`` (``-N K``) and, in the script, ``srun -N M``; a range ``A-B``.")
    assert [i.groups for i in mpi010] == [[["``#SBATCH --nodes=K``", "``-N K``"]], []]
    azh101 = items("A ``latest`` URN. Image IDs (``/subscriptions/...``) are not reported.")
    assert [(i.spare, i.atoms) for i in azh101] == [(False, ["``latest``"]), (True, ["``/subscriptions/...``"])]
    paren = items("A ``RUN`` of the image (not of a discarded builder stage) that updates, above 100 MiB or 2.7.x.")
    assert [(i.spare, i.atoms) for i in paren] == [(True, []), (False, ["``RUN``", "100", "2.7.x"])]
    exempt, catching = items("Never flagged: ``$X``."), items("A script that never loads an MPI.")
    assert [i.spare for i in exempt + catching] == [True, False]


def test_coverage_needs_each_alternative_its_own_entry():
    page = "``#SBATCH --nodes=K`` (``-N K``) and ``srun -N M``; below 9 characters. Stage names are skipped."
    bundled = {"catches": [{"form": "``#SBATCH --nodes=K`` (``-N K``) and ``srun -N M``", "line": 6},
                           {"form": "below 9 characters", "line": 7}]}
    assert gaps("X", page, bundled) == {"X\talternative\t``#SBATCH --nodes=K``", "X\talternative\t``-N K``",
                                        "X\tother-side\t9", "X\tspare-clause\tStage names are skipped."}
    split = {"catches": bundled["catches"] + [{"form": "``#SBATCH --nodes=K``", "line": 6},
                                              {"form": "(``-N K``)", "file": "bad-short.sbatch", "line": 6}],
             "spares": [{"form": "below 9 characters", "line": 3}, {"form": "Stage names are skipped", "line": 1}]}
    assert gaps("X", page, split) == set()
