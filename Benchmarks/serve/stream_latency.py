#!/usr/bin/env python3
"""Tap-to-stream latency with many open streams, and memory per open stream.

Opens N Server-Sent-Events streams as the laptop (a second device of the person), then
approves actions from the phone one at a time and times, for every stream, the arrival of
the approval's event from the moment the tap was sent. Memory per stream: the server's RSS
with the streams open minus before, divided by N. Run by bench_serve.sh.
"""
import argparse, http.client, json, resource, selectors, socket, subprocess, time


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        return next(int(l.split()[1]) for l in f if l.startswith("VmRSS:"))


def main():
    ap = argparse.ArgumentParser()
    for a in ("--url", "--token", "--pid", "--ledger", "--db"):
        ap.add_argument(a, required=True)
    ap.add_argument("--streams", type=int, default=1000)
    ap.add_argument("--taps", type=int, default=100)
    o = ap.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, max(soft, 4 * o.streams + 64)), hard))
    host, port = o.url.replace("http://", "").rsplit(":", 1)
    port = int(port)
    run = lambda *a: subprocess.run([o.ledger, *a, "--db", o.db], check=True, capture_output=True, text=True).stdout
    run("devices", "link", "laptop-1", "--person", "quinn", "--org", "quinn-co", "--label", "MacBook", "--platform", "web")
    laptop = run("tokens", "issue", "--org", "quinn-co", "--scope", "device", "--device", "laptop-1").splitlines()[-1]
    lines = [json.dumps({"action_id": f"lat-{i}", "org": "quinn-co", "person": "quinn",
                         "specialist": {"name": "Mia", "agent": "x-replies"}, "surface": "x", "kind": "send_reply",
                         "target": {"type": "thread", "id": "x:1"}, "stakes": "low", "confidence": 0.5,
                         "preview": {"text": "Thank you!"}, "rationale": "bench"}) for i in range(o.taps)]
    batch = o.db + ".lat.jsonl"
    with open(batch, "w") as f:
        f.write("\n".join(lines) + "\n")
    run("propose", "--batch", batch)

    time.sleep(0.5)
    before = rss_kib(int(o.pid))
    sel = selectors.DefaultSelector()
    socks = []
    req = (f"GET /v1/events HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {laptop}\r\n"
           "Accept: text/event-stream\r\n\r\n").encode()
    for i in range(o.streams):
        s = socket.create_connection((host, port))
        s.sendall(req)
        s.setblocking(False)
        sel.register(s, selectors.EVENT_READ, i)
        socks.append(s)
    buffers = [b""] * o.streams
    arrivals = {}  # seq -> list of arrival times

    def pump(timeout):
        for key, _ in sel.select(timeout):
            i = key.data
            try:
                data = key.fileobj.recv(65536)
            except BlockingIOError:
                continue
            now = time.perf_counter()
            buffers[i] += data
            *complete, buffers[i] = buffers[i].split(b"\n")
            for line in complete:
                if line.startswith(b"id: "):
                    arrivals.setdefault(int(line[4:]), []).append(now)

    deadline = time.time() + 5
    while time.time() < deadline:
        pump(0.05)
    time.sleep(1)
    pump(0.05)
    after = rss_kib(int(o.pid))

    phone = http.client.HTTPConnection(host, port)
    latencies = []
    for i in range(o.taps):
        t0 = time.perf_counter()
        phone.request("POST", f"/v1/actions/lat-{i}/approve", headers={"Authorization": f"Bearer {o.token}"})
        r = phone.getresponse()
        body = json.loads(r.read())
        seq = body["events"][-1]["seq"]
        end = time.time() + 5
        while len(arrivals.get(seq, [])) < o.streams and time.time() < end:
            pump(0.01)
        got = arrivals.get(seq, [])
        if len(got) < o.streams:
            raise SystemExit(f"tap {i}: only {len(got)} of {o.streams} streams got seq {seq}")
        latencies += [t - t0 for t in got]
        time.sleep(0.02)
    latencies.sort()
    pct = lambda p: latencies[min(len(latencies) - 1, int(p * len(latencies)))] * 1000
    print(f"tap to stream, {o.streams} open streams, {o.taps} approvals ({len(latencies)} deliveries): "
          f"p50 {pct(0.50):.1f} ms, p99 {pct(0.99):.1f} ms, max {latencies[-1] * 1000:.1f} ms")
    print(f"memory: RSS {before} KiB before, {after} KiB with {o.streams} streams open: "
          f"{(after - before) / o.streams:.1f} KiB per stream")
    for s in socks:
        s.close()


if __name__ == "__main__":
    main()
