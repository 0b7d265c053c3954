"""A counting HTTP relay in front of an S3 server that cannot count for itself (rclone serve s3,
SeaweedFS), for transferd's integration tests:

    python3 s3_relay.py --port P --target T --dir D

Relays 127.0.0.1:P to 127.0.0.1:T byte for byte (so signatures, Expect: 100-continue and
keep-alive pass untouched) while it reads both directions of every connection as HTTP/1.1:
each request's head gives its S3 operation (s3_operations.py: method, path and query), its body
bytes are counted as they are passed on (a client killed mid-body counts what arrived), and each
answer's status is matched to its request in order (1xx answers skipped), answers >= 400 counted
as errors. Bodies are framed by Content-Length or chunked transfer coding; a HEAD answer, 204 and
304 have none.

A control server on a second port C answers
    GET  /stats          {"operations": {OP: {"requests", "bytes", "errors"}}, "statuses": {"OP STATUS": n}}
    POST /reset-stats
and D/ready.json says {"port": P, "controlPort": C, "target": T} once both listen.
"""

import argparse
import json
import os
import socket
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from s3_operations import operation

MAX_HEAD = 64 * 1024  # a head longer than this is not HTTP the tests send


class Stats:
    def __init__(self):
        self.lock = threading.Lock()
        self.reset()

    def reset(self):
        with self.lock:
            self.ops = {}
            self.statuses = {}

    def _entry(self, op):
        return self.ops.setdefault(op, {"requests": 0, "bytes": 0, "errors": 0})

    def request(self, op):
        with self.lock:
            self._entry(op)["requests"] += 1

    def add_bytes(self, op, n):
        with self.lock:
            self._entry(op)["bytes"] += n

    def answer(self, op, status):
        with self.lock:
            key = f"{op} {status}"
            self.statuses[key] = self.statuses.get(key, 0) + 1
            if status >= 400:
                self._entry(op)["errors"] += 1

    def snapshot(self):
        with self.lock:
            return {"operations": json.loads(json.dumps(self.ops)), "statuses": dict(self.statuses)}


class Framer:
    """Reads one direction of a connection as a sequence of HTTP messages, fed in pieces.

    `on_head(start_line, headers)` returns how the body is framed: ("length", n), ("chunked",)
    or ("none",); `on_body(n)` gets the count of body bytes as they pass."""

    def __init__(self, on_head, on_body):
        self.on_head = on_head
        self.on_body = on_body
        self.buffer = b""
        self.state = "head"
        self.left = 0  # body bytes (length) or chunk bytes + CRLF (chunked) still to pass

    def feed(self, data):
        self.buffer += data
        while self.buffer:
            if self.state == "head":
                end = self.buffer.find(b"\r\n\r\n")
                if end < 0:
                    if len(self.buffer) > MAX_HEAD:
                        self.state = "opaque"
                    return
                head, self.buffer = self.buffer[:end].decode("latin-1"), self.buffer[end + 4:]
                lines = head.split("\r\n")
                headers = {}
                for line in lines[1:]:
                    name, _, value = line.partition(":")
                    headers[name.strip().lower()] = value.strip()
                framing = self.on_head(lines[0], headers)
                if framing[0] == "length" and framing[1] > 0:
                    self.state, self.left = "length", framing[1]
                elif framing[0] == "chunked":
                    self.state = "chunk-size"
            elif self.state == "length":
                n = min(self.left, len(self.buffer))
                self.on_body(n)
                self.buffer, self.left = self.buffer[n:], self.left - n
                if self.left == 0:
                    self.state = "head"
            elif self.state == "chunk-size":
                end = self.buffer.find(b"\r\n")
                if end < 0:
                    return
                size = int(self.buffer[:end].split(b";")[0].strip() or b"0", 16)
                self.buffer = self.buffer[end + 2:]
                self.state, self.left = ("chunk", size + 2) if size else ("trailer", 0)
            elif self.state == "chunk":
                n = min(self.left, len(self.buffer))
                self.on_body(max(0, min(n, self.left - 2)))  # the data, not its CRLF
                self.buffer, self.left = self.buffer[n:], self.left - n
                if self.left == 0:
                    self.state = "chunk-size"
            elif self.state == "trailer":
                end = self.buffer.find(b"\r\n")
                if end < 0:
                    return
                line, self.buffer = self.buffer[:end], self.buffer[end + 2:]
                if not line:
                    self.state = "head"
            else:  # opaque: not HTTP any more; pass it on uncounted
                self.buffer = b""
                return


def framing(headers):
    if "chunked" in headers.get("transfer-encoding", "").lower():
        return ("chunked",)
    try:
        return ("length", int(headers.get("content-length", "0")))
    except ValueError:
        return ("none",)


class Connection:
    """One relayed connection: the requests seen and not yet answered, in order."""

    def __init__(self, stats):
        self.stats = stats
        self.lock = threading.Lock()
        self.pending = []  # [(operation, method)]
        self.current = None
        self.requests = Framer(self._request_head, self._request_body)
        self.answers = Framer(self._answer_head, lambda n: None)

    def _request_head(self, start, headers):
        method, _, rest = start.partition(" ")
        target = rest.rsplit(" ", 1)[0]
        path, _, query = target.partition("?")
        op = operation(method, path, query)
        self.current = op
        with self.lock:
            self.pending.append((op, method))
        self.stats.request(op)
        return framing(headers)

    def _request_body(self, n):
        if n:
            self.stats.add_bytes(self.current, n)

    def _answer_head(self, start, headers):
        try:
            status = int(start.split(" ")[1])
        except (IndexError, ValueError):
            return ("none",)
        if 100 <= status < 200:
            return ("none",)
        with self.lock:
            op, method = self.pending.pop(0) if self.pending else ("Other", "")
        self.stats.answer(op, status)
        if method == "HEAD" or status in (204, 304):
            return ("none",)
        return framing(headers)


def pump(source, sink, framer, pair):
    """Copies source to sink, feeding the framer first; passes EOF on as a half close. On an
    error both sockets are shut down; the last direction to end closes both."""
    try:
        while True:
            data = source.recv(256 * 1024)
            if not data:
                sink.shutdown(socket.SHUT_WR)
                break
            framer.feed(data)
            sink.sendall(data)
    except OSError:
        for s in (source, sink):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
    with pair["lock"]:
        pair["left"] -= 1
        last = pair["left"] == 0
    if last:
        for s in (source, sink):
            try:
                s.close()
            except OSError:
                pass


def serve(listener, target, stats):
    while True:
        client, _ = listener.accept()
        try:
            upstream = socket.create_connection(("127.0.0.1", target), timeout=10)
            upstream.settimeout(None)
        except OSError:
            client.close()
            continue
        connection = Connection(stats)
        pair = {"left": 2, "lock": threading.Lock()}
        threading.Thread(target=pump, args=(client, upstream, connection.requests, pair), daemon=True).start()
        threading.Thread(target=pump, args=(upstream, client, connection.answers, pair), daemon=True).start()


def control_server(stats):
    class Handler(BaseHTTPRequestHandler):
        def _send(self, status, body):
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):
            if self.path == "/stats":
                return self._send(200, stats.snapshot())
            self._send(404, {"error": "no such path"})

        def do_POST(self):
            if self.path == "/reset-stats":
                stats.reset()
                return self._send(200, {"ok": True})
            self._send(404, {"error": "no such path"})

        def log_message(self, *args):
            pass

    return ThreadingHTTPServer(("127.0.0.1", 0), Handler)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--target", type=int, required=True)
    parser.add_argument("--dir", required=True)
    args = parser.parse_args()
    os.makedirs(args.dir, exist_ok=True)
    stats = Stats()
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", args.port))
    listener.listen(128)
    control = control_server(stats)
    threading.Thread(target=control.serve_forever, daemon=True).start()
    ready = os.path.join(args.dir, "ready.json")
    with open(ready + ".tmp", "w") as f:
        json.dump({"port": args.port, "controlPort": control.server_address[1], "target": args.target}, f)
    os.rename(ready + ".tmp", ready)
    print(f"s3_relay: 127.0.0.1:{args.port} -> 127.0.0.1:{args.target}, control on {control.server_address[1]}", flush=True)
    serve(listener, args.target, stats)


if __name__ == "__main__":
    import signal

    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    main()
