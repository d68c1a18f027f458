-- Inbound webhook deliveries become an outbox like event_webhook_deliveries: one claim loop takes due
-- rows of both (shared/webhooks/outbox.ts), so a pending row is due at next_attempt_at, never null,
-- and the pg-boss queue that used to carry one job per attempt is retired.
update inbound_webhook_deliveries set next_attempt_at = coalesce(next_attempt_at, created_at) where status = 'pending';
alter table inbound_webhook_deliveries add column last_duration_ms integer;
alter table inbound_webhook_deliveries add constraint inbound_webhook_deliveries_due_check
  check (status <> 'pending' or next_attempt_at is not null);
create index inbound_webhook_deliveries_due_idx on inbound_webhook_deliveries (next_attempt_at) where status = 'pending';

-- The retired queue's jobs name deliveries the claim loop now takes from the table itself.
do $$
begin
  if to_regclass('pgboss.job') is not null then
    delete from pgboss.job where name = 'inbound.webhook';
  end if;
end $$;
