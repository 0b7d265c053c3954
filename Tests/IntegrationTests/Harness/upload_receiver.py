#!/usr/bin/python3
"""Upload receiver for transferd's integration tests.

Runs on 127.0.0.1 with werkzeug's threaded development server and parses multipart
bodies with werkzeug's own streaming multipart decoder (a real third-party parser, not
ours), so the tests check what a server actually sees.

    /usr/bin/python3 upload_receiver.py --port P --dir D

POST /upload[?status=N][&slow=1]   multipart/form-data
    Every part, in order, is recorded in D/<n>/manifest.json (n = 1, 2, ... per request
    whose body arrived complete and parsed): kind "field"|"file", name, value (fields),
    filename, contentType, size, sha256 (files), the raw Content-Disposition header;
    file bytes are kept as D/<n>/<index>.bin. The manifest also records the request's
    method, boundary, Content-Length, body size and body sha256 (so a retry can be
    compared byte for byte). A body that ends early or does not parse leaves no
    manifest and gets 400. Answers `status` (default 200) with
    {"upload": n, "parts": k}.
PUT|POST /raw/<name>[?status=N][&slow=1]   any non-multipart body
    Streamed to D/raw/<name>; D/raw/<name>.json records {size, sha256, method,
    contentLength} only when the byte count equals Content-Length. Answers 201 with
    {"stored": name, "size": N}.
slow=1  reads the body in pieces of at most 16 KiB with 20 ms between reads (~800 KiB/s),
    so a few MiB take seconds and can be paused or killed mid-way. The listening socket
    uses a small receive buffer, so TCP backpressure reaches the sender quickly.
Every request appends one line to D/requests.log:
    METHOD PATH CONTENT-LENGTH BYTES-READ STATUS
(PATH with its query string; CONTENT-LENGTH "-" when absent.)
"""

import argparse
import hashlib
import json
import os
import shutil
import socket
import sys
import threading
import time
import uuid
from urllib.parse import parse_qs, unquote

import werkzeug
from werkzeug.http import parse_options_header
from werkzeug.sansio.multipart import Data, Epilogue, Field, File, MultipartDecoder, NeedData
from werkzeug.serving import WSGIRequestHandler, make_server

try:
    from importlib.metadata import version as _dist_version

    WERKZEUG_VERSION = _dist_version("werkzeug")
except Exception:  # pragma: no cover - metadata missing
    WERKZEUG_VERSION = getattr(werkzeug, "__version__", "unknown")

CHUNK = 64 * 1024
SLOW_CHUNK = 16 * 1024
SLOW_PAUSE = 0.02
RECEIVE_BUFFER = 64 * 1024
SOCKET_TIMEOUT = 30


class IncompleteBody(Exception):
    pass


class BodyReader:
    """Reads exactly Content-Length bytes (or, for chunked bodies, until the end),
    optionally slowly; counts and hashes what it read. read() returns b"" at the end of
    the body and raises IncompleteBody when the peer goes away before it."""

    def __init__(self, environ, slow):
        self.stream = environ["wsgi.input"]
        self.terminated = bool(environ.get("wsgi.input_terminated"))
        raw = environ.get("CONTENT_LENGTH") or ""
        self.content_length = int(raw) if raw.strip().isdigit() else None
        self.slow = slow
        self.count = 0
        self.digest = hashlib.sha256()

    def read(self):
        if self.content_length is not None and not self.terminated:
            remaining = self.content_length - self.count
            if remaining <= 0:
                return b""
        elif self.terminated:
            remaining = None
        else:
            return b""  # no length and not chunked: no body
        size = SLOW_CHUNK if self.slow else CHUNK
        if remaining is not None:
            size = min(size, remaining)
        if self.slow:
            time.sleep(SLOW_PAUSE)
        try:
            data = self.stream.read(size)
        except (OSError, ValueError) as error:  # reset, timeout, bad chunk framing
            raise IncompleteBody(f"read failed after {self.count} bytes: {error!r}")
        if not data:
            if remaining is not None:
                raise IncompleteBody(f"body ended after {self.count} of {self.content_length} bytes")
            return b""
        self.count += len(data)
        self.digest.update(data)
        return data

    def drain(self):
        try:
            while self.read():
                pass
        except IncompleteBody:
            pass


class Receiver:
    def __init__(self, directory):
        self.dir = directory
        self.lock = threading.Lock()
        self.next_upload = 1
        os.makedirs(os.path.join(directory, "raw"), exist_ok=True)

    # -- WSGI ---------------------------------------------------------------------------

    def __call__(self, environ, start_response):
        method = environ["REQUEST_METHOD"]
        path = environ.get("PATH_INFO", "")
        query = parse_qs(environ.get("QUERY_STRING", ""))
        full_path = environ.get("REQUEST_URI") or (
            path + ("?" + environ["QUERY_STRING"] if environ.get("QUERY_STRING") else ""))
        slow = query.get("slow", ["0"])[-1] not in ("", "0")
        reader = BodyReader(environ, slow)
        try:
            wanted = int(query.get("status", ["0"])[-1]) or None
        except ValueError:
            wanted = None
        try:
            if path == "/upload" and method in ("POST", "PUT"):
                status, body = self.upload(environ, reader, wanted)
            elif path.startswith("/raw/") and method in ("POST", "PUT"):
                status, body = self.raw(unquote(path[len("/raw/"):]), method, reader, wanted)
            else:
                reader.drain()
                status, body = 404, {"error": f"no route for {method} {path}"}
        except IncompleteBody as error:
            status, body = 400, {"error": str(error)}
        except Exception as error:  # parser errors and anything unexpected
            reader.drain()
            status, body = 400, {"error": f"{type(error).__name__}: {error}"}
        self.log(method, full_path, reader, status)
        payload = json.dumps(body).encode()
        headers = [("Content-Type", "application/json"), ("Content-Length", str(len(payload)))]
        if status >= 400:
            headers.append(("Connection", "close"))
        start_response(f"{status} {STATUS_TEXT.get(status, 'Status')}", headers)
        return [payload]

    def log(self, method, path, reader, status):
        length = "-" if reader.content_length is None else str(reader.content_length)
        line = f"{method} {path} {length} {reader.count} {status}\n"
        with self.lock:
            with open(os.path.join(self.dir, "requests.log"), "a", encoding="utf-8") as log:
                log.write(line)

    # -- multipart ----------------------------------------------------------------------

    def upload(self, environ, reader, wanted):
        content_type = environ.get("CONTENT_TYPE", "")
        mimetype, options = parse_options_header(content_type)
        boundary = options.get("boundary")
        if mimetype != "multipart/form-data" or not boundary:
            reader.drain()
            return 400, {"error": f"expected multipart/form-data with a boundary, got {content_type!r}"}

        staging = os.path.join(self.dir, f".incoming-{uuid.uuid4().hex}")
        os.makedirs(staging)
        try:
            parts = self.parse(reader, boundary.encode("latin-1"), staging)
            manifest = {
                "method": environ["REQUEST_METHOD"],
                "boundary": boundary,
                "contentType": content_type,
                "contentLength": reader.content_length,
                "bodySize": reader.count,
                "bodySha256": reader.digest.hexdigest(),
                "chunked": reader.terminated,
                "parser": f"werkzeug {WERKZEUG_VERSION}",
                "parts": parts,
            }
            with self.lock:
                number = self.next_upload
                self.next_upload += 1
                manifest["upload"] = number
                with open(os.path.join(staging, "manifest.json"), "w", encoding="utf-8") as out:
                    json.dump(manifest, out, ensure_ascii=False, indent=1)
                os.rename(staging, os.path.join(self.dir, str(number)))
            return wanted or 200, {"upload": number, "parts": len(parts)}
        finally:
            if os.path.exists(staging):
                shutil.rmtree(staging, ignore_errors=True)

    @staticmethod
    def parse(reader, boundary, staging):
        decoder = MultipartDecoder(boundary)
        parts = []
        current = None
        sink = None
        field_bytes = None
        digest = None
        size = 0
        finished = False
        while not finished:
            data = reader.read()
            decoder.receive_data(data if data else None)
            event = decoder.next_event()  # raises ValueError on a malformed or truncated body
            while not isinstance(event, NeedData):
                if isinstance(event, Epilogue):
                    finished = True
                    break
                if isinstance(event, (Field, File)):
                    current = event
                    size = 0
                    digest = hashlib.sha256()
                    if isinstance(event, File):
                        sink = open(os.path.join(staging, f"{len(parts)}.bin"), "wb")
                        field_bytes = None
                    else:
                        sink = None
                        field_bytes = bytearray()
                elif isinstance(event, Data):
                    if current is None:
                        raise ValueError("data outside a part")
                    size += len(event.data)
                    digest.update(event.data)
                    if sink is not None:
                        sink.write(event.data)
                    else:
                        field_bytes.extend(event.data)
                    if not event.more_data:
                        parts.append(Receiver.describe(current, len(parts), field_bytes, size, digest))
                        if sink is not None:
                            sink.close()
                            sink = None
                        current = None
                event = decoder.next_event()
            if not data and not finished:
                raise ValueError("body ended before the closing boundary")
        if current is not None:
            raise ValueError("body ended inside a part")
        # Whatever follows the closing boundary is epilogue; the body must still be whole.
        while reader.read():
            pass
        return parts

    @staticmethod
    def describe(event, index, field_bytes, size, digest):
        disposition = event.headers.get("Content-Disposition", "")
        part_type = event.headers.get("Content-Type")
        headers = [f"{name}: {value}" for name, value in event.headers.items()]
        if isinstance(event, File):
            return {
                "index": index, "kind": "file", "name": event.name, "filename": event.filename,
                "contentType": part_type, "size": size, "sha256": digest.hexdigest(),
                "disposition": disposition, "headers": headers,
            }
        return {
            "index": index, "kind": "field", "name": event.name,
            "value": bytes(field_bytes).decode("utf-8", "replace"),
            "contentType": part_type, "size": size,
            "disposition": disposition, "headers": headers,
        }

    # -- raw bodies ---------------------------------------------------------------------

    def raw(self, name, method, reader, wanted):
        if not name or "/" in name or name in (".", ".."):
            reader.drain()
            return 400, {"error": f"bad raw name {name!r}"}
        target = os.path.join(self.dir, "raw", name)
        record = target + ".json"
        if os.path.exists(record):
            os.remove(record)
        with open(target, "wb") as out:
            while True:
                data = reader.read()
                if not data:
                    break
                out.write(data)
        if reader.content_length is not None and reader.count == reader.content_length:
            info = {"size": reader.count, "sha256": reader.digest.hexdigest(), "method": method,
                    "contentLength": reader.content_length}
            temp = record + ".tmp"
            with open(temp, "w", encoding="utf-8") as out:
                json.dump(info, out)
            os.rename(temp, record)
        return wanted or 201, {"stored": name, "size": reader.count}


STATUS_TEXT = {200: "OK", 201: "Created", 400: "Bad Request", 404: "Not Found",
               500: "Internal Server Error", 502: "Bad Gateway", 503: "Service Unavailable"}


class Handler(WSGIRequestHandler):
    # A peer that stops sending without closing must not pin a thread forever.
    timeout = SOCKET_TIMEOUT


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--dir", required=True)
    args = parser.parse_args()
    os.makedirs(args.dir, exist_ok=True)
    server = make_server("127.0.0.1", args.port, Receiver(args.dir), threaded=True,
                         request_handler=Handler)
    # Small receive buffer (inherited by accepted sockets, before listen() matters only
    # for the window scale; set here it still caps autotuning) so slow reads push back.
    server.socket.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, RECEIVE_BUFFER)
    print(f"upload receiver (werkzeug {WERKZEUG_VERSION}) on 127.0.0.1:{args.port}, dir {args.dir}",
          file=sys.stderr, flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
