import { computeSignature, verifySignature } from './signature';

describe('verifySignature (X-Hub-Signature-256)', () => {
  const secret = 'app-secret';
  const raw = Buffer.from('{"object":"whatsapp_business_account","entry":[]}');
  // independently computed: printf '%s' '<raw>' | openssl dgst -sha256 -hmac app-secret
  const known = 'sha256=d3e4f9da0ce6c71ab3dba55929b8eeeee2455349e534924ead19f98d143e904f';

  it("computes Meta's header value", () => {
    expect(computeSignature(raw, secret)).toBe(known);
    expect(computeSignature(raw.toString('utf8'), secret)).toBe(known);
  });

  it('accepts a valid signature (Buffer or string body, any hex case)', () => {
    expect(verifySignature(raw, known, secret)).toBe(true);
    expect(verifySignature(raw.toString(), known, secret)).toBe(true);
    expect(verifySignature(raw, 'sha256=' + known.slice(7).toUpperCase(), secret)).toBe(true);
  });

  it('rejects a tampered body', () => {
    expect(verifySignature(Buffer.from(raw.toString().replace('entry', 'entrx')), known, secret)).toBe(false);
    // re-serialised JSON is not the raw body
    expect(verifySignature(Buffer.from(JSON.stringify(JSON.parse(raw.toString()), null, 1)), known, secret)).toBe(
      false,
    );
  });

  it('rejects the wrong secret', () => {
    expect(verifySignature(raw, known, 'other-secret')).toBe(false);
    expect(verifySignature(raw, known, '')).toBe(false);
  });

  it('rejects a missing or malformed header', () => {
    expect(verifySignature(raw, undefined, secret)).toBe(false);
    expect(verifySignature(raw, null, secret)).toBe(false);
    expect(verifySignature(raw, '', secret)).toBe(false);
    expect(verifySignature(raw, known.slice(7), secret)).toBe(false); // no sha256= prefix
    expect(verifySignature(raw, 'sha1=' + known.slice(7), secret)).toBe(false);
    expect(verifySignature(raw, known.slice(0, -2), secret)).toBe(false); // truncated
    expect(verifySignature(raw, [known], secret)).toBe(false);
  });
});
