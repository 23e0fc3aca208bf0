#!/usr/bin/env python3
"""An independent verifier for ActionLedger exports, written only from Specs/integrity.md.

    verify_export.py EXPORT.jsonl [CHECKPOINT.json PUBKEY.pub]

Rebuilds each event's canonical bytes from its JSON (§2, §5.3), re-computes the hash chain
(§1, §3), checks each recorded content hash against its preview (§3), every device key's
introduction (by a device or a recovery key), every recovery key's registration and every
signed tap's P-256 proof against the device's key (Specs/statements.md), and, given a checkpoint and public key, checks its Ed25519 signature over the
documented bytes (§4) and that the export extends it. Exit 0 and "ok N HEAD" on success;
exit 1 and "seq N: problem" on the first failure.
"""
import base64
import hashlib, json, re, struct, sys
from datetime import datetime, timezone

CODES = {"action.proposed": 1, "action.reviewed": 2, "action.confirmed": 3, "action.approved": 4,
         "action.auto_shipped": 5, "action.dismissed": 6, "action.held": 7, "action.edited": 8,
         "action.executed": 9, "action.failed": 10, "action.expired": 11, "device.linked": 20,
         "device.revoked": 21, "device.key_rotated": 22, "person.recovery_key_set": 23, "policy.set": 30, "store.created": 40, "store.relying_party": 41, "tap.refused": 50,
         "token.issued": 60, "token.revoked": 61}
SCOPES = {"device": 1, "specialist": 2, "auditor": 3}
STAKES = {"low": 0, "medium": 1, "high": 2}

def whole(v):
    # JSON has one number type: an integer field spelt as a float (2.0, -0.0) is that
    # integer, as the engine (and JSON Schema's "integer") reads it.
    if isinstance(v, float):
        assert v.is_integer(), "not an integer: %r" % v
        return int(v)
    return v
def u8(v): return bytes([whole(v)])
def fixed64(v): return struct.pack(">Q", whole(v) & (2**64 - 1))
def varint(v):
    v = whole(v)
    out = bytearray()
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80); v >>= 7
    out.append(v); return bytes(out)
def string(s): b = s.encode("utf-8"); return varint(len(b)) + b
def double(d): return struct.pack(">d", float(d))
def digest(h): assert re.fullmatch(r"[0-9a-f]{64}", h); return bytes.fromhex(h)
def optional(v, f): return b"\x00" if v is None else b"\x01" + f(v)

def ms(text):
    m = re.fullmatch(r"(\d{4}-\d\d-\d\d)T(\d\d):(\d\d)(?::(\d\d)(?:\.(\d+))?)?(Z|[+-]\d\d:\d\d)", text)
    y, mo, d = map(int, m.group(1).split("-"))
    secs = datetime(y, mo, d, int(m.group(2)), int(m.group(3)), int(m.group(4) or 0), tzinfo=timezone.utc).timestamp()
    frac = int(((m.group(5) or "") + "000")[:3])
    total = int(secs) * 1000 + frac
    if m.group(6) != "Z":
        sign = 1 if m.group(6)[0] == "+" else -1
        total -= sign * (int(m.group(6)[1:3]) * 3600000 + int(m.group(6)[4:6]) * 60000)
    return total
def timestamp(text): return fixed64(ms(text))
def refuse_constant(name): raise ValueError("%s is not JSON (RFC 8259)" % name)
def no_duplicates(pairs):
    keys = [k for k, _ in pairs]
    if len(keys) != len(set(keys)): raise ValueError("duplicate key")
    return dict(pairs)

def compact(v):
    if v is None: return "null"
    if v is True: return "true"
    if v is False: return "false"
    if isinstance(v, (int, float)):
        if v == 0 and str(float(v)).startswith("-"): return "-0.0"  # a negative zero keeps its sign
        if float(v) == int(v) and abs(v) < 1e15: return str(int(v))
        return repr(float(v))  # shortest round-trip; matches for the values the engine writes
    if isinstance(v, str):
        out = '"'
        for c in v:
            if c == '"': out += '\\"'
            elif c == "\\": out += "\\\\"
            elif c == "\n": out += "\\n"
            elif c == "\r": out += "\\r"
            elif c == "\t": out += "\\t"
            elif ord(c) < 0x20: out += "\\u%04x" % ord(c)
            else: out += c
        return out + '"'
    if isinstance(v, list): return "[" + ",".join(compact(x) for x in v) + "]"
    return "{" + ",".join(compact(k) + ":" + compact(x) for k, x in v.items()) + "}"

def preview(p):
    return string(p["text"]) + varint(p.get("assets", 0)) + optional(p.get("price"), double)

def proof(t, e):
    # The signed schema of a tap type appends its proof (events.md, "Signed taps").
    signed = 3 if t in ("action.reviewed", "action.confirmed", "action.approved", "action.dismissed") else 2
    if e["schema_version"] < signed: return b""
    return proof_bytes(e["data"]["proof"])

def proof_bytes(p):
    assert p["format"] in ("p256", "webauthn") and re.fullmatch(r"[0-9a-f]{128}", p["signature"])
    out = (u8(1 if p["format"] == "p256" else 2) + timestamp(p["claimed_at"]) + digest(p["content_hash"])
           + digest(p["key_fingerprint"]) + u8({"signed": 1, "signed_uv": 2}[p["level"]]) + bytes.fromhex(p["signature"]))
    if p["format"] == "webauthn":
        auth, client = bytes.fromhex(p["authenticator_data"]), bytes.fromhex(p["client_data_json"])
        out += varint(len(auth)) + auth + varint(len(client)) + client
    return out

def proof_problem(p, key, msg, rp, platform):
    # statements.md §2.1, §2.4: None when proof p proves its recorded level over msg with key.
    spki, sig = bytes.fromhex(key["public_key"]), bytes.fromhex(p["signature"])
    if p["format"] == "p256":
        if p["level"] != ("signed_uv" if key["protection"] == "user-verification" else "signed"): return "proof level"
        return None if p256_verify(spki, sig, msg) else "proof signature"
    auth, client = bytes.fromhex(p["authenticator_data"]), bytes.fromhex(p["client_data_json"])
    if not rp: return "webauthn proof without a relying party"
    if len(auth) < 37 or auth[:32] != hashlib.sha256(rp["rp_id"].encode("utf-8")).digest(): return "webauthn rp_id"
    if not auth[32] & 1: return "webauthn user presence"
    try:
        c = json.loads(client)
    except ValueError:
        return "webauthn client data"
    challenge = base64.urlsafe_b64encode(hashlib.sha256(msg).digest()).rstrip(b"=").decode("ascii")
    if not isinstance(c, dict) or c.get("type") != "webauthn.get": return "webauthn type"
    if c.get("challenge") != challenge: return "webauthn challenge"
    if c.get("origin") not in rp["origins"]: return "webauthn origin"
    # The UV flag counts only from an authenticator that sets it itself: a key file (cli) or a
    # key declared none signs whatever authenticatorData it is handed (statements.md §2.4).
    uv = auth[32] & 4 and key["protection"] != "none" and platform != "cli"
    # ... but a level an earlier build recorded by the flag alone stays verifiable (events.md, Versioning).
    if p["level"] not in ("signed_uv" if uv else "signed", "signed_uv" if auth[32] & 4 else "signed"): return "proof level"
    return None if p256_verify(spki, sig, auth + hashlib.sha256(client).digest()) else "proof signature"

def device_key(k):
    # device.linked schema 2: SPKI DER (length-prefixed), protection, trust (statements.md §1).
    spki = bytes.fromhex(k["public_key"])
    assert hashlib.sha256(spki).hexdigest() == k["fingerprint"], "key fingerprint"
    out = varint(len(spki)) + spki + u8({"none": 0, "device": 1, "user-verification": 2}[k["protection"]])
    if k["trust"] == "first_use": return out + u8(0)
    if k["trust"] == "recovery": return out + u8(2) + digest(k["recovery_key_fingerprint"]) + bytes.fromhex(k["introduction_signature"])
    return out + u8(1) + string(k["introduced_by"]) + bytes.fromhex(k["introduction_signature"])

def recovery_key_set(d):
    # person.recovery_key_set (events.md): SPKI DER, optional previous fingerprint, trust (statements.md §1.2).
    spki = bytes.fromhex(d["key"]["public_key"])
    assert hashlib.sha256(spki).hexdigest() == d["key"]["fingerprint"], "recovery key fingerprint"
    out = varint(len(spki)) + spki + optional(d.get("previous_key_fingerprint"), digest)
    trust = {"first_use": 0, "device": 1, "recovery_key": 2}[d["trust"]]
    if trust == 1: return out + u8(1) + string(d["signed_by"]) + bytes.fromhex(d["signature"])
    return out + u8(trust) + (bytes.fromhex(d["signature"]) if trust == 2 else b"")

STEPS = {"action.reviewed": "review", "action.confirmed": "confirm", "action.approved": "approve",
         "action.dismissed": "dismiss", "action.edited": "edit", "action.held": "hold"}

def statement(domain, lines):
    return (domain + "\n" + "".join("%s:%s\n" % kv for kv in lines)).encode("ascii")

def p256_verify(spki, raw, msg):
    # statements.md §1: ECDSA P-256 / SHA-256; the log stores signatures as raw r‖s.
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature
    der = encode_dss_signature(int.from_bytes(raw[:32], "big"), int.from_bytes(raw[32:], "big"))
    try:
        serialization.load_der_public_key(spki).verify(der, msg, ec.ECDSA(hashes.SHA256()))
        return True
    except InvalidSignature:
        return False

RP = "\0relying_party"  # kept beside the devices: no device id can spell it

def sign_count_problem(p, counts):
    # statements.md §2.5: once a key has shown a non-zero signature counter (authenticatorData
    # bytes 33..36, big-endian), each later assertion of it must show a greater one.
    if p["format"] != "webauthn": return None
    count = int.from_bytes(bytes.fromhex(p["authenticator_data"])[33:37], "big")
    last = counts.get(p["key_fingerprint"])
    if last is not None and count <= last: return "webauthn sign_count %d after %d" % (count, last)
    if count: counts[p["key_fingerprint"]] = count
    return None

def canonical_spki(spki):
    # statements.md §1: one spelling per key, the SPKI DER of an uncompressed P-256 point.
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    try:
        k = serialization.load_der_public_key(spki)
    except ValueError:
        return False
    return (isinstance(k, ec.EllipticCurvePublicKey) and k.curve.name == "secp256r1"
            and k.public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo) == spki)

def check_proofs(e, store, devices, state):
    """statements.md §1.1-§2: keyed links' introductions, and every keyed device's proof. Returns a problem or None."""
    t, d, counts = e["type"], e["data"], state["counts"]
    key = d.get("key") if t in ("device.linked", "device.key_rotated", "person.recovery_key_set") else None
    if key and not canonical_spki(bytes.fromhex(key["public_key"])):
        return "the key is not the SPKI DER of an uncompressed P-256 point"
    if t == "person.recovery_key_set":
        return check_recovery_key(e, store, devices, state)
    if t == "device.linked":
        k = d.get("key")
        if k:
            mine = [x for k_, x in devices.items() if k_ != RP and x["person"] == e["person"] and x["key"]]
            if k["trust"] == "first_use" and mine: return "a second keyed device on first use"
            if k["trust"] == "recovery":
                problem = check_recovered_link(e, store, mine, state["recovery"].get(e["person"]))
                if problem: return problem
            if k["trust"] == "introduced":
                by = devices.get(k["introduced_by"])
                if not by or not by["key"] or by["revoked"] or by["person"] != e["person"] or by["org"] != e["org"]:
                    return "introduced by %s, not an unrevoked keyed device of %s" % (k["introduced_by"], e["person"])
                msg = statement("actionledger-link-v1", [("store", store), ("org", e["org"]), ("person", e["person"]),
                    ("device", d["device"]), ("platform", d["platform"]), ("key", k["fingerprint"]),
                    ("key_protection", k["protection"]), ("introduced_by", k["introduced_by"])])
                if not p256_verify(bytes.fromhex(by["key"]["public_key"]), bytes.fromhex(k["introduction_signature"]), msg):
                    return "introduction signature"
        devices[d["device"]] = {"person": e["person"], "org": e["org"], "key": k, "revoked": False, "platform": d["platform"]}
        return None
    if t == "device.revoked":
        problem = check_revocation(e, store, devices)
        if not problem: devices[d["device"]]["revoked"] = True
        return problem
    if t == "device.key_rotated":
        # statements.md §3.1: signed by an unrevoked keyed device of the person, with its key in force.
        dev, k = devices.get(d["device"]), d["key"]
        if not dev or not dev["key"] or dev["revoked"] or dev["person"] != e["person"] or dev["org"] != e["org"]:
            return "a rotation of %s, not an unrevoked keyed device of %s" % (d["device"], e["person"])
        if d["previous_key_fingerprint"] != dev["key"]["fingerprint"]: return "rotation of another key than the one in force"
        if k["fingerprint"] == dev["key"]["fingerprint"]: return "a rotation to the key in force"
        if dev["platform"] == "cli" and k["protection"] == "user-verification": return "a cli key declaring user-verification"
        by = devices.get(k.get("introduced_by"))
        if k["trust"] != "introduced" or not by or not by["key"] or by["revoked"] or by["person"] != e["person"] or by["org"] != e["org"]:
            return "rotation signed by %s, not an unrevoked keyed device of %s" % (k.get("introduced_by"), e["person"])
        msg = statement("actionledger-rotate-v1", [("store", store), ("org", e["org"]), ("person", e["person"]),
            ("device", d["device"]), ("platform", dev["platform"]), ("key", k["fingerprint"]), ("key_protection", k["protection"]),
            ("previous_key", d["previous_key_fingerprint"]), ("signed_by", k["introduced_by"])])
        if not p256_verify(bytes.fromhex(by["key"]["public_key"]), bytes.fromhex(k["introduction_signature"]), msg):
            return "rotation signature"
        dev["key"] = k
        return None
    if t == "tap.refused":
        return check_refusal(e, store, devices.get(e.get("device")), devices.get(RP)) or sign_count_problem(d["proof"], counts)
    if t == "store.relying_party":
        devices[RP] = d  # the relying party in force from here (statements.md §2.4)
        return None
    if t not in STEPS or e.get("device") not in devices: return None
    dev, p = devices[e["device"]], d.get("proof")
    if not dev["key"]: return "a proof from a device without a key" if p else None
    if not p: return "a keyed device's %s without a proof" % t
    if p["key_fingerprint"] != dev["key"]["fingerprint"]: return "proof by another key than the device's"
    lines = [("store", store), ("org", e["org"]), ("action", e["action_id"]), ("step", STEPS[t]),
             ("content", p["content_hash"]), ("device", e["device"]), ("command", e["command_id"]),
             ("claimed_at", p["claimed_at"])]
    sha = lambda text: hashlib.sha256(text.encode("utf-8")).hexdigest()
    if t == "action.held": lines.append(("until", iso(ms(d["until"]))))
    if t == "action.edited": lines.append(("text_sha256", sha(d["preview"]["text"])))
    if t == "action.dismissed": lines.append(("reason_sha256", sha(d["reason"])))
    lines[7] = ("claimed_at", iso(ms(p["claimed_at"])))
    return proof_problem(p, dev["key"], statement("actionledger-statement-v1", lines), devices.get(RP), dev["platform"]) \
        or sign_count_problem(p, counts)

def check_revocation(e, store, devices):
    # statements.md §3.4: a revocation made from her device (schema 2) carries that device's
    # signature over the session challenge statement whose purpose names the revoked device.
    d, p, by = e["data"], e["data"].get("proof"), e.get("device")
    target = devices.get(d["device"])
    if not target: return "revocation of %s, a device never linked" % d["device"]
    if target["person"] != e["person"] or target["org"] != e["org"]:
        return "revocation names %s/%s, the device is %s/%s" % (e["person"], e["org"], target["person"], target["org"])
    if not p: return None
    if by is None: return "a revocation no device made carries a signature"
    dev = devices.get(by)
    if not dev or not dev["key"] or dev["revoked"] or dev["person"] != e["person"] or dev["org"] != e["org"]:
        return "revocation signed by %s, not an unrevoked keyed device of %s" % (by, e["person"])
    if p["key_fingerprint"] != dev["key"]["fingerprint"]: return "revocation signed by another key than the device's"
    msg = ("actionledger-session-v1\nstore_id: %s\ndevice: %s\npurpose: revoke:%s\nchallenge: %s\n"
           % (store, by, d["device"], p["challenge"])).encode("ascii")
    if not p256_verify(bytes.fromhex(dev["key"]["public_key"]), bytes.fromhex(p["signature"]), msg): return "revocation signature"
    return None

def check_recovered_link(e, store, mine, rec):
    # statements.md §1.2, §3.3: her recovery key in force signed, and every keyed device of hers is revoked.
    d, k = e["data"], e["data"]["key"]
    if not rec or rec["org"] != e["org"]: return "recovered for %s, who has no recovery key" % e["person"]
    if rec["key"]["fingerprint"] != k["recovery_key_fingerprint"]: return "recovered with a recovery key not in force"
    if any(not x["revoked"] for x in mine): return "recovered while a keyed device of %s is unrevoked" % e["person"]
    msg = statement("actionledger-recovery-link-v1", [("store", store), ("org", e["org"]), ("person", e["person"]),
        ("device", d["device"]), ("platform", d["platform"]), ("key", k["fingerprint"]), ("key_protection", k["protection"]),
        ("recovery_key", k["recovery_key_fingerprint"])])
    if not p256_verify(bytes.fromhex(rec["key"]["public_key"]), bytes.fromhex(k["introduction_signature"]), msg):
        return "recovery signature"
    return None

def check_recovery_key(e, store, devices, state):
    # statements.md §1.2: first use only with her first keyed link (the event before, same command);
    # else signed by an unrevoked keyed device of hers or by the recovery key it replaces.
    d, person, current, prev = e["data"], e["person"], state["recovery"].get(e["person"]), state["previous"]
    if d.get("previous_key_fingerprint") != (current and current["key"]["fingerprint"]): return "recovery key replaces another than the one in force"
    if current and current["org"] != e["org"]: return "recovery key under another org"
    if current and current["key"]["fingerprint"] == d["key"]["fingerprint"]: return "recovery key already in force"
    if d["trust"] == "first_use":
        link = prev and prev["type"] == "device.linked" and prev["command_id"] == e["command_id"] and prev["person"] == person \
            and prev["org"] == e["org"] and (prev["data"].get("key") or {}).get("trust") == "first_use"
        if current or not link: return "recovery key on first use outside her first keyed link"
    else:
        signed_by = "device:" + d["signed_by"] if d["trust"] == "device" else "recovery_key"
        msg = statement("actionledger-recovery-key-v1", [("store", store), ("org", e["org"]), ("person", person),
            ("key", d["key"]["fingerprint"]), ("previous_key", d.get("previous_key_fingerprint") or "none"), ("signed_by", signed_by)])
        if d["trust"] == "device":
            by = devices.get(d["signed_by"])
            if not by or not by["key"] or by["revoked"] or by["person"] != person or by["org"] != e["org"]:
                return "recovery key signed by %s, not an unrevoked keyed device of %s" % (d["signed_by"], person)
            signer = by["key"]["public_key"]
        else:
            if not current: return "recovery key signed by a recovery key %s does not have" % person
            signer = current["key"]["public_key"]
        if not p256_verify(bytes.fromhex(signer), bytes.fromhex(d["signature"]), msg): return "recovery key signature"
    state["recovery"][person] = {"key": d["key"], "org": e["org"]}
    return None

def check_refusal(e, store, dev, rp):
    # statements.md §2.3: the recorded statement is the one the envelope and proof imply (its
    # parameter line aside), signed by the device's key in force, claimed within the window.
    d, p = e["data"], e["data"]["proof"]
    if not dev or not dev["key"] or dev["person"] != e["person"] or dev["org"] != e["org"]: return "a refusal of no keyed device of the person"
    if p["key_fingerprint"] != dev["key"]["fingerprint"]: return "refusal signed by another key than the device's"
    age = ms(e["at"]) - ms(p["claimed_at"])
    if age > 24 * 3600000 or -age > 5 * 60000: return "refusal claimed_at outside the window"
    lines = [("store", store), ("org", e["org"]), ("action", e["action_id"]), ("step", d["step"]),
             ("content", p["content_hash"]), ("device", e["device"]), ("command", e["command_id"]),
             ("claimed_at", iso(ms(p["claimed_at"])))]
    recorded = bytes.fromhex(d["statement"])
    param = {"hold": "until", "edit": "text_sha256", "dismiss": "reason_sha256"}.get(d["step"])
    if param:
        last = recorded.decode("utf-8", "replace").rstrip("\n").split("\n")[-1]
        value = last[len(param) + 1:]
        good = iso(ms(value)) == value if param == "until" and re.fullmatch(r"\d{4}-\d\d-\d\dT[\d:.]+Z", value) else bool(re.fullmatch(r"[0-9a-f]{64}", value))
        if not last.startswith(param + ":") or not good: return "refusal statement parameter"
        lines.append((param, value))
    if statement("actionledger-statement-v1", lines) != recorded: return "refusal statement"
    problem = proof_problem(p, dev["key"], recorded, rp, dev["platform"])
    return problem and "refusal " + problem

def iso(total):
    t = datetime.fromtimestamp(total // 1000, tz=timezone.utc)
    return t.strftime("%Y-%m-%dT%H:%M:%S") + ".%03dZ" % (total % 1000)

def rules(d):
    # Schema 2 of a proposal or decision appends its rules version (events.md, "Versioning").
    return varint(d["rules_version"]) if "rules_version" in d else b""

def payload(t, d, e):
    return body(t, d) + (proof(t, e) if t in SIGNED else b"")

SIGNED = ("action.reviewed", "action.confirmed", "action.approved", "action.dismissed", "action.held", "action.edited")

def body(t, d):
    if t == "action.proposed":
        pinned = b""
        if "rules_version" in d:
            pinned = rules(d) + u8(STAKES[d["pinned_stakes"]]) + u8(1 if d["pinned_user_verification"] else 0)
        return (string(d["specialist"]["name"]) + string(d["specialist"]["agent"]) + string(d["surface"]) + string(d["kind"])
                + string(d["target"]["type"]) + string(d["target"]["id"]) + u8(STAKES[d["stakes"]]) + double(d["confidence"])
                + preview(d["preview"]) + string(d["rationale"]) + optional(d.get("scheduled_for"), timestamp)
                + optional(d.get("expires_at"), timestamp) + digest(d["content_hash"]) + pinned)
    if t in ("action.reviewed", "action.confirmed"):
        return digest(d["content_hash"]) + varint(d["policy_version"]) + rules(d)
    if t == "action.approved":
        return (digest(d["content_hash"]) + varint(d["policy_version"]) + string(d["rule"]) + u8(STAKES[d["stakes"]])
                + u8(1 if d.get("user_verified") else 0) + rules(d))
    if t == "action.auto_shipped":
        return digest(d["content_hash"]) + varint(d["policy_version"]) + string(d["rule"]) + double(d["confidence"]) + rules(d)
    if t == "action.dismissed": return string(d["reason"]) + varint(d["policy_version"]) + rules(d)
    if t == "store.created": return u8(1 if d["test_clock"] else 0) + u8(1 if d["demo"] else 0)
    if t == "action.held": return timestamp(d["until"])
    if t == "action.edited": return preview(d["preview"]) + digest(d["content_hash"])
    if t in ("action.executed", "action.failed"): return string(compact(d["outcome"]))
    if t == "action.expired": return b""
    if t == "device.linked":
        key = device_key(d["key"]) if "key" in d else b""
        return string(d["device"]) + string(d["label"]) + string(d["platform"]) + key
    if t == "device.revoked":
        # Schema 2: the revoking device's key, the challenge and its signature (raw r‖s).
        p = d.get("proof")
        signed = digest(p["key_fingerprint"]) + digest(p["challenge"]) + bytes.fromhex(p["signature"]) if p else b""
        return string(d["device"]) + string(d["reason"]) + signed
    if t == "token.issued":
        return (string(d["token_id"]) + u8(SCOPES[d["scope"]]) + optional(d.get("subject"), string)
                + timestamp(d["expires_at"]) + digest(d["secret_sha256"]))
    if t == "token.revoked": return string(d["token_id"]) + string(d["reason"])
    if t == "person.recovery_key_set": return recovery_key_set(d)
    if t == "store.relying_party": return string(d["rp_id"]) + varint(len(d["origins"])) + b"".join(string(o) for o in d["origins"])
    if t == "tap.refused":
        statement_bytes = bytes.fromhex(d["statement"])
        return (u8(["review", "confirm", "approve", "dismiss", "edit", "hold"].index(d["step"])) + string(d["code"])
                + varint(len(statement_bytes)) + statement_bytes + proof_bytes(d["proof"]))
    if t == "device.key_rotated":
        assert d["key"]["trust"] == "introduced", "a rotated key is introduced"
        return string(d["device"]) + digest(d["previous_key_fingerprint"]) + device_key(d["key"])
    if t == "policy.set":
        a = d["auto_ship"]
        return (varint(d["version"]) + u8(1 if a["enabled"] else 0) + double(a["confidence_floor"]) + varint(a["daily_cap"])
                + varint(len(d["user_verification"])) + b"".join(u8(STAKES[s]) for s in d["user_verification"])
                + varint(len(d["raise"])) + b"".join(optional(r.get("kind"), string) + optional(r.get("surface"), string)
                                                    + u8(STAKES[r["stakes"]]) for r in d["raise"]) + proof_table(d))
    raise ValueError("unknown type " + t)

def proof_table(d):
    # policy.set schema 2 (policy.md §2a): the requirements above none, by stakes then step.
    if "proofs" not in d: return b""
    steps = ["review", "confirm", "approve", "dismiss", "edit", "hold"]
    table = [(STAKES[s], i, {"signed": 1, "signed_uv": 2}[r]) for s in ("low", "medium", "high") for i, step in enumerate(steps)
             for r in [d["proofs"].get(s, {}).get(step, "none")] if r != "none"]
    return varint(len(table)) + b"".join(u8(a) + u8(b) + u8(c) for a, b, c in table)

def canonical(e):
    return (u8(1) + u8(CODES[e["type"]]) + u8(e["schema_version"]) + fixed64(e["seq"]) + timestamp(e["at"])
            + string(e["actor"]) + optional(e.get("device"), string) + string(e["command_id"]) + string(e["org"])
            + string(e["person"]) + optional(e.get("action_id"), string) + payload(e["type"], e["data"], e))

DIGESTS = ("content_hash", "key_fingerprint", "fingerprint", "recovery_key_fingerprint", "previous_key_fingerprint",
           "secret_sha256", "challenge")

def lower_digests(v):
    # The engine reads a digest in data (64 hex digits) in either case and writes it lowercase;
    # the bytes are the same, so this script reads them as the engine does (events.md). The
    # chain hash and other hex are lowercase only; an outcome is the caller's JSON, as written.
    if isinstance(v, dict):
        return {k: (x.lower() if k in DIGESTS and isinstance(x, str) and len(x) == 64
                    else x if k == "outcome" else lower_digests(x)) for k, x in v.items()}
    return [lower_digests(x) for x in v] if isinstance(v, list) else v

LINE = [0]  # the line being checked, for the report of a malformed one

def main(argv):
    # A line this script cannot read (a missing field, a bad value, an unknown device) is a
    # refusal naming it, never a traceback.
    try:
        return verify(argv)
    except (KeyError, ValueError, AssertionError, TypeError, AttributeError, OverflowError, IndexError) as x:
        print("seq %d: malformed event (%s: %s)" % (LINE[0], type(x).__name__, x)); return 1

def verify(argv):
    checkpoint = None
    if len(argv) == 4:
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
        cp, pub = json.load(open(argv[2])), json.load(open(argv[3]))
        raw = bytes.fromhex(pub["public_key"])
        assert hashlib.sha256(raw).hexdigest()[:16] == pub["key_id"] == cp["key_id"], "key id"
        signed = "%s\n%d\n%s\n%s\n%s\n" % (cp["format"], cp["log_size"], cp["head_hash"], cp["time"], cp["key_id"])
        Ed25519PublicKey.from_public_bytes(raw).verify(bytes.fromhex(cp["signature"]), signed.encode("ascii"))
        # Signed as written: exactly three fraction digits and Z (integrity.md §4).
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", cp["time"]), "checkpoint time"
        checkpoint = (cp["log_size"], cp["head_hash"], ms(cp["time"]))
    prev, seq, store, devices = bytes(32), 0, None, {}
    # counters, recovery keys in force, the event before, each action's assets and price
    state = {"counts": {}, "recovery": {}, "previous": None, "kept": {}}
    for line in open(argv[1], "rb"):
        LINE[0] = seq + 1
        try:
            e = lower_digests(json.loads(line, parse_constant=refuse_constant, object_pairs_hook=no_duplicates))
        except ValueError as x:
            print("seq %d: not strict JSON: %s" % (seq + 1, x)); return 1
        if not (946684800000 <= ms(e["at"]) < 4102444800000):
            print("seq %s: time %s outside 2000…2100" % (e["seq"], e["at"])); return 1
        if e["seq"] != seq + 1: print("seq %d: missing" % (seq + 1)); return 1
        h = hashlib.sha256(prev + canonical(e)).digest()
        if h.hex() != e["hash"]: print("seq %d: hash mismatch" % e["seq"]); return 1
        # The chain covers what the line says; a recorded content hash must also be the
        # SHA-256 of the preview it is recorded with (§2), or re-chained taps move to new content.
        if e["type"] in ("action.proposed", "action.edited"):
            if hashlib.sha256(preview(e["data"]["preview"])).hexdigest() != e["data"]["content_hash"]:
                print("seq %d: content_hash mismatch" % e["seq"]); return 1
            # An edit replaces the text only (statements.md §2: a signed edit binds the content
            # before it and the new text), so it keeps its action's assets and price.
            kept = (e["data"]["preview"].get("assets", 0), e["data"]["preview"].get("price"))
            if e["type"] == "action.edited" and state["kept"].get(e["action_id"], kept) != kept:
                print("seq %d: an edit changes assets or price" % e["seq"]); return 1
            state["kept"][e["action_id"]] = kept
        store = store or h.hex()  # the store id: the chain hash of seq 1 (statements.md §2)
        problem = check_proofs(e, store, devices, state)
        if problem: print("seq %d: %s" % (e["seq"], problem)); return 1
        state["previous"] = e
        if checkpoint and checkpoint[0] == e["seq"] and checkpoint[1] != h.hex():
            print("seq %d: does not extend the checkpoint" % e["seq"]); return 1
        if checkpoint and checkpoint[0] == e["seq"] and checkpoint[2] < ms(e["at"]):
            print("seq %d: the checkpoint is dated before it (backdated)" % e["seq"]); return 1
        prev, seq = h, e["seq"]
    if seq == 0: print("no events: every export begins with store.created"); return 1
    if checkpoint and seq < checkpoint[0]: print("seq %d: truncated before the checkpoint" % (seq + 1)); return 1
    print("ok", seq, prev.hex()); return 0

if __name__ == "__main__":
    sys.exit(main(sys.argv))
