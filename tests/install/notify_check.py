#!/usr/bin/env python3
"""Plays systemd's part of Type=notify for one daemon: starts it with
$NOTIFY_SOCKET on a datagram socket of ours, and checks that it says
READY=1 once it serves, RELOADING=1 then READY=1 around a SIGHUP, and
STOPPING=1 on SIGTERM, then exits 0. Each step waits on the socket (a
receive with a generous bound), never on the clock.

    notify_check.py SOCKET_PATH LOG_PATH -- PROGRAM [ARGS...]
"""
import os
import signal
import socket
import subprocess
import sys

STEP_TIMEOUT_S = 60


def main():
    if len(sys.argv) < 5 or sys.argv[3] != "--":
        sys.exit("usage: notify_check.py SOCKET_PATH LOG_PATH -- PROGRAM [ARGS...]")
    path, log_path, argv = sys.argv[1], sys.argv[2], sys.argv[4:]
    name = os.path.basename(argv[0])
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    if os.path.exists(path):
        os.unlink(path)
    listener.bind(path)
    listener.settimeout(STEP_TIMEOUT_S)
    env = dict(os.environ, NOTIFY_SOCKET=path)
    with open(log_path, "ab") as log:
        daemon = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=log)

    def expect(state, after):
        try:
            message = listener.recv(4096).decode()
        except socket.timeout:
            daemon.kill()
            sys.exit(f"FAIL: {name} sent nothing {after} (wanted {state}); its log: {log_path}")
        if state not in message.split("\n"):
            daemon.kill()
            sys.exit(f"FAIL: {name} sent {message!r} {after}, wanted {state}")

    expect("READY=1", "after starting")
    daemon.send_signal(signal.SIGHUP)
    expect("RELOADING=1", "on SIGHUP")
    expect("READY=1", "after its reload")
    daemon.send_signal(signal.SIGTERM)
    expect("STOPPING=1", "on SIGTERM")
    try:
        status = daemon.wait(STEP_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        daemon.kill()
        sys.exit(f"FAIL: {name} did not end after STOPPING=1")
    if status != 0:
        sys.exit(f"FAIL: {name} exited {status} after SIGTERM")
    print(f"   {name}: READY=1, RELOADING=1, READY=1, STOPPING=1, exit 0")


main()
