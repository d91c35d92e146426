// `parley zuliprc --data-dir DIR --email EMAIL [--site URL]`: prints the zuliprc the Zulip clients
// (python-zulip-api, zulip-js, zulip-terminal) read: [api] email, key and site.
import type { App } from '../app';
import { boundUrl, DEFAULT_PORT } from '../config';
import { findRealm } from '../lib/realm';
import { findUserByDeliveryEmail, findUserByEmail, isSystemBot } from '../lib/users';

/** Writes the zuliprc of the user named by --email to stdout; closes `app`. Resolves to the exit code. */
export function zuliprc(app: App, values: Record<string, string | boolean | undefined>): number {
  try {
    const email = values.email;
    if (typeof email !== 'string' || email === '') {
      process.stderr.write('parley: --email is required\nusage: parley zuliprc --data-dir DIR --email EMAIL [--site URL]\n');
      return 2;
    }
    const realm = findRealm(app.db);
    // By the login address (what Basic credentials name), or by the API email a client shows.
    const user = realm ? (findUserByDeliveryEmail(app.db, realm.id, email) ?? findUserByEmail(app.db, realm.id, email)) : null;
    // A system bot's key is never handed out (it authenticates nothing anyway): answered as unknown.
    if (!user || !user.is_active || isSystemBot(user)) {
      process.stderr.write(`parley: no active user ${email}\n`);
      return 1;
    }
    const site =
      typeof values.site === 'string'
        ? values.site.replace(/\/+$/, '')
        : (app.config.externalUrl ?? boundUrl(app.config, app.config.port || DEFAULT_PORT));
    // The real address: a hidden one's API email is a placeholder that authenticates nothing.
    process.stdout.write(`[api]\nemail=${user.delivery_email}\nkey=${user.api_key}\nsite=${site}\n`);
    return 0;
  } finally {
    app.close();
  }
}
