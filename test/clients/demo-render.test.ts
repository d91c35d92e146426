// The demo seed skips the Markdown renderer with precomputed HTML (start-up time): that HTML must be
// exactly what the renderer produces, for every text the seed sends.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createApp } from '../../src/app';
import { configFromEnv } from '../../src/config';
import { DEMO_HTML, demoTexts, seedDemo } from '../../src/demo';
import { renderMessage } from '../../src/lib/render';

describe('demo seed', () => {
  it('has precomputed HTML equal to the renderer output for every text it sends', () => {
    const config = configFromEnv({});
    config.dataDir = ':memory:';
    const app = createApp(config);
    try {
      seedDemo(app);
      assert.deepEqual(demoTexts().filter((t) => !DEMO_HTML.has(t)), []);
      for (const [text, html] of DEMO_HTML) assert.equal(renderMessage(app, app.realmId(), text).html, html, text);
      const stored = app.db.prepare('SELECT content, rendered_content FROM message ORDER BY id').all() as { content: string; rendered_content: string }[];
      for (const m of stored) assert.equal(m.rendered_content, DEMO_HTML.get(m.content));
    } finally {
      app.close();
    }
  });
});
