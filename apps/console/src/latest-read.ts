import { useCallback, useRef } from 'react';

/**
 * Reads that overlap (a search typed key by key, a page changed while the last one loads): only the latest one's
 * answer (or error) goes on; an earlier one that comes later is dropped, never shown over the newer one.
 */
export function useLatestRead() {
  const reads = useRef(0);
  return useCallback(<T>(request: Promise<T>): Promise<T> => {
    const read = ++reads.current;
    const dropped = new Promise<never>(() => undefined);
    return request.then(
      (value) => (read === reads.current ? value : dropped),
      (error) => (read === reads.current ? Promise.reject(error) : dropped),
    );
  }, []);
}
