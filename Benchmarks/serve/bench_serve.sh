#!/usr/bin/env bash
# Durable approvals per second over HTTP (wrk, loopback) at 1, 16 and 64 connections, then
# tap-to-stream latency with 1,000 open streams and the memory each stream costs
# (stream_latency.py). Needs wrk (Debian) and a release `ledger`:
#   swift build -c release --product ledger && Benchmarks/serve/bench_serve.sh .build/release/ledger
set -euo pipefail
LEDGER=$(realpath "$1")
SECONDS_PER_RUN=${SECONDS_PER_RUN:-10}
PER_THREAD=${PER_THREAD:-30000}
HERE=$(cd "$(dirname "$0")" && pwd)
source "$HERE/../../Tests/e2e/serve_fixture.sh"
# Low stakes, no auto-ship: every action takes exactly one durable approve tap.
echo '{"auto_ship": {"enabled": false}}' | "$LEDGER" policy set - --org quinn-co --db "$DB" >/dev/null
TOKEN=$("$LEDGER" tokens issue --org quinn-co --scope device --device phone-1 --db "$DB" | tail -1)
propose() {  # run, threads
  python3 - "$1" "$2" "$PER_THREAD" > "$TMP/batch.jsonl" <<'PY'
import json, sys
run, threads, per = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
for t in range(threads):
    for n in range(1, per + 1):
        print(json.dumps({"action_id": f"b{run}-{t}-{n}", "org": "quinn-co", "person": "quinn",
            "specialist": {"name": "Mia", "agent": "x-replies"}, "surface": "x", "kind": "send_reply",
            "target": {"type": "thread", "id": "x:1"}, "stakes": "low", "confidence": 0.5,
            "preview": {"text": "Thank you!"}, "rationale": "bench"}))
PY
  "$LEDGER" propose --batch "$TMP/batch.jsonl" --db "$DB" >/dev/null
}
for c in 1 16 64; do t=$(( c < 4 ? c : 4 )); propose "$c" "$t"; done
start_server --rate-limit 1000000 --address-rate-limit 1000000
echo "approvals over HTTP (durable commits, $SECONDS_PER_RUN s each):"
for c in 1 16 64; do
  t=$(( c < 4 ? c : 4 ))
  RUN=$c TOKEN=$TOKEN wrk -t "$t" -c "$c" -d "${SECONDS_PER_RUN}s" --latency -s "$HERE/approve.lua" "$URL" > "$TMP/wrk-$c"
  rps=$(awk '/Requests\/sec/ {print $2}' "$TMP/wrk-$c")
  p50=$(awk '$1 == "50%" {print $2}' "$TMP/wrk-$c"); p99=$(awk '$1 == "99%" {print $2}' "$TMP/wrk-$c")
  bad=$(awk '/Non-2xx/ {print $4}' "$TMP/wrk-$c")
  echo "  $c connections: $rps approvals/s, p50 $p50, p99 $p99, non-2xx ${bad:-0}"
done
python3 "$HERE/stream_latency.py" --url "$URL" --token "$TOKEN" --pid "$PID" --ledger "$LEDGER" --db "$DB"
