import { originAllowed, parseAllowedOrigins } from './origin';

describe('MCP Origin validation', () => {
  const own = 'http://127.0.0.1:3000';

  it('allows requests without Origin (desktop and server-side agents)', () => {
    expect(originAllowed(undefined, own, [])).toBe(true);
    expect(originAllowed('', own, [])).toBe(true);
  });

  it("allows the API's own origin and the configured ones, in any letter case, default ports ignored", () => {
    expect(originAllowed('http://127.0.0.1:3000', own, [])).toBe(true);
    expect(originAllowed('HTTPS://Inspector.Example.com:443', own, ['https://inspector.example.com'])).toBe(true);
  });

  it('rejects other browser origins, `null` and non-http schemes', () => {
    expect(originAllowed('https://evil.example', own, [])).toBe(false);
    expect(originAllowed('http://127.0.0.1:3001', own, [])).toBe(false);
    expect(originAllowed('null', own, ['https://inspector.example.com'])).toBe(false);
    expect(originAllowed('file://', own, [])).toBe(false);
  });

  it('`*` allows any origin', () => {
    expect(originAllowed('https://anything.example', own, parseAllowedOrigins(' * '))).toBe(true);
  });

  it('parses a comma-separated setting', () => {
    expect(parseAllowedOrigins('https://a.example, http://localhost:6274 ,')).toEqual([
      'https://a.example',
      'http://localhost:6274',
    ]);
    expect(parseAllowedOrigins(undefined)).toEqual([]);
  });
});
