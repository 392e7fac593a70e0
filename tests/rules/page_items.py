"""The items of a rule page's "What it catches" section, parsed from its structure (the docstring's markdown).

A section is bullets (``- ``/``* `` lines, one item each) or prose. Prose is cut into clauses at the
sentence ends and the ``;`` outside code spans and parentheses: each clause is one item. An item is a
*catch* (a form the rule reports) or a *spare* (a form it leaves alone: "not reported", "skipped",
"passes", "left alone", ...); a parenthesis that opens with ``not``/``except`` inside a catch is a spare
of its own ("A ``RUN`` of the built image (not of a discarded builder stage)"). The *atoms* of an item
are its code spans and the numbers outside them (thresholds, sizes, versions, dates): each is a form
a fixture must show. Atoms joined only by ``,``, ``/``, ``or`` or a parenthesis
("``#SBATCH --nodes=K`` (``-N K``)", "(cpu, memory, hugepages)", "``x``/``y``") are *alternatives*:
each needs a fixture of its own, not one line that shows only the first.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

# A clause that says what the rule leaves alone. Bare "never" and "ignored" are not here: pages use
# them for the defect ("never loads an MPI", "a name NCCL ignores").
_SPARE = re.compile(
    r"\b(?:not (?:reported|judged|counted|flagged|checked)|(?:is|are) skipped|skipped|exempt(?:ed)?|"
    r"never (?:a finding|flagged|reported)|left (?:alone|out)|nothing is claimed|passes\b|pass\b|"
    r"(?:is|are) fine\b|no finding|\b(?:is|are) [A-Z]+\d{3}'s\b)", re.IGNORECASE)  # "... is NCCL014's": another rule's
_SPARE_PAREN = re.compile(r"^\(\s*(?:not|except)\b", re.IGNORECASE)
_CODE = re.compile(r"``(.+?)``")
_NUMBER = re.compile(r"(?<![\w.])(?:\d{4}-\d{2}-\d{2}|v?\d+(?:\.(?:\d+|x))*)(?![\w])")
# What may stand between two atoms of one alternative group once spaces are gone.
_ALTERNATIVE_GLUE = re.compile(r"^(?:[,/|()]|\bor\b|\bnot\b|\.\.\.)*$")
# A parenthesised list of plain words, "(cpu, memory, hugepages)": each piece an alternative.
_LIST_SPLIT = re.compile(r",\s*(?:or\s+|and\s+)?|\s+or\s+|\s+and\s+")


@dataclass
class Item:
    text: str
    spare: bool
    atoms: list[str] = field(default_factory=list)
    groups: list[list[str]] = field(default_factory=list)  # alternatives: atoms each needing its own fixture

    @property
    def numbers(self) -> list[str]:
        return [a for a in self.atoms if _NUMBER.fullmatch(a)]


def mentions(form: str, atom: str) -> bool:
    """``atom`` stands in ``form`` as a whole (a number or a word not part of a longer one)."""
    if atom.startswith("``"):
        return atom in form
    return re.search(rf"(?<![\w.]){re.escape(atom)}(?![\w])", form) is not None


def words(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def _blocks(section: str) -> list[str]:
    """Bullets one block each; the prose between them one block."""
    blocks: list[str] = []
    prose: list[str] = []
    for line in section.splitlines():
        bullet = re.match(r"^\s*[-*]\s+(.*)$", line)
        if bullet:
            if prose:
                blocks.append(" ".join(prose))
                prose = []
            blocks.append(bullet.group(1))
        elif blocks and not prose and line.startswith("  ") and line.strip():
            blocks[-1] += " " + line.strip()  # a bullet's continuation line
        else:
            prose.append(line)
    if prose:
        blocks.append(" ".join(prose))
    return [words(b) for b in blocks if words(b)]


def _clauses(block: str) -> list[str]:
    """Cut at ``;`` and sentence ends outside code spans and parentheses."""
    out, start, depth, index = [], 0, 0, 0
    while index < len(block):
        if block.startswith("``", index):
            end = block.find("``", index + 2)
            index = len(block) if end < 0 else end + 2
            continue
        char = block[index]
        if char in "([":
            depth += 1
        elif char in ")]" and depth:
            depth -= 1
        elif depth == 0 and (char == ";" or (char == "." and re.match(r"\.\s+[A-Z`(]", block[index:])
                                             and not re.search(r"(?:e\.g|i\.e|etc)$", block[start:index]))):
            out.append(block[start:index + 1])
            start = index + 1
        index += 1
    out.append(block[start:])
    return [words(c) for c in out if words(c).strip(" .;")]


def _spare_parens(clause: str) -> list[str]:
    """The ``(not ...)``/``(except ...)`` parentheses of a clause, outside code spans."""
    found, depth, start, index = [], 0, -1, 0
    while index < len(clause):
        if clause.startswith("``", index):
            end = clause.find("``", index + 2)
            index = len(clause) if end < 0 else end + 2
            continue
        if clause[index] == "(":
            if depth == 0:
                start = index
            depth += 1
        elif clause[index] == ")" and depth:
            depth -= 1
            if depth == 0 and _SPARE_PAREN.match(clause[start:index + 1]):
                found.append(clause[start:index + 1])
        index += 1
    return found


def _word_lists(text: str) -> list[list[str]]:
    """Parenthesised lists of plain words (no code span), two pieces or more of at most three words."""
    lists = []
    for inner in re.findall(r"\(([^()`]*)\)", text):
        pieces = [re.sub(r"^(?:(?:not|e\.g\.|the)\s+)+", "", p.strip(" .")) for p in _LIST_SPLIT.split(inner)]
        pieces = [p for p in pieces if p]
        if len(pieces) >= 2 and all(len(p.split()) <= 3 and ":" not in p for p in pieces):
            lists.append(pieces)
    return lists


def _atoms(text: str) -> tuple[list[str], list[list[str]]]:
    """Code spans, numbers and listed words in order of place, and the alternative groups among them."""
    spans = [(m.start(), m.end(), f"``{m.group(1)}``") for m in _CODE.finditer(text)]
    covered = [(s, e) for s, e, _ in spans]
    numbers = [(m.start(), m.end(), m.group(0)) for m in _NUMBER.finditer(text)
               if not any(s <= m.start() < e for s, e in covered)]
    atoms = list(dict.fromkeys(a for _, _, a in sorted(spans + numbers)))
    groups: list[list[str]] = []
    for position, (start, _, atom) in enumerate(spans):  # numbers are thresholds, checked on both sides instead
        between = text[spans[position - 1][1]:start] if position else None
        glued = between is not None and _ALTERNATIVE_GLUE.match(re.sub(r"\s+", "", between)) is not None
        if glued and groups and atom not in groups[-1]:
            groups[-1].append(atom)
        else:
            groups.append([atom])
    for pieces in _word_lists(text):
        atoms += [p for p in pieces if p not in atoms]
        groups.append(pieces)
    return atoms, [g for g in groups if len(g) > 1]


def items(section: str) -> list[Item]:
    found: list[Item] = []
    for block in _blocks(section):
        for clause in _clauses(block):
            spare = _SPARE.search(clause) is not None
            rest = clause
            if not spare:
                for paren in _spare_parens(clause):
                    atoms, groups = _atoms(paren)
                    found.append(Item(paren, True, atoms, groups))
                    rest = rest.replace(paren, " ")
            atoms, groups = _atoms(rest)
            found.append(Item(clause, spare, atoms, groups))
    return found
