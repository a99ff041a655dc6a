/**
 * Matching customer replies against wait_for_reply branches and keyword triggers.
 *
 * - `any`: every reply matches.
 * - `button`: the reply's buttonPayload equals the branch payload exactly (case-sensitive: payloads are ids).
 * - `keyword`: the reply text (or, for a button tap without text, the button text), trimmed and
 *   lower-cased, equals one of the keywords trimmed and lower-cased. Whole-message match, not substring.
 */
import type { KeywordTrigger, ReplyBranch, ReplyMatch, Trigger } from './definition';

export interface InboundReply {
  text?: string;
  buttonPayload?: string;
  buttonText?: string;
  messageId?: string;
  [key: string]: unknown;
}

function normalise(text: unknown): string {
  return typeof text === 'string' ? text.trim().toLowerCase() : '';
}

export function keywordMatches(keywords: readonly string[], text: unknown): boolean {
  const t = normalise(text);
  if (t === '') return false;
  return keywords.some((k) => normalise(k) === t);
}

export function replyMatches(match: ReplyMatch, reply: InboundReply): boolean {
  switch (match.type) {
    case 'any':
      return true;
    case 'button':
      return typeof reply.buttonPayload === 'string' && reply.buttonPayload === match.payload;
    case 'keyword': {
      const text = typeof reply.text === 'string' && reply.text.trim() !== '' ? reply.text : reply.buttonText;
      return keywordMatches(match.keywords, text);
    }
    default:
      return false;
  }
}

/** Index of the first branch the reply matches, or -1 (the run keeps waiting). */
export function matchReplyBranch(branches: readonly ReplyBranch[], reply: InboundReply): number {
  return branches.findIndex((branch) => replyMatches(branch.match, reply));
}

/** Whether an inbound customer message starts a workflow with this trigger. */
export function triggerMatchesMessage(trigger: Trigger, text: unknown): boolean {
  if (trigger.type !== 'keyword') return false;
  return keywordMatches((trigger as KeywordTrigger).keywords, text);
}
