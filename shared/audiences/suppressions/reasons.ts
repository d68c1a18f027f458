// The vocabulary of a suppression: why it was added and what added it (the API's enums, the stored values of queries.ts).

/** The reasons a suppression can be added with (by the API or the mail pipeline). */
export const ADDABLE_REASONS = ['hard_bounce', 'complaint', 'unsubscribe', 'manual', 'spam_trap'] as const;
/** Every stored reason: `erased` marks the hash-only row a contact erasure leaves (email null). */
export const SUPPRESSION_REASONS = [...ADDABLE_REASONS, 'erased'] as const;
export type SuppressionReason = (typeof SUPPRESSION_REASONS)[number];

export const SUPPRESSION_SOURCES = ['api', 'bounce', 'complaint', 'unsubscribe-link', 'erasure'] as const;
export type SuppressionSource = (typeof SUPPRESSION_SOURCES)[number];
