// Linkifier patterns are RE2's, as Zulip's are (src/lib/re2.ts): refused with RE2's messages, run in
// time linear in the text (nested quantifiers included), and read with RE2's syntax and meaning.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { compilePattern } from '../../src/lib/linkifiers';
import { renderMarkdown, topicLinks, type Linkifier, type RenderContext } from '../../src/lib/markdown';

function context(linkifiers: Linkifier[]): RenderContext {
  return { userByName: () => null, userById: () => null, groupByName: () => null, streamByName: () => null, linkifiers };
}
const html = (input: string, linkifiers: Linkifier[]): string => renderMarkdown(input, context(linkifiers)).html;
const refusal = (pattern: string): string => {
  try {
    compilePattern(pattern);
  } catch (err) {
    return (err as Error).message;
  }
  return 'accepted';
};

describe('compilePattern', () => {
  it("refuses what RE2 refuses, in RE2's words (Zulip's 'Bad regular expression: ...')", () => {
    const cases: [string, string][] = [
      ['(foo', 'missing ): (foo'],
      ['foo)', 'unexpected ): foo)'],
      ['[abc', 'missing ]: [abc'],
      ['abc\\', 'trailing \\'],
      ['*a', 'no argument for repetition operator: *'],
      ['a{1001}', 'invalid repetition size: {1001}'],
      ['a{2,1}', 'invalid repetition size: {2,1}'],
      ['(a{100}){100}', 'invalid repetition size: {100}'],
      ['ZUL-(?P<id>\\d????)', 'bad repetition operator: ????'],
      ['a**', 'bad repetition operator: **'],
      ['a(?=b)', 'invalid perl operator: (?='],
      ['a(?!b)', 'invalid perl operator: (?!'],
      ['(?<=a)b', 'invalid perl operator: (?<='],
      ['(?<!a)b', 'invalid perl operator: (?<!'],
      ['(a)\\1', 'invalid escape sequence: \\1'],
      ['a\\Z', 'invalid escape sequence: \\Z'],
      ['(?P<a b>x)', 'invalid named capture group: (?P<a b>'],
      ['[[:foo:]]', 'invalid character class range: [:foo:]'],
      ['\\pX', 'invalid character class range: \\pX'],
      ['(?P<id>a)(?P<id>b)', 'duplicate capture group name: id'],
      // A program past MAX_PROGRAM_SIZE, as RE2 refuses one past its memory budget.
      ['(?P<id>[a-z]{1000})', 'pattern too large - compile failed'],
      ['(?P<id>[0-9a-f]{7,60})', 'pattern too large - compile failed'],
      // The name would clash with the group that wraps every pattern in messages.
      ['(?P<linkifier_actual_match>x)', 'duplicate capture group name: linkifier_actual_match'],
    ];
    assert.deepEqual(
      cases.map(([pattern]) => [pattern, refusal(pattern)]),
      cases,
    );
  });

  it('accepts nested quantifiers (RE2 never backtracks) and RE2 syntax, and lists the groups in order', () => {
    assert.deepEqual(compilePattern('(?P<id>(a+)+)').groups, ['id']);
    assert.deepEqual(compilePattern('(?P<b>x)(?P<a>y)').groups, ['b', 'a']);
    assert.deepEqual(compilePattern('x(?i)y\\Q.*\\E[[:alpha:]]\\pN').groups, []);
    // Real patterns near the size limit: a commit hash, and Zulip's seven-group test pattern.
    assert.deepEqual(compilePattern('(?P<id>[0-9a-f]{7,40})').groups, ['id']);
    assert.deepEqual(
      compilePattern('FOO_(?P<id>[a-f]{5});(?P<zone>[a-f]);(?P<domain>[a-z]+);(?P<location>[a-z]+);(?P<name>[a-z]{2,8});(?P<chapter>[0-9]{2,3});(?P<fragment>[a-z]{2,8})').groups,
      ['id', 'zone', 'domain', 'location', 'name', 'chapter', 'fragment'],
    );
  });
});

describe('linkifiers in messages and topics', () => {
  const nested = [{ pattern: '(?P<id>(a+)+)', url_template: 'https://e.com/{id}' }];

  it('runs nested quantifiers in linear time: a long near-miss links nothing, then a match links', () => {
    // A backtracking engine tries 2^n ways to split the a's before giving up on the "b" (a letter
    // may not follow a match): it never finishes this message. RE2 reads it once.
    assert.equal(html(`${'a'.repeat(5000)}b then aaa`, nested), `<p>${'a'.repeat(5000)}b then <a href="https://e.com/aaa">aaa</a></p>`);
    assert.deepEqual(topicLinks(`${'a'.repeat(55)}b aa`, nested), [{ url: 'https://e.com/aa', text: 'aa' }]);
  });

  it("reads patterns as RE2 does: ASCII \\s, POSIX classes, flags from where they are set", () => {
    assert.equal(html('T\u00a01 and T 2', [{ pattern: 'T\\s(?P<id>\\d+)', url_template: 'https://e.com/{id}' }]), '<p>T\u00a01 and <a href="https://e.com/2">T 2</a></p>');
    assert.equal(html('zulip#12', [{ pattern: '(?P<repo>[[:alpha:]]+)#(?P<id>\\d+)', url_template: 'https://e.com/{repo}/{id}' }]), '<p><a href="https://e.com/zulip/12">zulip#12</a></p>');
    assert.equal(
      html('TK-ABC tk-abc', [{ pattern: 'TK-(?i)(?P<id>[a-z]+)', url_template: 'https://e.com/{id}' }]),
      '<p><a href="https://e.com/ABC">TK-ABC</a> tk-abc</p>',
    );
    assert.deepEqual(topicLinks('see T\u00a01, T 2', [{ pattern: 'T\\s(?P<id>\\d+)', url_template: 'https://e.com/{id}' }]), [{ url: 'https://e.com/2', text: 'T 2' }]);
  });

  it('leaves out of the URL a group that took no part in the match', () => {
    const optional = [{ pattern: '#(?P<id>\\d+)(?:/(?P<sub>\\d+))?', url_template: 'https://e.com/{id}{?sub}' }];
    assert.equal(html('#1 #2/3', optional), '<p><a href="https://e.com/1">#1</a> <a href="https://e.com/2?sub=3">#2/3</a></p>');
  });
});

describe('linkifier work per message', () => {
  const issue: Linkifier = { pattern: '#(?P<id>[0-9]+)', url_template: 'https://tracker.example/{id}' };
  const costly: Linkifier = { pattern: `(?P<w>${'\\pL*'.repeat(30)})x`, url_template: 'https://x.example/{w}' };

  it('links every match of ordinary linkifiers, even in the longest messages', () => {
    const refs = Array.from({ length: 700 }, (_, i) => `#${i + 1}`).join(' and ');
    const out = html(refs, [issue]);
    assert.equal(out.match(/<a href="https:\/\/tracker\.example\/\d+">/g)?.length, 700);
  });

  it('stops linkifying a message whose linkifier work passes MAX_LINKIFIER_WORK_PER_MESSAGE, the same way every time', () => {
    const words = Array.from({ length: 2500 }, () => 'abcx').join(' ');
    const out = html(words, [costly]);
    const linked = out.match(/<a href="https:\/\/x\.example\/abc">abcx<\/a>/g)?.length ?? 0;
    // The first words are linked, the rest left as text: the budget ends the work, not the message.
    assert.ok(linked > 100 && linked < 2500, `linked ${linked} of 2500`);
    assert.match(out.slice(-20), /abcx abcx\s*<\/p>$/);
    assert.equal(html(words, [costly]), out);
  });
});
