import { contactFromPayload, digitsOnly } from './contact-binding';

describe('contactFromPayload', () => {
  it.each([
    [{ phone: '+1 (555) 010-2030' }, { phone: '15550102030' }],
    [{ phoneNumber: 447700900123 }, { phone: '447700900123' }],
    [
      { phone_number: '+44 7700 900123', name: 'Ann', email: 'ann@example.com' },
      { phone: '447700900123', name: 'Ann', email: 'ann@example.com' },
    ],
    [{ contact: { phone: '+49 30 1234567', name: ' Bo ' } }, { phone: '49301234567', name: 'Bo' }],
    [
      {
        contact: { phoneNumber: '5511987654321', email: 'c@example.com' },
        name: 'top-level name is not the contact of contact.*',
      },
      { phone: '5511987654321', email: 'c@example.com' },
    ],
    [{ customer: { phone: '+33 6 12 34 56 78', name: 'Dee' } }, { phone: '33612345678', name: 'Dee' }],
  ])('binds %j', (payload, contact) => {
    expect(contactFromPayload(payload)).toEqual(contact);
  });

  it('takes the first field that holds a phone number, in the documented order', () => {
    expect(contactFromPayload({ phone: 'n/a', contact: { phone: '15550001111' } })).toEqual({ phone: '15550001111' });
    expect(contactFromPayload({ phone: '15550002222', contact: { phone: '15550001111' } })).toEqual({
      phone: '15550002222',
    });
  });

  it.each([
    null,
    'text',
    42,
    [{ phone: '15550001111' }],
    {},
    { phone: '123' },
    { phone: true },
    { phone: { n: '15550001111' } },
    { mobile: '15550001111' },
  ])('binds nothing from %j', (payload) => {
    expect(contactFromPayload(payload)).toEqual({});
  });

  it('reads own properties only', () => {
    const payload = Object.create({ phone: '15550001111' });
    expect(contactFromPayload(payload)).toEqual({});
    expect(contactFromPayload(JSON.parse('{"__proto__": {"phone": "15550001111"}}'))).toEqual({});
  });

  it('digitsOnly', () => {
    expect(digitsOnly('+1 (555) 010-2030')).toBe('15550102030');
    expect(digitsOnly('0049 151 2345678')).toBe('491512345678');
    expect(digitsOnly(' US.13491208655302741918 ')).toBe('US.13491208655302741918'); // a WhatsApp username's id
  });

  it('follows the phone rule of libs/core: the 00 prefix is the international call prefix', () => {
    // the customer's reply comes from 491512345678: the run must be bound to that key
    expect(contactFromPayload({ phone: '0049 151 2345678' })).toEqual({ phone: '491512345678' });
    expect(contactFromPayload({ contact: { phone: '+49 (151) 2345678' } })).toEqual({ phone: '491512345678' });
    expect(contactFromPayload({ phone: '0151 2345678' })).toEqual({}); // a national number is no contact phone
  });
});
