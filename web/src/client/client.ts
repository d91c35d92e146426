// The app's engine, under the screens: the store, the event loop feeding it, the current narrow (from
// the address bar), fetching message lists and topics, sending with local echo, marking read and typing
// notifications. Screens read `client.store.state` and `client.ui` and call these methods; they never
// call the API themselves.
import { api, ApiError } from '../api/http';
import { HOME, narrowAnchor, narrowHash, narrowKey, narrowTerms, parseHash, sameNarrow, type Narrow } from '../state/narrow';
import { addFetched, applyEvent, expireTyping, type LocalEcho, narrowContext, type State, stateFromRegister, Store } from '../state/store';
import { markRead } from '../state/unread';
import type { Message, RegisterResponse, ServerEvent } from '../state/wire';
import { type Connection, EventLoop } from './event-loop';
import { ReadQueue } from './read-queue';
import { TypingSender, type TypingTo } from './typing-sender';

/** How many messages a page of the message list asks for. */
export const PAGE_SIZE = 50;
/** How long a sent message's event may take before the message is fetched instead. */
const ECHO_EVENT_WAIT_MS = 3000;

export interface UiState {
  narrow: Narrow;
  /** The address named a narrow that could not be read (the home view is shown instead). */
  badAddress: boolean;
  connection: Connection;
  /** Set when the very first registration failed: the app has nothing to show yet. */
  bootError: string | null;
  sidebarOpen: boolean;
  /** Per list key: a fetch under way. */
  fetching: Map<string, 'initial' | 'older' | 'newer'>;
  /** Per list key: why the last fetch failed. */
  fetchErrors: Map<string, string>;
}

export type SendOutcome = { ok: true } | { ok: false; refused: true; message: string } | { ok: false; refused: false };

interface MessagesPage {
  messages: Message[];
  found_oldest: boolean;
  found_newest: boolean;
  found_anchor: boolean;
}

export class Client {
  store: Store | null = null;
  ui: UiState = {
    narrow: HOME,
    badAddress: false,
    connection: { state: 'connected' },
    bootError: null,
    sidebarOpen: false,
    fetching: new Map(),
    fetchErrors: new Map(),
  };
  /** Bumped on every change of the store or the UI state. */
  version = 0;
  private listeners = new Set<() => void>();
  private loop: EventLoop;
  private reads: ReadQueue;
  readonly typing: TypingSender;
  private typingTimer: ReturnType<typeof setTimeout> | null = null;
  private echoCount = 0;
  /** Incremented at each registration: answers to requests made before it are dropped. */
  private generation = 0;

  constructor() {
    this.loop = new EventLoop({
      registered: (r, first) => this.registered(r, first),
      events: (events) => this.applyEvents(events),
      connection: (c) => {
        this.ui.connection = c;
        if (this.ui.bootError !== null && c.state === 'retrying') this.ui.bootError = c.message;
        if (!this.store && c.state === 'retrying') this.ui.bootError = c.message;
        this.notify();
      },
    });
    this.reads = new ReadQueue((ids) => this.store?.update((s) => markRead(s.unread, ids)));
    this.typing = new TypingSender(
      () => this.store?.state.realm.typingStartedWaitMs ?? 10_000,
      () => this.store?.state.realm.typingStoppedWaitMs ?? 5_000,
    );
  }

  subscribe(fn: () => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  private notify(): void {
    this.version++;
    for (const fn of this.listeners) fn();
  }

  get state(): State {
    if (!this.store) throw new Error('not registered yet');
    return this.store.state;
  }

  /** Starts the event loop and follows the address bar. */
  start(): void {
    window.addEventListener('hashchange', () => this.followAddress());
    window.addEventListener('online', () => this.loop.retryNow());
    window.addEventListener('pagehide', (e) => {
      if (!e.persisted) this.loop.release();
    });
    void this.loop.run();
  }

  retryNow(): void {
    this.loop.retryNow();
  }

  // --- registration and events ------------------------------------------------------------------------

  private registered(r: RegisterResponse, first: boolean): void {
    this.generation++;
    const state = stateFromRegister(r);
    if (first || !this.store) {
      this.store = new Store(state);
      this.store.subscribe(() => this.notify());
      this.ui.bootError = null;
      this.followAddress();
      return;
    }
    // A new queue (the old one expired, or the server restarted): everything is loaded again; echoes
    // the server already has are dropped (their messages come with the lists).
    state.outbox = this.store.state.outbox.filter((e) => e.status === 'failed' || !e.serverId);
    this.ui.fetching = new Map();
    this.ui.fetchErrors = new Map();
    this.store.replace(state);
    this.store.state.outbox = state.outbox;
    this.showNarrow(this.ui.narrow);
  }

  private applyEvents(events: ServerEvent[]): void {
    const store = this.store;
    if (!store) return;
    const now = Date.now();
    store.update((s) => {
      for (const e of events) applyEvent(s, e, now);
    });
    // The list on screen may have become stale (a search, a mute change): fetch it again.
    this.showNarrow(this.ui.narrow);
    if (events.some((e) => e.type === 'typing')) this.scheduleTypingExpiry();
  }

  private scheduleTypingExpiry(): void {
    if (this.typingTimer) clearTimeout(this.typingTimer);
    const s = this.store?.state;
    if (!s || !s.typing.size) return;
    let next = Infinity;
    for (const typists of s.typing.values()) for (const until of typists.values()) next = Math.min(next, until);
    this.typingTimer = setTimeout(() => {
      this.typingTimer = null;
      if (this.store && expireTyping(this.store.state, Date.now())) this.store.changed();
      this.scheduleTypingExpiry();
    }, Math.max(0, next - Date.now()) + 10);
  }

  // --- narrows -------------------------------------------------------------------------------------------

  /** The narrow named by the address bar; a malformed one shows home and says so. */
  private followAddress(): void {
    if (!this.store) return;
    const ctx = narrowContext(this.store.state);
    const parsed = parseHash(window.location.hash, ctx);
    this.ui.badAddress = parsed === null;
    const narrow = parsed ?? HOME;
    // Write the canonical form back (old "stream/general" links become "channel/12-general"); message
    // links (near/with) stay as they were shared.
    const canonical = narrowHash(narrow, ctx);
    const messageLink = /\/(near|with)\/\d+$/.test(window.location.hash);
    if (parsed && window.location.hash && !messageLink && window.location.hash !== canonical) history.replaceState(null, '', canonical);
    if (!sameNarrow(narrow, this.ui.narrow)) this.typing.stop();
    this.ui.narrow = narrow;
    this.ui.sidebarOpen = false;
    this.showNarrow(narrow);
    this.notify();
  }

  /** Opens a narrow: the address bar changes, and the hashchange handler does the rest. */
  navigate(narrow: Narrow): void {
    const hash = narrowHash(narrow, narrowContext(this.state));
    if (window.location.hash === hash) this.followAddress();
    else window.location.hash = hash;
  }

  setSidebarOpen(open: boolean): void {
    this.ui.sidebarOpen = open;
    this.notify();
  }

  /** Makes sure the narrow's list and (for a channel) its topics are loaded. */
  private showNarrow(narrow: Narrow): void {
    const s = this.store?.state;
    if (!s) return;
    const key = narrowKey(narrow);
    const list = s.lists.get(key);
    if ((!list || list.stale) && !this.ui.fetching.has(key)) void this.fetch(narrow, 'initial');
    if (narrow.kind === 'channel' && !s.topics.has(narrow.streamId)) void this.fetchTopics(narrow.streamId);
  }

  /** Fetches a page of the narrow's messages: around the first unread (or the linked message), or older/newer. */
  async fetch(narrow: Narrow, direction: 'initial' | 'older' | 'newer'): Promise<void> {
    const store = this.store;
    if (!store) return;
    const key = narrowKey(narrow);
    if (this.ui.fetching.has(key)) return;
    const list = store.state.lists.get(key);
    let params: Record<string, unknown>;
    if (direction === 'initial') {
      const near = narrowAnchor(narrow);
      params = { anchor: near ?? 'first_unread', num_before: PAGE_SIZE, num_after: PAGE_SIZE };
    } else {
      if (!list || !list.ids.length) return;
      if (direction === 'older' ? list.foundOldest : list.foundNewest) return;
      const anchor = direction === 'older' ? list.ids[0] : list.ids[list.ids.length - 1];
      params = { anchor, include_anchor: false, num_before: direction === 'older' ? PAGE_SIZE : 0, num_after: direction === 'newer' ? PAGE_SIZE : 0 };
    }
    const generation = this.generation;
    this.ui.fetching.set(key, direction);
    this.ui.fetchErrors.delete(key);
    this.notify();
    try {
      const page = await api<MessagesPage>('GET', 'messages', {
        ...params,
        narrow: narrowTerms(narrow),
        apply_markdown: true,
        client_gravatar: false,
        // As registered (empty_topic_name): the empty topic is "", not the display name.
        allow_empty_topic_name: true,
      });
      if (generation !== this.generation || !this.store) return;
      this.store.update((s) => addFetched(s, key, narrow, page, direction));
    } catch (err) {
      if (generation !== this.generation) return;
      this.ui.fetchErrors.set(key, err instanceof Error ? err.message : 'Could not load messages.');
    } finally {
      if (generation === this.generation) this.ui.fetching.delete(key);
      this.notify();
    }
  }

  async fetchTopics(streamId: number): Promise<void> {
    const generation = this.generation;
    try {
      const r = await api<{ topics: { name: string; max_id: number }[] }>('GET', `users/me/${streamId}/topics`, { allow_empty_topic_name: true });
      if (generation !== this.generation || !this.store) return;
      this.store.update((s) => {
        const topics = new Map<string, { name: string; maxId: number }>();
        for (const t of r.topics) topics.set(t.name.toLowerCase(), { name: t.name, maxId: t.max_id });
        s.topics.set(streamId, topics);
      });
    } catch {
      // The sidebar shows the channel without topics; opening it again retries.
    }
  }

  // --- reading -------------------------------------------------------------------------------------------

  /** Messages the person has seen on screen. */
  markSeen(ids: number[]): void {
    const s = this.store?.state;
    if (!s) return;
    const unread = ids.filter((id) => s.unread.stream.has(id) || s.unread.dm.has(id));
    if (unread.length) this.reads.add(unread);
  }

  // --- sending -------------------------------------------------------------------------------------------

  /** Sends a message with local echo; the compose box learns whether to keep its text. */
  async send(to: TypingTo, content: string): Promise<SendOutcome> {
    const store = this.store;
    if (!store) return { ok: false, refused: true, message: 'Not connected yet.' };
    this.typing.stop();
    // Zulip's local ids: the newest message id plus 0.01, 0.02, ...
    this.echoCount++;
    const echo: LocalEcho = {
      localId: (store.state.maxMessageId + this.echoCount / 100).toFixed(2),
      to,
      content,
      timestamp: Math.floor(Date.now() / 1000),
      status: 'sending',
    };
    store.update((s) => {
      s.outbox = [...s.outbox, echo];
    });
    return this.transmit(echo);
  }

  /** Sends a failed message again. */
  retry(localId: string): void {
    const echo = this.store?.state.outbox.find((e) => e.localId === localId);
    if (!echo) return;
    const again: LocalEcho = { ...echo, status: 'sending', error: undefined };
    this.replaceEcho(again);
    void this.transmit(again);
  }

  /** Gives up on a failed message. */
  cancel(localId: string): void {
    this.store?.update((s) => {
      s.outbox = s.outbox.filter((e) => e.localId !== localId);
    });
  }

  private replaceEcho(echo: LocalEcho): boolean {
    const store = this.store;
    if (!store || !store.state.outbox.some((e) => e.localId === echo.localId)) return false;
    store.update((s) => {
      s.outbox = s.outbox.map((e) => (e.localId === echo.localId ? echo : e));
    });
    return true;
  }

  /** A sent message whose event has not come: its echo is replaced by the message fetched from the server. */
  private async settleEcho(localId: string, id: number): Promise<void> {
    if (!this.store?.state.outbox.some((e) => e.localId === localId)) return;
    try {
      const r = await api<{ message: Message }>('GET', `messages/${id}`, { apply_markdown: true, allow_empty_topic_name: true });
      // As its event would have: the same reducer, so a late event changes nothing more.
      this.store?.update((s) => applyEvent(s, { id: -1, type: 'message', message: r.message, flags: r.message.flags ?? [], local_message_id: localId }, Date.now()));
    } catch {
      this.cancel(localId); // gone already (deleted): nothing to show
    }
  }

  private async transmit(echo: LocalEcho): Promise<SendOutcome> {
    const to = echo.to;
    const params =
      to.type === 'stream'
        ? { type: 'stream', to: to.streamId, topic: to.topic, content: echo.content }
        : { type: 'direct', to: to.userIds, content: echo.content };
    try {
      const r = await api<{ id: number }>('POST', 'messages', {
        ...params,
        queue_id: this.loop.queue ?? undefined,
        local_id: echo.localId,
        read_by_sender: true,
      });
      // The message event may already have replaced the echo; if not, it should soon. If it does not
      // (it went to a queue that was being replaced), the message is fetched instead (as Zulip's web
      // app restarts its event loop when an acknowledged send has no event within 5 s).
      const store = this.store;
      if (store?.state.messages.has(r.id)) this.cancel(echo.localId);
      else {
        this.replaceEcho({ ...echo, serverId: r.id });
        setTimeout(() => void this.settleEcho(echo.localId, r.id), ECHO_EVENT_WAIT_MS);
      }
      return { ok: true };
    } catch (err) {
      if (err instanceof ApiError && err.status < 500) {
        // Refused (no permission, too long, unknown recipient): the text goes back to the compose box.
        this.cancel(echo.localId);
        return { ok: false, refused: true, message: err.message };
      }
      this.replaceEcho({ ...echo, status: 'failed', error: err instanceof Error ? err.message : 'Not sent.' });
      return { ok: false, refused: false };
    }
  }
}
