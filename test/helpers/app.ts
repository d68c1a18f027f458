// Builds a real Mailpath API (Fastify + PostgreSQL database of its own) for a test, and makes requests against it.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { loadConfig, type Config, type Env } from '../../shared/config/index.js';
import { connect, type Sql } from '../../shared/db/connection.js';
import { createLogger, type Logger } from '../../shared/kernel/log.js';
import { systemClock, type Clock } from '../../shared/kernel/clock.js';
import { ensureSuperAdmin } from '../../shared/accounts/auth/bootstrap.js';
import { buildApp } from '../../api/app.js';
import { buildServices, type Services } from '../../main/services.js';
import { createTestDatabase, type TestDatabase } from './db.js';
import { startBoss, type Boss } from '../../shared/jobs/boss.js';

/** The subset of a tap Test the helpers use. */
export interface TestLike {
  teardown(fn: () => unknown): void;
}

export const SUPER_ADMIN = { email: 'root@mailpath.test', password: 'Root-password-123' };

/** Environment for tests: cheap bcrypt, quiet logs, generous limits unless a test tightens them. */
export function testEnv(databaseUrl: string, dataDir: string, overrides: Env = {}): Env {
  return {
    DATABASE_URL: databaseUrl,
    MAILPATH_DATA_DIR: dataDir,
    MAILPATH_LOG_LEVEL: 'silent',
    // Processes started from this env pick a free operator port; answers are checked against their zod schemas too.
    MAILPATH_METRICS_PORT: '0',
    MAILPATH_VALIDATE_RESPONSES: 'true',
    MAILPATH_ADMIN_EMAIL: SUPER_ADMIN.email,
    MAILPATH_ADMIN_PASSWORD: SUPER_ADMIN.password,
    MAILPATH_CONFIG__AUTH__BCRYPT_COST: '4',
    MAILPATH_CONFIG__LIMITS__RATE_LIMITS__PER_MINUTE__PUBLIC: '100000',
    MAILPATH_CONFIG__LIMITS__RATE_LIMITS__PER_MINUTE__READ: '100000',
    MAILPATH_CONFIG__LIMITS__RATE_LIMITS__PER_MINUTE__WRITE: '100000',
    MAILPATH_CONFIG__LIMITS__RATE_LIMITS__TENANT_DEFAULT_PER_SEC: '100000',
    // Hits answered after their commit, on the test's thread: a test reads what its request caused at once. The
    // spool and the recorder thread have tests of their own (test/shared/engagement/tracking/, test/api/tracking-spool).
    MAILPATH_CONFIG__TRACKING__RECORDER__SPOOL__ENABLED: 'false',
    MAILPATH_CONFIG__TRACKING__RECORDER__THREAD: 'false',
    // Every fetch of a pixel counts: the counter tests open one message many times a second. The repeat-open window
    // has a test of its own (test/shared/engagement/tracking/traffic-rules.repeat-opens.test.ts).
    MAILPATH_CONFIG__TRACKING__REPEAT_OPENS__WINDOW_SECONDS: '0',
    ...overrides,
  };
}

export interface TestApp {
  app: FastifyInstance;
  /** The process-wide services, as `mailpath start` builds them (the API's context among them). */
  ctx: Services;
  sql: Sql;
  config: Config;
  db: TestDatabase;
  dataDir: string;
  boss: Boss;
}

export async function buildTestApp(t: TestLike, options: { env?: Env; clock?: Clock; log?: Logger } = {}): Promise<TestApp> {
  const db = await createTestDatabase();
  const dataDir = mkdtempSync(join(tmpdir(), 'mailpath-test-'));
  const config = loadConfig(testEnv(db.url, dataDir, options.env));
  const log = options.log ?? createLogger('silent');
  const sql = connect(db.url, log, { max: 4 });
  const clock = options.clock ?? systemClock;
  await ensureSuperAdmin({ sql, config, clock, log });
  // Sends only: no supervision, no workers (tests that deliver start the outbound role themselves).
  const boss = await startBoss(sql, log, { supervise: false });
  const ctx = await buildServices({ config, sql, log, boss, clock });
  const app = await buildApp(ctx);
  t.teardown(async () => {
    await app.close();
    await ctx.close();
    await boss.stop({ graceful: false, wait: true });
    await sql.end({ timeout: 5 });
    await db.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });
  return { app, ctx, sql, config, db, dataDir, boss };
}

export interface ApiResponse<T = any> {
  status: number;
  headers: Record<string, string | string[] | number | undefined>;
  body: T;
}

/** One request through app.inject; body is JSON-encoded unless `raw` is given. */
export async function call<T = any>(
  app: FastifyInstance,
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE',
  url: string,
  options: { token?: string; body?: unknown; raw?: string; headers?: Record<string, string> } = {},
): Promise<ApiResponse<T>> {
  const headers: Record<string, string> = { ...(options.headers ?? {}) };
  if (options.token) headers['authorization'] = `Bearer ${options.token}`;
  let payload: string | undefined;
  if (options.raw !== undefined) {
    payload = options.raw;
    headers['content-type'] ??= 'application/json';
  } else if (options.body !== undefined) {
    payload = JSON.stringify(options.body);
    headers['content-type'] = 'application/json';
  }
  const res = await app.inject({ method, url: url.startsWith('/api/') ? url : `/api/v1${url}`, headers, ...(payload !== undefined ? { payload } : {}) });
  let body: unknown = res.body;
  try {
    body = res.json();
  } catch {
    // Not JSON (e.g. HTML docs): keep the text.
  }
  return { status: res.statusCode, headers: res.headers, body: body as T };
}

let counter = 0;

export interface TestTenant {
  token: string;
  userId: string;
  tenantId: string;
  email: string;
  password: string;
  slug: string;
}

/** Registers a fresh tenant with its owner and returns the owner's session. */
export async function registerTenant(app: FastifyInstance, overrides: Record<string, string> = {}): Promise<TestTenant> {
  counter++;
  const unique = `${process.pid}-${counter}-${Math.random().toString(36).slice(2, 7)}`;
  const body = {
    tenant_name: `Tenant ${unique}`,
    tenant_slug: `t-${unique}`,
    email: `owner-${unique}@example.test`,
    password: 'Correct-horse-42',
    ...overrides,
  };
  const res = await call(app, 'POST', '/auth/register', { body });
  if (res.status !== 201) throw new Error(`register failed: ${res.status} ${JSON.stringify(res.body)}`);
  return {
    token: res.body.data.token,
    userId: res.body.data.user_id,
    tenantId: res.body.data.tenant_id,
    email: body.email,
    password: body.password,
    slug: body.tenant_slug,
  };
}

/** Creates an API key for a tenant (as its owner) and returns the secret and the key's id. */
export async function createKey(app: FastifyInstance, tenant: TestTenant, body: Record<string, unknown> = {}): Promise<{ key: string; id: string }> {
  const res = await call(app, 'POST', '/api-keys', { token: tenant.token, body: { name: 'test key', ...body } });
  if (res.status !== 201) throw new Error(`key creation failed: ${res.status} ${JSON.stringify(res.body)}`);
  return { key: res.body.data.key, id: res.body.data.id };
}

export async function superAdminToken(app: FastifyInstance): Promise<string> {
  const res = await call(app, 'POST', '/auth/login', { body: SUPER_ADMIN });
  if (res.status !== 200) throw new Error(`super-admin login failed: ${res.status}`);
  return res.body.data.token;
}

/** Rows in a table, optionally of one tenant: for "nothing was written" assertions. */
export async function countRows(sql: Sql, table: string, tenantId?: string): Promise<number> {
  const rows = tenantId
    ? await sql<{ n: number }[]>`select count(*)::int as n from ${sql(table)} where tenant_id = ${tenantId}`
    : await sql<{ n: number }[]>`select count(*)::int as n from ${sql(table)}`;
  return rows[0]!.n;
}
