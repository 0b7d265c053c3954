"""moto's S3 server for transferd's integration tests, with signature checking on.

Run by the test venv's python (scripts/deps.sh makes it):

    .build/test-venv/bin/python3 s3_server.py --port P --dir D [--bucket B] [--region R] [--no-relay]

1. Serves moto's own WSGI app (moto.moto_server.werkzeug_app.DomainDispatcherApplication, what
   `moto_server` runs) with werkzeug's threaded server on 127.0.0.1:P, wrapped in a middleware
   that counts, per S3 operation, the requests and the body bytes moto actually read from
   wsgi.input (a client killed mid-body counts only what arrived).
2. While moto's auth is still off (its default: INITIAL_NO_AUTH_ACTION_COUNT = infinity), makes
   with boto3 an IAM user, a policy allowing s3:* attached to it, an access key and bucket B;
   then turns auth on for every later request with moto's own POST /moto-api/reset-auth "0"
   (count 0: nothing more is free). From then on moto checks each request's SigV4 signature
   against the IAM key: a wrong secret gets 403 SignatureDoesNotMatch, an unknown key 403
   InvalidAccessKeyId, a request without Authorization is refused.
3. Starts a TCP relay on a free port R in front of moto (unless --no-relay): clients use R, and
   the relay can be cut (listener and every open connection closed, so new connections are
   refused) and restored (listening on the same R again) while moto keeps its state in memory.
4. Writes D/ready.json: {"port": P, "endpoint": "http://127.0.0.1:R", "relayPort": R,
   "accessKey", "secretKey", "region", "bucket"} (written last, atomically: its presence means
   ready).

Harness paths, on P and through the relay alike (no S3 bucket can be named "__harness"):
    GET  /__harness/stats        {"operations": {OP: {"requests", "bytes", "errors"}}, "relay": {...}}
    POST /__harness/reset-stats
    POST /__harness/cut          POST /__harness/restore     (answered only on P)
OP is one of CreateMultipartUpload, UploadPart, UploadPartCopy, CompleteMultipartUpload,
AbortMultipartUpload, ListParts, ListMultipartUploads, PutObject, GetObject, HeadObject,
DeleteObject, CreateBucket, HeadBucket, ListObjects, DeleteBucket, Other; "errors" counts
answers with status >= 400 and requests moto raised on (werkzeug answers those 500: moto does
so for an unsigned PUT once auth is on, KeyError HTTP_AUTHORIZATION; an unsigned GET gets 403).
"""

import argparse
import json
import os
import selectors
import socket
import sys
import threading
import time

import boto3
from botocore.config import Config
from werkzeug.serving import make_server

from s3_operations import operation

from moto.moto_server.werkzeug_app import DomainDispatcherApplication, create_backend_app

try:  # moto 5.2.5 keeps header names with underscores (S3 metadata) through werkzeug
    from moto.moto_server.werkzeug_app import MotoRequestHandler
except ImportError:  # moto 5.2.1 (the older server) has none: werkzeug's own handler
    MotoRequestHandler = None

HARNESS = "/__harness/"


class Stats:
    def __init__(self):
        self.lock = threading.Lock()
        self.ops = {}

    def _entry(self, op):
        return self.ops.setdefault(op, {"requests": 0, "bytes": 0, "errors": 0, "seconds": 0.0})

    def request(self, op):
        with self.lock:
            self._entry(op)["requests"] += 1

    def add_bytes(self, op, n):
        if n:
            with self.lock:
                self._entry(op)["bytes"] += n

    def error(self, op):
        with self.lock:
            self._entry(op)["errors"] += 1

    def took(self, op, seconds):
        with self.lock:
            self._entry(op)["seconds"] += seconds

    def snapshot(self):
        with self.lock:
            return json.loads(json.dumps(self.ops))

    def reset(self):
        with self.lock:
            self.ops = {}


class CountingInput:
    """wsgi.input that adds every byte read to the request's operation."""

    def __init__(self, stream, count):
        self._stream = stream
        self._count = count

    def read(self, *args):
        data = self._stream.read(*args)
        self._count(len(data))
        return data

    def readline(self, *args):
        data = self._stream.readline(*args)
        self._count(len(data))
        return data

    def readlines(self, *args):
        lines = self._stream.readlines(*args)
        self._count(sum(len(line) for line in lines))
        return lines

    def __iter__(self):
        for line in self._stream:
            self._count(len(line))
            yield line

    def close(self):
        close = getattr(self._stream, "close", None)
        if close:
            close()


class Relay:
    """127.0.0.1:port → 127.0.0.1:target, byte for byte, one thread per direction."""

    def __init__(self, target):
        self.target = target
        self.port = 0
        self.lock = threading.Lock()
        self.connections = set()
        self.listener = None
        self.thread = None
        self.accepted = 0
        self.cuts = 0

    def start(self):
        with self.lock:
            if self.listener is not None:
                return
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            s.bind(("127.0.0.1", self.port))
            s.listen(128)
            self.port = s.getsockname()[1]
            self.listener = s
            self.thread = threading.Thread(target=self._accept, args=(s,), daemon=True)
            self.thread.start()

    def _accept(self, listener):
        sel = selectors.DefaultSelector()
        sel.register(listener, selectors.EVENT_READ)
        while True:
            with self.lock:
                if self.listener is not listener:
                    break
            if not sel.select(timeout=0.05):
                continue
            try:
                client, _ = listener.accept()
            except OSError:
                break
            try:
                upstream = socket.create_connection(("127.0.0.1", self.target))
            except OSError:
                client.close()
                continue
            with self.lock:
                if self.listener is not listener:  # cut meanwhile
                    client.close()
                    upstream.close()
                    break
                self.connections.add(client)
                self.connections.add(upstream)
                self.accepted += 1
            pair = {"left": 2}
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(a, b, pair), daemon=True).start()
        sel.close()
        listener.close()

    def _pump(self, source, sink, pair):
        """Copies source to sink; passes EOF on as a half close. On an error both sockets are
        shut down (so the other direction ends too); the last direction to end closes both."""
        try:
            while True:
                data = source.recv(256 * 1024)
                if not data:
                    sink.shutdown(socket.SHUT_WR)
                    break
                sink.sendall(data)
        except OSError:
            for s in (source, sink):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
        with self.lock:
            pair["left"] -= 1
            last = pair["left"] == 0
            if last:
                self.connections.discard(source)
                self.connections.discard(sink)
        if last:
            for s in (source, sink):
                try:
                    s.close()
                except OSError:
                    pass

    def cut(self):
        """Closes the listener (new connections refused) and resets every open connection."""
        with self.lock:
            listener, self.listener = self.listener, None
            connections, self.connections = self.connections, set()
            thread = self.thread
            self.cuts += 1
        if listener is None:
            return
        if thread is not None:
            thread.join(5)  # the accept loop sees listener is gone and closes it
        for conn in connections:
            try:
                conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            try:
                conn.close()
            except OSError:
                pass

    def describe(self):
        with self.lock:
            return {"port": self.port, "listening": self.listener is not None,
                    "open": len(self.connections), "accepted": self.accepted, "cuts": self.cuts}


def harness_app(app, stats, relay):
    def respond(start_response, status, body):
        data = json.dumps(body).encode()
        start_response(status, [("Content-Type", "application/json"), ("Content-Length", str(len(data)))])
        return [data]

    def wrapped(environ, start_response):
        method = environ["REQUEST_METHOD"]
        path = environ.get("PATH_INFO", "")
        if path.startswith(HARNESS):
            name = path[len(HARNESS):]
            if name == "stats" and method == "GET":
                return respond(start_response, "200 OK",
                               {"operations": stats.snapshot(), "relay": relay.describe() if relay else None})
            if name == "reset-stats" and method == "POST":
                stats.reset()
                return respond(start_response, "200 OK", {"ok": True})
            if name in ("cut", "restore") and method == "POST" and relay is not None:
                if environ.get("SERVER_PORT") == str(relay.port):
                    return respond(start_response, "409 Conflict", {"error": "use moto's own port"})
                if name == "cut":
                    relay.cut()
                else:
                    relay.start()
                return respond(start_response, "200 OK", relay.describe())
            return respond(start_response, "404 Not Found", {"error": "no such harness path"})
        op = operation(method, path, environ.get("QUERY_STRING", ""))
        stats.request(op)
        environ["wsgi.input"] = CountingInput(environ["wsgi.input"], lambda n: stats.add_bytes(op, n))

        def counting_start_response(status, headers, exc_info=None):
            if int(status.split(" ", 1)[0]) >= 400:
                stats.error(op)
            return start_response(status, headers, exc_info)

        started = time.monotonic()
        try:
            return app(environ, counting_start_response)  # (moto answers whole: the time it worked)
        except Exception:  # werkzeug answers 500 (moto: a request without Authorization once auth is on)
            stats.error(op)
            raise
        finally:
            stats.took(op, time.monotonic() - started)

    return wrapped


def set_up(port, bucket, region):
    """IAM user + s3:* policy + access key + bucket, while auth is off; then auth on."""
    endpoint = f"http://127.0.0.1:{port}"
    setup = dict(endpoint_url=endpoint, region_name=region,
                 aws_access_key_id="harness-setup", aws_secret_access_key="harness-setup")
    iam = boto3.client("iam", **setup)
    iam.create_user(UserName="transferd-test")
    policy = iam.create_policy(PolicyName="transferd-test-s3", PolicyDocument=json.dumps({
        "Version": "2012-10-17",
        "Statement": [{"Effect": "Allow", "Action": "s3:*", "Resource": "*"}],
    }))
    iam.attach_user_policy(UserName="transferd-test", PolicyArn=policy["Policy"]["Arn"])
    key = iam.create_access_key(UserName="transferd-test")["AccessKey"]
    s3 = boto3.client("s3", config=Config(s3={"addressing_style": "path"}), **setup)
    if region == "us-east-1":
        s3.create_bucket(Bucket=bucket)
    else:
        s3.create_bucket(Bucket=bucket, CreateBucketConfiguration={"LocationConstraint": region})
    # Auth on from now on, for everyone: moto's documented switch, no request counting.
    import urllib.request
    request = urllib.request.Request(f"{endpoint}/moto-api/reset-auth", data=b"0", method="POST",
                                     headers={"Content-Type": "text/plain"})  # a form body would be parsed away
    with urllib.request.urlopen(request, timeout=10) as answer:
        json.load(answer)
    return key["AccessKeyId"], key["SecretAccessKey"]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--dir", required=True)
    parser.add_argument("--bucket", default="test-bucket")
    parser.add_argument("--region", default="us-east-1")
    parser.add_argument("--no-relay", action="store_true")
    args = parser.parse_args()
    os.makedirs(args.dir, exist_ok=True)
    os.chdir(args.dir)

    stats = Stats()
    relay = None if args.no_relay else Relay(args.port)
    app = harness_app(DomainDispatcherApplication(create_backend_app), stats, relay)
    server = make_server("127.0.0.1", args.port, app, threaded=True, request_handler=MotoRequestHandler)
    threading.Thread(target=server.serve_forever, daemon=True).start()

    access_key, secret_key = set_up(args.port, args.bucket, args.region)
    stats.reset()
    if relay is not None:
        relay.start()
    public = relay.port if relay is not None else args.port
    ready = {"port": args.port, "relayPort": public, "endpoint": f"http://127.0.0.1:{public}",
             "accessKey": access_key, "secretKey": secret_key, "region": args.region, "bucket": args.bucket}
    with open("ready.json.tmp", "w") as f:
        json.dump(ready, f)
    os.rename("ready.json.tmp", "ready.json")
    print(f"s3_server: ready {json.dumps({k: v for k, v in ready.items() if k != 'secretKey'})}", flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    import signal

    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    main()
