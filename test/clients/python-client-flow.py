# Drives the generated Python client (clients/python/mailpath_client.py) against a live server for test/clients/python.test.ts:
# register, create a test key, add a domain, send in test mode, list the events, upload an import; prints what it saw as one JSON object.
import json
import sys
import typing
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "clients" / "python"))
from mailpath_client import Client, MailpathError  # noqa: E402

import mailpath_client  # noqa: E402

base_url, slug, email, password, domain = sys.argv[1:6]

# Every method's annotations name types the module defines (they are strings until resolved, so a dangling name would pass import).
methods = [getattr(Client, n) for n in dir(Client) if not n.startswith("_") and callable(getattr(Client, n))]
for method in methods:
    typing.get_type_hints(method, vars(mailpath_client))

anonymous = Client(base_url)
session = anonymous.post_auth_register({"tenant_name": f"Python {slug}", "tenant_slug": slug, "email": email, "password": password})
owner = anonymous.with_token(session["token"])
key = owner.post_api_keys({"name": "python client", "mode": "test"})
client = owner.with_token(key["key"])
whoami = client.get_whoami()
added = client.post_domains({"name": domain})
sent = client.post_transactional_send({"to": "ann@example.org", "from_email": f"hello@{domain}", "subject": "From the Python client", "body_text": "Hello!"})
events = client.get_events({"message_id": sent["message_id"], "limit": 10})
# A file body and a CSV answer: bytes both ways.
started = client.post_contacts_imports(b"email,first_name\nann@example.org,Ann\nnot-an-address,Bob\n", {"on_existing": "skip"})
errors_csv = client.get_contacts_imports_by_id_errors_csv(started["id"])
try:
    client.get_admin_tenants()
    refused = None
except MailpathError as err:
    refused = {"status": err.status, "error": err.error}

print(json.dumps({
    "typed_methods": len(methods),
    "tenant_id": session["tenant_id"],
    "key_mode": key["mode"],
    "key_prefix": key["key"][:8],
    "credential": whoami["credential"],
    "domain": added["name"],
    "send": sent,
    "events": events,
    "import": started,
    "errors_csv": errors_csv.decode("utf-8"),
    "refused": refused,
}))
