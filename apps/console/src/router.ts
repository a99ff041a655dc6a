import { useEffect, useState } from 'react';

/** A tiny history router for /app/...: the API serves index.html for every page path (SPA fallback). */
export const BASE = '/app';

export function navigate(path: string) {
  window.history.pushState(null, '', `${BASE}${path}`);
  window.dispatchEvent(new PopStateEvent('popstate'));
}

export function usePath(): string {
  const [path, setPath] = useState(currentPath());
  useEffect(() => {
    const update = () => setPath(currentPath());
    window.addEventListener('popstate', update);
    return () => window.removeEventListener('popstate', update);
  }, []);
  return path;
}

function currentPath(): string {
  const p = window.location.pathname.startsWith(BASE)
    ? window.location.pathname.slice(BASE.length)
    : window.location.pathname;
  return p === '' ? '/' : p;
}
