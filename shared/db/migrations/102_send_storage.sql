-- How a send is stored, for the cost of the send path.
--
-- Stored messages (a send's signed bytes, an inbound message's raw bytes) are compressed with lz4 where the server
-- has it: PostgreSQL's default, pglz, costs about twice the CPU per 8 KB message for the same size on disk, on the
-- hottest insert of the send path. A server built without lz4 (the embedded one may be) keeps pglz.
do $$
begin
  if exists (select 1 from pg_settings where name = 'default_toast_compression' and 'lz4' = any (enumvals)) then
    alter table sends alter column message set compression lz4;
    alter table inbound_messages alter column raw set compression lz4;
  end if;
end
$$;

-- A send's row is written once and updated about once (its delivery outcome), and none of the columns the outcome
-- changes is indexed: with half of each page left free the update stays on the page (HOT) and writes no entry in the
-- table's five indexes. The message itself lives out of line (TOAST), so the rows are small.
alter table sends set (fillfactor = 50);
