-- Mailpath's own statement timing, for the slow-query report when pg_stat_statements is not loaded: each process
-- writes one row per statement and 5-minute window (replaced at each flush while the window is open), with a
-- sample of its durations so the report can compute p99 across every process.
create table query_timings (
  window_start timestamptz not null,
  statement_hash text not null,
  process_id uuid not null,
  statement text not null,
  calls bigint not null,
  total_ms double precision not null,
  max_ms double precision not null,
  samples double precision[] not null,
  primary key (window_start, statement_hash, process_id)
);

create index query_timings_window_idx on query_timings (window_start);
