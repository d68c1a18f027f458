// The contact's first-class columns (the spec's reserved names): which exist, which a client may write, and how long each may be.

/** Every reserved column name of the spec: none of them can be a custom field's key. */
export const RESERVED_COLUMNS = [
  'email',
  'first_name',
  'last_name',
  'phone',
  'company',
  'city',
  'state',
  'country',
  'postal_code',
  'title',
  'timezone',
  'mobile_phone',
  'email_format',
  'confirmed_status',
  'mobile_status',
  'crm_id',
  'crm_contact_id',
  'crm_lead_id',
  'status',
  'id',
  'tenant_id',
  'created_at',
  'updated_at',
  'custom_fields',
] as const;

/**
 * Names a custom field may not take although the spec does not list them: columns Mailpath adds
 * (best_send_hour, the erasure and unsubscribe stamps, the hash) would be ambiguous in segments and Liquid.
 */
export const INTERNAL_COLUMNS = ['best_send_hour', 'email_hash', 'unsubscribed_at', 'erased_at'] as const;

/** The reserved text columns a client writes besides `email`, `status` and `custom_fields`, with their length caps. */
export const PROFILE_COLUMNS = {
  first_name: 200,
  last_name: 200,
  phone: 50,
  company: 200,
  city: 200,
  state: 200,
  country: 100,
  postal_code: 20,
  title: 200,
  timezone: 64,
  mobile_phone: 50,
  email_format: 20,
  confirmed_status: 50,
  mobile_status: 50,
  crm_id: 200,
  crm_contact_id: 200,
  crm_lead_id: 200,
} as const satisfies Record<string, number>;

export type ProfileColumn = keyof typeof PROFILE_COLUMNS;
export const PROFILE_COLUMN_NAMES = Object.keys(PROFILE_COLUMNS) as ProfileColumn[];

export const CONTACT_STATUSES = ['active', 'unsubscribed', 'deleted'] as const;
export type ContactStatus = (typeof CONTACT_STATUSES)[number];

const reserved = new Set<string>([...RESERVED_COLUMNS, ...INTERNAL_COLUMNS]);

/** Whether `key` names a first-class column (so it cannot be a custom field's key). */
export function isReservedName(key: string): boolean {
  return reserved.has(key);
}
