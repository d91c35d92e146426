// The check of an imported message's HTML (src/import/rendered-html.ts): what Zulip's Markdown
// writes (its own expected outputs) and what Parley's renderer writes pass it, so real exports keep
// their rendering; HTML that could run script, load from elsewhere or restyle the page fails it, and
// the importer renders such a message again (test/import/zulip.test.ts).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { renderMarkdown, type RenderContext } from '../../src/lib/markdown';
import { isSafeRenderedHtml } from '../../src/import/rendered-html';
import { sendContent } from '../../bench/send-content';
import { ZULIP_CASES } from '../lib/zulip-markdown-cases';

const context: RenderContext = {
  userByName: (name) => (name === 'King Hamlet' ? { id: 12, full_name: 'King Hamlet' } : null),
  userById: (id) => (id === 12 ? { id: 12, full_name: 'King Hamlet' } : null),
  groupByName: (name) => (name === 'support' ? { id: 3, name: 'support' } : null),
  streamByName: (name) => (name === 'Verona' ? { id: 9, name: 'Verona' } : null),
  linkifiers: [],
  realmUrl: 'http://zulip.testserver',
};

const PARLEY_CONTENTS = [
  '# Title\n## Sub\n\n---\n\n| a | b |\n|:--|--:|\n| 1 | 2 |',
  '```spoiler Answer\nhidden **text**\n```',
  '```quote\nquoted\n```\n> also quoted',
  '$$x^2 + \\frac{a}{b} \\sqrt{c} \\overrightarrow{AB} \\color{red}{y}$$ and inline $$\\sum_{i=0}^n i$$',
  '```math\n\\begin{pmatrix} 1 & 2 \\\\ 3 & 4 \\end{pmatrix}\n```',
  '@**King Hamlet** @*support* #**Verona** #**Verona>topic** @**all** <time:2024-02-29T15:04:05Z>',
  '[a link](https://example.com/x?y=1&z=2) <https://example.com> mailto:a@example.com [call](tel:+1415)',
  '[image](/user_uploads/2/ab/cd/photo.png) https://example.com/pic.png',
  '1. one\n2. two\n\n3) three\n\n- [ ] task\n* item',
  '~~struck~~ *em* **strong** `code` :smile: :octopus: 😀',
  '/me waves',
  '<script>alert(1)</script> <img src=x onerror=alert(1)> javascript:alert(1)',
];

const HOSTILE = [
  '<p>hi<script>alert(1)</script></p>',
  '<p><img src="x" onerror="alert(1)"></p>',
  '<p><img src=x onerror=alert(1)></p>',
  '<p><a href="javascript:alert(1)">x</a></p>',
  '<p><a href="JaVaScRiPt:alert(1)">x</a></p>',
  '<p><a href="jav&#x09;ascript:alert(1)">x</a></p>',
  '<p><a href="jav\tascript:alert(1)">x</a></p>',
  '<p><a href="javascript&colon;alert(1)">x</a></p>',
  '<p><a href="&#106;avascript:alert(1)">x</a></p>',
  '<p><a href="data:text/html,<script>alert(1)</script>">x</a></p>',
  '<p><img src="data:image/svg+xml,<svg onload=alert(1)>"></p>',
  '<p><img src="//evil.example/x.png" srcset="javascript:alert(1)"></p>',
  '<iframe src="https://evil.example"></iframe>',
  '<form action="https://evil.example"><input name="password"></form>',
  '<p style="position:fixed;top:0;left:0;width:100%;height:100%">x</p>',
  '<p style="background:url(https://evil.example/track.png)">x</p>',
  '<p style="color:expression(alert(1))">x</p>',
  '<span style="position:absolute;top:0;left:0">x</span>',
  '<p style="color:red\\;behavior:url(x)">x</p>',
  '<svg><a xlink:href="javascript:alert(1)"><text>x</text></a></svg>',
  '<svg><animate attributeName="href" to="javascript:alert(1)"/></svg>',
  '<math><mi href="javascript:alert(1)">x</mi></math>',
  '<p>a<!-- hidden --></p>',
  '<p>1 <3 2</p>',
  '<object data="x"></object>',
  '<style>body{display:none}</style>',
  '<link rel="stylesheet" href="https://evil.example/x.css">',
  '<meta http-equiv="refresh" content="0;url=https://evil.example">',
  '<base href="https://evil.example/">',
  '<p onclick="alert(1)">x</p>',
  '<div><button formaction="javascript:alert(1)">x</button></div>',
  '<p><a href="x" target="_blank" onmouseover="alert(1)">x</a></p>',
  '<video src="javascript:alert(1)"></video>',
  '<p><img src="http://x" alt="a"b></p>',
];

describe('the check of imported HTML', () => {
  it("passes every HTML Zulip's Markdown writes in Zulip's own test cases", () => {
    const failed = ZULIP_CASES.filter(([, , expected]) => !isSafeRenderedHtml(expected)).map(([name]) => name);
    assert.deepEqual(failed, []);
  });

  it("passes what Parley's renderer writes: Zulip's cases, the benchmark's mix, KaTeX, tables, spoilers, mentions, images", () => {
    const contents = [
      ...ZULIP_CASES.map(([, input]) => input),
      ...PARLEY_CONTENTS,
      ...Array.from({ length: 300 }, (_, i) => sendContent('mix', i, { mentionable: ['King Hamlet'], channel: 'Verona' })),
    ];
    const failed = contents.map((c) => renderMarkdown(c, context).html).filter((h) => !isSafeRenderedHtml(h));
    assert.deepEqual(failed, []);
  });

  it('fails HTML that could run script, load from elsewhere, submit or restyle the page', () => {
    const passed = HOSTILE.filter((h) => isSafeRenderedHtml(h));
    assert.deepEqual(passed, []);
  });
});
