#!/usr/bin/env python3
"""Checks the language-neutral contract in Specs/ offline.

1. Every Specs/schemas/*.schema.json is a valid JSON Schema (draft 2020-12).
2. Every event of Specs/schemas/examples/events.jsonl (written by the engine; the Swift
   test EventJSONTests keeps it current) and of signed-events.jsonl (keyed links, signed
   taps, key rotations and recovery keys; SignedExportTests) validates against event.schema.json and its
   type's schema -- and mutated copies that the engine refuses are refused by the schemas too.
3. The proposal-input and policy examples validate; mutated copies do not.
4. Every Specs/scenarios/*.json validates against scenario.schema.json.
5. Specs/openapi.yaml is well-formed YAML with the OpenAPI document's top-level keys.

Needs the Python packages `jsonschema` (4.18 or later) and `PyYAML`. Exit status 0 when all hold.
Usage: python3 Specs/tools/validate.py
"""
import copy
import json
import pathlib
import sys

try:
    import jsonschema
    from referencing import Registry, Resource
except ImportError:
    sys.exit("validate.py needs jsonschema >= 4.18: pip install jsonschema")
try:
    import yaml
except ImportError:
    sys.exit("validate.py needs PyYAML: pip install pyyaml")

SPECS = pathlib.Path(__file__).resolve().parent.parent
SCHEMAS = SPECS / "schemas"
BASE = "https://actionledger.dev/schemas/"

failures = []


def load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def registry():
    resources = []
    for path in sorted(SCHEMAS.glob("*.schema.json")):
        schema = load(path)
        jsonschema.Draft202012Validator.check_schema(schema)
        if schema.get("$id") != BASE + path.name:
            failures.append(f"{path.name}: $id should be {BASE + path.name}")
        resources.append((BASE + path.name, Resource.from_contents(schema)))
    return Registry().with_resources(resources)


REGISTRY = registry()


def validator(name):
    return jsonschema.Draft202012Validator(load(SCHEMAS / name), registry=REGISTRY,
                                           format_checker=jsonschema.FormatChecker())


def expect_valid(v, instance, what):
    errors = sorted(v.iter_errors(instance), key=lambda e: list(e.path))
    if errors:
        failures.append(f"{what}: {errors[0].message} at {'/'.join(map(str, errors[0].path))}")


def expect_invalid(v, instance, what):
    if v.is_valid(instance):
        failures.append(f"{what}: accepted, but the engine refuses it")


def mutations(event):
    """Copies of an event the engine's reader refuses (Event(json:))."""
    def m(f):
        e = copy.deepcopy(event)
        f(e)
        return e
    yield "unknown top-level field", m(lambda e: e.__setitem__("extra", 1))
    yield "unknown data field", m(lambda e: e["data"].__setitem__("extra", 1))
    yield "schema_version 9", m(lambda e: e.__setitem__("schema_version", 9))
    yield "seq 0", m(lambda e: e.__setitem__("seq", 0))
    yield "bad time", m(lambda e: e.__setitem__("at", "yesterday"))
    yield "empty command id", m(lambda e: e.__setitem__("command_id", ""))
    yield "no data", m(lambda e: e.pop("data"))
    if event["type"].startswith("action.") or event["type"] == "tap.refused":
        yield "action event without action_id", m(lambda e: e.pop("action_id"))
        yield "action_id with a space", m(lambda e: e.__setitem__("action_id", "a 1"))
    else:
        yield "action_id on a non-action event", m(lambda e: e.__setitem__("action_id", "a1"))
    for key in sorted(event["data"]):
        if key in ("user_verified", "assets", "price", "scheduled_for", "expires_at", "auto_ship",
                   "user_verification", "raise", "previous_key_fingerprint" if event["type"] == "person.recovery_key_set" else ""):
            continue  # optional members
        yield f"data without {key}", m(lambda e, k=key: e["data"].pop(k))
    if "stakes" in event["data"]:
        yield "stakes 'huge'", m(lambda e: e["data"].__setitem__("stakes", "huge"))
    if "content_hash" in event["data"]:
        yield "short content hash", m(lambda e: e["data"].__setitem__("content_hash", "abc"))
    if "confidence" in event["data"] and event["type"] == "action.proposed":
        yield "confidence 1.5", m(lambda e: e["data"].__setitem__("confidence", 1.5))
    if event["type"] == "device.revoked" and "proof" in event["data"]:
        yield "a signed revocation without its challenge", m(lambda e: e["data"]["proof"].pop("challenge"))
        yield "a signed revocation with a short signature", m(lambda e: e["data"]["proof"].__setitem__("signature", "ab"))
        yield "a signed revocation in schema 1", m(lambda e: e.__setitem__("schema_version", 1))
        yield "a signed revocation no device made", m(lambda e: e.__setitem__("device", None))
    elif "proof" in event["data"]:
        yield "proof level 'maybe'", m(lambda e: e["data"]["proof"].__setitem__("level", "maybe"))
        yield "short signature", m(lambda e: e["data"]["proof"].__setitem__("signature", "ab"))
        if event["data"]["proof"]["format"] == "webauthn":
            yield "webauthn without authenticator data", m(lambda e: e["data"]["proof"].pop("authenticator_data"))
        else:
            yield "p256 with client data", m(lambda e: e["data"]["proof"].__setitem__("client_data_json", "7b7d"))
        yield "proof in an earlier schema", m(lambda e: e.__setitem__("schema_version", e["schema_version"] - 1))
    if "key" in event["data"]:
        yield "key protection 'face'", m(lambda e: e["data"]["key"].__setitem__("protection", "face"))
    if "key" in event["data"] and event["type"] == "device.linked":
        yield "key in schema 1", m(lambda e: e.__setitem__("schema_version", 1))
    if event["type"] == "tap.refused":
        yield "a refusal code never recorded", m(lambda e: e["data"].__setitem__("code", "bad_proof"))
        yield "a refusal without its statement", m(lambda e: e["data"].pop("statement"))
    if event["type"] == "device.linked" and event["schema_version"] == 3:
        yield "a recovered key in schema 2", m(lambda e: e.__setitem__("schema_version", 2))
        yield "a recovered key without its recovery key", m(lambda e: e["data"]["key"].pop("recovery_key_fingerprint"))
    if event["type"] == "device.linked" and event["schema_version"] == 2:
        yield "trust recovery in schema 2", m(lambda e: e["data"]["key"].__setitem__("trust", "recovery"))
    if event["type"] == "person.recovery_key_set":
        yield "a recovery key on the operator's word", m(lambda e: e["data"].__setitem__("trust", "operator"))
        if event["data"]["trust"] == "first_use":
            yield "a first-use recovery key with a signature", m(lambda e: e["data"].__setitem__("signature", "ab" * 64))
        else:
            yield "a signed recovery key without its signature", m(lambda e: e["data"].pop("signature"))
    if event["type"] == "device.key_rotated":
        yield "a rotated key on first use", m(lambda e: e["data"]["key"].__setitem__("trust", "first_use"))
        yield "no previous key", m(lambda e: e["data"].pop("previous_key_fingerprint"))


def check_events(name="events.jsonl"):
    any_event = validator("event.schema.json")
    lines = (SCHEMAS / "examples" / name).read_text(encoding="utf-8").splitlines()
    types = set()
    for n, line in enumerate(lines, 1):
        event = json.loads(line)
        types.add(event["type"])
        own = validator(event["type"] + ".schema.json")
        expect_valid(own, event, f"{name} line {n} ({event['type']})")
        expect_valid(any_event, event, f"{name} line {n} against event.schema.json")
        for what, bad in mutations(event):
            expect_invalid(any_event, bad, f"{name} line {n} ({event['type']}) with {what}")
    return len(lines), types


def check_every_type(*type_sets):
    # Types only signed stores have (a key rotation's signature is random) are in signed-events.jsonl.
    types = set().union(*type_sets)
    schema_types = {p.name[: -len(".schema.json")] for p in SCHEMAS.glob("*.*.schema.json")}
    if types != schema_types:
        failures.append(f"the example exports have types {sorted(types)}, the schemas {sorted(schema_types)}")


def check_inputs():
    proposal = load(SCHEMAS / "examples" / "proposal-input.json")
    v = validator("proposal-input.schema.json")
    expect_valid(v, proposal, "proposal-input.json")
    for key in ("action_id", "stakes", "preview", "rationale", "target"):
        bad = dict(proposal)
        bad.pop(key)
        expect_invalid(v, bad, f"proposal-input.json without {key}")
    expect_invalid(v, dict(proposal, stakes="urgent"), "proposal-input.json with stakes urgent")
    expect_invalid(v, dict(proposal, confidence=-0.1), "proposal-input.json with confidence -0.1")
    expect_invalid(v, dict(proposal, surface="only fans"), "proposal-input.json with a space in surface")
    expect_invalid(v, dict(proposal, preview={"text": "x", "assets": 1001}), "proposal-input.json with 1001 assets")
    expect_invalid(v, dict(proposal, extra=True), "proposal-input.json with an unknown field")

    policy = load(SCHEMAS / "examples" / "policy.json")
    v = validator("policy.schema.json")
    expect_valid(v, policy, "policy.json")
    expect_valid(v, {}, "an empty policy document (all defaults)")
    expect_invalid(v, dict(policy, user_verification=["high", "high"]), "policy.json with repeated stakes")
    expect_invalid(v, dict(policy, auto_ship={"confidence_floor": 2}), "policy.json with floor 2")
    expect_invalid(v, dict(policy, **{"raise": [{"kind": "x"}]}), "policy.json with a raise rule without stakes")
    strict = load(SPECS / "policies" / "strict.json")
    expect_valid(v, strict, "policies/strict.json")
    expect_invalid(v, dict(strict, proofs={"high": {"approve": "uv"}}), "strict.json with an unknown requirement")
    expect_invalid(v, dict(strict, proofs={"high": {"execute": "signed"}}), "strict.json with a step no device signs")


def check_scenarios():
    v = validator("scenario.schema.json")
    files = sorted((SPECS / "scenarios").glob("*.json"))
    for path in files:
        expect_valid(v, load(path), f"scenarios/{path.name}")
    return len(files)


events, unsigned_types = check_events()
# Keyed links, signed taps, key rotations and recovery keys, exported by the engine (SignedExportTests keeps the file true).
signed, signed_types = check_events("signed-events.jsonl")
check_every_type(unsigned_types, signed_types)
check_inputs()
scenarios = check_scenarios()
try:
    openapi = yaml.safe_load((SPECS / "openapi.yaml").read_text())
    missing = {"openapi", "info", "paths", "components"} - set(openapi or {})
    if missing:
        failures.append(f"openapi.yaml: no {', '.join(sorted(missing))}")
except yaml.YAMLError as e:
    failures.append(f"openapi.yaml is not well-formed YAML: {e}")
if failures:
    print(f"Specs/tools/validate.py: {len(failures)} problem(s):", file=sys.stderr)
    for f in failures:
        print("  " + f, file=sys.stderr)
    sys.exit(1)
print(f"Specs: {len(list(SCHEMAS.glob('*.schema.json')))} schemas valid; {events} example events, {signed} signed ones, "
      f"the proposal and policy examples and {scenarios} scenarios validate; mutated copies are refused.")
