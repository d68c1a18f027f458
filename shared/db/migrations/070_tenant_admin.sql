-- Super-admin tenant operations: when and why a tenant was suspended (shown to operators, cleared on unsuspend),
-- and the indexes the tenant list's filters use.
alter table tenants
  add column suspended_at timestamptz,
  add column suspension_reason text;

create index tenants_status_idx on tenants (status, created_at desc);
create index tenants_plan_idx on tenants (plan_id, created_at desc);
