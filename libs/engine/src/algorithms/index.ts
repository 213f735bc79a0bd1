import type { AlgorithmName } from '../types';
import type { LimitAlgorithm } from './algorithm';
import { fixedWindow } from './fixed-window';
import { slidingWindow } from './sliding-window';
import { tokenBucket } from './token-bucket';

export type { CompiledLimit, LimitAlgorithm } from './algorithm';
export { keptTokens } from './token-bucket';

export function algorithmFor(name: AlgorithmName): LimitAlgorithm {
  switch (name) {
    case 'fixed_window':
      return fixedWindow;
    case 'sliding_window':
      return slidingWindow;
    case 'token_bucket':
      return tokenBucket;
  }
}
