"""az-hop's built-in user groups: it maps roles by gid, not by name.

Source: Azure/az-hop ``config.tpl.yml`` (``users``/``groups``: azhop-users 5000, azhop-admins
5001, azhop-localadmins 5002) and the playbooks that grant admin and sudo rights by those gids.
"""

from __future__ import annotations

ALL_USERS_GID = 5000
ADMINS_GID = 5001
LOCAL_ADMINS_GID = 5002
# (name, gid, description) of the groups az-hop's config template defines.
BUILTIN_GROUPS = (
    ("azhop-users", ALL_USERS_GID, None),
    ("azhop-admins", ADMINS_GID, "For users with azhop admin privileges"),
    ("azhop-localadmins", LOCAL_ADMINS_GID, "For users with sudo right or local admin right on nodes"),
)
