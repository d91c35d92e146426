// Zulip's emoji names and codes (reactions and :emoji:), and its reaction validation texts
// (zerver/lib/emoji.py: get_emoji_data, check_emoji_request).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  checkEmojiReaction,
  emojiByName,
  emojiCodeForString,
  emojiNameForCode,
  emojiNamesForCode,
  emojiStringForCode,
  isValidEmoji,
  resolveEmojiName,
  unicodeEmojiCode,
} from '../../src/lib/emoji';
import emojiData from '../../src/lib/emoji-data.json';

describe('emoji names and codes', () => {
  // Names and codes as Zulip has them (custom_emoji_names.py and the CLDR-derived rest).
  const ZULIP: [string, string][] = [
    ['+1', '1f44d'],
    ['thumbs_up', '1f44d'],
    ['like', '1f44d'],
    ['-1', '1f44e'],
    ['heart', '2764'],
    ['smile', '1f642'],
    ['big_smile', '1f604'],
    ['grinning', '1f600'],
    ['smiley', '1f603'],
    ['tada', '1f389'],
    ['octopus', '1f419'],
    ['joy', '1f602'],
    ['check', '2705'],
    ['check_mark', '2714'],
    ['working_on_it', '1f6e0'],
    ['eyes', '1f440'],
    ['thinking', '1f914'],
    ['fire', '1f525'],
    ['rocket', '1f680'],
    ['pray', '1f64f'],
    ['folded_hands', '1f64f'],
    ['poop', '1f4a9'],
    ['holiday_tree', '1f384'],
    ['cat', '1f408'],
    ['dog', '1f415'],
    ['airplane', '2708'],
    ['gold', '1f947'],
    ['hash', '0023-20e3'],
    ['woman_shrugging', '1f937-200d-2640'],
    ['eye_in_speech_bubble', '1f441-200d-1f5e8'],
    ['flag_united_states', '1f1fa-1f1f8'],
    ['flag_türkiye', '1f1f9-1f1f7'],
    ['flag_turkiye', '1f1f9-1f1f7'],
    ['time', '1f557'],
  ];
  for (const [name, code] of ZULIP) {
    it(`${name} is ${code}`, () => {
      assert.deepEqual(emojiByName(name), { name, code, reaction_type: 'unicode_emoji' });
      assert.equal(unicodeEmojiCode(name), code);
    });
  }

  it('gives the canonical name for a code', () => {
    assert.equal(emojiNameForCode('1f44d'), '+1');
    assert.equal(emojiNameForCode('1f642'), 'smile');
    assert.equal(emojiNameForCode('2764'), 'heart');
    assert.equal(emojiNameForCode('ffff'), null);
    assert.deepEqual(emojiNamesForCode('1f44d'), ['+1', 'thumbs_up', 'like']);
    assert.deepEqual(emojiNamesForCode('not_an_emoji'), []);
  });

  it('knows :zulip: as the one zulip_extra_emoji, not a unicode one', () => {
    assert.deepEqual(resolveEmojiName('zulip'), { name: 'zulip', code: 'zulip', reaction_type: 'zulip_extra_emoji' });
    assert.equal(emojiByName('zulip'), null);
    assert.equal(unicodeEmojiCode('zulip'), null);
    assert.equal(checkEmojiReaction('zulip', 'zulip', 'unicode_emoji'), 'Invalid emoji code.');
  });

  it('has no skin tones, no 2764-fe0f style codes, and most clocks left out, like Zulip', () => {
    const codes = Object.keys(emojiData.code_to_names);
    assert.ok(codes.length > 1800, `only ${codes.length} emoji`);
    assert.equal(codes.filter((c) => /fe0f|1f3f[b-f]/.test(c)).length, 0);
    assert.equal(emojiByName('skin-tone-2'), null);
    assert.equal(emojiNameForCode('1f550'), null);
    for (const names of Object.values(emojiData.code_to_names)) {
      for (const name of names) assert.match(name, /^[\p{L}\p{N}_+-]+$/u);
    }
  });

  it('gives each name one code', () => {
    const seen = new Map<string, string>();
    for (const [code, names] of Object.entries(emojiData.code_to_names)) {
      for (const name of names) {
        assert.equal(seen.get(name), undefined, `${name} is both ${seen.get(name)} and ${code}`);
        seen.set(name, code);
      }
    }
  });

  it('converts between strings and codes the way Zulip does', () => {
    assert.equal(emojiCodeForString('❤️'), '2764');
    assert.equal(emojiCodeForString('#️⃣'), '0023-20e3');
    assert.equal(emojiCodeForString('👍'), '1f44d');
    assert.equal(emojiStringForCode('1f44d'), '👍');
    assert.equal(emojiStringForCode('0023-20e3'), '#\u20e3');
  });
});

describe('reaction validation', () => {
  it('accepts a known name alone, with its code, or an alias with the code', () => {
    assert.equal(checkEmojiReaction('smile'), null);
    assert.equal(checkEmojiReaction('smile', '1f642', 'unicode_emoji'), null);
    assert.equal(checkEmojiReaction('thumbs_up', '1f44d', 'unicode_emoji'), null);
    assert.equal(checkEmojiReaction('zulip', 'zulip', 'zulip_extra_emoji'), null);
    assert.equal(isValidEmoji('octopus'), true);
    assert.equal(isValidEmoji('octopus', '1f419'), true);
    assert.equal(isValidEmoji('zulip', 'zulip'), true);
  });

  it('uses Zulip’s error texts', () => {
    assert.equal(checkEmojiReaction('not_an_emoji'), "Emoji 'not_an_emoji' does not exist");
    assert.equal(checkEmojiReaction('smile', 'ffff', 'unicode_emoji'), 'Invalid emoji code.');
    assert.equal(checkEmojiReaction('smile', '1f44d', 'unicode_emoji'), 'Invalid emoji name.');
    assert.equal(checkEmojiReaction('not_an_emoji', '1f44d', 'unicode_emoji'), 'Invalid emoji name.');
    assert.equal(checkEmojiReaction('zulip', 'zulip2', 'zulip_extra_emoji'), 'Invalid emoji code.');
    assert.equal(checkEmojiReaction('smile', 'zulip', 'zulip_extra_emoji'), 'Invalid emoji name.');
    assert.equal(checkEmojiReaction('smile', '1f642', 'custom'), 'Invalid emoji type.');
    // With a code but no type, the name must exist first (Zulip looks the type up by name).
    assert.equal(checkEmojiReaction('not_an_emoji', '1f642'), "Emoji 'not_an_emoji' does not exist");
    assert.equal(checkEmojiReaction('smile', '1f44d'), 'Invalid emoji name.');
    assert.equal(isValidEmoji('not_an_emoji'), false);
    assert.equal(isValidEmoji('smile', '1f44d'), false);
    assert.equal(isValidEmoji('smile', 'xyz'), false);
  });

  it('checks realm emoji through the given lookup', () => {
    const realm = {
      byName: (n: string) => (n === 'parrot' ? { id: 7, name: 'parrot', source_url: '/x.gif' } : n === 'old' ? { id: 8, name: 'old', source_url: '/y.gif', deactivated: true } : null),
      byId: (id: string) => (id === '7' ? { id: 7, name: 'parrot', source_url: '/x.gif' } : id === '8' ? { id: 8, name: 'old', source_url: '/y.gif', deactivated: true } : null),
    };
    assert.deepEqual(resolveEmojiName('parrot', realm), { name: 'parrot', code: '7', reaction_type: 'realm_emoji' });
    assert.equal(checkEmojiReaction('parrot', undefined, undefined, realm), null);
    assert.equal(checkEmojiReaction('parrot', '7', 'realm_emoji', realm), null);
    assert.equal(checkEmojiReaction('parrot', '9', 'realm_emoji', realm), 'Invalid custom emoji.');
    assert.equal(checkEmojiReaction('smile', '7', 'realm_emoji', realm), 'Invalid custom emoji name.');
    assert.equal(checkEmojiReaction('old', '8', 'realm_emoji', realm), 'This custom emoji has been deactivated.');
    // A deactivated realm emoji does not shadow anything and cannot be looked up by name.
    assert.equal(checkEmojiReaction('old', undefined, undefined, realm), "Emoji 'old' does not exist");
  });
});
