// The compose box: where the message goes (a channel and topic, filled in from the open narrow and
// editable, or direct-message recipients), the text, and Send. Enter follows the user's enter_sends
// setting as Zulip's should_enter_send does. Keystrokes send typing notifications. A refused message
// comes back into the box with the server's reason; the text survives reloads and reconnections.
import { useEffect, useRef, useState } from 'preact/hooks';
import type { TypingTo } from '../client/typing-sender';
import { collator, isolateName, narrowKey, type Narrow } from '../state/narrow';
import { channelSections } from '../state/sidebar';
import type { State } from '../state/store';
import { useClient } from './use-client';

type Mode = 'stream' | 'private';

const DRAFT_KEY = 'parley.compose.text';

/** Zulip's should_enter_send: with enter_sends, Enter without modifiers; without it, Ctrl/Cmd/Alt+Enter. */
export function shouldEnterSend(e: { ctrlKey: boolean; metaKey: boolean; altKey: boolean; shiftKey: boolean }, enterSends: boolean): boolean {
  const nonShift = e.ctrlKey || e.metaKey || e.altKey;
  return enterSends ? !(nonShift || e.shiftKey) : nonShift;
}

/** Recipient ids for "Alice Member, bob@example.com": names or emails, case-insensitively. */
export function parseRecipients(text: string, s: State): { ids: number[] } | { error: string } {
  const ids: number[] = [];
  // The isolates namesOf may have put around names with directional formatting are not part of them.
  for (const raw of text.replace(/[\u2068\u2069]/g, '').split(',')) {
    const token = raw.trim().toLowerCase();
    if (!token) continue;
    const users = [...s.users.values()].filter((u) => u.is_active !== false);
    const byEmail = users.find((u) => u.email.toLowerCase() === token);
    const byName = users.filter((u) => u.full_name.toLowerCase() === token);
    const user = byEmail ?? (byName.length === 1 ? byName[0] : undefined);
    if (!user) return { error: byName.length > 1 ? `Several people are called ${raw.trim()}: use their email address.` : `Nobody here is called ${raw.trim()}.` };
    if (!ids.includes(user.user_id)) ids.push(user.user_id);
  }
  if (!ids.length) return { error: 'Choose at least one recipient.' };
  return { ids: ids.sort((a, b) => a - b) };
}

function namesOf(ids: number[], s: State): string {
  return ids
    .filter((id) => ids.length === 1 || id !== s.myId)
    .map((id) => isolateName(s.users.get(id)?.full_name ?? ''))
    .join(', ');
}

function readDraft(): string {
  try {
    return sessionStorage.getItem(DRAFT_KEY) ?? '';
  } catch {
    return '';
  }
}

function saveDraft(text: string): void {
  try {
    if (text) sessionStorage.setItem(DRAFT_KEY, text);
    else sessionStorage.removeItem(DRAFT_KEY);
  } catch {
    // private mode: the draft lives only in the page
  }
}

export function Compose({ narrow }: { narrow: Narrow }) {
  const client = useClient();
  const s = client.state;
  const [mode, setMode] = useState<Mode>('stream');
  const [streamId, setStreamId] = useState<number | null>(null);
  const [topic, setTopic] = useState('');
  const [to, setTo] = useState('');
  const [text, setText] = useState(readDraft);
  const [error, setError] = useState<string | null>(null);
  const textarea = useRef<HTMLTextAreaElement>(null);

  // The recipient follows the open narrow (channel and topic, or the DM's people).
  const key = narrowKey(narrow);
  useEffect(() => {
    if (narrow.kind === 'channel') {
      setMode('stream');
      setStreamId(narrow.streamId);
      setTopic(narrow.topic ?? '');
    } else if (narrow.kind === 'dm') {
      setMode('private');
      setTo(namesOf(narrow.userIds, s));
    }
    setError(null);
  }, [key]);

  const subs = channelSections(s).flatMap((sec) => sec.channels);
  const chosenStream = streamId !== null && s.subs.has(streamId) ? streamId : (subs[0]?.stream_id ?? null);

  /** Where the text would go, or an error saying why it cannot. */
  function recipient(): { to: TypingTo } | { error: string } {
    if (mode === 'stream') {
      if (chosenStream === null) return { error: 'Subscribe to a channel first.' };
      if (topic.length > s.realm.maxTopicLength) return { error: `The topic is too long (at most ${s.realm.maxTopicLength} characters).` };
      return { to: { type: 'stream', streamId: chosenStream, topic: topic.trim() } };
    }
    const r = parseRecipients(to, s);
    return 'error' in r ? r : { to: { type: 'private', userIds: r.ids } };
  }

  function onInput(value: string) {
    setText(value);
    saveDraft(value);
    const r = recipient();
    client.typing.update(value.trim() && 'to' in r ? r.to : null);
  }

  async function submit() {
    const content = text;
    if (!content.trim()) {
      setError('Write a message first.');
      return;
    }
    if (content.length > s.realm.maxMessageLength) {
      setError(`The message is too long (at most ${s.realm.maxMessageLength} characters).`);
      return;
    }
    const r = recipient();
    if ('error' in r) {
      setError(r.error);
      return;
    }
    setError(null);
    setText('');
    saveDraft('');
    const outcome = await client.send(r.to, content);
    if (!outcome.ok && outcome.refused) {
      // Back into the box (before anything typed since), with the server's reason.
      setText((now) => {
        const restored = now ? `${content}\n${now}` : content;
        saveDraft(restored);
        return restored;
      });
      setError(outcome.message);
    }
  }

  function onKeyDown(e: KeyboardEvent) {
    if (e.key !== 'Enter' || e.isComposing) return;
    const enterSends = Boolean(s.settings.enter_sends);
    if (shouldEnterSend(e, enterSends)) {
      e.preventDefault();
      void submit();
    } else if (enterSends && (e.ctrlKey || e.metaKey || e.altKey)) {
      // With Enter sending, the modified Enter is the new line (the browser would insert nothing).
      e.preventDefault();
      const el = e.currentTarget as HTMLTextAreaElement;
      el.setRangeText('\n', el.selectionStart, el.selectionEnd, 'end');
      onInput(el.value);
    }
  }

  const enterSends = Boolean(s.settings.enter_sends);
  const streamName = chosenStream !== null ? s.streams.get(chosenStream)?.name : undefined;
  const placeholder =
    mode === 'stream'
      ? streamName
        ? `Message #${isolateName(streamName)}${topic.trim() ? ` > ${isolateName(topic.trim())}` : ''}`
        : 'Message'
      : to.trim()
        ? `Message ${to.trim()}`
        : 'Message';
  const people = [...s.users.values()].filter((u) => u.is_active !== false && u.user_id !== s.myId).sort((a, b) => collator.compare(a.full_name, b.full_name));

  return (
    <form
      class="compose"
      aria-label="Compose"
      onSubmit={(e) => {
        e.preventDefault();
        void submit();
      }}
    >
      <div class="compose-recipient">
        <div class="mode" role="group" aria-label="Message type">
          <button type="button" aria-pressed={mode === 'stream'} onClick={() => setMode('stream')}>
            Channel
          </button>
          <button type="button" aria-pressed={mode === 'private'} onClick={() => setMode('private')}>
            Direct message
          </button>
        </div>
        {mode === 'stream' ? (
          <>
            <select aria-label="Channel" value={chosenStream ?? ''} onChange={(e) => setStreamId(Number((e.currentTarget as HTMLSelectElement).value))}>
              {subs.map((sub) => (
                <option key={sub.stream_id} value={sub.stream_id}>
                  #{sub.name}
                </option>
              ))}
            </select>
            <span class="recipient-sep" aria-hidden="true">
              ›
            </span>
            <input
              key="topic"
              type="text"
              aria-label="Topic"
              placeholder={s.realm.emptyTopicName}
              maxLength={s.realm.maxTopicLength}
              value={topic}
              onInput={(e) => setTopic((e.currentTarget as HTMLInputElement).value)}
            />
          </>
        ) : (
          <>
            {/* Keyed: a reused topic input would keep its maxlength. */}
            <input
              key="to"
              type="text"
              aria-label="To"
              placeholder="Names or emails, separated by commas"
              list="compose-people"
              autoComplete="off"
              value={to}
              onInput={(e) => setTo((e.currentTarget as HTMLInputElement).value)}
            />
            <datalist id="compose-people">
              {people.map((u) => (
                <option key={u.user_id} value={u.full_name}>
                  {u.email}
                </option>
              ))}
            </datalist>
          </>
        )}
      </div>
      {error ? (
        <p class="compose-error" role="alert">
          {error}
        </p>
      ) : null}
      <div class="compose-row">
        <textarea
          id="compose-message"
          ref={textarea}
          aria-label="Message"
          placeholder={placeholder}
          rows={2}
          value={text}
          onInput={(e) => onInput((e.currentTarget as HTMLTextAreaElement).value)}
          onKeyDown={onKeyDown}
        />
        <button type="submit" class="send">
          Send
        </button>
      </div>
      <p class="compose-hint">{enterSends ? 'Enter sends · Shift+Enter adds a line' : 'Ctrl+Enter sends · Enter adds a line'}</p>
    </form>
  );
}
