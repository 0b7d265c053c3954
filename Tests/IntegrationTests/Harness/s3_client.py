"""boto3 helper for transferd's S3 tests: reads back and sets up what the tests check.

Run by the test venv's python with the server's credentials in the environment
(AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_REGION) and
S3_ENDPOINT (http://127.0.0.1:PORT), S3_BUCKET:

    s3_client.py sha256 KEY             {"sha256", "size", "etag"}, or {"missing": true}
    s3_client.py head KEY               HeadObject's answer (ContentLength, ETag, ContentType, Metadata)
                                        or {"missing": true}
    s3_client.py get KEY PATH           the object's bytes to PATH
    s3_client.py put KEY PATH           PutObject of PATH's bytes (one request)
    s3_client.py uploads                [{"key", "uploadId"}] of the bucket's multipart uploads
    s3_client.py parts KEY UPLOAD_ID    [{"number", "size", "etag"}]
    s3_client.py create-bucket NAME
    s3_client.py delete KEY             DeleteObject
    s3_client.py abort-all              aborts every multipart upload of the bucket; prints how many
    s3_client.py ready SECONDS          makes the bucket if it is missing, then PUTs and DELETEs a probe
                                        object, retrying each step until it works or SECONDS passed (a
                                        server can listen before it can store: SeaweedFS's volume
                                        server registers with its master after the S3 gateway is up)

Output is one JSON document on stdout; errors are a traceback on stderr and exit 1.
"""

import hashlib
import json
import os
import sys
import time

import boto3
from botocore.config import Config
from botocore.exceptions import ClientError


def client():
    return boto3.client(
        "s3",
        endpoint_url=os.environ["S3_ENDPOINT"],
        region_name=os.environ.get("AWS_REGION", "us-east-1"),
        config=Config(s3={"addressing_style": "path"}, retries={"max_attempts": 2, "mode": "standard"},
                      connect_timeout=5, read_timeout=60),
    )


def missing(error):
    return error.response.get("Error", {}).get("Code") in ("404", "NoSuchKey", "NotFound")


def main(argv):
    command, args = argv[0], argv[1:]
    s3 = client()
    bucket = os.environ.get("S3_BUCKET", "test-bucket")
    if command == "sha256":
        try:
            answer = s3.get_object(Bucket=bucket, Key=args[0])
        except ClientError as e:
            if missing(e):
                return {"missing": True}
            raise
        digest, size = hashlib.sha256(), 0
        for chunk in answer["Body"].iter_chunks(1 << 20):
            digest.update(chunk)
            size += len(chunk)
        return {"sha256": digest.hexdigest(), "size": size, "etag": answer.get("ETag")}
    if command == "head":
        try:
            answer = s3.head_object(Bucket=bucket, Key=args[0])
        except ClientError as e:
            if missing(e):
                return {"missing": True}
            raise
        return {"ContentLength": answer["ContentLength"], "ETag": answer.get("ETag"),
                "ContentType": answer.get("ContentType"), "Metadata": answer.get("Metadata", {})}
    if command == "get":
        s3.download_file(bucket, args[0], args[1])
        return {"ok": True}
    if command == "put":
        with open(args[1], "rb") as f:
            answer = s3.put_object(Bucket=bucket, Key=args[0], Body=f)
        return {"etag": answer.get("ETag")}
    if command == "uploads":
        found = []
        for page in s3.get_paginator("list_multipart_uploads").paginate(Bucket=bucket):
            found += [{"key": u["Key"], "uploadId": u["UploadId"]} for u in page.get("Uploads", [])]
        return found
    if command == "parts":
        found = []
        for page in s3.get_paginator("list_parts").paginate(Bucket=bucket, Key=args[0], UploadId=args[1]):
            found += [{"number": p["PartNumber"], "size": p["Size"], "etag": p["ETag"]} for p in page.get("Parts", [])]
        return found
    if command == "create-bucket":
        region = os.environ.get("AWS_REGION", "us-east-1")
        if region == "us-east-1":
            s3.create_bucket(Bucket=args[0])
        else:
            s3.create_bucket(Bucket=args[0], CreateBucketConfiguration={"LocationConstraint": region})
        return {"ok": True}
    if command == "delete":
        s3.delete_object(Bucket=bucket, Key=args[0])
        return {"ok": True}
    if command == "abort-all":
        aborted = 0
        for page in s3.get_paginator("list_multipart_uploads").paginate(Bucket=bucket):
            for u in page.get("Uploads", []):
                s3.abort_multipart_upload(Bucket=bucket, Key=u["Key"], UploadId=u["UploadId"])
                aborted += 1
        return {"aborted": aborted}
    if command == "ready":
        deadline, tries, last = time.monotonic() + float(args[0]), 0, None
        for step in ("bucket", "probe"):
            while True:
                tries += 1
                try:
                    if step == "bucket":
                        try:
                            s3.head_bucket(Bucket=bucket)
                        except ClientError:
                            s3.create_bucket(Bucket=bucket)
                    else:
                        s3.put_object(Bucket=bucket, Key="harness-probe", Body=b"probe")
                        s3.delete_object(Bucket=bucket, Key="harness-probe")
                    break
                except Exception as e:  # noqa: BLE001 (not up yet: connection refused, 500, ...)
                    last = e
                    if time.monotonic() > deadline or tries > 200:
                        raise SystemExit(f"not ready after {tries} tries at {step}: {last!r}")
                    time.sleep(0.2)
        return {"ready": True, "tries": tries}
    raise SystemExit(f"unknown command {command}")


if __name__ == "__main__":
    json.dump(main(sys.argv[1:]), sys.stdout)
    sys.stdout.write("\n")
