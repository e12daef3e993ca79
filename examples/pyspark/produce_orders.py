"""Produces rounds of order events to a Kafka topic for kafka_orders_medallion.py: the events of
examples/orders/generate_events.sh (out of order, duplicated, malformed; see there), sent with
the confluent-kafka client. Usage:

    python examples/pyspark/produce_orders.py BOOTSTRAP TOPIC FIRST_ROUND ORDERS [ROUNDS] \\
        [VALID_FILE]

sends rounds FIRST_ROUND .. FIRST_ROUND+ROUNDS-1 (default 1) of ORDERS orders each, flushes, and
prints the number of records sent. VALID_FILE (default: a temporary file, removed) receives the
distinct valid events as JSON lines, what the job must take in exactly once.
"""

import os
import subprocess
import sys
import tempfile

from confluent_kafka import Producer

HERE = os.path.dirname(os.path.abspath(__file__))
GENERATE = os.path.join(HERE, "..", "orders", "generate_events.sh")


def produce(bootstrap, topic, first_round, orders, rounds=1, valid_file=None):
    """Sends the rounds; returns the number of records sent."""
    own = valid_file is None
    if own:
        fd, valid_file = tempfile.mkstemp(prefix="orders-valid-")
        os.close(fd)
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})
    sent = 0
    try:
        for r in range(first_round, first_round + rounds):
            lines = subprocess.run(["bash", GENERATE, str(r), str(orders), valid_file],
                                   check=True, capture_output=True, text=True).stdout
            for line in lines.splitlines():
                key, value = line.split(":", 1)
                producer.produce(topic, key=key.encode(), value=value.encode())
                sent += 1
                producer.poll(0)
        if producer.flush(60) != 0:
            raise RuntimeError(f"{topic}: records not delivered within 60 s")
    finally:
        if own:
            os.unlink(valid_file)
    return sent


if __name__ == "__main__":
    args = sys.argv[1:]
    print(produce(args[0], args[1], int(args[2]), int(args[3]),
                  int(args[4]) if len(args) > 4 else 1, args[5] if len(args) > 5 else None))
