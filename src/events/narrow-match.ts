// The narrow of an event queue (POST /register `narrow`): which `message` events the queue receives.
// Zulip evaluates these in memory against each message event (zerver/lib/narrow_predicate.py); only a
// few operators are supported there, and so here: channel (alias stream), topic, exact-topic, sender
// and `is` (dm/private, starred, unread, mentioned/alerted, resolved). Negation is not supported.
import * as v from 'valibot';
import { errors } from '../http/errors';
import { codePoints } from '../http/params';
import { RESOLVED_TOPIC_PREFIX } from '../lib/messages';
import { MAX_NARROW_TERMS } from '../lib/narrow';

export interface NarrowTerm {
  operator: string;
  /** A name or email (string), or an id in the object form (number). */
  operand: string | number;
}

/**
 * What `narrow` may look like on the wire: legacy [operator, operand] pairs or {operator, operand,
 * negated}; at most MAX_NARROW_TERMS of them, as for GET /messages (every message event is checked
 * against every queue's narrow).
 */
export const narrowSchema = v.pipe(
  v.array(
    v.union(
      [
        v.pipe(v.tuple([v.string(), v.union([v.string(), v.number()])]), v.transform(([operator, operand]) => ({ operator, operand, negated: false }))),
        v.object({
          operator: v.string(),
          operand: v.union([v.string(), v.number()]),
          negated: v.optional(v.boolean(), false),
        }),
      ],
      'Invalid {var_name}',
    ),
    '{var_name} is not a list',
  ),
  v.maxLength(MAX_NARROW_TERMS, '{var_name} is too long (limit: {max_length} items)'),
);

/**
 * Longest operand an event queue's narrow keeps, in characters. A queue holds its narrow for its
 * lifetime (a week at most, 50 queues per user): 100 operands of 80,000 characters made each queue
 * hold 9 MB, so a member with a few bots could fill the process's memory. Its operands are channel
 * names and topics (at most 60 characters), addresses (254) and `is` keywords; Zulip has no limit.
 */
export const MAX_EVENT_NARROW_OPERAND_LENGTH = 1000;

const CHANNEL_OPERATORS = ['channel', 'stream'];
const SUPPORTED = [...CHANNEL_OPERATORS, 'topic', 'exact-topic', 'sender', 'is'];
const UNSUPPORTED_IS = ['followed'];

/** Checks a parsed narrow the way Zulip's check_narrow_for_events does; returns plain terms. */
export function checkNarrowForEvents(narrow: readonly { operator: string; operand: string | number; negated?: boolean }[]): NarrowTerm[] {
  const out: NarrowTerm[] = [];
  for (const [i, term] of narrow.entries()) {
    if (typeof term.operand === 'string' && codePoints(term.operand) > MAX_EVENT_NARROW_OPERAND_LENGTH) {
      throw errors.badRequest('{var_name} is too long (limit: {max_length} characters)', {
        var_name: `narrow[${i}].operand`,
        max_length: MAX_EVENT_NARROW_OPERAND_LENGTH,
      });
    }
    if (!SUPPORTED.includes(term.operator)) throw errors.badRequest('Operator {operator} not supported.', { operator: term.operator });
    if (term.operator === 'is' && UNSUPPORTED_IS.includes(String(term.operand))) {
      throw errors.badRequest('Operand {operand} not supported.', { operand: term.operand });
    }
    // zulip-compat: event narrows are "never negated" in Zulip; say so rather than ignore the flag.
    if (term.negated) throw errors.badRequest('Negated narrow terms are not supported for event queues.');
    out.push({ operator: term.operator, operand: term.operand });
  }
  return out;
}

/** A message event payload as the registry sees it (Zulip's message dict). */
export type MessageLike = Record<string, unknown>;

export type NarrowPredicate = (message: MessageLike, flags: readonly string[]) => boolean;

const topicOf = (m: MessageLike): string => String(m.subject ?? m.topic ?? '');

/** Builds the in-memory filter for a queue's narrow (an empty narrow matches everything). */
export function buildNarrowPredicate(narrow: readonly NarrowTerm[]): NarrowPredicate {
  if (narrow.length === 0) return () => true;
  const terms = [...narrow];
  return (m, flags) => terms.every((t) => satisfies(t, m, flags));
}

function satisfies(term: NarrowTerm, m: MessageLike, flags: readonly string[]): boolean {
  const { operator, operand } = term;
  if (CHANNEL_OPERATORS.includes(operator)) {
    if (m.type !== 'stream') return false;
    if (typeof operand === 'number') return m.stream_id === operand;
    return operand.toLowerCase() === String(m.display_recipient).toLowerCase();
  }
  if (operator === 'topic') {
    if (m.type !== 'stream') return false;
    // zulip-compat: a topic term also matches when it is one whitespace-separated word of the topic.
    const topic = topicOf(m).toLowerCase();
    const want = String(operand).toLowerCase();
    return want === topic || topic.split(/\s+/).includes(want);
  }
  if (operator === 'exact-topic') return m.type === 'stream' && topicOf(m) === String(operand);
  if (operator === 'sender') {
    if (typeof operand === 'number') return m.sender_id === operand;
    return operand.toLowerCase() === String(m.sender_email).toLowerCase();
  }
  if (operator === 'is') {
    switch (operand) {
      case 'dm':
      case 'private':
        return m.type === 'private';
      case 'starred':
        return flags.includes('starred');
      case 'unread':
        return !flags.includes('read');
      case 'alerted':
      case 'mentioned':
        return flags.includes('mentioned');
      case 'resolved':
        return m.type === 'stream' && topicOf(m).startsWith(RESOLVED_TOPIC_PREFIX);
      default:
        return true; // Zulip lets other `is` operands through unfiltered
    }
  }
  return true;
}
