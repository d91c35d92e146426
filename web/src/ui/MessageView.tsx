// One message: the sender's picture and name (where the group shows them), the time, the server's
// rendered HTML, reactions and the star. Re-rendered only when its message object (or a flag shown
// here) changes: the store replaces a message rather than changing it.
import { memo } from './memo';
import { useLayoutEffect, useRef } from 'preact/hooks';
import type { Message, Reaction, User } from '../state/wire';
import { Avatar } from './Avatar';
import { formatFull, formatTime } from './format';
import { StarIcon } from './icons';
import { emojiChar, finishRendered } from './rendered';

interface Props {
  message: Message;
  sender: User | undefined;
  showSender: boolean;
  twentyFour: boolean;
  unread: boolean;
  starred: boolean;
  myId: number;
  onStar(id: number, starred: boolean): void;
}

function reactionGroups(reactions: Reaction[], myId: number) {
  const groups = new Map<string, { emoji: string; name: string; count: number; mine: boolean }>();
  for (const r of reactions) {
    const key = `${r.reaction_type}:${r.emoji_code}`;
    const g = groups.get(key) ?? {
      emoji: r.reaction_type === 'unicode_emoji' ? (emojiChar(`emoji-${r.emoji_code}`) ?? `:${r.emoji_name}:`) : `:${r.emoji_name}:`,
      name: r.emoji_name,
      count: 0,
      mine: false,
    };
    g.count++;
    g.mine ||= r.user_id === myId;
    groups.set(key, g);
  }
  return [...groups.values()];
}

function Content({ html }: { html: string }) {
  const ref = useRef<HTMLDivElement>(null);
  useLayoutEffect(() => {
    if (!ref.current) return;
    // The server's rendering (escaped by construction there; the page's CSP is the second line),
    // finished in an inert template, where nothing loads yet: an image the page would refuse is
    // never requested.
    const template = document.createElement('template');
    template.innerHTML = html;
    finishRendered(template.content);
    ref.current.replaceChildren(template.content);
  }, [html]);
  return <div class="content rendered" ref={ref} />;
}

export const MessageView = memo(function MessageView({ message: m, sender, showSender, twentyFour, unread, starred, myId, onStar }: Props) {
  const name = sender?.full_name ?? m.sender_full_name;
  const time = formatTime(m.timestamp, twentyFour);
  const reactions = reactionGroups(m.reactions, myId);
  return (
    <article class={`message${showSender ? ' with-sender' : ''}${unread ? ' unread' : ''}`} data-id={m.id} data-unread={unread ? 'true' : undefined} aria-label={`${name}, ${time}`}>
      <div class="gutter">
        {showSender ? (
          <Avatar name={name} url={sender?.avatar_url ?? m.avatar_url} userId={m.sender_id} />
        ) : (
          <time class="side-time" dateTime={new Date(m.timestamp * 1000).toISOString()} title={formatFull(m.timestamp)}>
            {time}
          </time>
        )}
      </div>
      <div class="body">
        {showSender ? (
          <div class="sender-line">
            <span class="sender">{name}</span>
            <time dateTime={new Date(m.timestamp * 1000).toISOString()} title={formatFull(m.timestamp)}>
              {time}
            </time>
          </div>
        ) : null}
        <Content html={m.content} />
        {m.last_edit_timestamp ? <span class="edited">(edited)</span> : null}
        {reactions.length ? (
          <ul class="reactions" aria-label="Reactions">
            {reactions.map((r) => (
              <li key={r.name} class={r.mine ? 'mine' : ''} title={`:${r.name}:`}>
                <span class="reaction-emoji">{r.emoji}</span> <span class="reaction-count">{r.count}</span>
              </li>
            ))}
          </ul>
        ) : null}
      </div>
      <button type="button" class={`star${starred ? ' starred' : ''}`} aria-pressed={starred} aria-label={starred ? 'Unstar this message' : 'Star this message'} onClick={() => onStar(m.id, !starred)}>
        <StarIcon filled={starred} />
      </button>
    </article>
  );
});
