-- Bounce and complaint intake: one row per inbound bounce recipient once its report is handled (so a job run twice does nothing twice), and the Message-ID look-up of feedback-loop reports.

create table bounce_reports (
  inbound_recipient_id uuid primary key references inbound_recipients(id) on delete cascade,
  -- What the message was read as, and what was done: bounce_hard, bounce_soft, deferred,
  -- complaint, or why nothing was (forged, unmapped, ambiguous, test_send, already_bounced, ...).
  kind text not null check (kind in ('dsn', 'arf', 'unknown')),
  outcome text not null,
  -- The send it mapped to (null when it mapped to none) and that send's tenant.
  send_id uuid references sends(id) on delete set null,
  tenant_id uuid references tenants(id) on delete cascade,
  detail jsonb not null default '{}',
  handled_at timestamptz not null
);

create index bounce_reports_send_idx on bounce_reports (send_id) where send_id is not null;

-- Feedback-loop reports name the original message by its Message-ID (the recipient address is
-- often redacted): the fallback look-up when no VERP address maps the report.
create index sends_message_id_idx on sends (message_id);
