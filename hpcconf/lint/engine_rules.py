"""Findings the engine reports itself: unreadable input, crashed rules, suppression hygiene.

They are registered like any rule, so ``hpcconf explain HPC011`` and ``docs/rules.md`` cover them.
"""

from __future__ import annotations

from ..diagnostics import Severity
from ..rules_registry import engine_rule

RULE_CRASHED = engine_rule(code="HPC090", name="rule-crashed", severity=Severity.ERROR, doc="""
    A lint rule raised an exception instead of finishing.

    ## What it catches
    A bug in hpcconf (or in a rule module) hit by this input. The other rules still run;
    the file is reported with the exception so the result is never a silent pass.

    ## Why is this bad?
    A crashed rule checked nothing: a clean exit would claim the file is fine when it was
    not examined. ParallelCluster turns a validator that raises into an ERROR for the same reason.

    ## Example
    ```text
    job.yaml:1:1: error[HPC090] rule-crashed: rule VOL001 failed: KeyError: 'tasks'
    ```

    ## Fix
    Report the message with the input file. Meanwhile ``--ignore CODE`` skips the rule that crashed.
    """)

YAML_SYNTAX = engine_rule(code="HPC001", name="yaml-syntax", severity=Severity.ERROR, admission=True, doc="""
    The YAML file does not parse.

    ## What it catches
    Indentation errors, tabs, unclosed quotes or brackets: anything the YAML parser rejects.
    The finding points at the line and column where the parser stopped. YAML no program hpcconf knows
    reads is reported too, as info.

    ## Why is this bad?
    ``kubectl``, ``helm`` and az-hop's build reject the file too, but later, often after a
    part of the deployment ran. No other rule can check a file that does not parse.

    ## Example
    ```yaml
    spec:
      tasks:
       - name: master
        replicas: 1      # indentation does not match the item above
    ```

    An error in YAML no program hpcconf knows reads (no ``apiVersion``/``kind``, no Helm chart
    beside it or named by it, no az-hop keys: a docker-compose file, a playbook) is info.

    ## Severity
    Error where the file's consumer refuses it: ``kubectl apply`` and ``helm`` (values files, read by
    ``chartutil.ReadValues``) convert YAML with sigs.k8s.io/yaml and stop at the first syntax error
    ("error converting YAML to JSON"); az-hop's Ansible loads its config.yml with PyYAML, which raises;
    ``hpcconf build`` refuses a spec. Info where hpcconf cannot tell which program reads the file, judged
    from what needs no parse (top-level ``apiVersion`` and ``kind``, ``queues`` with az-hop's keys, a
    ``Chart.yaml`` beside a values file, a chart named by the file or its directory) or ``--kind``.

    ## Fix
    Fix the syntax at the reported position: spaces only, a colon after each key, matching quotes.
    """)

DUPLICATE_KEY = engine_rule(code="HPC002", name="duplicate-key", severity=Severity.ERROR, doc="""
    A YAML mapping has the same key twice.

    ## What it catches
    Two entries with one key in the same mapping, e.g. two ``resources:`` under a container.

    ## Why is this bad?
    Most YAML loaders (Go's yaml.v2 used by kubectl and helm, PyYAML used by Ansible in az-hop)
    silently keep the last value, so half of what you wrote is thrown away without a word.

    ## Example
    ```yaml
    resources:
      limits: {nvidia.com/gpu: 8}
    resources:
      limits: {rdma/ib: 1}
    ```

    ## Severity
    Error where a consumer hpcconf knows reads the file (a Kubernetes manifest, Helm values, an az-hop
    config, an hpcconf spec): the value it keeps is not the one half of the file says. Info in YAML no
    program hpcconf knows reads (as for HPC001): whether that program keeps the first, the last or refuses
    is its own.

    ## Fix
    Merge the two entries into one, or delete the one you do not mean.
    """)

UNRECOGNISED_FILE = engine_rule(code="HPC091", name="unrecognised-file", severity=Severity.INFO, doc="""
    A file named on the command line is not a kind hpcconf lints, and the run checked nothing.

    ## What it catches
    A run that checked no file at all, for each file named explicitly that was passed over: its
    kind could not be recognised by name or content, or it is a kind hpcconf does not read (a
    Helm template, a Python script, documentation; the message says which). When the run checks
    some other file, named files it passes over are skipped as a directory walk skips them
    (``--verbose`` lists them), so the pre-commit hook, which names every file of a commit,
    reports what ``hpcconf lint .`` reports.

    ## Why is this bad?
    A lint run that checks nothing must not look like a pass: kube-linter added
    ``--fail-if-no-objects-found`` after pipelines passed silently for months.

    ## Severity
    Info: nothing is wrong with the file (an AzureML pipeline, a Helm template, a Python script), and no
    consumer refuses it; what matters is that the run checked nothing, which the message says and which
    ``hpcconf lint`` also prints on stderr ("nothing was linted"). A ``--kind`` that the file plainly is
    not is a warning: the user's own option keeps the file's rules from running.

    ## Example
    ```console
    $ hpcconf lint values.yaml     # no chart name in the file name, no --chart
    values.yaml:1:1: warning[HPC091] unrecognised-file: cannot tell what kind of file this is
    ```

    ## Fix
    Name the kind with ``--kind`` (``hpcconf lint --kind helm-values/gpu-operator values.yaml``),
    pass ``--chart gpu-operator=VERSION``, or rename the file so its name says what it is.
    """)

SUPPRESSION_WITHOUT_REASON = engine_rule(code="HPC010", name="suppression-without-reason",
                                         severity=Severity.WARNING, doc="""
    An inline ``# hpcconf: ignore[CODE]`` comment gives no reason.

    ## What it catches
    A suppression comment with nothing after the closing bracket.

    ## Why is this bad?
    A suppression without a reason cannot be reviewed: nobody can tell later whether the
    finding was a false positive or a shortcut. ruff (#8453) and hadolint (#1028) users asked
    for required reasons for this reason. The suppression still applies.

    ## Example
    ```yaml
    image: nccl-tests:latest  # hpcconf: ignore[DKR001]
    ```

    ## Fix
    Say why after the bracket: ``# hpcconf: ignore[DKR001] tag is pinned by the CI pipeline``.
    """)

UNUSED_SUPPRESSION = engine_rule(code="HPC011", name="unused-suppression", severity=Severity.WARNING, doc="""
    An inline suppression suppresses nothing.

    ## What it catches
    ``# hpcconf: ignore[CODE] ...`` on a line where rule CODE reports nothing (any more).

    ## Why is this bad?
    Stale suppressions hide the next real finding on that line and mislead readers about
    what is wrong there. ruff reports them as RUF100 for the same reason.

    ## Example
    ```text
    NCCL_ALGO=Ring
    # hpcconf: ignore[NCCL001] was needed for the old value
    NCCL_PROTO=Simple
    ```

    ## Fix
    Delete the comment, or move it to the line whose finding it should cover.
    """)

UNKNOWN_SUPPRESSION_CODE = engine_rule(code="HPC012", name="suppression-unknown-code", severity=Severity.WARNING,
                                       doc="""
    An inline suppression names a rule code that does not exist.

    ## What it catches
    ``# hpcconf: ignore[CODE]`` where CODE is neither a rule code nor a rule name
    (``hpcconf rules`` lists them).

    ## Why is this bad?
    A typo in a suppression suppresses nothing, so the finding it was meant for stays, or
    the comment sits there giving a false impression that something was reviewed.

    ## Example
    ```text
    # hpcconf: ignore[NCL001] spaces are intentional
    ```

    ## Fix
    Use the code shown in the finding (``NCCL001``) or the rule's kebab name.
    """)
