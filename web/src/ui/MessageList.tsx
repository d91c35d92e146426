// The message list of the open narrow: recipient headers and date dividers, messages, local echoes at the
// bottom; scrolling up fetches older messages (keeping what is on screen in place), down fetches newer;
// it opens at the linked message or the first unread one, follows new messages while at the bottom, and
// reports unread messages whose bottom edge has been on screen (marking them read).
import { Component, type RefObject, createRef } from 'preact';
import type { Client } from '../client/client';
import { channelSlug, dmParticipants, dmSlug, dmTitle, encodeHashComponent, isolateName, narrowAnchor, narrowKey, type Narrow } from '../state/narrow';
import { isMuted, type LocalEcho, narrowContext, typingKey } from '../state/store';
import type { Message } from '../state/wire';
import { buildGroups, type Group } from './groups';
import { formatDay, formatFull, formatTime } from './format';
import { api } from '../api/http';
import { MessageView } from './MessageView';
import { inAppHash } from './rendered';

interface Props {
  client: Client;
  narrow: Narrow;
  version: number;
}

interface Snapshot {
  scrollHeight: number;
  scrollTop: number;
  firstId: number | undefined;
  atBottom: boolean;
  /** The first message on screen and where its text was (px from the list's top edge). */
  anchor: { id: string; offset: number } | null;
}

/** The text of the first message on screen: what the eye is on, kept in place when older ones arrive. */
function firstVisible(el: HTMLElement): { id: string; offset: number } | null {
  const top = el.getBoundingClientRect().top;
  for (const row of el.querySelectorAll<HTMLElement>('article[data-id]')) {
    const content = row.querySelector<HTMLElement>('.content') ?? row;
    const r = content.getBoundingClientRect();
    if (r.bottom > top) return { id: row.dataset.id as string, offset: r.top - top };
  }
  return null;
}

/** Distance (px) from an end of the list at which the next page is fetched. */
const FETCH_MARGIN = 600;
/** Narrows where seeing a message marks it read (Zulip's can_mark_messages_read: not searches, starred or mentions). */
const readsOnSight = (n: Narrow) => n.kind === 'home' || n.kind === 'channel' || n.kind === 'dm';

function echoMatches(e: LocalEcho, n: Narrow): boolean {
  if (n.kind === 'home') return true;
  if (n.kind === 'channel') return e.to.type === 'stream' && e.to.streamId === n.streamId && (n.topic === undefined || n.topic.toLowerCase() === e.to.topic.toLowerCase());
  if (n.kind === 'dm') return e.to.type === 'private' && e.to.userIds.join(',') === [...n.userIds].sort((a, b) => a - b).join(',');
  return false;
}

export class MessageList extends Component<Props> {
  private scroller: RefObject<HTMLElement | null> = createRef();
  private positioned = false;
  private scrollQueued = false;
  private readTimer: ReturnType<typeof setTimeout> | null = null;
  /** The first message id on screen after the last render (the store has moved on when the next one starts). */
  private shownFirstId: number | undefined;

  override componentDidMount(): void {
    window.addEventListener('focus', this.checkRead);
    document.addEventListener('visibilitychange', this.checkRead);
    this.afterRender(null);
  }

  override componentWillUnmount(): void {
    window.removeEventListener('focus', this.checkRead);
    document.removeEventListener('visibilitychange', this.checkRead);
    if (this.readTimer) clearTimeout(this.readTimer);
  }

  override getSnapshotBeforeUpdate(): Snapshot | null {
    const el = this.scroller.current;
    if (!el) return null;
    // The store already holds what this update draws: only when older messages are about to appear
    // above is the first message on screen looked for (measuring it forces a layout).
    const first = this.list()?.ids[0];
    const prepending = this.shownFirstId !== undefined && first !== undefined && first < this.shownFirstId;
    return {
      scrollHeight: el.scrollHeight,
      scrollTop: el.scrollTop,
      firstId: this.shownFirstId,
      atBottom: el.scrollHeight - el.scrollTop - el.clientHeight < 40,
      anchor: prepending ? firstVisible(el) : null,
    };
  }

  override componentDidUpdate(_prev: Props, _state: unknown, snap: Snapshot | null): void {
    this.afterRender(snap);
  }

  private list() {
    return this.props.client.state.lists.get(narrowKey(this.props.narrow));
  }

  /** Scroll position after a render: open at the right message, keep the view still when older ones arrive. */
  private afterRender(snap: Snapshot | null): void {
    const el = this.scroller.current;
    const list = this.list();
    this.shownFirstId = list?.ids[0];
    if (!el || !list || !list.ids.length) {
      if (el && list) this.positioned = true;
      return;
    }
    if (!this.positioned) {
      this.positioned = true;
      const s = this.props.client.state;
      const target = narrowAnchor(this.props.narrow) ?? list.ids.find((id) => s.unread.stream.has(id) || s.unread.dm.has(id));
      const row = target !== undefined ? el.querySelector<HTMLElement>(`[data-id="${target}"]`) : null;
      if (row && target !== list.ids[0]) {
        el.scrollTop = Math.max(0, row.offsetTop - el.clientHeight / 3);
        row.classList.add('target');
      } else if (!row) el.scrollTop = el.scrollHeight;
    } else if (snap) {
      if (snap.firstId !== undefined && list.ids[0] < snap.firstId) {
        // Older messages came in above: keep what the person was reading where it was (its header and
        // sender line may be gone now that it is inside a longer group, so its text is what stays put).
        const row = snap.anchor ? el.querySelector<HTMLElement>(`article[data-id="${snap.anchor.id}"]`) : null;
        if (row && snap.anchor) {
          const r = (row.querySelector<HTMLElement>('.content') ?? row).getBoundingClientRect();
          el.scrollTop += r.top - el.getBoundingClientRect().top - snap.anchor.offset;
        } else el.scrollTop = el.scrollHeight - (snap.scrollHeight - snap.scrollTop);
      } else if (snap.atBottom) el.scrollTop = el.scrollHeight;
    }
    this.maybeFetch();
    this.checkRead();
  }

  private onScroll = () => {
    if (this.scrollQueued) return;
    this.scrollQueued = true;
    requestAnimationFrame(() => {
      this.scrollQueued = false;
      this.maybeFetch();
      if (this.readTimer) clearTimeout(this.readTimer);
      this.readTimer = setTimeout(this.checkRead, 100);
    });
  };

  private maybeFetch(): void {
    const el = this.scroller.current;
    const list = this.list();
    if (!el || !list || !list.ids.length) return;
    const { client, narrow } = this.props;
    if (!list.foundOldest && el.scrollTop < FETCH_MARGIN) void client.fetch(narrow, 'older');
    else if (!list.foundNewest && el.scrollHeight - el.scrollTop - el.clientHeight < FETCH_MARGIN) void client.fetch(narrow, 'newer');
  }

  /** Unread messages whose bottom edge is on screen, while the window is seen. */
  private checkRead = () => {
    const el = this.scroller.current;
    if (!el || !readsOnSight(this.props.narrow)) return;
    if (document.visibilityState !== 'visible' || !document.hasFocus()) return;
    const box = el.getBoundingClientRect();
    const seen: number[] = [];
    for (const row of el.querySelectorAll<HTMLElement>('article[data-unread]')) {
      const r = row.getBoundingClientRect();
      if (r.bottom <= box.bottom + 2 && r.bottom > box.top) seen.push(Number(row.dataset.id));
    }
    if (seen.length) this.props.client.markSeen(seen);
  };

  /** Narrow links inside messages (and in headers) open in the app instead of reloading the page. */
  private onClick = (e: MouseEvent) => {
    if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    const a = (e.target as Element).closest?.('a');
    if (!a) return;
    const hash = inAppHash(a as HTMLAnchorElement);
    if (hash === null) return;
    e.preventDefault();
    window.location.hash = hash;
  };

  private star = (id: number, starred: boolean) => {
    api('POST', 'messages/flags', { messages: [id], op: starred ? 'add' : 'remove', flag: 'starred' }).catch(() => undefined);
  };

  private header(g: Group) {
    const s = this.props.client.state;
    const m = g.first;
    const date = g.showDate ? <span class="header-date">{formatDay(m.timestamp)}</span> : null;
    if (m.type === 'stream') {
      const id = m.stream_id as number;
      const st = s.streams.get(id);
      const name = st?.name ?? (typeof m.display_recipient === 'string' ? m.display_recipient : 'Unknown channel');
      const channelHref = `#narrow/channel/${channelSlug(id, st?.name)}`;
      const muted = isMuted(s, id, m.subject);
      return (
        <header class={`recipient${muted ? ' muted' : ''}`} style={{ '--channel-color': s.subs.get(id)?.color ?? '#9aa5b1' }}>
          <a class="recipient-channel" href={channelHref}>
            #{name}
          </a>
          <span class="recipient-sep" aria-hidden="true">
            ›
          </span>
          <a class="recipient-topic" href={`${channelHref}/topic/${encodeHashComponent(m.subject)}`}>
            {m.subject === '' ? <em>{s.realm.emptyTopicName}</em> : m.subject}
          </a>
          {date}
        </header>
      );
    }
    const ids = dmParticipants(m, s.myId);
    const ctx = narrowContext(s);
    return (
      <header class="recipient dm">
        <a href={`#narrow/dm/${dmSlug(ids, ctx.userName)}`}>
          {ids.length === 1 && ids[0] === s.myId ? 'You (notes to self)' : `You and ${dmTitle(ids, ctx)}`}
        </a>
        {date}
      </header>
    );
  }

  private echo(e: LocalEcho) {
    const { client } = this.props;
    const s = client.state;
    const me = s.users.get(s.myId);
    return (
      <article key={e.localId} class={`message with-sender local-echo ${e.status}`} aria-label={`${me?.full_name ?? 'You'}, ${e.status === 'failed' ? 'not sent' : 'sending'}`}>
        <div class="gutter" />
        <div class="body">
          <div class="sender-line">
            <span class="sender">{me?.full_name ?? 'You'}</span>
            <time dateTime={new Date(e.timestamp * 1000).toISOString()}>{formatTime(e.timestamp, s.settings.twenty_four_hour_time)}</time>
          </div>
          <div class="content plain">{e.content}</div>
          {e.status === 'failed' ? (
            <div class="send-failed" role="alert">
              <span>Not sent: {e.error}</span>
              <button type="button" onClick={() => client.retry(e.localId)}>
                Retry
              </button>
              <button type="button" class="secondary" onClick={() => client.cancel(e.localId)}>
                Cancel
              </button>
            </div>
          ) : (
            <div class="sending">Sending…</div>
          )}
        </div>
      </article>
    );
  }

  override render({ client, narrow }: Props) {
    const s = client.state;
    const key = narrowKey(narrow);
    const list = s.lists.get(key);
    const fetching = client.ui.fetching.get(key);
    const error = client.ui.fetchErrors.get(key);
    const messages = (list?.ids ?? []).map((id) => s.messages.get(id)).filter((m): m is Message => m !== undefined);
    const groups = buildGroups(messages, s.myId);
    const echoes = s.outbox.filter((e) => echoMatches(e, narrow));
    const twentyFour = s.settings.twenty_four_hour_time;
    let body;
    if (!list && error) {
      body = (
        <div class="list-status" role="alert">
          <p>Could not load messages: {error}</p>
          <button type="button" onClick={() => void client.fetch(narrow, 'initial')}>
            Try again
          </button>
        </div>
      );
    } else if (!list) body = <p class="list-status">Loading messages…</p>;
    else {
      body = (
        <>
          {list.foundOldest ? (
            <p class="list-edge">{messages.length ? 'This is the start of the conversation.' : 'No messages here yet.'}</p>
          ) : (
            <p class="list-edge">
              {fetching === 'older' ? 'Loading older messages…' : error ? `Could not load older messages: ${error}` : ''}
              {!fetching ? (
                <button type="button" class="link-button" onClick={() => void client.fetch(narrow, 'older')}>
                  Load older messages
                </button>
              ) : null}
            </p>
          )}
          {groups.map((g) => (
            <div role="group" class="group" key={`${g.key}:${g.first.id}`} aria-label={g.first.type === 'stream' ? `${isolateName(s.streams.get(g.first.stream_id as number)?.name ?? '')} > ${isolateName(g.first.subject)}` : 'Direct messages'}>
              {this.header(g)}
              {g.items.map((item) =>
                item.kind === 'date' ? (
                  <div class="date-divider" key={`d${item.timestamp}`} title={formatFull(item.timestamp)}>
                    <span>{formatDay(item.timestamp)}</span>
                  </div>
                ) : (
                  <MessageView
                    key={item.message.id}
                    message={item.message}
                    sender={s.users.get(item.message.sender_id)}
                    showSender={item.showSender}
                    twentyFour={twentyFour}
                    unread={s.unread.stream.has(item.message.id) || s.unread.dm.has(item.message.id)}
                    starred={s.starred.has(item.message.id)}
                    myId={s.myId}
                    onStar={this.star}
                  />
                ),
              )}
            </div>
          ))}
          {!list.foundNewest ? <p class="list-edge">{fetching === 'newer' ? 'Loading newer messages…' : ''}</p> : null}
          {echoes.length ? <div role="group" class="group outbox" aria-label="Being sent">{echoes.map((e) => this.echo(e))}</div> : null}
        </>
      );
    }
    return (
      <section class="message-list" aria-label="Messages" ref={this.scroller} onScroll={this.onScroll} onClick={this.onClick} tabIndex={0}>
        {body}
      </section>
    );
  }
}

/** "Alice is typing…" for the open conversation (a channel topic or a DM). */
export function typingText(client: Client, narrow: Narrow): string | null {
  const s = client.state;
  let key: string | null = null;
  if (narrow.kind === 'channel' && narrow.topic !== undefined) key = typingKey({ type: 'stream', streamId: narrow.streamId, topic: narrow.topic });
  else if (narrow.kind === 'dm') key = typingKey({ type: 'private', userIds: narrow.userIds });
  const typists = key ? s.typing.get(key) : undefined;
  if (!typists?.size) return null;
  const names = [...typists.keys()].filter((id) => !s.mutedUsers.has(id)).map((id) => isolateName(s.users.get(id)?.full_name ?? 'Someone'));
  if (!names.length) return null;
  if (names.length > 3) return 'Several people are typing…';
  return names.map((n) => `${n} is typing…`).join(' ');
}
