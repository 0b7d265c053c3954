#!/usr/bin/python3
"""Fault-injection HTTP/1.1 server for transferd's FaultTests (standard library only).

Usage: fault_server.py --port PORT

Routes
  GET|HEAD /files/<name>?size=N&...   a deterministic entity derived from <name>
  GET /sha256/<name>?size=N&version=V JSON {"sha256", "size", "etag"} of an entity
                                      (not counted, no faults)
  GET /log                            JSON list of every request served so far (with the
                                      request's headers)
  GET /redirect?to=URL[&status=S]     answers S (default 302) with Location: URL (logged, name
                                      "redirect")
  GET|POST /reset                     clears per-name counters and the log
  PUT|POST /upload/<name>?...         reads the body, counted per name; faults drop=N (close
                                      after N body bytes; N = the whole body loses the answer),
                                      status=S, stall=1; logged with bytesReceived, complete,
                                      sha256 and idempotencyKey (the request's header)

Entity: block i of version v is sha256("<name>:v<v>:<i>"), concatenated and cut to
`size` (default 2 MiB). Strong ETag "<name>-v<v>", Last-Modified fixed per version.
Range "bytes=N-" / "bytes=N-M" is answered 206 + Content-Range unless If-Range does not
match (then 200 with the whole entity) or a fault says otherwise.

Faults (query parameters). GET requests are counted per name (1-based); a fault with
`times=K` (default 1) applies to requests 1..K only:
  drop=N            send N body bytes of the announced length, then close
  status=S          answer S (e.g. 503) with a short body; retry_after=SEC adds Retry-After
  stall=1           send headers and `stall_bytes` (default 64 KiB) then nothing; the
                    socket stays open until the client closes it (at most 300 s)
  short=1           announce the full length, send half of it, close
  change_after=N    requests after the N-th see version 2 (new bytes, new ETag)
  change_every=1    request N sees version N: a new entity (and ETag) every time (all requests)
  shift_range=K     a 206 starts K bytes after the requested start (all requests)
  redirect=URL      answer 302 with Location: URL
  ignore_range=1    always 200 with the whole entity (still claims Accept-Ranges: bytes)
  ignore_if_range=1 answer a Range with 206 even when If-Range does not match (as moto
                    does): with change_after, a 206 of version 2 to a client holding version 1
  rate=B            trickle the body at B bytes per second (all requests)
  endless=1         200 without a length, then the entity over and over until the client
                    closes (at most 256 MiB)

A name may hold any character, percent-encoded in the URL: the ETag carries it as it is
(`/files/a%1Bb` has the ETag "a<ESC>b-v1").

Uploads (PUT|POST /upload/NAME) take drop, status, retry_after, stall and times as above, and
  hostile=1         answer 201 with terminal control sequences (ESC, CSI, OSC, BEL, CR,
                    DEL, C1, a bidi override, a byte that is not UTF-8) in the body and in
                    the ETag and X-Note headers: HOSTILE_BODY, HOSTILE_ETAG, HOSTILE_NOTE
"""

import argparse
import hashlib
import json
import select
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, unquote, urlsplit

DEFAULT_SIZE = 2 * 1024 * 1024
HOSTILE_BODY = (b'{"id": "\x1b[31mred\x1b[0m"}\r\n\x1b]0;pwned\x07\x1b[2J\rover\x7f\n'
                b'\xc2\x9b2J \xe2\x80\xaeevil \xff\n')
HOSTILE_ETAG = '"\x1b[5mblink\x07"'
HOSTILE_NOTE = "\x1b]8;;http://evil/\x1b\\link\x1b]8;;\x1b\\ \x9b"
LAST_MODIFIED = {1: "Mon, 01 Jan 2024 00:00:00 GMT", 2: "Tue, 02 Jan 2024 00:00:00 GMT"}

LOCK = threading.Lock()
COUNTS = {}      # name -> GET requests seen
LOG = []         # dicts, mutated in place while a response is being sent
ENTITIES = {}    # (name, version, size) -> bytes


def entity(name, version, size):
    key = (name, version, size)
    with LOCK:
        cached = ENTITIES.get(key)
    if cached is not None:
        return cached
    blocks = []
    total = 0
    i = 0
    while total < size:
        block = hashlib.sha256(f"{name}:v{version}:{i}".encode()).digest()
        blocks.append(block)
        total += len(block)
        i += 1
    data = b"".join(blocks)[:size]
    with LOCK:
        ENTITIES[key] = data
    return data


def etag(name, version):
    return f'"{name}-v{version}"'


def last_modified(version):
    return LAST_MODIFIED.get(version, LAST_MODIFIED[2])


def parse_range(header, size):
    """(start, end_inclusive) for a single bytes range, "unsatisfiable", or None."""
    if not header or not header.startswith("bytes="):
        return None
    spec = header[len("bytes="):].strip()
    if "," in spec or "-" not in spec:
        return None
    first, last = spec.split("-", 1)
    try:
        if first == "":
            length = int(last)
            if length <= 0:
                return "unsatisfiable"
            return (max(0, size - length), size - 1)
        start = int(first)
        end = int(last) if last else size - 1
    except ValueError:
        return None
    if start >= size:
        return "unsatisfiable"
    return (start, min(end, size - 1))


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "fault_server/1"

    def log_message(self, fmt, *args):
        print("%s - %s" % (self.address_string(), fmt % args), flush=True)

    # -- helpers -----------------------------------------------------------------------

    def send_json(self, value, status=200):
        body = json.dumps(value).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def close_now(self):
        self.close_connection = True
        try:
            self.wfile.flush()
        except OSError:
            pass
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def send_body(self, data, record, limit=None, rate=None):
        """Writes data[:limit] (paced at `rate` B/s); returns False if the client went away."""
        if limit is not None:
            data = data[:limit]
        chunk = 64 * 1024
        interval = 0.0
        if rate:
            chunk = max(1, rate // 10)
            interval = chunk / rate
        offset = 0
        try:
            while offset < len(data):
                piece = data[offset:offset + chunk]
                self.wfile.write(piece)
                offset += len(piece)
                with LOCK:
                    record["bytesSent"] = offset
                if interval and offset < len(data):
                    self.wfile.flush()
                    time.sleep(interval)
            self.wfile.flush()
            return True
        except (BrokenPipeError, ConnectionResetError, OSError):
            with LOCK:
                record["clientClosed"] = True
            self.close_connection = True
            return False

    def hold_open(self, record, limit=300.0):
        """Sends nothing more; returns when the client closes the connection (or after `limit`)."""
        deadline = time.monotonic() + limit
        sock = self.connection
        while time.monotonic() < deadline:
            readable, _, _ = select.select([sock], [], [], 0.2)
            if readable:
                try:
                    peek = sock.recv(1, socket.MSG_PEEK)
                except OSError:
                    peek = b""
                if not peek:
                    with LOCK:
                        record["clientClosed"] = True
                    break
                # The client sent something (a new request on a stalled connection): ignore.
                time.sleep(0.2)
        with LOCK:
            record["stallEnded"] = time.time()
        self.close_now()

    # -- routes ------------------------------------------------------------------------

    def do_HEAD(self):
        self.handle_request(head=True)

    def do_GET(self):
        self.handle_request(head=False)

    def do_POST(self):
        if self.path.startswith("/upload/"):
            return self.receive_upload()
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        self.handle_request(head=False)

    def do_PUT(self):
        self.receive_upload()

    def receive_upload(self):
        """/upload/NAME: reads the body (or drops the connection after `drop` bytes, or answers
        `status` with `Retry-After`, for the first `times` requests) and records its sha256 and
        the request's Idempotency-Key header (`idempotencyKey`, None when absent)."""
        parts = urlsplit(self.path)
        name = unquote(parts.path)[len("/upload/"):]
        query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
        length = int(self.headers.get("Content-Length") or 0)
        with LOCK:
            number = COUNTS.get("upload:" + name, 0) + 1
            COUNTS["upload:" + name] = number
            record = {"n": number, "method": self.command, "path": "/upload/" + name, "name": name,
                      "query": parts.query, "contentLength": length, "bytesReceived": 0, "complete": False,
                      "status": None, "fault": None, "time": time.time(),
                      "idempotencyKey": self.headers.get("Idempotency-Key")}
            LOG.append(record)
        faulty = number <= int(query.get("times", 1))
        digest = hashlib.sha256()
        limit = int(query["drop"]) if faulty and "drop" in query else length
        if faulty and "stall" in query:
            limit = min(length, 65536)
        received = 0
        while received < min(limit, length):
            chunk = self.rfile.read(min(65536, min(limit, length) - received))
            if not chunk:
                break
            digest.update(chunk)
            received += len(chunk)
        with LOCK:
            record.update(bytesReceived=received)
        if faulty and "drop" in query:
            with LOCK:
                record.update(fault="drop")
            return self.close_now()
        if faulty and "stall" in query:
            with LOCK:
                record.update(fault="stall")
            return self.hold_open(record)
        complete = received == length
        status = int(query["status"]) if faulty and "status" in query else (201 if complete else 400)
        with LOCK:
            record.update(complete=complete and status < 300, status=status,
                          sha256=digest.hexdigest() if complete else None,
                          fault="status" if faulty and "status" in query else None)
        body = json.dumps({"stored": name, "size": received}).encode()
        hostile = query.get("hostile") == "1"
        if hostile:
            body = HOSTILE_BODY
        self.send_response(status)
        if faulty and "retry_after" in query:
            self.send_header("Retry-After", query["retry_after"])
        if hostile:
            self.send_header("ETag", HOSTILE_ETAG)
            self.send_header("X-Note", HOSTILE_NOTE)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def handle_request(self, head):
        parts = urlsplit(self.path)
        path = unquote(parts.path)
        query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
        if path == "/reset":
            with LOCK:
                COUNTS.clear()
                LOG.clear()
            return self.send_json({"ok": True})
        if path == "/log":
            with LOCK:
                snapshot = [dict(r) for r in LOG]
            return self.send_json(snapshot)
        if path == "/redirect":
            return self.redirect(query)
        if path.startswith("/sha256/"):
            name = path[len("/sha256/"):]
            size = int(query.get("size", DEFAULT_SIZE))
            version = int(query.get("version", 1))
            data = entity(name, version, size)
            return self.send_json({"sha256": hashlib.sha256(data).hexdigest(), "size": size,
                                   "etag": etag(name, version)})
        if path.startswith("/files/"):
            return self.serve_file(path[len("/files/"):], query, parts.query, head)
        body = b"not found\n"
        self.send_response(404)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if not head:
            self.wfile.write(body)

    def redirect(self, query):
        status = int(query.get("status", 302))
        with LOCK:
            LOG.append({"n": len(LOG) + 1, "method": self.command, "path": "/redirect", "name": "redirect", "status": status,
                        "location": query.get("to"), "headers": dict(self.headers.items()), "time": time.time()})
        body = b"moved\n"
        self.send_response(status)
        self.send_header("Location", query.get("to", "/"))
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def serve_file(self, name, query, raw_query, head):
        size = int(query.get("size", DEFAULT_SIZE))
        times = int(query.get("times", 1))
        with LOCK:
            if head:
                number = COUNTS.get(name, 0)
            else:
                number = COUNTS.get(name, 0) + 1
                COUNTS[name] = number
            record = {
                "n": number, "method": self.command, "path": "/files/" + name, "name": name,
                "query": raw_query, "range": self.headers.get("Range"),
                "ifRange": self.headers.get("If-Range"), "status": None, "bytesSent": 0,
                "contentLength": None, "version": None, "fault": None, "time": time.time(),
                "headers": dict(self.headers.items()),
            }
            LOG.append(record)
        faulty = (not head) and number <= times
        change_after = query.get("change_after")
        version = 1
        if change_after is not None and number > int(change_after):
            version = 2
        if query.get("change_every") == "1":
            version = max(1, number)
        data = entity(name, version, size)
        tag = etag(name, version)
        modified = last_modified(version)
        rate = int(query["rate"]) if "rate" in query else None

        def set_record(**values):
            with LOCK:
                record.update(values)

        set_record(version=version)

        if faulty and "redirect" in query:
            self.send_response(302)
            self.send_header("Location", query["redirect"])
            self.send_header("Content-Length", "0")
            self.end_headers()
            set_record(status=302, fault="redirect", contentLength=0)
            return

        if faulty and "status" in query:
            status = int(query["status"])
            body = f"injected {status}\n".encode()
            self.send_response(status)
            if "retry_after" in query:
                self.send_header("Retry-After", query["retry_after"])
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            set_record(status=status, fault="status", contentLength=len(body))
            self.send_body(body, record)
            return

        if faulty and query.get("endless") == "1":
            self.send_response(200)
            self.send_header("Content-Type", "application/octet-stream")
            self.send_header("Connection", "close")
            self.end_headers()
            set_record(status=200, fault="endless")
            sent = 0
            while sent < 256 * 1024 * 1024 and self.send_body(data, record, rate=rate):
                sent += len(data)
            self.close_now()
            return

        # Choose full or partial response.
        start, end = 0, size - 1
        status = 200
        ranged = None
        if query.get("ignore_range") != "1":
            ranged = parse_range(self.headers.get("Range"), size)
            if_range = self.headers.get("If-Range")
            if ranged is not None and if_range is not None and query.get("ignore_if_range") != "1":
                if if_range.startswith('"') or if_range.startswith("W/"):
                    matches = if_range == tag      # strong comparison: W/ never matches
                else:
                    matches = if_range == modified
                if not matches:
                    ranged = None
        if ranged == "unsatisfiable":
            self.send_response(416)
            self.send_header("Content-Range", f"bytes */{size}")
            self.send_header("ETag", tag)
            self.send_header("Last-Modified", modified)
            self.send_header("Content-Length", "0")
            self.end_headers()
            set_record(status=416, contentLength=0)
            return
        if ranged is not None:
            start, end = ranged
            status = 206
            if "shift_range" in query:
                start = min(end, start + int(query["shift_range"]))
        body = data[start:end + 1]

        self.send_response(status)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Accept-Ranges", "bytes")
        self.send_header("ETag", tag)
        self.send_header("Last-Modified", modified)
        if status == 206:
            self.send_header("Content-Range", f"bytes {start}-{end}/{size}")
        self.send_header("Content-Length", str(len(body)))
        fault = None
        if faulty and ("drop" in query or "short" in query or query.get("stall") == "1"):
            self.send_header("Connection", "close")
        self.end_headers()
        set_record(status=status, contentLength=len(body))
        if head:
            return

        if faulty and "drop" in query:
            fault = "drop"
            set_record(fault=fault)
            self.send_body(body, record, limit=int(query["drop"]), rate=rate)
            self.close_now()
            return
        if faulty and query.get("short") == "1":
            fault = "short"
            set_record(fault=fault)
            self.send_body(body, record, limit=len(body) // 2, rate=rate)
            self.close_now()
            return
        if faulty and query.get("stall") == "1":
            fault = "stall"
            set_record(fault=fault)
            stall_bytes = int(query.get("stall_bytes", 64 * 1024))
            if self.send_body(body, record, limit=stall_bytes, rate=rate):
                self.hold_open(record)
            return
        self.send_body(body, record, rate=rate)


class Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--host", default="127.0.0.1")
    args = parser.parse_args()
    server = Server((args.host, args.port), Handler)
    print(f"fault_server listening on {args.host}:{args.port}", flush=True)
    try:
        server.serve_forever(poll_interval=0.1)
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
