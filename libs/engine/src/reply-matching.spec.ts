import { keywordMatches, matchReplyBranch, replyMatches, triggerMatchesMessage } from './reply-matching';

describe('reply matching', () => {
  it('any matches every reply', () => {
    expect(replyMatches({ type: 'any' }, { text: 'whatever' })).toBe(true);
    expect(replyMatches({ type: 'any' }, { buttonPayload: 'X' })).toBe(true);
  });

  it('button matches the exact payload only', () => {
    expect(replyMatches({ type: 'button', payload: 'CONFIRM' }, { buttonPayload: 'CONFIRM', buttonText: 'Yes' })).toBe(
      true,
    );
    expect(replyMatches({ type: 'button', payload: 'CONFIRM' }, { buttonPayload: 'confirm' })).toBe(false);
    expect(replyMatches({ type: 'button', payload: 'CONFIRM' }, { text: 'CONFIRM' })).toBe(false);
  });

  it('keyword matches the whole text, trimmed and case-insensitive', () => {
    const m = { type: 'keyword' as const, keywords: ['yes', ' OK '] };
    expect(replyMatches(m, { text: 'YES' })).toBe(true);
    expect(replyMatches(m, { text: '  Yes \n' })).toBe(true);
    expect(replyMatches(m, { text: 'ok' })).toBe(true);
    expect(replyMatches(m, { text: 'yes please' })).toBe(false);
    expect(replyMatches(m, { text: 'eyes' })).toBe(false);
    expect(replyMatches(m, {})).toBe(false);
  });

  it('keyword falls back to the button text of a button reply', () => {
    expect(replyMatches({ type: 'keyword', keywords: ['yes'] }, { buttonPayload: 'P1', buttonText: 'Yes' })).toBe(true);
  });

  it('an empty text never matches a keyword', () => {
    expect(keywordMatches([''], '')).toBe(false);
    expect(keywordMatches(['a'], 42)).toBe(false);
  });

  it('branches are checked in order', () => {
    const branches = [
      { match: { type: 'button' as const, payload: 'STOP' }, next: 'a' },
      { match: { type: 'keyword' as const, keywords: ['yes'] }, next: 'b' },
      { match: { type: 'any' as const }, next: 'c' },
    ];
    expect(matchReplyBranch(branches, { buttonPayload: 'STOP', buttonText: 'yes' })).toBe(0);
    expect(matchReplyBranch(branches, { text: 'Yes' })).toBe(1);
    expect(matchReplyBranch(branches, { text: 'maybe' })).toBe(2);
    expect(matchReplyBranch(branches.slice(0, 2), { text: 'maybe' })).toBe(-1);
  });

  it('keyword triggers match inbound messages; webhook triggers never do', () => {
    expect(triggerMatchesMessage({ type: 'keyword', keywords: ['START', 'join'] }, ' start ')).toBe(true);
    expect(triggerMatchesMessage({ type: 'keyword', keywords: ['START'] }, 'restart')).toBe(false);
    expect(triggerMatchesMessage({ type: 'webhook' }, 'start')).toBe(false);
  });
});
