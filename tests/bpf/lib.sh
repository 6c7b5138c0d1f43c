# Helpers of the shell BPF tests (sourced): TAP-like checks, free ports.
pass=0 fail=0
check() { # check DESCRIPTION COMMAND...
	local d=$1; shift
	if "$@"; then echo "ok - $d"; pass=$((pass + 1)); else echo "not ok - $d"; fail=$((fail + 1)); fi
}
if [ "$(id -u)" -ne 0 ]; then
	echo "SKIP: the daemon's tests need root$([ "${CI:-}" = true ] && echo ' (under CI=true this is a failure)')"
	exit 77
fi
pids=()	# background processes of the test, ended by stop_pids
stop_pids() {
	local p
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done
}
prog_ids_of() { # prog_ids_of PID: the BPF programs its fds hold
	grep -h '^prog_id:' /proc/"$1"/fdinfo/* 2>/dev/null | awk '{print $2}' | sort -un
}
# gone "IDS": none of these programs is loaded 1 s after their process exited (and
# there were some); the kernel frees a program a few ms after its last fd closes
gone() {
	local id i
	[ -n "$1" ] || { echo "  no program ids recorded"; return 1; }
	for id in $1; do
		for i in $(seq 100); do
			bpftool prog show id "$id" >/dev/null 2>&1 || continue 2
			sleep 0.01
		done
		echo "  program $id is still loaded:"; bpftool prog show id "$id"; return 1
	done
}
free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
until_true() { # until_true SECONDS COMMAND...: poll every 0.1 s
	local i n=$(( $1 * 10 )); shift
	for i in $(seq "$n"); do "$@" && return 0; sleep 0.1; done
	return 1
}
# remove_tree ROOT DIR: the processes left in the cgroup tree DIR moved to the hierarchy's
# ROOT, the tree removed deepest first
remove_tree() {
	[ -n "$2" ] && [ -d "$2" ] || return 0
	find "$2" -name cgroup.procs -exec sh -c 'for p in $(cat "$1"); do echo $p > "$2/cgroup.procs"; done' _ {} "$1" \; 2>/dev/null
	find "$2" -depth -type d -exec rmdir {} \; 2>/dev/null
}
metric() { # metric FILE SERIES: its value
	awk -v s="$2" 'index($0, s " ") == 1 { print $NF }' "$1"
}
