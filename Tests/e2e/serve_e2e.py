#!/usr/bin/env python3
"""End-to-end test of `ledger serve`: the cross-device story of issue 14, over HTTP.

Starts the real `ledger serve` on a fresh store and drives it like the clients would: a
specialist proposes a high-stakes post, the phone reviews and confirms, the laptop's and the
phone's streams both receive each event, the laptop (a keyed device, signed in with a
session from a signed challenge) approves with a user-verified signed proof, the phone's
stream gets the decision, a replayed offline tap changes nothing, a stale If-Match gets
412, a device revoked by the CLI has its stream closed and its token refused, and a
stream resumed with Last-Event-ID misses nothing and repeats nothing.

Standard library plus `cryptography` (P-256 signatures, as a phone's secure enclave makes).
Usage: python3 Tests/e2e/serve_e2e.py --ledger PATH/TO/ledger   (exit 0 when all hold)
"""
import argparse
import atexit
import base64
import http.client
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec


def check(cond, what):
    if not cond:
        raise AssertionError(what)
    print(f"  ok: {what}")


class Server:
    def __init__(self, ledger, db):
        self.ledger, self.db = ledger, db
        self.proc = subprocess.Popen([ledger, "serve", "--listen", "127.0.0.1:0", "--db", db],
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        line = self.proc.stdout.readline().strip()
        if not line.startswith("listening on http://127.0.0.1:"):
            raise AssertionError(f"unexpected first line: {line!r}")
        self.port = int(line.rsplit(":", 1)[1])

    def call(self, method, path, token=None, body=None, headers=None):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        h = dict(headers or {})
        if token:
            h["Authorization"] = f"Bearer {token}"
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            h["Content-Type"] = "application/json"
        conn.request(method, path, body=data, headers=h)
        r = conn.getresponse()
        raw = r.read()
        conn.close()
        try:
            payload = json.loads(raw) if raw else None
        except ValueError:
            payload = raw.decode()
        return r.status, dict(r.getheaders()), payload

    def ndjson(self, token, start=1):
        """The catch-up as JSON Lines: every event from `start` the token may see."""
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        conn.request("GET", f"/v1/events?from={start}", headers={"Authorization": f"Bearer {token}",
                                                                 "Accept": "application/x-ndjson"})
        r = conn.getresponse()
        lines = [json.loads(l) for l in r.read().decode().splitlines() if l]
        conn.close()
        return lines

    def stop(self):
        self.proc.terminate()
        return self.proc.wait(timeout=10)


class Stream(threading.Thread):
    """An open SSE stream: collects (seq, event) until the server ends it."""

    def __init__(self, port, token, last_event_id=None):
        super().__init__(daemon=True)
        self.port, self.token, self.last_event_id = port, token, last_event_id
        self.events, self.closed, self.status = [], threading.Event(), None
        self.ready = threading.Event()
        self.conn = None

    def run(self):
        self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        h = {"Authorization": f"Bearer {self.token}", "Accept": "text/event-stream"}
        if self.last_event_id is not None:
            h["Last-Event-ID"] = str(self.last_event_id)
        self.conn.request("GET", "/v1/events", headers=h)
        r = self.conn.getresponse()
        self.status = r.status
        self.ready.set()
        seq = None
        try:
            while True:
                line = r.readline()
                if not line:
                    break
                line = line.decode().rstrip("\n")
                if line.startswith("id: "):
                    seq = int(line[4:])
                elif line.startswith("data: "):
                    self.events.append((seq, json.loads(line[6:])))
        except (OSError, http.client.HTTPException):
            pass
        self.closed.set()

    def types(self):
        return [e["type"] for _, e in self.events]

    def wait_for(self, pred, what, timeout=5):
        deadline = time.time() + timeout
        while time.time() < deadline:
            if pred(self):
                return
            time.sleep(0.02)
        raise AssertionError(f"timed out waiting for {what}; stream has {self.types()}")

    def stop(self):
        try:
            self.conn.sock.shutdown(2)
        except OSError:
            pass


def cli(ledger, db, *args):
    out = subprocess.run([ledger, *args, "--db", db], check=True, capture_output=True, text=True)
    return out.stdout


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ledger", required=True)
    ledger = ap.parse_args().ledger
    tmp = tempfile.mkdtemp(prefix="serve-e2e-")
    atexit.register(shutil.rmtree, tmp, ignore_errors=True)  # the store and keys go with the run
    db = os.path.join(tmp, "e2e.lmdb")

    # The laptop's key: user-verification protected (its approvals count as user verified).
    laptop_key = ec.generate_private_key(ec.SECP256R1())
    pub = os.path.join(tmp, "laptop.pub")
    with open(pub, "wb") as f:
        f.write(laptop_key.public_key().public_bytes(serialization.Encoding.PEM,
                                                     serialization.PublicFormat.SubjectPublicKeyInfo))
    cli(ledger, db, "init")
    cli(ledger, db, "devices", "link", "phone-1", "--person", "quinn", "--org", "quinn-co", "--label", "iPhone", "--platform", "ios")
    cli(ledger, db, "devices", "link", "laptop-1", "--person", "quinn", "--org", "quinn-co", "--label", "MacBook",
        "--platform", "web", "--public-key", pub, "--key-protection", "user-verification")

    def token(*args):
        return json.loads(cli(ledger, db, "tokens", "issue", "--org", "quinn-co", "--json", *args))["secret"]

    specialist = token("--scope", "specialist", "--agent", "content-onlyfans")
    phone = token("--scope", "device", "--device", "phone-1")

    srv = Server(ledger, db)
    try:
        print("sessions")
        s, _, body = srv.call("POST", "/v1/sessions/challenge", body={"device": "laptop-1"})
        check(s == 201, "a keyed device gets a challenge")
        sig = laptop_key.sign(bytes.fromhex(body["statement_hex"]), ec.ECDSA(hashes.SHA256()))
        s, _, sess = srv.call("POST", "/v1/sessions", body={"challenge_id": body["challenge_id"],
                                                            "signature": base64.b64encode(sig).decode()})
        check(s == 201 and sess["token"].startswith("als_"), "signing it gives the laptop a session, no secret copied")
        laptop = sess["token"]

        print("cross-device approval")
        phone_stream, laptop_stream = Stream(srv.port, phone), Stream(srv.port, laptop)
        for st in (phone_stream, laptop_stream):
            st.start()
            st.ready.wait(5)
            check(st.status == 200, "a stream opens")
        s, _, body = srv.call("GET", "/v1/devices", token=phone)
        laptop_row = [d for d in body["devices"] if d["device"] == "laptop-1"][0]
        check(laptop_row["connected"] is True and laptop_row["last_connected_at"], "the device list shows the laptop connected")
        proposal = {"action_id": "of-ppv-1", "org": "quinn-co", "person": "quinn",
                    "specialist": {"name": "Sasha", "agent": "content-onlyfans"}, "surface": "onlyfans",
                    "kind": "publish_post", "target": {"type": "account", "id": "of:quinn"}, "stakes": "high",
                    "confidence": 0.74, "preview": {"text": "Full set, 40% off tonight", "assets": 3},
                    "rationale": "Fans are online now"}
        s, _, body = srv.call("POST", "/v1/actions", token=specialist, body=proposal)
        check(s == 201 and body["action"]["next_tap"] == "review", "the specialist proposes a high-stakes post")
        review_key = "cmd-phone-review-1"
        s, _, first = srv.call("POST", "/v1/actions/of-ppv-1/review", token=phone, headers={"Idempotency-Key": review_key})
        check(s == 200, "the phone reviews")
        s, _, body = srv.call("POST", "/v1/actions/of-ppv-1/confirm", token=phone)
        check(s == 200 and body["action"]["next_tap"] == "approve", "the phone confirms")
        for name, st in (("phone", phone_stream), ("laptop", laptop_stream)):
            st.wait_for(lambda x: {"action.proposed", "action.reviewed", "action.confirmed"} <= set(x.types()),
                        f"the {name}'s stream to get each event")
            print(f"  ok: the {name}'s stream received proposed, reviewed, confirmed")
        s, _, stmt = srv.call("GET", "/v1/actions/of-ppv-1/statement?step=approve", token=laptop)
        check(s == 200, "the laptop fetches the statement to sign")
        sig = laptop_key.sign(bytes.fromhex(stmt["statement_hex"]), ec.ECDSA(hashes.SHA256()))
        s, h, body = srv.call("POST", "/v1/actions/of-ppv-1/approve", token=laptop,
                              headers={"Idempotency-Key": stmt["command_id"]},
                              body={"user_verified": True, "claimed_at": stmt["claimed_at"],
                                    "proof": {"format": "p256", "signature": base64.b64encode(sig).decode()}})
        check(s == 200 and body["action"]["state"] == "approved", "the laptop approves with a user-verified proof")
        phone_stream.wait_for(lambda x: "action.approved" in x.types(), "the phone's stream to get the decision")
        print("  ok: the phone's stream got the decision")

        print("offline replay and If-Match")
        head_before = srv.ndjson(phone)
        s, h, again = srv.call("POST", "/v1/actions/of-ppv-1/review", token=phone, headers={"Idempotency-Key": review_key})
        check(s == 200 and h.get("Idempotent-Replayed") == "true" and again == first,
              "a replayed offline tap returns the original status and body")
        head_after = srv.ndjson(phone)
        check(head_after == head_before, "… and appends nothing")
        proposal2 = dict(proposal, action_id="ig-story-1", stakes="medium", preview={"text": "Behind the scenes", "assets": 1})
        s, _, body = srv.call("POST", "/v1/actions", token=specialist, body=proposal2)
        old_hash = body["action"]["content_hash"]
        s, _, _ = srv.call("POST", "/v1/actions/ig-story-1/edit", token=phone, body={"text": "Behind the scenes, take 2"})
        check(s == 200, "the phone edits the story")
        s, _, body = srv.call("POST", "/v1/actions/ig-story-1/review", token=phone, headers={"If-Match": f'"{old_hash}"'})
        check(s == 412 and body["code"] == "stale_content", "a tap on the old content gets 412 stale_content")

        print("resume with Last-Event-ID")
        seen = [seq for seq, _ in laptop_stream.events]
        laptop_stream.stop()
        laptop_stream.closed.wait(5)
        srv.call("POST", "/v1/actions/ig-story-1/review", token=phone)  # while the laptop is away
        resumed = Stream(srv.port, laptop, last_event_id=seen[-1])
        resumed.start()
        resumed.ready.wait(5)
        resumed.wait_for(lambda x: "action.reviewed" in x.types() and x.events[-1][1]["action_id"] == "ig-story-1",
                         "the resumed stream to catch up")
        got = seen + [seq for seq, _ in resumed.events]
        visible = [e["seq"] for e in srv.ndjson(laptop, seen[0])]
        check(len(got) == len(set(got)), "the resumed stream repeats nothing")
        check(got == visible, "… and misses nothing")

        print("revocation")
        cli(ledger, db, "devices", "revoke", "phone-1", "--reason", "lost")
        phone_stream.closed.wait(5)
        check(phone_stream.closed.is_set(), "the revoked phone's stream closes")
        s, _, body = srv.call("GET", "/v1/today", token=phone)
        check(s == 403 and body["code"] == "device_revoked", "the revoked phone's token is refused")
        s, _, body = srv.call("GET", "/v1/today", token=laptop)
        check(s == 200, "the laptop's session still works")
        resumed.stop()
    finally:
        rc = srv.stop()
    check(rc == 0, "SIGTERM stops the server cleanly (exit 0)")
    print("serve e2e: all checks passed")


if __name__ == "__main__":
    try:
        main()
    except AssertionError as e:
        print(f"FAILED: {e}", file=sys.stderr)
        sys.exit(1)
