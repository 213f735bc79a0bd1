/** Resolves true when `work` settles within `ms`, false when `ms` passes first (work goes on). */
export function finishesWithin(work: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), Math.max(0, ms));
  });
  return Promise.race([work.then(() => true), late]).finally(() => clearTimeout(timer));
}
