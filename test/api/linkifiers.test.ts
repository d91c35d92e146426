import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server';
import { createChannel, err, SUCCESS } from '../helpers/chat';

let t: TestServer;
before(async () => {
  t = await startTestServer();
});
after(() => t.close());

const add = (u: TestUser, params: Record<string, unknown>) => t.api(u, 'POST', '/realm/filters', params);
const list = async () => (await t.api(t.users.hamlet, 'GET', '/realm/linkifiers')).body.linkifiers;
const linkifier = (id: number, pattern: string, url_template: string, extra: Record<string, unknown> = {}) => ({
  pattern,
  url_template,
  id,
  example_input: null,
  reverse_template: null,
  alternative_url_templates: [],
  ...extra,
});
const failure = (msg: string, errors: Record<string, string[]>) => err(msg, 'BAD_REQUEST', { errors });

async function queue(user: TestUser): Promise<string> {
  const res = await t.api(user, 'POST', '/register', {
    event_types: ['realm_linkifiers'],
    fetch_event_types: [],
    client_capabilities: { notification_settings_null: false, linkifier_url_template: true },
  });
  assert.equal(res.status, 200, res.text);
  return res.body.queue_id;
}
async function events(user: TestUser, queueId: string): Promise<any[]> {
  const res = await t.api(user, 'GET', '/events', { queue_id: queueId, last_event_id: -1, dont_block: true });
  assert.equal(res.status, 200, res.text);
  return res.body.events.filter((e: any) => e.type !== 'heartbeat').map(({ id, ...rest }: any) => rest);
}

let issue: number;
let ticket: number;

describe('POST /realm/filters', () => {
  it('adds linkifiers in order and sends the whole list', async () => {
    const q = await queue(t.users.hamlet);
    const res = await add(t.users.admin, { pattern: '#(?P<id>[0-9]+)', url_template: 'https://github.com/zulip/zulip/issues/{id}' });
    assert.deepEqual(Object.keys(res.body).sort(), ['id', 'msg', 'result']);
    issue = res.body.id;
    const second = await add(t.users.owner, {
      pattern: 'T-(?P<num>[0-9]+)',
      url_template: 'https://tickets.example.com/{num}',
      example_input: 'T-123',
      reverse_template: 'T-{num}',
      alternative_url_templates: ['https://tickets.example.com/view?id={num}'],
    });
    assert.equal(second.status, 200, second.text);
    ticket = second.body.id;
    const expected = [
      linkifier(issue, '#(?P<id>[0-9]+)', 'https://github.com/zulip/zulip/issues/{id}'),
      linkifier(ticket, 'T-(?P<num>[0-9]+)', 'https://tickets.example.com/{num}', {
        example_input: 'T-123',
        reverse_template: 'T-{num}',
        alternative_url_templates: ['https://tickets.example.com/view?id={num}'],
      }),
    ];
    assert.deepEqual((await t.api(t.users.guest, 'GET', '/realm/linkifiers')).body, { ...SUCCESS, linkifiers: expected });
    assert.deepEqual(await events(t.users.hamlet, q), [
      { type: 'realm_linkifiers', realm_linkifiers: [expected[0]] },
      { type: 'realm_linkifiers', realm_linkifiers: expected },
    ]);
    const reg = await t.api(t.users.hamlet, 'POST', '/register', {
      fetch_event_types: ['realm_linkifiers'],
      client_capabilities: { notification_settings_null: false, linkifier_url_template: true },
    });
    assert.deepEqual(reg.body.realm_linkifiers, expected);
  });

  it('applies linkifiers to new messages', async () => {
    const channel = await createChannel(t, t.users.owner, 'links', [t.users.hamlet]);
    const sent = await t.api(t.users.hamlet, 'POST', '/messages', { type: 'channel', to: channel, topic: 'links', content: 'see #42 and T-7' });
    assert.equal(sent.status, 200, sent.text);
    const msg = (await t.api(t.users.hamlet, 'GET', `/messages/${sent.body.id}`)).body.message;
    assert.match(msg.content, /<a href="https:\/\/github\.com\/zulip\/zulip\/issues\/42"[^>]*>#42<\/a>/);
    assert.match(msg.content, /<a href="https:\/\/tickets\.example\.com\/7"[^>]*>T-7<\/a>/);
  });

  it('is for administrators only (checked before the parameters)', async () => {
    for (const u of [t.users.moderator, t.users.hamlet, t.users.guest, t.users.bot]) {
      for (const params of [{ pattern: 'x(?P<a>y)', url_template: 'https://e.com/{a}' }, {}]) {
        const res = await add(u, params);
        assert.deepEqual(res.body, err('Must be an organization administrator', 'UNAUTHORIZED_PRINCIPAL'));
      }
    }
  });

  it("validates patterns and templates with Zulip's messages", async () => {
    const a = t.users.admin;
    const cases: [Record<string, unknown>, ReturnType<typeof failure>][] = [
      [{ pattern: '', url_template: 'https://e.com' }, failure('This field cannot be blank.', { pattern: ['This field cannot be blank.'] })],
      [{ pattern: 'a', url_template: '' }, failure('This field cannot be blank.', { url_template: ['This field cannot be blank.'] })],
      [{ pattern: 'ZUL-(?P<id>\\d+', url_template: 'https://e.com/{id}' }, failure('Bad regular expression: missing ): ZUL-(?P<id>\\d+', { __all__: ['Bad regular expression: missing ): ZUL-(?P<id>\\d+'] })],
      [{ pattern: 'ZUL-(?P<id>\\d+))', url_template: 'https://e.com/{id}' }, failure('Bad regular expression: unexpected ): ZUL-(?P<id>\\d+))', { __all__: ['Bad regular expression: unexpected ): ZUL-(?P<id>\\d+))'] })],
      [{ pattern: '(?P<id>a)(?P<id>b)', url_template: 'https://e.com/{id}' }, failure('Bad regular expression: duplicate capture group name: id', { __all__: ['Bad regular expression: duplicate capture group name: id'] })],
      [{ pattern: 'a(?=b)', url_template: 'https://e.com' }, failure('Bad regular expression: invalid perl operator: (?=', { __all__: ['Bad regular expression: invalid perl operator: (?='] })],
      [{ pattern: '(a)\\1', url_template: 'https://e.com' }, failure('Bad regular expression: invalid escape sequence: \\1', { __all__: ['Bad regular expression: invalid escape sequence: \\1'] })],
      // Zulip's own (test_realm_linkifiers.py), then more that RE2 refuses and JavaScript took.
      [{ pattern: '(foo', url_template: 'https://e.com' }, failure('Bad regular expression: missing ): (foo', { __all__: ['Bad regular expression: missing ): (foo'] })],
      [{ pattern: 'ZUL-(?P<id>\\d????)', url_template: 'https://e.com/{id}' }, failure('Bad regular expression: bad repetition operator: ????', { __all__: ['Bad regular expression: bad repetition operator: ????'] })],
      [{ pattern: '(?P<id>a{1001})', url_template: 'https://e.com/{id}' }, failure('Bad regular expression: invalid repetition size: {1001}', { __all__: ['Bad regular expression: invalid repetition size: {1001}'] })],
      [{ pattern: '(?P<id>[[:foo:]])', url_template: 'https://e.com/{id}' }, failure('Bad regular expression: invalid character class range: [:foo:]', { __all__: ['Bad regular expression: invalid character class range: [:foo:]'] })],
      [
        { pattern: `(?P<id>${'[a-z]{1000}'.repeat(11)})`, url_template: 'https://e.com/{id}' },
        failure('Bad regular expression: pattern too large - compile failed', { __all__: ['Bad regular expression: pattern too large - compile failed'] }),
      ],
      [{ pattern: '#(?P<id>[0-9]+)', url_template: 'https://e.com/{id' }, failure('Invalid URL template.', { url_template: ['Invalid URL template.'] })],
      [{ pattern: '#(?P<id>[0-9]+)', url_template: 'https://e.com/ {id}' }, failure('Invalid URL template.', { url_template: ['Invalid URL template.'] })],
      [
        { pattern: '#(?P<id>[0-9]+)', url_template: 'https://e.com/{hello}/{id}' },
        failure("Group 'hello' in URL template is not present in linkifier pattern.", { __all__: ["Group 'hello' in URL template is not present in linkifier pattern."] }),
      ],
      [
        { pattern: '#(?P<id>[0-9]+)-(?P<x>.)', url_template: 'https://e.com/{x}' },
        failure("Group 'id' in linkifier pattern is not present in URL template.", { __all__: ["Group 'id' in linkifier pattern is not present in URL template."] }),
      ],
      [
        { pattern: '#(?P<id>[0-9]+)', url_template: 'https://other.com/{id}' },
        failure('Realm filter with this Realm and Pattern already exists.', { __all__: ['Realm filter with this Realm and Pattern already exists.'] }),
      ],
      [
        { pattern: 'Z-(?P<n>[0-9]+)', url_template: 'https://e.com/{n}', example_input: 'Z-x' },
        failure('Example input does not match the linkifier pattern.', { example_input: ['Example input does not match the linkifier pattern.'] }),
      ],
      [
        { pattern: 'Z-(?P<n>[0-9]+)', url_template: 'https://e.com/{n}', reverse_template: 'Z-{n}' },
        failure('Example input is required for a reverse template.', { example_input: ['Example input is required for a reverse template.'] }),
      ],
      [
        { pattern: 'Z-(?P<n>[0-9]+)', url_template: 'https://e.com/{n}', example_input: 'Z-1', reverse_template: 'Z-{m}' },
        failure("Group 'm' in reverse template is not present in linkifier pattern.", { reverse_template: ["Group 'm' in reverse template is not present in linkifier pattern."] }),
      ],
      [
        { pattern: 'Z-(?P<n>[0-9]+)', url_template: 'https://e.com/{n}', example_input: 'Z-1', reverse_template: 'Z-{n' },
        failure('Invalid reverse template.', { reverse_template: ['Invalid reverse template.'] }),
      ],
      [
        { pattern: 'Z-(?P<n>[0-9]+)', url_template: 'https://e.com/{n}', alternative_url_templates: ['https://e.com/{q}'] },
        failure("Group 'q' in URL template is not present in linkifier pattern.", { alternative_url_templates: ["Group 'q' in URL template is not present in linkifier pattern."] }),
      ],
      [
        { pattern: 'Z-(?P<n>[0-9]+)', url_template: 'https://e.com/{n}', alternative_url_templates: ['{'] },
        failure('Invalid URL template.', { alternative_url_templates: ['Invalid URL template.'] }),
      ],
    ];
    for (const [params, expected] of cases) assert.deepEqual((await add(a, params)).body, expected, JSON.stringify(params));
    assert.deepEqual((await add(a, { pattern: 'a' })).body, err("Missing 'url_template' argument", 'REQUEST_VARIABLE_MISSING', { var_name: 'url_template' }));
    assert.deepEqual((await add(a, { pattern: 'a', url_template: 'https://e.com', alternative_url_templates: 'x' })).body, err('alternative_url_templates is not valid JSON'));
    assert.equal((await list()).length, 2);
  });

  it('accepts RFC 6570 operators, literal braces in reverse templates and inline flags', async () => {
    const a = t.users.admin;
    const res = await add(a, {
      pattern: '(?i)(?P<org>[a-z]+)/(?P<repo>[a-z]+)!(?P<pr>\\d+)',
      url_template: 'https://git.example.com{/org,repo}/pull/{pr}{?org}{#repo}',
      example_input: 'Zulip/zulip!12',
      reverse_template: '{{{org}/{repo}}}!{pr}',
    });
    assert.equal(res.status, 200, res.text);
    await t.api(a, 'DELETE', `/realm/filters/${res.body.id}`);
  });
});

describe('linkifiers with nested quantifiers', () => {
  it('are accepted, as RE2 accepts them, and link messages and topics in linear time', async () => {
    const res = await add(t.users.admin, { pattern: '(?P<id>(a+)+)', url_template: 'https://e.com/{id}' });
    assert.equal(res.status, 200, res.text);
    const channel = await createChannel(t, t.users.owner, 'nested', [t.users.hamlet]);
    // Near-misses (a letter after the a's) that a backtracking engine would try 2^n ways to match.
    const topic = `${'a'.repeat(50)}b aa`;
    const sent = await t.api(t.users.hamlet, 'POST', '/messages', { type: 'channel', to: channel, topic, content: `${'a'.repeat(5000)}b then aaa` });
    assert.equal(sent.status, 200, sent.text);
    const msg = (await t.api(t.users.hamlet, 'GET', `/messages/${sent.body.id}`)).body.message;
    assert.equal(msg.content, `<p>${'a'.repeat(5000)}b then <a href="https://e.com/aaa">aaa</a></p>`);
    assert.deepEqual(msg.topic_links, [{ url: 'https://e.com/aa', text: 'aa' }]);
    assert.deepEqual((await t.api(t.users.admin, 'DELETE', `/realm/filters/${res.body.id}`)).body, SUCCESS);
  });
});

describe('PATCH /realm/filters/{filter_id}', () => {
  it('updates a linkifier, keeping optional fields not given', async () => {
    const q = await queue(t.users.othello);
    const res = await t.api(t.users.admin, 'PATCH', `/realm/filters/${ticket}`, { pattern: 'TK-(?P<num>[0-9]+)', url_template: 'https://t.example.com/{num}', example_input: 'TK-1' });
    assert.deepEqual(res.body, SUCCESS);
    const updated = linkifier(ticket, 'TK-(?P<num>[0-9]+)', 'https://t.example.com/{num}', {
      example_input: 'TK-1',
      reverse_template: 'T-{num}',
      alternative_url_templates: ['https://tickets.example.com/view?id={num}'],
    });
    assert.deepEqual((await list())[1], updated);
    assert.deepEqual((await events(t.users.othello, q)).map((e) => e.realm_linkifiers[1]), [updated]);
  });

  it('refuses missing linkifiers, non-administrators and invalid values', async () => {
    const params = { pattern: 'q(?P<a>x)', url_template: 'https://e.com/{a}' };
    assert.deepEqual((await t.api(t.users.admin, 'PATCH', '/realm/filters/99999', params)).body, err('Linkifier not found.'));
    assert.deepEqual((await t.api(t.users.hamlet, 'PATCH', `/realm/filters/${ticket}`, params)).body, err('Must be an organization administrator', 'UNAUTHORIZED_PRINCIPAL'));
    assert.deepEqual(
      (await t.api(t.users.admin, 'PATCH', `/realm/filters/${ticket}`, { pattern: '#(?P<id>[0-9]+)', url_template: 'https://e.com/{id}', example_input: '', reverse_template: '', alternative_url_templates: [] })).body,
      failure('Realm filter with this Realm and Pattern already exists.', { __all__: ['Realm filter with this Realm and Pattern already exists.'] }),
    );
    // Its own pattern is no clash.
    assert.deepEqual((await t.api(t.users.admin, 'PATCH', `/realm/filters/${ticket}`, { pattern: 'TK-(?P<num>[0-9]+)', url_template: 'https://t.example.com/x/{num}' })).body, SUCCESS);
  });
});

describe('PATCH /realm/linkifiers', () => {
  it('reorders the linkifiers', async () => {
    const q = await queue(t.users.hamlet);
    assert.deepEqual((await t.api(t.users.admin, 'PATCH', '/realm/linkifiers', { ordered_linkifier_ids: [ticket, issue] })).body, SUCCESS);
    assert.deepEqual((await list()).map((l: { id: number }) => l.id), [ticket, issue]);
    assert.deepEqual((await events(t.users.hamlet, q)).map((e) => e.realm_linkifiers.map((l: { id: number }) => l.id)), [[ticket, issue]]);
  });

  it('needs every linkifier exactly once', async () => {
    const a = t.users.admin;
    const reorder = (ids: unknown) => t.api(a, 'PATCH', '/realm/linkifiers', { ordered_linkifier_ids: ids });
    assert.deepEqual((await reorder([ticket, ticket, issue])).body, err('The ordered list must not contain duplicated linkifiers'));
    assert.deepEqual((await reorder([ticket])).body, err('The ordered list must enumerate all existing linkifiers exactly once'));
    assert.deepEqual((await reorder([ticket, 99999])).body, err('The ordered list must enumerate all existing linkifiers exactly once'));
    assert.deepEqual((await reorder('x')).body, err('ordered_linkifier_ids is not valid JSON'));
    assert.deepEqual((await t.api(t.users.moderator, 'PATCH', '/realm/linkifiers', { ordered_linkifier_ids: [issue, ticket] })).body, err('Must be an organization administrator', 'UNAUTHORIZED_PRINCIPAL'));
  });
});

describe('DELETE /realm/filters/{filter_id}', () => {
  it('removes a linkifier; administrators only', async () => {
    assert.deepEqual((await t.api(t.users.hamlet, 'DELETE', `/realm/filters/${issue}`)).body, err('Must be an organization administrator', 'UNAUTHORIZED_PRINCIPAL'));
    const q = await queue(t.users.hamlet);
    assert.deepEqual((await t.api(t.users.admin, 'DELETE', `/realm/filters/${issue}`)).body, SUCCESS);
    assert.deepEqual((await list()).map((l: { id: number }) => l.id), [ticket]);
    assert.equal((await events(t.users.hamlet, q)).length, 1);
    assert.deepEqual((await t.api(t.users.admin, 'DELETE', `/realm/filters/${issue}`)).body, err('Linkifier not found.'));
  });
});

describe('an organization with many linkifiers', () => {
  it('links with every one of them without compiling them again for each message and topic', async () => {
    // Compiled patterns were remembered 128 at a time, oldest out first: with more linkifiers than that
    // every message and topic compiled each again (~0.3 ms apiece), 60 ms a send at 130 linkifiers.
    for (let i = 0; i < 200; i++) {
      const res = await add(t.users.admin, { pattern: `T${i}-(?P<id>[0-9]+)`, url_template: `https://e.com/${i}/{id}` });
      assert.equal(res.status, 200, res.text);
    }
    const channel = await createChannel(t, t.users.owner, 'many-linkifiers', [t.users.hamlet]);
    const send = (i: number) =>
      t.api(t.users.hamlet, 'POST', '/messages', { type: 'channel', to: channel, topic: `about T${i}-7`, content: `see T0-1, T199-2 and T${i}-3` });
    assert.equal((await send(0)).status, 200); // compiles the list once
    // Each send links with the list as compiled (its time: bench/security-bounds.ts, F).
    const ids: number[] = [];
    for (let i = 0; i < 20; i++) ids.push((await send(i)).body.id);
    const msg = (await t.api(t.users.hamlet, 'GET', `/messages/${ids[5]}`)).body.message;
    assert.equal(
      msg.content,
      '<p>see <a href="https://e.com/0/1">T0-1</a>, <a href="https://e.com/199/2">T199-2</a> and <a href="https://e.com/5/3">T5-3</a></p>',
    );
    assert.deepEqual(msg.topic_links, [{ url: 'https://e.com/5/7', text: 'T5-7' }]);
  });
});
