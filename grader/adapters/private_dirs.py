"""Directories only this account (and root) may change: what gradeline trusts there --
a spool's submissions and journals, the state directory's images and database --
cannot be planted or swapped by another account (SECURITY.md)."""

from __future__ import annotations

import os
import stat
from pathlib import Path


def shared_dir_problem(path: Path) -> tuple[str, str] | None:
    """(what is wrong, the remedy) when an account other than its owner and root can
    write ``path`` or a directory above it, else None: that account could plant or
    swap what gradeline trusts there (SECURITY.md). A sticky directory above (like
    /var/tmp) is fine: others cannot rename or remove what is not theirs."""
    me = os.geteuid()
    d = path
    while not d.exists() and d.parent != d:
        d = d.parent  # gradeline creates the rest with its own modes
    for cur in (d, *d.parents):
        st = cur.stat()
        sticky_above = cur != path and st.st_mode & stat.S_ISVTX
        if st.st_mode & 0o022 and not sticky_above:
            who = "every account" if st.st_mode & 0o002 else "its group"
            return (f"{cur} is writable by {who} (mode {st.st_mode & 0o7777:o}), so "
                    f"others could change {path}", f"chmod go-w {cur}")
        if st.st_uid not in (me, 0):
            return (f"{cur} belongs to uid {st.st_uid}, who could change {path}",
                    f"keep {path} in directories of this account or root")
    return None
