// "Did you mean": the known name closest to a misspelt one, by edit distance, when it is close enough to be a typo.

/**
 * Edit distance with adjacent transpositions (optimal string alignment): insertions, deletions, substitutions and
 * swaps of two neighbours each cost one, so the commonest typo (`nmae`) is one edit from its word.
 */
export function editDistance(a: string, b: string): number {
  const rows: number[][] = [Array.from({ length: b.length + 1 }, (_, j) => j)];
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(rows[i - 1]![j]! + 1, row[j - 1]! + 1, rows[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, rows[i - 2]![j - 2]! + 1);
      row[j] = d;
    }
    rows.push(row);
  }
  return rows[a.length]![b.length]!;
}

/**
 * The candidate nearest to `name` (case aside) within a third of its length in edits (at least one), or undefined:
 * `nmae` → `name`, `from` → `from_email` is too far (a different word, not a typo).
 */
export function closest(name: string, candidates: Iterable<string>): string | undefined {
  // A name this long is no typo of a field name, and the distance's cost grows with it.
  if (name.length > 64) return undefined;
  const lower = name.toLowerCase();
  const limit = Math.max(1, Math.floor(name.length / 3));
  let best: { candidate: string; distance: number } | undefined;
  for (const candidate of candidates) {
    const distance = editDistance(lower, candidate.toLowerCase());
    if (distance <= limit && (!best || distance < best.distance)) best = { candidate, distance };
  }
  return best?.candidate;
}
