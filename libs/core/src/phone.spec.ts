import { otherWhatsAppForms, normalizePhone } from './phone';

describe('normalizePhone', () => {
  it.each([
    ['15550102030', '15550102030'],
    ['+15550102030', '15550102030'],
    ['+1 (555) 010-2030', '15550102030'],
    ['0015550102030', '15550102030'],
    ['00 1 555 010 2030', '15550102030'],
    ['  +44 20 7946 0958 ', '442079460958'],
    ['+49.30.1234567', '49301234567'],
    ['91-98765-43210', '919876543210'],
    ['+1\t555 010 2030', '15550102030'],
    ['12345678', '12345678'], // 8 digits: the shortest accepted
    ['123456789012345', '123456789012345'], // 15 digits: the longest accepted
    ['+(1) 555 0102030', '15550102030'],
    ['+44 (0)20 7946 0958', '442079460958'], // the trunk prefix (0) is not dialled after the country code
    ['0049 (0) 30 1234567', '49301234567'],
    ['+49(0)301234567', '49301234567'],
    ['4915112345678.0', '4915112345678'], // a float's rendering (pandas), not the digits 49151123456780
    ['+4915112345678.00', '4915112345678'],
  ])('%j → %j', (input, expected) => {
    expect(normalizePhone(input)).toBe(expected);
  });

  it('accepts a JSON number holding the digits', () => {
    expect(normalizePhone(15550102030)).toBe('15550102030');
    expect(normalizePhone(1.5)).toBeNull();
    expect(normalizePhone(-15550102030)).toBeNull();
  });

  it.each([
    ['empty', ''],
    ['blank', '   '],
    ['letters', '+1 555 CALL NOW'],
    ['x extension', '+1 555 010 2030 x12'],
    ['plus in the middle', '1+5550102030'],
    ['two pluses', '++15550102030'],
    ['plus then 00', '+0015550102030'],
    ['national number with trunk 0', '05550102030'],
    ['plus then 0', '+05550102030'],
    ['too short (7 digits)', '1234567'],
    ['too short after 00', '001234567'],
    ['too long (16 digits)', '1234567890123456'],
    ['unbalanced parenthesis', '+1 (555 010 2030'],
    ['closing before opening', '+1 )555( 010 2030'],
    ['slash', '+1/555/010/2030'],
    ['unicode digits', '+١٥٥٥٠١٠٢٠٣٠'],
    ['letter o for zero', '+1555o102030'],
    ['too long input', `+1 ${' '.repeat(50)}5550102030`],
  ])('rejects %s', (_, input) => {
    expect(normalizePhone(input)).toBeNull();
  });

  it.each([null, undefined, {}, [], true])('rejects non-strings: %j', (input) => {
    expect(normalizePhone(input)).toBeNull();
  });
});

describe('otherWhatsAppForms', () => {
  it.each([
    ['Mexico without the 1', '525512345678', ['5215512345678']],
    ['Mexico with the 1', '5215512345678', ['525512345678']],
    ['Brazil mobile with the 9', '5511987654321', ['551187654321']],
    ['Brazil mobile without the 9', '551187654321', ['5511987654321']],
    ['Brazil mobile whose number starts with 9', '551198765432', ['5511998765432']],
    ['Argentina without the 9', '541151234567', ['5491151234567']],
    ['Argentina with the 9', '5491151234567', ['541151234567']],
  ])('%s: %s ↔ %s', (_name, number, forms) => expect(otherWhatsAppForms(number)).toEqual(forms));

  it.each([
    ['a Brazilian landline (2–5 after the area code)', '551132654321'],
    ['Germany', '4915112345678'],
    ['the US', '15550102030'],
    ['a Mexican number of the wrong length', '52551234567'],
  ])('none for %s', (_name, number) => expect(otherWhatsAppForms(number)).toEqual([]));
});
