import nodemailer, { type Transporter } from 'nodemailer';
import { formatDuration } from '../../duration.js';
import { levelName } from '../logs/levels.js';
import type { Log } from '../logs/present.js';
import { firingLogsUrl } from '../alerts/links.js';
import type { FiringContext } from './repository.js';
import { isValidEmail } from '../accounts/email-address.js';

/** One line, no control characters, bounded: user text that goes into a header. */
export function headerSafe(text: string, max = 120): string {
  const line = text.replace(/[\u0000-\u001f\u007f\u2028\u2029]+/g, ' ').trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

export const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

export interface AlertMessage {
  subject: string;
  text: string;
  html: string;
}

/** The email for one entry (fired or resolved): the rule, the count, the window, a few sample lines and the "View matching logs" link. */
export function alertEmail(ctx: FiringContext, publicUrl: string): AlertMessage {
  const sample = JSON.parse(ctx.sample) as Log[];
  const window = formatDuration(Number(ctx.windowMs));
  const level = levelName(Number(ctx.level));
  const link = firingLogsUrl(ctx, publicUrl);
  const condition = `${ctx.matchedCount} ${level} log${ctx.matchedCount === 1 ? '' : 's'}${ctx.source ? ` from ${ctx.source}` : ''}${ctx.pattern ? ` matching /${ctx.pattern}/` : ''}${ctx.query ? ` selected by \`${ctx.query}\`` : ''} within ${window} (threshold ${ctx.threshold})`;
  const when = new Date(Number(ctx.triggeredAt)).toISOString();
  const resolved = ctx.kind === 'resolved';
  const silence = ctx.comparison === 'below';
  const what = resolved ? 'resolved' : ctx.kind === 'test' ? 'sent a test notification' : 'fired';
  const lines = sample.map((l) => `${l.timestamp} ${l.level.toUpperCase()}${l.source ? ` [${l.source}]` : ''} ${l.message.slice(0, 500)}`);
  const text = [
    `Alert "${headerSafe(ctx.ruleName, 200)}" ${what} on project "${headerSafe(ctx.projectName, 200)}" at ${when}.`,
    '',
    `${resolved ? 'Now' : 'Condition'}: ${condition}${silence ? ' (fires below the threshold)' : ''}.`,
    '',
    ...(lines.length > 0 ? ['Recent matching logs:', ...lines.map((l) => `  ${l}`), ''] : []),
    `View matching logs: ${link}`,
  ].join('\n');
  const html = `<!doctype html><html><body style="font-family:system-ui,sans-serif">
<h2 style="margin:0 0 8px">${escapeHtml(headerSafe(ctx.ruleName, 200))}</h2>
<p>${what} on project <b>${escapeHtml(headerSafe(ctx.projectName, 200))}</b> at ${when}.</p>
<p><b>${resolved ? 'Now' : 'Condition'}:</b> ${escapeHtml(condition)}${silence ? ' (fires below the threshold)' : ''}.</p>
${lines.length > 0 ? `<p><b>Recent matching logs:</b></p>\n<pre style="background:#f4f4f5;padding:8px;white-space:pre-wrap">${escapeHtml(lines.join('\n'))}</pre>` : ''}
<p><a href="${escapeHtml(link)}">View matching logs</a></p>
</body></html>`;
  return { subject: headerSafe(`[Loglane] ${ctx.ruleName} ${what} on ${ctx.projectName}`, 180), text, html };
}

export interface Mailer {
  send(to: string, message: AlertMessage): Promise<void>;
  close(): void;
}

export function createMailer(smtpUrl: string, from: string): Mailer {
  const url = new URL(smtpUrl);
  const transport: Transporter = nodemailer.createTransport({
    host: url.hostname,
    port: url.port ? Number(url.port) : url.protocol === 'smtps:' ? 465 : 587,
    secure: url.protocol === 'smtps:',
    auth: url.username ? { user: decodeURIComponent(url.username), pass: decodeURIComponent(url.password) } : undefined,
    // Plain smtp:// still upgrades with STARTTLS when the server offers it; `?tls=off` never does (local relays, tests).
    ignoreTLS: url.searchParams.get('tls') === 'off',
    connectionTimeout: 10_000,
    greetingTimeout: 10_000,
    socketTimeout: 20_000,
  });
  return {
    /**
     * Sends to `to` exactly: as an address object and an explicit envelope, so nodemailer parses
     * nothing (a display name or a group in a string would otherwise choose the recipient). An
     * address that is not a plain addr-spec (one stored before signup checked it) is not mailed.
     */
    async send(to, message) {
      if (!isValidEmail(to) || to !== to.trim()) throw new Error('the recipient is not a plain email address (local@domain); nothing was sent');
      const recipient = { name: '', address: to };
      await transport.sendMail({ from, to: recipient, envelope: { from, to: [recipient] }, subject: message.subject, text: message.text, html: message.html });
    },
    close: () => transport.close(),
  };
}
