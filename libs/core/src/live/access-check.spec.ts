import { ForbiddenException, InternalServerErrorException, UnauthorizedException } from '@nestjs/common';
import { accessRefused, LIVE_EVENTS_RECHECK_MS, watchAccess } from './access-check';

describe('live streams re-checking their reader', () => {
  afterEach(() => jest.useRealTimers());

  it('a 401 or 403 ends the access; any other failure says nothing and is passed on', () => {
    expect(accessRefused(new UnauthorizedException())).toBe(false);
    expect(accessRefused(new ForbiddenException())).toBe(false);
    const away = new Error('connection terminated');
    expect(() => accessRefused(away)).toThrow(away);
    expect(() => accessRefused(new InternalServerErrorException())).toThrow(InternalServerErrorException);
  });

  it('asks one question at a time; failed checks end nothing; the first false ends it once', async () => {
    jest.useFakeTimers();
    const answers: Array<() => Promise<boolean>> = [
      () => Promise.reject(new Error('database away')),
      () => Promise.resolve(true),
      () => Promise.resolve(false),
    ];
    let asked = 0;
    let release: () => void = () => undefined;
    const slow = new Promise<void>((resolve) => (release = resolve));
    const check = jest.fn(async () => {
      asked++;
      if (asked === 1) await slow; // the first question is still open at the next tick: that tick asks nothing
      return answers[asked - 1]();
    });
    const ended = jest.fn();
    watchAccess(check, ended);
    await jest.advanceTimersByTimeAsync(LIVE_EVENTS_RECHECK_MS * 2);
    expect(check).toHaveBeenCalledTimes(1);
    release();
    await jest.advanceTimersByTimeAsync(LIVE_EVENTS_RECHECK_MS); // the rejected answer came: nothing ended
    expect(ended).not.toHaveBeenCalled();
    await jest.advanceTimersByTimeAsync(LIVE_EVENTS_RECHECK_MS * 2);
    expect(check).toHaveBeenCalledTimes(3);
    expect(ended).toHaveBeenCalledTimes(1);
    await jest.advanceTimersByTimeAsync(LIVE_EVENTS_RECHECK_MS * 3);
    expect(check).toHaveBeenCalledTimes(3); // stopped
  });
});
