"""AzHOP ``config.yml`` users and groups (AZH013); the judgement is shared with specs."""

from __future__ import annotations

from typing import Iterator

from ...diagnostics import Diagnostic, Severity
from ...knowledge.azhop_view import judge_identities
from ...rules_registry import rule
from ..azhop_config import KINDS, config_data, identities_view, report
from ..context import LintContext
from ..document import Document

# -- AZH013 --------------------------------------------------------------------------------------------

@rule(code="AZH013", name="azhop-users-groups", severity=Severity.ERROR, kinds=KINDS)
def users_groups(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """Users or groups collide, a user joins a group that is not defined, or az-hop's role gids are missing.

    ## What it catches
    Two users with one ``uid`` or one name, two groups with one ``gid``, users joining a group no
    group entry defines, no group with gid 5000 (error), and no group with gid 5001 or 5002
    (warning). The same judgement runs on ``azhop.users`` / ``azhop.groups`` of an hpcconf spec,
    where users name their groups.

    ## Why is this bad?
    The schema only checks types (az-hop ``config.schema.json``). Colliding uids give two users
    each other's files on the shared home; an undefined group is created nowhere, so the user
    silently lacks the role. az-hop maps roles by gid, not by name (config template: "These group
    names could be changed but not the gids"); at az-hop 826f7906:

    - gid 5000 is every user's primary group: ``playbooks/create_user.yml`` sets ``gidnumber: 5000``
      on each user and ``playbooks/add_users.yml`` creates only the groups listed in ``usergroups``,
      so without a 5000 entry the users' primary group does not exist (an error);
    - gid 5001 names Grafana's admin group (``roles/grafana/templates/ldap.toml.j2``) and gid 5002
      the sudoers group on the nodes (``cluster-init/scripts/3-joindomain.sh.j2``). Both fall back to
      the names ``azhop-admins`` / ``azhop-localadmins``, so a missing entry leaves Grafana without
      admins or the nodes without sudo: degraded, not broken (a warning).

    Before 0.2.0 the spec check flagged only a missing 5000 (as an error) and the config.yml rule
    all three as warnings; the playbooks above decide it.

    ## Example
    ```yaml
    users:
      - {name: alice, uid: 10001, groups: [6000]}
      - {name: bob, uid: 10001}
    usergroups:
      - {name: azhop-users, gid: 5000}
    ```

    ## Fix
    ```yaml
    users:
      - {name: alice, uid: 10001, groups: [6000]}
      - {name: bob, uid: 10002}
    usergroups:
      - {name: azhop-users, gid: 5000}
      - {name: azhop-admins, gid: 5001}
      - {name: azhop-localadmins, gid: 5002}
      - {name: project1, gid: 6000}
    ```
    """
    yield from report(doc, judge_identities(identities_view(config_data(doc))))
