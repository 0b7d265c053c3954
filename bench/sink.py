#!/usr/bin/env python3
"""An HTTP/1.1 endpoint that reads every request body to the end and discards it, for upload
benchmarks (nginx answers `return 200` before reading a POST body, and the client then stops
sending). Answers 200 with the number of body bytes it read; appends one line per request to
the log file: method, path, Content-Length, bytes read. With COUNTFILE, every body is also
written there as it arrives (the file is emptied when a request starts), so that a sampler
can watch the bytes received, the same way for every client; and COUNTFILE.arrivals gets one
line per read from the socket, `CLOCK_MONOTONIC-nanoseconds bytes`, for an exact account of
when each byte arrived.
    usage: sink.py PORT LOGFILE [COUNTFILE]
"""
import socket
import sys
import time


def serve(port, log_path, count_path=None):
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", port))
    listener.listen(16)
    buffer = bytearray(1 << 20)
    view = memoryview(buffer)
    while True:
        connection, _ = listener.accept()
        with connection:
            handle(connection, view, log_path, count_path)


def handle(connection, view, log_path, count_path=None):
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = connection.recv(65536)
        if not chunk:
            return
        head += chunk
    header_bytes, rest = head.split(b"\r\n\r\n", 1)
    lines = header_bytes.decode("latin-1").split("\r\n")
    method, path = lines[0].split(" ")[:2]
    length = 0
    for line in lines[1:]:
        name, _, value = line.partition(":")
        if name.strip().lower() == "content-length":
            length = int(value.strip())
        if name.strip().lower() == "expect" and value.strip().lower() == "100-continue":
            connection.sendall(b"HTTP/1.1 100 Continue\r\n\r\n")
    read = len(rest)
    counter = open(count_path, "wb", buffering=0) if count_path else None
    arrivals = open(count_path + ".arrivals", "w") if count_path else None
    if counter:
        counter.write(rest)
        arrivals.write(f"{time.monotonic_ns()} {len(rest)}\n")
    while read < length:
        count = connection.recv_into(view, min(len(view), length - read))
        if count == 0:
            break
        read += count
        if counter:
            arrivals.write(f"{time.monotonic_ns()} {count}\n")
            counter.write(view[:count])
    if counter:
        arrivals.close()
        counter.close()
    body = f"{read}\n".encode()
    status = b"200 OK" if read == length else b"400 Bad Request"
    connection.sendall(b"HTTP/1.1 " + status + b"\r\nContent-Length: " + str(len(body)).encode()
                       + b"\r\nConnection: close\r\n\r\n" + body)
    with open(log_path, "a") as log:
        log.write(f"{method} {path} {length} {read}\n")


if __name__ == "__main__":
    serve(int(sys.argv[1]), sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else None)
