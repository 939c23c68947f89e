#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# roceval in one command (`make demo`): two network namespaces joined by a
# veth pair, roceval attached natively on the receiving end, a few thousand
# frames of RoCEv2 with a few faults of each kind sent from the other end.
# It shows the counters as they move, then checks them against what the
# generator says it injected, and exits non-zero if they disagree.
# Everything it creates is removed on exit, also when interrupted.
#
# Environment: ROCEVAL (the binary, default ./roceval), DEMO_FRAMES (4000),
# DEMO_RATE (frames per second, 1000), DEMO_SEED (2026).
set -euo pipefail

ROCEVAL=$(realpath "${ROCEVAL:-./roceval}")
FRAMES=${DEMO_FRAMES:-4000}
RATE=${DEMO_RATE:-1000}
SEED=${DEMO_SEED:-2026}
PY=/usr/bin/python3

TAG=$(printf '%04x' $(($$ % 65536)))
NS_TX=roceval-demo-tx-$TAG
NS_RX=roceval-demo-rx-$TAG
IF_TX=rvdemo-tx$TAG
IF_RX=rvdemo-rx$TAG
WORK=$(mktemp -d /tmp/roceval-demo.XXXXXX)
PIDS=()

if [ -t 1 ]; then
	B=$'\033[1m' G=$'\033[32m' R=$'\033[31m' N=$'\033[0m'
else
	B='' G='' R='' N=''
fi

step() { printf '\n%s==> %s%s\n' "$B" "$*" "$N"; }
in_tx() { nsenter --net="/run/netns/$NS_TX" "$@"; }
# nsenter switches the network namespace only, so the pins in /sys/fs/bpf stay visible
in_rx() { nsenter --net="/run/netns/$NS_RX" "$@"; }

cleanup() {
	local rc=$?

	trap - EXIT INT TERM
	for pid in "${PIDS[@]}"; do
		kill "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	done
	if [ -e "/run/netns/$NS_RX" ]; then
		in_rx "$ROCEVAL" detach "$IF_RX" >/dev/null 2>&1 || true
		# pins are kept per network namespace, under its inode
		rm -rf "/sys/fs/bpf/roceval/netns-$(stat -L -c %i "/run/netns/$NS_RX")/$IF_RX"
	fi
	ip netns del "$NS_TX" 2>/dev/null || true
	ip netns del "$NS_RX" 2>/dev/null || true
	rm -rf "$WORK"
	exit "$rc"
}
trap cleanup EXIT
trap 'echo; echo "roceval demo: interrupted, cleaning up" >&2; exit 130' INT TERM

if [ "$(id -u)" != 0 ]; then
	echo "roceval demo: must run as root (XDP, BPF and network namespaces)" >&2
	exit 1
fi
for cmd in attach stats trace detach; do
	if ! "$ROCEVAL" help "$cmd" >/dev/null 2>&1; then
		echo "roceval demo: this roceval has no '$cmd' command" >&2
		exit 1
	fi
done

step "Two network namespaces joined by a veth pair"
ip netns add "$NS_TX"
ip netns add "$NS_RX"
ip link add "$IF_TX" netns "$NS_TX" type veth peer name "$IF_RX" netns "$NS_RX"
for ns in "$NS_TX:$IF_TX:192.0.2.1" "$NS_RX:$IF_RX:192.0.2.2"; do
	IFS=: read -r n i a <<<"$ns"
	ip -n "$n" link set lo up
	ip -n "$n" link set "$i" up
	ip -n "$n" addr add "$a/24" dev "$i"
done
MAC_TX=$(ip -n "$NS_TX" -br link show "$IF_TX" | awk '{print $3}')
MAC_RX=$(ip -n "$NS_RX" -br link show "$IF_RX" | awk '{print $3}')
echo "$NS_TX/$IF_TX ($MAC_TX)  <-->  $NS_RX/$IF_RX ($MAC_RX)"

step "roceval attach $IF_RX --mode native"
in_rx "$ROCEVAL" attach "$IF_RX" --mode native

# a trace running while the traffic flows: the first violating frames, decoded
TRACE_RULES=icrc,psn_gap,psn_duplicate,opcode,pad,se
in_rx "$ROCEVAL" trace "$IF_RX" --rule "$TRACE_RULES" --count 6 >"$WORK/trace.txt" 2>&1 &
PIDS+=($!)
sleep 0.5

FAULTS=(--corrupt-icrc 0.2% --flip-invariant 0.2% --mutate-variant 0.3% --drop 0.3%
	--duplicate 1% --bad-opcode 0.2% --bad-pad 1% --se-misuse 0.3%)
step "roceval gen -i $IF_TX: $FRAMES frames of RC/UC/UD/CNP traffic, IPv4 and IPv6, $RATE/s, with faults"
echo "    ${FAULTS[*]}"
in_tx "$ROCEVAL" gen -i "$IF_TX" --rate "$RATE" --count "$FRAMES" --seed "$SEED" -f mixed \
	--mac "$MAC_TX,$MAC_RX" "${FAULTS[@]}" --json --quiet >"$WORK/gen.json" &
GEN=$!
PIDS+=($GEN)

# the counters as they move, one line a second
show_line() {
	"$PY" -c '
import json, sys
s = json.load(sys.stdin)
moved = " ".join(f"{k}={v}" for k, v in s["rules"].items() if v)
print("  roce=%-6d icrc_ok=%-6d icrc_bad=%-4d %s" % (s["roce"], s["icrc_ok"], s["icrc_bad"], moved))'
}
while kill -0 "$GEN" 2>/dev/null; do
	sleep 1
	in_rx "$ROCEVAL" stats "$IF_RX" --json | show_line
done
if ! wait "$GEN"; then
	echo "roceval demo: the generator failed" >&2
	exit 1
fi

# the last frames may still be in flight through the veth
want=$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["expected"]["roce"])' "$WORK/gen.json")
for _ in $(seq 50); do
	in_rx "$ROCEVAL" stats "$IF_RX" --json >"$WORK/stats.json"
	got=$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["roce"])' "$WORK/stats.json")
	[ "$got" -ge "$want" ] && break
	sleep 0.1
done

step "roceval stats $IF_RX"
in_rx "$ROCEVAL" stats "$IF_RX"

step "What was injected, next to what roceval counted"
agree=0
"$PY" - "$WORK/gen.json" "$WORK/stats.json" <<'EOF' || agree=$?
import json, sys

gen = json.load(open(sys.argv[1]))
st = json.load(open(sys.argv[2]))
exp = gen["expected"]
inj = gen["injected"]
cause = {
    "icrc": f"corrupt-icrc {inj['corrupt_icrc']} + flip-invariant {inj['flip_invariant']}",
    "psn_gap": f"drop {inj['drop']}",
    "psn_duplicate": f"duplicate {inj['duplicate']}",
    "opcode": f"bad-opcode {inj['bad_opcode']}",
    "pad": f"bad-pad {inj['bad_pad']}",
    "se": f"se-misuse {inj['se_misuse']}",
    "ecn_ce": f"ECN CE marks among the {inj['mutate_variant']} variant-field mutations",
    "cnp": "CNPs in the conversations",
}
rows = [(k, exp[k], st[k], "frames sent" if k == "roce" else "")
        for k in ("roce", "icrc_ok", "icrc_bad")]
rows += [(k, v, st["rules"][k], cause.get(k, "")) for k, v in exp["rules"].items()
         if v or st["rules"][k]]
print(f"  {'COUNTER':<16} {'EXPECTED':>8} {'ROCEVAL':>8}   INJECTED AS")
bad = 0
for name, e, g, why in rows:
    mark = "" if e == g else "   <-- differs"
    bad += e != g
    print(f"  {name:<16} {e:>8} {g:>8}   {why}{mark}")
others = [k for k, v in st["rules"].items() if v and k not in exp["rules"]]
if others:
    print("  not predicted (a dropped FIRST/LAST breaks its message): "
          + ", ".join(f"{k} {st['rules'][k]}" for k in others))
if bad:
    print(f"\nDISAGREEMENT: {bad} counter(s) differ from what was injected")
    sys.exit(1)
print(f"\nAGREEMENT: all {3 + len(exp['rules'])} predicted counters match "
      f"(seed {gen['seed']}, {gen['frames']} frames, "
      f"mutate-variant {inj['mutate_variant']} frames changed and none flagged)")
sys.exit(3 if others else 0)
EOF
case $agree in
0) printf '%sroceval caught every injected fault, and nothing else.%s\n' "$G" "$N" ;;
3) printf '%sroceval caught every injected fault.%s\n' "$G" "$N" ;;
*)
	printf '%sroceval demo: the counters do not agree with the injected faults%s\n' "$R" "$N" >&2
	exit 1
	;;
esac

step "roceval trace $IF_RX --rule $TRACE_RULES --count 6 (started before the traffic)"
for _ in $(seq 20); do
	[ -s "$WORK/trace.txt" ] && ! kill -0 "${PIDS[0]}" 2>/dev/null && break
	sleep 0.1
done
head -n 12 "$WORK/trace.txt"

step "Where to go next"
cat <<EOF
  roceval help                          every command; 'roceval help CMD' for one
  roceval replay --json FILE.pcap       validate a capture offline, same XDP program
  roceval gen -w faults.pcap --drop 1%  make known-bad traffic to prove a NIC, a switch or roceval
  roceval attach eth0                   watch a real port: stats, top, trace, config
  roceval daemon                        Prometheus metrics on 127.0.0.1:9435/metrics
  docs/                                 rules, settings and deployment (systemd, Kubernetes)
EOF
