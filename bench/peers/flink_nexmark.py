"""One Nexmark query on Apache Flink SQL (PyFlink), reading the peers benchmark's topics.

Run by bench/peers/nexmark_peers.py with Flink's venv (scripts/peers/flink.sh):
    flink_nexmark.py --bootstrap HOST:PORT --query qN --work DIR [--out FILE]
The topics nexmark-<kind> hold the generator's events as JSON records whose timestamp is the
event's dateTime (docs/nexmark.md "Kafka-fed runs"). The table over a kind's topic is what
Sluice's Kafka form of the query reads: the kind's object parsed from the JSON value (format
json), dateTime the record's timestamp (metadata 'timestamp'), watermarked 4 s; bounded at the
offsets that are latest when the job starts (scan.bounded.mode = latest-offset), so the job ends,
as AvailableNow does. Settings (pinned, bench/peers/README.md): streaming mode, local execution
(the MiniCluster in PyFlink's JVM), parallelism 2, the RocksDB state backend, exactly-once
checkpoints every 10 s into DIR, local time zone UTC. Sink: the `blackhole` connector, or with
--out the query's rows collected to FILE (peers_rows.write_rows).
Prints "PEERS-READY" when the environment is up and the job is about to be submitted, and
"PEERS-DONE <output rows or -1>" when it has ended; the driver times the span between them.
"""

import argparse
import glob
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "test", "interop"))
import peers  # noqa: E402
import peers_rows  # noqa: E402

COLUMNS = {
    "bid": [("auction", "BIGINT"), ("bidder", "BIGINT"), ("price", "BIGINT"),
            ("channel", "STRING"), ("url", "STRING"), ("extra", "STRING")],
}
# The queries in Flink SQL over the views of the kinds (the texts of bench/nexmark/qN.sql), and
# their output columns (the blackhole table's schema).
QUERIES = {
    "q0": ("bid", "SELECT auction, bidder, price, `dateTime`, extra FROM bid",
           "`auction` BIGINT, `bidder` BIGINT, `price` BIGINT, `dateTime` TIMESTAMP_LTZ(3), "
           "`extra` STRING"),
    "q1": ("bid", "SELECT auction, bidder, CAST(0.908 * price AS DECIMAL(23, 3)) AS price, "
                  "`dateTime`, extra FROM bid",
           "`auction` BIGINT, `bidder` BIGINT, `price` DECIMAL(23, 3), `dateTime` TIMESTAMP_LTZ(3), "
           "`extra` STRING"),
    "q2": ("bid", "SELECT auction, price FROM bid WHERE MOD(auction, 123) = 0",
           "`auction` BIGINT, `price` BIGINT"),
    # Hot items: bids per auction in hopping windows of 10 s every 2 s, the auction(s) with the
    # most bids in each window (ties kept): the Flink Nexmark suite's q5 (window aggregations
    # joined with their per-window maximum; Flink's window Top-N takes ROW_NUMBER only, which
    # would drop ties). The same rows as bench/nexmark/q5.sql; the join and the max aggregation
    # update their results, so the output is a changelog (the collected rows are materialized).
    "q5": ("bid", "SELECT AuctionBids.auction, AuctionBids.num, AuctionBids.starttime,"
                  " AuctionBids.endtime FROM ("
                  "  SELECT auction, COUNT(*) AS num, window_start AS starttime,"
                  "   window_end AS endtime FROM TABLE(HOP(TABLE bid, DESCRIPTOR(`dateTime`),"
                  "   INTERVAL '2' SECOND, INTERVAL '10' SECOND))"
                  "  GROUP BY auction, window_start, window_end) AS AuctionBids"
                  " JOIN ("
                  "  SELECT MAX(CountBids.num) AS maxn, CountBids.starttime, CountBids.endtime"
                  "  FROM (SELECT COUNT(*) AS num, window_start AS starttime,"
                  "   window_end AS endtime FROM TABLE(HOP(TABLE bid, DESCRIPTOR(`dateTime`),"
                  "   INTERVAL '2' SECOND, INTERVAL '10' SECOND))"
                  "   GROUP BY auction, window_start, window_end) AS CountBids"
                  "  GROUP BY CountBids.starttime, CountBids.endtime) AS MaxBids"
                  " ON AuctionBids.starttime = MaxBids.starttime"
                  " AND AuctionBids.endtime = MaxBids.endtime"
                  " AND AuctionBids.num >= MaxBids.maxn",
           "`auction` BIGINT, `num` BIGINT, `starttime` TIMESTAMP(3), `endtime` TIMESTAMP(3)"),
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bootstrap", required=True)
    ap.add_argument("--query", required=True, choices=sorted(QUERIES))
    ap.add_argument("--work", required=True)
    ap.add_argument("--out")
    a = ap.parse_args()
    cache = peers.CACHE
    jars = sorted(glob.glob(os.path.join(cache, "jars", "flink-kafka", "*.jar")))
    if not jars:
        sys.exit(f"Flink's Kafka SQL connector is not in {cache}/jars/flink-kafka: "
                 "run scripts/peers/flink.sh")
    from pyflink.common import Configuration
    from pyflink.table import EnvironmentSettings, TableEnvironment

    conf = Configuration()
    conf.set_string("pipeline.jars", ";".join("file://" + j for j in jars))
    conf.set_string("parallelism.default", "2")
    conf.set_string("state.backend.type", "rocksdb")
    conf.set_string("execution.checkpointing.interval", "10 s")
    conf.set_string("execution.checkpointing.mode", "EXACTLY_ONCE")
    conf.set_string("execution.checkpointing.dir", "file://" + os.path.join(a.work, "checkpoints"))
    conf.set_string("table.local-time-zone", "UTC")
    settings = EnvironmentSettings.new_instance().in_streaming_mode().with_configuration(conf).build()
    env = TableEnvironment.create(settings)
    kind, text, sink_columns = QUERIES[a.query]
    fields = ", ".join(f"`{n}` {t}" for n, t in COLUMNS[kind])
    env.execute_sql(f"""
        CREATE TABLE kafka_{kind} (
          `{kind}` ROW<{fields}>,
          `dateTime` TIMESTAMP_LTZ(3) METADATA FROM 'timestamp',
          WATERMARK FOR `dateTime` AS `dateTime` - INTERVAL '4' SECOND
        ) WITH (
          'connector' = 'kafka',
          'topic' = 'nexmark-{kind}',
          'properties.bootstrap.servers' = '{a.bootstrap}',
          'properties.group.id' = 'sluice-bench-peers',
          'scan.startup.mode' = 'earliest-offset',
          'scan.bounded.mode' = 'latest-offset',
          'format' = 'json',
          'json.fail-on-missing-field' = 'false',
          'json.ignore-parse-errors' = 'false'
        )""")
    # The generator form's column order: dateTime before extra.
    names = [n for n, _ in COLUMNS[kind]]
    order = [f"`{kind}`.`{n}` AS `{n}`" for n in names if n != "extra"] + [
        "`dateTime`", f"`{kind}`.`extra` AS `extra`"]
    env.execute_sql(f"CREATE VIEW {kind} AS SELECT {', '.join(order)} FROM kafka_{kind}")
    env.execute_sql(f"CREATE TABLE peers_sink ({sink_columns}) WITH ('connector' = 'blackhole')")
    print("PEERS-READY", flush=True)
    rows = -1
    if a.out:
        # PyFlink cannot hand a TIMESTAMP_LTZ (an Instant) to Python: those columns are read as
        # TIMESTAMP(3), their UTC wall time (the session's time zone is UTC).
        cols = []
        for c in sink_columns.split(", `"):
            name, type_ = c.strip("`").split("` ", 1)
            cols.append(f"CAST(`{name}` AS TIMESTAMP(3)) AS `{name}`"
                        if type_.startswith("TIMESTAMP_LTZ") else f"`{name}`")
        result = env.execute_sql(f"SELECT {', '.join(cols)} FROM ({text})")
        from pyflink.common import RowKind
        live = {}  # the changelog materialized: row -> count
        with result.collect() as it:
            for r in it:
                key = tuple(r)
                if r.get_row_kind() in (RowKind.INSERT, RowKind.UPDATE_AFTER):
                    live[key] = live.get(key, 0) + 1
                elif live.get(key, 0) > 0:
                    live[key] -= 1
                else:
                    sys.exit(f"flink: a retraction of a row never inserted: {key}")
        collected = [k for k, n in live.items() for _ in range(n)]
        peers_rows.write_rows(a.out, collected)
        rows = len(collected)
    else:
        env.execute_sql(f"INSERT INTO peers_sink {text}").wait()
    print(f"PEERS-DONE {rows}", flush=True)


if __name__ == "__main__":
    main()
