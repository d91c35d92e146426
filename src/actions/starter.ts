// What a brand-new organization started by `parley serve` begins with, so that the first person to open
// the web app has somewhere to chat (as Zulip's new organizations do): a public "general" channel that
// everyone who joins is added to, the owner in it, and Welcome Bot's greeting in its topic "welcome".
import type { App } from '../app';
import type { UserRow } from '../lib/users';
import { doSendMessage } from './messages';
import { doCreateChannel, doSetDefaultStream } from './streams';
import { doSubscribe } from './subscriptions';
import { welcomeBot } from './system-bots';

const GREETING = [
  '**Welcome to Parley!** :wave:',
  '',
  'This is #**general**: everyone who joins the organization is added to it. Start a topic here, or write to someone directly.',
  '',
  'To bring your team in, create an invitation link (`POST /api/v1/invites/multiuse`, or from a Zulip app) and share it.',
].join('\n');

/** Creates the starter channel for `owner`'s new organization; returns its id. */
export function doCreateStarterChannel(app: App, owner: UserRow): number {
  return app.batch.write(() => {
    const channel = doCreateChannel(app, owner, owner.realm_id, {
      name: 'general',
      description: 'Everyone is added to this channel by default.',
      inviteOnly: false,
    });
    doSubscribe(app, owner, { streams: [{ name: channel.name }], principals: [owner], authorizationErrorsFatal: true, channelSpec: {} });
    doSetDefaultStream(app, owner, channel.id, true);
    // system: Welcome Bot is in none of the organization's groups (a cross-realm bot in Zulip).
    doSendMessage(app, welcomeBot(app, owner.realm_id), { to: { kind: 'channel', streamId: channel.id, topic: 'welcome' }, content: GREETING, system: true });
    return channel.id;
  });
}
