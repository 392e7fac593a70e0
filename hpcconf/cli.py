"""The ``hpcconf`` command line.

Exit codes (documented in the README):
  0  success / nothing to report
  1  lint findings at or above --fail-level; `build --check` found stale or hand-edited files or lint
     errors; `build --diff` has changes to show; `build` refused to overwrite hand edits or to write
     artifacts with lint errors; `review` found hand-edited or stale generated files or a spec that
     does not build
  2  invalid input or usage: a spec that does not validate, an unreadable file, a bad option;
     `review` outside a git repository or with an unknown revision
  3  `review --detailed-exitcode`: changes, none of them disruptive
  4  `review --detailed-exitcode`: changes that drain, delete or replace nodes or change the IB network
 70  an internal error (a bug in hpcconf): one line saying so; HPCCONF_DEBUG=1 shows the traceback
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any, List, Optional

import typer

from . import __version__, completion, init_command, typer_fast
from .commands import explain_diff, migrate
from .diagnostics import HpcconfError, render_all
from .exit_codes import EXIT_INTERNAL, EXIT_INVALID, EXIT_OK, fail
from .lint import commands as lint_commands
from .nccl_report import command as nccl_report_command
from .sku_dirs import sku_dir_option, with_settings_dirs

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


@app.command()
def version() -> None:
    """Print the hpcconf version (same as `hpcconf --version`)."""
    typer.echo(f"hpcconf {__version__}")


@app.command()
def schema(output: Optional[Path] = typer.Option(None, "--output", "-o", "--out", metavar="FILE",
                                                 help="Write to this file instead of stdout ('-': stdout).")) -> None:
    """Print the spec's JSON Schema (for editors: yaml-language-server)."""
    from .spec.schema import schema_text

    text = schema_text()
    if output and str(output) != "-":
        output.write_text(text, encoding="utf-8")
    else:
        typer.echo(text, nl=False)


@app.command()
def skus(
    name: Optional[str] = typer.Argument(None, metavar="SKU", help="Show one SKU in full (e.g. Standard_ND96amsr_A100_v4).",
                                         autocompletion=completion.sku_names),
    sku_dir: List[Path] = sku_dir_option(),
    output_format: str = typer.Option("text", "--format", "-f", metavar="FORMAT", help="text or json.",
                                      autocompletion=completion.choices("text", "json")),
    as_json: bool = typer.Option(False, "--json", hidden=True, help="Deprecated: --format json."),
) -> None:
    """List the SKU catalog, or show one SKU."""
    from .catalog import Catalog, UnknownSku

    if output_format not in ("text", "json"):
        typer.echo(f"hpcconf: error: --format must be text or json, not {output_format!r}", err=True)
        raise typer.Exit(EXIT_INVALID)
    if as_json:  # the option's name before --format; kept so that scripts written for it still work
        typer.echo("hpcconf: warning: --json is deprecated; use --format json", err=True)
        output_format = "json"
    as_json = output_format == "json"
    try:
        catalog = Catalog.load(extra_dirs=with_settings_dirs(sku_dir))
    except HpcconfError as exc:
        raise fail(exc) from None
    if name is None:
        rows = [catalog.get(n) for n in catalog.names()]
        if as_json:
            typer.echo(json.dumps([{"name": s.name, "gpus": s.gpu.count, "gpu": s.gpu.model,
                                    "infiniband": s.infiniband.count if s.infiniband else 0} for s in rows], indent=2))
            return
        # Plain columns, not a rich table: one line per SKU whatever the width, for grep and awk; the widths
        # fit the longest value, so a --sku-dir SKU with a long name keeps the columns aligned.
        table = [("SKU", "GPUs", "GPU model", "IB", "family")] + [
            (sku.name, str(sku.gpu.count), sku.gpu.model,
             f"{sku.infiniband.count}x{sku.infiniband.rate}" if sku.infiniband else "-", sku.family) for sku in rows]
        widths = [max(len(row[i]) for row in table) for i in range(4)]
        for name, gpus, model, ib, family in table:
            typer.echo(f"{name:{widths[0]}} {gpus:>{widths[1]}}  {model:{widths[2]}} {ib:>{widths[3]}}  {family}")
        return
    try:
        sku = catalog.get(name)
    except UnknownSku as exc:
        typer.echo(f"hpcconf: error: {exc}; `hpcconf skus` lists them all", err=True)
        raise typer.Exit(EXIT_INVALID) from None
    data = sku.model_dump(mode="json", exclude_none=True)
    if as_json:
        typer.echo(json.dumps(data, indent=2))
    else:
        from .yamlio import dump_yaml

        typer.echo(dump_yaml(data), nl=False)


@app.command()
def build(
    specs: Optional[List[Path]] = typer.Argument(None, metavar="SPEC", help="Spec files, quoted globs ('examples/*.yaml') or directories (every tracked hpcconf spec in them). Default: the current directory."),
    out: Optional[Path] = typer.Option(None, "--output", "-o", "--out", metavar="DIR", help="Output root; each cluster goes to DIR/<name>/. Default: the `out` key of [tool.hpcconf] / .hpcconf.toml, else out/ next to each spec."),
    sku_dir: List[Path] = sku_dir_option(),
    check: bool = typer.Option(False, "--check", help="Write nothing; exit 1 if the files on disk differ from a fresh build."),
    diff: bool = typer.Option(False, "--diff", help="Write nothing; print a unified diff of what a build would change."),
    explain: bool = typer.Option(False, "--explain", help="With --diff/--check: say which spec fields each changed file depends on."),
    force: bool = typer.Option(False, "--force", help="Overwrite generated files even if they were edited by hand, and write despite lint errors."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="Print only problems."),
    config_file: Optional[Path] = typer.Option(None, "--config", metavar="FILE", help="Settings file (.hpcconf.toml or pyproject.toml); default: the nearest one."),
) -> None:
    """Compile specs into their artifacts under DIR/<cluster name>/ (DIR: -o, default out/ next to the spec)."""
    from .build_command import run_build

    if explain and not (check or diff):
        typer.echo("hpcconf: error: --explain needs --diff or --check (it explains a comparison)", err=True)
        raise typer.Exit(EXIT_INVALID)
    raise typer.Exit(run_build(specs or [], out, sku_dir, check=check, diff=diff, explain=explain, force=force, quiet=quiet,
                               config_file=config_file))


@app.command()
def review(
    base: Optional[str] = typer.Option(None, "--base", metavar="REV", help="Earlier revision. Default: the merge-base of HEAD with the default branch (origin/HEAD, origin/main, origin/master, main, master); HEAD when HEAD is on it."),
    head: Optional[str] = typer.Option(None, "--head", metavar="REV", help="Later revision. Default: the working tree."),
    output_format: str = typer.Option("text", "--format", "-f", metavar="FORMAT", help="text, markdown (PR comment, GitHub job summary) or json.",
                                      autocompletion=completion.choices_of("hpcconf.review.command", "FORMATS")),
    output: Optional[Path] = typer.Option(None, "--output", "-o", "--out", metavar="FILE", help="Write the report to FILE ('-': stdout)."),
    sku_dir: List[Path] = typer.Option([], "--sku-dir", metavar="DIR", help="Extra SKU directory (adds or overrides; repeatable)."),
    config_file: Optional[Path] = typer.Option(None, "--config", metavar="FILE", help="Settings file; default: the one at the repository root."),
    detailed_exitcode: bool = typer.Option(False, "--detailed-exitcode", help="Exit 0 when nothing changed, 3 for changes that disrupt nothing running, 4 when applying them drains, deletes or replaces nodes or changes the InfiniBand network (1 and 2 as always, first)."),
) -> None:
    """Review every spec and generated file between two git revisions: what changed, which spec field
    caused it, what applying it does to a running cluster; hand edits and stale outputs (exit 1)."""
    from .review.command import run_review

    raise typer.Exit(run_review(base, head, output_format, output, sku_dir, config_file, detailed_exitcode))


# Commands defined next to their code: lint, rules, explain; init, migrate, explain-diff; nccl-report.
lint_commands.register(app)
app.command("init")(init_command.init_command)
app.command("migrate")(migrate.migrate_command)
app.command("explain-diff")(explain_diff.explain_diff_command)
nccl_report_command.register(app)


def _register_sku_group() -> None:
    """`hpcconf sku collect-script|import`: the group's module is imported here, its importer only when run."""
    from .sku_import import command as sku_command

    sku_command.register(app)


_register_sku_group()


def main() -> None:
    try:
        app()
    except HpcconfError as exc:  # a last line of defence: never a traceback for bad input
        from .term import echo_findings

        echo_findings(render_all(exc.diagnostics))
        sys.exit(EXIT_INVALID)
    except BrokenPipeError:  # `hpcconf rules | head`: the reader left; end quietly as shell tools do
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        sys.exit(141)
    except (OSError, UnicodeError) as exc:  # the file system said no: the user's to fix, not a bug
        filename = getattr(exc, "filename", None)  # OSError has one, UnicodeError does not
        where = f" {filename}" if filename else ""
        reason = getattr(exc, "strerror", None) or str(exc)
        typer.echo(f"hpcconf: error: cannot use{where}: {reason}. Check the path, its permissions and that it is "
                   "a UTF-8 text file (or a writable directory for --out).", err=True)
        sys.exit(EXIT_INVALID)
    except RecursionError:
        typer.echo("hpcconf: error: the input is nested too deeply to process; it is not a cluster spec or config "
                   "hpcconf can read.", err=True)
        sys.exit(EXIT_INVALID)
    except Exception as exc:  # noqa: BLE001 - a bug must still not greet the user with a traceback
        if os.environ.get("HPCCONF_DEBUG"):
            raise
        typer.echo(f"hpcconf: internal error: {type(exc).__name__}: {exc}. This is a bug in hpcconf; "
                   "please report it with the command and input (HPCCONF_DEBUG=1 shows the traceback).", err=True)
        sys.exit(EXIT_INTERNAL)


if __name__ == "__main__":
    main()
