"""confluent-kafka-python driver for kwatch's e2e/realclients test.

usage: python3 client.py BROKERS TOPIC GROUP

Produces three messages, then consumes them in consumer group GROUP
(classic protocol), commits and closes (LeaveGroup). The producer and the
consumer keep librdkafka's default client ID, "rdkafka", as most
applications do. Prints the consumed values, one per line. Exits non-zero
on any error; the test also bounds it with a timeout.
"""
import sys
import time

from confluent_kafka import Consumer, Producer


def main():
    brokers, topic, group = sys.argv[1:4]
    want = ["one", "two", "three"]

    p = Producer({"bootstrap.servers": brokers})
    for v in want:
        p.produce(topic, v.encode())
    if p.flush(10) != 0:
        sys.exit("producer: messages left unsent")

    c = Consumer({
        "bootstrap.servers": brokers,
        "group.id": group,
        "auto.offset.reset": "earliest",
        "enable.auto.commit": False,
    })
    c.subscribe([topic])
    got = []
    deadline = time.monotonic() + 10
    while len(got) < len(want) and time.monotonic() < deadline:
        m = c.poll(0.5)
        if m is None:
            continue
        if m.error():
            sys.exit("consumer: %s" % m.error())
        got.append(m.value().decode())
    c.commit(asynchronous=False)
    c.close()
    print("\n".join(got))


if __name__ == "__main__":
    main()
