"""Captures a live S3 server's answers verbatim, as fixtures for the engine's S3 document tests.

Run by the test venv's python with the server's credentials in the environment (as s3_client.py:
AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_REGION, S3_ENDPOINT, S3_BUCKET):

    s3_capture.py OUTPUT_DIR

Writes OUTPUT_DIR/<Operation>.xml (the answer's body, byte for byte) and, for answers whose
headers are what matters, OUTPUT_DIR/<Operation>.headers.txt (status line and headers as the
server sent them, Date and request ids included):

    CreateMultipartUpload.xml            without a checksum algorithm
    CreateMultipartUpload-checksums.xml  with x-amz-checksum-algorithm: CRC32 (as transferd sends it)
    UploadPart.headers.txt               a part sent with x-amz-checksum-crc32
    ListParts.xml                        parts sent without checksums
    ListParts-checksums.xml              parts sent with x-amz-checksum-crc32
    ListMultipartUploads.xml             the two uploads above in progress
    CompleteMultipartUpload.xml          the checksummed upload, every part with its ChecksumCRC32
    CompleteMultipartUpload-mixed.xml    a checksummed upload completed with one part's checksum
                                         left out (what transferd sends after a resume): a 200
                                         document or an Error, whichever the server answers
    Error-NoSuchUpload.xml               ListParts of an upload id that does not exist
    GetObject-range.headers.txt          GET Range: bytes=100- of the completed object
    GetObject-if-range-stale.headers.txt the same with If-Range: a stale ETag (expect 200 whole)

Requests are signed by botocore (SigV4, path style); its checksum defaults are turned off so that
only the requests named above carry a checksum. The answer's raw bytes come from botocore's
after-call event, before parsing.
"""

import binascii
import base64
import os
import sys

import boto3
from botocore.config import Config
from botocore.exceptions import ClientError

PART = 5 * 1024 * 1024  # S3's minimum for any part but the last


def crc32(data):
    return base64.b64encode(binascii.crc32(data).to_bytes(4, "big")).decode()


def headers_text(response):
    raw = getattr(response.raw, "headers", None) or response.headers
    lines = [f"HTTP/1.1 {response.status_code} {getattr(response.raw, 'reason', '') or ''}".rstrip()]
    for name, value in raw.items():
        lines.append(f"{name}: {value}")
    return "\n".join(lines) + "\n"


def main(out):
    os.makedirs(out, exist_ok=True)
    bucket = os.environ.get("S3_BUCKET", "test-bucket")
    s3 = boto3.client(
        "s3", endpoint_url=os.environ["S3_ENDPOINT"], region_name=os.environ.get("AWS_REGION", "us-east-1"),
        config=Config(s3={"addressing_style": "path"}, retries={"max_attempts": 1},
                      request_checksum_calculation="when_required", response_checksum_validation="when_required"))
    last = {}
    s3.meta.events.register("after-call.s3", lambda http_response, **_: last.__setitem__("response", http_response))

    def save_body(name):
        with open(os.path.join(out, name), "wb") as f:
            f.write(last["response"].content)

    def save_headers(name):
        with open(os.path.join(out, name), "w") as f:
            f.write(headers_text(last["response"]))

    first, second = os.urandom(PART), os.urandom(1000)

    plain = s3.create_multipart_upload(Bucket=bucket, Key="capture/plain.bin")["UploadId"]
    save_body("CreateMultipartUpload.xml")
    s3.upload_part(Bucket=bucket, Key="capture/plain.bin", UploadId=plain, PartNumber=1, Body=first)
    s3.upload_part(Bucket=bucket, Key="capture/plain.bin", UploadId=plain, PartNumber=2, Body=second)
    s3.list_parts(Bucket=bucket, Key="capture/plain.bin", UploadId=plain)
    save_body("ListParts.xml")

    summed = s3.create_multipart_upload(Bucket=bucket, Key="capture/summed.bin", ChecksumAlgorithm="CRC32")["UploadId"]
    save_body("CreateMultipartUpload-checksums.xml")
    etags = []
    for number, data in ((1, first), (2, second)):
        answer = s3.upload_part(Bucket=bucket, Key="capture/summed.bin", UploadId=summed, PartNumber=number,
                                Body=data, ChecksumCRC32=crc32(data))
        etags.append(answer["ETag"])
        if number == 1:
            save_headers("UploadPart.headers.txt")
    s3.list_parts(Bucket=bucket, Key="capture/summed.bin", UploadId=summed)
    save_body("ListParts-checksums.xml")

    s3.list_multipart_uploads(Bucket=bucket)
    save_body("ListMultipartUploads.xml")

    mixed = s3.create_multipart_upload(Bucket=bucket, Key="capture/mixed.bin", ChecksumAlgorithm="CRC32")["UploadId"]
    mixed_etags = [s3.upload_part(Bucket=bucket, Key="capture/mixed.bin", UploadId=mixed, PartNumber=n, Body=d,
                                  ChecksumCRC32=crc32(d))["ETag"] for n, d in ((1, first), (2, second))]
    try:
        s3.complete_multipart_upload(Bucket=bucket, Key="capture/mixed.bin", UploadId=mixed, MultipartUpload={"Parts": [
            {"PartNumber": 1, "ETag": mixed_etags[0]},
            {"PartNumber": 2, "ETag": mixed_etags[1], "ChecksumCRC32": crc32(second)}]})
    except ClientError:
        pass
    save_body("CompleteMultipartUpload-mixed.xml")
    try:
        s3.abort_multipart_upload(Bucket=bucket, Key="capture/mixed.bin", UploadId=mixed)
    except ClientError:
        pass  # completed after all

    s3.complete_multipart_upload(Bucket=bucket, Key="capture/summed.bin", UploadId=summed, MultipartUpload={"Parts": [
        {"PartNumber": n, "ETag": e, "ChecksumCRC32": crc32(d)} for n, e, d in ((1, etags[0], first), (2, etags[1], second))]})
    save_body("CompleteMultipartUpload.xml")
    s3.abort_multipart_upload(Bucket=bucket, Key="capture/plain.bin", UploadId=plain)

    try:
        s3.list_parts(Bucket=bucket, Key="capture/plain.bin", UploadId="no-such-upload-0000")
    except ClientError:
        pass
    save_body("Error-NoSuchUpload.xml")

    s3.get_object(Bucket=bucket, Key="capture/summed.bin", Range="bytes=100-")["Body"].read()
    save_headers("GetObject-range.headers.txt")
    # GetObject has no IfRange parameter in botocore's model: the header is added before signing.
    def if_range(request, **_):
        request.headers["If-Range"] = '"0123456789abcdef0123456789abcdef"'
    s3.meta.events.register("before-sign.s3.GetObject", if_range)
    s3.get_object(Bucket=bucket, Key="capture/summed.bin", Range="bytes=100-")["Body"].read()
    save_headers("GetObject-if-range-stale.headers.txt")
    print(f"captured into {out}: {sorted(os.listdir(out))}")


if __name__ == "__main__":
    main(sys.argv[1])
