import { addressKey } from './rate-limit';

describe('addressKey (what a per-IP limit counts)', () => {
  it.each([
    ['203.0.113.7', '203.0.113.7'],
    ['::ffff:203.0.113.7', '203.0.113.7'],
    ['2001:db8:85a3:1234:5678:8a2e:370:7334', '2001:db8:85a3:1234::/64'],
    ['2001:db8:85a3:1234::1', '2001:db8:85a3:1234::/64'],
    ['2001:0db8:85a3:1234:ffff::9', '2001:db8:85a3:1234::/64'],
    ['2001:db8::1', '2001:db8:0:0::/64'],
    ['::1', '0:0:0:0::/64'],
    ['fe80::1%eth0', 'fe80:0:0:0::/64'],
  ])('%s → %s', (ip, key) => expect(addressKey(ip)).toBe(key));

  it('every address of one /64 is one key; the next /64 is another', () => {
    expect(addressKey('2a02:8071:1:2:aaaa::1')).toBe(addressKey('2a02:8071:1:2:bbbb:cccc:dddd:eeee'));
    expect(addressKey('2a02:8071:1:3::1')).not.toBe(addressKey('2a02:8071:1:2::1'));
  });
});
