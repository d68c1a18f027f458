-- SOC 2 evidence packs: one per UTC day, written by the soc2-evidence worker (run-now overwrites the day's pack).
create table soc2_evidence_packs (
  date date primary key,
  generated_at timestamptz not null,
  pack jsonb not null
);
