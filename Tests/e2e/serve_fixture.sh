# Sourced by Tests/e2e/schemathesis_run.sh and Benchmarks/serve/bench_serve.sh: a fresh store
# in $TMP with quinn's phone (phone-1, org quinn-co) linked, and `start_server` to run
# `ledger serve` on a free loopback port. Needs LEDGER set; sets TMP, DB, then PID and URL.
TMP=$(mktemp -d)
trap 'kill "${PID:-}" 2>/dev/null || true; wait "${PID:-}" 2>/dev/null || true; rm -rf "$TMP"' EXIT
DB=$TMP/serve.lmdb
"$LEDGER" init --db "$DB" >/dev/null
"$LEDGER" devices link phone-1 --person quinn --org quinn-co --label iPhone --platform ios --db "$DB" >/dev/null

# start_server [SERVE OPTIONS…]: waits for the `listening on` line.
start_server() {
  "$LEDGER" serve --listen 127.0.0.1:0 --db "$DB" "$@" >"$TMP/out" 2>"$TMP/err" &
  PID=$!
  for _ in $(seq 100); do [ -s "$TMP/out" ] && break; sleep 0.1; done
  URL=$(head -1 "$TMP/out" | sed 's/^listening on //')
}
