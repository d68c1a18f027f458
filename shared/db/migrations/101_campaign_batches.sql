-- Campaign fan-out by ranges: each recipient gets a position (seq) in its campaign when the target is fixed, and
-- workers claim ranges of positions instead of rows. A recipient row is written once (its insert); sending it
-- changes nothing on it (its send's existence says it was sent), and only a skip or the A/B hold changes its status.
-- Before, each recipient was also updated when claimed and when settled, both updates moving it in a status index.
alter table campaign_recipients add column seq bigint;
update campaign_recipients r set seq = o.n
from (select campaign_id, contact_id, row_number() over (partition by campaign_id order by contact_id) as n from campaign_recipients) o
where r.campaign_id = o.campaign_id and r.contact_id = o.contact_id;
alter table campaign_recipients alter column seq set not null;
create index campaign_recipients_seq_idx on campaign_recipients (campaign_id, seq);
drop index campaign_recipients_pending_idx;
alter table campaign_recipients drop column claimed_until;

-- recipient_seq: the last position given out while fixing the target; fanout_seq: the last position a batch was
-- claimed up to. Positions past fanout_seq are not yet claimed.
alter table campaigns add column recipient_seq bigint not null default 0;
alter table campaigns add column fanout_seq bigint not null default 0;
update campaigns c set recipient_seq = coalesce((select max(seq) from campaign_recipients r where r.campaign_id = c.id), 0);

-- Batches a worker holds (claimed_until in the future), gave back unfinished (claimed_until null: the warm-up cap or a
-- refusal stopped it), or left behind by dying (claimed_until past). A batch row exists from its claim until it is
-- completed: deleting it and counting its recipients as queued happen in one transaction.
create table campaign_batches (
  campaign_id uuid not null references campaigns (id) on delete cascade,
  first_seq bigint not null,
  last_seq bigint not null,
  claimed_until timestamptz,
  primary key (campaign_id, first_seq)
);
