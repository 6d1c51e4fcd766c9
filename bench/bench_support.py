"""What the benchmark drivers share (daemon_compare.py, metrics_compare.py,
capture_eval.py, ingest.py, fanin.py): the failure that stops a figure,
running a program to its end, a log's last lines, a free port, and the
private PostgreSQL cluster of tools/pg-private with psql on it."""
import os
import re
import signal
import socket
import subprocess

RUN_TIMEOUT_S = 900


class Failed(Exception):
    """The run did not happen as it must for a figure: the message says why."""


# What ends a driver with "bench-NAME: why" and status 1 rather than a trace.
FAILURES = (Failed, OSError, ValueError, KeyError, subprocess.SubprocessError)


def run(argv, what, env=None, timeout=RUN_TIMEOUT_S):
    """Runs a program to its end; its stdout, or Failed with its output."""
    try:
        done = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=timeout,
                              stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        raise Failed(f"{what} did not finish within {timeout} s") from None
    except OSError as e:
        raise Failed(f"{what}: cannot run {argv[0]}: {e.strerror}") from None
    if done.returncode != 0:
        raise Failed(f"{what} failed (status {done.returncode}):\n{done.stderr.strip()}\n"
                     f"{done.stdout.strip()}")
    return done.stdout


def log_tail(path, lines=20):
    """The last lines of a log, for a failure's message ("" when unreadable)."""
    try:
        with open(path, errors="replace") as log:
            return "".join(log.readlines()[-lines:])
    except OSError:
        return ""


def ensure_running(name, process, log):
    """Failed, with the end of its log, when `process` has exited."""
    if process.poll() is not None:
        raise Failed(f"{name} exited with status {process.returncode} during the run:\n"
                     + log_tail(log))


def stop(name, process, log, timeout_s=10):
    """SIGTERM, then a wait; an exit status other than 0 is a failure."""
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        raise Failed(f"{name} did not stop within {timeout_s} s of SIGTERM (killed):\n"
                     + log_tail(log)) from None
    if process.returncode != 0:
        raise Failed(f"{name} exited with status {process.returncode} after SIGTERM:\n"
                     + log_tail(log))


def write_config(directory, name, text):
    """Writes `text` to the file `name` in `directory`; its path."""
    path = os.path.join(directory, name)
    with open(path, "w") as conf:
        conf.write(text)
    return path


def free_port():
    """A loopback port the kernel has just handed out (and taken back)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_txd(vigil_txd, config, pid_path, log_path, env, prefix=()):
    """Starts vigil-txd without --foreground: it returns once it serves (or
    failed to start) and leaves the server detached, its log going to
    `log_path`. Its pid; `prefix` runs it under a profiler."""
    with open(log_path, "w") as log:
        started = subprocess.run(list(prefix) + [vigil_txd, "--config", config,
                                                 "--pid-file", pid_path],
                                 stdin=subprocess.DEVNULL, stdout=log, stderr=log, env=env,
                                 timeout=RUN_TIMEOUT_S)
    if started.returncode != 0:
        raise Failed(f"vigil-txd did not start (status {started.returncode}):\n"
                     + log_tail(log_path))
    with open(pid_path) as f:
        return int(f.read().strip())


class Cluster:
    """The private cluster and psql on it; every session in UTC, as
    vigil-txd's, so that partitions and timestamps agree."""

    def __init__(self, pg_private, directory, citus_workers=0):
        """`with Cluster(…) as cluster:` starts it, and stops it on the way
        out (a half-started one too). With citus_workers, a Citus cluster of
        a coordinator (whose database `vigil` conninfo names) and that many
        workers (`tools/pg-private start-citus`)."""
        self.pg_private = pg_private
        self.directory = directory
        self.citus_workers = citus_workers
        bindir = run([pg_private, "check"], "tools/pg-private check").strip()
        self.psql_path = os.path.join(bindir, "psql")
        self.conninfo = None
        self.env = dict(os.environ, PGTZ="UTC")
        for name in ("PGDATABASE", "PGHOST", "PGPORT", "PGUSER", "PGSERVICE", "PGOPTIONS"):
            self.env.pop(name, None)

    def start(self):
        command = ["start-citus", self.directory, "--workers", str(self.citus_workers)] \
            if self.citus_workers else ["start", self.directory]
        self.conninfo = run([self.pg_private] + command, f"tools/pg-private {command[0]}",
                            timeout=300).strip()
        if "dbname=" not in self.conninfo:
            raise Failed(f"tools/pg-private printed no conninfo with a dbname: {self.conninfo!r}")

    def stop(self):
        run([self.pg_private, "stop", self.directory], "tools/pg-private stop", timeout=180)

    def __enter__(self):
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exception):
        self.stop()

    def description(self):
        """"PostgreSQL VERSION (private cluster: the settings that bear on writes)"."""
        version = self.psql("postgres", "SHOW server_version")
        settings = self.psql("postgres",
                             "SELECT string_agg(name || ' ' || current_setting(name), ', ' "
                             "ORDER BY name) FROM pg_settings WHERE name IN ('fsync', "
                             "'synchronous_commit', 'shared_buffers', 'wal_level', "
                             "'max_wal_size')")
        return f"PostgreSQL {version} (private cluster: {settings})"

    def conninfo_for(self, database):
        return re.sub(r"dbname=\S+", f"dbname={database}", self.conninfo)

    def psql(self, database, sql, what=None):
        """What `sql` prints on `database`, unaligned, without its last newline."""
        return run([self.psql_path, "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1",
                    "-d", self.conninfo_for(database), "-c", sql],
                   what or f"psql on {database}: {sql}", env=self.env).strip()
