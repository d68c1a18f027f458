-- Deleting a tenant cascades to its contacts, and the contact_counts trigger then wrote the tenant's negative
-- counts back into contact_counts, whose foreign key refused them: a tenant with contacts could not be deleted.
-- The counts of a tenant that is gone are not written (its contact_counts rows go in the same cascade).
create or replace function contact_counts_apply() returns trigger language plpgsql as $$
begin
  if tg_op in ('UPDATE', 'DELETE') then
    insert into contact_counts (tenant_id, status, n)
      select o.tenant_id, o.status, -count(*) from old_rows o
      where exists (select 1 from tenants t where t.id = o.tenant_id)
      group by o.tenant_id, o.status
      on conflict (tenant_id, status) do update set n = contact_counts.n + excluded.n;
  end if;
  if tg_op in ('UPDATE', 'INSERT') then
    insert into contact_counts (tenant_id, status, n)
      select tenant_id, status, count(*) from new_rows group by tenant_id, status
      on conflict (tenant_id, status) do update set n = contact_counts.n + excluded.n;
  end if;
  return null;
end $$;
