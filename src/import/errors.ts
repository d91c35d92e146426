// The one error an import stops with: its message names what is wrong (which file, which entry, which
// id), for a person reading the terminal. `parley import` prints it and exits 1; nothing is written.
export class ImportError extends Error {}
