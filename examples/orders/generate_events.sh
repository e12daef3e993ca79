#!/usr/bin/env bash
# Writes round ROUND of the order events to stdout as kcat "key:value" lines (-K:), and appends
# the round's distinct valid events as JSON lines to VALID_FILE (what the pipeline must see once).
#
# Per round, ORDERS orders (ids ROUND*ORDERS+1 ..): a "created" event; a "paid" event 60 s later
# for two orders in three; a "cancelled" event 90 s later for one in five. A quarter of the
# orders send "paid" before "created" (out of order), one in seven sends "created" twice (a
# duplicate), and every round adds three malformed payloads and one event without an order_id.
# Event times advance 30 s per round, so nothing is later than the pipeline's 10-minute watermark.
#
# Usage: generate_events.sh ROUND ORDERS VALID_FILE
set -euo pipefail
ROUND="$1"
ORDERS="$2"
VALID="$3"
awk -v round="${ROUND}" -v orders="${ORDERS}" -v valid="${VALID}" '
function ts(sec,   h, m, s) {
  sec += 10 * 3600
  h = int(sec / 3600); m = int((sec % 3600) / 60); s = sec % 60
  return sprintf("2026-11-30T%02d:%02d:%02dZ", h, m, s)
}
function event(id, status, sec, amount) {
  return sprintf("{\"order_id\": %d, \"customer\": \"c%d\", \"status\": \"%s\", \"amount\": %.2f, \"ts\": \"%s\"}",
                 id, id % 10, status, amount, ts(sec))
}
BEGIN {
  for (j = 0; j < orders; j++) {
    id = round * orders + j + 1
    created = round * 30 + (j % 30)
    amount = (j % 50) + 0.5
    c = event(id, "created", created, amount)
    p = event(id, "paid", created + 60, amount)
    x = event(id, "cancelled", created + 90, amount)
    has_paid = (j % 3 != 0)
    has_cancel = (j % 5 == 0)
    if (has_paid && j % 4 == 1) { print "o" id ":" p; print "o" id ":" c }
    else { print "o" id ":" c; if (has_paid) print "o" id ":" p }
    if (j % 7 == 0) print "o" id ":" c
    if (has_cancel) print "o" id ":" x
    print c >> valid
    if (has_paid) print p >> valid
    if (has_cancel) print x >> valid
  }
  print "bad" round "a:{\"order_id\": 12, \"customer\": "
  print "bad" round "b:not json at all"
  print "bad" round "c:<order id=\"1\"/>"
  print "bad" round "d:{\"customer\": \"c1\", \"status\": \"created\", \"amount\": 1.0, \"ts\": \"" ts(round * 30) "\"}"
}'
