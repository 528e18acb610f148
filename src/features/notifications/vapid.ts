import webpush from 'web-push';
import type { Db } from '../../db/types.js';

export interface VapidKeys {
  publicKey: string;
  privateKey: string;
}

/**
 * The VAPID key pair every node signs with: from the settings when given; otherwise generated once
 * and kept in the database (the first node to store one wins, the others read it back).
 */
export async function loadVapidKeys(db: Db, configured: Partial<VapidKeys>): Promise<VapidKeys> {
  if (configured.publicKey && configured.privateKey) return { publicKey: configured.publicKey, privateKey: configured.privateKey };
  const fresh = webpush.generateVAPIDKeys();
  await db.insertInto('settings').values({ key: 'vapid_keys', value: JSON.stringify(fresh) }).onConflict((oc) => oc.column('key').doNothing()).execute();
  const row = await db.selectFrom('settings').select('value').where('key', '=', 'vapid_keys').executeTakeFirstOrThrow();
  return JSON.parse(row.value) as VapidKeys;
}
