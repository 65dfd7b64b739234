#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tools/guest/bench.sh <results dir> <boot id>
#
# The guest half of tools/bench: executes the runs of one boot of
# <results dir>/plan.json (tools/analysis/benchplan.py) in the plan's
# order and records raw data per run id under <results dir>/runs/<id>/, as
# each run's "record" asks:
#
#   run.json               status (ok, failed), error, start and end
#                          (unix s), the scheduler and tunables read back
#   fio.json, fio.log      fio's JSON (json+) and messages; for a start-up
#                          run the foreground's, and bg.json, bg.log the
#                          background's, window.json its window, app.json
#                          the real program's start-up (appstart.py)
#   card-before.json, card-after.json
#                          the flash card's totals (its control window,
#                          read with O_DIRECT outside the trace)
#   diskstats-before.txt, diskstats-after.txt   the disk's /proc/diskstats
#   blk.txt                blkparse text (tools/lib/guest.sh blktrace_*)
#   mmc-history.txt        the MMC history, when mmc_history.ko is built
#   debugfs-stats.txt, debugfs-procs.txt
#                          fwdsched's debugfs, when the scheduler is fwdsched
#                          and the files exist
#   fairness.txt           Jain's index over the processes of
#                          debugfs-procs.txt (tools/fwdtop --once); over
#                          threads add --blktrace blk.txt, on the host
#
# and <results dir>/boots/<boot id>/guest.json (kernel, fio, the card's
# transport, and per disk its queue as the guest found it: hardware
# queues, tags, nr_requests, largest request, default scheduler), and
# app-prepare.json when the boot's start-up runs start the real program
# (its file system on the card is made once a boot, tools/guest/appstart.py).
# On UFS the disk is the one vm-init names in FWD_UFS_DISK.  A run
# that fails is recorded as failed and the next one runs.  BENCH_LATER_S
# (seconds planned for the boots after this one) goes into the time left
# that each run prints.  With BENCH_RESUME set (tools/bench --resume, or
# its second boot after a guest died), runs already recorded ok are kept
# and skipped.
set -uo pipefail

# shellcheck source=tools/lib/guest.sh
. "$(dirname "$0")/../lib/guest.sh"
[ $# -eq 2 ] || die "usage: bench.sh <results dir> <boot id>"
out=$(cd "$1" && pwd) || die "no results directory $1"
boot=$2
ufs_disk=${FWD_UFS_DISK:-$(cat /run/fwdsched-ufs-disk 2>/dev/null)}
# shellcheck disable=SC2086
defs=$("$FWD_PY" "$FWD_ROOT/tools/guest/benchrun.py" shell "$out/plan.json" "$boot" \
	$ufs_disk) || die "cannot read the plan"
B_N=0 B_DISKS='' B_TRANSPORT='' B_APPSTART='' B_APPSIZE='' B_APPMODS=''
declare -a R_ID R_LABEL R_KIND R_DISK R_SCHED R_TUN R_REC R_JOB R_ARGS \
	R_RUNTIME R_REPLAY R_BGJOB R_BGARGS R_BGRUNTIME R_WARMUP R_WINDOW \
	R_DIRTYBG R_DIRTY R_APPLIMIT R_EST R_BEFORE R_AFTER
eval "$defs"
rel=$(uname -r)
bdir=$out/boots/$boot
mkdir -p "$bdir" "$out/runs"

lsmod | grep -q '^fwdsched ' || insmod "$FWD_ROOT/build/$rel/fwdsched.ko" ||
	die "cannot load build/$rel/fwdsched.ko"
for m in kyber-iosched bfq; do modprobe -q "$m"; done
# the mq-deadline-wrap arm, where tools/setup/build-ko made it
wrap=$FWD_ROOT/build/$rel/mq-deadline-wrap.ko
[ ! -e "$wrap" ] || lsmod | grep -q '^mq_deadline_wrap ' || insmod "$wrap" ||
	die "cannot load $wrap"

# The disks: "key:name:kind[:attr=value,...]".
hist='' card='' qinfo=''
declare -A disk_kind
for d in $B_DISKS; do
	IFS=: read -r key name kind attrs <<< "$d"
	disk_kind[$name]=$kind
	[ "$key" != card ] || card=$name
	case $kind in
	null_blk)
		# shellcheck disable=SC2086
		nullb_create "$name" ${attrs//,/ } || die "cannot make null_blk $name" ;;
	mmc)
		if [ -e "$FWD_ROOT/build/$rel/mmc_history.ko" ]; then
			lsmod | grep -q '^mmc_history ' ||
				insmod "$FWD_ROOT/build/$rel/mmc_history.ko" ring_size=262144
			[ -e /sys/kernel/debug/mmc_history/control ] &&
				hist=/sys/kernel/debug/mmc_history
		fi ;;
	esac
	[ -b "/dev/$name" ] || die "no /dev/$name"
	# the queue as the guest found it (on UFS: 31 tags, one hardware queue)
	q=/sys/block/$name
	qinfo="$qinfo${qinfo:+, }$(printf '"%s": {"kind": "%s", "hw_queues": %s, "tags": %s, "nr_requests": %s, "max_sectors_kb": %s, "scheduler": "%s"}' \
		"$name" "$kind" "$(find "$q/mq" -mindepth 1 -maxdepth 1 -type d | wc -l)" \
		"$(cat "$q/mq/0/nr_tags" 2>/dev/null || echo null)" \
		"$(cat "$q/queue/nr_requests")" "$(cat "$q/queue/max_sectors_kb")" \
		"$(cur_sched "$name")")"
done
printf '{"boot": "%s", "uname": "%s", "fio": "%s", "cpus": %d, "mmc_history": %s, "transport": "%s", "disks": {%s}, "start": %s}\n' \
	"$boot" "$rel" "$(fio --version)" "$(nproc)" \
	"$([ -n "$hist" ] && echo true || echo false)" "$B_TRANSPORT" "$qinfo" \
	"$EPOCHREALTIME" > "$bdir/guest.json"

# The real program's file system on the card, once a boot, and how to
# start it (APP_CMD, APP_ENV: tools/guest/appstart.py); when it cannot be
# made, every start-up run that starts the program fails, saying why.
appmnt=/tmp/fwd-app app_err='' APP_PART=''
declare -a APP_CMD APP_ENV
if [ -n "$B_APPSTART" ]; then
	echo "[bench] $boot: making the real program's file system on $card"
	if "$FWD_PY" "$FWD_ROOT/tools/guest/appstart.py" prepare "$card" "$B_APPSTART" \
		"$B_APPSIZE" "$appmnt" "$B_APPMODS" "$bdir/app-prepare.json" 2> "$bdir/app-prepare.err" &&
	   app_defs=$("$FWD_PY" "$FWD_ROOT/tools/guest/appstart.py" command "$appmnt" \
		"$B_APPMODS" 2>> "$bdir/app-prepare.err"); then
		eval "$app_defs"
		APP_PART=$("$FWD_PY" "$FWD_ROOT/tools/guest/appstart.py" partition-name "$card")
	else
		app_err="the real program's file system: $(tail -n 2 "$bdir/app-prepare.err")"
		echo "[bench] $boot: $app_err"
	fi
fi

# app_run <limit s> <json>: the real program's cold start: its file system
# unmounted, the caches dropped, mounted read-only afresh, then the
# program, timed from its fork to its exit, killed at <limit s> (status
# "limit": it took at least that long).  Records the partition's
# /proc/diskstats before and after (its reads are the program's).
app_run() {
	local limit=$1 out=$2 pid wd ended rc t_m t0 t1 ds0 ds1 status errf=/tmp/fwd-app.err
	umount "$appmnt" 2>/dev/null
	mkdir -p "$appmnt"
	echo 3 > /proc/sys/vm/drop_caches
	t_m=$EPOCHREALTIME
	mount -o ro -t ext4 "/dev/$APP_PART" "$appmnt" 2> "$errf" ||
		{ err="cannot mount /dev/$APP_PART: $(cat "$errf")"; return 1; }
	ds0=$(diskstats_line "$APP_PART")
	t0=$EPOCHREALTIME
	# shellcheck disable=SC2046
	(cd "$appmnt" && unset $(compgen -e) && export "${APP_ENV[@]}" &&
		exec "${APP_CMD[@]}") > /dev/null 2> "$errf" &
	pid=$!
	sleep "$limit" &
	wd=$!
	wait -n -p ended "$pid" "$wd"
	rc=$?
	t1=$EPOCHREALTIME
	if [ "$ended" = "$pid" ]; then
		kill "$wd" 2>/dev/null
		wait "$wd" 2>/dev/null
		status="done"
		[ "$rc" -eq 0 ] || status=failed
	else
		kill -KILL "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
		status=limit rc=null
	fi
	ds1=$(diskstats_line "$APP_PART")
	umount "$appmnt"
	printf '{"partition": "%s", "limit_s": %s, "status": "%s", "rc": %s,\n "elapsed_s": %s, "mount_s": %s, "t_start": %s, "t_end": %s,\n "stderr": "%s",\n "diskstats_start": "%s",\n "diskstats_end": "%s"}\n' \
		"$APP_PART" "$limit" "$status" "$rc" \
		"$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.4f", b - a }')" \
		"$(awk -v a="$t_m" -v b="$t0" 'BEGIN { printf "%.4f", b - a }')" "$t0" "$t1" \
		"$(json_text "$(tail -c 400 "$errf")")" "$(echo $ds0)" "$(echo $ds1)" > "$out"
	[ "$status" != failed ] || { err="the real program failed (exit $rc): $(tail -c 200 "$errf")"; return 1; }
}

diskstats_line() { awk -v d="$1" '$3 == d' /proc/diskstats; }

# secs_until <t0> <seconds>: how long from now until t0 + seconds (>= 0)
secs_until() {
	awk -v t0="$1" -v s="$2" -v now="$EPOCHREALTIME" \
		'BEGIN { d = t0 + s - now; printf "%.3f", (d > 0 ? d : 0) }'
}

# vm_dirty save|set <background bytes> <bytes>|restore
vm_dirty() {
	local k
	case $1 in
	save)
		for k in dirty_background_bytes dirty_bytes dirty_background_ratio dirty_ratio; do
			eval "saved_$k=\$(cat /proc/sys/vm/$k)"
		done ;;
	set)
		echo "$2" > /proc/sys/vm/dirty_background_bytes
		echo "$3" > /proc/sys/vm/dirty_bytes ;;
	restore)
		# writing one of a bytes/ratio pair zeroes the other: write the
		# one that was set
		# shellcheck disable=SC2154
		if [ "$saved_dirty_background_bytes" != 0 ]; then
			echo "$saved_dirty_background_bytes" > /proc/sys/vm/dirty_background_bytes
		else
			echo "$saved_dirty_background_ratio" > /proc/sys/vm/dirty_background_ratio
		fi
		# shellcheck disable=SC2154
		if [ "$saved_dirty_bytes" != 0 ]; then
			echo "$saved_dirty_bytes" > /proc/sys/vm/dirty_bytes
		else
			echo "$saved_dirty_ratio" > /proc/sys/vm/dirty_ratio
		fi ;;
	esac
}

# startup <i> <dir>: the start-up run: the background (if any) starts,
# WARMUP s later the synthetic foreground (a fixed window of reads), then
# the real program's cold start (if the run has one); the background's
# window opens with the foreground and closes WINDOW s later or when the
# real program ends, whichever is later.
startup() {
	local i=$1 dir=$2 disk=${R_DISK[$1]} bg=${R_BGJOB[$1]} bgpid="" t0 t1 t2 ds0 ds1 rc=0
	if [ -n "$bg" ]; then
		if [ -n "${R_DIRTY[$i]}" ]; then
			vm_dirty save
			vm_dirty set "${R_DIRTYBG[$i]}" "${R_DIRTY[$i]}"
		fi
		# shellcheck disable=SC2086
		(cd "$FWD_ROOT" && FWD_RUNTIME=${R_BGRUNTIME[$i]} exec fio \
			--output-format=json+ --output="$dir/bg.json" "fio-jobs/$bg.fio" \
			--filename="/dev/$disk" ${R_BGARGS[$i]} > "$dir/bg.log" 2>&1) &
		bgpid=$!
		sleep "${R_WARMUP[$i]}"
		kill -0 "$bgpid" 2>/dev/null || { err="the background ended early"; rc=1; }
	fi
	t0=$EPOCHREALTIME
	ds0=$(diskstats_line "$disk")
	# shellcheck disable=SC2086
	(FWD_RUNTIME=${R_RUNTIME[$i]} run_fio "$disk" "${R_JOB[$i]}" "$dir/fio" \
		--filename="/dev/$disk" ${R_ARGS[$i]}) || { err="fio failed"; rc=1; }
	t1=$EPOCHREALTIME
	if [ -n "${R_APPLIMIT[$i]}" ]; then
		if [ -n "$app_err" ]; then
			err=$app_err rc=1
		else
			app_run "${R_APPLIMIT[$i]}" "$dir/app.json" || rc=1
		fi
	fi
	[ -n "$bg" ] || return "$rc"
	sleep "$(secs_until "$t0" "${R_WINDOW[$i]}")"
	t2=$EPOCHREALTIME
	ds1=$(diskstats_line "$disk")
	kill -INT "$bgpid" 2>/dev/null
	wait "$bgpid"
	sed -i -n '/^{/,$p' "$dir/bg.json"
	sync
	[ -z "${R_DIRTY[$i]}" ] || vm_dirty restore
	printf '{"warmup_s": %s, "window_s": %s, "t_start": %s, "fg_end": %s, "t_end": %s,\n "diskstats_start": "%s",\n "diskstats_end": "%s"}\n' \
		"${R_WARMUP[$i]}" "${R_WINDOW[$i]}" "$t0" "$t1" "$t2" \
		"$(echo $ds0)" "$(echo $ds1)" > "$dir/window.json"
	return "$rc"
}

# run_one <i>: run i of the plan, recorded into runs/<id>/.
run_one() {
	local i=$1 id=${R_ID[$1]} disk=${R_DISK[$1]} sched=${R_SCHED[$1]}
	local dir=$out/runs/${R_ID[$1]} rec=" ${R_REC[$1]} " t name val tread="" start
	local status=ok sd dropped=0
	err=
	rm -rf "$dir"
	mkdir -p "$dir"
	start=$EPOCHREALTIME
	# Cold caches for a card's runs.  A null_blk run reads no file, and
	# would only read fio itself again over 9p: slow, and counted as the
	# guest's time where its clock counts instructions (nullb-cpu).
	if [ "${disk_kind[$disk]}" != null_blk ]; then
		sync
		echo 3 > /proc/sys/vm/drop_caches
	fi
	[[ $rec != *" card "* ]] || card_read "$disk" "$dir/card-before.json"
	if ! (fresh_sched "$disk" "$sched") 2> "$dir/sched.err"; then
		status=failed err="cannot select $sched: $(cat "$dir/sched.err")"
	fi
	for t in ${R_TUN[$i]}; do
		[ "$status" = ok ] || break
		name=${t%%=*} val=${t#*=}
		if ! echo "$val" > "$(iosched "$disk")/$name" 2> "$dir/sched.err"; then
			status=failed err="cannot set $name=$val: $(cat "$dir/sched.err")"
		fi
		tread="$tread${tread:+, }\"$name\": \"$(cat "$(iosched "$disk")/$name" 2>/dev/null)\""
	done
	rm -f "$dir/sched.err"
	if [ "$status" = ok ]; then
		[[ $rec != *" diskstats "* ]] || diskstats_line "$disk" > "$dir/diskstats-before.txt"
		[[ $rec != *" mmc_history "* ]] || [ -z "$hist" ] || echo clear > "$hist/control"
		[[ $rec != *" blktrace "* ]] || blktrace_start "$disk" "$dir/blk.txt"
		if [ "${R_KIND[$i]}" = startup ]; then
			startup "$i" "$dir" || status=failed
		else
			local extra=()
			[ "${R_REPLAY[$i]}" = 0 ] || extra=(--replay_redirect="/dev/$disk")
			# shellcheck disable=SC2086
			(FWD_RUNTIME=${R_RUNTIME[$i]} run_fio "$disk" "${R_JOB[$i]}" "$dir/fio" \
				--filename="/dev/$disk" "${extra[@]}" ${R_ARGS[$i]}) ||
				{ status=failed err="fio failed: $(tail -n 3 "$dir/fio.log" 2>/dev/null)"; }
		fi
		if [[ $rec == *" blktrace "* ]]; then
			blktrace_stop
			dropped=$BLK_DROPPED
		fi
		sd=$(schedfs "$disk")
		if [[ $rec == *" debugfs "* ]] && [ "$sched" = fwdsched ]; then
			for name in stats procs; do
				[ ! -e "$sd/$name" ] || cat "$sd/$name" > "$dir/debugfs-$name.txt"
			done
			if [ -e "$dir/debugfs-procs.txt" ]; then
				"$FWD_PY" "$FWD_ROOT/tools/fwdtop" --once \
					--procs "$dir/debugfs-procs.txt" > "$dir/fairness.txt" ||
					echo "[bench] $id: tools/fwdtop failed on debugfs-procs.txt"
			fi
		fi
		if [[ $rec == *" mmc_history "* ]] && [ -n "$hist" ] && [ -e "$hist/mmc0" ]; then
			cat "$hist/mmc0" > "$dir/mmc-history.txt"
		fi
		[[ $rec != *" diskstats "* ]] || diskstats_line "$disk" > "$dir/diskstats-after.txt"
	fi
	[[ $rec != *" card "* ]] || card_read "$disk" "$dir/card-after.json"
	printf '{"id": "%s", "status": "%s", "error": "%s", "start": %s, "end": %s,\n "scheduler_read": "%s", "tunables_read": {%s}, "blktrace_dropped": %s}\n' \
		"$id" "$status" "$(json_text "$err")" "$start" "$EPOCHREALTIME" \
		"$(cur_sched "$disk")" "$tread" "$dropped" > "$dir/run.json"
	[ "$status" = ok ] || echo "[bench] $id failed: $err"
}

t0=$EPOCHREALTIME
for i in $(seq 1 "$B_N"); do
	# time left: the plan's estimate of what is left, scaled by how the
	# estimate has fared so far in this boot
	left=$(awk -v t0="$t0" -v now="$EPOCHREALTIME" \
		-v done="${R_BEFORE[$i]}" -v rest="$(( R_EST[i] + R_AFTER[i] ))" \
		-v later="${BENCH_LATER_S:-0}" 'BEGIN {
			f = (done > 60) ? (now - t0) / done : 1
			printf "%d", (rest + later) * f / 60 + 0.5 }')
	printf '[bench] %s: run %d/%d, %s (elapsed %d s, about %d min left)\n' \
		"$boot" "$i" "$B_N" "${R_LABEL[$i]}" \
		"$(awk -v t0="$t0" -v n="$EPOCHREALTIME" 'BEGIN { printf "%d", n - t0 }')" "$left"
	if [ -n "${BENCH_RESUME:-}" ] &&
	   grep -qs '"status": "ok"' "$out/runs/${R_ID[$i]}/run.json"; then
		echo "[bench] ${R_ID[$i]}: recorded by an earlier boot, kept"
		continue
	fi
	run_one "$i"
done
sed -i "s/}\$/, \"end\": $EPOCHREALTIME}/" "$bdir/guest.json"
echo "[bench] $boot: done in $(awk -v t0="$t0" -v n="$EPOCHREALTIME" 'BEGIN { printf "%d", n - t0 }') s"
