/** Small guards for request bodies (the sandbox validates by hand, like the platform it imitates). */
export type Json = Record<string, unknown>;

export const isObj = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

export const nonEmpty = (v: unknown): v is string => typeof v === 'string' && v.trim().length > 0;

/** Business-scoped user id: ISO country code, optional `ENT.`, then up to 128 alphanumerics (`US.13491208655302741918`). */
export const BSUID = /^[A-Z]{2}\.(ENT\.)?[A-Za-z0-9]{1,128}$/;
