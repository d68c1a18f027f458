// Where a send came from: the API's enum and the stored value of sends.source (queries.ts).

/** The API, SMTP submission, a campaign's fan-out, or a campaign's proof (POST /campaigns/{id}/proof). */
export const SEND_SOURCES = ['api', 'smtp', 'campaign', 'proof'] as const;
export type SendSource = (typeof SEND_SOURCES)[number];
