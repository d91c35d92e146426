#!/usr/bin/env node
// Generates src/lib/emoji-data.json: Zulip-style unicode emoji names and codes.
//
// Zulip builds its table (tools/setup/emoji/generate_emoji_names) from three inputs:
//   1. the iamcal emoji list (npm emoji-datasource-google): which emoji exist;
//   2. Unicode CLDR English annotations (npm cldr-annotations-full and
//      cldr-annotations-derived-full): "tts" becomes the canonical name, "default" the aliases;
//   3. a hand-curated override list for the emoji people actually use.
// We follow the same rules with the same public inputs, and keep our own curated list below
// (the common reaction and chat emoji, checked against Zulip's names). Emoji outside that list
// get the CLDR-derived name, which is what Zulip does for every emoji it has not curated.
//
// The data packages are large (images), so they are not project dependencies. To regenerate:
//   npm install --prefix /tmp/emoji-gen --no-save --ignore-scripts \
//     emoji-datasource-google@16.0.0 cldr-annotations-full@48.2.0 cldr-annotations-derived-full@48.2.0
//   node scripts/gen-emoji.mjs /tmp/emoji-gen/node_modules
import fs from 'node:fs';
import path from 'node:path';

const modules = process.argv[2] ?? path.join(process.cwd(), 'node_modules');
const read = (p) => JSON.parse(fs.readFileSync(path.join(modules, p), 'utf8'));
const EMOJI_DATA = read('emoji-datasource-google/emoji.json');
const CLDR = {
  ...read('cldr-annotations-full/annotations/en/annotations.json').annotations.annotations,
  ...read('cldr-annotations-derived-full/annotationsDerived/en/annotations.json').annotationsDerived.annotations,
};

// Curated names, one emoji per line: "<code> <canonical> [aliases...]". Codes are Zulip's:
// lowercase hex, dash-separated, with every U+FE0F removed.
const CURATED = `
1f600 grinning happy
1f603 smiley
1f604 big_smile
1f601 grinning_face_with_smiling_eyes
1f606 laughing lol
1f605 sweat_smile
1f602 joy tears laughter_tears
1f923 rolling_on_the_floor_laughing rofl
263a smiling_face relaxed
1f60a blush
1f607 innocent halo
1f642 smile
1f643 upside_down oops
1f609 wink
1f60c relieved
1f60d heart_eyes in_love
1f618 heart_kiss blow_a_kiss
1f619 kiss_smiling_eyes
1f61a kiss_with_blush
1f60b yum
1f61b stuck_out_tongue mischievous
1f61c stuck_out_tongue_wink joking crazy
1f61d stuck_out_tongue_closed_eyes
1f911 money_face kaching
1f917 hug arms_open
1f913 nerd geek
1f60e sunglasses
1f921 clown
1f920 cowboy
1f60f smirk smug
1f612 unamused
1f61e disappointed
1f614 pensive tired
1f61f worried
1f615 oh_no half_frown concerned confused
1f641 frown slight_frown
2639 sad big_frown
1f623 persevere helpless
1f616 confounded agony
1f62b anguish
1f629 weary distraught
1f624 triumph
1f620 angry
1f621 rage mad grumpy very_angry
1f636 speechless no_mouth blank poker_face
1f610 neutral
1f611 expressionless
1f62f hushed
1f626 frowning
1f627 anguished pained
1f62e open_mouth surprise
1f632 astonished
1f635 dizzy
1f633 flushed embarrassed blushing
1f631 scream
1f628 fear scared shock
1f630 cold_sweat
1f622 cry
1f625 exhausted disappointed_relieved stressed
1f924 drooling
1f62d sob
1f613 sweat
1f62a sleepy
1f634 sleeping
1f644 rolling_eyes
1f914 thinking
1f925 lying
1f62c grimacing nervous anxious
1f910 silence quiet hush zip_it lips_are_sealed
1f922 nauseated queasy
1f927 sneezing
1f637 mask
1f912 sick flu face_with_thermometer ill fever
1f915 hurt head_bandage injured
1f608 smiling_devil smiling_imp smiling_face_with_horns
1f47f devil imp angry_devil
1f479 ogre
1f47a goblin
1f4a9 poop pile_of_poo
1f47b ghost boo spooky haunted
1f480 skull
2620 skull_and_crossbones pirate death hazard toxic poison
1f47d alien ufo
1f47e space_invader
1f916 robot
1f383 jack-o-lantern pumpkin
1f63a smiley_cat
1f638 smile_cat
1f639 joy_cat
1f63b heart_eyes_cat
1f63c smirk_cat smug_cat
1f63d kissing_cat
1f640 scream_cat weary_cat
1f63f crying_cat
1f63e angry_cat pouting_cat
1f450 open_hands
1f64c raised_hands praise
1f44f clap applause
1f64f folded_hands welcome thank_you namaste pray
1f91d handshake done_deal
1f44d +1 thumbs_up like
1f44e -1 thumbs_down
1f44a fist_bump punch
270a fist power
1f91b left_fist
1f91c right_fist
1f91e fingers_crossed
270c peace_sign victory
1f918 rock_on sign_of_the_horns
1f44c ok got_it
1f448 point_left
1f449 point_right
1f446 point_up this
1f447 point_down
261d wait_one_second point_of_information asking_a_question
270b hand raised_hand
1f91a stop
1f590 high_five palm
1f596 spock live_long_and_prosper
1f44b wave hello hi
1f919 call_me
1f4aa muscle
1f595 middle_finger
270d writing
1f933 selfie
1f485 nail_polish nail_care
1f48d ring
1f484 lipstick
1f48b lipstick_kiss
1f444 lips mouth
1f445 tongue
1f442 ear
1f443 nose
1f463 footprints feet
1f441 eye
1f440 eyes looking
1f5e3 speaking_head
1f464 silhouette shadow
1f465 silhouettes shadows
1f476 baby
1f466 boy
1f467 girl
1f468 man
1f469 woman
1f474 older_man elderly_man
1f475 older_woman elderly_woman
1f46e police cop
1f477 construction_worker
1f575 detective spy sleuth agent sneaky
1f385 santa
1f47c angel
1f647 bow
1f481 information_desk_person person_tipping_hand
1f645 no_signal nope
1f646 ok_signal
1f64b raising_hand pick_me
1f926 face_palm
1f937 shrug
1f483 dancer
1f57a dancing disco
1f6b6 walking pedestrian
1f3c3 running runner
1f46a family
1f455 shirt tshirt
1f453 glasses spectacles
1f451 crown queen king
1f393 graduate mortar_board
1f392 backpack satchel
1f4bc briefcase
2602 umbrella
1f436 puppy
1f431 kitten
1f43b bear
1f43c panda
1f98a fox
1f981 lion
1f438 frog
1f648 see_no_evil
1f649 hear_no_evil
1f64a speak_no_evil
1f412 monkey
1f414 chicken cluck
1f427 penguin
1f426 bird
1f986 duck
1f989 owl
1f984 unicorn
1f41d bee buzz honeybee
1f41b bug caterpillar
1f98b butterfly
1f40c snail
1f422 turtle tortoise
1f40d snake hiss
1f980 crab
1f991 squid
1f419 octopus
1f41f fish
1f42c dolphin flipper
1f988 shark
1f433 whale
1f40b humpback_whale
1f418 elephant
1f40e horse
1f416 pig oink
1f411 sheep baa
1f415 dog woof
1f408 cat meow
1f407 rabbit
1f401 mouse
1f409 dragon
1f335 cactus
1f384 holiday_tree
1f333 tree deciduous_tree
1f334 palm_tree
1f331 seedling sprout
1f33f herb plant
2618 shamrock clover
1f340 lucky four_leaf_clover
1f343 leaves wind fall
1f342 fallen_leaf
1f341 maple_leaf
1f344 mushroom
1f490 bouquet
1f337 tulip flower
1f339 rose
1f33b sunflower
1f338 cherry_blossom
1f30e earth_americas
1f30d earth_africa
1f30f earth_asia
1f315 full_moon
1f319 moon
1f4ab seeing_stars
2b50 star
1f31f glowing_star
2728 sparkles glamour
26a1 high_voltage zap
1f525 fire lit hot flame
1f4a5 boom explosion crash collision
2604 comet meteor
2600 sunny
26c5 partly_sunny partly_cloudy
1f308 rainbow pride lgbtq
2601 cloud overcast
1f327 rainy soaked drenched
26c8 thunderstorm thunder_and_rain
2603 snowman
2744 snowflake
1f4a8 dash
1f30a ocean
1f4a7 drop water_drop
1f4a6 sweat_drops
1f34e apple
1f34a orange tangerine mandarin
1f34b lemon
1f34c banana
1f349 watermelon
1f347 grapes
1f353 strawberry
1f351 peach
1f34d pineapple
1f95d kiwi
1f951 avocado
1f345 tomato
1f346 eggplant
1f955 carrot
1f33d corn maize
1f336 hot_pepper chili_pepper
1f954 potato
1f35e bread
1f9c0 cheese
1f95a egg
1f373 cooking
1f953 bacon
1f95e pancakes breakfast
1f355 pizza
1f32d hotdog
1f354 hamburger
1f35f fries
1f32e taco
1f32f burrito
1f957 salad
1f35d spaghetti
1f35c ramen noodles
1f372 food soup stew
1f363 sushi
1f35a rice
1f368 ice_cream gelato
1f370 cake
1f382 birthday
1f36d lollipop
1f36c candy
1f36b chocolate
1f37f popcorn
1f369 donut doughnut
1f36a cookie
1f95b milk glass_of_milk
2615 coffee
1f375 tea
1f37a beer
1f37b beers
1f942 clink toast
1f377 wine
1f378 cocktail
1f379 tropical_drink
1f37e champagne
1f374 fork_and_knife eating_utensils
1f37d hungry meal table_setting fork_and_knife_with_plate lets_eat
26bd football soccer
1f3c0 basketball
1f3c8 american_football
26be baseball
1f3be tennis
1f3d3 ping_pong table_tennis
1f3af direct_hit darts bulls_eye
1f3b3 strike bowling
1f3ae video_game
1f3b2 dice die
1f3c5 medal
1f947 first_place gold number_one
1f948 second_place silver
1f949 third_place bronze
1f3c6 trophy winner
1f3ab pass
1f39f ticket
1f3ad performing_arts drama theater
1f3a8 art palette painting
1f3ac action
1f3a4 microphone mike mic
1f3a7 headphones
1f3b9 piano musical_keyboard
1f3b8 guitar
1f697 car
1f695 taxi rideshare
1f68c bus school_bus
1f6b2 bike bicycle
1f6a8 siren rotating_light alert
1f682 train steam_locomotive
2708 airplane
1f680 rocket
26f5 boat sailboat
1f6a2 ship
2693 anchor
1f6a7 work_in_progress construction_zone
1f6a6 traffic_light vertical_traffic_light
1f5fa map world_map road_trip
1f3e0 house
1f3e2 office
1f3d7 construction
1f3d6 beach
26f0 mountain
1f30b volcano
26fa tent camping
1f320 shooting_star wish
1f386 fireworks
1f387 sparkler
231a watch
1f4f1 mobile_phone smartphone iphone android
1f4bb computer laptop
2328 keyboard
1f5a5 desktop_computer
1f5a8 printer
1f4be floppy_disk
1f4bf cd
1f4f7 camera
1f4f8 taking_a_picture say_cheese
1f4f9 video_camera video_recorder
1f4fd projector movie
1f4de landline home_phone
260e phone telephone
1f4fa tv television
1f4fb radio
23f1 stopwatch
23f2 timer
23f0 alarm_clock
231b times_up hourglass_done
23f3 time_ticking hourglass
1f50b battery full_battery
1f50c electric_plug
1f4a1 light_bulb bulb idea
1f526 flashlight
1f56f candle
1f5d1 wastebasket trash_can
1f4b8 losing_money easy_come_easy_go money_with_wings
1f4b5 dollar_bills
1f4b0 money
1f4b3 credit_card debit_card
1f48e gem crystal
2696 justice scales balance
1f527 fixing wrench
1f528 hammer maintenance handyman handywoman
2692 at_work hammer_and_pick
1f6e0 working_on_it hammer_and_wrench tools
26cf mine pick
1f529 nut_and_bolt screw
2699 gear settings mechanical engineer
1f52b gun
1f4a3 bomb
1f52a knife hocho betrayed
1f6e1 shield
1f52e crystal_ball oracle future fortune_telling
1f52d telescope
1f52c science microscope scientist
1f48a medicine pill
1f489 injection syringe
1f321 temperature thermometer warm
1f6bd toilet
1f6bf shower
1f6c1 bathtub
1f511 key
1f5dd secret dungeon old_key encrypted clue hint
1f6aa door
1f6cf bed bedroom
1f6d2 shopping_cart shopping_trolley
1f381 gift present
1f388 balloon celebration
1f380 ribbon decoration
1f38a confetti party_ball
1f389 tada
2709 email envelope mail
1f4e9 mail_sent sealed
1f4e8 mail_received
1f4e7 e-mail
1f48c love_letter
1f4e5 inbox
1f4e4 outbox
1f4e6 package
1f3f7 label tag price_tag
1f4eb mailbox
1f4ed inbox_zero empty_mailbox no_mail
1f4dc scroll
1f4c4 document paper file page
1f4ca bar_chart
1f4c8 chart upwards_trend growing increasing
1f4c9 downwards_trend shrinking decreasing
1f4c6 date
1f4c5 calendar
1f5c3 archive
1f4cb clipboard
1f4c1 organize file_folder
1f4c2 folder
1f5de newspaper swat
1f4f0 headlines
1f4d3 notebook composition_book
1f4d2 ledger spiral_notebook
1f4da books
1f4d6 book open_book
1f516 bookmark
1f517 link
1f4ce paperclip attachment
1f4cf ruler straightedge
1f4cc push_pin thumb_tack
1f4cd pin sewing_pin
2702 scissors
1f58a pen ballpoint_pen
1f58c paintbrush
1f4dd memo note
270f pencil
1f50d search find magnifying_glass
1f512 locked
1f513 unlocked
1f510 secure lock_with_key safe commitment loyalty
2764 heart love love_you
1f49b yellow_heart heart_of_gold
1f49a green_heart envy
1f499 blue_heart
1f49c purple_heart bravery
1f5a4 black_heart
1f494 broken_heart heartache
2763 heart_exclamation
1f495 two_hearts
1f49e revolving_hearts
1f493 heartbeat
1f497 heart_pulse growing_heart
1f496 sparkling_heart
1f498 cupid smitten heart_arrow
1f49d gift_heart
262e peace
262f yin_yang
269b atom physics
2622 radioactive nuclear
274c cross_mark incorrect wrong
2b55 circle
1f6d1 stop_sign octagonal_sign
26d4 no_entry wrong_way
1f6ab prohibited not_allowed
1f4af 100 hundred
1f4a2 anger bam pow
2757 exclamation
2755 grey_exclamation
2753 question
2754 grey_question
203c bangbang double_exclamation
2049 interrobang
26a0 warning caution danger
267b recycle
2705 check all_good approved
2714 check_mark
2611 checkbox
274e x
1f310 www globe
1f300 cyclone hurricane typhoon
1f4a4 zzz
267f accessible wheelchair disabled
2139 info
1f192 cool
1f195 new
1f193 free
1f197 squared_ok
1f199 squared_up
1f198 sos
1f19a vs
0030-20e3 zero
0031-20e3 one
0032-20e3 two
0033-20e3 three
0034-20e3 four
0035-20e3 five
0036-20e3 six
0037-20e3 seven
0038-20e3 eight
0039-20e3 nine
1f51f ten
1f522 1234 numbers
0023-20e3 hash
002a-20e3 asterisk
25b6 play
23f8 pause
23ef play_pause
23f9 stop_button
23fa record
23ed next_track skip_forward
23ee previous_track skip_back
23e9 fast_forward
23ea rewind fast_reverse
23eb double_up fast_up
23ec double_down fast_down
25c0 play_reverse
1f53c upvote up_button increase
1f53d downvote down_button decrease
27a1 right east
2b05 left west
2b06 up north
2b07 down south
2197 upper_right north_east
2198 lower_right south_east
2199 lower_left south_west
2196 upper_left north_west
2195 up_down
2194 left_right swap
21aa forward right_hook
21a9 reply left_hook
1f500 shuffle
1f501 repeat
1f502 repeat_one
1f504 counterclockwise return
1f503 clockwise
1f3b5 music
1f3b6 musical_notes
2795 plus add
2796 minus subtract
2797 division divide
2716 multiplication multiply
1f4b2 dollars
2122 tm trademark
1f51a end
1f519 back
1f51b on
1f51d top
1f51c soon
1f518 radio_button
26aa white_circle
26ab black_circle
1f534 red_circle
1f535 blue_circle
1f508 speaker
1f507 mute no_sound
1f509 softer
1f50a louder sound
1f514 notifications bell
1f515 mute_notifications
1f4e3 megaphone shout
1f4e2 loudspeaker bullhorn
1f4ac umm speech_balloon
1f5e8 speech_bubble
1f4ad thought dream
2660 spades
2663 clubs
2665 hearts
2666 diamonds
1f0cf joker
1f557 time clock
1f3f3 white_flag surrender
1f3f4 black_flag
1f3c1 checkered_flag race go start
1f6a9 triangular_flag
1f38c crossed_flags solidarity
`;

// Zulip leaves out all but one clock face, and the bare skin-tone modifiers.
const SKIPPED = new Set([
  '1f550', '1f551', '1f552', '1f553', '1f554', '1f555', '1f556', '1f558', '1f559', '1f55a', '1f55b',
  '1f55c', '1f55d', '1f55e', '1f55f', '1f560', '1f561', '1f562', '1f563', '1f564', '1f565', '1f566',
  '1f567', '1f3fb', '1f3fc', '1f3fd', '1f3fe', '1f3ff',
]);

const curated = new Map();
for (const line of CURATED.split('\n')) {
  const parts = line.trim().split(/\s+/).filter(Boolean);
  if (parts.length < 2) continue;
  const [code, canonical, ...aliases] = parts;
  if (curated.has(code)) throw new Error(`duplicate curated code ${code}`);
  curated.set(code, { canonical, aliases });
}

const hexToEmoji = (hex) => hex.split('-').map((h) => String.fromCodePoint(parseInt(h, 16))).join('');
const unqualify = (s) => s.replaceAll('\uFE0F', '');
const toCode = (s) => [...s].map((c) => c.codePointAt(0).toString(16).padStart(4, '0')).join('-');

// Same clean-up as Zulip's cleanup_name.
function cleanupName(name) {
  const replacements = [
    [' ', '_'], ['-', '_'], ['–', '_'], ['“', ''], ['”', ''], [':', ''], ['.', ''], [',', ''],
    ['(', ''], [')', ''], ['&', 'and'], ['‘', ''], ['’', ''], ["'", ''],
  ];
  for (const [a, b] of replacements) name = name.replaceAll(a, b);
  return name.replace(/_{2,}/g, '_').toLowerCase();
}
// A name must be typeable as :name: (Zulip's emoji syntax is :[\w\-\+]+:).
const usable = (n) => /^[\p{L}\p{N}_+-]+$/u.test(n);
const asciiFold = (n) => n.normalize('NFD').replace(/\p{M}/gu, '');

const all = new Map(); // code -> {canonical, aliases, curated}
// Curated canonical names are reserved first, so a CLDR name never takes one of them.
const canonicalNames = new Set([...curated.values()].map((c) => c.canonical));
if (canonicalNames.size !== curated.size) throw new Error('a curated canonical name is used twice');
for (const entry of EMOJI_DATA) {
  const code = toCode(unqualify(hexToEmoji(entry.unified)));
  if (SKIPPED.has(code) || all.has(code)) continue;
  const cur = curated.get(code);
  if (cur) {
    all.set(code, { canonical: cur.canonical, aliases: [...cur.aliases], curated: true });
    continue;
  }
  const ann = CLDR[unqualify(hexToEmoji(entry.unified))];
  if (!ann || !ann.tts || ann.tts.length !== 1) continue;
  let canonical = cleanupName(ann.tts[0].trim());
  // Zulip resolves such collisions by hand; we fall back to the iamcal short name.
  if (!usable(canonical) || canonicalNames.has(canonical)) {
    canonical = (entry.short_names ?? []).map(cleanupName).find((n) => usable(n) && !canonicalNames.has(n));
    if (!canonical) continue;
  }
  canonicalNames.add(canonical);
  const aliases = (ann.default ?? []).map((a) => cleanupName(a.trim())).filter(usable);
  all.set(code, { canonical, aliases: [...new Set(aliases)].filter((a) => a !== canonical), curated: false });
}
for (const code of curated.keys()) if (!all.has(code)) throw new Error(`curated code ${code} is not in the emoji data`);

// Aliases may not collide with canonical names; an alias claimed by several emoji is kept
// only where it was curated.
const aliasOwners = new Map();
for (const [code, e] of all) {
  e.aliases = e.aliases.filter((a) => !canonicalNames.has(a));
  for (const a of e.aliases) aliasOwners.set(a, [...(aliasOwners.get(a) ?? []), code]);
}
for (const [alias, codes] of aliasOwners) {
  if (codes.length < 2) continue;
  for (const code of codes) {
    const e = all.get(code);
    if (!e.curated) e.aliases = e.aliases.filter((a) => a !== alias);
  }
}
// Every non-ASCII name also gets an ASCII alias (flag_türkiye -> flag_turkiye).
const taken = new Set([...canonicalNames, ...[...all.values()].flatMap((e) => e.aliases)]);
for (const e of all.values()) {
  for (const name of [e.canonical, ...e.aliases]) {
    if (/^[\x00-\x7f]*$/.test(name)) continue;
    const ascii = asciiFold(name);
    if (/^[a-z0-9_+-]+$/.test(ascii) && !taken.has(ascii)) {
      e.aliases.push(ascii);
      taken.add(ascii);
    }
  }
}

const codeToNames = {};
for (const [code, e] of [...all].sort((a, b) => (a[0] < b[0] ? -1 : 1))) codeToNames[code] = [e.canonical, ...e.aliases];
const out = path.join(path.dirname(new URL(import.meta.url).pathname), '..', 'src', 'lib', 'emoji-data.json');
const source = `emoji-datasource-google@${read('emoji-datasource-google/package.json').version}, cldr-annotations-full@${read('cldr-annotations-full/package.json').version}`;
fs.writeFileSync(out, JSON.stringify({ source, code_to_names: codeToNames }) + '\n');
console.log(`wrote ${out}: ${Object.keys(codeToNames).length} emoji, ${Object.values(codeToNames).flat().length} names`);
