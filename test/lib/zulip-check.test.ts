// The export checker (src/export/zulip-check.ts) finds what would make Zulip's importer fail: a
// missing table or field, a wrong type, a field the model does not have, a duplicated id, a foreign
// key pointing nowhere, a per-user row away from its message, a file missing from its folder.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ExportChecker } from '../../src/export/zulip-check';
import { RECORDS, TABLES, TABLE_NAMES, type FieldSpec } from '../../src/export/zulip-format';

const sample = (f: FieldSpec): unknown => ({ int: 1, float: 1.5, bool: true, string: 'x', 'int[]': [], json: {} })[f.type];

/** One row of every table, id 1 everywhere: every foreign key resolves. */
function minimal(): Record<string, Record<string, any>> {
  const files: Record<string, Record<string, any>> = { 'realm.json': { import_source: 'parley' }, 'attachment.json': {}, 'messages-000001.json': {} };
  for (const t of TABLE_NAMES) {
    const spec = TABLES[t];
    const file = spec.file === 'messages' ? 'messages-000001.json' : spec.file;
    files[file][t] = [Object.fromEntries(Object.entries(spec.fields).map(([k, f]) => [k, sample(f)]))];
  }
  files['realm.json'].zerver_userprofile_crossrealm[0] = { id: 2, email: 'notification-bot@zulip.com', recipient_id: 2 };
  files['realm.json'].zerver_reaction[0].reaction_type = 'unicode_emoji';
  files['realm.json'].zerver_userstatus[0].reaction_type = 'unicode_emoji';
  return files;
}

const records = (): Record<string, unknown[]> => ({
  uploads: [{ realm_id: 1, user_profile_id: 1, user_profile_email: 'a@example.com', s3_path: 'x', path: '1/ab/c/x.txt', size: 1, last_modified: 1.5, content_type: null }],
  avatars: [],
  emoji: [],
  realm_icons: [],
});

function check(files = minimal(), recs: Record<string, unknown[]> = records(), present: (p: string) => boolean = (p) => p === '1/ab/c/x.txt'): string[] {
  const c = new ExportChecker();
  for (const [name, data] of Object.entries(files)) c.file(name, data);
  for (const folder of Object.keys(RECORDS) as (keyof typeof RECORDS)[]) c.records(folder, recs[folder], present);
  return c.finish();
}

describe('ExportChecker', () => {
  it('accepts a complete export', () => {
    assert.deepEqual(check(), []);
  });

  it('names each problem', () => {
    const f = minimal();
    delete f['realm.json'].zerver_stream;
    delete f['realm.json'].zerver_userprofile[0].email;
    f['realm.json'].zerver_userprofile[0].is_active = 1;
    f['realm.json'].zerver_userprofile[0].api_key = 'secret';
    f['realm.json'].zerver_subscription[0].recipient = 99;
    f['realm.json'].zerver_realmemoji.push({ ...f['realm.json'].zerver_realmemoji[0] });
    f['messages-000001.json'].zerver_usermessage[0].message = 5;
    f['attachment.json'].zerver_attachment[0].path_id = 'elsewhere';
    f['realm.json'].zerver_recipient[0].type = 4;
    assert.deepEqual(check(f), [
      'realm.json: zerver_realmemoji[1]: id 1 is used twice',
      'realm.json: zerver_userprofile[0]: unknown field api_key',
      'realm.json: zerver_userprofile[0].email: missing',
      'realm.json: zerver_userprofile[0].is_active: 1 is not of type bool',
      'realm.json: table zerver_stream is missing',
      'realm.json: zerver_recipient[0].type: 4 is not 1, 2 or 3',
      'messages-000001.json: zerver_usermessage[0].message 5 is not a message of this file',
      'realm.json: zerver_realm[0].new_stream_announcements_stream: 1 is not an id of zerver_stream',
      'realm.json: zerver_realm[0].signup_announcements_stream: 1 is not an id of zerver_stream',
      'realm.json: zerver_realm[0].zulip_update_announcements_stream: 1 is not an id of zerver_stream',
      'realm.json: zerver_realm[0].moderation_request_channel: 1 is not an id of zerver_stream',
      'realm.json: zerver_defaultstream[0].stream: 1 is not an id of zerver_stream',
      'realm.json: zerver_userprofile[0].default_sending_stream: 1 is not an id of zerver_stream',
      'realm.json: zerver_userprofile[0].default_events_register_stream: 1 is not an id of zerver_stream',
      'realm.json: zerver_subscription[0].recipient: 99 is not an id of zerver_recipient',
      'realm.json: zerver_usertopic[0].stream: 1 is not an id of zerver_stream',
      'realm.json: zerver_scheduledmessage[0].stream: 1 is not an id of zerver_stream',
      'messages-000001.json: zerver_usermessage[0].message: 5 is not an id of zerver_message',
      'attachment.json: zerver_attachment[0].path_id: elsewhere is not in uploads/records.json',
    ]);
  });

  it('checks records.json: fields, and that each file is in the folder', () => {
    const recs = records();
    recs.emoji = [{ realm_id: 1, path: '../etc/passwd', s3_path: 'y', file_name: 'y', name: 'y', deactivated: 'no' }];
    assert.deepEqual(check(minimal(), recs, () => false), [
      'uploads/records.json[0].path: no file uploads/1/ab/c/x.txt',
      'emoji/records.json[0].deactivated: "no" is not of type bool',
      'emoji/records.json[0].path: ../etc/passwd leaves the folder',
    ]);
  });

  it('needs realm.json and attachment.json, and a realm emoji reaction to name its emoji', () => {
    const f = minimal();
    f['realm.json'].zerver_reaction[0] = { ...f['realm.json'].zerver_reaction[0], reaction_type: 'realm_emoji', emoji_code: '1', emoji_name: 'other' };
    delete f['attachment.json'];
    assert.deepEqual(check(f), ['attachment.json is missing', 'realm.json: zerver_reaction[0].emoji_name: other is not the name of realm emoji 1 (x)']);
  });
});
