/**
 * Undo/redo as a stack of snapshots of the builder's model (add, delete with its edges, move, connect and field
 * edits all produce a new snapshot). Consecutive edits with the same `coalesce` key (typing in one field) within
 * `windowMs` become one step.
 */
export interface History<T> {
  past: T[];
  present: T;
  future: T[];
  lastKey?: string;
  lastAt?: number;
}

export const LIMIT = 200;

export function createHistory<T>(present: T): History<T> {
  return { past: [], present, future: [] };
}

export function commit<T>(h: History<T>, next: T, coalesce?: string, now = Date.now(), windowMs = 1000): History<T> {
  if (next === h.present) return h;
  if (coalesce && coalesce === h.lastKey && h.lastAt !== undefined && now - h.lastAt < windowMs)
    return { ...h, present: next, future: [], lastAt: now };
  return { past: [...h.past, h.present].slice(-LIMIT), present: next, future: [], lastKey: coalesce, lastAt: now };
}

/** Replaces the present without an undo step (e.g. positions while a drag is in progress). */
export function replace<T>(h: History<T>, next: T): History<T> {
  return { ...h, present: next };
}

export function undo<T>(h: History<T>): History<T> {
  if (h.past.length === 0) return h;
  return {
    past: h.past.slice(0, -1),
    present: h.past[h.past.length - 1],
    future: [h.present, ...h.future],
    lastKey: undefined,
  };
}

export function redo<T>(h: History<T>): History<T> {
  if (h.future.length === 0) return h;
  return { past: [...h.past, h.present], present: h.future[0], future: h.future.slice(1), lastKey: undefined };
}

/** Ends a gesture that replaced the present step by step (a drag): one undo step back to `origin`. */
export function commitGesture<T>(h: History<T>, origin: T): History<T> {
  if (origin === h.present) return h;
  return { past: [...h.past, origin].slice(-LIMIT), present: h.present, future: [], lastKey: undefined };
}
