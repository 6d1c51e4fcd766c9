#!/usr/bin/env bash
# The install, used from the installed files only (issue 17).
#
# `meson install --destdir` of this build, its prefix then moved to a fresh
# folder (so every lookup has to be relative to the programs, as a moved or
# packaged prefix needs), and run in a private mount namespace where the
# source tree and the build tree are empty folders (tmpfs over them), so
# that nothing can be read from them: a private PostgreSQL, vigil-txd,
# vigild, `vigil run` of dd, `vigil report` of it from the warehouse,
# vigil-web's API and a static file, a program compiled against the
# installed header and vigil.pc, (with MPI) `vigil run` under mpirun, and
# (with Slurm) tests/slurm's harness given only installed files: `vigil
# run` under srun, the SPANK plugin and the Prolog/Epilog scripts.
# Also: each installed header compiles alone and every function it
# declares is exported by an installed library; the systemd units pass
# `systemd-analyze verify` and start the installed programs.
#
# Why not a second `meson setup` into a temporary prefix: it would compile
# everything again (minutes on two cores), and would prove less: with the
# prefix moved, a lookup through a path compiled in finds nothing.
#
# Environment (tests/install/meson.build): VIGIL_BUILD_DIR,
# VIGIL_SOURCE_DIR, VIGIL_PREFIX and the install folders relative to it
# (VIGIL_BINDIR, VIGIL_SBINDIR, VIGIL_LIBDIR, VIGIL_DATADIR,
# VIGIL_SYSCONFDIR, VIGIL_INCLUDEDIR), VIGIL_UNIT_DIR (absolute),
# VIGIL_WITH_MPI (1 when the preload library wraps MPI-IO),
# VIGIL_WITH_LIBSYSTEMD (1 when the daemons were built with sd_notify),
# VIGIL_TEST_SLURM (tests/slurm's program, when built).
set -euo pipefail

fail() {
	echo "FAIL: $*" >&2
	exit 1
}
for var in VIGIL_BUILD_DIR VIGIL_SOURCE_DIR VIGIL_PREFIX VIGIL_BINDIR VIGIL_SBINDIR \
	VIGIL_LIBDIR VIGIL_DATADIR VIGIL_SYSCONFDIR VIGIL_INCLUDEDIR VIGIL_UNIT_DIR; do
	[ -n "${!var:-}" ] || fail "$var is not set (run through meson test)"
done

# ---- outside the namespace: install, move the prefix, and enter ------------
if [ -z "${VIGIL_INSTALL_INSIDE:-}" ]; then
	# The private mount namespace needs root (or user namespaces).
	if [ "$(id -u)" -eq 0 ]; then
		unshare_args=(--mount --propagation private)
	else
		unshare_args=(--mount --map-root-user --propagation private)
	fi
	if ! unshare "${unshare_args[@]}" true 2>/dev/null; then
		why="cannot make a private mount namespace (unshare ${unshare_args[*]}) to hide the build tree"
		# Under CI a test never skips.
		[ -z "${CI:-}" ] || fail "$why (CI must run this test)"
		echo "SKIP: $why" >&2
		exit 77
	fi
	scratch=$(mktemp -d "${TMPDIR:-/tmp}/vigil-install.XXXXXX")
	case "$scratch/" in
	"$(realpath "$VIGIL_SOURCE_DIR")"/* | "$(realpath "$VIGIL_BUILD_DIR")"/*)
		fail "the temporary folder $scratch is inside the tree this test hides"
		;;
	esac
	chmod 755 "$scratch" # the postgres user enters it
	cleanup() {
		for pid_file in "$scratch"/*.pid; do
			if [ -f "$pid_file" ]; then kill -TERM "$(cat "$pid_file")" 2>/dev/null || true; fi
		done
		"$scratch/pg-private" stop "$scratch/pg" >/dev/null 2>&1 || true
		rm -rf "$scratch"
	}
	trap cleanup EXIT

	meson install -C "$VIGIL_BUILD_DIR" --no-rebuild --quiet --destdir "$scratch/stage" \
		>"$scratch/install.log" 2>&1 || {
		cat "$scratch/install.log" >&2
		fail "meson install --destdir failed"
	}
	# The prefix, moved: nothing compiled in points here.
	cp -a "$scratch/stage$VIGIL_PREFIX" "$scratch/root"
	cp -a "$scratch/stage$VIGIL_UNIT_DIR" "$scratch/units"
	# A SYSCONFDIR outside the prefix (/etc for the prefix /usr) moves along.
	case "$VIGIL_SYSCONFDIR" in
	/*)
		mkdir -p "$scratch/root/etc"
		cp -a "$scratch/stage$VIGIL_SYSCONFDIR/vigil" "$scratch/root/etc/vigil"
		export VIGIL_SYSCONFDIR=etc
		;;
	esac
	cp "$VIGIL_SOURCE_DIR/tools/pg-private" "$scratch/pg-private"
	cp "$VIGIL_SOURCE_DIR/tests/install/notify_check.py" "$scratch/notify_check.py"
	# The Slurm harness's program (tests/slurm/test_slurm.c) too, when built.
	if [ -n "${VIGIL_TEST_SLURM:-}" ]; then cp "$VIGIL_TEST_SLURM" "$scratch/test-slurm"; fi
	# The script too is in the hidden tree: a copy runs inside.
	cp "$0" "$scratch/test_install.sh"
	status=0
	VIGIL_INSTALL_INSIDE=$scratch \
		VIGIL_HIDDEN="$(realpath "$VIGIL_BUILD_DIR") $(realpath "$VIGIL_SOURCE_DIR")" \
		unshare "${unshare_args[@]}" bash -c '
			set -e
			for dir in $VIGIL_HIDDEN; do
				if [ -d "$dir" ]; then mount -t tmpfs -o size=1m,mode=0755 vigil-hidden "$dir"; fi
			done
			exec bash "$0"
		' "$scratch/test_install.sh" || status=$?
	exit "$status"
fi

# ---- inside: the source and build trees are empty -------------------------
scratch=$VIGIL_INSTALL_INSIDE
root=$scratch/root
cd "$scratch" # meson test started us in the build tree, now gone
for dir in $VIGIL_HIDDEN; do
	# (the build tree gone with the source tree when it is inside it)
	[ ! -e "$dir" ] || [ -z "$(ls -A "$dir")" ] || fail "$dir is not hidden"
done
# Nothing from the environment may point the programs anywhere.
unset VIGIL_PRELOAD_LIB VIGIL_PLUGIN_DIR VIGIL_CONFIG VIGIL_SOCKET VIGIL_REPORT LD_LIBRARY_PATH \
	LD_PRELOAD PKG_CONFIG_PATH
export LC_ALL=C
vigil=$root/$VIGIL_BINDIR/vigil
sbin=$root/$VIGIL_SBINDIR
include=$root/$VIGIL_INCLUDEDIR
libdir=$root/$VIGIL_LIBDIR
steps_done=0
step() {
	echo "== $*"
	steps_done=$((steps_done + 1))
}

step "the layout"
for file in "$VIGIL_BINDIR/vigil" "$VIGIL_SBINDIR/vigild" "$VIGIL_SBINDIR/vigil-txd" \
	"$VIGIL_SBINDIR/vigil-web" "$VIGIL_LIBDIR/vigil/libvigil-preload.so" \
	"$VIGIL_LIBDIR/vigil/plugins/provider-procstat.so" \
	"$VIGIL_DATADIR/vigil/schema/0001_warehouse.sql" \
	"$VIGIL_DATADIR/vigil/web/static/index.html" "$VIGIL_DATADIR/vigil/vigil.conf.example" \
	"$VIGIL_SYSCONFDIR/vigil/vigil.conf" "$VIGIL_INCLUDEDIR/vigil/vigil.h" \
	"$VIGIL_LIBDIR/pkgconfig/vigil.pc" "$VIGIL_LIBDIR/pkgconfig/vigil-plugin.pc"; do
	[ -f "$root/$file" ] || fail "PREFIX/$file is not installed"
done
# The libraries the programs load are the moved prefix's.
for program in "$vigil" "$sbin/vigild" "$sbin/vigil-txd" "$sbin/vigil-web"; do
	lib=$(ldd "$program" | sed -n 's/^[[:space:]]*libvigil\.so\.0 => \([^ ]*\) .*/\1/p')
	[ -n "$lib" ] && [ "$(realpath "$lib")" = "$(realpath "$libdir/libvigil.so.0")" ] ||
		fail "$program loads libvigil from '$lib', not from the moved prefix"
done
"$vigil" config check --config "$root/$VIGIL_SYSCONFDIR/vigil/vigil.conf" >"$scratch/check.out" 2>&1 ||
	fail "the installed vigil.conf does not pass vigil config check: $(cat "$scratch/check.out")"

step "each installed header compiles alone, and an installed library exports every function it declares"
# The flags from the installed vigil-plugin.pc and vigil.pc, as a plugin or
# a program built elsewhere takes them (they find the prefix from where
# they are: pkgconfig.relocatable).
installed_pc() {
	PKG_CONFIG_PATH=$libdir/pkgconfig pkg-config "$@"
}
plugin_cflags=$(installed_pc --cflags vigil-plugin vigil)
plugin_libs=$(installed_pc --libs vigil-plugin vigil)
for header in "$include"/vigil/*.h; do
	name=vigil/$(basename "$header")
	# The names the header follows with "(", as the compiler sees it; the
	# program takes each one's address, so the link fails on any that no
	# installed library exports (one the header defines inline links too).
	# shellcheck disable=SC2086
	mapfile -t called < <(cc -E -P $plugin_cflags -x c "$header" |
		grep -oE '\bvigil_[a-z0-9_]+[[:space:]]*\(' | tr -d '( \t' | sort -u)
	{
		echo "#include \"$name\""
		echo "int main(void)"
		echo "{"
		echo "    const void *volatile p = 0;"
		for f in "${called[@]}"; do echo "    p = (const void *)&$f;"; done
		echo "    return p == 0;"
		echo "}"
	} >"$scratch/header.c"
	# shellcheck disable=SC2086
	cc -std=gnu11 -Wall -Werror $plugin_cflags "$scratch/header.c" -o "$scratch/header" \
		$plugin_libs >"$scratch/header.log" 2>&1 ||
		fail "$name: $(grep -E 'error|undefined' "$scratch/header.log" | head -5)"
	echo "   $name: ${#called[@]} functions, all exported"
done

step "a program with code regions, built with the installed vigil.pc"
cat >"$scratch/regions.c" <<'C'
#include <stdio.h>
#include <vigil/vigil.h>
int main(void)
{
    vigil_region_begin("install-region");
    FILE *f = fopen("regions.out", "w");
    fputs("regions\n", f);
    fclose(f);
    vigil_region_end("install-region");
    return 0;
}
C
pc_flags=$(installed_pc --cflags --libs vigil)
# shellcheck disable=SC2086
cc -o "$scratch/regions" "$scratch/regions.c" $pc_flags -Wl,-rpath,"$libdir"

step "the warehouse: a private PostgreSQL, and vigil-txd"
conninfo=$("$scratch/pg-private" start "$scratch/pg")
cat >"$scratch/vigil.conf" <<CONF
[daemon]
socket = $scratch/vigild.sock
cycle_ms = 200
providers = procstat;process;energy
[uplink]
endpoint = ipc://$scratch/txd.sock
spool_dir = $scratch/spool
[capture]
mode = all
sink_enabled = no
[txd]
bind = ipc://$scratch/txd.sock
[warehouse]
conninfo = $conninfo
migrate = true
[web]
listen = 127.0.0.1:0
CONF
export VIGIL_CONFIG=$scratch/vigil.conf
"$sbin/vigil-txd" --pid-file "$scratch/txd.pid" 2>>"$scratch/txd.log" ||
	fail "vigil-txd did not start: $(cat "$scratch/txd.log")"

step "vigild, with the moved prefix's plugins"
"$sbin/vigild" --pid-file "$scratch/vigild.pid" 2>>"$scratch/vigild.log" ||
	fail "vigild did not start: $(cat "$scratch/vigild.log")"
"$vigil" status >"$scratch/status.out" 2>&1 || fail "vigil status: $(cat "$scratch/status.out")"
grep -q "energy" "$scratch/status.out" ||
	fail "vigil status names no energy provider: $(cat "$scratch/status.out")"

step "vigil run of dd, and its report from the warehouse"
VIGIL_RUN_ID=install-dd "$vigil" run --report="text:$scratch/dd.txt" -- \
	dd if=/dev/zero of="$scratch/dd.out" bs=4096 count=300 status=none
grep -q "1228800" "$scratch/dd.txt" ||
	fail "dd's report does not show its 1228800 bytes: $(cat "$scratch/dd.txt")"
(cd "$scratch" && VIGIL_RUN_ID=install-regions "$vigil" run --report="text:$scratch/regions.txt" \
	-- "$scratch/regions")
grep -q "install-region" "$scratch/regions.txt" ||
	fail "the region of the program built with vigil.pc is not in its report: $(cat "$scratch/regions.txt")"
# vigild sends a process's report after its last cycle: wait (bounded)
# until the warehouse has it.
psql_at() { psql "$conninfo" -X -At -c "$1"; }
deadline=$((SECONDS + 60))
while :; do
	stored=$(psql_at "SELECT count(*) FROM run_summaries JOIN processes p USING (process_id) JOIN runs USING (run_id) WHERE run_key = 'install-dd' AND p.end_time IS NOT NULL") ||
		fail "cannot ask the warehouse for dd's report"
	[ "$stored" != 1 ] || break
	[ $SECONDS -lt $deadline ] ||
		fail "the warehouse never got dd's report; vigild: $(tail -5 "$scratch/vigild.log"); vigil-txd: $(tail -5 "$scratch/txd.log")"
	sleep 0.1 # polling a condition, with a deadline
done
"$vigil" report install-dd >"$scratch/report.out" 2>&1 || fail "vigil report: $(cat "$scratch/report.out")"
cmp -s "$scratch/report.out" "$scratch/dd.txt" ||
	fail "vigil report differs from the console's report: $(diff "$scratch/dd.txt" "$scratch/report.out")"

step "vigil-web: the API and a static file"
# Made here: the background job's redirection may come after the first read.
: >"$scratch/web.log"
"$sbin/vigil-web" 2>"$scratch/web.log" &
echo $! >"$scratch/web.pid"
url=""
deadline=$((SECONDS + 60))
while [ -z "$url" ]; do
	url=$(sed -n 's/^vigil-web: listening on //p' "$scratch/web.log")
	kill -0 "$(cat "$scratch/web.pid")" 2>/dev/null || fail "vigil-web ended: $(cat "$scratch/web.log")"
	[ $SECONDS -lt $deadline ] || fail "vigil-web never listened: $(cat "$scratch/web.log")"
	[ -n "$url" ] || sleep 0.1 # polling a condition, with a deadline
done
curl -sSf "${url}api/v1/runs" >"$scratch/runs.json" || fail "GET ${url}api/v1/runs failed"
grep -q '"install-dd"' "$scratch/runs.json" ||
	fail "the API's runs lack install-dd: $(head -c 500 "$scratch/runs.json")"
curl -sSf "${url}index.html" >"$scratch/index.html" || fail "GET ${url}index.html failed"
# A page is its <main> under a directive line, served inside the installed
# template (web/static/page.tmpl): every line of both but the directive and
# the template's placeholders is in what was served.
installed_static="$root/$VIGIL_DATADIR/vigil/web/static"
missing=$( (tail -n +2 "$installed_static/index.html"; grep -v '@' "$installed_static/page.tmpl") |
	grep -vxF -f "$scratch/index.html" || true)
[ -z "$missing" ] && grep -q '<title>Runs – vigil</title>' "$scratch/index.html" ||
	fail "vigil-web did not serve the installed index.html in the installed template: missing $(head -c 300 <<<"$missing")"

if [ "${VIGIL_WITH_MPI:-0}" = 1 ]; then
	step "vigil run under mpirun -n 2"
	cat >"$scratch/mpi_write.c" <<'C'
#include <mpi.h>
int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_File f;
    MPI_File_open(MPI_COMM_WORLD, argv[1], MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &f);
    char block[4096] = {0};
    MPI_File_write_at(f, (MPI_Offset)rank * (MPI_Offset)sizeof block, block, sizeof block,
                      MPI_BYTE, MPI_STATUS_IGNORE);
    MPI_File_close(&f);
    MPI_Finalize();
    return 0;
}
C
	mpicc -o "$scratch/mpi_write" "$scratch/mpi_write.c"
	# Its session directory in the scratch one: under the shared /tmp one,
	# another test's MPI job, ending meanwhile, can remove it.
	OMPI_MCA_orte_tmpdir_base="$scratch" OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
		mpirun --oversubscribe -n 2 \
		"$vigil" run --report="json:$scratch/mpi-%p.json" -- "$scratch/mpi_write" "$scratch/mpi.dat" \
		>"$scratch/mpi.out" 2>&1 || fail "mpirun of vigil run: $(cat "$scratch/mpi.out")"
	python3 - "$scratch"/mpi-*.json <<'PY' || fail "the MPI run's report is not what the ranks did"
import json, sys
reports = [json.load(open(p)) for p in sys.argv[1:]]
joint = [r for r in reports if r.get("ranks") == 2]
assert joint, f"no joint report of 2 ranks in {sys.argv[1:]}"
written = sum(c["bytes"] for c in joint[0]["layers"]["mpiio"].values() if c["bytes"])
assert written == 2 * 4096, f"MPI-IO bytes written: {written}, expected 8192"
print(f"   the joint report of 2 ranks: {written} MPI-IO bytes")
PY
else
	step "no MPI in this build: vigil run under mpirun not tried"
fi

# A check that cannot run here says why; under CI, where everything must
# run, that is a failure.
steps_not_tried=0
not_tried() {
	[ -z "${CI:-}" ] || fail "$* (CI must run it)"
	echo "== not tried: $*"
	steps_not_tried=$((steps_not_tried + 1))
}
all_executable() {
	for program; do [ -x "$program" ] || return 1; done
}
slurm_programs=(/usr/sbin/munged /usr/sbin/slurmctld /usr/sbin/slurmd /usr/bin/srun)
if [ -z "${VIGIL_TEST_SLURM:-}" ]; then
	not_tried "built without Slurm's spank.h (libslurm-dev): vigil run under srun not tried"
elif ! all_executable "${slurm_programs[@]}"; then
	not_tried "Slurm is not installed (${slurm_programs[*]}): vigil run under srun not tried"
else
	step "vigil run under srun, the SPANK plugin and the Prolog/Epilog scripts (tests/slurm)"
	# The harness of tests/slurm, given the moved prefix's files. Its
	# libvigil is the prefix's too, through the loader's --library-path
	# rather than LD_LIBRARY_PATH, which the programs it starts would
	# inherit: they find their libraries themselves.
	loader=$(readelf -l "$scratch/test-slurm" | sed -n 's/.*interpreter: \(.*\)]$/\1/p')
	status=0
	env -u VIGIL_CONFIG VIGIL_CLI="$vigil" VIGILD="$sbin/vigild" VIGIL_TXD="$sbin/vigil-txd" \
		VIGIL_PRELOAD_LIB="$libdir/vigil/libvigil-preload.so" \
		VIGIL_SPANK="$libdir/vigil/spank_vigil.so" VIGIL_SLURM_SCRIPTS="$libdir/vigil" \
		VIGIL_PG_PRIVATE="$scratch/pg-private" VIGIL_SCHEMA_DIR="$root/$VIGIL_DATADIR/vigil/schema" \
		CMOCKA_MESSAGE_OUTPUT=stdout \
		"$loader" --library-path "$libdir" "$scratch/test-slurm" >"$scratch/slurm.out" 2>&1 ||
		status=$?
	case $status in
	0) grep -E '^\[  PASSED  \]' "$scratch/slurm.out" | sed 's/^/   /' ;;
	77) not_tried "the Slurm harness skipped: $(cat "$scratch/slurm.out")" ;;
	*) fail "the Slurm harness on the installed files (exit $status): $(cat "$scratch/slurm.out")" ;;
	esac
fi

step "the systemd units start the installed programs and pass systemd-analyze verify"
command -v systemd-analyze >/dev/null || fail "systemd-analyze is missing (tools/bootstrap installs systemd)"
mkdir -p "$scratch/verify"
for unit in vigild vigil-txd vigil-web; do
	exec_start=$(sed -n 's/^ExecStart=\([^ ]*\).*/\1/p' "$scratch/units/$unit.service")
	[ "$exec_start" = "$VIGIL_PREFIX/$VIGIL_SBINDIR/$unit" ] ||
		fail "$unit.service starts '$exec_start', not the installed $VIGIL_PREFIX/$VIGIL_SBINDIR/$unit"
	# verify wants the program where ExecStart says: there, in the moved prefix.
	sed "s|^ExecStart=$VIGIL_PREFIX/$VIGIL_SBINDIR/|ExecStart=$sbin/|" \
		"$scratch/units/$unit.service" >"$scratch/verify/$unit.service"
done
# --man=no: whether the man pages are installed is tests/docs' business.
(cd "$scratch/verify" && systemd-analyze verify --man=no ./*.service) >"$scratch/verify.log" 2>&1 ||
	fail "systemd-analyze verify: $(cat "$scratch/verify.log")"
[ ! -s "$scratch/verify.log" ] || fail "systemd-analyze verify complains: $(cat "$scratch/verify.log")"
# The hardening stays: `systemd-analyze security` exposure (0-10; 9.6 for
# a unit with only ExecStart=) at most 2.5 for vigild, which keeps three
# capabilities and sees every process, 1.5 for the others (2.1 and 1.4
# when written). --threshold counts in tenths.
for unit in vigild:25 vigil-txd:15 vigil-web:15; do
	(cd "$scratch/verify" && systemd-analyze security --offline=true --threshold="${unit#*:}" \
		"${unit%:*}.service") >"$scratch/security.log" 2>&1 ||
		fail "${unit%:*}.service: exposure above ${unit#*:}/10: $(tail -n 30 "$scratch/security.log")"
	echo "   ${unit%:*}: $(grep -o 'exposure level.*' "$scratch/security.log")"
done

step "stopping"
for name in web vigild txd; do
	pid=$(cat "$scratch/$name.pid")
	kill -TERM "$pid"
	deadline=$((SECONDS + 60))
	while kill -0 "$pid" 2>/dev/null; do
		[ $SECONDS -lt $deadline ] || fail "$name (pid $pid) did not stop"
		sleep 0.1 # polling a condition, with a deadline
	done
	rm -f "$scratch/$name.pid"
done

# What vigild.service relies on: as an unprivileged user with exactly the
# unit's ambient capabilities, vigild measures another user's process
# (its /proc/PID/io); with none, it cannot (the control, so that the check
# can fail). `vigil status --finished-pid` answers once the process is
# drained, and the provider opened /proc/PID/io when it registered.
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null; then
	step "vigild as nobody with only the unit's capabilities measures root's dd"
	caps=$(sed -n 's/^AmbientCapabilities=//p' "$scratch/units/vigild.service" |
		tr '[:upper:]' '[:lower:]' | sed 's/cap_/+/g; s/ /,/g')
	[ -n "$caps" ] || fail "vigild.service has no AmbientCapabilities="
	mkdir -p "$scratch/unprivileged"
	chmod 0777 "$scratch/unprivileged"
	cat >"$scratch/unprivileged.conf" <<CONF
[daemon]
socket = $scratch/unprivileged/vigild.sock
providers = procstat;process
[capture]
sink = $scratch/unprivileged/capture.jsonl
CONF
	for with in "$caps" ""; do
		rm -f "$scratch/unprivileged/log"
		cap_args=()
		[ -z "$with" ] || cap_args=(--inh-caps="$with" --ambient-caps="$with")
		setpriv --reuid=65534 --regid=65534 --clear-groups "${cap_args[@]}" -- \
			"$sbin/vigild" --config "$scratch/unprivileged.conf" \
			--pid-file "$scratch/unprivileged/vigild.pid" 2>"$scratch/unprivileged/log" ||
			fail "vigild as nobody (capabilities: ${with:-none}): $(cat "$scratch/unprivileged/log")"
		cp "$scratch/unprivileged/vigild.pid" "$scratch/unprivileged-vigild.pid" # for the cleanup
		# dd waits on a FIFO until vigild lists it: vigild tracks a process
		# when it registers, and one that has ended by then is not measured
		# at all, which would pass the first check and fail the second.
		rm -f "$scratch/dd2.pid" "$scratch/dd2.go"
		mkfifo "$scratch/dd2.go"
		VIGIL_CONFIG=$scratch/unprivileged.conf "$vigil" run --report=off -- \
			sh -c 'echo $$ >"$0.pid.new" && mv "$0.pid.new" "$0.pid" && read -r _ <"$0.go" &&
				exec dd if=/dev/zero of="$0.out" bs=4096 count=300 status=none' "$scratch/dd2" \
			>"$scratch/dd2.log" 2>&1 &
		run_pid=$! # on a failure below, the cleanup ends sh through dd2.pid
		deadline=$((SECONDS + 60))
		until [ -s "$scratch/dd2.pid" ] &&
			VIGIL_CONFIG=$scratch/unprivileged.conf "$vigil" status 2>/dev/null |
			awk -v pid="$(cat "$scratch/dd2.pid")" '$2 == pid && $3 == "running" { found = 1 } END { exit !found }'; do
			[ $SECONDS -lt $deadline ] ||
				fail "vigild did not list the waiting dd within 60 s: $(cat "$scratch/dd2.log")"
			sleep 0.1 # polling a condition, with a deadline
		done
		pid=$(cat "$scratch/dd2.pid")
		echo go >"$scratch/dd2.go"
		wait "$run_pid" || fail "vigil run of dd as root (capabilities: ${with:-none}): $(cat "$scratch/dd2.log")"
		rm -f "$scratch/dd2.pid" # its pid may be another process's by the cleanup
		VIGIL_CONFIG=$scratch/unprivileged.conf "$vigil" status --finished-pid="$pid" >/dev/null ||
			fail "vigil status --finished-pid=$pid"
		kill -TERM "$(cat "$scratch/unprivileged/vigild.pid")"
		without_io=$(grep -c "(pid $pid) is measured without its I/O" "$scratch/unprivileged/log" || true)
		if [ -n "$with" ] && [ "$without_io" != 0 ]; then
			fail "with $with, vigild could not read root's /proc/$pid/io: $(grep "pid $pid" "$scratch/unprivileged/log")"
		elif [ -z "$with" ] && [ "$without_io" = 0 ]; then
			fail "with no capability, vigild read root's /proc/$pid/io: the check proves nothing"
		fi
		deadline=$((SECONDS + 60))
		while [ -e "$scratch/unprivileged/vigild.pid" ]; do
			[ $SECONDS -lt $deadline ] || fail "the unprivileged vigild did not stop"
			sleep 0.1 # polling a condition, with a deadline
		done
		rm -f "$scratch/unprivileged-vigild.pid"
	done
	echo "   capabilities $caps: root's I/O measured; none: not measured"
else
	step "not root (or no setpriv): vigild with only its unit's capabilities not tried"
fi

# What the units' Type=notify and ExecReload= rely on: each daemon, in the
# foreground as its unit runs it, tells $NOTIFY_SOCKET.
if [ "${VIGIL_WITH_LIBSYSTEMD:-0}" = 1 ]; then
	step "readiness, reload and stop, told to \$NOTIFY_SOCKET as systemd would hear them"
	python3 "$scratch/notify_check.py" "$scratch/notify.sock" "$scratch/txd.log" -- \
		"$sbin/vigil-txd" --foreground || fail "vigil-txd: $(tail -5 "$scratch/txd.log")"
	python3 "$scratch/notify_check.py" "$scratch/notify.sock" "$scratch/vigild.log" -- \
		"$sbin/vigild" --foreground || fail "vigild: $(tail -5 "$scratch/vigild.log")"
	python3 "$scratch/notify_check.py" "$scratch/notify.sock" "$scratch/web.log" -- \
		"$sbin/vigil-web" || fail "vigil-web: $(tail -5 "$scratch/web.log")"
else
	step "built without libsystemd: the daemons' sd_notify calls do nothing, not checked"
fi
# Every step above either passed or ended the script with FAIL.
echo "$steps_done steps passed, $steps_not_tried not tried"
