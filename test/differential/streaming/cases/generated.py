"""Property-style cases: random event-time disorder, lateness, batch sizes and restart points
from a fixed seed (the same cases every run, so Spark's answers stay cached). Set
SLUICE_STREAMING_DIFF_SEEDS=N (run.py --seeds N) for N seeds instead of the fixed ones."""

import os
import random

from case_model import batches

EV = "k STRING, v BIGINT, ts TIMESTAMP"
FIXED_SEEDS = range(1, 9)

QUERIES = [
    ("window_append", "append",
     "SELECT window.start AS ws, k, count(*) AS n, sum(v) AS s FROM STREAM ev WATERMARK ts "
     "DELAY OF INTERVAL {delay} SECONDS AS e GROUP BY window(ts, '{size} seconds'), k", None),
    ("window_update", "update",
     "SELECT window.start AS ws, k, count(*) AS n, max(v) AS hi FROM STREAM ev WATERMARK ts "
     "DELAY OF INTERVAL {delay} SECONDS AS e GROUP BY window(ts, '{size} seconds'), k", None),
    ("sliding_append", "append",
     "SELECT window.start AS ws, count(*) AS n FROM STREAM ev WATERMARK ts DELAY OF INTERVAL "
     "{delay} SECONDS AS e GROUP BY window(ts, '{size} seconds', '{slide} seconds')", None),
    ("dedup_watermark", "append",
     "SELECT DISTINCT ON (k, ts) k, ts FROM STREAM ev WATERMARK ts DELAY OF INTERVAL {delay} "
     "SECONDS AS e", "ev.dropDuplicates(['k', 'ts']).select('k', 'ts')"),
]


def make(seed, qi):
    rnd = random.Random(seed * 1000 + qi)
    tag, mode, text, spark = QUERIES[qi]
    size = rnd.choice([5, 10, 20])
    slide = size // rnd.choice([1, 2, 5]) or size
    delay = rnd.choice([0, 3, 10, 30])
    t, runs = 0, []
    for _ in range(rnd.randint(2, 5)):
        rows = []
        for _ in range(rnd.randint(1, 8)):
            t += rnd.randint(0, 15)
            lateness = rnd.choice([0, 0, 0, rnd.randint(1, 60)])  # some rows arrive late
            rows.append((rnd.choice("abc"), rnd.randint(-5, 50), max(0, t - lateness)))
        runs.append(rows)
    d = dict(name=f"gen_{tag}_seed{seed}", sources={"ev": EV}, mode=mode,
             query=text.format(size=size, slide=slide, delay=delay), steps=batches("ev", *runs))
    if spark:
        d["spark"] = spark
    return d


_n = os.environ.get("SLUICE_STREAMING_DIFF_SEEDS")
SEEDS = range(1, int(_n) + 1) if _n else FIXED_SEEDS
CASES = [make(seed, qi) for seed in SEEDS for qi in range(len(QUERIES))]
