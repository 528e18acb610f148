/**
 * Email addresses: a plain addr-spec (`local@domain`) and nothing else — no display name
 * (`Name <a@b.example>`), no quoted local part, no group (`g:a@b.example;`), no comment, no list.
 * Anything a mail library could parse into another recipient than the text itself is refused, so
 * the stored address is the one recipient mail can go to.
 *
 * - local part: 1 to 64 characters of letters, digits and ! # $ % & ' * + / = ? ^ _ ` { | } ~ -,
 *   as dot-separated atoms (no leading, trailing or doubled dot): RFC 5322's dot-atom, ASCII only;
 * - domain: two or more labels of letters, digits and hyphens (1 to 63 each, no hyphen first or
 *   last), at most 253 characters, a top label that is not all digits; internationalised domains
 *   are written in their xn-- (punycode) form;
 * - 254 characters at most in all (RFC 5321's path limit less its brackets).
 *
 * Addresses are trimmed and lower-cased before they are checked, stored or compared.
 */
const LOCAL = /^[a-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[a-z0-9!#$%&'*+/=?^_`{|}~-]+)*$/;
const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/** Emails are compared and stored trimmed and lower-cased. */
export function normaliseEmail(email: string): string {
  return email.trim().toLowerCase();
}

/** True when `email`, once normalised, is a plain addr-spec as described above. */
export function isValidEmail(email: string): boolean {
  const e = normaliseEmail(email);
  if (e.length > 254) return false;
  const at = e.indexOf('@');
  if (at <= 0 || at !== e.lastIndexOf('@')) return false;
  const local = e.slice(0, at);
  const domain = e.slice(at + 1);
  if (local.length > 64 || !LOCAL.test(local)) return false;
  if (domain.length > 253) return false;
  const labels = domain.split('.');
  if (labels.length < 2 || !labels.every((l) => LABEL.test(l))) return false;
  return !/^[0-9]+$/.test(labels[labels.length - 1]!);
}
