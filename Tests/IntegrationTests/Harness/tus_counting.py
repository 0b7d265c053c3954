"""The ASGI middleware tus_server.py (tuspyserver) and tussi_server.py (tussi) put in front of their
tus app: it counts requests per method, the body bytes of PATCH requests as the app receives them
(a client killed mid-body counts only what arrived; an app that answers before reading the body,
as tussi does for a PATCH over its limit, counts none) and the answers by "METHOD STATUS":
    GET  /__harness/stats        {"requests": {METHOD: n}, "patchBytes": n, "statuses": {"PATCH 204": n, ...}}
    POST /__harness/reset-stats
"""

import json
import threading

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
