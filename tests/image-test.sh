#!/bin/sh
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# `make image-test`: the image's own roceval, run from a container's root with podman (no
# container is started: chroot into `podman mount`), checked against the tree's build and
# against what the DaemonSet asks of it.  As root.
#   IMAGE=ghcr.io/roceval/roceval:VERSION ROCEVAL=./roceval tests/image-test.sh
# Everything it makes (the container, a network namespace and its veth pair, the pins) is
# removed on exit, also on failure.
set -eu
: "${IMAGE:?IMAGE=name:tag of the image to test}"
ROCEVAL=$(realpath "${ROCEVAL:-./roceval}")
ns=roceval-image-$$
port=9435
# CAP_NET_ADMIN (12), CAP_PERFMON (38) and CAP_BPF (39): the DaemonSet's capabilities
daemon_caps=000000c000001000

fail() {
	echo "image-test: $*" >&2
	exit 1
}
step() {
	echo "==> $*"
}

ctr= root= tmp= daemon=
cleanup() {
	rc=$?
	trap - EXIT INT TERM
	if [ -n "$daemon" ]; then
		kill "$daemon" 2>/dev/null || true
		wait "$daemon" 2>/dev/null || true
	fi
	if [ -e "/run/netns/$ns" ]; then
		nsenter --net="/run/netns/$ns" "$ROCEVAL" detach rvimg0 >/dev/null 2>&1 || true
		# pins are kept per network namespace, under its inode
		rm -rf "/sys/fs/bpf/roceval/netns-$(stat -L -c %i "/run/netns/$ns")"
		ip netns del "$ns" || true
	fi
	if [ -n "$ctr" ]; then
		podman umount "$ctr" >/dev/null 2>&1 || true
		podman rm -f "$ctr" >/dev/null 2>&1 || true
	fi
	[ -z "$tmp" ] || rm -rf "$tmp"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

[ "$(id -u)" = 0 ] || fail "must run as root (chroot, BPF, network namespaces)"
[ -x "$ROCEVAL" ] || fail "no roceval binary at $ROCEVAL (make)"
command -v podman >/dev/null || fail "podman is not installed (apt-get install podman)"
command -v curl >/dev/null || fail "curl is not installed (apt-get install curl)"
if [ "$(stat -f -c %T /sys/fs/bpf 2>/dev/null)" != bpf_fs ]; then
	# as roceval itself does in the host's mount namespace
	echo "image-test: mounting bpffs on /sys/fs/bpf (nothing was mounted there)"
	mount -t bpf bpf /sys/fs/bpf
fi
tmp=$(mktemp -d /var/tmp/roceval-image-test.XXXXXX)
start=$(date +%s)

# CMD... chrooted in the container's root with the host's /proc, /sys and bpffs, in the test's
# network namespace.  The mounts are made in a mount namespace of the command's own: they end
# with it, even when it is killed, and none of them can propagate to the host's mounts.
binds='mount --bind /proc "$0/proc"; mount --bind /sys "$0/sys"; mount --bind /sys/fs/bpf "$0/sys/fs/bpf"'
inroot() {
	nsenter --net="/run/netns/$ns" unshare --mount --propagation private \
		sh -ec "$binds"'; exec chroot "$0" "$@"' "$root" "$@"
}
# the tree's roceval in the test's network namespace, as a command on the host
host() {
	nsenter --net="/run/netns/$ns" "$ROCEVAL" "$@"
}

podman image exists "$IMAGE" || fail "no image $IMAGE in podman's store (make image)"
step "the image $IMAGE: $(podman images --format '{{.Size}}' "$IMAGE" | head -n 1)"
ctr=$(podman create "$IMAGE") || fail "podman create $IMAGE failed"
root=$(podman mount "$ctr") || fail "podman mount $ctr failed"
ip netns add "$ns" && ip -n "$ns" link add rvimg0 type veth peer name rvimg1 &&
	ip -n "$ns" link set lo up && ip -n "$ns" link set rvimg0 up && ip -n "$ns" link set rvimg1 up ||
	fail "could not make network namespace $ns and its veth pair"

step "roceval --version"
v=$(inroot roceval --version) || fail "the image's roceval --version failed"
[ "$v" = "$("$ROCEVAL" --version)" ] || fail "the image says '$v', the tree '$("$ROCEVAL" --version)'"
echo "$v"

step "roceval gen and replay, against the tree's"
inroot roceval gen -w /tmp/f.pcap --count 100 --seed 1 >/dev/null 2>&1 || fail "the image's gen failed"
"$ROCEVAL" gen -w "$tmp/f.pcap" --count 100 --seed 1 >/dev/null 2>&1 || fail "the tree's gen failed"
cmp -s "$root/tmp/f.pcap" "$tmp/f.pcap" || fail "gen --seed 1 wrote another capture than the tree's"
inroot roceval replay --json /tmp/f.pcap >"$tmp/image.json" || fail "the image's replay failed"
"$ROCEVAL" replay --json "$tmp/f.pcap" >"$tmp/tree.json" || fail "the tree's replay failed"
cmp -s "$tmp/image.json" "$tmp/tree.json" || fail "the image's replay --json differs from the tree's"
echo "replay --json: $(wc -c <"$tmp/tree.json") bytes, the same as the tree's"

step "roceval attach rvimg0 in network namespace $ns"
inroot roceval attach rvimg0 || fail "the image's attach failed"
host status >"$tmp/status" 2>&1 || fail "the tree's status failed: $(tail -n 1 "$tmp/status")"
grep -q rvimg0 "$tmp/status" || fail "the tree's status does not see the attachment: $(head -n 1 "$tmp/status")"
echo "the tree's status sees it: $(grep rvimg0 "$tmp/status" | head -n 1)"

step "roceval detach rvimg0"
inroot roceval detach rvimg0 || fail "the image's detach failed"
! host status 2>&1 | grep -q rvimg0 || fail "the tree's status still sees rvimg0 attached"

entry=$(podman image inspect --format '{{range .Config.Entrypoint}}{{.}} {{end}}{{range .Config.Cmd}}{{.}} {{end}}' "$IMAGE")
# the DaemonSet's ConfigMap, on this namespace's interface
mkdir "$tmp/etc" "$tmp/run"
printf 'interface = rvimg0\nmode = auto\ninterval = 30\ndetach_on_exit = no\n' >"$tmp/etc/roceval.conf"
# where the DaemonSet mounts them; a container runtime makes these mount points
mkdir -p "$root/etc/roceval" "$root/run/roceval"
scrape() {
	nsenter --net="/run/netns/$ns" curl -sf --max-time 5 "http://127.0.0.1:$port$1"
}
# The image's ENTRYPOINT and CMD with the DaemonSet's --listen, under its securityContext: the
# root read-only, uid 0 with CAP_BPF, CAP_NET_ADMIN and CAP_PERFMON alone and no new privileges;
# the host's bpffs, /run/roceval and the config mounted in.  Returns once /metrics answers.
start_daemon() {
	# $entry unquoted: the entrypoint and its arguments, one word each
	nsenter --net="/run/netns/$ns" unshare --mount --propagation private sh -ec '
		r=$0 run=$1 etc=$2
		shift 2
		mount --bind "$r" "$r"
		mount -o remount,bind,ro "$r"
		'"$binds"'
		mount --bind "$run" "$r/run/roceval"
		mount --bind -o ro "$etc" "$r/etc/roceval"
		exec chroot "$r" setpriv --inh-caps=-all --ambient-caps=-all \
			--bounding-set=-all,+bpf,+net_admin,+perfmon --no-new-privs -- "$@"' \
		"$root" "$tmp/run" "$tmp/etc" $entry --listen "127.0.0.1:$port" >"$tmp/daemon.log" 2>&1 &
	daemon=$!
	tries=0
	until scrape /metrics >"$tmp/metrics" 2>/dev/null; do
		kill -0 "$daemon" 2>/dev/null || fail "the daemon exited: $(tail -n 1 "$tmp/daemon.log")"
		tries=$((tries + 1))
		[ "$tries" -lt 50 ] || fail "the daemon does not answer on 127.0.0.1:$port after 10 s"
		sleep 0.2
	done
	caps=$(sed -n 's/^CapEff:[[:space:]]*//p' "/proc/$daemon/status")
	[ "$caps" = "$daemon_caps" ] || fail "the daemon runs with capabilities $caps, not $daemon_caps"
	ls "$tmp/run" | grep -q '^daemon-.*-rvimg0\.lock$' || fail "the daemon's lock is not in /run/roceval"
}
# SIGTERM, as a pod's deletion sends; rvimg0 stays attached (detach_on_exit = no)
stop_daemon() {
	kill -TERM "$daemon"
	rc=0
	wait "$daemon" || rc=$?
	daemon=
	[ "$rc" = 0 ] || fail "the daemon exited $rc: $(tail -n 1 "$tmp/daemon.log")"
	host status 2>&1 | grep -q rvimg0 || fail "rvimg0 is no longer attached after the daemon stopped"
}
# the RoCE frames rvimg0 counted, summed over the families, at the last scrape
roce_frames() {
	awk '/^roceval_roce_frames_total\{interface="rvimg0"/ { n += $NF } END { print n + 0 }' "$tmp/metrics"
}
prog_id() {
	sed -n 's/^roceval_attached_info{interface="rvimg0".*prog_id="\([0-9]*\)".*/\1/p' "$tmp/metrics"
}

step "the image's command as the DaemonSet runs it: $entry--listen 127.0.0.1:$port"
start_daemon
grep '^roceval: ' "$tmp/daemon.log"
echo "serving with CapEff $caps on a read-only root; its lock: /run/roceval/$(ls "$tmp/run")"

step "100 RoCEv2 frames into rvimg0, then a scrape"
inroot roceval gen -i rvimg1 --count 100 --seed 1 >/dev/null 2>&1 || fail "the image's gen -i rvimg1 failed"
want=$(sed -n 's/.*"roce": \([0-9]*\),.*/\1/p' "$tmp/tree.json")
tries=0
while :; do
	scrape /metrics >"$tmp/metrics" || fail "the scrape of /metrics failed"
	[ "$(roce_frames)" != "$want" ] || break
	tries=$((tries + 1))
	[ "$tries" -lt 25 ] || fail "roceval_roce_frames_total for rvimg0 is $(roce_frames), not $want"
	sleep 0.2
done
prog=$(prog_id)
[ -n "$prog" ] || fail "no roceval_attached_info series for rvimg0"
scrape / >/dev/null || fail "GET / (the DaemonSet's liveness probe) failed"
grep '^roceval_attached_info\|^roceval_roce_frames_total{interface="rvimg0"' "$tmp/metrics"
echo "$(grep -c 'interface="rvimg0"' "$tmp/metrics") series for rvimg0"

step "SIGTERM, and a daemon started again, as a restarted pod: it adopts rvimg0 and its counters"
stop_daemon
start_daemon
grep '^roceval: ' "$tmp/daemon.log"
[ "$(prog_id)" = "$prog" ] || fail "the daemon started again serves program $(prog_id), not the adopted $prog"
[ "$(roce_frames)" = "$want" ] || fail "the adopted counters say $(roce_frames) RoCE frames, not $want"
stop_daemon

step "roceval detach rvimg0, after the daemon"
inroot roceval detach rvimg0 || fail "the image's detach failed"
! host status 2>&1 | grep -q rvimg0 || fail "the tree's status still sees rvimg0 attached"

echo "image-test: every check passed in $(($(date +%s) - start)) s"
