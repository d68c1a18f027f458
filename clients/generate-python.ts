// Generates the standard-library-only Python client (urllib + TypedDict) from the OpenAPI document: one module, a method per operation, a TypedDict per object
// shape.

type Schema = {
  type?: string;
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  enum?: unknown[];
  anyOf?: Schema[];
  oneOf?: Schema[];
  allOf?: Schema[];
  nullable?: boolean;
  additionalProperties?: boolean | Schema;
  description?: string;
  $ref?: string;
};

interface Parameter {
  in: 'path' | 'query' | 'header';
  name: string;
  required?: boolean;
  description?: string;
  schema: Schema;
}

interface Operation {
  summary?: string;
  description?: string;
  parameters?: Parameter[];
  requestBody?: { required?: boolean; content: Record<string, { schema: Schema }> };
  responses: Record<string, { description?: string; content?: Record<string, { schema: Schema }> }>;
}

export interface OpenApiDocument {
  info: { title: string; version: string };
  servers?: { url: string }[];
  paths: Record<string, Record<string, Operation>>;
  components?: { schemas?: Record<string, Schema> };
}

const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;
const PY_KEYWORDS = new Set(['from', 'import', 'class', 'def', 'return', 'global', 'in', 'is', 'not', 'and', 'or', 'lambda', 'pass']);

const pascal = (s: string) =>
  s
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((w) => w[0]!.toUpperCase() + w.slice(1))
    .join('');

/** GET /admin/tenants/{id}/activity → get_admin_tenants_by_id_activity. */
export function methodName(method: string, path: string): string {
  const parts = path
    .split('/')
    .filter(Boolean)
    .map((seg) => (seg.startsWith('{') ? `by_${seg.slice(1, -1)}` : seg))
    .map((seg) =>
      seg
        .replace(/[^A-Za-z0-9]+/g, '_')
        .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
        .toLowerCase(),
    );
  return [method, ...parts].join('_');
}

/** A Python string literal (JSON's escapes are valid Python, except that JSON's \/ is not produced). */
const pyString = (s: string) => JSON.stringify(s);

function pyLiteral(value: unknown): string {
  if (value === true) return 'True';
  if (value === false) return 'False';
  if (value === null) return 'None';
  return JSON.stringify(value);
}

/** One-line text for comments and docstrings. */
const oneLine = (s: string) => s.replace(/\s+/g, ' ').trim();

class TypeRegistry {
  /** Definitions in dependency order (a TypedDict's field types are defined before it). */
  readonly definitions: string[] = [];
  private readonly byName = new Map<string, string>();

  constructor(private readonly components: Record<string, Schema>) {}

  /** Registers a definition under a free name; an identical definition already registered is reused. */
  private define(name: string, render: (name: string) => string): string {
    for (let n = 1; ; n++) {
      const candidate = n === 1 ? name : `${name}${n}`;
      const text = render(candidate);
      const existing = this.byName.get(candidate);
      if (existing === undefined) {
        this.byName.set(candidate, text);
        this.definitions.push(text);
        return candidate;
      }
      if (existing === text) return candidate;
    }
  }

  /** The Python type of a schema; object shapes become TypedDicts named after `hint`. */
  typeOf(schema: Schema, hint: string): string {
    const base = this.baseType(schema, hint);
    return schema.nullable && base !== 'None' && base !== 'Any' ? `Optional[${base}]` : base;
  }

  private baseType(schema: Schema, hint: string): string {
    if (schema.$ref) {
      const name = schema.$ref.split('/').pop()!;
      return this.typeOf(this.components[name] ?? {}, pascal(name));
    }
    if (schema.allOf) return schema.allOf.length === 1 ? this.typeOf(schema.allOf[0]!, hint) : 'Dict[str, Any]';
    const union = schema.anyOf ?? schema.oneOf;
    if (union) {
      const members = [...new Set(union.map((s, i) => this.typeOf(s, union.length > 1 ? `${hint}Variant${i + 1}` : hint)))];
      return members.length === 1 ? members[0]! : `Union[${members.join(', ')}]`;
    }
    if (schema.enum) return `Literal[${schema.enum.map(pyLiteral).join(', ')}]`;
    switch (schema.type) {
      case 'string':
        return 'str';
      case 'integer':
        return 'int';
      case 'number':
        return 'float';
      case 'boolean':
        return 'bool';
      case 'null':
        return 'None';
      case 'array':
        return `List[${this.typeOf(schema.items ?? {}, `${hint}Item`)}]`;
      case 'object':
        return this.objectType(schema, hint);
      default:
        return schema.properties ? this.objectType(schema, hint) : 'Any';
    }
  }

  private objectType(schema: Schema, hint: string): string {
    const props = Object.entries(schema.properties ?? {});
    if (props.length === 0) {
      const extra = schema.additionalProperties;
      return typeof extra === 'object' ? `Dict[str, ${this.typeOf(extra, `${hint}Value`)}]` : 'Dict[str, Any]';
    }
    const required = new Set(schema.required ?? []);
    const fields = props.map(([key, s]) => {
      const type = this.typeOf(s, `${hint}${pascal(key)}`);
      return { key, type: required.has(key) ? `Required[${type}]` : `NotRequired[${type}]`, description: s.description };
    });
    return this.define(hint, (name) => {
      const notes = fields.filter((f) => f.description).map((f) => `# ${f.key}: ${oneLine(f.description!)}`);
      const head = schema.description ? [`# ${oneLine(schema.description)}`] : [];
      // The functional form: field names such as "from" are Python keywords.
      const body = fields.map((f) => `    ${pyString(f.key)}: ${f.type},`).join('\n');
      return [...head, ...notes, `${name} = TypedDict(${pyString(name)}, {\n${body}\n}, total=False)`].join('\n');
    });
  }
}

function successResponse(op: Operation): { status: string; contentType: string | undefined; schema: Schema | undefined } {
  const code = Object.keys(op.responses)
    .filter((c) => /^2\d\d$/.test(c))
    .sort()[0];
  if (!code) return { status: '200', contentType: undefined, schema: undefined };
  const content = op.responses[code]!.content ?? {};
  const contentType = Object.keys(content)[0];
  return { status: code, contentType, schema: contentType ? content[contentType]!.schema : undefined };
}

const argName = (name: string) => (PY_KEYWORDS.has(name) ? `${name}_` : name.replace(/[^A-Za-z0-9_]/g, '_'));

function renderOperation(types: TypeRegistry, method: string, path: string, op: Operation, name: string): string {
  const typeBase = pascal(name);
  const params = op.parameters ?? [];
  const pathParams = params.filter((p) => p.in === 'path');
  const queryParams = params.filter((p) => p.in === 'query');
  const args: string[] = ['self', ...pathParams.map((p) => `${argName(p.name)}: str`)];
  const docs: string[] = [`${method.toUpperCase()} ${path}: ${oneLine(op.summary ?? '')}`];
  if (op.description) docs.push('', oneLine(op.description));

  let bodyArg = 'None';
  const bodySchema = op.requestBody?.content['application/json']?.schema;
  if (bodySchema) {
    const type = types.typeOf(bodySchema, `${typeBase}Body`);
    if (op.requestBody!.required) args.push(`body: ${type}`);
    else args.push(`body: ${type.startsWith('Optional[') ? type : `Optional[${type}]`} = None`);
    bodyArg = 'body';
  }
  // A file body (CSV, NDJSON, text): bytes sent as they are, under the first media type unless the caller names another.
  const fileTypes = bodySchema ? [] : Object.keys(op.requestBody?.content ?? {});
  let typeArg = '';
  if (fileTypes.length > 0) {
    args.push('body: bytes');
    bodyArg = 'body';
    typeArg = ', content_type=content_type';
    docs.push('', `body is the file; content_type one of ${fileTypes.join(', ')}.`);
  }
  let queryArg = 'None';
  if (queryParams.length > 0) {
    const query: Schema = {
      type: 'object',
      properties: Object.fromEntries(queryParams.map((p) => [p.name, { ...p.schema, ...(p.description ? { description: p.description } : {}) }])),
      required: queryParams.filter((p) => p.required).map((p) => p.name),
    };
    const type = types.typeOf(query, `${typeBase}Query`);
    const anyRequired = queryParams.some((p) => p.required);
    args.push(anyRequired ? `query: ${type}` : `query: Optional[${type}] = None`);
    queryArg = 'query';
  }
  if (fileTypes.length > 0) args.push(`content_type: str = ${pyString(fileTypes[0]!)}`);

  const success = successResponse(op);
  let returns = 'None';
  let expect = 'none';
  if (success.contentType === 'application/json' && success.schema) {
    const envelope = success.schema;
    const props = envelope.properties ?? {};
    if ('next_cursor' in props) {
      // A cursor list: the page (data, next_cursor, total) without the ok flag.
      const page: Schema = {
        type: 'object',
        properties: { data: props['data']!, next_cursor: props['next_cursor']!, total: props['total']! },
        required: ['data', 'next_cursor', 'total'],
      };
      returns = types.typeOf(page, `${typeBase}Page`);
      expect = 'page';
    } else {
      returns = props['data'] ? types.typeOf(props['data'], `${typeBase}Result`) : 'Any';
      expect = 'data';
    }
  } else if (success.contentType) {
    returns = 'bytes';
    expect = 'bytes';
    docs.push('', `Returns the raw ${success.contentType} body.`);
  }

  const pathExpr = pathParams.length ? `f${pyString(path.replace(/\{([^}]+)\}/g, (_, p: string) => `{_segment(${argName(p)})}`))}` : pyString(path);
  const doc = docs
    .map((l, i) => (i === 0 ? l : l ? `        ${l}` : ''))
    .join('\n')
    .replace(/\\/g, '\\\\')
    .replace(/"""/g, '\\"\\"\\"');
  return [
    `    def ${name}(${args.join(', ')}) -> ${returns}:`,
    `        """${doc}"""`,
    `        return self._call(${pyString(method.toUpperCase())}, ${pathExpr}, query=${queryArg}, body=${bodyArg}${typeArg}, expect=${pyString(expect)})` +
      '  # type: ignore[no-any-return]',
  ].join('\n');
}

const PRELUDE = `# Mailpath API client for Python 3.11+: standard library only (urllib, json, ssl, typing).
# GENERATED by clients/generate-python.ts from the OpenAPI document (npm run clients); do not edit by hand.
"""Typed client of the Mailpath API (%TITLE% %VERSION%).

    client = Client("https://localhost:8443/api/v1", verify_tls=False)
    session = client.post_auth_register({"tenant_name": "Acme", "tenant_slug": "acme", "email": "owner@acme.test", "password": "Correct-horse-42"})
    client = client.with_token(session["token"])

Every method returns the envelope's data (a cursor list returns {data, next_cursor, total}); a failure raises
MailpathError with the HTTP status, the stable error slug and the message.
"""
from __future__ import annotations

import json
import ssl
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, Dict, List, Literal, Mapping, NotRequired, Optional, Required, Self, TypedDict, Union

DEFAULT_BASE_URL = %BASE_URL%


class MailpathError(Exception):
    """A failed call: HTTP status, the stable error slug (e.g. validation_error) and the human hint."""

    def __init__(self, status: int, error: str, message: str, headers: Mapping[str, str]) -> None:
        super().__init__(f"{status} {error}: {message}")
        self.status = status
        self.error = error
        self.message = message
        self.headers = dict(headers)

    @property
    def retry_after(self) -> Optional[int]:
        """Seconds to wait before retrying, on 429."""
        value = self.headers.get("retry-after")
        return int(value) if value and value.isdigit() else None


def _segment(value: str) -> str:
    return urllib.parse.quote(str(value), safe="")


def _query_string(query: Optional[Mapping[str, Any]]) -> str:
    if not query:
        return ""
    pairs: List[tuple[str, str]] = []
    for key, value in query.items():
        if value is None:
            continue
        for item in value if isinstance(value, (list, tuple)) else [value]:
            pairs.append((key, ("true" if item else "false") if isinstance(item, bool) else str(item)))
    return "?" + urllib.parse.urlencode(pairs) if pairs else ""


class _Transport:
    """One API base URL (ending in /api/v1) and, optionally, a credential: a session JWT or an API key."""

    def __init__(self, base_url: str = DEFAULT_BASE_URL, token: Optional[str] = None, *, timeout: float = 30.0,
                 verify_tls: bool = True, ssl_context: Optional[ssl.SSLContext] = None) -> None:
        self.base_url = base_url.rstrip("/")
        self.token = token
        self.timeout = timeout
        self.verify_tls = verify_tls
        if ssl_context is None and not verify_tls:
            # For the self-signed certificate Mailpath makes on its first start.
            ssl_context = ssl.create_default_context()
            ssl_context.check_hostname = False
            ssl_context.verify_mode = ssl.CERT_NONE
        self.ssl_context = ssl_context

    def with_token(self, token: Optional[str]) -> Self:
        """The same client with another credential."""
        return type(self)(self.base_url, token, timeout=self.timeout, verify_tls=self.verify_tls, ssl_context=self.ssl_context)

    def _call(self, method: str, path: str, *, query: Optional[Mapping[str, Any]], body: Any, expect: str, content_type: Optional[str] = None) -> Any:
        headers = {"accept": "application/json"}
        if self.token:
            headers["authorization"] = f"Bearer {self.token}"
        data = None
        if content_type is not None:
            data = bytes(body)
            headers["content-type"] = content_type
        elif body is not None:
            data = json.dumps(body).encode("utf-8")
            headers["content-type"] = "application/json"
        request = urllib.request.Request(self.base_url + path + _query_string(query), data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=self.timeout, context=self.ssl_context) as response:
                raw = response.read()
        except urllib.error.HTTPError as err:
            raw = err.read()
            try:
                envelope = json.loads(raw)
                error, message = envelope.get("error", "unknown"), envelope.get("message", "")
            except ValueError:
                error, message = "unknown", raw.decode("utf-8", "replace")[:500]
            raise MailpathError(err.code, error, message, {k.lower(): v for k, v in err.headers.items()}) from None
        if expect == "bytes":
            return raw
        if expect == "none" or not raw:
            return None
        envelope = json.loads(raw)
        if expect == "page":
            return {"data": envelope["data"], "next_cursor": envelope.get("next_cursor"), "total": envelope.get("total")}
        return envelope.get("data")
`;

/** The Python module's text. Deterministic: operations in path then method order. */
export function generatePython(doc: OpenApiDocument): string {
  const types = new TypeRegistry(doc.components?.schemas ?? {});
  const methods: string[] = [];
  const names = new Set<string>();
  for (const path of Object.keys(doc.paths).sort()) {
    for (const method of METHODS) {
      const op = doc.paths[path]![method];
      if (!op) continue;
      // /admin/dkim-rotations and /admin/dkim/rotations spell alike: the later one (in path order) gets _2.
      let name = methodName(method, path);
      for (let n = 2; names.has(name); n++) name = `${methodName(method, path)}_${n}`;
      names.add(name);
      methods.push(renderOperation(types, method, path, op, name));
    }
  }
  const prelude = PRELUDE.replace('%TITLE%', doc.info.title)
    .replace('%VERSION%', doc.info.version)
    .replace('%BASE_URL%', pyString(doc.servers?.[0]?.url ?? 'https://localhost:8443/api/v1'));
  return (
    `${prelude}\n\n# Shapes of request bodies, query strings and answers.\n\n${types.definitions.join('\n\n')}\n\n\n` +
    `class Client(_Transport):\n    """Every operation of the API as a method."""\n\n${methods.join('\n\n')}\n`
  );
}
