/**
 * Node flags the API process is started with (package.json's start:api, scripts/dev.ts, deploy/, the bench).
 *
 * `--max-semi-space-size=64`: V8's young generation may grow to 64 MB per semi-space instead of 16. A list read
 * allocates ~100 kB, and with 100–200 requests in flight the default young generation filled every ~80 ms; each
 * scavenge then copied the in-flight requests' objects and promoted those that survived twice, which the next
 * mark-compact collected: garbage collection was 8.6 % of the API's CPU against 3 % for the bare server of the read
 * benchmark. With 64 MB, CPU per list read fell ~20 % (docs/performance.md, "Eighth round"), for up to ~100 MB more
 * memory under load.
 */
export const API_NODE_FLAGS = ['--max-semi-space-size=64'];
