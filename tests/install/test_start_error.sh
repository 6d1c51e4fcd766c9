#!/usr/bin/env bash
# A daemon that cannot start says why once, detached or not (issue 17: the
# detached daemons printed it twice, once from the parent and once logged
# by the child on the same stderr). Exit status 1 both ways.
#
#   test_start_error.sh VIGILD VIGIL_TXD
set -euo pipefail
vigild=$1
txd=$2
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
failures=0

# Runs the daemon; its stderr must hold exactly one line with `what`.
expect_one() {
	local label=$1 what=$2
	shift 2
	local status=0
	"$@" >"$scratch/out" 2>"$scratch/err" </dev/null || status=$?
	local lines
	lines=$(grep -cF -- "$what" "$scratch/err" || true)
	if [ "$status" -ne 1 ] || [ "$lines" -ne 1 ]; then
		echo "FAIL: $label: exit $status (want 1), $lines lines with '$what' (want 1):" >&2
		sed 's/^/    /' "$scratch/err" >&2
		failures=$((failures + 1))
	else
		echo "ok: $label: $(cat "$scratch/err")"
	fi
}

# vigil-txd: a network endpoint without CURVE keys is refused.
printf '[txd]\nbind = tcp://192.0.2.1:5701\n[warehouse]\nconninfo = host=%s/nowhere\n' \
	"$scratch" >"$scratch/txd.conf"
for mode in detached foreground; do
	flag=()
	[ "$mode" = foreground ] && flag=(--foreground)
	expect_one "vigil-txd $mode, bad bind" "tcp://192.0.2.1:5701" \
		"$txd" "${flag[@]}" --config "$scratch/txd.conf"
done

# vigild: a socket whose folder is a file cannot be bound.
touch "$scratch/file"
printf '[daemon]\nproviders = loadavg\n' >"$scratch/vigild.conf"
for mode in detached foreground; do
	flag=()
	[ "$mode" = foreground ] && flag=(--foreground)
	expect_one "vigild $mode, socket under a file" "socket's folder $scratch/file" \
		"$vigild" "${flag[@]}" --config "$scratch/vigild.conf" --socket "$scratch/file/vigild.sock"
done

# A mistyped socket path: vigild makes the socket's own folder, never its
# parents.
# (A vigild that did start would serve on: the timeout ends it, exit 124.)
expect_one "vigild, socket two missing folders deep" "socket's folder $scratch/typo/vigil" \
	timeout 20 "$vigild" --foreground --config "$scratch/vigild.conf" --socket "$scratch/typo/vigil/vigild.sock"
if [ -e "$scratch/typo" ]; then
	echo "FAIL: vigild made $scratch/typo for a socket two missing folders deep" >&2
	failures=$((failures + 1))
fi

if [ "$failures" -ne 0 ]; then
	echo "$((6 - failures)) passed, $failures failed"
	exit 1
fi
echo "6 passed, 0 failed"
