"""hpcconf.knowledge.versions is kept instead of ``packaging.version`` (its docstring says why): the
numbers hpcconf compares are git, chart and container tags, which PEP 440 misreads or rejects."""

from __future__ import annotations

import pytest
from packaging.version import InvalidVersion
from packaging.version import Version as Pep440

from hpcconf.knowledge.versions import Version


@pytest.mark.parametrize(("build", "release"), [("v2.18.5-1", "2.18.5")])
def test_a_git_build_number_is_the_same_release_not_a_newer_one(build: str, release: str):
    assert Version.parse(build) == Version.parse(release)
    assert Pep440(build) > Pep440(release)  # PEP 440 reads it as a post-release: why ours is kept


@pytest.mark.parametrize(("candidate", "release"), [("23.10.0-rc.5", "23.10.0")])
def test_a_release_candidate_compares_by_its_release_number(candidate: str, release: str):
    assert Version.parse(candidate) == Version.parse(release)
    assert Pep440(candidate) < Pep440(release)  # PEP 440: a pre-release, older


@pytest.mark.parametrize("tag, parts", [("24.05-py3", (24, 5)), ("12.4.1-devel-ubuntu22.04", (12, 4, 1))])
def test_container_tags_parse(tag, parts):
    assert Version.parse(tag).parts == parts
    with pytest.raises(InvalidVersion):
        Pep440(tag)


def test_a_version_without_patch_stands_for_its_series():
    assert Version.parse("2.18").covers_at_least("2.18.6") and not Version.parse("2.18").at_least("2.18.6")


def test_a_version_string_is_parsed_once_and_bad_text_still_raises_each_time():
    """Memoised (issue #28: a 200-pool build's lint parsed the same strings ~180,000 times); frozen values shared."""
    import dataclasses

    from hpcconf.knowledge.nccl_env import NcclVersion

    assert Version.parse("2.18.5-1") is Version.parse("2.18.5-1") and Version.parse(" v2.18 ").parts == (2, 18)
    assert NcclVersion.parse("v2.18.5-1") is NcclVersion.parse("v2.18.5-1")
    assert NcclVersion.parse("2.18").patch is None
    for _ in range(2):
        with pytest.raises(ValueError):
            Version.parse("latest")
        with pytest.raises(ValueError):
            NcclVersion.parse("2")
    with pytest.raises(dataclasses.FrozenInstanceError):
        Version.parse("1.2").parts = (9,)  # type: ignore[misc]
