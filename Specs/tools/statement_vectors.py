#!/usr/bin/env python3
"""Builds and checks Specs/vectors/statements.json from Specs/statements.md alone (tap, link,
rotation, recovery-key, recovery link and session challenge statements).

  python3 Specs/tools/statement_vectors.py          # check every vector (exit 1 on a mismatch)
  python3 Specs/tools/statement_vectors.py --write  # rewrite the file (new random signatures)

Needs the `cryptography` package. The test key is fixed and public: never use it for anything else.
"""
import base64, hashlib, json, pathlib, sys
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature, encode_dss_signature

PATH = pathlib.Path(__file__).resolve().parent.parent / "vectors" / "statements.json"
# The test key: the scalar is SHA-256 of this text (below the P-256 order, so valid).
SEED_TEXT = b"actionledger statement test key 1"
TAP_DOMAIN, LINK_DOMAIN, ROTATE_DOMAIN = "actionledger-statement-v1", "actionledger-link-v1", "actionledger-rotate-v1"
RECOVERY_KEY_DOMAIN, RECOVERY_LINK_DOMAIN = "actionledger-recovery-key-v1", "actionledger-recovery-link-v1"
SESSION_DOMAIN = "actionledger-session-v1"
STORE = "01a73ea1271b532d9951acba47700ce367b3fff575f224d2e37840b3f9bf6c13"
CONTENT = "d291c29c4dbc241f4b2bd265fa6789807ac482c522498363c9fa4a34206f1e70"


def sha(b):
    return hashlib.sha256(b).hexdigest()


def render(domain, lines):
    # The session challenge keeps the first form the server shipped: one space after the colon (§3.4).
    sep = ": " if domain == SESSION_DOMAIN else ":"
    return (domain + "\n" + "".join(f"{k}{sep}{v}\n" for k, v in lines)).encode("ascii")


def tap_lines(i):
    lines = [("store", i["store"]), ("org", i["org"]), ("action", i["action"]), ("step", i["step"]),
             ("content", i["content"]), ("device", i["device"]), ("command", i["command"]), ("claimed_at", i["claimed_at"])]
    if i["step"] == "hold":
        lines.append(("until", i["until"]))
    elif i["step"] == "edit":
        lines.append(("text_sha256", sha(i["text"].encode("utf-8"))))
    elif i["step"] == "dismiss":
        lines.append(("reason_sha256", sha(i["reason"].encode("utf-8"))))
    return lines


def link_lines(i):
    return [(k, i[k]) for k in ("store", "org", "person", "device", "platform", "key", "key_protection", "introduced_by")]


def rotation_lines(i):
    return [(k, i[k]) for k in ("store", "org", "person", "device", "platform", "key", "key_protection", "previous_key",
                                "signed_by")]


def recovery_key_lines(i):
    return [(k, i[k]) for k in ("store", "org", "person", "key", "previous_key", "signed_by")]


def recovery_link_lines(i):
    return [(k, i[k]) for k in ("store", "org", "person", "device", "platform", "key", "key_protection", "recovery_key")]


def session_lines(i):
    return [(k, i[k]) for k in ("store_id", "device", "purpose", "challenge")]


def challenge(msg):
    # statements.md §2.4: a WebAuthn client's challenge is base64url (no padding) of the statement's SHA-256.
    return base64.urlsafe_b64encode(hashlib.sha256(msg).digest()).rstrip(b"=").decode("ascii")


KINDS = (("tap", TAP_DOMAIN, tap_lines), ("link", LINK_DOMAIN, link_lines), ("rotation", ROTATE_DOMAIN, rotation_lines),
         ("recovery_key", RECOVERY_KEY_DOMAIN, recovery_key_lines), ("recovery_link", RECOVERY_LINK_DOMAIN, recovery_link_lines),
         ("session", SESSION_DOMAIN, session_lines))


def test_key():
    scalar = int.from_bytes(hashlib.sha256(SEED_TEXT).digest(), "big")
    return ec.derive_private_key(scalar, ec.SECP256R1())


def spki(key):
    return key.public_key().public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)


def make():
    key = test_key()
    pub = spki(key)
    base = {"store": STORE, "org": "o1", "action": "a1", "content": CONTENT, "device": "iphone-quinn",
            "command": "cmd-0001", "claimed_at": "2026-11-23T10:00:00.000Z"}
    taps = [dict(base, step=s) for s in ("review", "confirm", "approve")]
    taps += [dict(base, step="dismiss", reason="not today"), dict(base, step="dismiss", reason=""),
             dict(base, step="edit", text="New caption ✨"), dict(base, step="hold", until="2026-11-24T09:00:00.000Z")]
    links = [{"store": STORE, "org": "o1", "person": "quinn", "device": "laptop-quinn", "platform": "cli",
              "key": sha(pub), "key_protection": "device", "introduced_by": "iphone-quinn"}]
    out = {"description": "Test vectors for Specs/statements.md. The key is a published test key: never trust it.",
           "test_key": {"seed_text": SEED_TEXT.decode(), "private_scalar_hex": f"{key.private_numbers().private_value:064x}",
                        "public_key_spki_hex": pub.hex(), "fingerprint": sha(pub)},
           "tap": [], "link": [], "rotation": [], "recovery_key": [], "recovery_link": [], "session": []}
    rotations = [{"store": STORE, "org": "o1", "person": "quinn", "device": "iphone-quinn", "platform": "ios",
                  "key": sha(pub), "key_protection": "user-verification", "previous_key": CONTENT, "signed_by": "iphone-quinn"}]
    # statements.md §3.2: her first recovery key signed by her device, then a replacement signed by the key in force.
    recovery_keys = [{"store": STORE, "org": "o1", "person": "quinn", "key": sha(pub), "previous_key": "none",
                      "signed_by": "device:iphone-quinn"},
                     {"store": STORE, "org": "o1", "person": "quinn", "key": sha(pub), "previous_key": CONTENT,
                      "signed_by": "recovery_key"}]
    recovery_links = [{"store": STORE, "org": "o1", "person": "quinn", "device": "iphone-quinn-2", "platform": "ios",
                       "key": sha(pub), "key_protection": "user-verification", "recovery_key": CONTENT}]
    # statements.md §3.4: a sign-in and a revocation (the one device.revoked schema 2 records).
    sessions = [{"store_id": STORE, "device": "iphone-quinn", "purpose": p, "challenge": CONTENT}
                for p in ("session", "revoke:laptop-quinn", "sign_out_others")]
    for kind, domain, lines in KINDS:
        for i in {"tap": taps, "link": links, "rotation": rotations, "recovery_key": recovery_keys,
                  "recovery_link": recovery_links, "session": sessions}[kind]:
            msg = render(domain, lines(i))
            der = key.sign(msg, ec.ECDSA(hashes.SHA256()))
            r, s = decode_dss_signature(der)
            v = {"inputs": i, "statement_hex": msg.hex(), "sha256": sha(msg),
                 "signature_der_base64": base64.b64encode(der).decode(), "signature_raw_hex": f"{r:064x}{s:064x}"}
            if kind == "tap":
                v["webauthn_challenge"] = challenge(msg)
            out[kind].append(v)
    return out


def check(doc):
    pub = serialization.load_der_public_key(bytes.fromhex(doc["test_key"]["public_key_spki_hex"]))
    assert sha(bytes.fromhex(doc["test_key"]["public_key_spki_hex"])) == doc["test_key"]["fingerprint"]
    assert spki(test_key()).hex() == doc["test_key"]["public_key_spki_hex"], "test key"
    n = 0
    for kind, domain, lines in KINDS:
        for v in doc[kind]:
            msg = render(domain, lines(v["inputs"]))
            assert msg.hex() == v["statement_hex"], f"{kind} {v['inputs']}: statement bytes"
            assert sha(msg) == v["sha256"], "sha256"
            assert kind != "tap" or v["webauthn_challenge"] == challenge(msg), "webauthn challenge"
            pub.verify(base64.b64decode(v["signature_der_base64"]), msg, ec.ECDSA(hashes.SHA256()))
            raw = bytes.fromhex(v["signature_raw_hex"])
            der = encode_dss_signature(int.from_bytes(raw[:32], "big"), int.from_bytes(raw[32:], "big"))
            pub.verify(der, msg, ec.ECDSA(hashes.SHA256()))
            n += 1
    return n


if __name__ == "__main__":
    if "--write" in sys.argv:
        new = make()
        old = json.loads(PATH.read_text()) if PATH.exists() else {}
        for kind, _, _ in KINDS:
            # Vectors whose inputs are unchanged keep their signatures: a rewrite shows only what changed.
            if [v["inputs"] for v in old.get(kind, [])] == [v["inputs"] for v in new[kind]]:
                new[kind] = old[kind]
        PATH.write_text(json.dumps(new, indent=2, ensure_ascii=False) + "\n")
    print(f"ok: {check(json.loads(PATH.read_text()))} statement vectors verified")
