#!/usr/bin/env bash
# schemathesis against Specs/openapi.yaml and a live `ledger serve` on a fresh store:
# every response must be documented (status, content type, schema) and none a 500.
# Bounded (-n examples per operation) to keep CI lean. The SSE stream is left out: it never
# ends by itself (Tests/e2e/serve_e2e.py drives it); its JSON Lines form is covered by
# StreamTests. Usage: Tests/e2e/schemathesis_run.sh PATH/TO/ledger [EXAMPLES]
set -euo pipefail
LEDGER=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")  # absolute: the run happens in $TMP
EXAMPLES=${2:-20}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
source "$ROOT/Tests/e2e/serve_fixture.sh"
DEVICE=$("$LEDGER" tokens issue --org quinn-co --scope device --device phone-1 --db "$DB" | tail -1)
AUDITOR=$("$LEDGER" tokens issue --org quinn-co --scope auditor --db "$DB" | tail -1)
# High rate limits: schemathesis sends hundreds of requests a second with one token, and
# unauthenticated ones (challenges, sign-ins, pairing) from one address.
start_server --rate-limit 100000 --address-rate-limit 100000
HEAD_BEFORE=$("$LEDGER" log --db "$DB" | wc -l)
# As a phone (taps, Today, devices) and as an auditor (the audit views); from $TMP, where
# schemathesis leaves its .schemathesis cache.
cd "$TMP"
for TOKEN in "$DEVICE" "$AUDITOR"; do
  python3 -m schemathesis.cli --config-file "$ROOT/Tests/e2e/schemathesis.toml" run "$ROOT/Specs/openapi.yaml" --url "$URL" -H "Authorization: Bearer $TOKEN" \
    -n "$EXAMPLES" --checks all --exclude-path /v1/events --generation-deterministic --request-timeout 10
done
# A device token's refused requests write nothing; its accepted ones are taps on actions
# that do not exist (refused too): the log must not have grown.
HEAD_AFTER=$("$LEDGER" log --db "$DB" | wc -l)
[ "$HEAD_BEFORE" = "$HEAD_AFTER" ] || { echo "schemathesis: the log grew from $HEAD_BEFORE to $HEAD_AFTER events"; exit 1; }
