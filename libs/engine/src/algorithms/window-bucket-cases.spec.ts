import { expected, runOnEngine } from './sliding-cases.test-util';
import { WINDOW_AND_BUCKET_CASES } from './window-bucket-cases.test-util';

// The table the cluster scripts run too (test/sliding-window-lua.e2e-spec.ts).
describe('fixed_window and token_bucket, on the table shared with the cluster scripts', () => {
  it.each(WINDOW_AND_BUCKET_CASES)('$name', (c) => {
    expect(runOnEngine(c)).toEqual(expected(c));
  });
});
