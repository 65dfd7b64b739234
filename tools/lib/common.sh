# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# What the host's and the guest's shell libraries (host.sh, guest.sh)
# share:
#
#   FWD_ROOT            the repository's top directory
#   die <message>       "<program>: <message>" on stderr, then exit with
#                       FWD_DIE_STATUS (1 unless the script set it)

FWD_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
export FWD_ROOT
FWD_DIE_STATUS=1

die() {
	echo "$(basename "$0"): $*" >&2
	exit "$FWD_DIE_STATUS"
}
