// The tokens and URLs of one message's tracking links: the open pixel and the unsubscribe link name the send; each click redirect names the send, its tenant
// (and whether it is a simulated or sandbox send), its destination and how many tracked links the message has.
import { signToken, uuidAt, uuidBytes, verifyToken } from './tokens.js';

/** The public paths of the api role (api/pages/tracking.ts serves them). */
export const TRACKING_PATHS = { open: '/o/', click: '/c/', unsubscribe: '/u/' } as const;

/** Whose message a click link is in, signed into its token so the click needs no look-up to judge it. */
export interface LinkOwner {
  tenantId: string;
  /**
   * A simulated send (test key) or a sandbox tenant's: no mail left with it, so its links answer a page naming the
   * target rather than redirecting (else the tracking host mints redirects to anywhere for anyone with a test key).
   */
  interstitial: boolean;
}

/** Where a click goes: the signed destination, never anything the request says. */
export interface ClickTarget {
  sendId: string;
  url: string;
  /** How many distinct tracked links the message has (for the "clicked every link at once" scanner rule). */
  links: number;
  /** The send's tenant; null in a link minted before tokens carried it (the click looks it up). */
  tenantId: string | null;
  interstitial: boolean;
}

const SEND_BYTES = 16;
const COUNT_BYTES = 2;
const MAX_LINKS = 0xffff;
/** An owned click token's payload: send id, tenant id, flags, link count, then the URL. */
const OWNED_HEAD = SEND_BYTES + 16 + 1 + COUNT_BYTES;
const FLAG_INTERSTITIAL = 1;

/** MAILPATH_PUBLIC_URL without a trailing slash: the links' origin (and path, behind a proxy that adds one). */
export function linkBase(publicUrl: URL): string {
  return publicUrl.origin + publicUrl.pathname.replace(/\/+$/, '');
}

export function openToken(key: Buffer, sendId: string): string {
  return signToken(key, 'open', uuidBytes(sendId));
}

/** The send id of an open token, or undefined for anything else (another purpose, another key, tampered). */
export function readOpenToken(key: Buffer, token: string): string | undefined {
  const payload = verifyToken(key, 'open', token);
  return payload?.length === SEND_BYTES ? uuidAt(payload) : undefined;
}

export function unsubscribeToken(key: Buffer, sendId: string): string {
  return signToken(key, 'unsubscribe', uuidBytes(sendId));
}

export function readUnsubscribeToken(key: Buffer, token: string): string | undefined {
  const payload = verifyToken(key, 'unsubscribe', token);
  return payload?.length === SEND_BYTES ? uuidAt(payload) : undefined;
}

/** A click token: the send id, its tenant and flags, the message's link count and the destination URL (UTF-8), signed together. */
export function clickToken(key: Buffer, sendId: string, url: string, links: number, owner: LinkOwner): string {
  return clickTokenOf(key, uuidBytes(sendId), ownerBytes(owner), url, links);
}

function ownerBytes(owner: LinkOwner): Buffer {
  return Buffer.concat([uuidBytes(owner.tenantId), Buffer.of(owner.interstitial ? FLAG_INTERSTITIAL : 0)]);
}

/** clickToken with the send id's and owner's bytes given (a message's links share them: made once). */
function clickTokenOf(key: Buffer, send: Buffer, owner: Buffer, url: string, links: number): string {
  const urlBytes = Buffer.byteLength(url, 'utf8');
  const payload = Buffer.allocUnsafe(OWNED_HEAD + urlBytes);
  send.copy(payload, 0);
  owner.copy(payload, SEND_BYTES);
  payload.writeUInt16BE(Math.min(Math.max(links, 1), MAX_LINKS), OWNED_HEAD - COUNT_BYTES);
  payload.write(url, OWNED_HEAD, 'utf8');
  return signToken(key, 'owned_click', payload);
}

/** A click token of either form: owned (today's), or one minted before tokens named the tenant (still in mailboxes). */
export function readClickToken(key: Buffer, token: string): ClickTarget | undefined {
  const owned = verifyToken(key, 'owned_click', token);
  if (owned && owned.length > OWNED_HEAD) {
    return targetOf(owned, OWNED_HEAD, { tenantId: uuidAt(owned, SEND_BYTES), interstitial: (owned[SEND_BYTES + 16]! & FLAG_INTERSTITIAL) !== 0 });
  }
  const legacy = owned ? undefined : verifyToken(key, 'click', token);
  if (!legacy || legacy.length <= SEND_BYTES + COUNT_BYTES) return undefined;
  return targetOf(legacy, SEND_BYTES + COUNT_BYTES, { tenantId: null, interstitial: false });
}

function targetOf(payload: Buffer, head: number, owner: Pick<ClickTarget, 'tenantId' | 'interstitial'>): ClickTarget | undefined {
  const url = payload.subarray(head).toString('utf8');
  // Signed by us, so always one of ours; checked anyway: a redirect only ever goes to http(s).
  if (!/^https?:\/\//i.test(url)) return undefined;
  return { sendId: uuidAt(payload), url, links: payload.readUInt16BE(head - COUNT_BYTES), ...owner };
}

/** A click token as minted before tokens named the tenant (for the tests that links in old mail keep working). */
export function legacyClickToken(key: Buffer, sendId: string, url: string, links: number): string {
  const urlBytes = Buffer.byteLength(url, 'utf8');
  const payload = Buffer.allocUnsafe(SEND_BYTES + COUNT_BYTES + urlBytes);
  uuidBytes(sendId).copy(payload, 0);
  payload.writeUInt16BE(Math.min(Math.max(links, 1), MAX_LINKS), SEND_BYTES);
  payload.write(url, SEND_BYTES + COUNT_BYTES, 'utf8');
  return signToken(key, 'click', payload);
}

export function openUrl(base: string, key: Buffer, sendId: string): string {
  return `${base}${TRACKING_PATHS.open}${openToken(key, sendId)}`;
}

/** Click URLs of one send: the send id and owner parsed once for all of a message's links. */
export function clickUrls(base: string, key: Buffer, sendId: string, owner: LinkOwner): (url: string, links: number) => string {
  const send = uuidBytes(sendId);
  const ownerPart = ownerBytes(owner);
  const prefix = `${base}${TRACKING_PATHS.click}`;
  return (url, links) => prefix + clickTokenOf(key, send, ownerPart, url, links);
}

/** The https unsubscribe link of a send: a page with a button (GET) and RFC 8058 one-click (POST). */
export function unsubscribeUrl(base: string, key: Buffer, sendId: string): string {
  return `${base}${TRACKING_PATHS.unsubscribe}${unsubscribeToken(key, sendId)}`;
}

/** Local parts of unsubscribe addresses start with this; the token follows (base64url and one dot: valid in a local part). */
export const UNSUBSCRIBE_LOCAL_PREFIX = 'u-';

/** The mailto unsubscribe address of a send, at MAILPATH_HOSTNAME (the MX accepts it and applies it like the link). */
export function unsubscribeAddress(key: Buffer, sendId: string, hostname: string): string {
  return `${UNSUBSCRIBE_LOCAL_PREFIX}${unsubscribeToken(key, sendId)}@${hostname}`;
}

/** The send id of an unsubscribe address at `hostname`, or undefined (not one, or a bad token). */
export function sendIdOfUnsubscribeAddress(key: Buffer, address: string, hostname: string): string | undefined {
  const at = address.lastIndexOf('@');
  if (at < 0 || address.slice(at + 1).toLowerCase() !== hostname.toLowerCase()) return undefined;
  const local = address.slice(0, at);
  if (!local.startsWith(UNSUBSCRIBE_LOCAL_PREFIX)) return undefined;
  return readUnsubscribeToken(key, local.slice(UNSUBSCRIBE_LOCAL_PREFIX.length));
}
