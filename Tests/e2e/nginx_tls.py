#!/usr/bin/env python3
"""`ledger serve` behind a TLS-terminating nginx (Debian's), as README shows it: once, in CI.

Makes a self-signed certificate, starts the real `ledger serve` on loopback and nginx in
front of it (its own prefix, no root, no system config), then over HTTPS checks /healthz,
a refusal's problem document, the per-address limit keyed on the client nginx forwards
(--trusted-proxy), and that an event appended by the CLI reaches an open stream through
the proxy (no buffering). Needs nginx and python3's `cryptography`.
Usage: python3 Tests/e2e/nginx_tls.py --ledger PATH/TO/ledger
"""
import argparse, atexit, datetime, http.client, os, shutil, socket, ssl, subprocess, sys, tempfile, time

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

CONF = """daemon off;
pid {tmp}/nginx.pid;
error_log {tmp}/error.log;
events {{ }}
http {{
  access_log off;
  client_body_temp_path {tmp}/body; proxy_temp_path {tmp}/proxy; fastcgi_temp_path {tmp}/fcgi;
  uwsgi_temp_path {tmp}/uwsgi; scgi_temp_path {tmp}/scgi;
  server {{
    listen 127.0.0.1:{port} ssl;
    ssl_certificate {tmp}/cert.pem; ssl_certificate_key {tmp}/key.pem;
    location / {{
      proxy_pass http://127.0.0.1:{upstream};
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
      proxy_buffering off;
      proxy_read_timeout 1h;
    }}
  }}
}}
"""


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ledger", required=True)
    ledger = ap.parse_args().ledger
    tmp = tempfile.mkdtemp(prefix="serve-tls-")
    atexit.register(shutil.rmtree, tmp, ignore_errors=True)  # the store, key and nginx scratch go with the run
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(minutes=1))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost")]), critical=False)
            .sign(key, hashes.SHA256()))
    with open(f"{tmp}/cert.pem", "wb") as f:
        f.write(cert.public_bytes(serialization.Encoding.PEM))
    with open(f"{tmp}/key.pem", "wb") as f:
        f.write(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
    db = f"{tmp}/tls.lmdb"
    run = lambda *a: subprocess.run([ledger, *a, "--db", db], check=True, capture_output=True, text=True).stdout
    run("init")
    run("devices", "link", "phone-1", "--person", "quinn", "--org", "quinn-co", "--label", "iPhone", "--platform", "ios")
    token = run("tokens", "issue", "--org", "quinn-co", "--scope", "device", "--device", "phone-1").splitlines()[-1]
    # One call without a token per client address (then one per 1000 s), and nginx trusted to
    # name the client: each check below comes as its own client, as if through another proxy.
    server = subprocess.Popen([ledger, "serve", "--listen", "127.0.0.1:0", "--db", db,
                               "--address-rate-limit", "0.001", "--trusted-proxy", "127.0.0.1"],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    upstream = int(server.stdout.readline().strip().rsplit(":", 1)[1])
    port = free_port()
    with open(f"{tmp}/nginx.conf", "w") as f:
        f.write(CONF.format(tmp=tmp, port=port, upstream=upstream))
    proxy = subprocess.Popen(["nginx", "-p", tmp, "-c", f"{tmp}/nginx.conf"], stderr=subprocess.PIPE)
    ctx = ssl.create_default_context(cafile=f"{tmp}/cert.pem")
    try:
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.05)

        def https():
            return http.client.HTTPSConnection("localhost", port, context=ctx, timeout=10)

        c = https()
        c.request("GET", "/healthz", headers={"X-Forwarded-For": "198.51.100.1"})
        r = c.getresponse()
        assert r.status == 200 and r.read() == b'{"status":"ok"}', "healthz over TLS"
        c.request("GET", "/v1/today", headers={"X-Forwarded-For": "198.51.100.2"})
        r = c.getresponse()
        assert r.status == 401 and r.getheader("Content-Type") == "application/problem+json", "a problem document over TLS"
        r.read()
        # The per-address limit counts the client nginx names, not nginx: .2 is spent, .3 is not.
        c.request("GET", "/healthz", headers={"X-Forwarded-For": "198.51.100.2"})
        r = c.getresponse()
        assert r.status == 429 and r.getheader("Retry-After"), f"the second call of a client is limited: {r.status}"
        r.read()
        c.request("GET", "/healthz", headers={"X-Forwarded-For": "198.51.100.3"})
        r = c.getresponse()
        assert r.status == 200, f"another client behind the proxy has its own bucket: {r.status}"
        r.read()
        stream = https()
        stream.request("GET", "/v1/events", headers={"Authorization": f"Bearer {token}"})
        sr = stream.getresponse()
        assert sr.status == 200, f"stream status {sr.status}"
        run("devices", "link", "tablet-2", "--person", "quinn", "--org", "quinn-co", "--label", "iPad", "--platform", "ios")
        deadline = time.time() + 5
        while time.time() < deadline:
            line = sr.readline().decode()
            if '"device.linked"' in line and "tablet-2" in line:
                break
        else:
            raise AssertionError("the CLI's event did not reach the stream through nginx")
        print("nginx TLS proxy: healthz, problem documents, per-client limits and a live stream through it: ok")
    finally:
        proxy.terminate()
        proxy.wait(timeout=10)
        server.terminate()
        server.wait(timeout=10)


if __name__ == "__main__":
    try:
        main()
    except AssertionError as e:
        print(f"FAILED: {e}", file=sys.stderr)
        sys.exit(1)
