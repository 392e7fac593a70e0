"""`hpcconf review`: a plan a reviewer can approve, for every spec and generated file of a repository (the
options: :mod:`hpcconf.commands.review`).

Compares two states of the git repository that holds the current directory: ``--base REV``
(default: the merge-base of HEAD with the default branch, origin/HEAD, origin/main, origin/master,
main or master, in that order; HEAD itself when HEAD is that branch or none exists) and
``--head REV`` (default: the working tree, untracked files included unless git ignores them).
Git is only read (hpcconf.review.git); the working tree is never touched.

Exit codes: 0 reviewed; 1 the head has hand-edited or stale generated files, or a spec that
does not build; 2 not in a git repository, an unknown revision, a bad option or settings file.
With ``--detailed-exitcode`` (as ``terraform plan -detailed-exitcode``, a CI step can branch on the
decision): 0 no changes, 3 changes that disrupt nothing running, 4 disruptive changes (drains,
deletes or replaces nodes, changes the InfiniBand network); 1 and 2 as above and first.
"""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from ..exit_codes import EXIT_CHANGES, EXIT_DISRUPTIVE, EXIT_FINDINGS, EXIT_INVALID, EXIT_OK

FORMATS = ("text", "markdown", "json")


def run_review(base: Optional[str], head: Optional[str], output_format: str, output: Optional[Path],
               sku_dirs: List[Path], config_file: Optional[Path], detailed_exitcode: bool = False) -> int:
    from ..diagnostic_text import render_all
    from ..diagnostics import HpcconfError
    from ..settings.config import ConfigError, load_settings
    from ..term import working
    from .git import GitError, Tree, commit_of, default_base, repository_root
    from .model import Review, Sides, review_trees
    from .render import RENDERERS

    if output_format not in FORMATS:
        typer.echo(f"hpcconf: error: --format must be one of {', '.join(FORMATS)}, not {output_format!r}", err=True)
        return EXIT_INVALID
    try:
        repo = repository_root(Path.cwd())
        if base is None:
            base_commit, how = default_base(repo)
        else:
            base_commit, how = commit_of(repo, base), base
        head_commit = commit_of(repo, head) if head is not None else None
        settings = load_settings(start=repo, config_file=config_file)
        base_tree = Tree(repo, base_commit, f"{how} ({base_commit[:12]})")
        head_tree = Tree(repo, head_commit, "working tree" if head_commit is None else f"{head} ({head_commit[:12]})")
        sides = Sides(base=base_tree, head=head_tree, repo=repo, settings=settings, sku_dirs=sku_dirs)
        with working(f"hpcconf review {base_tree.label} -> {head_tree.label}"):  # builds every spec twice
            review = Review(base=base_tree.label, head=head_tree.label, specs=review_trees(sides))
    except (GitError, ConfigError) as error:
        typer.echo(f"hpcconf: error: {error}", err=True)
        return EXIT_INVALID
    except HpcconfError as error:  # a working-tree file the safe reader refused (a fifo, a link out): located
        typer.echo(render_all(error.diagnostics), err=True)
        return EXIT_INVALID
    text = RENDERERS[output_format](review)
    if output is not None and str(output) != "-":
        output.write_text(text, encoding="utf-8")
    else:
        typer.echo(text, nl=False)
    if review.needs_fixing:
        return EXIT_FINDINGS
    if detailed_exitcode and review.has_changes:
        return EXIT_DISRUPTIVE if review.disruptive else EXIT_CHANGES
    return EXIT_OK
