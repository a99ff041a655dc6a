/**
 * What a run's history keeps of a step's data (an effect's input and output, a reply): a value over
 * HISTORY_DETAIL_MAX_CHARS of JSON is cut down, its large parts replaced by `{truncated: true, chars, preview}`. The run
 * itself keeps the whole value where it needs it (`vars[saveAs]`); the history is for people reading what happened,
 * and a run row holds up to 100 entries, rewritten at every step (an HTTP answer of 1 MiB in each made it 100 MiB).
 */
export const HISTORY_DETAIL_MAX_CHARS = 4096;
const PREVIEW_CHARS = 1024;

export function boundedDetail(value: unknown, maxChars = HISTORY_DETAIL_MAX_CHARS): unknown {
  const json = JSON.stringify(value);
  if (json === undefined || json.length <= maxChars || isCut(value)) return value;
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    // an object keeps its small fields as they are (an HTTP answer's status and headers) and cuts the large ones
    const share = Math.floor(maxChars / Math.max(1, Object.keys(value).length));
    return Object.fromEntries(
      Object.entries(value as Record<string, unknown>).map(([key, field]) => [key, cut(field, share)]),
    );
  }
  return cut(value, maxChars);
}

function cut(value: unknown, maxChars: number): unknown {
  const json = JSON.stringify(value);
  if (json === undefined || json.length <= maxChars || isCut(value)) return value;
  const text = typeof value === 'string' ? value : json;
  return { truncated: true, chars: text.length, preview: text.slice(0, Math.min(PREVIEW_CHARS, maxChars)) };
}

/** A value cut already (the Temporal driver cuts a step's result before the history does), as `cut` makes it. */
function isCut(value: unknown): boolean {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const { truncated, chars, preview, ...rest } = value as Record<string, unknown>;
  return (
    truncated === true &&
    typeof chars === 'number' &&
    typeof preview === 'string' &&
    preview.length <= PREVIEW_CHARS &&
    Object.keys(rest).length === 0
  );
}
