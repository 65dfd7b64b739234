# SPDX-License-Identifier: GPL-2.0
"""The identity that signs both upstream series (tools/patches/mkpatches
and mkpatches-mmc): whoever generates them, from git config user.name
and user.email, also used for MODULE_AUTHOR and MAINTAINERS.  A series
is never generated under a made-up name."""

import subprocess


class NoIdentity(Exception):
    pass


def identity(root):
    """(name, email) of whoever generates the series in the repository at
    root; NoIdentity when git config lacks either."""
    def get(key):
        r = subprocess.run(["git", "-C", root, "config", "--get", key],
                           capture_output=True, text=True)
        return r.stdout.strip()
    name, mail = get("user.name"), get("user.email")
    if not name or not mail:
        raise NoIdentity("no identity: the series is signed off and maintained "
                         "by whoever generates it; set git config user.name "
                         "and user.email")
    return name, mail
