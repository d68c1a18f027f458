-- Unsubscribe mail: the MX accepts mail to a send's signed mailto unsubscribe address (its List-Unsubscribe
-- header), stores it like bounce mail, and a job applies it (shared/tracking/unsubscribe-mail.ts).

alter table inbound_recipients drop constraint inbound_recipients_kind_check;
alter table inbound_recipients add constraint inbound_recipients_kind_check check (kind in ('tenant', 'bounce', 'unsubscribe'));
