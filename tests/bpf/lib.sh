# Helpers of the shell BPF tests (sourced): TAP-like checks, free ports.
pass=0 fail=0
check() { # check DESCRIPTION COMMAND...
	local d=$1; shift
	if "$@"; then echo "ok - $d"; pass=$((pass + 1)); else echo "not ok - $d"; fail=$((fail + 1)); fi
}
if [ "$(id -u)" -ne 0 ]; then echo "SKIP: needs root"; exit 77; fi
pids=()	# background processes of the test, ended by stop_pids
stop_pids() {
	local p
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done
}
free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
