#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tools/guest/cluster.sh <results dir>
#
# The guest half of tools/cluster: paper 001's cluster of flash nodes,
# from the plan <results dir>/plan.json (tools/analysis/clusterplan.py).
#
#   - Nodes: network namespaces fwdc-n<k>, each with nbdkit serving the
#     flash card (tools/flashcard, the plan's preset, 1 GiB sparse image
#     on the guest's tmpfs) over TCP on 10.77.<k>.2.
#   - Master: the namespace fwdc-m, linked to each node by a veth pair
#     (m<k> there, e0 in the node); the kernel's NBD client connects
#     /dev/nbd<k> to node k (nbd-client, the plan's connections, the plan's
#     request timeout), and dm-linear joins the first n of them into
#     /dev/mapper/fwdc, node after node.  The scheduler under test orders
#     every /dev/nbd<k>.
#   - Packing: with "nagle", nbdkit and nbd-client run with
#     build/cluster/nagle.so preloaded, which keeps TCP's Nagle algorithm on
#     (both ask for TCP_NODELAY), so that the requests and replies in
#     flight share frames; with "nodelay" they run as shipped.
#   - fwdsched: its dispatch_depth is the plan's on every /dev/nbd<k>.
#   - Link: with "wifi" or "wifi10", every frame on every node link, both directions,
#     is redirected to one ifb device in the master's namespace, whose
#     netem qdisc is the shared medium (clusterplan.py LINKS).
#
# Then, in this order: the mapping check (data written through the
# master lands at the right offset of the right node's image), the plan's
# runs (fio, one job per node reading 512 bytes at random in that node's
# range through /dev/mapper/fwdc with the batching level in flight), the
# failure case (a node's link goes down under load) and the teardown.
# Records under <results dir>: mapping.json, runs/<id>/ (fio.json,
# before/after counters: the cards' control windows, the link counters,
# /proc/stat; run.json), failure/ and teardown.json.  Exit 0 when it got
# through, whatever it measured.
set -u

# shellcheck source=tools/lib/guest.sh
. "$(dirname "$0")/../lib/guest.sh"
[ $# -eq 1 ] || die "usage: cluster.sh <results dir>"
out=$(cd "$1" && pwd) || die "no results directory $1"
plan=$out/plan.json
[ -f "$plan" ] || die "$plan: no plan"
CP="$FWD_PY $FWD_ROOT/tools/analysis/clusterplan.py"
env_text=$($CP env "$plan") || die "cannot read $plan"
# the plan's settings: whole numbers and plain words only (clusterplan.py)
while IFS='=' read -r k v; do
	[[ $k =~ ^[CF]_[A-Z_]+$ && $v =~ ^[A-Za-z0-9.-]+$ ]] || die "bad plan line '$k=$v'"
	printf -v "$k" '%s' "$v"
done <<< "$env_text"

# since <t0> [<t1>]: seconds from EPOCHREALTIME t0 to t1 (default now),
# as a JSON number
since() { awk -v a="$1" -v b="${2:-$EPOCHREALTIME}" 'BEGIN { printf "%.3f", b - a }'; }

rel=$(uname -r)
M=$C_NODES
IMG=/tmp/fwdc
MNS=fwdc-m
mx() { ip netns exec "$MNS" "$@"; }
lsmod | grep -q '^fwdsched ' || insmod "$FWD_ROOT/build/$rel/fwdsched.ko" ||
	die "cannot load build/$rel/fwdsched.ko"
modprobe -q kyber-iosched
modprobe -q bfq
for m in "nbd nbds_max=$M" "ifb numifbs=0" veth sch_netem act_mirred \
	cls_matchall sch_ingress dm_mod; do
	# shellcheck disable=SC2086
	modprobe -q $m || die "cannot load the module ${m%% *}"
done
[ -b /dev/nbd$((M - 1)) ] || die "nbd gave no /dev/nbd$((M - 1)) (loaded before with fewer devices?)"
# nbdkit and nbd-client run with $pre preloaded: packed as the plan says
pre=
if [ "$C_PACKING" = nagle ]; then
	pre=$FWD_ROOT/build/cluster/nagle.so
	[ -f "$pre" ] || die "no $pre (built by tools/cluster)"
fi

# ---------------------------------------------------------------- set-up
t0=$EPOCHREALTIME
mkdir -p "$IMG"
ip netns add "$MNS" || die "cannot create the namespace $MNS"
ip -n "$MNS" link set lo up
if [ "$C_LINK" != none ]; then
	ip -n "$MNS" link add air type ifb || die "cannot create the ifb device"
	ip -n "$MNS" link set air up
	mx tc qdisc add dev air root netem delay "${C_DELAY_MS}ms" \
		rate "${C_RATE_KBIT}kbit" "$C_OVERHEAD" limit 100000 ||
		die "cannot shape the link with netem"
fi
declare -a srv
for k in $(seq 0 $((M - 1))); do
	ns=fwdc-n$k
	ip netns add "$ns" || die "cannot create the namespace $ns"
	ip -n "$ns" link set lo up
	ip link add "m$k" netns "$MNS" type veth peer name e0 netns "$ns" ||
		die "cannot create the veth pair of node $k"
	ip -n "$MNS" addr add "10.77.$k.1/24" dev "m$k"
	ip -n "$ns" addr add "10.77.$k.2/24" dev e0
	ip -n "$MNS" link set "m$k" up
	ip -n "$ns" link set e0 up
	if [ "$C_LINK" != none ]; then
		mx tc qdisc add dev "m$k" clsact
		for dir in ingress egress; do
			mx tc filter add dev "m$k" "$dir" matchall \
				action mirred egress redirect dev air ||
				die "cannot redirect m$k $dir to the shared link"
		done
	fi
	ip netns exec "$ns" env LD_PRELOAD="$pre" nbdkit -f --exit-with-parent -i "10.77.$k.2" -p 10809 \
		python "$FWD_ROOT/tools/flashcard/flashcard.py" \
		file="$IMG/node$k.img" size=1G preset="$C_CARD" \
		> "$out/nbdkit-$k.log" 2>&1 &
	srv[k]=$!
done
for k in $(seq 0 $((M - 1))); do
	ok=
	for _ in $(seq 300); do
		kill -0 "${srv[k]}" 2>/dev/null || die "nbdkit of node $k exited: $(tail -n 3 "$out/nbdkit-$k.log")"
		if mx env LD_PRELOAD="$pre" nbd-client "10.77.$k.2" 10809 "/dev/nbd$k" -C "$C_CONNS" \
			-t "$F_TIMEOUT" -N "" > "$out/nbd-client-$k.log" 2>&1; then
			ok=y
			break
		fi
		sleep 0.5
	done
	[ -n "$ok" ] || die "node $k: nbd-client did not connect: $(tail -n 3 "$out/nbd-client-$k.log")"
done
# ld.so only warns when it cannot preload: the run would go on unpacked
if [ -n "$pre" ] && grep -l 'cannot be preloaded' "$out"/nbdkit-*.log "$out"/nbd-client-*.log 2>/dev/null; then
	die "$pre was not preloaded (see the logs above): CLUSTER_PACKING=nagle would not hold"
fi
SECT=$(cat /sys/block/nbd0/size)
# the top 64 KiB of a card is its control window, outside the address space
L=$((SECT - 128))
echo "# cluster: $M nodes of $SECT sectors up in $(since "$t0") s"

# dm_table <n>: /dev/mapper/fwdc over the first n nodes
dm_table() {
	local k
	dmsetup remove fwdc 2>/dev/null
	for k in $(seq 0 $(($1 - 1))); do
		echo "$((k * L)) $L linear /dev/nbd$k 0"
	done | dmsetup create fwdc || die "dmsetup create over $1 nodes failed"
	udevadm settle 2>/dev/null
	[ -b /dev/mapper/fwdc ] || die "no /dev/mapper/fwdc"
}

# snapshot <dir> <tag> <n>: the counters of the first n nodes' cards
# (card_read of each /dev/nbd<k>), the links and the CPUs.  The cards are
# read outside the links' window (their reads cross the link too): first
# before, last after.
snapshot() {
	local k
	cards() {
		for k in $(seq 0 $(($3 - 1))); do card_read "nbd$k" "$1/card-$k-$2.json"; done
	}
	[ "$2" != before ] || cards "$@"
	ip -n "$MNS" -s -j link show > "$1/link-$2.json"
	head -n 1 /proc/stat > "$1/cpu-$2.txt"
	[ "$2" != after ] || cards "$@"
}

# fio_nodes <n> <batch> <runtime> <json> [fio options...]: one job per
# node, each reading C_BS bytes at random in its node's range through the
# master's address space, <batch> in flight; killed if it outlives its
# runtime by two minutes (exit 124: it hung)
fio_nodes() {
	local n=$1 b=$2 rt=$3 js=$4 k jobs=()
	shift 4
	for k in $(seq 0 $((n - 1))); do
		jobs+=(--name="node$k" --offset=$((k * L * 512)) --size=$((L * 512)))
	done
	timeout -k 10 $((rt + 120)) fio --output-format=json --output="$js" --filename=/dev/mapper/fwdc \
		--ioengine=libaio --direct=1 --rw=randread --bs="$C_BS" \
		--iodepth="$b" --norandommap --randrepeat=0 --time_based \
		--runtime="$rt" "$@" "${jobs[@]}"
}

# node_sched <dev> <sched>: select <sched> afresh on <dev> and, for
# fwdsched, the plan's dispatch_depth, read back; non-zero (a message on
# stderr) when either did not take.  A subshell: set_sched dies.
node_sched() {
	local f
	(fresh_sched "$1" "$2") || return 1
	[ "$2" = fwdsched ] || return 0
	f=$(iosched "$1")/dispatch_depth
	echo "$C_FWD_DEPTH" > "$f" && [ "$(cat "$f")" = "$C_FWD_DEPTH" ] ||
		{ echo "cannot set dispatch_depth $C_FWD_DEPTH on $1" >&2; return 1; }
}

# ---------------------------------------------------------- mapping check
# Two blocks a node, at both ends of its range, each naming its node and
# place, written through /dev/mapper/fwdc; then every node's image must
# hold them at the same offsets of its own range.
# block <k> <first|last>: the block's sector in node k (ioff) and in the
# master's address space (off), and its 4 KiB in $IMG/pat
block() {
	ioff=0
	[ "$2" = first ] || ioff=$((L - 8))
	off=$(($1 * L + ioff))
	printf 'fwdsched cluster node %d %s block, dm sector %d%4096s' "$1" "$2" "$off" '' |
		head -c 4096 > "$IMG/pat"
}
dm_table "$M"
bad=() checked=0
for k in $(seq 0 $((M - 1))); do
	for end in first last; do
		block "$k" "$end"
		dd if="$IMG/pat" of=/dev/mapper/fwdc bs=4096 seek=$((off / 8)) \
			oflag=direct conv=notrunc status=none ||
			bad+=("write of node $k $end block failed")
		checked=$((checked + 1))
	done
done
sync
for k in $(seq 0 $((M - 1))); do
	for end in first last; do
		block "$k" "$end"
		cmp -s "$IMG/pat" <(dd if="$IMG/node$k.img" bs=4096 skip=$((ioff / 8)) count=1 status=none) ||
			bad+=("node $k's image lacks its $end block at sector $ioff")
		cmp -s "$IMG/pat" <(dd if=/dev/mapper/fwdc bs=4096 skip=$((off / 8)) count=1 iflag=direct status=none) ||
			bad+=("reading back node $k's $end block through the master failed")
	done
done
{
	printf '{"nodes": %d, "sectors_per_node": %d, "checked": %d, "errors": [' "$M" "$L" "$checked"
	sep=
	for e in "${bad[@]}"; do printf '%s"%s"' "$sep" "$(json_text "$e")"; sep=', '; done
	printf ']}\n'
} > "$out/mapping.json"
echo "# mapping: $checked blocks written through the master, ${#bad[@]} misplaced"

# ------------------------------------------------------------------ runs
cur_n=$M
while read -r id n b sched; do
	dir=$out/runs/$id
	rm -rf "$dir"
	mkdir -p "$dir"
	status=ok err=
	[ "$n" = "$cur_n" ] || { dm_table "$n"; cur_n=$n; }
	for k in $(seq 0 $((n - 1))); do
		node_sched "nbd$k" "$sched" 2>> "$dir/sched.err" ||
			{ status=failed err="nbd$k: $(tail -n 1 "$dir/sched.err")"; break; }
	done
	# node_sched read the depth back on every node
	depth=null
	[ "$sched" != fwdsched ] || [ "$status" != ok ] || depth=$C_FWD_DEPTH
	start=$EPOCHREALTIME
	if [ "$status" = ok ]; then
		snapshot "$dir" before "$n"
		fio_nodes "$n" "$b" "$C_RUNTIME" "$dir/fio.json" > "$dir/fio.log" 2>&1 ||
			{ status=failed err="fio failed: $(tail -n 2 "$dir/fio.log")"; }
		snapshot "$dir" after "$n"
	fi
	printf '{"id": "%s", "status": "%s", "error": "%s", "start": %s, "end": %s, "scheduler_read": "%s", "dispatch_depth": %s}\n' \
		"$id" "$status" "$(json_text "$err")" "$start" "$EPOCHREALTIME" \
		"$(cur_sched nbd0)" "$depth" > "$dir/run.json"
	echo "# run $id: $status"
done < <($CP runs "$plan")

# ---------------------------------------------------------- failure case
# The last node of the largest cluster loses its link a third of the way
# into a run: its reads must fail (EIO) within the NBD timeout and a
# bound, the other nodes' reads go on, and nothing hangs.
fd=$out/failure
mkdir -p "$fd"
dm_table "$F_NODES"
fsched=ok
for k in $(seq 0 $((F_NODES - 1))); do
	node_sched "nbd$k" "$F_SCHED" 2>> "$fd/sched.err" || fsched=failed
done
fstart=$EPOCHREALTIME
fio_nodes "$F_NODES" "$F_BATCH" "$F_RUNTIME" "$fd/fio.json" > "$fd/fio.log" 2>&1 &
fpid=$!
sleep "$F_DOWN_AT"
down=$EPOCHREALTIME
ip -n "$MNS" link set "m$F_NODE" down
wait "$fpid"
frc=$?
fend=$EPOCHREALTIME
# the failed node's device afterwards: a read must fail, not hang
s=$EPOCHREALTIME
timeout -k 5 60 dd if="/dev/nbd$F_NODE" of=/dev/null bs=4096 count=1 iflag=direct status=none \
	2> "$fd/dd.err"
ddrc=$?
dde=$EPOCHREALTIME
printf '{"sched": "%s", "sched_set": "%s", "start": %s, "down": %s, "end": %s, "fio_exit": %d, "node": %d, "nodes": %d, "timeout": %d, "runtime": %d, "read_after_exit": %d, "read_after_s": %s, "read_after_error": "%s"}\n' \
	"$F_SCHED" "$fsched" "$fstart" "$down" "$fend" "$frc" "$F_NODE" "$F_NODES" "$F_TIMEOUT" "$F_RUNTIME" \
	"$ddrc" "$(since "$s" "$dde")" "$(json_text "$(head -c 200 "$fd/dd.err")")" > "$fd/failure.json"
dmesg | grep -i nbd | tail -n 20 > "$fd/dmesg-nbd.txt"
echo "# failure: fio exited $frc $(since "$down" "$fend") s after the link went down"
# the link comes back, so that the node's server sees its client leave
ip -n "$MNS" link set "m$F_NODE" up

# -------------------------------------------------------------- teardown
steps=()
step() {
	local name=$1 rc s=$EPOCHREALTIME
	shift
	timeout -k 5 60 "$@" > /dev/null 2>&1
	rc=$?
	steps+=("{\"step\": \"$name\", \"exit\": $rc, \"s\": $(since "$s")}")
}
step dmsetup-remove dmsetup remove fwdc
for k in $(seq 0 $((M - 1))); do
	step "nbd-client-d-$k" nbd-client -d "/dev/nbd$k"
done
# every server must end on SIGTERM within 20 s; "exit" counts those that
# had to be killed
kill "${srv[@]}" 2>/dev/null
s=$EPOCHREALTIME
for _ in $(seq 200); do
	alive=()
	for p in "${srv[@]}"; do kill -0 "$p" 2>/dev/null && alive+=("$p"); done
	[ ${#alive[@]} -eq 0 ] && break
	sleep 0.1
done
[ ${#alive[@]} -eq 0 ] || kill -KILL "${alive[@]}"
steps+=("{\"step\": \"nbdkit-exit\", \"exit\": ${#alive[@]}, \"s\": $(since "$s")}")
for k in $(seq 0 $((M - 1))); do
	step "netns-del-$k" ip netns del "fwdc-n$k"
done
step netns-del-master ip netns del "$MNS"
left=$(ip netns list | grep -c '^fwdc-')
conn=0
for k in $(seq 0 $((M - 1))); do
	[ "$(cat "/sys/block/nbd$k/size")" = 0 ] || conn=$((conn + 1))
done
{
	printf '{"steps": ['
	(IFS=,; printf '%s' "${steps[*]}")
	printf '], "namespaces_left": %d, "nbd_still_connected": %d, "dm_left": %d}\n' \
		"$left" "$conn" "$(dmsetup ls 2>/dev/null | grep -c '^fwdc')"
} > "$out/teardown.json"
rm -rf "$IMG"
echo "# teardown: $left namespaces left, $conn NBD devices still connected"
exit 0
