#!/usr/bin/env python3
# An independent Standard Webhooks verifier (Python's hmac, not the standardwebhooks package): reads
# {"secret", "id", "timestamp", "signature", "body"} as JSON on stdin, prints how many v1 signatures verify.
import base64, hashlib, hmac, json, sys

m = json.load(sys.stdin)
key = base64.b64decode(m["secret"][len("whsec_"):])
signed = f'{m["id"]}.{m["timestamp"]}.{m["body"]}'.encode()
expected = base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()
good = 0
for part in m["signature"].split(" "):
    version, _, sig = part.partition(",")
    if version == "v1" and hmac.compare_digest(sig, expected):
        good += 1
print(good)
