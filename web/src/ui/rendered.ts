// Finishing touches on message HTML the server rendered (the app never builds HTML from strings): emoji
// spans show their Unicode character instead of ":name:", previews of images on other sites show
// their address (the page does not load them), and links to other sites open in a new tab
// without telling that site where they came from. Links inside Parley are handled by the list's click
// handler (narrow links navigate in the app).

/** "emoji emoji-1f642" / "emoji-1f468-200d-1f4bb" → the character, or null for custom emoji. */
export function emojiChar(className: string): string | null {
  const m = /(?:^|\s)emoji-([0-9a-f]+(?:-[0-9a-f]+)*)(?:\s|$)/.exec(className);
  if (!m) return null;
  try {
    return String.fromCodePoint(...m[1].split('-').map((h) => parseInt(h, 16)));
  } catch {
    return null;
  }
}

/** Applies the touches to a rendered message's element, in place. */
export function finishRendered(root: ParentNode): void {
  // Image previews of other sites' images: the page's policy (img-src) does not load them, so that
  // reading a message tells no other site who read it. A preview whose link is also in the text goes;
  // one that replaced its link shows the link's address instead.
  for (const img of root.querySelectorAll<HTMLImageElement>('.message_inline_image img')) {
    let src: URL;
    try {
      src = new URL(img.getAttribute('src') ?? '', window.location.href);
    } catch {
      continue;
    }
    if (src.origin === window.location.origin) continue;
    const preview = img.closest('.message_inline_image');
    const href = img.closest('a')?.getAttribute('href') ?? '';
    const inText = [...root.querySelectorAll('a[href]')].some((a) => !a.closest('.message_inline_image') && a.getAttribute('href') === href);
    if (inText && preview) preview.remove();
    else img.replaceWith(document.createTextNode(href));
  }
  for (const span of root.querySelectorAll<HTMLElement>('span.emoji')) {
    const ch = emojiChar(span.className);
    if (ch !== null && span.textContent !== ch) span.textContent = ch;
  }
  for (const a of root.querySelectorAll<HTMLAnchorElement>('a[href]')) {
    let url: URL;
    try {
      url = new URL(a.getAttribute('href') as string, window.location.href);
    } catch {
      continue;
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:' && url.protocol !== 'mailto:') {
      // Defence in depth: the renderer never makes these, but a javascript: link must not work.
      a.removeAttribute('href');
      continue;
    }
    if (url.origin !== window.location.origin) {
      a.target = '_blank';
      a.rel = 'noopener noreferrer';
    }
  }
}

/** The in-app hash a link points at ("#narrow/..."), if it is a link to this Parley's web app. */
export function inAppHash(a: HTMLAnchorElement): string | null {
  const href = a.getAttribute('href');
  if (!href) return null;
  let url: URL;
  try {
    url = new URL(href, window.location.href);
  } catch {
    return null;
  }
  if (url.origin !== window.location.origin || url.pathname !== '/' || !url.hash.startsWith('#narrow')) return null;
  return url.hash;
}
