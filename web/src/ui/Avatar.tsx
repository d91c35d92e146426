// A person's picture: their initials on a colour of their own, with the avatar image over it once it
// has loaded (so an unreachable Gravatar never shows a broken image).
import { useState } from 'preact/hooks';

const COLORS = ['#c2726a', '#b9845a', '#a08c3f', '#6c9a4f', '#4f9a85', '#4f8aa6', '#6277b8', '#8a6cb8', '#b0619a'];

export function initials(name: string): string {
  const parts = name.trim().split(/\s+/).filter(Boolean);
  const letters = parts.length > 1 ? [parts[0], parts[parts.length - 1]] : parts;
  return letters.map((p) => [...p][0]?.toUpperCase() ?? '').join('') || '?';
}

export function Avatar({ name, url, userId, size = 'normal' }: { name: string; url: string | null; userId: number; size?: 'normal' | 'small' }) {
  const [loaded, setLoaded] = useState(false);
  return (
    <span class={`avatar avatar-${size}`} style={{ backgroundColor: COLORS[userId % COLORS.length] }} aria-hidden="true">
      <span class="avatar-initials">{initials(name)}</span>
      {url ? <img src={url} alt="" loading="lazy" class={loaded ? 'loaded' : ''} onLoad={() => setLoaded(true)} /> : null}
    </span>
  );
}
