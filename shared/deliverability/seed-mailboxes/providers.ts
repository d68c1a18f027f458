// The mailbox providers a seed can be hosted by (the API's enum, the stored value of seed_mailboxes.provider).
export const SEED_PROVIDERS = ['gmail', 'outlook', 'yahoo', 'aol', 'icloud', 'proton', 'fastmail', 'custom'] as const;
export type SeedProvider = (typeof SEED_PROVIDERS)[number];
