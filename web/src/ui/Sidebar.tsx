// The left sidebar: the views (all messages, mentions, starred), the subscribed channels with the open
// channel's topics, and the direct-message conversations, each with its unread count. Every entry is a
// real link to its narrow's address, so it can be opened in a new tab, shared, and reached by keyboard.
import { useState } from 'preact/hooks';
import { channelSlug, dmSlug, encodeHashComponent, HOME, narrowHash, sameTopic, type Narrow } from '../state/narrow';
import { channelSections, dmItems, topicItems } from '../state/sidebar';
import { narrowContext, type State } from '../state/store';
import type { UnreadCounts } from '../state/unread';
import type { Subscription } from '../state/wire';
import { HashIcon, LockIcon, PeopleIcon, PersonIcon } from './icons';
import { useClient } from './use-client';

/** An unread count: read out as "general 3 unread" (the words around the number are for screen readers). */
export function Count({ n, muted = false, label = 'unread' }: { n: number; muted?: boolean; label?: string }) {
  return n > 0 ? (
    <span class={`count${muted ? ' count-muted' : ''}`}>
      <span class="sr-only"> </span>
      {n}
      <span class="sr-only"> {label}</span>
    </span>
  ) : null;
}

const channelHref = (s: State, id: number) => `#narrow/channel/${channelSlug(id, s.streams.get(id)?.name)}`;
const topicHref = (s: State, id: number, topic: string) => `${channelHref(s, id)}/topic/${encodeHashComponent(topic)}`;

function Topics({ s, sub, counts, narrow }: { s: State; sub: Subscription; counts: UnreadCounts; narrow: Narrow }) {
  const [all, setAll] = useState(false);
  const open = narrow.kind === 'channel' && narrow.streamId === sub.stream_id ? narrow.topic : undefined;
  const { topics, more, hidden } = topicItems(s, sub.stream_id, counts, open, all);
  if (!topics.length && !hidden) return null;
  return (
    <ul class="topics" aria-label={`Topics in ${sub.name}`}>
      {topics.map((t) => {
        const current = open !== undefined && sameTopic(open, t.name);
        return (
          <li key={t.name.toLowerCase()} class={t.muted ? 'muted' : ''}>
            <a href={topicHref(s, sub.stream_id, t.name)} aria-current={current ? 'page' : undefined}>
              <span class="name">{t.name === '' ? <em>{s.realm.emptyTopicName}</em> : t.name}</span>
              <Count n={t.unread} muted={t.muted} />
            </a>
          </li>
        );
      })}
      {hidden > 0 || all ? (
        <li>
          <button type="button" class="link-button" onClick={() => setAll(!all)} aria-expanded={all}>
            {all ? 'Fewer topics' : 'More topics'}
            <Count n={more} muted />
          </button>
        </li>
      ) : null}
    </ul>
  );
}

export function Sidebar({ counts }: { counts: UnreadCounts }) {
  const client = useClient();
  const s = client.state;
  const narrow = client.ui.narrow;
  const ctx = narrowContext(s);
  const current = (n: Narrow) => (narrowHash(n, ctx) === narrowHash(narrow, ctx) ? 'page' : undefined);
  const openStream = narrow.kind === 'channel' ? narrow.streamId : null;
  const dms = dmItems(s, counts);
  return (
    <aside class="sidebar" id="sidebar">
      <nav aria-label="Views">
        <ul class="views">
          {(
            [
              [HOME, 'All messages', counts.home, 'unread'],
              [{ kind: 'mentioned' }, 'Mentions', counts.mentions, 'unread'],
              [{ kind: 'starred' }, 'Starred', s.starred.size, 'starred'],
            ] as const
          ).map(([view, name, n, label]) => (
            <li key={name}>
              <a href={narrowHash(view, ctx)} aria-current={current(view)}>
                <span class="name">{name}</span>
                <Count n={n} muted={label === 'starred'} label={label} />
              </a>
            </li>
          ))}
        </ul>
      </nav>
      <nav aria-label="Channels">
        {channelSections(s).map((section) => (
          <div key={section.id} class="section">
            <h2>{section.title}</h2>
            {section.channels.length === 0 ? <p class="empty">You are not subscribed to any channel.</p> : null}
            <ul class="channels">
              {section.channels.map((sub) => {
                const isOpen = openStream === sub.stream_id;
                return (
                  <li key={sub.stream_id} class={sub.is_muted ? 'muted' : ''}>
                    <a
                      href={channelHref(s, sub.stream_id)}
                      aria-current={isOpen && narrow.kind === 'channel' && narrow.topic === undefined ? 'page' : undefined}
                      style={{ '--channel-color': sub.color }}
                    >
                      <span class="channel-icon">{sub.invite_only ? <LockIcon /> : <HashIcon />}</span>
                      <span class="name">{sub.name}</span>
                      <Count n={counts.byStream.get(sub.stream_id) ?? 0} muted={sub.is_muted} />
                    </a>
                    {isOpen ? <Topics s={s} sub={sub} counts={counts} narrow={narrow} /> : null}
                  </li>
                );
              })}
            </ul>
          </div>
        ))}
      </nav>
      <nav aria-label="Direct messages">
        <div class="section">
          <h2>Direct messages</h2>
          {dms.length === 0 ? <p class="empty">No direct messages yet.</p> : null}
          <ul class="dms">
            {dms.map((d) => (
              <li key={d.key}>
                <a href={`#narrow/dm/${dmSlug(d.userIds, ctx.userName)}`} aria-current={current({ kind: 'dm', userIds: d.userIds })}>
                  <span class="channel-icon">{d.group ? <PeopleIcon /> : <PersonIcon />}</span>
                  <span class="name">{d.label}</span>
                  <Count n={d.unread} />
                </a>
              </li>
            ))}
          </ul>
        </div>
      </nav>
    </aside>
  );
}
