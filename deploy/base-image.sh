#!/bin/sh
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# The Dockerfile's base, debian:12 and debian:12-slim (one image under both names), made from
# Debian's archive with debootstrap and imported into ENGINE's store (podman by default): for a
# host that reaches a Debian mirror but no container registry.  `make image` runs it when either
# name is missing.  As root.
#   deploy/base-image.sh [ENGINE]
# The archive is the host's, the first URIs of its debian.sources, unless MIRROR=URL is given.
set -eu
engine=${1:-podman}
sources=/etc/apt/sources.list.d/debian.sources

fail() {
	echo "base-image: $*" >&2
	exit 1
}

[ "$(id -u)" = 0 ] || fail "debootstrap needs root"
command -v debootstrap >/dev/null || fail "debootstrap is not installed (apt-get install debootstrap)"
mirror=${MIRROR:-$(sed -n 's/^URIs:[[:space:]]*//p' "$sources" 2>/dev/null | head -n 1 | cut -d' ' -f1)}
[ -n "$mirror" ] || fail "no mirror in $sources: set MIRROR=URL"

work=$(mktemp -d /var/tmp/roceval-base.XXXXXX)
trap 'rm -rf "$work"' EXIT
root=$work/root
log=$work/log
# the last lines of what a failed step said, then why it stopped
failed() {
	tail -n 5 "$log" >&2
	fail "$*"
}
# debootstrap mounts /proc and /sys in the new root and, if it stops half-way, leaves them
# there; in a mount namespace of its own they end with it, and rm -rf never walks into them.
unshare --mount --propagation private debootstrap --variant=minbase bookworm "$root" "$mirror" \
	>"$log" 2>&1 || failed "debootstrap from $mirror failed"

# Without MIRROR, the image's apt reads the same suites from the same mirror as the host's
# (debootstrap wrote bookworm main alone).
if [ -z "${MIRROR-}" ]; then
	rm "$root/etc/apt/sources.list"
	cp "$sources" "$root/etc/apt/sources.list.d/debian.sources"
fi
# Of the host's apt settings, only those that decide whether that mirror's Release files are
# accepted: a mirror serving a frozen snapshot of the archive needs the Valid-Until check off
# once the snapshot's security suite expires, and the Date check off when it is dated ahead of
# this clock.  The host's apt-get update works with them, so the image's does too.
eval "$(apt-config shell until_check Acquire::Check-Valid-Until date_check Acquire::Check-Date)"
{
	[ -z "${until_check-}" ] || printf 'Acquire::Check-Valid-Until "%s";\n' "$until_check"
	[ -z "${date_check-}" ] || printf 'Acquire::Check-Date "%s";\n' "$date_check"
} >"$root/etc/apt/apt.conf.d/50mirror-checks"
[ -s "$root/etc/apt/apt.conf.d/50mirror-checks" ] || rm "$root/etc/apt/apt.conf.d/50mirror-checks"
# As Debian's own images: bookworm's point release with what its security and updates suites
# have added since, which also proves the image's apt reaches the mirror with these settings.
unshare --mount --propagation private chroot "$root" sh -c 'mount -t proc proc /proc &&
	apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get upgrade -y -qq' >"$log" 2>&1 ||
	failed "apt-get update and upgrade in the new root failed"
# Then, as in Debian's own images, no package lists or downloaded packages (every build runs
# apt-get update first), and not this host's name or resolver: the engine provides those.
rm -rf "$root/var/lib/apt/lists/"* "$root/var/cache/apt/"*
rm -f "$root/etc/hostname" "$root/etc/resolv.conf"

tar -C "$root" --numeric-owner -c . | "$engine" import --change 'CMD ["bash"]' - debian:12 >"$log" 2>&1 ||
	failed "$engine import failed"
"$engine" tag debian:12 debian:12-slim
