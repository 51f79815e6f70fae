"""Run a command against a SQLite database and measure how long its writes keep every other writer out.

    python scripts/sqlite_lock_probe.py db.sqlite3 -- .venv/bin/python manage.py seed_demo_studies

A probe connection tries ``BEGIN IMMEDIATE`` every 5 ms without waiting; the longest stretch in which every try
found the write lock taken is the longest a sign-in (which writes its session) would have waited. Prints that and
the command's duration; exits with the command's status.
"""

import argparse
import sqlite3
import subprocess
import sys
import threading
import time


def probe(path: str, stop: threading.Event, spans: list[float]) -> None:
    """Record each stretch of time in which the write lock of ``path`` could not be taken."""
    conn = sqlite3.connect(path, timeout=0, isolation_level=None)
    blocked_since = None
    while not stop.is_set():
        try:
            conn.execute("BEGIN IMMEDIATE")
            conn.execute("ROLLBACK")
            if blocked_since is not None:
                spans.append(time.monotonic() - blocked_since)
                blocked_since = None
        except sqlite3.OperationalError:
            blocked_since = blocked_since or time.monotonic()
        time.sleep(0.005)
    if blocked_since is not None:
        spans.append(time.monotonic() - blocked_since)
    conn.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("database")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    spans: list[float] = []
    stop = threading.Event()
    thread = threading.Thread(target=probe, args=(args.database, stop, spans))
    thread.start()
    started = time.monotonic()
    status = subprocess.call(command)
    took = time.monotonic() - started
    stop.set()
    thread.join()
    spans.sort()
    longest = spans[-1] if spans else 0.0
    over = sum(1 for s in spans if s > 1.0)
    print(
        f"command took {took:.1f} s; write lock taken {len(spans)} times as the probe tried; longest wait "
        f"{longest:.2f} s; {over} waits over 1 s",
        file=sys.stderr,
    )
    return status


if __name__ == "__main__":
    sys.exit(main())
