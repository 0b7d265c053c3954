"""A second tus 1.0 server for transferd's integration tests: tussi (PyPI) under uvicorn.

Run by the test venv's python (scripts/deps.sh makes it):

    .build/test-venv/bin/python3 tussi_server.py --port P --dir D

tussi's TUSApp with its FilesystemStorage in D/uploads and completed uploads moved to D/completed,
on 127.0.0.1:P under /files/ (the creation URL is http://127.0.0.1:P/files/), with tussi's
defaults kept on purpose: a PATCH over 10 MiB (TUS_DEFAULT_MAX_CHUNK_SIZE) gets 413, OPTIONS
offers only the creation extension (no termination: DELETE gets 405) and no Tus-Max-Size.
tussi stores on disk: D/uploads/<uuid> (preallocated to Upload-Length) and <uuid>.meta (JSON:
length, offset, metadata); a completed upload becomes D/completed/<uuid> and <uuid>.meta. The
demo server's file worker, which would move completed uploads away, is not run.

The middleware of tus_counting.py counts requests, PATCH body bytes and answers at /__harness/.
"""

import argparse
import os

import uvicorn
from tussi import TUSApp
from tussi.storage import FilesystemStorage

from tus_counting import Stats, counting


def routed(tus):
    """tussi under /files/, 404 elsewhere."""
    async def app(scope, receive, send):
        if scope["type"] == "http" and (scope.get("path", "") + "/").startswith("/files/"):
            return await tus(scope, receive, send)
        if scope["type"] == "http":
            await send({"type": "http.response.start", "status": 404, "headers": [(b"content-length", b"0")]})
            await send({"type": "http.response.body", "body": b""})
    return app


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--dir", required=True)
    args = parser.parse_args()
    uploads = os.path.join(args.dir, "uploads")
    completed = os.path.join(args.dir, "completed")
    os.makedirs(uploads, exist_ok=True)
    os.makedirs(completed, exist_ok=True)
    os.chdir(args.dir)
    tus = TUSApp(storage=FilesystemStorage(directory=uploads), completed_dir=completed)
    uvicorn.run(counting(routed(tus), Stats()), host="127.0.0.1", port=args.port, log_level="info")


if __name__ == "__main__":
    main()
