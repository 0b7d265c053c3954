"""boto3's upload_file with its default TransferConfig (s3transfer: multipart from 8 MiB, 8 MiB
parts, 10 threads; boto3's default checksums), the peer bench/upload-s3.sh races.

    s3_upload.py FILE BUCKET KEY      (S3_ENDPOINT, AWS_* in the environment)

Prints one JSON line: {"seconds": upload_file's wall time, "maxRSSKiB": this process's peak RSS}.
"""

import json
import os
import resource
import sys
import time

import boto3
from botocore.config import Config

path, bucket, key = sys.argv[1:4]
s3 = boto3.client("s3", endpoint_url=os.environ["S3_ENDPOINT"], config=Config(s3={"addressing_style": "path"}))
start = time.monotonic()
s3.upload_file(path, bucket, key)
seconds = time.monotonic() - start
print(json.dumps({"seconds": seconds, "maxRSSKiB": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))
