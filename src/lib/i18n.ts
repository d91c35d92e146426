// Message catalogue. As in Zulip (gettext), the English text is the key: code raises errors with an
// English template and {placeholders}; the reply renders it in the user's language. Adding a language
// means adding a table that maps English templates to translated ones.

type Catalogue = Record<string, string>;

const catalogues: Record<string, Catalogue> = {
  en: {},
};

/** Languages with a catalogue; `en` is the source language and always present. */
export function knownLocales(): string[] {
  return Object.keys(catalogues);
}

/** Registers (or extends) a translation table; later languages ship as data, not code changes. */
export function addCatalogue(locale: string, entries: Catalogue): void {
  catalogues[locale] = { ...(catalogues[locale] ?? {}), ...entries };
}

/** Renders `template` in `locale` (falling back to English), filling {name} placeholders. */
export function translate(locale: string | undefined, template: string, vars?: Record<string, unknown>): string {
  const table = (locale && catalogues[locale]) || catalogues.en;
  const text = table[template] ?? template;
  if (!vars) return text;
  return text.replace(/\{(\w+)\}/g, (whole, key: string) => (key in vars ? String(vars[key]) : whole));
}
