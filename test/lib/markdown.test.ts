// renderMarkdown against Zulip's own expectations: cases taken from Zulip's
// zerver/tests/fixtures/markdown_test_cases.json (regular_tests and linkify_tests; where Zulip
// highlights code with Pygments we compare with its unhighlighted "marked_expected_output"),
// then Zulip's mention/link syntax, XSS, linkifiers, the result flags, and fuzzing.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ZULIP_CASES, emoji, smile } from './zulip-markdown-cases';
import { expandUriTemplate, MAX_RENDER_INPUT, MAX_RENDER_OUTPUT, MAX_TEX_COST_PER_MESSAGE, renderMarkdown, sanitizeUrl, topicLinks, type RenderContext } from '../../src/lib/markdown';

const USERS = [
  { id: 12, full_name: 'King Hamlet' },
  { id: 13, full_name: 'Othello, the Moor of Venice' },
  { id: 14, full_name: 'Cordelia, Lear’s daughter' },
  { id: 15, full_name: 'Gone Away', is_active: false },
  { id: 16, full_name: 'King Hamlet' },
  { id: 17, full_name: '<b>Evil</b> & "Co"' },
];
const GROUPS = [
  { id: 3, name: 'support' },
  { id: 4, name: 'backend team' },
  { id: 5, name: 'retired', deactivated: true },
];
const STREAMS = [
  { id: 9, name: 'Verona' },
  { id: 10, name: 'Denmark & co (old).' },
  { id: 11, name: '<script>' },
];

function context(over: Partial<RenderContext> = {}): RenderContext {
  return {
    // Like Zulip: names match case-insensitively; with two users of one name the first wins.
    userByName: (name) => USERS.find((u) => u.full_name.toLowerCase() === name.toLowerCase()) ?? null,
    userById: (id) => USERS.find((u) => u.id === id) ?? null,
    groupByName: (name) => GROUPS.find((g) => g.name.toLowerCase() === name.toLowerCase()) ?? null,
    streamByName: (name) => STREAMS.find((s) => s.name === name) ?? null,
    linkifiers: [],
    realmUrl: 'http://zulip.testserver',
    ...over,
  };
}
const html = (input: string, over: Partial<RenderContext> = {}): string => renderMarkdown(input, context(over)).html;



// Zulip's "translate_emoticons" cases (the sender's setting on).
const EMOTICON_CASES: [string, string][] = [
  [':)', `<p>${smile}</p>`],
  [':) foo :( bar <3 with space : ) real emoji :smile:', `<p>${smile} foo ${emoji('1f641', 'frown')} bar ${emoji('2764', 'heart')} with space : ) real emoji ${smile}</p>`],
  ['a:) ;)b', '<p>a:) ;)b</p>'],
  [':) test\n:) test', `<p>${smile} test<br>\n${smile} test</p>`],
  ['`:)`', '<p><code>:)</code></p>'],
  ['Translate this :).', `<p>Translate this ${smile}.</p>`],
  ['Translate this !:)?', `<p>Translate this !${smile}?</p>`],
];

// Zulip's "linkify_tests": [input, expected with %s for the link, the linked text].
const LINKIFY_CASES: [string, string, string][] = [
  ['http://www.google.com', '<p>%s</p>', 'http://www.google.com'],
  ['https://www.google.com', '<p>%s</p>', 'https://www.google.com'],
  ['http://www.theregister.co.uk/foo/bar', '<p>%s</p>', 'http://www.theregister.co.uk/foo/bar'],
  [' some text https://www.google.com/', '<p>some text %s</p>', 'https://www.google.com/'],
  ['with short example.com url', '<p>with short %s url</p>', 'example.com'],
  ['t.co', '<p>%s</p>', 't.co'],
  ['readme.md', '<p>readme.md</p>', ''],
  ['go to views.org please', '<p>go to %s please</p>', 'views.org'],
  ['http://foo.com/blah_blah/', '<p>%s</p>', 'http://foo.com/blah_blah/'],
  ['python class views.py is', '<p>python class views.py is</p>', ''],
  ['with www www.zulip.com/foo ok?', '<p>with www %s ok?</p>', 'www.zulip.com/foo'],
  ['allow questions like foo.com?', '<p>allow questions like %s?</p>', 'foo.com'],
  ['"is.gd/foo/ "', '<p>"%s "</p>', 'is.gd/foo/'],
  ['end of sentence https://t.co.', '<p>end of sentence %s.</p>', 'https://t.co'],
  ['(Something like http://foo.com/blah_blah)', '<p>(Something like %s)</p>', 'http://foo.com/blah_blah'],
  ['"is.gd/foo/"', '<p>"%s"</p>', 'is.gd/foo/'],
  ['end with a quote www.google.com"', '<p>end with a quote %s"</p>', 'www.google.com'],
  ['end with an exclamation www.google.com!', '<p>end with an exclamation %s!</p>', 'www.google.com'],
  ['from http://supervisord.org/running.html:', '<p>from %s:</p>', 'http://supervisord.org/running.html'],
  ['at https://zulip.com/api. Check it!', '<p>at %s. Check it!</p>', 'https://zulip.com/api'],
  ['goo.gl/abc', '<p>%s</p>', 'goo.gl/abc'],
  ['I spent a year at ucl.ac.uk', '<p>I spent a year at %s</p>', 'ucl.ac.uk'],
  ['http://localhost:9991/?show_debug=1', '<p>%s</p>', 'http://localhost:9991/?show_debug=1'],
  ['anyone before? (http://a.cc/i/FMXO)', '<p>anyone before? (%s)</p>', 'http://a.cc/i/FMXO'],
  ['(http://en.wikipedia.org/wiki/Each-way_(bet))', '<p>(%s)</p>', 'http://en.wikipedia.org/wiki/Each-way_(bet)'],
  ['(http://en.wikipedia.org/wiki/Each-way_(bet)_(more_parens))', '<p>(%s)</p>', 'http://en.wikipedia.org/wiki/Each-way_(bet)_(more_parens)'],
  ['http://en.wikipedia.org/wiki/Qt_(framework)', '<p>%s</p>', 'http://en.wikipedia.org/wiki/Qt_(framework)'],
  ['http://fr.wikipedia.org/wiki/Fichier:SMirC-facepalm.svg', '<p>%s</p>', 'http://fr.wikipedia.org/wiki/Fichier:SMirC-facepalm.svg'],
  ['https://jira.atlassian.com/browse/JRA-31953?page=com.atlassian.jira.plugin.system.issuetabpanels:comment-tabpanel', '<p>%s</p>', 'https://jira.atlassian.com/browse/JRA-31953?page=com.atlassian.jira.plugin.system.issuetabpanels:comment-tabpanel'],
  ['http://web.archive.org/web/20120630032016/http://web.mit.edu/mitcard/idpolicies.html', '<p>%s</p>', 'http://web.archive.org/web/20120630032016/http://web.mit.edu/mitcard/idpolicies.html'],
  ['http://www.postgresql.org/message-id/14040.1364490185@sss.pgh.pa.us', '<p>%s</p>', 'http://www.postgresql.org/message-id/14040.1364490185@sss.pgh.pa.us'],
  ['javascript:alert("hi");.com', '<p>javascript:alert("hi");.com</p>', ''],
  ['javascript:foo.com', '<p>javascript:%s</p>', 'foo.com'],
  ['javascript://foo.com', '<p>javascript://foo.com</p>', ''],
  ['foobarscript://foo.com', '<p>foobarscript://foo.com</p>', ''],
  ['about:blank.com', '<p>about:%s</p>', 'blank.com'],
  ['[foo](javascript:foo.com)', '<p>[foo](javascript:%s)</p>', 'foo.com'],
  ['[foo](javascript://foo.com)', '<p>[foo](javascript://foo.com)</p>', ''],
  ['aim:addbuddy?screenname=foo', '<p>aim:addbuddy?screenname=foo</p>', ''],
  ['itms://itunes.com/apps/appname', '<p>itms://itunes.com/apps/appname</p>', ''],
  ['[foo](itms://itunes.com/apps/appname)', '<p>[foo](itms://itunes.com/apps/appname)</p>', ''],
  ['1 [](foo://) 3 [](foo://) 5', '<p>1 [](foo://) 3 [](foo://) 5</p>', ''],
  ['javascript:<i>"foo&bar"</i>', '<p>javascript:&lt;i&gt;"foo&amp;bar"&lt;/i&gt;</p>', ''],
  ['[foo](javascript:<i>"foo&bar"</i>)', '<p>[foo](javascript:&lt;i&gt;"foo&amp;bar"&lt;/i&gt;)</p>', ''],
  ['http://zulip.testserver/#narrow/stream/1-Denmark', '<p><a href="#narrow/stream/1-Denmark">http://zulip.testserver/#narrow/stream/1-Denmark</a></p>', ''],
  ['http://zulip.testserver/https://example.com', '<p>%s</p>', 'http://zulip.testserver/https://example.com'],
  ['a@b.com', '<p>%s</p>', 'a@b.com'],
  ['<a@b.com>', '<p>&lt;%s&gt;</p>', 'a@b.com'],
  ['a@b.com/foo', '<p>a@b.com/foo</p>', ''],
  ['http://leo@foo.com/my/file', '<p>%s</p>', 'http://leo@foo.com/my/file'],
  ['http://example.com/something?with,commas,in,url, but not at end', '<p>%s, but not at end</p>', 'http://example.com/something?with,commas,in,url'],
  ['http://www.yelp.com/biz/taim-mobile-falafel-and-smoothie-truck-new-york#query', '<p>%s</p>', 'http://www.yelp.com/biz/taim-mobile-falafel-and-smoothie-truck-new-york#query'],
  [' some text https://www.google.com/baz_(match)?with=foo&bar=baz with extras', '<p>some text %s with extras</p>', 'https://www.google.com/baz_(match)?with=foo&amp;bar=baz'],
  ['hash it http://foo.com/blah_(wikipedia)_blah#cite-1', '<p>hash it %s</p>', 'http://foo.com/blah_(wikipedia)_blah#cite-1'],
  ['http://technet.microsoft.com/en-us/library/Cc751099.rk20_25_big(l=en-us).mov', '<p>%s</p>', 'http://technet.microsoft.com/en-us/library/Cc751099.rk20_25_big(l=en-us).mov'],
  ['https://metacpan.org/module/Image::Resize::OpenCV', '<p>%s</p>', 'https://metacpan.org/module/Image::Resize::OpenCV'],
  ['foo.com/a::trollface::b', '<p>%s</p>', 'foo.com/a::trollface::b'],
  ['a.commandstuff()', '<p>a.commandstuff()</p>', ''],
  ['love...it', '<p>love...it</p>', ''],
  ['sorry,http://example.com/', '<p>sorry,%s</p>', 'http://example.com/'],
  ['two nested parens https://zulip.com/(we_like_(to_nest_)_nest)_nest', '<p>two nested parens %s</p>', 'https://zulip.com/(we_like_(to_nest_)_nest)_nest'],
  ['six nested parens https://zulip.com/(we_like_((t(d(o(___)o)o))o_nest_)_nest)_nest', '<p>six nested parens %s</p>', 'https://zulip.com/(we_like_((t(d(o(___)o)o))o_nest_)_nest)_nest'],
  ['eight is too many https://zulip.com/(we_like_((t(d(o(_(1(2)1)__)o)o))o_nest_)_nest)_nest', '<p>eight is too many https://zulip.com/(we_like_((t(d(o(_(1(2)1)__)o)o))o_nest_)_nest)_nest</p>', ''],
  ['nested with autodetection zulip.us/(we_like_(to_n(e)st_)_n(es)t)_nest', '<p>nested with autodetection %s</p>', 'zulip.us/(we_like_(to_n(e)st_)_n(es)t)_nest'],
];

// How Zulip's test renders the %s of a linkify case: a link whose href is the sanitised URL.
function linkifyExpected(template: string, text: string): string {
  if (text === '') return template;
  const raw = text.replace(/&amp;/g, '&');
  const href = (raw.includes('@') && !raw.includes('/') ? 'mailto:' + raw : /^[a-z]+:\/\//.test(raw) ? raw : 'http://' + raw).replace(/&/g, '&amp;');
  return template.replace('%s', `<a href="${href}">${text}</a>`);
}

describe('renderMarkdown: Zulip fixture cases', () => {
  for (const [name, input, expected] of ZULIP_CASES) {
    it(name, () => assert.equal(html(input), expected));
  }
  for (const [input, expected] of EMOTICON_CASES) {
    it(`translate_emoticons: ${JSON.stringify(input)}`, () => assert.equal(html(input, { translateEmoticons: true }), expected));
  }
  it('leaves emoticons alone when translate_emoticons is off', () => assert.equal(html(':) ;)'), '<p>:) ;)</p>'));
});

describe('renderMarkdown: Zulip linkify cases', () => {
  for (const [input, template, text] of LINKIFY_CASES) {
    it(JSON.stringify(input), () => assert.equal(html(input), linkifyExpected(template, text)));
  }
});

// The parser itself is tested in test/lib/timestamp.test.ts.
const LEAP_DAY = Date.UTC(2024, 1, 29, 15, 4, 5);
describe('renderMarkdown: <time:...>', () => {
  it('takes today from the context clock', () => {
    assert.equal(html('<time:10:30>', { nowMs: () => LEAP_DAY }), '<p><time datetime="2024-02-29T10:30:00Z">10:30</time></p>');
  });
});

describe('renderMarkdown: block quotes take the rest of their block (Python-Markdown)', () => {
  const CASES: [string, string, string][] = [
    ['a line after empty quote lines', '>\n>\nsome text', '<blockquote>\n<p>some text</p>\n</blockquote>'],
    ['a line after a heading', '> # Title\ntext', '<blockquote>\n<h1>Title</h1>\n<p>text</p>\n</blockquote>'],
    ['lazy lines in a quoted list', '> * a\n>   b\nc', '<blockquote>\n<ul>\n<li>a<br>\n  b<br>\nc</li>\n</ul>\n</blockquote>'],
    ['an inner quote of empty lines', '>>\n>\ntext', '<blockquote>\n<p>&gt;</p>\n<p>text</p>\n</blockquote>'],
    ['but not past a blank line', '> a\n\nb', '<blockquote>\n<p>a</p>\n</blockquote>\n<p>b</p>'],
    ['nor into a fence', '> a\n```\ncode\n```', '<blockquote>\n<p>a</p>\n</blockquote>\n<div class="codehilite"><pre><span></span><code>code\n</code></pre></div>'],
    ['and empty quote lines alone stay text', '>\n>\n\ntext', '<p>&gt;<br>\n&gt;</p>\n<p>text</p>'],
  ];
  for (const [name, input, expected] of CASES) it(name, () => assert.equal(html(input), expected));
  it('silences a mention on a line carried into the quote', () => {
    assert.equal(html('>\n>\n@**King Hamlet**'), '<blockquote>\n<p><span class="user-mention silent" data-user-id="12">King Hamlet</span></p>\n</blockquote>');
  });
});

describe('renderMarkdown: list items', () => {
  const CASES: [string, string, string][] = [
    ['a nested item keeps indentation beyond its list', '* a\n  * b\n    c', '<ul>\n<li>a<ul>\n<li>b<br>\n  c</li>\n</ul>\n</li>\n</ul>'],
    ['so does a numbered item', '1. a\n   b', '<ol>\n<li>a<br>\n   b</li>\n</ol>'],
    ['a later paragraph of the item does not', '* a\n\n  b\n  c', '<ul>\n<li>\n<p>a</p>\n<p>b<br>\nc</p>\n</li>\n</ul>'],
    // Python-Markdown numbers items with "1." only.
    ['"1)" is text', '1) one\n2) two', '<p>1) one<br>\n2) two</p>'],
    ['"1)" under a paragraph is text', 'para\n1) x', '<p>para<br>\n1) x</p>'],
    ['"2)" after an item continues it', '1. a\n2) b', '<ol>\n<li>a<br>\n2) b</li>\n</ol>'],
    ['"1)" after a blank line is a paragraph', '1. a\n\n2) b', '<ol>\n<li>a</li>\n</ol>\n<p>2) b</p>'],
  ];
  for (const [name, input, expected] of CASES) it(name, () => assert.equal(html(input), expected));
});

const hamlet = '<span class="user-mention" data-user-id="12">@King Hamlet</span>';

describe('renderMarkdown: user mentions', () => {
  it('renders @**Full Name** and records the user', () => {
    const r = renderMarkdown('hi @**King Hamlet**', context());
    assert.equal(r.html, `<p>hi ${hamlet}</p>`);
    assert.deepEqual([...r.mentionedUserIds], [12]);
  });
  it('matches names case-insensitively through the context and shows the real name', () => {
    assert.equal(html('@**king hamlet**'), `<p>${hamlet}</p>`);
  });
  it('takes @**Name|id** and @**|id**', () => {
    const r = renderMarkdown('@**King Hamlet|16** and @**|13**', context());
    assert.equal(r.html, '<p><span class="user-mention" data-user-id="16">@King Hamlet</span> and <span class="user-mention" data-user-id="13">@Othello, the Moor of Venice</span></p>');
    assert.deepEqual([...r.mentionedUserIds].sort(), [13, 16]);
  });
  it('refuses @**Name|id** when the name is not that user’s', () => {
    const r = renderMarkdown('@**Othello|12**', context());
    assert.equal(r.html, '<p>@<strong>Othello|12</strong></p>');
    assert.equal(r.mentionedUserIds.size, 0);
  });
  it('renders silent mentions without "@" and does not record them', () => {
    const r = renderMarkdown('@_**King Hamlet**', context());
    assert.equal(r.html, '<p><span class="user-mention silent" data-user-id="12">King Hamlet</span></p>');
    assert.equal(r.mentionedUserIds.size, 0);
  });
  it('makes a mention of a deactivated user silent', () => {
    const r = renderMarkdown('@**Gone Away**', context());
    assert.equal(r.html, '<p><span class="user-mention silent" data-user-id="15">Gone Away</span></p>');
    assert.equal(r.mentionedUserIds.size, 0);
  });
  it('leaves unknown names as text (the ** then make it bold, as in Zulip)', () => {
    const r = renderMarkdown('@**Nobody Here** @_**Nobody**', context());
    assert.equal(r.html, '<p>@<strong>Nobody Here</strong> @_<strong>Nobody</strong></p>');
    assert.equal(r.mentionedUserIds.size, 0);
  });
  it('needs whitespace or an opening delimiter before the @', () => {
    assert.equal(html('mail@**King Hamlet**'), '<p>mail@<strong>King Hamlet</strong></p>');
    assert.equal(html('(@**King Hamlet**)'), `<p>(${hamlet})</p>`);
    assert.equal(html('"@**King Hamlet**"'), `<p>"${hamlet}"</p>`);
  });
  it('silences every mention inside a quote', () => {
    const r = renderMarkdown('> @**King Hamlet** said\n\n```quote\n@**Othello, the Moor of Venice** @*support* @**all**\n```', context());
    assert.equal(
      r.html,
      '<blockquote>\n<p><span class="user-mention silent" data-user-id="12">King Hamlet</span> said</p>\n</blockquote>\n' +
        '<blockquote>\n<p><span class="user-mention silent" data-user-id="13">Othello, the Moor of Venice</span> ' +
        '<span class="user-group-mention silent" data-user-group-id="3">support</span> ' +
        '<span class="user-mention channel-wildcard-mention silent" data-user-id="*">all</span></p>\n</blockquote>',
    );
    assert.equal(r.mentionedUserIds.size, 0);
    assert.equal(r.mentionedGroupIds.size, 0);
    assert.equal(r.wildcardChannel, false);
  });
  it('escapes names', () => {
    assert.equal(html('@**|17**'), '<p><span class="user-mention" data-user-id="17">@&lt;b&gt;Evil&lt;/b&gt; &amp; "Co"</span></p>');
  });
  it('does not mention from code', () => {
    const r = renderMarkdown('`@**King Hamlet**`\n\n```\n@**King Hamlet** @**all** @*support*\n```\n\n    @**King Hamlet**', context());
    assert.equal(
      r.html,
      '<p><code>@**King Hamlet**</code></p>\n' +
        '<div class="codehilite"><pre><span></span><code>@**King Hamlet** @**all** @*support*\n</code></pre></div>\n' +
        '<div class="codehilite"><pre><span></span><code>@**King Hamlet**\n</code></pre></div>',
    );
    assert.equal(r.mentionedUserIds.size, 0);
    assert.equal(r.mentionedGroupIds.size, 0);
    assert.equal(r.wildcardChannel, false);
  });
  it('works inside emphasis, lists and links text', () => {
    const r = renderMarkdown('* *hey @**King Hamlet***\n* **hi @**|13****\n* [see @**all**](https://a.example)', context());
    assert.equal(r.wildcardChannel, true);
    assert.deepEqual([...r.mentionedUserIds].sort(), [12, 13]);
  });
});

describe('renderMarkdown: wildcard mentions', () => {
  for (const name of ['all', 'everyone', 'channel', 'stream']) {
    it(`@**${name}** is a channel wildcard`, () => {
      const r = renderMarkdown(`@**${name}** hello`, context());
      assert.equal(r.html, `<p><span class="user-mention channel-wildcard-mention" data-user-id="*">@${name}</span> hello</p>`);
      assert.equal(r.wildcardChannel, true);
      assert.equal(r.wildcardTopic, false);
      assert.equal(r.mentionedUserIds.size, 0);
    });
  }
  it('@**topic** is a topic wildcard', () => {
    const r = renderMarkdown('@**topic** hello', context());
    assert.equal(r.html, '<p><span class="topic-mention">@topic</span> hello</p>');
    assert.equal(r.wildcardTopic, true);
    assert.equal(r.wildcardChannel, false);
  });
  it('silent wildcards set no flag', () => {
    const r = renderMarkdown('@_**all** @_**topic**', context());
    assert.equal(r.html, '<p><span class="user-mention channel-wildcard-mention silent" data-user-id="*">all</span> <span class="topic-mention silent">topic</span></p>');
    assert.equal(r.wildcardChannel, false);
    assert.equal(r.wildcardTopic, false);
  });
  it('is case-sensitive, like Zulip', () => {
    const r = renderMarkdown('@**All**', context());
    assert.equal(r.html, '<p>@<strong>All</strong></p>');
    assert.equal(r.wildcardChannel, false);
  });
});

describe('renderMarkdown: user group mentions', () => {
  it('renders @*group* and records it', () => {
    const r = renderMarkdown('ping @*Backend Team*', context());
    assert.equal(r.html, '<p>ping <span class="user-group-mention" data-user-group-id="4">@backend team</span></p>');
    assert.deepEqual([...r.mentionedGroupIds], [4]);
  });
  it('renders silent and deactivated groups silently', () => {
    const r = renderMarkdown('@_*support* @*retired*', context());
    assert.equal(r.html, '<p><span class="user-group-mention silent" data-user-group-id="3">support</span> <span class="user-group-mention silent" data-user-group-id="5">retired</span></p>');
    assert.equal(r.mentionedGroupIds.size, 0);
  });
  it('leaves unknown groups as text', () => {
    assert.equal(html('@*nobody*'), '<p>@<em>nobody</em></p>');
  });
});

describe('renderMarkdown: channel and topic links', () => {
  it('links #**channel**', () => {
    const r = renderMarkdown('see #**Verona**', context());
    assert.equal(r.html, '<p>see <a class="stream" data-stream-id="9" href="/#narrow/channel/9-Verona">#Verona</a></p>');
    assert.equal(r.hasLink, true);
  });
  it('links #**channel>topic** with Zulip’s hash encoding', () => {
    assert.equal(
      html('#**Verona>lunch (today) 100%.**'),
      '<p><a class="stream-topic" data-stream-id="9" href="/#narrow/channel/9-Verona/topic/lunch.20.28today.29.20100.25.2E">#Verona &gt; lunch (today) 100%.</a></p>',
    );
    assert.equal(
      html('#**Denmark & co (old).>é**'),
      '<p><a class="stream-topic" data-stream-id="10" href="/#narrow/channel/10-Denmark-.26-co-.28old.29.2E/topic/.C3.A9">#Denmark &amp; co (old). &gt; é</a></p>',
    );
  });
  it('adds the topic permalink when the context knows it', () => {
    assert.equal(
      html('#**Verona>lunch**', { topicPermalinkMessageId: (id, topic) => (id === 9 && topic === 'lunch' ? 42 : null) }),
      '<p><a class="stream-topic" data-stream-id="9" href="/#narrow/channel/9-Verona/topic/lunch/with/42">#Verona &gt; lunch</a></p>',
    );
  });
  it('links #**channel>topic@id** to the message', () => {
    assert.equal(html('#**Verona>lunch@123**'), '<p><a class="message-link" href="/#narrow/channel/9-Verona/topic/lunch/near/123">#Verona &gt; lunch @ 💬</a></p>');
  });
  it('links the empty topic, shown as "general chat"', () => {
    assert.equal(html('#**Verona>**'), '<p><a class="stream-topic" data-stream-id="9" href="/#narrow/channel/9-Verona/topic/">#Verona &gt; <em>general chat</em></a></p>');
    assert.equal(html('#**Verona>@5**'), '<p><a class="message-link" href="/#narrow/channel/9-Verona/topic//near/5">#Verona &gt; <em>general chat</em> @ 💬</a></p>');
  });
  it('escapes channel names', () => {
    assert.equal(html('#**<script>**'), '<p><a class="stream" data-stream-id="11" href="/#narrow/channel/11-.3Cscript.3E">#&lt;script&gt;</a></p>');
  });
  it('leaves unknown channels as text', () => {
    const r = renderMarkdown('#**nowhere** #**nowhere>x**', context());
    assert.equal(r.html, '<p>#<strong>nowhere</strong> #<strong>nowhere&gt;x</strong></p>');
    assert.equal(r.hasLink, false);
  });
  it('does not link after "[" or inside a word', () => {
    assert.equal(html('a#**Verona**'), '<p>a#<strong>Verona</strong></p>');
    assert.equal(html('[#**Verona**'), '<p>[#<strong>Verona</strong></p>');
  });
});

describe('renderMarkdown: emoji', () => {
  it('renders :name: with Zulip’s names, aliases keep the name typed', () => {
    assert.equal(html(':thumbs_up: :+1: :octopus: :tada: :heart: :joy: :check: :working_on_it:'), `<p>${emoji('1f44d', 'thumbs_up')} ${emoji('1f44d', '+1')} ${emoji('1f419', 'octopus')} ${emoji('1f389', 'tada')} ${emoji('2764', 'heart')} ${emoji('1f602', 'joy')} ${emoji('2705', 'check')} ${emoji('1f6e0', 'working_on_it')}</p>`);
  });
  it('prefers realm emoji', () => {
    assert.equal(
      html(':smile: :party_parrot:', { realmEmojiByName: (n) => (n === 'smile' || n === 'party_parrot' ? { id: 7, name: n, source_url: '/user_avatars/2/emoji/images/7.gif' } : null) }),
      '<p><img alt=":smile:" class="emoji" src="/user_avatars/2/emoji/images/7.gif" title="smile"> <img alt=":party_parrot:" class="emoji" src="/user_avatars/2/emoji/images/7.gif" title="party parrot"></p>',
    );
  });
  it('does not touch emoji in code or link text', () => {
    assert.equal(html('`:smile:` [:smile: 💩](https://example.com)'), '<p><code>:smile:</code> <a href="https://example.com">:smile: 💩</a></p>');
  });
  it('leaves text-style symbols and skin tones alone', () => {
    assert.equal(html('❤ ↔ 1 # 👍🏽'), '<p>❤ ↔ 1 # 👍🏽</p>');
  });
});

describe('renderMarkdown: linkifiers', () => {
  const linkifiers = [
    { pattern: '#(?P<id>[0-9]+)', url_template: 'https://trac.example.com/ticket/{id}' },
    { pattern: '(?P<org>[a-z]+)/(?P<repo>[a-z]+)#(?P<id>[0-9]+)', url_template: 'https://github.com/{org}/{repo}/issues/{id}' },
    { pattern: 'FOO-(?P<id>[A-Z ]+)', url_template: 'https://foo.example.com/{id}' },
    { pattern: 'JS-(?P<id>[0-9]+)', url_template: 'javascript:alert({id})' },
    { pattern: 'BAD-(?P<id>[0-9]+', url_template: 'https://bad.example.com/{id}' },
    { pattern: 'TK(?P<id>[0-9]+)', url_template: 'https://example.com/{?id}' },
  ];
  it('links matches with the URL template, in order', () => {
    const r = renderMarkdown('fixes #123, see zulip/zulip#45 and (#7).', context({ linkifiers }));
    assert.equal(
      r.html,
      '<p>fixes <a href="https://trac.example.com/ticket/123">#123</a>, see zulip/zulip<a href="https://trac.example.com/ticket/45">#45</a> and (<a href="https://trac.example.com/ticket/7">#7</a>).</p>'.replace(
        'zulip/zulip<a href="https://trac.example.com/ticket/45">#45</a>',
        '<a href="https://github.com/zulip/zulip/issues/45">zulip/zulip#45</a>',
      ),
    );
    assert.equal(r.hasLink, true);
  });
  it('percent-encodes values and supports template operators', () => {
    assert.equal(html('FOO-A B', { linkifiers }), '<p><a href="https://foo.example.com/A%20B">FOO-A B</a></p>');
    assert.equal(html('TK12', { linkifiers }), '<p><a href="https://example.com/?id=12">TK12</a></p>');
  });
  it('needs a boundary before and after the match', () => {
    assert.equal(html('abc#123 #123abc', { linkifiers }), '<p>abc#123 #123abc</p>');
  });
  it('never makes javascript: links and skips invalid patterns', () => {
    assert.equal(html('JS-1 BAD-2', { linkifiers }), '<p>JS-1 BAD-2</p>');
  });
  it('does not run inside code or links', () => {
    assert.equal(html('`#1` [#2](https://x.example) https://x.example/#3', { linkifiers }), '<p><code>#1</code> <a href="https://x.example">#2</a> <a href="https://x.example/#3">https://x.example/#3</a></p>');
  });
});

describe('renderMarkdown: no raw HTML, no script URLs', () => {
  const XSS: [string, string][] = [
    ['<img src=x onerror=alert(1)>', '<p>&lt;img src=x onerror=alert(1)&gt;</p>'],
    ['<a href="javascript:alert(1)">x</a>', '<p>&lt;a href="javascript:alert(1)"&gt;x&lt;/a&gt;</p>'],
    ['<div>\n<script>alert(1)</script>\n</div>', '<p>&lt;div&gt;<br>\n&lt;script&gt;alert(1)&lt;/script&gt;<br>\n&lt;/div&gt;</p>'],
    ['[x](javascript:alert(1))', '<p>[x](javascript:alert(1))</p>'],
    ['[x](JaVaScRiPt:alert(1))', '<p>[x](JaVaScRiPt:alert(1))</p>'],
    ['[x](&#106;avascript:alert(1))', '<p>[x](javascript:alert(1))</p>'],
    ['[x](data:text/html;base64,PHNjcmlwdD4=)', '<p>[x](data:text/html;base64,PHNjcmlwdD4=)</p>'],
    ['[x](vbscript:msgbox)', '<p>[x](vbscript:msgbox)</p>'],
    ['[x](<javascript:alert(1)>)', '<p>[x](&lt;javascript:alert(1)&gt;)</p>'],
    ['[x](https://a.example/"onmouseover="alert(1))', '<p><a href="https://a.example/&quot;onmouseover=&quot;alert(1)">x</a></p>'],
    ['![x](javascript:alert(1))', '<p>![x](javascript:alert(1))</p>'],
    ['&lt;script&gt; &#60;b&#62; &amp;', '<p>&lt;script&gt; &lt;b&gt; &amp;</p>'],
    ['<javascript:alert(1)>', '<p>&lt;javascript:alert(1)&gt;</p>'],
    // Not a fence (Zulip's language syntax excludes quotes); the bare closing fence is an empty block.
    ['``` "onclick="x\ny\n```', '<p>``` "onclick="x<br>\ny</p>'],
    ['```c#\n<script>\n```', '<div class="codehilite" data-code-language="C#"><pre><span></span><code>&lt;script&gt;\n</code></pre></div>'],
    ['<time:"><script>>', '<p><span class="timestamp-error">Invalid time format: "</span>&lt;script&gt;&gt;</p>'],
  ];
  for (const [input, expected] of XSS) {
    it(JSON.stringify(input), () => assert.equal(html(input), expected));
  }
});

describe('renderMarkdown: result flags', () => {
  it('reports links, including channel links', () => {
    assert.equal(renderMarkdown('plain', context()).hasLink, false);
    assert.equal(renderMarkdown('see example.com', context()).hasLink, true);
    assert.equal(renderMarkdown('[x](https://a.example)', context()).hasLink, true);
  });
  it('reports images outside quotes', () => {
    assert.equal(renderMarkdown('https://example.com/cat.PNG', context()).hasImage, true);
    assert.equal(renderMarkdown('[cat](/user_uploads/2/ab/cat.jpeg)', context()).hasImage, true);
    assert.equal(renderMarkdown('> https://example.com/cat.png', context()).hasImage, false);
    assert.equal(renderMarkdown('https://example.com/cat.txt', context()).hasImage, false);
  });
  it('reports uploads on this realm, each path once', () => {
    const r = renderMarkdown(
      '[a](/user_uploads/2/ab/a.pdf) [a again](/user_uploads/2/ab/a.pdf) http://zulip.testserver/user_uploads/2/cd/b%20c.txt https://other.example/user_uploads/2/ef/c.txt [d](user_uploads/2/gh/d.txt)',
      context(),
    );
    assert.equal(r.hasAttachment, true);
    assert.deepEqual(r.linkedUploadPaths, ['2/ab/a.pdf', '2/cd/b%20c.txt']);
    assert.match(r.html, /<a href="user_uploads\/2\/cd\/b%20c.txt">http:\/\/zulip.testserver\/user_uploads\/2\/cd\/b%20c.txt<\/a>/);
  });
  it('reports nothing for code', () => {
    const r = renderMarkdown('```\nhttps://example.com/x.png /user_uploads/1/a/b.pdf\n```', context());
    assert.deepEqual({ ...r, html: '' }, { html: '', mentionedUserIds: new Set(), mentionedGroupIds: new Set(), wildcardChannel: false, wildcardTopic: false, hasLink: false, hasImage: false, hasAttachment: false, linkedUploadPaths: [] });
  });
});

describe('renderMarkdown: robustness', () => {
  // Deterministic pseudo-random input built from Markdown- and Zulip-significant pieces.
  const PIECES = ['*', '**', '_', '`', '```', '~~~', '~~', '>', '#', '# ', '@', '@**', '@*', '#**', '**', '|', ':', ':smile:', '[', ']', '(', ')', '<', '>', '&', '&amp;', '\\', '\n', '\n\n', ' ', '  ', '    ', '- ', '1. ', 'http://', 'https://a.example/', 'javascript:', 'King Hamlet', 'Verona', 'support', 'all', 'quote', 'spoiler', 'x', 'é', '💩', '\u200d', '\uFE0F', '\u0000', '<script>', '"', "'", 'user_uploads/', '<time:', '$$', '|-|'];
  let seed = 12345;
  const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  it('never throws and never emits script or javascript: links (2000 random messages)', () => {
    for (let n = 0; n < 2000; n++) {
      let input = '';
      const len = Math.floor(random() * 60);
      for (let i = 0; i < len; i++) input += PIECES[Math.floor(random() * PIECES.length)];
      const r = renderMarkdown(input, context({ linkifiers: [{ pattern: '#(?P<id>[0-9a-z]+)', url_template: 'https://t.example/{id}' }], onError: (e) => assert.fail(`internal error on ${JSON.stringify(input)}: ${String(e)}`) }));
      assert.equal(typeof r.html, 'string');
      assert.doesNotMatch(r.html, /<script|href="\s*javascript:|<img(?! alt=":)/i, JSON.stringify(input));
    }
  });
  it('survives lookups that throw', () => {
    const r = renderMarkdown('@**King Hamlet**', context({ userByName: () => { throw new Error('db down'); } }));
    assert.equal(r.html, '<p>@**King Hamlet**</p>');
  });
  it('keeps the HTML small: math past the message\'s KaTeX budget stays source', () => {
    // 660 of these made 1.4 MB of HTML (past MAX_RENDER_OUTPUT, so the message fell back to plain
    // text); each costs 24 of the 2000 budget units, so 83 render and the rest show their source.
    const errors: unknown[] = [];
    const input = ' $$\\sqrt{x^2}$$'.repeat(660);
    const r = renderMarkdown(input, context({ onError: (e) => errors.push(e) }));
    assert.equal(errors.length, 0);
    assert.equal(r.html.split('<span class="katex">').length - 1, Math.floor(MAX_TEX_COST_PER_MESSAGE / 24));
    assert.equal(r.html.split('<span class="tex-error">$$\\sqrt{x^2}$$</span>').length - 1, 660 - Math.floor(MAX_TEX_COST_PER_MESSAGE / 24));
    assert.ok(r.html.length < MAX_RENDER_OUTPUT, `got ${r.html.length} characters`);
  });
  it('cuts input at MAX_RENDER_INPUT characters', () => {
    assert.equal(html('a'.repeat(MAX_RENDER_INPUT + 50)), `<p>${'a'.repeat(MAX_RENDER_INPUT)}</p>`);
  });
  it('renders pathological input quickly', () => {
    const N = MAX_RENDER_INPUT;
    const inputs = ['*a'.repeat(N / 2), '@**'.repeat(N / 3), '['.repeat(N), '[a]('.repeat(N / 4), '>'.repeat(N), '```quote\n'.repeat(N / 9), 'a.com/' + '('.repeat(N), ('x.com/' + '(a'.repeat(900) + ' ').repeat(5), ':a'.repeat(N / 2), '`a``'.repeat(N / 4), '~~a'.repeat(N / 3)];
    for (const input of inputs) {
      const start = performance.now();
      renderMarkdown(input, context({ onError: (e) => assert.fail(String(e)) }));
      assert.ok(performance.now() - start < 1500, `too slow: ${JSON.stringify(input.slice(0, 20))}`);
    }
  });
});

describe('sanitizeUrl', () => {
  const CASES: [string, string | null][] = [
    ['https://example.com/a?b#c', 'https://example.com/a?b#c'],
    ['HTTP://Example.com', 'http://Example.com'],
    ['example.com', 'http://example.com'],
    ['a@b.com', 'mailto:a@b.com'],
    ['/user_uploads/1/x', '/user_uploads/1/x'],
    ['#narrow/stream/1', '#narrow/stream/1'],
    ['mailto:a@b.com', 'mailto:a@b.com'],
    ['tel:+1', 'tel:+1'],
    ['a b', 'http://a%20b'],
    ['javascript:alert(1)', null],
    [' javascript:alert(1)', 'http://%20javascript:alert(1)'],
    ['java\tscript:alert(1)', null],
    ['data:text/html,x', null],
    ['vbscript:x', null],
    ['foo://bar', null],
  ];
  for (const [url, expected] of CASES) it(JSON.stringify(url), () => assert.equal(sanitizeUrl(url), expected));
});

describe('expandUriTemplate', () => {
  it('expands RFC 6570 levels 1-3', () => {
    const vars = { id: 'a b/c', x: '1', empty: '' };
    assert.equal(expandUriTemplate('https://e.com/{id}', vars), 'https://e.com/a%20b%2Fc');
    assert.equal(expandUriTemplate('https://e.com/{+id}', vars), 'https://e.com/a%20b/c');
    assert.equal(expandUriTemplate('https://e.com/x{#id}', vars), 'https://e.com/x#a%20b/c');
    assert.equal(expandUriTemplate('https://e.com{/x,id}', vars), 'https://e.com/1/a%20b%2Fc');
    assert.equal(expandUriTemplate('https://e.com/{?x,missing,empty}', vars), 'https://e.com/?x=1&empty=');
    assert.equal(expandUriTemplate('https://e.com/{missing}', vars), 'https://e.com/');
  });
});

describe('topicLinks', () => {
  const linkifiers = [
    { pattern: '#(?P<id>[0-9]+)', url_template: 'https://trac.example.com/ticket/{id}' },
    { pattern: '(?P<org>[a-z]+)/(?P<repo>[a-z]+)#(?P<id>[0-9]+)', url_template: 'https://github.com/{org}/{repo}/issues/{id}' },
  ];
  it('links bare URLs, adding https:// where there is no scheme', () => {
    assert.deepEqual(topicLinks('https://google.com/hello-world', []), [{ url: 'https://google.com/hello-world', text: 'https://google.com/hello-world' }]);
    assert.deepEqual(topicLinks('Without scheme google.com/hello-world', []), [{ url: 'https://google.com/hello-world', text: 'google.com/hello-world' }]);
    assert.deepEqual(topicLinks('Without scheme random.words/hello-world', []), []);
    assert.deepEqual(topicLinks('Try out http://ftp.debian.org, https://google.com/ and https://google.in/.', []), [
      { url: 'http://ftp.debian.org', text: 'http://ftp.debian.org' },
      { url: 'https://google.com/', text: 'https://google.com/' },
      { url: 'https://google.in/', text: 'https://google.in/' },
    ]);
  });
  it('applies linkifiers in order, earlier ones winning overlaps, sorted by position', () => {
    assert.deepEqual(topicLinks('zulip/zulip#45 then #123 and #1#2', linkifiers), [
      { url: 'https://github.com/zulip/zulip/issues/45', text: 'zulip/zulip#45' },
      { url: 'https://trac.example.com/ticket/123', text: '#123' },
      { url: 'https://trac.example.com/ticket/1', text: '#1' },
    ]);
    assert.deepEqual(topicLinks('#7 https://x.example/#8', linkifiers), [
      { url: 'https://trac.example.com/ticket/7', text: '#7' },
      { url: 'https://x.example/#8', text: 'https://x.example/#8' },
    ]);
  });
});

// Zulip's InlineInterestingLinkProcessor for images (zerver/tests/test_markdown.py's inline image
// cases), without thumbnails and without camo: the preview shows the file itself.
describe('renderMarkdown: inline image previews', () => {
  const preview = (href: string, src = href, title?: string) =>
    `<div class="message_inline_image"><a href="${href}"${title === undefined ? '' : ` title="${title}"`}><img src="${src}"></a></div>`;
  const A = 'http://imaging.nikon.com/lineup/dslr/df/img/sample/img_01.jpg';
  const B = 'http://imaging.nikon.com/lineup/dslr/df/img/sample/img_02.jpg';
  const link = (url: string, text = url) => `<a href="${url}">${text}</a>`;
  const cases: [string, string, string][] = [
    ['a bare image link becomes its preview', 'http://cdn.wallpapersafari.com/13/6/16eVjx.jpeg', preview('http://cdn.wallpapersafari.com/13/6/16eVjx.jpeg')],
    [
      'a link among text keeps its paragraph; the preview follows it',
      'Google logo today: https://www.google.com/images/srpr/logo4w.png\nKinda boring',
      `<p>Google logo today: ${link('https://www.google.com/images/srpr/logo4w.png')}<br>\nKinda boring</p>\n${preview('https://www.google.com/images/srpr/logo4w.png')}`,
    ],
    ['previews keep the order of their links', `${A}\n${B}`, `<p>${link(A)}<br>\n${link(B)}</p>\n${preview(A)}${preview(B)}`],
    ['each paragraph gets its own', `${A}\n\n**Hello World**\n\n${B}`, `${preview(A)}<p><strong>Hello World</strong></p>\n${preview(B)}`],
    [
      'an uploaded image: a named link keeps its paragraph, its name is the title',
      '[image.png](/user_uploads/2/ab/xyz/image.png)',
      `<p>${link('/user_uploads/2/ab/xyz/image.png', 'image.png')}</p>\n${preview('/user_uploads/2/ab/xyz/image.png', '/user_uploads/2/ab/xyz/image.png', 'image.png')}`,
    ],
    [
      'an absolute link to this server is made relative; its text is the title',
      'http://zulip.testserver/user_uploads/2/ab/c/x.png',
      `<p>${link('user_uploads/2/ab/c/x.png', 'http://zulip.testserver/user_uploads/2/ab/c/x.png')}</p>\n${preview('user_uploads/2/ab/c/x.png', 'user_uploads/2/ab/c/x.png', 'http://zulip.testserver/user_uploads/2/ab/c/x.png')}`,
    ],
    [
      'in a list item the preview ends the item, replacing a bare link',
      '* https://example.com/a.png\n* see https://example.com/b.png',
      `<ul>\n<li>${preview('https://example.com/a.png')}</li>\n<li>see ${link('https://example.com/b.png')}${preview('https://example.com/b.png')}</li>\n</ul>`,
    ],
    ['in a loose list, after the item’s paragraph', '* a\n\n* https://example.com/a.png', `<ul>\n<li>\n<p>a</p>\n</li>\n<li>\n${preview('https://example.com/a.png')}</li>\n</ul>`],
    ['never for quoted links', '> https://example.com/q.png', `<blockquote>\n<p>${link('https://example.com/q.png')}</p>\n</blockquote>`],
    [
      'a link inside other markup is previewed at the end of the message',
      '**[a](https://example.com/s.png)** after\n\ntext',
      `<p><strong>${link('https://example.com/s.png', 'a')}</strong> after</p>\n<p>text</p>\n${preview('https://example.com/s.png', 'https://example.com/s.png', 'a')}`,
    ],
    ['a heading’s link too', '# https://e.com/h.png\ntext', `<h1>${link('https://e.com/h.png')}</h1>\n<p>text</p>\n${preview('https://e.com/h.png')}`],
    [
      'a Wikipedia file page shows the file',
      'https://en.wikipedia.org/wiki/File:Example.jpg',
      preview('https://en.wikipedia.org/wiki/Special:FilePath/File:Example.jpg'),
    ],
    [
      'a GitHub blob shows its raw file',
      'https://github.com/zulip/zulip/blob/main/static/images/logo/zulip-icon-128x128.png',
      preview('https://github.com/zulip/zulip/blob/main/static/images/logo/zulip-icon-128x128.png', 'https://raw.githubusercontent.com/zulip/zulip/main/static/images/logo/zulip-icon-128x128.png'),
    ],
    [
      'titles and URLs are escaped',
      '[x "y" <z>](https://e.com/a.png?x=1&y=2)',
      `<p><a href="https://e.com/a.png?x=1&amp;y=2">x "y" &lt;z&gt;</a></p>\n${preview('https://e.com/a.png?x=1&amp;y=2', 'https://e.com/a.png?x=1&amp;y=2', 'x &quot;y&quot; &lt;z&gt;')}`,
    ],
    ['one preview per distinct URL', `${A} ${A}`, `<p>${link(A)} ${link(A)}</p>\n${preview(A)}`],
    ['not for other files, nor pasteboard.co pages', 'https://e.com/a.pdf https://pasteboard.co/x.png', `<p>${link('https://e.com/a.pdf')} ${link('https://pasteboard.co/x.png')}</p>`],
  ];
  for (const [name, input, expected] of cases) {
    it(name, () => {
      const r = renderMarkdown(input, context());
      assert.equal(r.html, expected);
      assert.equal(r.hasImage, expected.includes('message_inline_image'));
    });
  }

  it('makes none past 24 distinct links, nor when the organization turned previews off', () => {
    const many = Array.from({ length: 25 }, (_, i) => `https://e.com/${i}.png`).join(' ');
    const r = renderMarkdown(many, context());
    assert.equal(r.html.includes('message_inline_image'), false);
    assert.equal(r.hasImage, false);
    const off = renderMarkdown('https://e.com/a.png', context({ inlineImagePreview: false }));
    assert.deepEqual([off.html, off.hasImage, off.hasLink], [`<p>${link('https://e.com/a.png')}</p>`, false, true]);
  });

  it('still counts the link and the upload of a paragraph the preview replaced', () => {
    const r = renderMarkdown('[pic](/user_uploads/2/ab/pic.png)', context());
    assert.deepEqual([r.hasLink, r.hasAttachment, r.linkedUploadPaths], [true, true, ['2/ab/pic.png']]);
    const bare = renderMarkdown('/user_uploads/2/ab/pic.png', context());
    assert.equal(bare.hasImage, bare.html.includes('message_inline_image'));
  });

  it('previews 24 links, one in each list item', () => {
    const input = Array.from({ length: 24 }, (_, i) => `* https://e.com/${i}.png\n`).join('');
    const r = renderMarkdown(input, context());
    assert.equal(r.html.split('message_inline_image').length - 1, 24);
  });
});
