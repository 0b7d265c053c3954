"""A tus 1.0 server for transferd's integration tests: tuspyserver (PyPI) under uvicorn.

Run by the test venv's python (scripts/deps.sh makes it):

    .build/test-venv/bin/python3 tus_server.py --port P --dir D [--days-to-keep N] [--max-size BYTES]

tuspyserver's `create_tus_router(prefix="files", files_dir=D/files, ...)` mounted in a FastAPI app
on 127.0.0.1:P: the creation URL is http://127.0.0.1:P/files/ and every upload is
D/files/<32 hex id> (the bytes) + D/files/<id>.info (a JSON sidecar: metadata, size, offset,
expires, ...). On disk only, so the server can be stopped and started again on the same port and
directory with every upload intact.

An ASGI middleware counts requests per method and the body bytes of PATCH requests as the app
receives them (a client killed mid-body counts only what arrived), exposed at
    GET  /__harness/stats        {"requests": {METHOD: n}, "patchBytes": n, "statuses": {"PATCH 204": n, ...}}
    POST /__harness/reset-stats
"""

import argparse
import json
import os
import threading

import uvicorn
from fastapi import FastAPI
from tuspyserver import create_tus_router

HARNESS = "/__harness/"


class Stats:
    def __init__(self):
        self.lock = threading.Lock()
        self.reset()

    def reset(self):
        self.requests = {}
        self.statuses = {}
        self.patch_bytes = 0

    def snapshot(self):
        with self.lock:
            return {"requests": dict(self.requests), "patchBytes": self.patch_bytes, "statuses": dict(self.statuses)}


def counting(app, stats):
    async def send_json(send, status, body):
        data = json.dumps(body).encode()
        await send({"type": "http.response.start", "status": status,
                    "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode())]})
        await send({"type": "http.response.body", "body": data})

    async def wrapped(scope, receive, send):
        if scope["type"] != "http":
            return await app(scope, receive, send)
        method = scope["method"]
        path = scope.get("path", "")
        if path.startswith(HARNESS):
            name = path[len(HARNESS):]
            if name == "stats" and method == "GET":
                return await send_json(send, 200, stats.snapshot())
            if name == "reset-stats" and method == "POST":
                with stats.lock:
                    stats.reset()
                return await send_json(send, 200, {"ok": True})
            return await send_json(send, 404, {"error": "no such harness path"})
        with stats.lock:
            stats.requests[method] = stats.requests.get(method, 0) + 1

        async def counting_receive():
            message = await receive()
            if method == "PATCH" and message.get("type") == "http.request":
                with stats.lock:
                    stats.patch_bytes += len(message.get("body", b""))
            return message

        async def status_send(message):
            if message.get("type") == "http.response.start":
                key = f"{method} {message['status']}"
                with stats.lock:
                    stats.statuses[key] = stats.statuses.get(key, 0) + 1
            await send(message)

        return await app(scope, counting_receive, status_send)

    return wrapped


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--dir", required=True)
    parser.add_argument("--days-to-keep", type=int, default=5)
    parser.add_argument("--max-size", type=int, default=128849018880)
    args = parser.parse_args()
    files = os.path.join(args.dir, "files")
    os.makedirs(files, exist_ok=True)
    os.chdir(args.dir)

    api = FastAPI()
    api.include_router(create_tus_router(prefix="files", files_dir=files, days_to_keep=args.days_to_keep,
                                         max_size=args.max_size))
    uvicorn.run(counting(api, Stats()), host="127.0.0.1", port=args.port, log_level="info")


if __name__ == "__main__":
    main()
