import { limitTexts, parseLimits } from './model-limits';

describe('parseLimits', () => {
  it('reads whole numbers, with spaces around them, as the limits', () => {
    expect(parseLimits({ maxRpm: ' 60 ', maxTpm: '0', maxRpd: '1000' })).toEqual({
      ok: true,
      values: { maxRpm: 60, maxTpm: 0, maxRpd: 1000 },
    });
  });

  it('names every field that is not a whole number', () => {
    const result = parseLimits({ maxRpm: '', maxTpm: '1.5', maxRpd: 'ten' });
    expect(result.ok).toBe(false);
    expect(!result.ok && result.issues.map((i) => i.field)).toEqual(['maxRpm', 'maxTpm', 'maxRpd']);
  });

  it('refuses a number too large to send exactly, and leaves negatives to the admin', () => {
    const result = parseLimits({ maxRpm: '9007199254740993', maxTpm: '-1', maxRpd: '1e3' });
    expect(!result.ok && result.issues.map((i) => i.field)).toEqual(['maxRpm', 'maxRpd']);
  });

  it('turns values back into the texts the inputs show', () => {
    expect(limitTexts({ maxRpm: 1, maxTpm: 0, maxRpd: 3 })).toEqual({
      maxRpm: '1',
      maxTpm: '0',
      maxRpd: '3',
    });
  });
});
