import {
  boundedDetail,
  type EngineEvent,
  type HistoryEntry,
  type RunState,
  type WaitingFor,
} from '@switchboard/engine';

/** A history entry as the drivers store it: the engine's entry plus when it happened and what the step did. */
export interface AnnotatedHistoryEntry extends HistoryEntry {
  /** When the step was recorded (ISO time; the engine itself has no clock). */
  at?: string;
  /** The effect's input and its output (e.g. the message id of a send), or the reply that resumed the run. */
  detail?: { input?: unknown; output?: unknown; error?: unknown; reply?: unknown };
}

/**
 * Stamps the history entries the last engine step added (those without `at`) with the time, and gives the entry that
 * the event resolved (the effect's or the wait's seq) its detail. Mutates `state` (it is about to be persisted).
 */
export function annotateHistory(
  state: RunState,
  before: WaitingFor | null | undefined,
  event: EngineEvent | null,
  now: Date = new Date(),
): void {
  const at = now.toISOString();
  for (const entry of state.history as AnnotatedHistoryEntry[]) {
    if (entry.at !== undefined) continue;
    entry.at = at;
    if (!before || !event || entry.seq !== before.seq) continue;
    if (before.kind === 'effect') {
      const { type: _type, seq: _seq, nodeId: _nodeId, ...input } = before.effect as unknown as Record<string, unknown>;
      // bounded: the run keeps a large answer in vars[saveAs]; its history keeps a preview (boundedDetail)
      if (event.type === 'effect_completed')
        entry.detail = { input: boundedDetail(input), output: boundedDetail(event.result ?? null) };
      else if (event.type === 'effect_failed') entry.detail = { input: boundedDetail(input), error: event.error };
    } else if (before.kind === 'reply' && event.type === 'reply_received') {
      entry.detail = { reply: boundedDetail(event.reply) };
    }
  }
}
