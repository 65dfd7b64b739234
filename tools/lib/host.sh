# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# The host side's shell library, sourced by every host script of tools/
# (the guest side has tools/lib/guest.sh):
#
#   FWD_ROOT            the repository's top directory
#   FWD_CACHE           what set-up downloads and builds once (the venv,
#                       the sid chroot, 7.2's packages); default
#                       /var/cache/fwdsched
#   FWD_KERNELS         the kernel series the project supports, from the
#                       one file that lists them, tools/kernels (one line)
#   FWD_DEBUG_KERNELS   the series whose debug kernel make check-debug
#                       tests by default, from tools/debug-kernels
#   FWD_SID_KERNELS     the series whose headers need Debian sid's gcc and
#                       libc: they are built in the sid chroot
#                       (tools/setup/sid-chroot), the others on the host
#   FWD_UPSTREAM_KERNEL the series the upstream series (patches/) are made
#                       against and built in: the newest of FWD_KERNELS
#   FWD_VM_LOCK         the lock that keeps the machine to one QEMU guest;
#                       tools/runner/vm-run takes it, no caller does
#   die <message>       "<program>: <message>" on stderr, then exit with
#                       FWD_DIE_STATUS (1 unless the script set it)
#   check_kernels <what> <kernel>...
#                       die unless every <kernel> is one of FWD_KERNELS
#   in_sid <series or release>
#                       true when it is built in the sid chroot
#   missing_pkgs [--root DIR] <package>...
#                       print those of the Debian packages not installed
#                       (in the root file system DIR: a chroot)

# shellcheck source=tools/lib/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
FWD_CACHE=${FWD_CACHE:-/var/cache/fwdsched}
FWD_VM_LOCK=${FWD_VM_LOCK:-/run/fwdsched-vm.lock}
read -r FWD_KERNELS < "$FWD_ROOT/tools/kernels"
read -r FWD_DEBUG_KERNELS < "$FWD_ROOT/tools/debug-kernels"
FWD_SID_KERNELS="7.2"
FWD_UPSTREAM_KERNEL=${FWD_KERNELS##* }

in_sid() {
	local s
	for s in $FWD_SID_KERNELS; do
		[[ $1 == "$s" || $1 == "$s".* ]] && return 0
	done
	return 1
}

missing_pkgs() {
	local root=() p
	if [ "${1:-}" = --root ]; then
		root=(chroot "$2")
		shift 2
	fi
	for p in "$@"; do
		# shellcheck disable=SC2016
		"${root[@]}" dpkg-query -W -f='${Status}' "$p" 2>/dev/null |
			grep -q 'ok installed' || printf ' %s' "$p"
	done
}

check_kernels() {
	local what=$1 k
	shift
	for k in "$@"; do
		[[ " $FWD_KERNELS " == *" $k "* ]] ||
			die "$what: unknown kernel '$k' (${FWD_KERNELS// /, })"
	done
}

# debian_archive [security]
#	print the URI this machine's apt configuration uses for Debian's main
#	archive (the suite of /etc/debian_version's release, bookworm), or with
#	"security" for bookworm-security: a user's mirror or proxy is kept, and
#	no archive address is written into the project.  Dies when none is
#	configured.
debian_archive() {
	local want=bookworm uri
	[ "${1:-}" = security ] && want=bookworm-security
	uri=$(apt_uris | awk -v w="$want" '$2 == w && u == "" { u = $1 } END { if (u != "") print u }')
	[ -n "$uri" ] || die "no apt source for Debian's $want in /etc/apt (sources.list, sources.list.d/*.sources): add the one you use"
	echo "${uri%/}"
}

# apt_uris: "<uri> <suite>" for every Debian source of the apt
# configuration, one-line (.list) and deb822 (.sources) alike; the
# project's own fwdsched-extra.sources, written from these, is skipped.
apt_uris() {
	local f
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[ -f "$f" ] || continue
		sed -e 's/#.*//' -e 's/\[[^]]*\]//' "$f" |
			awk '$1 == "deb" { print $2, $3 }'
	done
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] && [ "${f##*/}" != fwdsched-extra.sources ] || continue
		awk '
		function flush(  i, j, nu, ns, u, s) {
			if (deb && uris != "" && suites != "") {
				nu = split(uris, u, " "); ns = split(suites, s, " ")
				for (i = 1; i <= nu; i++)
					for (j = 1; j <= ns; j++)
						print u[i], s[j]
			}
			deb = 0; uris = ""; suites = ""
		}
		/^[[:space:]]*#/ { next }
		/^[[:space:]]*$/ { flush(); next }
		tolower($1) == "types:" { deb = ($0 ~ /[[:space:]]deb([[:space:]]|$)/) }
		tolower($1) == "uris:" { $1 = ""; uris = $0 }
		tolower($1) == "suites:" { $1 = ""; suites = $0 }
		tolower($1) == "enabled:" && tolower($2) == "no" { deb = 0 }
		END { flush() }' "$f"
	done
}
