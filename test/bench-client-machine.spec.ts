/**
 * bench:client's half-load rate and its reading of the machine's CPU pressure. The rate is half of
 * the lower peak: half of a peak taken in a quieter moment can exceed what the machine now serves,
 * and an open loop above capacity measures its own backlog instead of the client.
 */
import { cpuWaitTotalMicros, halfLoadRate, watchNoise } from '../bench/client/machine';

describe('bench:client half-load rate', () => {
  it('is half of the lower of the rounds peak and the fresh peak', () => {
    expect(halfLoadRate(280_000, 200_000)).toBe(100_000);
    expect(halfLoadRate(200_000, 280_000)).toBe(100_000);
  });
});

describe('bench:client CPU pressure', () => {
  it('reads the cumulative wait of the "some" line', () => {
    const text =
      'some avg10=44.43 avg60=41.92 avg300=33.90 total=861884507\n' +
      'full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n';
    expect(cpuWaitTotalMicros(text)).toBe(861_884_507);
  });

  it('tells nothing when the kernel gives no such line', () => {
    expect(cpuWaitTotalMicros('')).toBeUndefined();
    expect(cpuWaitTotalMicros('full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n')).toBeUndefined();
  });

  it('reports a share of the wall time and this loop delay', async () => {
    const stop = watchNoise();
    await new Promise((resolve) => setTimeout(resolve, 50));
    const noise = stop();
    expect(noise.loopDelayP99).toBeGreaterThan(0);
    if (noise.cpuWaitPercent !== undefined) {
      expect(noise.cpuWaitPercent).toBeGreaterThanOrEqual(0);
    }
  });
});
