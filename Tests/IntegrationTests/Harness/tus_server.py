"""A tus 1.0 server for transferd's integration tests: tuspyserver (PyPI) under uvicorn.

Run by the test venv's python (scripts/deps.sh makes it):

    .build/test-venv/bin/python3 tus_server.py --port P --dir D [--days-to-keep N] [--max-size BYTES]

tuspyserver's `create_tus_router(prefix="files", files_dir=D/files, ...)` mounted in a FastAPI app
on 127.0.0.1:P: the creation URL is http://127.0.0.1:P/files/ and every upload is
D/files/<32 hex id> (the bytes) + D/files/<id>.info (a JSON sidecar: metadata, size, offset,
expires, ...). On disk only, so the server can be stopped and started again on the same port and
directory with every upload intact.

An ASGI middleware (tus_counting.py) counts requests per method and the body bytes of PATCH
requests as the app receives them (a client killed mid-body counts only what arrived), exposed at
    GET  /__harness/stats        {"requests": {METHOD: n}, "patchBytes": n, "statuses": {"PATCH 204": n, ...}}
    POST /__harness/reset-stats
"""

import argparse
import os

import uvicorn
from fastapi import FastAPI
from tuspyserver import create_tus_router

from tus_counting import Stats, counting


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
