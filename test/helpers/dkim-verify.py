#!/usr/bin/python3
# Verifies the DKIM signature of the message on stdin with Debian's python3-dkim (dkimpy), an
# implementation independent of Mailpath's, looking the key up on the DNS server given as ip:port.
# Prints "signature ok" and exits 0, or prints "signature verification failed" and exits 1.
import sys

import dkim
import dns.resolver

host, port = sys.argv[1].rsplit(':', 1)
resolver = dns.resolver.Resolver(configure=False)
resolver.nameservers = [host]
resolver.port = int(port)


def txt(name, timeout=5):
    try:
        answer = resolver.resolve(name.decode().rstrip('.'), 'TXT', lifetime=timeout)
    except Exception:
        return None
    for record in answer:
        return b''.join(record.strings)
    return None


message = sys.stdin.buffer.read()
if dkim.verify(message, dnsfunc=txt):
    print('signature ok')
    sys.exit(0)
print('signature verification failed')
sys.exit(1)
