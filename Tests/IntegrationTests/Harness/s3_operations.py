"""Which S3 operation a path-style request is, told apart by method, path and query (what
S3Operation in S3Server.swift names). Shared by s3_server.py (moto) and s3_relay.py."""

from urllib.parse import parse_qs


def operation(method, path, query):
    """The S3 operation of a path-style request."""
    q = parse_qs(query, keep_blank_values=True)
    parts = [p for p in path.split("/") if p]
    has_key = len(parts) >= 2
    if method == "POST" and "uploads" in q:
        return "CreateMultipartUpload"
    if "uploadId" in q:
        if method == "PUT":
            return "UploadPart"
        if method == "POST":
            return "CompleteMultipartUpload"
        if method == "DELETE":
            return "AbortMultipartUpload"
        if method == "GET":
            return "ListParts"
    if not parts:
        return "Other"
    if has_key:
        return {"PUT": "PutObject", "GET": "GetObject", "HEAD": "HeadObject",
                "DELETE": "DeleteObject"}.get(method, "Other")
    if method == "GET" and "uploads" in q:
        return "ListMultipartUploads"
    return {"PUT": "CreateBucket", "HEAD": "HeadBucket", "GET": "ListObjects",
            "DELETE": "DeleteBucket"}.get(method, "Other")
