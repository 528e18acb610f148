/**
 * Whether the server may POST to a push endpoint: an absolute URL without credentials whose origin
 * is on the allow-list, either exactly (`https://fcm.googleapis.com`) or by a host pattern
 * (`https://*.push.apple.com` matches any subdomain). Plain http is allowed only when an http
 * origin is listed (tests list their local receiver). Checked at subscribe time and before every send.
 */
export function isAllowedPushEndpoint(endpoint: string, allowed: readonly string[]): boolean {
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    return false;
  }
  if (url.username || url.password) return false;
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return false;
  const host = url.host.toLowerCase();
  return allowed.some((entry) => {
    const m = /^(https?):\/\/(\*\.)?(.+)$/i.exec(entry);
    if (!m || `${m[1]!.toLowerCase()}:` !== url.protocol) return false;
    const pattern = m[3]!.toLowerCase();
    return m[2] ? host.endsWith(`.${pattern}`) : host === pattern;
  });
}
