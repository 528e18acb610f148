/**
 * The account mails: a password reset and a project invitation. Text and HTML, through the same
 * mailer as alerts (one plain recipient, user text kept out of headers or made one safe line).
 */
import type { FastifyBaseLogger } from 'fastify';
import { escapeHtml, headerSafe, type AlertMessage, type Mailer } from './email.js';

export function resetEmail(link: string, minutes: number): AlertMessage {
  const text = [
    'Someone (we hope you) asked to reset the password of your Loglane account.',
    '',
    `Choose a new password here within ${minutes} minutes; the link works once:`,
    link,
    '',
    'If you did not ask for this, ignore this mail: your password stays as it is.',
  ].join('\n');
  const html = `<!doctype html><html><body style="font-family:system-ui,sans-serif">
<p>Someone (we hope you) asked to reset the password of your Loglane account.</p>
<p><a href="${escapeHtml(link)}">Choose a new password</a> within ${minutes} minutes; the link works once.</p>
<p>If you did not ask for this, ignore this mail: your password stays as it is.</p>
</body></html>`;
  return { subject: 'Reset your Loglane password', text, html };
}

export function invitationEmail(input: { projectName: string; inviterEmail: string; role: string; link: string; days: number }): AlertMessage {
  const project = headerSafe(input.projectName, 100);
  const text = [
    `${input.inviterEmail} invited you to the project "${project}" on Loglane, as ${input.role === 'admin' ? 'an admin' : 'a member'}.`,
    '',
    `Accept within ${input.days} days (sign in or sign up with this email address first):`,
    input.link,
  ].join('\n');
  const html = `<!doctype html><html><body style="font-family:system-ui,sans-serif">
<p>${escapeHtml(input.inviterEmail)} invited you to the project <b>${escapeHtml(project)}</b> on Loglane, as ${input.role === 'admin' ? 'an admin' : 'a member'}.</p>
<p><a href="${escapeHtml(input.link)}">Accept the invitation</a> within ${input.days} days (sign in or sign up with this email address first).</p>
</body></html>`;
  return { subject: headerSafe(`You are invited to ${project} on Loglane`, 180), text, html };
}

/**
 * Sends after the answer, so its time tells nothing (a reset of an unknown email answers as fast);
 * a failure is logged without the message, whose link is a secret.
 */
export function sendLater(mailer: Mailer | undefined, log: FastifyBaseLogger, to: string, message: AlertMessage, what: string): void {
  if (!mailer) {
    log.warn(`SMTP_URL is not set: the ${what} mail was not sent`);
    return;
  }
  setImmediate(() => {
    mailer.send(to, message).catch((err: unknown) => log.warn({ err: { message: (err as Error).message } }, `the ${what} mail could not be sent`));
  });
}
