"""Shared step runner of the Python client scripts (see ../../cmd/dpproxy/e2e_clients_test.go).

Each step prints one line: "<step>\tok\t<detail>" or "<step>\terror\t<MySQL code or 0>\t<message>".
Connection settings come from the environment: DP_HOST, DP_PORT, DP_USER,
DP_PASSWORD, DP_DB and, for TLS with a verified server certificate, DP_CA.
"""
import os
import re
import sys

HOST = os.environ["DP_HOST"]
PORT = int(os.environ["DP_PORT"])
USER = os.environ["DP_USER"]
PASSWORD = os.environ["DP_PASSWORD"]
DB = os.environ.get("DP_DB", "dpproxy")
CA = os.environ.get("DP_CA", "")

# The statements every client runs.
AGGREGATE = "SELECT AVG(age) FROM pums"
SET_EPSILON = "SET @dp_epsilon = 0.5"
REFUSED = "SELECT * FROM pums"


def error_code(exc):
    """The MySQL error number of exc, or 0."""
    for e in (exc, getattr(exc, "orig", None)):
        if e is None:
            continue
        args = getattr(e, "args", ())
        if args and isinstance(args[0], int):
            return args[0]
        m = re.search(r"\((\d{4})\)", " ".join(str(a) for a in args))
        if m:
            return int(m.group(1))
    return 0


def step(name, fn):
    """Runs fn and prints its outcome; returns fn's result or None."""
    try:
        detail = fn()
    except Exception as exc:  # every failure is reported, the next step still runs
        msg = " ".join(str(exc).split())
        print(f"{name}\terror\t{error_code(exc)}\t{msg}", flush=True)
        return None
    print(f"{name}\tok\t{detail}", flush=True)
    return detail if detail is not None else True
