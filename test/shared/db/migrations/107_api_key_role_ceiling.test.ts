// Migration 107 on a database holding API keys from before role ceilings: each key takes its maker's current role, at least developer; a key whose maker is
// gone takes developer.
import { randomBytes } from 'node:crypto';
import t from 'tap';
import { databaseBefore } from '../../../helpers/migration-db.js';
import { insertTenant } from '../../../helpers/tenant-rows.js';

const CEILING = 107;

const { sql, apply } = await databaseBefore(t, CEILING);

t.test("existing keys get their maker's current role as a ceiling, at least developer", async (t) => {
  const tenant = await insertTenant(sql);
  const user = async (role: string) => {
    const [row] = await sql<{ id: string }[]>`
      insert into users (tenant_id, email, password_hash, role)
      values (${tenant}, ${`${role}-${randomBytes(4).toString('hex')}@example.test`}, 'x', ${role}) returning id`;
    return row!.id;
  };
  const key = async (maker: string | null) => {
    const [row] = await sql<{ id: string }[]>`
      insert into api_keys (tenant_id, name, prefix, mode, key_hash, created_by_user_id)
      values (${tenant}, 'k', 'mp_live_x', 'live', ${randomBytes(16).toString('hex')}, ${maker}) returning id`;
    return row!.id;
  };
  const keys = {
    owner: await key(await user('owner')),
    admin: await key(await user('admin')),
    developer: await key(await user('developer')),
    demoted: await key(await user('viewer')),
    orphan: await key(null),
  };
  t.same(await apply(), [CEILING]);
  const ceilings = new Map((await sql<{ id: string; role_ceiling: string }[]>`select id, role_ceiling from api_keys`).map((r) => [r.id, r.role_ceiling]));
  t.equal(ceilings.get(keys.owner), 'owner');
  t.equal(ceilings.get(keys.admin), 'admin');
  t.equal(ceilings.get(keys.developer), 'developer');
  t.equal(ceilings.get(keys.demoted), 'developer', 'a maker demoted to viewer: developer, the least role that makes keys (its writes keep working)');
  t.equal(ceilings.get(keys.orphan), 'developer', 'a removed maker: developer, nothing says more was meant');
  await t.rejects(sql`update api_keys set role_ceiling = 'root' where id = ${keys.owner}`, /check/, 'only the four roles');
});
