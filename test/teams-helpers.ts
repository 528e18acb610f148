/**
 * Helpers for the teams and account-care tests: reading the links out of the mails the server
 * really sent (MIME decoded as a mail client would), inviting a user the way a person does
 * (invitation, mail, accept), a raw request that also copes with a live tail, and a scan of every
 * table of the server's database.
 */
import { sql } from 'kysely';
import { expect } from 'vitest';
import { ISSUED_SECRETS, waitFor, type Account, type TestServer } from './harness.js';
import type { Mail } from './sinks.js';

export type Smtp = { mails: Mail[] };

interface MimePart {
  contentType: string;
  text: string;
}

function headerValue(headers: string, name: string): string | undefined {
  const unfolded = headers.replace(/\r?\n[ \t]+/g, ' ');
  const m = new RegExp(`^${name}:[ \\t]*(.*)$`, 'im').exec(unfolded);
  return m?.[1]?.trim();
}

function decodeQuotedPrintable(body: string): string {
  const bytes: number[] = [];
  const soft = body.replace(/=\r?\n/g, '');
  for (let i = 0; i < soft.length; i++) {
    const c = soft[i]!;
    if (c === '=' && /^[0-9A-Fa-f]{2}$/.test(soft.slice(i + 1, i + 3))) {
      bytes.push(parseInt(soft.slice(i + 1, i + 3), 16));
      i += 2;
    } else bytes.push(...Buffer.from(c, 'utf8'));
  }
  return Buffer.from(bytes).toString('utf8');
}

/** The leaf parts of a MIME message, each decoded from its transfer encoding. */
export function mimeParts(raw: string): MimePart[] {
  const split = /\r?\n\r?\n/.exec(raw);
  const headers = split ? raw.slice(0, split.index) : raw;
  const body = split ? raw.slice(split.index + split[0].length) : '';
  const contentType = headerValue(headers, 'Content-Type') ?? 'text/plain';
  if (/^multipart\//i.test(contentType)) {
    const boundary = /boundary="?([^";]+)"?/i.exec(contentType)?.[1];
    if (!boundary) return [];
    const chunks = body.split(new RegExp(`\\r?\\n?--${boundary.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?:--)?[ \\t]*\\r?\\n?`));
    return chunks.slice(1).filter((c) => c.trim() !== '').flatMap((c) => mimeParts(c));
  }
  const encoding = (headerValue(headers, 'Content-Transfer-Encoding') ?? '7bit').toLowerCase();
  const text = encoding === 'quoted-printable' ? decodeQuotedPrintable(body) : encoding === 'base64' ? Buffer.from(body.replace(/\s+/g, ''), 'base64').toString('utf8') : body;
  return [{ contentType: contentType.split(';')[0]!.trim().toLowerCase(), text }];
}

/**
 * The token of the link `<base>#token=<token>` in a mail; asserts that the text part and the HTML
 * part both carry the same link.
 */
export function tokenInMail(mail: Mail, base: string): string {
  const parts = mimeParts(mail.raw);
  const text = parts.find((p) => p.contentType === 'text/plain');
  const html = parts.find((p) => p.contentType === 'text/html');
  expect(text, 'the mail has a text part').toBeDefined();
  expect(html, 'the mail has an HTML part').toBeDefined();
  const pattern = new RegExp(`${base.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}#token=([A-Za-z0-9_~.-]+)`);
  const inText = pattern.exec(text!.text)?.[1];
  const inHtml = pattern.exec(html!.text)?.[1];
  expect(inText, `the text part links to ${base}#token=…`).toBeDefined();
  expect(inHtml, 'the HTML part carries the same link').toBe(inText);
  ISSUED_SECRETS.add(inText!);
  return inText!;
}

/** Mails handed out by `nextMail` already, so that each is used once. */
const taken = new WeakSet<Mail>();

/** Waits for the next mail to `to` (not yet taken) whose subject satisfies `subject`, and takes it. */
export async function nextMail(smtp: Smtp, to: string, subject: (s: string) => boolean, timeoutMs = 5000): Promise<Mail> {
  const mail = await waitFor(() => smtp.mails.find((m) => !taken.has(m) && m.to.includes(to) && subject(m.subject)), timeoutMs, `a mail to ${to}`);
  taken.add(mail);
  return mail;
}

export interface Invited {
  invitation: { id: string; email: string; role: string; createdAt: string; expiresAt: string };
  token: string;
}

/** Invites `email` to the project as `inviter`, and reads the token out of the invitation mail. */
export async function invite(s: TestServer, smtp: Smtp, inviter: Account, project: { id: string; name: string }, email: string, role: 'admin' | 'member', publicUrl: string): Promise<Invited> {
  const res = await s.request('POST', `/v1/projects/${project.id}/invitations`, { token: inviter.accessToken, body: { email, role } });
  if (res.status !== 201) throw new Error(`invitation failed: ${res.status} ${res.text}`);
  const mail = await nextMail(smtp, email.toLowerCase(), (subject) => subject === `You are invited to ${project.name} on Loglane`);
  return { invitation: res.body, token: tokenInMail(mail, `${publicUrl}/invitations`) };
}

/** Makes `user` a member of the project with `role`: invitation by `inviter`, accepted by `user`. */
export async function addMember(s: TestServer, smtp: Smtp, inviter: Account, project: { id: string; name: string }, user: Account, role: 'admin' | 'member', publicUrl: string): Promise<void> {
  const { token } = await invite(s, smtp, inviter, project, user.email, role, publicUrl);
  const res = await s.request('POST', '/v1/invitations/accept', { token: user.accessToken, body: { token } });
  if (res.status !== 200) throw new Error(`accept failed: ${res.status} ${res.text}`);
  if (res.body?.project?.role !== role) throw new Error(`accepted with role ${res.body?.project?.role}, invited as ${role}`);
}

export interface RawResponse {
  status: number;
  contentType: string | null;
  requestId: string | null;
  text: string;
}

/**
 * One request, as raw as the harness's but safe for a live tail: a 200 event stream is closed as
 * soon as its headers arrive (its text is then empty).
 */
export async function rawRequest(s: TestServer, method: string, path: string, options: { token?: string; body?: unknown } = {}): Promise<RawResponse> {
  const headers: Record<string, string> = {};
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  let body: string | undefined;
  if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers['content-type'] = 'application/json';
  }
  const controller = new AbortController();
  const res = await fetch(s.url + path, { method, headers, body, signal: controller.signal });
  const contentType = res.headers.get('content-type');
  let text = '';
  if ((contentType ?? '').startsWith('text/event-stream')) controller.abort();
  else text = await res.text();
  return { status: res.status, contentType, requestId: res.headers.get('x-request-id'), text };
}

/** A response with its request id blanked, for byte-for-byte comparisons. */
export function withoutRequestId(res: RawResponse): { status: number; contentType: string | null; text: string } {
  return { status: res.status, contentType: res.contentType, text: res.requestId ? res.text.split(res.requestId).join('<request id>') : res.text };
}

/** Every table of the server's database (SQLite: sqlite_master; PostgreSQL: information_schema). */
export async function listTables(s: TestServer): Promise<string[]> {
  const db = s.database.db;
  if (s.engine === 'sqlite') {
    const rows = await sql<{ name: string }>`select name from sqlite_master where type = 'table'`.execute(db);
    return rows.rows.map((r) => r.name);
  }
  const rows = await sql<{ name: string }>`select table_name as name from information_schema.tables where table_schema = current_schema() and table_type = 'BASE TABLE'`.execute(db);
  return rows.rows.map((r) => r.name);
}

/** Every cell of every table, as text (binary cells as UTF-8 and Latin-1), with where it is. */
export async function scanDatabase(s: TestServer): Promise<{ table: string; column: string; text: string }[]> {
  const cells: { table: string; column: string; text: string }[] = [];
  for (const table of await listTables(s)) {
    const rows = await sql<Record<string, unknown>>`select * from ${sql.table(table)}`.execute(s.database.db);
    for (const row of rows.rows) {
      for (const [column, value] of Object.entries(row)) {
        if (value === null || value === undefined) continue;
        let text: string;
        if (Buffer.isBuffer(value) || value instanceof Uint8Array) text = `${Buffer.from(value).toString('utf8')}\n${Buffer.from(value).toString('latin1')}`;
        else if (typeof value === 'object') text = JSON.stringify(value);
        else text = String(value);
        cells.push({ table, column, text });
      }
    }
  }
  return cells;
}
