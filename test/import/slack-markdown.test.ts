// Slack text to Zulip Markdown, thread topic names, and blocks/attachments: table-driven, with Zulip's
// own conversion cases (zerver/tests/fixtures/slack_message_conversion.json) first.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { convertText, type TextContext } from '../../src/import/slack/markdown';
import { ThreadTopics, truncateContent } from '../../src/import/slack/threads';
import { blocksAndAttachments } from '../../src/import/slack/blocks';
import { zulipEmoji } from '../../src/import/slack/emoji';
import { At } from '../../src/import/shape';

const ctx: TextContext = {
  mention: (id) => (id === 'U1' ? { markdown: '@**Ada Lovelace**', userId: 10 } : id === 'U2' ? { markdown: '@**Sam|11**', userId: 11 } : null),
  channelName: (id) => (id === 'C1' ? 'general' : null),
};
const md = (text: string) => convertText(text, ctx).content;

describe('Slack text to Zulip Markdown', () => {
  // Zulip's fixture cases, input → output.
  const zulipCases: [string, string][] = [
    ['>Google logo today:\n><https://www.google.com/images/srpr/logo4w.png>\n>Kinda boring', '>Google logo today:\n>https://www.google.com/images/srpr/logo4w.png\n>Kinda boring'],
    ['>Google logo today:\n><https://foo.com|foo>\n>Kinda boring', '>Google logo today:\n>[foo](https://foo.com)\n>Kinda boring'],
    ['>Google logo today:\n><https://foo.com|foo|oof>\n>Kinda boring', '>Google logo today:\n>[foo|oof](https://foo.com)\n>Kinda boring'],
    ['<http://datausa.io/> this is a good website.', 'http://datausa.io/ this is a good website.'],
    ['email me at <mailto:random@gmail.com|random@gmail.com>', 'email me at mailto:random@gmail.com'],
    ['email me at <mailto:random@gmail.com>', 'email me at mailto:random@gmail.com'],
    ['(~str ike!~, text. ~Also ~)', '(~~str ike!~~, text. ~~Also ~~)'],
    ['Mid~word~ strike. Also ~~strike~~)', 'Mid~word~ strike. Also ~~strike~~)'],
    ['ital ^_lic_, _wo r@d_.', 'ital ^*lic*, *wo r@d*.'],
    ['mid_word_, @_italics_', 'mid_word_, @_italics_'],
    ['(*text*} and normal :* bold*.', '(**text**} and normal :** bold**.'],
    ['*mid*word **word**', '*mid*word **word**'],
    ['***word***', '***word***'],
    ['*_test bold and italic message_*', '***test bold and italic message***'],
    ['_*test bold and italic message*_', '***test bold and italic message***'],
    ['~*bold*~ and *~strike~*.', '~~**bold**~~ and **~~strike~~**.'],
    ['_~italic~_ and ~_strike_~', '*~~italic~~* and ~~*strike*~~'],
    ['\n*abc*\n_helo_\n~stike~\n', '\n**abc**\n*helo*\n~~stike~~\n'],
    ['*foo*\n*foo*\n*foo*', '**foo**\n**foo**\n**foo**'],
  ];
  for (const [input, output] of zulipCases) it(`converts ${JSON.stringify(input)} as Zulip does`, () => assert.equal(md(input), output));

  const cases: [string, string, string][] = [
    ['user mentions, with and without a handle', 'hi <@U1> and <@U1|ada>', 'hi @**Ada Lovelace** and @**Ada Lovelace**'],
    ['a mention of an unknown user stays text', 'hi <@U9>', 'hi <@U9>'],
    ['a shared name mentions by id', 'cc <@U2>', 'cc @**Sam|11**'],
    ['channel links by id, with or without the name', '<#C1|general> <#C1> <#C9|gone> <#C9>', '#**general** #**general** #gone <#C9>'],
    ['wildcards', '<!channel> <!here> <!everyone> <!here|here>', '@**all** @**all** @**all** @**all**'],
    ['user groups and dates show their fallback text', '<!subteam^S1|@devs> at <!date^1392734382^{date}|Feb 18, 2014>', '@devs at Feb 18, 2014'],
    ["Slack's escapes are undone, so quotes are quotes", '&gt; a &lt;b&gt; &amp;c', '> a <b> &c'],
    ['inline code is left as it is', 'run `*x* _y_ &lt;z&gt;` now', 'run `*x* _y_ <z>` now'],
    ['code blocks get fences on their own lines', 'see ```a *b*\nc``` done', 'see \n```\na *b*\nc\n```\n done'],
    ['a code block on its own lines keeps them', '```\ncode\n```', '```\ncode\n```'],
    ["emoji names become Zulip's; skin tones go", ':thumbsup: :smile: :wave::skin-tone-2: :unknown_thing:', ':+1: :big_smile: :wave: :unknown_thing:'],
    ['formatting never reaches into links', '<https://a.com/x_y_z|the *site*>', '[the *site*](https://a.com/x_y_z)'],
  ];
  for (const [name, input, output] of cases) it(name, () => assert.equal(md(input), output));

  it('reports mentioned users and links', () => {
    assert.deepEqual(convertText('<@U1> <@U1> <@U2> <@U9>', ctx), { content: '@**Ada Lovelace** @**Ada Lovelace** @**Sam|11** <@U9>', mentionedUserIds: [10, 11], hasLink: false });
    assert.equal(convertText('<https://a.com>', ctx).hasLink, true);
    assert.equal(convertText('<mailto:a@b.com>', ctx).hasLink, true);
  });
});

describe('Slack emoji names', () => {
  it("maps Slack's names to Zulip's through the code point", () => {
    assert.deepEqual(zulipEmoji('thumbsup'), { name: '+1', code: '1f44d' });
    assert.deepEqual(zulipEmoji('+1::skin-tone-4'), { name: '+1', code: '1f44d' });
    assert.deepEqual(zulipEmoji('pray'), { name: 'folded_hands', code: '1f64f' });
    assert.deepEqual(zulipEmoji('white_check_mark'), { name: 'check', code: '2705' });
    assert.equal(zulipEmoji('customparrot'), null);
  });
});

describe('thread topics', () => {
  const thread = (threadTs: string, ts = threadTs, sender = 'U1') => ({ threadTs, ts, subtype: null, sender, parentUser: ts === threadTs ? null : sender });

  it("names a thread by its date and first message, cut to 60 characters with Zulip's truncate_content", () => {
    assert.equal(truncateContent('abcdef', 4), 'abc…');
    assert.equal(truncateContent('abcd', 4), 'abcd');
    assert.equal(truncateContent('😀😀😀😀😀', 3), '😀😀…');
    const t = new ThreadTopics();
    assert.equal(t.topicFor(thread('1704196800.000100'), 'Short'), '2024-01-02 Short');
    const long = 'x'.repeat(100);
    assert.equal(t.topicFor(thread('1704196900.000100'), long), '2024-01-02 ' + 'x'.repeat(48) + '…');
  });

  it('numbers colliding names and cuts them shorter for the number', () => {
    const t = new ThreadTopics();
    assert.equal(t.topicFor(thread('1704196800.000100'), 'Hello'), '2024-01-02 Hello');
    assert.equal(t.topicFor(thread('1704196801.000100'), 'Hello'), '2024-01-02 Hello (2)');
    assert.equal(t.topicFor(thread('1704196802.000100'), 'Hello'), '2024-01-02 Hello (3)');
    const long = 'y'.repeat(100);
    assert.equal(t.topicFor(thread('1704196803.000100'), long), '2024-01-02 ' + 'y'.repeat(48) + '…');
    assert.equal(t.topicFor(thread('1704196804.000100'), long), '2024-01-02 ' + 'y'.repeat(44) + '… (2)');
  });

  it('gives replies their thread topic, and tells apart threads started in the same second by different people', () => {
    const t = new ThreadTopics();
    const first = t.topicFor(thread('1704196800.000100'), 'Parent');
    assert.equal(t.topicFor({ threadTs: '1704196800.000100', ts: '1704196900.000100', subtype: null, sender: 'U2', parentUser: 'U1' }, 'A reply'), first);
    // A reply without parent_user_id: the starter seen with the parent.
    assert.equal(t.topicFor({ threadTs: '1704196800.000100', ts: '1704196950.000100', subtype: null, sender: 'U3', parentUser: null }, 'Another'), first);
    assert.equal(t.topicFor({ threadTs: '1704196800.000500', ts: '1704196800.000500', subtype: null, sender: 'U2', parentUser: null }, 'Parent'), '2024-01-02 Parent (2)');
  });

  it('puts a topic on one line and keeps Unicode whole', () => {
    const t = new ThreadTopics();
    assert.equal(t.topicFor(thread('1704196800.000100'), 'Ünïcode 🎉\n\nnext  line'), '2024-01-02 Ünïcode 🎉 next line');
  });
});

describe('blocks and attachments', () => {
  const render = (message: unknown) => blocksAndAttachments(new At('m', message));

  it("renders blocks as Zulip's render_block does, skipping rich_text and interactive ones", () => {
    assert.equal(
      render({
        blocks: [
          { type: 'header', text: { type: 'plain_text', text: 'Release' } },
          { type: 'divider' },
          { type: 'section', text: { type: 'mrkdwn', text: '*New*' }, accessory: { type: 'image', image_url: 'https://i.example/x.png', alt_text: 'x' } },
          { type: 'section', fields: [{ type: 'mrkdwn', text: 'a|b' }, { type: 'mrkdwn', text: 'c\nd' }, { type: 'plain_text', text: 'e' }] },
          { type: 'context', elements: [{ type: 'mrkdwn', text: 'by bot' }, { type: 'image', image_url: 'https://i.example/y.png', alt_text: 'y' }] },
          { type: 'image', image_url: 'https://i.example/z.png', alt_text: 'z', title: { type: 'plain_text', text: 'Zed' } },
          { type: 'rich_text', elements: [] },
          { type: 'actions', elements: [] },
        ],
      }),
      '## Release\n----\n*New*\n\n[x](https://i.example/x.png)\n| | |\n|-|-|\n| a b | c d |\n| e |  |\nby bot\n\n[y](https://i.example/y.png)\n[Zed](https://i.example/z.png)',
    );
    assert.equal(render({ text: 'plain', blocks: [{ type: 'rich_text', elements: [] }] }), '');
  });

  it('refuses a block of no known type, naming where', () => {
    assert.throws(() => render({ blocks: [{ type: 'hologram' }] }), { message: 'm.blocks[0].type is not a Slack block type ("hologram")' });
  });
});
