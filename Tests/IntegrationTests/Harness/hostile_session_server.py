#!/usr/bin/python3
"""A tus and S3 server that lies, for the second hardening round (standard library only).

Usage: hostile_session_server.py --port PORT

tus, at /tus/<mode>/ (OPTIONS offers creation and termination; POST creates /tus/<mode>/<n>):
  stuck   every PATCH is read whole and answered 204 with the offset it started at
  ahead   every PATCH is answered with its start + the bytes it sent + 1000 (at most the
          upload's length: a client that believes it completes with bytes never sent)
  honest  offsets as sent (a control)
S3, path style at any other path /<bucket>/<key> (no signature checked):
  POST ?uploads=        InitiateMultipartUploadResult with UploadId "U-<n>"
  PUT ?partNumber&uploadId   the body read, answered 503 (so the attempt fails and the next one
                        asks ListParts)
  GET ?uploadId         ListParts: IsTruncated=true, NextPartNumberMarker 2 and 1000 parts,
                        every time (a list that never ends)
  DELETE ?uploadId      204
GET /log answers JSON {"requests": {"METHOD kind": count}, "patchBytes": N} (not counted).
"""

import argparse
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

lock = threading.Lock()
counts = {}
patch_bytes = 0
offsets = {}
lengths = {}
next_id = [0]


def count(key):
    with lock:
        counts[key] = counts.get(key, 0) + 1


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    def body(self):
        global patch_bytes
        length = int(self.headers.get("Content-Length") or 0)
        data = self.rfile.read(length) if length else b""
        return data

    def answer(self, status, headers=(), body=b""):
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if body and self.command != "HEAD":
            self.wfile.write(body)

    def route(self):
        url = urlsplit(self.path)
        query = parse_qs(url.query, keep_blank_values=True)
        parts = url.path.strip("/").split("/")
        if url.path == "/log":
            with lock:
                return self.answer(200, [("Content-Type", "application/json")],
                                   json.dumps({"requests": counts, "patchBytes": patch_bytes}).encode())
        if parts[0] == "tus":
            return self.tus(parts)
        return self.s3(query)

    def tus(self, parts):
        global patch_bytes
        tus = [("Tus-Resumable", "1.0.0")]
        mode = parts[1] if len(parts) > 1 else "honest"
        count(f"{self.command} tus")
        if self.command == "OPTIONS":
            return self.answer(204, tus + [("Tus-Version", "1.0.0"), ("Tus-Extension", "creation,termination")])
        if self.command == "POST":
            self.body()
            with lock:
                next_id[0] += 1
                name = f"/tus/{mode}/{next_id[0]}"
                offsets[name] = 0
                lengths[name] = int(self.headers.get("Upload-Length") or 0)
            return self.answer(201, tus + [("Location", name)])
        name = "/" + "/".join(parts[:3])
        if self.command == "HEAD":
            with lock:
                offset = offsets.get(name)
            if offset is None:
                return self.answer(404, tus)
            return self.answer(200, tus + [("Upload-Offset", str(offset)), ("Cache-Control", "no-store")])
        if self.command == "PATCH":
            start = int(self.headers.get("Upload-Offset") or 0)
            data = self.body()
            with lock:
                patch_bytes += len(data)
                if mode == "stuck":
                    offset = start
                elif mode == "ahead":
                    offset = min(lengths.get(name, 0), start + len(data) + 1000)
                else:
                    offset = start + len(data)
                offsets[name] = offset
            return self.answer(204, tus + [("Upload-Offset", str(offset))])
        if self.command == "DELETE":
            return self.answer(204, tus)
        self.answer(405, tus)

    def s3(self, query):
        xml = [("Content-Type", "application/xml")]
        self.body()
        if self.command == "POST" and "uploads" in query:
            count("POST CreateMultipartUpload")
            with lock:
                next_id[0] += 1
                upload = f"U-{next_id[0]}"
            return self.answer(200, xml, (
                "<InitiateMultipartUploadResult><Bucket>b</Bucket><Key>k</Key>"
                f"<UploadId>{upload}</UploadId></InitiateMultipartUploadResult>").encode())
        if self.command == "PUT" and "partNumber" in query:
            count("PUT UploadPart")
            return self.answer(503, xml, b"<Error><Code>ServiceUnavailable</Code><Message>later</Message></Error>")
        if self.command == "GET" and "uploadId" in query:
            count("GET ListParts")
            marker = 2
            listed = "".join(
                f"<Part><PartNumber>{n}</PartNumber><ETag>\"e{n}\"</ETag><Size>5242880</Size></Part>"
                for n in range(1, 1001))
            return self.answer(200, xml, (
                "<ListPartsResult><IsTruncated>true</IsTruncated>"
                f"<NextPartNumberMarker>{marker}</NextPartNumberMarker>{listed}</ListPartsResult>").encode())
        if self.command == "DELETE":
            count("DELETE AbortMultipartUpload")
            return self.answer(204)
        count(f"{self.command} other")
        self.answer(400, xml, b"<Error><Code>InvalidRequest</Code></Error>")

    do_GET = do_HEAD = do_POST = do_PUT = do_PATCH = do_DELETE = do_OPTIONS = route


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    args = parser.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    server.daemon_threads = True
    print(f"hostile_session_server listening on 127.0.0.1:{args.port}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
