/** Web Push in this browser: a service worker, the server's VAPID key, and a subscription the API stores. */

export function pushSupported(): boolean {
  return typeof window !== 'undefined' && 'serviceWorker' in navigator && 'PushManager' in window && 'Notification' in window;
}

/** The URL-safe base64 VAPID key as the bytes `applicationServerKey` takes. */
export function decodeVapidKey(key: string): Uint8Array<ArrayBuffer> {
  const b64 = key.replace(/-/g, '+').replace(/_/g, '/').padEnd(Math.ceil(key.length / 4) * 4, '=');
  const raw = atob(b64);
  const out = new Uint8Array(new ArrayBuffer(raw.length));
  for (let i = 0; i < raw.length; i++) out[i] = raw.charCodeAt(i);
  return out;
}

export async function currentSubscription(): Promise<PushSubscription | null> {
  if (!pushSupported()) return null;
  const reg = await navigator.serviceWorker.getRegistration('/');
  return (await reg?.pushManager.getSubscription()) ?? null;
}

/**
 * Asks for permission, registers the service worker and subscribes with the server's key.
 * Throws with a sentence for the person when any step is refused.
 */
export async function subscribe(publicKey: string): Promise<PushSubscriptionJSON> {
  if (!pushSupported()) throw new Error('This browser does not support push notifications.');
  const permission = await Notification.requestPermission();
  if (permission !== 'granted') throw new Error('Notifications are blocked for this site. Allow them in the browser’s site settings, then try again.');
  const reg = await navigator.serviceWorker.register('/sw.js', { scope: '/' });
  await navigator.serviceWorker.ready;
  try {
    const sub = await reg.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: decodeVapidKey(publicKey) });
    return sub.toJSON();
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    throw new Error(`The browser's push service refused the subscription (${reason}). Push needs the browser to reach its vendor's push service.`);
  }
}
