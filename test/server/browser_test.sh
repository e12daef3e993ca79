#!/usr/bin/env bash
# The live monitoring page (`sluice run --ui`) in a real headless Chromium.
#
# Installs Debian's chromium with apt when it is missing (a failed install FAILS the test, it is
# never skipped), runs a pipeline of two queries (a windowed count over the rate source with a
# watermark, a trivial query on a 2 ms trigger that its batches overrun, and a file stream that
# reads a backlog of JSON files one per batch, some with bad values), loads the page while they run, and checks through the DOM (chromium --dump-dom after
# the page has polled) that every chart that must have data draws batches: rates, duration,
# state rows and memory, event time and late rows for the count; backlog, rates and rescued rows
# for the file stream; the overrun query must be flagged "falling behind". Then saves a screenshot (1280x1600) as OUT_DIR/ui.png and prints its path.
#
# Usage: browser_test.sh SLUICE [OUT_DIR]   (OUT_DIR default: ./test-output/server)
set -uo pipefail
SLUICE="$(realpath "$1")"
OUT="${2:-$(pwd)/test-output/server}"
mkdir -p "${OUT}"
OUT="$(realpath "${OUT}")"
WORK="$(mktemp -d)"
PID=""
cleanup() {
  [[ -n "${PID}" ]] && kill "${PID}" 2>/dev/null && wait "${PID}" 2>/dev/null
  rm -rf "${WORK}"
}
trap cleanup EXIT
fail() {
  echo "FAIL: $*"
  [[ -f "${WORK}/run.log" ]] && { echo "--- sluice run output:"; tail -n 20 "${WORK}/run.log"; }
  exit 1
}

# 1. Chromium (Debian package `chromium`).
CHROMIUM="$(command -v chromium || true)"
if [[ -z "${CHROMIUM}" ]]; then
  echo "chromium is missing: installing Debian's chromium with apt-get (log: ${OUT}/apt.log)"
  SUDO=""
  if [[ "$(id -u)" != "0" ]]; then
    command -v sudo > /dev/null || fail "chromium is not installed and there is no root or sudo to install it"
    SUDO="sudo"
  fi
  { ${SUDO} apt-get update -qq &&
    DEBIAN_FRONTEND=noninteractive ${SUDO} apt-get install -y -qq --no-install-recommends chromium; } \
    > "${OUT}/apt.log" 2>&1 ||
    fail "apt-get install chromium failed (the browser test needs it): $(tail -n 5 "${OUT}/apt.log")"
  CHROMIUM="$(command -v chromium || true)"
  [[ -n "${CHROMIUM}" ]] || fail "apt-get installed chromium but there is no chromium command"
fi
"${CHROMIUM}" --version || fail "${CHROMIUM} --version failed"

# 2. A pipeline that runs until stopped.
cd "${WORK}"
mkdir landing
for i in $(seq 0 29); do
  if ((i % 4 == 3)); then
    printf '{"id": %d, "v": "not a number"}\n{"id": %d, "v": 2}\n' "${i}" "${i}" > "landing/f$(printf '%03d' "${i}").json"
  else
    printf '{"id": %d, "v": 1}\n{"id": %d, "v": 2}\n' "${i}" "${i}" > "landing/f$(printf '%03d' "${i}").json"
  fi
done
cat > pipeline.sql <<SQL
CREATE OR REFRESH STREAMING TABLE counts TRIGGER PROCESSING TIME '300 milliseconds' AS
SELECT window(timestamp, '2 seconds') AS w, count(*) AS n
FROM STREAM read_rate(rowsPerSecond => 500) WATERMARK timestamp DELAY OF INTERVAL 1 SECOND AS r
GROUP BY window(timestamp, '2 seconds');
CREATE OR REFRESH STREAMING TABLE behind TRIGGER PROCESSING TIME '2 milliseconds' AS
SELECT value FROM STREAM read_rate(rowsPerSecond => 100);
CREATE OR REFRESH STREAMING TABLE events TRIGGER PROCESSING TIME '400 milliseconds' AS
SELECT id, v, _rescued_data
FROM STREAM read_files('${WORK}/landing', format => 'json', schema => 'id BIGINT, v BIGINT',
                       maxFilesPerTrigger => 1);
SQL
"${SLUICE}" run pipeline.sql --warehouse wh --ui 127.0.0.1:0 > run.log 2>&1 &
PID=$!
URL=""
for _ in $(seq 100); do
  URL="$(grep -o 'monitoring UI at http://127.0.0.1:[0-9]*/' run.log | sed 's/monitoring UI at //')"
  [[ -n "${URL}" ]] && break
  kill -0 "${PID}" 2>/dev/null || fail "sluice run ended before serving"
  sleep 0.1
done
[[ -n "${URL}" ]] || fail "sluice run printed no 'monitoring UI at' line"
echo "page at ${URL}"
# Wait until both queries have several batches.
for _ in $(seq 150); do
  ready="$(python3 - "${URL}" <<'PY' 2>/dev/null
import json, sys, urllib.request
qs = json.load(urllib.request.urlopen(sys.argv[1] + "api/v1/queries", timeout=5))
print("yes" if len(qs) == 3 and all((q["lastBatchId"] or 0) >= 3 for q in qs) else "no")
PY
)"
  [[ "${ready}" == "yes" ]] && break
  kill -0 "${PID}" 2>/dev/null || fail "sluice run ended early"
  sleep 0.2
done
[[ "${ready}" == "yes" ]] || fail "the queries did not reach batch 3 in 30 s: $(curl -s "${URL}api/v1/queries")"

# 3. The DOM after the page has polled.
CHROME_FLAGS=(--headless --no-sandbox --disable-gpu --disable-background-networking
              --no-first-run --disable-extensions --hide-scrollbars
              --user-data-dir="${WORK}/chromium-profile" --window-size=1280,1600)
timeout 120 "${CHROMIUM}" "${CHROME_FLAGS[@]}" --virtual-time-budget=5000 --dump-dom "${URL}" \
  > dom.html 2> chromium-dom.log || fail "chromium --dump-dom failed: $(tail -n 5 chromium-dom.log)"
cp dom.html "${OUT}/dom.html"
python3 - dom.html <<'PY' || fail "the page's DOM lacks chart data (saved as ${OUT}/dom.html)"
import re, sys
from html.parser import HTMLParser

class Charts(HTMLParser):
    def __init__(self):
        super().__init__()
        self.query = None
        self.points = {}   # (query name or id, chart) -> points
        self.body = {}
        self.sections = {}
        self.in_h2 = False
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "body":
            self.body = a
        if tag == "section" and "query" in a.get("class", ""):
            self.query = a.get("data-query-id")
            self.sections[self.query] = {"status": a.get("data-status"), "name": None,
                                     "behind": a.get("data-falling-behind")}
        if tag == "h2" and self.query:
            self.in_h2 = True
        if tag == "figure" and "chart" in a.get("class", "") and self.query:
            self.points[(self.query, a.get("data-chart"))] = int(a.get("data-points", "0"))
    def handle_endtag(self, tag):
        if tag == "h2":
            self.in_h2 = False
    def handle_data(self, data):
        if self.in_h2 and self.query:
            self.sections[self.query]["name"] = data.strip()

p = Charts()
p.feed(open(sys.argv[1], encoding="utf-8").read())
polls = int(p.body.get("data-polls", "0"))
print(f"page polled {polls} times; queries: {[s['name'] for s in p.sections.values()]}")
errors = []
if polls < 1:
    errors.append("the page never polled the API")
by_name = {s["name"]: q for q, s in p.sections.items()}
need = {
    "counts": ["rates", "duration", "state-rows", "state-memory", "event-time", "dropped"],
    "events": ["rates", "duration", "backlog", "dropped"],
}
for name, charts in need.items():
    if name not in by_name:
        errors.append(f"no section for query {name}")
        continue
    q = by_name[name]
    if p.sections[q]["status"] not in ("active", "idle"):
        errors.append(f"{name} has status {p.sections[q]['status']}")
    for chart in charts:
        n = p.points.get((q, chart))
        print(f"  {name} {chart}: {n} points")
        if n is None:
            errors.append(f"{name}: no {chart} chart")
        elif n < 3:
            errors.append(f"{name}: the {chart} chart draws {n} batches, expected >= 3")
# Batches of a trivial query take longer than 2 ms: the page must flag it.
if "behind" in by_name and p.sections[by_name["behind"]]["behind"] != "true":
    errors.append("the query with a 2 ms trigger is not flagged as falling behind")
if errors:
    print("\n".join(errors))
    sys.exit(1)
PY
grep -q '<svg' dom.html || fail "no SVG in the page"

# 4. The screenshot.
rm -f "${OUT}/ui.png"
timeout 120 "${CHROMIUM}" "${CHROME_FLAGS[@]}" --virtual-time-budget=5000 \
  --screenshot="${OUT}/ui.png" "${URL}" > chromium-shot.log 2>&1 ||
  fail "chromium --screenshot failed: $(tail -n 5 chromium-shot.log)"
[[ -s "${OUT}/ui.png" ]] || fail "no screenshot at ${OUT}/ui.png"
echo "screenshot: ${OUT}/ui.png"

# 5. Stop the run cleanly.
kill -INT "${PID}"
wait "${PID}"
rc=$?
PID=""
[[ ${rc} -eq 0 ]] || fail "sluice run exited with ${rc} after SIGINT"
echo PASS
