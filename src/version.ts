// Parley's version and the Zulip API level it speaks.
export const PARLEY_VERSION = '0.1.0';
/** zulip_version: names Parley; the Python client refuses a server without one. */
export const ZULIP_VERSION = `12.1-parley-${PARLEY_VERSION}`;
/** The newest feature level of the spec. */
export const ZULIP_FEATURE_LEVEL = 500;
export const ZULIP_MERGE_BASE = ZULIP_VERSION;
