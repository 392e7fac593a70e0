"""The ``hpcconf`` command line.

The app, its verbs (each a typer face in :mod:`hpcconf.commands`, registered here in the order `--help` lists
them) and :func:`main`, which turns what escapes a command into one line and an exit code
(:mod:`hpcconf.exit_codes`).
"""

from __future__ import annotations

from typing import Any

import typer

from . import __version__, typer_fast
from .command_guard import run_guarded
from .commands import (
    build,
    explain,
    explain_diff,
    init,
    lint,
    migrate,
    nccl_report,
    review,
    rules,
    schema,
    sku,
    skus,
    version,
)
from .exit_codes import EXIT_OK

# add_completion: `hpcconf --install-completion` / `--show-completion` for bash, zsh, fish, PowerShell.
# help_option_names: `-h` as well as `--help`, in every command (click passes it down to subcommands).
app = typer.Typer(add_completion=True, no_args_is_help=True, rich_markup_mode=None, pretty_exceptions_enable=False,
                  context_settings={"help_option_names": ["-h", "--help"]},
                  help="Compile a GPU cluster spec into AzHOP, AKS, Slurm and NCCL artifacts, and lint them.\n\n"
                       "-o/--output (alias --out) means the same in every command: where it writes its result "
                       "(build: the output root directory; schema, init, lint: a file, '-' for stdout).")

def _plain_argument_help() -> None:
    """typer lists an argument as ``SPEC <list[Path]>``: the Python type after the metavar is noise
    for users, so an argument that names its metavar is shown by it alone (``SPEC``)."""
    from typer.core import TyperArgument

    typed = TyperArgument.display_type_rich

    def display(self: TyperArgument, ctx: Any) -> str | None:
        return None if self.metavar is not None else typed(self, ctx)

    setattr(TyperArgument, "display_type_rich", display)  # noqa: B010 - mypy rejects assigning a method


_plain_argument_help()
typer_fast.install()  # plain options and arguments are coerced without importing pydantic


def _print_version(value: bool) -> None:
    if value:
        typer.echo(f"hpcconf {__version__}")
        raise typer.Exit(EXIT_OK)


@app.callback()
def _main_options(
    show_version: bool = typer.Option(False, "--version", "-V", is_eager=True, callback=_print_version,
                                      help="Print the hpcconf version and exit."),
) -> None:
    """Compile a GPU cluster spec into AzHOP, AKS, Slurm and NCCL artifacts, and lint them."""


# The verbs, in the order `hpcconf --help` lists them; each is a typer face in hpcconf/commands/<verb>.py.
app.command("version")(version.version_command)
app.command("schema")(schema.schema_command)
app.command("skus")(skus.skus_command)
app.command("build")(build.build_command)
app.command("review")(review.review_command)
app.command("lint")(lint.lint_command)
app.command("rules")(rules.rules_command)
app.command("explain")(explain.explain_command)
app.command("init")(init.init_command)
app.command("migrate")(migrate.migrate_command)
app.command("explain-diff")(explain_diff.explain_diff_command)
app.command("nccl-report")(nccl_report.nccl_report_command)
app.add_typer(sku.sku_app, name="sku")


def main() -> None:
    run_guarded(app)


if __name__ == "__main__":
    main()
