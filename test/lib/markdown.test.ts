// renderMarkdown against Zulip's own expectations: cases taken from Zulip's
// zerver/tests/fixtures/markdown_test_cases.json (regular_tests and linkify_tests; where Zulip
// highlights code with Pygments we compare with its unhighlighted "marked_expected_output"),
// then Zulip's mention/link syntax, XSS, linkifiers, the result flags, and fuzzing.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
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

const smile = '<span aria-label="smile" class="emoji emoji-1f642" role="img" title="smile">:smile:</span>';
const emoji = (code: string, name: string, title = name.replace(/_/g, ' ')) =>
  `<span aria-label="${title}" class="emoji emoji-${code}" role="img" title="${title}">:${name}:</span>`;

// [name, input, expected] from Zulip's markdown_test_cases.json "regular_tests".
const ZULIP_CASES: [string, string, string][] = [
  ['empty', '', ''],
  ['codeblock_hilite_python (marked)', 'Hamlet said:\n~~~~.python \ndef speak(self):\n    x = 1\n~~~~', '<p>Hamlet said:</p>\n<div class="codehilite" data-code-language="Python"><pre><span></span><code>def speak(self):\n    x = 1\n</code></pre></div>'],
  ['codeblock_hilite_invented_language', '``` inventedlanguage\ndef speak(self):\n    x = 1\n```', '<div class="codehilite" data-code-language="inventedlanguage"><pre><span></span><code>def speak(self):\n    x = 1\n</code></pre></div>'],
  ['codeblock_canonicalize_lang_alias (marked)', '``` py2\ndef speak(self):\n    x = 1\n```', '<div class="codehilite" data-code-language="Python 2.x"><pre><span></span><code>def speak(self):\n    x = 1\n</code></pre></div>'],
  ['ampampamp', '& &amp; &amp;amp;\n~~~~\n& &amp; &amp;amp;\n~~~~\n    & &amp; &amp;amp;', '<p>&amp; &amp; &amp;amp;</p>\n<div class="codehilite"><pre><span></span><code>&amp; &amp;amp; &amp;amp;amp;\n</code></pre></div>\n<div class="codehilite"><pre><span></span><code>&amp; &amp;amp; &amp;amp;amp;\n</code></pre></div>'],
  ['basic_paragraph', 'test_input', '<p>test_input</p>'],
  ['codeblock_multiline', 'Hamlet once said\n~~~~\ndef func():\n    x = 1\n\n    y = 2\n\n    z = 3\n~~~~\nAnd all was good.', '<p>Hamlet once said</p>\n<div class="codehilite"><pre><span></span><code>def func():\n    x = 1\n\n    y = 2\n\n    z = 3\n</code></pre></div>\n<p>And all was good.</p>'],
  ['normal_text_test', "it's lunch time", "<p>it's lunch time</p>"],
  ['codeblock_trailing_whitespace', 'Hamlet once said\n~~~~\ndef func():\n    x = 1\n\n    y = 2\t\t\n\n    z = 3       \n~~~~\nAnd all was good.', '<p>Hamlet once said</p>\n<div class="codehilite"><pre><span></span><code>def func():\n    x = 1\n\n    y = 2\n\n    z = 3\n</code></pre></div>\n<p>And all was good.</p>'],
  ['inline_code_spaces', '` outer ` ```    space    ```', '<p><code> outer </code> <code>    space    </code></p>'],
  ['inline_code_html_entities', '`<&nbsp;>`', '<p><code>&lt;&amp;nbsp;&gt;</code></p>'],
  ['codeblock_backticks', '\n```\nfenced code\n```\n\n```inline code```\n', '<div class="codehilite"><pre><span></span><code>fenced code\n</code></pre></div>\n<p><code>inline code</code></p>'],
  ['hanging_multi_codeblock', 'Hamlet said:\n~~~~\ndef speak(self):\n    x = 1\n# Comment to make this code block longer to test Trac #1162\n~~~~\n\nThen he mentioned ````y = 4 + x**2```` and\n~~~~\ndef foobar(self):\n    return self.baz()', '<p>Hamlet said:</p>\n<div class="codehilite"><pre><span></span><code>def speak(self):\n    x = 1\n# Comment to make this code block longer to test Trac #1162\n</code></pre></div>\n<p>Then he mentioned <code>y = 4 + x**2</code> and</p>\n<div class="codehilite"><pre><span></span><code>def foobar(self):\n    return self.baz()\n</code></pre></div>'],
  ['fenced_normal_quote', 'Hamlet said:\n~~~ quote\nTo be or **not** to be.\n\nThat is the question\n~~~', '<p>Hamlet said:</p>\n<blockquote>\n<p>To be or <strong>not</strong> to be.</p>\n<p>That is the question</p>\n</blockquote>'],
  ['fenced_nested_quote', 'Hamlet said:\n~~~ quote\nPolonius said:\n> This above all: to thine ownself be true,\nAnd it must follow, as the night the day,\nThou canst not then be false to any man.\n\nWhat good advice!\n~~~', '<p>Hamlet said:</p>\n<blockquote>\n<p>Polonius said:</p>\n<blockquote>\n<p>This above all: to thine ownself be true,<br>\nAnd it must follow, as the night the day,<br>\nThou canst not then be false to any man.</p>\n</blockquote>\n<p>What good advice!</p>\n</blockquote>'],
  ['fenced_complexly_nested_quote', 'I heard about this second hand...\n~~~ quote\n\nHe said:\n~~~ quote\nThe customer is complaining.\n\nThey looked at this code:\n``` \ndef hello(): print \'hello\n```\nThey would prefer:\n~~~\ndef hello()\n  puts \'hello\'\nend\n~~~\n\nPlease advise.\n~~~\n\nShe said:\n~~~ quote\nJust send them this:\n```\necho "hello\n"\n```\n~~~', '<p>I heard about this second hand...</p>\n<blockquote>\n<p>He said:</p>\n<blockquote>\n<p>The customer is complaining.</p>\n<p>They looked at this code:</p>\n<div class="codehilite"><pre><span></span><code>def hello(): print &#39;hello\n</code></pre></div>\n<p>They would prefer:</p>\n</blockquote>\n<p>def hello()<br>\n  puts \'hello\'<br>\nend</p>\n</blockquote>\n<p>Please advise.</p>\n<div class="codehilite"><pre><span></span><code>She said:\n~~~ quote\nJust send them this:\n```\necho &quot;hello\n&quot;\n```\n</code></pre></div>'],
  ['empty_single_blockquote', '>', '<p>&gt;</p>'],
  ['empty_multiple_blockquote', '>>>>>', '<blockquote>\n<blockquote>\n<blockquote>\n<blockquote>\n<p>&gt;</p>\n</blockquote>\n</blockquote>\n</blockquote>\n</blockquote>'],
  ['non_empty_blockquote', '>\n>\ntext', '<blockquote>\n<p>text</p>\n</blockquote>'],
  ['multiple_blockquote_with_angular_bracket', '> Hello World!\n\n> Hello Universe!', '<blockquote>\n<p>Hello World!</p>\n</blockquote>\n<blockquote>\n<p>Hello Universe!</p>\n</blockquote>'],
  ['multiple_blockquote_with_backticks_and_angular_bracket', '```quote\nText in\nmultiple lines.\n```\n\n> Text in a single line.', '<blockquote>\n<p>Text in<br>\nmultiple lines.</p>\n</blockquote>\n<blockquote>\n<p>Text in a single line.</p>\n</blockquote>'],
  ['multiple_blockquote_with_quote_and_reply', 'Hamlet said:\n~~~quote\nCan we talk ?\n~~~\n> Yes !!\n\nWelcome to Open Source.', '<p>Hamlet said:</p>\n<blockquote>\n<p>Can we talk ?</p>\n</blockquote>\n<blockquote>\n<p>Yes !!</p>\n</blockquote>\n<p>Welcome to Open Source.</p>'],
  ['fenced_quote_with_hashtag', '```quote\n# line 1\n#line 2\n```', '<blockquote>\n<h1>line 1</h1>\n<p>#line 2</p>\n</blockquote>'],
  ['fenced_quote_and_list', 'Before:\n* One.\n* Two.\n\n```quote\nLists should work after a quote\n```\n\nAfter:\n* One.\n* Two.', '<p>Before:</p>\n<ul>\n<li>One.</li>\n<li>Two.</li>\n</ul>\n<blockquote>\n<p>Lists should work after a quote</p>\n</blockquote>\n<p>After:</p>\n<ul>\n<li>One.</li>\n<li>Two.</li>\n</ul>'],
  ['dangerous_block_having_x', 'xxxxxx xxxxx xxxxxxxx xxxx. x xxxx xxxxxxxxxx:\n\n```"xxxx xxxx\\xxxxx\\xxxxxx"```\n\nxxx xxxx xxxxx:```xx.xxxxxxx(x\'^xxxx$\', xx.xxxxxxxxx)```\n\nxxxxxxx\'x xxxx xxxxxxxxxx ```\'xxxx\'```, xxxxx xxxxxxxxx xxxxx ^ xxx $ xxxxxx xxxxx xxxxxxxxxxxx xxx xxxx xx x xxxx xx xxxx xx xxx xxxxx xxxxxx?', '<p>xxxxxx xxxxx xxxxxxxx xxxx. x xxxx xxxxxxxxxx:</p>\n<p><code>"xxxx xxxx\\xxxxx\\xxxxxx"</code></p>\n<p>xxx xxxx xxxxx:<code>xx.xxxxxxx(x\'^xxxx$\', xx.xxxxxxxxx)</code></p>\n<p>xxxxxxx\'x xxxx xxxxxxxxxx <code>\'xxxx\'</code>, xxxxx xxxxxxxxx xxxxx ^ xxx $ xxxxxx xxxxx xxxxxxxxxxxx xxx xxxx xx x xxxx xx xxxx xx xxx xxxxx xxxxxx?</p>'],
  ['dangerous_block_having_backticks', '``` one ```\n\n``` two ```\n\n~~~~\nx = 1', '<p><code> one </code></p>\n<p><code> two </code></p>\n<div class="codehilite"><pre><span></span><code>x = 1\n</code></pre></div>'],
  ['four_space_code_block', '    def foo(): pass', '<div class="codehilite"><pre><span></span><code>def foo(): pass\n</code></pre></div>'],
  ['two_space_not_code_block', '  notcode', '<p>notcode</p>'],
  ['hashheading_enabled', '# Hello world', '<h1>Hello world</h1>'],
  ['hashheading_needs_spaces', '#Hello world', '<p>#Hello world</p>'],
  ['hashheading_multiple_spaces', '#  Hello world', '<h1>Hello world</h1>'],
  ['hashheading_6_levels', '###### Hello world', '<h6>Hello world</h6>'],
  ['hashheading_7_levels', '####### Hello world', '<p>####### Hello world</p>'],
  ['reference_links_disabled', 'Hello [world]\n\n[world]: https://google.com', '<p>Hello [world]</p>\n<p>[world]: <a href="https://google.com">https://google.com</a></p>'],
  ['reference_links_disabled_2', 'Hello [world][ref-name]\n\n[ref-name]: https://google.com', '<p>Hello [world][ref-name]</p>\n<p>[ref-name]: <a href="https://google.com">https://google.com</a></p>'],
  ['ulist_standard_1', 'Some text with a list:\n\n* One item\n* Two items\n* Three items', '<p>Some text with a list:</p>\n<ul>\n<li>One item</li>\n<li>Two items</li>\n<li>Three items</li>\n</ul>'],
  ['ulist_standard_2', 'Some text with a list:\n\n- One item\n- Two items\n- Three items', '<p>Some text with a list:</p>\n<ul>\n<li>One item</li>\n<li>Two items</li>\n<li>Three items</li>\n</ul>'],
  ['ulist_standard_3', 'Some text with a list:\n\n+ One item\n+ Two items\n+ Three items', '<p>Some text with a list:</p>\n<ul>\n<li>One item</li>\n<li>Two items</li>\n<li>Three items</li>\n</ul>'],
  ['list_codeblock_interference', 'para:\n\n    1. list-1\n    2. list-2\n      1. list-2a\n    3. list-3\n', '<p>para:</p>\n<div class="codehilite"><pre><span></span><code>1. list-1\n2. list-2\n  1. list-2a\n3. list-3\n</code></pre></div>'],
  ['ulist_hanging', 'Some text with a hanging list:\n* One item\n* Two items\n* Three items', '<p>Some text with a hanging list:</p>\n<ul>\n<li>One item</li>\n<li>Two items</li>\n<li>Three items</li>\n</ul>'],
  ['ulist_hanging_mixed', 'Plain list\n\n* Alpha\n\n* Beta\n\nThen hang it off:\n* Ypsilon\n* Zeta', '<p>Plain list</p>\n<ul>\n<li>\n<p>Alpha</p>\n</li>\n<li>\n<p>Beta</p>\n</li>\n</ul>\n<p>Then hang it off:</p>\n<ul>\n<li>Ypsilon</li>\n<li>Zeta</li>\n</ul>'],
  ['ulist_hanging_multi', 'Plain list\n* Alpha\n* Beta\n\nAnd again:\n* A\n* B\n* C\n\nOnce more for feeling:\n* Q\n* E\n* D', '<p>Plain list</p>\n<ul>\n<li>Alpha</li>\n<li>Beta</li>\n</ul>\n<p>And again:</p>\n<ul>\n<li>A</li>\n<li>B</li>\n<li>C</li>\n</ul>\n<p>Once more for feeling:</p>\n<ul>\n<li>Q</li>\n<li>E</li>\n<li>D</li>\n</ul>'],
  ['ulist_hanging_quoted', '```quote\nSome text with a hanging list inside quote:\n* one\n* two\n* three\n```', '<blockquote>\n<p>Some text with a hanging list inside quote:</p>\n<ul>\n<li>one</li>\n<li>two</li>\n<li>three</li>\n</ul>\n</blockquote>'],
  ['ulist_nested_ulist_two_space_indent', 'Nested list\n* I am outer list\n  * I am inner nested list first item\n  * I am inner nested list second item', '<p>Nested list</p>\n<ul>\n<li>I am outer list<ul>\n<li>I am inner nested list first item</li>\n<li>I am inner nested list second item</li>\n</ul>\n</li>\n</ul>'],
  ['ulist_list_two_space_indent', '* I am outer list\n  I am something inside', '<ul>\n<li>I am outer list<br>\n  I am something inside</li>\n</ul>'],
  ['ulist_codeblock', '~~~\nint x = 3\n* 4;\n~~~', '<div class="codehilite"><pre><span></span><code>int x = 3\n* 4;\n</code></pre></div>'],
  ['malformed_fence', '~~~~~~~~xxxxxxxxx:  xxxxxxxxxxxx xxxxx x xxxxxxxx~~~~~~', '<p>~~~~~~~~xxxxxxxxx:  xxxxxxxxxxxx xxxxx x xxxxxxxx~~~~~~</p>'],
  ['strikthrough_basic', 'I like ~~software~~ hardware', '<p>I like <del>software</del> hardware</p>'],
  ['strikthrough_multiword_with_no_space_in_between', 'I ~~like software~~ love hardware', '<p>I <del>like software</del> love hardware</p>'],
  ['strikthrough_multiword_with_space_in_between', 'I ~~ like software ~~ love hardware', '<p>I <del> like software </del> love hardware</p>'],
  ['strikthrough_link', '~~test http://xx.xx link~~', '<p><del>test <a href="http://xx.xx">http://xx.xx</a> link</del></p>'],
  ['underscore_disabled', '_foo_', '<p>_foo_</p>'],
  ['emphasis_text', '*foo*', '<p><em>foo</em></p>'],
  ['emphasis_code', 'const char *x = (char *)y', '<p>const char *x = (char *)y</p>'],
  ['emphasis_with_space', 'A *foo bar* is a *baz quux*', '<p>A <em>foo bar</em> is a <em>baz quux</em></p>'],
  ['emphasis_with_html', '*<h1>Hello world</h1>*', '<p><em>&lt;h1&gt;Hello world&lt;/h1&gt;</em></p>'],
  ['underscore_strong_disabled', '__foo__', '<p>__foo__</p>'],
  ['star_strong', '**foo**', '<p><strong>foo</strong></p>'],
  ['star_emoji', '**:smile:**', `<p><strong>${smile}</strong></p>`],
  ['star_strong_em', '***foo***', '<p><strong><em>foo</em></strong></p>'],
  ['strong_with_html', '**<h1>Hello world</h1>**', '<p><strong>&lt;h1&gt;Hello world&lt;/h1&gt;</strong></p>'],
  ['numbered_list', '1. A\n2. B\n  3. C', '<ol>\n<li>A</li>\n<li>B<ol start="3">\n<li>C</li>\n</ol>\n</li>\n</ol>'],
  ['auto_renumbered_list_trick', '1. A\n1. B\n  1. C\n1. D', '<ol>\n<li>A</li>\n<li>B<ol>\n<li>C</li>\n</ol>\n</li>\n<li>D</li>\n</ol>'],
  ['two_auto_renumbered_lists', '1. A\n3. B\n  2. C\n1. D', '<ol>\n<li>A</li>\n<li>B<ol start="2">\n<li>C</li>\n</ol>\n</li>\n<li>D</li>\n</ol>'],
  ['list_complexly_nested', 'This is a heavily nested OL\n1. level-1\n  2. level-2\n    3. level-3\n    3. level-3a\n  2. level-2a\n2. level-1a\n', '<p>This is a heavily nested OL</p>\n<ol>\n<li>level-1<ol start="2">\n<li>level-2<ol start="3">\n<li>level-3</li>\n<li>level-3a</li>\n</ol>\n</li>\n<li>level-2a</li>\n</ol>\n</li>\n<li>level-1a</li>\n</ol>'],
  ['auto_renumbered_list_blankline', '1. A\n\n1. B\n\n1. C\n\n1. D\nordinary paragraph\n1. AA\n\n1. BB', '<ol>\n<li>\n<p>A</p>\n</li>\n<li>\n<p>B</p>\n</li>\n<li>\n<p>C</p>\n</li>\n<li>\n<p>D<br>\nordinary paragraph</p>\n</li>\n<li>\n<p>AA</p>\n</li>\n<li>\n<p>BB</p>\n</li>\n</ol>'],
  ['ulist_codeblock_interference', "* One \n  * Two\n\n    Two continued\n    This shouldn't be a code block\n", "<ul>\n<li>One <ul>\n<li>\n<p>Two</p>\n<p>Two continued<br>\nThis shouldn't be a code block</p>\n</li>\n</ul>\n</li>\n</ul>"],
  ['ulist_mixed_bullets', 'Combine four lists:\n\n* One\n- Two\n+ Three\n- Four\n- Five', '<p>Combine four lists:</p>\n<ul>\n<li>One</li>\n<li>Two</li>\n<li>Three</li>\n<li>Four</li>\n<li>Five</li>\n</ul>'],
  ['auto_renumbered_list_from', '3. A\n3. B\n3. C\n3. D', '<ol start="3">\n<li>A</li>\n<li>B</li>\n<li>C</li>\n<li>D</li>\n</ol>'],
  ['linkify_interference', 'link: xx, x xxxxx xx xxxx xx\n\n[xxxxx #xx](http://xxxxxxxxx:xxxx/xxx/xxxxxx%78xxxx/xx/):**xxxxxxx**\n\nxxxxxxx xxxxx xxxx xxxxx:\n`xxxxxx`: xxxxxxx\n`xxxxxx`: xxxxx\n`xxxxxx`: xxxxx xxxxx', '<p>link: xx, x xxxxx xx xxxx xx</p>\n<p><a href="http://xxxxxxxxx:xxxx/xxx/xxxxxx%78xxxx/xx/">xxxxx #xx</a>:<strong>xxxxxxx</strong></p>\n<p>xxxxxxx xxxxx xxxx xxxxx:<br>\n<code>xxxxxx</code>: xxxxxxx<br>\n<code>xxxxxx</code>: xxxxx<br>\n<code>xxxxxx</code>: xxxxx xxxxx</p>'],
  ['only_non_image_link', 'https://github.com', '<p><a href="https://github.com">https://github.com</a></p>'],
  ['link_with_text', '[hello](https://github.com)', '<p><a href="https://github.com">hello</a></p>'],
  ['link_without_text', '[](https://github.com)', '<p><a href="https://github.com">https://github.com</a></p>'],
  ['link_with_empty_text', '[  ](https://github.com)', '<p><a href="https://github.com">https://github.com</a></p>'],
  ['fragment_link', '[foo](http://zulip.testserver/#narrow/stream/1-Denmark)', '<p><a href="#narrow/stream/1-Denmark">foo</a></p>'],
  ['not_fragment_link', '[foo](http://zulip.testserver/https://example.com)', '<p><a href="http://zulip.testserver/https://example.com">foo</a></p>'],
  ['nl2br', 'test\nbar', '<p>test<br>\nbar</p>'],
  ['tables', 'This is a table:\n\nFirst header  | Second header\n------------- | -------------\nContent cell  | Content cell\nContent cell  | Content cell\n', '<p>This is a table:</p>\n<table>\n<thead>\n<tr>\n<th>First header</th>\n<th>Second header</th>\n</tr>\n</thead>\n<tbody>\n<tr>\n<td>Content cell</td>\n<td>Content cell</td>\n</tr>\n<tr>\n<td>Content cell</td>\n<td>Content cell</td>\n</tr>\n</tbody>\n</table>'],
  ['multiline_strong', "You can check out **any time you'd like\nBut you can never leave**", "<p>You can check out **any time you'd like<br>\nBut you can never leave**</p>"],
  ['many_emoji', 'test :smile: again :poop:\n:) foo:)bar x::y::z :wasted waste: :fakeemojithisshouldnotrender:', `<p>test ${smile} again ${emoji('1f4a9', 'poop')}<br>\n:) foo:)bar x::y::z :wasted waste: :fakeemojithisshouldnotrender:</p>`],
  ['random_emoji_1', ':airplane:', `<p>${emoji('2708', 'airplane')}</p>`],
  ['zulip_emoji', ':zulip:', '<p><img alt=":zulip:" class="emoji" src="/static/generated/emoji/images/emoji/unicode/zulip.png" title="zulip"></p>'],
  ['random_emoji_2', ':poop:', `<p>${emoji('1f4a9', 'poop')}</p>`],
  ['emoji_sequence_one', '🤷\u200d♀️', `<p>${emoji('1f937-200d-2640', 'woman_shrugging')}</p>`],
  ['emoji_sequence_two', '👁\u200d🗨 #️⃣', `<p>${emoji('1f441-200d-1f5e8', 'eye_in_speech_bubble')} ${emoji('0023-20e3', 'hash')}</p>`],
  ['unrecognized_emoji_sequence_three', 'normal lemon 🍋, purple lemon? 🍋\u200d🟪', `<p>normal lemon ${emoji('1f34b', 'lemon')}, purple lemon? 🍋\u200d🟪</p>`],
  ['unrecognized_emoji_sequence_skin_tone', 'man in manual wheelchair: dark skin tone 👨🏿\u200d🦽', '<p>man in manual wheelchair: dark skin tone 👨🏿\u200d🦽</p>'],
  ['emojis_without_space', ':cat:hello:dog::rabbit:', `<p>${emoji('1f408', 'cat')}hello${emoji('1f415', 'dog')}${emoji('1f407', 'rabbit')}</p>`],
  ['emojis_newline', ':cat:\n:dog:', `<p>${emoji('1f408', 'cat')}<br>\n${emoji('1f415', 'dog')}</p>`],
  ['not_emoji', ':not_an_emoji:', '<p>:not_an_emoji:</p>'],
  ['unicode_emoji', '💩', `<p>${emoji('1f4a9', 'poop')}</p>`],
  ['two_unicode_emoji_separated_by_text', '💩 word 💩', `<p>${emoji('1f4a9', 'poop')} word ${emoji('1f4a9', 'poop')}</p>`],
  ['miscellaneous_symbols_and_pictographs', 'Merry Christmas!!🎄', `<p>Merry Christmas!!${emoji('1f384', 'holiday_tree')}</p>`],
  ['miscellaneous_and_dingbats_emoji', '⚓➗', `<p>${emoji('2693', 'anchor')}${emoji('2797', 'division')}</p>`],
  ['supplemental_symbols_and_pictographs', 'I am a robot 🤖.', `<p>I am a robot ${emoji('1f916', 'robot')}.</p>`],
  ['miscellaneous_symbols_and_arrows', 'Black upward arrow ⬆️', `<p>Black upward arrow ${emoji('2b06', 'up')}</p>`],
  ['unicode_emoji_without_space', 'Extra👽Terrestrial', `<p>Extra${emoji('1f47d', 'alien')}Terrestrial</p>`],
  ['emoji_alongside_punctuation', ':smile:, :smile:; :smile:', `<p>${smile}, ${smile}; ${smile}</p>`],
  ['new_emoji_test', ':avocado:, :kiwi:, :selfie:, :gear:, :comet:, :gold:', `<p>${emoji('1f951', 'avocado')}, ${emoji('1f95d', 'kiwi')}, ${emoji('1f933', 'selfie')}, ${emoji('2699', 'gear')}, ${emoji('2604', 'comet')}, ${emoji('1f947', 'gold')}</p>`],
  ['emoji_pipeline_newline', 'The winner is:\nsmiley:smiley:', `<p>The winner is:<br>\nsmiley${emoji('1f603', 'smiley')}</p>`],
  ['emoji_pipeline_emphasis', 'Testing *:smiley*: :sm*iley*: Testing', '<p>Testing <em>:smiley</em>: :sm<em>iley</em>: Testing</p>'],
  ['emoji_pipeline_link', 'Visit https:smiley://google.com.', `<p>Visit https${emoji('1f603', 'smiley')}//google.com.</p>`],
  ['skin_tones_are_banned', ':skin-tone-2: :skin-tone-3:', '<p>:skin-tone-2: :skin-tone-3:</p>'],
  ['fried_egg_emoji_nonexistent', 'new :fried_egg: emoji is banned for now.', '<p>new :fried_egg: emoji is banned for now.</p>'],
  ['emojis_with_zwj_are_banned', 'Emojis like :man-girl-girl: which have ZWJ are banned for now.', '<p>Emojis like :man-girl-girl: which have ZWJ are banned for now.</p>'],
  ['valid_emoji_preceded_by_invalid_emoji', 'This is :invalidemoji: which should not prevent rendering :smile:', `<p>This is :invalidemoji: which should not prevent rendering ${smile}</p>`],
  ['safe_html', '<h1>stay normal</h1> thanks', '<p>&lt;h1&gt;stay normal&lt;/h1&gt; thanks</p>'],
  ['safe_html_with_simple_script_tag', '<script>alert(1)</script>', '<p>&lt;script&gt;alert(1)&lt;/script&gt;</p>'],
  ['safe_html_nested_script_tag', '<<script>script>evil()<</script>/script>', '<p>&lt;&lt;script&gt;script&gt;evil()&lt;&lt;/script&gt;/script&gt;</p>'],
  ['safe_html_nested_script_tag_with_parse_error', '<<x>script>evil()<</x>/script>', '<p>&lt;&lt;x&gt;script&gt;evil()&lt;&lt;/x&gt;/script&gt;</p>'],
  ['safe_html_messed_up_complexly_nested_script_tags', '<scr<script></script>ipt type="text/javascript">alert("foo");</<script></script>script<del></del>>', '<p>&lt;scr&lt;script&gt;&lt;/script&gt;ipt type="text/javascript"&gt;alert("foo");&lt;/&lt;script&gt;&lt;/script&gt;script&lt;del&gt;&lt;/del&gt;&gt;</p>'],
  ['safe_html_unclosed_tag', '<script src=http://xx.com/xss.js<b>', '<p>&lt;script src=http://xx.com/xss.js&lt;b&gt;</p>'],
  ['safe_html_unclosed_tag_and_quotes', '<script src="http://xx.com/xss.js"<b>', '<p>&lt;script src="http://xx.com/xss.js"&lt;b&gt;</p>'],
  ['safe_html_in_code', '~~~\n<h1>stay normal</h1>', '<div class="codehilite"><pre><span></span><code>&lt;h1&gt;stay normal&lt;/h1&gt;\n</code></pre></div>'],
  ['ulist_with_inline_code', 'gonna take a break for a bit--all yours if you want to play around too. what I did:\n\n* install cmake\n* git clone zulip desktop\n* run `cmake-gui ..` in `c:\\zulip\\zulip-desktop\\msvcbuild`\n* hit configure/generate until it generated the msvc project (had to make a fix to some cmake files)\n* opened vs2013 \n* tried to build\n', '<p>gonna take a break for a bit--all yours if you want to play around too. what I did:</p>\n<ul>\n<li>install cmake</li>\n<li>git clone zulip desktop</li>\n<li>run <code>cmake-gui ..</code> in <code>c:\\zulip\\zulip-desktop\\msvcbuild</code></li>\n<li>hit configure/generate until it generated the msvc project (had to make a fix to some cmake files)</li>\n<li>opened vs2013 </li>\n<li>tried to build</li>\n</ul>'],
  ['timestamp_unix', "Let's meet at <time:1496701800>.", `<p>Let's meet at <time datetime="2017-06-05T22:30:00Z">1496701800</time>.</p>`],
  ['timestamp_incorrect', '<time:**hello world**>', '<p><span class="timestamp-error">Invalid time format: **hello world**</span></p>'],
  ['timestamp_backend_markdown_only', '<time:Jun 5th 2017, 10:30PM>', '<p><time datetime="2017-06-05T22:30:00Z">Jun 5th 2017, 10:30PM</time></p>'],
  ['timestamp_backend_markdown_and_marked', '<time:31 Dec 2017>', '<p><time datetime="2017-12-31T00:00:00Z">31 Dec 2017</time></p>'],
  ['timestamp_timezone', '<time:31 Dec 2017 5:30 am IST>', '<p><time datetime="2017-12-31T00:00:00Z">31 Dec 2017 5:30 am IST</time></p>'],
  ['timestamp_invalid_input', '<time:<alert(1)>>', '<p><span class="timestamp-error">Invalid time format: &lt;alert(1)</span>&gt;</p>'],
  ['tex_escaped', '`$$a$$`', '<p><code>$$a$$</code></p>'],
  ['tex_inline', String.raw`$$1 \oplus 0 = 1$$`, String.raw`<p><span class="katex"><span class="katex-mathml"><math xmlns="http://www.w3.org/1998/Math/MathML"><semantics><mrow><mn>1</mn><mo>⊕</mo><mn>0</mn><mo>=</mo><mn>1</mn></mrow><annotation encoding="application/x-tex">1 \oplus 0 = 1</annotation></semantics></math></span><span class="katex-html" aria-hidden="true"><span class="base"><span class="strut" style="height:0.7278em;vertical-align:-0.0833em;"></span><span class="mord">1</span><span class="mspace" style="margin-right:0.2222em;"></span><span class="mbin">⊕</span><span class="mspace" style="margin-right:0.2222em;"></span></span><span class="base"><span class="strut" style="height:0.6444em;"></span><span class="mord">0</span><span class="mspace" style="margin-right:0.2778em;"></span><span class="mrel">=</span><span class="mspace" style="margin-right:0.2778em;"></span></span><span class="base"><span class="strut" style="height:0.6444em;"></span><span class="mord">1</span></span></span></span></p>`],
  ['tex_inline_prohibited_newline', '$$x=3\ny=4$$', '<p>$$x=3<br>\ny=4$$</p>'],
  ['tex_dollar_smiley', '$$_$$ is a fun money-related smiley!', '<p>$$_$$ is a fun money-related smiley!</p>'],
  ['tex_multiple_dollars', 'We are going to make some $$$ or maybe even $$$$!', '<p>We are going to make some $$$ or maybe even $$$$!</p>'],
  ['tex_non_matching_dollar_count', '$foo is$$', '<p>$foo is$$</p>'],
  ['tex_error_safe_script_tag', String.raw`$$\<script type='text/javascript'>alert('xss');</script>$$` + '\n\n~~~math\n' + String.raw`\<script type='text/javascript'>alert('xss');</script>` + '\n~~~', String.raw`<p><span class="tex-error">$$\&lt;script type='text/javascript'&gt;alert('xss');&lt;/script&gt;$$</span></p>` + '\n' + String.raw`<p><span class="tex-error">\&lt;script type=&#x27;text/javascript&#x27;&gt;alert(&#x27;xss&#x27;);&lt;/script&gt;</span></p>`],
  ['tex_inline_no_markdown_inside', String.raw`$$\text{**a**}$$`, String.raw`<p><span class="katex"><span class="katex-mathml"><math xmlns="http://www.w3.org/1998/Math/MathML"><semantics><mrow><mtext>**a**</mtext></mrow><annotation encoding="application/x-tex">\text{**a**}</annotation></semantics></math></span><span class="katex-html" aria-hidden="true"><span class="base"><span class="strut" style="height:0.75em;"></span><span class="mord text"><span class="mord">**a**</span></span></span></span></span></p>`],
  ['tex_display_no_markdown_inside', '~~~math\n' + String.raw`\text{**a**}` + '\n~~~', String.raw`<p><span class="katex-display"><span class="katex"><span class="katex-mathml"><math xmlns="http://www.w3.org/1998/Math/MathML" display="block"><semantics><mrow><mtext>**a**</mtext></mrow><annotation encoding="application/x-tex">\text{**a**}</annotation></semantics></math></span><span class="katex-html" aria-hidden="true"><span class="base"><span class="strut" style="height:0.75em;"></span><span class="mord text"><span class="mord">**a**</span></span></span></span></span></span></p>`],
  ['tex_inline_error_no_markdown_inside', String.raw`$$\error{**a**}$$`, String.raw`<p><span class="tex-error">$$\error{**a**}$$</span></p>`],
  ['tex_display_error_no_markdown_inside', '~~~math\n' + String.raw`\error{**a**}` + '\n~~~', String.raw`<p><span class="tex-error">\error{**a**}</span></p>`],
  ['spoilers_fenced_spoiler', '```spoiler header\ncontent\n```\noutside spoiler\n', '<div class="spoiler-block"><div class="spoiler-header">\n<p>header</p>\n</div><div class="spoiler-content" aria-hidden="true">\n<p>content</p>\n</div></div>\n<p>outside spoiler</p>'],
  ['spoilers_empty_header', '```spoiler\ncontent\n```\noutside spoiler\n', '<div class="spoiler-block"><div class="spoiler-header">\n</div><div class="spoiler-content" aria-hidden="true">\n<p>content</p>\n</div></div>\n<p>outside spoiler</p>'],
  ['spoilers_script_tags', '```spoiler <script>alert(1)</script>\n<script>alert(1)</script>\n```', '<div class="spoiler-block"><div class="spoiler-header">\n<p>&lt;script&gt;alert(1)&lt;/script&gt;</p>\n</div><div class="spoiler-content" aria-hidden="true">\n<p>&lt;script&gt;alert(1)&lt;/script&gt;</p>\n</div></div>'],
  ['spoilers_block_quote', '~~~quote\n```spoiler header\ncontent\n```\noutside spoiler\n~~~\noutside quote', '<blockquote>\n<div class="spoiler-block"><div class="spoiler-header">\n<p>header</p>\n</div><div class="spoiler-content" aria-hidden="true">\n<p>content</p>\n</div></div>\n<p>outside spoiler</p>\n</blockquote>\n<p>outside quote</p>'],
  ['spoilers_with_header_markdown', '```spoiler [Header](https://example.com) :smile:\ncontent\n```', `<div class="spoiler-block"><div class="spoiler-header">\n<p><a href="https://example.com">Header</a> ${smile}</p>\n</div><div class="spoiler-content" aria-hidden="true">\n<p>content</p>\n</div></div>`],
  ['embedded_link_inside_Bold', '**[Static types in Python](https://blog.zulip.com/2016/10/13/static-types-in-python-oh-mypy)**', '<p><strong><a href="https://blog.zulip.com/2016/10/13/static-types-in-python-oh-mypy">Static types in Python</a></strong></p>'],
  ['embedded_link_inside_Italic', '*[Static types in Python](https://blog.zulip.com/2016/10/13/static-types-in-python-oh-mypy)*', '<p><em><a href="https://blog.zulip.com/2016/10/13/static-types-in-python-oh-mypy">Static types in Python</a></em></p>'],
  ['edge_case_embedded_link_inside_Bold', '<h1>**<h1>[<h2>Static types in Python</h2>](https://blog.zulip.com/2016/10/13/static-types-in-python-oh-mypy)</h1>**</h1>', '<p>&lt;h1&gt;<strong>&lt;h1&gt;<a href="https://blog.zulip.com/2016/10/13/static-types-in-python-oh-mypy">&lt;h2&gt;Static types in Python&lt;/h2&gt;</a>&lt;/h1&gt;</strong>&lt;/h1&gt;</p>'],
  ['telephone_sms_link', '[call me](tel:+14155551234) [or maybe not](sms:+14155551234)', '<p><a href="tel:+14155551234">call me</a> <a href="sms:+14155551234">or maybe not</a></p>'],
  ['codeblock_hilite_shebang_feature_no_path_1 (marked)', '```\n#!python\nprint("Hello World")\n```', '<div class="codehilite"><pre><span></span><code>#!python\nprint(&quot;Hello World&quot;)\n</code></pre></div>'],
  ['codeblock_hilite_shebang_feature_with_path (marked)', '```\n#!/usr/bin/python\nprint("Hello World")\n```', '<div class="codehilite"><pre><span></span><code>#!/usr/bin/python\nprint(&quot;Hello World&quot;)\n</code></pre></div>'],
];

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
