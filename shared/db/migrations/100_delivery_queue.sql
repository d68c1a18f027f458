-- The delivery queue: one narrow row per send still to be delivered, in place of a pg-boss job per send. A row is
-- claimable once due_at has passed; claiming it moves due_at forward by the lease (the instant another worker may take
-- it over if this one dies), a retry sets due_at to the retry time, and the outcome that ends delivery deletes the
-- row. claimed_at says a worker holds it (set by the claim, cleared by a reschedule), for the queue-depth gauges. A job
-- row of pg-boss has a dozen columns, several indexes and three state changes per delivery; this has three columns,
-- two indexes, an insert and a delete.
create table delivery_queue (
  send_id uuid primary key references sends (id) on delete cascade,
  due_at timestamptz not null,
  claimed_at timestamptz
) with (fillfactor = 70);

create index delivery_queue_due_idx on delivery_queue (due_at);

-- An upgraded installation: the deliveries pg-boss still held (waiting, retrying, or active in a process that is gone)
-- move into the queue, due when their job was. Their jobs are left to pg-boss's archive; nothing works that queue now.
do $$
begin
  if to_regclass('pgboss.job') is not null then
    insert into delivery_queue (send_id, due_at)
    select s.id, min(j.start_after)
    from pgboss.job j
    join sends s on s.id::text = j.data ->> 'send_id'
    where j.name = 'outbound.deliver' and j.state in ('created', 'retry', 'active')
      and s.status in ('queued', 'deferred', 'sending')
    group by s.id
    on conflict (send_id) do nothing;
    delete from pgboss.job where name = 'outbound.deliver' and state in ('created', 'retry', 'active');
  end if;
end
$$;
