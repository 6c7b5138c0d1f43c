# More helpers of the shell BPF tests, on top of tests/bpf/lib.sh (check, the
# root requirement, $pids and stop_pids, free_port); sourced from the project root.
. tests/bpf/lib.sh

summary() { # summary NAME: the counts, and the exit status
	echo "$1: $pass passed, $fail failed"
	[ $fail -eq 0 ]
}

cpu_root() { # the hierarchy carrying the cpu controller, as the collector finds it
	build/koord-interference -d 0.1 --json 2>/dev/null |
		python3 -c 'import json,sys; print(json.load(sys.stdin)["hierarchy"]["root"])'
}

remove_tree() { # remove_tree DIR ROOT: move what still runs in DIR to ROOT, remove DIR deepest first
	[ -n "$1" ] && [ -d "$1" ] || return 0
	find "$1" -name cgroup.procs -exec sh -c 'for p in $(cat "$1"); do echo $p > "$2/cgroup.procs"; done' _ {} "$2" \; 2>/dev/null
	find "$1" -depth -type d -exec rmdir {} \; 2>/dev/null
}

wait_healthy() { # wait_healthy PORT: until /healthz says ok (30 s at most)
	local i
	for i in $(seq 300); do
		[ "$(curl -s --max-time 2 "http://127.0.0.1:$1/healthz")" = ok ] && return 0
		sleep 0.1
	done
	return 1
}

stop_clean() { # stop_clean PID LOG: SIGTERM; it must exit 0 with no error or warning logged
	local rc
	kill -TERM "$1"
	wait "$1"
	rc=$?
	check "SIGTERM: exit 0 ($rc)" [ $rc -eq 0 ]
	check "no error or warning in its log" bash -c "! grep -E 'error|warning' '$2'"
}

# At exit: what the test started ($pids) is killed, its cgroup tree ($cgdir
# below $root) and $tmp removed.
cgdir= root= tmp=
cleanup() {
	# a forked child that got a signal before its exec runs the traps too: not here
	[ "$BASHPID" = "$$" ] || exit 1
	stop_pids
	remove_tree "$cgdir" "$root"
	[ -n "$tmp" ] && rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

find_root() { # $root: the cpu hierarchy, or the test ends
	root=$(cpu_root)
	[ -d "$root" ] || { echo "no cpu cgroup hierarchy found"; exit 1; }
}

start_daemon() { # start_daemon LOG ARGS...: build/koord-bpf on $port (a free one), until healthy
	local log=$1
	shift
	port=$(free_port)
	build/koord-bpf --listen 127.0.0.1:$port "$@" 2>"$log" &
	daemon=$!
	pids+=($daemon)
	check "the daemon runs" wait_healthy $port
}
