"""The real Kafka broker of the streaming differential's Kafka cases, and what a case's steps do
to it: a topic per source and engine, records produced, partitions added.

The broker is the one of SLUICE_KAFKA_BOOTSTRAP when that is set (test/interop/kafka/
with_broker.sh), else one started by scripts/kafka.sh in a temp dir for this run and stopped by
stop(). Records are produced by confluent-kafka (the peers' venv) with an explicit partition and
CreateTime, without idempotence or transactions, so that offsets are 0, 1, 2, ... in every
partition on both engines' topics.
"""

import datetime as dt
import os
import subprocess
import tempfile
import time

import case_model

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))
KAFKA_SH = os.path.join(REPO, "scripts", "kafka.sh")
TIMEOUT_S = 60

_broker = {"servers": None, "dir": None}


def servers():
    """The bootstrap servers, starting a broker on first use."""
    if _broker["servers"] is None:
        given = os.environ.get("SLUICE_KAFKA_BOOTSTRAP")
        if given:
            _broker["servers"] = given
        else:
            d = tempfile.mkdtemp(prefix="sluice-streamdiff-kafka-")
            os.rmdir(d)  # kafka.sh start wants a directory without a broker; it creates it
            proc = subprocess.run([KAFKA_SH, "start", d], capture_output=True, text=True,
                                  timeout=150)
            if proc.returncode != 0:
                raise RuntimeError(f"the Kafka broker did not start: {proc.stderr.strip()}")
            _broker["dir"], _broker["servers"] = d, proc.stdout.strip().splitlines()[-1]
    return _broker["servers"]


def stop():
    if _broker["dir"] is not None:
        subprocess.run([KAFKA_SH, "stop", _broker["dir"]], capture_output=True, timeout=90)
    _broker["servers"] = _broker["dir"] = None


def topic_name(side, case, source):
    return f"sd.{side}.{case.name}.{source}"


def _admin():
    from confluent_kafka.admin import AdminClient
    return AdminClient({"bootstrap.servers": servers()})


def _wait(futures, what):
    for f in futures.values():
        try:
            f.result(timeout=TIMEOUT_S)
        except Exception as e:  # noqa: BLE001 (named and raised again)
            raise RuntimeError(f"{what} failed: {e}") from e


def create_topics(side, case):
    """{source: topic} of the case's Kafka sources, each topic created anew on the broker
    (an older one of the same name, from an earlier case run on this broker, is deleted)."""
    from confluent_kafka.admin import NewTopic
    topics = {n: topic_name(side, case, n) for n, s in case.sources.items()
              if s.format == "kafka"}
    if not topics:
        return topics
    admin = _admin()
    existing = set(admin.list_topics(timeout=TIMEOUT_S).topics)
    old = [t for t in topics.values() if t in existing]
    if old:
        _wait(admin.delete_topics(old, operation_timeout=TIMEOUT_S), f"deleting {old}")
        for _ in range(100):  # a deleted topic's name is free again within seconds
            if not set(old) & set(admin.list_topics(timeout=TIMEOUT_S).topics):
                break
            time.sleep(0.1)
    # retention.ms=-1: the cases' records carry CreateTimes of 2024, older than the broker's
    # default retention of 7 days, so its retention check (every 5 minutes, the first 30 s after
    # it starts) would delete them between a produce step and the run that reads them.
    _wait(admin.create_topics([NewTopic(t, case.sources[n].partitions, 1,
                                        config={"retention.ms": "-1"})
                               for n, t in topics.items()], operation_timeout=TIMEOUT_S),
          f"creating {sorted(topics.values())}")
    return topics


def add_partitions(topic, n):
    from confluent_kafka.admin import NewPartitions
    admin = _admin()  # kept alive until the futures are answered
    _wait(admin.create_partitions([NewPartitions(topic, n)], operation_timeout=TIMEOUT_S),
          f"growing {topic} to {n} partitions")


def _bytes(text):
    return None if text is None else str(text).encode("utf-8")


def produce(topic, records):
    """Produces the records in order (each acknowledged before the next is sent, so offsets
    follow the case's order) and raises on the first failure."""
    from confluent_kafka import Producer
    p = Producer({"bootstrap.servers": servers(), "enable.idempotence": False, "acks": "all",
                  "max.in.flight.requests.per.connection": 1, "linger.ms": 0})
    failures = []

    def report(err, _msg):
        if err is not None:
            failures.append(str(err))
    for rec in records:
        key, value, partition, ts, headers = (tuple(rec) + (None,) * 5)[:5]
        kw = {"partition": partition or 0, "on_delivery": report}
        if ts is not None:
            stamp = case_model.timestamp_of(ts).replace(tzinfo=dt.timezone.utc)
            kw["timestamp"] = int(stamp.timestamp() * 1000)
        if headers is not None:
            kw["headers"] = [(k, _bytes(v)) for k, v in headers]
        p.produce(topic, value=_bytes(value), key=_bytes(key), **kw)
        if p.flush(TIMEOUT_S) != 0:
            raise RuntimeError(f"producing to {topic}: a record was not acknowledged within "
                               f"{TIMEOUT_S} s")
    if failures:
        raise RuntimeError(f"producing to {topic} failed: {failures[0]}")
