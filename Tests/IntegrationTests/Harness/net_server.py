#!/usr/bin/python3
"""A small HTTP/1.1 server for transferd's network-option tests (standard library only).

Usage: net_server.py --port PORT --dir DIR [--bind ADDRESS] [--user USER --password PASSWORD]

Routes (files are read from DIR)
  GET /files/<name>                   the file, no authentication
  GET /basic/<name>                   the file, for Basic credentials USER:PASSWORD (else 401)
  GET /digest/<name>                  the file, for Digest credentials (RFC 7616, MD5, qop=auth;
                                      else 401 with a challenge)
  PUT /digest/<name>                  reads the whole body, then as GET: 201, the body kept as
                                      DIR/uploads/<name>, or 401 with a challenge
  GET /redirect?to=URL                302 with Location: URL
  GET /log                            JSON list of every request served so far: method, target
                                      (as on the request line), path, headers, status
  METHOD http://HOST:PORT/PATH ...    a request in absolute form (GET, HEAD, PUT, POST, MKCOL):
                                      forwarded as a proxy does (HTTP only, no CONNECT), logged
                                      with `proxied: true`

`--bind ::1` listens on the IPv6 loopback only.
"""

import argparse
import base64
import hashlib
import http.client
import json
import os
import secrets
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, unquote, urlsplit

LOCK = threading.Lock()
LOG = []
HOP_BY_HOP = {"connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te", "trailers",
              "transfer-encoding", "upgrade", "proxy-connection"}
REALM = "transferd tests"
OPAQUE = secrets.token_hex(8)
NONCES = set()


def md5(text):
    return hashlib.md5(text.encode()).hexdigest()


def digest_fields(header):
    """The name=value pairs of a Digest Authorization header."""
    fields = {}
    rest = header[len("Digest "):]
    while rest:
        rest = rest.lstrip(" ,")
        if "=" not in rest:
            break
        name, rest = rest.split("=", 1)
        if rest.startswith('"'):
            end = rest.index('"', 1)
            value, rest = rest[1:end], rest[end + 1:]
        else:
            value, _, rest = rest.partition(",")
        fields[name.strip().lower()] = value.strip()
    return fields


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "net_server/1"

    def log_message(self, fmt, *args):
        print("%s - %s" % (self.address_string(), fmt % args), flush=True)

    def record(self, status, **extra):
        entry = {"method": self.command, "target": self.path, "path": urlsplit(self.path).path,
                 "headers": dict(self.headers.items()), "status": status}
        entry.update(extra)
        with LOCK:
            LOG.append(entry)

    def answer(self, status, body=b"", headers=()):
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def read_body(self):
        length = int(self.headers.get("Content-Length") or 0)
        data = b""
        while len(data) < length:
            chunk = self.rfile.read(min(65536, length - len(data)))
            if not chunk:
                break
            data += chunk
        return data

    # -- authentication ------------------------------------------------------------------

    def basic_ok(self):
        header = self.headers.get("Authorization", "")
        if not header.startswith("Basic "):
            return False
        expected = base64.b64encode(f"{self.server.user}:{self.server.password}".encode()).decode()
        return header[len("Basic "):].strip() == expected

    def digest_ok(self):
        header = self.headers.get("Authorization", "")
        if not header.startswith("Digest "):
            return False
        fields = digest_fields(header)
        if fields.get("username") != self.server.user or fields.get("nonce") not in NONCES:
            return False
        ha1 = md5(f"{self.server.user}:{REALM}:{self.server.password}")
        ha2 = md5(f"{self.command}:{fields.get('uri', '')}")
        if fields.get("qop") == "auth":
            expected = md5(f"{ha1}:{fields['nonce']}:{fields.get('nc', '')}:{fields.get('cnonce', '')}:auth:{ha2}")
        else:
            expected = md5(f"{ha1}:{fields['nonce']}:{ha2}")
        return fields.get("response") == expected

    def challenge(self, scheme):
        if scheme == "Basic":
            value = f'Basic realm="{REALM}"'
        else:
            nonce = secrets.token_hex(16)
            with LOCK:
                NONCES.add(nonce)
            value = f'Digest realm="{REALM}", qop="auth", algorithm=MD5, nonce="{nonce}", opaque="{OPAQUE}"'
        self.record(401)
        self.answer(401, b"unauthorized\n", [("WWW-Authenticate", value), ("Content-Type", "text/plain")])

    # -- routes --------------------------------------------------------------------------

    def do_GET(self):
        self.route()

    def do_HEAD(self):
        self.route()

    def do_PUT(self):
        self.route()

    def do_POST(self):
        self.route()

    def do_MKCOL(self):
        self.route()

    def route(self):
        if self.path.startswith("http://"):
            return self.forward()
        parts = urlsplit(self.path)
        if parts.path == "/log":
            body = json.dumps(LOG).encode()
            return self.answer(200, body, [("Content-Type", "application/json")])
        if parts.path == "/redirect":
            target = parse_qs(parts.query).get("to", [""])[0]
            self.record(302, location=target)
            return self.answer(302, b"", [("Location", target)])
        area, _, name = parts.path.lstrip("/").partition("/")
        name = unquote(name)
        if area not in ("files", "basic", "digest") or "/" in name or name in ("", ".", ".."):
            self.record(404)
            return self.answer(404, b"not found\n")
        body = self.read_body() if self.command == "PUT" else None
        if area == "basic" and not self.basic_ok():
            return self.challenge("Basic")
        if area == "digest" and not self.digest_ok():
            return self.challenge("Digest")
        if self.command == "PUT":
            uploads = os.path.join(self.server.directory, "uploads")
            os.makedirs(uploads, exist_ok=True)
            with open(os.path.join(uploads, name), "wb") as out:
                out.write(body)
            self.record(201, bytesReceived=len(body))
            return self.answer(201, b"stored\n")
        try:
            with open(os.path.join(self.server.directory, name), "rb") as source:
                data = source.read()
        except OSError:
            self.record(404)
            return self.answer(404, b"not found\n")
        self.record(200)
        self.answer(200, data, [("Content-Type", "application/octet-stream")])

    def forward(self):
        """What a forward proxy does with an absolute-form request: the same request to the
        origin, its answer back (hop-by-hop fields left out)."""
        target = urlsplit(self.path)
        headers = {name: value for name, value in self.headers.items() if name.lower() not in HOP_BY_HOP}
        body = self.read_body() if self.headers.get("Content-Length") else None
        upstream = http.client.HTTPConnection(target.hostname, target.port or 80, timeout=30)
        try:
            path = target.path + ("?" + target.query if target.query else "")
            upstream.request(self.command, path or "/", body=body, headers=headers)
            response = upstream.getresponse()
            data = response.read()
        except OSError as error:
            self.record(502, proxied=True)
            return self.answer(502, f"proxy: {error}\n".encode())
        finally:
            upstream.close()
        self.record(response.status, proxied=True)
        passed = [(name, value) for name, value in response.getheaders()
                  if name.lower() not in HOP_BY_HOP and name.lower() != "content-length"]
        self.answer(response.status, data, passed)


class Server(ThreadingHTTPServer):
    daemon_threads = True


class Server6(Server):
    address_family = socket.AF_INET6


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--dir", required=True)
    parser.add_argument("--bind", default="127.0.0.1")
    parser.add_argument("--user", default="alice")
    parser.add_argument("--password", default="")
    args = parser.parse_args()
    server_class = Server6 if ":" in args.bind else Server
    server = server_class((args.bind, args.port), Handler)
    server.directory = args.dir
    server.user = args.user
    server.password = args.password
    print(f"listening on {args.bind} port {args.port}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
