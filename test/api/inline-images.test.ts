// Inline image previews in sent messages: an uploaded image's link renders Zulip's
// message_inline_image markup pointing at the file itself, has:image finds the message, and the
// organization's inline_image_preview setting turns previews off.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { basicAuth, startTestServer, type TestServer } from '../helpers/server';
import { multipart } from '../helpers/multipart';
import { createChannel, sendToChannel, SUCCESS } from '../helpers/chat';

let t: TestServer;
let channel: number;
before(async () => {
  t = await startTestServer();
  channel = await createChannel(t, t.users.owner, 'pictures', [t.users.hamlet, t.users.othello]);
});
after(() => t.close());

const PNG = Buffer.from('89504e470d0a1a0a0000000d4948445200000001000000010806000000', 'hex');

async function uploadPng(): Promise<string> {
  const { body, contentType } = multipart([{ field: 'file', filename: 'cat.png', type: 'image/png', data: PNG }]);
  const res = await t.raw('POST', '/api/v1/user_uploads', { headers: { authorization: basicAuth(t.users.hamlet), 'content-type': contentType }, body });
  assert.equal(res.status, 200, res.text);
  return res.body.url as string;
}

describe('inline image previews', () => {
  it('renders an uploaded image under its link, pointing at the file, and has:image finds it', async () => {
    const url = await uploadPng();
    const id = await sendToChannel(t, t.users.hamlet, channel, 'cats', `[cat.png](${url})`);
    const got = await t.api(t.users.othello, 'GET', `/messages/${id}`);
    assert.equal(
      got.body.message.content,
      `<p><a href="${url}">cat.png</a></p>\n<div class="message_inline_image"><a href="${url}" title="cat.png"><img src="${url}"></a></div>`,
    );
    const found = await t.api(t.users.othello, 'GET', '/messages', {
      anchor: 'newest',
      num_before: 10,
      num_after: 0,
      narrow: [{ operator: 'has', operand: 'image' }],
    });
    assert.deepEqual(
      found.body.messages.map((m: { id: number }) => m.id),
      [id],
    );
    // The image itself answers for a reader (the web app's <img> sends its session; this is Basic).
    const img = await t.raw('GET', url, { headers: { authorization: basicAuth(t.users.othello) } });
    assert.equal(img.status, 200);
  });

  it('renders an external image link as Zulip without an image proxy: the image’s own URL', async () => {
    const id = await sendToChannel(t, t.users.hamlet, channel, 'cats', 'https://example.com/cat.jpg');
    const got = await t.api(t.users.hamlet, 'GET', `/messages/${id}`);
    assert.equal(got.body.message.content, '<div class="message_inline_image"><a href="https://example.com/cat.jpg"><img src="https://example.com/cat.jpg"></a></div>');
  });

  it('makes none when the organization turns inline_image_preview off', async () => {
    assert.deepEqual((await t.api(t.users.owner, 'PATCH', '/realm', { inline_image_preview: false })).body, { ...SUCCESS, inline_image_preview: false });
    const id = await sendToChannel(t, t.users.hamlet, channel, 'cats', 'https://example.com/dog.jpg');
    const got = await t.api(t.users.hamlet, 'GET', `/messages/${id}`);
    assert.equal(got.body.message.content, '<p><a href="https://example.com/dog.jpg">https://example.com/dog.jpg</a></p>');
    await t.api(t.users.owner, 'PATCH', '/realm', { inline_image_preview: true });
  });
});
