"""pytest setup of the Spark Connect interop suite: test/interop/ (peers.py) and this directory
are importable, and the one local Spark session is stopped when the session ends."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import peers  # noqa: E402


def pytest_sessionfinish(session, exitstatus):
    if peers._spark is not None:
        peers._spark.stop()
        peers._spark = None
